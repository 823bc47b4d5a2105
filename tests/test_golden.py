"""Golden cases: the committed fixture deck read exactly as its expected.json says.

Every target of a card expected to be read must get the status a careful person would give
(vote -> yes, no_vote -> no, ambiguous -> unknown); every contest its expected outcome.
Regenerate the fixtures with ``python scripts/regenerate_fixtures.py``.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from scanpipe.classify import load_thresholds
from scanpipe.election import load_election
from scanpipe.interpret import InterpretContext, interpret_file, load_references
from scanpipe.types import CardHints, ReadCard, UnreadableCard

FIX = Path(__file__).resolve().parents[1] / "fixtures" / "ballot_images"
STATUS = {"vote": "yes", "no_vote": "no", "ambiguous": "unknown"}


@pytest.fixture(scope="module")
def context() -> InterpretContext:
    election = load_election(FIX / "election" / "election.json")
    return InterpretContext(election, load_thresholds(), load_references(election))


def cases(folder: str) -> list[dict]:
    expected = json.loads((FIX / folder / "expected.json").read_text())
    return [dict(card, folder=folder) for card in expected["cards"]]


@pytest.mark.parametrize("card", cases("deck") + cases("defaced"), ids=lambda c: f"{c['folder']}/{c['file']}#{c.get('page_of_file', 1)}")
def test_fixture_card_reads_as_expected(card: dict, context: InterpretContext) -> None:
    path = FIX / card["folder"] / card["file"]
    got = {c.source.page_index: c for c in interpret_file(str(path), context, CardHints(), "golden")}
    result = got[card.get("page_of_file", 1)].interpretation
    if card["expect"] != "read":
        assert isinstance(result, UnreadableCard) and result.reason.value == card["expect"], result
        return
    assert isinstance(result, ReadCard), result
    assert (result.style, result.page, result.precinct) == (card["style"], card["page"], card["precinct"])
    assert result.registration.rotated_180 == card["rotated_180"]
    status = {(t.score.contest, t.score.option): t.status.value for t in result.targets}
    want = {(t["contest"], t["option"]): STATUS[t["intent"]] for t in card["targets"]}
    assert status == want
    outcomes = {c.contest: (c.outcome.value, sorted(c.votes)) for c in result.contests}
    for cid, exp in card["contests"].items():
        assert outcomes[cid][0] == exp["outcome"], cid
        if exp["outcome"] == "counted":
            assert outcomes[cid][1] == sorted(exp["votes"]), cid
