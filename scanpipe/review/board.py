"""Board decisions, each member's vote from that member's own login.

An escalated contest (two auditors read it differently) is settled by the board:

1. a member **proposes** a reading (options, the voter-intent rule, a note); proposing is
   that member's vote *for* it;
2. every other member present **votes** on it (for, against, abstain) from their own
   review session; the vote is stored with the member's account and session, never taken
   from a form field naming someone else;
3. a member who voted **closes** the vote: with fewer members present (voted) than the
   rule set's board quorum (``board_quorum``) it is refused and nothing is recorded;
   with a majority of those present for the reading it is recorded through the same library
   call as every decision (escalation superseded, reading final, each member's vote kept,
   one transaction); otherwise the proposal is rejected and another can be made.

Only active board accounts vote; one proposal per escalated contest is open at a time; the
member who proposed may withdraw it while it is open. Every step is in the audit log.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy import select, update

from scanpipe.audit import append_event
from scanpipe.decisions import Attestation
from scanpipe.errors import DecisionError
from scanpipe.review.decide import _check_reading, _record, escalations
from scanpipe.review.index import refresh_item
from scanpipe.rules import rule_set
from scanpipe.store.models import utcnow
from scanpipe.store.models_people import (
    BOARD_VOTES,
    board_ballot_table,
    board_proposal_table,
)
from scanpipe.store.repository import Store
from scanpipe.types import Election
from scanpipe.workflow import BoardVotes, DecisionOutcome


@dataclass(frozen=True, slots=True)
class Ballot:
    member: str
    vote: str
    at: datetime


@dataclass(frozen=True, slots=True)
class Proposal:
    id: int
    item: str
    item_kind: str
    contest: str
    escalation: int
    votes: tuple[str, ...]
    rule: str | None
    note: str | None
    proposed_by: str
    state: str
    ballots: tuple[Ballot, ...]

    def vote_of(self, member: str) -> str | None:
        return next((b.vote for b in self.ballots if b.member == member), None)

    @property
    def ayes(self) -> int:
        return sum(b.vote == "for" for b in self.ballots)


def open_proposals(store: Store, items: Sequence[str]) -> dict[tuple[str, str], Proposal]:
    """The open proposal of each escalated contest of these items: ``(item, contest) -> proposal``."""
    if not items:
        return {}
    p, b = board_proposal_table, board_ballot_table
    with store._read() as conn:
        rows = conn.execute(select(p).where(p.c.item.in_(list(items)), p.c.state == "open").order_by(p.c.id)).mappings().all()
        ids = [r["id"] for r in rows]
        ballots = conn.execute(select(b).where(b.c.proposal_id.in_(ids)).order_by(b.c.at, b.c.member)).mappings().all() if ids else []
    by_id: dict[int, list[Ballot]] = {}
    for r in ballots:
        by_id.setdefault(int(r["proposal_id"]), []).append(Ballot(r["member"], r["vote"], r["at"]))
    return {(r["item"], r["contest"]): _proposal(r, by_id.get(int(r["id"]), [])) for r in rows}


def get_proposal(store: Store, proposal_id: int) -> Proposal:
    p, b = board_proposal_table, board_ballot_table
    with store._read() as conn:
        row = conn.execute(select(p).where(p.c.id == proposal_id)).mappings().first()
        ballots = conn.execute(select(b).where(b.c.proposal_id == proposal_id).order_by(b.c.at, b.c.member)).mappings().all()
    if row is None:
        raise DecisionError(f"there is no board proposal {proposal_id}")
    return _proposal(row, [Ballot(r["member"], r["vote"], r["at"]) for r in ballots])


def _proposal(r: Any, ballots: list[Ballot]) -> Proposal:
    g = r.__getitem__
    return Proposal(int(g("id")), g("item"), g("item_kind"), g("contest"), int(g("escalation")), tuple(g("votes")), g("rule"),
                    g("note"), g("proposed_by"), g("state"), tuple(ballots))


def propose(store: Store, election: Election, *, item: str, contest: str, decision_id: int, votes: Sequence[str],
            rule: str | None, note: str | None, member: str, session: str) -> Proposal:
    """A member proposes a reading for an escalated contest (and votes for it)."""
    esc = next((e for e in escalations(store, item) if e.contest == contest), None)
    if esc is None:
        raise DecisionError(f"{item}: contest '{contest}' has no escalated decision for the board")
    if decision_id != esc.latest:
        raise DecisionError(f"decision {decision_id} is not the open escalation of {item} contest '{contest}' (it is {esc.latest}); reload the board page")
    _check_reading(election, contest, votes, rule)
    options = {o.id for o in election.contest(contest).options}
    ordered = [o.id for o in election.contest(contest).options if o.id in set(votes) & options]
    p = board_proposal_table
    now = utcnow()
    with store._write() as conn:
        if conn.execute(select(p.c.id).where(p.c.item == item, p.c.contest == contest, p.c.state == "open")).first() is not None:
            raise DecisionError(f"a proposal for {item} contest '{contest}' is open already: vote on it, or its proposer withdraws it")
        new_id = conn.execute(p.insert().returning(p.c.id), {
            "item": item, "item_kind": esc.kind, "contest": contest, "escalation": decision_id, "votes": ordered, "rule": rule,
            "note": note, "proposed_by": member, "created_at": now, "state": "open"}).scalar_one()
        conn.execute(board_ballot_table.insert(), {"proposal_id": new_id, "member": member, "vote": "for", "session_sha256": session, "at": now})
        append_event(conn, "board_proposed", {"proposal": new_id, "item": item, "contest": contest, "escalation": decision_id,
                                              "votes": ordered, "rule": rule}, member, now)
    return get_proposal(store, int(new_id))


def cast_vote(store: Store, *, proposal_id: int, vote: str, member: str, session: str) -> Proposal:
    """A member present votes on an open proposal, from their own session; once."""
    if vote not in BOARD_VOTES:
        raise DecisionError(f"a board vote is one of {', '.join(BOARD_VOTES)}, not {vote!r}")
    p, b = board_proposal_table, board_ballot_table
    now = utcnow()
    with store._write() as conn:
        state = conn.execute(select(p.c.state).where(p.c.id == proposal_id)).scalar()
        if state != "open":
            raise DecisionError(f"board proposal {proposal_id} is not open (it is {state or 'unknown'}); reload the board page")
        if conn.execute(select(b.c.vote).where(b.c.proposal_id == proposal_id, b.c.member == member)).first() is not None:
            raise DecisionError(f"{member} already voted on this proposal")
        conn.execute(b.insert(), {"proposal_id": proposal_id, "member": member, "vote": vote, "session_sha256": session, "at": now})
        append_event(conn, "board_vote_cast", {"proposal": proposal_id, "vote": vote}, member, now)
    return get_proposal(store, proposal_id)


def close_vote(store: Store, election: Election, *, proposal_id: int, member: str,
               board_members: Sequence[str]) -> DecisionOutcome | None:
    """A member who voted closes the vote: the decision recorded (a majority of those present
    for it), or None when the proposal was rejected. Refused, recording nothing, with fewer
    members present than the quorum."""
    prop = get_proposal(store, proposal_id)
    if prop.state != "open":
        raise DecisionError(f"board proposal {proposal_id} is not open (it is {prop.state}); reload the board page")
    if prop.vote_of(member) is None:
        raise DecisionError("only a member who voted on this proposal closes the vote: vote first")
    gone = sorted(b.member for b in prop.ballots if b.member not in set(board_members))
    if gone:
        raise DecisionError(f"no longer active board members: {', '.join(gone)}; their votes cannot count (withdraw and propose again)")
    rules = rule_set(election.jurisdiction)
    present = len(prop.ballots)
    if present < rules.board_quorum:
        raise DecisionError(f"{present} of the board's {len(board_members)} members present (voted); a board decision needs "
                            f"{rules.board_quorum} present ({rules.board_quorum_source}): nothing was recorded")
    members = {b.member: b.vote for b in prop.ballots}
    if prop.ayes * 2 <= present:
        _end(store, prop, "rejected", member, {"members": members})
        return None
    esc = next((e for e in escalations(store, prop.item) if e.contest == prop.contest), None)
    if esc is None or esc.latest != prop.escalation:
        raise DecisionError(f"the escalation this proposal settles is no longer open for {prop.item} contest '{prop.contest}'; reload the board page")
    ayes = sorted(m for m, v in members.items() if v == "for")
    tally = ", ".join(f"{m}: {members[m]}" for m in sorted(members))
    note = f"board decision ({tally})" + (f"; {prop.note}" if prop.note else "")
    board = BoardVotes(escalation=prop.escalation, members=members, actor=member, proposal=prop.id)
    outcome = _record(store, election, esc, votes=prop.votes, auditors=ayes, rule=prop.rule, note=note, board=board,
                      attestation=Attestation(operator=f"review:{member}", accounts=True))
    refresh_item(store, election, prop.item, esc.kind)
    return outcome


def withdraw(store: Store, *, proposal_id: int, member: str) -> None:
    """The member who proposed a reading withdraws it while it is open."""
    prop = get_proposal(store, proposal_id)
    if prop.state != "open":
        raise DecisionError(f"board proposal {proposal_id} is not open (it is {prop.state})")
    if prop.proposed_by != member:
        raise DecisionError(f"only {prop.proposed_by}, who proposed it, withdraws this proposal")
    _end(store, prop, "withdrawn", member, {})


def _end(store: Store, prop: Proposal, state: str, member: str, detail: dict[str, object]) -> None:
    p = board_proposal_table
    now = utcnow()
    with store._write() as conn:
        changed = conn.execute(update(p).where(p.c.id == prop.id, p.c.state == "open")
                               .values(state=state, closed_by=member, closed_at=now)).rowcount
        if not changed:
            raise DecisionError(f"board proposal {prop.id} is no longer open; reload the board page")
        append_event(conn, f"board_proposal_{state}", {"proposal": prop.id, "item": prop.item, "contest": prop.contest, **detail}, member, now)
