"""What a recount case covers: one contest in some precincts (pure).

While a case is open the queue, the review index and the case's tally are cut to its scope,
so a recount of one contest in three precincts asks people nothing else: an item of another
precinct goes, a contest outside the case is dropped from an item's list (and an item left
with no contest to decide goes). Whole-card problems of a card whose precinct is not known
yet (an unreadable card, a card without a precinct) stay: a person must say what it is before
anyone knows whether it is in scope.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, replace

from scanpipe.queue import QueueItem


@dataclass(frozen=True, slots=True)
class Scope:
    case_id: int
    contest: str
    precincts: frozenset[str]

    def covers(self, precinct: str | None, contests: Iterable[str] = ()) -> bool:
        return (precinct is None or precinct in self.precincts) and (not contests or self.contest in set(contests))


def scope_items(items: Iterable[QueueItem], scope: Scope | None) -> list[QueueItem]:
    """The queue items a recount in ``scope`` needs a person for (all of them without a case)."""
    if scope is None:
        return list(items)
    out = []
    for item in items:
        if item.precinct is not None and item.precinct not in scope.precincts:
            continue
        if item.contests:
            if scope.contest not in item.contests:
                continue
            item = replace(item, contests=(scope.contest,))
        out.append(item)
    return out
