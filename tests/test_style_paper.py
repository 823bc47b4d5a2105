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
