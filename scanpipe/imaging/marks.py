"""Score voting targets: raw, threshold-free measurements of the ink on and around each oval.

Algorithm, per target (only small windows are resampled, never the page):

1. **Canonical window.** The registration's homography is linearised at the target centre
   (its Jacobian), and a window of the target box plus :data:`MARGIN_IN` on every side is
   resampled with ``cv2.warpAffine`` at :data:`CANON_PPI` pixels per inch. Skew, anisotropic
   stretch and the scan resolution are gone in this frame; only a small residual shift is left.
2. **Darkness.** The window is lightly blurred (which also undoes the dithering of bilevel G4
   scans and JPEG noise) and turned into darkness ``1 - gray / paper`` where ``paper`` is a
   high percentile of the window itself (local paper level: scans drift in brightness).
3. **Local refinement.** The blank target (the layout's reference scan crop when given,
   otherwise a rendered oval outline inscribed in the box) is matched by normalised
   cross-correlation within +-:data:`SEARCH_IN`; the best shift, lightly biased towards zero,
   is kept and reported in image pixels.
4. **Ink.** Ink is darkness beyond the blank: the reference's darkness (dilated) is subtracted
   when a reference is given, and the printed outline band is always left out. A floor of
   :data:`INK_FLOOR` removes bleed-through and faint smudges.
5. **Features.** ``fill_score`` (mean ink in the interior ellipse), dark coverage, a broad
   level (what 70% of the interior reaches: light pencil), ``stroke_score`` (how far dark
   strokes reach across the interior: checks and X's), ``ring_score`` (ink all around the
   oval at 0.03-0.12 in, or above and below the printed name: circled), ``damage_score``
   (paper darkened unevenly across the window, or one long straight line crossing the
   target: stain, fold, tear) and ``write_in_score`` (columns of the write-in area crossed
   by ink).
6. ``score`` combines fill, coverage, level and strokes into one number in [0, 1] where every
   catalogue vote sits above every no-vote; the thresholds that split it are data
   (:mod:`scanpipe.classify`).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

import cv2
import numpy as np

from scanpipe.types import Box, LayoutPage, Registration, TargetDef, TargetScore

CANON_PPI = 200.0  # pixels per inch of the canonical target window
SEARCH_IN = 0.06  # local refinement search radius
RING_INNER_IN = 0.03  # circled-target annulus, distance outside the oval
RING_OUTER_IN = 0.12
CROP_IN = 0.15  # aligned crop: box plus this on every side (ring annulus + slack)
MARGIN_IN = CROP_IN + SEARCH_IN + 0.02  # canonical window: box plus this on every side
OUTLINE_IN = 0.012  # printed outline width
INTERIOR_INSET_IN = 0.015  # interior ellipse = inscribed ellipse shrunk by this
MATCH_PAD_IN = 0.03  # template = box plus this on every side
BLUR_SIGMA_PX = 1.1  # canonical px, ~0.0055 in: de-dithers G4, calms JPEG noise
BLANK_SIGMA_PX = 1.6  # blur of the rendered blank that is subtracted (ours plus a scanner's)
OUTLINE_DARKNESS = 0.95
INK_FLOOR = 0.09  # darkness below this is paper (bleed-through <= 0.08, faint traces)
DARK = 0.45  # ink darkness counted as a dark pixel
STROKE = 0.30  # ink darkness counted as part of a stroke
PENCIL_MAX = 0.6  # an inked level above this is pen, not pencil
INKED_SHARE = 0.5  # share of the interior that must hold ink for its median level to count
STROKE_FROM, STROKE_SPAN, STROKE_WEIGHT = 0.3, 0.4, 0.8  # stroke reach -> score
CORNER_PX = 6  # canonical px of stroke that make a diagonal sector inked
RING_SECTORS = 16
SHIFT_PRIOR = 0.15  # correlation penalty at the search radius (biases towards no shift)
SIDE_PPI = 60.0  # resolution of the name and write-in windows
NAME_GAP_IN = 0.03  # the name window starts this far right of the oval
NAME_LENGTH_IN = 0.9
NAME_BAND_IN = 0.13  # bands above / below the name line, outside the oval's height
WRITE_IN_INK = 0.35
STAIN_SPAN = 0.25  # paper darkness difference across the window that reads as full damage
LINE_LEVEL = 0.25  # darkness of a fold / tear line
MAX_LINE_WIDTH_PX = 12  # a border run wider than this (0.06 in) is not a thin line
MAX_BORDER_HITS = 8


@dataclass(frozen=True, slots=True)
class _Masks:
    """Boolean masks of the aligned crop for one box size."""

    interior: np.ndarray
    interior_cols: np.ndarray  # columns that the interior spans
    interior_rows: np.ndarray
    annulus: np.ndarray
    sector: np.ndarray  # sector index of each pixel (-1 outside the annulus)
    corner: np.ndarray  # diagonal outer sector of the interior (0-3), -1 elsewhere
    blank: np.ndarray  # rendered blank darkness of the crop, dilated (printed outline)
    template: np.ndarray  # rendered blank darkness of the match region
    ellipse_px: tuple[float, float, float, float]  # centre x, y and half axes of the oval


def score_targets(
    gray: np.ndarray,
    registration: Registration,
    page: LayoutPage,
    *,
    reference: np.ndarray | None = None,
    reference_dpi: float | None = None,
) -> tuple[TargetScore, ...]:
    """Score every target of ``page`` on the upright grayscale card image.

    Parameters
    ----------
    gray : (H, W) uint8 array, the card after any 180-degree turn.
    registration : maps layout inches to pixels of ``gray``.
    page : the layout page; one score per ``page.targets``, same order.
    reference : optional (h, w) uint8 blank scan of the page, layout inch * dpi = pixel.
    reference_dpi : its resolution (defaults to ``page.reference_dpi``).
    """
    assert gray.ndim == 2 and gray.dtype == np.uint8, "gray must be a 2-D uint8 image"
    hom = np.asarray(registration.homography, dtype=np.float64).reshape(3, 3)
    ref_dpi = reference_dpi if reference_dpi is not None else page.reference_dpi
    use_ref = reference is not None and ref_dpi is not None
    return tuple(
        _score_one(gray, hom, t, reference if use_ref else None, ref_dpi) for t in page.targets
    )


# --------------------------------------------------------------------------------------
# Geometry


def _local_affine(hom: np.ndarray, origin_in: tuple[float, float], center_in: tuple[float, float],
                  ppi: float) -> np.ndarray:
    """2x3 map from canonical window pixels (u, v) to image pixels, linearised at the centre."""
    cx, cy = center_in
    p = hom @ np.array([cx, cy, 1.0])
    w = p[2]
    x, y = p[0] / w, p[1] / w
    jac = np.array([
        [(hom[0, 0] - x * hom[2, 0]) / w, (hom[0, 1] - x * hom[2, 1]) / w],
        [(hom[1, 0] - y * hom[2, 0]) / w, (hom[1, 1] - y * hom[2, 1]) / w],
    ])
    offset = np.array([x, y]) + jac @ np.array([origin_in[0] - cx, origin_in[1] - cy])
    return np.hstack([jac / ppi, offset[:, None]])


def _warp(img: np.ndarray, affine: np.ndarray, size: tuple[int, int]) -> np.ndarray:
    """Resample a (w, h) window; ``affine`` maps window pixels to image pixels."""
    return cv2.warpAffine(img, affine, size, flags=cv2.INTER_LINEAR | cv2.WARP_INVERSE_MAP,
                          borderMode=cv2.BORDER_REPLICATE)


def _px(inches: float) -> int:
    return int(round(inches * CANON_PPI))


def _darkness(window: np.ndarray, sigma: float = BLUR_SIGMA_PX) -> np.ndarray:
    """Blurred darkness ``1 - gray / paper`` in [0, 1], paper = the window's 90th percentile."""
    blurred = cv2.GaussianBlur(window.astype(np.float32), (0, 0), sigma)
    flat = blurred.ravel()
    k = int(0.9 * (flat.size - 1))
    paper = max(float(np.partition(flat, k)[k]), 1.0)
    return np.clip(1.0 - blurred / paper, 0.0, 1.0)


