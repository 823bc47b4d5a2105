"""One glyph of print read on the blank and on the card (issue 8: a style the election lacks
that differs from a lone blank in one letter or digit)."""

from __future__ import annotations

from pathlib import Path

import cv2
import numpy as np
import pytest
from PIL import Image, ImageDraw, ImageFont

from scanpipe.imaging.glyph_text import read_apart, read_apart_in_places, read_glyphs, unconfirmed_in_places
from scanpipe.imaging.page_text import ocr_available

BOLD = "/usr/share/fonts/truetype/dejavu/DejaVuSans-Bold.ttf"  # fonts-dejavu-core


@pytest.mark.parametrize("blank, card, apart", [
    (("A", 0.99), ("B", 0.95), True),
    (("A", 0.99), ("B", 0.85), True),  # a rough scan's glyph is read less surely
    (("A", 0.99), ("B", 0.745), True),  # a dithered B, blurred (the sixth renderer's seed 6464)
    (("A", 0.99), ("B", 0.6), False),  # not surely enough
    (("0", 0.30), ("a", 0.39), False),  # a genuine card's glyph misread (the surest such reading seen)
    (("A", 0.7), ("B", 0.99), False),  # the blank's own reading unsure
    (("1", 0.99), ("2", 0.99), True),
    (("O", 0.99), ("0", 0.99), False),  # glyphs a noisy scan confuses
    (("l", 0.99), ("1", 0.99), False),
    (("I", 0.99), ("l", 0.99), False),
    (("S", 0.99), ("5", 0.99), False),
    (("B", 0.99), ("8", 0.97), False),  # a dithered B read as an 8 (the sixth renderer's seed 8282)
    (("a", 0.99), ("A", 0.99), False),  # case
    (("A", 0.99), ("", 0.99), False),  # nothing read
    (("A", 0.99), ("■", 0.99), False),  # a blot
    (("S", 0.99), ("编", 0.99), False),  # a recogniser trained on Chinese too guessing at a blot
    (("lA", 0.99), ("A", 0.99), False),  # a neighbour's edge on one side only
    (("Ó", 0.99), ("O", 0.99), True),  # Spanish headers: accented letters are letters
    (("othe", 0.99), ("athe", 0.86), False),  # letters a scan ran together: read less surely (a real card)
    (("Split A", 0.99), ("Split B", 0.99), False),  # one glyph against one only
])
def test_two_readings_differ_only_when_both_are_sure_and_unlike(blank: tuple[str, float], card: tuple[str, float],
                                                                 apart: bool) -> None:
    assert read_apart(blank, card) is apart


@pytest.mark.parametrize("places, apart", [
    # a dithered, blurred B printed twice where the lone blank prints an A (the sixth renderer's
    # seed 8282, two cards of a style the election lacks read as the blank before): each
    # place read short of sure, the two agreeing
    ([(("A", 0.992), [("鑫", 0.491), ("B", 0.700)]), (("A", 0.995), [("务", 0.267), ("B", 0.386)])], ("A", "B")),
    ([(("A", 0.992), [("8", 0.137), ("B", 0.559)]), (("A", 0.995), [("8", 0.547), ("B", 0.668)])], ("A", "B")),
    ([(("A", 0.99), [("B", 0.95)])], ("A", "B")),  # one place read surely decides alone
    ([(("A", 0.99), [("B", 0.6), ("B", 0.5)])], None),  # one place, however read: one glyph's evidence
    ([(("A", 0.99), [("B", 0.39)]), (("A", 0.99), [("B", 0.39)])], None),  # a genuine card's misreadings: 0.39 at most
    ([(("A", 0.99), [("B", 0.6)]), (("A", 0.99), [("R", 0.6)])], None),  # read as different glyphs
    ([(("A", 0.99), [("B", 0.6)]), (("A", 0.7), [("B", 0.6)])], None),  # the blank's reading unsure in one place
    ([(("A", 0.99), [("B", 0.6)]), (("C", 0.99), [("B", 0.6)])], None),  # the blank prints other glyphs there
])
def test_places_read_alike_as_another_glyph_add_up(places: list, apart: tuple[str, str] | None) -> None:
    assert read_apart_in_places(places) == apart


