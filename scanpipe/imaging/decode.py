"""Decode a card file's bytes into grayscale page arrays.

Formats are recognised by their first bytes, never by the file name: PNG, JPEG, TIFF
(including bilevel CCITT G4 and multi-page files) and PDF (rendered with pdfium at
:data:`PDF_RENDER_DPI`).

Speed matters (ingest is benchmarked against a bare ``cv2.imread``), so:

* every size check reads only the header, parsed here with ``struct`` (PNG IHDR/pHYs,
  JPEG markers up to the first scan, TIFF IFD chain; PDF page sizes and the pixel sizes
  of the images a page draws); nothing is decoded before the limits (:data:`LIMITS`:
  bytes per file, pixels per page, pages per file, pixels per file) have been checked,
  so a decompression bomb, one page or many, costs nothing;
* pages are decoded one at a time (:func:`iter_card_pages`): a caller that interprets
  each page before asking for the next holds one decoded page at a time;
* pixels of the two commonest scanner outputs that OpenCV's bundled codecs decode slowly
  go to imagecodecs (libpng with zlib-ng, libtiff): 8-bit gray or RGB PNG (about a third
  faster) and single-page bilevel TIFF (G4; about three times faster); everything else is
  decoded by ``cv2.imdecode(..., IMREAD_GRAYSCALE)`` (``imdecodemulti`` for multi-page
  TIFF). Both give the same gray values (RGB to gray with the same weights, within one
  level). Pillow is used only for the rare BigTIFF header.

A file that cannot be read raises :class:`ImageDecodeError` carrying a
:class:`~scanpipe.types.Reason` and a sentence for a person; the interpret stage catches
it once and turns it into an ``UnreadableCard``.
"""

from __future__ import annotations

import io
import struct
from collections.abc import Iterator
from dataclasses import dataclass

import cv2
import numpy as np

from scanpipe.types import Reason

PDF_RENDER_DPI = 200.0


@dataclass(frozen=True)
class DecodeLimits:
    """What one card file may hold before it is refused as ``image_too_large``.

    The first two are the interface contract's (section 5: "over 100 megapixels or
    500 MB"). The other two follow from the contract's "a multi-page TIFF or PDF holds one
    sheet" (section 4): a sheet has two sides; four pages leave room for a scanner's
    separator or imprinter page, and two pages at the per-page limit bound what one file
    may make a worker decode (pages are decoded one at a time, so memory holds one page;
    the total bounds the time). A file over any limit is refused from its header alone,
    before any pixel is decoded, with the figures in the reason's detail.
    """

    file_bytes: int = 500_000_000
    page_pixels: int = 100_000_000
    file_pages: int = 4
    file_pixels: int = 200_000_000


LIMITS = DecodeLimits()

_PNG_SIG = b"\x89PNG\r\n\x1a\n"
_TIFF_SIGS = (b"II*\x00", b"MM\x00*", b"II+\x00", b"MM\x00+")


@dataclass(frozen=True)
class DecodedPage:
    """One page of a card file as an 8-bit grayscale ``H x W`` array."""

    image: np.ndarray
    page_index: int  # 1-based
    page_count: int
    dpi: float | None
    format: str  # "png" | "jpeg" | "tiff" | "pdf"


class ImageDecodeError(Exception):
    """The file is not a readable card image; ``reason`` is the queue reason code."""

    def __init__(self, reason: Reason, detail: str) -> None:
        super().__init__(detail)
        self.reason = reason
        self.detail = detail


@dataclass(frozen=True)
class _Header:
    """What the header says, before any pixel is decoded."""

    format: str
    sizes: tuple[tuple[int, int], ...]  # (width, height) per page
    dpi: float | None
    has_alpha: bool = False
    fast: str | None = None  # "png8" or "tiff1-white0"/"tiff1-black0": decoded by imagecodecs
    samples: str | None = None  # samples a scanner seldom writes (a TIFF's floating-point ones), named where decoding fails


# --------------------------------------------------------------------------------------
# public API


