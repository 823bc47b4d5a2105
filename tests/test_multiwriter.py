"""Several workstations writing one database: two real ``scanpipe ingest`` processes at once.

Each folder holds a few real generated cards plus many cheap unreadable "cards" (files with
a card extension and distinct junk bytes): every one is stored as an unreadable card, so the
two writers commit many small transactions that interleave. Afterwards the exported CVRs
must equal those of one process ingesting the same folders one after the other: no card
lost, none stored twice, and both processes exit 0 or 1 (never 2: no deadlock, no
"database is locked").
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import sqlite3
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

pytestmark = pytest.mark.slow  # two ingest processes at once, through the CLI, several attempts

REAL_SHEETS = 4
JUNK_PER_FOLDER = 300
ATTEMPTS = 3  # runs on fresh databases until the two ingests overlap in time (on SQLite they are made to: _hold_the_first)


def cli(db: str, *args: str) -> list[str]:
    return [sys.executable, "-m", "scanpipe.cli", "--db", db, *args]


def run(db: str, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(cli(db, *args), capture_output=True, text=True, timeout=300, check=False)


def run_together(db: str, *arg_lists: list[str]) -> list[tuple[int, str, str]]:
    """Start every ingest at once; wait for all; return (exit status, stdout, stderr) of each.
    On SQLite the two are made to overlap (:func:`_hold_the_first`)."""
    procs = [subprocess.Popen(cli(db, *args), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) for args in arg_lists]
    try:
        if db.startswith("sqlite:///") and len(procs) == 2:
            _hold_the_first(db.removeprefix("sqlite:///"), procs, arg_lists)
    finally:
        for p in procs:
            with contextlib.suppress(ProcessLookupError):
                os.kill(p.pid, signal.SIGCONT)
    out = []
    for p in procs:
        said, err = p.communicate(timeout=300)
        out.append((p.returncode, said, err))
    return out


def _started(path: str) -> list[list[str]]:
    """The ``paths`` of every ``ingest_started`` event so far, in log order."""
    with contextlib.closing(sqlite3.connect(path, timeout=60)) as con:
        try:
            rows = con.execute("SELECT detail FROM event WHERE action = 'ingest_started' ORDER BY id").fetchall()
        except sqlite3.OperationalError:  # the tables are not there yet
            return []
    return [list(json.loads(r[0])["paths"]) for r in rows]


def _hold_the_first(path: str, procs: list[subprocess.Popen[str]], arg_lists: tuple[list[str], ...]) -> None:
    """Make the two ingests overlap for certain, however loaded the machine: SQLite's busy
    wait is not fair, so a writer committing batch after batch can keep the other waiting until
    it is done, and on a loaded machine one may even finish before the other starts. The first
    to log ``ingest_started`` is stopped (SIGSTOP) at a moment it holds no write lock (this
    process holds it then), and let go (SIGCONT) once the other has logged its start too (or
    ended): both then started before either finished, and the first still has its cards to store."""
    own = [args[1: args.index("--batch")] for args in arg_lists]
    deadline = time.monotonic() + 240
    while time.monotonic() < deadline and all(p.poll() is None for p in procs):
        started = _started(path)
        if len(started) >= 2:
            return
        if started:
            first = own.index(started[0])
            with contextlib.closing(sqlite3.connect(path, timeout=60, isolation_level=None)) as con:
                con.execute("BEGIN IMMEDIATE")  # the writers are between transactions now
                if procs[first].poll() is None:
                    os.kill(procs[first].pid, signal.SIGSTOP)
                con.execute("ROLLBACK")
            other = procs[1 - first]
            while time.monotonic() < deadline and other.poll() is None and len(_started(path)) < 2:
                time.sleep(0.02)
            return  # the first is let go by the caller
        time.sleep(0.01)


def export(db: str, out: Path) -> dict[str, Any]:
    done = run(db, "export", "cvr", "--out", str(out))
    assert done.returncode == 0, done.stderr
    report = json.loads(out.read_text())
    report.pop("GeneratedDate")
    return report


@pytest.fixture(scope="module")
def folders(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path, Path]:
    """(election.json, folder a, folder b): real cards split between them, plus junk."""
    from scanpipe.synth.deck import generate_deck
    from scanpipe.synth.definition import write_demo_election

    root = tmp_path_factory.mktemp("multi")
    election = write_demo_election(root / "def", seed=3)
    generate_deck(election, root / "deck", cards=REAL_SHEETS, seed=99173, profile="clean", jobs=1)
    real = sorted(f for f in (root / "deck" / "cards").iterdir() if f.is_file())
    a, b = root / "a", root / "b"
    for i, folder in enumerate((a, b)):
        folder.mkdir()
        for f in real[i::2]:
            shutil.copy(f, folder / f.name)
        for n in range(JUNK_PER_FOLDER):
            (folder / f"junk-{n:04d}.png").write_bytes(f"not an image: folder {folder.name} file {n}\n".encode())
    return election, a, b


def ingests_overlapped(db: str) -> bool:
    """Both ingests had started before either finished (by the store's event log order)."""
    from scanpipe.store.repository import Store

    store = Store.open(db)
    try:
        actions = [e.action for e in store.events() if e.action in ("ingest_started", "ingest_finished")]
    finally:
        store.close()
    return actions[:2] == ["ingest_started", "ingest_started"]


_SERIAL: dict[str, dict[str, Any]] = {}


def _serial_reference(election: Path, tmp: Path, steps: list[list[str]]) -> dict[str, Any]:
    """The export after one process ran ``steps`` one after the other (cached per steps)."""
    key = json.dumps([str(election), steps])
    if key not in _SERIAL:
        _SERIAL[key] = _run_serial(election, tmp, steps)
    return _SERIAL[key]


def _run_serial(election: Path, tmp: Path, steps: list[list[str]]) -> dict[str, Any]:
    db = f"sqlite:///{tmp / 'serial.db'}"
    assert run(db, "init", "--election", str(election)).returncode == 0
    for args in steps:
        done = run(db, *args)
        assert done.returncode in (0, 1), done.stderr
    return export(db, tmp / "serial.json")


def _check_concurrent(fresh_db: Callable[[], str], election: Path, tmp: Path, steps: list[list[str]]) -> None:
    """Run ``steps`` at once on a fresh database and compare with running them in turn.

    Every attempt must lose nothing and store nothing twice; the two processes must also
    have overlapped in time at least once in :data:`ATTEMPTS` attempts (one may finish
    before the other starts on a loaded machine), or nothing concurrent was tested.
    """
    serial = _serial_reference(election, tmp, steps)
    for attempt in range(1, ATTEMPTS + 1):
        db = fresh_db()
        assert run(db, "init", "--election", str(election)).returncode == 0
        outcomes = run_together(db, *steps)
        for code, _out, err in outcomes:
            assert code in (0, 1), err
        said = "\n".join(f"ingest {i}: exit {code}\n{out}\n{err}" for i, (code, out, err) in enumerate(outcomes))
        together = export(db, tmp / f"together-{attempt}.json")
        ids = [c["UniqueId"] for c in together["CVR"]]
        assert len(ids) == len(set(ids))
        assert len(ids) >= 2 * JUNK_PER_FOLDER + REAL_SHEETS, said
        assert together == serial, first_difference(together, serial)
        verified = run(db, "audit", "verify")  # the log covers every card both writers stored
        assert verified.returncode == 0, verified.stderr
        if ingests_overlapped(db):
            return
    pytest.fail(f"in {ATTEMPTS} attempts the two ingests always ran one after the other: nothing concurrent was tested")


def first_difference(a: Any, b: Any, where: str = "$") -> str | None:
    """Where two JSON values first differ (for a readable failure)."""
    if isinstance(a, dict) and isinstance(b, dict):
        keys = sorted(set(a) | set(b))
        return next((d for k in keys if (d := first_difference(a.get(k), b.get(k), f"{where}.{k}"))), None)
    if isinstance(a, list) and isinstance(b, list) and len(a) == len(b):
        return next((d for i, (x, y) in enumerate(zip(a, b)) if (d := first_difference(x, y, f"{where}[{i}]"))), None)
    return None if a == b else f"{where}: {a!r} != {b!r}"


def _different_batches(a: Path, b: Path) -> list[list[str]]:
    return [["ingest", str(a), "--batch", "A", "-q"], ["ingest", str(b), "--batch", "B", "-q"]]


def _same_batch_overlapping(a: Path, b: Path) -> list[list[str]]:
    return [["ingest", str(a), str(b), "--batch", "S", "-q"], ["ingest", str(b), str(a), "--batch", "S", "-q"]]


SCENARIOS = {"different_batches": _different_batches, "same_batch_overlapping": _same_batch_overlapping}


@pytest.mark.parametrize("scenario", sorted(SCENARIOS))
def test_two_writers_sqlite(folders: tuple[Path, Path, Path], tmp_path: Path, scenario: str) -> None:
    election, a, b = folders
    counter = iter(range(1, ATTEMPTS + 1))
    _check_concurrent(lambda: f"sqlite:///{tmp_path / f'shared-{next(counter)}.db'}", election, tmp_path, SCENARIOS[scenario](a, b))


@pytest.mark.postgres
@pytest.mark.parametrize("scenario", sorted(SCENARIOS))
def test_two_writers_postgres(folders: tuple[Path, Path, Path], tmp_path: Path, scenario: str,
                              pg_database_factory: Callable[[], str]) -> None:
    election, a, b = folders
    _check_concurrent(pg_database_factory, election, tmp_path, SCENARIOS[scenario](a, b))
