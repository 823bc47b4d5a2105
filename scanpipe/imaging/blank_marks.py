"""A voter's mark on the blank: a "blank" reference that is a voted card (or a sample ballot
someone marked) hides, on every card read against it, whatever mark falls on its own marks,
because a card's ink is measured beyond the blank's print. Found from the blank alone:

* the middle of a target (its box's central half, both ways) is dark on MARKED_EXCESS more
  of it than the page's typical target's middle (the median: an empty oval's middle is
  paper, and print that every target carries, a vendor's numbers inside its ovals, is the
  typical target's own);
* and the dark ink there stays near the target: every dark piece through the middle fits in
  MARKED_EXTENT_BOXES box widths and heights (a fill, a scribble, a check or an X does; the
  letters of a "SAMPLE" stamp printed across the ballot, a rule or a title bar run far
  beyond: the blank's print, which :mod:`scanpipe.imaging.marks_blank` already sends to a
  person where it covers a target).

Measured on the real sets (``scripts/bench_real.py`` with a voted card of each style as its
"blank", and every real and synthetic blank): no target of a true blank is taken for a mark
(Calhoun's stamp across its ovals included), and 45 of 49 voted references show at least one.
Not every mark is found (a light scribble or a mark joined to the printed name can pass): the
warning at ``scanpipe init`` says the reference looks voted, which is what a board must fix.

Pure: the blank's pixels and the target boxes in, one flag per target out.
"""

from __future__ import annotations

from collections.abc import Sequence

import cv2
import numpy as np

from scanpipe.imaging.reference import paper_level
from scanpipe.types import Box

MARK_DARK = 0.6  # a pixel darker than this share of the paper level is ink (as print is counted)
MARKED_EXCESS = 0.15  # the target's middle dark on this much more of it than the typical target's
MARKED_EXTENT_BOXES = 3.0  # ... with every dark piece through the middle within this many box sizes
MIN_TARGETS = 3  # a page with fewer targets has no typical target to compare with


def marked_on_blank(blank: np.ndarray, dpi: float, boxes: Sequence[Box]) -> np.ndarray:
    """Per target box (inches), whether the blank (gray, ``dpi``) shows a mark in it."""
    out = np.zeros(len(boxes), bool)
    if len(boxes) < MIN_TARGETS or blank.ndim != 2:
        return out
    dark = blank < MARK_DARK * paper_level(blank)
    h_img, w_img = dark.shape
    middles = np.zeros(len(boxes))
    extents = np.zeros(len(boxes))
    for k, (x, y, w, h) in enumerate(boxes):
        x, y, w, h = x * dpi, y * dpi, w * dpi, h * dpi
        c0, c1 = int(round(x + w / 4)), int(round(x + 3 * w / 4))
        r0, r1 = int(round(y + h / 4)), int(round(y + 3 * h / 4))
        if not (0 <= c0 < c1 <= w_img and 0 <= r0 < r1 <= h_img):
            continue
        middles[k] = float(dark[r0:r1, c0:c1].mean())
        reach = (MARKED_EXTENT_BOXES + 1) / 2  # the window: the pieces may reach this far either way
        wc0, wc1 = max(0, int(x - reach * w)), min(w_img, int(np.ceil(x + w + reach * w)))
        wr0, wr1 = max(0, int(y - reach * h)), min(h_img, int(np.ceil(y + h + reach * h)))
        _n, labels, stats, _c = cv2.connectedComponentsWithStats(dark[wr0:wr1, wc0:wc1].view(np.uint8), connectivity=8)
        through = np.unique(labels[r0 - wr0: r1 - wr0, c0 - wc0: c1 - wc0])
        through = through[through != 0]
        if through.size:
            extents[k] = float(max((stats[through, 2] / max(w, 1.0)).max(), (stats[through, 3] / max(h, 1.0)).max()))
    excess = middles - float(np.median(middles))
    return (excess >= MARKED_EXCESS) & (extents <= MARKED_EXTENT_BOXES)
