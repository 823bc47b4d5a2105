"""The page on the scanner's bed (issue 8: "find the page (its edges)").

Many production scanners image a sheet against a black backing wider and longer than the
sheet, and feed it a degree or two askew: the image then shows the page with dark wedges of
the bed along its sides. Those wedges are no print of the ballot's, yet they are the darkest
thing in the image: the dense alignment correlates them with the blank's print, and a column
of timing marks near the page's edge merges with them into one dark piece, so that neither the
marks nor the print place the card. So the bed is found once per image and painted the
page's paper level, before anything else looks at the image:

1. The image is area-reduced to about WORK_SIDE_PX on its short side (about 50 dpi on a
   ballot) and split into pixels at least BED_DARK of the paper level (the page's middle)
   and darker ones.
2. The page is the largest connected piece of the light pixels (the paper; its print is
   holes in it), grown to its convex hull (a sheet is convex; its print, even print at a
   cut edge, lies between paper), with the wide pieces as light as paper just outside it
   (the margin outside a border printed round the page: MARGIN_WIDE_PX); the bed is judged
   EDGE_BLUR_PX or more from the hull (the page's blurred edge).
3. What lies outside the hull is the bed when it is more than BED_MIN_SHARE of the image
   and nearly all dark (BED_DARK_SHARE): a white bed, a page filling the image, a light
   margin the scanner left, all leave the image as it was (the same array, not a copy).

Steps 1-3 are taken only where an edge of the image is dark along a quarter of its length or
more (BED_RUN_MIN, in the outermost blocks of the reduced image alone): a bed worth painting (1% of
the image) runs along at least half of an edge, even as a corner's wedge under a degree of
skew; the timing marks a scanner cut into show runs of a few percent.

The page's own edge (a shadow a pixel or two wide) goes with the bed: the hull is shrunk by
one working pixel (about 0.02 in); ballots are printed with a margin wider than that, so no
print is lost. A blank page on a dark bed then reads as the blank page it is, and a blank
reference scanned on one is learned from its page alone (:func:`~scanpipe.imaging.reference.learn_page`).

A scanner set too bright (or a blank scanned on one machine, the cards on another) delivers
the page washed out: its black print gray, every mark as much lighter. The reader measures a
mark's darkness against the paper, so such a card would show its pen strokes as pencil and
its print too light to tell its style. :func:`print_restored` finds the page's darkest print
(the WASHED_PCT percentile of its pixels: a ballot prints solid black, its timing marks and
titles, on far more of the page) and, where it is lighter than WASHED_OUT of the paper's
darkness while the election's blanks print darker than that (a ballot printed in a light ink
prints its blanks so too, and its marks are as the voter made them: a stretch would darken a
light mark into a vote), stretches the page's darkness about its paper level so that its
print shows as dark as the blanks' do, every mark in proportion. Every scan that is not washed out
is left exactly as it was: measured, the darkest print of the good scans looked at (most of
the real sets' cards and blanks, samples of four synthetic decks, every card of a hardest-profile
deck) lies at 0.92 of the way to black or darker, of a card out of focus and saved at JPEG
quality 40 at 0.83.

Pure: an array in, an array out.
"""

from __future__ import annotations

from dataclasses import dataclass

import cv2
import numpy as np

from scanpipe.imaging.reference import PRINTED_MIN_PAPER, paper_level

