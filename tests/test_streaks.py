"""Scanner streaks (a dark line down the whole scan from dirt on the scanner's glass): found
from the scan as fed, never confused with print, and every target a streak crosses goes to a
person with the reason ``scanner_streak`` (the machine cannot tell the line from a mark)."""

from __future__ import annotations

from pathlib import Path

import cv2
import numpy as np
import pytest
from PIL import Image

from scanpipe.classify import Thresholds, load_thresholds
from scanpipe.imaging.streaks import Streak, light_streaks, on_print, painted_over, upright_columns, vertical_streaks
from scanpipe.interpret import InterpretContext, interpret_file, load_references, reclassify
from scanpipe.queue import PERSON_READS
from scanpipe.types import CardHints, DamageCause, Election, InterpretedCard, MarkStatus, ReadCard, Reason, UnreadableCard

H, W = 2200, 1700  # a letter page at 200 dpi


def _printed_page(rng: np.random.Generator) -> np.ndarray:
    """Paper with what a ballot prints: text-like rows, a rule between columns that stops at
    the margins, a column of timing marks down each side, a black title bar."""
    page = np.full((H, W), 238, np.uint8)
    for y in range(300, 2000, 40):  # lines of "text" in three columns
        for x0 in (150, 700, 1250):
            page[y: y + 12, x0: x0 + int(rng.integers(200, 420))] = 40
    page[200:2050, 640:643] = 20  # a rule between columns, margin to margin of the contests
    page[150:200, 100:1600] = 10  # a title bar
    for y in range(60, 2140, 34):  # timing marks: dashes and gaps
        page[y: y + 12, 30:68] = 0
        page[y: y + 12, W - 68: W - 30] = 0
    return page


def test_print_is_no_streak() -> None:
    page = _printed_page(np.random.default_rng(1))
    assert vertical_streaks(page) == ()


@pytest.mark.parametrize("x, width, level", [(401, 1, 30), (900, 2, 60), (1333, 4, 110)])
def test_a_line_down_the_whole_scan_is_a_streak(x: int, width: int, level: int) -> None:
    page = _printed_page(np.random.default_rng(2))
    page[:, x: x + width] = level
    assert vertical_streaks(page) == (Streak(x, x + width - 1),)


def test_a_streak_with_a_dark_scanner_background_round_the_sheet() -> None:
    page = _printed_page(np.random.default_rng(3))
    page[:, :40] = 0  # the scanner's background beside a narrower sheet, dithered and solid
    page[:, 40:60:2] = 0
    page[:, W - 30:] = 5
    page[:50, :] = 0  # and above it
    assert vertical_streaks(page) == ()
    page[:, 1000:1002] = 25
    assert vertical_streaks(page) == (Streak(1000, 1001),)


def test_the_inner_edge_of_a_patchy_scanner_background_is_no_streak() -> None:
    page = _printed_page(np.random.default_rng(6))
    page[:, :40] = 0
    page[:, 40:46] = 90  # a lighter stripe inside the background ends the walk along it early ...
    page[:, 46:62] = 0  # ... and the background's inner edge is dark down the whole height
    assert vertical_streaks(page) == ()


def test_a_line_with_gaps_or_short_of_the_margins_is_no_streak() -> None:
    page = _printed_page(np.random.default_rng(4))
    page[40: H - 40, 800:802] = 20  # stops 0.2 in short of the paper's edges
    page[:, 1100:1102] = 20
    page[1000:1030, 1100:1102] = 238  # a gap of 0.15 in
    assert vertical_streaks(page) == ()


def test_a_wide_dark_band_is_no_streak() -> None:
    page = _printed_page(np.random.default_rng(5))
    page[:, 800:900] = 30  # half an inch: no scanner line, something else
    assert vertical_streaks(page) == ()


def test_the_columns_turn_with_the_card() -> None:
    assert upright_columns(Streak(10, 12), 100, rotated_180=False) == (10, 12)
    assert upright_columns(Streak(10, 12), 100, rotated_180=True) == (87, 89)


