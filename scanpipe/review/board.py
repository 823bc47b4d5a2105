"""Board decisions, each member's vote from that member's own login.

Every board decision in the review goes the same way: the reading of an escalated contest
(two auditors read it differently), a ruling on an orphan or a conflict (§12-108(c)), and the
sign-off of a batch of matched pairs (§12-108(d)(1)):

1. a member **proposes** it (a reading: options, the voter-intent rule, a note; a ruling:
   counts as it is, a new duplicate, or nothing; a sign-off: the pairs); proposing is that
   member's vote *for* it;
2. every other member present **votes** on it (for, against, abstain) from their own
   review session; the vote is stored with the member's account and session, never taken
   from a form field naming someone else;
3. a member who voted **closes** the vote: with fewer members present (voted) than the
   rule set's board quorum (``board_quorum``) it is refused and nothing is recorded;
   with a majority of those present for it, it is recorded through the same library call as
   when it is entered any other way (a reading: escalation superseded, reading final, each
   member's vote kept; a ruling or sign-off: recorded with each member's vote), the proposal
   closed in that same transaction; otherwise the proposal is rejected and another can be made.

Only active board accounts vote; one proposal per escalated contest, per serial, and one
sign-off is open at a time; the member who proposed may withdraw it while it is open. Every
step is in the audit log.
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
    matter: str  # "reading" | "ruling" | "sign_off"
    item: str | None
    item_kind: str | None
    contest: str | None
    escalation: int | None
    votes: tuple[str, ...]
    payload: dict[str, Any]
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

    @property
    def members(self) -> dict[str, str]:
        return {b.member: b.vote for b in self.ballots}


@dataclass(frozen=True)
class Closed:
    """What closing a vote did: the decision, ruling or sign-off recorded, or rejected (all None)."""

    proposal: Proposal
    decision: DecisionOutcome | None = None
    ruling: Any = None  # BoardRuling
    signoff: int | None = None

    @property
    def rejected(self) -> bool:
        return self.decision is None and self.ruling is None and self.signoff is None


def open_proposals(store: Store, items: Sequence[str], *, matter: str = "reading") -> dict[tuple[str, str], Proposal]:
    """The open proposals of these items: ``(item, contest) -> proposal`` for readings,
    ``(serial, "") -> proposal`` for rulings."""
    if not items:
        return {}
    p = board_proposal_table
    with store._read() as conn:
        rows = conn.execute(select(p).where(p.c.item.in_(list(items)), p.c.matter == matter, p.c.state == "open")
                            .order_by(p.c.id)).mappings().all()
    return {(r["item"], r["contest"] or ""): prop for r, prop in zip(rows, _with_ballots(store, rows), strict=True)}


def open_sign_off(store: Store) -> Proposal | None:
    """The open proposal to sign off a batch of matched pairs, if any."""
    p = board_proposal_table
    with store._read() as conn:
        rows = conn.execute(select(p).where(p.c.matter == "sign_off", p.c.state == "open").order_by(p.c.id)).mappings().all()
    return _with_ballots(store, rows)[0] if rows else None


def _with_ballots(store: Store, rows: Sequence[Any]) -> list[Proposal]:
    b = board_ballot_table
    with store._read() as conn:
        ids = [r["id"] for r in rows]
        ballots = conn.execute(select(b).where(b.c.proposal_id.in_(ids)).order_by(b.c.at, b.c.member)).mappings().all() if ids else []
    by_id: dict[int, list[Ballot]] = {}
    for r in ballots:
        by_id.setdefault(int(r["proposal_id"]), []).append(Ballot(r["member"], r["vote"], r["at"]))
    return [_proposal(r, by_id.get(int(r["id"]), [])) for r in rows]


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
    escalation = g("escalation")
    return Proposal(int(g("id")), g("matter"), g("item"), g("item_kind"), g("contest"), int(escalation) if escalation is not None else None,
                    tuple(g("votes")), dict(g("payload") or {}), g("rule"), g("note"), g("proposed_by"), g("state"), tuple(ballots))


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
    return _insert(store, {"matter": "reading", "item": item, "item_kind": esc.kind, "contest": contest, "escalation": decision_id,
                           "votes": ordered, "payload": {}, "rule": rule, "note": note},
                   (p.c.matter == "reading") & (p.c.item == item) & (p.c.contest == contest),
                   f"a proposal for {item} contest '{contest}' is open already", member=member, session=session)


def propose_ruling(store: Store, *, serial: str, ruling: str, card: str | None, note: str | None, member: str,
                   session: str) -> Proposal:
    """A member proposes the board's ruling on an orphan or a conflict (and votes for it);
    whether it can hold is checked again when the vote closes."""
    from scanpipe.reconcile.rulings import RulingKind

    if ruling not in {k.value for k in RulingKind}:
        raise DecisionError("Choose the board's ruling: counts as it is, a new duplicate, or nothing counts.")
    p = board_proposal_table
    return _insert(store, {"matter": "ruling", "item": serial, "item_kind": "pair", "votes": [], "payload": {"ruling": ruling, "card": card},
                           "note": note}, (p.c.matter == "ruling") & (p.c.item == serial),
                   f"a ruling on serial {serial} is proposed already", member=member, session=session)


def propose_sign_off(store: Store, *, serials: Sequence[str], note: str | None, member: str, session: str) -> Proposal:
    """A member proposes that the board signs off these matched pairs (and votes for it)."""
    if not serials:
        raise DecisionError("a sign-off needs at least one pair")
    p = board_proposal_table
    return _insert(store, {"matter": "sign_off", "votes": [], "payload": {"serials": sorted(dict.fromkeys(serials))}, "note": note},
                   p.c.matter == "sign_off", "a sign-off is proposed already", member=member, session=session)


def _insert(store: Store, values: dict[str, Any], same: Any, taken: str, *, member: str, session: str) -> Proposal:
    """One open proposal per matter and item; the proposer's ballot is *for* it; logged."""
    p = board_proposal_table
    now = utcnow()
    with store._write() as conn:
        if conn.execute(select(p.c.id).where(same, p.c.state == "open")).first() is not None:
            raise DecisionError(f"{taken}: vote on it, or its proposer withdraws it")
        new_id = conn.execute(p.insert().returning(p.c.id), {**values, "proposed_by": member, "created_at": now, "state": "open"}).scalar_one()
        conn.execute(board_ballot_table.insert(), {"proposal_id": new_id, "member": member, "vote": "for", "session_sha256": session, "at": now})
        detail = {k: v for k, v in values.items() if k in ("matter", "item", "contest", "escalation", "votes", "payload", "rule") and v not in (None, [], {})}
        append_event(conn, "board_proposed", {"proposal": new_id, **detail}, member, now)
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


