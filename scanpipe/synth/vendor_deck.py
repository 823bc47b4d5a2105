"""Marked, scanned cards of the vendor-like election, with their exact expected readings.

The same model of a voter as :mod:`scanpipe.synth.deck` (its mark choice, catalogue, damage
and ``expected.json`` shape), on vendor-like cards (:mod:`scanpipe.synth.vendor`), scanned
the way boards' scanners deliver vendor ballots. Per sheet (``default_rng([seed, index])``):

1. a vendor-like style and its precinct; the voter's pen; marks as in the demo deck. On a
   broken arrow (``prem``) a vote is a line across the gap: ``full_fill`` a straight stroke,
   ``partial_fill`` a wavy hand-drawn one, ``light_pencil`` a pencil stroke; every other kind
   is drawn in the gap as on an oval (a check, an X, a dot, a small dash...);
2. paper: folds and stains as the demo's typical profile; sometimes a **stamp** (a rubber
   "SAMPLE" stamp in red, purple or black, or an official's signature) across the card: a
   target whose box its ink enters is relabelled ``damaged`` (``damage: "stamp"``, for a
   person), near misses keep their intent;
3. the scan: the scanner's true resolution is the nominal one times ``1 +- max_scale`` (the
   card is rendered at it), then skew, anisotropic stretch, shift, a 180-degree feed, blur,
   noise (:func:`scanpipe.synth.scan.simulate_scan`); then the **mode** (bilevel dithered,
   bilevel thresholded, gray PNG, RGB PNG, RGBA PNG, gray JPEG), a **crop** of one or two
   margins (the scanner cut them off: the image is smaller than the page), and the file's
   **dpi tag**: right, wrong (72, 96, 150 or 300 claimed) or absent.

``expected.json`` entries are the demo deck's, plus ``vendor`` (the family), ``mode``,
``scan.true_dpi``, ``scan.dpi_tag``, ``scan.crop_in`` (left, top, right, bottom inches cut
from the scanned image), ``stamp`` and, for families that print one, ``style_code`` (the
number the bottom row of timing marks encodes).
"""

from __future__ import annotations

import json
import multiprocessing
import os
from collections.abc import Mapping
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import cv2
import numpy as np
from PIL import Image

from scanpipe.synth.deck import DEFAULT_MARK_WEIGHTS, DeckOptions, _Target, apply_damage, choose_marks, contest_outcomes
from scanpipe.synth.marks import (
    PEN_INKS,
    SMALL_COVER,
    SMALL_MAX_SPAN,
    MarkKind,
    _composite,
    _covers,
    _inside_outline,
    _roi,
    _sample,
    _span,
    _stroke,
    draw_mark,
    draw_write_in,
    ink_color,
)
from scanpipe.synth.render import box_px
from scanpipe.synth.scan import ScanProfile, simulate_scan, to_bilevel
from scanpipe.synth.vendor import FAMILIES, STYLES
from scanpipe.synth.vendor_render import render_vendor_card
from scanpipe.types import Election

MODES = ("bilevel_dither", "bilevel_threshold", "gray_png", "rgb_png", "rgba_png", "gray_jpg")
WRONG_DPI_TAGS = (72, 96, 150, 300)
STAMP_INKS = {"red": (190, 30, 40), "purple": (110, 40, 140), "black": (30, 30, 30)}
STAMP_OVER = 0.01  # a target is stamped when stamp ink (alpha > 0.3) covers this share of its box


@dataclass(frozen=True, slots=True)
class VendorScan:
    """How the boards' scanners deliver vendor cards (every range drawn uniformly per card)."""

    name: str
    geometry: ScanProfile  # skew, stretch, shift, 180-degree feeds, blur, noise, paper damage
    dpis: tuple[int, ...] = (200,)
    max_scale: float = 0.0  # the true resolution is nominal * (1 +- this)
    modes: tuple[tuple[str, float], ...] = (("gray_png", 1.0),)
    wrong_dpi_p: float = 0.0
    no_dpi_p: float = 0.0
    crop_p: float = 0.0
    max_crop_in: float = 0.0
    stamp_p: float = 0.0
    signature_p: float = 0.0


