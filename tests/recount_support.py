"""Builders shared by the recount tests (no tests here): a store with the fixture election,
cards counted per precinct (typed values, no images), and certified results that differ."""

from __future__ import annotations

import csv
import io
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from scanpipe.store.repository import Store
from scanpipe.types import Election, MarkStatus
from scanpipe.workflow import init_election
from tests.helpers import read_card

ELECTION = Path(__file__).parent.parent / "fixtures" / "ballot_images" / "election" / "election.json"

# The cards: per precinct, how many cards vote for each governor option.
CARDS = {"P01": {"gov-a": 6, "gov-b": 4}, "P02": {"gov-a": 5, "gov-b": 5}, "P03": {"gov-a": 3, "gov-b": 6}}
STYLE = {"P01": "S1", "P02": "S1", "P03": "S2"}
# The certified canvass: it differs from the cards (P01: one vote more for Ada Alvarez, P03: one less for Ben Brooks).
CERTIFIED = {"P01": {"gov-a": 7, "gov-b": 4}, "P02": {"gov-a": 5, "gov-b": 5}, "P03": {"gov-a": 3, "gov-b": 5},
             "P04": {"gov-a": 20, "gov-b": 19}, "P05": {"gov-a": 10, "gov-b": 11}}


@dataclass
class RecountWorld:
    store: Store
    election: Election
    folder: Path

    @property
    def db(self) -> str:
        return self.store.url


def card_id(precinct: str, n: int, option: str) -> str:
    return f"{precinct}{option}{n:04d}".lower().replace("-", "x").ljust(64, "0")


def build_world(tmp_path: Path, cards: Mapping[str, Mapping[str, int]] = CARDS, *, jurisdiction: str = "MD") -> RecountWorld:
    store = Store.open(f"sqlite:///{tmp_path / 'recount.db'}")
    store.migrate()
    definition = ELECTION
    if jurisdiction != "MD":  # the fixture election under another jurisdiction's rules
        import json
        import shutil

        shutil.copytree(ELECTION.parent, tmp_path / "election")
        definition = tmp_path / "election" / "election.json"
        definition.write_text(json.dumps({**json.loads(ELECTION.read_text()), "jurisdiction": jurisdiction}))
    election, _ = init_election(store, definition)
    stored = []
    for precinct, per in cards.items():
        for option, count in per.items():
            for n in range(count):
                stored.append(read_card(card_id(precinct, n, option), election, STYLE[precinct], precinct, {"gov": {option: MarkStatus.YES}}))
    store.save_cards(stored)
    return RecountWorld(store, election, tmp_path)


def certified_csv(path: Path, certified: Mapping[str, Mapping[str, int]] = CERTIFIED, *, extra: str = "", over_under: bool = True) -> Path:
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(["precinct", "contest", "option", "votes"])
    for precinct, per in certified.items():
        for option in ("gov-a", "gov-b", "gov-c", "gov-w"):
            w.writerow([precinct, "gov", option, per.get(option, 0)])
        if over_under:
            w.writerow([precinct, "gov", "#overvotes", 0])
            w.writerow([precinct, "gov", "#undervotes", 0])
    path.write_text(buf.getvalue() + extra, encoding="utf-8")
    return path
