#!/usr/bin/env python
"""Bad-file benchmark: every kind of bad file of issue 9 in one batch with good cards.

Generates ``--good`` synthetic sheets (one page per file, as ``bench_ingest`` does) and the
bad-file corpus of :mod:`scanpipe.synth.badfiles` (truncated, zero-byte, wrong extension,
multi-page and pixel bombs, a 600-MB sparse file, no read permission, an unlistable folder,
a link loop, a dangling link, a named pipe, a newline and a non-UTF-8 byte in names, a
corrupt PDF...), ingests the folder with ``scanpipe ingest --workers N`` while sampling the
memory of the whole process tree, and prints:

* how many bad entries were **quarantined with their reason**: stored as an unreadable card
  with the expected reason, queued ``file_unread``, or recorded as skipped, *and* named with
  a reason in the summary (target 100%);
* that **every good card was read** (stored, and not refused as an image);
* that no summary line was forged by a file name;
* the **peak resident memory** of the process tree against the ingest budget (README,
  "Memory": 500 MB).

Root reads any file whatever its permissions, so when run as root the commands run without
the capabilities that allow it (``setpriv --bounding-set -dac_override,-dac_read_search``);
without setpriv the permission entries are reported as not tested.

    python scripts/bench_badfiles.py --good 60 --workers 2 --seed 2024
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_ingest import card_files, make_cards  # noqa: E402
from bench_memory import LIMIT_MB, run_sampled  # noqa: E402

SUMMARY_PREFIXES = ("  unreadable ", "  skipped ", "  not read ", "  ... and ")
COUNT_PREFIX = "  unreadable: "  # "  unreadable: 3 x unreadable_image"


def unprivileged() -> list[str] | None:
    """The command prefix that takes away root's power to read any file (it keeps its uid,
    loses CAP_DAC_OVERRIDE and CAP_DAC_READ_SEARCH, for every process it starts); [] when
    not root; None when it cannot be done."""
    if os.geteuid() != 0:
        return []
    if shutil.which("setpriv") is None:
        return None
    return ["setpriv", "--bounding-set", "-dac_override,-dac_read_search"]


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--good", type=int, default=60, help="good sheets to generate")
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--seed", type=int, default=int(time.time()) % 100000)
    ap.add_argument("--interval", type=float, default=0.05, help="memory sampling period (s)")
    ap.add_argument("--keep", action="store_true")
    args = ap.parse_args(argv)
    print(f"# python scripts/bench_badfiles.py --good {args.good} --workers {args.workers} --seed {args.seed}")
    from scanpipe.synth.badfiles import restore_permissions, write_bad_files

    work = Path(tempfile.mkdtemp(prefix="scanpipe-bench-badfiles-"))
    prefix = unprivileged()
    corpus = []
    try:
        t = time.perf_counter()
        election, generated = make_cards(work / "gen", sheets=args.good, seed=args.seed)
        batch = work / "batch"
        batch.mkdir()
        good = []
        for f in card_files(generated):
            shutil.copy(f, batch / f.name)
            good.append(str(batch / f.name))
        png = next(f for f in card_files(generated) if f.suffix == ".png").read_bytes()
        corpus = write_bad_files(batch, png)
        print(f"batch: {len(good)} good card files (seed {args.seed}) and {len(corpus)} bad entries, made in "
              f"{time.perf_counter() - t:.0f} s")
        skipped_kinds = [] if prefix is not None else [b for b in corpus if b.needs_unprivileged]
        if skipped_kinds:
            print(f"running as root without setpriv: {len(skipped_kinds)} permission entries cannot be tested")
        db = f"sqlite:///{work / 'bad.db'}"
        cli = [*(prefix or []), sys.executable, "-m", "scanpipe.cli", "--db", db]
        done = subprocess.run([*cli, "init", "--election", str(election)], capture_output=True, text=True)
        if done.returncode != 0:
            print(f"init failed:\n{done.stderr}")
            return 2
        cmd = [*cli, "ingest", str(batch), "--batch", "bad", "-q", "--workers", str(args.workers)]
        print(f"command: {' '.join(cmd[len(prefix or []):])}" + (f" (as root without its read-anything power: {' '.join(prefix)})" if prefix else ""))
        code, wall, samples, out, err = run_sampled(cmd, args.interval)
        print(f"ingest exit {code} in {wall:.1f} s; stderr: {err.strip().splitlines()[-1] if err.strip() else ''}")
        if code not in (0, 1):
            print(out + err)
            return 2
        return report(db, batch, good, corpus, skipped_kinds, out, samples)
    finally:
        restore_permissions(work / "batch", corpus)
        if args.keep:
            print(f"kept {work}")
        else:
            shutil.rmtree(work, ignore_errors=True)


STORED_UNREADABLE = ("unreadable_image", "image_too_large", "blank_page")  # stored as a card with that reason


def report(db: str, batch: Path, good: list[str], corpus: list, untestable: list, out: str, samples: list) -> int:
    from scanpipe.sources.files import shown_path, storable_path
    from scanpipe.store.repository import Store
    from scanpipe.types import UnreadableCard
    from scanpipe.workflow import files_not_read

    store = Store.open(db)
    cards: dict[str, list] = {}
    for stored in store.iter_cards(targets=False):
        cards.setdefault(stored.card.source.path, []).append(stored.card)
    queued = dict(files_not_read(store))
    skipped = {s.path: s.reason for s in store.skipped_files("bad")}
    lines = out.splitlines()
    bad = [b for b in corpus if b.expect != "read" and b not in untestable]
    quarantined = []
    for b in bad:
        path = os.path.join(str(batch), b.name)
        key = storable_path(path.rstrip("/") + ("/" if b.name.endswith("/") else ""))
        if b.expect in STORED_UNREADABLE:
            got = [c.interpretation.reason.value for c in cards.get(path, []) if isinstance(c.interpretation, UnreadableCard)]
            ok = got == [b.expect]
        elif b.expect == "file_unread":
            got, ok = [queued.get(key, "not queued")], key in queued
        else:
            got, ok = [skipped.get(key, "not recorded")], key in skipped
        named = any(line.startswith(SUMMARY_PREFIXES) and not line.startswith(COUNT_PREFIX) and f" {shown_path(path if b.expect in STORED_UNREADABLE else key)}" in line
                    for line in lines)
        quarantined.append(ok and named)
        if not (ok and named):
            print(f"  NOT QUARANTINED as expected: {shown_path(b.name)} ({b.kind}): expected {b.expect}, got {got}"
                  + ("" if named else "; not named in the summary"))
    n, q = len(bad), sum(quarantined)
    print(f"bad entries quarantined with their reason: {q}/{n} ({100 * q / max(1, n):.1f}%)"
          + (f"; {len(untestable)} permission entries not tested" if untestable else ""))
    kinds = sorted({b.expect for b in bad})
    print("  by outcome: " + ", ".join(f"{k} {sum(1 for b, ok in zip(bad, quarantined) if b.expect == k and ok)}/"
                                       f"{sum(1 for b in bad if b.expect == k)}" for k in kinds))
    odd_good = [os.path.join(str(batch), b.name) for b in corpus if b.expect == "read"]
    read = [p for p in good + odd_good if cards.get(p) and not any(
        isinstance(c.interpretation, UnreadableCard) and c.interpretation.reason.value in ("unreadable_image", "image_too_large")
        for c in cards[p])]
    print(f"good cards read: {len(read)}/{len(good) + len(odd_good)} (of which {len(odd_good)} under odd names: "
          f"a PNG named .jpg, a newline in the name)")
    # every line after the first is a count, the closing note, or names one file of the batch
    per_file = tuple(f"{prefix}{shown_path(str(batch))}/" for prefix in SUMMARY_PREFIXES)
    forged = [line for line in lines[1:] if not line.startswith((*per_file, COUNT_PREFIX))
              and not line.strip().endswith("until they are read")]
    print(f"summary lines: {len(lines)}, forged by a file name: {len(forged)}")
    for line in forged:
        print(f"  FORGED? {line!r}")
    mb = 1024 * 1024
    peak_tree = max((x[1] for x in samples), default=0) / mb
    peak_own = max((x[2] for x in samples), default=0) / mb
    peak_pss = max((x[3] for x in samples), default=0) / mb
    print(f"peak resident memory: {peak_tree:.0f} MB for the process tree (ingest process alone {peak_own:.0f} MB; "
          f"tree PSS {peak_pss:.0f} MB); budget {LIMIT_MB:.0f} MB: {'OK' if peak_tree < LIMIT_MB else 'OVER'}")
    ok = q == n and len(read) == len(good) + len(odd_good) and not forged and peak_tree < LIMIT_MB
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