def test_a_line_the_blank_prints_is_no_streak() -> None:
    blank = np.full((H, W), 240, np.uint8)
    blank[:, 500:502] = 0  # printed edge to edge (a sheet whose margins the scanner cut)
    assert on_print((500, 501), H, np.eye(3), blank)
    assert not on_print((700, 701), H, np.eye(3), blank)
    shift = np.array([[1.0, 0.0, -3.0], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0]])  # card px -> blank px, 3 px off
    assert on_print((503, 504), H, shift, blank)


# --------------------------------------------------------------------------------------
# On a vendor card


@pytest.fixture(scope="module")
def context(vendor_election: Election, tmp_path_factory: pytest.TempPathFactory) -> InterpretContext:
    return InterpretContext(vendor_election, load_thresholds(),
                            load_references(vendor_election, cache=tmp_path_factory.mktemp("learned")))


def _blank_card(election: Election, style: str) -> tuple[np.ndarray, list[tuple[float, float, float, float]]]:
    page = election.style(style).layout.pages[0]
    assert page.reference is not None
    gray = np.array(Image.open(page.reference).convert("L"))
    boxes = [tuple(v * page.reference_dpi for v in t.box_in) for t in page.targets]
    return gray, boxes  # type: ignore[return-value]


def _read(gray: np.ndarray, context: InterpretContext, tmp_path: Path) -> tuple[InterpretedCard, ReadCard]:
    """The card image ``gray`` saved as a 200-dpi PNG and read: the stored card and its reading,
    which must be a read card."""
    path = tmp_path / "streaked.png"
    Image.fromarray(np.ascontiguousarray(gray)).save(path, dpi=(200, 200))
    (read,) = interpret_file(str(path), context, CardHints(), "b")
    assert isinstance(read.interpretation, ReadCard), read.interpretation
    return read, read.interpretation


@pytest.mark.parametrize("turned", [False, True])
def test_empty_targets_a_black_streak_crosses_go_to_a_person(vendor_election: Election, context: InterpretContext,
                                                            tmp_path: Path, turned: bool) -> None:
    """A line too dark to see through (a bilevel scan's is black) and as wide as a voter's
    thinnest stroke (4 px at 200 dpi, 0.02 in) may hide a stroke under it."""
    gray, boxes = _blank_card(vendor_election, "H-13")
    x0, _y, w, _h = boxes[0]
    x = int(x0 + w / 2)  # through the first target's column
    gray[:, x: x + 4] = 12
    crossed = [bx - 2 <= x + 3 and bx + bw + 2 >= x for bx, _by, bw, _bh in boxes]
    assert 0 < sum(crossed) < len(boxes)
    card = np.rot90(gray, 2) if turned else gray
    read, result = _read(card, context, tmp_path)
    assert result.style == "H-13"
    assert result.registration.rotated_180 is turned
    assert Reason.SCANNER_STREAK in result.reasons and Reason.SCANNER_STREAK in PERSON_READS
    assert Reason.MARGINAL_MARK not in result.reasons  # the streak's targets are queued once, under the streak
    for reading, hit in zip(result.targets, crossed, strict=True):
        if hit:
            assert reading.status is MarkStatus.UNKNOWN and reading.score.damage_score == 1.0
            assert reading.score.damage_cause is DamageCause.STREAK and "a scanner streak runs through it" in reading.why
        else:
            assert reading.status is MarkStatus.NO  # the blank's other targets: read as they are
    pending = {c.contest for c in result.contests if c.outcome.value == "pending"}
    assert pending == {r.score.contest for r, hit in zip(result.targets, crossed, strict=True) if hit}
    # read again under other thresholds (calibration): the streak's targets stay with a person
    t = context.thresholds
    again = reclassify(read, vendor_election, Thresholds(0.0, 0.0001, t.ring, t.damage, t.write_in, source="test"))
    assert again is not None and isinstance(again.interpretation, ReadCard)
    assert Reason.SCANNER_STREAK in again.interpretation.reasons
    assert [r.status is MarkStatus.UNKNOWN for r, hit in zip(again.interpretation.targets, crossed, strict=True) if hit] == \
           [True] * sum(crossed)


