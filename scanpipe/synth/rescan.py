"""A scanned card as another scanner would have delivered it: the real cards' stand-ins for
other counties' scanners (``scripts/bench_real.py --rescan``, the tests of the copied real
cards). Pure: a grayscale image in, a grayscale image out; ``name`` (the file's name) picks,
by its CRC, what varies from card to card (a skew's angle, a feed's direction, a streak's
place), so a run is the same every time.

Each ``how`` of :data:`RESCANS`: ``skew`` turned by up to 2.5 degrees either way (per file,
from its name's CRC), ``turned`` fed upside down, ``sideways`` fed a quarter turn (clockwise or
not, from its name's CRC), ``streak`` with a scanner streak (dirt on the glass: a dark line 3
px wide down the whole scan, 20-80 % across from its name's CRC), ``sideways-streak`` both (the
streak down the scan as fed, so across the card), ``dpi300`` at 300 dpi (1.5 times the pixels,
the file's dpi tag dropped), ``bilevel`` thresholded black and white, ``dpi150`` at three
quarters of the pixels (Marin's cards are 150 dpi scans: they fall under the reader's 120 dpi
floor), ``background`` on a scanner bed wider than the card (dark around it, the card off
centre), ``bed`` the same bed with the card skewed on it as ``skew`` skews it (dark wedges
along the page's edges, as a scanner with a black backing delivers a sheet fed askew),
``stretch`` fed by a roller that slips (the feed stretched unevenly along the card, 0 to 1.5 %:
no single mapping fits it), ``blurred`` out of focus and saved at a low JPEG quality,
``tinted`` printed on coloured stock (the paper darker, the blanks left white), ``photo`` in a
mild perspective (a photograph: queued by design), ``faded`` every darkness at 45 % (a scanner
set too bright), ``gamma`` a lighter tone curve (gamma 0.8: black and white stay, mid-tones
lighter), ``shadow`` a lamp's fall-off (the right two fifths of the card darkening smoothly to
75 % of its level), ``dither`` black and white by an 8 x 8 ordered dither (a scanner's halftone
mode), ``combined`` several of these at once as one worse scanner would (300 dpi, skewed, every
other card upside down, coloured stock, on a wider bed, out of focus and saved at a low JPEG
quality).
"""

from __future__ import annotations

import zlib

import cv2
import numpy as np

RESCANS = ("skew", "turned", "sideways", "streak", "sideways-streak", "dpi300", "bilevel", "dpi150", "background", "bed", "stretch",
           "blurred", "tinted", "faded", "gamma", "shadow", "dither", "photo", "combined")
THRESHOLD = 160  # bilevel: a gray pixel darker than this is black


