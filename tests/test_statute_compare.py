"""Which contests a duplicate is compared on (contract section 6; Md. Election Law
§12-108(a)(2)(ii)), and the board's rulings on orphans and conflicts, in the pure core.

1. One test per case: mailed, unknown and ``other`` serials compare every contest on either
   card; provisional serials compare their eligible contests (the log's, else the duplicate's
   style) and flag a vote on the duplicate outside them.
2. Hypothesis: no vote on an original is ever lost without a flag, and once people decide the
   flagged contests from the original, what counts carries every vote of the original.
3. Rulings: the board's quorum and majority, a ruling that no longer holds once a card of the
   serial is added, and what counts under each ruling.
"""

from __future__ import annotations

from dataclasses import replace

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from scanpipe.counting import Decision, DecisionState, count_card, final_decisions
from scanpipe.errors import DecisionError
from scanpipe.reconcile.compare import BallotType, ComparisonScope, Difference, SheetReading, compare_pair, counted_votes
from scanpipe.reconcile.pairing import PairStatus, pair_cards
from scanpipe.reconcile.resolve import apply_pairs, resolve_pair
from scanpipe.reconcile.rulings import BoardRuling, RulingKind, check_board_votes
from scanpipe.types import CardKind, ContestOutcome, ContestReading, MarkStatus, PairingLabel
from tests.helpers import read_card, tiny_election

ELECTION = tiny_election()  # S1: gov, council, q1 (P01, P02); S2: gov, q1 (P03)
MAIL, PROVISIONAL = ComparisonScope(BallotType.MAIL), ComparisonScope(BallotType.PROVISIONAL)


def voted(contest: str, *votes: str, outcome: ContestOutcome = ContestOutcome.COUNTED) -> ContestReading:
    return ContestReading(contest, tuple(votes), outcome, 0)


def sheet(*readings: ContestReading) -> SheetReading:
    return SheetReading({r.contest: r for r in readings}, True)


def kinds(comparison) -> dict[str, str]:  # noqa: ANN001
    return {d.contest: d.difference.value for d in comparison.differences}


# --------------------------------------------------------------------------------------
# 1. One case at a time


def test_a_mailed_ballots_duplicate_on_a_shorter_style_is_a_mismatch_in_the_contest_it_left_out() -> None:
    """The issue's reproduction: compared only on the duplicate's contests it was a match and
    the original's vote for Council was lost without a flag."""
    dup = sheet(voted("gov", "gov-a"), voted("q1", "q1-for"))
    org = sheet(voted("gov", "gov-a"), voted("council", "c-1"), voted("q1", "q1-for"))
    for scope in (MAIL, ComparisonScope(), ComparisonScope(BallotType.OTHER)):
        result = compare_pair(dup, org, scope)
        assert (result.status, kinds(result)) == (PairStatus.MISMATCH, {"council": "omitted"}), scope
        assert result.compared == ("gov", "q1", "council")


def test_a_contest_the_duplicate_left_out_is_no_difference_when_the_original_has_no_vote_there() -> None:
    dup = sheet(voted("gov", "gov-a"))
    org = sheet(voted("gov", "gov-a"), voted("council"))
    assert compare_pair(dup, org, MAIL).status is PairStatus.MATCH


def test_an_unclear_or_overvoted_contest_the_duplicate_left_out_is_flagged() -> None:
    dup = sheet(voted("gov", "gov-a"))
    unclear = sheet(voted("gov", "gov-a"), voted("council", "c-1", outcome=ContestOutcome.PENDING))
    over = sheet(voted("gov", "gov-a"), voted("council", "c-1", "c-2", "c-3", outcome=ContestOutcome.OVERVOTE))
    assert (compare_pair(dup, unclear, MAIL).status, kinds(compare_pair(dup, unclear, MAIL))) == (PairStatus.NEEDS_REVIEW, {"council": "unknown"})
    assert (compare_pair(dup, over, MAIL).status, kinds(compare_pair(dup, over, MAIL))) == (PairStatus.MISMATCH, {"council": "omitted"})


def test_a_provisional_ballot_is_compared_on_the_duplicates_style_and_the_originals_other_contests_are_only_reported() -> None:
    dup = sheet(voted("gov", "gov-a"), voted("q1", "q1-for"))
    org = sheet(voted("gov", "gov-a"), voted("council", "c-1"), voted("q1", "q1-for"))
    result = compare_pair(dup, org, PROVISIONAL, duplicate_style_contests=("gov", "q1"))
    assert (result.status, result.original_only, result.compared) == (PairStatus.MATCH, ("council",), ("gov", "q1"))


def test_a_provisional_ballot_uses_the_logs_eligible_contests() -> None:
    dup = sheet(voted("gov", "gov-a"), voted("q1", "q1-for"))
    org = sheet(voted("gov", "gov-a"), voted("council", "c-1"), voted("q1", "q1-for"))
    eligible = ComparisonScope(BallotType.PROVISIONAL, ("gov", "council", "q1"))
    result = compare_pair(dup, org, eligible, duplicate_style_contests=("gov", "q1"))
    assert (result.status, kinds(result)) == (PairStatus.MISMATCH, {"council": "omitted"})


