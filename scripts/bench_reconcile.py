"""Benchmark reconciliation of duplicates with originals on a generated pair deck.

Runs the real pipeline through the CLI (``init``, ``ingest --workers 2``, ``import
duplication-log`` (the deck's ballot types), ``reconcile``, ``export pairs``), compares every
serial with the truth in ``expected_pairs.json``, then has the board rule a new duplicate for
every orphan and conflict, adjudicates every queued pair from the truth with two auditors (the
library call behind ``adjudicate`` and the review, which reconciles that serial at once; one
whole ``reconcile`` at the end must find nothing left) and checks the final tallies against
tallies computed from the truth. Prints: mismatches found (recall, must be 100%), precision of what
was flagged, orphans and conflicts reported, and the final tally comparison.

Usage: ``python scripts/bench_reconcile.py [--pairs 1000] [--seed N] [--out DIR] [--profile typical]``
"""

from __future__ import annotations

import argparse
import csv
import io
import json
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

from scanpipe.synth.pairs import generate_pair_deck, write_pair_election

FLAGGED = {"mismatch", "needs_review"}


def cli(db: str, *args: str) -> str:
    cmd = [str(Path(sys.executable).parent / "scanpipe"), "--db", db, *args]
    print("$ scanpipe " + " ".join(args), flush=True)
    done = subprocess.run(cmd, capture_output=True, text=True)
    if done.returncode not in (0, 1):
        raise SystemExit(f"{' '.join(args)} failed ({done.returncode}): {done.stderr}")
    return done.stdout


def truth_tally(election, truth: dict) -> Counter:
    out: Counter = Counter()
    for t in truth.values():
        style = t["style"] if t["status"] != "orphan_original" else t["originals"][0]["style"]
        precinct = t["precinct"] if t["status"] != "orphan_original" else t["originals"][0]["precinct"]
        for cid in election.style(style).contests:
            votes = t["intent"].get(cid, [])
            if len(votes) > election.contest(cid).vote_for:
                out[(precinct, cid, "#overvotes")] += 1
                continue
            for o in votes:
                out[(precinct, cid, o)] += 1
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--pairs", type=int, default=1000)
    ap.add_argument("--seed", type=int, default=int(time.time()) % 100000)
    ap.add_argument("--out", type=Path, default=None, help="a new or empty folder (default: a new temporary folder)")
    ap.add_argument("--profile", default="typical")
    ap.add_argument("--jobs", type=int, default=2)
    args = ap.parse_args()
    out: Path = (args.out or Path(tempfile.mkdtemp(prefix="scanpipe-bench-reconcile-"))).resolve()
    if out.exists() and any(out.iterdir()):
        sys.exit(f"--out {out}: not empty; give a new or empty folder (cards of an earlier deck there would be ingested too)")
    out.mkdir(parents=True, exist_ok=True)
    db = f"sqlite:///{out / 'bench.db'}"
    (out / "bench.db").unlink(missing_ok=True)
    print(f"# python scripts/bench_reconcile.py --pairs {args.pairs} --seed {args.seed} --out {out} --profile {args.profile}")
    t0 = time.perf_counter()
    election_path = write_pair_election(out / "election")
    expected = generate_pair_deck(election_path, out / "deck", pairs=args.pairs, seed=args.seed, profile=args.profile, jobs=args.jobs)
    truth = json.loads(expected.read_text())["serials"]
    t_gen = time.perf_counter() - t0
    cli(db, "init", "--election", str(election_path))
    t1 = time.perf_counter()
    cli(db, "ingest", str(out / "deck" / "cards"), "--workers", "2", "-q")
    t_ingest = time.perf_counter() - t1
    cli(db, "import", "duplication-log", str(out / "deck" / "duplication_log.csv"))
    t2 = time.perf_counter()
    cli(db, "reconcile", "--render-dir", str(out / "new"))
    t_reconcile = time.perf_counter() - t2
    cli(db, "export", "pairs", "--out", str(out / "pairs.csv"))
    rows = {r["serial"]: r for r in csv.DictReader(io.StringIO((out / "pairs.csv").read_text()))}
    report(truth, rows)
    print(f"timing: generate {t_gen:.0f} s, ingest {t_ingest:.0f} s, reconcile {t_reconcile:.1f} s")
    adjudicate_all(db, truth, out)
    from scanpipe.election import load_election

    cli(db, "tally", "--out", str(out / "tally.csv"))
    got = Counter()
    pending = 0
    for r in csv.DictReader(io.StringIO((out / "tally.csv").read_text())):
        if r["option"] == "#pending":
            pending += int(r["votes"])
        elif r["option"] != "#undervotes" and int(r["votes"]):
            got[(r["precinct"], r["contest"], r["option"])] = int(r["votes"])
    want = truth_tally(load_election(election_path), truth)
    diff = {k: (got.get(k, 0), want.get(k, 0)) for k in set(got) | set(want) if got.get(k, 0) != want.get(k, 0)}
    print(f"final tallies: {'EQUAL to the truth' if not diff else f'{len(diff)} rows differ'}; #pending {pending}")
    for k, v in sorted(diff.items())[:20]:
        print(f"  {k}: got {v[0]}, truth {v[1]}")


