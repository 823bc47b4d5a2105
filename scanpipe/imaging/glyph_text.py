"""Read single glyphs of print where a card and its blank disagree (the ``ocr`` extra).

A style the election lacks may differ from the nearest blank in one letter or digit of a
line ("Split B" where the blank prints "Split A"; "0602" for "0601"). Blurred at 200 dpi, a
bold B laid over a bold A covers the A's print and correlates with it about as well as a
noisy scan of the A itself, so no pixel measure tells the two apart. A recogniser does: the
glyph's crop from the blank and from the card at the same place, each read as text; where
both read surely and differently, the card prints another glyph there.

The engine is the one :mod:`scanpipe.imaging.page_text` loads (``rapidocr-onnxruntime``: PP-OCR
models inside the wheel, on the CPU). Without the extra, :func:`read_glyphs` says so (None)
and the caller decides without it.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from scanpipe.imaging.page_text import OcrUnavailable, recognise

BLANK_MIN_SCORE = 0.9  # the recogniser's own confidence the blank's reading needs ...
CARD_MIN_SCORE = 0.7  # ... and the card's (a scan's glyph is rougher: a dithered B read as "B" at 0.745-0.99;
#   where a genuine card's glyph read as another letter, at most 0.39 over ~850 cards of two renderers)
# ... or, short of that, read alike at CARD_AGREE_MIN or more in CARD_AGREE_PLACES places of
# the card (each a glyph the blank prints alike: "Split A" printed twice) whose best readings
# add up to CARD_AGREE_SUM: a dithered, blurred B read "B" at 0.70 and 0.39, or 0.56 and 0.67,
# where a genuine card's misreadings (0.39 at most) never reach it together
CARD_AGREE_MIN = 0.35
CARD_AGREE_PLACES = 2
CARD_AGREE_SUM = 1.0
LATIN_END = 0x250  # a letter past Latin Extended-B (a recogniser trained on Chinese too guessing a blot): no reading
# glyphs a recogniser confuses on a noisy scan (case folded): read alike
_ALIKE = str.maketrans({"0": "o", "1": "l", "i": "l", "|": "l", "!": "l", "5": "s", "8": "b"})


def read_glyphs(crops: Sequence[np.ndarray]) -> tuple[tuple[str, float], ...] | None:
    """Each crop (ink in [0, 1], 1 solid; a glyph with paper round it) read as text with the
    recogniser's confidence; None where the OCR extra is not installed."""
    try:
        return recognise([np.round(255.0 * (1.0 - np.clip(c, 0.0, 1.0))).astype(np.uint8) for c in crops])
    except OcrUnavailable:
        return None


def read_apart(blank: tuple[str, float], card: tuple[str, float]) -> bool:
    """Whether a glyph as the blank prints it and as the card prints it read as different
    letters or digits, each surely (BLANK_MIN_SCORE, CARD_MIN_SCORE), once case and glyphs a
    noisy scan confuses (0/O, 1/l/I, 5/S, 8/B: a dithered B read "8" at 0.55) are set aside.
    Only one letter or digit against one: a piece of letters the scan ran together ("othe") is
    read less surely on a rough scan (a real card's "othe" read "athe" at 0.86), and a reading
    with a letter more or less (a neighbour's edge seen on one side only) or a letter of no
    Latin alphabet (the recogniser guessing at a blot) decides nothing."""
    a, b = _normal(blank[0]), _normal(card[0])
    return (a is not None and b is not None and len(a) == 1 and len(b) == 1 and a != b
            and blank[1] >= BLANK_MIN_SCORE and card[1] >= CARD_MIN_SCORE)


def read_apart_in_places(places: Sequence[tuple[tuple[str, float], Sequence[tuple[str, float]]]]) -> tuple[str, str] | None:
    """Where the card prints another glyph than the blank, read in several places: each place
    the blank's reading and the card's there (as scanned, smoothed). One place apart
    (:func:`read_apart`) decides; else places the blank reads surely as one glyph, whose best
    card readings are one and the same other glyph at CARD_AGREE_MIN or more, CARD_AGREE_PLACES
    of them or more, their confidences adding up to CARD_AGREE_SUM. The two readings (the
    blank's, the card's) that decided, or None."""
    agree: dict[tuple[str, str], list[float]] = {}
    shown: dict[tuple[str, str], tuple[str, str]] = {}
    for blank, cards in places:
        for card in cards:
            if read_apart(blank, card):
                return blank[0], card[0]
        a = _normal(blank[0])
        if a is None or len(a) != 1 or blank[1] < BLANK_MIN_SCORE:
            continue
        best: dict[str, tuple[float, str]] = {}
        for text, score in cards:
            b = _normal(text)
            if b is not None and len(b) == 1 and b != a and score >= CARD_AGREE_MIN and score > best.get(b, (0.0, ""))[0]:
                best[b] = (score, text)
        for b, (score, text) in best.items():
            agree.setdefault((a, b), []).append(score)
            shown.setdefault((a, b), (blank[0], text))
    for pair, scores in agree.items():
        if len(scores) >= CARD_AGREE_PLACES and sum(scores) >= CARD_AGREE_SUM:
            return shown[pair]
    return None


def unconfirmed_in_places(places: Sequence[tuple[tuple[str, float], Sequence[tuple[str, float]]]]) -> str | None:
    """The glyph the blank prints surely (BLANK_MIN_SCORE) in CARD_AGREE_PLACES places or more
    where no reading of the card there is that glyph at CARD_MIN_SCORE or more, if any: the
    card cannot be said to print it (each place a glyph that correlated poorly with the card:
    a dithered B over the blank's A, twice, read as nothing surely). A genuine card's glyph
    seldom correlates so poorly in two places, and is then mostly read as itself."""
    unread: dict[str, int] = {}
    for blank, cards in places:
        a = _normal(blank[0])
        if a is None or len(a) != 1 or blank[1] < BLANK_MIN_SCORE:
            continue
        if not any(_normal(text) == a and score >= CARD_MIN_SCORE for text, score in cards):
            unread[blank[0]] = unread.get(blank[0], 0) + 1
    return next((glyph for glyph, count in unread.items() if count >= CARD_AGREE_PLACES), None)


def _normal(text: str) -> str | None:
    """The letters and digits of a reading, case folded, confusable glyphs made one; None
    where one is no Latin letter."""
    kept = [ch for ch in text.casefold() if ch.isalnum()]
    if any(ord(ch) >= LATIN_END for ch in kept):
        return None
    return "".join(kept).translate(_ALIKE)