# --------------------------------------------------------------------------------------
# Masks for one box size (cached: a card has few distinct box sizes)


def _ellipse_mask(shape: tuple[int, int], center: tuple[float, float], axes: tuple[float, float]) -> np.ndarray:
    rows, cols = np.mgrid[0:shape[0], 0:shape[1]].astype(np.float32)
    return ((cols - center[0]) / axes[0]) ** 2 + ((rows - center[1]) / axes[1]) ** 2 <= 1.0


def _render_outline(shape: tuple[int, int], center: tuple[float, float], w_in: float, h_in: float,
                    sigma: float) -> np.ndarray:
    """Darkness of a printed oval outline (outer edge = the box) in canonical pixels."""
    img = np.zeros(shape, np.float32)
    t = OUTLINE_IN * CANON_PPI
    axes = (w_in * CANON_PPI / 2 - t / 2, h_in * CANON_PPI / 2 - t / 2)
    s = 16
    cv2.ellipse(img, (int(round(center[0] * s)), int(round(center[1] * s))),
                (int(round(axes[0] * s)), int(round(axes[1] * s))), 0, 0, 360, 1.0,
                max(1, int(round(t))), cv2.LINE_AA, 4)
    return cv2.GaussianBlur(img, (0, 0), sigma) * OUTLINE_DARKNESS


