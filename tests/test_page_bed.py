"""The page on the scanner's bed (:mod:`scanpipe.imaging.page`): a dark bed round a skewed
sheet is painted the paper's level; the page's own print, even at its edge, stays; an image
with no dark bed is returned as it is."""

from __future__ import annotations

import cv2
import numpy as np

from scanpipe.imaging.page import find_bed, without_bed

DPI = 200


def _sheet() -> np.ndarray:
    """A letter sheet at 200 dpi: paper 240, a column of timing marks 0.12 in from its left
    edge, a row along its top, a few lines of print."""
    sheet = np.full((11 * DPI, int(8.5 * DPI)), 240, np.uint8)
    for k in range(40):
        y = int((0.5 + 0.25 * k) * DPI)
        sheet[y: y + 10, 24: 24 + 40] = 10  # marks 0.2 x 0.05 in, 0.12 in from the edge
    for k in range(30):
        x = int((0.5 + 0.25 * k) * DPI)
        sheet[24: 24 + 40, x: x + 10] = 10
    for k in range(10):
        cv2.putText(sheet, "CANDIDATE NAME", (300, 400 + 150 * k), cv2.FONT_HERSHEY_SIMPLEX, 1.5, 20, 3)
    return sheet


def _on_bed(sheet: np.ndarray, angle: float, bed: int, margin: int = 60) -> np.ndarray:
    """The sheet turned ``angle`` degrees on a bed of level ``bed``, ``margin`` px larger all round."""
    h, w = sheet.shape
    turn = cv2.getRotationMatrix2D((w / 2, h / 2), angle, 1.0)
    turn[:, 2] += margin
    return cv2.warpAffine(sheet, turn, (w + 2 * margin, h + 2 * margin), flags=cv2.INTER_LINEAR, borderValue=bed)


def _mark_count(gray: np.ndarray) -> int:
    """The dark pieces of a timing mark's size and shape (0.2 x 0.05 in, turned a little)."""
    count, _labels, stats, _ = cv2.connectedComponentsWithStats((gray < 120).astype(np.uint8), connectivity=8)
    long, short = stats[1:, 2:4].max(axis=1), stats[1:, 2:4].min(axis=1)
    return int(np.count_nonzero((long >= 38) & (long <= 46) & (short >= 8) & (short <= 16)))


def test_a_dark_bed_round_a_skewed_sheet_is_painted_and_the_marks_at_its_edge_stay() -> None:
    sheet = _sheet()
    scan = _on_bed(sheet, 2.5, bed=35)
    bed = find_bed(scan)
    assert bed is not None and 0.03 < bed.share < 0.2
    painted = without_bed(scan)
    assert painted is not scan
    corners = [painted[:5, :5], painted[:5, -5:], painted[-5:, :5], painted[-5:, -5:]]
    assert all(int(c.min()) >= 200 for c in corners)  # the bed is paper now
    assert _mark_count(painted) == _mark_count(_on_bed(sheet, 2.5, bed=240)) == 70  # every mark kept, none merged or cut


def test_no_dark_bed_leaves_the_image_itself() -> None:
    sheet = _sheet()
    for image in (sheet, _on_bed(sheet, 2.0, bed=250), np.full((2200, 1700), 20, np.uint8)):
        assert find_bed(image) is None
        assert without_bed(image) is image


def test_print_a_scanner_cut_into_is_no_bed() -> None:
    """Timing marks cut by the image's edge (a scanner that cut the margin) and a printed
    corner block: the paper between them reaches the edge, the page fills the image."""
    sheet = _sheet()[:, 30:]  # the left column of marks cut through
    sheet[-60:, -60:] = 0  # a solid corner block at the cut corner
    assert find_bed(sheet) is None
    assert without_bed(sheet) is sheet


def test_a_blank_sheet_on_a_dark_bed_is_a_blank_page() -> None:
    """The bed's wedges are no print: a sheet with none reads as blank once they are painted."""
    from scanpipe.imaging.reference import printed_share
    from scanpipe.interpret import BLANK_PAGE_PRINTED

    scan = _on_bed(np.full((11 * DPI, int(8.5 * DPI)), 240, np.uint8), 2.5, bed=35)
    assert (printed_share(scan) or 0.0) > BLANK_PAGE_PRINTED  # the wedges counted as print
    assert (printed_share(without_bed(scan)) or 0.0) < BLANK_PAGE_PRINTED


def test_a_border_printed_round_the_page_leaves_its_margin_to_the_page_not_the_bed() -> None:
    """A Dominion-like sheet prints a frame round its content a tenth of an inch inside its
    edges; on a dark bed, scanned half a degree askew with its top and right cut off by the
    scanner (the sixth renderer's seed 5151: five such cards matched no blank), the paper
    outside the frame is cut from the paper inside it. It is still page: the bed on the other
    two sides is found and painted, the frame and the margin outside it stay."""
    sheet = _sheet()
    h, w = sheet.shape
    cv2.rectangle(sheet, (20, 20), (w - 21, h - 21), 0, 8)  # the frame, 0.1 in in, 0.04 in wide
    turn = cv2.getRotationMatrix2D((w / 2, h / 2), 0.5, 1.0)
    turn[:, 2] += (50, -30)  # the bed 0.25 in wide on the left and below, the top and right cut
    scan = cv2.warpAffine(sheet, turn, (w + 20, h + 10), flags=cv2.INTER_LINEAR, borderValue=30)
    bed = find_bed(scan)
    assert bed is not None and 0.01 < bed.share < 0.1
    painted = without_bed(scan)
    assert int(painted[-5:, :5].min()) >= 200 and int(painted[h // 2, :40].min()) >= 200  # the bed is paper now
    frame = np.count_nonzero(painted[h // 2, 60:120] < 60)
    assert frame >= 6 and frame == np.count_nonzero(scan[h // 2, 60:120] < 60)  # the frame kept as scanned
