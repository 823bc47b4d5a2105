"""Per-precinct tallies (contract section 6, "Tallies"). Pure: card counts in, rows out.

For every precinct and every contest on a style serving it: one row per option, then
``#overvotes``, ``#undervotes`` and ``#pending``. Cards whose precinct or style is unknown
go to precinct ``#unassigned``, contest ``#card``, option ``#pending``.
"""

from __future__ import annotations

import csv
import io
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass

from scanpipe.counting import CardCount
from scanpipe.types import ContestOutcome, Election

UNASSIGNED = "#unassigned"


@dataclass(frozen=True, slots=True)
class TallyRow:
    precinct: str
    contest: str
    option: str
    votes: int


def contests_by_precinct(election: Election) -> dict[str, list[str]]:
    """Contest ids on the styles serving each precinct, in definition order."""
    order = [c.id for c in election.contests]
    out: dict[str, list[str]] = {}
    for precinct in election.precincts:
        on = {cid for s in election.ballot_styles if precinct.id in s.precincts for cid in s.contests}
        out[precinct.id] = [cid for cid in order if cid in on]
    return out


def tally_precincts(election: Election, cards: Iterable[CardCount]) -> list[TallyRow]:
    """Tally what counts. The result does not depend on the order of ``cards``."""
    votes: Counter[tuple[str, str, str]] = Counter()
    unassigned = 0
    for card in cards:
        if not card.counts:
            continue
        if card.precinct is None or card.style is None:
            unassigned += 1
            continue
        for reading in card.contests:
            key = (card.precinct, reading.contest)
            if card.card_pending or reading.outcome is ContestOutcome.PENDING or reading.contest in card.pending_contests:
                votes[(*key, "#pending")] += 1
            elif reading.outcome is ContestOutcome.OVERVOTE:
                votes[(*key, "#overvotes")] += 1
            else:
                votes[(*key, "#undervotes")] += reading.undervotes
                for option in reading.votes:
                    votes[(*key, option)] += 1
    rows: list[TallyRow] = []
    for precinct_id, contest_ids in sorted(contests_by_precinct(election).items()):
        for cid in contest_ids:
            contest = election.contest(cid)
            for label in [o.id for o in contest.options] + ["#overvotes", "#undervotes", "#pending"]:
                rows.append(TallyRow(precinct_id, cid, label, votes[(precinct_id, cid, label)]))
    if unassigned:
        rows.append(TallyRow(UNASSIGNED, "#card", "#pending", unassigned))
    return rows


def tally_csv(rows: Iterable[TallyRow]) -> str:
    """The tally CSV (``precinct,contest,option,votes``), RFC 4180 line endings."""
    buf = io.StringIO()
    writer = csv.writer(buf, lineterminator="\r\n")
    writer.writerow(["precinct", "contest", "option", "votes"])
    for r in rows:
        writer.writerow([r.precinct, r.contest, r.option, r.votes])
    return buf.getvalue()
