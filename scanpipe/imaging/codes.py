"""Find and parse the codes on a card: the QR card code, a machine record's QR, and the
Code 128 pairing label (contract section 4).

Decoding uses ``zxingcpp`` (measured 100% on distorted 150-dpi pages); when ``pyzbar`` can be
imported (the OS has ``libzbar0``) it is a second decoder, used only when zxing found
nothing, restricted to QR and Code 128 (its all-symbology scans gave false reads).

:func:`find_codes_fast` is the interpret stage's path: QR on a half-size copy of a
high-dpi page, Code 128 row-wise on the page and on its transpose (labels may stand
sideways; 1D readers read both directions, so 180 degrees is free), and a full-resolution,
orientation-aligned retry only where :func:`barcode_regions` sees an undecoded barcode.

:func:`looks_like_barcode` is that detector: a barcode is a patch whose gradients are
strong *and* all parallel (structure-tensor coherence near 1) *and* whose ink alternates
many times along the gradient direction. Printed text fails coherence; ovals, rules and
timing marks fail the alternation count.

Parsers are pure string functions returning None for anything the contract does not allow.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence

import cv2
import numpy as np
import zxingcpp

from scanpipe.types import (
    CardCode,
    CardKind,
    CodeSymbology,
    DecodedCode,
    MachineRecord,
    PairingLabel,
    PointPx,
    Box,
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


def find_codes_fast(gray: np.ndarray, *, card_code: DecodedCode | None = None, dpi: float | None = None) -> tuple[DecodedCode, ...]:
    """All QR and Code 128 symbols on a full card, cheaply (see the module docstring).

    ``card_code``: the card code already found by :func:`find_card_code`; the full-page QR
    search is then skipped.
    """
    qr = (card_code,) if card_code is not None else _fast_qr(gray)
    return _unique(qr + find_labels(gray, dpi=dpi))


_last_scan: list[tuple[np.ndarray, list[tuple[int, int, int, int, float]]]] = []


def find_labels(gray: np.ndarray, *, dpi: float | None = None) -> tuple[DecodedCode, ...]:
    """Code 128 symbols anywhere on the card at any angle: the barcode prefilter's regions,
    each turned upright and decoded at full resolution. The regions are remembered for the
    same image so a following :func:`looks_like_barcode` costs nothing."""
    regions = barcode_regions(gray, dpi=dpi)
    _last_scan[:] = [(gray, regions)]
    found: list[DecodedCode] = []
    for x, y, w, h, angle in regions:
        found.extend(_decode_turned(gray, (x, y, w, h), angle))
    if not found:  # a label merged into a coherent block of text lines is no region of its own
        found.extend(_zxing_both_axes(gray, frozenset({CodeSymbology.CODE128})))
    return _unique(found)


CARD_CODE_PAD_IN = 0.6  # skew (3 degrees moves a corner QR ~0.3 in), 2% stretch, feed shift
_CARD_CODE_WORK_DPI = 150.0


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
            if factor > 1:
                crop = cv2.resize(crop, (crop.shape[1] // factor, crop.shape[0] // factor), interpolation=cv2.INTER_AREA)
            found = _zxing(crop, frozenset({CodeSymbology.QR}), rotate=False, downscale=False)
            if found:
                return _shifted(_scaled(found[0], float(factor)), x0, y0)
    return None


def _fast_qr(gray: np.ndarray) -> tuple[DecodedCode, ...]:
    only_qr = frozenset({CodeSymbology.QR})
    if min(gray.shape) >= _FAST_MIN_SIDE_PX:
        half = cv2.resize(gray, None, fx=0.5, fy=0.5, interpolation=cv2.INTER_AREA)
        found = _zxing(half, only_qr, rotate=False, downscale=True)
        if found:
            return tuple(_scaled(code, 2.0) for code in found)
    return _zxing(gray, only_qr, rotate=False, downscale=True)


def _zxing_both_axes(gray: np.ndarray, formats: frozenset[CodeSymbology]) -> tuple[DecodedCode, ...]:
    """Row-wise 1D decoding of the image and of its transpose (sideways labels)."""
    found = _zxing(gray, formats, rotate=False, downscale=False)
    if found:
        return found
    sideways = _zxing(cv2.transpose(gray), formats, rotate=False, downscale=False)
    return tuple(_transposed(code) for code in sideways)


def _retry_label_regions(gray: np.ndarray, exclude: tuple[DecodedCode, ...]) -> tuple[DecodedCode, ...]:
    """Decode each barcode-like region at full resolution, turned so its bars stand upright."""
    found: list[DecodedCode] = []
    for x, y, w, h, angle in barcode_regions(gray):
        if any(_inside(code, (x, y, w, h)) for code in exclude):
            continue
        found.extend(_decode_turned(gray, (x, y, w, h), angle))
    return tuple(found)


def _decode_turned(gray: np.ndarray, region: tuple[int, int, int, int], angle_deg: float) -> list[DecodedCode]:
    upright, turn, x, y = _turn(gray, region, angle_deg, pad=max(region[2], region[3]) // 4)
    codes = list(_zxing(upright, frozenset({CodeSymbology.CODE128}), rotate=True, downscale=True))
    if not codes and _pyzbar is not None:
        codes = list(_zbar(upright, frozenset({CodeSymbology.CODE128})))
    back = cv2.invertAffineTransform(turn)
    return [_affine(code, back, x, y) for code in codes]


def _zxing(image: np.ndarray, formats: frozenset[CodeSymbology], *, rotate: bool, downscale: bool) -> tuple[DecodedCode, ...]:
    if image.size == 0 or not formats:
        return ()
    results = zxingcpp.read_barcodes(
        np.ascontiguousarray(image),
        formats=[_ZX_FORMATS[f] for f in sorted(formats)],
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
# barcode-like stickers that did not decode

_MIN_COHERENCE = 0.75
_MIN_TRANSITIONS_PER_IN = 25.0  # Code 128 at 10-20 mil: 50-100 per inch; timing marks: ~12
_MIN_LENGTH_IN = 0.7  # Code 128 'DUP-A' at 10 mil is 1.0 in
_MIN_HEIGHT_IN = 0.12
_MIN_ENERGY = 12_800.0  # mean squared Sobel response of bars with ~100 grey levels of contrast
_WORK_DPI_MIN = 75.0
_ANGLE_BINS = 12  # 15 degrees each
_LETTER_WIDTH_IN = 8.5


def looks_like_barcode(
    gray: np.ndarray, region: tuple[int, int, int, int] | None = None, *, dpi: float | None = None
) -> bool:
    """True when ``gray`` (or its ``(x, y, w, h)`` region) holds dense parallel bars.

    ``dpi`` defaults to the full image's width read as a letter page (8.5 in).
    """
    if region is None and dpi is None and _last_scan and _last_scan[0][0] is gray:
        return bool(_last_scan[0][1])  # just scanned by find_labels
    x0, y0, crop = _crop(gray, region)
    return bool(barcode_regions(crop, dpi=dpi or gray.shape[1] / _LETTER_WIDTH_IN))


def barcode_regions(gray: np.ndarray, *, dpi: float | None = None) -> list[tuple[int, int, int, int, float]]:
    """Barcode-like patches as ``(x, y, w, h, angle_deg)`` in ``gray`` pixels.

    ``angle_deg`` turns the patch (``cv2.getRotationMatrix2D`` sense) so its bars stand
    vertical, i.e. the code reads left to right. The search runs on a copy reduced by a
    power of two to 75-150 dpi (cheap exact-halving resizes), about 3 ms per letter page.
    """
    dpi = dpi or gray.shape[1] / _LETTER_WIDTH_IN
    factor = 1
    while dpi / (factor * 2) >= _WORK_DPI_MIN:
        factor *= 2
    # nearest sampling (0.2 ms a page, vs ~3 ms for averaging): bars stay sharp, parallel
    # lines; the alternation test then reads the candidates at full resolution
    small = gray if factor == 1 else cv2.resize(gray, (gray.shape[1] // factor, gray.shape[0] // factor), interpolation=cv2.INTER_NEAREST)
    scale = gray.shape[1] / small.shape[1]
    dpi_work = dpi / scale
    mask, angle_bin = _coherent_bars(small, dpi_work)
    scale, dpi_work = scale * 2, dpi_work / 2  # the tensors are reduced once more
    regions: list[tuple[int, int, int, int, float]] = []
    per_bin = np.bincount(angle_bin[mask > 0], minlength=_ANGLE_BINS)
    min_pixels = _MIN_LENGTH_IN * _MIN_HEIGHT_IN * dpi_work**2 * 0.5
    for k in range(_ANGLE_BINS // 2):
        if per_bin[[(2 * k - 1) % _ANGLE_BINS, 2 * k, 2 * k + 1]].sum() < min_pixels:
            continue  # too few coherent pixels in this direction for any label
        # split the mask by bar direction so a label does not merge with text lines or rules;
        # coarse bin k spans fine bins 2k-1..2k+1 (45 degrees), so coarse bins overlap
        lut = np.zeros(256, np.uint8)
        lut[[(2 * k - 1) % _ANGLE_BINS, 2 * k, 2 * k + 1]] = 1
        in_bin = cv2.LUT(angle_bin, lut) & mask
        regions.extend(_bin_regions(gray, in_bin, angle_bin, scale, dpi, dpi_work))
    return _distinct(regions)


def _bin_regions(
    gray: np.ndarray, mask: np.ndarray, angle_bin: np.ndarray, factor: float, dpi: float, dpi_work: float
) -> list[tuple[int, int, int, int, float]]:
    regions = []
    count, labels, stats, _centroids = cv2.connectedComponentsWithStats(mask, connectivity=8)
    long_enough = np.maximum(stats[:, 2], stats[:, 3]) >= _MIN_LENGTH_IN * dpi_work
    big_enough = stats[:, 4] >= _MIN_LENGTH_IN * _MIN_HEIGHT_IN * dpi_work**2 * 0.5
    for i in np.flatnonzero(long_enough & big_enough):
        if i == 0:
            continue
        x, y, w, h = (int(v) for v in stats[i, :4])
        patch = (slice(y, y + h), slice(x, x + w))
        own = labels[patch] == i
        theta = _median_angle(angle_bin[patch][own])
        full = (round(x * factor), round(y * factor), round(w * factor), round(h * factor))
        if _is_barcode_patch(gray, full, own, theta, dpi):
            regions.append((*full, theta))
    return regions


def _median_angle(bins: np.ndarray) -> float:
    """Dominant gradient direction (deg, -90..90) of a patch from its angle bins."""
    counts = np.bincount(bins, minlength=_ANGLE_BINS).astype(np.float64)
    step = 180.0 / _ANGLE_BINS
    doubled = np.radians(np.arange(_ANGLE_BINS) * step * 2.0)
    mean = np.degrees(np.arctan2((counts * np.sin(doubled)).sum(), (counts * np.cos(doubled)).sum())) / 2.0
    return float(mean)


def _distinct(regions: list[tuple[int, int, int, int, float]]) -> list[tuple[int, int, int, int, float]]:
    """Drop regions whose centre lies inside an earlier (overlapping-bin) region."""
    kept: list[tuple[int, int, int, int, float]] = []
    for x, y, w, h, theta in regions:
        cx, cy = x + w / 2, y + h / 2
        if not any(kx <= cx <= kx + kw and ky <= cy <= ky + kh for kx, ky, kw, kh, _ in kept):
            kept.append((x, y, w, h, theta))
    return kept


def _coherent_bars(small: np.ndarray, dpi: float) -> tuple[np.ndarray, np.ndarray]:
    """Mask of strongly, coherently textured pixels and their gradient-direction bin
    (``_ANGLE_BINS`` bins over 180 degrees), both at half the size of ``small``."""
    gx = cv2.Sobel(small, cv2.CV_32F, 1, 0, ksize=3)
    gy = cv2.Sobel(small, cv2.CV_32F, 0, 1, ksize=3)
    k = max(5, int(0.1 * dpi) | 1)
    half = (small.shape[1] // 2, small.shape[0] // 2)
    jxx, jyy, jxy = (
        cv2.resize(cv2.boxFilter(cv2.multiply(a, b), -1, (k, k)), half, interpolation=cv2.INTER_AREA)
        for a, b in ((gx, gx), (gy, gy), (gx, gy))
    )
    energy = jxx + jyy
    diff = jxx - jyy
    coherent = diff * diff + 4.0 * jxy * jxy > (_MIN_COHERENCE**2) * energy * energy
    mask = (coherent & (energy > _MIN_ENERGY)).astype(np.uint8)
    mask = cv2.morphologyEx(mask, cv2.MORPH_CLOSE, np.ones((3, 3), np.uint8))
    degrees = (np.degrees(np.arctan2(2.0 * jxy, diff)) * 0.5) % 180.0  # gradient direction
    angle_bin = (np.rint(degrees / (180.0 / _ANGLE_BINS)).astype(np.uint8)) % _ANGLE_BINS
    return mask, angle_bin


def _is_barcode_patch(
    gray: np.ndarray, region: tuple[int, int, int, int], own: np.ndarray, theta_deg: float, dpi: float
) -> bool:
    """Size and alternation tests on one coherent patch (``theta``: gradient direction).

    ``own`` is the patch's mask at the working scale; the alternations are counted at full
    resolution on three lines across the bars, and every line must pass.
    """
    factor = region[2] / own.shape[1]
    pts = np.column_stack(np.nonzero(own)[::-1]).astype(np.float32) * factor
    along, across = _extent_along(pts, theta_deg)
    if along < _MIN_LENGTH_IN * dpi or across < _MIN_HEIGHT_IN * dpi:
        return False
    centre = pts.mean(axis=0) + (region[0] + factor / 2.0, region[1] + factor / 2.0)
    quarter = max(1.0, across / 4.0)
    rates = [_transitions_per_inch(_sample_line(gray, centre, theta_deg, offset, along), along, dpi) for offset in (-quarter, 0.0, quarter)]
    return sum(rate >= _MIN_TRANSITIONS_PER_IN for rate in rates) >= 2


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
    turn = cv2.getRotationMatrix2D((w / 2.0, h / 2.0), angle_deg, 1.0)
    turn[:, 2] += (size / 2.0 - w / 2.0, size / 2.0 - h / 2.0)
    canvas = cv2.warpAffine(crop, turn, (size, size), flags=cv2.INTER_LINEAR, borderValue=255)
    return canvas, turn, x, y


def _extent_along(pts: np.ndarray, theta_deg: float) -> tuple[float, float]:
    t = np.radians(theta_deg)
    u = pts @ np.array([np.cos(t), np.sin(t)], np.float32)
    v = pts @ np.array([-np.sin(t), np.cos(t)], np.float32)
    return float(np.ptp(u)), float(np.ptp(v))


def _transitions_per_inch(line: np.ndarray, along_px: float, dpi: float) -> float:
    """Ink/paper alternations per inch of the patch's length along one line."""
    lo, hi = np.percentile(line, 10), np.percentile(line, 90)
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