@pytest.mark.parametrize("places, unread", [
    # an ordered-dither B over the lone blank's A, twice, at 200 and 150 dpi (the sixth
    # renderer's fresh seed 1919: both read as the blank before); read as nothing surely
    ([(("A", 0.992), [("A", 0.337), ("B", 0.162)]), (("A", 0.995), [("0", 0.132), ("日", 0.441)])], "A"),
    ([(("A", 0.992), [("慈", 0.174), ("?", 0.186)]), (("A", 0.995), [("鑫", 0.120), ("B", 0.561)]), (("■", 0.854), [("業", 0.148), ("■", 0.908)])], "A"),
    ([(("A", 0.99), [("A", 0.75)]), (("A", 0.99), [("B", 0.2)])], None),  # read as itself in one place: only one unread
    ([(("A", 0.99), [("a", 0.8), ("B", 0.2)]), (("A", 0.99), [("A", 0.71)])], None),  # read as itself (case folded) in both
    ([(("A", 0.99), [("B", 0.2)])], None),  # one place: a stain over one glyph says nothing of the card
    ([(("A", 0.99), [("B", 0.2)]), (("C", 0.99), [("B", 0.2)])], None),  # two glyphs of the blank, one place each
    ([(("A", 0.8), [("B", 0.2)]), (("A", 0.8), [("B", 0.2)])], None),  # the blank's own reading unsure
])
def test_a_glyph_the_blank_prints_in_several_places_read_as_itself_in_none_is_unconfirmed(places: list, unread: str | None) -> None:
    assert unconfirmed_in_places(places) == unread


def _glyph(text: str, height_px: int, *, noise: float, seed: int) -> np.ndarray:
    """``text`` in a bold sans at about ``height_px`` tall (a header capital at 200 dpi), as
    ink in [0, 1], blurred and speckled like a scan."""
    font = ImageFont.truetype(BOLD, int(height_px * 1.4))
    image = Image.new("L", (height_px * 2, height_px * 2), 0)
    ImageDraw.Draw(image).text((height_px // 3, 0), text, fill=255, font=font)
    ink = np.asarray(image, np.float32) / 255.0
    ys, xs = np.nonzero(ink > 0.5)
    ink = ink[ys.min() - 2: ys.max() + 3, xs.min() - 2: xs.max() + 3]
    rng = np.random.default_rng(seed)
    ink = cv2.GaussianBlur(ink, (0, 0), 1.0) + rng.normal(0.0, noise, ink.shape).astype(np.float32)
    return np.clip(ink, 0.0, 1.0)


@pytest.mark.skipif(not ocr_available(), reason="needs the ocr extra")
def test_a_bold_b_in_place_of_a_bold_a_reads_apart_and_two_scans_of_one_glyph_do_not() -> None:
    crops = [_glyph("A", 20, noise=0.0, seed=1), _glyph("B", 20, noise=0.08, seed=2), _glyph("A", 20, noise=0.08, seed=3),
             _glyph("2", 20, noise=0.08, seed=4)]
    read = read_glyphs(crops)
    assert read is not None
    blank, b, a, two = read
    assert read_apart(blank, b), read
    assert not read_apart(blank, a), read
    assert read_apart(blank, two), read


def test_without_the_ocr_extra_nothing_is_read(monkeypatch: pytest.MonkeyPatch) -> None:
    from scanpipe.imaging import page_text

    def unavailable() -> object:
        raise page_text.OcrUnavailable("No module named 'rapidocr_onnxruntime'")

    monkeypatch.setattr(page_text, "_engine", unavailable)
    assert read_glyphs([np.zeros((20, 20), np.float32)]) is None


@pytest.mark.parametrize("installed", [False, True])
def test_init_says_when_a_vendor_election_is_loaded_without_ocr(installed: bool, tmp_path: Path,
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    from click.testing import CliRunner

    from scanpipe import cli
    from scanpipe.imaging import page_text

    monkeypatch.setattr(page_text, "ocr_available", lambda: installed)
    election = Path(__file__).resolve().parents[1] / "fixtures" / "realballots" / "cedar2008primary" / "election.json"
    r = CliRunner().invoke(cli.cli, ["--db", f"sqlite:///{tmp_path / 'x.db'}", "init", "--election", str(election)])
    assert r.exit_code == 0, r.output
    assert ("OCR is not installed" in r.output) is not installed
    assert "ballot styles" in r.output
