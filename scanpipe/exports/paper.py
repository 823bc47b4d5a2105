"""The printable new duplicate (§12-108(d)(2)(i)), rendered from its style's layout alone.

Official paper: nothing here comes from the demo (``scanpipe.synth``); everything printed is
the election definition's own data. Per layout page:

* a page with fiducials (a card of our own print): white paper, the four fiducials, the card
  code (``SPB1``, contract section 4) in the layout's ``qr`` box, every target's oval, a line
  for each write-in area, each contest's title above its first target and each option's name
  beside its target (from ``election.json``; text is placed only where it keeps clear of every
  target, fiducial and code, and made smaller or left out otherwise);
* a page without fiducials (another vendor's card): the layout's reference scan (the blank
  card of that style), so the printed card registers against the same reference when scanned;
* the decided marks: each voted target filled;
* the pairing label ``DUP-<serial>-R<n>`` (Code 128, with its text) in the largest clear
  place, on every page, so the scanned card attaches to its record;
* a decided vote in a contest the style's layout does not carry is printed as a note
  (never left off the paper silently).

Pure but for encoding: values in, RGB arrays or PNG/PDF bytes out.
"""

from __future__ import annotations

import io
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache

import cv2
import numpy as np
import zxingcpp
from PIL import Image, ImageDraw, ImageFont

from scanpipe.errors import ScanpipeError
from scanpipe.types import Box, ContestReading, Election, LayoutPage

INK = (20, 20, 20)
PAPER = 255
OUTLINE_IN = 0.012
LABEL_MODULE_IN = 0.013  # Code 128 module width
LABEL_BAR_IN = 0.40  # bar height
CLEAR_IN = 0.05  # text keeps this far from targets, fiducials and codes
TITLE_IN, NAME_IN, MIN_TEXT_IN = 0.13, 0.11, 0.07  # text heights
DEFAULT_DPI = 200


class PaperError(ScanpipeError):
    """A new duplicate cannot be rendered (a page without fiducials whose reference scan is missing)."""


@dataclass(frozen=True, slots=True)
class PaperSpec:
    """What a new duplicate's paper shows."""

    serial: str  # "<base>-R<n>"
    style: str
    precinct: str | None
    contests: tuple[ContestReading, ...]


def render_new_duplicate(election: Election, spec: PaperSpec, *, dpi: int = DEFAULT_DPI,
                         references: Mapping[tuple[str, int], bytes] | None = None) -> list[np.ndarray]:
    """Every page of the new duplicate as an RGB uint8 array at ``dpi``."""
    style = election.style(spec.style)
    precinct = spec.precinct or (style.precincts[0] if style.precincts else "")
    chosen = {(c.contest, o) for c in spec.contests for o in c.votes}
    on_layout = {t.contest for p in style.layout.pages for t in p.targets}
    off_layout = [c for c in spec.contests if c.contest not in on_layout and c.votes]
    pages = []
    for k, page in enumerate(style.layout.pages):
        if page.fiducials_in:
            rgb = _printed_page(election, spec.style, page, precinct, dpi)
        else:
            rgb = _reference_page(spec.style, page, dpi, references or {})
        for t in page.targets:
            if (t.contest, t.option) in chosen:
                _fill_target(rgb, t.box_in, dpi)
        keep_clear = _keep_clear(page, dpi, rgb.shape[:2])
        where = next((p.name for p in election.precincts if p.id == precinct), precinct)
        note = (f"{election.name} · {where} · page {page.page} of {len(style.layout.pages)}",
                *(_note(election, off_layout) if k == 0 else ()))
        _place_label(rgb, f"DUP-{spec.serial}", dpi, keep_clear, note)
        pages.append(rgb)
    return pages


def png_bytes(rgb: np.ndarray, dpi: int) -> bytes:
    buf = io.BytesIO()
    Image.fromarray(rgb).save(buf, format="PNG", dpi=(dpi, dpi), compress_level=1)
    return buf.getvalue()


def pdf_bytes(pages: Sequence[bytes], dpi: int) -> bytes:
    """A PDF of the PNG pages at their physical size (what is printed)."""
    images = [Image.open(io.BytesIO(p)).convert("RGB") for p in pages]
    buf = io.BytesIO()
    images[0].save(buf, format="PDF", save_all=True, append_images=images[1:], resolution=float(dpi))
    return buf.getvalue()


