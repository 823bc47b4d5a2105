"""Property: whatever image a scanner or a file hands over, ``interpret_page`` returns a value.

Hypothesis feeds it real cards (our fiducial style with its QR code and pairing sticker, and
a vendor style registered by its reference) resized to random resolutions, with random dpi
claims, rotations, crops of any edge, pads, and degenerate images (tiny, blank, noise), and
asserts a card value comes back: never an exception. ``interpret_page`` is called directly,
without the per-card safety net of ``interpret_file``, so a crash here is a real bug.
"""

from __future__ import annotations

import functools
from pathlib import Path

import cv2
import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from scanpipe.classify import load_thresholds
from scanpipe.election import load_election
from scanpipe.imaging.decode import DecodedPage, decode_card_bytes
from scanpipe.interpret import InterpretContext, interpret_page, load_references
from scanpipe.types import CardHints, CardSource, InterpretedCard

ROOT = Path(__file__).resolve().parents[1]
FIX = ROOT / "fixtures" / "ballot_images"


@functools.lru_cache(maxsize=1)
def _context() -> InterpretContext:
    election = load_election(FIX / "election" / "election.json")
    return InterpretContext(election, load_thresholds(), load_references(election))


@functools.lru_cache(maxsize=4)
def _card(name: str) -> np.ndarray:
    path = FIX / "deck" / "cards" / name
    return decode_card_bytes(path.read_bytes(), str(path))[0].image


CARDS = sorted(p.name for p in (FIX / "deck" / "cards").iterdir() if p.suffix in (".png", ".jpg"))[:6]


@st.composite
def pages(draw: st.DrawFn) -> np.ndarray:
    kind = draw(st.sampled_from(["card", "card", "card", "tiny", "blank", "noise"]))
    if kind == "tiny":
        return np.full((draw(st.integers(1, 400)), draw(st.integers(1, 400))), draw(st.integers(0, 255)), np.uint8)
    if kind in ("blank", "noise"):
        shape = (draw(st.integers(50, 1200)), draw(st.integers(50, 1200)))
        rng = np.random.default_rng(draw(st.integers(0, 2**16)))
        return np.full(shape, 255, np.uint8) if kind == "blank" else rng.integers(0, 256, shape, dtype=np.uint8)
    image = _card(draw(st.sampled_from(CARDS)))
    scale = draw(st.floats(0.2, 1.3))
    image = cv2.resize(image, None, fx=scale, fy=scale * draw(st.floats(0.9, 1.1)), interpolation=cv2.INTER_AREA)
    angle = draw(st.sampled_from([0.0, 180.0, 90.0])) + draw(st.floats(-6.0, 6.0))
    h, w = image.shape
    turn = cv2.getRotationMatrix2D((w / 2, h / 2), angle, 1.0)
    image = cv2.warpAffine(image, turn, (w, h), borderValue=draw(st.sampled_from([0, 255])))
    top, bottom = draw(st.floats(0, 0.45)), draw(st.floats(0, 0.45))
    left, right = draw(st.floats(0, 0.45)), draw(st.floats(0, 0.45))
    image = image[int(top * h): h - int(bottom * h), int(left * w): w - int(right * w)]
    if image.size == 0:
        return np.full((10, 10), 255, np.uint8)
    pad = draw(st.integers(0, 120))
    return cv2.copyMakeBorder(image, pad, pad, 0, pad // 2, cv2.BORDER_CONSTANT, value=255)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(image=pages(), dpi=st.sampled_from([None, 0.0, 1.0, 72.0, 96.0, 150.0, 200.0, 300.0, 600.0, 2400.0]),
       style=st.sampled_from([None, "S1", "V1"]))
def test_interpret_page_always_returns_a_card_value(image: np.ndarray, dpi: float | None, style: str | None) -> None:
    page = DecodedPage(np.ascontiguousarray(image), 1, 1, dpi, "png")
    source = CardSource("c" * 64, "c" * 64, "fuzz.png", 1, 1, "B")
    card = interpret_page(page, _context(), CardHints(style=style), source)
    assert isinstance(card, InterpretedCard)