def close_vote(store: Store, election: Election, *, proposal_id: int, member: str, board_members: Sequence[str]) -> Closed:
    """A member who voted closes the vote: what it decided is recorded (a majority of those
    present for it), or the proposal is rejected. Refused, recording nothing, with fewer
    members present than the rule set's quorum."""
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
    members = prop.members
    if prop.ayes * 2 <= present:
        _end(store, prop, "rejected", member, {"members": members})
        return Closed(prop)
    if prop.matter == "ruling":
        return Closed(prop, ruling=_close_ruling(store, election, prop, member))
    if prop.matter == "sign_off":
        from scanpipe.reconcile.board import sign_off_pairs

        return Closed(prop, signoff=sign_off_pairs(store, list(prop.payload["serials"]), members=members, actor=member, note=prop.note,
                                                   proposal=prop.id))
    return Closed(prop, decision=_close_reading(store, election, prop, member))


def _close_reading(store: Store, election: Election, prop: Proposal, member: str) -> DecisionOutcome:
    assert prop.item is not None and prop.contest is not None and prop.escalation is not None
    esc = next((e for e in escalations(store, prop.item) if e.contest == prop.contest), None)
    if esc is None or esc.latest != prop.escalation:
        raise DecisionError(f"the escalation this proposal settles is no longer open for {prop.item} contest '{prop.contest}'; reload the board page")
    members = prop.members
    ayes = sorted(m for m, v in members.items() if v == "for")
    tally = ", ".join(f"{m}: {members[m]}" for m in sorted(members))
    note = f"board decision ({tally})" + (f"; {prop.note}" if prop.note else "")
    board = BoardVotes(escalation=prop.escalation, members=members, actor=member, proposal=prop.id)
    outcome = _record(store, election, esc, votes=prop.votes, auditors=ayes, rule=prop.rule, note=note, board=board,
                      attestation=Attestation(operator=f"review:{member}", accounts=True))
    refresh_item(store, election, prop.item, esc.kind)
    return outcome


def _close_ruling(store: Store, election: Election, prop: Proposal, member: str) -> Any:
    from scanpipe.reconcile.board import rule_on_serial
    from scanpipe.reconcile.rulings import RulingKind

    assert prop.item is not None
    made = rule_on_serial(store, prop.item, ruling=RulingKind(prop.payload["ruling"]), card=prop.payload.get("card"), members=prop.members,
                          actor=member, note=prop.note, proposal=prop.id)
    refresh_item(store, election, prop.item, "pair")
    return made


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
