"""Voter marks, write-ins and paper damage, drawn on a rendered card (the mark catalogue).

Follows ``docs/mark-catalogue.md``: each :class:`MarkKind` has a fixed intent (:data:`INTENT`) and is
drawn with its parameters drawn uniformly from the catalogue's ranges by a seeded rng. The
*interior* of a target is the ellipse inscribed in its box; *darkness* is ``1 - gray/255``
with OpenCV's luma weights, so a colour ink's darkness is exact in grayscale too.

Model of ink on paper: a mark is an alpha mask ``a`` in [0, 1] and a colour ``c``; the paper
becomes ``p * (1 - a * (1 - c/255))`` (subtractive, so ink over print stays dark). Coverage
ranges are enforced by rejection sampling of the shape (measured as the share of interior
pixels with ``a > 0.5`` for the lower bound and ``a > 0.2`` for the upper, interior pixels
under the printed ~0.012 in outline excluded, since no mark can show there); graphite kinds
(light pencil, erasure) are defined by their *measured* mean darkness over that interior
(:data:`PENCIL_MEASURED`, :data:`ERASURE_MEASURED`), grain included; a small partial mark
must stay within :data:`SMALL_MAX_SPAN` of the oval's width and height; distance rules
(stray lines, loops) are checked with a distance transform. Everything is drawn in a small
region of interest around the target at the render dpi.

Damage (fold, stain, tear) returns the region where it is plainly visible; the deck relabels
a target ``damaged`` (ambiguous) only when that damage lies over it (:func:`damaged_targets`:
a crease within 0.03 in of the box, a stain covering >= 10% of the box, missing paper reaching
the oval). Fold shadows (darkness <= 0.05) and bleed-through (mirrored other side, <= 0.05)
are faint and relabel nothing.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from enum import StrEnum

import cv2
import numpy as np

from scanpipe.types import MarkIntent

BoxPx = tuple[float, float, float, float]


class MarkKind(StrEnum):
    NONE = "none"
    FULL_FILL = "full_fill"
    PARTIAL_FILL = "partial_fill"
    CHECK = "check"
    X_MARK = "x_mark"
    LIGHT_PENCIL = "light_pencil"
    HESITATION_DOT = "hesitation_dot"
    FAINT_TRACE = "faint_trace"
    STRAY_LINE = "stray_line"
    CIRCLED = "circled"
    ERASURE = "erasure"
    SMALL_PARTIAL = "small_partial"
    DAMAGED = "damaged"


INTENT: dict[MarkKind, MarkIntent] = {
    MarkKind.NONE: MarkIntent.NO_VOTE,
    MarkKind.FULL_FILL: MarkIntent.VOTE,
    MarkKind.PARTIAL_FILL: MarkIntent.VOTE,
    MarkKind.CHECK: MarkIntent.VOTE,
    MarkKind.X_MARK: MarkIntent.VOTE,
    MarkKind.LIGHT_PENCIL: MarkIntent.VOTE,
    MarkKind.HESITATION_DOT: MarkIntent.NO_VOTE,
    MarkKind.FAINT_TRACE: MarkIntent.NO_VOTE,
    MarkKind.STRAY_LINE: MarkIntent.NO_VOTE,
    MarkKind.CIRCLED: MarkIntent.AMBIGUOUS,
    MarkKind.ERASURE: MarkIntent.AMBIGUOUS,
    MarkKind.SMALL_PARTIAL: MarkIntent.AMBIGUOUS,
    MarkKind.DAMAGED: MarkIntent.AMBIGUOUS,
}

INKS: dict[str, tuple[int, int, int]] = {
    "black": (25, 25, 28),
    "blue": (20, 40, 170),
    "red": (170, 15, 15),
    "green": (10, 95, 30),
    "pencil": (70, 70, 75),
}
PEN_INKS = ("black", "blue", "red", "green")
# Which ink a kind is drawn with: pen marks use the voter's pen, these use graphite.
GRAPHITE_KINDS = frozenset({MarkKind.LIGHT_PENCIL, MarkKind.FAINT_TRACE, MarkKind.ERASURE})
TARGET_W_IN = 0.22
# Catalogue ranges (docs/mark-catalogue.md): darkness as drawn; graphite grain only lightens.
PENCIL_DARKNESS = (0.48, 0.68)
PENCIL_GRAIN = 0.1
PENCIL_MEASURED = (0.42, 0.62)  # mean darkness over the interior, as drawn
ERASURE_DARKNESS = (0.14, 0.26)
ERASURE_GRAIN = 0.12
ERASURE_MEASURED = (0.12, 0.22)  # mean residual darkness over the interior, as drawn
ERASURE_COVER = 0.75
TRACE_DARKNESS = (0.02, 0.05)
SMALL_COVER = (0.12, 0.30)
SMALL_MAX_SPAN = 0.55  # a small partial stays within 55% of the oval's width and height
BLEED_MAX = 0.05
FOLD_CREASE = (0.15, 0.35)  # darkness of a fold's crease line
FOLD_SHADOW = (0.02, 0.05)  # its one-sided shadow: faint, not damage over a target by itself
CREASE_VISIBLE = 0.05
STAIN_BODY = (0.12, 0.25)  # before the brown tint (gray darkness x 0.85)
STAIN_VISIBLE = 0.05  # a stain counts where it darkens the paper by at least this
DAMAGE_REACH_IN = 0.03  # a crease this close to a target's box lies over it
STAIN_OVER = 0.10  # a stain lies over a target when it covers this share of its box
OUTLINE_IN = 0.012
SHIFT = 4
_ONE = 1 << SHIFT


def ink_for(kind: MarkKind, pen: str) -> str | None:
    """The ink a mark of ``kind`` is drawn with when the voter's pen is ``pen``."""
    if kind in (MarkKind.NONE, MarkKind.DAMAGED):
        return None
    return "pencil" if kind in GRAPHITE_KINDS else pen


