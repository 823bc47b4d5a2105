"""Several writer processes on one database: every card stored exactly once, nothing lost,
no "database is locked", concurrent decisions all kept, superseding serialized."""

from __future__ import annotations

import hashlib
import multiprocessing as mp
from typing import Any

import pytest
from sqlalchemy import func, select

from scanpipe.store import DecisionState, ItemKind, Store
from scanpipe.store.models import card_table, contest_reading_table, decision_table, target_score_table
from scanpipe.types import (
    CardKind,
    CardSource,
    ContestOutcome,
    ContestReading,
    InterpretedCard,
    MarkStatus,
    ReadCard,
    Registration,
    TargetReading,
    TargetScore,
)

WORKERS = 4
CARDS = 120
TARGETS = 10
PER_WORKER = 60  # worker k saves cards [30k, 30k + 60) mod 120: each card by two workers
DECISIONS = 15

REG = Registration(homography=(1.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 1.0), method="fiducials",
                   rotated_180=False, dpi=200.0, anchors_found=4, residual_px=0.5)


def card(i: int) -> InterpretedCard:
    sha = hashlib.sha256(f"card {i}".encode()).hexdigest()
    targets = tuple(TargetReading(TargetScore("c", f"o{j}", j / TARGETS, 0.0, 0.0, 0.0, 0.0, 0.0, (1.0, 2.0, 3.0, 4.0)),
                                  MarkStatus.YES if j == i % TARGETS else MarkStatus.NO, "why") for j in range(TARGETS))
    readings = (ContestReading("c", (f"o{i % TARGETS}",), ContestOutcome.COUNTED, 0),
                ContestReading("d", (), ContestOutcome.COUNTED, 1))
    interp = ReadCard(style="S1", page=1, precinct="P01", registration=REG, targets=targets, contests=readings)
    return InterpretedCard(CardSource(sha, sha, f"/scans/{i}.png", 1, 1, "shared"), CardKind.BALLOT, None, None, interp)


def write_from_one_process(url: str, k: int, barrier: Any, results: Any) -> None:
    """Runs in a spawned process: save overlapping cards, add decisions, report counts."""
    store = Store.open(url)
    indices = [(30 * k + n) % CARDS for n in range(PER_WORKER)]
    barrier.wait()
    store.ensure_batch("shared", style="S1")
    inserted = 0
    for start in range(0, len(indices), 7):
        chunk = [card(i) for i in indices[start:start + 7]]
        if start % 2:
            inserted += sum(store.save_card(c) for c in chunk)
        else:
            inserted += store.save_cards(chunk)
        store.add_decision(f"S{k}", ItemKind.PAIR, "c", ["o1"], [f"auditor{k}"], state=DecisionState.FINAL)
    for n in range(DECISIONS - len(range(0, len(indices), 7))):
        store.add_decision(f"card{k}", ItemKind.CARD, "c", [f"o{n}"], [f"auditor{k}"], state=DecisionState.FIRST_HALF)
    store.log_event("worker_done", {"worker": k, "inserted": inserted})
    store.close()
    results.put((k, inserted))


def collect(procs: list[Any], results: Any) -> list[Any]:
    """Wait for the processes (a failed one fails the test at once), then their results."""
    for p in procs:
        p.join(timeout=120)
    assert [p.exitcode for p in procs] == [0] * len(procs)
    return [results.get(timeout=10) for _ in procs]


def run_writers(url: str) -> dict[int, int]:
    ctx = mp.get_context("spawn")
    barrier, results = ctx.Barrier(WORKERS), ctx.Queue()
    procs = [ctx.Process(target=write_from_one_process, args=(url, k, barrier, results)) for k in range(WORKERS)]
    for p in procs:
        p.start()
    return dict(collect(procs, results))


@pytest.fixture
def migrated_url(db_url: str) -> str:
    with Store.open(db_url) as store:
        store.migrate()
    return db_url


@pytest.mark.slow
def test_several_writers_store_every_card_exactly_once(migrated_url: str) -> None:
    inserted = run_writers(migrated_url)
    assert sum(inserted.values()) == CARDS  # each card inserted by exactly one of its two writers
    with Store.open(migrated_url) as store:
        with store.engine.connect() as conn:
            count = {t.name: conn.execute(select(func.count()).select_from(t)).scalar_one()
                     for t in (card_table, target_score_table, contest_reading_table, decision_table)}
        assert count == {"card": CARDS, "target_score": CARDS * TARGETS, "contest_reading": CARDS * 2,
                         "decision": WORKERS * DECISIONS}
        assert {s.card_id: s.card for s in store.iter_cards()} == {card(i).source.card_id: card(i) for i in range(CARDS)}
        assert len({d.id for d in store.decisions()}) == WORKERS * DECISIONS
        assert sorted(e.detail["worker"] for e in store.events("worker_done")) == list(range(WORKERS))
        assert [b.style for b in store.list_batches()] == ["S1"]


def decide_from_one_process(url: str, k: int, barrier: Any, results: Any) -> None:
    """Runs in a spawned process: read the item's decisions, supersede the live ones and
    append a new final one, all in one transaction (what ``adjudicate`` does)."""
    store = Store.open(url)
    barrier.wait()
    for n in range(5):
        with store.transaction() as tx:
            live = [d for d in tx.decisions(item="A1") if d.state != DecisionState.SUPERSEDED]
            for d in live:
                tx.set_decision_state(d.id, DecisionState.SUPERSEDED)
            tx.add_decision("A1", ItemKind.PAIR, "c", [f"o{k}"], [f"auditor{k}-{n}"], state=DecisionState.FINAL,
                            supersedes=live[-1].id if live else None)
    store.close()
    results.put(k)


def test_deciding_the_same_item_from_several_processes_is_serialized(migrated_url: str) -> None:
    ctx = mp.get_context("spawn")
    barrier, results = ctx.Barrier(3), ctx.Queue()
    procs = [ctx.Process(target=decide_from_one_process, args=(migrated_url, k, barrier, results)) for k in range(3)]
    for p in procs:
        p.start()
    assert sorted(collect(procs, results)) == [0, 1, 2]
    with Store.open(migrated_url) as store:
        decisions = store.decisions("A1")
    assert len(decisions) == 15
    assert [d.state for d in decisions].count(DecisionState.FINAL) == 1  # exactly one live decision
    links = [d.supersedes for d in decisions]
    assert links[0] is None and links[1:] == [d.id for d in decisions[:-1]]  # one chain: none superseded twice
