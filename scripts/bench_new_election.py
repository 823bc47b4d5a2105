#!/usr/bin/env python3
"""A new election from the vendor's blanks, end to end: layouts proposed by `calibrate
layout`, then every labelled voted card read against them (the README's walk-through, measured).

For each labelled real set (``fixtures/realballots/<set>/``: ``election.json``, hand-checked
layouts, ``truth.json``), every style's layout is proposed again, with no person's help, from
the blank its hand-checked layout names as ``reference`` (a scan) or, with ``--pdf-dir``,
from the vendor's ``<style>.pdf``; the proposals are written into a fresh copy of the set
and the set's voted cards are read against them as ``bench_real.py`` reads them. Printed:
per style whether the proposal was complete (every option placed; a target found and left
over is allowed, the command exits 1 for a person to look), then ``bench_real.py``'s line:
style right / queued / wrong, definite errors, clear targets sent to a person.

    python scripts/bench_new_election.py --set fixtures/realballots/cedar2008primary --shared ../shared/realballots
    python scripts/bench_new_election.py --set fixtures/realballots/calhoun2010primary --shared ../shared/realballots \\
        --pdf-dir ../shared/realballots/calhoun2010primary/blankpdfs

A layout proposed with options left over is still read (the election then refuses to load
and the set is reported as such): nothing here is patched by hand.
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "scripts"))

import bench_real  # noqa: E402


def _scanpipe() -> list[str]:
    return [sys.executable, "-c", "import sys; from scanpipe.cli import main; sys.exit(main())"]


def propose(folder: Path, shared: Path, pdf_dir: Path | None, out: Path) -> list[str]:
    """Write a copy of the set into ``out`` with every layout proposed anew; one line per style."""
    out.mkdir(parents=True)
    for name in ("election.json", "truth.json"):
        shutil.copy(folder / name, out / name)
    definition = json.loads((folder / "election.json").read_text())
    lines = []
    for style in definition["ballot_styles"]:
        hand = folder / style["layout"]
        if pdf_dir is not None:
            blanks = [pdf_dir / f"{style['id']}.pdf"]
        else:
            refs = [(hand.parent / p["reference"]).resolve() for p in json.loads(hand.read_text())["pages"]]
            blanks = [shared / folder.name / r.parent.name / r.name if (shared / folder.name / r.parent.name / r.name).is_file() else r
                      for r in refs]
        target = out / style["layout"]
        target.parent.mkdir(parents=True, exist_ok=True)
        command = [*_scanpipe(), "calibrate", "layout", *[a for b in blanks for a in ("--blank", str(b))],
                   "--election", str(out / "election.json"), "--style", style["id"], "--out", str(target)]
        done = subprocess.run(command, capture_output=True, text=True, check=False)
        said = (done.stderr.strip().splitlines() or ["failed"])[-1]
        verdict = "complete" if done.returncode == 0 else said.split(";")[0].replace("calibrate layout: ", "left for a person: ")
        assigned = next((ln.split(";")[0] for ln in done.stdout.splitlines() if "target(s) assigned" in ln), "nothing assigned")
        lines.append(f"  {style['id']:<32} {assigned:<24} {verdict}")
    return lines


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--set", type=Path, required=True, help="a labelled set: fixtures/realballots/<set>")
    ap.add_argument("--shared", type=Path, default=ROOT.parent / "shared" / "realballots", help="the scanned ballots")
    ap.add_argument("--pdf-dir", type=Path, help="propose from <style>.pdf here instead of the blank scans")
    ap.add_argument("--jobs", type=int, default=2)
    args = ap.parse_args(argv)
    print("command: python scripts/bench_new_election.py " + " ".join(sys.argv[1:] if argv is None else argv))
    with tempfile.TemporaryDirectory(prefix="scanpipe-new-election-") as tmp:
        copy = Path(tmp) / args.set.name
        for line in propose(args.set.resolve(), args.shared.resolve(), args.pdf_dir.resolve() if args.pdf_dir else None, copy):
            print(line)
        try:
            counts, results = bench_real.run_set(copy, args.shared.resolve(), args.jobs)
        except Exception as exc:  # noqa: BLE001 - a proposal the election refuses: say so, do not patch it
            print(f"the proposed layouts do not load: {exc}")
            return 1
        print(bench_real.report(args.set.name, counts))
        for r in results:
            if r["style"] != "right":
                print(f"    {r['file']}: {r.get('why', '')}")
    ok = counts["definite_errors"] == 0 and counts["style_wrong"] == 0
    print("no definite error, no wrong style" if ok else "DEFINITE ERRORS or wrong styles")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
