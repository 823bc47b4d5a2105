"""The vendor-like synthetic election and deck (issue 8 item 6): what is printed, what the
layouts say, what the scanner did, and the reader's outcome on them (exact where the reader
handles the family today; what it does not yet read exactly is pinned as a strict xfail so
that the day it reads right, the marker must go)."""

from __future__ import annotations

import json
from pathlib import Path

import cv2
import numpy as np
import pytest
from PIL import Image

from scanpipe.classify import load_thresholds
from scanpipe.election import load_election
from scanpipe.interpret import InterpretContext, interpret_file, load_references
from scanpipe.synth.marks import MarkKind
from scanpipe.synth.render import box_px
from scanpipe.synth.vendor import CODE_BITS, CONTENT_TOP_IN, FAMILIES, STYLES, timing_marks
from scanpipe.synth.vendor_deck import draw_arrow_mark, generate_vendor_deck
from scanpipe.synth.vendor_render import render_vendor_card
from scanpipe.types import CardHints, Election, ReadCard

STATUS_OF = {"vote": "yes", "no_vote": "no", "ambiguous": "unknown"}


def _gray(path: Path) -> np.ndarray:
    return np.asarray(Image.open(path).convert("L"))


def test_layouts_are_written_as_a_board_writes_them(vendor_election: Election) -> None:
    assert {s.id for s in vendor_election.ballot_styles} == set(STYLES)
    for style in vendor_election.ballot_styles:
        family = FAMILIES[STYLES[style.id].family]
        assert len(style.layout.pages) == len(STYLES[style.id].pages)
        for page in style.layout.pages:
            assert page.fiducials_in == () and page.qr_in is None
            assert page.reference is not None and page.reference_dpi == 200
            reference = _gray(page.reference)  # the size and resolution of the cards
            assert reference.shape == (round(family.size_in[1] * 200), round(family.size_in[0] * 200))
            assert bool(page.distinguish_in) == family.distinguish
            assert (Image.open(page.reference).mode == "1") == (family.reference_format == "tif_g4")


@pytest.mark.parametrize("a, b", [("E-D-11", "E-R-11"), ("H-13", "H-14"), ("D-15", "D-16")])
def test_look_alike_styles_differ_only_in_printed_header_text(vendor_election: Election, a: str, b: str) -> None:
    pa, pb = vendor_election.style(a).layout.pages[0], vendor_election.style(b).layout.pages[0]
    assert [(t.contest, t.option, t.box_in, t.write_in_area_in) for t in pa.targets] == \
           [(t.contest, t.option, t.box_in, t.write_in_area_in) for t in pb.targets]
    ga = render_vendor_card(vendor_election, a, 1, STYLES[a].precinct, 100)
    gb = render_vendor_card(vendor_election, b, 1, STYLES[b].precinct, 100)
    rows = np.nonzero((ga != gb).any(axis=(1, 2)))[0]
    family = FAMILIES[STYLES[a].family]
    header = rows[rows < CONTENT_TOP_IN * 100]
    footer = rows[rows >= CONTENT_TOP_IN * 100]
    assert header.size > 0  # the party or precinct line
    # below the header only the ess bottom code (and the printed style id) may differ
    assert (footer >= (family.size_in[1] - 0.7) * 100).all()


def test_the_ess_bottom_row_encodes_the_style_number(vendor_election: Election) -> None:
    for sid in ("E-D-11", "E-R-11", "E-D-12"):
        family = FAMILIES["ess"]
        gray = cv2.cvtColor(render_vendor_card(vendor_election, sid, 1, STYLES[sid].precinct, 100), cv2.COLOR_RGB2GRAY)
        y = int((family.size_in[1] - 0.28 + 0.035) * 100)
        present = [gray[y, int((0.30 + 0.5 * i + 0.15) * 100)] < 128 for i in range(CODE_BITS + 2)]
        assert present[0] and present[-1]
        assert sum(bit << k for k, bit in enumerate(present[1:-1])) == STYLES[sid].code


def test_timing_marks_are_printed_where_the_family_puts_them(vendor_election: Election) -> None:
    assert timing_marks(FAMILIES["dom"], None) == []
    gray = cv2.cvtColor(render_vendor_card(vendor_election, "H-13", 1, "P13", 100), cv2.COLOR_RGB2GRAY)
    for x, y, w, h in timing_marks(FAMILIES["hart"], None):
        assert gray[int((y + h / 2) * 100), int((x + w / 2) * 100)] < 60