def gray_of(rgb: tuple[float, float, float]) -> float:
    return 0.299 * rgb[0] + 0.587 * rgb[1] + 0.114 * rgb[2]


def ink_color(ink: str, darkness: float) -> np.ndarray:
    """An RGB colour of hue ``ink`` whose gray darkness is exactly ``darkness``."""
    base = np.array(INKS[ink], np.float32)
    d_ink = 1 - gray_of(tuple(base)) / 255.0
    if darkness <= d_ink:
        k = darkness / d_ink
        return 255 - (255 - base) * k
    return base * ((1 - darkness) * 255.0 / gray_of(tuple(base)))


# --------------------------------------------------------------------------------------
# Region of interest and compositing


@dataclass(frozen=True, slots=True)
class _Roi:
    x0: int
    y0: int
    h: int
    w: int
    cx: float  # target centre in roi pixels
    cy: float
    a: float  # target semi-axes in pixels
    b: float
    dpi: float

    def px(self, inches: float) -> float:
        return inches * self.dpi


def _roi(shape: tuple[int, ...], box: BoxPx, dpi: float, margin_in: float = 0.45) -> _Roi:
    x, y, w, h = box
    m = margin_in * dpi
    x0, y0 = max(0, int(x - m)), max(0, int(y - m))
    x1, y1 = min(shape[1], int(np.ceil(x + w + m))), min(shape[0], int(np.ceil(y + h + m)))
    return _Roi(x0, y0, y1 - y0, x1 - x0, x + w / 2 - x0, y + h / 2 - y0, w / 2, h / 2, dpi)


def _pt(x: float, y: float) -> tuple[int, int]:
    return int(round(x * _ONE)), int(round(y * _ONE))


def _ellipse(r: _Roi, ax: float, ay: float, cx: float | None = None, cy: float | None = None) -> np.ndarray:
    m = np.zeros((r.h, r.w), np.uint8)
    cv2.ellipse(m, _pt(r.cx if cx is None else cx, r.cy if cy is None else cy), _pt(max(ax, 0.5), max(ay, 0.5)),
                0, 0, 360, 255, -1, cv2.LINE_AA, SHIFT)
    return m.astype(np.float32) / 255.0


def _interior(r: _Roi) -> np.ndarray:
    """The target's ellipse (inscribed in the box): what distance rules are measured from."""
    return _ellipse(r, r.a, r.b) > 0.5


def _inside_outline(r: _Roi) -> np.ndarray:
    """The paper inside the printed outline: where coverage is measured (what a scorer sees)."""
    t = r.px(OUTLINE_IN)
    return _ellipse(r, r.a - t, r.b - t) > 0.5


def _covers(alpha: np.ndarray, interior: np.ndarray, lo: float, hi: float) -> bool:
    """Coverage within [lo, hi] both when counted strictly (alpha > 0.5, for ``lo``) and
    loosely (alpha > 0.2: anti-aliased edges a scorer may count as ink, for ``hi``)."""
    values = alpha[interior]
    return lo <= float((values > 0.5).mean()) and float((values > 0.2).mean()) <= hi


def _blob(r: _Roi, rng: np.random.Generator, scale: float, dx: float, dy: float, wobble: float = 0.06) -> np.ndarray:
    """An irregular filled ellipse: radius modulated by a few low harmonics."""
    t = np.linspace(0, 2 * np.pi, 72, endpoint=False)
    rad = np.ones_like(t)
    for k in (2, 3, 5):
        rad += rng.uniform(-wobble, wobble) * np.cos(k * t + rng.uniform(0, 2 * np.pi))
    xs = r.cx + dx + r.a * scale * rad * np.cos(t)
    ys = r.cy + dy + r.b * scale * rad * np.sin(t)
    m = np.zeros((r.h, r.w), np.uint8)
    pts = np.round(np.stack([xs, ys], 1) * _ONE).astype(np.int32)
    cv2.fillPoly(m, [pts], 255, cv2.LINE_AA, SHIFT)
    return m.astype(np.float32) / 255.0