def decode_card_bytes(data: bytes, name: str, limits: DecodeLimits | None = None) -> list[DecodedPage]:
    """Decode every page of one card file (all pages in memory at once: for callers that
    need them together; ingest uses :func:`iter_card_pages`).

    Parameters
    ----------
    data : the whole file.
    name : the file's name or path, used only in messages.
    limits : the limits to apply (default :data:`LIMITS`).

    Returns
    -------
    list of DecodedPage, one per page, in file order.

    Raises
    ------
    ImageDecodeError
        ``UNREADABLE_IMAGE`` (empty, truncated, damaged, not an image) or
        ``IMAGE_TOO_LARGE`` (over a limit of :class:`DecodeLimits`).
    """
    return list(iter_card_pages(data, name, limits))


def iter_card_pages(data: bytes, name: str, limits: DecodeLimits | None = None) -> Iterator[DecodedPage]:
    """Check the whole file's header against the limits, then decode its pages one by one.

    The header check happens before the first page is yielded, so a file over a limit
    raises before any pixel is decoded; a damaged later page raises when it is reached.
    """
    limits = limits or LIMITS
    header = read_header(data, name, limits)
    return _pages(data, header, limits)


def _pages(data: bytes, header: _Header, limits: DecodeLimits) -> Iterator[DecodedPage]:
    if header.format == "pdf":
        yield from _decode_pdf(data)
        return
    if header.format == "tiff" and len(header.sizes) > 1:
        yield from _decode_tiff_pages(data, header)
        return
    image = _decode_single(data, header)
    if image is None:
        raise _unreadable(f"the {_label(header.format)} data could not be decoded{_samples_cause(header)}")
    _check_decoded_size(image, header.sizes[0])
    yield DecodedPage(image, 1, 1, header.dpi, header.format)


def page_count_of(data: bytes, name: str) -> int:
    """Number of pages (cards) in a file, from its header only."""
    return len(read_header(data, name).sizes)


def read_header(data: bytes, name: str, limits: DecodeLimits | None = None) -> _Header:
    """Identify the format and check the size limits without decoding pixels."""
    limits = limits or LIMITS
    if len(data) == 0:
        raise _unreadable("zero-byte file")
    if len(data) > limits.file_bytes:
        raise too_large_file(len(data), limits)
    fmt = sniff_format(data)
    if fmt is None:
        other = other_image_format(data)
        if other is not None:
            raise _unreadable(f"a {other} image, which scanpipe does not read: save the scans as PNG, JPEG, TIFF or PDF "
                              "(the scanner's setting, or an image program's \"save as\")")
        raise _unreadable(f"not an image (starts with {data[:4]!r})")
    parse = {"png": _png_header, "jpeg": _jpeg_header, "tiff": _tiff_header, "pdf": _pdf_header}
    try:
        header = parse[fmt](data, limits)
    except (struct.error, IndexError, ValueError) as exc:
        raise _unreadable(f"damaged {_label(fmt)} header ({exc})") from exc
    _check_limits(header.sizes, limits)
    return header


def too_large_file(size_bytes: int, limits: DecodeLimits | None = None) -> ImageDecodeError:
    """The refusal of a file over the byte limit (also used before a file is read at all)."""
    limits = limits or LIMITS
    return ImageDecodeError(
        Reason.IMAGE_TOO_LARGE,
        f"{size_bytes / 1e6:.0f} MB file, over the {limits.file_bytes // 10**6}-MB limit",
    )


def sniff_format(data: bytes) -> str | None:
    """``"png" | "jpeg" | "tiff" | "pdf"`` from the magic bytes, else None."""
    if data.startswith(_PNG_SIG):
        return "png"
    if data.startswith(b"\xff\xd8\xff"):
        return "jpeg"
    if data[:4] in _TIFF_SIGS:
        return "tiff"
    if data[:1024].lstrip().startswith(b"%PDF-"):
        return "pdf"
    return None


