"""What the audit log says about the rows that can change a count.

The hash chain (:mod:`scanpipe.audit`) proves the log itself; this module makes the log cover
the data. Every write of a *covered* row (:data:`COVERED`: the election definition, batches
and their voids, cards with their contest readings, people's identifications, decisions with
their board votes, attestation and write-in names, new duplicates with their rendered pages, the board's
rulings on orphans and conflicts and on single pages, its sign-offs of matched pairs, the duplication log,
accounts) records,
in a chained log entry of the same transaction, the row's digest **before** and **after** the
write (``None``: absent). ``detail["rows"]`` of that entry is ``{table: {key: [before,
after]}}``.

:func:`replay` walks the log and, for every row, checks that each entry's *before* equals
the previous entry's *after* (a row changed between two logged writes was changed outside
the log, even if a later write then recorded its new state), and ends with the digest each
row must have now; :func:`check_rows` compares that with the rows in the store and names
every row edited, inserted or deleted outside the log.

A row digest is the SHA-256 of the row's columns (sorted by name; NULL columns left out, so
adding a nullable column in a later revision changes no digest) and of its child rows (a
card's contest readings; a decision's board votes and attestation), as canonical JSON.

Writers call :func:`before` (for a row about to change) or :func:`inserted` (for rows just
inserted) inside their write transaction; :func:`take` hands the digests to the next log
entry appended in that transaction (``append_event`` calls it), and the store's write
transaction appends a ``rows_changed`` entry for any left over, so no covered write goes
unlogged. The pending set lives in ``conn.info`` and is cleared when a transaction begins
and ends.

Pairs (the ``pair`` table) are not covered here: they are derived, and ``audit verify``
recomputes them from verified data and compares.
"""

from __future__ import annotations

import hashlib
import json
from collections import defaultdict
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from decimal import Decimal
from typing import Any

from sqlalchemy import Connection, Table, select

from scanpipe.store.models import (
    batch_table,
    card_table,
    contest_reading_table,
    decision_table,
    duplication_log_table,
    election_table,
    identification_table,
    new_duplicate_table,
)
from scanpipe.store.models_people import decision_attestation_table
from scanpipe.store.models_review import board_vote_table, user_table
from scanpipe.store.models_statute import (
    board_ruling_table,
    card_ruling_table,
    new_duplicate_page_table,
    pair_signoff_serial_table,
    pair_signoff_table,
)
from scanpipe.store.models_view import write_in_table

_PENDING = "scanpipe_ledger_pending"
CHUNK = 1000  # rows per query when reading a whole table


@dataclass(frozen=True, slots=True)
class Coverage:
    """A covered table: its key column and the child tables whose rows belong to a row."""

    table: Table
    key: str
    children: tuple[tuple[Table, str], ...] = ()  # (child table, its column holding the key)
    what: str = ""  # how a person calls one row

    def name(self) -> str:
        return str(self.table.name)


COVERED: dict[str, Coverage] = {c.name(): c for c in (
    Coverage(election_table, "row_id", what="election definition"),
    Coverage(batch_table, "name", what="batch"),
    Coverage(card_table, "card_id", ((contest_reading_table, "card_id"),), what="card (with its contest readings)"),
    Coverage(identification_table, "card_id", what="identification of card"),
    Coverage(decision_table, "id", ((board_vote_table, "decision_id"), (decision_attestation_table, "decision_id"),
                                    (write_in_table, "decision_id")),
             what="decision (with its board votes and attestation)"),  # write-in names are part of its digest too
    Coverage(new_duplicate_table, "serial", ((new_duplicate_page_table, "serial"),), what="new duplicate (with its rendered pages)"),
    Coverage(board_ruling_table, "id", what="board ruling"),
    Coverage(card_ruling_table, "id", what="board ruling on a page"),
    Coverage(pair_signoff_table, "id", ((pair_signoff_serial_table, "signoff_id"),), what="board sign-off of matched pairs"),
    Coverage(duplication_log_table, "serial", what="duplication log row"),
    Coverage(user_table, "id", what="account"),
)}


# --------------------------------------------------------------------------------------
# digests


