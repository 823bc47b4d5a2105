"""Read the printed, human-readable selections of a machine-printed record (OCR).

The voter verified the printed text of a BMD summary card or VVPAT record, not its SPV1 code,
so a recount reads both and flags the record when they disagree (contract section 6, Pairs:
``text_code_disagree``). OCR is far slower than mark reading, so it runs only on cards where
an SPV1 record was found.

The OCR engine is ``rapidocr-onnxruntime`` (PP-OCR models shipped inside the wheel, run by
onnxruntime on the CPU: nothing is downloaded). The stages:

1. **upright**: find the SPV1 QR with zxing and turn the page so the symbol stands upright
   (a record fed upside down or skewed reads as printed); the page is reduced to about
   ``OCR_DPI`` (text of 0.14 in cap height stays ~15 px tall);
2. **lines**: OCR boxes grouped into text lines, top to bottom;
3. **match** (pure, :func:`match_printed_lines`): walk the lines in order; a line is a contest
   title or an option name of the current contest (or ``No selection``), whichever it
   resembles most (normalised edit similarity, at least ``MIN_SIMILARITY``); header lines
   before the first title and lines that resemble nothing are kept in ``unmatched``;
4. **compare** (:func:`compare_with_code`): per contest of the style, the printed options vs
   the code's; a contest whose text could not be found is a disagreement too (the record
   cannot be verified, so a person looks).
"""

from __future__ import annotations

import difflib
import re
import time
from collections.abc import Sequence
from dataclasses import dataclass, replace
from functools import lru_cache
from typing import Any

import cv2
import numpy as np
import zxingcpp

from scanpipe.types import Election, MachinePrintedCard, MachineRecord, Reason, UnreadableCard

NO_SELECTION = "no selection"
MIN_SIMILARITY = 0.72
OCR_DPI = 110.0  # measured: text reads as well as at 150 dpi, detection ~2x faster
ASSUMED_DPI = 200.0  # when the caller does not know the page's resolution


@dataclass(frozen=True, slots=True)
class PrintedReading:
    """What the printed text says: selections per contest (option ids, in text order)."""

    selections: tuple[tuple[str, tuple[str, ...]], ...]
    lines: tuple[str, ...]  # every OCR line, top to bottom
    unmatched: tuple[str, ...]  # lines that are neither a title nor an option
    seconds: float = 0.0

    @property
    def raw_text(self) -> str:
        return "\n".join(self.lines)

    def contest(self, contest_id: str) -> tuple[str, ...] | None:
        return next((votes for cid, votes in self.selections if cid == contest_id), None)


# --------------------------------------------------------------------------------------
# The OCR edge


@lru_cache(maxsize=1)
def _engine() -> Any:
    """The OCR engine, loaded once per process from the models inside the wheel."""
    from rapidocr_onnxruntime import RapidOCR

    return RapidOCR()


def upright_for_ocr(gray: np.ndarray, dpi: float | None = None) -> np.ndarray:
    """The page turned so its SPV1 QR stands upright, reduced to about ``OCR_DPI``."""
    angle = _qr_angle_deg(gray)
    scale = min(1.0, OCR_DPI / float(dpi or ASSUMED_DPI))
    h, w = gray.shape[:2]
    m = cv2.getRotationMatrix2D((w / 2.0, h / 2.0), angle, scale)
    if abs(angle) > 45:  # keep the whole page in view when turned by about 90 or 180 degrees
        cos, sin = abs(m[0, 0]), abs(m[0, 1])
        nw, nh = int(h * sin + w * cos), int(h * cos + w * sin)
        m[0, 2] += nw / 2.0 - w / 2.0
        m[1, 2] += nh / 2.0 - h / 2.0
    else:
        nw, nh = int(w * scale), int(h * scale)
        m[0, 2] -= (w - nw) / 2.0
        m[1, 2] -= (h - nh) / 2.0
    return cv2.warpAffine(gray, m, (nw, nh), flags=cv2.INTER_AREA, borderValue=255)


def _qr_angle_deg(gray: np.ndarray) -> float:
    """How far the page is turned (counter-clockwise degrees to undo), from the QR's top edge."""
    for r in zxingcpp.read_barcodes(np.ascontiguousarray(gray), formats=zxingcpp.BarcodeFormat.QRCode):  # type: ignore[arg-type]  # stubs omit the implicit conversion to BarcodeFormats
        if r.text.startswith("SPV1"):
            p = r.position
            return float(np.degrees(np.arctan2(p.top_right.y - p.top_left.y, p.top_right.x - p.top_left.x)))
    return 0.0


def ocr_lines(gray: np.ndarray) -> tuple[str, ...]:
    """OCR text lines of an upright page, top to bottom (boxes on one line joined)."""
    result, _ = _engine()(gray, use_cls=False)  # the page is already upright
    boxes = []
    for points, text, _score in result or ():
        pts = np.asarray(points, float)
        boxes.append((float(pts[:, 1].mean()), float(pts[:, 0].min()), float(np.ptp(pts[:, 1])), str(text)))
    boxes.sort()
    lines: list[list[tuple[float, float, float, str]]] = []
    for box in boxes:
        if lines and abs(box[0] - lines[-1][0][0]) < 0.5 * max(box[2], 1.0):
            lines[-1].append(box)
        else:
            lines.append([box])
    return tuple(" ".join(b[3] for b in sorted(line, key=lambda b: b[1])) for line in lines)