def other_image_format(data: bytes) -> str | None:
    """The name of an image format scanpipe does not read, from its magic bytes (a scanner or
    a phone may save BMP, GIF, WebP, JPEG 2000, HEIC, JBIG2 or PNM), else None."""
    if data[:2] == b"BM" and len(data) >= 6 and int.from_bytes(data[2:6], "little") == len(data):
        return "BMP"
    if data[:6] in (b"GIF87a", b"GIF89a"):
        return "GIF"
    if data[:4] == b"RIFF" and data[8:12] == b"WEBP":
        return "WebP"
    if data[:12] == b"\x00\x00\x00\x0cjP  \r\n\x87\n" or data[:4] == b"\xffO\xffQ":
        return "JPEG 2000"
    if data[4:8] == b"ftyp" and data[8:12] in (b"heic", b"heix", b"hevc", b"mif1", b"msf1", b"avif"):
        return "HEIC/AVIF"
    if data[:8] == b"\x97JB2\r\n\x1a\n":
        return "JBIG2"
    if len(data) >= 3 and data[:1] == b"P" and data[1:2] in b"123456" and data[2:3] in b" \t\r\n":
        return "PNM (PBM/PGM/PPM)"
    return None


# --------------------------------------------------------------------------------------
# limits and errors


def _unreadable(detail: str) -> ImageDecodeError:
    return ImageDecodeError(Reason.UNREADABLE_IMAGE, detail)


def _label(fmt: str) -> str:
    return {"png": "PNG", "jpeg": "JPEG", "tiff": "TIFF", "pdf": "PDF"}[fmt]


def _megapixels_text(pixels: int, limit: int) -> str:
    mp = pixels / 1e6
    return f"{mp:.0f}" if round(mp) > limit / 1e6 else f"{mp:.1f}"


def _too_large(detail: str) -> ImageDecodeError:
    return ImageDecodeError(Reason.IMAGE_TOO_LARGE, detail)


def _check_page_count(count: int, limits: DecodeLimits, *, at_least: bool = False) -> None:
    if count > limits.file_pages:
        more = "more than " if at_least else ""
        raise _too_large(f"{more}{count} pages in one file, over the limit of {limits.file_pages} "
                         f"(a file holds one sheet)")


def _check_limits(sizes: tuple[tuple[int, int], ...], limits: DecodeLimits) -> None:
    _check_page_count(len(sizes), limits)
    for index, (width, height) in enumerate(sizes, start=1):
        if width <= 0 or height <= 0:
            raise _unreadable(f"the header gives an empty {width}x{height} page")
        if width * height > limits.page_pixels:
            where = f"page {index}: " if len(sizes) > 1 else ""
            raise _too_large(
                f"{where}{width}x{height} = {_megapixels_text(width * height, limits.page_pixels)} megapixels, "
                f"over the {limits.page_pixels // 10**6}-megapixel limit"
            )
    total = sum(w * h for w, h in sizes)
    if total > limits.file_pixels:
        raise _too_large(
            f"{len(sizes)} pages of {_megapixels_text(total, limits.file_pixels)} megapixels in all, over the "
            f"{limits.file_pixels // 10**6}-megapixel limit of one file"
        )


def _check_decoded_size(image: np.ndarray, size: tuple[int, int]) -> None:
    if (image.shape[1], image.shape[0]) != size:
        raise _unreadable(
            f"decoded {image.shape[1]}x{image.shape[0]} pixels where the header says "
            f"{size[0]}x{size[1]}"
        )


# --------------------------------------------------------------------------------------
# PNG


