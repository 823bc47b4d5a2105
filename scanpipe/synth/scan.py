"""Simulate a document scanner feeding a printed, marked card, and write the files.

The model, in the order a scanner applies it:

1. **Mode**: grayscale or color (``gray_p``); grayscale uses the same luma weights as OpenCV,
   so a mark's gray darkness is the same whichever mode delivers it.
2. **Geometry** (one affine warp about the page centre): skew up to ``max_rotation_deg``,
   anisotropic scale ``1 +- max_aniso`` per axis (roller slip stretches one axis), a shift up
   to ``max_shift_in``; the uncovered border shows the scanner backing (white). Then a
   180-degree feed with probability ``flip180_p``.
3. **Optics and sensor**: Gaussian blur (sigma in pixels of the scan), brightness drift (a
   linear gain ramp across the page plus a global gain), Gaussian noise (not on bare paper,
   i.e. pixels at or above ``WHITE_CLIP`` before the gain: keeps lossless files small).
4. **Encoding**: PNG, JPEG (quality range) or bilevel TIFF G4. Bilevel is made as a scanner's
   bilevel mode does: divide by the local paper white, then error-diffusion dithering
   (Pillow ``convert("1")``), which keeps a faint mark's mean darkness.

Paper damage (folds, stains, bleed-through) belongs to the card, not the scanner: the deck
draws it before scanning (its probabilities live in the profile so one name selects all).
Render at the scan dpi directly; ``simulate_scan`` never resamples the resolution.
"""

from __future__ import annotations

import io
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

import cv2
import numpy as np
from PIL import Image

FORMATS = ("png", "jpg", "tif_g4")
WHITE_CLIP = 250
_FIXED_DATE = time.struct_time((2026, 11, 3, 12, 0, 0, 1, 307, 0))  # fixed: reproducible bytes


@dataclass(frozen=True, slots=True)
class ScanProfile:
    """How hard a simulated scan is; every range is drawn uniformly per card."""

    name: str
    dpis: tuple[int, ...] = (200,)
    max_rotation_deg: float = 0.0
    flip180_p: float = 0.0
    max_shift_in: float = 0.0
    max_aniso: float = 0.0  # relative scale change per axis, e.g. 0.02 for +-2 %
    blur_sigma_px: tuple[float, float] = (0.0, 0.0)
    noise_sigma: tuple[float, float] = (0.0, 0.0)  # gray levels
    brightness_drift: float = 0.0  # max relative gain change across the page
    formats: tuple[tuple[str, float], ...] = (("png", 1.0),)
    jpeg_quality: tuple[int, int] = (85, 95)
    gray_p: float = 1.0
    fold_p: float = 0.0
    stain_p: float = 0.0
    tear_p: float = 0.0
    bleed_p: float = 0.0


PROFILES: dict[str, ScanProfile] = {
    "clean": ScanProfile("clean", dpis=(200,), formats=(("png", 1.0),), gray_p=1.0),
    "typical": ScanProfile(
        "typical", dpis=(200, 300), max_rotation_deg=1.0, flip180_p=0.05, max_shift_in=0.08, max_aniso=0.005,
        blur_sigma_px=(0.0, 0.8), noise_sigma=(0.0, 2.0), brightness_drift=0.04,
        formats=(("png", 0.4), ("jpg", 0.4), ("tif_g4", 0.2)), jpeg_quality=(75, 95), gray_p=0.7,
        fold_p=0.03, stain_p=0.02, tear_p=0.0, bleed_p=0.05,
    ),
    "hardest": ScanProfile(
        "hardest", dpis=(150, 200, 300), max_rotation_deg=3.0, flip180_p=0.2, max_shift_in=0.15, max_aniso=0.02,
        blur_sigma_px=(0.0, 1.4), noise_sigma=(0.5, 4.0), brightness_drift=0.12,
        formats=(("png", 0.25), ("jpg", 0.5), ("tif_g4", 0.25)), jpeg_quality=(50, 95), gray_p=0.5,
        fold_p=0.12, stain_p=0.08, tear_p=0.04, bleed_p=0.2,
    ),
}


@dataclass(frozen=True, slots=True)
class ScanMeta:
    """What the simulated scanner did to one card."""

    dpi: int
    rotation_deg: float
    rotated_180: bool
    shift_in: tuple[float, float]
    scale: tuple[float, float]
    blur_sigma_px: float
    noise_sigma: float
    gain: tuple[float, float]  # gain at the left and right edges
    color: bool
    format: str
    jpeg_quality: int | None = None
    extra: dict[str, float] = field(default_factory=dict)


