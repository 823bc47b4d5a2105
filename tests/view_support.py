"""A review world of real scanned cards for the pages people read (no tests here).

The fixture pair deck (``fixtures/ballot_images/pairs``: a match, a mismatch, a provisional
original, a machine-printed original, an orphan duplicate, an orphan original and a conflict)
plus two regular cards with marks for a person, ingested, reconciled and indexed, with one
account per role. Built once per process, copied for each test.
"""

from __future__ import annotations

import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path

from flask import Flask

from scanpipe.reconcile.service import reconcile
from scanpipe.review import create_app
from scanpipe.review.accounts import add_user, approve_user
from scanpipe.review.index import refresh_all
from scanpipe.store.repository import Store
from scanpipe.types import CardHints
from scanpipe.workflow import ingest_paths, init_election
from tests.test_review_support import PASSWORDS, ROLES, SETUP_ADMINS  # also makes password hashing cheap for tests

FIXTURES = Path(__file__).parent.parent / "fixtures" / "ballot_images"
ELECTION = FIXTURES / "pairs" / "election" / "election.json"
PAIR_CARDS = FIXTURES / "pairs" / "deck" / "cards"
REGULAR_CARDS = ("0006.jpg", "0014-p1.png")  # marks for a person in County Council, in Governor
MISMATCH = "F00001QAYQV"  # Question 2 differs
CONFLICT = "F000065S"  # a serial on one duplicate and two originals
ORPHAN = "F00004"  # a duplicate without its original


@dataclass
class PairWorld:
    store: Store
    app: Flask
    folder: Path


_TEMPLATE: dict[str, Path] = {}


def build_pair_world(tmp_path: Path) -> PairWorld:
    if "db" not in _TEMPLATE:
        folder = Path(tempfile.mkdtemp(prefix="scanpipe-view-"))
        _build(folder)
        _TEMPLATE["db"] = folder
    shutil.copy(_TEMPLATE["db"] / "view.db", tmp_path / "view.db")
    store = Store.open(f"sqlite:///{tmp_path / 'view.db'}")
    return PairWorld(store, create_app(store), tmp_path)


def _build(folder: Path) -> None:
    regular = folder / "regular"
    regular.mkdir()
    for name in REGULAR_CARDS:
        shutil.copy(FIXTURES / "deck" / "cards" / name, regular / name)
    store = Store.open(f"sqlite:///{folder / 'view.db'}")
    store.migrate()
    init_election(store, ELECTION)
    ingest_paths(store, [str(regular)], batch="B01", hints=CardHints())
    ingest_paths(store, [str(PAIR_CARDS)], batch="B02", hints=CardHints())
    reconcile(store, render_dir=folder / "new-duplicates")
    for name in SETUP_ADMINS:
        add_user(store, name, "admin", PASSWORDS[name])
    for name, role in ROLES.items():
        if name not in SETUP_ADMINS:
            add_user(store, name, role, PASSWORDS[name], actor=SETUP_ADMINS[0])
            approve_user(store, name, approver=SETUP_ADMINS[1])
    refresh_all(store)
    store.close()
