"""Compare a duplicate with its original contest by contest (contract section 6, "Pairs"). Pure.

Only the contests the duplicate carries are compared, matched by contest id across styles:
a provisional original may carry contests the voter was not eligible for; those are
reported but are not a mismatch. Cards are equal in a contest when they count the same
votes there (two overvotes are equal). Status, in this order: ``mismatch`` when some compared
contest differs with both readings confident; else ``needs_review`` when some compared
contest is unknown on either card, either card could not be read, or a machine-printed
record's text and code disagree; else ``match``.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from enum import StrEnum

from scanpipe.reconcile.pairing import PairStatus
from scanpipe.types import ContestOutcome, ContestReading


class Difference(StrEnum):
    DIFFERS = "differs"  # both confident, different votes
    UNKNOWN = "unknown"  # a person must read one side first
    MISSING = "missing"  # the original does not carry a contest the duplicate does


@dataclass(frozen=True, slots=True)
class SheetReading:
    """What one sheet counts, per contest, after any card-level decisions."""

    contests: Mapping[str, ContestReading]
    readable: bool  # every card of the sheet was read (or identified and decided by people)
    text_code_disagree: bool = False
    problem: str | None = None  # why it is not readable, for people


@dataclass(frozen=True, slots=True)
class ContestComparison:
    contest: str
    difference: Difference
    duplicate: ContestReading | None
    original: ContestReading | None


@dataclass(frozen=True, slots=True)
class Comparison:
    status: PairStatus
    differences: tuple[ContestComparison, ...]  # every contest that differs or needs a person
    original_only: tuple[str, ...]  # contests on the original the duplicate does not carry
    compared: tuple[str, ...]

    @property
    def contests(self) -> tuple[str, ...]:
        return tuple(d.contest for d in self.differences)


def counted_votes(reading: ContestReading) -> tuple[str, ...] | str | None:
    """What a contest counts: its votes, "overvote", or None when a person must decide."""
    if reading.outcome is ContestOutcome.PENDING:
        return None
    if reading.outcome is ContestOutcome.OVERVOTE:
        return "overvote"
    return tuple(sorted(reading.votes))


def compare_pair(duplicate: SheetReading, original: SheetReading) -> Comparison:
    """Compare two sheets over the contests the duplicate carries."""
    compared = tuple(duplicate.contests)
    diffs: list[ContestComparison] = []
    for cid in compared:
        d = duplicate.contests[cid]
        o = original.contests.get(cid)
        if o is None:
            diffs.append(ContestComparison(cid, Difference.MISSING, d, None))
            continue
        dv, ov = counted_votes(d), counted_votes(o)
        if dv is None or ov is None:
            diffs.append(ContestComparison(cid, Difference.UNKNOWN, d, o))
        elif dv != ov:
            diffs.append(ContestComparison(cid, Difference.DIFFERS, d, o))
    original_only = tuple(c for c in original.contests if c not in duplicate.contests)
    if any(x.difference is Difference.DIFFERS for x in diffs):
        status = PairStatus.MISMATCH
    elif diffs or not duplicate.readable or not original.readable or original.text_code_disagree or duplicate.text_code_disagree:
        status = PairStatus.NEEDS_REVIEW
    else:
        status = PairStatus.MATCH
    return Comparison(status, tuple(diffs), original_only, compared)
