"""The other side's show-through (scanpipe.imaging.show_through): a felt pen's marks on one
side of a sheet, seen faintly through the paper on the other, mirrored as the sheet turns
over, are measured from both sides and taken out; a side with no such ghost is left alone."""

from __future__ import annotations

import cv2
import numpy as np
import pytest

from scanpipe.imaging import show_through as st

SHAPE = (1100, 850)  # a letter page's layout frame at FIT_PPI


def _marks(seed: int, count: int = 6) -> tuple[np.ndarray, list[tuple[int, int]]]:
    """A side's added ink: ``count`` filled ovals (0.3 x 0.14 in) of a felt pen."""
    rng = np.random.default_rng(seed)
    ink = np.zeros(SHAPE, np.float32)
    centres = []
    for _ in range(count):
        cx, cy = int(rng.integers(100, SHAPE[1] - 100)), int(rng.integers(100, SHAPE[0] - 100))
        cv2.ellipse(ink, (cx, cy), (15, 7), 0, 0, 360, 0.9, -1)
        centres.append((cx, cy))
    return ink, centres


def _mirror(image: np.ndarray, mirror: str) -> np.ndarray:
    return image[:, ::-1] if mirror == "left-right" else image[::-1, :]


def _front_with_ghost(back: np.ndarray, mirror: str, strength: float, seed: int = 3) -> np.ndarray:
    noise = np.random.default_rng(seed).normal(0.0, 0.004, SHAPE).astype(np.float32)
    ghost = strength * cv2.GaussianBlur(np.ascontiguousarray(_mirror(back, mirror)), (0, 0), 2.0)
    return np.clip(ghost + noise, 0.0, 1.0)


PAPER = np.zeros(SHAPE, np.float32)  # a blank with nothing printed


@pytest.mark.parametrize("mirror", st.MIRRORS)
def test_the_other_side_s_marks_seen_mirrored_as_the_sheet_turns_are_measured(mirror: str) -> None:
    back, _ = _marks(1)
    show = st.measure(_front_with_ghost(back, mirror, 0.12), PAPER, back, PAPER)
    assert show is not None and show.mirror == mirror, show
    assert show.strength == pytest.approx(0.12, rel=0.15) and show.marks == 6


def test_a_side_that_shows_no_ghost_shows_no_show_through() -> None:
    back, _ = _marks(1)
    assert st.measure(_front_with_ghost(back, "left-right", 0.0), PAPER, back, PAPER) is None
    few, _ = _marks(1, count=2)  # too few marks to measure under
    assert st.measure(_front_with_ghost(few, "left-right", 0.12), PAPER, few, PAPER) is None


def test_the_voter_s_own_marks_where_a_ghost_lies_neither_raise_its_strength_nor_lose_their_ink() -> None:
    back, centres = _marks(1)
    front = _front_with_ghost(back, "left-right", 0.1)
    for cx, cy in centres[:2]:  # two fills of this side's voter right where two ghosts lie
        cv2.ellipse(front, (SHAPE[1] - 1 - cx, cy), (15, 7), 0, 0, 360, 0.95, -1)
    show = st.measure(front, PAPER, back, PAPER)
    assert show is not None and show.strength == pytest.approx(0.1, rel=0.15), show
    # taken out: the ghosts' tone goes back to paper, the voter's fills stay dark
    hom = np.diag([st.FIT_PPI, st.FIT_PPI, 1.0])  # the card scanned at FIT_PPI, square to its layout
    card = np.clip(255.0 * (1.0 - front), 0, 255).astype(np.uint8)
    clean = st.taken_out(card, hom, st.ghost(back, PAPER, show))
    for k, (cx, cy) in enumerate(centres):
        x = SHAPE[1] - 1 - cx
        before, after = float(card[cy, x]), float(clean[cy, x])
        if k < 2:
            assert after < 40, (before, after)  # the voter's own fill
        else:
            assert before < 235 and after > 250, (before, after)  # a ghost, gone


def test_print_a_fill_covers_soaks_through_with_it() -> None:
    """A fill over its oval's outline and the number printed inside shows no added ink there
    (the print is as dark); it soaks through the whole, print and all."""
    ink = np.zeros((60, 100), np.float32)
    blank = np.zeros_like(ink)
    cv2.ellipse(blank, (50, 30), (30, 14), 0, 0, 360, 1.0, 2)  # the outline
    cv2.putText(blank, "7", (44, 37), cv2.FONT_HERSHEY_SIMPLEX, 0.6, 1.0, 2)  # the number inside
    cv2.ellipse(ink, (50, 30), (33, 17), 0, 0, 360, 0.9, -1)  # a fill over the outline
    ink[blank > 0] = 0.0  # the card's darkness there is the print's
    marks = st.marks_of(ink, blank)
    inside = np.zeros_like(ink, np.uint8)
    cv2.ellipse(inside, (50, 30), (30, 14), 0, 0, 360, 1, -1)
    assert marks[inside > 0].min() >= 0.8