def _png_header(data: bytes, limits: DecodeLimits) -> _Header:
    if len(data) < 33 or data[12:16] != b"IHDR":
        raise _unreadable("truncated PNG (no IHDR header)")
    width, height, depth, color_type = struct.unpack(">IIBB", data[16:26])
    dpi = None
    pos = 8
    while pos + 8 <= len(data):
        length, ctype = struct.unpack(">I4s", data[pos : pos + 8])
        if ctype == b"IDAT":
            break
        if ctype == b"pHYs" and length == 9:
            ppu_x, _ppu_y, unit = struct.unpack(">IIB", data[pos + 8 : pos + 17])
            dpi = ppu_x * 0.0254 if unit == 1 and ppu_x > 0 else None
        pos += 12 + length
    if data.rfind(b"IEND", max(0, len(data) - 64)) < 0:
        raise _unreadable("truncated PNG (no IEND chunk at the end)")
    fast = "png8" if depth == 8 and color_type in (0, 2) else None  # 8-bit gray or RGB, no palette or alpha
    return _Header("png", ((width, height),), dpi, has_alpha=color_type in (4, 6), fast=fast)


# --------------------------------------------------------------------------------------
# JPEG

_SOF_MARKERS = frozenset(range(0xC0, 0xD0)) - {0xC4, 0xC8, 0xCC}


def _jpeg_header(data: bytes, limits: DecodeLimits) -> _Header:
    pos, size, dpi = 2, None, None
    while pos + 4 <= len(data):
        if data[pos] != 0xFF:
            raise ValueError(f"no marker at byte {pos}")
        marker = data[pos + 1]
        if marker == 0xFF:  # fill byte
            pos += 1
            continue
        length = struct.unpack(">H", data[pos + 2 : pos + 4])[0]
        segment = data[pos + 4 : pos + 2 + length]
        if marker == 0xE0 and segment[:5] == b"JFIF\x00" and len(segment) >= 12:
            dpi = _jfif_dpi(segment)
        elif marker in _SOF_MARKERS:
            height, width = struct.unpack(">HH", segment[1:5])
            size = (width, height)
        elif marker == 0xDA:  # start of scan: the header is over
            break
        pos += 2 + length
    if size is None:
        raise _unreadable("truncated JPEG (no frame header)")
    if data.rfind(b"\xff\xd9", max(pos, len(data) - 4096)) < 0:
        raise _unreadable("truncated JPEG (no end-of-image marker)")
    return _Header("jpeg", (size,), dpi)


def _jfif_dpi(segment: bytes) -> float | None:
    units, x_density = segment[7], struct.unpack(">H", segment[8:10])[0]
    if x_density == 0 or units not in (1, 2):
        return None
    return float(x_density) if units == 1 else x_density * 2.54


# --------------------------------------------------------------------------------------
# TIFF

_TIFF_TYPE_SIZES = {1: 1, 2: 1, 3: 2, 4: 4, 5: 8, 6: 1, 7: 1, 8: 2, 9: 4, 10: 8, 11: 4, 12: 8}
_TIFF_TYPE_CODES = {1: "B", 3: "H", 4: "I", 5: "II", 6: "b", 8: "h", 9: "i", 10: "ii"}
_MAX_TIFF_PAGES = 10_000
# size, strips, resolution, tiles; bits per sample, compression, photometric, samples per pixel, colour map
_TIFF_TAGS_READ = frozenset({256, 257, 273, 279, 282, 296, 324, 325, 258, 259, 262, 277, 320, 339})  # ..., sample format


def _tiff_header(data: bytes, limits: DecodeLimits) -> _Header:
    if data[2:4] in (b"+\x00", b"\x00+"):
        return _bigtiff_header(data, limits)
    endian = "<" if data[:2] == b"II" else ">"
    offset = struct.unpack(endian + "I", data[4:8])[0]
    sizes: list[tuple[int, int]] = []
    dpi: float | None = None
    seen: set[int] = set()
    fast: str | None = None
    samples: str | None = None
    while offset:
        if len(sizes) >= _MAX_TIFF_PAGES:  # the count is only for the message: stop walking
            _check_page_count(len(sizes), limits, at_least=True)
            break
        if offset in seen:
            raise _unreadable(f"damaged TIFF (page {len(sizes) + 1} directory points back at an earlier page)")
        if offset + 2 > len(data):
            raise _unreadable(f"truncated TIFF (page {len(sizes) + 1} directory is missing)")
        seen.add(offset)
        tags, offset = _tiff_ifd(data, offset, endian)
        sizes.append((_tag_int(tags, 256), _tag_int(tags, 257)))
        _check_tiff_data(data, tags, len(sizes))
        if dpi is None:
            dpi = _tiff_dpi(tags)
        if len(sizes) == 1:
            fast = _tiff_fast(tags)
            samples = _tiff_samples(tags)
    if not sizes:
        raise _unreadable("TIFF without any page")
    return _Header("tiff", tuple(sizes), dpi, fast=fast if len(sizes) == 1 else None, samples=samples)


