"""Store methods of reconciliation: pairs, new duplicates, the canvass duplication log.

A mixin of :class:`scanpipe.store.repository.Store`; every method is one transaction.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy import delete, func, select, update

from scanpipe.reconcile.compare import BallotType, ComparisonScope
from scanpipe.reconcile.duplog import LogEntry
from scanpipe.store import ledger
from scanpipe.store.database import Database
from scanpipe.store.models import duplication_log_table, identification_table, new_duplicate_table, pair_table, utcnow
from scanpipe.store.transaction import insert_event
from scanpipe.types import ContestOutcome, ContestReading


@dataclass(frozen=True, slots=True)
class PairRecord:
    serial: str
    status: str
    precinct: str | None
    duplicates: tuple[str, ...]
    originals: tuple[str, ...]
    contests: tuple[str, ...]
    counted: str
    detail: dict[str, Any]
    updated_at: datetime


@dataclass(frozen=True, slots=True)
class NewDuplicateRecord:
    serial: str
    base_serial: str
    revision: int
    style: str
    precinct: str | None
    contests: tuple[ContestReading, ...]
    decisions: tuple[int, ...]
    auditors: tuple[str, ...]
    original_cards: tuple[str, ...]
    superseded_cards: tuple[str, ...]
    image_path: str | None
    image_sha256: str | None
    pdf_path: str | None
    scanned_card_id: str | None
    created_at: datetime
    superseded_by: str | None
    rule_set: str | None = None
    printed_at: datetime | None = None
    printed_by: str | None = None
    scan_problem: str | None = None
    stored_at: datetime | None = None
    stored_by: str | None = None
    stored_where: str | None = None


def reading_to_json(r: ContestReading) -> dict[str, Any]:
    return {"contest": r.contest, "votes": list(r.votes), "outcome": r.outcome.value, "undervotes": r.undervotes,
            "unknown_options": list(r.unknown_options), "source": r.source}


def reading_from_json(d: dict[str, Any]) -> ContestReading:
    return ContestReading(d["contest"], tuple(d["votes"]), ContestOutcome(d["outcome"]), int(d["undervotes"]),
                          tuple(d.get("unknown_options", ())), d.get("source", "adjudicated"))


def _pair(r: Any) -> PairRecord:
    return PairRecord(r.serial, r.status, r.precinct, tuple(r.duplicates), tuple(r.originals), tuple(r.contests), r.counted, dict(r.detail), r.updated_at)


def _new_dup(r: Any) -> NewDuplicateRecord:
    return NewDuplicateRecord(
        r.serial, r.base_serial, r.revision, r.style, r.precinct, tuple(reading_from_json(c) for c in r.contests),
        tuple(r.decisions), tuple(r.auditors), tuple(r.original_cards), tuple(r.superseded_cards), r.image_path,
        r.image_sha256, r.pdf_path, r.scanned_card_id, r.created_at, r.superseded_by, r.rule_set, r.printed_at, r.printed_by,
        r.scan_problem, r.stored_at, r.stored_by, r.stored_where)


class PairsMixin(Database):
    """Pairs, new duplicates and the duplication log."""

    def replace_pairs(self, rows: Sequence[dict[str, Any]]) -> None:
        """Replace the stored reconciliation with ``rows`` (one transaction; idempotent)."""
        now = utcnow()
        with self._write() as conn:
            conn.execute(delete(pair_table))
            if rows:
                conn.execute(pair_table.insert(), [{**r, "updated_at": now} for r in rows])

    def replace_pairs_of(self, serial: str, rows: Sequence[dict[str, Any]]) -> None:
        """Replace the stored reconciliation of one base serial with ``rows`` (one transaction)."""
        if any(r["serial"] != serial for r in rows):
            raise ValueError(f"rows of other serials than {serial} given to replace_pairs_of")
        now = utcnow()
        with self._write() as conn:
            conn.execute(delete(pair_table).where(pair_table.c.serial == serial))
            if rows:
                conn.execute(pair_table.insert(), [{**r, "updated_at": now} for r in rows])

    def pairs(self, *, status: str | None = None, precinct: str | None = None, limit: int | None = None, offset: int = 0) -> list[PairRecord]:
        q = select(pair_table).order_by(pair_table.c.serial)
        if status is not None:
            q = q.where(pair_table.c.status == status)
        if precinct is not None:
            q = q.where(pair_table.c.precinct == precinct)
        if limit is not None:
            q = q.limit(limit).offset(offset)
        with self._read() as conn:
            return [_pair(r) for r in conn.execute(q)]

    def get_pair(self, serial: str) -> PairRecord | None:
        with self._read() as conn:
            r = conn.execute(select(pair_table).where(pair_table.c.serial == serial)).first()
        return _pair(r) if r is not None else None

    def pair_status_counts(self) -> dict[str, int]:
        with self._read() as conn:
            return {r[0]: r[1] for r in conn.execute(select(pair_table.c.status, func.count()).group_by(pair_table.c.status))}

    # new duplicates

    def _lock_serial(self, conn: Any, base_serial: str) -> None:
        """One writer of a serial's new duplicates at a time (PostgreSQL; SQLite's BEGIN IMMEDIATE already is)."""
        if self.dialect == "postgresql":
            conn.exec_driver_sql("SELECT pg_advisory_xact_lock(hashtext('scanpipe-new-duplicate:' || %(s)s))", {"s": base_serial})

    def new_duplicates(self, *, current_only: bool = True, base_serial: str | None = None) -> list[NewDuplicateRecord]:
        q = select(new_duplicate_table).order_by(new_duplicate_table.c.base_serial, new_duplicate_table.c.revision)
        if current_only:
            q = q.where(new_duplicate_table.c.superseded_by.is_(None))
        if base_serial is not None:
            q = q.where(new_duplicate_table.c.base_serial == base_serial)
        with self._read() as conn:
            return [_new_dup(r) for r in conn.execute(q)]

    def add_new_duplicate(self, *, base_serial: str, style: str, precinct: str | None, contests: Sequence[ContestReading],
                          decisions: Sequence[int], auditors: Sequence[str], original_cards: Sequence[str],
                          superseded_cards: Sequence[str], rule_set: str | None = None) -> NewDuplicateRecord:
        """Make the next revision ``<base>-R<n>`` and supersede the current one, in one transaction."""
        t = new_duplicate_table
        now = utcnow()
        with self._write() as conn:
            self._lock_serial(conn, base_serial)
            last = conn.execute(select(func.max(t.c.revision)).where(t.c.base_serial == base_serial)).scalar()
            revision = (last or 0) + 1
            serial = f"{base_serial}-R{revision}"
            current = conn.execute(select(t.c.serial).where(t.c.base_serial == base_serial, t.c.superseded_by.is_(None))).scalars().all()
            ledger.before(conn, "new_duplicate", [*current, serial])
            conn.execute(update(t).where(t.c.base_serial == base_serial, t.c.superseded_by.is_(None)).values(superseded_by=serial))
            conn.execute(t.insert(), {
                "serial": serial, "base_serial": base_serial, "revision": revision, "style": style, "precinct": precinct,
                "contests": [reading_to_json(c) for c in contests], "decisions": list(decisions), "auditors": list(auditors),
                "original_cards": list(original_cards), "superseded_cards": list(superseded_cards), "created_at": now,
                "rule_set": rule_set,
            })
            row = conn.execute(select(t).where(t.c.serial == serial)).one()
        return _new_dup(row)

    def set_new_duplicate_files(self, serial: str, *, image_path: str, image_sha256: str, pdf_path: str | None) -> None:
        with self._write() as conn:
            self._lock_serial(conn, serial.partition("-R")[0])
            ledger.before(conn, "new_duplicate", [serial])
            conn.execute(update(new_duplicate_table).where(new_duplicate_table.c.serial == serial)
                         .values(image_path=image_path, image_sha256=image_sha256, pdf_path=pdf_path))

    def attach_scanned_new_duplicate(self, serial: str, card_id: str) -> None:
        with self._write() as conn:
            self._lock_serial(conn, serial.partition("-R")[0])
            ledger.before(conn, "new_duplicate", [serial])
            conn.execute(update(new_duplicate_table).where(new_duplicate_table.c.serial == serial)
                         .values(scanned_card_id=card_id, scan_problem=None))
            insert_event(conn, "new_duplicate_scanned", {"serial": serial, "card": card_id}, None, utcnow())

    # identify --serial

    def stated_serials(self) -> dict[str, str]:
        """``card id -> serial`` a person stated with ``identify --serial``."""
        t = identification_table
        with self._read() as conn:
            return {r.card_id: r.serial for r in conn.execute(select(t.c.card_id, t.c.serial).where(t.c.serial.is_not(None)))}

    # the canvass duplication log

    def import_duplication_log(self, entries: Sequence[LogEntry], source: str, *, actor: str | None = None) -> int:
        """Insert or replace the log's serials, in one transaction with its log entry; returns how many."""
        now = utcnow()
        t = duplication_log_table
        with self._write() as conn:
            serials = [e.serial for e in entries]
            ledger.before(conn, "duplication_log", serials)
            for i in range(0, len(serials), 500):
                conn.execute(delete(t).where(t.c.serial.in_(serials[i:i + 500])))
            if entries:
                conn.execute(t.insert(), [{"serial": e.serial, "precinct": e.precinct, "reason": e.reason, "source": source, "imported_at": now,
                                           "ballot_type": None if e.ballot_type is BallotType.UNKNOWN else e.ballot_type.value,
                                           "eligible_contests": list(e.eligible_contests) if e.eligible_contests is not None else None}
                                          for e in entries])
            types = Counter(e.ballot_type.value for e in entries)
            insert_event(conn, "import_duplication_log", {"file": source, "rows": len(entries), "ballot_types": dict(types)}, actor, now)
        return len(entries)

    def duplication_log(self) -> dict[str, tuple[str | None, str | None]]:
        t = duplication_log_table
        with self._read() as conn:
            return {r.serial: (r.precinct, r.reason) for r in conn.execute(select(t.c.serial, t.c.precinct, t.c.reason))}

    def comparison_scopes(self, serial: str | None = None) -> dict[str, ComparisonScope]:
        """``serial -> ComparisonScope`` from the log (serials not in it: not known)."""
        t = duplication_log_table
        q = select(t.c.serial, t.c.ballot_type, t.c.eligible_contests)
        if serial is not None:
            q = q.where(t.c.serial == serial)
        with self._read() as conn:
            return {r.serial: ComparisonScope(BallotType(r.ballot_type) if r.ballot_type else BallotType.UNKNOWN,
                                              tuple(r.eligible_contests) if r.eligible_contests is not None else None)
                    for r in conn.execute(q)}