@pytest.mark.parametrize("quarters, width, across", [(1, 4, 1 / 2), (3, 4, 1 / 2), (3, 2, 1 / 3), (3, 4, 1 / 3)])
def test_a_black_streak_on_a_card_fed_sideways_is_measured_down_the_scan_as_fed(vendor_election: Election,
                                                                                context: InterpretContext, tmp_path: Path,
                                                                                quarters: int, width: int, across: float) -> None:
    """A card fed sideways (long edge first) is read turned a quarter; the scanner's streak
    runs down the scan as fed, so across the card as read, through a row of targets. It is
    looked for as fed and measured across the card as on an upright one (before, it was not
    seen: the card said nothing of the glass): a line as wide as a voter's thinnest stroke
    (4 px at 200 dpi) sends the empty targets it crosses to a person; a thinner one hides
    nothing, so they read as no vote, but for one with a pen stroke drawn along the line. A
    black line running along a whole line of the card's text (the names beside the targets it
    crosses) leaves the card's print unlike its blank's: the card is queued, never read, its
    reason naming the streak."""
    gray, boxes = _blank_card(vendor_election, "H-13")
    h, _w = gray.shape
    fed = np.ascontiguousarray(np.rot90(gray, quarters))  # 1: a quarter counterclockwise, 3: clockwise

    def columns(box: tuple[float, float, float, float]) -> tuple[float, float]:
        _bx, by, _bw, bh = box  # the box's columns in the scan as fed
        return (by, by + bh) if quarters == 1 else (h - 1 - by - bh, h - 1 - by)

    x0, x1 = columns(boxes[0])
    x = int(x0 + (x1 - x0) * across)
    crossed = [c0 - 2 <= x + width - 1 and c1 + 2 >= x for c0, c1 in map(columns, boxes)]
    hidden = next(k for k, hit in enumerate(crossed) if hit and k > 0) if width < 4 else None
    if hidden is not None:  # a pen stroke along the line, a pixel beside it each side, inside the target
        bx, _by, bw, _bh = boxes[hidden]
        rows = (int(bx + 0.15 * bw), int(bx + 0.85 * bw)) if quarters == 3 else (int(gray.shape[1] - 1 - bx - 0.85 * bw),
                                                                                  int(gray.shape[1] - 1 - bx - 0.15 * bw))
        fed[rows[0]: rows[1], x - 1: x + width + 1] = 30
    fed[:, x: x + width] = 12 if width >= 4 else 0
    assert 0 < sum(crossed) < len(boxes)
    if (width, across) == (4, 1 / 3):  # along the names' x-height
        path = tmp_path / "streaked.png"
        Image.fromarray(fed).save(path, dpi=(200, 200))
        (queued,) = interpret_file(str(path), context, CardHints(), "b")
        assert isinstance(queued.interpretation, UnreadableCard) and "scanner streak" in queued.interpretation.detail
        return
    _read_card, result = _read(fed, context, tmp_path)
    assert result.style == "H-13" and result.registration.quarter_turned
    assert Reason.SCANNER_STREAK in result.reasons
    for k, (reading, hit) in enumerate(zip(result.targets, crossed, strict=True)):
        if hit and (width >= 4 or k == hidden):
            assert reading.status is MarkStatus.UNKNOWN and reading.score.damage_score == 1.0, (k, reading.why)
        else:
            assert reading.status is MarkStatus.NO, (k, hit, reading.why)