def _tiff_samples(tags: dict[int, tuple[int, ...]]) -> str | None:
    """The first page's samples where a scanner seldom writes them (floating-point, signed, more
    than 16 bits), in words; else None."""
    bits, kind = max(tags.get(258, (1,))), tags.get(339, (1,))[0]
    if kind == 3:
        return f"{bits}-bit floating-point samples"
    if kind == 2:
        return f"{bits}-bit signed samples"
    return f"{bits}-bit samples" if bits > 16 else None


def _samples_cause(header: _Header) -> str:
    """Why a page whose data could not be decoded may not be (its samples), as a clause."""
    if header.samples is None:
        return ""
    return (f": the file holds {header.samples}, which scanpipe does not read; save the scans with 8-bit samples, gray or "
            "colour (the scanner's setting, or an image program's \"save as\")")


def _tiff_fast(tags: dict[int, tuple[int, ...]]) -> str | None:
    """``tiff1-white0``/``tiff1-black0`` for a plain bilevel page (one 1-bit sample, no
    colour map), which imagecodecs decodes to booleans; else None."""
    bits, samples = tags.get(258, (1,)), tags.get(277, (1,))
    photometric = tags.get(262, (None,))[0]
    if tuple(bits) != (1,) or tuple(samples) != (1,) or photometric not in (0, 1) or 320 in tags:
        return None
    return "tiff1-white0" if photometric == 0 else "tiff1-black0"


def _tiff_ifd(data: bytes, offset: int, endian: str) -> tuple[dict[int, tuple[int, ...]], int]:
    """Parse one image file directory: its tags' values and the next IFD's offset."""
    count = struct.unpack(endian + "H", data[offset : offset + 2])[0]
    tags: dict[int, tuple[int, ...]] = {}
    for i in range(count):
        entry = offset + 2 + 12 * i
        tag, typ, n = struct.unpack(endian + "HHI", data[entry : entry + 8])
        if typ not in _TIFF_TYPE_CODES or tag not in _TIFF_TAGS_READ:
            continue
        nbytes = _TIFF_TYPE_SIZES[typ] * n
        if nbytes <= 4:
            where = entry + 8
        else:
            where = struct.unpack(endian + "I", data[entry + 8 : entry + 12])[0]
        raw = data[where : where + nbytes]
        if len(raw) < nbytes:
            raise _unreadable(f"truncated TIFF (tag {tag} values run past the end of the file)")
        tags[tag] = struct.unpack(endian + _TIFF_TYPE_CODES[typ] * n, raw)
    end = offset + 2 + 12 * count
    next_offset = struct.unpack(endian + "I", data[end : end + 4])[0]
    return tags, next_offset


def _tag_int(tags: dict[int, tuple[int, ...]], tag: int) -> int:
    if tag not in tags:
        raise ValueError(f"tag {tag} (image size) is missing")
    return int(tags[tag][0])


def _check_tiff_data(data: bytes, tags: dict[int, tuple[int, ...]], page: int) -> None:
    for offsets_tag, counts_tag in ((273, 279), (324, 325)):
        offsets, counts = tags.get(offsets_tag, ()), tags.get(counts_tag, ())
        if offsets and counts and max(o + c for o, c in zip(offsets, counts)) > len(data):
            raise _unreadable(f"truncated TIFF (page {page} data runs past the end of the file)")


