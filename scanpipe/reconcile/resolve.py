"""From a pairing, its cards' readings and the auditors' decisions to what the serial counts.

Pure. The contract's rules (section 5, "Adjudication"; section 6, "Pairs"):

* one duplicate and one original: compare them (:mod:`compare`) over the contests the
  serial's ballot type calls for; ``match`` counts the duplicate (§12-108(d)(2)(ii));
  ``mismatch``/``needs_review`` list contests a person must decide;
* once every listed contest has a final decision the serial is ``resolved``: if the
  decisions equal the duplicate's reading the duplicate counts, otherwise a new duplicate
  (``<serial>-R<n>``, §12-108(d)(2)(i)) carrying the decided contests and the duplicate's
  reading of every other contest counts instead; its style is the duplicate's when that
  carries every contest with a vote, else the original's, else another style that does;
* orphans and conflicts are held out until the board rules (:mod:`rulings`): the duplicate
  counts as it is, nothing counts, or people decide every contest of the style and a new
  duplicate is made.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from scanpipe.counting import CardCount, Decision, decided_reading
from scanpipe.reconcile.compare import BallotType, Comparison, ComparisonScope, SheetReading, compare_pair, has_vote
from scanpipe.reconcile.pairing import Pairing, PairStatus, Sheet
from scanpipe.reconcile.rulings import BoardRuling, RulingKind
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
    ballot_type: BallotType = BallotType.UNKNOWN
    ruling: BoardRuling | None = None  # the board's ruling in force (orphans and conflicts)
    chosen: tuple[str, ...] = ()  # the duplicate sheet the board let count as it is
    new_precinct: str | None = None  # where the new duplicate is tallied (its style serves it)

    @property
    def awaits_board(self) -> bool:
        """An orphan or conflict the board has not ruled on (or whose ruling no longer holds)."""
        return self.base_status in (PairStatus.ORPHAN_DUPLICATE, PairStatus.ORPHAN_ORIGINAL, PairStatus.CONFLICT) and self.ruling is None

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
    scope: ComparisonScope = ComparisonScope(),
    ruling: BoardRuling | None = None,
) -> PairOutcome:
    """The state of one serial after the machine's comparison, the board's ruling (orphans
    and conflicts) and people's final decisions."""
    dup_ids = tuple(cid for s in pairing.duplicates for cid in s.card_ids)
    org_ids = tuple(cid for s in pairing.originals for cid in s.card_ids)
    structural = pairing.structural_status
    if structural is not None:
        return _resolve_board_matter(election, pairing, counts, finals, scope, ruling, structural, dup_ids, org_ids)
    dup_read = sheet_reading(pairing.duplicates[0], counts)
    org_read = sheet_reading(pairing.originals[0], counts)
    home = pairing.duplicates[0]
    comparison = compare_pair(dup_read, org_read, scope, duplicate_style_contests=_style_contests(election, home.style) or None)
    disagree = dup_read.text_code_disagree or org_read.text_code_disagree
    base = comparison.status
    listed = comparison.contests if base is not PairStatus.MATCH else ()
    if base is PairStatus.NEEDS_REVIEW and not listed:
        listed = comparison.compared  # unreadable card or text/code disagreement: every contest
    precinct = _sheet_precinct(home, counts)
    bt = scope.ballot_type
    if base is PairStatus.MATCH:
        return PairOutcome(pairing.serial, base, base, precinct, home.style, dup_ids, org_ids, (), comparison, (), "duplicate", None, ballot_type=bt, text_code_disagree=disagree)
    decided, auditors = _decided(pairing.serial, listed, finals)
    if len(decided) < len(listed):
        return PairOutcome(pairing.serial, base, base, precinct, home.style, dup_ids, org_ids, listed, comparison, decided, "none", None,
                           auditors, ballot_type=bt, text_code_disagree=disagree)
    original = pairing.originals[0]
    style = _new_style(election, scope, dup_read.contests, dict(decided), (home.style, original.style), precinct)
    new = _new_duplicate_contests(election, style, scope, dup_read.contests, dict(decided))
    same = style == home.style and all(_same(dup_read.contests.get(r.contest), r) for r in new) and \
        all(not has_vote(r) for c, r in dup_read.contests.items() if c not in {n.contest for n in new})
    new_precinct = _precinct_for(election, style, (precinct, _sheet_precinct(original, counts)))
    if same:
        return PairOutcome(pairing.serial, PairStatus.RESOLVED, base, precinct, home.style, dup_ids, org_ids, listed, comparison, decided,
                           "duplicate", None, auditors, ballot_type=bt, text_code_disagree=disagree)
    return PairOutcome(pairing.serial, PairStatus.RESOLVED, base, new_precinct, style, dup_ids, org_ids, listed, comparison, decided,
                       "new", new, auditors, new_precinct=new_precinct, ballot_type=bt, text_code_disagree=disagree)


