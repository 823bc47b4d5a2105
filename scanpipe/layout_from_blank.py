"""Calibration: a card layout (contract section 3) from a scan of a blank card.

The empty ovals are found as ring-shaped contours (an outer outline holding a large paper
hole) of plausible target size and a wide aspect (so the letter O and digits 0 are not
taken), then put in reading order: columns left to right (a new column starts where the
ovals' centres jump by more than :data:`COLUMN_GAP_IN`), top to bottom within a column.
They are assigned, in that order, to the options of the contests given in reading order.
Our corner fiducials (solid squares) and the QR code are recorded when present.

Pure: the caller reads the image and writes the JSON.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import cv2
import numpy as np
import zxingcpp

from scanpipe.errors import ConfigError

OVAL_WIDTH_IN = (0.12, 0.45)
OVAL_HEIGHT_IN = (0.07, 0.30)
OVAL_ASPECT = (1.2, 2.6)
COLUMN_GAP_IN = 0.5
FIDUCIAL_SIDE_IN = (0.12, 0.6)
CORNER_WINDOW_IN = 1.5


def layout_from_blank(
    blank: np.ndarray,
    dpi: float,
    *,
    style: str,
    page: int,
    contests_in_reading_order: Sequence[tuple[str, Sequence[str]]],
    size_in: tuple[float, float] | None = None,
    reference_path: str | None = None,
) -> dict[str, Any]:
    """Build ``{"style": ..., "pages": [...]}`` for one page from a blank scan.

    Raises
    ------
    ConfigError
        when the ovals found are not as many as the options given, or when the page has
        neither fiducials nor a reference.
    """
    ovals = find_ovals(blank, dpi)
    options = [(contest, option) for contest, opts in contests_in_reading_order for option in opts]
    if len(ovals) != len(options):
        raise ConfigError(
            f"style {style} page {page}: found {len(ovals)} ovals on the blank scan but the "
            f"contests list {len(options)} options"
        )
    fiducials = find_fiducials(blank, dpi)
    if fiducials is None and reference_path is None:
        raise ConfigError(
            f"style {style} page {page}: no corner fiducials were found on the blank scan; "
            "give the scan as the page's reference"
        )
    height, width = blank.shape[:2]
    page_dict: dict[str, Any] = {
        "page": page,
        "size": list(size_in) if size_in else [round(width / dpi, 2), round(height / dpi, 2)],
    }
    if fiducials is not None:
        page_dict["fiducials"] = [list(b) for b in fiducials]
    qr = find_qr_box(blank, dpi)
    if qr is not None:
        page_dict["qr"] = list(qr)
    if reference_path is not None:
        page_dict["reference"] = reference_path
        page_dict["reference_dpi"] = float(dpi)
    page_dict["targets"] = [
        {"contest": contest, "option": option, "box": list(box)} for (contest, option), box in zip(options, ovals)
    ]
    return {"style": style, "pages": [page_dict]}


def _to_inches(x: float, y: float, w: float, h: float, dpi: float) -> tuple[float, float, float, float]:
    """Pixel rectangle (pixel centres at integers) -> inch box, rounded to 0.001 in."""
    return (
        round((x - 0.5) / dpi, 3),
        round((y - 0.5) / dpi, 3),
        round(w / dpi, 3),
        round(h / dpi, 3),
    )


def _ink(gray: np.ndarray) -> np.ndarray:
    _, ink = cv2.threshold(gray, 0, 255, cv2.THRESH_BINARY_INV | cv2.THRESH_OTSU)
    return ink


def find_ovals(gray: np.ndarray, dpi: float) -> list[tuple[float, float, float, float]]:
    """Empty oval targets as inch boxes, in reading order."""
    contours, hierarchy = cv2.findContours(_ink(gray), cv2.RETR_CCOMP, cv2.CHAIN_APPROX_NONE)
    if hierarchy is None:
        return []
    rects: list[tuple[int, int, int, int]] = []
    for index, contour in enumerate(contours):
        parent, child = hierarchy[0][index][3], hierarchy[0][index][2]
        if parent != -1 or child == -1:
            continue  # holes and solid blobs are not oval outlines
        if _is_oval(contour, contours[child], dpi):
            x, y, w, h = cv2.boundingRect(contour)
            rects.append((x, y, w, h))
    return [_to_inches(*r, dpi) for r in _reading_order(rects, dpi)]


def _is_oval(outer: np.ndarray, hole: np.ndarray, dpi: float) -> bool:
    x, y, w, h = cv2.boundingRect(outer)
    if not (OVAL_WIDTH_IN[0] * dpi <= w <= OVAL_WIDTH_IN[1] * dpi and OVAL_HEIGHT_IN[0] * dpi <= h <= OVAL_HEIGHT_IN[1] * dpi):
        return False
    if not OVAL_ASPECT[0] <= w / h <= OVAL_ASPECT[1] or len(outer) < 5:
        return False
    ellipse_area = np.pi * w * h / 4.0
    outer_area = cv2.contourArea(outer)
    return bool(0.85 <= outer_area / ellipse_area <= 1.12 and cv2.contourArea(hole) >= 0.35 * outer_area)


def _reading_order(rects: list[tuple[int, int, int, int]], dpi: float) -> list[tuple[int, int, int, int]]:
    """Columns left to right, then top to bottom within each column."""
    by_x = sorted(rects, key=lambda r: r[0] + r[2] / 2)
    columns: list[list[tuple[int, int, int, int]]] = []
    for rect in by_x:
        centre = rect[0] + rect[2] / 2
        if columns and centre - (columns[-1][-1][0] + columns[-1][-1][2] / 2) <= COLUMN_GAP_IN * dpi:
            columns[-1].append(rect)
        else:
            columns.append([rect])
    return [rect for column in columns for rect in sorted(column, key=lambda r: r[1])]


def find_fiducials(gray: np.ndarray, dpi: float) -> tuple[tuple[float, float, float, float], ...] | None:
    """The four corner squares (TL, TR, BL, BR) as inch boxes, or None unless all four."""
    height, width = gray.shape[:2]
    win = int(CORNER_WINDOW_IN * dpi)
    origins = ((0, 0), (max(0, width - win), 0), (0, max(0, height - win)), (max(0, width - win), max(0, height - win)))
    corners = ((0, 0), (width, 0), (0, height), (width, height))
    boxes = []
    for (x0, y0), corner in zip(origins, corners):
        rect = _corner_square(gray[y0 : y0 + win, x0 : x0 + win], dpi, (corner[0] - x0, corner[1] - y0))
        if rect is None:
            return None
        boxes.append(_to_inches(rect[0] + x0, rect[1] + y0, rect[2], rect[3], dpi))
    return tuple(boxes)


def _corner_square(window: np.ndarray, dpi: float, corner: tuple[int, int]) -> tuple[int, int, int, int] | None:
    contours, _ = cv2.findContours(_ink(window), cv2.RETR_EXTERNAL, cv2.CHAIN_APPROX_SIMPLE)
    best, best_distance = None, np.inf
    for contour in contours:
        x, y, w, h = cv2.boundingRect(contour)
        side_ok = all(FIDUCIAL_SIDE_IN[0] * dpi <= s <= FIDUCIAL_SIDE_IN[1] * dpi for s in (w, h))
        if not side_ok or max(w, h) / min(w, h) > 1.15 or cv2.contourArea(contour) < 0.9 * w * h:
            continue
        distance = float(np.hypot(x + w / 2 - corner[0], y + h / 2 - corner[1]))
        if distance < best_distance:
            best, best_distance = (x, y, w, h), distance
    return best


def find_qr_box(gray: np.ndarray, dpi: float) -> tuple[float, float, float, float] | None:
    """The QR symbol's box (without quiet zone) in inches, or None."""
    results = zxingcpp.read_barcodes(gray, formats=zxingcpp.BarcodeFormat.QRCode)  # type: ignore[arg-type]  # stubs omit the implicit conversion to BarcodeFormats
    if not results:
        return None
    p = results[0].position
    xs = [c.x for c in (p.top_left, p.top_right, p.bottom_right, p.bottom_left)]
    ys = [c.y for c in (p.top_left, p.top_right, p.bottom_right, p.bottom_left)]
    return _to_inches(min(xs), min(ys), max(xs) - min(xs) + 1, max(ys) - min(ys) + 1, dpi)