WORK_SIDE_PX = 425  # the image looked at with about this many pixels on its short side (~50 dpi on a ballot)
BED_DARK = 0.5  # a pixel darker than this share of the paper level is print or bed
BED_RUN_MIN = 0.25  # the quick look: a bed shows along an edge of the image dark for at least this share of it
PAGE_MIN_SHARE = 0.5  # the page's hull covers at least this share of the image (else no page is told)
BED_MIN_SHARE = 0.01  # a bed is at least this share of the image (printed corner blocks a scanner cut into are less) ...
BED_DARK_SHARE = 0.9  # ... and this share of it is dark
# A border printed round the page (a Dominion-like frame) parts the paper outside it from the
# paper inside: pieces as light as paper (MARGIN_PAPER of its level: a grey bed, lit unevenly,
# is darker), at least MARGIN_WIDE_PX working pixels wide (about 0.06 in), MARGIN_MIN_SHARE
# of the image, within MARGIN_GAP_PX of the page's hull (the border's width) are page too
WASHED_PCT = 0.1  # the page's darkest print: this percentile of its pixels (every 3rd pixel both ways) ...
WASHED_OUT = 0.7  # ... of darkness (1 - it / paper) under this is a washed-out scan (good scans: 0.92 or more, blurred 0.83) ...
WASHED_NO_PRINT = 0.25  # ... unless under this too: a page with no print to speak of (a blank page, for its own check)
MARGIN_PAPER = 0.8
EDGE_BLUR_PX = 2  # the bed is judged this many working pixels or more from the page's outline
MARGIN_WIDE_PX = 3
MARGIN_GAP_PX = 6
MARGIN_MIN_SHARE = 0.002


@dataclass(frozen=True)
class Bed:
    """Where the page lies on a dark scanner bed: the page's outline (the convex hull of its
    paper, image pixels (x, y), shrunk one working pixel) and the paper level painted outside it."""

    outline_px: np.ndarray  # (n, 2) int32
    paper: int
    share: float  # of the image outside the outline


