"""The repository: the only code of scanpipe that opens database sessions.

Every public method is one transaction (see :mod:`scanpipe.store.database`). Cards are
inserted if absent (``ON CONFLICT DO NOTHING``) so two processes ingesting the same file never
double-insert and never fail; a card, its raw target scores and its contest readings are
written together. Reads rebuild :mod:`scanpipe.types` values with a few queries per
thousands of cards, never one per card.
"""

from __future__ import annotations

import hashlib
import json
from collections import defaultdict
from collections.abc import Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from sqlalchemy import ColumnElement, Connection, Table, Text, delete, func, select, type_coerce, update

from scanpipe.errors import ConfigError, DecisionError, StorageError
from scanpipe.store import codec, ledger
from scanpipe.store.database import PG_ELECTION_LOCK, alembic_config
from scanpipe.store.elections import definition_sha256, election_from_json, read_references, with_references
from scanpipe.store.models import (
    batch_table,
    card_table,
    contest_reading_table,
    decision_table,
    election_table,
    event_table,
    identification_table,
    layout_reference_table,
    skipped_file_table,
    target_score_table,
    utcnow,
)
from scanpipe.store.pairs import PairsMixin
from scanpipe.store.places import ViewMixin
from scanpipe.store.records import (
    BatchRecord,
    DecisionRecord,
    DecisionState,
    ElectionRecord,
    EventRecord,
    ItemKind,
    SkippedFile,
    StoredCard,
)
from scanpipe.store.statute import StatuteMixin
from scanpipe.store.transaction import Transaction, decision_record, insert_event
from scanpipe.types import CardKind, Election, InterpretedCard

__all__ = ["Store", "alembic_config", "election_from_json"]

IN_CHUNK = 500  # ids per IN (...) query
ITER_CHUNK = 2000  # cards per round trip of iter_cards
assert codec.SCORE_COLUMNS == tuple(c.name for c in target_score_table.columns)
_SQLITE_INSERT_SCORES = (f"INSERT INTO target_score ({', '.join(codec.SCORE_COLUMNS)}) "
                         f"VALUES ({', '.join('?' * len(codec.SCORE_COLUMNS))})")
_PG_COPY_SCORES = f"COPY target_score ({', '.join(codec.SCORE_COLUMNS)}) FROM STDIN"


