"""Target boxes snapped to the targets the blank prints: a layout drawn loosely still reads.

The contract's target box is "the printed oval's bounding box". A layout written by hand, by
another program or from the vendor's PDF at another scale may draw it a few hundredths of an
inch off: a margin round every oval, a box a little small, all of them shifted. Scoring
measures the interior, the outline and the ring round the box the layout gives, so a loose
box read a vote's fill as a partial one and an empty oval's outline as ink in its ring.

What the blank prints is the authority: per target, the dark pieces of the blank near the box
(the box grown by :data:`SEARCH_IN`; pieces within a pixel joined, a dithered outline's gaps
bridged) that enclose paper (an outline, not a bar or a glyph) and whose bounding box overlaps the layout's (:data:`MIN_OVERLAP` of the union) and is of
its size within :data:`SIZE_RANGE`, the one overlapping most. A page's targets are printed
alike: where at least :data:`MIN_FOUND` of its targets found one, and those of the median size
(within :data:`SIZE_AGREE_IN`: a speck touching an outline makes it another size) are most of them, each such target takes its printed box, and every
other target (a stamp across it, a name printed touching it) is moved by the page's median
offset of each edge. An outline printed thicker than the reader's model of it
(:data:`scanpipe.imaging.marks.OUTLINE_IN`; a thresholded scan's flat ovals: the stroke is
the outline's width less its hole's) insets the boxes by half the difference, so the model's
outline lies on the middle of the printed stroke. A page whose targets print no such outlines is looked at for broken
arrows (a tail and a head with the target, the gap, between them: the pieces
:func:`scanpipe.imaging.targets.arrow_targets` pairs, the gap whose centre is in the box), the
same way: a layout that boxes the whole arrow, tail to head, reads its gap. A box within
:data:`KEEP_IN` of what the blank prints on every edge is kept exactly as the layout gives it
(a layout drawn from the blank reads as before, bit for bit). A target the blank prints as
neither keeps the layout's box.

Pure: the blank and the boxes in, boxes out.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

import cv2
import numpy as np

from scanpipe.imaging.marks import OUTLINE_IN
from scanpipe.imaging.reference import paper_level
from scanpipe.imaging.targets import arrow_targets
from scanpipe.types import Box, LayoutPage

SEARCH_IN = 0.1  # a box is looked for this far round the layout's
DARK = 0.4  # darkness (share of the paper level) that is print
SIZE_RANGE = (0.55, 1.8)  # a printed piece's width and height as a share of the layout box's
MIN_OVERLAP = 0.25  # intersection over union with the layout's box
MIN_FOUND = 0.5  # share of a page's targets that must find their printed box
SIZE_AGREE_IN = 0.005  # a found box's width and height within this of the page's median (a pixel at least): printed alike
MIN_HOLE = 0.1  # a target's outline encloses paper over this share of its bounding box
ARROW_REACH_IN = 0.6  # a broken arrow's tail and head are looked for this far left and right of its box
KEEP_IN = 0.011  # a printed box this close to the layout's on every edge (2 px at 200 dpi: a speck on the blank's outline, a layout tool's rounding): the layout's kept


def snap_boxes(gray: np.ndarray, dpi: float, boxes_in: Sequence[Box]) -> tuple[Box, ...]:
    """The boxes (inches on the blank ``gray`` at ``dpi``) snapped to what the blank prints."""
    boxes = tuple(boxes_in)
    if not boxes or gray.ndim != 2:
        return boxes
    printed = _printed(gray, dpi, boxes)
    found = [None if f is None else f[0] for f in printed]
    sizes = np.array([(f[2], f[3]) for f in found if f is not None])
    if len(sizes) < max(1, MIN_FOUND * len(boxes)):
        return boxes
    median = np.median(sizes, axis=0)
    agree = max(SIZE_AGREE_IN, 1.0 / dpi) + 1e-6
    alike = [f is not None and bool((np.abs(np.array(f[2:]) - median) <= agree).all()) for f in found]
    if sum(alike) < MIN_FOUND * len(boxes):
        return boxes
    # an outline printed thicker than the reader's model of it (a thresholded scan's): the box
    # inset so that the model's outline lies on the middle of the printed stroke
    strokes = np.array([f[1] for f, a in zip(printed, alike, strict=True) if a and f is not None])
    inset = np.maximum(0.0, (np.median(strokes, axis=0) - OUTLINE_IN) / 2)
    size = median - 2 * inset
    edges = np.array([_edges(f) - _edges(b) for f, b, a in zip(found, boxes, alike, strict=True) if a and f is not None])
    shift = np.median(edges, axis=0) + np.array([inset[0], inset[1], -inset[0], -inset[1]])
    out = []
    for box, f, a in zip(boxes, found, alike, strict=True):
        moved = _edges(box) + shift
        new = _centred(f, size) if a and f is not None else moved
        out.append(box if np.abs(new - _edges(box)).max() <= KEEP_IN else _box(new))
    return tuple(out)


def targets_printed(gray: np.ndarray, dpi: float, boxes_in: Sequence[Box]) -> tuple[bool, ...]:
    """Per box, whether the blank prints a target there (an outline of its size, or a broken
    arrow's gap): a layout drawn on another blank, or at another resolution, has few."""
    return tuple(f is not None for f in _printed(gray, dpi, boxes_in))


def _printed(gray: np.ndarray, dpi: float, boxes: Sequence[Box]) -> list[tuple[Box, tuple[float, float]] | None]:
    """Per box, the printed outline there and its stroke (:func:`_printed_box`); on a page
    where under :data:`MIN_FOUND` of the boxes find one and broken arrows are found at more,
    the arrows' gaps (no stroke) instead."""
    paper = paper_level(gray)
    outlines = [_printed_box(gray, dpi, box, paper) for box in boxes]
    found = sum(f is not None for f in outlines)
    if found >= max(1, MIN_FOUND * len(boxes)):
        return outlines
    arrows: list[tuple[Box, tuple[float, float]] | None] = [
        None if (g := _arrow_gap(gray, dpi, box)) is None else (g, (0.0, 0.0)) for box in boxes]
    return arrows if sum(a is not None for a in arrows) > found else outlines


def snapped_page(page: LayoutPage, gray: np.ndarray | None, dpi: float | None,
                 memo: dict[tuple[object, ...], object] | None = None) -> LayoutPage:
    """``page`` with its targets' boxes snapped to its blank (the same page where there is no
    blank or nothing moved); kept in ``memo`` (a page model's) once made."""
    if gray is None or dpi is None or not page.targets:
        return page
    key = ("snapped", page.targets)
    if memo is not None and key in memo:
        return memo[key]  # type: ignore[return-value]  # the memo holds what this function put there
    boxes = snap_boxes(gray, float(dpi), [t.box_in for t in page.targets])
    out = page
    if any(b != t.box_in for b, t in zip(boxes, page.targets, strict=True)):
        out = replace(page, targets=tuple(replace(t, box_in=b) for t, b in zip(page.targets, boxes, strict=True)))
    if memo is not None:
        memo[key] = out
    return out


def _printed_box(gray: np.ndarray, dpi: float, box: Box, paper: float) -> tuple[Box, tuple[float, float]] | None:
    """The printed outline's bounding box near ``box`` and its stroke across and down (inches)."""
    x, y, w, h = (v * dpi for v in box)
    m = SEARCH_IN * dpi
    r0, r1 = max(0, int(y - m)), min(gray.shape[0], int(np.ceil(y + h + m)))
    c0, c1 = max(0, int(x - m)), min(gray.shape[1], int(np.ceil(x + w + m)))
    if r1 - r0 < 3 or c1 - c0 < 3 or w <= 0 or h <= 0:
        return None
    dark = (gray[r0:r1, c0:c1] < (1.0 - DARK) * paper).astype(np.uint8)
    joined = cv2.dilate(dark, np.ones((3, 3), np.uint8))
    count, labels, stats, _ = cv2.connectedComponentsWithStats(joined, connectivity=8)
    best, best_iou = None, MIN_OVERLAP
    for k in range(1, count):
        jx, jy, jw, jh = (int(v) for v in stats[k, :4])
        if jx == 0 or jy == 0 or jx + jw == joined.shape[1] or jy + jh == joined.shape[0]:
            continue  # runs out of the search window: a rule, a stamp, a column of print
        bw, bh = jw - 2, jh - 2  # the dilation's pixel each side taken back
        if not (SIZE_RANGE[0] * w <= bw <= SIZE_RANGE[1] * w and SIZE_RANGE[0] * h <= bh <= SIZE_RANGE[1] * h):
            continue
        # pixel centres at integers (as the layout tools write boxes): the piece's first pixel
        # begins half a pixel before its index
        bx, by = c0 + jx + 1 - 0.5, r0 + jy + 1 - 0.5
        ix = min(bx + bw, x + w) - max(bx, x)
        iy = min(by + bh, y + h) - max(by, y)
        inter = max(0.0, ix) * max(0.0, iy)
        iou = inter / (bw * bh + w * h - inter)
        if iou > best_iou and (hole := _hole(labels[jy: jy + jh, jx: jx + jw] == k)) is not None:
            # the hole as printed: the joining took a pixel from each of its sides
            stroke = ((bw - hole[0] - 2) / 2 / dpi, (bh - hole[1] - 2) / 2 / dpi)
            best, best_iou = ((bx / dpi, by / dpi, bw / dpi, bh / dpi), stroke), iou
    return best


def _arrow_gap(gray: np.ndarray, dpi: float, box: Box) -> Box | None:
    """The gap of the broken arrow a box holds or lies in (:func:`scanpipe.imaging.targets.arrow_targets`,
    on the box grown by :data:`ARROW_REACH_IN` along the arrow and :data:`SEARCH_IN` across it):
    the gap whose centre is in the box, the nearest its centre, as high as the layout's box or
    the arrowhead, the lower. A layout may box the gap (the contract's target) or the whole
    arrow, tail to head."""
    x, y, w, h = (v * dpi for v in box)
    mx, my = ARROW_REACH_IN * dpi, SEARCH_IN * dpi
    r0, r1 = max(0, int(y - my)), min(gray.shape[0], int(np.ceil(y + h + my)))
    c0, c1 = max(0, int(x - mx)), min(gray.shape[1], int(np.ceil(x + w + mx)))
    if r1 - r0 < 3 or c1 - c0 < 3:
        return None
    best, best_distance = None, np.inf
    for arrow in arrow_targets(np.ascontiguousarray(gray[r0:r1, c0:c1]), dpi):
        ax, ay, aw, ah = arrow.box_px
        bx, by = c0 + ax - 0.5, r0 + ay - 0.5  # pixel centres at integers, as the layout tools write boxes
        cx, cy = bx + aw / 2, by + ah / 2
        distance = float(np.hypot(cx - (x + w / 2), cy - (y + h / 2)))
        if x <= cx <= x + w and y <= cy <= y + h and distance < best_distance:
            band = min(h, ah)  # how high a gap's box is is the layout's to say (the print ends at the bar)
            best, best_distance = (bx / dpi, (cy - band / 2) / dpi, aw / dpi, band / dpi), distance
    return best


def _hole(piece: np.ndarray) -> tuple[int, int] | None:
    """The width and height of the paper a piece of print encloses, where it is an outline
    (an oval, a box: the hole :data:`MIN_HOLE` of its bounding box or more); None for an
    arrow's tail or head, a glyph, a bar."""
    outside = np.pad(~piece, 1, constant_values=True).astype(np.uint8)
    count, labels = cv2.connectedComponents(outside, connectivity=4)
    hole = (labels > 0) & (labels != labels[0, 0])
    if np.count_nonzero(hole) < MIN_HOLE * piece.size:
        return None
    ys, xs = np.nonzero(hole)
    return int(xs.max() - xs.min() + 1), int(ys.max() - ys.min() + 1)


def _centred(found: Box, size: np.ndarray) -> np.ndarray:
    """The page's size of box about a printed box's centre (a pixel's rounding or a speck on
    one outline changes a single box's size, not where its target is)."""
    cx, cy = found[0] + found[2] / 2, found[1] + found[3] / 2
    return np.array([cx - size[0] / 2, cy - size[1] / 2, cx + size[0] / 2, cy + size[1] / 2])


def _edges(box: Box) -> np.ndarray:
    x, y, w, h = box
    return np.array([x, y, x + w, y + h])


def _box(edges: np.ndarray) -> Box:
    x0, y0, x1, y1 = (round(float(v), 4) for v in edges)
    return (x0, y0, round(x1 - x0, 4), round(y1 - y0, 4))
