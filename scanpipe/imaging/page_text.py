"""Read the printed text lines of a ballot page with OCR (for layouts made from a blank).

The engine is the one the ``ocr`` extra ships (``rapidocr-onnxruntime``: PP-OCR models
inside the wheel, run on the CPU, nothing downloaded; see :mod:`scanpipe.imaging.printed`).
Two stages, each where it is cheapest:

1. **detect** the text lines on the page reduced to :data:`DETECT_DPI` (detection cost grows
   with the pixels; ballot text of 8 pt and up is still found there);
2. **recognise** each line from the page at full resolution (the recogniser scales every
   line to 48 px high anyway, so the sharper crop is free).

The targets are painted over with paper first, so an oval is never read as an ``O`` or a
``0`` in front of a name. :class:`OcrUnavailable` is raised when the extra is not
installed; the caller then still finds targets and says that names could not be read.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

import cv2
import numpy as np

from scanpipe.imaging.targets import Rect

DETECT_DPI = 100.0
MIN_TEXT_SCORE = 0.5  # the recogniser's own confidence below which a line is dropped
PAINT_MARGIN_PX = 2
PDF_WORD_GAP = 1.2  # character heights: a wider gap on a baseline ends a run of text
PDF_SPACE = 0.28  # character heights: a wider gap between two letters is a space


class OcrUnavailable(Exception):
    """The OCR extra (``rapidocr-onnxruntime``) is not installed."""


@dataclass(frozen=True, slots=True)
class TextLine:
    """One printed line (or a run of words on one line) as read: text, box in page pixels."""

    text: str
    box_px: Rect
    score: float


@lru_cache(maxsize=1)
def _engine() -> Any:
    try:
        from rapidocr_onnxruntime import RapidOCR
    except ModuleNotFoundError as exc:
        raise OcrUnavailable(str(exc)) from exc
    return RapidOCR()


def ocr_available() -> bool:
    """Whether the OCR engine can be loaded here."""
    try:
        _engine()
    except OcrUnavailable:
        return False
    return True


def recognise(images: Sequence[np.ndarray]) -> tuple[tuple[str, float], ...]:
    """Each grey image (one line or glyph of print, uint8) read as text, with the recogniser's
    own confidence (no detection: the caller knows where the print is).

    Raises
    ------
    OcrUnavailable
        when the ``ocr`` extra is not installed.
    """
    engine = _engine()
    if not images:
        return ()
    results, _ = engine.text_rec([cv2.cvtColor(im, cv2.COLOR_GRAY2BGR) for im in images])
    return tuple((str(text).strip(), float(score)) for text, score in results)


def read_page_text(gray: np.ndarray, dpi: float, *, paint_out: Sequence[Rect] = ()) -> tuple[TextLine, ...]:
    """Every text line of a page, top to bottom, with the boxes ``paint_out`` made paper first.

    Raises
    ------
    OcrUnavailable
        when the ``ocr`` extra is not installed.
    """
    engine = _engine()
    page = gray.copy()
    paper = int(np.percentile(gray, 95))
    for x, y, w, h in paint_out:
        m = PAINT_MARGIN_PX
        page[max(0, y - m) : y + h + m, max(0, x - m) : x + w + m] = paper
    boxes = detect_lines(engine, page, dpi)
    if not boxes:
        return ()
    crops = [cv2.cvtColor(page[y : y + h, x : x + w], cv2.COLOR_GRAY2BGR) for x, y, w, h in boxes]
    results, _ = engine.text_rec(crops)
    lines = [TextLine(str(text).strip(), box, float(score)) for box, (text, score) in zip(boxes, results)]
    return tuple(sorted((ln for ln in lines if ln.text and ln.score >= MIN_TEXT_SCORE), key=lambda ln: (ln.box_px[1], ln.box_px[0])))


def detect_lines(engine: Any, gray: np.ndarray, dpi: float) -> list[Rect]:
    """Text line boxes in page pixels (detected on the page reduced to :data:`DETECT_DPI`)."""
    scale = min(1.0, DETECT_DPI / dpi)
    small = cv2.resize(gray, None, fx=scale, fy=scale, interpolation=cv2.INTER_AREA) if scale < 1.0 else gray
    found, _ = engine.text_det(cv2.cvtColor(small, cv2.COLOR_GRAY2BGR))
    if found is None:
        return []
    height, width = gray.shape[:2]
    out = []
    for quad in found:
        pts = np.asarray(quad, float) / scale
        x0, y0 = max(0, int(pts[:, 0].min())), max(0, int(pts[:, 1].min()))
        x1, y1 = min(width, int(np.ceil(pts[:, 0].max()))), min(height, int(np.ceil(pts[:, 1].max())))
        if x1 - x0 >= 4 and y1 - y0 >= 4:
            out.append((x0, y0, x1 - x0, y1 - y0))
    return out


# --------------------------------------------------------------------------------------
# A PDF's own text layer


def pdf_text_lines(page: Any, dpi: float) -> tuple[TextLine, ...]:
    """The text of a PDF page (a ``pypdfium2`` page) as lines in page pixels at ``dpi``.

    A vendor's sample ballot is usually a vector PDF that carries its text: that is exact
    and costs nothing, so it is read instead of OCR. Characters are joined into runs along a
    baseline; a gap wider than :data:`PDF_WORD_GAP` character heights ends a run (a party
    abbreviation set apart from the name is its own run, as OCR would see it). Characters
    much taller than the page's text (a "SAMPLE" stamp set as text) are left out.
    """
    textpage = page.get_textpage()
    try:
        height_pt = page.get_size()[1]
        chars = []
        for i in range(textpage.count_chars()):
            ch = textpage.get_text_range(i, 1)
            if not ch or ch in "\r\n":
                continue
            left, bottom, right, top = textpage.get_charbox(i)
            if top - bottom > 0:
                chars.append((ch, left, height_pt - top, right, height_pt - bottom))
    finally:
        textpage.close()
    if not chars:
        return ()
    typical = float(np.median([c[4] - c[2] for c in chars if not c[0].isspace()] or [10.0]))
    chars = [c for c in chars if c[4] - c[2] <= 3 * typical]
    runs: list[list[tuple[str, float, float, float, float]]] = []
    for c in chars:
        last = runs[-1][-1] if runs else None
        band = (min(r[2] for r in runs[-1]), max(r[4] for r in runs[-1])) if runs else (0.0, 0.0)
        centre = (c[2] + c[4]) / 2.0  # a descender (g, p, y) hangs lower but stays on the line
        if last is not None and band[0] - 0.2 * typical <= centre <= band[1] + 0.2 * typical and -0.5 * typical <= c[1] - last[3] <= PDF_WORD_GAP * typical:
            if c[1] - last[3] > PDF_SPACE * typical and not c[0].isspace() and not last[0].isspace():
                runs[-1].append((" ", last[3], last[2], c[1], last[4]))  # a gap the PDF set without a space
            runs[-1].append(c)
        elif not c[0].isspace():
            runs.append([c])
    scale = dpi / 72.0
    out = []
    for run in runs:
        text = " ".join("".join(c[0] for c in run).split())
        if not any(ch.isalnum() for ch in text):
            continue
        x0, y0 = min(c[1] for c in run), min(c[2] for c in run)
        x1, y1 = max(c[3] for c in run), max(c[4] for c in run)
        out.append(TextLine(text, (int(x0 * scale), int(y0 * scale), max(1, int((x1 - x0) * scale)), max(1, int((y1 - y0) * scale))), 1.0))
    return tuple(sorted(out, key=lambda ln: (ln.box_px[1], ln.box_px[0])))
