#!/usr/bin/env python
"""Scale-out benchmark: ``ingest --executor dask`` with 2 workers against 1 worker.

On a held-out set of at least 400 cards (generated with a fresh seed, or ``--dir``), runs
``scanpipe ingest DIR --executor dask --workers N`` as a subprocess (local cluster start-up
included) into a fresh SQLite database, the median of ``--runs`` runs for N = 1 and 2, and
prints the speedup (target >= 1.7). Every dask run's exported CVRs must be identical (apart
from ``GeneratedDate``) to those of the local executor; a difference is printed and makes
the exit status 1. ``--chunk-sweep 1,2,4`` also times :func:`scanpipe.scale.run_dask`
in-process with different files-per-task.

    python scripts/bench_scale.py                       # 400 fresh sheets, 3 runs
    python scripts/bench_scale.py --cards 40 --runs 1   # quick check
"""

from __future__ import annotations

import argparse
import json
import shlex
import statistics
import sys
import time
from collections.abc import Sequence
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


def chunk_sweep(election: Path, folder: Path, work: Path, chunks: Sequence[int], workers: int) -> None:
    from scanpipe.pipeline import find_card_files
    from scanpipe.scale import run_dask
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
    files, _ = find_card_files([str(folder)])
    for chunk in chunks:
        started = time.perf_counter()
        n = sum(1 for _ in run_dask(files, context, CardHints(), "sweep", frozenset(), scheduler=None, workers=workers, chunk=chunk))
        print(f"    chunk {chunk}: {time.perf_counter() - started:.2f} s for {n} files ({workers} workers, in-process coordinator)")


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--dir", type=Path, help="existing folder of card files (with --election); default: generate")
    ap.add_argument("--election", type=Path)
    ap.add_argument("--cards", type=int, default=400, help="sheets to generate (default 400)")
    ap.add_argument("--seed", type=int, default=None, help="generation seed (default: fresh, printed)")
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--chunk-sweep", default="", help="e.g. 1,2,4: time run_dask with these files per task")
    args = ap.parse_args(argv)

    work, election, folder, files = card_set(ap, args, "scale")

    local_s, reference = ingest_and_export(election, folder, work, "local", "--workers", "1")
    print(f"local executor, --workers 1: {local_s:.2f} s ({len(reference['CVR'])} CVRs): the reference export")
    medians: dict[int, float] = {}
    mismatches = 0
    for n in (1, 2):
        cmd = scanpipe_cmd("sqlite:///<fresh>.db", "ingest", str(folder), "-q", "--batch", "bench", "--executor", "dask", "--workers", str(n))
        print(f"{shlex.join(cmd)}")
        times = []
        for run in range(args.runs):
            wall, report = ingest_and_export(election, folder, work, f"dask{n}-{run}", "--executor", "dask", "--workers", str(n))
            times.append(wall)
            diff = first_difference(reference, report)
            if diff:
                mismatches += 1
                print(f"    run {run + 1}: CVR export differs from the local executor's: {diff}")
        medians[n] = statistics.median(times)
        print(f"    dask {n} worker(s): median {medians[n]:.2f} s [{fmt_times(times)}]; {len(files) / medians[n]:.1f} cards/s")
    print(f"speedup 2 workers vs 1: {medians[1] / medians[2]:.2f}  (target >= 1.7)")
    print(f"CVR exports identical to the local executor's: {'yes' if not mismatches else f'NO ({mismatches} run(s) differ)'}")
    if args.chunk_sweep:
        print("chunk sweep:")
        chunk_sweep(election, folder, work, [int(c) for c in args.chunk_sweep.split(",")], workers=2)
    import shutil

    shutil.rmtree(work, ignore_errors=True)
    return 1 if mismatches else 0


if __name__ == "__main__":
    sys.exit(main())