def choose_dpi(profile: ScanProfile, rng: np.random.Generator) -> int:
    """The scan resolution for one card (render the card at it)."""
    return int(profile.dpis[int(rng.integers(len(profile.dpis)))])


def choose_format(profile: ScanProfile, rng: np.random.Generator) -> tuple[str, int | None]:
    names = [f for f, _ in profile.formats]
    weights = np.array([w for _, w in profile.formats], float)
    fmt = names[int(rng.choice(len(names), p=weights / weights.sum()))]
    quality = int(rng.integers(profile.jpeg_quality[0], profile.jpeg_quality[1] + 1)) if fmt == "jpg" else None
    return fmt, quality


def _warp(img: np.ndarray, angle: float, scale: tuple[float, float], shift_px: tuple[float, float]) -> np.ndarray:
    h, w = img.shape[:2]
    cx, cy = w / 2.0, h / 2.0
    a = np.deg2rad(angle)
    rot = np.array([[np.cos(a), -np.sin(a)], [np.sin(a), np.cos(a)]]) @ np.diag(scale)
    offset = np.array([cx, cy]) + np.array(shift_px) - rot @ np.array([cx, cy])
    m = np.hstack([rot, offset[:, None]]).astype(np.float64)
    border = (255, 255, 255) if img.ndim == 3 else 255
    return cv2.warpAffine(img, m, (w, h), flags=cv2.INTER_LINEAR, borderMode=cv2.BORDER_CONSTANT, borderValue=border)