@lru_cache(maxsize=16)
def _masks(w_in: float, h_in: float) -> _Masks:
    crop, pad = _px(CROP_IN), _px(MATCH_PAD_IN)
    shape = (_px(h_in) + 2 * crop, _px(w_in) + 2 * crop)
    center = (crop + w_in * CANON_PPI / 2, crop + h_in * CANON_PPI / 2)
    half = (w_in * CANON_PPI / 2, h_in * CANON_PPI / 2)
    inset = INTERIOR_INSET_IN * CANON_PPI
    interior = _ellipse_mask(shape, center, (half[0] - inset, half[1] - inset))
    oval = _ellipse_mask(shape, center, half)
    dist = cv2.distanceTransform((~oval).astype(np.uint8), cv2.DIST_L2, 5) / CANON_PPI
    annulus = (dist >= RING_INNER_IN) & (dist <= RING_OUTER_IN)
    rows, cols = np.mgrid[0:shape[0], 0:shape[1]].astype(np.float32)
    angle = np.arctan2((rows - center[1]) / half[1], (cols - center[0]) / half[0])
    sector = ((angle + np.pi) / (2 * np.pi) * RING_SECTORS).astype(int) % RING_SECTORS
    sector[~annulus] = -1
    radius = np.hypot((cols - center[0]) / (half[0] - inset), (rows - center[1]) / (half[1] - inset))
    corner = ((angle + np.pi) / (np.pi / 2)).astype(int) % 4
    corner[~interior | (radius < 0.55) | (np.abs(np.cos(2 * angle)) > 0.7)] = -1
    blank = _render_outline(shape, center, w_in, h_in, BLANK_SIGMA_PX)
    outline = _render_outline(shape, center, w_in, h_in, BLUR_SIGMA_PX)
    template = outline[crop - pad:shape[0] - crop + pad, crop - pad:shape[1] - crop + pad].copy()
    icols = np.flatnonzero(interior.any(axis=0))
    irows = np.flatnonzero(interior.any(axis=1))
    for a in (interior, annulus, sector, corner, blank, template):
        a.setflags(write=False)
    return _Masks(interior, icols, irows, annulus, sector, corner, blank, template, (*center, *half))


# --------------------------------------------------------------------------------------
# One target


