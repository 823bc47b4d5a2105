#!/usr/bin/env python
"""Scale-out benchmark: ``ingest --executor dask`` with 2 workers against 1 worker.

Two set-ups, each timed for N = 1 and 2 workers:

* **standing cluster** (the deployment: workstations send work to a cluster that is
  already up): a scheduler and N single-threaded workers started with Dask's own command
  line (``python -m dask scheduler`` / ``python -m dask worker --nthreads 1``) before the
  clock starts, a fresh cluster per run; timed is ``scanpipe ingest DIR --executor dask
  --scheduler ADDR`` as a subprocess (its start-up, connecting, every card, closing);
* **local cluster**: ``scanpipe ingest DIR --executor dask --workers N``, which also starts
  and stops a :class:`~distributed.LocalCluster` inside the timed command (on a 2-core
  machine this start-up and the coordinator share the two cores with the workers).

On a held-out set of at least 400 cards (generated with a fresh seed, or ``--dir``), runs
``scanpipe ingest DIR --executor dask --workers N`` as a subprocess (local cluster start-up
included) into a fresh SQLite database, the median of ``--runs`` runs for N = 1 and 2, and
prints the speedup (target >= 1.7). Every dask run's exported CVRs must be identical (apart
from ``GeneratedDate``) to those of the local executor; a difference is printed and makes
the exit status 1. ``--chunk-sweep 1,2,4`` also times :func:`scanpipe.scale.run_dask`
in-process with different files-per-task.

    python scripts/bench_scale.py                       # 1,000 fresh sheets, 3 runs
    python scripts/bench_scale.py --cards 40 --runs 1   # quick check
"""

from __future__ import annotations

import argparse
import contextlib
import json
import shlex
import socket
import statistics
import subprocess
import sys
import time
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_ingest import (
    card_set,
    fmt_times,
    run_checked,
    scanpipe_cmd,
)


def ingest_and_export(election: Path, folder: Path, work: Path, tag: str, *extra: str) -> tuple[float, dict[str, Any]]:
    """(wall seconds of the ingest subprocess, exported CVR report without GeneratedDate)."""
    for f in work.glob(f"{tag}.db*"):
        f.unlink()
    db = f"sqlite:///{work / tag}.db"
    run_checked(scanpipe_cmd(db, "init", "--election", str(election)))
    started = time.perf_counter()
    run_checked(scanpipe_cmd(db, "ingest", str(folder), "-q", "--batch", "bench", *extra), ok=(0, 1))
    wall = time.perf_counter() - started
    out = work / f"{tag}.json"
    run_checked(scanpipe_cmd(db, "export", "cvr", "--out", str(out)))
    report = json.loads(out.read_text())
    report.pop("GeneratedDate", None)
    return wall, report


def first_difference(a: Any, b: Any, where: str = "$") -> str | None:
    if type(a) is not type(b):
        return f"{where}: {type(a).__name__} != {type(b).__name__}"
    if isinstance(a, dict):
        for k in sorted(set(a) | set(b)):
            if k not in a or k not in b:
                return f"{where}.{k}: present on one side only"
            d = first_difference(a[k], b[k], f"{where}.{k}")
            if d:
                return d
        return None
    if isinstance(a, list):
        if len(a) != len(b):
            return f"{where}: {len(a)} != {len(b)} items"
        return next((d for i, (x, y) in enumerate(zip(a, b)) if (d := first_difference(x, y, f"{where}[{i}]"))), None)
    return None if a == b else f"{where}: {a!r} != {b!r}"


@contextlib.contextmanager
def standing_cluster(workers: int) -> Iterator[str]:
    """A scheduler and ``workers`` single-threaded worker processes started with Dask's own
    command line, as a deployment runs them; yields the scheduler address once every
    worker has joined, and stops them all on exit."""
    from distributed import Client

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    address = f"tcp://127.0.0.1:{port}"
    quiet = {"stdout": subprocess.DEVNULL, "stderr": subprocess.DEVNULL}
    procs = [subprocess.Popen([sys.executable, "-m", "dask", "scheduler", "--host", "127.0.0.1", "--port", str(port),
                               "--no-dashboard"], **quiet)]
    try:
        procs.append(subprocess.Popen([sys.executable, "-m", "dask", "worker", address, "--nworkers", str(workers),
                                       "--nthreads", "1", "--no-dashboard"], **quiet))
        deadline = time.monotonic() + 60
        while True:
            try:
                with Client(address, timeout=5) as client:
                    client.wait_for_workers(workers, timeout=60)
                break
            except OSError:
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.2)
        yield address
    finally:
        for proc in reversed(procs):
            proc.terminate()
        for proc in reversed(procs):
            try:
                proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                proc.kill()


