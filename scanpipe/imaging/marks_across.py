"""Ink across the card: a rubber stamp, a signature, a long line that is no voter's mark.

A "SAMPLE" or "VOID" stamp, an official's signature or a pen dragged across the sheet lays
ink over targets the voter may or may not have marked. Scored target by target, the stamp's
ink in a box looks like a voter's: a letter's broad stroke ending on an oval is a fill, its
frame's line a stroke across, and a thresholded scan breaks the stamp into pieces the size of
a mark. Seen from the whole page it is one large thing: ink added to the blank's print, away
from the targets and the write-in areas, spread over an inch or more.

1. The page's added ink (:func:`added_ink`: the card's darkness beyond its blank's print,
   its print widened a pixel) in the layout's frame at FIT_PPI; ink where it is INK or darker.
2. A voter's marks lie on the targets and in the write-in areas: ink outside every target's
   box grown OWN_IN and every write-in area grown AREA_IN, PRINT_AWAY_PX or more from the
   blank's print (a thresholded card prints its rules a pixel or two thicker), EDGE_IN or more
   inside the sheet's edges and in pieces of SPECK_SQIN or more, is *foreign*.
3. Foreign ink joined across JOIN_IN makes *regions*; a region with FOREIGN_MIN_SQIN of
   foreign ink or more, spread EXTENT_MIN_IN or more, is ink across the card (a signature, a
   stamp's frame; a voter's stray line or a check's long arm is smaller). A rubber stamp's
   letters are *broad* (strokes BROAD_IN wide; a pen's are 0.01-0.03 in): a page with
   STAMP_BROAD_SQIN of broad foreign ink in STAMP_PIECES pieces or more is *stamped*, its foreign ink joined across
   JOIN_STAMP_IN (the pieces of a thresholded stamp), and every piece of ink within the
   outline of its large regions' broad-bearing foreign ink is the stamp's too (a piece of it
   lies between the others, on a name's print or in a target's zone). The outline is their
   convex hull, and along the edge of the smallest rectangle round them, turned as it fits best
   (``cv2.minAreaRect``), a band FRAME_IN either side: a rubber stamp is a framed block, and
   where a threshold leaves only a few dashes of its frame, the frame's corner lying over
   print, the hull cuts inside the frame's edge (an empty oval on the frame's line read as a
   vote, seed 262626); the rectangle keeps the edge's line. A voter's fill inside the rectangle
   but away from its edge and outside the hull stays the voter's.
4. The stamp's ink runs on over print (none is added where the blank prints): pieces of ink
   within BRIDGE_IN of each other are one, and a piece holding any of the above is ink
   across. A target whose box grown TOUCH_IN holds ink across is crossed by it where that ink
   comes within TOUCH_IN of the target itself (:func:`target_zone`: its print and what that
   spans; a stamp through a loose box's corner beside an oval lies over nothing a voter
   marks): its damage is 1, for a person whatever the box holds (a vote under a stamp is the
   voter's or the stamp's; :mod:`scanpipe.classify` never reads it).

Measured on the vendor profile's seed 232323 (drawn before this module; 70 stamped or signed
pages, 301 others): the largest foreign region of a page without a stamp held 121 px at
FIT_PPI and spread 0.36 in; broad foreign ink 4 px at most there, 241 px or more on every
"SAMPLE"-stamped page. Pure: arrays in, a flag per target out.
"""

from __future__ import annotations

from collections.abc import Sequence

import cv2
import numpy as np

from scanpipe.imaging.reference import reduce_to, warp_in_tiles
from scanpipe.types import Box

