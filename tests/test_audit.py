"""The hash-chained audit log: appends chain, and edits, deletions and reorderings are named."""

from __future__ import annotations

from pathlib import Path

from click.testing import CliRunner
from sqlalchemy import delete, select, update

from scanpipe.audit import GENESIS, append_event, verify_chain
from scanpipe.store.models import event_table, utcnow
from scanpipe.store.repository import Store


def _store(db_url: str) -> Store:
    store = Store.open(db_url)
    store.migrate()
    with store._write() as conn:
        for i in range(5):
            append_event(conn, "decision", {"item": f"c{i}", "votes": ["gov-a"], "n": i}, "alice", utcnow())
    return store


def _verify(store: Store):
    with store._read() as conn:
        return verify_chain(conn)


def _ids(store: Store) -> list[int]:
    with store._read() as conn:
        return list(conn.execute(select(event_table.c.id).order_by(event_table.c.id)).scalars())


def test_appends_chain_from_the_genesis_and_verify(db_url: str) -> None:
    store = _store(db_url)
    report = _verify(store)
    assert report.ok and report.entries == len(_ids(store)) >= 6
    with store._read() as conn:
        first = conn.execute(select(event_table).order_by(event_table.c.id).limit(1)).mappings().one()
    assert first["prev_hash"] == GENESIS and len(report.head) == 64


def test_an_edited_entry_is_named(db_url: str) -> None:
    store = _store(db_url)
    target = _ids(store)[3]
    with store._write() as conn:
        conn.execute(update(event_table).where(event_table.c.id == target).values(detail={"item": "c2", "votes": ["gov-b"], "n": 2}))
    report = _verify(store)
    assert [b.event_id for b in report.breaks] == [target] and "was edited" in report.breaks[0].problem


def test_a_deleted_entry_breaks_the_link_of_the_next(db_url: str) -> None:
    store = _store(db_url)
    ids = _ids(store)
    with store._write() as conn:
        conn.execute(delete(event_table).where(event_table.c.id == ids[2]))
    report = _verify(store)
    assert [b.event_id for b in report.breaks] == [ids[3]]
    assert f"does not follow entry {ids[1]}" in report.breaks[0].problem


def test_swapped_entries_are_found(db_url: str) -> None:
    store = _store(db_url)
    ids = _ids(store)
    with store._write() as conn:
        rows = {r["id"]: dict(r) for r in conn.execute(select(event_table).where(event_table.c.id.in_(ids[2:4]))).mappings()}
        for a, b in ((ids[2], ids[3]), (ids[3], ids[2])):
            values = {k: v for k, v in rows[b].items() if k != "id"}
            conn.execute(update(event_table).where(event_table.c.id == a).values(**values))
    assert {b.event_id for b in _verify(store).breaks} >= {ids[2], ids[3]}


def test_audit_verify_exits_1_naming_the_entry(tmp_path: Path) -> None:
    from scanpipe.cli import cli
    from scanpipe.cli_review import register

    if "audit" not in cli.commands:
        register(cli)
    url = f"sqlite:///{tmp_path / 'a.db'}"
    store = _store(url)
    runner = CliRunner()
    ok = runner.invoke(cli, ["--db", url, "audit", "verify"])
    assert ok.exit_code == 0 and "audit log intact" in ok.output
    head = ok.output.split("head ")[1].split()[0]
    assert runner.invoke(cli, ["--db", url, "audit", "verify", "--head", head]).exit_code == 0
    target = _ids(store)[1]
    with store._write() as conn:
        conn.execute(update(event_table).where(event_table.c.id == target).values(actor="mallory"))
    broken = runner.invoke(cli, ["--db", url, "audit", "verify"])
    assert broken.exit_code == 1 and f"entry {target} (" in broken.output and "was edited" in broken.output
    with store._write() as conn:
        conn.execute(update(event_table).where(event_table.c.id == target).values(actor="alice"))
        conn.execute(delete(event_table).where(event_table.c.id == _ids(store)[-1]))
    cut = runner.invoke(cli, ["--db", url, "audit", "verify", "--head", head])
    assert cut.exit_code == 1 and "the log was cut" in cut.output


def test_concurrent_appenders_keep_one_chain(db_url: str) -> None:
    import threading

    store = _store(db_url)

    def append(who: str) -> None:
        for i in range(25):
            with store._write() as conn:
                append_event(conn, "decision", {"i": i}, who, utcnow())

    threads = [threading.Thread(target=append, args=(name,)) for name in ("alice", "bob", "carol")]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    report = _verify(store)
    assert report.ok, report.breaks
    assert report.entries == len(_ids(store)) >= 75