# --------------------------------------------------------------------------------------
# A page of our own print


def _printed_page(election: Election, style_id: str, page: LayoutPage, precinct: str, dpi: int) -> np.ndarray:
    w_in, h_in = page.size_in
    rgb = np.full((int(round(h_in * dpi)), int(round(w_in * dpi)), 3), PAPER, np.uint8)
    for box in page.fiducials_in:
        x, y, w, h = _px(box, dpi)
        rgb[int(round(y)):int(round(y + h)), int(round(x)):int(round(x + w))] = INK
    if page.qr_in is not None:
        payload = f"SPB1|E={election.id}|S={style_id}|P={precinct}|PG={page.page}"
        _draw_modules(rgb, _qr_modules(payload), _px(page.qr_in, dpi))
    t_px = max(1.0, OUTLINE_IN * dpi)
    for t in page.targets:
        x, y, w, h = _px(t.box_in, dpi)
        cv2.ellipse(rgb, (int(round(x + w / 2)), int(round(y + h / 2))), (max(1, int(w / 2 - t_px / 2)), max(1, int(h / 2 - t_px / 2))),
                    0, 0, 360, INK, int(round(t_px)), cv2.LINE_AA)
        if t.write_in_area_in is not None:
            ax, ay, aw, ah = _px(t.write_in_area_in, dpi)
            cv2.line(rgb, (int(ax), int(ay + ah)), (int(ax + aw), int(ay + ah)), INK, max(1, int(round(0.01 * dpi))), cv2.LINE_AA)
    _draw_texts(rgb, election, page, dpi)
    return rgb


def _draw_texts(rgb: np.ndarray, election: Election, page: LayoutPage, dpi: int) -> None:
    """Contest titles above their first target, option names beside their targets."""
    occupied = [_grow(_px(b, dpi), CLEAR_IN * dpi) for b in (*page.fiducials_in, *((page.qr_in,) if page.qr_in else ()))]
    occupied += [_grow(_px(t.box_in, dpi), CLEAR_IN * dpi) for t in page.targets]
    occupied += [_px(t.write_in_area_in, dpi) for t in page.targets if t.write_in_area_in is not None]
    image = Image.fromarray(rgb)
    draw = ImageDraw.Draw(image)
    width = rgb.shape[1]
    seen: set[str] = set()
    for t in sorted(page.targets, key=lambda t: (t.box_in[0], t.box_in[1])):
        contest = election.contest(t.contest)
        x, y, w, h = _px(t.box_in, dpi)
        if t.contest not in seen:
            seen.add(t.contest)
            _text(draw, f"{contest.title} (vote for {contest.vote_for})", x, y - CLEAR_IN * dpi, "bottom", TITLE_IN, dpi, occupied, width)
        option = next(o for o in contest.options if o.id == t.option)
        if t.write_in_area_in is None or not option.write_in:
            _text(draw, option.name, x + w + 0.08 * dpi, y + h / 2, "middle", NAME_IN, dpi, occupied, width)
        else:
            _text(draw, option.name, x + w + 0.08 * dpi, y - 0.01 * dpi, "bottom", MIN_TEXT_IN, dpi, occupied, width)
    rgb[:] = np.asarray(image)


def _text(draw: ImageDraw.ImageDraw, text: str, x: float, y: float, anchor: str, height_in: float, dpi: int,
          occupied: list[tuple[float, float, float, float]], page_width: int) -> bool:
    """Draw ``text`` at the largest size from ``height_in`` down whose box is clear; False when none is."""
    size_in = height_in
    while size_in >= MIN_TEXT_IN - 1e-9:
        font = _font(max(6, int(round(size_in * dpi))))
        left, top, right, bottom = draw.textbbox((0, 0), text, font=font)
        tw, th = right - left, bottom - top
        ty = y - th if anchor == "bottom" else y - th / 2
        box = (x, ty, tw, th)
        if x + tw < page_width - 0.1 * dpi and not any(_overlap(box, o) for o in occupied):
            draw.text((x - left, ty - top), text, font=font, fill=INK)
            occupied.append(box)
            return True
        size_in -= 0.01
    return False


