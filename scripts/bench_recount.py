#!/usr/bin/env python3
"""Benchmark of the recount case: a generated recount of N cards over P precincts; the time from
the last card read to the report written, and the report's size.

The cards are generated as read cards (typed values with every target's reading, as ingest
stores them; no images: the figure starts after the last card was read), for one election of
P precincts on one ballot style. Votes for governor are drawn from a seeded generator; a few
marks are unclear (decided by two auditors); one card in a hundred belongs to a duplicate /
original pair, a fifth of those mismatched in governor and decided by two auditors. The
certified canvass is the truth with two precincts miscounted. A petition by the candidate
certified second opens the case for every precinct before the cards are read.

Timed after the last card is stored: ``reconcile`` (pairs, new duplicates) and
``recount report --out`` (status, costs, report.json, report.html, report.pdf, results.json
validated against NIST SP 1500-100), both through the library calls the CLI makes.

    python scripts/bench_recount.py [--cards 10000] [--precincts 20] [--seed 11] [--db URL]
"""

from __future__ import annotations

import argparse
import csv
import json
import random
import sys
import tempfile
import time
from collections import Counter
from dataclasses import replace
from datetime import date, timedelta
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from scanpipe.decisions import Attestation
from scanpipe.reconcile.service import reconcile
from scanpipe.recount import service
from scanpipe.recount.petition import PetitionRequest
from scanpipe.store.repository import Store
from scanpipe.synth.definition import write_demo_election
from scanpipe.types import CardKind, Election, InterpretedCard, MarkStatus, PairingLabel
from scanpipe.workflow import init_election, record_decision
from tests.helpers import read_card

GOV = ("gov-a", "gov-b", "gov-c")
WEIGHTS = (0.46, 0.44, 0.10)
AUDITORS = ["bench-ann", "bench-bob"]
ATTESTATION = Attestation("cli:bench_recount@localhost", accounts=False)  # a generated deck has no accounts


def write_election(folder: Path, precincts: int) -> Path:
    """The demo election's contests and layout S1, served to ``precincts`` precincts."""
    path = write_demo_election(folder)
    definition = json.loads(path.read_text())
    definition["precincts"] = [{"id": f"P{i:02d}", "name": f"Precinct {i} Ward {chr(64 + (i - 1) % 26 + 1)}", "county": "Demo"}
                               for i in range(1, precincts + 1)]
    s1 = next(s for s in definition["ballot_styles"] if s["id"] == "S1")
    s1["precincts"] = [p["id"] for p in definition["precincts"]]
    definition["ballot_styles"] = [s1]
    path.write_text(json.dumps(definition, indent=1))
    return path