def _score_one(gray: np.ndarray, hom: np.ndarray, target: TargetDef, reference: np.ndarray | None,
               ref_dpi: float | None) -> TargetScore:
    x, y, w, h = target.box_in
    masks = _masks(round(w, 4), round(h, 4))
    margin, crop, search = _px(MARGIN_IN), _px(CROP_IN), _px(SEARCH_IN)
    size = (_px(w) + 2 * margin, _px(h) + 2 * margin)
    origin = (x - MARGIN_IN, y - MARGIN_IN)
    affine = _local_affine(hom, origin, (x + w / 2, y + h / 2), CANON_PPI)
    dark = _darkness(_warp(gray, affine, size))
    blank = _reference_blank(reference, ref_dpi, origin, size) if reference is not None else None
    template = masks.template if blank is None else _match_region(blank, margin, w, h, 0)
    dx, dy = _best_shift(_match_region(dark, margin, w, h, search), template, search)
    ch, cw = masks.interior.shape
    aligned = dark[margin - crop + dy:margin - crop + dy + ch, margin - crop + dx:margin - crop + dx + cw]
    expected = masks.blank
    if blank is not None:
        ref_crop = blank[margin - crop:margin - crop + ch, margin - crop:margin - crop + cw]
        expected = np.maximum(expected, cv2.dilate(ref_crop, np.ones((3, 3), np.uint8)))
    ink = _ink(aligned, expected)
    inner = _interior_features(ink, masks)
    exits = _sectors_hit(ink, masks)
    ring = exits / RING_SECTORS
    if target.write_in_area_in is None:
        ring = max(ring, _name_ring_score(gray, hom, target.box_in, reference, ref_dpi))
    shift_px = affine[:, :2] @ np.array([dx, dy], dtype=np.float64)
    corners = _box_px(hom, target.box_in)
    return TargetScore(
        contest=target.contest, option=target.option,
        score=_combine(inner, exits),
        fill_score=inner.fill, stroke_score=_stroke_score(inner, exits), ring_score=ring,
        damage_score=_damage_score(dark, aligned, masks),
        write_in_score=_write_in_score(gray, hom, target.write_in_area_in, reference, ref_dpi),
        box_px=(corners[0] + float(shift_px[0]), corners[1] + float(shift_px[1]), corners[2], corners[3]),
        shift_px=(float(shift_px[0]), float(shift_px[1])),
    )


def _ink(dark: np.ndarray, printed: np.ndarray) -> np.ndarray:
    """Ink darkness beyond the printed blank, floored (bleed-through, smudges) and rescaled."""
    return np.clip((dark - printed - INK_FLOOR) / (1.0 - INK_FLOOR), 0.0, 1.0).astype(np.float32)


def _reference_blank(reference: np.ndarray, ref_dpi: float | None, origin: tuple[float, float],
                     size: tuple[int, int]) -> np.ndarray:
    """Darkness of the blank reference scan over the same canonical window."""
    assert ref_dpi is not None
    scale = ref_dpi / CANON_PPI
    affine = np.array([[scale, 0.0, origin[0] * ref_dpi], [0.0, scale, origin[1] * ref_dpi]])
    return _darkness(_warp(reference, affine, size))


def _match_region(dark: np.ndarray, margin: int, w: float, h: float, search: int) -> np.ndarray:
    pad = _px(MATCH_PAD_IN) + search
    return dark[margin - pad:margin + _px(h) + pad, margin - pad:margin + _px(w) + pad]


def _best_shift(region: np.ndarray, template: np.ndarray, search: int) -> tuple[int, int]:
    """Integer (dx, dy) in canonical px maximising correlation, biased towards zero."""
    if float(template.std()) < 1e-3 or float(region.std()) < 1e-3:
        return 0, 0
    corr = cv2.matchTemplate(region, template, cv2.TM_CCOEFF_NORMED)
    if not np.all(np.isfinite(corr)):
        return 0, 0
    yy, xx = np.mgrid[-search:search + 1, -search:search + 1]
    corr = corr - SHIFT_PRIOR * (xx**2 + yy**2) / float(search * search)
    iy, ix = np.unravel_index(int(np.argmax(corr)), corr.shape)
    return int(ix) - search, int(iy) - search


def _box_px(hom: np.ndarray, box: Box) -> tuple[float, float, float, float]:
    x, y, w, h = box
    pts = np.array([[x, y, 1], [x + w, y, 1], [x, y + h, 1], [x + w, y + h, 1]], dtype=np.float64)
    mapped = (hom @ pts.T).T
    xy = mapped[:, :2] / mapped[:, 2:3]
    lo, hi = xy.min(axis=0), xy.max(axis=0)
    return float(lo[0]), float(lo[1]), float(hi[0] - lo[0]), float(hi[1] - lo[1])


# --------------------------------------------------------------------------------------
# Features


@dataclass(frozen=True, slots=True)
class _Interior:
    fill: float  # mean ink
    cover: float  # share of dark ink
    inked_level: float  # median ink where there is some, when most of the interior has some
    reach: float  # how far strokes reach across the interior, rows and columns
    corners: int  # outer diagonal sectors (of 4) holding ink: an X reaches all four


