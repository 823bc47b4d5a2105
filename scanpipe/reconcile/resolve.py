"""From a pairing, its cards' readings and the auditors' decisions to what the serial counts.

Pure. The contract's rules (section 5, "Adjudication"; section 6, "Pairs"):

* one duplicate and one original: compare them (:mod:`compare`); ``match`` counts the
  duplicate; ``mismatch``/``needs_review`` list contests a person must decide;
* once every listed contest has a final decision the serial is ``resolved``: if the
  decisions equal the duplicate's reading the duplicate counts, otherwise a new duplicate
  (``<serial>-R<n>``) carrying the decided contests and the duplicate's reading of every other
  contest counts instead;
* orphans and conflicts are held out until people decide every contest of the duplicate's
  style (an orphan original: its own style); then a new duplicate is always made.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from scanpipe.counting import CardCount, Decision, decided_reading
from scanpipe.reconcile.compare import Comparison, SheetReading, compare_pair
from scanpipe.reconcile.pairing import Pairing, PairStatus, Sheet
from scanpipe.types import ContestReading, Election, MachinePrintedCard, Reason


@dataclass(frozen=True, slots=True)
class PairOutcome:
    serial: str
    status: PairStatus  # including RESOLVED once every listed contest is decided
    base_status: PairStatus  # before decisions: what the machine found
    precinct: str | None
    style: str | None  # the style a new duplicate takes
    duplicates: tuple[str, ...]  # card ids, all duplicate sheets
    originals: tuple[str, ...]
    listed: tuple[str, ...]  # contests a person must decide for the serial to resolve
    comparison: Comparison | None
    decided: tuple[tuple[str, tuple[str, ...]], ...]  # (contest, votes) of final pair decisions
    counted: str  # "duplicate", "new", or "none" while waiting
    new_contests: tuple[ContestReading, ...] | None  # what a new duplicate carries
    auditors: tuple[str, ...] = ()
    text_code_disagree: bool = False  # a machine-printed record's text and code disagree

    @property
    def waiting(self) -> tuple[str, ...]:
        done = {c for c, _ in self.decided}
        return tuple(c for c in self.listed if c not in done)


def sheet_reading(sheet: Sheet, counts: Mapping[str, CardCount]) -> SheetReading:
    """What a sheet counts per contest, from its cards' effective readings."""
    contests: dict[str, ContestReading] = {}
    readable = True
    disagree = False
    problems = []
    for card in sheet.cards:
        count = counts[card.source.card_id]
        if count.style is None or (count.card_pending and not count.contests):
            readable = False
            problems.append(f"{card.source.card_id}: {', '.join(r.value for r in count.reasons) or 'not read'}")
        for reading in count.contests:
            contests.setdefault(reading.contest, reading)
        if isinstance(card.interpretation, MachinePrintedCard) and {Reason.TEXT_CODE_DISAGREE, Reason.TEXT_UNREAD} & set(card.interpretation.reasons):
            disagree = True
    return SheetReading(contests, readable, disagree, "; ".join(problems) or None)


def resolve_pair(
    election: Election,
    pairing: Pairing,
    counts: Mapping[str, CardCount],
    finals: Mapping[tuple[str, str], Decision],
) -> PairOutcome:
    """The state of one serial after the machine's comparison and people's final decisions."""
    dup_ids = tuple(cid for s in pairing.duplicates for cid in s.card_ids)
    org_ids = tuple(cid for s in pairing.originals for cid in s.card_ids)
    structural = pairing.structural_status
    comparison = None
    if structural is None:
        dup_read = sheet_reading(pairing.duplicates[0], counts)
        org_read = sheet_reading(pairing.originals[0], counts)
        comparison = compare_pair(dup_read, org_read)
        disagree = dup_read.text_code_disagree or org_read.text_code_disagree
        base = comparison.status
        listed = comparison.contests if base is not PairStatus.MATCH else ()
        if base is PairStatus.NEEDS_REVIEW and not listed:
            listed = comparison.compared  # unreadable card or text/code disagreement: every contest
        home = pairing.duplicates[0]
        dup_contests = dup_read.contests
    else:
        disagree = False
        base = structural
        home = (pairing.duplicates or pairing.originals)[0]
        listed = _style_contests(election, home.style)
        dup_contests = sheet_reading(pairing.duplicates[0], counts).contests if pairing.duplicates else {}
    precinct = _sheet_precinct(home, counts)
    style = home.style
    decided = tuple((c, finals[(pairing.serial, c)].votes) for c in listed if (pairing.serial, c) in finals)
    auditors = tuple(dict.fromkeys(a for c, _ in decided for a in finals[(pairing.serial, c)].auditors))
    resolved = bool(listed) and len(decided) == len(listed)
    if base is PairStatus.MATCH:
        return PairOutcome(pairing.serial, base, base, precinct, style, dup_ids, org_ids, (), comparison, (), "duplicate", None)
    if not resolved:
        return PairOutcome(pairing.serial, base, base, precinct, style, dup_ids, org_ids, listed, comparison, decided, "none", None, auditors, disagree)
    new = _new_duplicate_contests(election, style, dup_contests, dict(decided))
    same = structural is None and all(_same(dup_contests.get(c), new_c) for c, new_c in ((r.contest, r) for r in new))
    counted = "duplicate" if same else "new"
    return PairOutcome(pairing.serial, PairStatus.RESOLVED, base, precinct, style, dup_ids, org_ids, listed, comparison, decided, counted, None if same else new, auditors, disagree)


