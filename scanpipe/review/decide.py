"""Decisions from the review app, through the same library code as ``scanpipe adjudicate``.

An auditor's call goes to :func:`scanpipe.workflow.record_decision` (a card) or
:func:`scanpipe.reconcile.service.adjudicate_pair` (a serial), which apply the two-people
rule; the review index is then refreshed for that item. The app only checks first that the
contest is one the queue lists for the item, so a forged form cannot decide anything else.

A board decision settles an escalated contest (:mod:`scanpipe.review.board`: each member
votes from their own login); with a majority of the members present for a reading, it is
recorded through the same library call with the members who voted for it as joint auditors;
in that one transaction the escalated decisions are superseded, the reading becomes final,
and each member's vote is kept (``board_vote``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from sqlalchemy import select

from scanpipe.decisions import Attestation
from scanpipe.errors import DecisionError
from scanpipe.review.index import refresh_item, rows_of
from scanpipe.store.models import decision_table
from scanpipe.store.repository import Store
from scanpipe.types import CardKind, Election
from scanpipe.workflow import BoardVotes, DecisionOutcome, identify, record_decision


def rule_set_of(election: Election) -> tuple[tuple[str, str], ...]:
    """The voter-intent rules an auditor cites in this election's jurisdiction."""
    from scanpipe.rules import rule_set

    return rule_set(election.jurisdiction).intent_choices()


def listed_contests(store: Store, item: str, *, states: Sequence[str]) -> set[str]:
    return {c for r in rows_of(store, item) if r.state in states for c in r.contests}


def contests_left_for(store: Store, item: str, auditor: str) -> list[str]:
    """Contests of ``item`` this auditor may still decide (open, or awaiting someone else's second half)."""
    return [c for r in rows_of(store, item) if r.state == "open" or (r.state == "awaiting" and auditor not in r.first_auditors)
            for c in r.contests]


def decide(store: Store, election: Election, *, kind: str, item: str, contest: str, votes: Sequence[str], auditor: str,
           rule: str | None, note: str | None, write_ins: Mapping[str, str] | None = None) -> DecisionOutcome:
    """One auditor's reading of one contest of a queued card or serial."""
    if contest not in listed_contests(store, item, states=("open", "awaiting")):
        raise DecisionError(f"{kind} {item}: contest '{contest}' is not awaiting an auditor's decision")
    if kind == "pair":
        from scanpipe.reconcile.service import adjudicate_pair

        outcome = adjudicate_pair(store, item, contest=contest, votes=votes, auditors=[auditor], rule=rule, note=note,
                                  attestation=_web(auditor), write_ins=write_ins)
    else:
        outcome = record_decision(store, election, item=item, item_kind="card", contest=contest, votes=votes,
                                  auditors=[auditor], rule=rule, note=note, attestation=_web(auditor), write_ins=write_ins)
    refresh_item(store, election, item, kind)
    return outcome


def _web(username: str) -> Attestation:
    """A decision from a review session: the logged-in account is the auditor and the operator."""
    return Attestation(operator=f"review:{username}", accounts=True)


def identify_card(store: Store, election: Election, card_id: str, *, style: str | None, precinct: str | None,
                  kind: CardKind | None, actor: str) -> None:
    """A person states a card's style, precinct and kind; the card is read again."""
    if not any(r.kind == "card" for r in rows_of(store, card_id)):
        raise DecisionError(f"card {card_id} is not in the queue")
    identify(store, card_id, style=style, page=None, precinct=precinct, kind=kind, serial=None, actor=actor)
    refresh_item(store, election, card_id, "card")


@dataclass(frozen=True, slots=True)
class Escalation:
    """The escalated decisions of one contest of one item: each auditor's reading."""

    item: str
    kind: str
    contest: str
    decision_ids: tuple[int, ...]
    readings: tuple[tuple[str, tuple[str, ...]], ...]  # (auditor(s), votes)

    @property
    def latest(self) -> int:
        return max(self.decision_ids)


def escalations(store: Store, item: str) -> list[Escalation]:
    t = decision_table
    with store._read() as conn:
        rows = conn.execute(select(t).where(t.c.item == item, t.c.state == "escalated").order_by(t.c.id)).mappings().all()
    by_contest: dict[str, list[dict[str, Any]]] = {}
    for r in rows:
        by_contest.setdefault(str(r["contest"]), []).append(dict(r))
    return [Escalation(item, str(rs[0]["item_kind"]), c, tuple(int(r["id"]) for r in rs),
                       tuple((", ".join(r["auditors"]), tuple(r["votes"])) for r in rs))
            for c, rs in sorted(by_contest.items())]


def _check_reading(election: Election, contest: str, votes: Sequence[str], rule: str | None) -> None:
    from scanpipe.rules import rule_set

    valid = {o.id for o in election.contest(contest).options}
    if set(votes) - valid:
        raise DecisionError(f"not options of contest '{contest}': {', '.join(sorted(set(votes) - valid))}")
    rules = set(rule_set(election.jurisdiction).intent_rule_codes())
    if rule is not None and rule not in rules:
        raise DecisionError(f"rule {rule!r} is not a voter-intent rule of this jurisdiction")


def _record(store: Store, election: Election, esc: Escalation, *, votes: Sequence[str], auditors: Sequence[str],
            rule: str | None, note: str, board: BoardVotes, attestation: Attestation) -> DecisionOutcome:
    """The board's reading, its members' votes and the superseded escalation: one transaction."""
    if esc.kind == "pair":
        from scanpipe.reconcile.service import adjudicate_pair

        return adjudicate_pair(store, esc.item, contest=esc.contest, votes=votes, auditors=auditors, rule=rule, note=note, board=board,
                               attestation=attestation)
    return record_decision(store, election, item=esc.item, item_kind="card", contest=esc.contest, votes=votes,
                           auditors=auditors, rule=rule, note=note, board=board, attestation=attestation)