def _interior_features(ink: np.ndarray, masks: _Masks) -> _Interior:
    values = ink[masks.interior]
    inked = values[values >= 0.05]
    level = float(np.median(inked)) if inked.size >= INKED_SHARE * values.size else 0.0
    level = level if level <= PENCIL_MAX else 0.0  # dark ink is judged by its coverage
    strokes = (ink >= STROKE) & masks.interior
    col_reach = float(strokes[:, masks.interior_cols].any(axis=0).mean())
    row_reach = float(strokes[masks.interior_rows, :].any(axis=1).mean())
    corner_hits = np.bincount(masks.corner[strokes & (masks.corner >= 0)], minlength=4)
    return _Interior(float(values.mean()), float((values >= DARK).mean()), level,
                     float(np.sqrt(col_reach * row_reach)), int((corner_hits >= CORNER_PX).sum()))


def _stroke_score(inner: _Interior, exits: int) -> float:
    """Stroke reach, counted in full only for strokes shaped like a check (leaving the oval)
    or an X (reaching all four diagonal corners); a single short bar counts half."""
    return inner.reach if exits >= 1 or inner.corners == 4 else 0.5 * inner.reach


def _combine(inner: _Interior, exits: int) -> float:
    """One mark score in [0, 1]: the strongest kind of evidence for a vote (dark coverage,
    mean ink, a light but even pencil level, or a check/X shaped stroke)."""
    stroke = float(np.clip((_stroke_score(inner, exits) - STROKE_FROM) / STROKE_SPAN, 0.0, 1.0)) * STROKE_WEIGHT
    return float(np.clip(max(inner.fill, inner.cover, inner.inked_level, stroke), 0.0, 1.0))


def _sectors_hit(ink: np.ndarray, masks: _Masks) -> int:
    """How many annulus sectors (around the oval, 0.03-0.12 in out) hold a stroke."""
    hits = masks.sector[(ink >= STROKE) & masks.annulus]
    counts = np.bincount(hits, minlength=RING_SECTORS)
    need = 0.3 * (OUTLINE_IN * 2) * 0.06 * CANON_PPI**2  # a short stroke piece
    return int((counts >= need).sum())


def _side_window(gray: np.ndarray, hom: np.ndarray, box_in: Box, reference: np.ndarray | None,
                 ref_dpi: float | None, ppi: float) -> np.ndarray:
    """Ink darkness of a box (inches) at ``ppi``, the reference's print subtracted."""
    x, y, w, h = box_in
    size = (int(round(w * ppi)), int(round(h * ppi)))
    affine = _local_affine(hom, (x, y), (x + w / 2, y + h / 2), ppi)
    dark = _darkness(_warp(gray, affine, size), sigma=0.8)
    if reference is not None and ref_dpi is not None:
        scale = ref_dpi / ppi
        ref = _warp(reference, np.array([[scale, 0.0, x * ref_dpi], [0.0, scale, y * ref_dpi]]), size)
        dark = np.clip(dark - cv2.dilate(_darkness(ref, sigma=0.8), np.ones((3, 3), np.uint8)), 0.0, 1.0)
    return dark


def _name_ring_score(gray: np.ndarray, hom: np.ndarray, box_in: Box, reference: np.ndarray | None,
                     ref_dpi: float | None) -> float:
    """Ink both above and below the printed name right of the oval (a circled name).

    The name is printed within the oval's height, starting about 0.13 in right of it; a loop
    around it crosses the bands just above and just below that line of text.
    """
    x, y, w, h = box_in
    region = (x + w + NAME_GAP_IN, y - NAME_BAND_IN, NAME_LENGTH_IN, h + 2 * NAME_BAND_IN)
    dark = _side_window(gray, hom, region, reference, ref_dpi, SIDE_PPI)
    band = int(round((NAME_BAND_IN - 0.015) * SIDE_PPI))
    above = (dark[:band] >= STROKE).any(axis=0)
    below = (dark[-band:] >= STROKE).any(axis=0)
    return float(min(above.mean(), below.mean()))


def _damage_score(dark: np.ndarray, aligned: np.ndarray, masks: _Masks) -> float:
    """Uneven paper across the window (a stain's edge) or a straight line across the oval."""
    blocks = _block_paper(dark)
    stain = float(np.clip((blocks.max() - blocks.min()) / STAIN_SPAN, 0.0, 1.0))
    return max(stain, _line_across(aligned, masks))


