#!/usr/bin/env python
"""Memory benchmark: ingesting 10,000 cards keeps resident memory under 500 MB.

Generates a few hundred distinct cards (``--distinct`` sheets, one page per file), then makes
``--files`` distinct files cheaply: copies whose bytes (and so SHA-256 and card id) differ
by a metadata chunk that does not change the decoded image (a PNG ``tEXt`` chunk, a JPEG
``COM`` segment, bytes after the end of a TIFF). Runs ``scanpipe ingest`` as a subprocess
into a fresh SQLite database, samples the resident memory of it and all its children every
``--interval`` seconds, and prints the peak (sum over the process tree, and the ingest
process alone) and the wall time. Generated files live in a temporary folder and are
removed afterwards (``--keep`` keeps them).

    python scripts/bench_memory.py                         # 10,000 files, --workers 2
    python scripts/bench_memory.py --files 300 --distinct 30   # quick check
"""

from __future__ import annotations

import argparse
import os
import re
import shlex
import shutil
import struct
import subprocess
import sys
import tempfile
import time
import zlib
from collections.abc import Sequence
from pathlib import Path

import psutil

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_ingest import (
    card_files,
    environment,
    formats,
    make_cards,
    run_checked,
    scanpipe_cmd,
)

LIMIT_MB = 500.0


def tagged_png(data: bytes, tag: bytes) -> bytes:
    """The PNG with a ``tEXt`` chunk after IHDR (decoding is unchanged)."""
    assert data[:8] == b"\x89PNG\r\n\x1a\n" and data[12:16] == b"IHDR", "not a PNG"
    ihdr_end = 8 + 12 + struct.unpack(">I", data[8:12])[0]
    body = b"Comment\x00" + tag
    chunk = struct.pack(">I", len(body)) + b"tEXt" + body + struct.pack(">I", zlib.crc32(b"tEXt" + body))
    return data[:ihdr_end] + chunk + data[ihdr_end:]


def tagged_jpeg(data: bytes, tag: bytes) -> bytes:
    """The JPEG with a ``COM`` segment right after SOI (decoding is unchanged)."""
    assert data[:2] == b"\xff\xd8", "not a JPEG"
    return data[:2] + b"\xff\xfe" + struct.pack(">H", len(tag) + 2) + tag + data[2:]


def tagged_tiff(data: bytes, tag: bytes) -> bytes:
    """The TIFF with bytes appended after its last strip (offsets, so decoding, unchanged)."""
    assert data[:4] in (b"II*\x00", b"MM\x00*"), "not a TIFF"
    return data + b"\x00" + tag


TAGGERS = {".png": tagged_png, ".jpg": tagged_jpeg, ".jpeg": tagged_jpeg, ".tif": tagged_tiff, ".tiff": tagged_tiff}


def make_copies(bases: Sequence[Path], out: Path, count: int) -> list[Path]:
    """``count`` distinct files cycling over ``bases``, spread over subfolders of 1,000."""
    originals = [(b.suffix.lower(), b.read_bytes()) for b in bases]
    made = []
    for i in range(count):
        suffix, data = originals[i % len(originals)]
        folder = out / f"part{i // 1000:03d}"
        folder.mkdir(parents=True, exist_ok=True)
        path = folder / f"card{i:06d}{suffix}"
        path.write_bytes(TAGGERS[suffix](data, f"scanpipe-bench-copy-{i}".encode()))
        made.append(path)
    return made


def check_same_decoding(bases: Sequence[Path], copies: Sequence[Path]) -> None:
    """One copy of each format decodes to the same pixels as its base."""
    import numpy as np

    from scanpipe.imaging.decode import ImageDecodeError, decode_card_bytes

    done: set[str] = set()
    for i, copy in enumerate(copies):
        base = bases[i % len(bases)]
        if base.suffix.lower() in done:
            continue
        done.add(base.suffix.lower())
        try:
            a = decode_card_bytes(base.read_bytes(), str(base))
        except ImageDecodeError as e:
            print(f"note: {base.name} is unreadable to scanpipe ({e.reason.value}); its copies are too")
            continue
        b = decode_card_bytes(copy.read_bytes(), str(copy))
        assert len(a) == len(b) and all(np.array_equal(x.image, y.image) for x, y in zip(a, b)), f"{copy} decodes differently from {base}"


