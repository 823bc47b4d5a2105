"""A washed-out scan (:func:`scanpipe.imaging.page.print_restored`): a scanner set too bright
delivers the print gray and every mark as much lighter; the page's darkness is stretched about
its paper level so that its print shows as dark as on a good scan, marks in proportion. A good
scan, a blank page and coloured stock are left exactly as they came."""

from __future__ import annotations

import cv2
import numpy as np

from scanpipe.imaging.page import PRINT_DARKNESS, WASHED_OUT, as_scanned_well, print_darkness, print_restored

DPI = 200


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


def test_a_good_scan_a_blank_page_and_coloured_stock_are_left_as_they_came() -> None:
    good = _sheet()
    assert print_restored(good) is good
    blank = np.full((11 * DPI, int(8.5 * DPI)), 238, np.uint8)
    assert print_restored(blank) is blank
    tinted = (good.astype(np.float32) * 0.78).astype(np.uint8)  # a party's coloured paper: the print as black
    assert print_restored(tinted) is tinted
    assert as_scanned_well(good) is good


def test_a_washed_out_scan_shows_its_print_and_marks_as_dark_as_a_good_scan() -> None:
    good = _sheet()
    washed = _faded(good, 0.45)
    paper, darkness = print_darkness(washed)
    assert darkness < WASHED_OUT
    restored = print_restored(washed)
    _, after = print_darkness(restored)
    assert abs(after - PRINT_DARKNESS) < 0.02
    # the pencil fill's darkness against the paper, in proportion to the print's as on the good scan
    def fill(g: np.ndarray) -> float:
        level, _ = print_darkness(g)
        return 1.0 - float(g[1005:1035, 210:270].mean()) / level
    assert abs(fill(restored) / after - fill(good) / print_darkness(good)[1]) < 0.03
    assert fill(washed) < 0.6 * fill(good) and abs(fill(restored) - fill(good)) < 0.06
