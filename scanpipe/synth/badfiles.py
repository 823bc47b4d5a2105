"""A corpus of bad files, the kinds a hostile or careless batch holds (issue 9), each with
the outcome ingest must give it.

Every entry is written into one batch folder (beside good cards the caller adds) and says
what a board must see afterwards:

* ``unreadable_image`` / ``image_too_large`` / ``blank_page``: stored as an unreadable card
  with that reason;
* ``file_unread``: listed by the queue as a card file (or folder) that could not be read;
* ``skipped``: listed in the summary and recorded as skipped (not a card, or read elsewhere);
* ``read``: a good card despite its odd name or extension (it must be read).

Bombs are small files that claim (and really hold) far more pixels or pages than a card:
a 500-page TIFF, 8 pages of 100 megapixels, a 300-page PDF, a PDF page drawing a
1.6-gigapixel image, a PNG of 30,000 x 30,000 pixels, a JPEG header of 65,000 x 65,000,
a 600-MB (sparse) file. Demo and test tooling: shipped code never imports it.
"""

from __future__ import annotations

import io
import os
import struct
import zlib
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np


@dataclass(frozen=True)
class BadFile:
    """One entry of the corpus: where it is, what it is, what ingest must make of it."""

    name: str  # path relative to the batch folder (str: may hold a newline)
    kind: str
    expect: str  # "unreadable_image" | "image_too_large" | "blank_page" | "file_unread" | "skipped" | "read"
    needs_unprivileged: bool = False  # only holds when ingest runs without root's read-anything power


# --------------------------------------------------------------------------------------
# File makers


def tiff_pages(pages: int, width: int, height: int) -> bytes:
    """A bilevel CCITT G4 TIFF of ``pages`` blank pages of ``width x height`` (tiny per page)."""
    from PIL import Image

    page = Image.new("1", (width, height), 1)
    buf = io.BytesIO()
    page.save(buf, format="TIFF", compression="group4", save_all=True, append_images=[page] * (pages - 1), dpi=(200, 200))
    return buf.getvalue()