def _stroke(r: _Roi, points: np.ndarray, width_px: float) -> np.ndarray:
    m = np.zeros((r.h, r.w), np.uint8)
    pts = np.round(points * _ONE).astype(np.int32)
    cv2.polylines(m, [pts], False, 255, max(1, int(round(width_px))), cv2.LINE_AA, SHIFT)
    return m.astype(np.float32) / 255.0


def _composite(rgb: np.ndarray, r: _Roi, alpha: np.ndarray, color: np.ndarray) -> None:
    region = rgb[r.y0:r.y0 + r.h, r.x0:r.x0 + r.w].astype(np.float32)
    absorb = 1.0 - color / 255.0
    region *= 1.0 - np.clip(alpha, 0, 1)[..., None] * absorb[None, None, :]
    rgb[r.y0:r.y0 + r.h, r.x0:r.x0 + r.w] = np.clip(region + 0.5, 0, 255).astype(np.uint8)


def _grain(r: _Roi, rng: np.random.Generator, amount: float) -> np.ndarray:
    """Paper-grain texture of graphite: a factor in ``[1 - amount, 1]`` (never darker than drawn)."""
    noise = rng.standard_normal((r.h, r.w)).astype(np.float32)
    noise = np.asarray(cv2.GaussianBlur(noise, (0, 0), max(0.6, r.dpi / 300)), dtype=np.float32)  # already float32: no copy
    noise /= max(float(noise.std()), 1e-6)
    return (1.0 - amount * (0.5 + 0.5 * np.clip(noise / 2.0, -1.0, 1.0))).astype(np.float32)


def _sample(make: Callable[[], np.ndarray], ok: Callable[[np.ndarray], bool], fallback: Callable[[], np.ndarray],
            tries: int = 60) -> np.ndarray:
    for _ in range(tries):
        alpha = make()
        if ok(alpha):
            return alpha
    alpha = fallback()
    assert ok(alpha), "fallback mark shape violates its own rule"
    return alpha


# --------------------------------------------------------------------------------------
# The marks


def _full(r: _Roi, rng: np.random.Generator, lo: float, hi: float, overflow_in: float) -> np.ndarray:
    interior = _inside_outline(r)
    limit = _ellipse(r, r.a + r.px(overflow_in), r.b + r.px(overflow_in)) > 0.02

    def make() -> np.ndarray:
        jit = r.px(0.012)
        alpha = _blob(r, rng, rng.uniform(0.9, 1.12), rng.uniform(-jit, jit), rng.uniform(-jit, jit))
        for _ in range(int(rng.integers(0, 4))):  # pen gaps
            gx, gy = rng.uniform(-0.6, 0.6) * r.a, rng.uniform(-0.6, 0.6) * r.b
            rad = r.px(rng.uniform(0.012, 0.03))
            alpha *= 1 - _ellipse(r, rad, rad * rng.uniform(0.5, 1), r.cx + gx, r.cy + gy)
        return alpha

    def ok(alpha: np.ndarray) -> bool:
        return _covers(alpha, interior, lo, hi) and not bool((alpha[~limit] > 0.02).any())

    return _sample(make, ok, lambda: _ellipse(r, r.a, r.b))


def _partial(r: _Roi, rng: np.random.Generator) -> np.ndarray:
    interior = _inside_outline(r)

    def make() -> np.ndarray:
        width = r.px(rng.uniform(0.025, 0.04))
        frac = rng.uniform(0.4, 0.85)
        left = rng.random() < 0.5
        xa = r.cx - r.a * 1.02 if left else r.cx + r.a * 1.02 - 2 * r.a * frac
        xb = xa + 2 * r.a * frac
        ys = np.arange(r.cy - r.b * 0.95, r.cy + r.b * 0.95 + 1e-6, width * 0.7)
        xs = np.where(np.arange(ys.size) % 2 == 0, xa, xb) + rng.uniform(-0.08, 0.08, ys.size) * r.a
        return _stroke(r, np.stack([xs, ys], 1), width)

    def fallback() -> np.ndarray:
        return _blob(r, rng, 0.75, 0, 0, wobble=0.0)

    return _sample(make, lambda a: _covers(a, interior, 0.45, 0.80), fallback)


