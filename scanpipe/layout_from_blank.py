"""Calibration: a card layout (contract section 3) from what the vendor gives the board.

The input is one image per printed page of a ballot style: a scan of a blank card, or a
page of the vendor's sample-ballot PDF rendered at a chosen resolution. Per page:

1. :func:`scanpipe.imaging.targets.find_targets`: every empty target (ovals of any
   vendor's shape, boxes, arrows to complete) and the write-in rules beside them;
2. the printed text lines: a vendor PDF's own text layer when it has one
   (:func:`scanpipe.imaging.page_text.pdf_text_lines`: exact, and no OCR), else
   :func:`scanpipe.imaging.page_text.read_page_text` (OCR; when the ``ocr`` extra is
   missing the targets are still found and the proposal says that names could not be read);
3. :func:`scanpipe.layout_assign.assign`: which option of which contest each target is,
   by name, with a confidence.

:func:`layout_document` turns the proposal into the layout file's JSON (only assigned
targets are written; a target's ``shape`` is recorded as well, an addition to the
contract that readers may use and need not). Our own corner fiducials and the QR code
are recorded when a page carries them (a blank of our own cards).

Pure apart from the OCR engine: the caller reads the images and writes the files.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import cv2
import numpy as np
import zxingcpp

from scanpipe.errors import ConfigError
from scanpipe.imaging.page_text import OcrUnavailable, TextLine, read_page_text
from scanpipe.imaging.targets import FoundTarget, Rect, find_rules, find_targets, find_write_in_lines
from scanpipe.layout_assign import Assignment, PageScan, Proposal, assign
from scanpipe.types import Contest, Option

FIDUCIAL_SIDE_IN = (0.12, 0.6)
CORNER_WINDOW_IN = 1.5
MIN_PDF_TEXT = 20  # letters and digits: a PDF text layer with fewer is not used (OCR instead)
WRITE_IN_HEIGHT_IN = 0.30  # the writing space above a write-in rule, at most
WRITE_IN_MIN_IN = 0.10  # and at least
SAME_SIZE_IN = 0.012  # targets of one shape this close (2 px at 200 dpi) to their median size are printed alike


@dataclass(frozen=True, slots=True)
class BlankPage:
    """One printed page of a style as an image: ``gray`` ``H x W`` uint8 at ``dpi``."""

    page: int
    gray: np.ndarray
    dpi: float
    size_in: tuple[float, float] | None = None  # the physical sheet when known (a PDF page)
    reference: str | None = None  # the reference scan to record, relative to the layout file
    source: Path | None = None  # set when ``gray`` must be written as the reference (a rendered page)
    texts: tuple[TextLine, ...] | None = None  # a PDF page's own text layer (read instead of OCR)


def scan_blank_page(blank: BlankPage, *, read_names: bool = True) -> PageScan:
    """Targets, write-in rules and (unless ``read_names`` is off or OCR is missing) text of one page."""
    targets = find_targets(blank.gray, blank.dpi)
    lines = find_rules(blank.gray, blank.dpi)
    rules = find_write_in_lines(blank.gray, blank.dpi, targets, rules=lines)
    texts, source = None, ""
    if read_names and blank.texts is not None and sum(ch.isalnum() for t in blank.texts for ch in t.text) >= MIN_PDF_TEXT:
        texts, source = blank.texts, "pdf"
    elif read_names:
        try:
            texts, source = read_page_text(blank.gray, blank.dpi, paint_out=[t.box_px for t in targets]), "ocr"
        except OcrUnavailable:
            texts = None
    separators = tuple(r for r in lines if r not in rules.values())
    return PageScan(blank.page, blank.dpi, targets, texts, rules, separators, source)


def propose_layout(blanks: Sequence[BlankPage], contests: Sequence[Contest], *,
                   read_names: bool = True) -> tuple[Proposal, tuple[PageScan, ...]]:
    """Scan every page and propose the assignment of its targets to ``contests``."""
    scans = tuple(scan_blank_page(b, read_names=read_names) for b in blanks)
    return assign(scans, contests), scans


def layout_document(proposal: Proposal, scans: Sequence[PageScan], blanks: Sequence[BlankPage], *, style: str,
                    contests: Sequence[Contest]) -> dict[str, Any]:
    """The layout file's JSON for the assigned targets (contract section 3). A target gets a
    ``write_in_area`` only where its option is a write-in of ``contests``: a rule beside a
    named candidate (a running mate's line, an underline) is not a place to write a name,
    and the definition refuses a write-in area on such an option.

    Raises
    ------
    ConfigError
        when a page has neither our fiducials nor a reference to record.
    """
    write_ins = {(c.id, o.id) for c in contests for o in c.options if o.write_in}
    pages = []
    for blank, scan in zip(blanks, scans):
        height, width = blank.gray.shape[:2]
        page: dict[str, Any] = {
            "page": blank.page,
            "size": list(blank.size_in) if blank.size_in else [round(width / blank.dpi, 2), round(height / blank.dpi, 2)],
        }
        fiducials = find_fiducials(blank.gray, blank.dpi)
        if fiducials is not None:
            page["fiducials"] = [list(b) for b in fiducials]
        qr = find_qr_box(blank.gray, blank.dpi)
        if qr is not None:
            page["qr"] = list(qr)
        if blank.reference is not None:
            page["reference"] = blank.reference
            page["reference_dpi"] = float(blank.dpi)
        elif fiducials is None:
            raise ConfigError(f"page {blank.page}: no corner fiducials of ours were found; record the blank as the page's reference")
        on_page = [a for a in proposal.assignments if a.page == blank.page]
        boxes = one_size([to_inches(a.box_px, scan.dpi) for a in on_page], [a.shape.value for a in on_page])
        page["targets"] = [_target_entry(a, box, scan, (a.contest, a.option) in write_ins) for a, box in zip(on_page, boxes)]
        pages.append(page)
    return {"style": style, "pages": pages}


def one_size(boxes: Sequence[tuple[float, float, float, float]], shapes: Sequence[str]) -> list[tuple[float, float, float, float]]:
    """Boxes (inches) of one page with the targets a vendor prints alike made alike: of each
    shape, a box within SAME_SIZE_IN of the shape's median width and height takes that
    median size about its own centre. A detector measures one printed oval a pixel wider or
    taller here and there; scoring compares targets of one size with each other (its
    baselines and its search windows), so that jitter cost a few clear marks. A target
    really printed larger (or smaller) keeps its size."""
    out = list(boxes)
    for shape in set(shapes):
        index = [k for k, s in enumerate(shapes) if s == shape]
        w = float(np.median([boxes[k][2] for k in index]))
        h = float(np.median([boxes[k][3] for k in index]))
        for k in index:
            x, y, bw, bh = boxes[k]
            if abs(bw - w) <= SAME_SIZE_IN and abs(bh - h) <= SAME_SIZE_IN:
                out[k] = (round(x + (bw - w) / 2, 3), round(y + (bh - h) / 2, 3), round(w, 3), round(h, 3))
    return out


def _target_entry(a: Assignment, box: tuple[float, float, float, float], scan: PageScan, write_in: bool) -> dict[str, Any]:
    entry: dict[str, Any] = {"contest": a.contest, "option": a.option, "box": list(box), "shape": a.shape.value}
    rule = scan.write_in_rules.get(a.target) if a.target is not None and write_in else None
    if rule is not None:
        printed = [t.box_px for t in scan.texts or ()] + [t.box_px for t in scan.targets]
        entry["write_in_area"] = list(write_in_area(rule, scan.dpi, printed))
    return entry


def write_in_area(rule: Rect, dpi: float, above: Sequence[Rect] = ()) -> tuple[float, float, float, float]:
    """Where the name is written: up to :data:`WRITE_IN_HEIGHT_IN` above the rule, the rule's
    length, but not over what is printed above it (``above``: the name of the option over it,
    its target), and never less than :data:`WRITE_IN_MIN_IN` high."""
    x, y, w, h = rule
    top = y + h - WRITE_IN_HEIGHT_IN * dpi
    for bx, by, bw, bh in above:
        if bx < x + w and x < bx + bw and top <= by + bh <= y - 0.02 * dpi:
            top = by + bh + 1
    top = max(0.0, min(top, y + h - WRITE_IN_MIN_IN * dpi))
    return to_inches((x, int(round(top)), w, int(round(y + h - top))), dpi)


def to_inches(rect: Rect, dpi: float) -> tuple[float, float, float, float]:
    """Pixel rectangle (pixel centres at integers) -> inch box, rounded to 0.001 in."""
    x, y, w, h = rect
    return (round((x - 0.5) / dpi, 3), round((y - 0.5) / dpi, 3), round(w / dpi, 3), round(h / dpi, 3))


def contests_of_style(definition: Mapping[str, Any], style: str, only: Sequence[str] | None = None, *, file: str = "election.json") -> tuple[Contest, ...]:
    """The style's contests (or ``only`` those) as typed values, from a definition's raw JSON.

    The layouts do not exist yet, so the definition cannot be loaded as a whole.

    Raises
    ------
    ConfigError
        when the style or a contest is missing, or a contest is malformed.
    """
    found = definition.get("ballot_styles")
    styles: list[Any] = found if isinstance(found, list) else []
    style_def = next((s for s in styles if isinstance(s, dict) and s.get("id") == style), None)
    if style_def is None:
        known = ", ".join(str(s.get("id")) for s in styles if isinstance(s, dict))
        raise ConfigError(f"{file}: no ballot style '{style}' (styles: {known or 'none'})")
    by_id = {c.get("id"): c for c in definition.get("contests", []) if isinstance(c, dict)}
    ids = list(only) if only else list(style_def.get("contests", []))
    missing = [c for c in ids if c not in by_id]
    if missing:
        raise ConfigError(f"{file}: contest(s) {', '.join(missing)} not defined")
    out = []
    for cid in ids:
        raw = by_id[cid]
        try:
            options = tuple(Option(str(o["id"]), str(o["name"]), bool(o.get("write_in", False))) for o in raw["options"])
            out.append(Contest(str(cid), str(raw["title"]), str(raw.get("kind", "candidate")), int(raw.get("vote_for", 1)), options))
        except (KeyError, TypeError, ValueError) as exc:
            raise ConfigError(f"{file}: contest '{cid}' is malformed ({exc!r}); run `scanpipe init` on it for the full list") from exc
    return tuple(out)


# --------------------------------------------------------------------------------------
# Our own cards: corner fiducials and the QR code


def find_fiducials(gray: np.ndarray, dpi: float) -> tuple[tuple[float, float, float, float], ...] | None:
    """The four corner squares (TL, TR, BL, BR) as inch boxes, or None unless all four."""
    height, width = gray.shape[:2]
    win = int(CORNER_WINDOW_IN * dpi)
    origins = ((0, 0), (max(0, width - win), 0), (0, max(0, height - win)), (max(0, width - win), max(0, height - win)))
    corners = ((0, 0), (width, 0), (0, height), (width, height))
    boxes = []
    for (x0, y0), corner in zip(origins, corners):
        rect = _corner_square(gray[y0 : y0 + win, x0 : x0 + win], dpi, (corner[0] - x0, corner[1] - y0))
        if rect is None:
            return None
        boxes.append(to_inches((rect[0] + x0, rect[1] + y0, rect[2], rect[3]), dpi))
    return tuple(boxes)


def _corner_square(window: np.ndarray, dpi: float, corner: tuple[int, int]) -> Rect | None:
    _, ink = cv2.threshold(window, 0, 255, cv2.THRESH_BINARY_INV | cv2.THRESH_OTSU)
    contours, _ = cv2.findContours(ink, cv2.RETR_EXTERNAL, cv2.CHAIN_APPROX_SIMPLE)
    best, best_distance = None, np.inf
    for contour in contours:
        x, y, w, h = cv2.boundingRect(contour)
        side_ok = all(FIDUCIAL_SIDE_IN[0] * dpi <= s <= FIDUCIAL_SIDE_IN[1] * dpi for s in (w, h))
        if not side_ok or max(w, h) / min(w, h) > 1.15 or cv2.contourArea(contour) < 0.9 * w * h:
            continue
        distance = float(np.hypot(x + w / 2 - corner[0], y + h / 2 - corner[1]))
        if distance < best_distance:
            best, best_distance = (x, y, w, h), distance
    return best


def find_qr_box(gray: np.ndarray, dpi: float) -> tuple[float, float, float, float] | None:
    """The QR symbol's box (without quiet zone) in inches, or None."""
    results = zxingcpp.read_barcodes(gray, formats=zxingcpp.BarcodeFormat.QRCode)  # type: ignore[arg-type]  # stubs omit the implicit conversion to BarcodeFormats
    if not results:
        return None
    p = results[0].position
    xs = [c.x for c in (p.top_left, p.top_right, p.bottom_right, p.bottom_left)]
    ys = [c.y for c in (p.top_left, p.top_right, p.bottom_right, p.bottom_left)]
    return to_inches((min(xs), min(ys), max(xs) - min(xs) + 1, max(ys) - min(ys) + 1), dpi)


# --------------------------------------------------------------------------------------
# The report a person reads


def proposal_report(proposal: Proposal, scans: Sequence[PageScan], contests: Sequence[Contest]) -> list[str]:
    """The proposal as lines of text: per page what was found, the table of assignments, what is left."""
    from scanpipe.layout_assign import REVIEW_BELOW, How

    by_id = {c.id: c for c in contests}
    by_page = {s.page: s for s in scans}
    lines = []
    for scan in scans:
        shapes = ", ".join(f"{n} {shape}{('es' if shape == 'box' else 's') if n != 1 else ''}" for shape, n in _shape_counts(scan.targets).items())
        read = {"pdf": "; names from the PDF's text", "ocr": "; names read by OCR"}.get(scan.text_source, "")
        lines.append(f"page {scan.page}: {len(scan.targets)} targets found ({shapes or 'none'}), {len(scan.write_in_rules)} write-in rule(s){read}")
    if not proposal.names_read:
        from scanpipe.imaging.page_text import ocr_available

        why = "" if ocr_available() else (" (OCR is not installed: pip install --no-deps 'rapidocr-onnxruntime>=1.4' && "
                                          "pip install 'scanpipe[ocr]')")
        lines.append(f"names were not read{why}; targets are assigned in reading order, only when the counts agree")
    rows = [("contest", "option", "page", "box (in)", "how", "confidence", "read beside it")]
    for a in proposal.assignments:
        contest = by_id[a.contest]
        option = next(o for o in contest.options if o.id == a.option)
        box = to_inches(a.box_px, by_page[a.page].dpi)
        flag = " check" if a.confidence < REVIEW_BELOW or a.how in (How.ORDER, How.INFERRED) else ""
        rows.append((contest.title, option.name, str(a.page), _box_text(box), a.how.value, f"{a.confidence:.2f}{flag}", a.label))
    widths = [min(34, max(len(r[i]) for r in rows)) for i in range(len(rows[0]))]
    lines.append("")
    lines.extend("  ".join(cell[:34].ljust(widths[i]) for i, cell in enumerate(row)).rstrip() for row in rows)
    if proposal.unassigned_targets:
        lines.append("")
        lines.append(f"{len(proposal.unassigned_targets)} target(s) found but not assigned (not written to the layout):")
        for page, index, text in proposal.unassigned_targets:
            box = to_inches(by_page[page].targets[index].box_px, by_page[page].dpi)
            lines.append(f"  page {page} {by_page[page].targets[index].shape.value} at {_box_text(box)}" + (f", read beside it: {text!r}" if text else ""))
    if proposal.missing_options:
        lines.append("")
        lines.append(f"{len(proposal.missing_options)} option(s) without a target:")
        for cid, oid in proposal.missing_options:
            contest = by_id[cid]
            lines.append(f"  {contest.title}: {next(o.name for o in contest.options if o.id == oid)}")
    return lines


def _shape_counts(targets: Sequence[FoundTarget]) -> dict[str, int]:
    out: dict[str, int] = {}
    for t in targets:
        out[t.shape.value] = out.get(t.shape.value, 0) + 1
    return out


def _box_text(box: tuple[float, float, float, float]) -> str:
    return "[" + ", ".join(f"{v:.2f}" for v in box) + "]"
