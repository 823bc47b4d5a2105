"""Compare a duplicate with its original contest by contest (contract section 6, "Pairs"). Pure.

Which contests are compared depends on the serial's ballot type (Md. Election Law
§12-108(a)(2)(ii)), taken from the canvass duplication log:

* a mailed ballot, and a serial whose type is not known (or ``other``): the duplicate must
  reflect the voter's whole intent, so every contest on either card is compared; a contest
  the original votes in that the duplicate lacks is a mismatch (``omitted``); an original's
  contest without a vote that the duplicate lacks is no difference;
* a provisional ballot: only the contests the voter was eligible for are compared (the log's
  ``eligible_contests``, else the duplicate's style); a vote on the duplicate in a contest
  outside them is a mismatch (``ineligible``); the original's other contests are reported
  (``original_only``) but never compared.

Contests are matched by id across styles. Cards are equal in a contest when they count the
same votes there (two overvotes are equal). Status, in this order: ``mismatch`` when some
compared contest differs with both readings confident; else ``needs_review`` when some
compared contest is unknown on either card, the original lacks a contest the duplicate
carries, either card could not be read, or a machine-printed record's text and code
disagree; else ``match``.
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
    OMITTED = "omitted"  # the original votes in a contest the duplicate does not carry
    INELIGIBLE = "ineligible"  # the duplicate votes in a contest the provisional voter was not eligible for


MISMATCHES = frozenset({Difference.DIFFERS, Difference.OMITTED, Difference.INELIGIBLE})


class BallotType(StrEnum):
    """The ballot type of a serial, from the canvass duplication log (contract section 5a)."""

    MAIL = "mail"
    PROVISIONAL = "provisional"
    OTHER = "other"
    UNKNOWN = "unknown"  # not in the log, or its type left empty


@dataclass(frozen=True, slots=True)
class ComparisonScope:
    """What a serial's duplicate must carry: the voter's whole intent, or (a provisional
    ballot) the contests the voter was eligible for (``eligible``; None: the duplicate's style)."""

    ballot_type: BallotType = BallotType.UNKNOWN
    eligible: tuple[str, ...] | None = None

    @property
    def whole_intent(self) -> bool:
        return self.ballot_type is not BallotType.PROVISIONAL


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


def has_vote(reading: ContestReading) -> bool | None:
    """Whether the voter voted in a contest (an overvote is a vote); None when a person must read it."""
    counted = counted_votes(reading)
    if counted is None:
        return None
    return bool(counted)


def compare_pair(duplicate: SheetReading, original: SheetReading, scope: ComparisonScope = ComparisonScope(),
                 *, duplicate_style_contests: tuple[str, ...] | None = None) -> Comparison:
    """Compare two sheets over the contests the serial's ballot type calls for (module docstring).

    ``duplicate_style_contests``: the contests of the duplicate's style, a provisional voter's
    eligible contests when the log names none (default: the contests the duplicate carries)."""
    if scope.whole_intent:
        in_scope = tuple(dict.fromkeys((*duplicate.contests, *original.contests)))
        outside: tuple[str, ...] = ()
    else:
        eligible = set(scope.eligible if scope.eligible is not None else (duplicate_style_contests or tuple(duplicate.contests)))
        in_scope = tuple(c for c in dict.fromkeys((*duplicate.contests, *original.contests)) if c in eligible)
        outside = tuple(c for c in duplicate.contests if c not in eligible)
    diffs = [d for d in (_compare_contest(cid, duplicate.contests.get(cid), original.contests.get(cid)) for cid in in_scope) if d]
    for cid in outside:  # a provisional duplicate's contest the voter was not eligible for
        voted = has_vote(duplicate.contests[cid])
        if voted is None or voted:
            diffs.append(ContestComparison(cid, Difference.UNKNOWN if voted is None else Difference.INELIGIBLE, duplicate.contests[cid], None))
    original_only = tuple(c for c in original.contests if c not in duplicate.contests)
    if any(x.difference in MISMATCHES for x in diffs):
        status = PairStatus.MISMATCH
    elif diffs or not duplicate.readable or not original.readable or original.text_code_disagree or duplicate.text_code_disagree:
        status = PairStatus.NEEDS_REVIEW
    else:
        status = PairStatus.MATCH
    return Comparison(status, tuple(diffs), original_only, (*in_scope, *outside))


def _compare_contest(cid: str, d: ContestReading | None, o: ContestReading | None) -> ContestComparison | None:
    """One compared contest: None when the cards agree (or neither carries it)."""
    if d is None and o is None:
        return None
    if o is None:
        return ContestComparison(cid, Difference.MISSING, d, None)
    if d is None:  # the duplicate left out a contest of the original
        voted = has_vote(o)
        if voted is None:
            return ContestComparison(cid, Difference.UNKNOWN, None, o)
        return ContestComparison(cid, Difference.OMITTED, None, o) if voted else None
    dv, ov = counted_votes(d), counted_votes(o)
    if dv is None or ov is None:
        return ContestComparison(cid, Difference.UNKNOWN, d, o)
    if dv != ov:
        return ContestComparison(cid, Difference.DIFFERS, d, o)
    return None