def pdf_document(pages: int, *, image_px: tuple[int, int] | None = None, size_pt: tuple[float, float] = (612.0, 792.0)) -> bytes:
    """A minimal valid PDF of ``pages`` pages, each drawing a line of text, or (with
    ``image_px``) one shared 1-bit Flate image of that many pixels stretched over the page."""
    objs: list[bytes] = [b"<< /Type /Catalog /Pages 2 0 R >>"]
    kids = " ".join(f"{4 + 2 * i} 0 R" for i in range(pages))
    objs.append(f"<< /Type /Pages /Kids [{kids}] /Count {pages} >>".encode())
    if image_px is not None:
        w, h = image_px
        comp = zlib.compressobj(9)
        row = b"\xff" * ((w + 7) // 8)
        data = b"".join(comp.compress(row) for _ in range(h)) + comp.flush()
        objs.append(b"<< /Type /XObject /Subtype /Image /Width %d /Height %d /ColorSpace /DeviceGray "
                    b"/BitsPerComponent 1 /Filter /FlateDecode /Length %d >>\nstream\n" % (w, h, len(data)) + data + b"\nendstream")
        content = b"q %.0f 0 0 %.0f 0 0 cm /Im1 Do Q" % size_pt
        resources = b"<< /XObject << /Im1 3 0 R >> >>"
    else:
        objs.append(b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>")
        content = b"BT /F1 24 Tf 72 700 Td (Not a ballot) Tj ET"
        resources = b"<< /Font << /F1 3 0 R >> >>"
    for i in range(pages):
        objs.append(b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 %.0f %.0f] /Resources %s /Contents %d 0 R >>"
                    % (size_pt[0], size_pt[1], resources, 5 + 2 * i))
        objs.append(b"<< /Length %d >>\nstream\n" % len(content) + content + b"\nendstream")
    out = b"%PDF-1.4\n"
    offsets = []
    for i, obj in enumerate(objs, 1):
        offsets.append(len(out))
        out += b"%d 0 obj\n" % i + obj + b"\nendobj\n"
    xref = len(out)
    out += b"xref\n0 %d\n0000000000 65535 f \n" % (len(objs) + 1) + b"".join(b"%010d 00000 n \n" % o for o in offsets)
    out += b"trailer\n<< /Size %d /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n" % (len(objs) + 1, xref)
    return out


def png_bilevel(width: int, height: int) -> bytes:
    """A valid 1-bit white PNG of ``width x height`` (a 30,000-pixel square is about 100 KB)."""
    def chunk(kind: bytes, body: bytes) -> bytes:
        return struct.pack(">I", len(body)) + kind + body + struct.pack(">I", zlib.crc32(kind + body) & 0xFFFFFFFF)

    comp = zlib.compressobj(9)
    row = b"\x00" + b"\xff" * ((width + 7) // 8)
    idat = b"".join(comp.compress(row) for _ in range(height)) + comp.flush()
    ihdr = struct.pack(">IIBBBBB", width, height, 1, 0, 0, 0, 0)
    return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", ihdr) + chunk(b"IDAT", idat) + chunk(b"IEND", b"")


def jpeg_header_only(width: int, height: int) -> bytes:
    """A JPEG whose frame header claims ``width x height``, with no real scan data."""
    sof = b"\xff\xc0" + struct.pack(">HBHHB", 11, 8, height, width, 1) + b"\x01\x11\x00"
    return b"\xff\xd8" + sof + b"\xff\xda\x00\x02" + b"\x00" * 64 + b"\xff\xd9"


def tiff_claiming(pages: int, width: int, height: int) -> bytes:
    """A tiny TIFF of ``pages`` pages whose directories claim ``width x height`` each (the
    strips hold a 64-pixel page: a header bomb that must be refused before decoding)."""
    data = bytearray(tiff_pages(pages, 64, 64))
    offset = struct.unpack("<I", data[4:8])[0]
    while offset:
        count = struct.unpack("<H", data[offset:offset + 2])[0]
        for i in range(count):
            entry = offset + 2 + 12 * i
            tag, typ = struct.unpack("<HH", data[entry:entry + 4])
            if tag in (256, 257):
                value = width if tag == 256 else height
                data[entry + 2:entry + 12] = struct.pack("<HII", 4, 1, value)  # LONG, one value
        offset = struct.unpack("<I", data[offset + 2 + 12 * count:offset + 6 + 12 * count])[0]
    return bytes(data)


def tiff_ifd_loop() -> bytes:
    """A TIFF whose second page directory points back at the first."""
    data = bytearray(tiff_pages(2, 64, 64))
    first = struct.unpack("<I", data[4:8])[0]
    count = struct.unpack("<H", data[first:first + 2])[0]
    second = struct.unpack("<I", data[first + 2 + 12 * count:first + 6 + 12 * count])[0]
    count2 = struct.unpack("<H", data[second:second + 2])[0]
    data[second + 2 + 12 * count2:second + 6 + 12 * count2] = struct.pack("<I", first)
    return bytes(data)


# --------------------------------------------------------------------------------------
# The corpus


def write_bad_files(folder: Path, good_card: bytes, *, with_huge_sparse: bool = True) -> list[BadFile]:
    """Write every kind of bad file into ``folder`` (made if needed); return what each must become.

    ``good_card``: the bytes of a readable card image (PNG), used for truncations, for a good
    card under an odd name, and so on.
    """
    folder.mkdir(parents=True, exist_ok=True)
    out: list[BadFile] = []

    def put(name: str, kind: str, expect: str, data: bytes | Callable[[Path], None], *, unprivileged: bool = False) -> None:
        path = folder / name
        path.parent.mkdir(parents=True, exist_ok=True)
        if callable(data):
            data(path)
        else:
            path.write_bytes(data)
        out.append(BadFile(name, kind, expect, unprivileged))

    jpeg = _as_jpeg(good_card)
    put("zero-byte.png", "zero-byte file", "unreadable_image", b"")
    put("truncated.png", "truncated PNG", "unreadable_image", good_card[: len(good_card) // 3])
    put("truncated.jpg", "truncated JPEG", "unreadable_image", jpeg[: len(jpeg) // 2])
    put("truncated.tif", "truncated TIFF", "unreadable_image", tiff_pages(1, 1700, 2200)[:300])
    put("text-not-image.png", "text named as an image", "unreadable_image", b"this is a note, not a scan\n" * 20)
    put("corrupt.pdf", "corrupt PDF", "unreadable_image", b"%PDF-1.7\n" + bytes(np.random.default_rng(1).integers(0, 256, 4000, dtype=np.uint8)))
    put("tiff-ifd-loop.tif", "TIFF page directories in a loop", "unreadable_image", tiff_ifd_loop())
    put("blank-sheet.png", "a blank sheet (a card's blank back, a sheet fed by mistake)", "blank_page", png_bilevel(1700, 2200))
    put("bomb-tiff-500-pages.tif", "500-page TIFF bomb", "image_too_large", tiff_pages(500, 2550, 3300))
    put("bomb-tiff-8x100mp.tif", "8 pages of 100 megapixels", "image_too_large", tiff_pages(8, 10000, 10000))
    put("bomb-tiff-3x90mp.tif", "3 pages of 90 megapixels (each under the page limit)", "image_too_large", tiff_pages(3, 9000, 10000))
    put("bomb-tiff-header.tif", "TIFF header claiming 2 pages of 60,000 x 60,000", "image_too_large", tiff_claiming(2, 60000, 60000))
    put("bomb-pdf-300-pages.pdf", "300-page PDF", "image_too_large", pdf_document(300))
    put("bomb-pdf-huge-image.pdf", "PDF page drawing a 40,000 x 40,000 image", "image_too_large", pdf_document(1, image_px=(40000, 40000)))
    put("bomb-pdf-huge-page.pdf", "PDF page of 200 x 200 inches", "image_too_large", pdf_document(1, size_pt=(14400.0, 14400.0)))
    put("bomb-png-30000.png", "30,000 x 30,000 PNG in a tiny file", "image_too_large", png_bilevel(30000, 30000))
    put("bomb-jpeg-header.jpg", "JPEG header claiming 65,000 x 65,000", "image_too_large", jpeg_header_only(65000, 65000))
    if with_huge_sparse:
        put("huge-sparse.png", "600 MB file (sparse)", "image_too_large", lambda p: _sparse(p, good_card, 600_000_000))
    put("no-permission.png", "card without read permission", "file_unread", lambda p: _unreadable(p, good_card), unprivileged=True)
    put("locked/", "folder that cannot be listed (no permission)", "file_unread", lambda p: _locked_folder(p, good_card),
        unprivileged=True)
    put("loop.png", "symbolic link to itself", "file_unread", lambda p: os.symlink(p.name, p))
    put("dangling.png", "dangling symbolic link", "file_unread", lambda p: os.symlink("no-such-card.png", p))
    put("sub/up", "symbolic link to a parent folder (a folder loop)", "skipped", lambda p: os.symlink("..", p))
    put("fifo.png", "named pipe with a card's name", "file_unread", lambda p: os.mkfifo(p))
    put(os.fsdecode(b"bad-name-\xff\xfe.png"), "file name that is not UTF-8", "file_unread", good_card)
    put("forged\n  unreadable fake.png: unreadable_image: forged line.png", "newline in a bad file's name",
        "unreadable_image", b"GIF89a: not a card format\n")
    put("notes.txt", "not a card (text)", "skipped", b"batch notes\n")
    put("card.bmp", "a card saved with a wrong extension", "skipped", good_card)
    put(".hidden", "hidden file", "skipped", b"x")
    put("good-named.jpg", "a PNG card named .jpg", "read", good_card[:-12] + _png_text_chunk() + good_card[-12:])
    put("new\nline.png", "newline in a good card's name", "read", good_card[:-12] + _png_text_chunk(b"2") + good_card[-12:])
    return out


def _as_jpeg(png: bytes) -> bytes:
    from PIL import Image

    buf = io.BytesIO()
    Image.open(io.BytesIO(png)).convert("L").save(buf, format="JPEG", quality=90)
    return buf.getvalue()


def _png_text_chunk(value: bytes = b"1") -> bytes:
    """A tEXt chunk making a copy of the good card distinct bytes (another card id)."""
    body = b"Comment\x00copy " + value
    return struct.pack(">I", len(body)) + b"tEXt" + body + struct.pack(">I", zlib.crc32(b"tEXt" + body) & 0xFFFFFFFF)


def _sparse(path: Path, head: bytes, size: int) -> None:
    with open(path, "wb") as f:
        f.write(head)
        f.truncate(size)


def _unreadable(path: Path, data: bytes) -> None:
    path.write_bytes(data)
    os.chmod(path, 0)


def _locked_folder(path: Path, card: bytes) -> None:
    path.mkdir(parents=True, exist_ok=True)
    (path / "inside.png").write_bytes(card)
    os.chmod(path, 0)


def restore_permissions(folder: Path, corpus: list[BadFile]) -> None:
    """Make the corpus removable again (the permission entries are locked)."""
    for bad in corpus:
        path = folder / bad.name
        if bad.needs_unprivileged and path.exists():
            os.chmod(path, 0o755 if path.is_dir() else 0o644)
