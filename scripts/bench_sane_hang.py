#!/usr/bin/env python3
"""How often Debian's SANE ``test`` backend itself hangs between two pages of a batch.

The tests drive the real backend (``tests/test_scan_sane.py``); once in CI a batch delivered
a page and then nothing, until scanpipe's page watchdog stopped it. This script runs
``--batches`` batches of the backend's ten-sheet feeder (50 dpi gray, as the tests scan), in
``--loops`` loops at once beside ``--load`` busy processes (a loaded CI machine), each batch
given ``--timeout`` seconds, and prints how many hung (and where: the pages written and
scanimage's last line). With ``--gdb`` the first hung scanimage's threads are printed before
it is killed (needs gdb): seen here, the reader thread ending while it waits forever on a
malloc lock, the main thread joining it.

    python scripts/bench_sane_hang.py --batches 400 --loops 4 --load 6
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

CONF = {"number_of_devices": "2", "mode": "Gray", "depth": "8", "resolution": "50.0", "test-picture": '"Grid"',
        "br_x": "60.0", "br_y": "80.0"}


def run_loop(loop: int, batches: int, timeout: float, root: Path, gdb: bool, env: dict[str, str]) -> list[str]:
    hung = []
    for i in range(batches):
        out = root / f"loop{loop}" / f"b{i}"
        out.mkdir(parents=True)
        argv = ["scanimage", "-d", "test:0", "--format=png", f"--batch={out / 'p%05d.png'}", "--batch-print",
                "--resolution=50", "--source=Automatic Document Feeder", "--mode=Gray"]
        with open(out / "stderr.txt", "w") as err:
            proc = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=err, env=env)
            try:
                proc.wait(timeout=timeout)
            except subprocess.TimeoutExpired:
                pages = len(list(out.glob("p*.png")))
                said = (out / "stderr.txt").read_text(errors="replace").strip().splitlines()
                hung.append(f"loop {loop} batch {i + 1}: {pages} page(s) written, then nothing for {timeout:.0f} s "
                            f"(scanimage's last line: {said[-1] if said else '-'})")
                if gdb and shutil.which("gdb"):
                    trace = subprocess.run(["gdb", "-p", str(proc.pid), "-batch", "-ex", "thread apply all bt"],
                                           capture_output=True, text=True, check=False).stdout
                    hung[-1] += "\n" + "\n".join(ln for ln in trace.splitlines() if ln.startswith(("#", "Thread")))
                    gdb = False
                proc.kill()
                proc.wait()
        shutil.rmtree(out, ignore_errors=True)
    return hung


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--batches", type=int, default=400, help="batches per loop")
    ap.add_argument("--loops", type=int, default=4)
    ap.add_argument("--load", type=int, default=6, help="busy processes beside the loops")
    ap.add_argument("--timeout", type=float, default=20.0, help="seconds a ten-page batch may take")
    ap.add_argument("--gdb", action="store_true", help="print the first hung scanimage's threads")
    args = ap.parse_args(argv)
    if shutil.which("scanimage") is None:
        print("scanimage is not installed: apt-get install sane-utils", file=sys.stderr)
        return 2
    print("command: python scripts/bench_sane_hang.py " + " ".join(sys.argv[1:]))
    print(f"machine: cores {os.cpu_count()}; load average {', '.join(f'{v:.2f}' for v in os.getloadavg())}")
    print("scanimage: " + subprocess.run(["scanimage", "--version"], capture_output=True, text=True, check=False).stdout.strip())
    with tempfile.TemporaryDirectory(prefix="sane-hang-") as tmp:
        root = Path(tmp)
        conf = root / "conf"
        conf.mkdir()
        (conf / "dll.conf").write_text("test\n")
        (conf / "test.conf").write_text("".join(f"{k} {v}\n" for k, v in CONF.items()))
        env = {**os.environ, "SANE_CONFIG_DIR": str(conf)}
        busy = [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(args.load)]
        started = time.perf_counter()
        try:
            with ThreadPoolExecutor(max_workers=args.loops) as pool:
                results = list(pool.map(lambda k: run_loop(k, args.batches, args.timeout, root, args.gdb and k == 0, env),
                                        range(args.loops)))
        finally:
            for p in busy:
                p.kill()
                p.wait()
    hung = [h for r in results for h in r]
    total = args.batches * args.loops
    for h in hung:
        print("  " + h)
    print(f"batches {total} of ten pages, {args.loops} at once beside {args.load} busy processes, "
          f"{time.perf_counter() - started:.0f} s: hung {len(hung)} ({100.0 * len(hung) / total:.2f}%)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