@lru_cache(maxsize=32)
def _font(px: int) -> ImageFont.FreeTypeFont | ImageFont.ImageFont:
    return ImageFont.load_default(size=px)


# --------------------------------------------------------------------------------------
# Another vendor's card: its reference scan


def _reference_page(style_id: str, page: LayoutPage, dpi: int, references: Mapping[tuple[str, int], bytes]) -> np.ndarray:
    data = references.get((style_id, page.page))
    if data is None and page.reference is not None and page.reference.is_file():
        data = page.reference.read_bytes()
    if data is None or page.reference_dpi is None:
        raise PaperError(f"style {style_id} page {page.page} has no fiducials and its reference scan is not stored: "
                         "the new duplicate cannot be printed on a card that registers")
    gray = cv2.imdecode(np.frombuffer(data, np.uint8), cv2.IMREAD_GRAYSCALE)
    if gray is None:
        raise PaperError(f"style {style_id} page {page.page}: the reference scan does not decode")
    size = (int(round(page.size_in[0] * dpi)), int(round(page.size_in[1] * dpi)))
    scale = dpi / page.reference_dpi
    resized = cv2.resize(gray, (int(round(gray.shape[1] * scale)), int(round(gray.shape[0] * scale))), interpolation=cv2.INTER_AREA)
    canvas = np.full((size[1], size[0]), PAPER, np.uint8)
    h, w = min(size[1], resized.shape[0]), min(size[0], resized.shape[1])
    canvas[:h, :w] = resized[:h, :w]
    return cv2.cvtColor(canvas, cv2.COLOR_GRAY2RGB)


# --------------------------------------------------------------------------------------
# Marks and the label


def _fill_target(rgb: np.ndarray, box_in: Box, dpi: int) -> None:
    x, y, w, h = _px(box_in, dpi)
    cv2.ellipse(rgb, (int(round(x + w / 2)), int(round(y + h / 2))), (max(1, int(w / 2) - 1), max(1, int(h / 2) - 1)), 0, 0, 360, (0, 0, 0), -1)


def _keep_clear(page: LayoutPage, dpi: int, shape: tuple[int, int]) -> np.ndarray:
    """Where a label must not go: targets, write-in areas, fiducials, codes, distinguishing marks."""
    mask = np.zeros(shape, np.uint8)
    boxes = [t.box_in for t in page.targets] + [t.write_in_area_in for t in page.targets if t.write_in_area_in is not None]
    boxes += list(page.fiducials_in) + ([page.qr_in] if page.qr_in else []) + list(page.distinguish_in)
    for b in boxes:
        x, y, w, h = _grow(_px(b, dpi), 0.15 * dpi)
        mask[max(0, int(y)):int(y + h) + 1, max(0, int(x)):int(x + w) + 1] = 1
    return mask


def _label_patch(text: str, dpi: int, note: Sequence[str]) -> np.ndarray:
    modules = _code128_modules(text)
    module_px = max(2, int(round(LABEL_MODULE_IN * dpi)))
    bars_w = module_px * modules.size
    quiet = int(round(0.15 * dpi))
    font = _font(max(8, int(round(0.11 * dpi))))
    lines = [text, *note]
    text_w = max(int(ImageDraw.Draw(Image.new("L", (1, 1))).textlength(line, font=font)) for line in lines)
    w = max(bars_w, text_w) + 2 * quiet
    bar_h = int(round(LABEL_BAR_IN * dpi))
    line_h = int(round(0.16 * dpi))
    h = int(round(0.08 * dpi)) * 2 + bar_h + line_h * len(lines)
    patch = Image.new("RGB", (w, h), (PAPER,) * 3)
    draw = ImageDraw.Draw(patch)
    draw.rectangle((0, 0, w - 1, h - 1), outline=(170, 170, 170))
    arr = np.asarray(patch).copy()
    top = int(round(0.08 * dpi))
    _draw_modules(arr, modules[None, :], ((w - bars_w) / 2, top, bars_w, bar_h))
    patch = Image.fromarray(arr)
    draw = ImageDraw.Draw(patch)
    for i, line in enumerate(lines):
        draw.text((quiet, top + bar_h + int(0.03 * dpi) + i * line_h), line, font=font, fill=INK)
    return np.asarray(patch)