def timed_setup(label: str, election: Path, folder: Path, work: Path, runs: int, reference: dict[str, Any],
                files: int, standing: bool) -> tuple[dict[int, float], int]:
    """Median wall seconds per worker count, and how many runs' CVRs differed."""
    medians: dict[int, float] = {}
    mismatches = 0
    print(label)
    for n in (1, 2):
        extra = ["--executor", "dask", "--scheduler", "ADDR"] if standing else ["--executor", "dask", "--workers", str(n)]
        print(f"  {shlex.join(scanpipe_cmd('sqlite:///<fresh>.db', 'ingest', str(folder), '-q', '--batch', 'bench', *extra))}")
        times = []
        for run in range(runs):
            tag = f"{'standing' if standing else 'local'}{n}-{run}"
            if standing:
                with standing_cluster(n) as address:
                    wall, report = ingest_and_export(election, folder, work, tag, "--executor", "dask", "--scheduler", address)
            else:
                wall, report = ingest_and_export(election, folder, work, tag, *extra)
            times.append(wall)
            diff = first_difference(reference, report)
            if diff:
                mismatches += 1
                print(f"    run {run + 1}: CVR export differs from the local executor's: {diff}")
        medians[n] = statistics.median(times)
        print(f"    {n} worker(s): median {medians[n]:.2f} s [{fmt_times(times)}]; {files / medians[n]:.1f} cards/s")
    print(f"  speedup 2 workers vs 1: {medians[1] / medians[2]:.2f}  (target >= 1.7)")
    return medians, mismatches


def chunk_sweep(election: Path, folder: Path, work: Path, chunks: Sequence[int], workers: int) -> None:
    from scanpipe.scale import run_dask
    from scanpipe.sources.files import find_card_files
    from scanpipe.store.repository import Store
    from scanpipe.types import CardHints
    from scanpipe.workflow import init_election, interpret_context

    store = Store.open(f"sqlite:///{work / 'sweep.db'}")
    try:
        store.migrate()
        init_election(store, election)
        context = interpret_context(store)
    finally:
        store.close()
    files = find_card_files([str(folder)]).cards
    for chunk in chunks:
        started = time.perf_counter()
        n = sum(1 for _ in run_dask(files, context, CardHints(), "sweep", frozenset(), scheduler=None, workers=workers, chunk=chunk))
        print(f"    chunk {chunk}: {time.perf_counter() - started:.2f} s for {n} files ({workers} workers, in-process coordinator)")


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--dir", type=Path, help="existing folder of card files (with --election); default: generate")
    ap.add_argument("--election", type=Path)
    ap.add_argument("--cards", type=int, default=1000,
                    help="sheets to generate (default 1000: at 400 the fixed ~1.3 s start-up weighs on the ratio)")
    ap.add_argument("--seed", type=int, default=None, help="generation seed (default: fresh, printed)")
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--setup", choices=["standing", "local", "both"], default="both")
    ap.add_argument("--chunk-sweep", default="", help="e.g. 1,2,4: time run_dask with these files per task")
    args = ap.parse_args(argv)

    work, election, folder, files = card_set(ap, args, "scale")

    local_s, reference = ingest_and_export(election, folder, work, "local", "--workers", "1")
    print(f"local executor, --workers 1: {local_s:.2f} s ({len(reference['CVR'])} CVRs): the reference export")
    mismatches = 0
    if args.setup in ("standing", "both"):
        _, bad = timed_setup("standing cluster (scheduler and workers up before the clock starts; a fresh cluster per run):",
                             election, folder, work, args.runs, reference, len(files), standing=True)
        mismatches += bad
    if args.setup in ("local", "both"):
        _, bad = timed_setup("local cluster (started and stopped inside the timed ingest):",
                             election, folder, work, args.runs, reference, len(files), standing=False)
        mismatches += bad
    print(f"CVR exports identical to the local executor's: {'yes' if not mismatches else f'NO ({mismatches} run(s) differ)'}")
    if args.chunk_sweep:
        print("chunk sweep:")
        chunk_sweep(election, folder, work, [int(c) for c in args.chunk_sweep.split(",")], workers=2)
    import shutil

    shutil.rmtree(work, ignore_errors=True)
    return 1 if mismatches else 0


if __name__ == "__main__":
    sys.exit(main())
