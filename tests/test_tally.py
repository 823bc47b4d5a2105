"""Counting, tallies, the queue and the two-people rule, on typed values."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from scanpipe.counting import Decision, DecisionState, count_card, final_decisions
from scanpipe.decisions import plan_decision
from scanpipe.errors import DecisionError
from scanpipe.queue import build_queue
from scanpipe.tally import tally_csv, tally_precincts
from scanpipe.types import CardKind, MarkStatus, Reason
from tests.helpers import read_card, tiny_election, unreadable_card

Y, N, U = MarkStatus.YES, MarkStatus.NO, MarkStatus.UNKNOWN
E = tiny_election()


def rows_of(cards, decisions=()):
    finals = final_decisions(decisions)
    counts = [count_card(E, c, finals) for c in cards]
    return {(r.precinct, r.contest, r.option): r.votes for r in tally_precincts(E, counts)}, counts


def test_votes_overvotes_undervotes_and_pending_per_contest() -> None:
    cards = [
        read_card("a", E, "S1", "P01", {"gov": {"gov-a": Y}, "council": {"c-1": Y}, "q1": {"q1-for": Y}}),
        read_card("b", E, "S1", "P01", {"gov": {"gov-a": Y, "gov-b": Y}, "council": {"c-1": Y, "c-2": Y}}),
        read_card("c", E, "S1", "P01", {"gov": {"gov-b": U}}),
    ]
    rows, _ = rows_of(cards)
    assert rows[("P01", "gov", "gov-a")] == 1
    assert rows[("P01", "gov", "#overvotes")] == 1
    assert rows[("P01", "gov", "#pending")] == 1
    assert rows[("P01", "council", "c-1")] == 2
    assert rows[("P01", "council", "#undervotes")] == 1 + 0 + 2  # a: 1 unused, b: 0, c: 2
    assert rows[("P01", "q1", "#undervotes")] == 2  # b and c left it blank
    assert rows[("P01", "q1", "#pending")] == 0  # c is pending only in gov


def test_unreadable_and_unassigned_cards_are_pending_under_unassigned() -> None:
    rows, _ = rows_of([unreadable_card("x"), read_card("y", E, "S1", None, {}, reasons=(Reason.NO_PRECINCT,))])
    assert rows[("#unassigned", "#card", "#pending")] == 2


def test_originals_never_count_and_csv_is_ordered() -> None:
    rows, counts = rows_of([read_card("o", E, "S2", "P03", {"gov": {"gov-a": Y}}, kind=CardKind.ORIGINAL)])
    assert rows[("P03", "gov", "gov-a")] == 0
    text = tally_csv(tally_precincts(E, counts)).splitlines()
    assert text[0] == "precinct,contest,option,votes"
    assert text[1:6] == ["P01,gov,gov-a,0", "P01,gov,gov-b,0", "P01,gov,gov-w,0", "P01,gov,#overvotes,0", "P01,gov,#undervotes,0"]
    assert not any(line.startswith("P03,council") for line in text)  # S2 does not carry council


def test_a_final_decision_replaces_the_machine_reading_of_that_contest() -> None:
    card = read_card("c", E, "S1", "P02", {"gov": {"gov-b": U}})
    d = Decision(1, "c", "card", "gov", ("gov-b",), ("ann", "bob"), DecisionState.FINAL)
    rows, counts = rows_of([card], [d])
    assert rows[("P02", "gov", "gov-b")] == 1 and rows[("P02", "gov", "#pending")] == 0
    assert counts[0].decided_by == ("ann", "bob")
    assert build_queue(counts, [d]) == []


def test_queue_names_marginal_marks_and_waiting_second_auditor() -> None:
    card = read_card("c", E, "S1", "P02", {"gov": {"gov-b": U}, "q1": {"q1-for": U}})
    _, counts = rows_of([card])
    items = build_queue(counts, [])
    assert [(i.item, i.reason, i.contests) for i in items] == [("c", "marginal_mark", ("gov", "q1"))]
    half = Decision(1, "c", "card", "gov", ("gov-b",), ("ann",), DecisionState.FIRST_HALF)
    items = build_queue(counts, [half])
    assert sorted((i.reason, i.contests) for i in items) == [("awaiting_second_auditor", ("gov",)), ("marginal_mark", ("q1",))]


def test_two_people_rule() -> None:
    first = plan_decision([], ("gov-a",), ("ann",), two_auditors=True)
    assert first.state is DecisionState.FIRST_HALF
    d1 = Decision(1, "c", "card", "gov", ("gov-a",), ("ann",), DecisionState.FIRST_HALF)
    with pytest.raises(DecisionError, match="a different auditor must confirm it"):
        plan_decision([d1], ("gov-a",), ("ann",), two_auditors=True)
    same = plan_decision([d1], ("gov-a",), ("bob",), two_auditors=True)
    assert same.state is DecisionState.FINAL and same.auditors == ("ann", "bob")
    other = plan_decision([d1], ("gov-b",), ("bob",), two_auditors=True)
    assert other.state is DecisionState.ESCALATED and other.updates == ((1, DecisionState.ESCALATED),)
    assert plan_decision([], ("gov-a",), ("ann",), two_auditors=False).state is DecisionState.FINAL
    assert plan_decision([], ("gov-a",), ("ann", "bob"), two_auditors=True).state is DecisionState.FINAL



def test_the_board_settles_only_the_open_escalation() -> None:
    d1 = Decision(1, "c", "card", "gov", ("gov-a",), ("ann",), DecisionState.ESCALATED)
    d2 = Decision(2, "c", "card", "gov", ("gov-b",), ("bob",), DecisionState.ESCALATED, supersedes=1)
    with pytest.raises(DecisionError, match="escalated to the board"):
        plan_decision([d1, d2], ("gov-a",), ("cat", "dan"), two_auditors=True)  # auditors cannot settle it
    plan = plan_decision([d1, d2], ("gov-b",), ("cat", "dan"), two_auditors=True, board_settles=2)
    assert plan.state is DecisionState.FINAL and plan.auditors == ("cat", "dan") and plan.supersedes == 2
    assert plan.updates == ((1, DecisionState.SUPERSEDED), (2, DecisionState.SUPERSEDED))
    with pytest.raises(DecisionError, match="is not the open escalation"):
        plan_decision([d1, d2], ("gov-b",), ("cat", "dan"), two_auditors=True, board_settles=1)
    settled = Decision(3, "c", "card", "gov", ("gov-b",), ("cat", "dan"), DecisionState.FINAL, supersedes=2)
    with pytest.raises(DecisionError, match="no open escalation"):  # a second board submission finds it settled
        plan_decision([settled], ("gov-a",), ("eve", "fay"), two_auditors=True, board_settles=2)

statuses = st.sampled_from([Y, N, N, N, U])


@st.composite
def decks(draw):
    cards = []
    for i in range(draw(st.integers(0, 12))):
        style = draw(st.sampled_from(["S1", "S2"]))
        precinct = "P03" if style == "S2" else draw(st.sampled_from(["P01", "P02"]))
        marks = {c: {o.id: draw(statuses) for o in E.contest(c).options} for c in E.style(style).contests}
        cards.append(read_card(f"card{i}", E, style, precinct, marks))
    return cards


@settings(max_examples=60, deadline=None)
@given(decks(), st.randoms())
def test_tally_does_not_depend_on_input_order(cards, rnd) -> None:
    before, _ = rows_of(cards)
    shuffled = list(cards)
    rnd.shuffle(shuffled)
    after, _ = rows_of(shuffled)
    assert before == after