class Store(PairsMixin, StatuteMixin, ViewMixin):
    """A scanpipe database: ``Store.open(url)``, ``migrate()``, then the methods below."""

    # ----------------------------------------------------------------------------------
    # election

    def load_election(self, definition: dict[str, Any], layouts: dict[str, dict[str, Any]], election: Election,
                      *, references: Mapping[tuple[str, int], bytes] | None = None, actor: str | None = None) -> bool:
        """Store this definition (with its layouts and reference scans) as the current
        election; True when it differs from the current one (history is kept).
        ``references`` are the scans' bytes where the caller already read them
        (``(style, page) -> bytes``); the others are read from the files."""
        scans = read_references(election, references)
        digest = definition_sha256(definition, layouts, scans)
        now = utcnow()
        with self._write() as conn:
            self._serialize(conn, PG_ELECTION_LOCK)
            current = conn.execute(select(election_table.c.sha256).order_by(election_table.c.row_id.desc()).limit(1)).scalar()
            if current == digest:
                return False
            row_id = conn.execute(election_table.insert().returning(election_table.c.row_id), {
                "id": election.id, "name": election.name, "jurisdiction": election.jurisdiction,
                "definition": definition, "layouts": layouts, "sha256": digest, "loaded_at": now,
                "base": str(election.path.parent) if election.path is not None else None,
            }).scalar_one()
            ledger.inserted(conn, "election", [row_id])
            if scans:
                conn.execute(layout_reference_table.insert(), [
                    {"election_row": row_id, "style": s, "page": p, "filename": name,
                     "sha256": hashlib.sha256(data).hexdigest(), "data": data}
                    for (s, p), (name, data) in scans.items()])
            insert_event(conn, "election_loaded", {"election": election.id, "sha256": digest,
                                                  "replaces": current}, actor, now)
        return True

    def elections(self) -> list[ElectionRecord]:
        """Every loaded version, oldest first; the last one is current."""
        with self._read() as conn:
            rows = conn.execute(select(election_table).order_by(election_table.c.row_id)).mappings().all()
        return [_election_record(r, current=(i == len(rows) - 1)) for i, r in enumerate(rows)]

    def current_election_record(self) -> ElectionRecord:
        with self._read() as conn:
            row = conn.execute(select(election_table).order_by(election_table.c.row_id.desc()).limit(1)).mappings().first()
        if row is None:
            raise StorageError(f"database {self.safe_url} holds no election: run 'scanpipe init --election FILE'")
        return _election_record(row, current=True)

    def current_election(self, *, reference_dir: Path | None = None) -> Election:
        """The current election rebuilt from the stored JSON. With ``reference_dir`` the
        stored reference scans are written there and the layout pages point at them (the
        original files are then not needed)."""
        record = self.current_election_record()
        election = election_from_json(record.definition, record.layouts,
                                      base=Path(record.base) if record.base is not None else None)
        if reference_dir is None:
            return election
        return with_references(election, self._write_references(record.row_id, reference_dir))

    def reference_scans(self) -> dict[tuple[str, int], bytes]:
        """The current election's reference scans: ``(style, page) -> file bytes``."""
        row_id = self.current_election_record().row_id
        t = layout_reference_table
        with self._read() as conn:
            rows = conn.execute(select(t.c.style, t.c.page, t.c.data).where(t.c.election_row == row_id)).all()
        return {(r.style, r.page): bytes(r.data) for r in rows}

    def layout_references(self) -> dict[tuple[str, int], bytes]:
        """The same as :meth:`reference_scans`."""
        return self.reference_scans()

    def _write_references(self, row_id: int, folder: Path) -> dict[tuple[str, int], Path]:
        t = layout_reference_table
        with self._read() as conn:
            rows = conn.execute(select(t).where(t.c.election_row == row_id)).mappings().all()
        paths = {}
        for r in rows:
            path = folder / f"{r['style']}-p{r['page']}-{r['sha256'][:12]}{Path(r['filename']).suffix}"
            if not path.is_file():
                folder.mkdir(parents=True, exist_ok=True)
                path.write_bytes(bytes(r["data"]))
            paths[(r["style"], r["page"])] = path
        return paths

    # ----------------------------------------------------------------------------------
    # batches

    def ensure_batch(self, name: str, *, style: str | None = None, precinct: str | None = None,
                     kind: CardKind | None = None) -> BatchRecord:
        """The batch, created if absent; hints given are remembered, hints not given come
        from what the batch remembers. A hint that contradicts the remembered one, or a
        voided batch, is a ConfigError."""
        given = {"style": style, "precinct": precinct, "kind": kind.value if kind is not None else None}
        now = utcnow()
        with self._write() as conn:
            created = conn.execute(self._insert(batch_table).on_conflict_do_nothing(index_elements=["name"])
                                   .returning(batch_table.c.name), {"name": name, "created_at": now, **given}).first()
            if created is not None:
                ledger.inserted(conn, "batch", [name])
                insert_event(conn, "batch_created", {"batch": name, **given}, None, now)
            else:
                row = conn.execute(select(batch_table).where(batch_table.c.name == name).with_for_update()).mappings().one()
                _check_batch_hints(row, given)
                fill = {k: v for k, v in given.items() if v is not None and row[k] is None}
                if fill:
                    ledger.before(conn, "batch", [name])
                    conn.execute(update(batch_table).where(batch_table.c.name == name).values(**fill))
            row = conn.execute(select(batch_table).where(batch_table.c.name == name)).mappings().one()
        return _batch_record(row)

    def list_batches(self) -> list[BatchRecord]:
        with self._read() as conn:
            rows = conn.execute(select(batch_table).order_by(batch_table.c.created_at, batch_table.c.name)).mappings().all()
        return [_batch_record(r) for r in rows]

    def void_batch(self, name: str, reason: str, *, actor: str | None = None) -> BatchRecord:
        """Void a batch so none of its cards count; logged. Voiding it again changes nothing."""
        if not reason.strip():
            raise ConfigError("voiding a batch needs a reason")
        now = utcnow()
        with self._write() as conn:
            row = conn.execute(select(batch_table).where(batch_table.c.name == name).with_for_update()).mappings().first()
            if row is None:
                raise ConfigError(f"there is no batch named {name!r}")
            if row["voided_at"] is None:
                ledger.before(conn, "batch", [name])
                conn.execute(update(batch_table).where(batch_table.c.name == name).values(voided_at=now, void_reason=reason))
                cards = conn.execute(select(func.count()).select_from(card_table).where(card_table.c.batch == name)).scalar_one()
                insert_event(conn, "batch_voided", {"batch": name, "reason": reason, "cards": cards}, actor, now)
            row = conn.execute(select(batch_table).where(batch_table.c.name == name)).mappings().one()
        return _batch_record(row)

    # ----------------------------------------------------------------------------------
    # cards

    def known_card_ids(self, ids: Iterable[str]) -> set[str]:
        return self._known(card_table.c.card_id, ids)

    def known_sha256(self, shas: Iterable[str]) -> set[str]:
        return self._known(card_table.c.sha256, shas)

    def _known(self, column: Any, values: Iterable[str]) -> set[str]:
        wanted = sorted(set(values))
        found: set[str] = set()
        with self._read() as conn:
            for i in range(0, len(wanted), IN_CHUNK):
                chunk = wanted[i:i + IN_CHUNK]
                found.update(conn.execute(select(column).where(column.in_(chunk)).distinct()).scalars())
        return found

    def save_card(self, card: InterpretedCard, *, thresholds_source: str | None = None) -> bool:
        """Store a card with its scores and readings if its id is new; True when inserted."""
        return self.save_cards([card], thresholds_source=thresholds_source) == 1

    def save_cards(self, cards: Iterable[InterpretedCard], *, thresholds_source: str | None = None) -> int:
        """Store many cards in one transaction (insert if absent); returns how many were new."""
        unique: dict[str, InterpretedCard] = {}
        for card in cards:
            unique.setdefault(card.source.card_id, card)
        if not unique:
            return 0
        now = utcnow()
        encoded = [codec.card_to_rows(c) for c in unique.values()]
        card_rows = [codec.stamp(r, now=now, thresholds_source=thresholds_source, seq=0) for r, _, _ in encoded]
        batches = sorted({c.source.batch for c in unique.values()})
        with self._write() as conn:
            new_batches = [b for b in batches if conn.execute(self._insert(batch_table).on_conflict_do_nothing(index_elements=["name"])
                                                              .returning(batch_table.c.name), {"name": b, "created_at": now}).first()]
            ledger.inserted(conn, "batch", new_batches)
            stmt = self._insert(card_table).on_conflict_do_nothing(index_elements=["card_id"]).returning(card_table.c.card_id)
            inserted = set(conn.execute(stmt, card_rows).scalars())
            self._insert_children(conn, [s for r, scores, _ in encoded if r["card_id"] in inserted for s in scores],
                                  [x for r, _, readings in encoded if r["card_id"] in inserted for x in readings])
            if inserted:
                ledger.inserted(conn, "card", inserted)
                insert_event(conn, "cards_stored", {"batches": batches, "cards": len(inserted)}, None, now)
        return len(inserted)

    def _insert_children(self, conn: Connection, scores: list[tuple[Any, ...]], readings: list[dict[str, Any]]) -> None:
        if scores:
            self._insert_scores(conn, scores)
        if readings:
            conn.execute(contest_reading_table.insert(), readings)

    def _insert_scores(self, conn: Connection, rows: list[tuple[Any, ...]]) -> None:
        """The hot path (about 40 rows a card): SQLAlchemy's per-row parameter processing
        cost more than the database itself, so the tuples go straight to SQLite's
        ``executemany``, or to PostgreSQL's ``COPY`` in the same transaction."""
        if self.dialect == "sqlite":
            conn.exec_driver_sql(_SQLITE_INSERT_SCORES, rows)
            return
        raw = conn.connection.driver_connection
        assert raw is not None
        with raw.cursor() as cur, cur.copy(_PG_COPY_SCORES) as copy:
            for row in rows:
                copy.write_row(row)

    def replace_interpretation(self, card: InterpretedCard, *, thresholds_source: str | None = None,
                               actor: str | None = None) -> int:
        """A person's ``identify``: replace the card's interpretation, scores and readings
        in one transaction; returns the new ``interpretation_seq``."""
        card_id = card.source.card_id
        row, scores, readings = codec.card_to_rows(card)
        kept = {"card_id", "sha256", "path", "page_index", "page_count", "batch"}
        now = utcnow()
        with self._write() as conn:
            old = conn.execute(select(card_table.c.sha256, card_table.c.interpretation_seq)
                               .where(card_table.c.card_id == card_id).with_for_update()).first()
            if old is None:
                raise DecisionError(f"there is no card {card_id}")
            if old.sha256 != card.source.sha256:
                raise DecisionError(f"card {card_id} was stored with sha256 {old.sha256}, not {card.source.sha256}")
            seq = old.interpretation_seq + 1
            ledger.before(conn, "card", [card_id])
            conn.execute(delete(target_score_table).where(target_score_table.c.card_id == card_id))
            conn.execute(delete(contest_reading_table).where(contest_reading_table.c.card_id == card_id))
            values = {k: v for k, v in row.items() if k not in kept}
            conn.execute(update(card_table).where(card_table.c.card_id == card_id).values(
                **values, interpreted_at=now, interpretation_seq=seq, thresholds_source=thresholds_source))
            self._insert_children(conn, scores, readings)
            insert_event(conn, "card_reinterpreted", {"card": card_id, "interpretation_seq": seq}, actor, now)
        return seq

    def card_files(self) -> dict[str, str]:
        """``path -> SHA-256`` of every stored card's file (a multi-page file once)."""
        with self._read() as conn:
            return {r.path: r.sha256 for r in conn.execute(select(card_table.c.path, card_table.c.sha256).distinct())}

    def known_sha256_all(self) -> set[str]:
        """The SHA-256 of every stored file."""
        with self._read() as conn:
            return set(conn.execute(select(card_table.c.sha256).distinct()).scalars())

    def batch_card_counts(self) -> dict[str, int]:
        """``batch name -> number of cards`` for every batch holding cards."""
        q = select(card_table.c.batch, func.count()).group_by(card_table.c.batch)
        with self._read() as conn:
            return {name: n for name, n in conn.execute(q)}

    def count_cards(self) -> int:
        with self._read() as conn:
            return conn.execute(select(func.count()).select_from(card_table)).scalar_one()

    def iter_cards(self, *, chunk: int = ITER_CHUNK, targets: bool = True) -> Iterator[StoredCard]:
        """Every card in card id order; a few queries per ``chunk`` cards, none per card.
        No transaction is held while the caller consumes a chunk.

        ``targets=False`` leaves out each read card's per-target raw scores (``targets`` is
        then empty): what counting needs (every contest reading, every status) costs a
        third of the time at 100,000 cards. Exports and views load cards whole."""
        last: str | None = None
        while True:
            with self._read() as conn:
                cond = card_table.c.card_id > last if last is not None else None
                cards = self._load_cards(conn, cond, limit=chunk, targets=targets)
            yield from cards
            if len(cards) < chunk:
                return
            last = cards[-1].card_id

    def cards_of_serial(self, base_serial: str, also: Sequence[str] = (), *, targets: bool = True) -> list[StoredCard]:
        """Cards whose label carries ``base_serial`` (any revision), and the cards ``also``
        (e.g. those a person stated the serial of), in card id order."""
        cond = card_table.c.base_serial == base_serial
        if also:
            cond = cond | card_table.c.card_id.in_(list(also))
        with self._read() as conn:
            return self._load_cards(conn, cond, limit=1_000_000, targets=targets)

    def get_card(self, card_id: str) -> StoredCard | None:
        with self._read() as conn:
            found = self._load_cards(conn, card_table.c.card_id == card_id, limit=1)
        return found[0] if found else None

    def get_cards(self, card_ids: Iterable[str], *, targets: bool = True) -> dict[str, StoredCard]:
        """The stored cards among ``card_ids``, by card id (ids not stored are left out); a few
        queries per IN_CHUNK ids. ``targets=False`` as for :meth:`iter_cards`."""
        wanted = sorted(set(card_ids))
        found: dict[str, StoredCard] = {}
        for i in range(0, len(wanted), IN_CHUNK):
            with self._read() as conn:
                chunk = self._load_cards(conn, card_table.c.card_id.in_(wanted[i:i + IN_CHUNK]), limit=IN_CHUNK, targets=targets)
            found.update((c.card_id, c) for c in chunk)
        return found

    def find_card_by_path(self, path: str, *, page: int = 1) -> StoredCard | None:
        """The card ingested from ``path`` (as ingest found it), page ``page`` of the file."""
        with self._read() as conn:
            found = self._load_cards(conn, (card_table.c.path == path) & (card_table.c.page_index == page), limit=1)
        return found[0] if found else None

    def _load_cards(self, conn: Connection, cond: ColumnElement[bool] | None, *, limit: int, targets: bool = True) -> list[StoredCard]:
        q = select(card_table, batch_table.c.voided_at).join(batch_table, batch_table.c.name == card_table.c.batch)
        if cond is not None:
            q = q.where(cond)
        rows = conn.execute(q.order_by(card_table.c.card_id).limit(limit)).mappings().all()
        if not rows:
            return []
        ids = [r["card_id"] for r in rows]
        scores = _children(conn, target_score_table, ids, as_tuples=True) if targets else {}
        readings = _readings(conn, ids)
        return [StoredCard(card=codec.rows_to_card(r, scores.get(r["card_id"], ()), readings.get(r["card_id"], ())),
                           ingested_at=r["ingested_at"], interpreted_at=r["interpreted_at"],
                           batch_voided=r["voided_at"] is not None, interpretation_seq=r["interpretation_seq"],
                           thresholds_source=r["thresholds_source"]) for r in rows]

    # ----------------------------------------------------------------------------------
    # decisions and identifications

    @contextmanager
    def transaction(self) -> Iterator[Transaction]:
        """One write transaction for reading, planning and writing decisions together."""
        with self._write() as conn:
            yield Transaction(conn, self.dialect)

    def add_decision(self, item: str, item_kind: ItemKind | str, contest: str, votes: Sequence[str],
                     auditors: Sequence[str], *, state: DecisionState | str, rule: str | None = None,
                     note: str | None = None, supersedes: int | None = None) -> DecisionRecord:
        """Append a decision (see :meth:`Transaction.add_decision`)."""
        with self.transaction() as tx:
            return tx.add_decision(item, item_kind, contest, votes, auditors, state=state, rule=rule, note=note,
                                   supersedes=supersedes)

    def decisions(self, item: str | None = None) -> list[DecisionRecord]:
        """Decisions in the order they were made, all of them or those on ``item``."""
        q = select(decision_table).order_by(decision_table.c.id)
        if item is not None:
            q = q.where(decision_table.c.item == item)
        with self._read() as conn:
            return [decision_record(r) for r in conn.execute(q).mappings()]

    def set_decision_state(self, decision_id: int, state: DecisionState | str) -> DecisionRecord:
        """Move a decision on (see :meth:`Transaction.set_decision_state`)."""
        with self.transaction() as tx:
            return tx.set_decision_state(decision_id, state)

    def set_identification(self, card_id: str, *, style: str | None = None, page: int | None = None,
                           precinct: str | None = None, kind: CardKind | None = None,
                           serial: str | None = None) -> None:
        """Remember what a person stated about a card (``identify``); what this call leaves
        out keeps what an earlier call stated."""
        given = {"style": style, "page": page, "precinct": precinct, "kind": kind.value if kind else None, "serial": serial}
        t = identification_table
        with self._write() as conn:
            if conn.execute(select(card_table.c.card_id).where(card_table.c.card_id == card_id)).first() is None:
                raise DecisionError(f"there is no card {card_id}")
            old = conn.execute(select(t).where(t.c.card_id == card_id).with_for_update()).mappings().first()
            ledger.before(conn, "identification", [card_id])
            merged = {k: v if v is not None else (old[k] if old is not None else None) for k, v in given.items()}
            if old is None:
                conn.execute(t.insert(), {"card_id": card_id, **merged, "at": utcnow()})
            else:
                conn.execute(update(t).where(t.c.card_id == card_id).values(**merged, at=utcnow()))

    def identifications(self) -> dict[str, tuple[str | None, str | None]]:
        """``card id -> (style, precinct)`` a person stated, for every identified card."""
        t = identification_table
        with self._read() as conn:
            return {r.card_id: (r.style, r.precinct) for r in conn.execute(select(t.c.card_id, t.c.style, t.c.precinct))}

    # ----------------------------------------------------------------------------------
    # skipped files and events

    def record_skipped(self, path: str, batch: str, reason: str) -> None:
        """Note a file ingest did not read; noting it again changes nothing."""
        with self._write() as conn:
            conn.execute(self._insert(skipped_file_table).on_conflict_do_nothing(index_elements=["path", "batch"]),
                         {"path": path, "batch": batch, "reason": reason, "at": utcnow()})

    def skipped_files(self, batch: str | None = None) -> list[SkippedFile]:
        t = skipped_file_table
        q = select(t).order_by(t.c.id)
        if batch is not None:
            q = q.where(t.c.batch == batch)
        with self._read() as conn:
            return [SkippedFile(path=r.path, batch=r.batch, reason=r.reason, at=r.at) for r in conn.execute(q)]

    def clear_skipped(self, paths: Iterable[str]) -> list[str]:
        """Forget skipped entries at ``paths`` (in any batch) now that they were read; returns
        the paths that had been recorded."""
        wanted = sorted(set(paths))
        t = skipped_file_table
        cleared: set[str] = set()
        with self._write() as conn:
            for i in range(0, len(wanted), 500):
                chunk = wanted[i:i + 500]
                cleared |= {r.path for r in conn.execute(select(t.c.path).where(t.c.path.in_(chunk)))}
                conn.execute(delete(t).where(t.c.path.in_(chunk)))
        return sorted(cleared)

    def log_event(self, action: str, detail: Mapping[str, Any], actor: str | None = None) -> int:
        """Append one event to the operational log; returns its id."""
        with self._write() as conn:
            return insert_event(conn, action, detail, actor, utcnow())

    def events(self, action: str | None = None) -> list[EventRecord]:
        q = select(event_table).order_by(event_table.c.id)
        if action is not None:
            q = q.where(event_table.c.action == action)
        with self._read() as conn:
            return [EventRecord(id=r.id, at=r.at, actor=r.actor, action=r.action, detail=r.detail,
                                prev_hash=r.prev_hash, hash=r.hash) for r in conn.execute(q)]