def _canon(value: Any) -> Any:
    if isinstance(value, datetime):
        aware = value.replace(tzinfo=UTC) if value.tzinfo is None else value.astimezone(UTC)
        return aware.isoformat(timespec="microseconds")
    if isinstance(value, bytes | bytearray | memoryview):
        return "sha256:" + hashlib.sha256(bytes(value)).hexdigest()
    if isinstance(value, Decimal):
        return str(value)
    return value


def _canon_row(row: Mapping[str, Any]) -> dict[str, Any]:
    return {str(k): _canon(v) for k, v in row.items() if v is not None}


def row_digest(row: Mapping[str, Any], children: Mapping[str, list[Mapping[str, Any]]]) -> str:
    """Pure: the digest of one row and its child rows (each child table's rows sorted)."""
    kids = {name: sorted((_canon_row(r) for r in rows), key=lambda r: json.dumps(r, sort_keys=True, default=str))
            for name, rows in children.items() if rows}
    body = {"row": _canon_row(row), "children": kids}
    text = json.dumps(body, sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=str)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def _key_text(value: Any) -> str:
    return str(value)


def current_digests(conn: Connection, name: str, keys: Iterable[Any]) -> dict[str, str | None]:
    """The digest of each of these rows as stored now (None: no such row)."""
    cov = COVERED[name]
    wanted = sorted({_key_text(k) for k in keys})
    found: dict[str, str | None] = dict.fromkeys(wanted)
    column = cov.table.c[cov.key]
    typed = [int(k) if _int_key(cov) else k for k in wanted]
    for i in range(0, len(typed), 500):
        chunk = typed[i:i + 500]
        rows = conn.execute(select(cov.table).where(column.in_(chunk))).mappings().all()
        found.update(_digests(conn, cov, rows, chunk))
    return found


def _int_key(cov: Coverage) -> bool:
    return cov.table.c[cov.key].type.python_type is int


def _digests(conn: Connection, cov: Coverage, rows: Sequence[Any], keys: list[Any]) -> dict[str, str]:
    kids: dict[str, dict[str, list[Any]]] = defaultdict(lambda: defaultdict(list))
    for child, column in cov.children:
        if not keys:
            continue
        for r in conn.execute(select(child).where(child.c[column].in_(keys))).mappings():
            kids[_key_text(r[column])][str(child.name)].append(r)
    return {_key_text(r[cov.key]): row_digest(r, kids.get(_key_text(r[cov.key]), {})) for r in rows}


def all_digests(conn: Connection, name: str) -> Iterator[tuple[str, str]]:
    """``(key, digest)`` of every row of a covered table, a chunk of rows per query."""
    cov = COVERED[name]
    column = cov.table.c[cov.key]
    last: Any = None
    while True:
        q = select(cov.table).order_by(column).limit(CHUNK)
        if last is not None:
            q = q.where(column > last)
        rows = conn.execute(q).mappings().all()
        if not rows:
            return
        keys = [r[cov.key] for r in rows]
        yield from _digests_ranged(conn, cov, rows, keys).items()
        if len(rows) < CHUNK:
            return
        last = keys[-1]


def _digests_ranged(conn: Connection, cov: Coverage, rows: Sequence[Any], keys: list[Any]) -> dict[str, str]:
    """As :func:`_digests`, the children read by key range (one index range scan)."""
    kids: dict[str, dict[str, list[Any]]] = defaultdict(lambda: defaultdict(list))
    wanted = {_key_text(k) for k in keys}
    for child, column in cov.children:
        for r in conn.execute(select(child).where(child.c[column].between(keys[0], keys[-1]))).mappings():
            k = _key_text(r[column])
            if k in wanted:
                kids[k][str(child.name)].append(r)
    return {_key_text(r[cov.key]): row_digest(r, kids.get(_key_text(r[cov.key]), {})) for r in rows}


# --------------------------------------------------------------------------------------
# writers


def begin(conn: Connection) -> None:
    """A write transaction begins: nothing pending."""
    conn.info.pop(_PENDING, None)


def end(conn: Connection) -> None:
    conn.info.pop(_PENDING, None)


def _pending(conn: Connection) -> dict[str, dict[str, str | None]]:
    pending: dict[str, dict[str, str | None]] = conn.info.setdefault(_PENDING, {})
    return pending


