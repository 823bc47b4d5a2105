"""decode_card_bytes: formats, metadata, and the exact reasons for bad files."""

from __future__ import annotations

import io
import struct
import zlib
from pathlib import Path

import cv2
import numpy as np
import pytest
from PIL import Image

from scanpipe.imaging import decode
from scanpipe.imaging.decode import ImageDecodeError, decode_card_bytes, page_count_of
from scanpipe.types import Reason


def page_image(seed: int = 0, shape: tuple[int, int] = (220, 170)) -> np.ndarray:
    rng = np.random.default_rng(seed)
    img = np.full(shape, 250, np.uint8)
    for _ in range(8):
        x, y = (int(v) for v in rng.integers(0, 140, 2))
        cv2.rectangle(img, (x, y), (x + 20, y + 12), 0, -1)
    return img


def pil_bytes(img: Image.Image, fmt: str, **kwargs) -> bytes:
    buf = io.BytesIO()
    img.save(buf, fmt, **kwargs)
    return buf.getvalue()


def png_chunk(kind: bytes, payload: bytes) -> bytes:
    return struct.pack(">I", len(payload)) + kind + payload + struct.pack(">I", zlib.crc32(kind + payload))


def failure(data: bytes) -> ImageDecodeError:
    with pytest.raises(ImageDecodeError) as info:
        decode_card_bytes(data, "card")
    return info.value


def test_png_decodes_gray_with_dpi() -> None:
    img = page_image()
    (page,) = decode_card_bytes(pil_bytes(Image.fromarray(img), "PNG", dpi=(200, 200)), "a.png")
    assert np.array_equal(page.image, img)
    assert (page.page_index, page.page_count, page.format) == (1, 1, "png")
    assert page.dpi == pytest.approx(200, abs=0.1)


def test_png_with_alpha_is_put_on_white_paper() -> None:
    rgba = np.zeros((10, 12, 4), np.uint8)
    rgba[:, :6, 3] = 255  # left half opaque black, right half transparent
    (page,) = decode_card_bytes(pil_bytes(Image.fromarray(rgba, "RGBA"), "PNG"), "a.png")
    assert page.image.dtype == np.uint8 and page.image.shape == (10, 12)
    assert page.image[:, :6].max() == 0 and page.image[:, 6:].min() == 255


@pytest.mark.parametrize("mode", ["RGBA", "LA"])
def test_half_transparent_ink_is_composited_on_white_as_its_gray(mode: str) -> None:
    """Partly transparent coloured ink over white: the gray of the composite, within 2 levels
    of compositing every channel in floating point first."""
    rng = np.random.default_rng(7)
    channels = 4 if mode == "RGBA" else 2
    pixels = rng.integers(0, 256, (40, 30, channels), dtype=np.uint8)
    (page,) = decode_card_bytes(pil_bytes(Image.fromarray(pixels, mode), "PNG"), "a.png")
    alpha = pixels[..., -1:].astype(np.float64) / 255.0
    colour = pixels[..., :-1].astype(np.float64) * alpha + 255.0 * (1.0 - alpha)
    want = colour[..., 0] if channels == 2 else colour @ np.array([0.299, 0.587, 0.114])
    assert page.image.dtype == np.uint8 and page.image.shape == (40, 30)
    assert np.abs(page.image.astype(float) - want).max() <= 2.0


def test_color_jpeg_decodes_gray_with_jfif_dpi() -> None:
    rgb = np.dstack([page_image()] * 3)
    (page,) = decode_card_bytes(pil_bytes(Image.fromarray(rgb), "JPEG", quality=95, dpi=(300, 300)), "a.jpg")
    assert page.image.ndim == 2 and page.image.shape == (220, 170)
    assert np.abs(page.image.astype(int) - page_image()).mean() < 3
    assert (page.format, page.dpi) == ("jpeg", 300.0)