def _block_paper(dark: np.ndarray, n: int = 4) -> np.ndarray:
    """Paper darkness (a low percentile of darkness: ink ignored) in an n x n grid of blocks."""
    h, w = dark.shape
    blocks = dark[: h - h % n, : w - w % n].reshape(n, h // n, n, w // n).transpose(0, 2, 1, 3)
    flat = blocks.reshape(n * n, -1)
    k = int(0.2 * (flat.shape[1] - 1))
    return np.partition(flat, k, axis=1)[:, k]


def _border_hits(dark: np.ndarray, level: float) -> list[tuple[float, float]]:
    """Centres (x, y) of dark runs along the crop's border (where long lines enter/leave)."""
    h, w = dark.shape
    d = 3
    top, bottom = dark[:d].max(axis=0), dark[-d:].max(axis=0)
    left, right = dark[:, :d].max(axis=1), dark[:, -d:].max(axis=1)
    ring = np.concatenate([top, right, bottom[::-1], left[::-1]]) >= level
    xs = np.concatenate([np.arange(w), np.full(h, w - 1), np.arange(w)[::-1], np.zeros(h)])
    ys = np.concatenate([np.zeros(w), np.arange(h), np.full(w, h - 1), np.arange(h)[::-1]])
    edges = np.flatnonzero(np.diff(np.concatenate([[0], ring.astype(np.int8), [0]])))
    hits = []
    for start, stop in zip(edges[::2], edges[1::2]):
        if stop - start <= MAX_LINE_WIDTH_PX:
            mid = (start + stop - 1) // 2
            hits.append((float(xs[mid]), float(ys[mid])))
    return hits[:MAX_BORDER_HITS]


def _line_across(aligned: np.ndarray, masks: _Masks) -> float:
    """How completely a straight dark line runs across the whole crop over the oval.

    Candidate lines join two dark runs on the crop's border; a candidate counts when it passes
    over the oval (grown by 0.02 in) and its score is the share of its length that is dark.
    A stray line that passes beside the oval never counts.
    """
    hits = _border_hits(aligned, LINE_LEVEL)
    cx, cy, ax, ay = masks.ellipse_px
    grow = 0.02 * CANON_PPI
    best = 0.0
    for i, (x1, y1) in enumerate(hits):
        for x2, y2 in hits[i + 1:]:
            length = float(np.hypot(x2 - x1, y2 - y1))
            if length < 0.6 * min(aligned.shape) or not _crosses_ellipse(
                    (x1, y1), (x2, y2), (cx, cy), (ax + grow, ay + grow)):
                continue
            n = int(length)
            xs = np.linspace(x1, x2, n).round().astype(int)
            ys = np.linspace(y1, y2, n).round().astype(int)
            near = cv2.dilate(aligned, np.ones((3, 3), np.uint8))[ys, xs]
            best = max(best, float((near >= LINE_LEVEL * 0.8).mean()))
    return best


def _crosses_ellipse(p1: tuple[float, float], p2: tuple[float, float], center: tuple[float, float],
                     axes: tuple[float, float]) -> bool:
    """Does the segment p1-p2 meet the ellipse (centre, half axes)?"""
    a = np.array([(p1[0] - center[0]) / axes[0], (p1[1] - center[1]) / axes[1]])
    b = np.array([(p2[0] - center[0]) / axes[0], (p2[1] - center[1]) / axes[1]])
    d = b - a
    t = float(np.clip(-(a @ d) / max(float(d @ d), 1e-9), 0.0, 1.0))
    return float(np.linalg.norm(a + t * d)) <= 1.0


def _write_in_score(gray: np.ndarray, hom: np.ndarray, area: Box | None, reference: np.ndarray | None,
                    ref_dpi: float | None) -> float:
    """Fraction of the write-in area's columns crossed by ink (ruled rows left out)."""
    if area is None:
        return 0.0
    dark = _side_window(gray, hom, area, reference, ref_dpi, SIDE_PPI)
    ruled = (dark >= STROKE).mean(axis=1) > 0.6  # a printed underline crossing the area
    ruled = np.convolve(ruled.astype(float), np.ones(3), mode="same") > 0
    inked = dark[~ruled] >= WRITE_IN_INK
    return float(inked.any(axis=0).mean()) if inked.size else 0.0