def _place_label(rgb: np.ndarray, text: str, dpi: int, keep_clear: np.ndarray, note: Sequence[str]) -> None:
    """Stick the label where the card is clearest: no print and nothing to keep clear under it,
    searched from the bottom of the page up; over the fewest inked pixels when nothing is clear."""
    patch = _label_patch(text, dpi, note)
    ph, pw = patch.shape[:2]
    h, w = rgb.shape[:2]
    margin = int(round(0.3 * dpi))
    if ph + 2 * margin > h or pw + 2 * margin > w:
        raise PaperError(f"the label {text} does not fit on a page of {w / dpi:.1f} x {h / dpi:.1f} in")
    ink = (cv2.cvtColor(rgb, cv2.COLOR_RGB2GRAY) < 200).astype(np.float64) + keep_clear.astype(np.float64) * 1000
    integral = cv2.integral(ink, sdepth=cv2.CV_64F)
    step = max(1, int(round(0.05 * dpi)))
    best: tuple[int, int, int] | None = None
    for y in range(h - margin - ph, margin - 1, -step):
        for x in range(margin, w - margin - pw + 1, step):
            cost = int(integral[y + ph, x + pw] - integral[y, x + pw] - integral[y + ph, x] + integral[y, x])
            if best is None or cost < best[0]:
                best = (cost, x, y)
            if cost == 0:
                break
        if best is not None and best[0] == 0:
            break
    assert best is not None
    _, x, y = best
    rgb[y:y + ph, x:x + pw] = patch


def _note(election: Election, readings: Sequence[ContestReading]) -> tuple[str, ...]:
    """A printed note for decided votes in contests this style's layout does not carry."""
    lines = []
    for r in readings:
        c = election.contest(r.contest)
        names = ", ".join(next(o.name for o in c.options if o.id == v) for v in r.votes)
        lines.append(f"Also decided, not on this card: {c.title}: {names}")
    return tuple(lines)


# --------------------------------------------------------------------------------------
# Codes and geometry


def _qr_modules(payload: str) -> np.ndarray:
    code = zxingcpp.create_barcode(payload, zxingcpp.BarcodeFormat.QRCode, ec_level="M")
    return np.asarray(code.to_image(scale=1, add_quiet_zones=False)) < 128


def _code128_modules(text: str) -> np.ndarray:
    code = zxingcpp.create_barcode(text, zxingcpp.BarcodeFormat.Code128)
    img = np.asarray(code.to_image(scale=1, add_quiet_zones=False))
    return img[img.shape[0] // 2] < 128


def _draw_modules(img: np.ndarray, modules: np.ndarray, box: tuple[float, float, float, float]) -> None:
    """Paint a bool module grid into ``box`` (pixels), module edges rounded to pixels."""
    x, y, w, h = box
    rows, cols = modules.shape
    ys = np.round(y + np.arange(rows + 1) * h / rows).astype(int)
    xs = np.round(x + np.arange(cols + 1) * w / cols).astype(int)
    patch = modules[np.ix_(np.repeat(np.arange(rows), np.diff(ys)), np.repeat(np.arange(cols), np.diff(xs)))]
    region = img[ys[0]:ys[-1], xs[0]:xs[-1]]
    region[patch] = INK
    region[~patch] = PAPER


def _px(box: Box, dpi: float) -> tuple[float, float, float, float]:
    return (box[0] * dpi, box[1] * dpi, box[2] * dpi, box[3] * dpi)


def _grow(box: tuple[float, float, float, float], by: float) -> tuple[float, float, float, float]:
    return (box[0] - by, box[1] - by, box[2] + 2 * by, box[3] + 2 * by)


def _overlap(a: tuple[float, float, float, float], b: tuple[float, float, float, float]) -> bool:
    return a[0] < b[0] + b[2] and b[0] < a[0] + a[2] and a[1] < b[1] + b[3] and b[1] < a[1] + a[3]