FIT_PPI = 100.0  # the frame the page is looked at in (0.01 in a pixel)
INK = 0.3  # added ink this dark or darker: a pen's or a stamp's, not a stain's wash or paper noise
OWN_IN = 0.08  # a voter's mark on a target stays within this of its box (a check's arm may run past: see FOREIGN_MIN_SQIN)
AREA_IN = 0.05  # a name written in a write-in area stays within this of it
PAPER = 0.12  # the blank's darkness under which it is bare paper
PRINT_AWAY_PX = 2  # foreign ink lies this far (FIT_PPI px) from the blank's print
EDGE_IN = 0.1  # ink this near the sheet's edge is no stamp's (the backing where the scanner cut, a staple)
SPECK_SQIN = 0.0006  # a piece of foreign ink smaller than this (6 px at FIT_PPI) is a speck (a thresholded scan's paper)
JOIN_IN = 0.15  # foreign ink this near is one region (a signature's letters, a frame's broken line)
FOREIGN_MIN_SQIN = 0.02  # a large region's foreign ink: this many square inches or more (200 px at FIT_PPI) ...
EXTENT_MIN_IN = 0.6  # ... spread this far or farther (the longer side of its bounding box)
BROAD_IN = 0.06  # a stroke this wide or wider is broad: a rubber stamp's letter
STAMP_BROAD_SQIN = 0.01  # a page with this much broad foreign ink (100 px at FIT_PPI) is stamped
STAMP_PIECES = 3  # ... in this many pieces or more (its letters; two punched holes are no stamp)
JOIN_STAMP_IN = 0.4  # on a stamped page, foreign ink this near is one region (the stamp in pieces)
FRAME_IN = 0.05  # ... and ink this near the edge of its smallest turned rectangle is its frame's
BRIDGE_IN = 0.05  # ink broken by print this narrow (a letter's stroke, an outline) is one piece
TOUCH_IN = 0.02  # ink across this near a target enters it
ZONE_MIN_IN = 0.05  # print in a box spanning less than this either way is no target's outline (:func:`target_zone`)


def darkness_in_frame(gray: np.ndarray, hom: np.ndarray, plane: tuple[float, float, float], size_in: tuple[float, float]) -> np.ndarray:
    """``1 - gray / paper`` in the layout's frame at FIT_PPI: ``gray`` area-reduced to about
    FIT_PPI, then resampled through ``hom`` (layout inches -> ``gray``'s pixels); the paper
    level is the page's plane ``a + b x + c y`` in ``gray``'s pixels (a scanner lamp's fall-off
    is no ink)."""
    w, h = int(round(size_in[0] * FIT_PPI)), int(round(size_in[1] * FIT_PPI))
    px_per_in = float(np.sqrt(abs(np.linalg.det(hom[:2, :2]))))
    small = reduce_to(gray, px_per_in, FIT_PPI)
    to_small = np.diag([small.shape[1] / gray.shape[1], small.shape[0] / gray.shape[0], 1.0]) @ hom @ np.diag([1.0 / FIT_PPI, 1.0 / FIT_PPI, 1.0])
    frame = warp_in_tiles(small, to_small, (w, h), border_value=255)
    # the plane at a coarse grid of frame points, spread bilinearly (exact where hom is affine)
    gx, gy = np.meshgrid(np.linspace(0, w - 1, 9), np.linspace(0, h - 1, 12))
    at = cv2.perspectiveTransform(np.stack([gx, gy], -1).reshape(-1, 1, 2) / FIT_PPI, hom).reshape(gx.shape + (2,))
    coarse = np.maximum(plane[0] + plane[1] * at[..., 0] + plane[2] * at[..., 1], 1.0).astype(np.float32)
    paper = cv2.resize(coarse, (w, h), interpolation=cv2.INTER_LINEAR)
    return np.clip(1.0 - frame.astype(np.float32) / paper, 0.0, 1.0)


def blank_print(blank_dark: np.ndarray) -> np.ndarray:
    """The blank's darkness in the frame (:func:`darkness_in_frame`) widened a pixel: a card's
    print a pixel off its blank's adds no ink."""
    return cv2.dilate(blank_dark, np.ones((3, 3), np.uint8))


def added_ink(card_dark: np.ndarray, near: np.ndarray) -> np.ndarray:
    """The card's darkness beyond its blank's print ``near`` (:func:`blank_print`)."""
    return np.clip(card_dark - near, 0.0, 1.0)


