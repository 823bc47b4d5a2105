#!/usr/bin/env python
"""Chaos benchmark: random SIGKILLs of ``ingest``, ``reconcile`` and ``adjudicate`` (and of a
Dask worker), each step then run again, against the same steps run without interruption.

One synthetic pair deck (``scanpipe.synth.pairs``: duplicates, originals, mismatches,
orphans, conflicts) is processed twice, through the real command line, each in its own
SQLite database:

* **reference**: ``init``; ``ingest --workers 2``; ``reconcile``; then ``adjudicate`` of
  every contest the queue lists for a pair, with the truth's votes and two auditors;
* **chaos**: the same steps; ``--kills`` SIGKILLs are spread at random over them (the kill
  lands a random fraction into the step's reference duration); after a kill the step is run
  again until it completes, as an operator would: ``ingest`` and ``reconcile`` simply
  again, a killed ``adjudicate`` again only if the queue still lists that contest. One kill
  (``--dask-kills``) is of a Dask worker process during an ``ingest --executor dask``,
  which must still complete.

After every kill the killed process's descendants must end by themselves (pool workers die
with their parent): any still running after ``--orphan-wait`` seconds are counted (and
then killed). Prints lost and doubled cards (card ids of the reference missing, or extra,
in the chaos run; stored decisions), and whether the tally, the queue and the CVR export
(UniqueId, snapshots, statuses; the run's own folder names normalised) equal the reference
run's. Target: 0 lost, 0 doubled, all equal, 20 kills, 0 orphans.

    python scripts/bench_chaos.py --pairs 80 --kills 20 --seed 4711
"""

from __future__ import annotations

import argparse
import json
import os
import random
import signal
import subprocess
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

import psutil

ROOT = Path(__file__).resolve().parents[1]


@dataclass
class Step:
    name: str  # "ingest" | "reconcile" | "adjudicate"
    args: list[str]
    contest: tuple[str, str] | None = None  # (serial, contest) of an adjudicate step
    seconds: float = 0.0  # its duration in the reference run


@dataclass
class Chaos:
    kills: Counter[str] = field(default_factory=Counter)
    landed_after_exit: int = 0  # the step had already finished when the kill was due
    orphans: int = 0
    reruns: int = 0


class Runner:
    def __init__(self, root: Path, db: Path, no_accounts: bool) -> None:
        self.root, self.db, self.no_accounts = root, db, no_accounts

    def argv(self, args: Sequence[str]) -> list[str]:
        extra = ["--no-accounts"] if self.no_accounts and args and args[0] == "adjudicate" else []
        return [sys.executable, "-m", "scanpipe.cli", "--db", f"sqlite:///{self.db}", *args, *extra]

    def run(self, args: Sequence[str], ok: tuple[int, ...] = (0, 1)) -> subprocess.CompletedProcess[str]:
        done = subprocess.run(self.argv(args), capture_output=True, text=True, cwd=self.root)
        if done.returncode not in ok:
            raise SystemExit(f"scanpipe {' '.join(args)} failed ({done.returncode}):\n{done.stdout}\n{done.stderr}")
        return done

    def queue(self) -> list[dict[str, object]]:
        return json.loads(self.run(["queue", "--json"], ok=(0,)).stdout)


def pair_decisions(runner: Runner, truth: dict[str, dict]) -> list[Step]:
    """One ``adjudicate`` per contest the queue lists for a pair, votes from the truth."""
    steps = []
    for item in runner.queue():
        if item["kind"] != "pair" or item["item"] not in truth:
            continue
        serial = str(item["item"])
        for contest in item["contests"]:  # type: ignore[attr-defined]
            votes = ",".join(truth[serial]["intent"].get(contest, []))
            steps.append(Step("adjudicate", ["adjudicate", serial, "--contest", contest, "--votes", votes,
                                             "--auditor", "Auditor One", "--auditor", "Auditor Two",
                                             "--render-dir", "new"], (serial, contest)))
    return steps


def still_listed(runner: Runner, serial: str, contest: str) -> bool:
    return any(i["item"] == serial and contest in i["contests"] and i["reason"] not in ("awaiting_second_auditor", "escalated")
               for i in runner.queue())