def test_an_arrow_vote_is_a_line_across_the_gap(vendor_election: Election) -> None:
    rgb = render_vendor_card(vendor_election, "A-17", 1, "P17", 200)
    box = box_px(vendor_election.style("A-17").layout.pages[0].targets[0].box_in, 200)
    x, y, w, h = (int(round(v)) for v in box)
    assert cv2.cvtColor(rgb, cv2.COLOR_RGB2GRAY)[y:y + h, x + 1:x + w - 1].min() > 200  # the gap is empty
    draw_arrow_mark(rgb, box, MarkKind.FULL_FILL, np.random.default_rng(1), ink="black", dpi=200)
    column = cv2.cvtColor(rgb, cv2.COLOR_RGB2GRAY)[y:y + h, x + 3:x + w - 3].min(axis=0)
    assert (column < 100).all()  # ink at every column of the gap


FORCED = {
    0: {"style": "E-D-11", "mode": "bilevel_threshold", "dpi_tag": 96.0, "crop": True, "flip180": True, "stamp": "sample"},
    1: {"style": "D-15", "mode": "rgba_png", "dpi_tag": None, "crop": False, "flip180": False, "stamp": None},
    2: {"style": "A-17", "mode": "gray_jpg", "dpi_tag": 72.0, "crop": False, "flip180": False, "stamp": "signature"},
}


def test_the_deck_is_seeded_and_says_what_the_scanner_did(vendor_dir: Path, tmp_path: Path) -> None:
    a = generate_vendor_deck(vendor_dir / "election.json", tmp_path / "a", cards=3, seed=31, overrides=FORCED)
    b = generate_vendor_deck(vendor_dir / "election.json", tmp_path / "b", cards=3, seed=31, overrides=FORCED)
    assert a.read_text() == b.read_text()
    truth = json.loads(a.read_text())
    assert [c["file"] for c in truth["cards"]] == ["cards/0001.tif", "cards/0002-p1.png", "cards/0002-p2.png", "cards/0003.jpg"]
    for card in truth["cards"]:
        assert (a.parent / card["file"]).read_bytes() == (b.parent / card["file"]).read_bytes()
        image = Image.open(a.parent / card["file"])
        scan = card["scan"]
        assert image.info.get("dpi", (None,))[0] == (pytest.approx(scan["dpi_tag"], abs=0.01) if scan["dpi_tag"] else None)
        family = FAMILIES[STYLES[card["style"]].family]
        crop = scan["crop_in"]
        assert image.size == (round(family.size_in[0] * scan["true_dpi"]) - round(crop[0] * scan["true_dpi"]) - round(crop[2] * scan["true_dpi"]),
                              round(family.size_in[1] * scan["true_dpi"]) - round(crop[1] * scan["true_dpi"]) - round(crop[3] * scan["true_dpi"]))
    first, rgba = truth["cards"][0], truth["cards"][1]
    assert Image.open(a.parent / first["file"]).mode == "1" and first["rotated_180"] and any(crop > 0 for crop in first["scan"]["crop_in"])
    assert first["style_code"] == STYLES["E-D-11"].code
    assert Image.open(a.parent / rgba["file"]).mode == "RGBA"
    stamped = [t for t in first["targets"] if t.get("damage") == "stamp"]
    assert all(t["intent"] == "ambiguous" and t["mark"] == "damaged" for t in stamped)


def _read(deck: Path, hinted: bool) -> list[tuple[dict, object]]:
    truth = json.loads((deck / "expected.json").read_text())
    election = load_election(deck / truth["election"])
    context = InterpretContext(election, load_thresholds(), load_references(election))
    out = []
    for card in truth["cards"]:
        hints = CardHints(style=card["style"], page=card["page"]) if hinted else CardHints()
        (read,) = interpret_file(str(deck / card["file"]), context, hints, "t")
        out.append((card, read.interpretation))
    return out