def crossed_by_ink_across(added: np.ndarray, blank: np.ndarray, boxes_in: Sequence[Box],
                          areas_in: Sequence[Box | None]) -> np.ndarray:
    """Per target (``boxes_in``, layout inches), whether ink across the card enters its box;
    ``added``: the page's added ink in the layout frame at FIT_PPI (:func:`added_ink`);
    ``blank``: the blank's print there (:func:`blank_print`); ``areas_in``: each target's
    write-in area or None."""
    out = np.zeros(len(boxes_in), bool)
    stamp = ink_across(added, blank, boxes_in, areas_in)
    if stamp is None:
        return out
    h, w = stamp.shape
    touch = int(round(TOUCH_IN * FIT_PPI))
    for k, box in enumerate(boxes_in):
        x0, y0, x1, y1 = _span(box, TOUCH_IN, w, h)
        if x1 > x0 and y1 > y0 and stamp[y0:y1, x0:x1].any():
            # the target itself, not just its box: its print and what that spans, grown TOUCH_IN
            bx0, by0, bx1, by1 = _span(box, 0.0, w, h)
            zone = target_zone(blank[y0:y1, x0:x1] >= PAPER, (bx0 - x0, by0 - y0, bx1 - x0, by1 - y0), int(round(ZONE_MIN_IN * FIT_PPI)))
            zone = cv2.dilate(zone.view(np.uint8), np.ones((2 * touch + 1, 2 * touch + 1), np.uint8)) > 0
            out[k] = bool((stamp[y0:y1, x0:x1] & zone).any())
    return out


def ink_across(added: np.ndarray, blank: np.ndarray, boxes_in: Sequence[Box], areas_in: Sequence[Box | None]) -> np.ndarray | None:
    """The ink of the page's stamps, signatures and long lines across it (a mask in the frame of
    ``added``; the module's steps 2-4), or None where there is none."""
    ink = (added >= INK).astype(np.uint8)
    own = np.zeros_like(ink)
    for box in boxes_in:
        _fill(own, box, OWN_IN)
    for area in areas_in:
        if area is not None:
            _fill(own, area, AREA_IN)
    printed = cv2.dilate((blank >= PAPER).astype(np.uint8), np.ones((2 * PRINT_AWAY_PX + 1,) * 2, np.uint8))
    foreign = ink & (own == 0) & (printed == 0)
    edge = int(round(EDGE_IN * FIT_PPI))
    if edge > 0:  # (a slice from -0 would be the whole page)
        foreign[:edge], foreign[-edge:], foreign[:, :edge], foreign[:, -edge:] = 0, 0, 0, 0
    if np.count_nonzero(foreign) < FOREIGN_MIN_SQIN * FIT_PPI * FIT_PPI:
        return None
    _, labels, sizes, _ = cv2.connectedComponentsWithStats(foreign, connectivity=8)
    foreign = ((sizes[:, cv2.CC_STAT_AREA] >= SPECK_SQIN * FIT_PPI * FIT_PPI)[labels] & (labels > 0)).astype(np.uint8)
    if np.count_nonzero(foreign) < FOREIGN_MIN_SQIN * FIT_PPI * FIT_PPI:
        return None
    broad = (cv2.distanceTransform(foreign, cv2.DIST_L2, 3) >= BROAD_IN * FIT_PPI / 2.0).astype(np.uint8)
    stamped = (np.count_nonzero(broad) >= STAMP_BROAD_SQIN * FIT_PPI * FIT_PPI
               and len(np.unique(labels[broad > 0])) >= STAMP_PIECES)
    join = int(round((JOIN_STAMP_IN if stamped else JOIN_IN) * FIT_PPI)) | 1
    joined = cv2.morphologyEx(foreign, cv2.MORPH_CLOSE, cv2.getStructuringElement(cv2.MORPH_ELLIPSE, (join, join)))
    count, regions, stats, _ = cv2.connectedComponentsWithStats(joined, connectivity=8)
    foreign_in = np.bincount(regions[foreign > 0], minlength=count)
    extent = np.maximum(stats[:, cv2.CC_STAT_WIDTH], stats[:, cv2.CC_STAT_HEIGHT]) / FIT_PPI
    large = (foreign_in >= FOREIGN_MIN_SQIN * FIT_PPI * FIT_PPI) & (extent >= EXTENT_MIN_IN)
    large[0] = False
    if not large.any():
        return None
    across = large[regions] & (foreign > 0)
    if stamped:
        with_broad = np.zeros(count, bool)
        with_broad[np.unique(regions[broad > 0])] = True
        points = cv2.findNonZero((across & with_broad[regions]).astype(np.uint8))
        if points is not None:
            hull = np.zeros_like(ink)
            cv2.fillConvexPoly(hull, cv2.convexHull(points), 1)
            frame = np.round(cv2.boxPoints(cv2.minAreaRect(points))).astype(np.int32).reshape(-1, 1, 2)
            cv2.polylines(hull, [frame], True, 1, 2 * int(round(FRAME_IN * FIT_PPI)) + 1)
            across |= (hull > 0) & (ink > 0)
    bridge = int(round(BRIDGE_IN * FIT_PPI)) | 1
    bridged = cv2.morphologyEx(ink, cv2.MORPH_CLOSE, cv2.getStructuringElement(cv2.MORPH_ELLIPSE, (bridge, bridge)))
    pieces_n, pieces = cv2.connectedComponents(bridged, connectivity=8)
    of_across = np.zeros(pieces_n, bool)
    of_across[np.unique(pieces[across])] = True
    of_across[0] = False
    return of_across[pieces] & (ink > 0)


