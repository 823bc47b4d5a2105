"""Scoring against the blank (scanpipe.imaging.marks_blank): what crosses a target from
elsewhere (a stamp's letter, a signature) and what a scan does to the print beside every
target (a thresholded scan thickens it) are told apart from a voter's mark and from a crease."""

from __future__ import annotations

import cv2
import numpy as np
import pytest

from scanpipe.classify import classify_target, load_thresholds
from scanpipe.imaging.marks import score_targets
from scanpipe.types import MarkStatus
from tests.test_marks import BOX_H, BOX_W, DPI, card

EMPTY = ["none"] * 8


def _centre(page, i: int) -> tuple[float, float]:
    x, y, w, h = page.targets[i].box_in
    return x + w / 2, y + h / 2


def _px(v: float) -> int:
    return int(round(v * DPI))


def _read(img: np.ndarray, blank: np.ndarray, reg, page) -> list:
    thresholds = load_thresholds()
    return [classify_target(s, thresholds) for s in score_targets(img, reg, page, reference=blank, reference_dpi=DPI)]


def test_a_stamp_or_a_signature_across_an_empty_target_is_for_a_person_not_a_vote() -> None:
    blank, reg, page = card(EMPTY)
    img = blank.copy()
    cx, cy = _centre(page, 2)  # a stamp's broad, light letter stroke across target 2, on to the page beyond
    cv2.line(img, (_px(cx - 0.5), _px(cy + 0.5)), (_px(cx + 0.6), _px(cy - 0.45)), 150, _px(0.12), cv2.LINE_AA)
    cx, cy = _centre(page, 5)  # a signature's pen line through target 5
    pts = np.array([(_px(cx - 0.9 + 0.1 * k), _px(cy + 0.03 * np.sin(3 * k))) for k in range(19)], np.int32)
    cv2.polylines(img, [pts], False, 30, _px(0.015), cv2.LINE_AA)
    got = [r.status for r in _read(img, blank, reg, page)]
    assert got[2] is MarkStatus.UNKNOWN and got[5] is MarkStatus.UNKNOWN, got
    assert all(s is MarkStatus.NO for i, s in enumerate(got) if i not in (2, 5)), got


@pytest.mark.parametrize("angle", [0.0, 1.5])
def test_marks_made_in_the_target_are_votes_against_the_blank(angle: float) -> None:
    kinds = ["full_fill", "check", "x_mark", "light_pencil", "none", "none", "full_fill", "none"]
    blank, _, _ = card(EMPTY)  # the blank as the layout measures it; the card turned as scanned
    img, reg, page = card(kinds, angle_deg=angle)
    got = _read(img, blank, reg, page)
    want = [MarkStatus.YES if k != "none" else MarkStatus.NO for k in kinds]
    assert [r.status for r in got] == want, [(r.status.value, r.why) for r in got]


def _arrows(img: np.ndarray, page, width_px: int) -> None:
    """A printed gray bar on either side of every target (an arrow to complete), ``width_px`` thick."""
    for i in range(len(page.targets)):
        cx, cy = _centre(page, i)
        for a, b in ((cx - BOX_W / 2 - 0.3, cx - BOX_W / 2 - 0.05), (cx + BOX_W / 2 + 0.05, cx + BOX_W / 2 + 0.3)):
            cv2.line(img, (_px(a), _px(cy)), (_px(b), _px(cy)), 140, width_px, cv2.LINE_8)


def test_print_a_scan_thickens_beside_every_target_is_not_a_crease_but_a_crease_still_is() -> None:
    blank, reg, page = card(EMPTY)
    _arrows(blank, page, 1)
    img, _, _ = card(EMPTY)
    _arrows(img, page, 9)  # a thresholded scan: the same print, thicker
    assert [r.status for r in _read(img, blank, reg, page)] == [MarkStatus.NO] * 8
    cx, cy = _centre(page, 3)  # a crease through target 3 and the print beside it
    cv2.line(img, (_px(cx - 1.0), _px(cy - 0.02)), (_px(cx + 1.0), _px(cy + 0.03)), 170, _px(0.012), cv2.LINE_AA)
    got = [r.status for r in _read(img, blank, reg, page)]
    assert got[3] is MarkStatus.UNKNOWN, got
    assert BOX_H > 0  # the layout's box size is the one test_marks draws


def test_a_check_drawn_over_a_thick_outline_is_never_a_clear_no_vote() -> None:
    """A vendor's flat oval with a thick outline: a check whose stroke lies on the outline and
    leaves it (the blank hides the ink on its print) goes to a person; an empty one stays no."""
    blank, reg, page = card(EMPTY)
    for i in range(len(page.targets)):  # thicken every outline, as an ES&S-like flat oval
        cx, cy = _centre(page, i)
        cv2.ellipse(blank, (_px(cx), _px(cy)), (_px(BOX_W / 2 - 0.012), _px(BOX_H / 2 - 0.012)), 0, 0, 360, 20, _px(0.024), cv2.LINE_AA)
    img = blank.copy()
    cx, cy = _centre(page, 4)  # the check's foot on the lower outline, its arm out past the upper right
    a, b = BOX_W / 2 - 0.012, BOX_H / 2 - 0.012  # the outline's centre line
    foot = [(cx + a * np.cos(t), cy + b * np.sin(t)) for t in np.linspace(np.pi * 0.75, np.pi * 0.2, 12)]
    pts = np.array([(_px(x), _px(y)) for x, y in [*foot, (cx + 0.25, cy - 0.1)]], np.int32)
    cv2.polylines(img, [pts], False, 25, _px(0.018), cv2.LINE_AA)
    got = [r.status for r in _read(img, blank, reg, page)]
    assert got[4] is not MarkStatus.NO, got
    assert all(s is MarkStatus.NO for i, s in enumerate(got) if i != 4), got