def test_a_black_streak_on_a_card_scanned_on_a_dark_bed_sends_its_targets_to_a_person(vendor_election: Election,
                                                                                     context: InterpretContext, tmp_path: Path) -> None:
    """The reader paints a dark scanner bed round a skewed page as paper before reading it;
    the streak is still looked for on the scan as it came (from the paper's top edge to its
    bottom edge: on the painted bed it stopped short, the card said nothing of it, and its line
    through empty targets read as votes, the fourth renderer's seed 7373). A thin line with
    nothing beside it hides no stroke: those targets read as no vote."""
    from tests.test_page_bed import _on_bed

    gray, boxes = _blank_card(vendor_election, "H-13")
    card = _on_bed(gray, 0.7, 25, margin=70)  # a dark bed all round the sheet, turned a little
    x0, _y, w, _h = boxes[0]
    x = int(x0 + w / 2) + 70
    paper = card[:, x: x + 2] > 100
    card[:, x: x + 2][paper] = 30  # the glass's dirt darkens two columns wherever the paper passed
    _read_card, result = _read(card, context, tmp_path)
    assert result.style == "H-13"
    assert Reason.SCANNER_STREAK in result.reasons
    statuses = [r.status for r in result.targets]
    assert MarkStatus.YES not in statuses, [(r.score.option, r.why) for r in result.targets]


def test_a_vote_a_black_streak_crosses_reads_and_its_empty_neighbours_go_to_a_person(vendor_election: Election,
                                                                                    context: InterpretContext, tmp_path: Path) -> None:
    """With the streak painted over from beside it, a target the voter filled beyond the line
    reads as the vote it is; an empty target a black line (0.02 in) crosses stays with a person
    (a stroke under the line could not be seen), also when read again under other thresholds."""
    gray, boxes = _blank_card(vendor_election, "H-13")
    x0, y0, w, h = boxes[0]
    cv2.ellipse(gray, (int(x0 + w / 2), int(y0 + h / 2)), (int(w / 2), int(h / 2)), 0, 0, 360, 25, -1)  # filled with a felt tip
    x = int(x0 + w / 3)
    gray[:, x: x + 4] = 12
    crossed = [bx - 2 <= x + 3 and bx + bw + 2 >= x for bx, _by, bw, _bh in boxes]
    assert crossed[0] and sum(crossed) > 1
    read, result = _read(gray, context, tmp_path)
    assert Reason.SCANNER_STREAK in result.reasons
    statuses = [r.status for r in result.targets]
    assert statuses[0] is MarkStatus.YES
    assert all(s is MarkStatus.UNKNOWN for s, hit in zip(statuses[1:], crossed[1:], strict=True) if hit)
    assert all(s is MarkStatus.NO for s, hit in zip(statuses[1:], crossed[1:], strict=True) if not hit)
    t = context.thresholds
    again = reclassify(read, vendor_election, Thresholds(0.0, 0.0001, t.ring, t.damage, t.write_in, source="test"))
    assert again is not None and isinstance(again.interpretation, ReadCard)
    assert all(r.status is MarkStatus.UNKNOWN for r, hit in zip(again.interpretation.targets[1:], crossed[1:], strict=True) if hit)


def test_a_grey_streak_is_seen_through_but_not_a_stroke_under_it(vendor_election: Election, context: InterpretContext,
                                                                  tmp_path: Path) -> None:
    """A grey line (dirt, not a dead sensor) shows the paper under it: the empty targets it
    crosses read as no vote; one with a thin stroke drawn exactly along the line (painted
    over with the line, so the score alone would say no vote) is darker under the line and
    goes to a person."""
    gray, boxes = _blank_card(vendor_election, "H-13")
    x0, y0, w, h = boxes[0]
    x = int(x0 + w / 3)
    crossed = [bx - 2 <= x + 1 and bx + bw + 2 >= x for bx, _by, bw, _bh in boxes]
    hidden = next(k for k, hit in enumerate(crossed) if hit and k > 0)
    hx, hy, _hw, hh = boxes[hidden]
    gray[int(hy + 0.15 * hh): int(hy + 0.85 * hh), x - 1: x + 3] = (gray[int(hy + 0.15 * hh): int(hy + 0.85 * hh), x - 1: x + 3] * 0.45).astype(np.uint8)
    gray[:, x: x + 2] = (gray[:, x: x + 2].astype(np.float32) * 0.5).astype(np.uint8)  # the line darkens what it crosses by half
    _, result = _read(gray, context, tmp_path)
    assert Reason.SCANNER_STREAK in result.reasons
    for k, (reading, hit) in enumerate(zip(result.targets, crossed, strict=True)):
        if k == hidden:
            assert reading.status is MarkStatus.UNKNOWN and reading.score.damage_score == 1.0
        else:
            assert reading.status is MarkStatus.NO, (k, hit, reading.why)


