"""Find and parse the codes on a card: the QR card code, a machine record's QR, and the
Code 128 pairing label (contract section 4).

Decoding uses ``zxingcpp`` (measured 100% on distorted 150-dpi pages); when ``pyzbar`` can be
imported (the OS has ``libzbar0``) it is a second decoder, used only when zxing found
nothing, restricted to QR and Code 128 (its all-symbology scans gave false reads).

:func:`find_codes_fast` is the interpret stage's path: the card code where layouts print it
(:func:`find_card_code`, else QR on a half-size copy of a high-dpi page), and Code 128
pairing labels anywhere at any angle (:func:`find_labels`).

Label finding costs ~2-4 ms a page without a label, so every card can afford it. The
prefilter (:func:`label_candidates`) works on cells of ~0.1 in of a copy reduced to
75-150 dpi by area averaging (averaging keeps parallel bars parallel): a cell is kept when
its structure tensor is strong and coherent (gradients all parallel). Kept cells are
grouped by direction, and a group is a candidate only when it is long *across* its bars
(>= 0.8 in along its gradient): text-line edges, rules and fiducial sides are coherent too
but extend *along* their edges; letters mix directions; ovals turn. Each candidate is
cropped at full resolution, turned upright and decoded by zxing (plain, then smoothed
along the bars for dithered bilevel scans, then slightly blurred). No full-page scan.

:func:`looks_like_barcode` (an undecodable sticker) adds the alternation test: on lines
across the bars, ink must alternate >= 25 times per inch on two neighbouring lines
(Code 128: 50-100; timing marks ~12; text lines far fewer).

Parsers are pure string functions returning None for anything the contract does not allow.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from functools import partial

import cv2
import numpy as np
import zxingcpp

from scanpipe.types import (
    Box,
    CardCode,
    CardKind,
    CodeSymbology,
    DecodedCode,
    MachineRecord,
    PairingLabel,
    PointPx,
)

try:  # an optional second decoder (extra "zbar"): needs the OS library libzbar0
    from pyzbar import pyzbar as _pyzbar
except ImportError:  # pragma: no cover - depends on the OS
    _pyzbar = None

ALL_SYMBOLOGIES = frozenset(CodeSymbology)
_ZX_FORMATS = {
    CodeSymbology.QR: zxingcpp.BarcodeFormat.QRCode,
    CodeSymbology.CODE128: zxingcpp.BarcodeFormat.Code128,
}
_ZX_BACK = {v: k for k, v in _ZX_FORMATS.items()}
_FAST_MIN_SIDE_PX = 2000  # pages at least this wide are searched for QR at half size


# --------------------------------------------------------------------------------------
# decoding


def decode_codes(
    gray: np.ndarray,
    *,
    formats: frozenset[CodeSymbology] = ALL_SYMBOLOGIES,
    region_px: tuple[int, int, int, int] | None = None,
) -> tuple[DecodedCode, ...]:
    """Decode QR / Code 128 symbols in ``gray`` (or in its ``(x, y, w, h)`` region).

    Corners are in full-image pixels, clockwise from the symbol's own top-left.
    """
    x0, y0, crop = _crop(gray, region_px)
    found = _zxing(crop, formats, rotate=True, downscale=True)
    if not found and _pyzbar is not None:
        found = _zbar(crop, formats)
    return tuple(_shifted(code, x0, y0) for code in found)


def find_codes_fast(gray: np.ndarray, *, card_code: DecodedCode | None = None, dpi: float | None = None,
                    qr_anywhere: bool = True, decode_if: Callable[[LabelCandidate], bool] | None = None) -> tuple[DecodedCode, ...]:
    """All QR and Code 128 symbols on a full card, cheaply (see the module docstring).

    ``card_code``: the card code already found by :func:`find_card_code`; the full-page QR
    search is then skipped, and so it is where ``qr_anywhere`` is false (the caller looks for
    a QR later, only if it needs one). ``decode_if``: see :func:`find_labels`.
    """
    qr = (card_code,) if card_code is not None else _fast_qr(gray) if qr_anywhere else ()
    return _unique(qr + find_labels(gray, dpi=dpi, decode_if=decode_if))


_last_scan: list[tuple[np.ndarray, list[LabelCandidate], float, dict[int, bool]]] = []  # the last page's candidates, and which alternate


def find_labels(gray: np.ndarray, *, dpi: float | None = None,
                decode_if: Callable[[LabelCandidate], bool] | None = None) -> tuple[DecodedCode, ...]:
    """Code 128 symbols anywhere on the card at any angle: each :func:`label_candidates`
    patch turned upright and decoded at full resolution (about 2 ms a 300-dpi page
    without a label). The candidates are remembered for the same image so a following
    :func:`looks_like_barcode` costs next to nothing (all of them, decoded or not).
    ``decode_if``: only the candidates it admits are decoded (a read card's patches that
    show its blank's print are no sticker: :func:`shows_blank_print`)."""
    dpi = dpi or gray.shape[1] / _LETTER_WIDTH_IN
    candidates = label_candidates(gray, dpi)
    scan: tuple[np.ndarray, list[LabelCandidate], float, dict[int, bool]] = (gray, candidates, dpi, {})
    _last_scan[:] = [scan]
    found: list[DecodedCode] = []
    for k, candidate in enumerate(candidates):
        if decode_if is not None and not decode_if(candidate):
            continue
        x, y, w, h, angle = candidate.region
        found.extend(_decode_turned(gray, (x, y, w, h), angle, dpi, bars=partial(_scanned_alternates, scan, k)))
    return _unique(found)


CARD_CODE_PAD_IN = 0.6  # skew (3 degrees moves a corner QR ~0.3 in), 2% stretch, feed shift
_CARD_CODE_WORK_DPI = 150.0


_CARD_CODE_MIN_CROP_PX = 21  # a QR symbol is at least 21 modules wide


def find_card_code(gray: np.ndarray, qr_boxes_in: Sequence[Box], size_in: tuple[float, float], dpi: float) -> DecodedCode | None:
    """The card's QR code, looked for only where layouts print it (about 1 ms a page).

    Each distinct box is tried upright and point-mirrored (a 180-degree feed), padded by
    :data:`CARD_CODE_PAD_IN`, on a crop reduced to ~150 dpi; corners come back in full-image
    pixels. None when no box holds a readable QR (callers then search the whole page).
    """
    height, width = gray.shape[:2]
    scale = width / size_in[0] if dpi <= 0 else dpi
    factor = max(1, int(scale // _CARD_CODE_WORK_DPI))
    for box in dict.fromkeys(qr_boxes_in):
        x, y, w, h = box
        for bx, by in ((x, y), (size_in[0] - x - w, size_in[1] - y - h)):
            region = (int((bx - CARD_CODE_PAD_IN) * scale), int((by - CARD_CODE_PAD_IN) * scale),
                      int((w + 2 * CARD_CODE_PAD_IN) * scale), int((h + 2 * CARD_CODE_PAD_IN) * scale))
            x0, y0, crop = _crop(gray, region)
            if min(crop.shape[:2]) < _CARD_CODE_MIN_CROP_PX * factor:
                continue  # the box lies (mostly) off this image: nothing to decode there
            if factor > 1:
                crop = cv2.resize(crop, (crop.shape[1] // factor, crop.shape[0] // factor), interpolation=cv2.INTER_AREA)
            found = _zxing(crop, frozenset({CodeSymbology.QR}), rotate=False, downscale=False)
            if found:
                return _shifted(_scaled(found[0], float(factor)), x0, y0)
    return None


def shows_qr(gray: np.ndarray) -> bool:
    """Whether a QR symbol shows on the page at half size, without zxing's own downscaled
    retries: a quick look, cheaper than the whole search (:func:`find_qr`). A
    machine-printed record's code reads so at 150-300 dpi (synthetic records, every scanner
    profile); a smaller symbol may be missed, so a page it says none of is not proven free
    of one."""
    half = _half_size(gray) if min(gray.shape[:2]) >= 2 * _CARD_CODE_MIN_CROP_PX else gray
    return bool(_zxing(half, frozenset({CodeSymbology.QR}), rotate=False, downscale=False))


def find_qr(gray: np.ndarray) -> tuple[DecodedCode, ...]:
    """Every QR symbol on the whole page (half size first on a large page, then zxing's own
    downscaled retries)."""
    return _fast_qr(gray)


def _fast_qr(gray: np.ndarray) -> tuple[DecodedCode, ...]:
    only_qr = frozenset({CodeSymbology.QR})
    if min(gray.shape) >= _FAST_MIN_SIDE_PX:
        half = _half_size(gray)
        found = _zxing(half, only_qr, rotate=False, downscale=True)
        if found:
            return tuple(_scaled(code, 2.0) for code in found)
    return _zxing(gray, only_qr, rotate=False, downscale=True)


def _half_size(gray: np.ndarray) -> np.ndarray:
    """The page area-reduced to half size, the last row or column of an odd side left out:
    OpenCV averages whole 2x2 blocks some twenty times faster than it resamples an odd side
    (and no code lies on a page's outermost pixel: its quiet zone)."""
    h, w = gray.shape[:2]
    return cv2.resize(gray[: h // 2 * 2, : w // 2 * 2], (w // 2, h // 2), interpolation=cv2.INTER_AREA)


_BAR_SMOOTHING_IN = 0.05  # averaging along the bars undoes a bilevel scan's dither


def _decode_turned(gray: np.ndarray, region: tuple[int, int, int, int], angle_deg: float, dpi: float,
                   bars: Callable[[], bool] = lambda: True) -> list[DecodedCode]:
    """Decode Code 128 in the region turned so its bars stand upright; if that fails, after
    averaging along the bars (dithered bilevel scans), then after a slight blur (a thin
    quiet zone, JPEG ringing). Each smoothing alone read 93-95% of hard-profile labels
    that failed plain, together all of them. zbar, the last resort, only where ``bars()``
    says the patch alternates like bars (on a patch of text it costs ~10 ms for nothing: on a
    deck with a sticker on every other sheet it read none that zxing had not). The bars stand
    upright, so zxing is not asked to turn the patch (on a vendor card's rows of numbered
    ovals, about 11 patches a page and none a label, its turns cost 8 ms a page; two
    hardest-profile decks with a sticker on every sheet read all 496 labels without them)."""
    upright, turn, x, y = _turn(gray, region, angle_deg, pad=max(region[2], region[3]) // 4)
    only_128 = frozenset({CodeSymbology.CODE128})
    codes = list(_zxing(upright, only_128, rotate=False, downscale=True))
    length = max(3, int(_BAR_SMOOTHING_IN * dpi) | 1)
    if codes:
        # Confirm a plain read once more, averaged along the bars: Code 128's checksum lets
        # a rare misread through (seen: ORG-S00356 read as ORG-S08956 on a dithered scan),
        # and the second reading then disagrees. Every distinct text is returned, so the
        # caller sees one sticker read two ways and queues it instead of trusting either.
        texts = {c.text for c in codes}
        codes += [c for c in _zxing(cv2.blur(upright, (1, length)), only_128, rotate=True, downscale=True)
                  if c.text not in texts and parse_pairing_label(c.text) is not None]
    for smooth in (lambda im: cv2.blur(im, (1, length)), lambda im: cv2.GaussianBlur(im, (3, 3), 0)):
        if codes:
            break
        codes = list(_zxing(smooth(upright), only_128, rotate=False, downscale=True))
    if not codes and _pyzbar is not None and bars():
        codes = list(_zbar(upright, only_128))
    back = cv2.invertAffineTransform(turn)
    return [_affine(code, back, x, y) for code in codes]


def _zxing(image: np.ndarray, formats: frozenset[CodeSymbology], *, rotate: bool, downscale: bool) -> tuple[DecodedCode, ...]:
    if image.size == 0 or not formats:
        return ()
    results = zxingcpp.read_barcodes(
        np.ascontiguousarray(image),
        formats=[_ZX_FORMATS[f] for f in sorted(formats)],  # type: ignore[arg-type]  # stubs omit the implicit conversion to BarcodeFormats
        try_rotate=rotate,
        try_downscale=downscale,
        try_invert=False,
    )
    return tuple(_from_zxing(r) for r in results if r.valid and r.format in _ZX_BACK)


def _from_zxing(result: zxingcpp.Barcode) -> DecodedCode:
    p = result.position
    corners = tuple((float(c.x), float(c.y)) for c in (p.top_left, p.top_right, p.bottom_right, p.bottom_left))
    return DecodedCode(_ZX_BACK[result.format], result.text, corners)


def _zbar(image: np.ndarray, formats: frozenset[CodeSymbology]) -> tuple[DecodedCode, ...]:
    assert _pyzbar is not None
    symbols = {CodeSymbology.QR: _pyzbar.ZBarSymbol.QRCODE, CodeSymbology.CODE128: _pyzbar.ZBarSymbol.CODE128}
    back = {"QRCODE": CodeSymbology.QR, "CODE128": CodeSymbology.CODE128}
    found = []
    for r in _pyzbar.decode(np.ascontiguousarray(image), symbols=[symbols[f] for f in formats]):
        text = r.data.decode("ascii", errors="replace")
        left, top, width, height = r.rect
        corners = ((left, top), (left + width, top), (left + width, top + height), (left, top + height))
        found.append(DecodedCode(back[r.type], text, tuple((float(a), float(b)) for a, b in corners)))
    return tuple(found)


# --------------------------------------------------------------------------------------
# corner bookkeeping


def _crop(gray: np.ndarray, region: tuple[int, int, int, int] | None) -> tuple[int, int, np.ndarray]:
    if region is None:
        return 0, 0, gray
    x, y, w, h = (int(round(v)) for v in region)
    x, y = max(0, x), max(0, y)
    return x, y, gray[y : y + h, x : x + w]


def _padded(region: tuple[int, int, int, int], shape: tuple[int, ...], pad: int) -> tuple[int, int, int, int]:
    x, y, w, h = region
    x0, y0 = max(0, x - pad), max(0, y - pad)
    x1, y1 = min(shape[1], x + w + pad), min(shape[0], y + h + pad)
    return x0, y0, x1 - x0, y1 - y0


def _map_corners(code: DecodedCode, fn) -> DecodedCode:  # type: ignore[no-untyped-def]
    return DecodedCode(code.symbology, code.text, tuple(fn(x, y) for x, y in code.corners_px))


def _shifted(code: DecodedCode, dx: float, dy: float) -> DecodedCode:
    return _map_corners(code, lambda x, y: (x + dx, y + dy))


def _scaled(code: DecodedCode, factor: float) -> DecodedCode:
    return _map_corners(code, lambda x, y: ((x + 0.5) * factor - 0.5, (y + 0.5) * factor - 0.5))


def _transposed(code: DecodedCode) -> DecodedCode:
    return _map_corners(code, lambda x, y: (y, x))


def _affine(code: DecodedCode, matrix: np.ndarray, dx: float, dy: float) -> DecodedCode:
    def apply(x: float, y: float) -> PointPx:
        u = matrix @ np.array([x, y, 1.0])
        return (float(u[0]) + dx, float(u[1]) + dy)

    return _map_corners(code, apply)


def _inside(code: DecodedCode, region: tuple[int, int, int, int]) -> bool:
    cx = sum(p[0] for p in code.corners_px) / len(code.corners_px)
    cy = sum(p[1] for p in code.corners_px) / len(code.corners_px)
    x, y, w, h = region
    return x <= cx <= x + w and y <= cy <= y + h


def _unique(codes: Iterable[DecodedCode]) -> tuple[DecodedCode, ...]:
    seen: dict[tuple[CodeSymbology, str], DecodedCode] = {}
    for code in codes:
        seen.setdefault((code.symbology, code.text), code)
    return tuple(seen.values())


# --------------------------------------------------------------------------------------
# barcode-like stickers: the cell prefilter (see the module docstring)

_MIN_COHERENCE = 0.75
_MIN_CELL_ENERGY = 20_000.0  # mean squared Sobel response per cell; bars score 1e5..4e5
_MIN_TRANSITIONS_PER_IN = 25.0  # Code 128 at 10-20 mil: 50-100 per inch; timing marks: ~12
_MIN_LENGTH_IN = 0.7  # Code 128 'DUP-A' at 10 mil is 1.0 in
_MIN_CANDIDATE_LENGTH_IN = 0.8  # along the bars' gradient, measured in whole cells
_MIN_HEIGHT_IN = 0.12
_WORK_DPI_MIN = 75.0
_CELL_PX = 8  # working pixels per cell side (0.08-0.11 in)
_LINE_STEP_IN = 0.06  # spacing of the alternation test's lines across the bars
_MAX_LINES = 40
_BAND_CELLS = 32  # rows of cells per band of the tensor computation
_ANGLE_BINS = 12  # 15 degrees each
_LETTER_WIDTH_IN = 8.5

Region = tuple[int, int, int, int, float]  # x, y, w, h (full-image pixels), angle_deg


def looks_like_barcode(
    gray: np.ndarray, region: tuple[int, int, int, int] | None = None, *, dpi: float | None = None
) -> bool:
    """True when ``gray`` (or its ``(x, y, w, h)`` region) holds dense parallel bars.

    ``dpi`` defaults to the full image's width read as a letter page (8.5 in). Right after
    :func:`find_labels` on the same image (no region) it reuses that scan's candidates.
    """
    last = _last_scan[0] if _last_scan and region is None else None
    if last is not None and last[0] is gray:
        return any(_scanned_alternates(last, k) for k in range(len(last[1])))
    x0, y0, crop = _crop(gray, region)
    return bool(barcode_regions(crop, dpi=dpi or gray.shape[1] / _LETTER_WIDTH_IN))


PageBox = tuple[float, float, float, float]  # x0, y0, x1, y1: an axis-aligned box, image pixels


def barcode_like_boxes(gray: np.ndarray, *, dpi: float | None = None) -> tuple[PageBox, ...]:
    """The boxes of the barcode-like patches :func:`looks_like_barcode` finds on the whole
    page (right after :func:`find_labels` on the same image, that scan's candidates)."""
    last = _last_scan[0] if _last_scan else None
    if last is not None and last[0] is gray:
        regions = [last[1][k].region for k in range(len(last[1])) if _scanned_alternates(last, k)]
    else:
        regions = barcode_regions(gray, dpi=dpi)
    return tuple((float(x), float(y), float(x + w), float(y + h)) for x, y, w, h, _angle in regions)


SPECK_AREA_IN2 = 0.0004  # a piece of ink this small or smaller is a speck (a 10-mil bar 0.12 in tall: 0.0012 in^2)
SPECKLED_PER_IN2 = 40.0  # a patch with this many specks a square inch is speckled
SPECK_PAD_IN = 0.1  # the patch is judged with this much of the page round it


def speckle_made(gray: np.ndarray, box: PageBox, dpi: float) -> bool:
    """Whether a barcode-like patch (``box``, image pixels) is made by a speckled scan (a
    bilevel scan of coloured stock thresholded near its paper level: specks everywhere): the
    patch holds SPECKLED_PER_IN2 specks a square inch or more, and with its specks taken out
    it no longer looks like a barcode (printed text under specks alternates like bars; a
    sticker's bars are pieces far larger than a speck and stay). A patch without specks is
    never dropped."""
    pad = int(round(SPECK_PAD_IN * dpi))
    x0, y0 = max(0, int(box[0]) - pad), max(0, int(box[1]) - pad)
    x1, y1 = min(gray.shape[1], int(np.ceil(box[2])) + pad), min(gray.shape[0], int(np.ceil(box[3])) + pad)
    patch = np.ascontiguousarray(gray[y0:y1, x0:x1])
    if patch.size == 0:
        return False
    _count, labels, stats, _ = cv2.connectedComponentsWithStats((patch < 128).view(np.uint8), connectivity=8)
    specks = stats[:, cv2.CC_STAT_AREA] <= SPECK_AREA_IN2 * dpi * dpi
    specks[0] = False
    if int(specks.sum()) < SPECKLED_PER_IN2 * patch.size / (dpi * dpi):
        return False
    clean = patch.copy()
    clean[specks[labels]] = 255
    return not looks_like_barcode(clean, dpi=dpi)


def symbol_box(code: DecodedCode) -> PageBox:
    """A decoded symbol's axis-aligned box, image pixels."""
    xs, ys = [p[0] for p in code.corners_px], [p[1] for p in code.corners_px]
    return min(xs), min(ys), max(xs), max(ys)


VENDOR_CODE_GROW_IN = 0.1  # a blank's barcode grown by this (registration, a symbol's own extent read differently) ...
VENDOR_CODE_COVER = 0.5  # ... must hold this share of the card's barcode-like patch


def printed_codes_in(image: np.ndarray, dpi: float) -> tuple[PageBox, ...]:
    """Where a blank prints barcodes of its own (the vendor's: a style or sheet code), in
    inches: every Code 128 symbol it decodes and every barcode-like patch, whatever its
    symbology (Interleaved 2 of 5, say, which is not looked for)."""
    boxes = [symbol_box(c) for c in find_labels(image, dpi=dpi)] + list(barcode_like_boxes(image, dpi=dpi))
    return tuple((x0 / dpi, y0 / dpi, x1 / dpi, y1 / dpi) for x0, y0, x1, y1 in boxes)


def printed_by_blank(patch_in: PageBox, blank_codes_in: Sequence[PageBox]) -> bool:
    """Whether a card's barcode-like patch (inches, in the blank's frame) lies where the blank
    prints a barcode of its own: VENDOR_CODE_COVER of its area inside one of them, grown by
    VENDOR_CODE_GROW_IN."""
    x0, y0, x1, y1 = patch_in
    area = max(1e-9, (x1 - x0) * (y1 - y0))
    g = VENDOR_CODE_GROW_IN
    for bx0, by0, bx1, by1 in blank_codes_in:
        w = min(x1, bx1 + g) - max(x0, bx0 - g)
        h = min(y1, by1 + g) - max(y0, by0 - g)
        if w > 0 and h > 0 and w * h >= VENDOR_CODE_COVER * area:
            return True
    return False


BLANK_PRINT_SHOWN = 0.9  # a patch is the blank's print when this share of each side's ink is on the other
BLANK_PRINT_SLACK_PX = 2  # ... within this many blank pixels (registration, a scan's rendering of thin strokes)
BLANK_PRINT_MIN_PX = 100  # ... and the blank prints at least this many dark pixels there


def shows_blank_print(gray: np.ndarray, paper: float, inches_to_card: np.ndarray, patch_px: PageBox, blank: np.ndarray,
                      blank_dpi: float, blank_paper: float) -> bool:
    """Whether a card's patch (``patch_px``, card pixels) shows its blank's print and nothing
    else: BLANK_PRINT_SHOWN of the blank's dark pixels there are dark on the card, and as
    much of the card's dark pixels are dark on the blank, each within BLANK_PRINT_SLACK_PX.
    A sticker hides the print it is stuck over (its white), and its bars are no print of the
    blank's where it is stuck on bare paper: either way the patch is no longer the blank's.
    A patch the blank prints next to nothing in is not the blank's print. ``paper`` and
    ``blank_paper``: the images' paper levels (:func:`~scanpipe.imaging.reference.paper_level`);
    ``inches_to_card``: 3x3, the layout's inches to ``gray``'s pixels."""
    from scanpipe.imaging.reference import PRINTED_DARK

    x0, y0, x1, y1 = patch_px
    corners = np.array([[x0, y0, 1.0], [x1, y0, 1.0], [x1, y1, 1.0], [x0, y1, 1.0]]) @ np.linalg.inv(inches_to_card).T
    placed = corners[:, :2] / corners[:, 2:]
    h, w = blank.shape[:2]
    c0, r0 = max(0, int(placed[:, 0].min() * blank_dpi)), max(0, int(placed[:, 1].min() * blank_dpi))
    c1, r1 = min(w, int(np.ceil(placed[:, 0].max() * blank_dpi))), min(h, int(np.ceil(placed[:, 1].max() * blank_dpi)))
    if c1 - c0 < 2 or r1 - r0 < 2:
        return False
    printed = blank[r0:r1, c0:c1] < PRINTED_DARK * blank_paper
    if int(np.count_nonzero(printed)) < BLANK_PRINT_MIN_PX:
        return False
    blank_to_card = inches_to_card @ np.array([[1 / blank_dpi, 0, c0 / blank_dpi], [0, 1 / blank_dpi, r0 / blank_dpi], [0, 0, 1]])
    card = cv2.warpPerspective(gray, blank_to_card, (c1 - c0, r1 - r0), flags=cv2.INTER_LINEAR | cv2.WARP_INVERSE_MAP,
                               borderMode=cv2.BORDER_CONSTANT, borderValue=255)
    dark = card < PRINTED_DARK * paper
    if not dark.any():
        return False
    grow = np.ones((2 * BLANK_PRINT_SLACK_PX + 1,) * 2, np.uint8)
    near_dark = cv2.dilate(dark.view(np.uint8), grow).view(bool)
    near_printed = cv2.dilate(printed.view(np.uint8), grow).view(bool)
    shown = np.count_nonzero(printed & near_dark) / np.count_nonzero(printed)
    explained = np.count_nonzero(dark & near_printed) / np.count_nonzero(dark)
    return bool(shown >= BLANK_PRINT_SHOWN and explained >= BLANK_PRINT_SHOWN)


VENDOR_PRINT_SHOWN = 0.8  # ... and the card must show this share of the blank's print there ...
VENDOR_PRINT_SLACK_PX = 2  # ... within this many card pixels (registration, a scan's rendering of thin bars)
VENDOR_PRINT_MIN_PX = 50  # a blank printing less than this in the patch shows nothing to compare


def vendor_printed(gray: np.ndarray, inches_to_card: np.ndarray, patch_px: PageBox, blank: np.ndarray, blank_dpi: float,
                   blank_codes_in: Sequence[PageBox]) -> bool:
    """Whether a card's barcode-like patch (``patch_px``, card pixels) is the vendor's own
    print: it lies where the blank prints a barcode of its own (:func:`printed_by_blank`), and
    the card shows the blank's print there (VENDOR_PRINT_SHOWN of the blank's dark pixels dark
    on the card within VENDOR_PRINT_SLACK_PX): a sticker stuck over the vendor's barcode, or
    over a shading that alternates like bars, hides it. ``inches_to_card``: 3x3, the layout's
    inches to ``gray``'s pixels (a card's registration, its feed direction folded in)."""
    from scanpipe.imaging.reference import PRINTED_DARK, paper_level

    x0, y0, x1, y1 = patch_px
    corners = np.array([[x0, y0, 1.0], [x1, y0, 1.0], [x1, y1, 1.0], [x0, y1, 1.0]]) @ np.linalg.inv(inches_to_card).T
    placed = corners[:, :2] / corners[:, 2:]
    patch_in = (float(placed[:, 0].min()), float(placed[:, 1].min()), float(placed[:, 0].max()), float(placed[:, 1].max()))
    if not printed_by_blank(patch_in, blank_codes_in):
        return False
    h, w = blank.shape[:2]
    c0, r0 = max(0, int(patch_in[0] * blank_dpi)), max(0, int(patch_in[1] * blank_dpi))
    c1, r1 = min(w, int(np.ceil(patch_in[2] * blank_dpi))), min(h, int(np.ceil(patch_in[3] * blank_dpi)))
    if c1 - c0 < 2 or r1 - r0 < 2:
        return False
    printed = blank[r0:r1, c0:c1] < PRINTED_DARK * paper_level(blank)
    if int(printed.sum()) < VENDOR_PRINT_MIN_PX:
        return False
    blank_to_card = inches_to_card @ np.array([[1 / blank_dpi, 0, c0 / blank_dpi], [0, 1 / blank_dpi, r0 / blank_dpi], [0, 0, 1]])
    card = cv2.warpPerspective(gray, blank_to_card, (c1 - c0, r1 - r0), flags=cv2.INTER_LINEAR | cv2.WARP_INVERSE_MAP,
                               borderMode=cv2.BORDER_CONSTANT, borderValue=255)
    k = 2 * VENDOR_PRINT_SLACK_PX + 1
    dark = cv2.dilate((card < PRINTED_DARK * paper_level(gray)).astype(np.uint8), np.ones((k, k), np.uint8)).astype(bool)
    return float((printed & dark).sum()) / float(printed.sum()) >= VENDOR_PRINT_SHOWN


def barcode_regions(gray: np.ndarray, *, dpi: float | None = None) -> list[Region]:
    """Barcode-like patches as ``(x, y, w, h, angle_deg)`` in ``gray`` pixels: the cell
    prefilter's candidates whose ink also alternates densely across the bars at full
    resolution.

    ``angle_deg`` turns the patch (``cv2.getRotationMatrix2D`` sense) so its bars stand
    vertical, i.e. the code reads left to right.
    """
    dpi = dpi or gray.shape[1] / _LETTER_WIDTH_IN
    return [c.region for c in label_candidates(gray, dpi) if _alternates(gray, c, dpi)]


@dataclass(frozen=True, slots=True)
class LabelCandidate:
    """A compact patch of coherent, energetic cells, long along its gradient direction."""

    region: Region  # bounding box (full-image pixels) and the angle that sets bars upright
    centre: tuple[float, float]  # (x, y) full-image pixels, the cells' centroid
    along_px: float  # extent along the gradient (across the bars)
    across_px: float  # extent along the bars


def label_candidates(gray: np.ndarray, dpi: float) -> list[LabelCandidate]:
    """Where a Code 128 label may be, at any angle: about 2 ms a 300-dpi page.

    The page is reduced by area averaging (a power of two, to 75-150 dpi; parallel bars
    stay parallel under any averaging), its structure tensor is summed over cells of
    :data:`_CELL_PX` working pixels, and a cell is kept when its gradients are strong and
    parallel. Kept cells are grouped per direction; a group is a candidate when it is at
    least :data:`_MIN_CANDIDATE_LENGTH_IN` long *across* its bars. Rules, text-line edges
    and fiducial sides are coherent too but extend *along* their edges, so they fail.
    """
    keep, angle, unit = _cell_tensor(gray, dpi)
    cells_per_in = dpi / unit
    min_cells = max(2, int(_MIN_CANDIDATE_LENGTH_IN * cells_per_in))
    if int(np.count_nonzero(keep)) < min_cells:
        return []
    _count, labels, stats, _ = cv2.connectedComponentsWithStats(keep.view(np.uint8), connectivity=8)
    big = (stats[:, 4] >= min_cells) & (stats[:, 2] ** 2 + stats[:, 3] ** 2 >= min_cells**2)
    big[0] = False  # the background
    found: list[LabelCandidate] = []
    for i in np.flatnonzero(big):
        x, y, w, h = (int(v) for v in stats[i, :4])
        own = labels[y : y + h, x : x + w] == i
        found.extend(_direction_groups(own, angle[y : y + h, x : x + w], (x, y), unit, min_cells))
    return found


def _cell_tensor(gray: np.ndarray, dpi: float) -> tuple[np.ndarray, np.ndarray, int]:
    """Per cell: kept (bool), gradient direction (deg, 0..180), and the cell side in
    full-image pixels."""
    factor = 1
    while dpi / (factor * 2) >= _WORK_DPI_MIN:
        factor *= 2
    unit = factor * _CELL_PX
    rows, cols = gray.shape[0] // unit, gray.shape[1] // unit
    if rows < 1 or cols < 1:
        return np.zeros((0, 0), bool), np.zeros((0, 0), np.float32), unit
    page = gray[: rows * unit, : cols * unit]
    tensor = np.empty((3, rows, cols), np.float32)
    for top in range(0, rows, _BAND_CELLS):  # bands small enough to stay in cache
        bottom = min(rows, top + _BAND_CELLS)
        tensor[:, top:bottom] = _band_tensor(page, top * unit, bottom * unit, factor)
    jxx, jyy, jxy = tensor
    energy, diff = jxx + jyy, jxx - jyy
    keep = (diff * diff + 4.0 * jxy * jxy >= (_MIN_COHERENCE**2) * energy * energy) & (energy >= _MIN_CELL_ENERGY)
    angle = (np.degrees(np.arctan2(2.0 * jxy, diff)) * 0.5) % 180.0
    return keep, angle, unit


def _band_tensor(page: np.ndarray, top: int, bottom: int, factor: int) -> np.ndarray:
    """Cell sums of the structure tensor (gx², gy², gx·gy) of page rows ``top:bottom``,
    reduced ``factor`` times (one working row of context above and below for Sobel)."""
    above, below = min(top, factor), min(page.shape[0] - bottom, factor)
    band = page[top - above : bottom + below]
    while factor > 1:  # exact halvings: fast, and a box average
        band, factor, above, below = _halved(band), factor // 2, above // 2, below // 2
    rows = band.shape[0] - above - below
    gx = cv2.Sobel(band, cv2.CV_16S, 1, 0, ksize=3)[above : above + rows]
    gy = cv2.Sobel(band, cv2.CV_16S, 0, 1, ksize=3)[above : above + rows]
    # each product averaged over whole cells in one area reduction (a box mean, as halving it
    # three times is, at half the cost; the cells kept came out the same on every card tried)
    cells = (gx.shape[1] // _CELL_PX, rows // _CELL_PX)
    return np.stack([cv2.resize(cv2.multiply(a, b, dtype=cv2.CV_32F), cells, interpolation=cv2.INTER_AREA)
                     for a, b in ((gx, gx), (gy, gy), (gx, gy))])


def _halved(image: np.ndarray) -> np.ndarray:
    return cv2.resize(image, (image.shape[1] // 2, image.shape[0] // 2), interpolation=cv2.INTER_AREA)


def _direction_groups(
    own: np.ndarray, angle: np.ndarray, origin: tuple[int, int], unit: int, min_cells: int
) -> list[LabelCandidate]:
    """Split one component of kept cells by direction (45-degree bins, overlapping by
    15) and keep the groups long enough across their bars."""
    fine = (np.rint(angle / (180.0 / _ANGLE_BINS)).astype(np.int32)) % _ANGLE_BINS
    per_bin = np.bincount(fine[own], minlength=_ANGLE_BINS)
    rows, cols = np.nonzero(own)
    found: list[LabelCandidate] = []
    for k in range(_ANGLE_BINS):
        near = [(k - 1) % _ANGLE_BINS, k, (k + 1) % _ANGLE_BINS]
        if per_bin[k] == 0 or per_bin[near].sum() < min_cells or per_bin[k] < per_bin[near].max():
            continue  # each group once: from its most populated fine bin
        t = np.radians(k * 180.0 / _ANGLE_BINS)
        if np.ptp(cols * np.cos(t) + rows * np.sin(t)) + 3.0 < min_cells:
            continue  # too short across the bars even before splitting (text-line edges, rules)
        group = own & np.isin(fine, near)
        _count, labels, stats, _ = cv2.connectedComponentsWithStats(group.view(np.uint8), connectivity=8)
        for i in np.flatnonzero(stats[:, 4] >= min_cells):
            if i == 0:
                continue
            candidate = _candidate(labels == i, angle, origin, unit, min_cells)
            if candidate is not None:
                found.append(candidate)
    return found


def _candidate(cells: np.ndarray, angle: np.ndarray, origin: tuple[int, int], unit: int, min_cells: int) -> LabelCandidate | None:
    rows, cols = np.nonzero(cells)
    if rows.size < min_cells:
        return None
    doubled = np.radians(angle[rows, cols] * 2.0)
    theta = float(np.degrees(np.arctan2(np.sin(doubled).sum(), np.cos(doubled).sum())) / 2.0)
    t = np.radians(theta)
    along = np.ptp(cols * np.cos(t) + rows * np.sin(t)) + 1.0
    across = np.ptp(rows * np.cos(t) - cols * np.sin(t)) + 1.0
    if along < min_cells:
        return None
    x0, y0 = origin[0] + int(cols.min()), origin[1] + int(rows.min())
    w, h = int(np.ptp(cols)) + 1, int(np.ptp(rows)) + 1
    centre = ((origin[0] + cols.mean() + 0.5) * unit, (origin[1] + rows.mean() + 0.5) * unit)
    return LabelCandidate((x0 * unit, y0 * unit, w * unit, h * unit, theta), centre, float(along * unit), float(across * unit))


def _scanned_alternates(scan: tuple[np.ndarray, list[LabelCandidate], float, dict[int, bool]], k: int) -> bool:
    """:func:`_alternates` for candidate ``k`` of a :func:`find_labels` scan, measured once."""
    gray, candidates, dpi, known = scan
    if k not in known:
        known[k] = _alternates(gray, candidates[k], dpi)
    return known[k]


def _alternates(gray: np.ndarray, candidate: LabelCandidate, dpi: float) -> bool:
    """Size and alternation tests at full resolution: lines across the bars every
    :data:`_LINE_STEP_IN` along the patch's height; two neighbouring lines must both
    alternate densely (a patch merged with text lines is sampled off the label too)."""
    _x, _y, _w, _h, theta = candidate.region
    along, across = candidate.along_px, candidate.across_px
    if along < _MIN_LENGTH_IN * dpi or across < min(_MIN_HEIGHT_IN * dpi, _CELL_PX * 1.5 * dpi / _WORK_DPI_MIN):
        return False
    centre = np.array(candidate.centre)
    step = _LINE_STEP_IN * dpi
    half = min(across / 2.0, _MAX_LINES // 2 * step)
    offsets = np.arange(-half + step / 2.0, half, step) if across > 2 * step else np.array([-across / 4.0, 0.0, across / 4.0])
    previous = False
    for offset in offsets:
        dense = _transitions_per_inch(_sample_line(gray, centre, theta, offset, along), along, dpi) >= _MIN_TRANSITIONS_PER_IN
        if dense and previous:
            return True
        previous = dense
    return False


def _sample_line(gray: np.ndarray, centre: np.ndarray, theta_deg: float, offset: float, length: float) -> np.ndarray:
    """Gray values (bilinear, one per pixel) on a line across the bars through the patch:
    direction ``theta`` (the gradient), shifted ``offset`` pixels sideways."""
    t = np.radians(theta_deg)
    u, v = np.array([np.cos(t), np.sin(t)]), np.array([-np.sin(t), np.cos(t)])
    steps = np.arange(-length / 2.0, length / 2.0, 1.0)
    xy = centre + offset * v + steps[:, None] * u
    map_x, map_y = xy[:, 0].astype(np.float32)[None, :], xy[:, 1].astype(np.float32)[None, :]
    line = cv2.remap(gray, map_x, map_y, cv2.INTER_LINEAR, borderMode=cv2.BORDER_CONSTANT, borderValue=255)
    return line[0]


def _turned_upright(gray: np.ndarray, region: tuple[int, int, int, int], angle_deg: float, pad: int) -> np.ndarray:
    """The region (plus ``pad``) turned by ``angle_deg`` on a canvas large enough for it."""
    return _turn(gray, region, angle_deg, pad)[0]


def _turn(
    gray: np.ndarray, region: tuple[int, int, int, int], angle_deg: float, pad: int
) -> tuple[np.ndarray, np.ndarray, int, int]:
    """Turned crop, the crop-to-canvas matrix, and the crop's offset in ``gray``."""
    x, y, w, h = _padded(region, gray.shape, pad)
    crop = gray[y : y + h, x : x + w]
    size = int(np.hypot(w, h)) + 2
    turn: np.ndarray = cv2.getRotationMatrix2D((w / 2.0, h / 2.0), angle_deg, 1.0)
    turn[:, 2] += (size / 2.0 - w / 2.0, size / 2.0 - h / 2.0)
    canvas = cv2.warpAffine(crop, turn, (size, size), flags=cv2.INTER_LINEAR, borderValue=255)
    return canvas, turn, x, y


def _transitions_per_inch(line: np.ndarray, along_px: float, dpi: float) -> float:
    """Ink/paper alternations per inch of the patch's length along one line."""
    if line.dtype == np.uint8:  # one partition for both: the same two values as two calls (8-bit lines)
        lo, hi = (float(v) for v in np.percentile(line, (10, 90)))
    else:
        lo, hi = float(np.percentile(line, 10)), float(np.percentile(line, 90))
    if hi - lo < 60:
        return 0.0
    ink = line < (lo + hi) / 2.0
    flips = int(np.count_nonzero(ink[1:] != ink[:-1]))
    return flips / max(along_px / dpi, 1e-6)


# --------------------------------------------------------------------------------------
# parsers (pure)

ID_RE = re.compile(r"[A-Za-z0-9_.-]{1,64}")
SERIAL_RE = re.compile(r"(?P<base>[A-Z0-9]{1,16})(?:-R(?P<rev>[0-9]{1,3}))?")
_LABEL_RE = re.compile(r"(?P<kind>DUP|ORG)-(?P<serial>[A-Z0-9]{1,16}(?:-R[0-9]{1,3})?)")


def _fields(text: str, magic: str) -> dict[str, str] | None:
    """``KEY=VALUE`` fields after the magic word; None if malformed or a key repeats."""
    if not text.isascii():
        return None
    parts = text.split("|")
    if parts[0] != magic:
        return None
    fields: dict[str, str] = {}
    for part in parts[1:]:
        key, sep, value = part.partition("=")
        if not sep or not key or key in fields:
            return None
        fields[key] = value
    return fields


def _id_or_none(value: str | None) -> str | None:
    return value if value is not None and ID_RE.fullmatch(value) else None


def _header_ids(fields: dict[str, str]) -> tuple[str, str, str | None] | None:
    election, style = _id_or_none(fields.get("E")), _id_or_none(fields.get("S"))
    precinct = fields.get("P") or None
    if election is None or style is None or (precinct is not None and not ID_RE.fullmatch(precinct)):
        return None
    return election, style, precinct


def parse_card_code(text: str) -> CardCode | None:
    """Parse ``SPB1|E=<election>|S=<style>|P=<precinct>|PG=<page>`` (PG defaults to 1)."""
    fields = _fields(text, "SPB1")
    ids = _header_ids(fields) if fields is not None else None
    if fields is None or ids is None:
        return None
    page_text = fields.get("PG", "1")
    if not re.fullmatch(r"[0-9]{1,4}", page_text) or int(page_text) < 1:
        return None
    return CardCode(election=ids[0], style=ids[1], precinct=ids[2], page=int(page_text))


def parse_machine_record(text: str) -> MachineRecord | None:
    """Parse ``SPV1|E=|S=|P=|V=<contest>:<opt>[,<opt>];<contest>:...`` (empty selection ok)."""
    fields = _fields(text, "SPV1")
    ids = _header_ids(fields) if fields is not None else None
    if fields is None or ids is None or "V" not in fields:
        return None
    selections = _parse_votes(fields["V"])
    if selections is None:
        return None
    return MachineRecord(election=ids[0], style=ids[1], precinct=ids[2], selections=selections)


def _parse_votes(value: str) -> tuple[tuple[str, tuple[str, ...]], ...] | None:
    if value == "":
        return ()
    result: list[tuple[str, tuple[str, ...]]] = []
    for item in value.split(";"):
        contest, sep, options_text = item.partition(":")
        if not sep or not ID_RE.fullmatch(contest) or any(c == contest for c, _ in result):
            return None
        options = tuple(options_text.split(",")) if options_text else ()
        if not all(ID_RE.fullmatch(o) for o in options) or len(set(options)) != len(options):
            return None
        result.append((contest, options))
    return tuple(result)


def parse_pairing_label(text: str) -> PairingLabel | None:
    """Parse ``DUP-<serial>`` / ``ORG-<serial>``; serial ``[A-Z0-9]{1,16}(-R[0-9]{1,3})?``."""
    match = _LABEL_RE.fullmatch(text)
    if match is None:
        return None
    serial = match["serial"]
    parts = SERIAL_RE.fullmatch(serial)
    assert parts is not None
    kind = CardKind.DUPLICATE if match["kind"] == "DUP" else CardKind.ORIGINAL
    revision = int(parts["rev"]) if parts["rev"] is not None else None
    return PairingLabel(kind=kind, serial=serial, base_serial=parts["base"], revision=revision)