def report(truth: dict, rows: dict) -> None:
    statuses = Counter((t["status"], rows.get(s, {}).get("status")) for s, t in truth.items())
    n_mis = sum(1 for t in truth.values() if t["status"] == "mismatch")
    found = sum(1 for s, t in truth.items() if t["status"] == "mismatch" and rows.get(s, {}).get("status") == "mismatch")
    flagged = [s for s, r in rows.items() if r["status"] in FLAGGED]
    true_flag = [s for s in flagged if truth.get(s, {}).get("status") in FLAGGED]
    exact = sum(1 for s, t in truth.items() if s in rows and rows[s]["status"] == t["status"] and rows[s]["contests"] == ";".join(t["contests"]))
    print(f"serials: {len(truth)} in truth, {len(rows)} reported; exact status+contests {exact}/{len(truth)}")
    print(f"mismatches found: {found}/{n_mis} ({100 * found / max(1, n_mis):.1f}%) as mismatch; "
          f"{sum(1 for s, t in truth.items() if t['status'] == 'mismatch' and rows.get(s, {}).get('status') in FLAGGED)}/{n_mis} flagged")
    print(f"precision of flags (mismatch/needs_review truly so): {len(true_flag)}/{len(flagged)} ({100 * len(true_flag) / max(1, len(flagged)):.1f}%)")
    for kind in ("orphan_duplicate", "orphan_original", "conflict"):
        want = [s for s, t in truth.items() if t["status"] == kind]
        got = [s for s in want if rows.get(s, {}).get("status") == kind]
        print(f"{kind}: {len(got)}/{len(want)} reported")
    print("truth -> reported:")
    for (a, b), n in sorted(statuses.items(), key=lambda x: (x[0][0], str(x[0][1]))):
        print(f"  {a:17} -> {b or 'MISSING':17} {n}")
    cases = Counter(t["case"] for s, t in truth.items() if rows.get(s, {}).get("status") != t["status"])
    print("cases with a wrong status:", dict(cases))


def adjudicate_all(db: str, truth: dict, out: Path) -> None:
    """Decide every listed contest of every queued pair from the truth (two auditors), one
    contest at a time through the call behind ``scanpipe adjudicate`` and the review (it
    reconciles that serial at once); then one whole ``reconcile``, which must find nothing
    left to do."""
    from scanpipe.decisions import Attestation
    from scanpipe.reconcile.board import rule_on_serial
    from scanpipe.reconcile.rulings import RulingKind
    from scanpipe.reconcile.service import adjudicate_pair, reconcile
    from scanpipe.store.repository import Store
    from scanpipe.workflow import standing

    # a synthetic deck without review accounts: two auditors attest jointly, free names (what `--no-accounts` records)
    test_deck = Attestation(operator="script:bench_reconcile", accounts=False)

    store = Store.open(db)
    ruled = [p.serial for p in standing(store).pairs if p.awaits_board and p.serial in truth]
    for serial in ruled:  # the board: a new duplicate over every contest, decided from the truth below
        rule_on_serial(store, serial, ruling=RulingKind.NEW_DUPLICATE, card=None, members={"Board One": "for", "Board Two": "for"},
                       actor="Board One", note="bench", no_accounts=True)
    print(f"board rulings (new duplicate) on orphans and conflicts: {len(ruled)}")
    s = standing(store)
    n = 0
    t = time.perf_counter()
    for pair in s.pairs:
        if pair.serial not in truth or pair.status.value in ("match", "resolved"):
            continue
        for contest in pair.waiting:
            votes = truth[pair.serial]["intent"].get(contest, [])
            adjudicate_pair(store, pair.serial, contest=contest, votes=votes, auditors=["Auditor One", "Auditor Two"],
                            note="bench: truth", render_dir=out / "new", attestation=test_deck)
            n += 1
    elapsed = time.perf_counter() - t
    made = [nd.serial for nd in store.new_duplicates()]
    summary = reconcile(store, render_dir=out / "new")
    print(f"adjudicated {n} contest(s) in {elapsed:.0f} s ({elapsed / max(n, 1) * 1000:.0f} ms a decision, "
          f"new duplicates rendered included); then a whole reconcile: " + "; ".join(summary.lines()[:1]))
    print(f"new duplicates made by the decisions: {len(made)}; by the whole reconcile after them: {len(summary.new_duplicates)} (must be 0)")


if __name__ == "__main__":
    main()