def _tiff_dpi(tags: dict[int, tuple[int, ...]]) -> float | None:
    x_res = tags.get(282)
    if not x_res or len(x_res) < 2 or x_res[1] == 0 or x_res[0] == 0:
        return None
    unit = tags.get(296, (2,))[0]
    value = x_res[0] / x_res[1]
    return {2: value, 3: value * 2.54}.get(unit)


def _bigtiff_header(data: bytes, limits: DecodeLimits) -> _Header:
    from PIL import Image, UnidentifiedImageError

    try:
        with Image.open(io.BytesIO(data)) as img:
            sizes = []
            count = getattr(img, "n_frames", 1)
            _check_page_count(count, limits)
            for index in range(count):
                img.seek(index)
                sizes.append(img.size)
            dpi = img.info.get("dpi", (None,))[0]
    except (OSError, UnidentifiedImageError, Image.DecompressionBombError) as exc:
        raise _unreadable(f"damaged BigTIFF ({exc})") from exc
    return _Header("tiff", tuple(sizes), float(dpi) if dpi else None)


# --------------------------------------------------------------------------------------
# pixels


def _decode_single(data: bytes, header: _Header) -> np.ndarray | None:
    if header.fast is not None:
        return _decode_fast(data, header)
    buf = np.frombuffer(data, np.uint8)
    if header.has_alpha:
        return _flatten_alpha(cv2.imdecode(buf, cv2.IMREAD_UNCHANGED))
    return cv2.imdecode(buf, cv2.IMREAD_GRAYSCALE)


def _decode_fast(data: bytes, header: _Header) -> np.ndarray:
    import imagecodecs

    try:
        if header.fast == "png8":
            image = imagecodecs.png_decode(data)
        else:
            image = imagecodecs.tiff_decode(data)
    except Exception as exc:  # imagecodecs raises a codec-specific error class per format
        raise _unreadable(f"the {_label(header.format)} data could not be decoded ({_first_line(exc)})") from exc
    if image.dtype == np.bool_:  # bilevel TIFF: True is a 1 bit
        # a bool is one byte, 0 or 1: times 255 (and inverted where a 1 is black) is the
        # same image as np.where(...) at a sixth of its cost
        gray = np.ascontiguousarray(image).view(np.uint8) * np.uint8(255)
        if header.fast == "tiff1-white0":  # ones are black
            np.bitwise_not(gray, out=gray)
        return gray
    if image.dtype != np.uint8 or image.ndim not in (2, 3) or (image.ndim == 3 and image.shape[2] != 3):
        raise _unreadable(f"the {_label(header.format)} data decoded to an unexpected {image.dtype} {image.shape} array")
    return image if image.ndim == 2 else cv2.cvtColor(image, cv2.COLOR_RGB2GRAY)


def _first_line(exc: Exception) -> str:
    text = str(exc).strip() or type(exc).__name__
    return text.splitlines()[0][:200]