def generate(election: Election, n_cards: int, precincts: int, rng: random.Random) -> tuple[list[InterpretedCard], Counter, list[str], list[str]]:
    """Cards, the true governor count per (precinct, option), unclear cards, mismatched serials."""
    cards: list[InterpretedCard] = []
    truth: Counter = Counter()
    unclear: list[str] = []
    mismatched: list[str] = []
    n_pairs = n_cards // 100
    for i in range(n_cards):
        p = f"P{i % precincts + 1:02d}"
        choice = rng.choices(GOV, WEIGHTS)[0]
        cid = f"{i:064x}"
        pair = i < 2 * n_pairs
        marks = {"gov": {choice: MarkStatus.YES}, "council": {"council-a": MarkStatus.YES}, "q1": {"q1-for": MarkStatus.YES}}
        if not pair and rng.random() < 0.02:
            marks["gov"][choice] = MarkStatus.UNKNOWN
            unclear.append(cid)
        kind, label = CardKind.BALLOT, None
        if pair:
            serial = f"B{i // 2:06d}"
            kind = CardKind.DUPLICATE if i % 2 == 0 else CardKind.ORIGINAL
            label = PairingLabel(kind, serial, serial, None)
            if kind is CardKind.ORIGINAL and (i // 2) % 5 == 0:  # the original says otherwise: a person decides
                marks["gov"] = {GOV[(GOV.index(cards[-1].interpretation.contests[0].votes[0]) + 1) % 3]: MarkStatus.YES}  # type: ignore[union-attr]
                mismatched.append(serial)
            elif kind is CardKind.ORIGINAL:
                marks["gov"] = {cards[-1].interpretation.contests[0].votes[0]: MarkStatus.YES}  # type: ignore[union-attr]
        card = read_card(cid, election, "S1", p, marks, kind=kind)
        cards.append(replace(card, label=label) if label else card)
        if kind is not CardKind.ORIGINAL:
            truth[(p, choice if kind is CardKind.BALLOT else card.interpretation.contests[0].votes[0])] += 1  # type: ignore[union-attr]
    return cards, truth, unclear, mismatched


def certified_file(folder: Path, election: Election, truth: Counter) -> tuple[Path, str, str]:
    """The canvass: the truth with two precincts miscounted (votes moved from the leader to the second)."""
    totals = Counter()
    for (_p, o), n in truth.items():
        totals[o] += n
    (leader, _), (second, _) = totals.most_common(2)
    figures = dict(truth)
    precincts = [p.id for p in election.precincts]
    moved = (totals[leader] - totals[second]) // 2 + 1
    for p in precincts[:2]:
        n = min(moved, figures.get((p, leader), 0))
        figures[(p, leader)] = figures.get((p, leader), 0) - n
        figures[(p, second)] = figures.get((p, second), 0) + n
        moved -= n
    path = folder / "certified.csv"
    with path.open("w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["precinct", "contest", "option", "votes"])
        for p in precincts:
            for o in election.contest("gov").options:
                w.writerow([p, "gov", o.id, figures.get((p, o.id), 0)])
    return path, leader, second


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--cards", type=int, default=10_000)
    ap.add_argument("--precincts", type=int, default=20)
    ap.add_argument("--seed", type=int, default=11)
    ap.add_argument("--db", default=None, help="SQLAlchemy URL of an empty database (default: SQLite in a temporary folder)")
    ap.add_argument("--out", type=Path, default=None, help="Folder for the election and the report (default: temporary)")
    args = ap.parse_args()
    folder = args.out or Path(tempfile.mkdtemp(prefix="scanpipe-bench-recount-"))
    if folder.exists() and any(folder.iterdir()):
        sys.exit(f"{folder}: not empty; give a fresh --out")
    folder.mkdir(parents=True, exist_ok=True)
    store = Store.open(args.db or f"sqlite:///{folder / 'bench.db'}")
    store.migrate()
    election, _ = init_election(store, write_election(folder / "election", args.precincts))
    rng = random.Random(args.seed)
    cards, truth, unclear, mismatched = generate(election, args.cards, args.precincts, rng)
    path, leader, second = certified_file(folder, election, truth)
    service.import_certified(store, path)
    day = date.fromisoformat(election.date) + timedelta(days=10)
    petition, ok = service.petition(store, PetitionRequest("gov", leader, day + timedelta(days=1), day))
    if not ok:
        sys.exit(f"the petition was refused: {petition['reasons']}")
    started = time.perf_counter()
    for i in range(0, len(cards), 1000):
        store.save_cards(cards[i:i + 1000])
    stored = time.perf_counter() - started
    for cid in unclear:
        card = next(c for c in cards if c.source.card_id == cid)
        votes = list(card.interpretation.contests[0].unknown_options)  # type: ignore[union-attr]
        record_decision(store, election, item=cid, item_kind="card", contest="gov", votes=votes, auditors=AUDITORS, rule=None, note=None,
                        attestation=ATTESTATION)
    t0 = time.perf_counter()  # the last card is read and stored; people decided the unclear marks
    summary = reconcile(store)
    t_reconcile = time.perf_counter() - t0
    for serial in mismatched:  # the auditors read the original (the duplicate was copied wrongly)
        original = next(c for c in cards if c.label is not None and c.label.serial == serial and c.kind is CardKind.ORIGINAL)
        record_decision(store, election, item=serial, item_kind="pair", contest="gov",
                        votes=list(original.interpretation.contests[0].votes), auditors=AUDITORS, rule=None, note=None,  # type: ignore[union-attr]
                        attestation=ATTESTATION)
    t1 = time.perf_counter()
    reconcile(store)
    t_reconcile += time.perf_counter() - t1
    t2 = time.perf_counter()
    written = service.write_report(store, folder / "report")
    t_report = time.perf_counter() - t2
    total = t_reconcile + t_report
    size = sum(f["bytes"] for f in written["files"].values())
    print(f"recount of {args.cards:,} cards over {args.precincts} precincts (seed {args.seed}; {len(unclear)} unclear marks decided, "
          f"{args.cards // 100} serials, {len(mismatched)} mismatched and decided); cards stored in {stored:.1f} s")
    print(f"  first reconcile: {' '.join(summary.lines()[:1])}")
    print(f"  reconcile (both passes, around the pair decisions) {t_reconcile:.2f} s; recount report {t_report:.2f} s")
    print(f"  time from the last card read to the report written (without the people's pair decisions): {total:.2f} s (target < 30 s)")
    print(f"  report: {size:,} bytes in {folder / 'report'}: " + ", ".join(f"{n} {f['bytes']:,}" for n, f in written["files"].items()))
    from scanpipe.recount.render import left_text

    left = left_text(json.loads((folder / "report" / "report.json").read_text()))
    print(f"  complete: {written['complete']}" + ("" if written["complete"] else f" ({left})")
          + f"; outcome changed: {written['outcome_changed']}; payer: {written['payer']}")
    store.close()


if __name__ == "__main__":
    main()
