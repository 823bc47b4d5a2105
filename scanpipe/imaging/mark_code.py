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

from dataclasses import dataclass

import cv2
import numpy as np

from scanpipe.imaging.reference import MARK_ROW_TOL_IN, MARK_SIDE_IN, PageModel, paper_level

WORK_DPI = 100.0  # the bands are compared at this resolution (area-reduced: a dithered mark is solid)
BAND_MARGIN_IN = 0.1  # an edge's band: its line, half the marks' longer side and this either side
ROW_MIN_MARKS = 2  # an edge line with fewer of the blank's marks is no row
MARK_SIZE_TOL = 0.35  # a mark: each side within this share of the blank's median mark ...
MARK_SIZE_PX = 1.5  # ... or this many working pixels ...
MARK_SOLIDITY = 0.7  # ... and at least this share of its box dark
DARK_SHARE = 0.5  # dark: under this share of the paper's level
MATCH_ALONG_IN = 0.08  # a card's mark answers a blank's within this along the row (a third of the closest pitch) ...
MATCH_ACROSS = 1.0  # ... and this many marks' sizes across it
GONE_DARK = 0.15  # a mark one lacks: at most this share dark where it stands on the other


@dataclass(frozen=True)
class _Edge:
    """One edge line of a blank's timing marks, as the blank shows it (learned once)."""

    name: str  # "the bottom row of timing marks"
    along: int  # index (0: x, 1: y) of the coordinate along the line; the other is across
    band: tuple[int, int, int, int]  # x0, y0, x1, y1: the band, blank pixels
    small: tuple[int, int]  # the band's size (w, h) in working pixels
    line_px: float  # the line across the band, working pixels
    mark: tuple[float, float]  # the marks' median size (w, h) on this line, working pixels
    marks: np.ndarray  # (n, 2) the blank's marks on the line, working pixels of the band
    dark: np.ndarray  # the blank's band, dark (uint8 0/1), working pixels


def code_mismatch(model: PageModel, upright: np.ndarray, model_to_card: np.ndarray, *,
                  card_paper: float | None = None) -> str | None:
    """Where the card's edge rows of timing marks differ from the blank's, else None.

    ``model_to_card``: 3x3, blank pixels to the card's (``upright``, gray) pixels. Per edge
    line of the blank's timing marks (its top and bottom rows, its left and right columns:
    the extreme lines of its marks, each holding ROW_MIN_MARKS marks or more), the marks in a
    band along it, on the blank and on the card sampled through ``model_to_card``: a card's
    mark on the line that answers none of the blank's (within MATCH_ALONG_IN along it and
    MATCH_ACROSS of a mark across) where the blank shows paper (GONE_DARK at most) is another
    code; so is a blank's mark where the card shows paper while it shows the blank's marks
    either side of it (a cut or torn edge takes a run of marks, a corner's). Where the other
    shows something dark but no mark (a mark run into a border line, smudged or merged),
    nothing is judged; nor are the parts of the band off the card's image."""
    edges = _edges_of(model)
    if not edges:
        return None
    paper = paper_level(upright) if card_paper is None else card_paper
    for edge in edges:
        found = _edge_mismatch(edge, model.dpi, upright, model_to_card, paper)
        if found is not None:
            return f"{edge.name}: {found}"
    return None


def _edges_of(model: PageModel) -> tuple[_Edge, ...]:
    """The blank's edge lines of timing marks as it shows them, learned the first time a card
    needs them (kept in the model's memo)."""
    key = ("code edges", WORK_DPI)
    found = model.memo.get(key)
    if found is None:
        found = _learn_edges(model)
        model.memo[key] = found
    return found  # type: ignore[return-value]  # the memo holds what this function put there


