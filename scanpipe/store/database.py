"""Engine, transactions and schema: the base every repository method runs on.

``_write()`` is one write transaction (``BEGIN IMMEDIATE`` on SQLite), ``_read()`` one read
transaction (deferred ``BEGIN``: never blocks writers under WAL). Database failures come out
as :class:`StorageError` naming the URL (password hidden) and the reason. Migrations are
Alembic's, kept in ``migrations/`` beside this module and run in code (no alembic.ini);
Alembic is imported only to migrate: every other command checks the schema against
:data:`SCHEMA_HEAD` with one query (a test keeps the constant equal to Alembic's head).
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any, Self

from sqlalchemy import Connection, Table, text
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.exc import DBAPIError

from scanpipe.errors import StorageError
from scanpipe.store import ledger
from scanpipe.store.engine import READ, make_engine, parse_url, safe_url, sqlite_path
from scanpipe.store.models import utcnow
from scanpipe.store.transaction import insert_event

if TYPE_CHECKING:
    from alembic.config import Config

MIGRATIONS = Path(__file__).parent / "migrations"
SUPPORTED = ("sqlite", "postgresql")
PG_MIGRATE_LOCK = 0x5CA9_91BE  # advisory lock keys (PostgreSQL): one migrator at a time,
PG_ELECTION_LOCK = 0x5CA9_91BF  # one election loader at a time
SCHEMA_HEAD = "0012"  # the newest migration's revision (tests/test_store.py checks it against Alembic)


def alembic_config() -> Config:
    """The Alembic configuration, built in code (no alembic.ini)."""
    from alembic.config import Config

    cfg = Config()
    cfg.set_main_option("script_location", str(MIGRATIONS))
    return cfg


class Database:
    """Engine, transactions and schema of a scanpipe database (the base of
    :class:`scanpipe.store.repository.Store`). ``open(url)`` checks that it can be reached."""

    def __init__(self, url: str) -> None:
        parsed = parse_url(url)
        if parsed.get_backend_name() not in SUPPORTED:
            raise StorageError(f"cannot open database {safe_url(parsed)}: scanpipe supports SQLite and PostgreSQL")
        self.url = url
        self.safe_url = safe_url(parsed)
        self.engine = make_engine(url)
        self.dialect = self.engine.dialect.name

    @classmethod
    def open(cls, url: str, *, create: bool = True) -> Self:
        """Open (creating a SQLite file if needed, unless ``create`` is false) and check the
        database answers. With ``create=False`` a missing SQLite file is a StorageError
        and no empty file is left behind."""
        if not create:
            parsed = parse_url(url)
            path = sqlite_path(parsed) if parsed.get_backend_name() == "sqlite" else None
            if path is not None and not path.exists():
                raise StorageError(f"database {path} does not exist: run 'scanpipe init --election FILE' to create it "
                                   "(or point --db / SCANPIPE_DB at the database you meant)")
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

    def __enter__(self) -> Self:
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
                ledger.begin(conn)
                try:
                    yield conn
                    if ledger.has_pending(conn):  # covered rows no entry recorded yet: one entry for them
                        insert_event(conn, "rows_changed", {}, None, utcnow())
                finally:
                    ledger.end(conn)
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
        from alembic import command
        from alembic.runtime.migration import MigrationContext

        cfg = alembic_config()
        with self._write() as conn:
            self._serialize(conn, PG_MIGRATE_LOCK)
            before = MigrationContext.configure(conn).get_current_revision()
            cfg.attributes["connection"] = conn
            command.upgrade(cfg, "head")
            after = MigrationContext.configure(conn).get_current_revision()
            if after != before:
                insert_event(conn, "schema_migrated", {"from": before, "to": after}, None, utcnow())
            self._start_ledger(conn)

    def _start_ledger(self, conn: Connection) -> None:
        """The first time: one log entry records every covered row already stored (rows written
        before the log covered rows); from then on every write records its rows."""
        from sqlalchemy import select

        from scanpipe.store.models import event_table

        started = conn.execute(select(event_table.c.id).where(event_table.c.action == "ledger_started").limit(1)).first()
        if started is not None:
            return
        for name in ledger.COVERED:
            ledger.before(conn, name, [])  # (nothing pending from before)
            ledger.inserted(conn, name, [key for key, _ in ledger.all_digests(conn, name)])
        insert_event(conn, "ledger_started", {"note": "from here on every row that can change a count is recorded in this log; "
                                                      "rows listed here were stored before"}, None, utcnow())

    def schema_revision(self) -> str | None:
        """The revision recorded in ``alembic_version``; None before the first migration."""
        with self._read() as conn:
            if not conn.dialect.has_table(conn, "alembic_version"):
                return None
            rows = conn.execute(text("SELECT version_num FROM alembic_version")).scalars().all()
        if len(rows) > 1:
            raise StorageError(f"database {self.safe_url}: alembic_version holds {len(rows)} revisions ({', '.join(rows)})")
        return rows[0] if rows else None

    @staticmethod
    def head_revision() -> str:
        return SCHEMA_HEAD

    def require_schema(self) -> None:
        """Raise StorageError unless the schema is at the newest revision."""
        current, head = self.schema_revision(), self.head_revision()
        if current is None:
            raise StorageError(f"database {self.safe_url} is not initialized: run 'scanpipe init --election FILE'")
        if current != head:
            raise StorageError(f"database {self.safe_url} is at schema {current}, this scanpipe needs {head}: "
                               "run 'scanpipe init --election FILE' to migrate it")
