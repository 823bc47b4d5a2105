"""Render blank printed ballot cards from a layout, directly at the wanted resolution.

The model of a printed card: white paper (255), black print (20). Everything is drawn with
OpenCV at the output dpi (inch coordinates times dpi, sub-pixel precision via ``shift``), so
no resampling is needed: fiducials are filled squares, targets are ellipse outlines
(~0.012 in) whose outer edge is the layout box, the QR card code fills the layout's ``qr`` box
exactly (no quiet zone inside the box; the paper around it is white), titles and names are
Hershey text, vendor styles add timing marks and rules. A pairing ``label`` is a white sticker
with a real Code 128 symbol (zxing-cpp) and its text.

Blank cards are cached per (style, page, precinct, dpi, code) because decks print thousands.
"""

from __future__ import annotations

from functools import lru_cache

import cv2
import numpy as np
import zxingcpp

from scanpipe.synth.definition import STYLES, page_geometry
from scanpipe.types import Box, Election

INK = (20, 20, 20)
PAPER = 255
OUTLINE_IN = 0.012
SHIFT = 4  # sub-pixel bits for cv2 drawing
_ONE = 1 << SHIFT
LABEL_BOX_IN: Box = (2.9, 9.42, 2.6, 0.78)


def card_code_payload(election_id: str, style_id: str, precinct_id: str | None, page: int) -> str:
    """The ``SPB1`` card code payload (contract section 4)."""
    return f"SPB1|E={election_id}|S={style_id}|P={precinct_id or ''}|PG={page}"


def box_px(box_in: Box, dpi: float) -> tuple[float, float, float, float]:
    """Inches ``(x, y, w, h)`` to pixels at ``dpi``."""
    return (box_in[0] * dpi, box_in[1] * dpi, box_in[2] * dpi, box_in[3] * dpi)


def _fx(v: float) -> int:
    return int(round(v * _ONE))


def qr_modules(payload: str) -> np.ndarray:
    """QR symbol as a ``n x n`` bool array (True = dark module), without quiet zone."""
    code = zxingcpp.create_barcode(payload, zxingcpp.BarcodeFormat.QRCode, ec_level="M")
    img = np.asarray(code.to_image(scale=1, add_quiet_zones=False))
    return img < 128