def _same(a: ContestReading | None, b: ContestReading) -> bool:
    from scanpipe.reconcile.compare import counted_votes

    return a is not None and counted_votes(a) == counted_votes(b)


def _new_duplicate_contests(election: Election, style: str | None, dup: Mapping[str, ContestReading], decided: Mapping[str, Sequence[str]]) -> tuple[ContestReading, ...]:
    out = []
    for cid in _style_contests(election, style) or tuple(dup):
        if cid in decided:
            c = election.contest(cid)
            out.append(decided_reading(cid, c.vote_for, [o.id for o in c.options], decided[cid]))
        elif cid in dup:
            out.append(dup[cid])
    return tuple(out)


def _style_contests(election: Election, style: str | None) -> tuple[str, ...]:
    if style is None or not election.has_style(style):
        return ()
    return election.style(style).contests


def _sheet_precinct(sheet: Sheet, counts: Mapping[str, CardCount]) -> str | None:
    for card in sheet.cards:
        p = counts[card.source.card_id].precinct
        if p is not None:
            return p
    return None


# --------------------------------------------------------------------------------------
# What each card contributes once pairs are known


@dataclass(frozen=True, slots=True)
class NewDuplicate:
    """A stored new duplicate (the current revision of a serial)."""

    serial: str  # "<base>-R<n>"
    base_serial: str
    style: str
    precinct: str | None
    contests: tuple[ContestReading, ...]
    auditors: tuple[str, ...] = ()
    card_id: str = ""  # "nd-<serial>", or the scanned printed card's id once scanned

    @property
    def unique_id(self) -> str:
        return f"nd-{self.serial}"


def apply_pairs(
    counts: Mapping[str, CardCount],
    outcomes: Sequence[PairOutcome],
    new_duplicates: Mapping[str, NewDuplicate],
    election: Election,
) -> list[CardCount]:
    """Card counts after reconciliation: originals never count, a serial counts once.

    ``new_duplicates`` maps a base serial to its current new duplicate.
    """
    from dataclasses import replace as _replace

    out = dict(counts)
    for o in outcomes:
        dup_sheets_ids = list(o.duplicates)
        if o.counted == "duplicate":
            continue
        if o.counted == "new":
            nd = new_duplicates.get(o.serial)
            for cid in dup_sheets_ids:
                out[cid] = _replace(out[cid], counts=False)
            if nd is not None and tuple(nd.contests) == tuple(o.new_contests or ()):
                out[nd.unique_id] = CardCount(nd.unique_id, nd.precinct, nd.style, True, nd.contests, (), False, (), nd.auditors)
            else:  # decided, but the new duplicate is not made yet: run reconcile
                out[f"serial:{o.serial}"] = _placeholder(o, election)
            continue
        # waiting for a person
        if o.base_status in (PairStatus.MISMATCH, PairStatus.NEEDS_REVIEW):
            for cid in dup_sheets_ids:
                c = out[cid]
                waiting = tuple(r.contest for r in c.contests if r.contest in o.listed)
                out[cid] = _replace(c, pending_contests=tuple(dict.fromkeys(c.pending_contests + waiting)))
            continue
        # orphans and conflicts: held out until people decide
        for cid in dup_sheets_ids:
            out[cid] = _replace(out[cid], counts=False)
        out[f"serial:{o.serial}"] = _placeholder(o, election)
    return list(out.values())


def _placeholder(o: PairOutcome, election: Election) -> CardCount:
    """One pending entry for a serial held out of the count (in its precinct)."""
    from scanpipe.types import ContestOutcome

    contests = tuple(ContestReading(c, (), ContestOutcome.PENDING, 0) for c in (o.listed or _style_contests(election, o.style)))
    return CardCount(f"serial:{o.serial}", o.precinct, o.style, True, contests, tuple(c.contest for c in contests), o.precinct is None or o.style is None)