def _check(r: _Roi, rng: np.random.Generator) -> np.ndarray:
    p0 = (r.cx - r.a * rng.uniform(0.45, 0.7), r.cy - r.b * rng.uniform(-0.2, 0.3))
    p1 = (r.cx - r.a * rng.uniform(-0.15, 0.2), r.cy + r.b * rng.uniform(0.45, 0.85))
    p2 = (r.cx + r.a * rng.uniform(1.05, 1.6), r.cy - r.b * rng.uniform(1.2, 2.2))
    mid = ((p1[0] + p2[0]) / 2 + rng.uniform(-0.1, 0.1) * r.a, (p1[1] + p2[1]) / 2 + rng.uniform(0, 0.15) * r.b)
    return _stroke(r, np.array([p0, p1, mid, p2]), r.px(rng.uniform(0.02, 0.035)))


def _x(r: _Roi, rng: np.random.Generator) -> np.ndarray:
    diag = float(np.hypot(2 * r.a, 2 * r.b))
    phi = float(np.arctan2(2 * r.b, 2 * r.a))
    ox, oy = rng.uniform(-0.1, 0.1) * r.a, rng.uniform(-0.1, 0.1) * r.b
    alpha = np.zeros((r.h, r.w), np.float32)
    for sign in (1, -1):
        ang = sign * phi + np.deg2rad(rng.uniform(-8, 8))
        half = diag * rng.uniform(0.82, 1.25) / 2
        d = np.array([np.cos(ang), np.sin(ang)]) * half
        c = np.array([r.cx + ox, r.cy + oy])
        alpha = np.maximum(alpha, _stroke(r, np.array([c - d, c + d]), r.px(rng.uniform(0.02, 0.035))))
    return alpha


def _dot(r: _Roi, rng: np.random.Generator) -> np.ndarray:
    rad = r.px(rng.uniform(0.015, 0.035)) / 2
    room_a, room_b = max(0.0, r.a - rad - r.px(0.015)), max(0.0, r.b - rad - r.px(0.015))
    t, u = rng.uniform(0, 2 * np.pi), np.sqrt(rng.random())
    return _ellipse(r, rad, rad, r.cx + room_a * u * np.cos(t), r.cy + room_b * u * np.sin(t))


def _smudge(r: _Roi, rng: np.random.Generator) -> np.ndarray:
    alpha = _blob(r, rng, rng.uniform(0.7, 1.1), rng.uniform(-0.2, 0.2) * r.a, rng.uniform(-0.2, 0.2) * r.b, 0.12)
    alpha = cv2.GaussianBlur(alpha, (0, 0), r.px(0.015))
    return alpha / max(float(alpha.max()), 1e-6)


def _outline_distance(r: _Roi) -> np.ndarray:
    """Distance in pixels from every roi pixel to the printed oval (its box ellipse)."""
    outside = (~_interior(r)).astype(np.uint8)
    return cv2.distanceTransform(outside, cv2.DIST_L2, 5)


def _stray(r: _Roi, rng: np.random.Generator) -> np.ndarray:
    dist = _outline_distance(r)

    def make() -> np.ndarray:
        width = r.px(rng.uniform(0.01, 0.03))
        gap = r.px(rng.uniform(0.055, 0.09)) + width / 2
        side = 1 if rng.random() < 0.5 else -1
        y = r.cy + side * (r.b + gap)
        xa, xb = r.cx - r.a - r.px(rng.uniform(0.05, 0.15)), r.cx + r.a + r.px(rng.uniform(0.0, 0.08))
        tilt = np.tan(np.deg2rad(rng.uniform(-5, 5))) * (xb - xa) / 2
        return _stroke(r, np.array([[xa, y - tilt], [xb, y + tilt]]), width)

    def ok(alpha: np.ndarray) -> bool:
        return bool(alpha.any()) and float(dist[alpha > 0.02].min()) >= r.px(0.05)

    def fallback() -> np.ndarray:
        y = r.cy + r.b + r.px(0.08)
        return _stroke(r, np.array([[r.cx - r.a, y], [r.cx + r.a, y]]), max(1.0, r.px(0.01)))

    return _sample(make, ok, fallback)


def _loop(r: _Roi, rng: np.random.Generator, cx: float, cy: float, ax: float, ay: float,
          lo_in: float, hi_in: float) -> tuple[np.ndarray, float]:
    width = r.px(rng.uniform(0.012, 0.022))
    lo, hi = r.px(lo_in) + width / 2 + 1, r.px(hi_in) - width / 2 - 1
    start = rng.uniform(0, 2 * np.pi)
    t = np.linspace(start, start + 2 * np.pi + rng.uniform(0.15, 0.6), 120)
    g = (lo + hi) / 2 + (hi - lo) / 2 * 0.9 * np.sin(t * rng.integers(1, 3) + rng.uniform(0, 6.28)) * np.linspace(0.6, 1, t.size)
    pts = np.stack([cx + (ax + g) * np.cos(t), cy + (ay + g) * np.sin(t)], 1)
    return _stroke(r, pts, width), width


