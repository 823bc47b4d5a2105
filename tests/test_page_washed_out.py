"""A washed-out scan (:func:`scanpipe.imaging.page.print_restored`): a scanner set too bright
delivers the print gray and every mark as much lighter; where the election's blanks print dark,
the page's darkness is stretched about its paper level so that its print shows as dark as the
blanks', marks in proportion. A good scan, a blank page, coloured stock and a ballot printed in a
light ink (its blanks as light) are left exactly as they came."""

from __future__ import annotations

import cv2
import numpy as np

from scanpipe.imaging.page import WASHED_OUT, print_darkness, print_restored

DPI = 200
BLANKS = 0.95  # the election's blanks: their darkest print this dark


def _sheet(paper: int = 240, black: int = 12) -> np.ndarray:
    """A letter sheet: timing marks, a few lines of print, a pencil fill (darkness 0.5)."""
    sheet = np.full((11 * DPI, int(8.5 * DPI)), paper, np.uint8)
    for k in range(40):
        y = int((0.5 + 0.25 * k) * DPI)
        sheet[y: y + 10, 24: 24 + 40] = black
    for k in range(10):
        cv2.putText(sheet, "CANDIDATE NAME", (300, 400 + 150 * k), cv2.FONT_HERSHEY_SIMPLEX, 1.5, black, 3)
    sheet[1000:1040, 200:280] = paper // 2  # a pencil's fill
    return sheet


def _faded(gray: np.ndarray, keep: float) -> np.ndarray:
    """Every darkness kept at ``keep`` of itself (255 the white of the scanner)."""
    return (255.0 - (255.0 - gray.astype(np.float32)) * keep).astype(np.uint8)


def _fill(g: np.ndarray) -> float:
    """The pencil fill's darkness against the page's paper."""
    level, _ = print_darkness(g)
    return 1.0 - float(g[1005:1035, 210:270].mean()) / level


def test_a_good_scan_a_blank_page_and_coloured_stock_are_left_as_they_came() -> None:
    good = _sheet()
    assert print_restored(good, BLANKS) is good
    blank = np.full((11 * DPI, int(8.5 * DPI)), 238, np.uint8)
    assert print_restored(blank, BLANKS) is blank
    tinted = (good.astype(np.float32) * 0.78).astype(np.uint8)  # a party's coloured paper: the print as black
    assert print_restored(tinted, BLANKS) is tinted


def test_a_washed_out_scan_shows_its_print_and_marks_as_dark_as_its_blanks() -> None:
    good = _sheet()
    washed = _faded(good, 0.45)
    assert print_darkness(washed)[1] < WASHED_OUT
    restored = print_restored(washed, BLANKS)
    after = print_darkness(restored)[1]
    assert abs(after - BLANKS) < 0.02
    assert abs(_fill(restored) / after - _fill(good) / print_darkness(good)[1]) < 0.03  # in proportion to the print
    assert _fill(washed) < 0.6 * _fill(good) and abs(_fill(restored) - _fill(good)) < 0.06


def test_a_ballot_printed_in_a_light_ink_keeps_its_marks_as_the_voter_made_them() -> None:
    """Print and blanks alike light (a ballot in a light green or red ink, scanned gray): a
    stretch would darken a light pencil mark or an erasure's residue towards a vote. Nothing is
    stretched; nor without blanks to compare with."""
    light = _sheet(black=150)  # its darkest print 0.375 of the way to black
    assert print_darkness(light)[1] < WASHED_OUT
    assert print_restored(light, print_darkness(light)[1]) is light
    assert print_restored(light, None) is light
