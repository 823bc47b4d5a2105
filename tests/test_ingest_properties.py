"""Properties of ingest on real images: order does not matter, re-ingesting changes nothing."""

from __future__ import annotations

import itertools
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from scanpipe.store.repository import Store
from scanpipe.types import CardHints
from scanpipe.workflow import ingest_paths, init_election, queue, tally

ROOT = Path(__file__).resolve().parents[1]
FIX = ROOT / "fixtures" / "ballot_images"
FILES = sorted(str(p) for p in (FIX / "deck" / "cards").iterdir() if p.suffix in {".png", ".jpg", ".tif", ".pdf"})[:8]
_counter = itertools.count()


def fresh_store(tmp: Path) -> Store:
    store = Store.open(f"sqlite:///{tmp / f'p{next(_counter)}.db'}")
    store.migrate()
    init_election(store, FIX / "election" / "election.json")
    return store


def outcome(store: Store) -> tuple[list, list]:
    return [(r.precinct, r.contest, r.option, r.votes) for r in tally(store)], sorted((q.item, q.reason) for q in queue(store))


def test_reingesting_the_same_files_changes_nothing(tmp_path: Path) -> None:
    store = fresh_store(tmp_path)
    first = ingest_paths(store, FILES, batch="b", hints=CardHints())
    before = outcome(store)
    again = ingest_paths(store, FILES, batch="b", hints=CardHints())
    assert first.cards_stored > 0 and again.cards_stored == 0 and again.files_already == len(FILES)
    assert f"{len(FILES)} file(s) stored by an earlier run (not read again)" in again.lines()[0]  # the person is told why nothing was stored
    assert outcome(store) == before
    assert store.count_cards() == first.cards_stored


@pytest.mark.slow
@settings(max_examples=4, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.permutations(FILES), st.integers(1, len(FILES) - 1))
def test_tally_and_queue_do_not_depend_on_ingest_order_or_batching(tmp_path: Path, order: list[str], cut: int) -> None:
    reference = fresh_store(tmp_path)
    ingest_paths(reference, FILES, batch="b", hints=CardHints())
    store = fresh_store(tmp_path)
    ingest_paths(store, order[:cut], batch="b1", hints=CardHints())
    ingest_paths(store, order[cut:], batch="b2", hints=CardHints(), workers=2)
    assert outcome(store) == outcome(reference)
