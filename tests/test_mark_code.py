"""The code a frame's edge rows of timing marks carry (issue 8, bad input: a card of a style
the election lacks). An ES&S-like blank drawn here: timing dashes down both sides, a bottom row
of bars between a start and a stop bar, a bar or a gap per bit."""

from __future__ import annotations

import cv2
import numpy as np
import pytest

from scanpipe.imaging.mark_code import code_mismatch
from scanpipe.imaging.reference import PageModel, learn_page

DPI = 200.0
W_IN, H_IN = 8.5, 11.0
PITCH_IN = 0.25
BITS = (1, 0, 1, 1, 0, 0, 1, 0, 1, 1, 1, 0, 0, 1, 0, 1, 0, 0, 1, 1, 0, 1, 0, 1)  # between the start and stop bars


def _px(v: float) -> int:
    return int(round(v * DPI))


def _sheet(bits: tuple[int, ...] = BITS) -> np.ndarray:
    """A letter blank at 200 dpi: side dashes (0.24 x 0.07 in) every quarter inch, some print,
    and a bottom row of 0.08 x 0.23 in bars at 0.75 in, then one per bit, then a stop bar."""
    page = np.full((_px(H_IN), _px(W_IN)), 245, np.uint8)
    for y in np.arange(0.5, H_IN - 0.6, PITCH_IN):
        for x in (0.28, W_IN - 0.28):
            page[_px(y - 0.035): _px(y + 0.035), _px(x - 0.12): _px(x + 0.12)] = 15
    row = (1, *bits, 1)
    for k, bit in enumerate(row):
        if bit:
            x = 0.75 + k * PITCH_IN
            page[_px(10.49 - 0.115): _px(10.49 + 0.115), _px(x - 0.04): _px(x + 0.04)] = 15
    for line in range(12):
        cv2.putText(page, f"CONTEST {line} - CANDIDATE NAME", (_px(1.2), _px(1.2 + 0.6 * line)), cv2.FONT_HERSHEY_SIMPLEX,
                    1.0, 20, 2, cv2.LINE_AA)
    return page


@pytest.fixture(scope="module")
def blank() -> PageModel:
    return learn_page("EC-1", 1, _sheet(), DPI)


def _card(bits: tuple[int, ...] = BITS, *, angle: float = 1.2) -> tuple[np.ndarray, np.ndarray]:
    """A card of ``bits`` turned ``angle`` degrees and shifted on a larger scan, and the blank
    to card matrix."""
    sheet = _sheet(bits)
    h, w = sheet.shape
    turn = np.vstack([cv2.getRotationMatrix2D((w / 2, h / 2), angle, 1.0), [0, 0, 1]])
    turn[0, 2] += 30
    turn[1, 2] += 20
    card = cv2.warpPerspective(sheet, turn, (w + 60, h + 40), flags=cv2.INTER_LINEAR, borderValue=245)
    return card, turn


def test_a_card_of_the_blanks_own_code_shows_no_difference(blank: PageModel) -> None:
    card, to_card = _card()
    assert code_mismatch(blank, card, to_card) is None


def test_a_bar_where_the_blank_has_none_is_another_code(blank: PageModel) -> None:
    bits = list(BITS)
    bits[4] = 1
    card, to_card = _card(tuple(bits))
    found = code_mismatch(blank, card, to_card)
    assert found is not None and "bottom row" in found and "shows a mark at (2.00 in, 10.4" in found


def test_a_bar_missing_between_two_the_card_shows_is_another_code(blank: PageModel) -> None:
    bits = list(BITS)
    bits[10] = 0  # between bars at 3.25 and 3.75 in
    card, to_card = _card(tuple(bits))
    found = code_mismatch(blank, card, to_card)
    assert found is not None and "lacks the blank's mark at (3.50 in, 10.4" in found


def test_a_cut_corner_takes_marks_but_is_no_other_code(blank: PageModel) -> None:
    """A torn or cut corner (paper-white) takes the stop bar, the last bits and the side
    dashes near it: no mark the card lacks stands between two it shows."""
    card, to_card = _card()
    corner = cv2.perspectiveTransform(np.array([[[W_IN * DPI - 1.1 * DPI, H_IN * DPI - 0.8 * DPI]]]), to_card)[0, 0]
    card[int(corner[1]):, int(corner[0]):] = 245
    assert code_mismatch(blank, card, to_card) is None


def test_what_the_scan_cut_off_is_not_judged(blank: PageModel) -> None:
    card, to_card = _card()
    bottom = cv2.perspectiveTransform(np.array([[[0.0, 10.3 * DPI]]]), to_card)[0, 0, 1]
    assert code_mismatch(blank, np.ascontiguousarray(card[: int(bottom)]), to_card) is None


def test_a_mark_run_into_a_dark_border_on_one_side_is_not_judged() -> None:
    """The blank's left dashes run into a dark line at the page's edge (the scanner's): they
    are no marks there, while the card shows them; nothing is judged where one shows dark."""
    sheet = _sheet()
    sheet[:, _px(0.14): _px(0.17)] = 15
    model = learn_page("EC-1", 1, sheet, DPI)
    card, to_card = _card()
    assert code_mismatch(model, card, to_card) is None


def test_a_pen_stroke_along_the_row_is_no_mark(blank: PageModel) -> None:
    card, to_card = _card()
    start = cv2.perspectiveTransform(np.array([[[1.9 * DPI, 10.45 * DPI], [2.6 * DPI, 10.55 * DPI]]]), to_card)[0]
    cv2.line(card, tuple(int(v) for v in start[0]), tuple(int(v) for v in start[1]), 30, 3)
    assert code_mismatch(blank, card, to_card) is None
