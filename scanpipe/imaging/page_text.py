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
