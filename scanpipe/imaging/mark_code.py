"""Whether a card carries its blank's code of timing marks.

Many vendors encode the ballot style in a row of the frame's timing marks (ES&S: the bottom
row, a mark or a gap per bit between a start and a stop mark). Two styles may print the same
contests and differ only there and in a small precinct number: the print cannot tell a card of
a style the election lacks from its neighbour. The code can: a card read as a blank's style
must show, in each edge row and column of the blank's frame, a mark where the blank has one and
none where the blank has none.

Nothing here is learned from a layout field: the edges' rows are those of the blank's timing
marks (:attr:`~scanpipe.imaging.reference.PageModel.marks_in`), and the marks in a band along
each are found the same way on the blank and on the card (solid pieces of the blank's mark
size), the card's band sampled through the card's registration to the blank. What a scanner
cuts off is not judged, and a mark the card lacks counts only where it shows the marks either
side of it (a dog-eared, torn or cut corner takes a run of marks; another code differs in a bit).

Pure: arrays and values in, a reason or None out.
"""

from __future__ import annotations

import cv2
import numpy as np

from scanpipe.imaging.reference import MARK_ROW_TOL_IN, MARK_SIDE_IN, PageModel, paper_level

WORK_DPI = 100.0  # the bands are compared at this resolution (area-reduced: a dithered mark is solid)
BAND_MARKS = 1.5  # an edge row's band: its line, this many marks' heights (columns: widths) either side
ROW_MIN_MARKS = 2  # an edge line with fewer of the blank's marks is no row
MARK_SIZE_TOL = 0.35  # a mark: each side within this share of the blank's median mark ...
MARK_SIZE_PX = 1.5  # ... or this many working pixels ...
MARK_SOLIDITY = 0.7  # ... and at least this share of its box dark
DARK_SHARE = 0.5  # dark: under this share of the paper's level
MATCH_ALONG_IN = 0.08  # a card's mark answers a blank's within this along the row (a third of the closest pitch) ...
MATCH_ACROSS = 1.0  # ... and this many marks' sizes across it
GONE_DARK = 0.15  # a mark one lacks: at most this share dark where it stands on the other


def code_mismatch(model: PageModel, upright: np.ndarray, model_to_card: np.ndarray, *,
                  card_paper: float | None = None) -> str | None:
    """Where the card's edge rows of timing marks differ from the blank's, else None.

    ``model_to_card``: 3x3, blank pixels to the card's (``upright``, gray) pixels. Per edge of
    the blank's timing marks (its top and bottom rows, its left and right columns, each with
    ROW_MIN_MARKS marks or more), the marks in a band BAND_MARKS of a mark's thickness either
    side of the line, on the blank and on the card sampled through ``model_to_card``: a card's
    mark that answers none of the blank's (within MATCH_ALONG and MATCH_ACROSS) is another code;
    so is a blank's mark where the card shows paper (GONE_DARK at most) while it shows the
    blank's marks either side of it (a cut or torn edge takes a run of marks, a corner's). Where the other shows something dark but no mark (a mark
    run into a border line, smudged or merged), nothing is judged. Parts of the band off the card's image are not judged."""
    if model.mark_size_in is None or len(model.marks_in) < ROW_MIN_MARKS:
        return None
    paper = paper_level(upright) if card_paper is None else card_paper
    blank_paper = _blank_paper(model)
    for axis, side, line in _edges(model):
        found = _edge_mismatch(model, upright, model_to_card, axis, line, paper, blank_paper)
        if found is not None:
            return f"{side}: {found}"
    return None


def _blank_paper(model: PageModel) -> float:
    key = ("paper",)
    found = model.memo.get(key)
    if found is None:
        found = paper_level(model.image)
        model.memo[key] = found
    return float(found)  # type: ignore[arg-type]  # the memo holds what this function put there