def _learn_edges(model: PageModel) -> tuple[_Edge, ...]:
    if model.mark_size_in is None or len(model.marks_in) < ROW_MIN_MARKS:
        return ()
    mw, mh = model.mark_size_in
    half = max(mw, mh) / 2 + BAND_MARGIN_IN  # an edge's marks may stand crosswise (bars)
    h, w = model.image.shape[:2]
    dpi = model.dpi
    step = max(1.0, dpi / WORK_DPI)
    px = dpi / step  # working pixels per inch
    paper = paper_level(model.image)
    out = []
    for across, names, thickness in ((1, ("the top row of timing marks", "the bottom row of timing marks"), mh),
                                     (0, ("the left column of timing marks", "the right column of timing marks"), mw)):
        coord = model.marks_in[:, across]
        for name, line_in in zip(names, (float(coord.min()), float(coord.max())), strict=True):
            if int(np.count_nonzero(np.abs(coord - line_in) <= thickness)) < ROW_MIN_MARKS:
                continue
            lo, hi = int(np.floor((line_in - half) * dpi)), int(np.ceil((line_in + half) * dpi))
            if across == 1:
                x0, y0, x1, y1 = 0, max(0, lo), w, min(h, hi)
            else:
                x0, y0, x1, y1 = max(0, lo), 0, min(w, hi), h
            if x1 - x0 < 2 or y1 - y0 < 2:
                continue
            small = (max(1, int(round((x1 - x0) / step))), max(1, int(round((y1 - y0) / step))))
            dark = _dark(cv2.resize(np.ascontiguousarray(model.image[y0:y1, x0:x1]), small, interpolation=cv2.INTER_AREA), paper)
            line_px = (line_in * dpi - (y0 if across == 1 else x0)) / step
            marks, mark = _edge_marks(dark, across, line_px, px)
            if len(marks) >= ROW_MIN_MARKS:
                for a in (marks, dark):
                    a.setflags(write=False)
                out.append(_Edge(name, 1 - across, (x0, y0, x1, y1), small, line_px, mark, marks, dark))
    return tuple(out)


def _edge_mismatch(edge: _Edge, dpi: float, upright: np.ndarray, model_to_card: np.ndarray, paper: float) -> str | None:
    x0, y0, x1, y1 = edge.band
    size = (x1 - x0, y1 - y0)
    sx, sy = size[0] / edge.small[0], size[1] / edge.small[1]  # band pixels per working pixel
    px = dpi / max(1.0, dpi / WORK_DPI)  # working pixels per inch
    a, c = edge.along, 1 - edge.along
    to_card = model_to_card @ np.array([[1.0, 0.0, x0], [0.0, 1.0, y0], [0.0, 0.0, 1.0]])
    card = _band_of_card(upright, to_card, size, edge.small)
    if card is None:
        return None  # the band is off the card's image
    card_dark = _dark(card, paper)
    mark = edge.mark
    card_marks = _marks(card_dark, mark)
    blank_marks, blank_dark = edge.marks, edge.dark
    tol_along, tol_across = MATCH_ALONG_IN * px, MATCH_ACROSS * mark[c] + MARK_SIZE_PX

    def answered(ps: np.ndarray, marks: np.ndarray) -> np.ndarray:
        """Per point of ``ps``, whether one of ``marks`` answers it."""
        if not len(ps) or not len(marks):
            return np.zeros(len(ps), bool)
        return ((np.abs(ps[:, None, a] - marks[None, :, a]) <= tol_along)
                & (np.abs(ps[:, None, c] - marks[None, :, c]) <= tol_across)).any(axis=1)

    def where(p: np.ndarray) -> str:
        x, y = ((p[0] + 0.5) * sx - 0.5 + x0) / dpi, ((p[1] + 0.5) * sy - 0.5 + y0) / dpi
        return f"({x:.2f} in, {y:.2f} in)"

    on_line = card_marks[np.abs(card_marks[:, c] - edge.line_px) <= tol_across] if len(card_marks) else card_marks
    for p in on_line[~answered(on_line, blank_marks)]:
        box = _box_round(p, mark, blank_dark.shape)
        if box is not None and float(blank_dark[box[0][0]:box[0][1], box[1][0]:box[1][1]].mean()) <= GONE_DARK:
            return f"the card shows a mark at {where(p)} where the blank has paper"
    shown = answered(blank_marks, card_marks)
    order = np.argsort(blank_marks[:, a])
    for at in range(1, len(order) - 1):
        k = order[at]
        if shown[k] or not (shown[order[at - 1]] and shown[order[at + 1]]):
            continue
        box = _box_round(blank_marks[k], mark, card_dark.shape)
        if box is None:
            continue
        (r0, r1), (q0, q1) = box
        if _on_card(to_card, (q0, r0, q1, r1), (sx, sy), upright.shape[:2]) and float(card_dark[r0:r1, q0:q1].mean()) <= GONE_DARK:
            return f"the card lacks the blank's mark at {where(blank_marks[k])}"
    return None