def code128_modules(text: str) -> np.ndarray:
    """Code 128 symbol as a 1-D bool array of modules (True = bar), without quiet zone."""
    code = zxingcpp.create_barcode(text, zxingcpp.BarcodeFormat.Code128)
    img = np.asarray(code.to_image(scale=1, add_quiet_zones=False))
    return img[img.shape[0] // 2] < 128


def draw_modules(img: np.ndarray, modules: np.ndarray, box: tuple[float, float, float, float]) -> None:
    """Paint a bool module grid into ``box`` (pixels), module edges rounded to pixels."""
    x, y, w, h = box
    rows, cols = modules.shape
    ys = np.round(y + np.arange(rows + 1) * h / rows).astype(int)
    xs = np.round(x + np.arange(cols + 1) * w / cols).astype(int)
    row_of = np.repeat(np.arange(rows), np.diff(ys))
    col_of = np.repeat(np.arange(cols), np.diff(xs))
    patch = modules[np.ix_(row_of, col_of)]
    region = img[ys[0]:ys[-1], xs[0]:xs[-1]]
    region[patch] = INK[0] if img.ndim == 2 else INK
    region[~patch] = PAPER


def _draw_text(img: np.ndarray, text: str, x_in: float, y_in: float, height_in: float, dpi: float) -> None:
    height_px = height_in * dpi
    scale = height_px / 22.0
    thickness = max(1, int(round(height_px / 9.0)))
    cv2.putText(img, text, (int(round(x_in * dpi)), int(round(y_in * dpi))), cv2.FONT_HERSHEY_SIMPLEX,
                scale, INK, thickness, cv2.LINE_AA)


def _fill_box(img: np.ndarray, box_in: Box, dpi: float) -> None:
    x, y, w, h = box_px(box_in, dpi)
    cv2.rectangle(img, (_fx(x), _fx(y)), (_fx(x + w) - 1, _fx(y + h) - 1), INK, -1, cv2.LINE_AA, SHIFT)


def draw_target(img: np.ndarray, box: tuple[float, float, float, float], dpi: float) -> None:
    """An oval outline whose outer edge is the box (pixels)."""
    x, y, w, h = box
    t = max(1.0, OUTLINE_IN * dpi)
    center = (_fx(x + w / 2), _fx(y + h / 2))
    axes = (_fx(w / 2 - t / 2), _fx(h / 2 - t / 2))
    cv2.ellipse(img, center, axes, 0, 0, 360, INK, int(round(t)), cv2.LINE_AA, SHIFT)


def _line(img: np.ndarray, seg: tuple[float, float, float, float], dpi: float, width_in: float) -> None:
    x1, y1, x2, y2 = (v * dpi for v in seg)
    cv2.line(img, (_fx(x1), _fx(y1)), (_fx(x2), _fx(y2)), INK, max(1, int(round(width_in * dpi))), cv2.LINE_AA, SHIFT)


def _precinct_name(election: Election, precinct_id: str) -> str:
    return next((p.name for p in election.precincts if p.id == precinct_id), precinct_id)


@lru_cache(maxsize=64)
def _blank(election: Election, style_id: str, page: int, precinct_id: str, dpi: float,
           card_code: bool, payload: str | None) -> np.ndarray:
    layout_page = next(p for p in election.style(style_id).layout.pages if p.page == page)
    w_in, h_in = layout_page.size_in
    img = np.full((int(round(h_in * dpi)), int(round(w_in * dpi)), 3), PAPER, np.uint8)
    if style_id in STYLES:
        geometry, _ = page_geometry(style_id, page, _precinct_name(election, precinct_id))
        for text in geometry.texts:
            _draw_text(img, text.text, text.x_in, text.y_in, text.height_in, dpi)
        for rule in geometry.rules_in:
            _line(img, rule, dpi, 0.02)
        for seg in geometry.write_in_lines_in:
            _line(img, seg, dpi, 0.012)
        for mark in geometry.timing_marks_in:
            _fill_box(img, mark, dpi)
    for fid in layout_page.fiducials_in:
        _fill_box(img, fid, dpi)
    for target in layout_page.targets:
        draw_target(img, box_px(target.box_in, dpi), dpi)
    if card_code and layout_page.qr_in is not None:
        code_text = payload or card_code_payload(election.id, style_id, precinct_id, page)
        draw_modules(img, qr_modules(code_text), box_px(layout_page.qr_in, dpi))
    img.setflags(write=False)
    return img


def draw_label(img: np.ndarray, text: str, dpi: float, box_in: Box = LABEL_BOX_IN) -> None:
    """A white sticker with a Code 128 symbol of ``text`` and the text under it."""
    x, y, w, h = box_px(box_in, dpi)
    cv2.rectangle(img, (int(x), int(y)), (int(x + w), int(y + h)), (255, 255, 255), -1)
    cv2.rectangle(img, (int(x), int(y)), (int(x + w), int(y + h)), (170, 170, 170), 1)
    modules = code128_modules(text)
    module_px = max(2, int(round(0.013 * dpi)))
    bars_w = module_px * modules.size
    bx = int(round(x + (w - bars_w) / 2))
    by, bh = int(round(y + 0.08 * dpi)), int(round(0.40 * dpi))
    draw_modules(img, modules[None, :], (bx, by, bars_w, bh))
    _draw_text(img, text, (bx + 0.1 * dpi) / dpi, (by + bh) / dpi + 0.17, 0.11, dpi)


def render_card(election: Election, style_id: str, page: int, precinct_id: str, dpi: float, *,
                card_code: bool = True, label: str | None = None, code_payload: str | None = None) -> np.ndarray:
    """A blank printed card as an RGB uint8 array of the page size at ``dpi``.

    ``card_code=False`` leaves the QR box empty; ``code_payload`` prints a different
    payload there (e.g. another election's); ``label`` sticks a Code 128 pairing label on.
    """
    img = _blank(election, style_id, page, precinct_id, float(dpi), card_code, code_payload).copy()
    if label is not None:
        draw_label(img, label, dpi)
    return img