# --------------------------------------------------------------------------------------
# helpers


_READING_JSON = ("votes", "unknown_options")


def _readings(conn: Connection, ids: list[str]) -> dict[str, list[Any]]:
    """Contest readings of these cards, their two small JSON lists decoded once per distinct
    text: a few distinct values (``[]``, ``["gov-a"]``...) repeat over hundreds of thousands
    of rows, and decoding each row's copy was half the time of reading every card."""
    t = contest_reading_table
    columns = [type_coerce(c, Text).label(c.name) if c.name in _READING_JSON else c for c in t.c]
    grouped = _children(conn, t, ids, columns=columns)
    memo: dict[str, Any] = {}

    def decoded(value: Any) -> Any:
        if not isinstance(value, str):  # PostgreSQL's driver hands JSON over decoded already
            return value
        if value not in memo:
            memo[value] = json.loads(value)
        return memo[value]  # shared between rows: the codec only reads it (into tuples)

    return {cid: [{**r, **{k: decoded(r[k]) for k in _READING_JSON}} for r in rows] for cid, rows in grouped.items()}


def _children(conn: Connection, table: Table, ids: list[str], *, as_tuples: bool = False,
              columns: Sequence[Any] | None = None) -> dict[str, list[Any]]:
    """Rows of ``table`` for these cards (``ids`` in card id order), grouped by card id, in
    position order: one query for all of them, fetched at once."""
    q = select(*(columns if columns is not None else table.c)).order_by(table.c.card_id, table.c.position)
    if len(ids) == 1:
        q = q.where(table.c.card_id == ids[0])
    else:
        q = q.where(table.c.card_id.between(ids[0], ids[-1]))
    result = conn.execute(q)
    rows: Sequence[Any] = result.all() if as_tuples else result.mappings().all()
    grouped: dict[str, list[Any]] = defaultdict(list)
    wanted = set(ids)
    for r in rows:
        key = r[0] if as_tuples else r["card_id"]
        if key in wanted:
            grouped[key].append(r)
    return grouped


def _check_batch_hints(row: Mapping[Any, Any], given: Mapping[str, str | None]) -> None:
    if row["voided_at"] is not None:
        raise ConfigError(f"batch {row['name']!r} was voided ({row['void_reason']}); ingest into a new batch")
    for key, value in given.items():
        if value is not None and row[key] is not None and row[key] != value:
            raise ConfigError(f"batch {row['name']!r} was ingested with --{key} {row[key]}; "
                              f"it cannot also be --{key} {value} (use another --batch)")


def _batch_record(r: Mapping[Any, Any]) -> BatchRecord:
    return BatchRecord(name=r["name"], created_at=r["created_at"], style=r["style"], precinct=r["precinct"],
                       kind=CardKind(r["kind"]) if r["kind"] is not None else None,
                       voided_at=r["voided_at"], void_reason=r["void_reason"])


def _election_record(r: Mapping[Any, Any], *, current: bool) -> ElectionRecord:
    return ElectionRecord(row_id=r["row_id"], id=r["id"], name=r["name"], jurisdiction=r["jurisdiction"],
                          definition=r["definition"], layouts=r["layouts"], sha256=r["sha256"],
                          loaded_at=r["loaded_at"], base=r["base"], current=current)