def _band_of_card(upright: np.ndarray, to_card: np.ndarray, size: tuple[int, int], small: tuple[int, int]) -> np.ndarray | None:
    """The card's pixels under a band (``size`` band pixels, ``to_card`` band pixels to the
    card's), area-reduced to ``small``: the card's bounding box of the band reduced first, then
    warped at the working resolution (a fraction of warping the band whole). None when the
    band lies off the card's image."""
    w, h = size
    corners = np.array([[[-0.5, -0.5], [w - 0.5, -0.5], [w - 0.5, h - 0.5], [-0.5, h - 0.5]]], np.float64)
    u, v = cv2.perspectiveTransform(corners, to_card)[0].T
    ch, cw = upright.shape[:2]
    cx0, cy0 = max(0, int(np.floor(u.min())) - 2), max(0, int(np.floor(v.min())) - 2)
    cx1, cy1 = min(cw, int(np.ceil(u.max())) + 3), min(ch, int(np.ceil(v.max())) + 3)
    if cx1 - cx0 < 2 or cy1 - cy0 < 2:
        return None
    sx, sy = w / small[0], h / small[1]  # band pixels per working pixel
    rw, rh = max(1, int(round((cx1 - cx0) / sx))), max(1, int(round((cy1 - cy0) / sy)))
    reduced = cv2.resize(np.ascontiguousarray(upright[cy0:cy1, cx0:cx1]), (rw, rh), interpolation=cv2.INTER_AREA)
    fx, fy = (cx1 - cx0) / rw, (cy1 - cy0) / rh  # card pixels per reduced pixel
    work_to_band = np.array([[sx, 0.0, 0.5 * sx - 0.5], [0.0, sy, 0.5 * sy - 0.5], [0.0, 0.0, 1.0]])
    card_to_reduced = np.array([[1 / fx, 0.0, (0.5 - cx0) / fx - 0.5], [0.0, 1 / fy, (0.5 - cy0) / fy - 0.5], [0.0, 0.0, 1.0]])
    return cv2.warpPerspective(reduced, card_to_reduced @ to_card @ work_to_band, small,
                               flags=cv2.INTER_LINEAR | cv2.WARP_INVERSE_MAP, borderMode=cv2.BORDER_REPLICATE)


def _on_card(to_card: np.ndarray, box: tuple[int, int, int, int], scale: tuple[float, float], shape: tuple[int, ...]) -> bool:
    """Whether a box of working pixels (x0, y0, x1, y1) of a band falls wholly on the card's
    image (``scale``: band pixels per working pixel, each way; ``to_card``: band pixels to the card's)."""
    sx, sy = scale
    x0, y0, x1, y1 = box[0] * sx - 0.5, box[1] * sy - 0.5, box[2] * sx - 0.5, box[3] * sy - 0.5
    corners = np.array([[[x0, y0], [x1, y0], [x1, y1], [x0, y1]]], np.float64)
    u, v = cv2.perspectiveTransform(corners, to_card)[0].T
    return bool(np.all((u >= 0) & (v >= 0) & (u <= shape[1] - 1) & (v <= shape[0] - 1)))


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
    """``(n, 2)`` centres (x, y, working pixels) of the solid pieces of about ``mark``'s size (w, h)
    that the band holds whole (a piece it cuts, the scanner's bed at a page's corner, is none)."""
    count, _labels, stats, centroids = cv2.connectedComponentsWithStats(dark, connectivity=8)
    if count <= 1:
        return np.zeros((0, 2))
    x, y = stats[1:, cv2.CC_STAT_LEFT], stats[1:, cv2.CC_STAT_TOP]
    w, h, area = stats[1:, cv2.CC_STAT_WIDTH], stats[1:, cv2.CC_STAT_HEIGHT], stats[1:, cv2.CC_STAT_AREA]
    mw, mh = mark
    inside = (x > 0) & (y > 0) & (x + w < dark.shape[1]) & (y + h < dark.shape[0])  # a piece the band cuts is no whole mark
    ok = ((np.abs(w - mw) <= MARK_SIZE_TOL * mw + MARK_SIZE_PX) & (np.abs(h - mh) <= MARK_SIZE_TOL * mh + MARK_SIZE_PX)
          & (area >= MARK_SOLIDITY * w * h) & inside)
    return centroids[1:][ok].astype(np.float64)
