"""What the card, pair and board pages show, as plain values built from the store.

Pure but for the reads named in each function. In blind mode the machine's reading and
scores are left out of the values entirely (not merely hidden by the page).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import PurePath
from typing import Any

from scanpipe.errors import DecisionError
from scanpipe.review.index import ReviewItem, rows_of
from scanpipe.rules import rule_set
from scanpipe.store.repository import Store
from scanpipe.types import (
    Election,
    InterpretedCard,
    MachinePrintedCard,
    ReadCard,
    UnreadableCard,
)


@dataclass(frozen=True, slots=True)
class Box:
    contest: str
    option: str
    x: float
    y: float
    w: float
    h: float
    label: str | None = None  # the machine's status and score (None in blind mode)
    doubtful: bool = False  # the target a person must read (always False in blind mode)


@dataclass(frozen=True, slots=True)
class OptionView:
    id: str
    name: str
    write_in: bool
    status: str | None = None  # machine: yes / no / unknown (None in blind mode)
    score: float | None = None
    doubtful: bool = False  # the machine could not read this one: what the page asks (False in blind mode)


@dataclass(frozen=True, slots=True)
class ContestView:
    id: str
    title: str
    vote_for: int
    options: tuple[OptionView, ...]
    state: str  # open / awaiting
    machine_votes: tuple[str, ...] | None = None  # None in blind mode
    readings: tuple[tuple[str, str], ...] = ()  # pair: (which sheet, what it counts), blind: empty


@dataclass(frozen=True, slots=True)
class CardView:
    card_id: str
    file_name: str
    batch: str
    kind: str
    status: str
    style: str | None
    precinct: str | None
    reasons: tuple[str, ...]
    detail: str | None
    boxes: tuple[Box, ...]
    needs_identity: bool
    items: tuple[ReviewItem, ...]


@dataclass(frozen=True, slots=True)
class PageView:
    """A card or pair page: the cards to show and the contests to decide."""

    kind: str
    item: str
    cards: tuple[CardView, ...]
    contests: tuple[ContestView, ...]
    rules: tuple[tuple[str, str], ...]
    waiting_on_me: tuple[str, ...] = field(default=())  # contests whose first half is mine


def _boxes(card: InterpretedCard, blind: bool) -> tuple[Box, ...]:
    result = card.interpretation
    if not isinstance(result, ReadCard):
        return ()
    doubtful = set() if blind else {o for r in result.contests for o in r.unknown_options}
    return tuple(Box(t.score.contest, t.score.option, *t.score.box_px,
                     label=None if blind else f"{t.score.option}: {t.status.value} {t.score.score:.3f}",
                     doubtful=t.score.option in doubtful) for t in result.targets)


def card_view(store: Store, card_id: str, items: Sequence[ReviewItem], *, blind: bool) -> CardView:
    stored = store.get_card(card_id)
    if stored is None:
        raise DecisionError(f"there is no card {card_id}")
    card = stored.card
    result = card.interpretation
    style = precinct = detail = None
    if isinstance(result, ReadCard):
        style, precinct = result.style, result.precinct
    elif isinstance(result, MachinePrintedCard):
        style, precinct = result.record.style, result.record.precinct
    elif isinstance(result, UnreadableCard):
        detail = result.detail
    reasons = tuple(dict.fromkeys(r.reason for r in items))
    blocking = {"unreadable_image", "no_fiducials", "unknown_style", "ambiguous_style", "style_conflict", "no_precinct",
                "kind_unknown", "label_unreadable", "wrong_election"}
    status = "unreadable" if isinstance(result, UnreadableCard) else ("machine_printed" if isinstance(result, MachinePrintedCard) else "read")
    return CardView(card_id, PurePath(card.source.path).name, card.source.batch, card.kind.value, status, style, precinct,
                    reasons, detail, _boxes(card, blind), bool(blocking & set(reasons)), tuple(items))


def _option_views(election: Election, contest: str, card: InterpretedCard | None, blind: bool) -> tuple[OptionView, ...]:
    """The contest's options; with the machine's reading (not in blind mode) each says what it
    was read, and only the doubtful ones are marked as what the page asks a person."""
    scores: dict[str, Any] = {}
    doubtful: set[str] = set()
    if card is not None and isinstance(card.interpretation, ReadCard) and not blind:
        scores = {t.score.option: t for t in card.interpretation.targets if t.score.contest == contest}
        doubtful = {o for r in card.interpretation.contests if r.contest == contest for o in r.unknown_options}
    return tuple(OptionView(o.id, o.name, o.write_in, scores[o.id].status.value if o.id in scores else None,
                            round(scores[o.id].score.score, 3) if o.id in scores else None, o.id in doubtful)
                 for o in election.contest(contest).options)


def _machine_votes(card: InterpretedCard, contest: str) -> tuple[str, ...] | None:
    result = card.interpretation
    if isinstance(result, ReadCard | MachinePrintedCard):
        return next((r.votes for r in result.contests if r.contest == contest), None)
    return None


def card_page(store: Store, election: Election, card_id: str, *, blind: bool, me: str) -> PageView:
    items = [r for r in rows_of(store, card_id) if r.kind == "card"]
    if not items:
        raise DecisionError(f"card {card_id} is not in the review queue")
    view = card_view(store, card_id, items, blind=blind)
    stored = store.get_card(card_id)
    assert stored is not None
    contests = []
    for r in items:
        if r.state == "escalated":
            continue
        for cid in r.contests:
            contests.append(ContestView(cid, election.contest(cid).title, election.contest(cid).vote_for,
                                        _option_views(election, cid, stored.card, blind), r.state,
                                        None if blind else _machine_votes(stored.card, cid)))
    mine = tuple(c for r in items if r.state == "awaiting" and me in r.first_auditors for c in r.contests)
    return PageView("card", card_id, (view,), tuple(contests), rule_set(election.jurisdiction).intent_choices(), mine)


def pair_page(store: Store, election: Election, serial: str, *, blind: bool, me: str) -> PageView:
    items = [r for r in rows_of(store, serial) if r.kind == "pair"]
    if not items:
        raise DecisionError(f"serial {serial} is not in the review queue")
    pair = _pair_row(store, serial)
    cards = tuple(card_view(store, cid, (), blind=blind) for cid in (*pair["duplicates"], *pair["originals"]) if store.get_card(cid) is not None)
    diffs = {d["contest"]: d for d in pair["detail"].get("differences", [])}
    contests = []
    for r in items:
        if r.state == "escalated":
            continue
        for cid in r.contests:
            d = diffs.get(cid, {})
            readings = () if blind else tuple((side, _describe(d.get(side))) for side in ("duplicate", "original"))
            contests.append(ContestView(cid, election.contest(cid).title, election.contest(cid).vote_for,
                                        _option_views(election, cid, None, True), r.state, None, readings))
    mine = tuple(c for r in items if r.state == "awaiting" and me in r.first_auditors for c in r.contests)
    return PageView("pair", serial, cards, tuple(contests), rule_set(election.jurisdiction).intent_choices(), mine)


def _describe(reading: dict[str, Any] | None) -> str:
    if reading is None:
        return "not on this sheet"
    votes = ", ".join(reading.get("votes", [])) or "no vote"
    unknown = reading.get("unknown_options") or []
    return f"{reading.get('outcome')}: {votes}" + (f" (unclear: {', '.join(unknown)})" if unknown else "")


def _pair_row(store: Store, serial: str) -> dict[str, Any]:
    from sqlalchemy import select

    from scanpipe.store.models import pair_table

    with store._read() as conn:
        row = conn.execute(select(pair_table).where(pair_table.c.serial == serial)).mappings().first()
    if row is None:
        raise DecisionError(f"there is no serial {serial}")
    return dict(row)
