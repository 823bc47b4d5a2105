"""The card's paper as the style's checks compare print in detail (:class:`scanpipe.imaging.style.CardPaper`):
the page's level wherever the paper is evenly lit (the same figure as before the map), the
paper's own level in a lamp's fall-off, and a stamp's few blocks never taken for a shadow."""

from __future__ import annotations

import cv2
import numpy as np

from scanpipe.imaging.style import SHADED_FLOOR, card_paper

DPI = 200


def _card() -> np.ndarray:
    card = np.full((11 * DPI, int(8.5 * DPI)), 250, np.uint8)
    for k in range(40):
        cv2.putText(card, "CANDIDATE NAME  PARTY", (150, 150 + 50 * k), cv2.FONT_HERSHEY_SIMPLEX, 1.2, 15, 3)
    return card


def _window(x_in: float, y_in: float) -> np.ndarray:
    """A window 1 x 0.2 in whose top left lies at (x_in, y_in) on the card."""
    return np.array([[1.0, 0.0, x_in * DPI], [0.0, 1.0, y_in * DPI], [0.0, 0.0, 1.0]])


def test_evenly_lit_paper_is_measured_at_the_page_s_level_everywhere() -> None:
    paper = card_paper(_card())
    for x in (0.2, 4.0, 7.0):
        for y in (0.5, 5.0, 10.0):
            assert paper.under(_window(x, y), (DPI, DPI // 5)) == paper.level


def test_a_lamp_s_fall_off_is_measured_against_the_paper_there() -> None:
    card = _card().astype(np.float32)
    w = card.shape[1]
    card *= (1.0 - 0.25 * np.clip((np.arange(w) - 0.6 * w) / (0.4 * w), 0.0, 1.0))[None, :]
    paper = card_paper(card.astype(np.uint8))
    assert paper.under(_window(0.5, 5.0), (DPI, DPI // 5)) == paper.level  # the lit side
    right = paper.under(_window(7.2, 5.0), (DPI, DPI // 5))
    assert SHADED_FLOOR * paper.level <= right < 0.9 * paper.level
    assert abs(right - 250 * (1.0 - 0.25 * (7.7 - 5.1) / 3.4)) < 12  # the fall-off's level there


def test_a_stamp_across_a_few_blocks_is_no_shadow() -> None:
    card = _card()
    cv2.rectangle(card, (400, 800), (1100, 1150), 150, 14)  # a stamp's frame, 3.5 x 1.75 in ...
    cv2.putText(card, "SAMPLE", (450, 1050), cv2.FONT_HERSHEY_SIMPLEX, 5.0, 150, 40)  # ... and its broad letters
    paper = card_paper(card)
    for x in (2.0, 3.5, 5.0):
        assert paper.under(_window(x, 4.8), (DPI, DPI // 5)) == paper.level


def test_a_glyph_on_a_tint_under_solid_black_is_blacked_out_one_on_paper_is_not() -> None:
    """A contest's shaded header that a bilevel threshold turned solid black hides its title's
    glyphs: neither seen nor missed (:func:`scanpipe.imaging.style._blacked_out`). On bare paper
    a glyph under solid ink is judged as before (a larger type printed over a smaller name), and
    so is a glyph on a tint that the card shows as printed."""
    from scanpipe.imaging.style import INK_LEVEL, SOLID_LEVEL, TINT_LEVEL, _blacked_out

    glyph = np.zeros((24, 16), np.float32)
    glyph[4:20, 6:10] = 0.95  # an "l", blurred ink of the blank with its padding
    solid = glyph >= SOLID_LEVEL
    on_tint = np.where(solid, glyph, TINT_LEVEL + 0.15).astype(np.float32)
    black = np.full(glyph.shape, 0.97, np.float32)
    speckled = black.copy()
    speckled[::12, ::8] = 0.0  # a bilevel scan's few white specks in the black band (its blurred ink)
    assert _blacked_out(glyph=on_tint, solid=solid, card=black)
    assert _blacked_out(glyph=on_tint, solid=solid, card=speckled)
    assert not _blacked_out(glyph=glyph, solid=solid, card=black)  # bare paper round the glyph
    as_printed = np.where(solid, 0.95, 0.0).astype(np.float32)  # the tint dropped out, the glyph shown
    assert not _blacked_out(glyph=on_tint, solid=solid, card=as_printed)
    assert float((speckled >= INK_LEVEL).mean()) < 1.0