@pytest.mark.parametrize("turned, across, stroke", [(False, 1 / 3, True), (True, 1 / 3, True), (False, 0.06, False)])
def test_a_thin_black_streak_hides_no_stroke_but_one_beside_it_goes_to_a_person(vendor_election: Election, context: InterpretContext,
                                                                               tmp_path: Path, turned: bool, across: float,
                                                                               stroke: bool) -> None:
    """A black line 0.01 in wide (2 px at 200 dpi; a voter's thinnest stroke is wider) hides
    nothing by itself: the empty targets it crosses read as no vote. A stroke 0.02 in wide
    drawn exactly along it (painted over with the line, so the score alone would say no vote)
    shows beside the line and goes to a person. Near an oval's end (``across``) the line runs
    along its printed outline: the blank's print beside the line is no stroke."""
    gray, boxes = _blank_card(vendor_election, "H-13")
    x0, _y, w, _h = boxes[0]
    x = int(x0 + across * w)
    crossed = [bx - 2 <= x + 1 and bx + bw + 2 >= x for bx, _by, bw, _bh in boxes]
    hidden = next(k for k, hit in enumerate(crossed) if hit and k > 0) if stroke else None
    if hidden is not None:
        _hx, hy, _hw, hh = boxes[hidden]
        gray[int(hy + 0.15 * hh): int(hy + 0.85 * hh), x - 1: x + 3] = 30  # a pen stroke along the line, a pixel beside it each side
    gray[:, x: x + 2] = 0
    card = np.rot90(gray, 2) if turned else gray
    _, result = _read(card, context, tmp_path)
    assert Reason.SCANNER_STREAK in result.reasons
    assert sum(crossed) > 2
    for k, reading in enumerate(result.targets):
        if k == hidden:
            assert reading.status is MarkStatus.UNKNOWN and reading.score.damage_score == 1.0
        else:
            assert reading.status is MarkStatus.NO, (k, crossed[k], reading.why)


def test_painting_over_a_streak_continues_ink_and_paper() -> None:
    page = np.full((40, 60), 230, np.uint8)
    page[10:30, 20:50] = 20  # a filled mark
    page[:, 30:32] = 60  # the streak through it
    painted = painted_over(page, [(30, 31)])
    assert (painted[10:30, 20:50] == 20).all() and (painted[:10] == 230).all() and (painted[30:] == 230).all()
    assert (page[:, 30:32] == 60).all()  # the card itself is left as scanned


def test_a_streak_crossing_no_target_changes_nothing(vendor_election: Election, context: InterpretContext,
                                                      tmp_path: Path) -> None:
    gray, boxes = _blank_card(vendor_election, "H-13")
    clear = next(x for x in range(300, gray.shape[1] - 300, 5)
                 if all(not (bx - 20 <= x + 1 and bx + bw + 20 >= x) for bx, _by, bw, _bh in boxes))
    gray[:, clear: clear + 2] = 35
    _, result = _read(gray, context, tmp_path)
    assert Reason.SCANNER_STREAK not in result.reasons
    assert all(r.status is MarkStatus.NO for r in result.targets)