def _circled(r: _Roi, rng: np.random.Generator) -> np.ndarray:
    dist = _outline_distance(r)

    def make() -> np.ndarray:
        return _loop(r, rng, r.cx, r.cy, r.a, r.b, 0.04, 0.10)[0]

    def ok(alpha: np.ndarray) -> bool:
        d = dist[alpha > 0.02]
        return d.size > 0 and float(d.min()) >= r.px(0.04) - 1 and float(d.max()) <= r.px(0.10) + 2

    return _sample(make, ok, make, tries=10)


def circle_name(rgb: np.ndarray, target_box: BoxPx, name_box: BoxPx, rng: np.random.Generator, *,
                ink: str, dpi: float) -> None:
    """A loop around an option's printed name (the ``circled`` kind's other form)."""
    r = _roi(rgb.shape, name_box, dpi, margin_in=0.35)
    alpha, _ = _loop(r, rng, r.cx, r.cy, r.a + r.px(0.03), r.b + r.px(0.02), 0.02, 0.05)
    assert r.x0 + int(np.argmax(alpha.any(0))) >= target_box[0] + target_box[2] + 0.04 * dpi, "loop touches the oval"
    _composite(rgb, r, alpha, ink_color(ink, rng.uniform(0.7, 1.0)))


def _erasure(r: _Roi, rng: np.random.Generator) -> np.ndarray:
    interior = _inside_outline(r)

    def make() -> np.ndarray:
        alpha = _blob(r, rng, rng.uniform(0.85, 1.1), rng.uniform(-0.1, 0.1) * r.a, rng.uniform(-0.1, 0.1) * r.b, 0.1)
        sx = r.px(rng.uniform(0.01, 0.02))
        return cv2.GaussianBlur(alpha, (0, 0), sigmaX=sx, sigmaY=sx / 2)  # smeared edges

    alpha = _sample(make, lambda a: _covers(a, interior, ERASURE_COVER, 1.0), lambda: _ellipse(r, r.a, r.b))
    return alpha * _grain(r, rng, ERASURE_GRAIN)


def _span(alpha: np.ndarray, r: _Roi) -> tuple[float, float]:
    """Extent of a mark (alpha > 0.2) as fractions of the oval's width and height."""
    ys, xs = np.nonzero(alpha > 0.2)
    if xs.size == 0:
        return 0.0, 0.0
    return (float(xs.max() - xs.min() + 1) / (2 * r.a), float(ys.max() - ys.min() + 1) / (2 * r.b))


def _small(r: _Roi, rng: np.random.Generator) -> np.ndarray:
    """A compact blob or short thick dash: 12-30% of the interior, confined to a corner region
    no wider or taller than :data:`SMALL_MAX_SPAN` of the oval."""
    interior = _inside_outline(r)

    def make() -> np.ndarray:
        if rng.random() < 0.6:
            s = rng.uniform(0.38, 0.56)
            room = max(0.0, 0.8 - s)
            return _blob(r, rng, s, rng.uniform(-room, room) * r.a, rng.uniform(-room, room) * r.b * 0.6, 0.08)
        ang = rng.uniform(-0.5, 0.5) + (np.pi / 2 if rng.random() < 0.3 else 0.0)
        half = rng.uniform(0.2, 0.45) * r.a
        d = np.array([np.cos(ang), np.sin(ang) * r.b / r.a]) * half
        c = np.array([r.cx + rng.uniform(-0.35, 0.35) * r.a, r.cy + rng.uniform(-0.3, 0.3) * r.b])
        return _stroke(r, np.array([c - d, c + d]), r.px(rng.uniform(0.035, 0.05)))

    def ok(alpha: np.ndarray) -> bool:
        return _covers(alpha, interior, *SMALL_COVER) and max(_span(alpha, r)) <= SMALL_MAX_SPAN

    return _sample(make, ok, lambda: _blob(r, rng, 0.45, 0, 0, wobble=0.0), tries=120)


def _graphite(r: _Roi, rng: np.random.Generator, make: Callable[[], np.ndarray], drawn: tuple[float, float],
              measured: tuple[float, float], tries: int = 60) -> tuple[np.ndarray, float]:
    """A graphite shape and darkness whose mean darkness over the interior (inside the
    outline, as drawn) lies within ``measured``: the catalogue defines pencil and erasure by it."""
    interior = _inside_outline(r)
    for _ in range(tries):
        alpha, dark = make(), float(rng.uniform(*drawn))
        mean = float(np.minimum(alpha, 1.0)[interior].mean()) * dark
        if measured[0] <= mean <= measured[1]:
            return alpha, dark
    alpha = make()
    mean_alpha = max(float(np.minimum(alpha, 1.0)[interior].mean()), 1e-3)
    dark = float(np.clip(sum(measured) / 2 / mean_alpha, 0.0, 0.95))
    return alpha, dark