def _resolve_board_matter(
    election: Election, pairing: Pairing, counts: Mapping[str, CardCount], finals: Mapping[tuple[str, str], Decision],
    scope: ComparisonScope, ruling: BoardRuling | None, structural: PairStatus, dup_ids: tuple[str, ...], org_ids: tuple[str, ...],
) -> PairOutcome:
    """An orphan or a conflict: held out until the board rules, then as it ruled."""
    if ruling is not None and not ruling.applies_to(structural, (*dup_ids, *org_ids)):
        ruling = None
    sheets = (*pairing.duplicates, *pairing.originals)
    basis = next((s for s in sheets if ruling is not None and ruling.card in s.card_ids), sheets[0])
    precinct = _sheet_precinct(basis, counts)
    bt = scope.ballot_type
    if ruling is None:
        return PairOutcome(pairing.serial, structural, structural, precinct, basis.style, dup_ids, org_ids, (), None, (), "none", None, ballot_type=bt, ruling=ruling)
    if ruling.ruling is RulingKind.NOTHING:
        return PairOutcome(pairing.serial, PairStatus.RESOLVED, structural, precinct, basis.style, dup_ids, org_ids, (), None, (), "none",
                           None, ballot_type=bt, ruling=ruling)
    if ruling.ruling is RulingKind.COUNTS_AS_IS:
        return PairOutcome(pairing.serial, PairStatus.RESOLVED, structural, precinct, basis.style, dup_ids, org_ids, (), None, (),
                           "duplicate", None, chosen=basis.card_ids, ballot_type=bt, ruling=ruling)
    listed = _carried(election, basis.style, scope)
    decided, auditors = _decided(pairing.serial, listed, finals)
    if not listed or len(decided) < len(listed):
        return PairOutcome(pairing.serial, structural, structural, precinct, basis.style, dup_ids, org_ids, listed, None, decided, "none",
                           None, auditors, ballot_type=bt, ruling=ruling)
    new = _new_duplicate_contests(election, basis.style, scope, {}, dict(decided))
    return PairOutcome(pairing.serial, PairStatus.RESOLVED, structural, precinct, basis.style, dup_ids, org_ids, listed, None, decided,
                       "new", new, auditors, new_precinct=precinct, ballot_type=bt, ruling=ruling)


def _decided(serial: str, listed: Sequence[str], finals: Mapping[tuple[str, str], Decision]) -> tuple[tuple[tuple[str, tuple[str, ...]], ...], tuple[str, ...]]:
    decided = tuple((c, finals[(serial, c)].votes) for c in listed if (serial, c) in finals)
    auditors = tuple(dict.fromkeys(a for c, _ in decided for a in finals[(serial, c)].auditors))
    return decided, auditors


def _same(a: ContestReading | None, b: ContestReading) -> bool:
    from scanpipe.reconcile.compare import counted_votes

    return a is not None and counted_votes(a) == counted_votes(b)


def _carried(election: Election, style: str | None, scope: ComparisonScope) -> tuple[str, ...]:
    """The contests a new duplicate of ``style`` carries: every contest of the style, or a
    provisional voter's eligible ones (the log's list, else the style's)."""
    contests = _style_contests(election, style)
    if scope.whole_intent or scope.eligible is None:
        return contests
    return tuple(c for c in contests if c in scope.eligible)


