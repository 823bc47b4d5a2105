"""Print a vendor-like card (:mod:`scanpipe.synth.vendor`) at a given resolution.

The same model of paper and ink as :mod:`scanpipe.synth.render` (white 255, black print 20,
drawn with OpenCV at the output dpi, sub-pixel ``shift``), with the vendors' own shapes:

* ``oval``: an ellipse outline whose outer edge is the target box;
* ``rounded``: a rounded rectangle outline (corner radius 0.035 in) filling the box;
* ``arrow``: a feathered tail ending at the box's left edge and an arrow head starting at its
  right edge, on the box's centre line: the empty gap between them is the target, which a
  voter completes with a line.

Contest header bands are shaded gray (a bilevel scanner turns them into a dither pattern);
the instructions print a filled example target (ink that is not a target); timing marks
are solid boxes. Blank cards are cached per (style, page, precinct, dpi).
"""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path

import cv2
import numpy as np

from scanpipe.synth.render import INK, PAPER, SHIFT, box_px
from scanpipe.synth.vendor import VendorPage, precinct_name, vendor_page
from scanpipe.types import Election

BAND_GRAY = 200
_ONE = 1 << SHIFT


def _fx(v: float) -> int:
    return int(round(v * _ONE))


def _pt(x_in: float, y_in: float, dpi: float) -> tuple[int, int]:
    return _fx(x_in * dpi), _fx(y_in * dpi)


def _text(img: np.ndarray, text: str, x_in: float, y_in: float, height_in: float, dpi: float, font: int, bold: bool) -> None:
    height_px = height_in * dpi
    scale = height_px / 22.0
    thickness = max(1, int(round(height_px / (6.0 if bold else 9.5))))
    cv2.putText(img, text, (int(round(x_in * dpi)), int(round(y_in * dpi))), font, scale, INK, thickness, cv2.LINE_AA)


def _rect(img: np.ndarray, box_in: tuple[float, float, float, float], dpi: float, color: tuple[int, int, int]) -> None:
    x, y, w, h = box_px(box_in, dpi)
    cv2.rectangle(img, (_fx(x), _fx(y)), (_fx(x + w) - 1, _fx(y + h) - 1), color, -1, cv2.LINE_AA, SHIFT)


def _line(img: np.ndarray, x1: float, y1: float, x2: float, y2: float, width_in: float, dpi: float) -> None:
    cv2.line(img, _pt(x1, y1, dpi), _pt(x2, y2, dpi), INK, max(1, int(round(width_in * dpi))), cv2.LINE_AA, SHIFT)


def _oval(img: np.ndarray, box: tuple[float, float, float, float], t: float, filled: bool) -> None:
    x, y, w, h = box
    if filled:
        cv2.ellipse(img, (_fx(x + w / 2), _fx(y + h / 2)), (_fx(w / 2), _fx(h / 2)), 0, 0, 360, INK, -1, cv2.LINE_AA, SHIFT)
        return
    cv2.ellipse(img, (_fx(x + w / 2), _fx(y + h / 2)), (_fx(w / 2 - t / 2), _fx(h / 2 - t / 2)), 0, 0, 360, INK,
                max(1, int(round(t))), cv2.LINE_AA, SHIFT)


def _rounded(img: np.ndarray, box: tuple[float, float, float, float], t: float, radius: float, filled: bool) -> None:
    """A rounded rectangle whose outer edge is ``box`` (pixels)."""
    x, y, w, h = box
    mask = np.zeros((int(np.ceil(h)) + 4, int(np.ceil(w)) + 4), np.uint8)
    ox, oy = int(np.floor(x)) - 1, int(np.floor(y)) - 1

    def shape(inset: float) -> np.ndarray:
        m = np.zeros_like(mask)
        x0, y0, x1, y1 = x - ox + inset, y - oy + inset, x - ox + w - inset, y - oy + h - inset
        r = max(0.5, radius - inset)
        cv2.rectangle(m, (_fx(x0 + r), _fx(y0)), (_fx(x1 - r), _fx(y1)), 255, -1, cv2.LINE_AA, SHIFT)
        cv2.rectangle(m, (_fx(x0), _fx(y0 + r)), (_fx(x1), _fx(y1 - r)), 255, -1, cv2.LINE_AA, SHIFT)
        for cx, cy in ((x0 + r, y0 + r), (x1 - r, y0 + r), (x0 + r, y1 - r), (x1 - r, y1 - r)):
            cv2.circle(m, (_fx(cx), _fx(cy)), _fx(r), 255, -1, cv2.LINE_AA, SHIFT)
        return m.astype(np.float32) / 255.0

    alpha = shape(0.0) if filled else np.clip(shape(0.0) - shape(t), 0.0, 1.0)
    region = img[oy:oy + mask.shape[0], ox:ox + mask.shape[1]]
    a = alpha[:region.shape[0], :region.shape[1], None]
    region[...] = (region * (1 - a) + np.array(INK, np.float32) * a + 0.5).astype(np.uint8)


