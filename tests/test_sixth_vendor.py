"""Vendor ballots the project did not draw (issue 8), by the sixth independent renderer: a
Premier/Diebold AccuVote-like two-sided letter card (timing dashes down both sides and a row
of bars along the bottom, wide ovals with the candidate's number printed inside, the front and
back each a layout page of their own, saved as one two-page TIFF or two files, the back now
and then fed upside down, felt-tip ink showing through mirrored onto the other side) and a
Dominion-like legal ballot without timing marks (a heavy border, corner squares, bilingual
headers, ovals right of the names, scans cut by the scanner's auto-crop). Every card reads
with its own style or goes to a person; no definite error."""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

import cv2
import numpy as np
import pytest
from PIL import Image

from scanpipe.classify import load_thresholds
from scanpipe.election import load_election
from scanpipe.imaging.page_text import ocr_available
from scanpipe.interpret import InterpretContext, interpret_file, load_references
from scanpipe.types import CardHints, ReadCard
from tests.deck_readings import read_deck
from tests.leave_out import read_without_style
from tests.sixth_vendor import make_deck, write_election

DEFINITE = {"vote": "yes", "no_vote": "no"}
SEED = 15  # 10 sheets: both frames, a two-page TIFF, a back fed upside down, bleed-through, a stain, an auto-cropped scan
@pytest.fixture(scope="module")
def deck(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("sixth_vendor")
    make_deck(out, cards=10, seed=SEED)
    return out


@pytest.fixture(scope="module")
def readings(deck: Path) -> list[tuple[dict[str, Any], Any]]:
    return read_deck(deck)


def test_the_sixth_renderer_is_seeded(deck: Path, tmp_path: Path) -> None:
    make_deck(tmp_path, cards=3, seed=SEED, jobs=2)
    truth = json.loads((tmp_path / "expected.json").read_text())
    first = [c for c in json.loads((deck / "expected.json").read_text())["cards"] if int(c["file"][6:10]) <= 3]
    assert truth["cards"] == first
    for card in truth["cards"]:
        assert (tmp_path / card["file"]).read_bytes() == (deck / card["file"]).read_bytes()
    for ref in sorted((deck / "election" / "layouts").iterdir()):
        assert (tmp_path / "election" / "layouts" / ref.name).read_bytes() == ref.read_bytes()


def test_the_deck_shows_what_it_is_for(deck: Path) -> None:
    cards = json.loads((deck / "expected.json").read_text())["cards"]
    styles = {c["style"] for c in cards}
    assert any(s.startswith("AV-") for s in styles) and any(s.startswith("DM-") for s in styles)
    assert any(c["page_of_file"] == 2 for c in cards), "a two-page TIFF holding a sheet's front and back"
    sides = {}
    for c in cards:
        sides.setdefault(c["file"].split("-p")[0].split(".")[0], {})[c["page"]] = c["rotated_180"]
    assert any(len(s) == 2 and s[1] != s[2] for s in sides.values()), "a sheet whose back was fed upside down"
    assert any(c["rotated_180"] for c in cards)
    bled = [t for c in cards for t in c["targets"] if t["mark"] == "bleed_through"]
    assert bled and all(t["intent"] == "no_vote" for t in bled)
    assert any(c["cropped"] and c["frame"] == "dm" for c in cards)
    assert any(c["stain_options"] for c in cards)
    assert {"g4_threshold", "gray_png", "rgb_jpg"} <= {c["mode"] for c in cards}


def test_every_card_reads_with_its_own_style_or_goes_to_a_person(readings: list[tuple[dict[str, Any], Any]]) -> None:
    """``DM-0301`` and ``DM-0302`` differ only in the letter of the split line; ``AV-0101`` and
    ``AV-0102`` only in the precinct line. A card may be queued; it may never be read as another
    style or page."""
    wrong = [(card["file"], card["page_of_file"], card["style"], card["page"], interp.style, interp.page)
             for card, interp in readings
             if isinstance(interp, ReadCard) and (interp.style, interp.page) != (card["style"], card["page"])]
    assert wrong == []


def _definite_errors(readings: list[tuple[dict[str, Any], Any]]) -> dict[tuple[str, int, str], tuple[str, str, str]]:
    wrong = {}
    for card, interp in readings:
        if not isinstance(interp, ReadCard) or (interp.style, interp.page) != (card["style"], card["page"]):
            continue  # a card queued whole goes to a person
        got = {t.score.option: t.status.value for t in interp.targets}
        for t in card["targets"]:
            if t["intent"] in DEFINITE and got[t["option"]] not in (DEFINITE[t["intent"]], "unknown"):
                wrong[(card["file"], card["page_of_file"], t["option"])] = (t["mark"], t["intent"], got[t["option"]])
    return wrong


def test_no_definite_error(readings: list[tuple[dict[str, Any], Any]]) -> None:
    """No vote read as no vote, no empty or merely bled-on, stained or dotted target read as a
    vote. On this deck six ballpoint checks through ovals with their ballot number printed inside
    were read as no vote: the print taken out left the check too few dark pixels of the whole
    inside (now a share of the inside that shows added ink)."""
    assert _definite_errors(readings) == {}


def test_bleed_through_and_stains_are_never_read_as_votes(readings: list[tuple[dict[str, Any], Any]]) -> None:
    """Felt-tip ink showing through from the other side, mirrored, and a coffee ring over an
    empty target are no vote (or a person's call), never a vote."""
    seen = 0
    for card, interp in readings:
        if not isinstance(interp, ReadCard) or (interp.style, interp.page) != (card["style"], card["page"]):
            continue
        got = {t.score.option: t.status.value for t in interp.targets}
        for t in card["targets"]:
            if t["intent"] == "no_vote" and (t["mark"] == "bleed_through" or t.get("damage") == "stain"):
                seen += 1
                assert got[t["option"]] != "yes", (card["file"], t)
    assert seen > 0


def test_blanks_differing_in_one_letter_differ_in_detail_there(tmp_path: Path) -> None:
    """``DM-0301`` and ``DM-0302`` print "Split A" and "Split B" (twice, in one line), nothing
    else apart: blurred, an A and a B in one bold type differ by half the ink on a pixel or two
    only, and they correlate 0.65-0.68, so the look-alike comparison found no difference at all
    and every card of either style was `ambiguous_style`. Two scans of one glyph correlate 0.9
    and more: the letters are where the two differ, nowhere else."""
    election = load_election(write_election(tmp_path))
    index = load_references(election, cache=False)
    (group,) = [g for g in index.groups if g.anchor.style.startswith("DM")]
    detail = group.detail_of(0, 1)
    assert detail is not None and 1 <= len(detail.boxes) <= 2
    dpi = group.anchor.dpi
    assert all(1.3 < y / dpi < 1.5 and h / dpi < 0.2 for _x, y, _w, h in detail.boxes)  # the split line, under the ballot ID


@pytest.mark.skipif(not ocr_available(), reason="the ocr extra reads the glyph")
def test_a_card_of_a_split_the_election_lacks_is_queued_not_read_as_the_lone_blank(deck: Path) -> None:
    """The election without ``DM-0302``: ``DM-0301`` is then the only blank of its frame, and a
    DM-0302 card differs from it in one bold capital (a "B" over its "A", twice), which covers
    the A's print and correlates with it about as well as a noisy scan of an A (0.72-0.83).
    Read by the OCR extra on both, the glyphs differ: the card is queued with what each reads,
    never read as DM-0301."""
    readings = read_without_style(deck, "DM-0302")
    for card, result in readings:
        assert not isinstance(result, ReadCard), f"{card['file']} (DM-0302 left out) read as {result.style}"
    assert any("where the blank reads 'A'" in result.detail for _card, result in readings)


def _ordered_dither(gray: np.ndarray, dpi_from: float, dpi_to: float) -> np.ndarray:
    """A blank as a scanner's bilevel ordered-dither mode delivers it at ``dpi_to``: area
    reduced, softened, then thresholded against a tiled 8 x 8 Bayer matrix."""
    bayer = np.array([[0]])
    for _ in range(3):
        bayer = np.block([[4 * bayer, 4 * bayer + 2], [4 * bayer + 3, 4 * bayer + 1]])
    h, w = gray.shape
    small = cv2.resize(gray, (int(w * dpi_to / dpi_from), int(h * dpi_to / dpi_from)), interpolation=cv2.INTER_AREA)
    small = cv2.GaussianBlur(small, (0, 0), 0.6).astype(np.float32)
    levels = (np.tile(bayer, (small.shape[0] // 8 + 1, small.shape[1] // 8 + 1))[: small.shape[0], : small.shape[1]] + 0.5) * 255 / 64
    return np.where(small > levels, 255, 0).astype(np.uint8)


@pytest.mark.skipif(not ocr_available(), reason="the ocr extra reads the glyph")
@pytest.mark.parametrize("dpi", [150, 200])
def test_an_ordered_dither_scan_of_the_split_the_election_lacks_is_queued_and_one_of_the_lone_blank_reads(deck: Path, tmp_path: Path,
                                                                                                          dpi: int) -> None:
    """Ordered dither at 150 or 200 dpi blurs a bold "B" over the lone blank's "A" so that
    neither pixels nor the OCR extra read it surely as another letter (the sixth renderer's
    fresh seed 1919: two such DM-0302 cards read as DM-0301 with DM-0302 left out). Where the
    blank prints the glyph twice and the card's glyph is unlike it in both places and read as
    it in neither, the card cannot be said to print the blank's line: queued. A DM-0301 card
    scanned the same way reads as DM-0301."""
    truth = json.loads((deck / "expected.json").read_text())
    definition = json.loads((deck / truth["election"]).read_text())
    definition["ballot_styles"] = [s for s in definition["ballot_styles"] if s["id"] != "DM-0302"]
    lacking = (deck / truth["election"]).with_name("election-without-DM-0302-dither.json")
    lacking.write_text(json.dumps(definition))
    election = load_election(lacking)
    context = InterpretContext(election, load_thresholds(), load_references(election, cache=False))
    full = load_election(deck / truth["election"])
    for style, reads in (("DM-0302", False), ("DM-0301", True)):
        page = full.style(style).layout.pages[0]
        assert page.reference is not None and page.reference_dpi is not None
        card = _ordered_dither(np.asarray(Image.open(page.reference).convert("L")), page.reference_dpi, dpi)
        path = tmp_path / f"{style}-{dpi}.png"
        Image.fromarray(card).save(path, dpi=(dpi, dpi))
        (read,) = interpret_file(str(path), context, CardHints(), "t")
        result = read.interpretation
        if reads:
            assert isinstance(result, ReadCard) and result.style == "DM-0301", result
        else:
            assert not isinstance(result, ReadCard), f"{style} at {dpi} dpi read as {result.style}"


def test_a_sheet_s_two_sides_in_one_file_take_out_each_other_s_show_through(deck: Path) -> None:
    """A sheet whose felt-tip marks show through on the other side, its sides saved as two
    files: each empty target a ghost lies on goes to a person (a light even tone, the look of an
    erasure). The same two sides saved as one two-page file (a duplex scan's way): the other
    side tells where its ghosts lie and how strong they are, and those targets read as no vote,
    saying why; every other target reads as before."""
    cards = json.loads((deck / "expected.json").read_text())["cards"]
    stem = next(c["file"][:-len("-p1.jpg")] for c in cards if c["file"].endswith("-p1.jpg") and c["bleed_options"])
    sides = [c for c in cards if c["file"].startswith(stem + "-p")]
    election = load_election(deck / "election" / "election.json")
    context = InterpretContext(election, load_thresholds(), load_references(election, cache=False))
    apart = [interpret_file(str(deck / c["file"]), context, CardHints(), "t")[0] for c in sides]
    pages = [Image.fromarray(cv2.imread(str(deck / c["file"]), cv2.IMREAD_GRAYSCALE)) for c in sides]
    out = io.BytesIO()
    pages[0].save(out, format="TIFF", save_all=True, append_images=pages[1:], dpi=(200, 200), compression="tiff_lzw")
    sheet = interpret_file("sheet.tif", context, CardHints(), "t", data=out.getvalue())
    ghosts = 0
    for truth, one, both in zip(sides, apart, sheet, strict=True):
        assert isinstance(one.interpretation, ReadCard) and isinstance(both.interpretation, ReadCard)
        marks = {t["option"]: t["mark"] for t in truth["targets"]}
        for a, b in zip(one.interpretation.targets, both.interpretation.targets, strict=True):
            if marks[a.score.option] == "bleed_through":
                ghosts += a.status.value == "unknown"
                assert b.status.value == "no" and "the other side's show-through taken out" in b.why, (a, b)
            else:
                assert b.status is a.status, (truth["file"], a, b)
    assert ghosts >= 3


def test_a_duplex_scan_s_two_files_of_a_sheet_take_out_each_other_s_show_through(deck: Path, tmp_path: Path) -> None:
    """The same sheet through a duplex scan (``scan --duplex``: each side a file of its own, the
    manifest naming the two a sheet): once its back is stored, the targets a ghost lies on read
    as no vote on both sides, stored so (reinterpreted, logged), and the scan's summary counts
    each side as told."""
    from scanpipe.pipeline import needs_person
    from scanpipe.scan import scan_batch
    from scanpipe.sources.base import ScanSettings
    from scanpipe.sources.replay import ReplaySource
    from scanpipe.store.repository import Store
    from scanpipe.workflow import init_election

    cards = json.loads((deck / "expected.json").read_text())["cards"]
    stem = next(c["file"][:-len("-p1.jpg")] for c in cards if c["file"].endswith("-p1.jpg") and c["bleed_options"])
    sides = [c for c in cards if c["file"].startswith(stem + "-p")]
    stack = tmp_path / "stack"
    stack.mkdir()
    for k, c in enumerate(sides, start=1):
        (stack / f"{k}.jpg").write_bytes((deck / c["file"]).read_bytes())
    store = Store.open(f"sqlite:///{tmp_path / 'scan.db'}")
    try:
        store.migrate()
        init_election(store, deck / "election" / "election.json")
        summary = scan_batch(store, ReplaySource(f"replay:{stack}", ScanSettings(duplex=True)), batch="d1",
                             out_dir=tmp_path / "scans", on_line=lambda _line: None)
        stored = sorted(store.iter_cards(), key=lambda c: c.card.source.path)
        assert len(stored) == 2
        for truth, card in zip(sides, stored, strict=True):
            result = card.card.interpretation
            assert isinstance(result, ReadCard)
            got = {t.score.option: t for t in result.targets}
            ghosts = [t["option"] for t in truth["targets"] if t["mark"] == "bleed_through"]
            assert ghosts and all(got[o].status.value == "no" and "show-through taken out" in got[o].why for o in ghosts)
        assert summary.needs_person == sum(needs_person(c.card) for c in stored), summary  # type: ignore[attr-defined]
        assert any(e.action == "card_reinterpreted" for e in store.events())
    finally:
        store.close()


@pytest.mark.parametrize("duplex", [False, True], ids=["files", "duplex"])
def test_ingest_duplex_reads_another_program_s_side_files_two_by_two_as_sheets(deck: Path, tmp_path: Path, duplex: bool) -> None:
    """Another program's duplex scan, a file per side and no manifest: ``ingest --duplex`` takes
    a folder's files in name order two by two as one sheet's front and back, so the ghosts of
    each side's felt-pen marks on the other are taken out. Not said so, files next to each other
    that read as one style's front and back are tried as a sheet all the same
    (``tell_neighbour_show_through``): the ghosts are taken out too, measured under the other
    side's marks."""
    from scanpipe.store.repository import Store
    from scanpipe.workflow import ingest_paths, init_election

    cards = json.loads((deck / "expected.json").read_text())["cards"]
    stem = next(c["file"][:-len("-p1.jpg")] for c in cards if c["file"].endswith("-p1.jpg") and c["bleed_options"])
    sides = [c for c in cards if c["file"].startswith(stem + "-p")]
    folder = tmp_path / "scans"
    folder.mkdir()
    for k, c in enumerate(sides, start=9):  # "Image9", "Image10": name order by number's value
        (folder / f"Image{k}.jpg").write_bytes((deck / c["file"]).read_bytes())
    store = Store.open(f"sqlite:///{tmp_path / 'board.db'}")
    try:
        store.migrate()
        init_election(store, deck / "election" / "election.json")
        ingest_paths(store, [str(folder)], batch="b", hints=CardHints(), duplex=duplex)
        stored = sorted(store.iter_cards(), key=lambda c: len(c.card.source.path))  # Image9 before Image10
        want = "no"
        for truth, card in zip(sides, stored, strict=True):
            result = card.card.interpretation
            assert isinstance(result, ReadCard) and result.page == truth["page"]
            got = {t.score.option: t.status.value for t in result.targets}
            assert {got[t["option"]] for t in truth["targets"] if t["mark"] == "bleed_through"} == {want}
    finally:
        store.close()


def test_watch_tells_a_sheet_whose_side_files_come_in_two_passes(deck: Path, tmp_path: Path) -> None:
    """A hot folder: a sheet's front file is read in one pass, its back arrives later and is read
    in another; the two, next to each other in name order, are tried as one sheet when the back
    comes, as a folder read at once has them tried: the ghosts of each side's felt-pen marks on
    the other are taken out, the told side's line printed again, the summary counting it once."""
    import threading

    from scanpipe.pipeline import needs_person
    from scanpipe.sources.watch import watch_folder
    from scanpipe.store.repository import Store
    from scanpipe.workflow import init_election

    cards = json.loads((deck / "expected.json").read_text())["cards"]
    stem = next(c["file"][:-len("-p1.jpg")] for c in cards if c["file"].endswith("-p1.jpg") and c["bleed_options"])
    front, back = (next(c for c in cards if c["file"] == f"{stem}-p{k}.jpg") for k in (1, 2))
    hot = tmp_path / "hot"
    hot.mkdir()
    (hot / "Image1.jpg").write_bytes((deck / front["file"]).read_bytes())
    store = Store.open(f"sqlite:///{tmp_path / 'board.db'}")
    lines: list[str] = []
    stop = threading.Event()

    def on_line(line: str) -> None:  # the back is dropped in once the front was read: two passes for certain
        lines.append(line)
        if "Image1.jpg" in line and "card(s)" in line and not (hot / "Image2.jpg").exists():
            (hot / "Image2.part").write_bytes((deck / back["file"]).read_bytes())
            (hot / "Image2.part").rename(hot / "Image2.jpg")
        if "Image2.jpg" in line and "card(s)" in line:
            stop.set()

    try:
        store.migrate()
        init_election(store, deck / "election" / "election.json")
        timer = threading.Timer(300, stop.set)  # a bound only for a broken watcher
        timer.start()
        summary = watch_folder(store, [str(hot)], batch="hot", hints=CardHints(), poll_seconds=0.05, stop=stop, on_line=on_line)
        timer.cancel()
        stored = {Path(c.card.source.path).name: c.card for c in store.iter_cards()}
        assert sorted(stored) == ["Image1.jpg", "Image2.jpg"]
        for name, truth in (("Image1.jpg", front), ("Image2.jpg", back)):
            result = stored[name].interpretation
            assert isinstance(result, ReadCard) and result.page == truth["page"]
            got = {t.score.option: t for t in result.targets}
            ghosts = [t["option"] for t in truth["targets"] if t["mark"] == "bleed_through"]
            assert all(got[o].status.value == "no" and "show-through taken out" in got[o].why for o in ghosts), name
        assert any("told with the file next to it" in line for line in lines), lines
        assert summary.cards_stored == 2
        assert summary.needs_person == sum(needs_person(c) for c in stored.values()), summary
    finally:
        store.close()


def _stick_label(gray: np.ndarray, y: int, x: int, text: str) -> None:
    """A white pairing sticker (2.2 x 0.8 in at 200 dpi) stuck at pixel (``x``, ``y``), its Code 128
    symbol drawn as the vendor-code tests draw one."""
    from tests.test_vendor_codes import _draw_code128

    gray[y: y + 160, x: x + 440] = 245
    _draw_code128(gray, (x + 40) / 200.0, (y + 50) / 200.0, text)


def test_a_read_card_s_patches_that_are_its_blank_s_print_are_not_decoded_a_sticker_always_is(
        deck: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A vendor's rows of numbered ovals and lines of text look like bars to the patch finder
    (several a page); once the card is read against its blank, a patch that shows the blank's
    print and nothing else is not decoded (issue 8, speed). A pairing sticker is read wherever it
    is stuck: on bare paper (its bars are no print of the blank's) or over the print (it hides it)."""
    from scanpipe.imaging import codes

    decoded: list[int] = []
    decode = codes._decode_turned

    def counted(*args: Any, **kwargs: Any) -> Any:
        decoded.append(1)
        return decode(*args, **kwargs)

    monkeypatch.setattr(codes, "_decode_turned", counted)
    election = load_election(deck / "election" / "election.json")
    context = InterpretContext(election, load_thresholds(), load_references(election, cache=False))
    cards = json.loads((deck / "expected.json").read_text())["cards"]
    candidates = 0
    for card in (c for c in cards if c["page_of_file"] == 1 and not c["file"].endswith(".tif")):
        gray = cv2.imread(str(deck / card["file"]), cv2.IMREAD_GRAYSCALE)
        candidates += len(codes.label_candidates(gray, 200.0))
        (read,) = interpret_file(str(deck / card["file"]), context, CardHints(), "t")
        assert isinstance(read.interpretation, ReadCard) and read.label is None
    assert candidates >= 10 and not decoded, (candidates, len(decoded))
    card = next(c for c in cards if c["page_of_file"] == 1 and not c["file"].endswith(".tif"))
    gray = cv2.imread(str(deck / card["file"]), cv2.IMREAD_GRAYSCALE)
    h, w = gray.shape
    for name, (y, x) in {"bare paper": (int(0.68 * h), int(0.67 * w)), "print": (h // 3, w // 2 - 220)}.items():
        stuck = gray.copy()
        _stick_label(stuck, y, x, "DUP-S4711")
        cv2.imwrite(str(tmp_path / "stuck.png"), stuck)
        (read,) = interpret_file(str(tmp_path / "stuck.png"), context, CardHints(), "t")
        assert read.label is not None and read.label.serial == "S4711", (name, read.interpretation)


def test_a_failing_comparison_with_the_blank_s_print_decodes_the_patch_and_keeps_the_card(
        deck: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture) -> None:
    """Telling a patch from the blank's print only spares decoding it: should that comparison
    fail unexpectedly, the patch is decoded as any other (the failure logged with its
    traceback), the card read and its sticker found, never the page lost for it."""
    from scanpipe import interpret
    from scanpipe.imaging import codes

    def broken(*args: Any, **kwargs: Any) -> bool:
        raise ValueError("comparison broke")

    monkeypatch.setattr(interpret, "shows_blank_print", broken)
    election = load_election(deck / "election" / "election.json")
    context = InterpretContext(election, load_thresholds(), load_references(election, cache=False))
    cards = json.loads((deck / "expected.json").read_text())["cards"]
    card = next(c for c in cards if c["page_of_file"] == 1 and not c["file"].endswith(".tif"))
    gray = cv2.imread(str(deck / card["file"]), cv2.IMREAD_GRAYSCALE)
    h, w = gray.shape
    _stick_label(gray, int(0.68 * h), int(0.67 * w), "DUP-S4712")
    cv2.imwrite(str(tmp_path / "stuck.png"), gray)
    assert codes.label_candidates(gray, 200.0)
    with caplog.at_level("WARNING", logger="scanpipe.interpret"):
        (read,) = interpret_file(str(tmp_path / "stuck.png"), context, CardHints(), "t")
    assert isinstance(read.interpretation, ReadCard) and read.interpretation.style == card["style"]
    assert read.label is not None and read.label.serial == "S4712"
    assert any("comparison broke" in (r.exc_text or "") for r in caplog.records), [r.getMessage() for r in caplog.records]


def test_neighbour_files_of_two_sheets_keep_the_ghosts_a_person_reads(deck: Path, tmp_path: Path) -> None:
    """A front whose felt-pen ghosts come from its own back, next in name order to the back of
    another sheet of its style (its own back missing from the folder): the two read as one
    style's front and back, yet the other sheet's marks, mirrored, lie under no tone of this
    side: no show-through is measured and the ghosts stay with a person. A back saved before its
    front (an even page, then an odd one) is never tried as a sheet."""
    from scanpipe.store.repository import Store
    from scanpipe.workflow import ingest_paths, init_election

    cards = json.loads((deck / "expected.json").read_text())["cards"]
    front = next(c for c in cards if c["file"].endswith("-p1.jpg") and c["bleed_options"])
    stem = front["file"][:-len("-p1.jpg")]
    own_back = next(c for c in cards if c["file"] == f"{stem}-p2.jpg")
    other_back = next(c for c in cards if c["file"].endswith("-p2.jpg") and c["style"] == front["style"] and not c["file"].startswith(stem))
    for name, (first, second) in {"other": (front, other_back), "reversed": (own_back, front)}.items():
        folder = tmp_path / name
        folder.mkdir()
        for k, c in enumerate((first, second), start=1):
            (folder / f"Image{k}.jpg").write_bytes((deck / c["file"]).read_bytes())
        store = Store.open(f"sqlite:///{tmp_path / (name + '.db')}")
        try:
            store.migrate()
            init_election(store, deck / "election" / "election.json")
            ingest_paths(store, [str(folder)], batch="b", hints=CardHints())
            stored = {Path(c.card.source.path).name: c.card.interpretation for c in store.iter_cards()}
            result = stored[f"Image{1 if first is front else 2}.jpg"]
            assert isinstance(result, ReadCard)
            got = {t.score.option: t.status.value for t in result.targets}
            assert {got[t["option"]] for t in front["targets"] if t["mark"] == "bleed_through"} == {"unknown"}, name
            assert not any("show-through" in t.why for r in stored.values() if isinstance(r, ReadCard) for t in r.targets), name
        finally:
            store.close()


@pytest.mark.parametrize("sheet", [9, 76, 190], ids=["0010-g4-threshold", "0077-g4-diffusion", "0191-png"])
def test_a_legal_card_askew_that_correlates_weakly_upside_down_reads_as_fed(sheet: int, tmp_path: Path) -> None:
    """Three Dominion-like legal cards of seed 2525 (skewed 2-2.5 degrees, stretched up to 1.4%),
    no timing marks: the phase correlation peaks a little higher with the card upside down, ECC
    there finds a weak fit (0.61) that the local refinement cannot hold, and the card was queued
    (``unknown_style``: "only 0% of its print near ... is on the card"). Searching, the other
    feed direction is tried too where the first settles no fit, and the card as fed fits (0.83):
    it reads with its own style."""
    from tests.sixth_vendor import make_card

    election_path = write_election(tmp_path / "election")
    (entry,) = make_card(tmp_path, 2525, sheet)
    assert entry["frame"] == "dm" and not entry["rotated_180"]
    election = load_election(election_path)
    context = InterpretContext(election, load_thresholds(), load_references(election, cache=False))
    (card,) = interpret_file(str(tmp_path / entry["file"]), context, CardHints(), "t")
    assert isinstance(card.interpretation, ReadCard), card.interpretation
    assert card.interpretation.style == entry["style"] and not card.interpretation.registration.rotated_180


def test_a_loop_round_a_name_whose_light_print_a_threshold_took_is_no_other_print(tmp_path: Path) -> None:
    """Seed 3434's sheet 169 (``0170.tif``): a Dominion-like card thresholded at 127, its light
    gray print mostly gone, a voter's loop drawn round "Against / En contra". The square inch
    round the loop shows 26% of its blank's print and holds the loop, which was taken for other
    print: the card was refused (``unknown_style``). A closed piece round the blank's print is
    a voter's loop, no other print (:func:`scanpipe.imaging.style._loops_round`); the card
    reads, the circled name for a person. Against the election without its style it is still
    queued (the split letter it prints differs from the lone blank's)."""
    from tests.sixth_vendor import make_card

    election_path = write_election(tmp_path / "election")
    (entry,) = make_card(tmp_path, 3434, 169)
    assert entry["mode"].endswith("threshold"), entry["mode"]
    election = load_election(election_path)
    context = InterpretContext(election, load_thresholds(), load_references(election, cache=False))
    (card,) = interpret_file(str(tmp_path / entry["file"]), context, CardHints(), "t")
    assert isinstance(card.interpretation, ReadCard), card.interpretation
    assert card.interpretation.style == entry["style"]
    statuses = {t.score.option: t.status.value for t in card.interpretation.targets}
    for target in entry["targets"]:
        want = {"vote": ("yes", "unknown"), "no_vote": ("no", "unknown"), "ambiguous": ("unknown",)}[target["intent"]]
        assert statuses[target["option"]] in want, (target, statuses[target["option"]])
    assert any(t["mark"] == "circled_name" for t in entry["targets"])
    definition = json.loads(election_path.read_text())
    lacking = dict(definition, ballot_styles=[s for s in definition["ballot_styles"] if s["id"] != entry["style"]])
    without = election_path.with_name("election-without.json")
    without.write_text(json.dumps(lacking))
    election = load_election(without)
    context = InterpretContext(election, load_thresholds(), load_references(election, cache=False))
    (card,) = interpret_file(str(tmp_path / entry["file"]), context, CardHints(), "t")
    assert not isinstance(card.interpretation, ReadCard), f"read as {card.interpretation.style} without {entry['style']}"


def test_a_bold_b_over_the_lone_blank_s_a_thresholded_dark_is_read_apart(tmp_path: Path) -> None:
    """Seed 3535's sheet 61 (``0062.tif``, thresholded at 145): a DM-0302 card ("Split B /
    División B") against the election without DM-0302 was read as DM-0301, the lone blank of
    its frame ("Split A"): of its two B's over the blank's A's, one correlated 0.72 and was read
    by the OCR extra unsurely ("R" 0.62, "B" 0.57), and the other, carrying 1.51 times the A's
    ink (over OWN_NARROW_MASS), was taken for a glyph printed over and not read at all. A glyph
    is now read up to OWN_READ_MASS times its ink (a bold capital over another: 1.4-1.5): it
    reads "B" surely and the card is queued; with its style in the election it reads."""
    from tests.sixth_vendor import make_card

    election_path = write_election(tmp_path / "election")
    (entry,) = make_card(tmp_path, 3535, 61)
    assert entry["style"] == "DM-0302" and entry["mode"] == "g4_threshold"
    definition = json.loads(election_path.read_text())
    lacking = dict(definition, ballot_styles=[s for s in definition["ballot_styles"] if s["id"] != "DM-0302"])
    without = election_path.with_name("election-without.json")
    without.write_text(json.dumps(lacking))
    for path, read_as in ((without, None), (election_path, "DM-0302")):
        election = load_election(path)
        context = InterpretContext(election, load_thresholds(), load_references(election, cache=False))
        (card,) = interpret_file(str(tmp_path / entry["file"]), context, CardHints(), "t")
        if read_as is None:
            assert not isinstance(card.interpretation, ReadCard), f"read as {card.interpretation.style} without DM-0302"
            if ocr_available():
                assert "it reads 'B' where the blank reads 'A'" in card.interpretation.detail, card.interpretation.detail
        else:
            assert isinstance(card.interpretation, ReadCard) and card.interpretation.style == read_as, card.interpretation


def test_a_back_page_whose_look_alikes_differ_in_a_few_pixels_shown_alike_is_not_guessed(tmp_path: Path) -> None:
    """Seed 3434's sheet 224 (``0225-p2.jpg``, a gray JPEG at 300 dpi): an AV-0203 back page,
    whose blank differs from AV-0101's back in 11 and 3 pixels only, the card showing all 14.
    Weighing each side of that pair by its pixels (tried, and dropped the same session) read it
    as AV-0203 by 11 pixels against 3: right by luck. A side of few pixels is taken as not seen
    only against a side of MIN_PAIR_PX or more the card shows (:func:`scanpipe.imaging.style._margin`):
    here neither is, so the page is ``ambiguous_style`` and a person states it."""
    from tests.sixth_vendor import make_card

    election_path = write_election(tmp_path / "election")
    entries = make_card(tmp_path, 3434, 224)
    (back,) = [e for e in entries if e["file"].endswith("-p2.jpg")]
    assert back["style"] == "AV-0203" and back["page"] == 2, back
    election = load_election(election_path)
    context = InterpretContext(election, load_thresholds(), load_references(election, cache=False))
    (card,) = interpret_file(str(tmp_path / back["file"]), context, CardHints(), "t")
    result = card.interpretation
    assert not isinstance(result, ReadCard), f"read as {result.style}"
    assert result.reason.value == "ambiguous_style", result