def read_printed_selections(gray: np.ndarray, election: Election, style: str, *, dpi: float | None = None) -> PrintedReading:
    """OCR the printed selections of a machine-printed record of ``style``."""
    started = time.perf_counter()
    lines = ocr_lines(upright_for_ocr(gray, dpi))
    reading = match_printed_lines(lines, election, style)
    return replace(reading, seconds=time.perf_counter() - started)


# --------------------------------------------------------------------------------------
# Pure matching


def normalise(text: str) -> str:
    """Lowercase letters and digits, single spaces."""
    return " ".join(re.sub(r"[^a-z0-9]+", " ", text.lower()).split())


def similarity(a: str, b: str) -> float:
    """Edit similarity of two normalised strings, in [0, 1]."""
    a, b = normalise(a), normalise(b)
    if not a or not b:
        return 0.0
    return difflib.SequenceMatcher(None, a, b, autojunk=False).ratio()


def without_sticker_text(line: str) -> str:
    """An OCR line without the text of a pairing sticker the OCR ran into it
    (``Against ORG-S00350Q1U``, ``Fay Fischer -S00535B6S2``): tokens that are a label, or
    serial-like (five or more characters, two or more of them digits). Option names carry no
    digits; an OCR slip (``Br0oks``) carries one."""
    def sticker(token: str) -> bool:
        return token.upper().startswith(("DUP-", "ORG-")) or (len(token) >= 5 and sum(ch.isdigit() for ch in token) >= 2)

    return " ".join(t for t in line.split() if not sticker(t))


def match_printed_lines(lines: Sequence[str], election: Election, style: str) -> PrintedReading:
    """Selections from OCR lines (see the module docstring, stage 3)."""
    contests = [election.contest(cid) for cid in election.style(style).contests]
    found: dict[str, list[str]] = {}
    current = None
    unmatched: list[str] = []
    for raw in lines:
        line = without_sticker_text(raw)
        if not line:
            continue
        title_score, title = max(((similarity(line, c.title), c) for c in contests if c.id not in found or c is current),
                                 key=lambda t: t[0], default=(0.0, None))
        option_score, option = 0.0, None
        if current is not None:
            candidates = [(o.name, o.id) for o in current.options] + [(NO_SELECTION, "")]
            option_score, option = max(((similarity(line, name), oid) for name, oid in candidates), key=lambda t: t[0])
        if title is not None and title_score >= MIN_SIMILARITY and title_score > option_score:
            current = title
            found.setdefault(title.id, [])
        elif current is not None and option is not None and option_score >= MIN_SIMILARITY:
            if option and option not in found[current.id]:
                found[current.id].append(option)
        else:
            unmatched.append(line)
    order = [c.id for c in contests]
    selections = tuple((cid, tuple(found[cid])) for cid in order if cid in found)
    return PrintedReading(selections, tuple(lines), tuple(unmatched))


def compare_with_code(reading: PrintedReading, record: MachineRecord, election: Election) -> tuple[str, ...]:
    """Contests of the record's style whose printed selections differ from the code (or are not found)."""
    code = dict(record.selections)
    differ = []
    for cid in election.style(record.style).contests:
        printed = reading.contest(cid)
        if printed is None or set(printed) != set(code.get(cid, ())):
            differ.append(cid)
    return tuple(differ)


# --------------------------------------------------------------------------------------
# The hook for interpretation


def check_printed_record(gray: np.ndarray, record: MachineRecord, election: Election, *, dpi: float | None = None) -> tuple[str | None, bool]:
    """``(printed text, disagrees)`` for a record whose SPV1 code was read.

    ``printed text`` is None when the record's style is not the election's (nothing to read).
    """
    if record.election != election.id or not election.has_style(record.style):
        return None, False
    reading = read_printed_selections(gray, election, record.style, dpi=dpi)
    return reading.raw_text, bool(compare_with_code(reading, record, election))


def with_printed_check(gray: np.ndarray, result: MachinePrintedCard | UnreadableCard, election: Election, *,
                       dpi: float | None = None) -> MachinePrintedCard | UnreadableCard:
    """``result`` with ``printed_text`` set and ``text_code_disagree`` added when they disagree.

    The one line for :func:`scanpipe.interpret._interpret_content`.
    """
    if not isinstance(result, MachinePrintedCard):
        return result
    try:
        text, disagree = check_printed_record(gray, result.record, election, dpi=dpi)
    except ModuleNotFoundError:  # the OCR extra is not installed: a person compares text and code
        return replace(result, reasons=tuple(dict.fromkeys(result.reasons + (Reason.TEXT_UNREAD,))))
    reasons = result.reasons + ((Reason.TEXT_CODE_DISAGREE,) if disagree else ())
    return replace(result, printed_text=text, reasons=tuple(dict.fromkeys(reasons)))