def test_bilevel_g4_tiff() -> None:
    img = page_image()
    data = pil_bytes(Image.fromarray(img).convert("1", dither=Image.Dither.NONE), "TIFF", compression="group4", dpi=(150, 150))
    (page,) = decode_card_bytes(data, "a.tif")
    assert set(np.unique(page.image)) == {0, 255}
    assert np.array_equal(page.image < 128, img < 128)
    assert (page.format, page.dpi) == ("tiff", 150.0)


@pytest.mark.parametrize("photometric", [0, 1])  # WhiteIsZero and BlackIsZero both read black as 0
def test_bilevel_tiff_either_photometric_reads_like_opencv(photometric: int) -> None:
    from PIL import TiffImagePlugin

    img = page_image(3)
    tags = TiffImagePlugin.ImageFileDirectory_v2()
    tags[262] = photometric
    data = pil_bytes(Image.fromarray(img).convert("1", dither=Image.Dither.NONE), "TIFF", compression="group4", tiffinfo=tags)
    assert decode.read_header(data, "a.tif").fast == ("tiff1-white0" if photometric == 0 else "tiff1-black0")
    (page,) = decode_card_bytes(data, "a.tif")
    assert np.array_equal(page.image, cv2.imdecode(np.frombuffer(data, np.uint8), cv2.IMREAD_GRAYSCALE))
    assert np.array_equal(page.image < 128, img < 128)


def test_rgb_png_reads_within_one_level_of_opencv() -> None:
    rng = np.random.default_rng(5)
    rgb = rng.integers(0, 256, (60, 80, 3), dtype=np.uint8)
    data = pil_bytes(Image.fromarray(rgb), "PNG")
    assert decode.read_header(data, "a.png").fast == "png8"
    (page,) = decode_card_bytes(data, "a.png")
    reference = cv2.imdecode(np.frombuffer(data, np.uint8), cv2.IMREAD_GRAYSCALE)
    assert page.image.shape == (60, 80) and int(np.abs(page.image.astype(int) - reference).max()) <= 1


def test_png_with_damaged_pixel_data_names_the_problem() -> None:
    data = bytearray(pil_bytes(Image.fromarray(page_image()), "PNG"))
    start = data.index(b"IDAT") + 4
    data[start + 2 : start + 40] = bytes(38)  # zlib stream broken, chunk sizes intact
    error = failure(bytes(data))
    assert error.reason is Reason.UNREADABLE_IMAGE
    assert error.detail.startswith("the PNG data could not be decoded (")


def test_multi_page_tiff_gives_every_page_in_order() -> None:
    images = [page_image(seed) for seed in range(3)]
    frames = [Image.fromarray(i).convert("1", dither=Image.Dither.NONE) for i in images]
    data = pil_bytes(frames[0], "TIFF", save_all=True, append_images=frames[1:], compression="group4")
    pages = decode_card_bytes(data, "a.tiff")
    assert [(p.page_index, p.page_count) for p in pages] == [(1, 3), (2, 3), (3, 3)]
    for page, img in zip(pages, images):
        assert np.array_equal(page.image < 128, img < 128)
    assert page_count_of(data, "a.tiff") == 3


def test_pdf_pages_render_at_200_dpi() -> None:
    frames = [Image.fromarray(page_image(seed, (300, 200))) for seed in range(2)]
    data = pil_bytes(frames[0], "PDF", save_all=True, append_images=frames[1:], resolution=100.0)
    pages = decode_card_bytes(data, "a.pdf")
    assert [(p.page_index, p.page_count, p.format, p.dpi) for p in pages] == [(1, 2, "pdf", 200.0), (2, 2, "pdf", 200.0)]
    assert pages[0].image.shape == (600, 400) and pages[0].image.dtype == np.uint8
    small = cv2.resize(pages[1].image, (200, 300), interpolation=cv2.INTER_AREA)
    assert np.abs(small.astype(int) - page_image(1, (300, 200))).mean() < 8
    assert page_count_of(data, "a.pdf") == 2