def _arrow(img: np.ndarray, box: tuple[float, float, float, float], dpi: float, t: float) -> None:
    """A broken arrow around the gap ``box`` (pixels): tail on the left, head on the right."""
    x, y, w, h = box
    cy = y + h / 2
    tail = 0.20 * dpi
    width = max(1, int(round(t)))
    cap = width / 2 + 1  # round line caps stay out of the gap
    cv2.line(img, (_fx(x - tail), _fx(cy)), (_fx(x - cap), _fx(cy)), INK, width, cv2.LINE_AA, SHIFT)
    for dx in (0.0, 0.05 * dpi):  # the feathers
        cv2.line(img, (_fx(x - tail + dx), _fx(cy)), (_fx(x - tail + dx - 0.05 * dpi), _fx(cy - 0.05 * dpi)), INK,
                 max(1, width // 2), cv2.LINE_AA, SHIFT)
        cv2.line(img, (_fx(x - tail + dx), _fx(cy)), (_fx(x - tail + dx - 0.05 * dpi), _fx(cy + 0.05 * dpi)), INK,
                 max(1, width // 2), cv2.LINE_AA, SHIFT)
    shaft = 0.08 * dpi
    cv2.line(img, (_fx(x + w + cap), _fx(cy)), (_fx(x + w + shaft), _fx(cy)), INK, width, cv2.LINE_AA, SHIFT)
    head = np.array([[x + w + shaft - 0.01 * dpi, cy - 0.06 * dpi], [x + w + shaft + 0.09 * dpi, cy],
                     [x + w + shaft - 0.01 * dpi, cy + 0.06 * dpi]])
    cv2.fillPoly(img, [np.round(head * _ONE).astype(np.int32)], INK, cv2.LINE_AA, SHIFT)


def draw_target(img: np.ndarray, shape: str, box_in: tuple[float, float, float, float], dpi: float, outline_in: float,
                filled: bool = False) -> None:
    """One vendor target (or, ``filled``, the instructions' example of a marked one)."""
    box = box_px(box_in, dpi)
    t = max(1.0, outline_in * dpi)
    if shape == "oval":
        _oval(img, box, t, filled)
    elif shape == "rounded":
        _rounded(img, box, t, 0.035 * dpi, filled)
    elif shape == "arrow":
        _arrow(img, box, dpi, t)
        if filled:
            _line(img, box_in[0] - 0.01, box_in[1] + box_in[3] / 2, box_in[0] + box_in[2] + 0.01, box_in[1] + box_in[3] / 2,
                  outline_in * 1.4, dpi)
    else:
        raise ValueError(f"unknown target shape {shape!r}")


def draw_page(img: np.ndarray, page: VendorPage, dpi: float) -> None:
    """Print ``page`` onto white paper ``img`` (RGB, the page size at ``dpi``)."""
    family = page.family
    for band in page.bands_in:
        _rect(img, band, dpi, (BAND_GRAY,) * 3)
    for text in page.texts:
        _text(img, text.text, text.x_in, text.y_in, text.height_in, dpi, text.font if text.font is not None else family.font, text.bold)
    for x1, y1, x2, y2, width in page.rules_in:
        _line(img, x1, y1, x2, y2, width, dpi)
    for x1, y1, x2, y2 in page.write_in_lines_in:
        _line(img, x1, y1, x2, y2, 0.012, dpi)
    for mark in page.timing_in:
        _rect(img, mark, dpi, INK)
    for x, y, sx, sy in page.brackets_in:
        _line(img, x, y, x + sx * 0.35, y, 0.03, dpi)
        _line(img, x, y, x, y + sy * 0.35, 0.03, dpi)
    for target in page.targets:
        draw_target(img, family.target, tuple(target["box"]), dpi, family.outline_in)
    draw_target(img, family.target, page.example_in, dpi, family.outline_in, filled=True)


@lru_cache(maxsize=32)
def _blank(style_id: str, page: int, precinct: str, dpi: float) -> np.ndarray:
    vp = vendor_page(style_id, page, precinct_name(precinct))
    w_in, h_in = vp.size_in
    img = np.full((int(round(h_in * dpi)), int(round(w_in * dpi)), 3), PAPER, np.uint8)
    draw_page(img, vp, dpi)
    img.setflags(write=False)
    return img


def render_vendor_card(election: Election, style_id: str, page: int, precinct_id: str, dpi: float) -> np.ndarray:
    """A blank vendor-like card as an RGB uint8 array of the page size at ``dpi``."""
    assert election.has_style(style_id), f"style {style_id} is not in election {election.id}"
    return _blank(style_id, page, precinct_id, float(dpi)).copy()


def blank_scan(election: Election, style_id: str, page: int, path: Path, fmt: str) -> None:
    """The style's blank reference: rendered at the reference dpi, lightly blurred as a scanner
    would, written as gray PNG or bilevel TIFF G4 (deterministic bytes)."""
    from scanpipe.synth.scan import save_scan
    from scanpipe.synth.vendor import REFERENCE_DPI, STYLES

    rgb = render_vendor_card(election, style_id, page, STYLES[style_id].precinct, REFERENCE_DPI)
    gray = cv2.GaussianBlur(cv2.cvtColor(rgb, cv2.COLOR_RGB2GRAY), (0, 0), 0.6)
    save_scan(path, gray, fmt, dpi=REFERENCE_DPI)