def draw_mark(rgb: np.ndarray, box_px: BoxPx, kind: MarkKind, rng: np.random.Generator, *,
              ink: str = "black", dpi: float | None = None) -> None:
    """Draw one mark of ``kind`` on the target whose printed box is ``box_px`` (in place).

    ``ink`` is the voter's pen (black/blue/red/green); graphite kinds use pencil whatever it is.
    ``dpi`` defaults to the box width over the nominal 0.22 in.
    """
    kind = MarkKind(kind)
    if kind in (MarkKind.NONE, MarkKind.DAMAGED):
        return
    dpi = float(dpi if dpi is not None else box_px[2] / TARGET_W_IN)
    r = _roi(rgb.shape, box_px, dpi)
    use = ink_for(kind, ink)
    assert use is not None
    if kind is MarkKind.FULL_FILL:
        alpha, dark = _full(r, rng, 0.85, 1.0, 0.03), rng.uniform(0.75, 1.0)
    elif kind is MarkKind.PARTIAL_FILL:
        alpha, dark = _partial(r, rng), rng.uniform(0.7, 1.0)
    elif kind is MarkKind.CHECK:
        alpha, dark = _check(r, rng), rng.uniform(0.7, 1.0)
    elif kind is MarkKind.X_MARK:
        alpha, dark = _x(r, rng), rng.uniform(0.7, 1.0)
    elif kind is MarkKind.LIGHT_PENCIL:
        alpha, dark = _graphite(r, rng, lambda: _full(r, rng, 0.85, 1.0, 0.02) * _grain(r, rng, PENCIL_GRAIN),
                                PENCIL_DARKNESS, PENCIL_MEASURED)
    elif kind is MarkKind.HESITATION_DOT:
        alpha, dark = _dot(r, rng), rng.uniform(0.7, 1.0)
    elif kind is MarkKind.FAINT_TRACE:
        alpha, dark = _smudge(r, rng), rng.uniform(*TRACE_DARKNESS)
    elif kind is MarkKind.STRAY_LINE:
        alpha, dark = _stray(r, rng), rng.uniform(0.7, 1.0)
    elif kind is MarkKind.CIRCLED:
        alpha, dark = _circled(r, rng), rng.uniform(0.7, 1.0)
    elif kind is MarkKind.ERASURE:
        alpha, dark = _graphite(r, rng, lambda: _erasure(r, rng), ERASURE_DARKNESS, ERASURE_MEASURED)
    elif kind is MarkKind.SMALL_PARTIAL:
        alpha, dark = _small(r, rng), rng.uniform(0.7, 1.0)
    else:
        raise AssertionError(f"unhandled mark kind {kind}")
    _composite(rgb, r, np.minimum(alpha, 1.0), ink_color(use, dark))


# --------------------------------------------------------------------------------------
# Write-ins


def draw_write_in(rgb: np.ndarray, area_px: BoxPx, rng: np.random.Generator, *, ink: str, dpi: float) -> None:
    """Handwriting-like cursive strokes (a name) inside a write-in area."""
    x, y, w, h = area_px
    margin = 0.06 * dpi
    letters = int(rng.integers(6, 13))
    adv = min((w - 2 * margin) / letters, 0.12 * dpi)
    base = y + h - margin - rng.uniform(0, 0.03) * dpi
    height = min(h - 2 * margin, rng.uniform(0.09, 0.16) * dpi)
    t = np.linspace(0, letters, letters * 24)
    amp = np.repeat(rng.uniform(0.45, 1.0, letters), 24)
    xs = x + margin + t * adv + 0.3 * adv * np.sin(2 * np.pi * t + rng.uniform(0, 6.28))
    ys = base - height * amp * (0.5 - 0.5 * np.cos(2 * np.pi * t))
    r = _roi(rgb.shape, area_px, dpi, margin_in=0.05)
    pts = np.stack([xs - r.x0, ys - r.y0], 1)
    alpha = _stroke(r, pts, max(1.0, rng.uniform(0.012, 0.02) * dpi))
    _composite(rgb, r, alpha, ink_color(ink, rng.uniform(0.75, 1.0)))


# --------------------------------------------------------------------------------------
# Damage


@dataclass(frozen=True, slots=True)
class Damage:
    """A damaged region of a card: ``mask`` is True where the damage is plainly visible
    (a fold's crease line, a stain darkening the paper by >= :data:`STAIN_VISIBLE`, the
    missing paper and edge of a tear); faint fold shadows and stain fringes are left out."""

    kind: str  # "fold" | "stain" | "tear"
    mask: np.ndarray  # bool, H x W of the card
    bilevel_mask: np.ndarray | None = None  # where still visible in a bilevel scan (None: as mask)


def _darken(rgb: np.ndarray, darkness: np.ndarray, tint: tuple[float, float, float] = (1.0, 1.0, 1.0)) -> None:
    """Multiply the paper by ``1 - darkness`` (optionally tinted per channel)."""
    factor = 1.0 - darkness[..., None] * np.array(tint, np.float32)[None, None, :]
    np.copyto(rgb, np.clip(rgb.astype(np.float32) * factor + 0.5, 0, 255).astype(np.uint8))