def test_a_streak_just_beside_a_target_is_no_stroke_of_the_voter(vendor_election: Election, context: InterpretContext,
                                                                  tmp_path: Path) -> None:
    """A line a few pixels beside an oval (not through its box) read as a stroke leaving its
    outline (seen on Cedar's cards, 6 px off); read with the line painted over, the empty
    targets beside it are no votes."""
    gray, boxes = _blank_card(vendor_election, "H-13")
    x0, _y, _w, _h = boxes[0]
    x = int(x0) - 6
    assert all(not (bx - 2 <= x + 1 and bx + bw + 2 >= x) for bx, _by, bw, _bh in boxes)
    gray[:, x: x + 2] = 40
    _, result = _read(gray, context, tmp_path)
    assert Reason.SCANNER_STREAK not in result.reasons
    assert all(r.status is MarkStatus.NO for r in result.targets), [(r.score.option, r.why) for r in result.targets
                                                                    if r.status is not MarkStatus.NO]


def test_an_unreadable_card_names_its_streak(vendor_election: Election, context: InterpretContext, tmp_path: Path) -> None:
    page = np.full((H, W), 240, np.uint8)  # no ballot of this election: some print, and a streak
    page[300:1900:50, 200:1500] = 30
    page[:, 900:902] = 30
    path = tmp_path / "other.png"
    Image.fromarray(page).save(path, dpi=(200, 200))
    (read,) = interpret_file(str(path), context, CardHints(), "b")
    result = read.interpretation
    assert isinstance(result, UnreadableCard)
    assert "scanner streak" in result.detail and "columns 900-901" in result.detail


def test_a_light_streak_is_found_where_it_cuts_the_print_down_the_page() -> None:
    """A sensor element that reads too bright leaves a light line (two columns) down the scan,
    seen only where it cuts print: it is found at its columns; the same page uncut, with a
    double rule (a gap between two rules down the page) and a column of ovals whose insides
    line up, shows none."""
    page = _printed_page(np.random.default_rng(3))
    page[250:2000, 1000:1003] = 20  # a double rule: two lines with a gap of paper between
    page[250:2000, 1006:1009] = 20
    for y in range(320, 1980, 60):  # a column of ovals: their insides light, in line down the page
        cv2.ellipse(page, (1450, y), (14, 9), 0, 0, 360, 30, 2)
    assert light_streaks(page) == ()
    cut = page.copy()
    cut[:, 811:813] = 238  # through the middle column's lines of text
    assert light_streaks(cut) == (Streak(811, 812),)


def test_a_card_a_light_streak_cuts_a_glyph_of_its_lone_blank_reads(tmp_path: Path) -> None:
    """The fourth renderer's seed 3535, card 156: a light streak three pixels wide down a
    300-dpi colour scan cuts the "P" of "REPUBLICAN" and the "c" of "Precinct" on a card whose
    blank has no look-alike (one glyph decides), and the card was refused (``unknown_style``).
    Its light streak is now found and painted over, and no glyph on it judged: it reads as
    drawn; against the election without its style it is still queued."""
    import json

    from scanpipe.election import load_election
    from tests.fourth_vendor import make_card, write_election

    election_path = write_election(tmp_path)
    card = make_card(tmp_path, 3535, 155)
    assert card["scan"]["streak"]["kind"] == "light"
    election = load_election(election_path)
    context = InterpretContext(election, load_thresholds(), load_references(election, cache=False))
    (page,) = interpret_file(str(tmp_path / card["file"]), context, CardHints(), "t")
    result = page.interpretation
    assert isinstance(result, ReadCard) and (result.style, result.page) == (card["style"], card["page"]), result
    got = {t.score.option: t.status.value for t in result.targets}
    for target in card["targets"]:
        want = {"vote": ("yes", "unknown"), "no_vote": ("no", "unknown"), "ambiguous": ("unknown",)}[target["intent"]]
        assert got[target["option"]] in want, (target, got[target["option"]])
    definition = json.loads(election_path.read_text())
    lacking = dict(definition, ballot_styles=[s for s in definition["ballot_styles"] if s["id"] != card["style"]])
    without = tmp_path / "election-without.json"
    without.write_text(json.dumps(lacking))
    election = load_election(without)
    context = InterpretContext(election, load_thresholds(), load_references(election, cache=False))
    (page,) = interpret_file(str(tmp_path / card["file"]), context, CardHints(), "t")
    assert isinstance(page.interpretation, UnreadableCard), page.interpretation