def _assert_exact(results: list[tuple[dict, object]]) -> None:
    for card, interp in results:
        assert isinstance(interp, ReadCard), f"{card['file']}: {interp}"
        assert (interp.style, interp.page) == (card["style"], card["page"])
        got = {t.score.option: t.status.value for t in interp.targets}
        assert {t["option"]: got[t["option"]] for t in card["targets"]} == \
               {t["option"]: STATUS_OF[t["intent"]] for t in card["targets"]}, card["file"]


def _clean_deck(vendor_dir: Path, out: Path, styles: list[str]) -> Path:
    overrides = {i: {"style": s, "mode": "gray_png", "stamp": None} for i, s in enumerate(styles)}
    generate_vendor_deck(vendor_dir / "election.json", out, cards=len(styles), seed=2718, scan="vendor_clean",
                         blank_fraction=0.0, overrides=overrides)
    return out


def _assert_safe(results: list[tuple[dict, object]]) -> int:
    """No vote read as no vote or the reverse, every ambiguous mark for a person, the style
    right; returns how many clear marks went to a person."""
    to_person = 0
    for card, interp in results:
        assert isinstance(interp, ReadCard), f"{card['file']}: {interp}"
        assert (interp.style, interp.page) == (card["style"], card["page"])
        got = {t.score.option: t.status.value for t in interp.targets}
        for t in card["targets"]:
            want = STATUS_OF[t["intent"]]
            if got[t["option"]] != want:
                assert want != "unknown" and got[t["option"]] == "unknown", (card["file"], t["option"], t["mark"], got[t["option"]])
                to_person += 1
    return to_person


@pytest.mark.xfail(strict=True, reason="issue 8 item 3: a light or partial fill inside an ES&S-like flat oval with a thick "
                                       "outline goes to a person (its bare middle is too small to tell it from a mark in the middle)")
def test_flat_ovals_with_a_timing_frame_and_frameless_ovals_read_exactly_with_their_style_stated(vendor_dir: Path, tmp_path: Path) -> None:
    _assert_exact(_read(_clean_deck(vendor_dir, tmp_path / "d", ["E-D-11", "E-R-11", "D-15"]), hinted=True))


def test_flat_ovals_and_frameless_ovals_read_safely_with_their_style_stated(vendor_dir: Path, tmp_path: Path) -> None:
    results = _read(_clean_deck(vendor_dir, tmp_path / "d", ["E-D-11", "E-R-11", "D-15"]), hinted=True)
    assert _assert_safe(results) <= 2


@pytest.mark.parametrize("style", ["H-13", "A-17"])
def test_rounded_boxes_and_broken_arrows_read_exactly_with_their_style_stated(vendor_dir: Path, tmp_path: Path, style: str) -> None:
    _assert_exact(_read(_clean_deck(vendor_dir, tmp_path / "d", [style]), hinted=True))


def test_vendor_cards_are_told_apart_without_a_stated_style(vendor_dir: Path, tmp_path: Path) -> None:
    """Look-alike styles (party or precinct name only) told apart from the blanks alone."""
    results = _read(_clean_deck(vendor_dir, tmp_path / "d", ["E-D-11", "E-R-11", "D-16", "H-13", "A-17"]), hinted=False)
    assert _assert_safe(results) <= 2


@pytest.mark.parametrize("style", ["H-14", "D-16", "E-D-11", "E-D-12", "E-R-11", "A-17"])
def test_a_card_of_a_style_the_election_lacks_is_queued_not_read_as_its_neighbour(vendor_dir: Path, tmp_path: Path,
                                                                                  style: str) -> None:
    """The election's definition without the card's style (a style missed, a ballot of
    another precinct mixed in): the nearest style differs in its precinct line, its party or
    its contests, and the card must be queued with its reason, never read as that style.
    H-14 and D-16 leave their frame with one blank of their page (H-13, D-15): no runner-up to
    say where styles differ, so the card must print that blank's own lines of text. E-D-11's
    header differs from E-R-11's in one word (the party), which E-R-11 shares with the other
    blanks of its page."""
    deck = _clean_deck(vendor_dir, tmp_path / "d", [style])
    truth = json.loads((deck / "expected.json").read_text())
    definition = json.loads((deck / truth["election"]).read_text())
    definition["ballot_styles"] = [s for s in definition["ballot_styles"] if s["id"] != style]
    lacking = (deck / truth["election"]).with_name("election-lacking.json")
    lacking.write_text(json.dumps(definition))
    election = load_election(lacking)
    context = InterpretContext(election, load_thresholds(), load_references(election))
    for card in truth["cards"]:
        (read,) = [c for c in interpret_file(str(deck / card["file"]), context, CardHints(), "t")
                   if c.source.page_index == card.get("page_of_file", 1)]
        result = read.interpretation
        assert not isinstance(result, ReadCard), f"{card['file']} ({style} left out) read as {result.style}"
        assert result.reason.value in ("unknown_style", "ambiguous_style"), result