def draw_fold(rgb: np.ndarray, rng: np.random.Generator, *, dpi: float) -> Damage:
    """A crease across the card (letter folded in thirds, or in half) with its shadow."""
    h, w = rgb.shape[:2]
    y_in = rng.choice([11 / 3, 22 / 3, 5.5]) + rng.uniform(-0.4, 0.4)
    slope = np.tan(np.deg2rad(rng.uniform(-2.5, 2.5)))
    reach = abs(slope) * w / 2 + 0.8 * dpi
    r0, r1 = max(0, int(y_in * dpi - reach)), min(h, int(y_in * dpi + reach) + 1)
    rows = np.arange(r0, r1, dtype=np.float32)[:, None]
    line = y_in * dpi + slope * (np.arange(w, dtype=np.float32)[None, :] - w / 2)
    d = rows - line  # signed distance (rows) from the crease
    crease = rng.uniform(*FOLD_CREASE) * np.exp(-(d / (rng.uniform(0.006, 0.012) * dpi)) ** 2)
    side = 1 if rng.random() < 0.5 else -1
    shadow_w = rng.uniform(0.05, 0.12) * dpi
    shadow = rng.uniform(*FOLD_SHADOW) * np.exp(-np.maximum(side * d, 0) / shadow_w) * (side * d >= 0)
    darkness = np.maximum(crease, shadow).astype(np.float32)
    _darken(rgb[r0:r1], darkness)
    mask = np.zeros((h, w), bool)
    mask[r0:r1] = crease >= CREASE_VISIBLE  # the line itself, not its faint shadow
    return Damage("fold", mask)


def draw_stain(rgb: np.ndarray, rng: np.random.Generator, *, dpi: float, near_px: tuple[float, float] | None = None) -> Damage:
    """A coffee or water stain: a tinted blob with a darker rim; ``near_px`` centres it there."""
    h, w = rgb.shape[:2]
    cx, cy = near_px if near_px is not None else (rng.uniform(0.1, 0.9) * w, rng.uniform(0.15, 0.9) * h)
    cx += rng.uniform(-0.3, 0.3) * dpi
    cy += rng.uniform(-0.3, 0.3) * dpi
    rad = rng.uniform(0.3, 0.8) * dpi
    t = np.linspace(0, 2 * np.pi, 90, endpoint=False)
    rr = rad * (1 + sum(rng.uniform(-0.08, 0.08) * np.cos(k * t + rng.uniform(0, 6.28)) for k in (2, 3, 4)))
    pts = np.stack([cx + rr * np.cos(t), cy + rr * rng.uniform(0.7, 1.0) * np.sin(t)], 1)
    pad = int(0.08 * dpi) + 2
    x0, y0 = max(0, int(pts[:, 0].min()) - pad), max(0, int(pts[:, 1].min()) - pad)
    x1, y1 = min(w, int(pts[:, 0].max()) + pad), min(h, int(pts[:, 1].max()) + pad)
    mask = np.zeros((h, w), bool)
    if x1 <= x0 or y1 <= y0:
        return Damage("stain", mask)
    m = np.zeros((y1 - y0, x1 - x0), np.uint8)
    cv2.fillPoly(m, [np.round(pts - [x0, y0]).astype(np.int32)], 255, cv2.LINE_AA)
    body = m.astype(np.float32) / 255.0
    rim = body - cv2.erode(body, np.ones((5, 5), np.uint8), iterations=max(1, int(0.02 * dpi)))
    darkness = cv2.GaussianBlur(body * rng.uniform(*STAIN_BODY) + rim * rng.uniform(0.1, 0.2), (0, 0), 0.01 * dpi)
    tint = (0.55, 0.9, 1.35)  # brownish: blue absorbed most
    _darken(rgb[y0:y1, x0:x1], darkness, tint=tint)
    gray_dark = darkness * gray_of(tint)
    mask[y0:y1, x0:x1] = gray_dark >= STAIN_VISIBLE  # gray darkness of the stain
    return Damage("stain", mask, _bilevel_visible(gray_dark, (y0, x0), (h, w)))


