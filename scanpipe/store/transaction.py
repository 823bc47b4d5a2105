"""One write transaction for a read-plan-write of decisions: ``with store.transaction() as tx``.

A caller reads the decisions of an item, plans with the pure core
(:func:`scanpipe.decisions.plan_decision`), moves earlier decisions on and appends the new one,
all in one transaction. On SQLite the transaction began with ``BEGIN IMMEDIATE``, so no other
writer can interleave; on PostgreSQL, reading an item's decisions first takes a transaction
advisory lock on the item, so two people deciding the same item at once are serialized
(the second sees the first's decision) and nothing is lost or decided twice.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import Any

from sqlalchemy import Connection, select, update

from scanpipe.errors import DecisionError
from scanpipe.store import ledger
from scanpipe.store.models import decision_table, utcnow
from scanpipe.store.records import DecisionRecord, DecisionState, ItemKind

_PG_ITEM_LOCK_SQL = "SELECT pg_advisory_xact_lock(hashtext('scanpipe-decision:' || %(item)s))"


class Transaction:
    """Decisions and events written in the caller's one transaction."""

    def __init__(self, conn: Connection, dialect: str) -> None:
        self.conn = conn
        self.dialect = dialect
        self._locked: set[str] = set()

    def lock_item(self, item: str) -> None:
        """Serialize deciders of ``item`` (PostgreSQL; SQLite's BEGIN IMMEDIATE already does)."""
        if self.dialect == "postgresql" and item not in self._locked:
            self.conn.exec_driver_sql(_PG_ITEM_LOCK_SQL, {"item": item})
            self._locked.add(item)

    def decisions(self, item: str | None = None) -> list[DecisionRecord]:
        """Decisions in the order they were made, all of them or those on ``item``."""
        q = select(decision_table).order_by(decision_table.c.id)
        if item is not None:
            self.lock_item(item)
            q = q.where(decision_table.c.item == item)
        return [decision_record(r) for r in self.conn.execute(q).mappings()]

    def add_decision(self, item: str, item_kind: ItemKind | str, contest: str, votes: Sequence[str],
                     auditors: Sequence[str], *, state: DecisionState | str, rule: str | None = None,
                     note: str | None = None, supersedes: int | None = None, rule_set: str | None = None) -> DecisionRecord:
        """Append a decision. ``supersedes`` links it to an earlier decision on the same item
        and contest; moving that one on (superseded, escalated) is the caller's plan.
        ``rule_set``: the id of the rule set it was made under."""
        if not auditors or any(not a.strip() for a in auditors):
            raise DecisionError("a decision needs at least one named auditor")
        self.lock_item(item)
        t = decision_table
        if supersedes is not None:
            old = self.conn.execute(select(t.c.item, t.c.contest).where(t.c.id == supersedes)).first()
            if old is None or (old.item, old.contest) != (item, contest):
                raise DecisionError(f"decision {supersedes} is not a decision on {item} contest {contest}")
        row = self.conn.execute(t.insert().returning(*t.c), {
            "item": item, "item_kind": ItemKind(item_kind).value, "contest": contest, "votes": list(votes),
            "auditors": list(auditors), "rule": rule, "note": note, "state": DecisionState(state).value,
            "created_at": utcnow(), "supersedes": supersedes, "rule_set": rule_set}).mappings().one()
        ledger.inserted(self.conn, "decision", [row["id"]])
        return decision_record(row)

    def set_decision_state(self, decision_id: int, state: DecisionState | str) -> DecisionRecord:
        """Move a decision on (first_half -> final | escalated, any -> superseded); a
        superseded decision stays superseded."""
        t = decision_table
        old = self.conn.execute(select(t.c.item, t.c.state).where(t.c.id == decision_id)).first()
        if old is None:
            raise DecisionError(f"there is no decision {decision_id}")
        self.lock_item(old.item)
        new = DecisionState(state)
        if old.state == DecisionState.SUPERSEDED and new != DecisionState.SUPERSEDED:
            raise DecisionError(f"decision {decision_id} was superseded; it cannot become {new}")
        ledger.before(self.conn, "decision", [decision_id])
        self.conn.execute(update(t).where(t.c.id == decision_id).values(state=new.value))
        return decision_record(self.conn.execute(select(t).where(t.c.id == decision_id)).mappings().one())

    def add_board_votes(self, decision_id: int, members: Mapping[str, str]) -> None:
        """Each board member's vote (``for`` / ``against`` / ``abstain``) on a board decision."""
        from scanpipe.store.models_review import board_vote_table

        if members:
            ledger.before(self.conn, "decision", [decision_id])
            self.conn.execute(board_vote_table.insert(), [{"decision_id": decision_id, "member": m, "vote": v} for m, v in sorted(members.items())])

    def add_write_in_names(self, decision_id: int, names: Mapping[str, str]) -> None:
        """The names an auditor read in write-in spaces (``option id -> name``), beside the decision."""
        from scanpipe.store.models_view import write_in_table

        if names:
            self.conn.execute(write_in_table.insert(), [{"decision_id": decision_id, "option": o, "name": n} for o, n in sorted(names.items())])

    def check_attestation(self, auditors: Sequence[str], attestation: Any, *, role: str) -> None:
        """With accounts: every auditor is an active account of ``role``. Without (a test
        deck): refused once the database has any account."""
        from scanpipe.store.models_review import user_table

        if attestation.accounts:
            names = [a.strip() for a in auditors]
            rows = {r.username: r for r in self.conn.execute(select(user_table).where(user_table.c.username.in_(names)))}
            for name in names:
                r = rows.get(name)
                if r is None:
                    raise DecisionError(f"{name!r} is not a review account (see `scanpipe user list`)")
                if r.disabled_at is not None:
                    raise DecisionError(f"the account {name!r} is disabled")
                if r.approved_at is None:
                    raise DecisionError(f"the account {name!r} awaits a second administrator's approval")
                if r.role != role:
                    raise DecisionError(f"the account {name!r} is a {r.role} account; only {role} accounts decide here")
        elif self.conn.execute(select(user_table.c.id).limit(1)).first() is not None:
            raise DecisionError("this database has review accounts: name auditors by account (`scanpipe user list`); "
                                "--no-accounts is only for a database without any account (a test deck)")

    def operator_of(self, decision_id: int) -> str | None:
        """The operator that recorded a decision (None: recorded before attestations existed)."""
        from scanpipe.store.models_people import decision_attestation_table as t

        return self.conn.execute(select(t.c.operator).where(t.c.decision_id == decision_id)).scalar()

    def attest(self, decision_id: int, attestation: Any) -> None:
        """Record how the decision's auditors were established (part of the decision's row digest)."""
        from scanpipe.store.models_people import decision_attestation_table as t

        ledger.before(self.conn, "decision", [decision_id])
        self.conn.execute(t.insert(), {"decision_id": decision_id, "operator": attestation.operator,
                                       "accounts": bool(attestation.accounts), "override_reason": attestation.override})

    def close_proposal(self, proposal_id: int, *, members: Mapping[str, str], decision_id: int, closed_by: str) -> None:
        """Mark an open board proposal recorded as this decision (see :func:`close_proposal`)."""
        close_proposal(self.conn, proposal_id, members=members, closed_by=closed_by, recorded_as=f"decision {decision_id}",
                       decision_id=decision_id)

    def log_event(self, action: str, detail: Mapping[str, Any], actor: str | None = None) -> int:
        """Append one event to the operational log; returns its id."""
        return insert_event(self.conn, action, detail, actor, utcnow())


