"""A loop drawn around an option's printed name, found against the blank wherever the vendor
prints the name (contract §7: a circled target or name is for a person)."""

from __future__ import annotations

import cv2
import numpy as np
import pytest

from scanpipe.imaging.marks_loops import name_loops
from scanpipe.types import TargetDef

DPI = 200
NAMES = ("Walter Brandt", "Nkechi Eze", "No")


def _px(v: float) -> int:
    return int(round(v * DPI))


def _blank(names_right: bool) -> tuple[np.ndarray, list[TargetDef], list[tuple[int, int, int, int]]]:
    """A 6 x 3 in blank: three options, each an oval with its name right of it, or (an arrow
    ballot) its name left of a broken arrow whose gap is the target. Returns the blank, the
    targets and each name's printed extent (px: x0, y0, x1, y1)."""
    page = np.full((_px(3.0), _px(6.0)), 255, np.uint8)
    targets, names = [], []
    for k, name in enumerate(NAMES):
        y = 0.6 + 0.7 * k
        (tw, th), _base = cv2.getTextSize(name, cv2.FONT_HERSHEY_SIMPLEX, 0.9, 2)
        if names_right:
            box = (0.5, y - 0.075, 0.22, 0.15)
            cv2.ellipse(page, (_px(0.61), _px(y)), (_px(0.1), _px(0.065)), 0, 0, 360, 0, 2)
            x0 = _px(0.85)
        else:
            box = (4.2, y - 0.06, 0.3, 0.12)
            cv2.line(page, (_px(3.9), _px(y)), (_px(4.22), _px(y)), 0, 3)  # the tail, up to the gap
            cv2.fillPoly(page, [np.array([[_px(4.48), _px(y - 0.06)], [_px(4.62), _px(y)], [_px(4.48), _px(y + 0.06)]])], 0)
            cv2.line(page, (_px(4.48), _px(y)), (_px(4.5), _px(y)), 0, 3)
            x0 = _px(3.7) - tw
        cv2.putText(page, name, (x0, _px(y) + th // 2), cv2.FONT_HERSHEY_SIMPLEX, 0.9, 0, 2, cv2.LINE_AA)
        targets.append(TargetDef("c", f"o{k}", box))
        names.append((x0, _px(y) - th // 2, x0 + tw, _px(y) + th // 2))
    return page, targets, names


def _scores(card: np.ndarray, blank: np.ndarray, targets: list[TargetDef]) -> np.ndarray:
    hom = np.diag([float(DPI), float(DPI), 1.0])
    return name_loops(card, hom, blank, float(DPI), targets, {})


def _loop_around(card: np.ndarray, name: tuple[int, int, int, int], pad: int = 10, width: int = 3, ink: int = 40) -> None:
    x0, y0, x1, y1 = name
    cv2.ellipse(card, ((x0 + x1) // 2, (y0 + y1) // 2), ((x1 - x0) // 2 + pad + 8, (y1 - y0) // 2 + pad), 0, 0, 360, ink, width)


@pytest.mark.parametrize("names_right", [True, False])
@pytest.mark.parametrize("which", [0, 1, 2])
def test_a_loop_around_a_name_is_found_for_that_option_alone_on_either_side(names_right: bool, which: int) -> None:
    blank, targets, names = _blank(names_right)
    card = blank.copy()
    _loop_around(card, names[which])
    scores = _scores(card, blank, targets)
    assert scores[which] >= 0.7, scores
    assert all(s < 0.7 for k, s in enumerate(scores) if k != which), scores


def test_a_pencil_loop_left_open_a_little_is_still_a_loop() -> None:
    blank, targets, names = _blank(True)
    card = blank.copy()
    x0, y0, x1, y1 = names[0]
    cv2.ellipse(card, ((x0 + x1) // 2, (y0 + y1) // 2), ((x1 - x0) // 2 + 18, (y1 - y0) // 2 + 10), 0, 20, 340, 110, 3)
    assert _scores(card, blank, targets)[0] >= 0.7


@pytest.mark.parametrize(("inset", "width", "ink"), [(10, 3, 40), (12, 3, 60), (9, 4, 110)])
def test_a_loop_drawn_round_a_name_twice_is_a_loop(inset: int, width: int, ink: int) -> None:
    """A hand going round a name once more, a little inside the first pass: the second pass
    crosses the loop's inside near its round ends (drawn ink on up to a tenth of it; a stamp's
    words fill more), where a single pass leaves paper."""
    blank, targets, names = _blank(True)
    card = blank.copy()
    x0, y0, x1, y1 = names[0]
    cx, cy = (x0 + x1) // 2, (y0 + y1) // 2
    ax, ay = (x1 - x0) // 2 + 18, (y1 - y0) // 2 + 10
    cv2.ellipse(card, (cx, cy), (ax, ay), 0, 0, 360, ink, width, cv2.LINE_AA)
    cv2.ellipse(card, (cx + inset // 2, cy + inset // 3), (ax - inset, ay - inset // 2), 3, 150, 420, ink, width, cv2.LINE_AA)
    scores = _scores(card, blank, targets)
    assert scores[0] >= 0.7 and (scores[1:] < 0.7).all(), scores


def test_a_blank_card_and_a_voted_card_show_no_loop() -> None:
    blank, targets, _names = _blank(True)
    assert not _scores(blank.copy(), blank, targets).any()
    card = blank.copy()
    cv2.ellipse(card, (_px(0.61), _px(1.3)), (_px(0.1), _px(0.065)), 0, 0, 360, 0, -1)  # a filled oval
    cv2.line(card, (_px(0.45), _px(2.0)), (_px(0.8), _px(1.85)), 0, 3)  # a check running out of its box
    assert (_scores(card, blank, targets) < 0.7).all()


def test_an_underline_a_crossing_line_and_an_x_over_a_name_are_no_loops() -> None:
    blank, targets, names = _blank(True)
    for draw in ("underline", "strike", "x"):
        card = blank.copy()
        x0, y0, x1, y1 = names[0]
        if draw == "underline":
            cv2.line(card, (x0 - 5, y1 + 12), (x1 + 5, y1 + 14), 30, 3)
        elif draw == "strike":
            cv2.line(card, (x0 - 10, (y0 + y1) // 2), (x1 + 10, (y0 + y1) // 2 + 4), 30, 3)
        else:
            cv2.line(card, (x0 - 10, y0 - 14), (x1 + 10, y1 + 14), 30, 3)
            cv2.line(card, (x0 - 10, y1 + 14), (x1 + 10, y0 - 14), 30, 3)
        assert (_scores(card, blank, targets) < 0.7).all(), draw


def test_a_stamp_framing_print_with_its_own_words_is_no_loop() -> None:
    """A stamp's frame runs round the print like a loop, but holds ink of its own inside."""
    blank, targets, names = _blank(True)
    card = blank.copy()
    x0, y0, x1, y1 = names[1]
    cv2.rectangle(card, (x0 - 20, y0 - 30), (x1 + 20, y1 + 30), 60, 4)
    cv2.putText(card, "SAMPLE", (x0 + 10, y1 + 6), cv2.FONT_HERSHEY_SIMPLEX, 1.2, 60, 3)  # over the name
    assert (_scores(card, blank, targets) < 0.7).all()


def test_a_loop_around_bare_paper_is_no_circled_name() -> None:
    blank, targets, _names = _blank(True)
    card = blank.copy()
    cv2.ellipse(card, (_px(4.8), _px(1.3)), (_px(0.4), _px(0.15)), 0, 0, 360, 30, 3)
    assert (_scores(card, blank, targets) < 0.7).all()


def test_print_a_scan_shows_thicker_than_its_blank_is_no_loop_round_each_word() -> None:
    """A darker threshold thickens every stroke: the rim it adds round each word hugs the print."""
    blank, targets, names = _blank(True)
    card = blank.copy()
    for (x0, _y0, _x1, y1), name in zip(names, NAMES, strict=True):
        cv2.putText(card, name, (x0, y1), cv2.FONT_HERSHEY_SIMPLEX, 0.9, 0, 10, cv2.LINE_AA)
    assert (_scores(card, blank, targets) < 0.7).all()


def test_a_loop_grazing_a_rule_the_scan_prints_thicker_is_still_a_loop() -> None:
    """A rule under the option's row, printed thicker in this scan (a darker threshold), which
    the loop round the name touches: the rule's rim is the print's, and does not make the loop
    a piece that runs along the print (it did until the blank's rules cleared their rim)."""
    blank, targets, names = _blank(True)
    x0, y0, x1, y1 = names[0]
    rule_y = y1 + 24
    cv2.line(blank, (_px(0.3), rule_y), (_px(5.7), rule_y), 0, 2)
    card = blank.copy()
    cv2.line(card, (_px(0.3), rule_y), (_px(5.7), rule_y), 0, 9)  # the scan's thicker rule
    cx, cy = (x0 + x1) // 2, (y0 + y1) // 2
    cv2.ellipse(card, (cx, cy), ((x1 - x0) // 2 + 18, rule_y - cy - 3), 0, 0, 360, 40, 3)  # down to the rule
    scores = _scores(card, blank, targets)
    assert scores[0] >= 0.7, scores
    assert (scores[1:] < 0.7).all(), scores


def test_an_underline_and_an_overline_are_no_loop() -> None:
    """Two strokes along a name, above and below it: taken together (their boxes overlap, as a
    loop the print cut in two), they still close no loop."""
    blank, targets, names = _blank(True)
    card = blank.copy()
    x0, y0, x1, y1 = names[0]
    cv2.line(card, (x0 - 12, y0 - 12), (x1 + 12, y0 - 10), 40, 3)
    cv2.line(card, (x0 - 12, y1 + 12), (x1 + 12, y1 + 14), 40, 3)
    assert (_scores(card, blank, targets) < 0.7).all()


def _check(card: np.ndarray, left: int, bottom: int, size: int, width: int = 3, ink: int = 40) -> None:
    """A hand's check: a short down-stroke to ``(left + size // 3, bottom)``, then a long up-stroke."""
    vertex = (left + size // 3, bottom)
    cv2.line(card, (left, bottom - size // 2), vertex, ink, width, cv2.LINE_AA)
    cv2.line(card, vertex, (left + size, bottom - size), ink, width, cv2.LINE_AA)


@pytest.mark.parametrize("names_right", [True, False])
def test_a_check_beside_a_name_is_for_a_person(names_right: bool) -> None:
    """A check after the printed name (its target left empty): a careful person may see a vote
    there, so the option goes to one (contract section 7: a mark that could be either)."""
    blank, targets, names = _blank(names_right)
    card = blank.copy()
    x0, y0, x1, y1 = names[1]
    _check(card, x1 + _px(0.1), y1 + _px(0.03), _px(0.16))
    scores = _scores(card, blank, targets)
    assert scores[1] >= 0.7 and scores[0] < 0.7 and scores[2] < 0.7, scores


def test_a_check_just_left_of_an_oval_is_that_options() -> None:
    """Beside the target on the side away from the names (over an arrow's tail, or left of an
    oval), close to it: that target's, though the page's names stand on its other side."""
    blank, targets, _names = _blank(True)
    card = blank.copy()
    x, y, _w, h = targets[2].box_in
    _check(card, _px(x - 0.25), _px(y + h), _px(0.15))
    scores = _scores(card, blank, targets)
    assert scores[2] >= 0.7 and scores[0] < 0.7 and scores[1] < 0.7, scores


def test_a_check_over_an_arrows_tail_that_the_tail_cuts_in_two_stands_alone() -> None:
    """A check drawn over a broken arrow's heavy tail, its point below it: the tail hides the
    strokes where they cross it, leaving the point a piece of its own. That piece runs along
    the print: it is the check's, not other ink round it (a stamp's or a signature's)."""
    blank, targets, _names = _blank(False)
    _x, y, _w, h = targets[1].box_in
    row = _px(y + h / 2)
    cv2.line(blank, (_px(3.9), row), (_px(4.22), row), 0, 9)  # a heavy tail, 0.045 in
    card = blank.copy()
    _check(card, _px(3.96), row + _px(0.05), _px(0.15))
    scores = _scores(card, blank, targets)
    assert scores[1] >= 0.7 and scores[0] < 0.7 and scores[2] < 0.7, scores


def test_a_stray_line_a_dot_and_a_check_run_out_of_its_target_are_no_check_beside() -> None:
    """Section 7: a stray line that does not enter the target is not a vote, nor a dot; a check
    in the target whose stroke runs out of the box is that target's own mark."""
    blank, targets, names = _blank(True)
    for draw in ("line", "dot", "overrun"):
        card = blank.copy()
        x0, y0, x1, y1 = names[0]
        if draw == "line":
            cv2.line(card, (x1 + _px(0.1), y1), (x1 + _px(0.4), y1 - _px(0.02)), 30, 3)
        elif draw == "dot":
            cv2.circle(card, (x1 + _px(0.15), (y0 + y1) // 2), _px(0.025), 30, -1)
        else:
            x, y, w, h = targets[0].box_in
            _check(card, _px(x + 0.03), _px(y + h - 0.02), _px(0.3))
        assert (_scores(card, blank, targets) < 0.7).all(), draw


def test_a_loop_round_the_next_column_s_name_is_not_the_option_left_of_the_column_rule() -> None:
    """Dominion-like columns print each name left of its oval, the oval at the column's right
    end, the next column's names just past the rule between them. A loop round the next
    column's first name lies nearest the oval left of the rule; where the page's names stand on
    either side, that oval took it as its own (four clear no votes of the sixth renderer's seed
    9393 sent to a person). An upright rule between a target and a loop parts them; the loop's
    own option, right of it with no rule between, keeps it."""
    from scanpipe.imaging.marks_loops import LOOP_PPI, _owners, no_name_right

    blank = np.full((_px(3.0), _px(6.0)), 255, np.uint8)
    cv2.line(blank, (_px(2.8), _px(0.2)), (_px(2.8), _px(2.8)), 0, 2)  # the rule between the columns
    targets = [TargetDef("c", "left", (2.4, 0.925, 0.22, 0.15)), TargetDef("d", "right", (5.4, 0.925, 0.22, 0.15)),
               TargetDef("c", "free", (2.4, 1.925, 0.22, 0.15))]
    cv2.line(blank, (_px(2.8), _px(1.7)), (_px(2.8), _px(2.3)), 255, 4)  # the rule broken beside the third
    boxes = np.array([t.box_in for t in targets]) * LOOP_PPI
    loop = (int(2.9 * LOOP_PPI), int(0.85 * LOOP_PPI), int(1.4 * LOOP_PPI), int(0.3 * LOOP_PPI))  # round the next column's name
    rules = np.zeros((int(3.0 * LOOP_PPI), int(6.0 * LOOP_PPI)), bool)
    rules[int(0.2 * LOOP_PPI): int(2.8 * LOOP_PPI), int(2.8 * LOOP_PPI)] = True
    assert sorted(_owners(boxes, [0, 1], loop, "either")) == [0, 1]  # without the rule: both
    assert _owners(boxes, [0, 1], loop, "either", rules=rules) == [1]
    nameless = no_name_right(blank, float(DPI), targets, {}, 0.42)
    assert nameless.tolist() == [True, False, False], nameless