def before(conn: Connection, name: str, keys: Iterable[Any]) -> None:
    """Rows about to be changed (or deleted, or inserted where absent): remember their digest
    now. A row already pending in this transaction keeps its first *before*."""
    assert name in COVERED, name
    table = _pending(conn).setdefault(name, {})
    fresh = [k for k in {_key_text(k) for k in keys} if k not in table]
    if fresh:
        table.update(current_digests(conn, name, fresh))


def inserted(conn: Connection, name: str, keys: Iterable[Any]) -> None:
    """Rows this transaction just inserted (absent before)."""
    assert name in COVERED, name
    table = _pending(conn).setdefault(name, {})
    for k in keys:
        table.setdefault(_key_text(k), None)


def has_pending(conn: Connection) -> bool:
    return any(_pending(conn).values())


def take(conn: Connection) -> dict[str, dict[str, list[str | None]]]:
    """The pending rows' ``[before, after]`` digests, read now; nothing is pending after."""
    pending = conn.info.pop(_PENDING, None) or {}
    out: dict[str, dict[str, list[str | None]]] = {}
    for name, befores in pending.items():
        if not befores:
            continue
        after = current_digests(conn, name, befores)
        out[name] = {k: [befores[k], after[k]] for k in sorted(befores)}
    return out


# --------------------------------------------------------------------------------------
# checking


@dataclass(frozen=True, slots=True)
class RowProblem:
    """A covered row that does not agree with the log."""

    table: str
    key: str
    problem: str
    event_id: int | None = None


def replay(entries: Iterable[Mapping[str, Any]]) -> tuple[dict[str, dict[str, str]], list[RowProblem]]:
    """Pure: walk log entries in order; the digest every covered row must have now, and each
    place where a row changed between two logged writes."""
    expected: dict[str, dict[str, str | None]] = {name: {} for name in COVERED}
    problems: list[RowProblem] = []
    for e in entries:
        rows = (e.get("detail") or {}).get("rows")
        if not isinstance(rows, dict):
            continue
        for name, changes in rows.items():
            if name not in expected or not isinstance(changes, dict):
                continue
            table = expected[name]
            for key, pair in changes.items():
                if not (isinstance(pair, list) and len(pair) == 2):
                    problems.append(RowProblem(name, key, f"entry {e['id']} records {name} {key} in a form scanpipe does not write", int(e["id"])))
                    continue
                was, now = pair
                if key in table and table[key] != was:
                    problems.append(RowProblem(name, key, f"{COVERED[name].what} {key} was changed outside the log before entry {e['id']} "
                                                          f"(which found it {_state(was)}, not as the log last recorded it)", int(e["id"])))
                elif key not in table and was is not None:
                    problems.append(RowProblem(name, key, f"{COVERED[name].what} {key} existed before entry {e['id']} without "
                                                          "any earlier entry recording it (written outside the log)", int(e["id"])))
                table[key] = now
    final = {name: {k: v for k, v in t.items() if v is not None} for name, t in expected.items()}
    return final, problems


def _state(digest: str | None) -> str:
    return "absent" if digest is None else f"with digest {digest[:12]}.."


def check_rows(expected: Mapping[str, Mapping[str, str]], actual: Iterable[tuple[str, str, str]]) -> list[RowProblem]:
    """Pure: compare ``(table, key, digest)`` of every stored covered row with the log."""
    problems: list[RowProblem] = []
    seen: dict[str, set[str]] = defaultdict(set)
    for name, key, digest in actual:
        seen[name].add(key)
        want = expected.get(name, {}).get(key)
        what = COVERED[name].what
        if want is None:
            problems.append(RowProblem(name, key, f"{what} {key} was inserted outside the log (no log entry records it)"))
        elif want != digest:
            problems.append(RowProblem(name, key, f"{what} {key} was edited outside the log (its content no longer matches "
                                                  "the digest the log recorded)"))
    for name, rows in expected.items():
        for key in sorted(set(rows) - seen[name]):
            problems.append(RowProblem(name, key, f"{COVERED[name].what} {key} was deleted outside the log (the log records it)"))
    return problems


def stored_digests(conn: Connection) -> Iterator[tuple[str, str, str]]:
    """``(table, key, digest)`` of every covered row in the store."""
    for name in COVERED:
        for key, digest in all_digests(conn, name):
            yield name, key, digest