def run_reference(runner: Runner, deck: Path, election: Path, truth: dict[str, dict]) -> list[Step]:
    steps = [Step("ingest", ["ingest", str(deck), "--batch", "chaos", "--workers", "2", "-q"]),
             Step("reconcile", ["reconcile", "--render-dir", "new"])]
    runner.run(["init", "--election", str(election)], ok=(0,))
    for step in steps:
        step.seconds = timed(runner, step.args)
    decisions = pair_decisions(runner, truth)
    for step in decisions:
        step.seconds = timed(runner, step.args)
    # the day closes with a reconcile, as a board's procedure does: it finds nothing to make, and
    # writes the paper of a new duplicate whose decision a kill let be stored without it (an
    # operator who sees the decision recorded does not run it again)
    closing = Step("reconcile", ["reconcile", "--render-dir", "new"])
    closing.seconds = timed(runner, closing.args)
    return steps + decisions + [closing]


def timed(runner: Runner, args: Sequence[str]) -> float:
    t = time.perf_counter()
    runner.run(args)
    return time.perf_counter() - t


def kill_during(runner: Runner, step: Step, rng: random.Random, chaos: Chaos, orphan_wait: float) -> None:
    """Start ``step``, SIGKILL it a random fraction into its reference duration, check that
    its descendants end by themselves."""
    proc = subprocess.Popen(runner.argv(step.args), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, cwd=runner.root)
    ps = psutil.Process(proc.pid)
    due = time.monotonic() + rng.uniform(0.15, 1.0) * max(step.seconds, 0.5)
    tree: set[psutil.Process] = set()
    while time.monotonic() < due and proc.poll() is None:
        tree |= set(_descendants(ps))
        time.sleep(0.02)
    if proc.poll() is not None:
        chaos.landed_after_exit += 1
    else:
        tree |= set(_descendants(ps))
        os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    chaos.kills[step.name] += 1
    chaos.orphans += reap(tree, orphan_wait)


def kill_a_dask_worker(runner: Runner, ingest: list[str], chaos: Chaos, orphan_wait: float) -> None:
    """Run ``ingest ... --executor dask --workers 2``, SIGKILL one worker process once cards
    are being stored; the ingest must complete (the scheduler runs the lost tasks again)."""
    args = [*ingest, "--executor", "dask", "--workers", "2"]
    proc = subprocess.Popen(runner.argv(args), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=runner.root)
    ps = psutil.Process(proc.pid)
    start = stored_cards(runner.db)
    victim = None
    tree: set[psutil.Process] = set()
    while proc.poll() is None and victim is None:
        tree |= set(_descendants(ps))
        workers = [p for p in tree if any("spawn" in a for a in _cmdline(p)) and _running(p)]
        if len(workers) >= 2 and stored_cards(runner.db) > start:
            victim = workers[-1]
            try:
                victim.kill()
            except psutil.NoSuchProcess:
                victim = None
        time.sleep(0.05)
    out, err = proc.communicate()
    if proc.returncode not in (0, 1):
        raise SystemExit(f"ingest with a Dask worker killed failed ({proc.returncode}):\n{out}\n{err}")
    if victim is None:
        chaos.landed_after_exit += 1
    chaos.kills["dask worker"] += 1
    chaos.orphans += reap(tree, orphan_wait)


def _descendants(ps: psutil.Process) -> list[psutil.Process]:
    try:
        return ps.children(recursive=True)
    except psutil.NoSuchProcess:
        return []


def _cmdline(p: psutil.Process) -> list[str]:
    try:
        return list(p.cmdline())
    except psutil.Error:
        return []


def reap(tree: set[psutil.Process], wait: float) -> int:
    """Wait up to ``wait`` s for the killed process's descendants to end; kill and count
    those still running."""
    deadline = time.monotonic() + wait
    alive = [p for p in tree if _running(p)]
    while alive and time.monotonic() < deadline:
        time.sleep(0.1)
        alive = [p for p in alive if _running(p)]
    for p in alive:
        try:
            p.kill()
        except psutil.NoSuchProcess:
            pass
    return len(alive)


def _running(p: psutil.Process) -> bool:
    try:
        return p.is_running() and p.status() != psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return False