VENDOR_SCANS: dict[str, VendorScan] = {
    "vendor_clean": VendorScan("vendor_clean", ScanProfile("vendor_clean")),
    "vendor": VendorScan(
        "vendor",
        ScanProfile("vendor", max_rotation_deg=3.0, flip180_p=0.2, max_shift_in=0.12, max_aniso=0.01,
                    blur_sigma_px=(0.0, 0.9), noise_sigma=(0.0, 3.0), brightness_drift=0.06,
                    fold_p=0.04, stain_p=0.03, bleed_p=0.0),
        dpis=(200, 200, 200, 150, 300), max_scale=0.02,
        modes=(("bilevel_dither", 0.25), ("bilevel_threshold", 0.2), ("gray_png", 0.15), ("rgb_png", 0.1),
               ("rgba_png", 0.1), ("gray_jpg", 0.2)),
        wrong_dpi_p=0.25, no_dpi_p=0.1, crop_p=0.3, max_crop_in=0.35, stamp_p=0.12, signature_p=0.1,
    ),
}


@dataclass(frozen=True, slots=True)
class VendorDeckOptions:
    election_path: str
    out_dir: str
    seed: int
    scan: str
    blank_fraction: float
    name_width: int = 4


# --------------------------------------------------------------------------------------
# Marks


def _small_dash(r: Any, rng: np.random.Generator) -> np.ndarray:
    """A short thick dash inside a small target (the ``small_partial`` kind on vendor targets,
    whose ovals and gaps are flatter than ours): the catalogue's coverage and span."""
    interior = _inside_outline(r)

    def dash(length: float, width: float, dx: float, dy: float) -> np.ndarray:
        c = np.array([r.cx + dx * r.a, r.cy + dy * r.b])
        d = np.array([length * r.a, 0.0])
        return _stroke(r, np.array([c - d, c + d]), width * 2 * r.b)

    def make() -> np.ndarray:
        return dash(rng.uniform(0.15, 0.4), rng.uniform(0.25, 0.5), rng.uniform(-0.3, 0.3), rng.uniform(-0.15, 0.15))

    def ok(alpha: np.ndarray) -> bool:
        return _covers(alpha, interior, *SMALL_COVER) and max(_span(alpha, r)) <= SMALL_MAX_SPAN

    return _sample(make, ok, lambda: dash(0.28, 0.38, 0.0, 0.0), tries=200)


def draw_vendor_mark(rgb: np.ndarray, box: tuple[float, float, float, float], kind: MarkKind, rng: np.random.Generator,
                     *, ink: str, dpi: float) -> None:
    """A mark on an oval or rounded vendor target: the catalogue's, with small partials as dashes."""
    if kind is MarkKind.SMALL_PARTIAL:
        r = _roi(rgb.shape, box, dpi)
        _composite(rgb, r, _small_dash(r, rng), ink_color(ink, rng.uniform(0.7, 1.0)))
        return
    draw_mark(rgb, box, kind, rng, ink=ink, dpi=dpi)


def draw_arrow_mark(rgb: np.ndarray, box: tuple[float, float, float, float], kind: MarkKind, rng: np.random.Generator,
                    *, ink: str, dpi: float) -> None:
    """A mark on a broken arrow whose gap is ``box`` (pixels): votes are lines across the gap."""
    if kind not in (MarkKind.FULL_FILL, MarkKind.PARTIAL_FILL, MarkKind.LIGHT_PENCIL):
        draw_vendor_mark(rgb, box, kind, rng, ink=ink, dpi=dpi)
        return
    r = _roi(rgb.shape, box, dpi)
    over = rng.uniform(0.0, 0.04, 2) * dpi
    xs = np.array([r.cx - r.a - over[0], r.cx + r.a + over[1]])
    ys = np.full(2, r.cy + rng.uniform(-0.15, 0.15) * r.b)
    if kind is MarkKind.PARTIAL_FILL:  # a wavy hand-drawn line
        xs = np.linspace(xs[0], xs[1], 7)
        ys = r.cy + rng.uniform(-0.3, 0.3, 7) * r.b
    pencil = kind is MarkKind.LIGHT_PENCIL
    width = rng.uniform(0.022, 0.035 if pencil else 0.05) * dpi
    alpha = _stroke(r, np.stack([xs, ys], 1), width)
    color = ink_color("pencil" if pencil else ink, rng.uniform(0.5, 0.65) if pencil else rng.uniform(0.75, 1.0))
    _composite(rgb, r, alpha, color)


def draw_vendor_marks(rgb: np.ndarray, targets: list[_Target], shape: str, rng: np.random.Generator, *, pen: str, dpi: float) -> None:
    for t in targets:
        box = box_px(t.box_in, dpi)
        if t.mark is not MarkKind.NONE:
            if shape == "arrow":
                draw_arrow_mark(rgb, box, t.mark, rng, ink=pen, dpi=dpi)
            else:
                draw_vendor_mark(rgb, box, t.mark, rng, ink=pen, dpi=dpi)
        if t.write_in and t.area_in is not None:
            draw_write_in(rgb, box_px(t.area_in, dpi), rng, ink=pen, dpi=dpi)