def rescanned_gray(gray: np.ndarray, how: str, name: str) -> np.ndarray:
    """``gray`` (uint8) as the scanner ``how`` (:data:`RESCANS`) would have delivered it."""
    if how not in RESCANS:
        raise ValueError(f"no such rescan: {how!r} (one of {', '.join(RESCANS)})")
    crc = zlib.crc32(name.encode())
    if how == "combined":
        return _combined(gray, crc)
    h, w = gray.shape
    if how == "skew":
        angle = (crc / 2**32 - 0.5) * 5.0
        turn = cv2.getRotationMatrix2D((w / 2, h / 2), angle, 1.0)
        gray = cv2.warpAffine(gray, turn, (w, h), flags=cv2.INTER_LINEAR, borderValue=255)
    elif how == "turned":
        gray = np.ascontiguousarray(gray[::-1, ::-1])
    elif how in ("sideways", "sideways-streak"):
        gray = cv2.rotate(gray, cv2.ROTATE_90_CLOCKWISE if crc % 2 else cv2.ROTATE_90_COUNTERCLOCKWISE)
    elif how == "dpi300":
        gray = cv2.resize(gray, (w * 3 // 2, h * 3 // 2), interpolation=cv2.INTER_CUBIC)
    elif how == "bilevel":
        gray = np.where(gray < THRESHOLD, 0, 255).astype(np.uint8)
    elif how == "dpi150":
        gray = cv2.resize(gray, (w * 3 // 4, h * 3 // 4), interpolation=cv2.INTER_AREA)
    elif how == "background":  # a scanner bed wider than the card, dark around it, the card off centre
        pad = int(0.25 * w / 8.5)
        canvas = np.full((h + 2 * pad, w + 3 * pad), 40, np.uint8)
        canvas[pad // 2: pad // 2 + h, 2 * pad: 2 * pad + w] = gray
        gray = canvas
    elif how == "bed":  # the card skewed on a dark scanner bed wider than it, off centre: dark wedges round the page
        angle = (crc / 2**32 - 0.5) * 5.0
        pad = int(0.25 * w / 8.5)
        turn = cv2.getRotationMatrix2D((w / 2, h / 2), angle, 1.0)
        turn[:, 2] += (2 * pad, pad // 2)
        gray = cv2.warpAffine(gray, turn, (w + 3 * pad, h + 2 * pad), flags=cv2.INTER_LINEAR, borderValue=40)
    elif how == "stretch":  # a roller that slips: the feed stretched unevenly (0 to 1.5 %), the width 1 % narrower
        ys = np.arange(int(h * 1.0075), dtype=np.float32)
        src_y = ys - 0.015 * ys * ys / (2 * h)
        map_y = np.repeat(src_y[:, None], int(w * 0.99), axis=1)
        map_x = np.repeat((np.arange(int(w * 0.99), dtype=np.float32) / 0.99)[None, :], len(ys), axis=0)
        gray = cv2.remap(gray, map_x, map_y, cv2.INTER_LINEAR, borderValue=255)
    elif how == "blurred":  # out of focus, then a low JPEG quality
        gray = cv2.GaussianBlur(gray, (0, 0), 1.2)
        gray = _jpeg_round_trip(gray, 40)
    elif how == "tinted":  # printed on coloured stock (a party's primary ballot): the paper at 78 % of white, the print as dark
        gray = (gray.astype(np.float32) * 0.78).astype(np.uint8)
    elif how == "faded":  # a scanner set too bright (or a worn toner): every darkness at 45 % of the scan's
        gray = (255.0 - (255.0 - gray.astype(np.float32)) * 0.45).astype(np.uint8)
    elif how == "gamma":  # a scanner's lighter tone curve (gamma 0.8): black and white stay, mid-tones (pencil, a light pen) lighter
        gray = (255.0 * (gray.astype(np.float32) / 255.0) ** 0.8).astype(np.uint8)
    elif how == "shadow":  # a lamp's fall-off: the right two fifths darkening smoothly to 75 % of the level
        ramp = 1.0 - 0.25 * np.clip((np.arange(w) - 0.6 * w) / (0.4 * w), 0.0, 1.0)
        gray = (gray.astype(np.float32) * ramp[None, :].astype(np.float32)).astype(np.uint8)
    elif how == "dither":  # black and white by an 8 x 8 ordered (Bayer) dither, as a scanner's halftone mode delivers
        gray = np.where(gray.astype(np.float32) < _bayer(gray.shape), 0, 255).astype(np.uint8)
    elif how == "photo":  # a mild perspective: each corner moved by up to 1 % of the card
        rng = np.random.default_rng(crc)
        src = np.array([[0, 0], [w, 0], [w, h], [0, h]], np.float32)
        dst = src + rng.uniform(-0.01, 0.01, (4, 2)).astype(np.float32) * np.array([w, h], np.float32)
        gray = cv2.warpPerspective(gray, cv2.getPerspectiveTransform(src, dst), (w, h), borderValue=255)
    if how in ("streak", "sideways-streak"):  # dirt on the glass darkens a few sensor columns on every row
        x = int(gray.shape[1] * (0.2 + 0.6 * zlib.crc32(name.encode()[::-1]) / 2**32))
        gray[:, x: x + 3] = np.minimum(gray[:, x: x + 3], 50)
    return gray


def _bayer(shape: tuple[int, int]) -> np.ndarray:
    """An 8 x 8 Bayer matrix's thresholds (0-255) tiled over ``shape``."""
    m = np.array([[0]])
    for _ in range(3):
        m = np.block([[4 * m, 4 * m + 2], [4 * m + 3, 4 * m + 1]])
    levels = (m + 0.5) * 256.0 / m.size
    reps = (shape[0] // 8 + 1, shape[1] // 8 + 1)
    return np.tile(levels, reps)[: shape[0], : shape[1]]


def _combined(gray: np.ndarray, crc: int) -> np.ndarray:
    """``combined``: the faults of one worse scanner at once, per file from ``crc``."""
    h, w = gray.shape
    gray = cv2.resize(gray, (w * 3 // 2, h * 3 // 2), interpolation=cv2.INTER_CUBIC)  # 300 dpi, the tag dropped
    h, w = gray.shape
    angle = (crc / 2**32 - 0.5) * 5.0  # up to 2.5 degrees either way
    gray = cv2.warpAffine(gray, cv2.getRotationMatrix2D((w / 2, h / 2), angle, 1.0), (w, h), flags=cv2.INTER_LINEAR,
                          borderValue=255)
    if crc & 1:
        gray = np.ascontiguousarray(gray[::-1, ::-1])
    gray = (gray.astype(np.float32) * 0.85).astype(np.uint8)  # coloured stock
    pad = int(0.25 * w / 8.5)
    canvas = np.full((h + 2 * pad, w + 3 * pad), 40, np.uint8)  # a wider bed, dark around the card, off centre
    canvas[pad // 2: pad // 2 + h, 2 * pad: 2 * pad + w] = gray
    gray = cv2.GaussianBlur(canvas, (0, 0), 0.9)
    return _jpeg_round_trip(gray, 55)


def _jpeg_round_trip(gray: np.ndarray, quality: int) -> np.ndarray:
    """``gray`` saved as a JPEG of ``quality`` and read back."""
    ok, jpeg = cv2.imencode(".jpg", gray, [cv2.IMWRITE_JPEG_QUALITY, quality])
    back = cv2.imdecode(jpeg, cv2.IMREAD_GRAYSCALE) if ok else None
    if back is None:
        raise RuntimeError("could not save the rescanned card as JPEG")
    return np.asarray(back)
