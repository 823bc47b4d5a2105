"""Vendor ballots the project did not draw (issue 8): the second, independent vendor renderer's
cards (a frame of narrow timing marks every sixth of an inch down both edges, styles that
differ only in a same-place precinct line, a legal-size sheet without timing marks, skew to 2
degrees, a 180-degree feed, bilevel, gray and colour scans with wrong dpi tags) read with
their style and no definite error."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from scanpipe.classify import load_thresholds
from scanpipe.election import load_election
from scanpipe.interpret import InterpretContext, interpret_file, load_references
from scanpipe.types import CardHints, ReadCard
from tests.foreign_vendor import make_deck

DEFINITE = {"vote": "yes", "no_vote": "no"}


@pytest.fixture(scope="module")
def deck(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("foreign_vendor")
    make_deck(out, cards=14, seed=5)
    return out


def test_the_vendor_renderer_is_seeded(deck: Path, tmp_path: Path) -> None:
    make_deck(tmp_path, cards=2, seed=5)
    truth = json.loads((tmp_path / "expected.json").read_text())
    assert truth["cards"] == json.loads((deck / "expected.json").read_text())["cards"][:2]
    for card in truth["cards"]:
        assert (tmp_path / card["file"]).read_bytes() == (deck / card["file"]).read_bytes()


def test_its_cards_read_with_their_style_and_no_definite_error(deck: Path) -> None:
    truth = json.loads((deck / "expected.json").read_text())
    election = load_election(deck / truth["election"])
    context = InterpretContext(election, load_thresholds(), load_references(election))
    cards = truth["cards"]
    assert {c["style"] for c in cards} == {"R-01", "R-02", "R-03", "AB"}  # look-alikes, the bare sheet
    assert any(c["rotated_180"] for c in cards) and {"tif", "png"} <= {c["format"] for c in cards}
    to_person = 0
    for card in cards:
        (read,) = interpret_file(str(deck / card["file"]), context, CardHints(), "t")
        interp = read.interpretation
        assert isinstance(interp, ReadCard), f"{card['file']}: {interp}"
        assert interp.style == card["style"], card["file"]
        got = {t.score.option: t.status.value for t in interp.targets}
        for t in card["targets"]:
            assert got[t["option"]] in (DEFINITE[t["intent"]], "unknown"), (card["file"], t)
            to_person += got[t["option"]] == "unknown"
    assert to_person <= 0.06 * sum(len(c["targets"]) for c in cards)
