"""The repository: the only code of scanpipe that opens database sessions.

Every public method is one transaction. Writes begin with ``BEGIN IMMEDIATE`` on SQLite
(see :mod:`scanpipe.store.engine`); cards are inserted if absent (``ON CONFLICT DO NOTHING``)
so two processes ingesting the same file never double-insert and never fail. Database
failures come out as :class:`StorageError` naming the URL (password hidden) and the reason.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
from collections import defaultdict
from collections.abc import Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from datetime import datetime
from pathlib import Path
from typing import Any

from alembic import command
from alembic.config import Config
from alembic.runtime.migration import MigrationContext
from alembic.script import ScriptDirectory
from sqlalchemy import Connection, ColumnElement, Table, delete, func, select, update
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.exc import DBAPIError

from scanpipe.errors import ConfigError, DecisionError, StorageError
from scanpipe.store import codec
from scanpipe.store.engine import READ, make_engine, parse_url, safe_url
from scanpipe.store.models import (
    batch_table,
    card_table,
    contest_reading_table,
    decision_table,
    election_table,
    event_table,
    layout_reference_table,
    skipped_file_table,
    target_score_table,
    utcnow,
)
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
from scanpipe.types import CardKind, Election, InterpretedCard

MIGRATIONS = Path(__file__).parent / "migrations"
SUPPORTED = ("sqlite", "postgresql")
IN_CHUNK = 500  # ids per IN (...) query
ITER_CHUNK = 2000  # cards per round trip of iter_cards
_PG_MIGRATE_LOCK = 0x5CA9_91BE  # advisory lock keys (PostgreSQL): one migrator at a time,
_PG_ELECTION_LOCK = 0x5CA9_91BF  # one election loader at a time


def alembic_config() -> Config:
    """The Alembic configuration, built in code (no alembic.ini)."""
    cfg = Config()
    cfg.set_main_option("script_location", str(MIGRATIONS))
    return cfg


class Store:
    """A scanpipe database. ``Store.open(url)`` checks that it can be reached."""

    def __init__(self, url: str) -> None:
        parsed = parse_url(url)
        if parsed.get_backend_name() not in SUPPORTED:
            raise StorageError(f"cannot open database {safe_url(parsed)}: scanpipe supports SQLite and PostgreSQL")
        self.url = url
        self.safe_url = safe_url(parsed)
        self.engine = make_engine(url)
        self.dialect = self.engine.dialect.name

    @classmethod
    def open(cls, url: str) -> Store:
        """Open (creating a SQLite file if needed) and check the database answers."""
        store = cls(url)
        try:
            with store._read() as conn:
                conn.exec_driver_sql("SELECT 1")
        except StorageError:
            store.close()
            raise
        return store

    def close(self) -> None:
        self.engine.dispose()

    def __enter__(self) -> Store:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # ----------------------------------------------------------------------------------
    # transactions

    @contextmanager
    def _write(self) -> Iterator[Connection]:
        """One write transaction (``BEGIN IMMEDIATE`` on SQLite)."""
        try:
            with self.engine.begin() as conn:
                yield conn
        except DBAPIError as e:
            raise self._error(e) from e

    @contextmanager
    def _read(self) -> Iterator[Connection]:
        """One read transaction (deferred ``BEGIN`` on SQLite: never blocks writers)."""
        try:
            with self.engine.connect() as conn:
                conn = conn.execution_options(**{READ: True})
                with conn.begin():
                    yield conn
        except DBAPIError as e:
            raise self._error(e) from e

    def _error(self, e: DBAPIError) -> StorageError:
        reason = str(e.orig).strip().splitlines()[0] if e.orig is not None else str(e)
        return StorageError(f"database {self.safe_url}: {reason}")

    def _serialize(self, conn: Connection, key: int) -> None:
        """Make this transaction the only one holding ``key`` (SQLite's BEGIN IMMEDIATE already is)."""
        if self.dialect == "postgresql":
            conn.exec_driver_sql(f"SELECT pg_advisory_xact_lock({key})")

    def _insert(self, table: Table) -> Any:
        return (postgresql.insert(table) if self.dialect == "postgresql" else sqlite.insert(table))

    # ----------------------------------------------------------------------------------
    # schema

    def migrate(self) -> None:
        """Create or upgrade the schema to the newest revision (a no-op when it is there)."""
        cfg = alembic_config()
        with self._write() as conn:
            self._serialize(conn, _PG_MIGRATE_LOCK)
            cfg.attributes["connection"] = conn
            command.upgrade(cfg, "head")

    def schema_revision(self) -> str | None:
        with self._read() as conn:
            return MigrationContext.configure(conn).get_current_revision()

    @staticmethod
    def head_revision() -> str:
        head = ScriptDirectory.from_config(alembic_config()).get_current_head()
        assert head is not None
        return head

    def require_schema(self) -> None:
        """Raise StorageError unless the schema is at the newest revision."""
        current, head = self.schema_revision(), self.head_revision()
        if current is None:
            raise StorageError(f"database {self.safe_url} is not initialized: run 'scanpipe init --election FILE'")
        if current != head:
            raise StorageError(f"database {self.safe_url} is at schema {current}, this scanpipe needs {head}: "
                               "run 'scanpipe init --election FILE' to migrate it")

    # ----------------------------------------------------------------------------------
    # election

    def load_election(self, definition: dict[str, Any], layouts: dict[str, dict[str, Any]], election: Election,
                      *, actor: str | None = None) -> bool:
        """Store this definition (with its layouts and reference scans) as the current
        election; True when it differs from the current one (history is kept)."""
        references = _read_references(election)
        digest = _definition_sha256(definition, layouts, references)
        now = utcnow()
        with self._write() as conn:
            self._serialize(conn, _PG_ELECTION_LOCK)
            current = conn.execute(select(election_table.c.sha256).order_by(election_table.c.row_id.desc()).limit(1)).scalar()
            if current == digest:
                return False
            row_id = conn.execute(election_table.insert().returning(election_table.c.row_id), {
                "id": election.id, "name": election.name, "jurisdiction": election.jurisdiction,
                "definition": definition, "layouts": layouts, "sha256": digest, "loaded_at": now,
                "base": str(election.path.parent) if election.path is not None else None,
            }).scalar_one()
            if references:
                conn.execute(layout_reference_table.insert(), [
                    {"election_row": row_id, "style": s, "page": p, "filename": name,
                     "sha256": hashlib.sha256(data).hexdigest(), "data": data}
                    for (s, p), (name, data) in references.items()])
            self._event(conn, "election_loaded", {"election": election.id, "sha256": digest,
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
        return _with_references(election, self._write_references(record.row_id, reference_dir))

    def reference_scans(self) -> dict[tuple[str, int], bytes]:
        """The current election's reference scans: ``(style, page) -> file bytes``."""
        row_id = self.current_election_record().row_id
        t = layout_reference_table
        with self._read() as conn:
            rows = conn.execute(select(t.c.style, t.c.page, t.c.data).where(t.c.election_row == row_id)).all()
        return {(r.style, r.page): bytes(r.data) for r in rows}

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
                self._event(conn, "batch_created", {"batch": name, **given}, None, now)
            else:
                row = conn.execute(select(batch_table).where(batch_table.c.name == name).with_for_update()).mappings().one()
                _check_batch_hints(row, given)
                fill = {k: v for k, v in given.items() if v is not None and row[k] is None}
                if fill:
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
                conn.execute(update(batch_table).where(batch_table.c.name == name).values(voided_at=now, void_reason=reason))
                cards = conn.execute(select(func.count()).select_from(card_table).where(card_table.c.batch == name)).scalar_one()
                self._event(conn, "batch_voided", {"batch": name, "reason": reason, "cards": cards}, actor, now)
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
            conn.execute(self._insert(batch_table).on_conflict_do_nothing(index_elements=["name"]),
                         [{"name": b, "created_at": now} for b in batches])
            stmt = self._insert(card_table).on_conflict_do_nothing(index_elements=["card_id"]).returning(card_table.c.card_id)
            inserted = set(conn.execute(stmt, card_rows).scalars())
            self._insert_children(conn, [s for r, scores, _ in encoded if r["card_id"] in inserted for s in scores],
                                  [x for r, _, readings in encoded if r["card_id"] in inserted for x in readings])
        return len(inserted)

    def _insert_children(self, conn: Connection, scores: list[dict[str, Any]], readings: list[dict[str, Any]]) -> None:
        if scores:
            conn.execute(target_score_table.insert(), scores)
        if readings:
            conn.execute(contest_reading_table.insert(), readings)

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
            conn.execute(delete(target_score_table).where(target_score_table.c.card_id == card_id))
            conn.execute(delete(contest_reading_table).where(contest_reading_table.c.card_id == card_id))
            values = {k: v for k, v in row.items() if k not in kept}
            conn.execute(update(card_table).where(card_table.c.card_id == card_id).values(
                **values, interpreted_at=now, interpretation_seq=seq, thresholds_source=thresholds_source))
            self._insert_children(conn, scores, readings)
            self._event(conn, "card_reinterpreted", {"card": card_id, "interpretation_seq": seq}, actor, now)
        return seq

    def count_cards(self) -> int:
        with self._read() as conn:
            return conn.execute(select(func.count()).select_from(card_table)).scalar_one()

    def iter_cards(self, *, chunk: int = ITER_CHUNK) -> Iterator[StoredCard]:
        """Every card in card id order; a few queries per ``chunk`` cards, none per card.
        No transaction is held while the caller consumes a chunk."""
        last: str | None = None
        while True:
            with self._read() as conn:
                cond = card_table.c.card_id > last if last is not None else None
                cards = self._load_cards(conn, cond, limit=chunk)
            yield from cards
            if len(cards) < chunk:
                return
            last = cards[-1].card_id

    def get_card(self, card_id: str) -> StoredCard | None:
        with self._read() as conn:
            found = self._load_cards(conn, card_table.c.card_id == card_id, limit=1)
        return found[0] if found else None

    def find_card_by_path(self, path: str, *, page: int = 1) -> StoredCard | None:
        """The card ingested from ``path`` (as ingest found it), page ``page`` of the file."""
        with self._read() as conn:
            found = self._load_cards(conn, (card_table.c.path == path) & (card_table.c.page_index == page), limit=1)
        return found[0] if found else None

    def _load_cards(self, conn: Connection, cond: ColumnElement[bool] | None, *, limit: int) -> list[StoredCard]:
        q = select(card_table, batch_table.c.voided_at).join(batch_table, batch_table.c.name == card_table.c.batch)
        if cond is not None:
            q = q.where(cond)
        rows = conn.execute(q.order_by(card_table.c.card_id).limit(limit)).mappings().all()
        if not rows:
            return []
        ids = [r["card_id"] for r in rows]
        scores = _children(conn, target_score_table, ids)
        readings = _children(conn, contest_reading_table, ids)
        return [StoredCard(card=codec.rows_to_card(r, scores.get(r["card_id"], ()), readings.get(r["card_id"], ())),
                           ingested_at=r["ingested_at"], interpreted_at=r["interpreted_at"],
                           batch_voided=r["voided_at"] is not None, interpretation_seq=r["interpretation_seq"],
                           thresholds_source=r["thresholds_source"]) for r in rows]

    # ----------------------------------------------------------------------------------
    # decisions

    def add_decision(self, item: str, item_kind: ItemKind, contest: str, votes: Sequence[str],
                     auditors: Sequence[str], *, state: DecisionState, rule: str | None = None,
                     note: str | None = None, supersedes: int | None = None) -> DecisionRecord:
        """Append a decision; when it ``supersedes`` an earlier one (same item and contest),
        that one becomes ``superseded`` in the same transaction."""
        if not auditors or any(not a.strip() for a in auditors):
            raise DecisionError("a decision needs at least one named auditor")
        now = utcnow()
        t = decision_table
        with self._write() as conn:
            if supersedes is not None:
                old = conn.execute(select(t).where(t.c.id == supersedes)).mappings().first()
                if old is None or (old["item"], old["contest"]) != (item, contest):
                    raise DecisionError(f"decision {supersedes} is not a decision on {item} contest {contest}")
                if old["state"] == DecisionState.SUPERSEDED:
                    raise DecisionError(f"decision {supersedes} was already superseded")
                conn.execute(update(t).where(t.c.id == supersedes).values(state=DecisionState.SUPERSEDED.value))
            row = conn.execute(t.insert().returning(*t.c), {
                "item": item, "item_kind": ItemKind(item_kind).value, "contest": contest, "votes": list(votes),
                "auditors": list(auditors), "rule": rule, "note": note, "state": DecisionState(state).value,
                "created_at": now, "supersedes": supersedes}).mappings().one()
        return _decision_record(row)

    def decisions(self, item: str | None = None) -> list[DecisionRecord]:
        """Decisions in the order they were made, all of them or those on ``item``."""
        q = select(decision_table).order_by(decision_table.c.id)
        if item is not None:
            q = q.where(decision_table.c.item == item)
        with self._read() as conn:
            return [_decision_record(r) for r in conn.execute(q).mappings()]

    def set_decision_state(self, decision_id: int, state: DecisionState) -> DecisionRecord:
        """Move a decision on (first_half -> final | escalated ...); a superseded decision stays so."""
        t = decision_table
        with self._write() as conn:
            old = conn.execute(select(t.c.state).where(t.c.id == decision_id).with_for_update()).scalar()
            if old is None:
                raise DecisionError(f"there is no decision {decision_id}")
            if old == DecisionState.SUPERSEDED and state != DecisionState.SUPERSEDED:
                raise DecisionError(f"decision {decision_id} was superseded; it cannot become {state}")
            conn.execute(update(t).where(t.c.id == decision_id).values(state=DecisionState(state).value))
            row = conn.execute(select(t).where(t.c.id == decision_id)).mappings().one()
        return _decision_record(row)

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

    def log_event(self, action: str, detail: Mapping[str, Any], actor: str | None = None) -> int:
        """Append one event to the operational log; returns its id."""
        with self._write() as conn:
            return self._event(conn, action, detail, actor, utcnow())

    def events(self, action: str | None = None) -> list[EventRecord]:
        q = select(event_table).order_by(event_table.c.id)
        if action is not None:
            q = q.where(event_table.c.action == action)
        with self._read() as conn:
            return [EventRecord(id=r.id, at=r.at, actor=r.actor, action=r.action, detail=r.detail,
                                prev_hash=r.prev_hash, hash=r.hash) for r in conn.execute(q)]

    @staticmethod
    def _event(conn: Connection, action: str, detail: Mapping[str, Any], actor: str | None, at: datetime) -> int:
        return conn.execute(event_table.insert().returning(event_table.c.id),
                            {"at": at, "actor": actor, "action": action, "detail": dict(detail)}).scalar_one()


# --------------------------------------------------------------------------------------
# helpers


def election_from_json(definition: dict[str, Any], layouts: dict[str, dict[str, Any]], *,
                       base: Path | None = None) -> Election:
    """Rebuild typed election values from stored JSON (reference files are not checked)."""
    from scanpipe.election import parse_election

    return parse_election(definition, layouts, base=base, check_files=False)


def _read_references(election: Election) -> dict[tuple[str, int], tuple[str, bytes]]:
    refs = {}
    for style in election.ballot_styles:
        for page in style.layout.pages:
            if page.reference is None:
                continue
            try:
                refs[(style.id, page.page)] = (page.reference.name, page.reference.read_bytes())
            except OSError as e:
                raise ConfigError(f"reference scan {page.reference} of style {style.id} page {page.page} "
                                  f"cannot be read: {e.strerror or e}") from e
    return refs


def _definition_sha256(definition: dict[str, Any], layouts: dict[str, dict[str, Any]],
                       references: Mapping[tuple[str, int], tuple[str, bytes]]) -> str:
    refs = {f"{s}/{p}": hashlib.sha256(data).hexdigest() for (s, p), (_, data) in sorted(references.items())}
    blob = json.dumps({"definition": definition, "layouts": layouts, "references": refs},
                      sort_keys=True, separators=(",", ":"), ensure_ascii=True)
    return hashlib.sha256(blob.encode()).hexdigest()


def _with_references(election: Election, paths: Mapping[tuple[str, int], Path]) -> Election:
    def style(s: Any) -> Any:
        pages = tuple(dataclasses.replace(p, reference=paths[(s.id, p.page)]) if (s.id, p.page) in paths else p
                      for p in s.layout.pages)
        return dataclasses.replace(s, layout=dataclasses.replace(s.layout, pages=pages))

    return dataclasses.replace(election, ballot_styles=tuple(style(s) for s in election.ballot_styles))


def _children(conn: Connection, table: Table, ids: list[str]) -> dict[str, list[Any]]:
    """Rows of ``table`` for these cards, grouped by card id, in position order."""
    q = select(table).order_by(table.c.card_id, table.c.position)
    if len(ids) == 1:
        q = q.where(table.c.card_id == ids[0])
    else:
        q = q.where(table.c.card_id.between(ids[0], ids[-1]))  # ids are in card id order
    grouped: dict[str, list[Any]] = defaultdict(list)
    wanted = set(ids)
    for r in conn.execute(q).mappings():
        if r["card_id"] in wanted:
            grouped[r["card_id"]].append(r)
    return grouped


def _check_batch_hints(row: Mapping[str, Any], given: Mapping[str, str | None]) -> None:
    if row["voided_at"] is not None:
        raise ConfigError(f"batch {row['name']!r} was voided ({row['void_reason']}); ingest into a new batch")
    for key, value in given.items():
        if value is not None and row[key] is not None and row[key] != value:
            raise ConfigError(f"batch {row['name']!r} was ingested with --{key} {row[key]}; "
                              f"it cannot also be --{key} {value} (use another --batch)")


def _batch_record(r: Mapping[str, Any]) -> BatchRecord:
    return BatchRecord(name=r["name"], created_at=r["created_at"], style=r["style"], precinct=r["precinct"],
                       kind=CardKind(r["kind"]) if r["kind"] is not None else None,
                       voided_at=r["voided_at"], void_reason=r["void_reason"])


def _decision_record(r: Mapping[str, Any]) -> DecisionRecord:
    return DecisionRecord(id=r["id"], item=r["item"], item_kind=ItemKind(r["item_kind"]), contest=r["contest"],
                          votes=tuple(r["votes"]), auditors=tuple(r["auditors"]), rule=r["rule"], note=r["note"],
                          state=DecisionState(r["state"]), created_at=r["created_at"], supersedes=r["supersedes"])


def _election_record(r: Mapping[str, Any], *, current: bool) -> ElectionRecord:
    return ElectionRecord(row_id=r["row_id"], id=r["id"], name=r["name"], jurisdiction=r["jurisdiction"],
                          definition=r["definition"], layouts=r["layouts"], sha256=r["sha256"],
                          loaded_at=r["loaded_at"], base=r["base"], current=current)