def find_bed(gray: np.ndarray) -> Bed | None:
    """The dark scanner bed round the page of a gray image, or None where the image shows none."""
    h, w = gray.shape[:2]
    k = max(1, min(h, w) // WORK_SIDE_PX)
    if h < 4 * k or w < 4 * k:
        return None
    paper = paper_level(gray[::k, ::k])  # the quick look: every k-th pixel's paper level, the edges' blocks
    if paper < PRINTED_MIN_PAPER:
        return None  # a dark image (the lid open, the lamp out): no page to tell
    if not any(_longest_run(edge < BED_DARK * paper) >= BED_RUN_MIN * edge.size for edge in _outer_ring(gray, k)):
        return None  # no dark bed along any edge (timing marks the scanner cut show short runs)
    small = cv2.resize(gray[: h // k * k, : w // k * k], (w // k, h // k), interpolation=cv2.INTER_AREA) if k > 1 else gray
    paper = paper_level(small)
    light = (small >= BED_DARK * paper).astype(np.uint8)
    count, labels, stats, _ = cv2.connectedComponentsWithStats(light, connectivity=8)
    if count < 2:
        return None
    largest = 1 + int(np.argmax(stats[1:, cv2.CC_STAT_AREA]))
    hull_mask = _hull_mask(labels == largest)
    # a border printed round the page cuts the paper outside it (a margin a few working
    # pixels wide) from the paper inside: such pieces, wide and touching the page, are page
    # too (a scanner's streak across the bed is no wider than a working pixel or two)
    paper_like = (small >= MARGIN_PAPER * paper).astype(np.uint8) & (1 - hull_mask)
    wide = cv2.morphologyEx(paper_like, cv2.MORPH_OPEN, np.ones((MARGIN_WIDE_PX,) * 2, np.uint8))
    _n, pieces, sizes, _ = cv2.connectedComponentsWithStats(wide, connectivity=8)
    near = cv2.dilate(hull_mask, np.ones((2 * MARGIN_GAP_PX + 1,) * 2, np.uint8)).astype(bool)
    margin = np.unique(pieces[near & (pieces > 0)])
    margin = margin[sizes[margin, cv2.CC_STAT_AREA] >= MARGIN_MIN_SHARE * light.size]
    if margin.size:
        hull_mask = _hull_mask(np.isin(pieces, margin) | (labels == largest))
    page = cv2.erode(hull_mask, np.ones((3, 3), np.uint8), borderType=cv2.BORDER_CONSTANT, borderValue=1)  # less its edge's shadow
    outside = page == 0
    share = float(outside.mean())
    # judged away from the page's edge (its blur, lighter than the bed, darker than paper)
    away = outside & (cv2.dilate(page, np.ones((2 * EDGE_BLUR_PX + 1,) * 2, np.uint8)) == 0)
    if 1.0 - share < PAGE_MIN_SHARE or share < BED_MIN_SHARE or not away.any() or float(1 - light[away].mean()) < BED_DARK_SHARE:
        return None
    shrunk, _ = cv2.findContours(page, cv2.RETR_EXTERNAL, cv2.CHAIN_APPROX_SIMPLE)
    outline = cv2.convexHull(np.concatenate(shrunk)).reshape(-1, 2).astype(np.float64) * k + (k - 1) / 2.0
    return Bed(np.round(outline).astype(np.int32), int(round(paper)), share)


def _hull_mask(piece: np.ndarray) -> np.ndarray:
    """The convex hull of a bool mask's pixels, filled (uint8)."""
    contours, _ = cv2.findContours(piece.astype(np.uint8), cv2.RETR_EXTERNAL, cv2.CHAIN_APPROX_SIMPLE)
    mask = np.zeros(piece.shape, np.uint8)
    cv2.fillConvexPoly(mask, cv2.convexHull(np.concatenate(contours)), 1)
    return mask


def _outer_ring(gray: np.ndarray, k: int) -> tuple[np.ndarray, ...]:
    """The image's top, bottom, left and right edges as the image area-reduced ``k`` times shows
    them (each pixel the mean of a k x k block: a dithered bed is dark there too), from the
    blocks along the edges alone."""
    h, w = gray.shape[:2]
    rows, cols = h // k * k, w // k * k
    return (gray[:k, :cols].reshape(k, cols // k, k).mean(axis=(0, 2)),
            gray[rows - k: rows, :cols].reshape(k, cols // k, k).mean(axis=(0, 2)),
            gray[:rows, :k].reshape(rows // k, k, k).mean(axis=(1, 2)),
            gray[:rows, cols - k: cols].reshape(rows // k, k, k).mean(axis=(1, 2)))


def _longest_run(dark: np.ndarray) -> int:
    """The longest run of True in a 1-d boolean array."""
    edges = np.flatnonzero(np.diff(np.concatenate([[0], dark.astype(np.int8), [0]])))
    return int((edges[1::2] - edges[::2]).max()) if edges.size else 0


def print_darkness(gray: np.ndarray) -> tuple[float, float]:
    """The page's paper level and its darkest print's darkness (0 paper, 1 black): the
    WASHED_PCT percentile of every third pixel both ways, against the paper level."""
    sample = gray[::3, ::3]
    paper = paper_level(sample)
    if sample.dtype != np.uint8 or sample.size == 0:
        return paper, 1.0
    counts = np.cumsum(cv2.calcHist([np.ascontiguousarray(sample)], [0], None, [256], [0, 256]).ravel())
    darkest = float(np.searchsorted(counts, WASHED_PCT / 100.0 * sample.size))
    return paper, max(0.0, 1.0 - darkest / paper)


def print_restored(gray: np.ndarray, blanks: float | None) -> np.ndarray:
    """``gray`` with its darkness stretched about the paper level where its print is washed out
    (the module's last part) and the election's blanks print dark (``blanks``: the median
    darkness of their darkest print, :func:`print_darkness`; None without blanks): a copy,
    its print as dark as the blanks', or ``gray`` itself where its print is dark enough, there
    is none to speak of, or the blanks print as light (a ballot printed in a light ink: its
    marks are as the voter made them)."""
    if blanks is None or blanks < WASHED_OUT:
        return gray
    paper, darkness = print_darkness(gray)
    if darkness >= WASHED_OUT or darkness < WASHED_NO_PRINT:
        return gray
    gain = blanks / darkness
    stretched = paper - (paper - gray.astype(np.float32)) * gain
    return np.clip(np.rint(stretched), 0, 255).astype(np.uint8)


def without_bed(gray: np.ndarray) -> np.ndarray:
    """``gray`` with its dark scanner bed (:func:`find_bed`) painted the paper level: a copy,
    or ``gray`` itself where it shows no bed."""
    bed = find_bed(gray)
    if bed is None:
        return gray
    page = np.zeros(gray.shape[:2], np.uint8)
    cv2.fillConvexPoly(page, bed.outline_px, 1)
    out = gray.copy()
    out[page == 0] = bed.paper
    return out