def _photometric(img: np.ndarray, blur: float, noise: float, gain: tuple[float, float], rng: np.random.Generator) -> np.ndarray:
    """Blur, a left-to-right gain ramp (applied per column strip with 8-bit LUTs) and noise."""
    if blur > 0.05:
        img = cv2.GaussianBlur(img, (0, 0), blur)
    else:
        img = img.copy()
    paper = img >= WHITE_CLIP if noise > 0 else None
    w = img.shape[1]
    strips = 48
    edges = np.linspace(0, w, strips + 1).astype(int)
    levels = np.arange(256, dtype=np.float32)
    for k in range(strips):
        g = gain[0] + (gain[1] - gain[0]) * (k + 0.5) / strips
        lut = np.clip(levels * g + 0.5, 0, 255).astype(np.uint8)
        part = img[:, edges[k]:edges[k + 1]]
        part[...] = cv2.LUT(part, lut)
    if noise > 0:
        cv2.setRNGSeed(int(rng.integers(0, 2**31 - 1)))
        n = np.empty((img.shape[0], img.size // img.shape[0]), np.int16)  # one channel: randn's scalar
        cv2.randn(n, 0, noise)  # type: ignore[call-overload]  # stubs omit the scalar mean/stddev OpenCV accepts
        n = n.reshape(img.shape)
        n[paper] = 0  # bare paper is quiet (and PNGs stay small): noise only on print and ink
        img = cv2.add(img, n, dtype=cv2.CV_8U)
    return img


def simulate_scan(rgb: np.ndarray, profile: ScanProfile, rng: np.random.Generator, *,
                  dpi: int, fmt: str | None = None, flip180: bool | None = None,
                  color: bool | None = None) -> tuple[np.ndarray, ScanMeta]:
    """Scan a card rendered at ``dpi``: returns the image (gray ``HxW`` or RGB) and what was done.

    ``fmt``, ``flip180`` and ``color`` force the encoding, feed direction and mode instead of
    drawing them.
    """
    drawn_color = bool(rng.random() >= profile.gray_p)
    color = drawn_color if color is None else color
    chosen_fmt, quality = choose_format(profile, rng)
    fmt = fmt or chosen_fmt
    if fmt == "jpg" and quality is None:
        quality = int(rng.integers(profile.jpeg_quality[0], profile.jpeg_quality[1] + 1))
    if fmt != "jpg":
        quality = None
    if fmt == "tif_g4":
        color = False
    img = rgb if color else cv2.cvtColor(rgb, cv2.COLOR_RGB2GRAY)
    angle = float(rng.uniform(-profile.max_rotation_deg, profile.max_rotation_deg))
    scale = (float(1 + rng.uniform(-profile.max_aniso, profile.max_aniso)),
             float(1 + rng.uniform(-profile.max_aniso, profile.max_aniso)))
    shift_in = (float(rng.uniform(-profile.max_shift_in, profile.max_shift_in)),
                float(rng.uniform(-profile.max_shift_in, profile.max_shift_in)))
    if angle != 0 or scale != (1.0, 1.0) or shift_in != (0.0, 0.0):
        img = _warp(img, angle, scale, (shift_in[0] * dpi, shift_in[1] * dpi))
    flip = bool(rng.random() < profile.flip180_p) if flip180 is None else flip180
    if flip:
        img = np.ascontiguousarray(img[::-1, ::-1])
    blur = float(rng.uniform(*profile.blur_sigma_px)) * dpi / 200.0
    noise = float(rng.uniform(*profile.noise_sigma))
    base = float(rng.uniform(1 - profile.brightness_drift / 2, 1.0))
    gain = (base, float(base * (1 + rng.uniform(-profile.brightness_drift / 2, profile.brightness_drift / 2))))
    img = _photometric(img, blur, noise, gain, rng)
    meta = ScanMeta(dpi=dpi, rotation_deg=angle, rotated_180=flip, shift_in=shift_in, scale=scale,
                    blur_sigma_px=blur, noise_sigma=noise, gain=gain, color=color, format=fmt, jpeg_quality=quality)
    return img, meta


def to_bilevel(gray: np.ndarray, *, threshold: int | None = None) -> Image.Image:
    """A scanner's bilevel mode: flatten the paper white, then dither (Pillow, Floyd-Steinberg),
    or, with ``threshold``, cut at that gray level (the other bilevel mode scanners offer)."""
    assert gray.ndim == 2
    small = cv2.resize(gray, (max(1, gray.shape[1] // 16), max(1, gray.shape[0] // 16)), interpolation=cv2.INTER_AREA)
    white = cv2.dilate(small, np.ones((5, 5), np.uint8))
    white = cv2.GaussianBlur(white, (0, 0), 2.0)
    white = cv2.resize(white, (gray.shape[1], gray.shape[0]), interpolation=cv2.INTER_LINEAR).astype(np.float32)
    flat = gray.astype(np.float32) * (255.0 / np.maximum(white, 64.0))
    flat[flat >= 247.0] = 255.0  # sensor noise on white paper is not ink
    if threshold is not None:
        return Image.fromarray(np.where(flat >= threshold, 255, 0).astype(np.uint8)).convert("1", dither=Image.Dither.NONE)
    return Image.fromarray(np.clip(flat, 0, 255).astype(np.uint8)).convert("1")


def _pil(image: np.ndarray, fmt: str) -> Image.Image:
    if fmt == "tif_g4":
        gray = image if image.ndim == 2 else cv2.cvtColor(image, cv2.COLOR_RGB2GRAY)
        return to_bilevel(gray)
    return Image.fromarray(image)


def save_scan(path: Path, image: np.ndarray, fmt: str, *, quality: int | None = None, dpi: float = 200) -> None:
    """Write one scanned card: ``png``, ``jpg`` or ``tif_g4`` (bilevel CCITT G4), dpi in the metadata."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    im = _pil(image, fmt)
    d = (float(dpi), float(dpi))
    if fmt == "png":
        im.save(path, "PNG", dpi=d, compress_level=3)
    elif fmt == "jpg":
        im.save(path, "JPEG", quality=int(quality or 90), dpi=d)
    elif fmt == "tif_g4":
        im.save(path, "TIFF", compression="group4", dpi=d)
    else:
        raise ValueError(f"unknown scan format {fmt!r}")


def save_multipage(path: Path, images: Sequence[np.ndarray], *, dpi: float = 200, quality: int = 85) -> str:
    """Write one sheet's sides as a multi-page ``.tif`` (bilevel G4) or ``.pdf`` (JPEG pages).

    Returns the recorded format name: ``tif_g4`` or ``pdf``.
    """
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    if path.suffix.lower() == ".pdf":
        pages = [Image.fromarray(i) for i in images]
        buf = io.BytesIO()
        pages[0].save(buf, "PDF", save_all=True, append_images=pages[1:], resolution=float(dpi), quality=quality,
                      creationDate=_FIXED_DATE, modDate=_FIXED_DATE, producer="scanpipe.synth")
        path.write_bytes(buf.getvalue())
        return "pdf"
    pages = [_pil(i, "tif_g4") for i in images]
    pages[0].save(path, "TIFF", save_all=True, append_images=pages[1:], dpi=(float(dpi), float(dpi)),
                  compression="group4")
    return "tif_g4"
