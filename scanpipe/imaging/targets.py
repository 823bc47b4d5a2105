"""Find the empty voting targets printed on a blank ballot page: ovals, boxes and arrows.

Pure: a grayscale page and its resolution in, frozen values in pixels out.

**Ovals and boxes** (any vendor's: ellipses, rounded "stadium" ovals, squares, rectangles)
are found from their *holes*: the paper enclosed by the printed outline. A hole is kept
when

1. its size fits :data:`LIMITS` (after adding back the outline's stroke);
2. it is the only hole of its size in its outline (a B's two bowls are a glyph); its shape
   is convex (hole area over convex hull area), and its fill of its bounding
   box says what it is: a rectangle fills nearly all of it, an ellipse about pi/4, a
   rounded oval between;
3. it is empty (a QR code's finder square holds a core: not a target), and the outline
   around it is thin and closed (the mask is read as it is and with gaps of
   a pixel closed, which a light scan leaves in an outline): walking outwards from the hole, the first
   rings are ink, and the ring just outside the stroke is nearly all paper, so a glyph's
   hole (the bowls of ``B``, ``O``, ``D``; thick strokes, neighbours close by) is not taken;
   a printed line that touches an outline (a write-in rule) crosses that outer ring in one
   or two short places only.

A page that carries a grey overprint (a "SAMPLE" stamp, shaded headings) is read twice:
with Otsu's threshold, and keeping only thin strokes darker than their surroundings
(:func:`ink_masks`), so an outline printed over a grey band is found too; the two sets
are merged.

Vendors print one target size per page; candidates whose size is far from their kind's
median, or a rare kind's far from the common kind's (:data:`SIZE_OUTLIER`), are dropped (a
bold glyph that passed 1-3).

**Arrows** (Premier/Diebold, Sequoia "complete the arrow") are two printed pieces on one
line, a tail and a head, with a blank gap between them: the gap is the target. Pieces are
connected components; a piece's *near end* (towards the gap) is a thin bar; a pair is kept
when the two near ends face each other on the same line (same height and thickness), the
gap is blank and within :data:`LIMITS`, and at least one piece widens in its third away
from the gap (the arrowhead, or the tail's feathers), which a row of timing marks or dashes
never does, nor two letters T side by side (a T widens in its middle).

**Write-in lines**: a long printed horizontal rule that begins just right of a target, at
the height of its lower half (:func:`find_write_in_lines`).

Where the numbers come from: the outline sizes span the ovals measured on the development
blanks (Calhoun County FL 2010: stadium ovals 0.17 x 0.09 in; Cedar County IA 2008: 0.19 x
0.10 in) with room on both sides for other vendors (the contract's example oval is 0.22 x
0.14 in; boxes up to 0.45 in); glyphs of body text are below the lower bounds.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from enum import StrEnum

import cv2
import numpy as np

Rect = tuple[int, int, int, int]  # x, y, w, h in pixels


class TargetShape(StrEnum):
    OVAL = "oval"
    BOX = "box"
    ARROW = "arrow"


@dataclass(frozen=True, slots=True)
class FoundTarget:
    """One empty target: its shape and bounding box in page pixels.

    For an arrow the box is the gap between tail and head, three bars high (at least
    :data:`ARROW_BAND_IN`, at most the arrowhead's height).
    """

    shape: TargetShape
    box_px: Rect


@dataclass(frozen=True, slots=True)
class TargetLimits:
    """What a printed target may look like, in inches (see the module docstring)."""

    width_in: tuple[float, float] = (0.10, 0.50)
    height_in: tuple[float, float] = (0.06, 0.32)
    oval_aspect: tuple[float, float] = (1.15, 3.6)  # width / height: vendors' ovals lie flat
    box_aspect: tuple[float, float] = (0.85, 3.6)
    box_fill: float = 0.95  # hole area / its bounding box at or above this: a rectangle
    oval_fill: float = 0.70  # an ellipse fills pi/4 of its box, a rounded oval more
    convexity: float = 0.90
    stroke_in: float = 0.045  # thickest outline
    stroke_share: float = 0.2  # outline thickness over the hole's longer side, at most (bold glyphs: 0.25 and up)
    clear_ring_ink: float = 0.22  # ink share allowed in the ring just outside the outline
    inside_ink: float = 0.35  # ink share allowed inside (a printed number, a stamp across it; a QR finder's core is more)
    arrow_gap_in: tuple[float, float] = (0.05, 0.80)
    arrow_piece_in: tuple[float, float] = (0.05, 0.80)  # length of a tail or head piece
    arrow_bar_in: tuple[float, float] = (0.008, 0.07)  # thickness of the bar at the gap
    arrow_head_in: tuple[float, float] = (0.05, 0.30)  # height of the arrowhead / feathers
    write_in_line_in: float = 0.8  # shortest write-in rule


LIMITS = TargetLimits()
THIN_INK_IN = 0.07  # wider than any outline's stroke (TargetLimits.stroke_in)
THIN_INK_CONTRAST = 60  # gray levels darker than the local background
SIZE_OUTLIER = 0.35  # relative distance from the kind's median size that drops a candidate
SAME_TARGET_IOU = 0.5
BAR_CAP_IN = 0.03  # the longest rounded cap at the end of an arrow's bar
ARROW_BAND_IN = 0.08  # an arrow target is at least this high (at most its head's height)


def find_targets(gray: np.ndarray, dpi: float, limits: TargetLimits = LIMITS) -> tuple[FoundTarget, ...]:
    """Every empty target on a page, ``gray`` ``H x W`` uint8, in no particular order."""
    found: list[FoundTarget] = []
    for ink in ink_masks(gray, dpi):
        closed = cv2.morphologyEx(ink, cv2.MORPH_CLOSE, np.ones((3, 3), np.uint8))  # a light scan breaks outlines by a pixel
        for target in (*_outlined_targets(ink, dpi, limits), *_outlined_targets(closed, dpi, limits), *_arrow_targets(ink, dpi, limits)):
            if not any(t.shape == target.shape and _iou(t.box_px, target.box_px) >= SAME_TARGET_IOU for t in found):
                found.append(target)
    return tuple(_without_size_outliers(found))


def arrow_targets(gray: np.ndarray, dpi: float, limits: TargetLimits = LIMITS) -> tuple[FoundTarget, ...]:
    """The broken arrows' gaps on (a piece of) a page, ``gray`` ``H x W`` uint8."""
    return tuple(_arrow_targets(ink_masks(gray, dpi)[0], dpi, limits))


def ink_masks(gray: np.ndarray, dpi: float) -> list[np.ndarray]:
    """Ink (255) on paper (0): Otsu's threshold, and thin ink alone when a grey overprint is present.

    The second mask is the black top-hat (closing minus image) with a kernel wider than any
    outline (:data:`THIN_INK_IN`): thin strokes stand out against their local background
    whether it is paper or a grey band, while a large grey or black area has none.
    """
    _, otsu = cv2.threshold(gray, 0, 255, cv2.THRESH_BINARY_INV | cv2.THRESH_OTSU)
    side = max(3, int(round(THIN_INK_IN * dpi)) | 1)
    tophat = cv2.morphologyEx(gray, cv2.MORPH_BLACKHAT, cv2.getStructuringElement(cv2.MORPH_ELLIPSE, (side, side)))
    _, thin = cv2.threshold(tophat, THIN_INK_CONTRAST, 255, cv2.THRESH_BINARY)
    if np.count_nonzero(otsu) > 1.1 * np.count_nonzero(thin):  # large dark areas: an overprint, a stamp
        return [otsu, thin]
    return [otsu]


# --------------------------------------------------------------------------------------
# Ovals and boxes


def _outlined_targets(ink: np.ndarray, dpi: float, limits: TargetLimits) -> list[FoundTarget]:
    contours, hierarchy = cv2.findContours(ink, cv2.RETR_CCOMP, cv2.CHAIN_APPROX_SIMPLE)
    if hierarchy is None:
        return []
    stroke_px = max(2, int(round(limits.stroke_in * dpi)))
    holes: dict[int, list[Rect]] = {}  # the holes of each outline: a B or an 8 has two, side by side
    for index, contour in enumerate(contours):
        if hierarchy[0][index][3] != -1:
            bx, by, bw, bh = cv2.boundingRect(contour)
            holes.setdefault(int(hierarchy[0][index][3]), []).append((int(bx), int(by), int(bw), int(bh)))
    out = []
    for index, contour in enumerate(contours):
        if hierarchy[0][index][3] == -1:
            continue  # an outer outline; holes carry a parent
        x, y, w, h = cv2.boundingRect(contour)
        if not _hole_size_fits(w, h, dpi, limits, stroke_px) or _has_twin((x, y, w, h), holes[int(hierarchy[0][index][3])]):
            continue
        shape = _hole_shape(contour, w, h, limits)
        if shape is None:
            continue
        stroke = _outline_stroke(ink, contour, (x, y, w, h), stroke_px, limits)
        if stroke is None or stroke > limits.stroke_share * max(w, h) or stroke > 0.45 * min(w, h) \
                or _inside_ink(ink, contour, (x, y, w, h)) > limits.inside_ink:
            continue
        box = (x - stroke, y - stroke, w + 2 * stroke, h + 2 * stroke)
        if _outline_fits(box, shape, dpi, limits):
            out.append(FoundTarget(shape, box))
    return out


def _has_twin(rect: Rect, siblings: Sequence[Rect]) -> bool:
    """Whether the outline around this hole holds another hole of about its size right beside
    it (the two bowls of a B, the loops of an 8): a glyph, not a target."""
    x, y, w, h = rect
    for sx, sy, sw, sh in siblings:
        if (sx, sy, sw, sh) == rect or not 0.4 <= (sw * sh) / float(w * h) <= 2.5:
            continue
        if abs((sx + sw / 2) - (x + w / 2)) <= 1.6 * max(w, sw) and abs((sy + sh / 2) - (y + h / 2)) <= 1.6 * max(h, sh):
            return True
    return False


def _hole_size_fits(w: int, h: int, dpi: float, limits: TargetLimits, stroke_px: int) -> bool:
    return (limits.width_in[0] * dpi - 2 * stroke_px <= w <= limits.width_in[1] * dpi
            and limits.height_in[0] * dpi - 2 * stroke_px <= h <= limits.height_in[1] * dpi and min(w, h) >= 3)


def _hole_shape(contour: np.ndarray, w: int, h: int, limits: TargetLimits) -> TargetShape | None:
    area = cv2.contourArea(contour) + 0.5 * cv2.arcLength(contour, True)  # the contour runs on the hole's edge pixels
    hull = cv2.contourArea(cv2.convexHull(contour)) + 0.5 * cv2.arcLength(cv2.convexHull(contour), True)
    if hull <= 0 or area / hull < limits.convexity:
        return None
    fill = area / float(w * h)
    if fill >= limits.box_fill:
        return TargetShape.BOX
    return TargetShape.OVAL if fill >= limits.oval_fill else None


def _outline_stroke(ink: np.ndarray, hole: np.ndarray, rect: Rect, max_px: int, limits: TargetLimits) -> int | None:
    """The outline's thickness in pixels, or None when the outline is not a thin closed ring."""
    x, y, w, h = rect
    pad = 2 * max_px + 3
    x0, y0 = max(0, x - pad), max(0, y - pad)
    roi = ink[y0 : y + h + pad, x0 : x + w + pad]
    mask = np.zeros(roi.shape, np.uint8)
    cv2.drawContours(mask, [hole - np.array([x0, y0])], -1, 255, cv2.FILLED)
    distance = cv2.distanceTransform(cv2.bitwise_not(mask), cv2.DIST_L2, 3)
    stroke = 0
    for d in range(1, max_px + 2):
        ring = (distance > d - 1) & (distance <= d)
        share = float(np.count_nonzero(roi[ring])) / max(1, int(np.count_nonzero(ring)))
        if share < 0.5:
            break
        stroke = d
    if stroke > max_px:
        return None  # the hole's contour runs on the outline's inner pixels: stroke 0 is a 1-pixel line
    outside = (distance > stroke + 1) & (distance <= stroke + 1 + max(2, stroke))
    share = float(np.count_nonzero(roi[outside])) / max(1, int(np.count_nonzero(outside)))
    return stroke if share <= limits.clear_ring_ink else None


def _inside_ink(ink: np.ndarray, hole: np.ndarray, rect: Rect) -> float:
    """Share of the hole (its edge pixels left out) that is ink."""
    x, y, w, h = rect
    mask = np.zeros((h, w), np.uint8)
    cv2.drawContours(mask, [hole - np.array([x, y])], -1, 255, cv2.FILLED)
    mask = np.asarray(cv2.erode(mask, np.ones((5, 5), np.uint8)), np.uint8)
    area = int(np.count_nonzero(mask))
    return float(np.count_nonzero(ink[y : y + h, x : x + w][mask > 0])) / area if area else 1.0


def _outline_fits(box: Rect, shape: TargetShape, dpi: float, limits: TargetLimits) -> bool:
    _, _, w, h = box
    if not (limits.width_in[0] * dpi <= w <= limits.width_in[1] * dpi and limits.height_in[0] * dpi <= h <= limits.height_in[1] * dpi):
        return False
    low, high = limits.box_aspect if shape is TargetShape.BOX else limits.oval_aspect
    return low <= w / h <= high


# --------------------------------------------------------------------------------------
# Arrows


@dataclass(frozen=True, slots=True)
class _End:
    """A bar end of a component: where it is, its centre line and thickness, how it widens."""

    x: int  # the end column
    y: float  # centre row of the bar at the end
    thick: int
    far_height: int  # the piece's height in its third away from the gap: an arrowhead's or feathers'
    length: int
    rect: Rect


def _arrow_targets(ink: np.ndarray, dpi: float, limits: TargetLimits) -> list[FoundTarget]:
    count, labels, stats, _ = cv2.connectedComponentsWithStats(ink, connectivity=8)
    rights: list[_End] = []  # pieces whose right end is a bar (a tail left of the gap)
    lefts: list[_End] = []  # pieces whose left end is a bar (a head right of the gap)
    for i in range(1, count):
        x, y, w, h, _ = stats[i]
        if not (limits.arrow_piece_in[0] * dpi <= w <= limits.arrow_piece_in[1] * dpi and h <= limits.arrow_head_in[1] * dpi):
            continue
        piece = labels[y : y + h, x : x + w] == i
        right, left = _bar_end(piece, (x, y, w, h), -1, dpi, limits), _bar_end(piece, (x, y, w, h), 0, dpi, limits)
        if right is not None:
            rights.append(right)
        if left is not None:
            lefts.append(left)
    out = []
    for tail in rights:
        for head in lefts:
            box = _arrow_gap(tail, head, ink, dpi, limits)
            if box is not None:
                out.append(FoundTarget(TargetShape.ARROW, box))
    return out


def _bar_end(piece: np.ndarray, rect: Rect, column: int, dpi: float, limits: TargetLimits) -> _End | None:
    """The end of a piece at ``column`` (0: left, -1: right) when it is a thin straight bar.

    A bar may end in a rounded cap (at most :data:`BAR_CAP_IN` long); behind it, it keeps
    its thickness and centre line for at least ``max(0.02 in, its thickness)`` inwards (the
    round end of an oval or a letter does not).
    """
    x, y, w, h = rect
    order = list(range(w)) if column == 0 else list(range(w - 1, -1, -1))
    cap = max(1, int(round(BAR_CAP_IN * dpi)))
    runs = [_single_run(piece[:, c]) for c in order[: cap + int(0.1 * dpi)]]
    if runs[0] is None:
        return None
    sizes = [r[1] - r[0] + 1 if r is not None else 0 for r in runs]
    body = [v for v in sizes[cap // 2 : cap // 2 + cap] if v]
    if not body:
        return None
    thick = int(np.median(body))
    if not limits.arrow_bar_in[0] * dpi <= thick <= limits.arrow_bar_in[1] * dpi:
        return None
    tol = max(1, thick // 4)
    start = next((k for k in range(min(cap, len(sizes))) if abs(sizes[k] - thick) <= tol), None)
    need = int(max(0.02 * dpi, thick))
    if start is None or start + need > len(runs):
        return None
    first = runs[start]
    mid = (first[0] + first[1]) if first is not None else 0
    for k in range(start, start + need):
        run = runs[k]
        if run is None or abs((run[1] - run[0] + 1) - thick) > tol or abs(run[0] + run[1] - mid) > 2:
            return None
    far = piece[:, w - max(1, w // 3):] if column == 0 else piece[:, : max(1, w // 3)]  # the third away from the gap
    rows = np.flatnonzero(far.any(axis=1))
    far_height = int(rows[-1] - rows[0] + 1) if rows.size else 0  # the head or the feathers; a T's stem is in its middle
    end_x = x if column == 0 else x + w - 1
    return _End(end_x, y + mid / 2.0, thick, far_height, w, rect)


def _single_run(column: np.ndarray) -> tuple[int, int] | None:
    """``(first, last)`` row of the one run of ink in a column, or None (empty, or several runs)."""
    rows = np.flatnonzero(column)
    if rows.size == 0 or rows[-1] - rows[0] + 1 != rows.size:
        return None
    return int(rows[0]), int(rows[-1])


def _arrow_gap(tail: _End, head: _End, ink: np.ndarray, dpi: float, limits: TargetLimits) -> Rect | None:
    gap = head.x - tail.x - 1
    if not limits.arrow_gap_in[0] * dpi <= gap <= limits.arrow_gap_in[1] * dpi:
        return None
    if abs(tail.y - head.y) > max(1.5, 0.5 * min(tail.thick, head.thick)) or max(tail.thick, head.thick) > 2 * min(tail.thick, head.thick) + 1:
        return None
    widens = [e.far_height for e in (tail, head) if e.far_height >= max(2 * e.thick, limits.arrow_head_in[0] * dpi)]
    if not widens:
        return None  # two plain bars: timing marks or a dashed rule, not an arrow
    bar = max(tail.thick, head.thick)  # the line a voter draws runs along the bar: a band three bars high
    height = int(min(max(widens), limits.arrow_head_in[1] * dpi, max(3 * bar, ARROW_BAND_IN * dpi)))
    top = int(round((tail.y + head.y) / 2 - height / 2))
    band = ink[max(0, top) : top + height, tail.x + 1 : head.x]
    if band.size == 0 or np.count_nonzero(band) > 0.02 * band.size:
        return None  # something printed in the gap
    return (tail.x + 1, top, gap, height)


# --------------------------------------------------------------------------------------
# Write-in lines


def find_rules(gray: np.ndarray, dpi: float, limits: TargetLimits = LIMITS) -> tuple[Rect, ...]:
    """Printed horizontal rules at least :attr:`TargetLimits.write_in_line_in` long (write-in
    lines, the borders of contest boxes), as pixel boxes, top to bottom."""
    ink = cv2.dilate(ink_masks(gray, dpi)[0], np.ones((3, 1), np.uint8))  # a rule a pixel off level stays one
    length = max(3, int(limits.write_in_line_in * dpi))
    opened = cv2.morphologyEx(ink, cv2.MORPH_OPEN, cv2.getStructuringElement(cv2.MORPH_RECT, (length, 1)))
    count, _, stats, _ = cv2.connectedComponentsWithStats(opened, connectivity=8)
    lines = [(int(stats[i][0]), int(stats[i][1]), int(stats[i][2]), int(stats[i][3])) for i in range(1, count) if stats[i][3] <= 0.05 * dpi]
    return tuple(sorted(lines, key=lambda r: (r[1], r[0])))


def find_write_in_lines(gray: np.ndarray, dpi: float, targets: Sequence[FoundTarget],
                        limits: TargetLimits = LIMITS, *, rules: Sequence[Rect] | None = None) -> dict[int, Rect]:
    """For each target (by index) with a write-in rule beside it, the rule's box in pixels.

    A rule (:func:`find_rules`, or ``rules`` already found) qualifies when it starts within
    0.6 in right of the target's right edge (not left of its centre) and lies between the
    target's upper quarter and 0.15 in below its bottom (the writing goes on the rule).
    """
    out: dict[int, Rect] = {}
    for line in sorted(find_rules(gray, dpi, limits) if rules is None else rules, key=lambda r: r[0]):
        lx, ly, _, lh = line
        beside = [i for i, t in enumerate(targets) if i not in out
                  and t.box_px[0] + t.box_px[2] / 2 <= lx <= t.box_px[0] + t.box_px[2] + 0.6 * dpi
                  and t.box_px[1] + t.box_px[3] / 4 <= ly + lh / 2 <= t.box_px[1] + t.box_px[3] + 0.15 * dpi]
        if beside:  # the nearest target, by how far the rule is from its lower half
            out[min(beside, key=lambda i: abs(ly + lh / 2 - targets[i].box_px[1] - 0.75 * targets[i].box_px[3]))] = line
    return out


# --------------------------------------------------------------------------------------
# Helpers


def _without_size_outliers(found: list[FoundTarget]) -> list[FoundTarget]:
    """Drop candidates far from the page's target size (:data:`SIZE_OUTLIER`).

    Ovals and boxes are measured against the median of their own kind, and the less common
    of the two also against the commoner kind (a page prints one target size). Arrows are
    measured by their gap, which varies, and are kept.
    """
    groups = {shape: [t for t in found if t.shape == shape] for shape in (TargetShape.OVAL, TargetShape.BOX)}
    sizes = {shape: _median_size(group) for shape, group in groups.items() if len(group) >= 3}
    major = max(groups, key=lambda s: len(groups[s]))
    out = [t for t in found if t.shape is TargetShape.ARROW]
    for shape, group in groups.items():
        for t in group:
            own = sizes.get(shape)
            if own is not None and not _near(t.box_px, own):
                continue
            if shape is not major and major in sizes and len(groups[major]) > len(group) and not _near(t.box_px, sizes[major]):
                continue
            out.append(t)
    return out


def _median_size(group: Sequence[FoundTarget]) -> tuple[float, float]:
    return float(np.median([t.box_px[2] for t in group])), float(np.median([t.box_px[3] for t in group]))


def _near(box: Rect, size: tuple[float, float]) -> bool:
    return abs(box[2] - size[0]) <= SIZE_OUTLIER * size[0] and abs(box[3] - size[1]) <= SIZE_OUTLIER * size[1]


def _iou(a: Rect, b: Rect) -> float:
    ix = max(0, min(a[0] + a[2], b[0] + b[2]) - max(a[0], b[0]))
    iy = max(0, min(a[1] + a[3], b[1] + b[3]) - max(a[1], b[1]))
    inter = ix * iy
    union = a[2] * a[3] + b[2] * b[3] - inter
    return inter / union if union else 0.0