def _flatten_alpha(image: np.ndarray | None) -> np.ndarray | None:
    """Composite a gray+alpha or BGRA image on white paper, then to 8-bit gray (gray first:
    the conversion is linear, so the composite of the gray is the gray of the composite,
    within a level of rounding; all in 8-bit OpenCV arithmetic)."""
    if image is None:
        return None
    if image.dtype != np.uint8:
        image = (image // 257).astype(np.uint8)
    if image.ndim == 2:
        return image
    alpha = np.ascontiguousarray(image[..., -1])
    if image.shape[2] == 2:
        gray = np.ascontiguousarray(image[..., 0])
    else:
        gray = cv2.cvtColor(image, cv2.COLOR_BGRA2GRAY)
    ink = cv2.multiply(cv2.subtract(np.full_like(gray, 255), gray), alpha, scale=1.0 / 255.0)  # darkness, as opaque as alpha
    return cv2.subtract(np.full_like(gray, 255), ink)


def _decode_tiff_pages(data: bytes, header: _Header) -> Iterator[DecodedPage]:
    """Each page of a multi-page TIFF, decoded only when asked for."""
    buf = np.frombuffer(data, np.uint8)
    count = len(header.sizes)
    for index, size in enumerate(header.sizes, start=1):
        ok, mats = cv2.imdecodemulti(buf, cv2.IMREAD_GRAYSCALE, range=(index - 1, index))
        if not ok or len(mats) != 1:
            raise _unreadable(f"multi-page TIFF: page {index} of {count} could not be decoded{_samples_cause(header)}")
        _check_decoded_size(mats[0], size)
        yield DecodedPage(mats[0], index, count, header.dpi, "tiff")


# --------------------------------------------------------------------------------------
# PDF


def _pdf_header(data: bytes, limits: DecodeLimits) -> _Header:
    """Page sizes at the render resolution, each page's drawn images checked too: pdfium
    decodes an embedded image at its own size whatever the page's (a 1-bit image of
    40,000 x 40,000 pixels is 200 KB of PDF and hundreds of MB decoded)."""
    pdf = _open_pdf(data)
    try:
        _check_page_count(len(pdf), limits)
        scale = PDF_RENDER_DPI / 72.0
        sizes = []
        embedded = 0
        for index in range(len(pdf)):
            width_pt, height_pt = pdf.get_page_size(index)
            sizes.append((round(width_pt * scale), round(height_pt * scale)))
            embedded += _check_pdf_images(pdf, index, limits)
        if embedded > limits.file_pixels:
            raise _too_large(f"the pages draw images of {_megapixels_text(embedded, limits.file_pixels)} megapixels "
                             f"in all, over the {limits.file_pixels // 10**6}-megapixel limit of one file")
    finally:
        pdf.close()
    return _Header("pdf", tuple(sizes), PDF_RENDER_DPI)


def _check_pdf_images(pdf, index: int, limits: DecodeLimits) -> int:  # type: ignore[no-untyped-def]
    """Pixels of the images page ``index`` draws (in forms too); raise for one over the page limit."""
    import pypdfium2.raw as pdfium_c

    page = pdf[index]
    try:
        total = 0
        for obj in page.get_objects(filter=(pdfium_c.FPDF_PAGEOBJ_IMAGE,), max_depth=8):
            width, height = obj.get_px_size()
            if width * height > limits.page_pixels:
                raise _too_large(
                    f"page {index + 1} draws an image of {width}x{height} = "
                    f"{_megapixels_text(width * height, limits.page_pixels)} megapixels, "
                    f"over the {limits.page_pixels // 10**6}-megapixel limit"
                )
            total += width * height
        return total
    finally:
        page.close()


def _open_pdf(data: bytes):  # type: ignore[no-untyped-def]
    import pypdfium2 as pdfium

    try:
        pdf = pdfium.PdfDocument(data)
    except pdfium.PdfiumError as exc:
        raise _unreadable(f"damaged PDF ({exc})") from exc
    if len(pdf) == 0:
        pdf.close()
        raise _unreadable("PDF without any page")
    return pdf


def _decode_pdf(data: bytes) -> Iterator[DecodedPage]:
    import pypdfium2 as pdfium

    pdf = _open_pdf(data)
    try:
        count = len(pdf)
        for index in range(count):
            page = pdf[index]
            try:
                bitmap = page.render(scale=PDF_RENDER_DPI / 72.0, grayscale=True)
                array = np.ascontiguousarray(_gray_of(bitmap.to_numpy()))
            except pdfium.PdfiumError as exc:
                raise _unreadable(f"PDF page {index + 1} could not be rendered ({exc})") from exc
            finally:
                page.close()
            yield DecodedPage(array, index + 1, count, PDF_RENDER_DPI, "pdf")
    finally:
        pdf.close()


def _gray_of(array: np.ndarray) -> np.ndarray:
    if array.ndim == 2:
        return array
    if array.shape[2] == 1:
        return array[..., 0]
    code = cv2.COLOR_BGRA2GRAY if array.shape[2] == 4 else cv2.COLOR_BGR2GRAY
    return cv2.cvtColor(array, code)