def _bilevel_visible(darkness: np.ndarray, origin: tuple[int, int], shape: tuple[int, int]) -> np.ndarray:
    """Where a broad darkening stays visible (>= :data:`STAIN_VISIBLE`) after a bilevel scanner
    flattens the paper white (the same estimate as :func:`scanpipe.synth.scan.to_bilevel`:
    1/16 scale, 5x5 dilation, blur): the middle of a large stain is flattened away."""
    h, w = shape
    gray = np.full((h, w), 255.0, np.float32)
    y0, x0 = origin
    gray[y0:y0 + darkness.shape[0], x0:x0 + darkness.shape[1]] = 255.0 * (1.0 - darkness)
    small = cv2.resize(gray, (max(1, w // 16), max(1, h // 16)), interpolation=cv2.INTER_AREA)
    white = cv2.GaussianBlur(cv2.dilate(small, np.ones((5, 5), np.uint8)), (0, 0), 2.0)
    white = cv2.resize(white, (w, h), interpolation=cv2.INTER_LINEAR)
    flat = gray * (255.0 / np.maximum(white, 64.0))
    return 1.0 - np.minimum(flat, 255.0) / 255.0 >= STAIN_VISIBLE


def draw_tear(rgb: np.ndarray, rng: np.random.Generator, *, dpi: float) -> Damage:
    """A torn-off corner: the piece is gone (the white scanner backing shows), jagged edge."""
    h, w = rgb.shape[:2]
    corner = int(rng.integers(4))
    la, lb = rng.uniform(0.35, 1.0) * dpi, rng.uniform(0.35, 1.0) * dpi
    n = 14
    xs = np.linspace(la, 0, n) + rng.uniform(-0.03, 0.03, n) * dpi
    ys = np.linspace(0, lb, n) + rng.uniform(-0.03, 0.03, n) * dpi
    pts = np.concatenate([[[0, 0]], np.stack([xs, ys], 1)])
    if corner in (1, 3):
        pts[:, 0] = w - 1 - pts[:, 0]
    if corner in (2, 3):
        pts[:, 1] = h - 1 - pts[:, 1]
    m = np.zeros((h, w), np.uint8)
    cv2.fillPoly(m, [np.round(pts).astype(np.int32)], 255)
    edge = cv2.polylines(np.zeros((h, w), np.uint8), [np.round(pts[1:]).astype(np.int32)], False, 255,
                         max(1, int(0.01 * dpi)))
    rgb[m > 0] = 255
    rgb[edge > 0] = (rgb[edge > 0].astype(np.float32) * 0.6).astype(np.uint8)
    return Damage("tear", (m > 0) | (edge > 0))


def draw_bleed_through(rgb: np.ndarray, other_side: np.ndarray, rng: np.random.Generator, *, dpi: float,
                       max_darkness: float = BLEED_MAX) -> float:
    """Faint mirrored content of the other side; returns the strength used (<= ``max_darkness``)."""
    strength = float(rng.uniform(0.03, max_darkness))
    other = cv2.cvtColor(other_side, cv2.COLOR_RGB2GRAY) if other_side.ndim == 3 else other_side
    other = cv2.resize(other[:, ::-1], (rgb.shape[1], rgb.shape[0]), interpolation=cv2.INTER_AREA)
    dark = (1.0 - other.astype(np.float32) / 255.0)
    dark = cv2.GaussianBlur(dark, (0, 0), max(0.8, 0.008 * dpi)) * strength
    _darken(rgb, dark)
    return strength


def damaged_targets(damage: Damage, boxes: dict[int, BoxPx], *, dpi: float, grow_in: float | None = None,
                    bilevel: bool = False) -> set[int]:
    """Indices of targets that ``damage`` lies over.

    A fold's crease counts when it meets the target's box grown by ``grow_in`` (default
    :data:`DAMAGE_REACH_IN`); a stain when its visible part covers at least :data:`STAIN_OVER`
    of the box; a tear only when missing paper or its edge meets the printed oval itself (a
    torn box corner beside the oval harms nothing). ``bilevel``: as seen in a bilevel scan.
    """
    mask = damage.bilevel_mask if bilevel and damage.bilevel_mask is not None else damage.mask
    g = (DAMAGE_REACH_IN if grow_in is None else grow_in) * dpi
    hit = set()
    for i, (x, y, w, h) in boxes.items():
        if damage.kind == "tear":
            y0, y1, x0, x1 = max(0, int(y)), int(np.ceil(y + h)), max(0, int(x)), int(np.ceil(x + w))
            patch = damage.mask[y0:y1, x0:x1]
            rows, cols = np.mgrid[y0:y0 + patch.shape[0], x0:x0 + patch.shape[1]]
            inside = ((cols + 0.5 - x - w / 2) / (w / 2)) ** 2 + ((rows + 0.5 - y - h / 2) / (h / 2)) ** 2 <= 1.0
            if (patch & inside).any():
                hit.add(i)
            continue
        if damage.kind == "stain":
            patch = mask[max(0, int(y)):int(np.ceil(y + h)), max(0, int(x)):int(np.ceil(x + w))]
            if patch.size and float(patch.mean()) >= STAIN_OVER:
                hit.add(i)
            continue
        y0, y1 = max(0, int(y - g)), int(np.ceil(y + h + g))
        x0, x1 = max(0, int(x - g)), int(np.ceil(x + w + g))
        if mask[y0:y1, x0:x1].any():
            hit.add(i)
    return hit
