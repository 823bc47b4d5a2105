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
        self.conn.execute(update(t).where(t.c.id == decision_id).values(state=new.value))
        return decision_record(self.conn.execute(select(t).where(t.c.id == decision_id)).mappings().one())

    def add_board_votes(self, decision_id: int, members: Mapping[str, str]) -> None:
        """Each board member's vote (``for`` / ``against`` / ``abstain``) on a board decision."""
        from scanpipe.store.models_review import board_vote_table

        if members:
            self.conn.execute(board_vote_table.insert(), [{"decision_id": decision_id, "member": m, "vote": v} for m, v in sorted(members.items())])

    def log_event(self, action: str, detail: Mapping[str, Any], actor: str | None = None) -> int:
        """Append one event to the operational log; returns its id."""
        return insert_event(self.conn, action, detail, actor, utcnow())


def insert_event(conn: Connection, action: str, detail: Mapping[str, Any], actor: str | None, at: datetime) -> int:
    """Append an event to the hash-chained audit log (:mod:`scanpipe.audit`)."""
    from scanpipe.audit import append_event

    return append_event(conn, action, detail, actor, at)


def decision_record(r: Mapping[Any, Any]) -> DecisionRecord:
    return DecisionRecord(id=r["id"], item=r["item"], item_kind=ItemKind(r["item_kind"]), contest=r["contest"],
                          votes=tuple(r["votes"]), auditors=tuple(r["auditors"]), rule=r["rule"], note=r["note"],
                          state=DecisionState(r["state"]), created_at=r["created_at"], supersedes=r["supersedes"],
                          rule_set=r.get("rule_set"))
