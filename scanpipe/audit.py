"""The hash-chained audit log, kept in the store's ``event`` table.

Every entry's ``hash`` is ``sha256(prev_hash + canonical JSON of the entry)``, where the
entry is its id, time, actor, action and detail, and ``prev_hash`` is the hash of the entry
before it (64 zeros for the first). Editing an entry changes its hash; deleting or
reordering entries breaks the link of the entry after; :func:`verify_chain` walks the chain
and names the first entry of every break.

Appends are serialized: SQLite write transactions already begin ``IMMEDIATE``; on
PostgreSQL :func:`append_event` takes a transaction advisory lock first, so two writers
never chain onto the same predecessor. scanpipe writes no entry outside the chain: a row
without a hash was written by something else, and :func:`verify_chain` reports it as a
break for as long as it is there (later appends chain past it, never over it).

The chain also covers the data: an entry appended in a transaction that wrote rows which can
change a count carries those rows' digests before and after (:mod:`scanpipe.store.ledger`).

A chain proves nothing about its own tail: whoever can write the database can drop the last
entries. :func:`verify_chain` returns the head hash and count so they can be written down or
published and compared later (``scanpipe audit verify --head HASH``).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from sqlalchemy import Connection, select, update

from scanpipe.store import ledger
from scanpipe.store.models import event_table

GENESIS = "0" * 64
PG_AUDIT_LOCK = 0x5CA9_91C0  # advisory lock key: one appender of the chain at a time


def canonical_entry(id_: int, at: datetime, actor: str | None, action: str, detail: Mapping[str, Any]) -> bytes:
    """The bytes an entry's hash covers: sorted-key compact JSON, UTF-8."""
    when = at.replace(tzinfo=UTC) if at.tzinfo is None else at.astimezone(UTC)
    entry = {"id": id_, "at": when.isoformat(timespec="microseconds"), "actor": actor, "action": action,
             "detail": json.loads(json.dumps(dict(detail), default=str))}
    return json.dumps(entry, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode("utf-8")


def chain_hash(prev_hash: str, entry: bytes) -> str:
    """``sha256(prev_hash + entry)`` as lowercase hex."""
    return hashlib.sha256(prev_hash.encode("ascii") + entry).hexdigest()


def _lock(conn: Connection) -> None:
    if conn.dialect.name == "postgresql":
        conn.exec_driver_sql(f"SELECT pg_advisory_xact_lock({PG_AUDIT_LOCK})")


def _head(conn: Connection) -> tuple[int, str]:
    t = event_table
    row = conn.execute(select(t.c.id, t.c.hash).where(t.c.hash.is_not(None)).order_by(t.c.id.desc()).limit(1)).first()
    return (row.id, row.hash) if row is not None else (0, GENESIS)


def append_event(conn: Connection, action: str, detail: Mapping[str, Any], actor: str | None, at: datetime) -> int:
    """Append one chained entry in the caller's write transaction; returns its id.

    The store's ``insert_event`` calls this, so every event the store writes is chained. The
    digests of covered rows this transaction wrote so far go into its ``detail["rows"]``.
    """
    _lock(conn)
    _, prev = _head(conn)
    clean = json.loads(json.dumps(dict(detail), default=str))
    rows = ledger.take(conn)
    if rows:
        clean["rows"] = rows
    t = event_table
    new_id = conn.execute(t.insert().returning(t.c.id), {"at": at, "actor": actor, "action": action, "detail": clean}).scalar_one()
    digest = chain_hash(prev, canonical_entry(new_id, at, actor, action, clean))
    conn.execute(update(t).where(t.c.id == new_id).values(prev_hash=prev, hash=digest))
    return int(new_id)


@dataclass(frozen=True, slots=True)
class Break:
    """One place where the chain does not hold."""

    event_id: int
    problem: str


@dataclass(frozen=True, slots=True)
class ChainReport:
    entries: int
    head: str
    breaks: tuple[Break, ...]

    @property
    def ok(self) -> bool:
        return not self.breaks


def check_entries(rows: Iterable[Mapping[str, Any]]) -> ChainReport:
    """Pure: walk the entries in id order and name every break."""
    prev_id, prev_hash, count, breaks = None, GENESIS, 0, []
    for r in rows:
        count += 1
        rid = int(r["id"])
        where = "the first entry" if prev_id is None else f"entry {prev_id}"
        if r["hash"] is None:
            breaks.append(Break(rid, f"entry {rid} has no hash: it was written outside the audit chain or its hash was erased"))
            prev_id, prev_hash = rid, r["hash"] or prev_hash
            continue
        if r["prev_hash"] != prev_hash:
            breaks.append(Break(rid, f"entry {rid} does not follow {where}: an entry between them was deleted, "
                                     f"inserted or moved (its prev_hash {str(r['prev_hash'])[:12]}.. should be {prev_hash[:12]}..)"))
        digest = chain_hash(r["prev_hash"] or "", canonical_entry(rid, r["at"], r["actor"], r["action"], r["detail"]))
        if digest != r["hash"]:
            breaks.append(Break(rid, f"entry {rid} ({r['action']}) was edited: its content no longer matches its hash"))
        prev_id, prev_hash = rid, r["hash"]
    return ChainReport(count, prev_hash, tuple(breaks))


def verify_chain(conn: Connection, *, chunk: int = 5000) -> ChainReport:
    """Read the whole log in id order (``chunk`` rows per query) and check it."""
    t = event_table

    def rows() -> Iterable[Mapping[str, Any]]:
        last = -1
        while True:
            batch = conn.execute(select(t).where(t.c.id > last).order_by(t.c.id).limit(chunk)).mappings().all()
            yield from (dict(r) for r in batch)
            if len(batch) < chunk:
                return
            last = batch[-1]["id"]

    return check_entries(rows())
