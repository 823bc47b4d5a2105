"""Frames told apart by their timing marks alone (:func:`scanpipe.imaging.style.frames_apart`):
a card that one frame's marks fit surely is not fitted to a frame apart from it (issue 8,
speed), and what the card reads as is the same as when every frame is fitted."""

from __future__ import annotations

from pathlib import Path

import cv2
import numpy as np
import pytest

from scanpipe.classify import load_thresholds
from scanpipe.imaging import style
from scanpipe.imaging.align import Alignment, CardView, MarkVotes, align_by_marks, mark_votes
from scanpipe.imaging.reference import learn_page
from scanpipe.interpret import InterpretContext, interpret_file, load_references
from scanpipe.synth.vendor import STYLES
from scanpipe.synth.vendor_render import render_vendor_card
from scanpipe.types import CardHints, Election, ReadCard
from tests.test_align_marks import DPI, H_IN, W_IN, _page


def _rows_frame(seed: int) -> np.ndarray:
    """A blank whose marks, larger and further apart than :func:`_page`'s, run along the top
    and bottom edges only."""
    img = _page("none", seed)
    mw, mh = int(0.35 * DPI), int(0.15 * DPI)
    for x in np.arange(0.6, W_IN - 0.6, 0.5):
        for y in (0.2, H_IN - 0.2 - 0.15):
            cv2.rectangle(img, (int(x * DPI), int(y * DPI)), (int(x * DPI) + mw, int(y * DPI) + mh), 0, -1)
    return img


def test_frames_whose_marks_differ_are_apart_and_a_frame_within_another_is_not() -> None:
    box = learn_page("box", 1, _page("box", 3), DPI)
    columns = learn_page("columns", 1, _page("columns", 4), DPI)  # the box frame without its top row
    rows = learn_page("rows", 1, _rows_frame(5), DPI)
    bare = learn_page("bare", 1, _page("none", 6), DPI)
    assert style.frames_apart(box, rows) and style.frames_apart(rows, box)
    assert style.frames_apart(columns, rows)
    assert not style.frames_apart(box, columns) and not style.frames_apart(columns, box)  # the columns fit the box's blank
    assert not style.frames_apart(box, box)
    assert not style.frames_apart(box, bare)  # a blank without marks: the dense steps decide, never skipped


def test_the_votes_are_counted_once_and_fit_as_without_them() -> None:
    box = learn_page("box", 1, _page("box", 3), DPI)
    card = cv2.warpAffine(_page("box", 3), np.float32([[1, 0, 6], [0, 1, 4]]), (int(W_IN * DPI), int(H_IN * DPI)), borderValue=250)
    votes = mark_votes(CardView(card), box, dpi_hint=DPI)
    assert isinstance(votes, MarkVotes) and votes.share > 0.8  # nearly every blank mark votes for the true translation
    given = align_by_marks(CardView(card), box, dpi_hint=DPI, votes=votes)
    counted = align_by_marks(CardView(card), box, dpi_hint=DPI)
    assert isinstance(given, Alignment) and isinstance(counted, Alignment)
    assert np.array_equal(given.matrix, counted.matrix) and given.score == counted.score and given.turned == counted.turned
    assert mark_votes(CardView(card), learn_page("bare", 1, _page("none", 6), DPI), dpi_hint=DPI) is None


@pytest.fixture(scope="module")
def context(vendor_election: Election) -> InterpretContext:
    return InterpretContext(vendor_election, load_thresholds(), load_references(vendor_election, cache=False))


@pytest.mark.parametrize("style_id", ["A-17", "E-D-11", "H-13"])
def test_a_card_is_not_fitted_to_frames_apart_from_its_own_and_reads_the_same(
        style_id: str, context: InterpretContext, vendor_election: Election, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    rgb = render_vendor_card(vendor_election, style_id, 1, STYLES[style_id].precinct, 200)
    path = tmp_path / "card.png"
    cv2.imwrite(str(path), cv2.cvtColor(rgb, cv2.COLOR_RGB2GRAY))
    own = next(g for g in context.index.groups if any(m.style == style_id for m in g.members)).anchor
    apart = {g.anchor.style for g in context.index.groups if style.frames_apart(own, g.anchor)}  # learned (and kept) first
    assert apart, "the vendor election has frames apart from this one"
    fitted: list[str] = []
    fit = style.align_by_marks

    def counted(view, model, **kw):  # noqa: ANN001, ANN003, ANN202
        fitted.append(model.style)
        return fit(view, model, **kw)

    monkeypatch.setattr(style, "align_by_marks", counted)
    (card,) = interpret_file(str(path), context, CardHints(), "t")
    assert isinstance(card.interpretation, ReadCard) and card.interpretation.style == style_id
    assert not apart & set(fitted)
    skipped = fitted.copy()
    fitted.clear()
    monkeypatch.setattr(style, "frames_apart", lambda a, b: False)  # every frame fitted, as before
    (every,) = interpret_file(str(path), context, CardHints(), "t")
    assert len(fitted) > len(skipped)
    assert every.interpretation == card.interpretation