def test_zero_byte_file() -> None:
    error = failure(b"")
    assert (error.reason, error.detail) == (Reason.UNREADABLE_IMAGE, "zero-byte file")


def test_not_an_image() -> None:
    error = failure(b"%!PS-Adobe-3.0\n%%Pages: 1\n")
    assert (error.reason, error.detail) == (Reason.UNREADABLE_IMAGE, "not an image (starts with b'%!PS')")


@pytest.mark.parametrize(("fmt", "name"), [("BMP", "BMP"), ("GIF", "GIF"), ("WEBP", "WebP"), ("JPEG2000", "JPEG 2000"),
                                           ("PPM", "PNM (PBM/PGM/PPM)")])
def test_an_image_of_a_format_scanpipe_does_not_read_is_named(fmt: str, name: str) -> None:
    """A scan saved as BMP, GIF, WebP, JPEG 2000 or PNM is named as such, with what to save it as
    instead (not "not an image")."""
    if fmt not in Image.SAVE:
        pytest.skip(f"this Pillow cannot write {fmt}")
    error = failure(pil_bytes(Image.fromarray(page_image()).convert("RGB" if fmt == "PPM" else "L"), fmt))
    assert error.reason is Reason.UNREADABLE_IMAGE
    assert error.detail.startswith(f"a {name} image, which scanpipe does not read: save the scans as PNG, JPEG, TIFF or PDF")


def test_a_text_file_that_begins_like_a_bitmap_is_not_an_image() -> None:
    error = failure(b"BMW 320i, 1998\n")
    assert error.detail == "not an image (starts with b'BMW ')"