def _new_style(election: Election, scope: ComparisonScope, dup: Mapping[str, ContestReading], decided: Mapping[str, Sequence[str]],
               preferred: Sequence[str | None], precinct: str | None) -> str | None:
    """The style of a new duplicate: the first of the duplicate's style, the original's, a
    style serving the precinct, any style, that carries every contest with a vote (decided,
    or the duplicate's reading where nothing was decided)."""
    voted = {c for c, v in decided.items() if v} | {c for c, r in dup.items() if c not in decided and has_vote(r) is not False}
    if not scope.whole_intent:  # a provisional voter's votes outside the eligible contests never count
        voted &= set(scope.eligible) if scope.eligible is not None else set(_style_contests(election, preferred[0]))
    candidates = [*(s for s in preferred if s is not None and election.has_style(s)),
                  *(s.id for s in election.ballot_styles if precinct in s.precincts),
                  *(s.id for s in election.ballot_styles)]
    for style in dict.fromkeys(candidates):
        if voted <= set(election.style(style).contests):
            return style
    return preferred[0]


def _precinct_for(election: Election, style: str | None, preferred: Sequence[str | None]) -> str | None:
    """The duplicate's precinct when the new duplicate's style serves it, else the original's, else the style's first."""
    if style is None or not election.has_style(style):
        return preferred[0]
    served = election.style(style).precincts
    return next((p for p in preferred if p is not None and p in served), served[0] if served else preferred[0])


def _new_duplicate_contests(election: Election, style: str | None, scope: ComparisonScope, dup: Mapping[str, ContestReading],
                            decided: Mapping[str, Sequence[str]]) -> tuple[ContestReading, ...]:
    """What a new duplicate carries: every contest of its style (a provisional voter's
    eligible ones), decided or as the duplicate read it; a decided vote in a contest no style
    carries is kept too (never lost from the count; :mod:`scanpipe.exports.paper` prints it
    as a note the board signs)."""
    out = []
    carried = _carried(election, style, scope) or tuple(dup)
    extra = tuple(c for c, v in decided.items() if v and c not in carried)
    for cid in (*carried, *extra):
        c = election.contest(cid)
        if cid in decided:
            out.append(decided_reading(cid, c.vote_for, [o.id for o in c.options], decided[cid]))
        elif cid in dup:
            out.append(dup[cid])
        else:  # a contest of the new duplicate's style the duplicate lacked and the original left blank
            out.append(decided_reading(cid, c.vote_for, [o.id for o in c.options], ()))
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
            for cid in dup_sheets_ids if o.chosen else ():  # the board let one duplicate count as it is
                if cid not in o.chosen:
                    out[cid] = _replace(out[cid], counts=False)
            continue
        if o.status is PairStatus.RESOLVED and o.counted == "none":  # the board ruled that nothing counts
            for cid in dup_sheets_ids:
                out[cid] = _replace(out[cid], counts=False, pending_contests=(), card_pending=False)
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
            if dup_sheets_ids:  # a contest the duplicate left out is pending on it too (the voter's vote awaits a person)
                first = out[dup_sheets_ids[0]]
                on_sheet = {r.contest for cid in dup_sheets_ids for r in out[cid].contests}
                left_out = tuple(c for c in o.listed if c not in on_sheet)
                out[first.card_id] = _replace(first, contests=first.contests + _pending_readings(left_out),
                                              pending_contests=tuple(dict.fromkeys(first.pending_contests + left_out)))
            continue
        # orphans and conflicts: held out until people decide
        for cid in dup_sheets_ids:
            out[cid] = _replace(out[cid], counts=False)
        out[f"serial:{o.serial}"] = _placeholder(o, election)
    return list(out.values())


def _pending_readings(contests: Sequence[str]) -> tuple[ContestReading, ...]:
    from scanpipe.types import ContestOutcome

    return tuple(ContestReading(c, (), ContestOutcome.PENDING, 0) for c in contests)


def _placeholder(o: PairOutcome, election: Election) -> CardCount:
    """One pending entry for a serial held out of the count (in its precinct)."""
    contests = _pending_readings(o.listed or _style_contests(election, o.style))
    return CardCount(f"serial:{o.serial}", o.precinct, o.style, True, contests, tuple(c.contest for c in contests), o.precinct is None or o.style is None)