def _edges(model: PageModel) -> list[tuple[int, str, float]]:
    """The blank's edge rows (axis 1: a row at y) and columns (axis 0: a column at x) of timing
    marks, inches: the extreme lines of its marks holding ROW_MIN_MARKS or more."""
    assert model.mark_size_in is not None
    mw, mh = model.mark_size_in
    out = []
    for axis, names, thickness in ((1, ("the top row of timing marks", "the bottom row of timing marks"), mh),
                                   (0, ("the left column of timing marks", "the right column of timing marks"), mw)):
        coord = model.marks_in[:, axis]
        for name, line in zip(names, (float(coord.min()), float(coord.max())), strict=True):
            if int(np.count_nonzero(np.abs(coord - line) <= thickness)) >= ROW_MIN_MARKS:
                out.append((axis, name, line))
    return out


def _edge_mismatch(model: PageModel, upright: np.ndarray, model_to_card: np.ndarray, axis: int, line_in: float,
                   paper: float, blank_paper: float) -> str | None:
    assert model.mark_size_in is not None
    half = BAND_MARKS * max(model.mark_size_in) + max(model.mark_size_in) / 2  # an edge's marks may stand crosswise (bars)
    h, w = model.image.shape[:2]
    dpi = model.dpi
    # the band in blank pixels: [x0, x1) x [y0, y1)
    if axis == 1:
        x0, x1 = 0, w
        y0, y1 = max(0, int(np.floor((line_in - half) * dpi))), min(h, int(np.ceil((line_in + half) * dpi)))
    else:
        y0, y1 = 0, h
        x0, x1 = max(0, int(np.floor((line_in - half) * dpi))), min(w, int(np.ceil((line_in + half) * dpi)))
    if x1 - x0 < 2 or y1 - y0 < 2:
        return None
    size = (x1 - x0, y1 - y0)
    step = max(1.0, dpi / WORK_DPI)
    small = (max(1, int(round(size[0] / step))), max(1, int(round(size[1] / step))))
    px = dpi / step  # working pixels per inch
    a, c = (0, 1) if axis == 1 else (1, 0)  # the coordinate along the line, and across it
    line_px = (line_in * dpi - (y0 if axis == 1 else x0)) / step  # the line, working pixels of the band
    blank_dark = _dark(cv2.resize(np.ascontiguousarray(model.image[y0:y1, x0:x1]), small, interpolation=cv2.INTER_AREA),
                       blank_paper)
    blank_marks, mark = _edge_marks(blank_dark, c, line_px, px)
    if len(blank_marks) < ROW_MIN_MARKS:
        return None
    to_card = model_to_card @ np.array([[1.0, 0.0, x0], [0.0, 1.0, y0], [0.0, 0.0, 1.0]])
    card = cv2.warpPerspective(upright, to_card, size, flags=cv2.INTER_LINEAR | cv2.WARP_INVERSE_MAP,
                               borderMode=cv2.BORDER_REPLICATE)
    scanned = cv2.warpPerspective(np.ones(upright.shape[:2], np.uint8), to_card, size,
                                  flags=cv2.INTER_NEAREST | cv2.WARP_INVERSE_MAP, borderValue=0)
    card_dark = _dark(cv2.resize(card, small, interpolation=cv2.INTER_AREA), paper)
    on_card = cv2.resize(scanned, small, interpolation=cv2.INTER_AREA) >= 1  # wholly scanned working pixels
    card_marks = _marks(card_dark, mark)
    tol_along, tol_across = MATCH_ALONG_IN * px, MATCH_ACROSS * mark[c] + MARK_SIZE_PX

    def answers(p: np.ndarray, marks: np.ndarray) -> bool:
        return bool(len(marks)) and bool(np.any((np.abs(marks[:, a] - p[a]) <= tol_along)
                                                & (np.abs(marks[:, c] - p[c]) <= tol_across)))

    def where(p: np.ndarray) -> str:
        x, y = (p[0] * step + x0) / dpi, (p[1] * step + y0) / dpi
        return f"({x:.2f} in, {y:.2f} in)"

    for p in card_marks:
        if abs(p[c] - line_px) > tol_across or answers(p, blank_marks):
            continue
        box = _box_round(p, mark, blank_dark.shape)
        if box is not None and float(blank_dark[box[0][0]:box[0][1], box[1][0]:box[1][1]].mean()) <= GONE_DARK:
            return f"the card shows a mark at {where(p)} where the blank has paper"
    shown = np.array([answers(p, card_marks) for p in blank_marks], bool)
    for k, p in enumerate(blank_marks):
        if shown[k]:
            continue
        box = _box_round(p, mark, card_dark.shape)
        if box is None:
            continue
        (r0, r1), (q0, q1) = box
        if not on_card[r0:r1, q0:q1].all() or float(card_dark[r0:r1, q0:q1].mean()) > GONE_DARK:
            continue  # off the scan, or something dark there (a smudged or merged mark): not judged
        order = np.argsort(blank_marks[:, a])
        at = int(np.flatnonzero(order == k)[0])
        if 0 < at < len(order) - 1 and shown[order[at - 1]] and shown[order[at + 1]]:
            return f"the card lacks the blank's mark at {where(p)}"
    return None


