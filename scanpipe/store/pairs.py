"""Store methods of reconciliation: pairs, new duplicates, the canvass duplication log.

A mixin of :class:`scanpipe.store.repository.Store`; every method is one transaction.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy import delete, func, select, update

from scanpipe.store import ledger
from scanpipe.store.database import Database
from scanpipe.store.models import duplication_log_table, identification_table, new_duplicate_table, pair_table, utcnow
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
        r.image_sha256, r.pdf_path, r.scanned_card_id, r.created_at, r.superseded_by)


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
                          superseded_cards: Sequence[str]) -> NewDuplicateRecord:
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
            conn.execute(update(new_duplicate_table).where(new_duplicate_table.c.serial == serial).values(scanned_card_id=card_id))

    # identify --serial

    def stated_serials(self) -> dict[str, str]:
        """``card id -> serial`` a person stated with ``identify --serial``."""
        t = identification_table
        with self._read() as conn:
            return {r.card_id: r.serial for r in conn.execute(select(t.c.card_id, t.c.serial).where(t.c.serial.is_not(None)))}

    # the canvass duplication log

    def import_duplication_log(self, rows: Iterable[tuple[str, str | None, str | None]], source: str) -> int:
        """Insert or replace log rows ``(serial, precinct, reason)``; returns how many."""
        now = utcnow()
        rows = list(rows)
        with self._write() as conn:
            ledger.before(conn, "duplication_log", [serial for serial, _, _ in rows])
            for serial, precinct, reason in rows:
                conn.execute(delete(duplication_log_table).where(duplication_log_table.c.serial == serial))
                conn.execute(duplication_log_table.insert(), {"serial": serial, "precinct": precinct, "reason": reason, "source": source, "imported_at": now})
        return len(rows)

    def duplication_log(self) -> dict[str, tuple[str | None, str | None]]:
        t = duplication_log_table
        with self._read() as conn:
            return {r.serial: (r.precinct, r.reason) for r in conn.execute(select(t.c.serial, t.c.precinct, t.c.reason))}