def tree_memory(proc: psutil.Process) -> tuple[int, int, int]:
    """(RSS of ``proc`` and all its descendants, RSS of ``proc`` alone, PSS of the tree).

    The RSS sum counts pages shared between processes once per process (an upper bound);
    PSS splits each shared page between its sharers (0 where the kernel has no smaps).
    """
    try:
        procs = [proc, *proc.children(recursive=True)]
    except psutil.NoSuchProcess:
        return 0, 0, 0
    rss = pss = own = 0
    for p in procs:
        try:
            info = p.memory_full_info() if hasattr(p, "memory_full_info") else p.memory_info()
        except (psutil.NoSuchProcess, psutil.AccessDenied):
            continue
        rss += info.rss
        pss += getattr(info, "pss", 0)
        own = info.rss if p is proc else own
    return rss, own, pss


def run_sampled(cmd: Sequence[str], interval: float) -> tuple[int, float, list[tuple[float, int, int, int]], str, str]:
    """(exit status, wall s, samples (t, tree RSS, own RSS, tree PSS), stdout, stderr) of ``cmd``."""
    with tempfile.TemporaryFile("w+") as out_f, tempfile.TemporaryFile("w+") as err_f:
        started = time.perf_counter()
        popen = subprocess.Popen(list(cmd), stdout=out_f, stderr=err_f, text=True)
        proc = psutil.Process(popen.pid)
        samples = []
        while popen.poll() is None:
            samples.append((time.perf_counter() - started, *tree_memory(proc)))
            time.sleep(interval)
        wall = time.perf_counter() - started
        out_f.seek(0)
        err_f.seek(0)
        return popen.returncode, wall, samples, out_f.read(), err_f.read()


def growth(samples: Sequence[tuple[float, int, int, int]]) -> str:
    """Tree RSS at each quarter of the run (MB): a leak shows as a steady climb."""
    mb = 1024 * 1024
    samples = [x for x in samples if x[1] > 0]  # the last sample may follow the exit
    if not samples:
        return "no samples"
    picks = [samples[min(len(samples) - 1, int(q * len(samples)))] for q in (0.25, 0.5, 0.75, 0.999)]
    return ", ".join(f"{t:.0f} s: {rss / mb:.0f} MB (ingest process {own / mb:.0f})" for t, rss, own, _ in picks)


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--files", type=int, default=10_000)
    ap.add_argument("--distinct", type=int, default=300, help="distinct sheets to generate")
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--executor", choices=["local", "dask"], default="local")
    ap.add_argument("--interval", type=float, default=0.2)
    ap.add_argument("--seed", type=int, default=None)
    ap.add_argument("--keep", action="store_true")
    args = ap.parse_args(argv)

    work = Path(tempfile.mkdtemp(prefix="scanpipe-bench-memory-"))
    seed = args.seed if args.seed is not None else int.from_bytes(os.urandom(3), "big")
    for line in environment():
        print(line)
    try:
        t = time.perf_counter()
        election, folder = make_cards(work / "gen", sheets=args.distinct, seed=seed)
        bases = card_files(folder)
        copies = make_copies(bases, work / "cards", args.files)
        check_same_decoding(bases, copies)
        print(f"{len(bases)} distinct cards (seed {seed}; {formats(bases)}) -> {len(copies)} distinct files "
              f"({formats(copies)}) in {time.perf_counter() - t:.1f} s")
        db = f"sqlite:///{work / 'memory.db'}"
        run_checked(scanpipe_cmd(db, "init", "--election", str(election)))
        cmd = scanpipe_cmd(db, "ingest", str(work / "cards"), "-q", "--workers", str(args.workers), "--executor", args.executor)
        print(f"command: {shlex.join(cmd)}")
        code, wall, samples, out, err = run_sampled(cmd, args.interval)
        peak_tree = max((x[1] for x in samples), default=0)
        peak_own = max((x[2] for x in samples), default=0)
        peak_pss = max((x[3] for x in samples), default=0)
        if code not in (0, 1):
            print(f"ingest failed ({code}):\n{out}\n{err}")
            return 2
        summary = next((line for line in out.splitlines() if re.search(r"file\(s\) read", line)), out.strip())
        mb = 1024 * 1024
        print(f"ingest: {summary}")
        print(f"wall {wall:.1f} s ({len(copies) / wall:.1f} files/s); peak RSS: {peak_tree / mb:.0f} MB for the process tree "
              f"(ingest process alone {peak_own / mb:.0f} MB; tree PSS {peak_pss / mb:.0f} MB); limit {LIMIT_MB:.0f} MB: "
              f"{'OK' if peak_tree / mb < LIMIT_MB else 'OVER'}")
        print(f"tree RSS over the run: {growth(samples)}")
        return 0 if peak_tree / mb < LIMIT_MB else 1
    finally:
        if args.keep:
            print(f"kept {work}")
        else:
            shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
