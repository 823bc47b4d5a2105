"""Score voting targets: raw, threshold-free measurements of the ink on and around each oval.

All targets of a page are scored together (no per-target Python work on pixels):

1. **Canonical windows.** The registration's homography is linearised at every target centre
   and one ``cv2.remap`` call resamples all windows (box plus :data:`MARGIN_IN`) at
   :data:`CANON_PPI` into one stack: skew, stretch and scan resolution are gone; a small
   residual shift is left. Masks and templates are computed once per box size (LRU cache).
2. **Darkness.** Lightly blurred (undoes G4 dithering and JPEG noise), ``1 - gray / paper``
   with ``paper`` the window's 90th percentile (local paper level: scans drift in brightness).
3. **Local refinement.** The rendered blank oval (zero-mean) is correlated with each window
   over +-:data:`SEARCH_PX` canonical pixels (``cv2.matchTemplate``), biased towards no shift.
4. **Ink** is darkness beyond the printed outline (rendered, blurred, dilated).
5. **Features** (all targets at once):
   ``fill_score`` mean ink in the interior; *level*, the ink that :data:`LEVEL_SHARE` of the
   interior reaches (an even fill: pen, pencil, an erasure's residue); *cover*, the interior
   share of dark ink (>= :data:`DARK`); ``stroke_score``, the span of dark ink across the oval
   (interior plus a thin band outside the outline) as a fraction of its width or height
   (checks, X's and scribbles span >= 0.7; a small partial mark <= 0.55); ``ring_score``, the
   share of 16 sectors 0.035-0.12 in around the oval crossed by a stroke, or ink both above
   and below the option's printed name (against a blank: a loop round the name wherever the
   vendor prints it, :mod:`scanpipe.imaging.marks_loops`); ``damage_score``, the strongest of a stain (paper
   around the oval, pen strokes lifted off by a brightness dilation, darker than the page's
   paper plane fitted through all windows), a fold (a light line crossing both strips left and
   right of the oval at the oval's height) and a tear (a part of the printed outline missing:
   no paper); ``write_in_score``, columns of the write-in area crossed by ink (looked for
   also three times finer, each block's darkest kept: a ballpoint's hairline).
6. ``score`` maps level, cover and span onto one scale with fixed anchors taken from the mark
   catalogue (``docs/mark-catalogue.md``): a value at the gap between no-vote and ambiguous marks
   maps to :data:`LOW_ANCHOR`, at the gap between ambiguous marks and votes to
   :data:`HIGH_ANCHOR`; ``score`` is the largest of the three. Thresholds that split it are
   data (:mod:`scanpipe.classify`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from functools import lru_cache

import cv2
import numpy as np

from scanpipe.types import Box, DamageCause, LayoutPage, Registration, TargetDef, TargetScore

CANON_PPI = 120.0  # pixels per inch of the canonical target windows
MARGIN_IN = 0.19  # window = box plus this on every side
SEARCH_PX = 4  # local refinement, canonical px (0.033 in)
SHIFT_PRIOR = 0.1  # correlation penalty (share of the best) at the search radius
OUTLINE_IN = 0.012  # printed outline width
INTERIOR_INSET_IN = 0.012  # interior = inside the outline, shrunk by this
BLUR_SIGMA_PX = 1.0
BLANK_SIGMA_PX = 1.4
OUTLINE_DARKNESS = 0.95
PAPER_PCT = 90
DARK = 0.35  # ink darkness counted as a dark (pen or pencil stroke) pixel
LEVEL_SHARE = 0.6  # level = the ink 60% of the interior reaches
SPAN_BAND_IN = (0.016, 0.035)  # span zone outside the oval: clear of the outline, inside the ring
SPAN_TRIM = 0.03  # span = extent between the 3% and 97% quantiles of dark pixels
SPAN_MIN_SHARE = 0.05  # a span counts only with dark ink over this share of the interior's area
SPECKLED_SHARE = 0.5  # a card whose targets (of one shape) show specks this often, ...
SPECKLED_MIN = 6  # ... and at least this many of them, is speckled ...
SPECK_PX = 3  # ... and without pieces of dark ink this small (specks of a speckled bilevel scan: a pen's stroke is a line of pixels, a dot a dozen)
RING_IN = (0.035, 0.12)
RING_SECTORS = 16
RING_STROKE = 0.3
RING_NEED_PX = 3.0  # stroke pixels that make a sector crossed
NEAR_GROW_IN = 0.06  # stain: the box grown by this, in 4 quadrants, ...
NEAR_CLEAR_IN = 0.015  # ... outside the oval by at least this, ...
STROKE_MAX_IN = 0.06  # a brightness dilation this wide lifts pen strokes off the paper
STAIN_SIGMA_PX = 1.5  # (after a blur that evens out dithering and noise)
STAIN_PCT = 0.2  # a quadrant's paper level: this quantile of it, darkest first
STRIP_IN = (0.04, 0.15)  # fold: strips this far left / right of the box
STRIP_ROWS_IN = 0.03  # ... over the box's rows grown by this
FOLD_SLOPES = (-0.04, 0.0, 0.04)  # candidate fold slopes (rows per column): +-2.3 degrees, +-1 px slack
FOLD_MAX_DARKNESS = 0.6  # a darker line is pen, not a crease
OUTLINE_SECTORS = 12
OUTLINE_BAND_IN = 0.018  # tear: outline darkness searched within this of its centre line
SIDE_PPI = 60.0  # name and write-in windows
NAME_X_IN = (0.20, 0.42)  # right of the box: inside any printed name, beyond stray lines
NAME_ABOVE_IN = (-0.11, -0.025)  # rows relative to the box top
NAME_BELOW_IN = (0.025, 0.11)  # rows relative to the box bottom
WRITE_IN_INK = 0.35
WRITE_IN_FINE = 3  # a write-in area's ink also looked for this much finer than SIDE_PPI, each block's darkest kept
WRITE_IN_SPECK_PX = 6  # on a speckled card, pieces of ink this small (a speck's blur, 0.04 in across at SIDE_PPI) in a write-in area are specks
WRITE_IN_EDGE_IN = 0.03  # the area's rim is not read: print beside it spills in with a scan's error
# a name written small and light (a blue ballpoint's thin strokes, a pencil) stays under
# WRITE_IN_INK at SIDE_PPI: fainter ink counts too where it forms a word, a piece (its letters
# joined a pixel apart) at least WRITE_IN_WORD_IN wide; not on a speckled card, whose specks join so.
# Looked for at each of WRITE_IN_FAINT_INK: a light pencil's name reaches 0.2 at most (its letters
# fall apart at the first level), and at the second the print's fringe or the area's other faint
# ink may join a darker word into one too tall or too full to be a word (found at the first)
WRITE_IN_FAINT_INK = (0.18, 0.12)
WRITE_IN_WORD_IN = 0.3
WRITE_IN_WORD_MIN_PX = 3  # a word's height at SIDE_PPI (0.05 in): a rule scans 1-2 pixels thick
WRITE_IN_WORD_FILL = 0.7
# Ink that crosses the write-in area from outside it is no name written there (a "SAMPLE"
# stamp's letters and frame, a stain): a piece of added ink (the blank's print bridged where it
# crosses it), seen within PASSING_WINDOW_IN of the area, reaching PASSING_REACH_IN or more past
# it, PASSING_OUT_SHARE or more of it outside or, in the area, a straight line PASSING_LINE_IN
# long (a stamp's frame at a slant; its ink off the line PASSING_LINE_PX at most, a standard deviation
# at SIDE_PPI: a written word, even flat, is a third of its letters' height, 1.5 px and more),
# and no darker inside than outside (PASSING_DARKER: a name written under a stamp or a stain
# darkens it there)
PASSING_WINDOW_IN = 0.6
PASSING_REACH_IN = 0.25
PASSING_OUT_SHARE = 0.6
PASSING_LINE_IN = 0.5
PASSING_LINE_PX = 1.2
PASSING_DARKER = 0.1
PASSING_INK = 0.18
LINE_IN = 0.4  # a straight stroke this long in a write-in area is printed, not written ...
LINE_SIDE_PX = 3  # ... unless within this many pixels (SIDE_PPI) along both its sides ...
LINE_SIDE_INK = 0.3  # ... this share of its length shows ink: a word's letters, rising above and falling below it
# Score anchors from the catalogue: (feature value, mapped score) knots, monotone.
LOW_ANCHOR, HIGH_ANCHOR = 0.25, 0.5
# Knots sit in the gaps between measured ranges (after scanning, any format) of the kinds:
# level: trace/dot <= 0.05 | erasure 0.09-0.22 | pencil >= 0.33;
# cover: dot <= 0.10 | small partial 0.2-0.45 | full fill, pencil >= 0.5 (partial fill, check: span);
# span: small partial <= 0.55 | check, X, partial fill >= 0.7.
LEVEL_KNOTS = ((0.0, 0.0), (0.07, LOW_ANCHOR), (0.28, HIGH_ANCHOR), (1.0, 1.0))
COVER_KNOTS = ((0.0, 0.0), (0.16, LOW_ANCHOR), (0.62, HIGH_ANCHOR), (1.0, 1.0))
SPAN_KNOTS = ((0.0, 0.0), (0.4, 0.0), (0.62, HIGH_ANCHOR), (1.0, 1.0))
# Damage sub-scores -> [0, 1]: a value of the scale is full damage.
STAIN_SCALE = 0.12  # paper darkening vs the page
FOLD_SCALE = 0.12  # line darkness in both strips
PAGE_FIT_TOL = 0.03  # page paper plane: samples darker than the fit by more are not paper
PAGE_GRID = 48  # ... sampled on a grid of about this many points along the short side ...
PAGE_EDGE_IN = 0.15  # ... those on the sheet at least this far inside its edges (where the registration says) ...
SHADE_PAPER = 0.5  # a shadow's paper: grid samples this share of the plane or lighter (print is darker) ...
SHADE_MIN_SAMPLES = 6  # ... at least this many of them in a grid column or row
PAGE_MIN_ON = 0.3  # ... unless fewer than this share of them are (a registration to doubt: the whole image then)
LIGHT_PRINT = (0.12, 0.45)  # the blank's light print: darkness from the first (its paper's noise is less) to the second
LIGHT_SAMPLE_PPI = 50.0  # ... sampled this finely ...
LIGHT_MIN_POINTS = 200  # ... at this many points at least (else the blank has none to speak of), about LIGHT_MAX_POINTS at most ...
LIGHT_MAX_POINTS = 2000
TINT_BLACK = 0.7  # ... printed black on a card whose darkness there has this median


@dataclass(frozen=True, slots=True)
class _Geometry:
    """Masks and templates of the canonical window for one box size (read-only)."""

    shape: tuple[int, int]  # window (rows, cols), before the refinement crop
    crop: tuple[int, int]  # aligned crop (rows, cols) = shape - 2 * SEARCH_PX
    blank: np.ndarray  # expected print darkness of the crop (outline, dilated)
    template: np.ndarray  # zero-mean outline template over the match region of the crop
    match: tuple[int, int, int, int]  # match region (r0, r1, c0, c1) in crop coordinates
    interior: np.ndarray  # flat indices (crop) of the interior
    span_zone: np.ndarray  # bool crop mask: interior plus a band outside the outline
    inside: np.ndarray  # bool crop mask: the interior
    ring: tuple[np.ndarray, np.ndarray, np.ndarray]  # annulus pixels (flat, sorted by sector), sector starts, counts
    near: np.ndarray  # (4, k) flat crop indices of the grown box's quadrants
    outline: tuple[np.ndarray, np.ndarray, np.ndarray]  # pixels by (sector, bin), group starts, counts
    outline_bins: int
    fold_rows: np.ndarray  # crop rows where a fold is looked for
    fold_cols: np.ndarray  # crop columns of the strips left and right of the oval
    fold_left: int  # how many of them are left of it
    fold_shear: tuple[np.ndarray, ...]  # per slope, the row offset of every strip column
    axes_px: tuple[float, float]  # oval width and height in canonical px
    span_cols: slice
    span_rows: slice


def score_targets(
    gray: np.ndarray,
    registration: Registration,
    page: LayoutPage,
    *,
    reference: np.ndarray | None = None,
    reference_dpi: float | None = None,
    reference_memo: dict[tuple[object, ...], object] | None = None,
) -> tuple[TargetScore, ...]:
    """Score every target of ``page`` on the upright grayscale card image.

    Parameters
    ----------
    gray : (H, W) uint8 array, the card after any 180-degree turn.
    registration : maps layout inches to pixels of ``gray``.
    page : the layout page; one score per ``page.targets``, same order.
    reference, reference_dpi : the layout's blank scan. With one, every target is scored
        against the blank's own print (:mod:`scanpipe.imaging.marks_blank`); without, against
        the rendered outline of our ovals (this module).
    reference_memo : kept with the blank (:attr:`~scanpipe.imaging.reference.PageModel.memo`):
        what the scoring measures of the blank alone is measured once, for every card.
    """
    assert gray.ndim == 2 and gray.dtype == np.uint8, "gray must be a 2-D uint8 image"
    hom = np.asarray(registration.homography, dtype=np.float64).reshape(3, 3)
    targets = page.targets
    out: list[TargetScore | None] = [None] * len(targets)
    groups: dict[tuple[float, float], list[int]] = {}
    for i, t in enumerate(targets):
        groups.setdefault((round(t.box_in[2], 4), round(t.box_in[3], 4)), []).append(i)
    ref_dpi = reference_dpi if reference_dpi is not None else page.reference_dpi
    plane = _page_paper(gray, hom, page.size_in) if targets else (255.0, 0.0, 0.0)
    against_blank = reference is not None and ref_dpi is not None and targets
    blank_memo: dict[tuple[object, ...], object] = reference_memo if reference_memo is not None else {}
    if against_blank and reference is not None:
        if ("paper", ref_dpi) not in blank_memo:
            blank_memo[("paper", ref_dpi)] = _page_paper(reference)
        ref_plane: tuple[float, float, float] = blank_memo[("paper", ref_dpi)]  # type: ignore[assignment]
    else:
        ref_plane = plane
    memo: dict[str, tuple[np.ndarray, np.ndarray]] = {}  # what the page's groups share (scoring against the blank)
    tints_black = bool(against_blank and reference is not None and ref_dpi is not None
                       and tints_printed_black(gray, hom, reference, ref_dpi, blank_memo))
    # targets with no name of their own right of them (the blank prints its names on the left, or
    # a column's rule stands between): a ring looked for there would be another column's
    nameless_right = np.zeros(len(targets), bool)
    if against_blank and reference is not None and ref_dpi is not None:
        from scanpipe.imaging.marks_loops import no_name_right

        nameless_right = no_name_right(reference, ref_dpi, targets, blank_memo, NAME_X_IN[1])
    for (w_in, h_in), idx in groups.items():
        group = [targets[i] for i in idx]
        if against_blank:
            from scanpipe.imaging.marks_blank import score_group_against_blank

            assert reference is not None and ref_dpi is not None
            scored = score_group_against_blank(gray, hom, group, _geometry(w_in, h_in), plane, reference, ref_dpi, ref_plane,
                                               memo=memo, page_boxes=tuple(t.box_in for t in targets), blank_memo=blank_memo,
                                               tints_black=tints_black, page_size=page.size_in,
                                               nameless_right=nameless_right[idx])
        else:
            scored = _score_group(gray, hom, group, _geometry(w_in, h_in), plane, reference, ref_dpi)
        for i, s in zip(idx, scored):
            out[i] = s
    if against_blank and reference is not None and ref_dpi is not None:
        from scanpipe.imaging.marks_loops import name_loops

        # a loop around an option's printed name, wherever the vendor prints it: a circled name
        loops = name_loops(gray, hom, reference, ref_dpi, targets, blank_memo)
        out = [s if s is None or loops[i] <= s.ring_score else replace(s, ring_score=float(loops[i])) for i, s in enumerate(out)]
        # a voter's mark on the blank itself (a voted card used as the blank) hides the same mark on
        # every card: that target is damaged, for a person
        key = ("marked on the blank", ref_dpi, tuple(t.box_in for t in targets))
        if key not in blank_memo:
            from scanpipe.imaging.blank_marks import marked_on_blank

            blank_memo[key] = marked_on_blank(reference, ref_dpi, [t.box_in for t in targets])
        marked: np.ndarray = blank_memo[key]  # type: ignore[assignment]
        out = [replace(s, damage_score=1.0, damage_cause=DamageCause.MARKED_ON_BLANK) if s is not None and marked[i] else s
               for i, s in enumerate(out)]
        # a stamp, a signature or a long line across the card entering a target's box: for a person
        crossed = targets_crossed_by_ink_across(gray, hom, plane, reference, ref_dpi, ref_plane, page, blank_memo)
        # (a target a stroke already crosses, or the blank marks, keeps that cause: it says more)
        out = [replace(s, damage_score=1.0, damage_cause=DamageCause.INK_ACROSS) if s is not None and crossed[i]
               and s.damage_score < 1.0 else s for i, s in enumerate(out)]
    return tuple(s for s in out if s is not None)


def damage_causes(measures: Sequence[np.ndarray], causes: Sequence[DamageCause]) -> list[DamageCause | None]:
    """Per target, the cause of the strongest of the damage ``measures`` (one array per cause,
    a value per target; the first where two are equal), None where none measured any."""
    stacked = np.stack(measures)
    strongest = np.argmax(stacked, axis=0)
    return [causes[int(k)] if stacked[k, i] > 0 else None for i, k in enumerate(strongest)]


def targets_crossed_by_ink_across(gray: np.ndarray, hom: np.ndarray, plane: tuple[float, float, float], reference: np.ndarray,
                                  ref_dpi: float, ref_plane: tuple[float, float, float], page: LayoutPage,
                                  blank_memo: dict[tuple[object, ...], object]) -> np.ndarray:
    """Per target of ``page``, whether a stamp, a signature or another long line of ink across
    the card enters its box (:mod:`scanpipe.imaging.marks_across`; ``plane``, ``ref_plane``:
    the card's and the blank's paper, :func:`_page_paper`)."""
    from scanpipe.imaging import marks_across

    key = ("blank print in the frame", ref_dpi, page.size_in)
    if key not in blank_memo:  # kept with the blank in 256 levels (a megabyte a page, not four)
        near_dark = marks_across.blank_print(
            marks_across.darkness_in_frame(reference, np.diag([ref_dpi, ref_dpi, 1.0]), ref_plane, page.size_in))
        blank_memo[key] = np.round(near_dark * 255.0).astype(np.uint8)
    kept: np.ndarray = blank_memo[key]  # type: ignore[assignment]
    near = kept.astype(np.float32) / 255.0
    added = marks_across.added_ink(marks_across.darkness_in_frame(gray, hom, plane, page.size_in), near)
    return marks_across.crossed_by_ink_across(added, near, [t.box_in for t in page.targets], [t.write_in_area_in for t in page.targets])


def tints_printed_black(gray: np.ndarray, hom: np.ndarray, reference: np.ndarray, ref_dpi: float,
                        blank_memo: dict[tuple[object, ...], object]) -> bool:
    """Whether the card prints the blank's light print (grey rules, tinted bands: darkness in
    LIGHT_PRINT, away from darker print) black: a bilevel scan, thresholded, of a grey blank
    (a scanned one, or one drawn from the vendor's PDF). The card's darkness at those places of
    the blank, sampled every 1/LIGHT_SAMPLE_PPI in, has its median at TINT_BLACK or more. Then
    ink drawn round a name or in a write-in area is looked for only where the blank shows
    paper: on its light print the card cannot show a pen apart from the print."""
    key = ("light print", ref_dpi)
    if key not in blank_memo:
        step = max(1, int(round(ref_dpi / LIGHT_SAMPLE_PPI)))
        small = reference[::step, ::step].astype(np.float32)
        dark = 1.0 - small / max(float(np.percentile(small, 90)), 1.0)
        light = (dark >= LIGHT_PRINT[0]) & (dark < LIGHT_PRINT[1])
        light &= cv2.dilate((dark >= LIGHT_PRINT[1]).astype(np.uint8), np.ones((3, 3), np.uint8)) == 0  # not a dark stroke's edge
        ys, xs = np.nonzero(light)
        every = max(1, len(xs) // LIGHT_MAX_POINTS)  # a median needs no more
        blank_memo[key] = np.stack([xs[::every] * step / ref_dpi, ys[::every] * step / ref_dpi], 1) if len(xs) >= LIGHT_MIN_POINTS else None
    points = blank_memo[key]
    if points is None:
        return False
    assert isinstance(points, np.ndarray)
    on_card = cv2.perspectiveTransform(points.reshape(-1, 1, 2), hom).reshape(-1, 2)
    h, w = gray.shape
    cols, rows = np.round(on_card[:, 0]).astype(int), np.round(on_card[:, 1]).astype(int)
    inside = (cols >= 0) & (cols < w) & (rows >= 0) & (rows < h)
    if inside.sum() < LIGHT_MIN_POINTS:
        return False
    paper = max(float(np.percentile(gray[::8, ::8], 90)), 1.0)
    return float(np.median(1.0 - gray[rows[inside], cols[inside]] / paper)) >= TINT_BLACK


# --------------------------------------------------------------------------------------
# Geometry (cached per box size)


def _px(inches: float) -> int:
    return int(round(inches * CANON_PPI))


def _render_outline(shape: tuple[int, int], center: tuple[float, float], half: tuple[float, float],
                    sigma: float) -> np.ndarray:
    img = np.zeros(shape, np.float32)
    t = OUTLINE_IN * CANON_PPI
    s = 16
    cv2.ellipse(img, (int(round(center[0] * s)), int(round(center[1] * s))),
                (int(round((half[0] - t / 2) * s)), int(round((half[1] - t / 2) * s))), 0, 0, 360, 1.0,
                max(1, int(round(t))), cv2.LINE_AA, 4)
    return cv2.GaussianBlur(img, (0, 0), sigma) * OUTLINE_DARKNESS


@lru_cache(maxsize=32)
def _geometry(w_in: float, h_in: float) -> _Geometry:
    m = _px(MARGIN_IN)
    shape = (_px(h_in) + 2 * m, _px(w_in) + 2 * m)
    crop = (shape[0] - 2 * SEARCH_PX, shape[1] - 2 * SEARCH_PX)
    off = m - SEARCH_PX  # box origin in crop coordinates
    half = (w_in * CANON_PPI / 2, h_in * CANON_PPI / 2)
    center = (off + half[0] - 0.5, off + half[1] - 0.5)
    rows, cols = np.mgrid[0:crop[0], 0:crop[1]].astype(np.float32)
    ex, ey = (cols - center[0]) / half[0], (rows - center[1]) / half[1]
    rho = np.hypot(ex, ey)
    oval = rho <= 1.0
    dist_out = cv2.distanceTransform((~oval).astype(np.uint8), cv2.DIST_L2, 5) / CANON_PPI
    inset = (OUTLINE_IN + INTERIOR_INSET_IN) * CANON_PPI
    interior = ((cols - center[0]) / (half[0] - inset)) ** 2 + ((rows - center[1]) / (half[1] - inset)) ** 2 <= 1.0
    span_zone = interior | ((dist_out >= SPAN_BAND_IN[0]) & (dist_out <= SPAN_BAND_IN[1]))
    angle = np.arctan2(ey, ex)
    annulus = (dist_out >= RING_IN[0]) & (dist_out <= RING_IN[1])
    sector = ((angle + np.pi) / (2 * np.pi) * RING_SECTORS).astype(int) % RING_SECTORS
    ring = _groups(np.where(annulus, sector, -1).ravel(), RING_SECTORS)
    g = _px(NEAR_GROW_IN)
    grown = (cols >= off - g) & (cols < off + _px(w_in) + g) & (rows >= off - g) & (rows < off + _px(h_in) + g)
    grown &= dist_out >= NEAR_CLEAR_IN  # paper only: not the oval, its outline or their blur
    quadrant = (cols >= center[0]).astype(int) + 2 * (rows >= center[1]).astype(int)
    lists = [np.flatnonzero(grown.ravel() & (quadrant.ravel() == k)) for k in range(4)]
    k_min = min(len(v) for v in lists)
    near = np.stack([v[:k_min] for v in lists])
    # outline: distance (px) from the outline's centre line, measured along the normalised radius
    t = OUTLINE_IN * CANON_PPI
    radial_px = (rho - (1 - t / 2 / min(half))) * min(half)
    band = OUTLINE_BAND_IN * CANON_PPI
    bins = int(np.ceil(2 * band))
    rbin = np.floor((radial_px + band) / (2 * band) * bins).astype(int)
    osector = ((angle + np.pi) / (2 * np.pi) * OUTLINE_SECTORS).astype(int) % OUTLINE_SECTORS
    inband = (rbin >= 0) & (rbin < bins)
    outline = _groups(np.where(inband, osector * bins + rbin, -1).ravel(), OUTLINE_SECTORS * bins)
    blank = cv2.dilate(_render_outline(crop, center, half, BLANK_SIGMA_PX), np.ones((3, 3), np.uint8))
    pad = _px(0.02)
    r0, r1 = max(0, off - pad - SEARCH_PX), min(crop[0], off + _px(h_in) + pad + SEARCH_PX)
    c0, c1 = max(0, off - pad - SEARCH_PX), min(crop[1], off + _px(w_in) + pad + SEARCH_PX)
    full = _render_outline(shape, (center[0] + SEARCH_PX, center[1] + SEARCH_PX), half, BLUR_SIGMA_PX)
    template = full[r0 + SEARCH_PX:r1 + SEARCH_PX, c0 + SEARCH_PX:c1 + SEARCH_PX].copy()
    template -= template.mean()
    s0, s1 = _px(STRIP_IN[0]), _px(STRIP_IN[1])
    left_cols = np.arange(max(0, off - s1), off - s0)
    fold_cols = np.concatenate([left_cols, np.arange(off + _px(w_in) + s0, min(crop[1], off + _px(w_in) + s1))])
    reach = int(np.ceil(float(np.abs(FOLD_SLOPES).max()) * (fold_cols.max() - center[0]))) + 1
    fold_rows = np.arange(max(reach, off - _px(STRIP_ROWS_IN)), min(crop[0] - reach, off + _px(h_in) + _px(STRIP_ROWS_IN)))
    fold_shear = tuple(np.round(s * (fold_cols - center[0])).astype(int) for s in FOLD_SLOPES)
    zone_cols = np.flatnonzero(span_zone.any(axis=0))
    zone_rows = np.flatnonzero(span_zone.any(axis=1))
    for a in (blank, template, interior, span_zone, near, *ring, *outline):
        a.setflags(write=False)
    return _Geometry(shape, crop, blank, template, (r0, r1, c0, c1), np.flatnonzero(interior.ravel()), span_zone, interior,
                     ring, near, outline, bins, fold_rows, fold_cols, len(left_cols), fold_shear, (2 * half[0], 2 * half[1]),
                     slice(zone_cols[0], zone_cols[-1] + 1), slice(zone_rows[0], zone_rows[-1] + 1))


def _groups(label: np.ndarray, count: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Pixels grouped by label 0..count-1 (-1 = none): sorted indices, group starts, sizes.

    A small target's window may leave a group empty (an outline band's inner bin of an oval a
    few pixels tall): its size is 0 and its start a valid index (``np.add.reduceat`` then gives
    some pixel's value there, which the callers mask with ``sizes > 0``)."""
    idx = np.flatnonzero(label >= 0)
    idx = idx[np.argsort(label[idx], kind="stable")]
    sizes = np.bincount(label[idx], minlength=count)
    starts = np.minimum(np.concatenate([[0], np.cumsum(sizes)[:-1]]), max(0, len(idx) - 1))
    return idx, starts, sizes


# --------------------------------------------------------------------------------------
# Windows


def _jacobians(hom: np.ndarray, centers_in: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Image points (n, 2) and Jacobians (n, 2, 2) of the homography at layout points (n, 2)."""
    pts = np.hstack([centers_in, np.ones((len(centers_in), 1))]) @ hom.T
    w = pts[:, 2]
    xy = pts[:, :2] / w[:, None]
    jac = (hom[None, :2, :2] - xy[:, :, None] * hom[None, 2:3, :2]) / w[:, None, None]
    return xy, jac


def _windows(gray: np.ndarray, hom: np.ndarray, origins_in: np.ndarray, sizes_in: np.ndarray,
             shape: tuple[int, int], ppi: float) -> tuple[np.ndarray, np.ndarray]:
    """Resample n windows (origin (x, y) inches, ``shape`` px at ``ppi``) with one remap.

    Returns the (n, rows, cols) float32 stack and the Jacobians (n, 2, 2) in image px per inch.
    """
    centers = origins_in + sizes_in / 2
    xy, jac = _jacobians(hom, centers)
    grid = _grid(shape, ppi)  # (2, P) inches from the window origin
    base = xy + np.einsum("nij,nj->ni", jac, origins_in - centers) - 0.5  # image px of the origin
    b, j = base.astype(np.float32), jac.astype(np.float32)
    gx, gy = grid[0][None, :], grid[1][None, :]
    n = len(origins_in)
    mx = (b[:, 0:1] + j[:, 0, 0:1] * gx + j[:, 0, 1:2] * gy).reshape(n * shape[0], shape[1])
    my = (b[:, 1:2] + j[:, 1, 0:1] * gx + j[:, 1, 1:2] * gy).reshape(n * shape[0], shape[1])
    win = cv2.remap(gray, mx, my, cv2.INTER_LINEAR, borderMode=cv2.BORDER_REPLICATE)
    return win.reshape(n, shape[0], shape[1]).astype(np.float32), jac


@lru_cache(maxsize=32)
def _grid(shape: tuple[int, int], ppi: float) -> np.ndarray:
    v, u = np.mgrid[0:shape[0], 0:shape[1]].astype(np.float32)
    grid = np.stack([(u.ravel() + 0.5) / ppi, (v.ravel() + 0.5) / ppi])
    grid.setflags(write=False)
    return grid


def _paper(stack: np.ndarray) -> np.ndarray:
    """Paper level of each window: the 90th percentile of a sparse sample of its pixels."""
    flat = stack[:, ::2, ::3].reshape(len(stack), -1)
    k = int(PAPER_PCT / 100 * (flat.shape[1] - 1))
    return np.maximum(np.partition(flat, k, axis=1)[:, k], 1.0)


def _best_shifts(dark: np.ndarray, geo: _Geometry) -> tuple[np.ndarray, np.ndarray]:
    """Integer (dx, dy) per window maximising the outline correlation, biased towards zero."""
    r0, r1, c0, c1 = geo.match
    th, tw = geo.template.shape
    yy, xx = np.mgrid[-SEARCH_PX:SEARCH_PX + 1, -SEARCH_PX:SEARCH_PX + 1]
    penalty = SHIFT_PRIOR * (xx**2 + yy**2) / float(SEARCH_PX**2)
    dx, dy = np.zeros(len(dark), int), np.zeros(len(dark), int)
    for k in range(len(dark)):
        region = dark[k, r0:r0 + th + 2 * SEARCH_PX, c0:c0 + tw + 2 * SEARCH_PX]
        corr = cv2.matchTemplate(region, geo.template, cv2.TM_CCORR)
        top = float(corr.max())
        if not top > 1e-6:
            continue
        iy, ix = np.unravel_index(int(np.argmax(corr - penalty * top)), corr.shape)
        dx[k], dy[k] = ix - SEARCH_PX, iy - SEARCH_PX
    return dx, dy


# --------------------------------------------------------------------------------------
# A group of same-sized targets


def _score_group(gray: np.ndarray, hom: np.ndarray, targets: list[TargetDef], geo: _Geometry,
                 plane: tuple[float, float, float], reference: np.ndarray | None,
                 ref_dpi: float | None) -> list[TargetScore]:
    n = len(targets)
    boxes = np.array([t.box_in for t in targets], np.float64)
    origins = boxes[:, :2] - MARGIN_IN
    sizes = np.repeat([[geo.shape[1] / CANON_PPI, geo.shape[0] / CANON_PPI]], n, axis=0)
    win, jac = _windows(gray, hom, origins, sizes, geo.shape, CANON_PPI)
    win = cv2.GaussianBlur(win.reshape(n * geo.shape[0], geo.shape[1]), (0, 0), BLUR_SIGMA_PX).reshape(win.shape)
    paper = _paper(win)
    dark = np.clip(1.0 - win / paper[:, None, None], 0.0, 1.0)
    dx, dy = _best_shifts(dark, geo)
    ch, cw = geo.crop
    r0, c0 = SEARCH_PX + dy, SEARCH_PX + dx
    aligned = np.stack([dark[k, r0[k]:r0[k] + ch, c0[k]:c0[k] + cw] for k in range(n)])
    gray_aligned = np.stack([win[k, r0[k]:r0[k] + ch, c0[k]:c0[k] + cw] for k in range(n)])
    ink = np.clip(aligned - geo.blank[None], 0.0, 1.0)
    flat = ink.reshape(n, -1)
    inner = flat[:, geo.interior]
    fill = inner.mean(axis=1)
    k = int((1 - LEVEL_SHARE) * (inner.shape[1] - 1))
    level = np.partition(inner, k, axis=1)[:, k]
    cover = (inner >= DARK).mean(axis=1)
    stroke = _span(ink, geo, len(geo.interior))
    ring = _ring(flat, geo)
    centers_px = _jacobians(hom, boxes[:, :2] + boxes[:, 2:] / 2)[0]
    measures = [_stain(gray_aligned, plane, centers_px, geo), _fold(aligned, geo), _tear(aligned.reshape(n, -1), geo)]
    damage = np.maximum.reduce(measures)
    causes = damage_causes(measures, (DamageCause.STAIN, DamageCause.FOLD, DamageCause.TEAR))
    score = np.maximum.reduce([_knots(level, LEVEL_KNOTS), _knots(cover, COVER_KNOTS), _knots(stroke, SPAN_KNOTS)])
    name_ring = _name_rings(gray, hom, targets)
    shift_px = np.einsum("nij,nj->ni", jac, np.stack([dx, dy], 1) / CANON_PPI)
    corners_all = _boxes_px(hom, boxes)
    out = []
    for i, t in enumerate(targets):
        corners = corners_all[i]
        sx, sy = float(shift_px[i, 0]), float(shift_px[i, 1])
        out.append(TargetScore(
            contest=t.contest, option=t.option, score=float(score[i]), fill_score=float(fill[i]),
            stroke_score=float(stroke[i]), ring_score=float(max(ring[i], name_ring[i])),
            damage_score=float(damage[i]), damage_cause=causes[i],
            write_in_score=_write_in_score(gray, hom, t.write_in_area_in, reference, ref_dpi),
            box_px=(corners[0] + sx, corners[1] + sy, corners[2], corners[3]), shift_px=(sx, sy),
        ))
    return out


def _knots(values: np.ndarray, knots: tuple[tuple[float, float], ...]) -> np.ndarray:
    xs, ys = zip(*knots)
    return np.interp(values, xs, ys)


def _span(ink: np.ndarray, geo: _Geometry, interior_px: float | np.ndarray, visible: np.ndarray | None = None,
          ignore: np.ndarray | None = None) -> np.ndarray:
    """Extent of dark ink in the span zone across the oval: max of width and height shares;
    on a speckled card specks are left out (:func:`_without_specks`): a bilevel scan of
    coloured stock thresholded near its paper speckles every box and roughens its printed
    outline, and a few specks spread the extent of a hesitation dot across the box.

    ``visible`` (per target, the window's pixels where added ink can show at all: not the
    blank's print): the shares are of the oval's axes or, where less, of how far the zone
    shows across the rows the ink lies in (down: the columns). An arrow's gap, boxed, has its
    tail and head printed where an oval's zone runs on past its outline: a line joining them
    shows only between them, and reaches across as a line through an oval does. ``ignore`` (per
    target, as ``ink``): pixels whose ink does not count at all."""
    zone = (ink >= DARK) & geo.span_zone[None]
    if ignore is not None:
        zone &= ~ignore
    zone = _without_specks(zone[:, geo.span_rows, geo.span_cols])
    count = zone.sum(axis=(1, 2))
    across: float | np.ndarray = geo.axes_px[0]
    down: float | np.ndarray = geo.axes_px[1]
    if visible is not None:
        shown = visible[:, geo.span_rows, geo.span_cols] & geo.span_zone[None, geo.span_rows, geo.span_cols]
        ink_rows, ink_cols = np.asarray(zone.any(axis=2)), np.asarray(zone.any(axis=1))
        across = np.minimum(across, _extent(np.asarray((shown & ink_rows[:, :, None]).any(axis=1)), geo.axes_px[0]))
        down = np.minimum(down, _extent(np.asarray((shown & ink_cols[:, None, :]).any(axis=2)), geo.axes_px[1]))
    span = np.maximum(_extent_share(zone.sum(axis=1).astype(np.float32), count, across),
                      _extent_share(zone.sum(axis=2).astype(np.float32), count, down))
    return np.where(count >= SPAN_MIN_SHARE * interior_px, np.clip(span, 0.0, 1.0), 0.0)


def _without_specks(zone: np.ndarray) -> np.ndarray:
    """``zone`` (targets, rows, columns; bool) without its 8-connected pieces of SPECK_PX
    pixels or fewer where the card is speckled (:func:`speckled`); else ``zone`` as it is."""
    specks = small_pieces(zone, SPECK_PX)
    return zone & ~specks if speckled(specks) else zone


def speckled(specks: np.ndarray) -> bool:
    """Whether a card is speckled, from each target's pieces of dark ink of SPECK_PX pixels or
    fewer (``specks``: :func:`small_pieces` of the targets' ink): most of its targets
    (SPECKLED_SHARE, and SPECKLED_MIN at least) show such a piece (a clean scan shows none by
    an empty target, a JPEG's noise one by a few; a thin stroke a light pen drew may break into
    such pieces, and keeps them on a clean card)."""
    shown = int(np.count_nonzero(specks.any(axis=(1, 2)))) if specks.size else 0
    return shown > 0 and shown >= max(SPECKLED_SHARE * len(specks), SPECKLED_MIN)


def small_pieces(zone: np.ndarray, px: int, within: np.ndarray | None = None) -> np.ndarray:
    """Per target (``zone``: targets, rows, columns; bool), its 8-connected pieces of ``px``
    pixels or fewer (and, given ``within`` of the same shape, lying wholly within it). All
    targets labelled at once (stacked, a blank row between)."""
    n, rows, cols = zone.shape
    if n == 0 or not zone.any():
        return np.zeros(zone.shape, bool)
    mosaic = np.zeros((n, rows + 1, cols), np.uint8)
    mosaic[:, :rows] = zone
    count, labels, stats, _ = cv2.connectedComponentsWithStats(mosaic.reshape(n * (rows + 1), cols), connectivity=8)
    small = stats[:, cv2.CC_STAT_AREA] <= px
    small[0] = False
    if within is not None:
        outside = np.ones((n, rows + 1, cols), bool)
        outside[:, :rows] = ~within
        small &= np.bincount(labels[outside.reshape(labels.shape)], minlength=count) == 0
    return small[labels].reshape(n, rows + 1, cols)[:, :rows]


def _extent(seen: np.ndarray, otherwise: float) -> np.ndarray:
    """Per row of ``seen`` (bool), from its first true to its last, in elements; ``otherwise``
    where none is."""
    first = np.argmax(seen, axis=1)
    last = seen.shape[1] - 1 - np.argmax(seen[:, ::-1], axis=1)
    return np.where(seen.any(axis=1), last - first + 1, otherwise).astype(np.float64)


def _extent_share(profile: np.ndarray, count: np.ndarray, size: float | np.ndarray) -> np.ndarray:
    """Per row of ``profile`` (dark pixels per column, ``count`` in all): the extent between
    the SPAN_TRIM and 1 - SPAN_TRIM quantiles of those pixels, as a share of ``size``."""
    cum = np.cumsum(profile, axis=1) / np.maximum(count, 1)[:, None]
    lo = (cum < SPAN_TRIM).sum(axis=1)
    hi = (cum < 1 - SPAN_TRIM).sum(axis=1)
    return (hi - lo + 1) / size


def _ring(flat: np.ndarray, geo: _Geometry) -> np.ndarray:
    idx, starts, sizes = geo.ring
    hits = np.add.reduceat((flat[:, idx] >= RING_STROKE).astype(np.int32), starts, axis=1)  # (n, sectors)
    if (sizes > 0).all():
        return (hits >= RING_NEED_PX).mean(axis=1)
    return ((hits >= RING_NEED_PX) & (sizes > 0)).sum(axis=1) / max(1, int((sizes > 0).sum()))


def _stain(gray_aligned: np.ndarray, plane: tuple[float, float, float], centers_px: np.ndarray,
           geo: _Geometry, sides: int = 1, shade: np.ndarray | None = None) -> np.ndarray:
    """Paper darkening around the oval relative to the page's paper plane (stains): the
    ``sides``-th most darkened of the four quadrants around it; ``shade`` (per target, at
    most 1): the page's paper there as a share of the plane (:func:`paper_shade`)."""
    n = len(gray_aligned)
    page = np.maximum(plane[0] + plane[1] * centers_px[:, 0] + plane[2] * centers_px[:, 1], 1.0)
    if shade is not None:
        page = page * shade
    h, w = gray_aligned.shape[1:]
    size = 2 * _px(STROKE_MAX_IN) + 1
    smooth = cv2.GaussianBlur(gray_aligned.reshape(n * h, w), (0, 0), STAIN_SIGMA_PX)  # dither, JPEG noise
    lifted = cv2.dilate(smooth, np.ones((size, size), np.uint8)).reshape(n, h * w)
    rel = lifted[:, geo.near] / page[:, None, None]  # (n, 4, k): paper with pen strokes lifted away
    k = int(STAIN_PCT * (rel.shape[2] - 1))
    quadrant = np.partition(rel, k, axis=2)[:, :, k]
    darkest = np.sort(1.0 - quadrant, axis=1)[:, -sides]
    return np.clip(darkest / STAIN_SCALE, 0.0, 1.0)


def _page_paper(gray: np.ndarray, hom: np.ndarray | None = None, size_in: tuple[float, float] | None = None) -> tuple[float, float, float]:
    """The page's clean paper level as a plane ``a + b x + c y`` (image px), fitted robustly
    through a sparse grid of pixels: print, ink and stains are darker and left out. With the
    registration ``hom`` (layout inches -> image px) and the page's ``size_in``, only pixels
    on the sheet count (PAGE_EDGE_IN inside its edges): the scanner's backing round a sheet,
    white round coloured stock, is not the paper."""
    gx, gy, grid, on_sheet = _paper_grid(gray, hom, size_in)
    xs, ys = np.meshgrid(gx, gy)
    a = np.stack([np.ones(grid.size), xs.ravel(), ys.ravel()], 1)
    v = grid.ravel()
    on = on_sheet.ravel()
    if on.mean() >= PAGE_MIN_ON:
        a, v = a[on], v[on]
    keep = v >= np.percentile(v, 50) * (1 - PAGE_FIT_TOL)
    coef = np.array([float(np.median(v)), 0.0, 0.0])
    for _ in range(4):
        if keep.sum() < 3:
            break
        coef, *_ = np.linalg.lstsq(a[keep], v[keep], rcond=None)
        new = v >= (a @ coef) * (1 - PAGE_FIT_TOL)
        if (new == keep).all():
            break
        keep = new
    return float(coef[0]), float(coef[1]), float(coef[2])


def _paper_grid(gray: np.ndarray, hom: np.ndarray | None, size_in: tuple[float, float] | None
                ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """The page's sparse grid of samples the paper is measured on: its columns' image x, its
    rows' image y, the gray there (rows, columns), and whether each lies on the sheet
    (PAGE_EDGE_IN inside its edges where the registration ``hom`` and ``size_in`` put them;
    every sample without them)."""
    step = max(8, min(gray.shape) // PAGE_GRID)
    v = gray[step // 2::step, step // 2::step].astype(np.float64)
    gy = (np.arange(v.shape[0]) * step + step // 2).astype(np.float64)
    gx = (np.arange(v.shape[1]) * step + step // 2).astype(np.float64)
    if hom is None or size_in is None:
        return gx, gy, v, np.ones(v.shape, bool)
    xs, ys = np.meshgrid(gx, gy)
    back = np.linalg.inv(hom) @ np.stack([xs.ravel(), ys.ravel(), np.ones(xs.size)])
    x_in, y_in = (back[0] / back[2]).reshape(v.shape), (back[1] / back[2]).reshape(v.shape)
    on = ((x_in >= PAGE_EDGE_IN) & (x_in <= size_in[0] - PAGE_EDGE_IN)
          & (y_in >= PAGE_EDGE_IN) & (y_in <= size_in[1] - PAGE_EDGE_IN))
    return gx, gy, v, on


def paper_shade(gray: np.ndarray, hom: np.ndarray, size_in: tuple[float, float],
                plane: tuple[float, float, float]) -> tuple[tuple[np.ndarray, np.ndarray], tuple[np.ndarray, np.ndarray]]:
    """The page's paper as a share of its plane (:func:`_page_paper`), at most 1, per column
    and per row of the plane's grid of samples on the sheet (their image x and the shares,
    their image y and the shares; :func:`shade_at` reads them): a shadow along a sheet's edge
    (a scanner lid's, a lamp's falling off) darkens whole columns or rows of the paper, which a
    plane does not follow and which is no stain. Per grid column and row, the median of the
    paper samples (SHADE_PAPER of the plane or lighter: not print), SHADE_MIN_SAMPLES of them
    at least, else 1. A stain darkens a few inches of a column or row at most, under half of
    it: the median passes it by."""
    gx, gy, v, on = _paper_grid(gray, hom, size_in)
    xs, ys = np.meshgrid(gx, gy)
    ratio = v / np.maximum(plane[0] + plane[1] * xs + plane[2] * ys, 1.0)
    paper = on & (ratio >= SHADE_PAPER)

    def profile(r: np.ndarray, keep: np.ndarray) -> np.ndarray:  # per row of ``r``: the median of the kept
        counts = keep.sum(axis=1)
        ranked = np.sort(np.where(keep, r, np.inf), axis=1)  # the kept first, in order
        rows = np.arange(len(r))
        low, high = ranked[rows, np.maximum(counts - 1, 0) // 2], ranked[rows, np.minimum(counts // 2, r.shape[1] - 1)]
        median = np.where(counts % 2 == 1, low, (low + high) / 2)  # as np.median: the middle one, or the mean of two
        return np.where(counts >= SHADE_MIN_SAMPLES, np.minimum(1.0, median), 1.0)

    return (gx, profile(ratio.T, paper.T)), (gy, profile(ratio, paper))


def shade_at(shade: tuple[tuple[np.ndarray, np.ndarray], tuple[np.ndarray, np.ndarray]], points_px: np.ndarray) -> np.ndarray:
    """Per point (image px), the darker of its grid column's and row's paper share
    (:func:`paper_shade`), interpolated."""
    (gx, columns), (gy, rows) = shade
    return np.minimum(np.interp(points_px[:, 0], gx, columns), np.interp(points_px[:, 1], gy, rows))


def _fold(dark: np.ndarray, geo: _Geometry, filled: np.ndarray | None = None) -> np.ndarray:
    """A light straight line through both strips beside the oval, at the oval's height.

    The strips' columns are sheared by each candidate slope so a line becomes one row; a row
    whose median darkness (over the columns of both strips, so the line must cross both) is
    light enough to be a crease, not pen, is a fold. Beside a target ``filled`` (per target),
    a strip's column a pen's stroke crosses anywhere (darker than FOLD_MAX_DARKNESS) counts as
    paper: the lighter edges of the fill's overflow are no crease (beside an empty target such
    a stroke is no voter's: a stamp's letter, whose lighter parts count).
    """
    rows, cols, shear = geo.fold_rows, geo.fold_cols, geo.fold_shear
    d = dark[:, :, cols]  # (n, crop rows, strip cols)
    if filled is not None and filled.any():  # a filled target's overflow out to the side
        pen = (d[:, rows.min(): rows.max() + 1] > FOLD_MAX_DARKNESS).any(axis=1) & filled[:, None]
        d = np.where(pen[:, None, :], 0.0, d)
    d = np.maximum(d, np.maximum(np.roll(d, 1, axis=1), np.roll(d, -1, axis=1)))  # 1 px of slack
    best = np.zeros(len(dark))
    colix = np.arange(len(cols))[None, :]
    half = geo.fold_left
    for offsets in shear:  # (strip cols,) row offset of each column for one slope
        sheared = d[:, rows[:, None] + offsets[None, :], colix]  # (n, rows, cols)
        med = np.minimum(np.median(sheared[:, :, :half], axis=2), np.median(sheared[:, :, half:], axis=2))
        med = np.where(med <= FOLD_MAX_DARKNESS, med, 0.0)
        best = np.maximum(best, med.max(axis=1) - np.median(med, axis=1))
    return np.clip(best / FOLD_SCALE, 0.0, 1.0)


def _tear(flat: np.ndarray, geo: _Geometry) -> np.ndarray:
    """Share of the printed outline that is missing (no paper: a tear), worst sector."""
    idx, starts, sizes = geo.outline
    prof = np.add.reduceat(flat[:, idx], starts, axis=1) / np.maximum(sizes, 1)  # mean darkness (not ink) per group
    prof = np.where(sizes > 0, prof, 0.0).reshape(len(flat), OUTLINE_SECTORS, geo.outline_bins)  # an empty bin: no print
    return np.clip(1.0 - prof.max(axis=2).min(axis=1) / 0.3, 0.0, 1.0)


def _boxes_px(hom: np.ndarray, boxes: np.ndarray) -> list[tuple[float, float, float, float]]:
    """Pixel bounding boxes (x, y, w, h) of layout boxes (n, 4) inches."""
    x, y, w, h = boxes.T
    xs = np.stack([x, x + w, x, x + w], 1)
    ys = np.stack([y, y, y + h, y + h], 1)
    mapped = hom[:, 0, None, None] * xs + hom[:, 1, None, None] * ys + hom[:, 2, None, None]  # (3, n, 4)
    px, py = mapped[0] / mapped[2], mapped[1] / mapped[2]
    lo_x, lo_y = px.min(axis=1), py.min(axis=1)
    return [(float(a), float(b), float(c - a), float(d - b))
            for a, b, c, d in zip(lo_x, lo_y, px.max(axis=1), py.max(axis=1))]


# --------------------------------------------------------------------------------------
# Names and write-ins


@dataclass(frozen=True)
class NameBand:
    """The windows around the printed names of a page's targets (right of each box, SIDE_PPI):
    which targets have one (not the write-ins), their origins and sizes (inches), the
    windows' shape (rows, cols), and the rows above the name (``[:above]``) and below it
    (``[below:]``) in which a loop around the name shows."""

    idx: list[int]
    origins: np.ndarray
    sizes: np.ndarray
    shape: tuple[int, int]
    above: int
    below: int

    def ring_cover(self, dark: np.ndarray) -> np.ndarray:
        """Per window of darkness ``dark``: the share of its columns a stroke crosses both
        above and below the name (the smaller of the two)."""
        above = (dark[:, :self.above] >= RING_STROKE).any(axis=1).mean(axis=1)
        below = (dark[:, self.below:] >= RING_STROKE).any(axis=1).mean(axis=1)
        return np.asarray(np.minimum(above, below))


def name_band(targets: list[TargetDef]) -> NameBand | None:
    """The name windows of ``targets`` (:class:`NameBand`); None when every target is a write-in."""
    idx = [i for i, t in enumerate(targets) if t.write_in_area_in is None]
    if not idx:
        return None
    boxes = np.array([targets[i].box_in for i in idx], np.float64)
    top = NAME_ABOVE_IN[0]
    height = boxes[0, 3] + NAME_BELOW_IN[1] - top
    origins = np.stack([boxes[:, 0] + boxes[:, 2] + NAME_X_IN[0], boxes[:, 1] + top], 1)
    shape = (int(round(height * SIDE_PPI)), int(round((NAME_X_IN[1] - NAME_X_IN[0]) * SIDE_PPI)))
    sizes = np.repeat([[shape[1] / SIDE_PPI, shape[0] / SIDE_PPI]], len(idx), axis=0)
    return NameBand(idx, origins, sizes, shape, int(round((NAME_ABOVE_IN[1] - top) * SIDE_PPI)),
                    int(round((boxes[0, 3] + NAME_BELOW_IN[0] - top) * SIDE_PPI)))


def _name_rings(gray: np.ndarray, hom: np.ndarray, targets: list[TargetDef]) -> np.ndarray:
    """Ink both above and below the option's printed name (a loop around the name)."""
    out = np.zeros(len(targets))
    band = name_band(targets)
    if band is None:
        return out
    win, _ = _windows(gray, hom, band.origins, band.sizes, band.shape, SIDE_PPI)
    out[band.idx] = band.ring_cover(1.0 - win / _paper(win)[:, None, None])
    return out


def _write_in_score(gray: np.ndarray, hom: np.ndarray, area: Box | None, reference: np.ndarray | None,
                    ref_dpi: float | None, tints_black: bool = False, speckled_card: bool = False) -> float:
    """Fraction of the write-in area's columns crossed by ink (ruled rows left out);
    ``tints_black``: the card prints the blank's light print black (:func:`tints_printed_black`),
    so its darkness on any of the blank's print is the print's; ``speckled_card``: the card is
    speckled (:func:`speckled`), so pieces of ink of WRITE_IN_SPECK_PX or fewer are its specks
    (a written name's strokes join into larger pieces)."""
    if area is None:
        return 0.0
    x, y, w, h = area
    shape = (int(round(h * SIDE_PPI)), int(round(w * SIDE_PPI)))
    win, _ = _windows(gray, hom, np.array([[x, y]]), np.array([[w, h]]), shape, SIDE_PPI)
    win = cv2.GaussianBlur(win[0], (0, 0), 0.8)
    dark = np.clip(1.0 - win / _paper(win[None])[0], 0.0, 1.0)
    # ink is also looked for WRITE_IN_FINE times finer, each block's darkest kept: a pen line
    # finer than a window pixel (a ballpoint's 0.01 in) is then never missed between samples
    # (and unblurred, below, where the card is not speckled)
    finer = _fine_darkness(gray, hom, area, shape, reference, ref_dpi, tints_black, (0.8,) if speckled_card else (0.8, 0.0))
    fine_card, fine = finer[0]
    ruled = (dark >= 0.3).mean(axis=1) > 0.6  # a printed underline crossing the area
    if reference is not None and ref_dpi is not None:
        # against a blank, also as the card shows it finely and as it is left after the blank's
        # print is taken out: where the blank's scan shows less of it (lighter, or a pixel off
        # at one end of a long line), what the card shows beyond it would be taken for ink
        ruled |= (fine_card >= 0.3).mean(axis=1) > 0.6
        scale = ref_dpi / SIDE_PPI
        ref: np.ndarray = cv2.warpAffine(reference, np.array([[scale, 0.0, x * ref_dpi], [0.0, scale, y * ref_dpi]]),
                                          (shape[1], shape[0]), flags=cv2.INTER_AREA | cv2.WARP_INVERSE_MAP,
                                          borderMode=cv2.BORDER_REPLICATE).astype(np.float32)
        ref = cv2.GaussianBlur(ref, (0, 0), 0.8)
        ref_dark = np.clip(1.0 - ref / _paper(ref[None])[0], 0.0, 1.0)
        near = cv2.dilate(ref_dark, np.ones((3, 3), np.uint8))
        dark = np.where(near >= LIGHT_PRINT[0], 0.0, dark) if tints_black else np.clip(dark - near, 0.0, 1.0)
        ruled |= (dark >= 0.3).mean(axis=1) > 0.6
    ruled = np.convolve(ruled.astype(float), np.ones(3), mode="same") > 0
    written = np.maximum(dark, fine)
    inked = (written >= WRITE_IN_INK) & ~_straight_lines(dark) & ~ruled[:, None]
    if speckled_card:
        inked &= ~small_pieces(inked[None], WRITE_IN_SPECK_PX)[0]
    else:
        for level in WRITE_IN_FAINT_INK:
            inked |= _written_words((written >= level) & ~ruled[:, None])
        # and the finer darkness unblurred: a fine pen's name on a thresholded scan comes out in
        # strokes a pixel wide and broken, which the blur dilutes under every level above (its
        # letters sit on the printed line, so only straight runs are left out, not whole rows)
        sharp = finer[1][1]
        inked |= _written_words((sharp >= WRITE_IN_INK) & ~_straight_lines(sharp))
    edge = max(1, int(round(WRITE_IN_EDGE_IN * SIDE_PPI)))  # what spills in from beside the area
    inked[:edge], inked[-edge:], inked[:, :edge], inked[:, -edge:] = False, False, False, False
    if reference is not None and ref_dpi is not None and inked.any():
        inked &= ~_passing_through(gray, hom, area, shape, reference, ref_dpi, tints_black)
    return float(inked.any(axis=0).mean()) if inked.size else 0.0


def _long_line(piece: np.ndarray) -> bool:
    """Whether a piece of ink (bool, SIDE_PPI) is a straight line PASSING_LINE_IN long or
    longer at any slant, its pixels within PASSING_LINE_PX (a standard deviation) of it."""
    rows, cols = np.nonzero(piece)
    if rows.size < PASSING_LINE_IN * SIDE_PPI:
        return False
    spread = np.linalg.eigvalsh(np.cov(np.stack([cols, rows]).astype(np.float64)))  # ascending
    return bool(np.sqrt(max(spread[0], 0.0)) <= PASSING_LINE_PX and np.sqrt(12.0 * spread[1]) >= PASSING_LINE_IN * SIDE_PPI)


def _passing_through(gray: np.ndarray, hom: np.ndarray, area: Box, shape: tuple[int, int], reference: np.ndarray,
                     ref_dpi: float, tints_black: bool) -> np.ndarray:
    """The pixels of a write-in area (``shape`` at SIDE_PPI) that belong to ink passing through
    it from outside: a piece of the card's added ink, in a window PASSING_WINDOW_IN wider all
    round, the blank's print bridged where the ink crosses it, that reaches PASSING_REACH_IN
    past the area, lies PASSING_OUT_SHARE or more outside it or is a long straight line in it, and is
    no darker inside it than outside (its 90th percentiles within PASSING_DARKER): a stamp's
    letter or frame, a stain. A name is written in the area: its letters may rise above it or
    run past its end, but most of their ink is in it; one written under a stamp darkens the
    stamp's ink."""
    m = int(round(PASSING_WINDOW_IN * SIDE_PPI))
    x, y, w, h = area
    grown = (x - m / SIDE_PPI, y - m / SIDE_PPI, w + 2 * m / SIDE_PPI, h + 2 * m / SIDE_PPI)
    big = (shape[0] + 2 * m, shape[1] + 2 * m)
    card, added = _fine_darkness(gray, hom, grown, big, reference, ref_dpi, tints_black)[0]
    ink = added >= PASSING_INK
    printed = (card - added) >= PASSING_INK  # where the blank prints (the card's darkness there is the print's)
    bridged = ink | (printed & cv2.dilate(ink.astype(np.uint8), np.ones((7, 7), np.uint8)).astype(bool))
    count, labels, stats, _ = cv2.connectedComponentsWithStats(bridged.astype(np.uint8), connectivity=8)
    inside = np.zeros(big, bool)
    inside[m: m + shape[0], m: m + shape[1]] = True
    reach = PASSING_REACH_IN * SIDE_PPI
    passing = np.zeros(count, bool)
    for k in range(1, count):
        left, top, width, height = (int(v) for v in stats[k, :4])
        beyond = max(m - left, m - top, left + width - (m + shape[1]), top + height - (m + shape[0]))
        if beyond < reach:
            continue
        own = (labels == k) & ink
        n_in, n_all = int(np.count_nonzero(own & inside)), int(np.count_nonzero(own))
        if n_in == 0 or (n_all - n_in < PASSING_OUT_SHARE * n_all and not _long_line(own & inside)):
            continue
        passing[k] = (float(np.percentile(added[own & inside], 90))
                      <= float(np.percentile(added[own & ~inside], 90)) + PASSING_DARKER)
    if not passing.any():
        return np.zeros(shape, bool)
    through = cv2.dilate(passing[labels].astype(np.uint8), np.ones((3, 3), np.uint8)).astype(bool)
    return through[m: m + shape[0], m: m + shape[1]]


def _written_words(faint: np.ndarray) -> np.ndarray:
    """The pixels of ``faint`` (a write-in area's faint ink, bool) in pieces, their letters joined
    a pixel apart along the line, the size and texture of a written word: at least
    WRITE_IN_WORD_IN wide, WRITE_IN_WORD_MIN_PX tall and not the area's whole height, covering
    at most WRITE_IN_WORD_FILL of their box (letters and the gaps between them; a speck, a dot,
    a smudge, a printed rule or a stretch of one are none of these)."""
    joined = cv2.dilate(faint.astype(np.uint8), np.ones((1, 3), np.uint8))
    _count, labels, stats, _ = cv2.connectedComponentsWithStats(joined, connectivity=8)
    width, height = stats[:, cv2.CC_STAT_WIDTH], stats[:, cv2.CC_STAT_HEIGHT]
    own = np.bincount(labels[faint], minlength=len(stats))  # the piece's own faint pixels, not the joining
    word = ((width >= WRITE_IN_WORD_IN * SIDE_PPI) & (height >= WRITE_IN_WORD_MIN_PX) & (height < faint.shape[0] - 1)
            & (own <= WRITE_IN_WORD_FILL * width * height))
    word[0] = False
    return word[labels] & faint


def _fine_darkness(gray: np.ndarray, hom: np.ndarray, area: Box, shape: tuple[int, int], reference: np.ndarray | None,
                   ref_dpi: float | None, tints_black: bool = False,
                   blurs: tuple[float, ...] = (0.8,)) -> list[tuple[np.ndarray, np.ndarray]]:
    """The write-in area's darkness at SIDE_PPI (``shape``), each pixel the darkest of the
    WRITE_IN_FINE x WRITE_IN_FINE samples it covers: as the card shows it, and less the
    blank's print measured alike; per sigma of ``blurs`` (window pixels; 0: not blurred), both
    blurred so, from one sampling of the card and the blank."""
    x, y, w, h = area
    k = WRITE_IN_FINE
    fine = (shape[0] * k, shape[1] * k)
    win, _ = _windows(gray, hom, np.array([[x, y]]), np.array([[w, h]]), fine, SIDE_PPI * k)
    card_blocks = _darkest_of_blocks(win[0], k)
    ref_blocks = None
    if reference is not None and ref_dpi is not None:
        scale = ref_dpi / (SIDE_PPI * k)
        ref = cv2.warpAffine(reference, np.array([[scale, 0.0, x * ref_dpi], [0.0, scale, y * ref_dpi]]), (fine[1], fine[0]),
                             flags=cv2.INTER_LINEAR | cv2.WARP_INVERSE_MAP, borderMode=cv2.BORDER_REPLICATE).astype(np.float32)
        ref_blocks = _darkest_of_blocks(ref, k)
    out = []
    for blur in blurs:
        card = _blurred(card_blocks, blur)
        dark = np.clip(1.0 - card / _paper(card[None])[0], 0.0, 1.0)
        if ref_blocks is None:
            out.append((dark, dark))
            continue
        ref = np.asarray(_blurred(ref_blocks, blur), np.float32)
        ref_dark = np.clip(1.0 - ref / _paper(ref[None])[0], 0.0, 1.0)
        near = cv2.dilate(ref_dark, np.ones((3, 3), np.uint8))
        less = np.where(near >= LIGHT_PRINT[0], 0.0, dark) if tints_black else np.clip(dark - near, 0.0, 1.0)
        out.append((dark, np.asarray(less)))
    return out


def _blurred(image: np.ndarray, sigma: float) -> np.ndarray:
    """``image`` blurred by a Gaussian of ``sigma`` pixels; as it is for 0."""
    return image if sigma <= 0 else np.asarray(cv2.GaussianBlur(image, (0, 0), sigma))


def _darkest_of_blocks(image: np.ndarray, k: int) -> np.ndarray:
    """``image`` (rows and columns multiples of ``k``) reduced ``k`` times, each pixel the
    darkest of its ``k`` x ``k`` block."""
    # the darkest of k strided columns, then of k strided rows: elementwise minima, exact, a
    # tenth of the time numpy's reduction over the small axes of a reshaped array takes
    columns = np.minimum.reduce([image[:, j::k] for j in range(k)])
    return np.ascontiguousarray(np.minimum.reduce([columns[i::k] for i in range(k)]))


def _straight_lines(dark: np.ndarray) -> np.ndarray:
    """Long straight horizontal or vertical strokes (a printed write-in line or box edge, even
    a little skewed), widened a pixel: handwriting does not run straight for LINE_IN. A run
    with ink along both its sides (LINE_SIDE_PX beside it, LINE_SIDE_INK of its length or
    more on each) is not one: the middle of a word written in a heavy cursive, blurred solid
    along its letters' bodies, runs straight too, but its letters rise above it and fall below."""
    ink = (dark >= 0.25).astype(np.uint8)
    n = max(3, int(round(LINE_IN * SIDE_PPI)))
    lines = np.zeros(ink.shape, bool)
    for kernel, along in ((np.ones((1, n), np.uint8), 1), (np.ones((n, 1), np.uint8), 0)):
        opened = cv2.morphologyEx(ink, cv2.MORPH_OPEN, kernel)
        count, labels, stats, _ = cv2.connectedComponentsWithStats(opened, connectivity=8)
        printed = np.zeros(count, bool)  # per run: a line (the background, label 0, none)
        for k in range(1, count):
            x, y, w, h = (int(v) for v in stats[k, :4])
            if along == 1:  # horizontal: the rows above and below it
                sides = (ink[max(0, y - LINE_SIDE_PX): y, x: x + w], ink[y + h: y + h + LINE_SIDE_PX, x: x + w])
                length = w
            else:
                sides = (ink[y: y + h, max(0, x - LINE_SIDE_PX): x], ink[y: y + h, x + w: x + w + LINE_SIDE_PX])
                length = h
            printed[k] = not all(side.size and float(side.any(axis=1 - along).sum()) >= LINE_SIDE_INK * length for side in sides)
        lines |= printed[labels]
    return np.asarray(cv2.dilate(lines.astype(np.uint8), np.ones((3, 3), np.uint8))).astype(bool)
