"""Vendor ballots the project did not draw (issue 8), by the fourth independent renderer: an
ImageCast-like frame (corner squares or L marks, timing marks across the top only, a 2-D-code-like
block in the blank, styles differing only in the precinct line), a Hart-like frame (target boxes
right of the names, timing marks down both sides, a per-style stripe code at the bottom, styles
differing in one contest), a three-column legal frame whose long contests continue in the next
column; coloured paper and a second ink, bilevel scans that turn colour paper into speckle, red
pen, felt tip, pencil, slashes, highlighter, hesitation dots, erasures, write-ins, scanner streaks,
hole punches and staples, skew to 3 degrees, 2 % stretch, 180-degree feeds, low-quality JPEG.
Every card reads with its style or is queued with a reason, never as another style; no definite
error; every ambiguous target goes to a person."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from scanpipe.classify import load_thresholds
from scanpipe.election import load_election
from scanpipe.interpret import InterpretContext, interpret_file, load_references
from scanpipe.types import CardHints, ReadCard, UnreadableCard
from tests.deck_readings import read_deck
from tests.fourth_vendor import make_deck

DEFINITE = {"vote": "yes", "no_vote": "no", "ambiguous": "unknown"}
SEED = 11  # 14 sheets showing all three frames, speckled bilevel scans, a streak, every ambiguous kind


@pytest.fixture(scope="module")
def deck(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("fourth_vendor")
    make_deck(out, cards=14, seed=SEED)
    return out


@pytest.fixture(scope="module")
def readings(deck: Path) -> list[tuple[dict[str, Any], Any]]:
    return read_deck(deck)


def test_the_fourth_renderer_is_seeded(deck: Path, tmp_path: Path) -> None:
    make_deck(tmp_path, cards=2, seed=SEED)
    truth = json.loads((tmp_path / "expected.json").read_text())
    assert truth["cards"] == json.loads((deck / "expected.json").read_text())["cards"][:2]
    for card in truth["cards"]:
        assert (tmp_path / card["file"]).read_bytes() == (deck / card["file"]).read_bytes()
    for layout in sorted((deck / "election" / "layouts").iterdir()):
        assert (tmp_path / "election" / "layouts" / layout.name).read_bytes() == layout.read_bytes()


def test_the_deck_shows_what_it_is_for(deck: Path) -> None:
    cards = json.loads((deck / "expected.json").read_text())["cards"]
    assert {c["frame"] for c in cards} == {"ic", "hart", "long"}
    assert {c["paper"] for c in cards} - {"white"} and any(c["scan"].get("speckle") for c in cards)
    assert any(c["rotated_180"] for c in cards) and any("streak" in c["scan"] for c in cards)
    assert {"tif", "png", "jpg"} <= {c["format"] for c in cards}
    ambiguous = {t["mark"] + ("+write_in" if t.get("write_in") else "") for c in cards for t in c["targets"] if t["intent"] == "ambiguous"}
    assert {"highlighter", "erasure", "none+write_in"} <= ambiguous
    assert any(t["mark"] == "hesitation" and t["intent"] == "no_vote" for c in cards for t in c["targets"])  # a dot is no vote


def test_every_card_is_read_with_its_style_or_queued_with_a_reason(readings: list[tuple[dict[str, Any], Any]]) -> None:
    for card, interp in readings:
        if isinstance(interp, ReadCard):
            assert (interp.style, interp.page) == (card["style"], card["page"]), card["file"]
        else:
            assert isinstance(interp, UnreadableCard) and interp.reason and interp.detail, f"{card['file']}: {interp}"


def test_no_definite_error(readings: list[tuple[dict[str, Any], Any]]) -> None:
    wrong = []
    for card, interp in readings:
        if not isinstance(interp, ReadCard) or interp.style != card["style"]:
            continue
        got = {t.score.option: t.status.value for t in interp.targets}
        wrong += [(card["file"], t["option"], t["mark"], t["intent"], got[t["option"]]) for t in card["targets"]
                  if t["intent"] != "ambiguous" and got[t["option"]] not in (DEFINITE[t["intent"]], "unknown")]
    assert wrong == []


def test_every_ambiguous_target_goes_to_a_person(readings: list[tuple[dict[str, Any], Any]]) -> None:
    missed = []
    for card, interp in readings:
        if not isinstance(interp, ReadCard) or interp.style != card["style"]:
            continue  # a queued card goes to a person whole
        got = {t.score.option: t.status.value for t in interp.targets}
        missed += [(card["file"], t["option"], t["mark"], got[t["option"]]) for t in card["targets"]
                   if t["intent"] == "ambiguous" and got[t["option"]] != "unknown"]
    assert missed == []


def test_few_clear_targets_go_to_a_person(readings: list[tuple[dict[str, Any], Any]]) -> None:
    """At most the hardest profile's 0.5% of the clear targets (those a scanner streak crosses
    left out) go to a person. A strict xfail until 3 December: the heavy speckle of a bilevel
    scan of green stock (cards/0007.tif) read as creases beside most targets and as ink in its
    write-in areas, 15 of 427 (3.5%); 1 of 427 then. Two cards the style's checks refused
    before (a header's tint thresholded black: every target of theirs went to a person) read
    now, one of them a felt pen's X's on pink stock whose blots at the strokes' ends darken the
    paper round two filled ovals as a stain would (damage 0.32-0.33): 3 of 494. A filled oval
    with ink round it stays for a person (lifting broader strokes off the paper round filled
    targets read six fills crossed out of the sixth renderer's seed 2828 as votes), so the
    bound allows one target more than 0.5% on a deck this small (0.5% is 2.5 targets here; the
    fourth renderer's fresh seed 2828 of 200 cards: 28 of 6,854, 0.41%)."""
    clear = to_person = 0
    for card, interp in readings:
        if not isinstance(interp, ReadCard) or interp.style != card["style"]:
            continue
        got = {t.score.option: t.status.value for t in interp.targets}
        for t in card["targets"]:
            if t["intent"] != "ambiguous" and t["option"] not in card.get("streak_options", ()):
                clear += 1
                to_person += got[t["option"]] == "unknown"
    assert to_person <= 0.005 * clear + 1, f"{to_person} of {clear} clear targets sent to a person"


# --------------------------------------------------------------------------------------
# Single cards of the renderer's development seed 41 that found a fault (each its own
# condition), read with the election's full set of blanks


@pytest.fixture(scope="module")
def seed41(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, InterpretContext]:
    from tests.fourth_vendor import write_election

    out = tmp_path_factory.mktemp("fourth_vendor_41")
    election = load_election(write_election(out))
    return out, InterpretContext(election, load_thresholds(), load_references(election))


@pytest.mark.parametrize("seed, index, why", [
    (41, 55, "another party's ballot in the anchor's frame: the anchor's own places are few on it (refined by the member)"),
    (41, 22, "the timing marks' size misreads the scale by 3%: ECC settles only from the next scale"),
    (41, 67, "a bilevel scan whose scale the marks misread, stretched 1.5% along the feed"),
    (41, 72, "salmon stock on a white backing: the backing is not the paper (no stain all over)"),
    (41, 90, "green stock thresholded bilevel: the blank's light grey rules print black (no ring round every name)"),
    # the fresh seed 4141: another party's two columns in the anchor's three-column frame of
    # one row of marks; the anchor's dense fit refines nowhere (or on the shared header only):
    # the member is aligned to the card directly
    (4141, 2, "another party's ballot whose print the anchor's dense fit leaves off: aligned to the member directly"),
    (4141, 160, "another party's ballot in a frame of one row of marks, on pink stock: aligned to the member directly"),
    (4141, 15, "both scale hypotheses 3% off: the refinement's first round finds the middle only, its second the rest"),
    (4141, 90, "a legal sheet printing the letter sheets' frame at its top is a frame of its own, not their member"),
    (4141, 128, "rows of contests correlate a row off more strongly than in place: ECC from the next peak"),
    (4141, 179, "a wrong dpi tag (300 for 240) leaves a scale 4% off on a long page: ECC from halved inks first"),
    (41, 16, "thin rules in a second ink on coloured stock fall under the ink level at 100 dpi: not missing print"),
    (41, 20, "a 600 dpi tag proposes a scale of 3, where ECC shears the legal blank onto a corner of the card: no fit"),
    (41, 131, "a hesitation dot on speckled bilevel salmon stock: specks apart from it give it no stroke's reach (no vote)"),
    # seed 777: speckled bilevel stock sent clear targets to a person as "damage"
    (777, 284, "speckled bilevel blue stock, light print thresholded black: neither the print nor the specks beside a target are a crease"),
    (777, 118, "speckled bilevel salmon legal card at 150 dpi, untagged: specks in the strips beside the targets are no crease"),
    (777, 122, "felt-tip fills on speckled bilevel salmon stock: ink round a filled target is its overflow, no loop"),
])
def test_cards_that_found_a_fault_read(seed41: tuple[Path, InterpretContext], seed: int, index: int, why: str) -> None:
    from tests.fourth_vendor import make_card

    out, context = seed41
    card = make_card(out, seed, index)
    (page,) = interpret_file(str(out / card["file"]), context, CardHints(), "t")
    result = page.interpretation
    assert isinstance(result, ReadCard) and (result.style, result.page) == (card["style"], card["page"]), (why, result)
    got = {t.score.option: t for t in result.targets}
    clear = [t for t in card["targets"] if t["intent"] != "ambiguous"]
    assert [t["option"] for t in clear if got[t["option"]].status.value not in (DEFINITE[t["intent"]], "unknown")] == []
    to_person = [(t["option"], got[t["option"]].why) for t in clear if got[t["option"]].status.value == "unknown"]
    assert len(to_person) <= 1, (why, to_person)


def test_blanks_of_different_sheet_sizes_are_different_frames(seed41: tuple[Path, InterpretContext]) -> None:
    """The renderer's Republican ImageCast-like ballot is legal, the Democratic ones letter,
    all with a row of marks across the top: the legal blank aligns with a letter one there as
    well as a member does, yet is a frame of its own."""
    _out, context = seed41
    for group in context.index.groups:
        sizes = {tuple(round(x, 1) for x in m.size_in) for m in group.members}
        assert len(sizes) == 1, (group.anchor.style, sizes)
    legal = [g for g in context.index.groups if any(m.style == "IC-R-0101" for m in g.members)]
    assert len(legal) == 1 and [m.style for m in legal[0].members] == ["IC-R-0101"]


def test_a_header_printed_on_a_tint_that_the_threshold_turned_black_leaves_the_card_its_style(
        readings: list[tuple[dict[str, Any], Any]]) -> None:
    """Two bilevel cards of the deck on pink and salmon stock (``0012.tif``, ``0013.tif``,
    IC-R-0101, the only blank of its frame): their scans' threshold lies above the level of
    the contests' shaded headers, which came out solid black with their titles. Such a title's
    glyphs can be neither seen nor missed (:func:`scanpipe.imaging.style._blacked_out`); both
    cards were refused as ``unknown_style`` ("something else is printed near" a header), and
    every one of their targets went to a person. They read with their style now, as every card
    of the deck does."""
    by_file = {card["file"]: (card, interp) for card, interp in readings}
    for name in ("cards/0012.tif", "cards/0013.tif"):
        card, interp = by_file[name]
        assert isinstance(interp, ReadCard) and (interp.style, interp.page) == (card["style"], card["page"]), f"{name}: {interp}"
    assert all(isinstance(interp, ReadCard) for _card, interp in readings)


HEAVY = Path(__file__).parent / "fixtures" / "fourth_vendor" / "lg-d-0302_heavy.tif"  # seed 2828's 0017.tif


def test_a_card_printed_heavily_of_a_precinct_the_election_lacks_is_queued_not_read_as_its_neighbour(deck: Path) -> None:
    """A bilevel card of LG-D-0302 ("Precinct 03-002 Cold Spring North") at 150 dpi on green
    stock, thresholded dark (the fourth renderer's seed 2828, ``0017.tif``): every glyph prints
    about twice as heavily as on its blank. Against an election without LG-D-0302 it fitted
    LG-D-0301 ("03-001 Cold Spring"), whose rivals in the frame print the same precinct line,
    so its own lines are judged whole: and every glyph of the other precinct line, carrying
    twice its blank's ink, was taken for print a voter's loop lay over, so the card was read as
    LG-D-0301 (the start code, too). Printed over now means more ink than the card's own print
    weight accounts for (:func:`scanpipe.imaging.style._other_line`): queued. With its style
    in the election it reads as LG-D-0302."""
    truth = json.loads((deck / "expected.json").read_text())
    definition = json.loads((deck / truth["election"]).read_text())
    election = load_election(deck / truth["election"])
    context = InterpretContext(election, load_thresholds(), load_references(election))
    (read,) = interpret_file(str(HEAVY), context, CardHints(), "t")
    assert isinstance(read.interpretation, ReadCard) and read.interpretation.style == "LG-D-0302", read.interpretation
    definition["ballot_styles"] = [s for s in definition["ballot_styles"] if s["id"] != "LG-D-0302"]
    lacking = (deck / truth["election"]).with_name("election-without-LG-D-0302.json")
    lacking.write_text(json.dumps(definition))
    election = load_election(lacking)
    context = InterpretContext(election, load_thresholds(), load_references(election, cache=False))
    (queued,) = interpret_file(str(HEAVY), context, CardHints(), "t")
    assert not isinstance(queued.interpretation, ReadCard), f"read as {queued.interpretation.style}"


MARKS = Path(__file__).parent / "fixtures" / "fourth_vendor" / "lg-d-0301_marks.tif"  # seed 2929's 0108.tif


def test_the_timing_marks_two_blanks_print_a_pixel_apart_do_not_tell_their_styles_apart(deck: Path) -> None:
    """A bilevel card of LG-D-0301 (the Democratic ballot of precinct 03-001) at 240 dpi on
    blue stock (the fourth renderer's seed 2929, ``0108.tif``). LG-R-0301, the Republican
    ballot of the same precinct, prints the same frame of timing marks, but its blank as
    scanned prints them a pixel off LG-D-0301's: a sliver beside each of the 29 marks of the
    bottom row was "printed only by LG-R-0301", and the card, showing its marks, showed most of
    what only LG-R-0301 prints: the two fitted it about equally (margin 0.25) and the card was
    queued ``ambiguous_style`` (the start code; 3 of the 200 cards of seed 2929, 1 of seed
    3030). Print of one blank beside a timing mark of the other is that mark's
    (:meth:`scanpipe.imaging.style.StyleGroup.only_in`): the card reads as LG-D-0301, its
    party's print against the other's deciding."""
    truth = json.loads((deck / "expected.json").read_text())
    election = load_election(deck / truth["election"])
    context = InterpretContext(election, load_thresholds(), load_references(election))
    (read,) = interpret_file(str(MARKS), context, CardHints(), "t")
    assert isinstance(read.interpretation, ReadCard), read.interpretation
    assert read.interpretation.style == "LG-D-0301"
    (group,) = [g for g in context.index.groups if any(m.style == "LG-R-0301" for m in g.members)]
    d, r = ([k for k, m in enumerate(group.members) if m.style == s][0] for s in ("LG-D-0301", "LG-R-0301"))
    marks = group._marks_of(d)  # the other blank's marks: what only LG-R-0301 prints lies clear of them
    assert marks is not None and group.only_in(r, d).size > 0 and not marks.ravel()[group.only_in(r, d)].any()
