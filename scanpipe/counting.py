"""What counts: from stored interpretations and people's decisions to per-card, per-contest
states. Pure: values in, values out. Tallies, the queue and the CVR export all read from
here, so there is one truth about what a card contributes.

A card contributes, per contest on it, either *counted* votes, an *overvote*, or is
*pending* (a person must decide first). Whole-card problems (unreadable, unknown style or
precinct, a label that does not read, a style conflict) make the whole card pending.
Originals never count. A duplicate counts like a ballot here; reconciliation
(:func:`scanpipe.reconcile.resolve.apply_pairs`) then holds it out, marks contests pending,
or replaces it with a new duplicate, so that each serial counts once.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace

from scanpipe.types import (
    NOTHING_TO_DECIDE,
    CardKind,
    ContestOutcome,
    ContestReading,
    DecisionState,
    Election,
    InterpretedCard,
    ReadCard,
    Reason,
    UnreadableCard,
)

# Card-level reasons that keep a whole card out of the count until a person acts.
BLOCKING_REASONS = frozenset({
    Reason.NO_PRECINCT, Reason.STYLE_CONFLICT, Reason.KIND_UNKNOWN, Reason.LABEL_UNREADABLE,
    Reason.LABEL_CONFLICT, Reason.SUPERSEDED_LABEL, Reason.NO_SERIAL, Reason.TEXT_UNREAD, Reason.TEXT_CODE_DISAGREE,
})


@dataclass(frozen=True, slots=True)
class Decision:
    """A person's decision of voter intent in one contest of one card or serial."""

    id: int
    item: str  # card id, or a base serial for a pair
    item_kind: str  # "card" | "pair"
    contest: str
    votes: tuple[str, ...]
    auditors: tuple[str, ...]
    state: DecisionState
    rule: str | None = None
    note: str | None = None
    created_at: str = ""
    supersedes: int | None = None


@dataclass(frozen=True, slots=True)
class CardCount:
    """What one card contributes to the count."""

    card_id: str
    precinct: str | None  # None: tallied under #unassigned
    style: str | None
    counts: bool  # False for originals, superseded duplicates, voided batches
    contests: tuple[ContestReading, ...]  # effective readings (decisions applied)
    pending_contests: tuple[str, ...]  # contests awaiting a person
    card_pending: bool  # the whole card awaits a person
    reasons: tuple[Reason, ...] = ()
    decided_by: tuple[str, ...] = field(default=())  # auditors of final decisions applied
    voided: bool = False  # in a voided batch: never counts, never queued


def decided_reading(contest_id: str, vote_for: int, option_order: Sequence[str], votes: Sequence[str]) -> ContestReading:
    """A contest reading from a person's decision: more votes than vote_for is an overvote."""
    chosen = tuple(o for o in option_order if o in set(votes))
    if len(chosen) > vote_for:
        return ContestReading(contest_id, chosen, ContestOutcome.OVERVOTE, 0, (), "adjudicated")
    return ContestReading(contest_id, chosen, ContestOutcome.COUNTED, vote_for - len(chosen), (), "adjudicated")


def final_decisions(decisions: Iterable[Decision]) -> dict[tuple[str, str], Decision]:
    """The latest final decision per (item, contest)."""
    out: dict[tuple[str, str], Decision] = {}
    for d in sorted(decisions, key=lambda d: d.id):
        if d.state is DecisionState.FINAL:
            out[(d.item, d.contest)] = d
    return out


def open_decisions(decisions: Iterable[Decision]) -> dict[tuple[str, str], Decision]:
    """The latest first-half or escalated decision per (item, contest) not yet followed by a final one."""
    out: dict[tuple[str, str], Decision] = {}
    for d in sorted(decisions, key=lambda d: d.id):
        key = (d.item, d.contest)
        if d.state in (DecisionState.FIRST_HALF, DecisionState.ESCALATED):
            out[key] = d
        elif d.state is DecisionState.FINAL:
            out.pop(key, None)
    return out


def count_card(
    election: Election,
    card: InterpretedCard,
    finals: Mapping[tuple[str, str], Decision],
    *,
    voided: bool = False,
    identified: tuple[str | None, str | None] = (None, None),
) -> CardCount:
    """Apply a card's final decisions to its machine reading and say what it contributes.

    ``identified`` is ``(style, precinct)`` a person stated for a card the machine could not
    read; with it, a card read by people contest by contest can count.
    """
    cid = card.source.card_id
    counts = card.kind is not CardKind.ORIGINAL and not voided
    result = card.interpretation
    if isinstance(result, UnreadableCard):
        out = _count_unreadable(election, card, finals, counts, identified)
        return replace(out, voided=voided)
    if isinstance(result, ReadCard):
        style, precinct = result.style, result.precinct
    else:
        style, precinct = result.record.style, result.record.precinct
    if identified[1] is not None:
        precinct = identified[1]
    reasons = tuple(result.reasons)
    blocking = [r for r in reasons if r in BLOCKING_REASONS and not (r is Reason.NO_PRECINCT and precinct is not None)]
    contests, pending, auditors = _apply_decisions(election, cid, result.contests, finals)
    card_pending = bool(blocking) or precinct is None
    return CardCount(cid, precinct, style, counts, contests, pending, card_pending, reasons, auditors, voided)


def _count_unreadable(
    election: Election, card: InterpretedCard, finals: Mapping[tuple[str, str], Decision], counts: bool,
    identified: tuple[str | None, str | None],
) -> CardCount:
    """An unreadable card counts only once a person identified it and decided every contest."""
    result = card.interpretation
    assert isinstance(result, UnreadableCard)
    if result.reason in NOTHING_TO_DECIDE:  # a one-sided card's blank back: kept, counts nothing, awaits no one
        return CardCount(card.source.card_id, None, None, False, (), (), False, (result.reason,))
    style, precinct = identified
    if style is None or not election.has_style(style):
        return CardCount(card.source.card_id, None, None, counts, (), (), True, (result.reason,))
    bstyle = election.style(style)
    precinct = precinct or (bstyle.precincts[0] if len(bstyle.precincts) == 1 else None)
    page = card.card_code.page if card.card_code is not None else 1
    layout_page = next((p for p in bstyle.layout.pages if p.page == page), bstyle.layout.pages[0])
    on_page = tuple(dict.fromkeys(t.contest for t in layout_page.targets))
    placeholder = tuple(ContestReading(c, (), ContestOutcome.PENDING, 0) for c in on_page)
    contests, pending, auditors = _apply_decisions(election, card.source.card_id, placeholder, finals)
    return CardCount(card.source.card_id, precinct, style, counts, contests, pending, precinct is None, (result.reason,), auditors)


def _apply_decisions(
    election: Election, item: str, readings: Sequence[ContestReading], finals: Mapping[tuple[str, str], Decision],
) -> tuple[tuple[ContestReading, ...], tuple[str, ...], tuple[str, ...]]:
    out: list[ContestReading] = []
    pending: list[str] = []
    auditors: list[str] = []
    for reading in readings:
        decision = finals.get((item, reading.contest))
        if decision is not None:
            contest = election.contest(reading.contest)
            reading = decided_reading(contest.id, contest.vote_for, [o.id for o in contest.options], decision.votes)
            auditors.extend(decision.auditors)
        if reading.outcome is ContestOutcome.PENDING:
            pending.append(reading.contest)
        out.append(reading)
    return tuple(out), tuple(pending), tuple(dict.fromkeys(auditors))
