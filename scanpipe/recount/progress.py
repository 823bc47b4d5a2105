"""Where a recount stands, from what counts (pure): per precinct the cards counted and what
is left, the recount's figures in scope, and whether it is complete.

A precinct is *finished* when cards of it carrying the contest were counted and none awaits a
person. The machine cannot know that every ballot of a precinct was scanned: the number of
ballots the certified results imply (when they give over- and undervotes) is shown beside the
cards counted, and a board that stops a recount names the finished precincts itself. A
recount is *complete* when every precinct in scope is finished, no card of unknown precinct
awaits a person, and no new duplicate in scope still awaits printing and scanning.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from scanpipe.counting import CardCount, Decision
from scanpipe.queue import QueueItem
from scanpipe.reconcile.resolve import PairOutcome
from scanpipe.recount.figures import OVER, UNDER, Counts
from scanpipe.recount.scope import Scope
from scanpipe.tally import TallyRow
from scanpipe.types import ContestOutcome, Election


@dataclass(frozen=True, slots=True)
class PrecinctProgress:
    precinct: str
    counted: int  # cards carrying the contest, counted in it
    pending: int  # cards carrying the contest that await a person
    certified_ballots: int | None  # ballots in the contest per the certified results (None: not derivable)
    left: tuple[QueueItem, ...]

    @property
    def finished(self) -> bool:
        return self.counted > 0 and self.pending == 0 and not self.left


@dataclass(frozen=True, slots=True)
class Snapshot:
    scope: Scope
    recount: dict[tuple[str, str, str], int]  # the recount's figures in scope (options, #overvotes, #undervotes)
    precincts: tuple[PrecinctProgress, ...]
    unassigned: tuple[QueueItem, ...]  # items of cards of no known precinct (may be in scope)
    outstanding_new_duplicates: tuple[str, ...]  # serials still to be printed and scanned
    pairs: tuple[PairOutcome, ...]  # serials of the scope's precincts
    decisions: tuple[Decision, ...]  # people's decisions of the contest on items in scope
    digest_rows: tuple[tuple[object, ...], ...]  # what was counted, card by card (for the data hash)

    @property
    def complete(self) -> bool:
        return all(p.finished for p in self.precincts) and not self.unassigned and not self.outstanding_new_duplicates

    def progress(self, precinct: str) -> PrecinctProgress:
        return next(p for p in self.precincts if p.precinct == precinct)


def certified_ballots(certified: Counts, election: Election, contest: str, precinct: str) -> int | None:
    """Ballots carrying the contest in a precinct, from certified votes, over- and undervotes."""
    if (precinct, contest, OVER) not in certified or (precinct, contest, UNDER) not in certified:
        return None
    c = election.contest(contest)
    marks = sum(certified.get((precinct, contest, o.id), 0) for o in c.options) + certified[(precinct, contest, UNDER)]
    return marks // c.vote_for + certified[(precinct, contest, OVER)]


def take_snapshot(election: Election, scope: Scope, certified: Counts, counts: Sequence[CardCount], tally: Iterable[TallyRow],
                  items: Sequence[QueueItem], pairs: Sequence[PairOutcome], decisions: Sequence[Decision],
                  outstanding_new_duplicates: Sequence[str]) -> Snapshot:
    """Everything the status, the costs and the report need, from one reading of the store."""
    recount = {(r.precinct, r.contest, r.option): r.votes for r in tally
               if r.precinct in scope.precincts and r.contest == scope.contest and r.option != "#pending"}
    counted: Counter[str] = Counter()
    pending: Counter[str] = Counter()
    digest: list[tuple[object, ...]] = []
    for c in counts:
        if not c.counts or c.precinct not in scope.precincts or c.voided:
            continue
        reading = next((r for r in c.contests if r.contest == scope.contest), None)
        if reading is None:
            continue
        waiting = c.card_pending or reading.outcome is ContestOutcome.PENDING or scope.contest in c.pending_contests
        (pending if waiting else counted)[c.precinct] += 1
        digest.append((c.card_id, c.precinct, "pending" if waiting else reading.outcome.value, reading.votes, reading.undervotes, c.decided_by))
    by_precinct: dict[str | None, list[QueueItem]] = {}
    for item in items:
        by_precinct.setdefault(item.precinct, []).append(item)
    order = [p.id for p in election.precincts if p.id in scope.precincts]
    progress = tuple(PrecinctProgress(p, counted[p], pending[p], certified_ballots(certified, election, scope.contest, p),
                                      tuple(by_precinct.get(p, ()))) for p in order)
    in_pairs = tuple(p for p in pairs if p.precinct in scope.precincts)
    items_in_scope = {c.card_id for c in counts if c.precinct in scope.precincts} | {p.serial for p in in_pairs}
    mine = tuple(d for d in decisions if d.contest == scope.contest and d.item in items_in_scope)
    digest += [("pair", p.serial, p.status.value, p.counted, p.decided, p.auditors) for p in in_pairs]
    digest += [("decision", d.id, d.item, d.state.value, d.votes, d.auditors, d.rule) for d in mine]
    digest += [("new_duplicate_outstanding", s) for s in outstanding_new_duplicates]
    return Snapshot(scope, recount, progress, tuple(by_precinct.get(None, ())), tuple(outstanding_new_duplicates), in_pairs, mine,
                    tuple(sorted(digest, key=repr)))


def scope_counts(recount: Mapping[tuple[str, str, str], int], precincts: Iterable[str]) -> dict[tuple[str, str, str], int]:
    keep = set(precincts)
    return {k: v for k, v in recount.items() if k[0] in keep}