def test_a_vote_on_a_provisional_duplicate_outside_the_eligible_contests_is_a_mismatch() -> None:
    dup = sheet(voted("gov", "gov-a"), voted("council", "c-2"), voted("q1", "q1-for"))
    org = sheet(voted("gov", "gov-a"), voted("council", "c-2"), voted("q1", "q1-for"))
    scope = ComparisonScope(BallotType.PROVISIONAL, ("gov", "q1"))
    result = compare_pair(dup, org, scope)
    assert (result.status, kinds(result)) == (PairStatus.MISMATCH, {"council": "ineligible"})
    blank = sheet(voted("gov", "gov-a"), voted("council"), voted("q1", "q1-for"))
    assert compare_pair(blank, org, scope).status is PairStatus.MATCH  # no vote outside: nothing to flag


def test_a_contest_the_original_lacks_needs_a_person() -> None:
    dup = sheet(voted("gov", "gov-a"), voted("council", "c-1"))
    org = sheet(voted("gov", "gov-a"))
    assert kinds(compare_pair(dup, org, MAIL)) == {"council": "missing"}
    assert compare_pair(dup, org, MAIL).status is PairStatus.NEEDS_REVIEW


# --------------------------------------------------------------------------------------
# 2. No vote on an original is ever lost without a flag

OPTIONS = {c.id: [o.id for o in c.options if not o.write_in] for c in ELECTION.contests}
STATUSES = st.sampled_from([MarkStatus.YES, MarkStatus.YES, MarkStatus.NO, MarkStatus.UNKNOWN])


@st.composite
def marks(draw: st.DrawFn, style: str) -> dict[str, dict[str, MarkStatus]]:
    out: dict[str, dict[str, MarkStatus]] = {}
    for cid in ELECTION.style(style).contests:
        picked = draw(st.lists(st.sampled_from(OPTIONS[cid]), max_size=3, unique=True))
        out[cid] = {o: draw(STATUSES) for o in picked}
    return out


@st.composite
def serials(draw: st.DrawFn) -> tuple:
    dup_style, org_style = draw(st.sampled_from(["S1", "S2"])), draw(st.sampled_from(["S1", "S2"]))
    ballot_type = draw(st.sampled_from(list(BallotType)))
    eligible = None
    if ballot_type is BallotType.PROVISIONAL and draw(st.booleans()):
        eligible = tuple(draw(st.lists(st.sampled_from(["gov", "council", "q1"]), unique=True)))
    precinct = ELECTION.style(dup_style).precincts[0]
    dup = read_card("d" * 64, ELECTION, dup_style, precinct, draw(marks(dup_style)), kind=CardKind.DUPLICATE)
    org = read_card("o" * 64, ELECTION, org_style, ELECTION.style(org_style).precincts[0], draw(marks(org_style)), kind=CardKind.ORIGINAL)
    dup = replace(dup, label=PairingLabel(CardKind.DUPLICATE, "X1", "X1", None))
    org = replace(org, label=PairingLabel(CardKind.ORIGINAL, "X1", "X1", None))
    return dup, org, ComparisonScope(ballot_type, eligible)


def in_scope(contest: str, scope: ComparisonScope, dup_style: str) -> bool:
    if scope.whole_intent:
        return True
    return contest in (scope.eligible if scope.eligible is not None else ELECTION.style(dup_style).contests)


def original_votes(org) -> dict[str, ContestReading]:  # noqa: ANN001
    return {r.contest: r for r in org.interpretation.contests if r.outcome is not ContestOutcome.COUNTED or r.votes}


@settings(max_examples=300, deadline=None)
@given(serials())
def test_no_vote_on_an_original_is_lost_without_a_flag(serial: tuple) -> None:
    dup, org, scope = serial
    counts = {c.source.card_id: count_card(ELECTION, c, {}) for c in (dup, org)}
    (pairing,) = pair_cards([dup, org])
    outcome = resolve_pair(ELECTION, pairing, counts, {}, scope)
    dup_reading = {r.contest: r for r in dup.interpretation.contests}
    for cid, reading in original_votes(org).items():
        if not in_scope(cid, scope, dup.interpretation.style):
            continue
        same = cid in dup_reading and counted_votes(dup_reading[cid]) == counted_votes(reading) is not None
        assert same or (cid in outcome.listed and outcome.status is not PairStatus.MATCH), (cid, reading, outcome.status)


