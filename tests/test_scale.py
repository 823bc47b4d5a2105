"""The Dask executor: same results as the local executor, clear failures, retried lost work.

A small generated deck (12 sheets) is ingested through the real CLI with ``--executor dask``
(a local cluster of 2 worker processes) and with the local executor; the exported CVRs must
be identical apart from the generation time. A worker process killed mid-run must lose
nothing and count nothing twice.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

distributed = pytest.importorskip("distributed")

from scanpipe.errors import SourceError
from scanpipe.pipeline import FileResult
from scanpipe.scale import collect, connect, dask_client, run_dask

SHEETS = 12


def scanpipe_cli(db: Path, *args: str) -> subprocess.CompletedProcess[str]:
    cmd = [sys.executable, "-m", "scanpipe.cli", "--db", f"sqlite:///{db}", *args]
    return subprocess.run(cmd, capture_output=True, text=True, timeout=300, check=False)


def cvr_without_time(path: Path) -> dict[str, Any]:
    report = json.loads(path.read_text())
    report.pop("GeneratedDate")
    return report


@pytest.fixture(scope="module")
def deck(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """(election.json, folder of card files) of a small typical deck."""
    from scanpipe.synth.deck import generate_deck
    from scanpipe.synth.definition import write_demo_election

    root = tmp_path_factory.mktemp("scale")
    election = write_demo_election(root / "def", seed=7)
    generate_deck(election, root / "deck", cards=SHEETS, seed=424242, profile="typical", jobs=2)
    return election, root / "deck" / "cards"


@pytest.mark.slow
def test_dask_and_local_executors_export_identical_cvrs(deck: tuple[Path, Path], tmp_path: Path) -> None:
    election, cards = deck
    reports = {}
    for name, extra in (("local", ["--workers", "1"]), ("dask", ["--executor", "dask", "--workers", "2"])):
        db = tmp_path / f"{name}.db"
        assert scanpipe_cli(db, "init", "--election", str(election)).returncode == 0
        done = scanpipe_cli(db, "ingest", str(cards), "--batch", "b1", "-q", *extra)
        assert done.returncode == 1, done.stderr  # the deck's marginal marks await a person
        out = tmp_path / f"{name}.json"
        exported = scanpipe_cli(db, "export", "cvr", "--out", str(out))
        assert exported.returncode == 0, exported.stderr
        reports[name] = cvr_without_time(out)
    n_files = sum(1 for f in cards.iterdir() if f.is_file())
    assert len(reports["dask"]["CVR"]) >= n_files
    assert reports["dask"] == reports["local"]


def test_unreachable_scheduler_exits_2_naming_the_address(deck: tuple[Path, Path], tmp_path: Path) -> None:
    election, cards = deck
    db = tmp_path / "s.db"
    assert scanpipe_cli(db, "init", "--election", str(election)).returncode == 0
    done = scanpipe_cli(db, "ingest", str(cards), "-q", "--executor", "dask", "--scheduler", "tcp://127.0.0.1:1")
    assert done.returncode == 2
    assert "dask scheduler tcp://127.0.0.1:1: cannot connect (Connection refused)" in done.stderr


@pytest.mark.parametrize(("address", "message"), [
    ("tcp://127.0.0.1:1", "dask scheduler tcp://127.0.0.1:1: cannot connect (Connection refused)"),
    ("tcp://127.0.0.1:notaport", "dask scheduler tcp://127.0.0.1:notaport: not a scheduler address"),
])
def test_connect_failures_are_source_errors(address: str, message: str) -> None:
    with pytest.raises(SourceError) as raised:
        connect(address)
    assert str(raised.value).startswith(message)


@pytest.fixture(scope="module")
def cluster() -> Any:
    """A local cluster of 2 nanny-managed worker processes (a killed worker is restarted)."""
    import logging

    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None,
                                  silence_logs=logging.CRITICAL) as c:
        yield c


@pytest.mark.slow
def test_killed_worker_loses_nothing_and_counts_nothing_twice(deck: tuple[Path, Path], tmp_path: Path, cluster: Any) -> None:
    from scanpipe.store.repository import Store
    from scanpipe.types import CardHints
    from scanpipe.workflow import ingest_paths

    election, cards = deck
    db = tmp_path / "k.db"
    assert scanpipe_cli(db, "init", "--election", str(election)).returncode == 0
    watcher = distributed.Client(cluster.scheduler_address, set_as_default=False)
    pids = watcher.run(os.getpid)
    killed: list[tuple[str, tuple[str, ...]]] = []
    seen: list[str] = []

    def kill_a_busy_worker(result: FileResult) -> None:
        seen.append(result.path)
        if killed:
            return
        busy = {addr: keys for addr, keys in watcher.processing().items() if keys}
        assert busy, "no task was running when the first result arrived"
        addr, keys = min(busy.items())
        os.kill(pids[addr], signal.SIGKILL)
        killed.append((addr, tuple(map(str, keys))))

    store = Store.open(f"sqlite:///{db}")
    try:
        summary = ingest_paths(store, [str(cards)], batch="k", hints=CardHints(), workers=2, executor="dask",
                               scheduler=cluster.scheduler_address, on_file=kill_a_busy_worker)
        stored = store.count_cards()
    finally:
        store.close()
        watcher.close()
    files = sorted(str(f) for f in cards.iterdir() if f.is_file())
    assert killed, "no worker was killed"
    assert sorted(seen) == files  # every file's result arrived exactly once
    assert summary.missing == []
    assert summary.cards_already == 0
    assert summary.cards_stored == stored >= len(files)


def _fails(path: str) -> list[FileResult]:
    raise RuntimeError(f"boom on {path}")


def test_a_task_that_keeps_failing_is_reported_not_stored(cluster: Any) -> None:
    with distributed.Client(cluster.scheduler_address, set_as_default=False) as client:
        future = client.submit(_fails, "a.png", retries=1, pure=False)
        results = list(collect(client, {future: [("a.png", "/abs/a.png")]}, retries=1))
    assert results == [FileResult("a.png", "", (), error="interpretation failed on the cluster after 1 retries: RuntimeError('boom on a.png')")]


def _fails_once(marker: str) -> list[FileResult]:
    if not os.path.exists(marker):
        Path(marker).touch()
        raise RuntimeError("first attempt fails")
    return [FileResult("a.png", "00", ())]


def test_a_task_that_fails_once_is_retried_and_yielded_once(cluster: Any, tmp_path: Path) -> None:
    marker = str(tmp_path / "attempted")
    with distributed.Client(cluster.scheduler_address, set_as_default=False) as client:
        future = client.submit(_fails_once, marker, retries=1, pure=False)
        results = list(collect(client, {future: [("a.png", "/abs/a.png")]}, retries=1))
    assert os.path.exists(marker)
    assert results == [FileResult("a.png", "00", ())]


def test_no_files_starts_no_cluster() -> None:
    assert list(run_dask([], object(), None, "b", frozenset(), scheduler="tcp://127.0.0.1:1", workers=2)) == []  # type: ignore[arg-type]


def test_remote_scheduler_client_closes_cleanly(cluster: Any) -> None:
    with dask_client(cluster.scheduler_address, 2) as client:
        client.wait_for_workers(2, timeout=180)  # a worker killed by an earlier test is back (slow on a loaded machine)
        assert len(client.scheduler_info()["workers"]) == 2
    assert client.status == "closed"


def test_workers_keep_page_buffers_despite_the_nannys_trim_setting(cluster: Any) -> None:
    """Dask's nanny starts workers with MALLOC_TRIM_THRESHOLD_=65536, which made every page
    buffer a fresh mmap (cards read at half speed); a worker's first task fixes glibc's
    thresholds once (see scanpipe.scale.steady_allocator)."""
    import platform

    from distributed import Client

    from scanpipe import scale

    def probe() -> tuple[str | None, list[bool]]:
        scale._one_opencv_thread_once()
        from scanpipe.scale import _ALLOCATOR_SET

        return os.environ.get("MALLOC_TRIM_THRESHOLD_"), list(_ALLOCATOR_SET)

    with Client(cluster, set_as_default=False) as client:
        results = client.run(probe)
    for trim, state in results.values():
        assert trim == "65536"  # the nanny's setting is there: the case this handles
        if sys.platform.startswith("linux") and platform.libc_ver()[0] == "glibc":
            assert state == [True]