def _edge_marks(dark: np.ndarray, across: int, line_px: float, px: float) -> tuple[np.ndarray, tuple[float, float]]:
    """The blank's marks on an edge line (``across``: the index of the coordinate across it;
    ``line_px`` its place): the solid pieces of MARK_SIDE_IN's sizes centred within
    MARK_ROW_TOL_IN of the line, of about their median size; their centres and that size."""
    count, _labels, stats, centroids = cv2.connectedComponentsWithStats(dark, connectivity=8)
    none = (np.zeros((0, 2)), (0.0, 0.0))
    if count <= 1:
        return none
    w, h, area = stats[1:, cv2.CC_STAT_WIDTH], stats[1:, cv2.CC_STAT_HEIGHT], stats[1:, cv2.CC_STAT_AREA]
    lo, hi = MARK_SIDE_IN[0] * px, MARK_SIDE_IN[1] * px
    on_line = ((w >= lo) & (h >= lo) & (w <= hi) & (h <= hi) & (area >= MARK_SOLIDITY * w * h)
               & (np.abs(centroids[1:, across] - line_px) <= MARK_ROW_TOL_IN * px))
    if not on_line.any():
        return none
    mark = (float(np.median(w[on_line])), float(np.median(h[on_line])))
    return _marks(dark, mark), mark


def _box_round(p: np.ndarray, mark: tuple[float, float], shape: tuple[int, ...]) -> tuple[tuple[int, int], tuple[int, int]] | None:
    """Rows and columns (working pixels) of a blank mark's box centred on ``p``."""
    w, h = mark
    r0, r1 = int(round(p[1] - h / 2)), int(round(p[1] + h / 2))
    q0, q1 = int(round(p[0] - w / 2)), int(round(p[0] + w / 2))
    r0, q0 = max(0, r0), max(0, q0)
    r1, q1 = min(shape[0], max(r1, r0 + 1)), min(shape[1], max(q1, q0 + 1))
    return None if r1 <= r0 or q1 <= q0 else ((r0, r1), (q0, q1))


def _dark(gray: np.ndarray, paper: float) -> np.ndarray:
    return (gray.astype(np.float32) < DARK_SHARE * paper).astype(np.uint8)


def _marks(dark: np.ndarray, mark: tuple[float, float]) -> np.ndarray:
    """``(n, 2)`` centres (x, y, working pixels) of the solid pieces of about ``mark``'s size (w, h)."""
    count, _labels, stats, centroids = cv2.connectedComponentsWithStats(dark, connectivity=8)
    if count <= 1:
        return np.zeros((0, 2))
    w, h, area = stats[1:, cv2.CC_STAT_WIDTH], stats[1:, cv2.CC_STAT_HEIGHT], stats[1:, cv2.CC_STAT_AREA]
    mw, mh = mark
    ok = ((np.abs(w - mw) <= MARK_SIZE_TOL * mw + MARK_SIZE_PX) & (np.abs(h - mh) <= MARK_SIZE_TOL * mh + MARK_SIZE_PX)
          & (area >= MARK_SOLIDITY * w * h))
    return centroids[1:][ok].astype(np.float64)
