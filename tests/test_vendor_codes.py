"""The codes of a vendor election's pages: its pages are told by their blanks, so the whole
page is searched for a QR symbol (the costliest code search) only where a quick look at half
size shows one (a machine-printed record, read by its code at once) or the page is not read as
a ballot (a record whose code the quick look missed is still read by it) (issue 8, speed)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import cv2
import numpy as np
import pytest

from scanpipe import interpret
from scanpipe.classify import load_thresholds
from scanpipe.imaging import codes
from scanpipe.interpret import InterpretContext, interpret_file, load_references
from scanpipe.synth.bmd import render_bmd_card
from scanpipe.synth.vendor import STYLES
from scanpipe.synth.vendor_render import render_vendor_card
from scanpipe.types import CardHints, CodeSymbology, Election, MachinePrintedCard, ReadCard

STYLE = "A-17"


@pytest.fixture(scope="module")
def context(vendor_election: Election) -> InterpretContext:
    return InterpretContext(vendor_election, load_thresholds(), load_references(vendor_election, cache=False))


@pytest.fixture
def qr_searches(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """Counts the whole-page QR searches."""
    calls: list[int] = []
    search: Callable[[np.ndarray], tuple[codes.DecodedCode, ...]] = codes._fast_qr

    def counted(gray: np.ndarray) -> tuple[codes.DecodedCode, ...]:
        calls.append(1)
        return search(gray)

    monkeypatch.setattr(codes, "_fast_qr", counted)
    return calls


def _written(rgb: np.ndarray, path: Path) -> str:
    cv2.imwrite(str(path), cv2.cvtColor(rgb, cv2.COLOR_RGB2GRAY))
    return str(path)


def test_a_vendor_ballot_read_by_its_blank_needs_no_whole_page_qr_search(context: InterpretContext, vendor_election: Election,
                                                                         qr_searches: list[int], tmp_path: Path) -> None:
    path = _written(render_vendor_card(vendor_election, STYLE, 1, STYLES[STYLE].precinct, 200), tmp_path / "card.png")
    (card,) = interpret_file(path, context, CardHints(), "t")
    assert isinstance(card.interpretation, ReadCard) and card.interpretation.style == STYLE
    assert qr_searches == []


def test_a_batch_stating_its_style_still_searches_the_whole_page(context: InterpretContext, vendor_election: Election,
                                                                 qr_searches: list[int], tmp_path: Path) -> None:
    path = _written(render_vendor_card(vendor_election, STYLE, 1, STYLES[STYLE].precinct, 200), tmp_path / "card.png")
    (card,) = interpret_file(path, context, CardHints(style=STYLE), "t")
    assert isinstance(card.interpretation, ReadCard) and card.interpretation.style == STYLE
    assert qr_searches == [1]


@pytest.mark.parametrize("quick_look", [True, False])
def test_a_machine_printed_record_in_a_vendor_election_is_still_read_by_its_code(
        quick_look: bool, context: InterpretContext, vendor_election: Election, qr_searches: list[int], tmp_path: Path,
        monkeypatch: pytest.MonkeyPatch) -> None:
    contest = vendor_election.contest(vendor_election.style(STYLE).contests[0])
    selections = {contest.id: [contest.options[0].id]}
    path = _written(render_bmd_card(vendor_election, STYLE, STYLES[STYLE].precinct, selections, 200), tmp_path / "record.png")
    assert codes.shows_qr(cv2.imread(path, cv2.IMREAD_GRAYSCALE))
    if not quick_look:  # a code the quick look misses: found once no blank reads the page
        monkeypatch.setattr(interpret, "shows_qr", lambda gray: False)
    styles_tried: list[int] = []
    find_style = interpret._find_style
    monkeypatch.setattr(interpret, "_find_style", lambda *a, **k: styles_tried.append(1) or find_style(*a, **k))
    (card,) = interpret_file(path, context, CardHints(), "t")
    assert isinstance(card.interpretation, MachinePrintedCard), card.interpretation
    assert card.interpretation.record.style == STYLE
    assert any(c.symbology is CodeSymbology.QR for c in card.codes)
    assert qr_searches == [1]
    assert styles_tried == ([] if quick_look else [1])  # seen at once: no search for its style


def test_the_quick_look_finds_no_qr_on_vendor_ballots(vendor_election: Election) -> None:
    for style_id in ("A-17", "E-D-11", "H-13", "D-15"):
        gray = cv2.cvtColor(render_vendor_card(vendor_election, style_id, 1, STYLES[style_id].precinct, 200), cv2.COLOR_RGB2GRAY)
        assert not codes.shows_qr(gray)