def test_a_frameless_card_under_a_big_stamp_reads_when_refinement_finds_it_all_over(vendor_dir: Path, tmp_path: Path) -> None:
    """A stamp over the empty part of a card without timing marks lowers its print's
    correlation with the blank under the dense alignment's gate (the fit itself is right):
    local refinement finding the blank's places all over the card lets the fit stand, and the
    card reads as it would without the stamp. Another layout's card never gets that far (its
    places are not found: `bench_real.py --foreign`, `--leave-out`)."""
    from scanpipe.imaging.align import AlignmentFailure, CardView, align_densely

    deck = _clean_deck(vendor_dir, tmp_path / "d", ["D-15"])
    truth = json.loads((deck / "expected.json").read_text())
    card = next(c for c in truth["cards"] if c["page"] == 1)
    path = deck / card["file"]
    gray = _gray(path)
    h, w = gray.shape
    stamped = gray.copy()
    # a big "SAMPLE" stamp across the lower half, where a D-15 card prints nothing
    for k, y in enumerate((0.62, 0.78)):
        cv2.putText(stamped, "SAMPLE", (w // 12 + k * w // 20, int(h * y)), cv2.FONT_HERSHEY_DUPLEX, w / 400, 25, thickness=w // 80)
    out = tmp_path / "stamped.png"
    cv2.imwrite(str(out), stamped)
    election = load_election(deck / truth["election"])
    index = load_references(election)
    model = index.get("D-15", 1)
    assert model is not None and not model.has_timing_marks
    dense = align_densely(CardView(stamped), model)
    assert isinstance(dense, AlignmentFailure) and dense.fit is not None, dense  # under the gate: the new path
    context = InterpretContext(election, load_thresholds(), index)
    (read,) = interpret_file(str(out), context, CardHints(), "t")
    result = read.interpretation
    assert isinstance(result, ReadCard), result
    assert (result.style, result.page) == ("D-15", 1)
    got = {t.score.option: t.status.value for t in result.targets}
    assert {t["option"]: got[t["option"]] for t in card["targets"]} == {t["option"]: STATUS_OF[t["intent"]] for t in card["targets"]}


@pytest.mark.parametrize("index", [141, 210])
def test_a_card_cut_off_where_its_look_alike_prints_its_own_is_told_from_it(vendor_dir: Path, tmp_path: Path, index: int) -> None:
    """The vendor profile's seed 363636, sheets 142 (a 300-dpi G4 scan) and 211 (150 dpi, a
    96-dpi tag, skewed 2.7 degrees): E-D-12 cards whose scans cut off the right and bottom
    third of an inch, where only E-D-11's blank prints (its precinct's own lines). The card shows
    all 200 of the pixels only E-D-12 prints there and 2 of the last 3 of E-D-11's (next to
    print both share, which the card's ink widened a pixel covers): the two shares weighed alike
    came to a margin of 0.33, under MIN_MARGIN (``ambiguous_style``); a side of so few pixels,
    against one of many the card shows, is now taken as not seen (:func:`scanpipe.imaging.style._margin`)."""
    from scanpipe.synth.vendor_deck import VendorDeckOptions, make_vendor_sheet

    out = tmp_path / "d"
    (out / "cards").mkdir(parents=True)
    (card,) = make_vendor_sheet(VendorDeckOptions(str(vendor_dir / "election.json"), str(out), 363636, "vendor", 0.05), index)
    assert card["style"] == "E-D-12" and card["scan"]["crop_in"][2:] != [0.0, 0.0], card  # the sheet this test is about
    election = load_election(vendor_dir / "election.json")
    context = InterpretContext(election, load_thresholds(), load_references(election))
    (read,) = interpret_file(str(out / card["file"]), context, CardHints(), "t")
    result = read.interpretation
    assert isinstance(result, ReadCard) and result.style == "E-D-12", result
