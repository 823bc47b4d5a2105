"""A blank learned from voted cards keeps the print and loses the voters' marks."""

from __future__ import annotations

import cv2
import numpy as np
import pytest

from scanpipe.calibration.blank import blank_from_cards
from scanpipe.errors import ConfigError
from tests.test_registration import TARGETS, distort, draw_page


def _voted(seed: int, dpi: float) -> np.ndarray:
    page = draw_page(dpi, fiducials=False)
    rng = np.random.default_rng(seed)
    for t in TARGETS:
        if rng.random() < 0.4:  # each target marked on some cards only
            x, y, w, h = t.box_in
            cv2.ellipse(page, (int((x + w / 2) * dpi), int((y + h / 2) * dpi)), (int(w / 2 * dpi), int(h / 2 * dpi)),
                        0, 0, 360, 20, -1)
    card, _ = distort(page, float(rng.uniform(-2, 2)), 1.0, 1.0, (float(rng.uniform(-6, 6)), float(rng.uniform(-6, 6))))
    return card


def _interior_darkness(image: np.ndarray, dpi: float) -> list[float]:
    out = []
    for t in TARGETS:
        x, y, w, h = t.box_in
        cx, cy = int((x + w / 2) * dpi), int((y + h / 2) * dpi)
        out.append(float(255 - image[cy - 3: cy + 3, cx - 6: cx + 6].mean()))
    return out


def test_the_learned_blank_has_the_print_and_none_of_the_marks() -> None:
    cards = [_voted(seed, 150) for seed in range(9)]
    learned = blank_from_cards(cards, 150.0)
    assert len(learned.used) == 9 and not learned.skipped
    truth = draw_page(150, fiducials=False)
    # the blank is in the seed card's frame (turned and shifted a little): the ovals' middles
    # still fall where the layout puts them, and none is filled
    assert max(_interior_darkness(learned.image, 150)) < 40  # paper is ~245 on the blank
    ink_blank = (learned.image < 128).sum()
    ink_truth = (truth < 128).sum()
    assert 0.7 * ink_truth < ink_blank < 1.3 * ink_truth  # the print is kept (within registration blur)


def test_too_few_cards_are_refused() -> None:
    with pytest.raises(ConfigError, match="at least 5"):
        blank_from_cards([_voted(1, 150)] * 3, 150.0)