def test_truncated_png() -> None:
    data = pil_bytes(Image.fromarray(page_image()), "PNG")
    error = failure(data[: len(data) // 2])
    assert (error.reason, error.detail) == (Reason.UNREADABLE_IMAGE, "truncated PNG (no IEND chunk at the end)")


def test_truncated_jpeg() -> None:
    data = pil_bytes(Image.fromarray(page_image()), "JPEG")
    error = failure(data[: len(data) - 200])
    assert (error.reason, error.detail) == (Reason.UNREADABLE_IMAGE, "truncated JPEG (no end-of-image marker)")


def test_truncated_tiff() -> None:
    data = pil_bytes(Image.fromarray(page_image()), "TIFF")  # Pillow writes the IFD first
    error = failure(data[: len(data) // 2])
    assert (error.reason, error.detail) == (
        Reason.UNREADABLE_IMAGE,
        "truncated TIFF (page 1 data runs past the end of the file)",
    )


def test_huge_png_header_is_refused_before_decoding() -> None:
    header = struct.pack(">IIBBBBB", 12000, 14000, 8, 0, 0, 0, 0)
    data = decode._PNG_SIG + png_chunk(b"IHDR", header) + png_chunk(b"IDAT", b"x") + png_chunk(b"IEND", b"")
    error = failure(data)
    assert (error.reason, error.detail) == (
        Reason.IMAGE_TOO_LARGE,
        "12000x14000 = 168 megapixels, over the 100-megapixel limit",
    )


def test_huge_jpeg_header_is_refused_before_decoding() -> None:
    sof = b"\xff\xc0" + struct.pack(">HBHHB", 11, 8, 20000, 6000, 1) + b"\x01\x11\x00"
    data = b"\xff\xd8" + sof + b"\xff\xda\x00\x02" + b"\x00" * 10 + b"\xff\xd9"
    error = failure(data)
    assert (error.reason, error.detail) == (
        Reason.IMAGE_TOO_LARGE,
        "6000x20000 = 120 megapixels, over the 100-megapixel limit",
    )


def test_file_over_the_byte_limit(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(decode, "LIMITS", decode.DecodeLimits(file_bytes=2_000_000))
    error = failure(b"\x89PNG" + b"\x00" * 3_000_000)
    assert (error.reason, error.detail) == (Reason.IMAGE_TOO_LARGE, "3 MB file, over the 2-MB limit")


def test_garbage_after_a_png_signature_is_unreadable() -> None:
    error = failure(decode._PNG_SIG + b"\x00" * 40)
    assert error.reason is Reason.UNREADABLE_IMAGE
    assert error.detail == "truncated PNG (no IHDR header)"


def test_damaged_pdf() -> None:
    error = failure(b"%PDF-1.7\n" + b"garbage" * 20)
    assert error.reason is Reason.UNREADABLE_IMAGE and error.detail.startswith("damaged PDF")


# --------------------------------------------------------------------------------------
# Limits per file (issue 9 item 6): refused from the header, before any pixel is decoded


@pytest.fixture
def no_pixel_decoding(monkeypatch: pytest.MonkeyPatch) -> None:
    """Any pixel decoding fails the test: a bomb must be refused from its header."""
    def refuse(*_args: object, **_kwargs: object) -> None:
        raise AssertionError("pixels were decoded")

    monkeypatch.setattr(decode.cv2, "imdecode", refuse)
    monkeypatch.setattr(decode.cv2, "imdecodemulti", refuse)
    monkeypatch.setattr(decode, "_decode_fast", refuse)
    monkeypatch.setattr(decode, "_decode_pdf", refuse)


def test_a_tiff_of_500_pages_is_refused_from_its_header(no_pixel_decoding: None) -> None:
    from scanpipe.synth.badfiles import tiff_pages

    error = failure(tiff_pages(500, 850, 1100))
    assert (error.reason, error.detail) == (
        Reason.IMAGE_TOO_LARGE, "500 pages in one file, over the limit of 4 (a file holds one sheet)")


def test_pages_each_under_the_page_limit_but_too_many_pixels_in_all_are_refused(no_pixel_decoding: None) -> None:
    from scanpipe.synth.badfiles import tiff_claiming

    error = failure(tiff_claiming(3, 9000, 10000))
    assert (error.reason, error.detail) == (
        Reason.IMAGE_TOO_LARGE, "3 pages of 270 megapixels in all, over the 200-megapixel limit of one file")
    error = failure(tiff_claiming(2, 60000, 60000))
    assert error.detail == "page 1: 60000x60000 = 3600 megapixels, over the 100-megapixel limit"


def test_a_pdf_of_300_pages_is_refused_before_rendering(no_pixel_decoding: None) -> None:
    from scanpipe.synth.badfiles import pdf_document

    error = failure(pdf_document(300))
    assert (error.reason, error.detail) == (
        Reason.IMAGE_TOO_LARGE, "300 pages in one file, over the limit of 4 (a file holds one sheet)")


def test_a_pdf_page_drawing_a_huge_image_is_refused_before_rendering(no_pixel_decoding: None) -> None:
    from scanpipe.synth.badfiles import pdf_document

    error = failure(pdf_document(1, image_px=(12000, 9000)))
    assert (error.reason, error.detail) == (
        Reason.IMAGE_TOO_LARGE, "page 1 draws an image of 12000x9000 = 108 megapixels, over the 100-megapixel limit")
    error = failure(pdf_document(1, size_pt=(14400.0, 14400.0)))  # a 200-inch page rendered at 200 dpi
    assert error.detail == "40000x40000 = 1600 megapixels, over the 100-megapixel limit"


def test_limits_are_data_a_caller_can_tighten() -> None:
    images = [Image.fromarray(page_image(seed)) for seed in range(2)]
    data = pil_bytes(images[0], "TIFF", save_all=True, append_images=images[1:])
    assert len(decode_card_bytes(data, "a.tif")) == 2
    with pytest.raises(ImageDecodeError) as info:
        decode_card_bytes(data, "a.tif", decode.DecodeLimits(file_pages=1))
    assert info.value.detail == "2 pages in one file, over the limit of 1 (a file holds one sheet)"


def test_pages_are_decoded_one_at_a_time(monkeypatch: pytest.MonkeyPatch) -> None:
    frames = [Image.fromarray(page_image(seed)) for seed in range(3)]
    data = pil_bytes(frames[0], "TIFF", save_all=True, append_images=frames[1:])
    calls: list[object] = []
    real = decode.cv2.imdecodemulti

    def counted(*args: object, **kwargs: object) -> object:
        calls.append(kwargs.get("range"))
        return real(*args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(decode.cv2, "imdecodemulti", counted)
    pages = decode.iter_card_pages(data, "a.tif")
    assert calls == []  # the header is checked when asked; no page decoded yet
    first = next(pages)
    assert first.page_index == 1 and calls == [(0, 1)]
    assert [p.page_index for p in pages] == [2, 3] and calls == [(0, 1), (1, 2), (2, 3)]


def test_a_bomb_file_is_one_unreadable_card_naming_the_file(tmp_path: Path) -> None:

    from scanpipe.classify import load_thresholds
    from scanpipe.election import load_election
    from scanpipe.interpret import InterpretContext, interpret_file
    from scanpipe.synth.badfiles import tiff_pages
    from scanpipe.types import CardHints, UnreadableCard

    election = load_election(Path(__file__).resolve().parents[1] / "fixtures" / "ballot_images" / "election" / "election.json")
    path = str(tmp_path / "bomb.tif")
    Path(path).write_bytes(tiff_pages(500, 850, 1100))
    cards = interpret_file(path, InterpretContext(election, load_thresholds()), CardHints(), "b")
    assert len(cards) == 1
    result = cards[0].interpretation
    assert isinstance(result, UnreadableCard) and result.reason is Reason.IMAGE_TOO_LARGE
    assert result.detail == f"{path}: 500 pages in one file, over the limit of 4 (a file holds one sheet)"


def test_a_file_over_the_byte_limit_is_refused_without_being_read(tmp_path: Path) -> None:
    import hashlib
    import tracemalloc

    from scanpipe.pipeline import interpret_path
    from scanpipe.types import CardHints, UnreadableCard

    path = tmp_path / "huge.png"
    with open(path, "wb") as f:  # sparse: 600 MB on paper, nothing on disk
        f.write(decode._PNG_SIG)
        f.truncate(600_000_000)
    tracemalloc.start()
    try:
        result = interpret_path(str(path), None, CardHints(), "b", frozenset())  # type: ignore[arg-type]  # never interpreted
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 20_000_000  # hashed in pieces, never held whole
    (card,) = result.cards
    assert result.sha256 == card.source.sha256 == hashlib.sha256(path.read_bytes()).hexdigest()
    assert isinstance(card.interpretation, UnreadableCard) and card.interpretation.reason is Reason.IMAGE_TOO_LARGE
    assert card.interpretation.detail == f"{path}: 600 MB file, over the 500-MB limit"


def test_a_tiff_of_floating_point_samples_is_refused_naming_them() -> None:
    """A TIFF whose samples are 32-bit floats (an image program's export, never a scanner's
    usual setting): OpenCV cannot decode it; the reason says what the file holds and what to
    save instead, not only that it could not be decoded."""
    gray = page_image().astype(np.float32) / 255.0
    error = failure(pil_bytes(Image.fromarray(gray, mode="F"), "TIFF"))
    assert error.reason is Reason.UNREADABLE_IMAGE
    assert "32-bit floating-point samples" in error.detail and "8-bit samples" in error.detail, error.detail
    ok = decode_card_bytes(pil_bytes(Image.fromarray(page_image()), "TIFF"), "plain.tif")  # 8-bit: read as ever
    assert len(ok) == 1 and ok[0].image.dtype == np.uint8