@settings(max_examples=300, deadline=None)
@given(serials())
def test_once_people_decide_from_the_original_what_counts_carries_every_vote_of_the_original(serial: tuple) -> None:
    dup, org, scope = serial
    counts = {c.source.card_id: count_card(ELECTION, c, {}) for c in (dup, org)}
    (pairing,) = pair_cards([dup, org])
    first = resolve_pair(ELECTION, pairing, counts, {}, scope)
    intent = {r.contest: tuple(r.votes) for r in org.interpretation.contests}  # the person reads the original
    eligible = scope.eligible if scope.eligible is not None else ELECTION.style(dup.interpretation.style).contests
    decisions = [Decision(i, "X1", "pair", c, intent.get(c, ()) if scope.whole_intent or c in eligible else (), ("a", "b"),
                          DecisionState.FINAL) for i, c in enumerate(first.listed, start=1)]
    outcome = resolve_pair(ELECTION, pairing, counts, final_decisions(decisions), scope)
    assert outcome.status in (PairStatus.MATCH, PairStatus.RESOLVED)
    counted = {r.contest: r for r in (outcome.new_contests if outcome.counted == "new" else dup.interpretation.contests)}
    for cid, reading in original_votes(org).items():
        if reading.outcome is ContestOutcome.PENDING or not in_scope(cid, scope, dup.interpretation.style):
            continue
        assert cid in counted and counted_votes(counted[cid]) == counted_votes(reading), (cid, outcome.counted)
    if not scope.whole_intent:  # a provisional voter's vote outside the eligible contests never counts
        assert all(not counted_votes(r) for c, r in counted.items() if c not in eligible)


# --------------------------------------------------------------------------------------
# 3. The board's rulings


def test_a_board_decision_needs_the_quorum_members_only_and_a_majority() -> None:
    board = ["carol", "dave", "erin"]
    assert check_board_votes({"carol": "for", "dave": "for"}, board, 2) == ("carol", "dave")
    refused = {
        "a board decision needs at least 2 members present; 1 present": ({"carol": "for"}, 2),
        "not board members: mallory": ({"carol": "for", "mallory": "for"}, 2),
        "1 of 2 members present voted for it: a majority of the members present must vote for it": ({"carol": "for", "dave": "against"}, 2),
        "each member present votes for, against or abstain; not so: dave": ({"carol": "for", "dave": "maybe"}, 2),
    }
    for message, (members, quorum) in refused.items():
        with pytest.raises(DecisionError) as e:
            check_board_votes(members, board, quorum)
        assert str(e.value) == message


def _orphan() -> tuple:
    dup = read_card("d" * 64, ELECTION, "S1", "P01", {"gov": {"gov-a": MarkStatus.YES}}, kind=CardKind.DUPLICATE)
    return replace(dup, label=PairingLabel(CardKind.DUPLICATE, "Z9", "Z9", None)),


def _ruling(kind: RulingKind, cards: tuple[str, ...], card: str | None = None) -> BoardRuling:
    return BoardRuling(1, "Z9", PairStatus.ORPHAN_DUPLICATE, kind, card, cards, {"carol": "for", "dave": "for"}, "MD-2026.1")


def test_an_orphan_waits_for_the_board_and_counts_as_it_rules() -> None:
    (dup,) = _orphan()
    counts = {dup.source.card_id: count_card(ELECTION, dup, {})}
    (pairing,) = pair_cards([dup])
    waiting = resolve_pair(ELECTION, pairing, counts, {})
    assert (waiting.status, waiting.listed, waiting.awaits_board) == (PairStatus.ORPHAN_DUPLICATE, (), True)
    as_is = resolve_pair(ELECTION, pairing, counts, {}, ruling=_ruling(RulingKind.COUNTS_AS_IS, (dup.source.card_id,)))
    assert (as_is.status, as_is.counted) == (PairStatus.RESOLVED, "duplicate")
    assert [c.counts for c in apply_pairs(counts, [as_is], {}, ELECTION)] == [True]
    nothing = resolve_pair(ELECTION, pairing, counts, {}, ruling=_ruling(RulingKind.NOTHING, (dup.source.card_id,)))
    after = apply_pairs(counts, [nothing], {}, ELECTION)
    assert (nothing.counted, [c.counts for c in after], [c.card_id for c in after]) == ("none", [False], [dup.source.card_id])
    new = resolve_pair(ELECTION, pairing, counts, {}, ruling=_ruling(RulingKind.NEW_DUPLICATE, (dup.source.card_id,)))
    assert (new.status, new.listed) == (PairStatus.ORPHAN_DUPLICATE, ("gov", "council", "q1"))


def test_a_ruling_no_longer_holds_once_another_card_of_the_serial_is_scanned() -> None:
    (dup,) = _orphan()
    org = read_card("o" * 64, ELECTION, "S1", "P01", {"gov": {"gov-b": MarkStatus.YES}}, kind=CardKind.ORIGINAL)
    org = replace(org, label=PairingLabel(CardKind.ORIGINAL, "Z9", "Z9", None))
    counts = {c.source.card_id: count_card(ELECTION, c, {}) for c in (dup, org)}
    (pairing,) = pair_cards([dup, org])
    outcome = resolve_pair(ELECTION, pairing, counts, {}, ruling=_ruling(RulingKind.NOTHING, (dup.source.card_id,)))
    assert (outcome.status, outcome.ruling, outcome.listed) == (PairStatus.MISMATCH, None, ("gov",))


def test_differences_are_a_closed_set() -> None:
    assert {d.value for d in Difference} == {"differs", "unknown", "missing", "omitted", "ineligible"}