# --------------------------------------------------------------------------------------
# Stamps and signatures


def _stamp_alpha(shape: tuple[int, int], rng: np.random.Generator, dpi: float) -> np.ndarray:
    """A rubber "SAMPLE" stamp: large rotated outlined-box text with patchy ink."""
    h, w = shape
    text = "SAMPLE"
    height = rng.uniform(0.6, 1.1) * dpi
    scale = height / 22.0
    thick = max(2, int(height / 7))
    (tw, th), _ = cv2.getTextSize(text, cv2.FONT_HERSHEY_DUPLEX, scale, thick)
    canvas = np.zeros((th + 2 * thick + 20, tw + 2 * thick + 20), np.uint8)
    cv2.putText(canvas, text, (thick + 10, th + thick + 10), cv2.FONT_HERSHEY_DUPLEX, scale, 255, thick, cv2.LINE_AA)
    cv2.rectangle(canvas, (2, 2), (canvas.shape[1] - 3, canvas.shape[0] - 3), 255, max(2, thick // 2))
    angle = rng.uniform(15, 40) * (1 if rng.random() < 0.5 else -1)
    cx, cy = rng.uniform(0.25, 0.75) * w, rng.uniform(0.3, 0.8) * h
    m = cv2.getRotationMatrix2D((canvas.shape[1] / 2, canvas.shape[0] / 2), angle, 1.0)
    m[:, 2] += np.array([cx - canvas.shape[1] / 2, cy - canvas.shape[0] / 2])
    alpha = cv2.warpAffine(canvas, m, (w, h)).astype(np.float32) / 255.0
    patchy = cv2.GaussianBlur(rng.random((h // 8 + 1, w // 8 + 1)).astype(np.float32), (0, 0), 1.5)
    patchy = cv2.resize(patchy, (w, h))
    return alpha * np.clip(0.55 + 1.2 * (patchy - patchy.mean()), 0.35, 1.0)


def _signature_alpha(shape: tuple[int, int], rng: np.random.Generator, dpi: float) -> np.ndarray:
    """An official's signature: a long looping scribble somewhere on the card."""
    h, w = shape
    n = int(rng.integers(8, 16))
    t = np.linspace(0, n, n * 30)
    adv = rng.uniform(0.12, 0.2) * dpi
    x0, y0 = rng.uniform(0.1, 0.6) * w, rng.uniform(0.25, 0.85) * h
    xs = x0 + t * adv + 0.5 * adv * np.sin(2 * np.pi * t * rng.uniform(0.8, 1.2))
    ys = y0 - rng.uniform(0.1, 0.25) * dpi * np.abs(np.sin(np.pi * t)) * np.repeat(rng.uniform(0.4, 1.0, n), 30)
    alpha = np.zeros((h, w), np.uint8)
    pts = np.round(np.stack([xs, ys], 1) * 16).astype(np.int32)
    cv2.polylines(alpha, [pts], False, 255, max(1, int(rng.uniform(0.012, 0.02) * dpi)), cv2.LINE_AA, 4)
    return alpha.astype(np.float32) / 255.0


def apply_stamp(rgb: np.ndarray, targets: list[_Target], kind: str, rng: np.random.Generator, dpi: float) -> str:
    """Stamp or sign the card; relabel the targets whose box the ink enters. Returns the ink."""
    alpha = _stamp_alpha(rgb.shape[:2], rng, dpi) if kind == "sample" else _signature_alpha(rgb.shape[:2], rng, dpi)
    ink = str(rng.choice(list(STAMP_INKS))) if kind == "sample" else "black"
    region = rgb.astype(np.float32)
    absorb = 1.0 - np.array(STAMP_INKS[ink], np.float32) / 255.0
    rgb[...] = np.clip(region * (1.0 - alpha[..., None] * absorb) + 0.5, 0, 255).astype(np.uint8)
    for t in targets:
        x, y, w, h = box_px(t.box_in, dpi)
        patch = alpha[max(0, int(y)):int(np.ceil(y + h)), max(0, int(x)):int(np.ceil(x + w))]
        if patch.size and float((patch > 0.3).mean()) >= STAMP_OVER:
            t.damage = t.damage or "stamp"
            t.damage_bilevel = t.damage_bilevel or "stamp"
    return ink


# --------------------------------------------------------------------------------------
# Scanning and files


def _crop(image: np.ndarray, rng: np.random.Generator, scan: VendorScan, dpi: float) -> tuple[np.ndarray, list[float]]:
    """Cut one or two margins off (a scanner whose window is smaller than the sheet)."""
    cut = [0.0, 0.0, 0.0, 0.0]
    for side in rng.choice(4, size=int(rng.integers(1, 3)), replace=False):
        cut[int(side)] = round(float(rng.uniform(0.05, scan.max_crop_in)), 3)
    h, w = image.shape[:2]
    left, top, right, bottom = (int(round(c * dpi)) for c in cut)
    return np.ascontiguousarray(image[top:h - bottom, left:w - right]), cut


def _write(path: Path, image: np.ndarray, mode: str, tag: float | None, quality: int) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    extra: dict[str, Any] = {} if tag is None else {"dpi": (float(tag), float(tag))}
    if mode.startswith("bilevel"):
        gray = image if image.ndim == 2 else cv2.cvtColor(image, cv2.COLOR_RGB2GRAY)
        im = to_bilevel(gray, threshold=150 if mode == "bilevel_threshold" else None)
        im.save(path, "TIFF", compression="group4", **extra)
    elif mode == "gray_jpg":
        Image.fromarray(image).save(path, "JPEG", quality=quality, **extra)
    elif mode == "rgba_png":
        rgba = np.dstack([image, np.full(image.shape[:2], 255, np.uint8)])
        Image.fromarray(rgba, "RGBA").save(path, "PNG", compress_level=3, **extra)
    else:
        Image.fromarray(image).save(path, "PNG", compress_level=3, **extra)


EXT = {"bilevel_dither": ".tif", "bilevel_threshold": ".tif", "gray_png": ".png", "rgb_png": ".png", "rgba_png": ".png",
       "gray_jpg": ".jpg"}
FORMAT = {"bilevel_dither": "tif_g4", "bilevel_threshold": "tif_g4", "gray_png": "png", "rgb_png": "png", "rgba_png": "png",
          "gray_jpg": "jpg"}


def _choice(rng: np.random.Generator, weighted: tuple[tuple[str, float], ...]) -> str:
    names = [n for n, _ in weighted]
    p = np.array([w for _, w in weighted], float)
    return names[int(rng.choice(len(names), p=p / p.sum()))]


_ELECTIONS: dict[str, Election] = {}


def _election(path: str) -> Election:
    if path not in _ELECTIONS:
        from scanpipe.election import load_election

        _ELECTIONS[path] = load_election(path)
    return _ELECTIONS[path]


def make_vendor_sheet(opts: VendorDeckOptions, index: int, override: Mapping[str, Any] | None = None) -> list[dict[str, Any]]:
    """Render, mark, stamp, damage, scan and write one sheet; return its cards' truth entries."""
    ov = dict(override or {})
    rng = np.random.default_rng([opts.seed, index])
    election = _election(opts.election_path)
    scan = VENDOR_SCANS[ov.get("scan", opts.scan)]
    ids = sorted(STYLES)
    style_id = ov.get("style") or ids[int(rng.integers(len(ids)))]
    spec, family = STYLES[style_id], FAMILIES[STYLES[style_id].family]
    dpi = int(ov.get("dpi") or scan.dpis[int(rng.integers(len(scan.dpis)))])
    true_dpi = round(dpi * float(ov.get("scale", 1 + rng.uniform(-scan.max_scale, scan.max_scale))), 2)
    pen = PEN_INKS[int(rng.choice(4, p=[0.45, 0.35, 0.1, 0.1]))]
    blank = bool(ov["blank"]) if "blank" in ov else bool(rng.random() < opts.blank_fraction)
    stamp = ov.get("stamp", "sample" if rng.random() < scan.stamp_p else ("signature" if rng.random() < scan.signature_p else None))
    deck_opts = DeckOptions(opts.election_path, opts.out_dir, opts.seed, "typical", opts.blank_fraction, True,
                            tuple(sorted(DEFAULT_MARK_WEIGHTS.items())))
    mode = ov.get("mode") or _choice(rng, scan.modes)
    flip = ov.get("flip180", bool(rng.random() < scan.geometry.flip180_p))
    tag_draw = rng.random()
    tag = ov["dpi_tag"] if "dpi_tag" in ov else (
        None if tag_draw < scan.no_dpi_p else
        float(WRONG_DPI_TAGS[int(rng.integers(len(WRONG_DPI_TAGS)))]) if tag_draw < scan.no_dpi_p + scan.wrong_dpi_p else float(dpi))
    crop_wanted = ov.get("crop", bool(rng.random() < scan.crop_p))
    quality = int(rng.integers(80, 96))
    entries = []
    for lp in election.style(style_id).layout.pages:
        rgb = render_vendor_card(election, style_id, lp.page, spec.precinct, true_dpi)
        targets = choose_marks(election, lp, rng, deck_opts, pen, blank)
        for t in targets:
            t.circled_name = False  # names sit where the vendor prints them: circles go round the target
        draw_vendor_marks(rgb, targets, family.target, rng, pen=pen, dpi=true_dpi)
        stamp_ink = apply_stamp(rgb, targets, stamp, rng, true_dpi) if stamp and lp.page == 1 else None
        damage = apply_damage(rgb, targets, scan.geometry, rng, true_dpi, tuple(ov.get("damage", ())))
        color = mode in ("rgb_png", "rgba_png")
        image, meta = simulate_scan(rgb, scan.geometry, rng, dpi=int(round(true_dpi)), fmt="png", flip180=flip, color=color)
        crop = [0.0] * 4
        if crop_wanted:
            image, crop = _crop(image, rng, scan, true_dpi)
        name = f"cards/{index + 1:0{opts.name_width}d}" + (f"-p{lp.page}" if len(spec.pages) > 1 else "") + EXT[mode]
        _write(Path(opts.out_dir) / name, image, mode, tag, quality)
        if mode.startswith("bilevel"):
            for t in targets:
                t.damage = t.damage_bilevel
        entry: dict[str, Any] = {
            "file": name, "page_of_file": 1, "style": style_id, "page": lp.page, "precinct": spec.precinct,
            "kind": "ballot", "rotated_180": meta.rotated_180, "dpi": dpi, "format": FORMAT[mode], "color": color,
            "expect": "read", "targets": [t.as_json() for t in targets], "contests": contest_outcomes(election, targets),
            "profile": scan.name, "jpeg_quality": quality if mode == "gray_jpg" else None, "damage": damage,
            "vendor": family.key, "mode": mode, "stamp": stamp if lp.page == 1 else None, "stamp_ink": stamp_ink,
            "scan": {"rotation_deg": round(meta.rotation_deg, 3), "scale": [round(v, 5) for v in meta.scale],
                     "shift_in": [round(v, 4) for v in meta.shift_in], "blur_sigma_px": round(meta.blur_sigma_px, 3),
                     "noise_sigma": round(meta.noise_sigma, 3), "true_dpi": true_dpi, "dpi_tag": tag, "crop_in": crop},
        }
        if spec.code is not None:
            entry["style_code"] = spec.code
        entries.append(entry)
    return entries


def _run(args: tuple[VendorDeckOptions, int, Mapping[str, Any] | None]) -> list[dict[str, Any]]:
    return make_vendor_sheet(*args)


def generate_vendor_deck(election_path: Path, out_dir: Path, *, cards: int, seed: int, scan: str = "vendor",
                         blank_fraction: float = 0.05, jobs: int = 1,
                         overrides: Mapping[int, Mapping[str, Any]] | None = None) -> Path:
    """Write ``cards`` sheets of the vendor-like election and ``expected.json``; return its path.

    ``scan`` is a :data:`VENDOR_SCANS` name; ``overrides`` maps a 0-based sheet index to forced
    choices (``style``, ``dpi``, ``scale``, ``blank``, ``stamp`` (``"sample"``, ``"signature"``
    or None), ``mode`` (:data:`MODES`), ``flip180``, ``dpi_tag`` (a number, or None for no
    tag), ``crop`` (bool), ``damage`` (kinds), ``scan``).
    """
    if scan not in VENDOR_SCANS:
        raise ValueError(f"unknown vendor scan {scan!r}; choose one of {sorted(VENDOR_SCANS)}")
    election_path, out_dir = Path(election_path).resolve(), Path(out_dir).resolve()
    (out_dir / "cards").mkdir(parents=True, exist_ok=True)
    opts = VendorDeckOptions(str(election_path), str(out_dir), seed, scan, blank_fraction, max(4, len(str(cards))))
    tasks = [(opts, i, (overrides or {}).get(i)) for i in range(cards)]
    if jobs > 1:
        with ProcessPoolExecutor(jobs, mp_context=multiprocessing.get_context("forkserver")) as pool:
            results = list(pool.map(_run, tasks, chunksize=max(1, cards // (jobs * 8))))
    else:
        results = [_run(t) for t in tasks]
    expected = {"election": os.path.relpath(election_path, out_dir), "seed": seed, "profile": scan,
                "cards": [entry for sheet in results for entry in sheet]}
    path = out_dir / "expected.json"
    path.write_text(json.dumps(expected, indent=1) + "\n")
    return path