def stored_cards(db: Path) -> int:
    import sqlite3

    try:
        with sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=0.5) as conn:
            return int(conn.execute("select count(*) from card").fetchone()[0])
    except sqlite3.Error:
        return 0


def run_chaos(runner: Runner, election: Path, steps: list[Step], deck: Path, kills: int, dask_kills: int, rng: random.Random,
              orphan_wait: float) -> Chaos:
    """The reference's steps with ``kills`` SIGKILLs: each kill picks a command (ingest,
    reconcile, adjudicate) at random, then one of its steps. The Dask worker kills come first,
    each in an ``ingest --executor dask`` of part of the deck (so the worker has cards left to
    read when it is killed)."""
    chaos = Chaos()
    runner.run(["init", "--election", str(election)], ok=(0,))
    by_name: dict[str, list[int]] = {}
    for index, step in enumerate(steps):
        by_name.setdefault(step.name, []).append(index)
    planned = Counter(rng.choice(by_name[rng.choice(sorted(by_name))]) for _ in range(kills - dask_kills))
    files = sorted(str(f) for f in deck.iterdir() if f.is_file())
    for k in range(dask_kills):
        part = files[k * len(files) // (2 * dask_kills):(k + 1) * len(files) // (2 * dask_kills)]
        kill_a_dask_worker(runner, ["ingest", *part, "--batch", "chaos", "-q"], chaos, orphan_wait)
    for index, step in enumerate(steps):
        for _ in range(planned[index]):
            if step.contest is not None and not still_listed(runner, *step.contest):
                break  # a killed adjudicate had recorded it already: an operator would see it in the queue
            kill_during(runner, step, rng, chaos, orphan_wait)
        if step.contest is not None and not still_listed(runner, *step.contest):
            continue
        runner.run(step.args)
        chaos.reruns += planned[index] > 0
    return chaos


def outcome(runner: Runner, folder: Path) -> dict[str, object]:
    """What the run ended with: card ids, decisions, tally, queue, CVRs (normalised)."""
    import sqlite3

    with sqlite3.connect(runner.db) as conn:
        cards = sorted(r[0] for r in conn.execute("select card_id from card"))
        paths = Counter(r[0] for r in conn.execute("select path || '#' || page_index from card"))
        decisions = sorted(tuple(r) for r in conn.execute("select item, contest, votes, state from decision"))
    runner.run(["tally", "--out", str(folder / "tally.csv")])
    runner.run(["export", "cvr", "--out", str(folder / "cvr.json")], ok=(0,))
    cvr = json.loads((folder / "cvr.json").read_text())
    records = sorted((_normal(c, runner.root) for c in cvr["CVR"]), key=lambda c: str(c.get("UniqueId")))
    return {"cards": cards, "paths": paths, "decisions": decisions, "tally": (folder / "tally.csv").read_text(),
            "queue": runner.queue(), "cvr": records}


def _normal(value: object, root: Path) -> object:
    """A CVR with the run's own folder written as ``<run>`` (new duplicates' image paths)."""
    text = json.dumps(value, sort_keys=True).replace(str(root), "<run>")
    return json.loads(text)


def located_elsewhere(ref: list[dict], got: list[dict]) -> list[str] | None:
    """UniqueIds whose CVRs differ only in a ``BallotImage`` Location with the same Hash (a
    rendered new duplicate whose PNG was not written to --render-dir because a kill landed
    after its decision was stored: ``export`` writes it from the database, elsewhere), or
    None when anything else differs."""
    def without_locations(cvr: dict) -> dict:
        text = json.dumps(cvr, sort_keys=True)
        out = json.loads(text)
        for image in out.get("BallotImage", []):
            image.pop("Location", None)
        return out

    if len(ref) != len(got):
        return None
    moved = []
    for a, b in zip(ref, got):
        if a == b:
            continue
        if without_locations(a) != without_locations(b):
            return None
        moved.append(str(a.get("UniqueId")))
    return moved


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--pairs", type=int, default=80)
    ap.add_argument("--kills", type=int, default=20)
    ap.add_argument("--dask-kills", type=int, default=1, help="of these kills, how many are of a Dask worker during ingest")
    ap.add_argument("--seed", type=int, default=int(time.time()) % 100000)
    ap.add_argument("--orphan-wait", type=float, default=10.0, help="seconds a killed process's children have to end")
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--out", type=Path, default=None)
    args = ap.parse_args(argv)
    out = (args.out or Path(tempfile.mkdtemp(prefix="scanpipe-bench-chaos-"))).resolve()
    out.mkdir(parents=True, exist_ok=True)
    print(f"# python scripts/bench_chaos.py --pairs {args.pairs} --kills {args.kills} --dask-kills {args.dask_kills} --seed {args.seed}")
    from scanpipe.synth.pairs import generate_pair_deck, write_pair_election

    t = time.perf_counter()
    election = write_pair_election(out / "election")
    expected = generate_pair_deck(election, out / "deck", pairs=args.pairs, seed=args.seed, jobs=args.jobs)
    truth = json.loads(expected.read_text())["serials"]
    files = sum(1 for f in (out / "deck" / "cards").rglob("*") if f.is_file())
    print(f"deck: {args.pairs} serials, {files} card files (seed {args.seed}) in {time.perf_counter() - t:.0f} s")
    help_text = subprocess.run([sys.executable, "-m", "scanpipe.cli", "adjudicate", "--help"], capture_output=True, text=True).stdout
    no_accounts = "--no-accounts" in help_text
    reference = Runner(out / "reference", out / "reference" / "scan.db", no_accounts)
    chaotic = Runner(out / "chaos", out / "chaos" / "scan.db", no_accounts)
    for r in (reference, chaotic):
        r.root.mkdir(exist_ok=True)
    t = time.perf_counter()
    steps = run_reference(reference, out / "deck" / "cards", election, truth)
    print(f"reference run: {len(steps)} steps (ingest, reconcile, {len(steps) - 3} adjudicate, a closing reconcile) in {time.perf_counter() - t:.0f} s")
    t = time.perf_counter()
    chaos = run_chaos(chaotic, election, steps, out / "deck" / "cards", args.kills, min(args.dask_kills, args.kills),
                      random.Random(args.seed), args.orphan_wait)
    print(f"chaos run: {sum(chaos.kills.values())} kills ({', '.join(f'{k} {n}' for k, n in sorted(chaos.kills.items()))}; "
          f"{chaos.landed_after_exit} found the step already finished) and every step completed after them, "
          f"in {time.perf_counter() - t:.0f} s")
    ref, got = outcome(reference, reference.root), outcome(chaotic, chaotic.root)
    lost = sorted(set(ref["cards"]) - set(got["cards"]))  # type: ignore[arg-type]
    extra = sorted(set(got["cards"]) - set(ref["cards"]))  # type: ignore[arg-type]
    doubled_paths = sum(n - 1 for n in got["paths"].values() if n > 1)  # type: ignore[attr-defined]
    print(f"cards: reference {len(ref['cards'])}, chaos {len(got['cards'])}: lost {len(lost)}, "  # type: ignore[arg-type]
          f"doubled {len(extra) + doubled_paths} (extra ids {len(extra)}, a file page stored twice {doubled_paths})")
    print(f"decisions: reference {len(ref['decisions'])}, chaos {len(got['decisions'])}: "  # type: ignore[arg-type]
          f"{'equal' if ref['decisions'] == got['decisions'] else 'DIFFERENT'}")
    for key in ("tally", "queue"):
        print(f"{key}: {'equal' if ref[key] == got[key] else 'DIFFERENT'} to the uninterrupted run")
    moved = located_elsewhere(ref["cvr"], got["cvr"])  # type: ignore[arg-type]
    if ref["cvr"] == got["cvr"]:
        print("cvr: equal to the uninterrupted run")
    elif moved is not None:
        print(f"cvr: equal to the uninterrupted run except the Location of {len(moved)} rendered new duplicate image(s) "
              f"(same Hash): {', '.join(moved)}")
    else:
        print("cvr: DIFFERENT to the uninterrupted run")
    print(f"processes left running by a killed command after {args.orphan_wait:g} s: {chaos.orphans}")
    print(f"(folders kept in {out})")
    ok = not lost and not extra and not doubled_paths and all(ref[k] == got[k] for k in ("decisions", "tally", "queue")) \
        and moved is not None and chaos.orphans == 0
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