def close_proposal(conn: Connection, proposal_id: int, *, members: Mapping[str, str], closed_by: str, recorded_as: str,
                   decision_id: int | None = None) -> None:
    """Mark an open board proposal recorded, in the caller's transaction (the one writing what
    it decided); refused unless its ballots are exactly ``members`` (a vote cast while it was
    being closed: close it again)."""
    from scanpipe.store.models_people import board_ballot_table as b
    from scanpipe.store.models_people import board_proposal_table as p

    state = conn.execute(select(p.c.state).where(p.c.id == proposal_id).with_for_update()).scalar()
    if state != "open":
        raise DecisionError(f"board proposal {proposal_id} is not open (it is {state or 'unknown'}); reload the board page")
    cast = dict(conn.execute(select(b.c.member, b.c.vote).where(b.c.proposal_id == proposal_id)).all())
    if cast != dict(members):
        raise DecisionError("a member voted while the vote was being closed; reload the board page and close it again")
    conn.execute(update(p).where(p.c.id == proposal_id).values(state="recorded", decision_id=decision_id, recorded_as=recorded_as,
                                                               closed_by=closed_by, closed_at=utcnow()))


def insert_event(conn: Connection, action: str, detail: Mapping[str, Any], actor: str | None, at: datetime) -> int:
    """Append an event to the hash-chained audit log (:mod:`scanpipe.audit`)."""
    from scanpipe.audit import append_event

    return append_event(conn, action, detail, actor, at)


def decision_record(r: Mapping[Any, Any]) -> DecisionRecord:
    return DecisionRecord(id=r["id"], item=r["item"], item_kind=ItemKind(r["item_kind"]), contest=r["contest"],
                          votes=tuple(r["votes"]), auditors=tuple(r["auditors"]), rule=r["rule"], note=r["note"],
                          state=DecisionState(r["state"]), created_at=r["created_at"], supersedes=r["supersedes"],
                          rule_set=r.get("rule_set"))