def stamp_of(across: np.ndarray) -> np.ndarray | None:
    """Of the ink across a page (:func:`ink_across`), a rubber stamp's: the pieces joined across
    JOIN_STAMP_IN that hold broad ink (strokes BROAD_IN wide or wider: its letters); None where
    none does. A signature, a long line, and print a page shows beyond a blank's (another
    style's line of text, found against this blank) are pen-thin: none of theirs, unless it lies
    within JOIN_STAMP_IN of the stamp."""
    ink = across.astype(np.uint8)
    broad = cv2.distanceTransform(ink, cv2.DIST_L2, 3) >= BROAD_IN * FIT_PPI / 2.0
    if not broad.any():
        return None
    join = int(round(JOIN_STAMP_IN * FIT_PPI)) | 1
    count, regions = cv2.connectedComponents(cv2.morphologyEx(ink, cv2.MORPH_CLOSE, cv2.getStructuringElement(cv2.MORPH_ELLIPSE, (join, join))),
                                            connectivity=8)
    keep = np.zeros(count, bool)
    keep[np.unique(regions[broad])] = True
    keep[0] = False
    return keep[regions] & across


def target_zone(printed: np.ndarray, box: tuple[int, int, int, int], min_px: int) -> np.ndarray:
    """Where a target lies in a window (``printed``: the blank's print there; ``box``: the
    target's box in it, x0, y0, x1, y1 px): the convex hull of the print inside the box (an
    oval or a rectangle and its inside, an arrow's two parts and the gap between them; a box
    drawn loose round the target holds the same), or the box itself where that print spans
    under ``min_px`` either way (a bare box, the stubs of an arrow's line)."""
    x0, y0, x1, y1 = max(0, box[0]), max(0, box[1]), box[2], box[3]
    zone = np.zeros(printed.shape, np.uint8)
    points = cv2.findNonZero(printed[y0:y1, x0:x1].astype(np.uint8))
    if points is not None:
        _, _, pw, ph = cv2.boundingRect(points)
        if pw >= min_px and ph >= min_px:
            cv2.fillConvexPoly(zone, cv2.convexHull(points + np.array([x0, y0], np.int32)), 1)
    if not zone.any():
        zone[y0:y1, x0:x1] = 1
    return zone > 0


def _span(box: Box, grow_in: float, w: int, h: int) -> tuple[int, int, int, int]:
    x, y, bw, bh = box
    return (max(0, int(np.floor((x - grow_in) * FIT_PPI))), max(0, int(np.floor((y - grow_in) * FIT_PPI))),
            min(w, int(np.ceil((x + bw + grow_in) * FIT_PPI))), min(h, int(np.ceil((y + bh + grow_in) * FIT_PPI))))


def _fill(mask: np.ndarray, box: Box, grow_in: float) -> None:
    x0, y0, x1, y1 = _span(box, grow_in, mask.shape[1], mask.shape[0])
    mask[y0:y1, x0:x1] = 1
