"""What the card, pair, history and board pages show, as plain values built from the store.

Pure but for the reads named in each function. In blind mode the machine's reading and
scores are left out of the values entirely (not merely hidden by the page). People read
names: contest titles, candidate and precinct names, and each card by its place in the
paper (``B01 #57 (0057.png)``); ids stay in URLs and form values only.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from scanpipe.errors import DecisionError
from scanpipe.names import Names, file_name, pair_status_label, reason_instruction, reason_label
from scanpipe.review.index import ReviewItem, rows_of
from scanpipe.rules import rule_set
from scanpipe.store.records import DecisionRecord
from scanpipe.store.repository import Store
from scanpipe.types import (
    Election,
    InterpretedCard,
    MachinePrintedCard,
    ReadCard,
    UnreadableCard,
)

# How far around a contest's targets the zoom reaches, in inches (left, top, right, bottom):
# the contest title above, the candidate names to the right of the targets.
ZOOM_MARGIN_IN = (0.35, 0.5, 2.8, 0.25)


@dataclass(frozen=True, slots=True)
class Box:
    contest: str
    option: str
    x: float
    y: float
    w: float
    h: float
    label: str | None = None  # the option's name with the machine's status and score (None in blind mode)
    doubtful: bool = False  # the target a person must read (always False in blind mode)


@dataclass(frozen=True, slots=True)
class OptionView:
    id: str
    name: str
    write_in: bool
    status: str | None = None  # machine: yes / no / unknown (None in blind mode)
    score: float | None = None
    doubtful: bool = False  # the machine could not read this one: what the page asks (False in blind mode)
    why: str | None = None  # for a doubtful one, the machine's reason (what it measured; None in blind mode)


@dataclass(frozen=True, slots=True)
class ContestView:
    id: str
    title: str
    vote_for: int
    options: tuple[OptionView, ...]
    state: str  # open / awaiting
    machine_votes: str | None = None  # the machine's reading in words; None in blind mode
    readings: tuple[tuple[str, str], ...] = ()  # pair: (which card, what it reads), blind: empty

    @property
    def has_write_in(self) -> bool:
        return any(o.write_in for o in self.options)


@dataclass(frozen=True, slots=True)
class CardView:
    card_id: str
    place: str  # "B01 #57 (0057.png)"
    role: str  # card / duplicate / original
    file_name: str
    batch: str
    kind: str
    status: str
    style: str | None
    precinct: str  # its name
    reasons: tuple[str, ...]  # reason codes of the card's queue items
    detail: str | None
    boxes: tuple[Box, ...]
    needs_identity: bool
    items: tuple[ReviewItem, ...]
    regions: dict[str, tuple[int, int, int, int]] = field(default_factory=dict)  # contest -> zoom box (image px)


@dataclass(frozen=True, slots=True)
class ReasonView:
    code: str
    label: str
    instruction: str


@dataclass(frozen=True, slots=True)
class PageView:
    """A card or pair page: the cards to show and the contests to decide."""

    kind: str
    item: str
    title: str
    cards: tuple[CardView, ...]
    contests: tuple[ContestView, ...]
    rules: tuple[tuple[str, str], ...]
    waiting_on_me: tuple[str, ...] = field(default=())  # contests whose first half is mine
    reasons: tuple[ReasonView, ...] = ()


BLOCKING = {"unreadable_image", "no_fiducials", "unknown_style", "ambiguous_style", "style_conflict", "no_precinct",
            "kind_unknown", "label_unreadable", "wrong_election", "unknown_page"}


def _boxes(card: InterpretedCard, names: Names, blind: bool) -> tuple[Box, ...]:
    result = card.interpretation
    if not isinstance(result, ReadCard):
        return ()
    doubtful = set() if blind else {o for r in result.contests for o in r.unknown_options}
    return tuple(Box(t.score.contest, t.score.option, *t.score.box_px,
                     label=None if blind else f"{names.option(t.score.option)}: {t.status.value} {t.score.score:.3f}",
                     doubtful=t.score.option in doubtful) for t in result.targets)


def contest_regions(card: InterpretedCard) -> dict[str, tuple[int, int, int, int]]:
    """Per contest on a read card, the part of the image to zoom to: its targets with the
    title above and the names beside them (:data:`ZOOM_MARGIN_IN`), in image pixels."""
    result = card.interpretation
    if not isinstance(result, ReadCard):
        return {}
    dpi = result.registration.dpi or 200.0
    left, top, right, bottom = (m * dpi for m in ZOOM_MARGIN_IN)
    spans: dict[str, list[float]] = {}
    for t in result.targets:
        x, y, w, h = t.score.box_px
        s = spans.setdefault(t.score.contest, [x, y, x + w, y + h])
        s[:] = [min(s[0], x), min(s[1], y), max(s[2], x + w), max(s[3], y + h)]
    return {c: (int(max(0.0, s[0] - left)), int(max(0.0, s[1] - top)), int(s[2] - s[0] + left + right), int(s[3] - s[1] + top + bottom))
            for c, s in spans.items()}


def card_view(store: Store, election: Election, card_id: str, items: Sequence[ReviewItem], *, blind: bool, role: str = "card") -> CardView:
    stored = store.get_card(card_id)
    if stored is None:
        raise DecisionError(f"there is no card {card_id}")
    names = Names(election)
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
    status = "unreadable" if isinstance(result, UnreadableCard) else ("machine_printed" if isinstance(result, MachinePrintedCard) else "read")
    place = store.card_place(card_id)
    return CardView(card_id, place.label if place is not None else file_name(card.source.path), role, file_name(card.source.path),
                    card.source.batch, card.kind.value, status, style, names.precinct(precinct), reasons, detail,
                    _boxes(card, names, blind), bool(BLOCKING & set(reasons)), tuple(items), contest_regions(card))


def _option_views(election: Election, contest: str, card: InterpretedCard | None, blind: bool) -> tuple[OptionView, ...]:
    """The contest's options; with the machine's reading (not in blind mode) each says what it
    was read, and only the doubtful ones are marked as what the page asks a person."""
    scores: dict[str, Any] = {}
    doubtful: set[str] = set()
    if card is not None and isinstance(card.interpretation, ReadCard) and not blind:
        scores = {t.score.option: t for t in card.interpretation.targets if t.score.contest == contest}
        doubtful = {o for r in card.interpretation.contests if r.contest == contest for o in r.unknown_options}
    return tuple(OptionView(o.id, o.name, o.write_in, scores[o.id].status.value if o.id in scores else None,
                            round(scores[o.id].score.score, 3) if o.id in scores else None, o.id in doubtful,
                            scores[o.id].why if o.id in doubtful and o.id in scores else None)
                 for o in election.contest(contest).options)


def _machine_votes(names: Names, card: InterpretedCard, contest: str) -> str | None:
    result = card.interpretation
    if isinstance(result, ReadCard | MachinePrintedCard):
        reading = next((r for r in result.contests if r.contest == contest), None)
        if reading is not None:
            return names.reading({"votes": list(reading.votes), "unknown_options": list(reading.unknown_options),
                                  "outcome": reading.outcome.value})
    return None


def _reasons(codes: Sequence[str]) -> tuple[ReasonView, ...]:
    return tuple(ReasonView(c, reason_label(c), reason_instruction(c)) for c in dict.fromkeys(codes))


def card_page(store: Store, election: Election, card_id: str, *, blind: bool, me: str) -> PageView:
    items = [r for r in rows_of(store, card_id) if r.kind == "card"]
    if not items:
        raise DecisionError(f"card {card_id} is not in the review queue")
    names = Names(election)
    view = card_view(store, election, card_id, items, blind=blind)
    stored = store.get_card(card_id)
    assert stored is not None
    contests = []
    for r in items:
        if r.state == "escalated":
            continue
        for cid in r.contests:
            contests.append(ContestView(cid, names.contest(cid), election.contest(cid).vote_for,
                                        _option_views(election, cid, stored.card, blind), r.state,
                                        None if blind else _machine_votes(names, stored.card, cid)))
    mine = tuple(c for r in items if r.state == "awaiting" and me in r.first_auditors for c in r.contests)
    return PageView("card", card_id, f"Card {view.place}", (view,), _mine_last(election, contests, mine), rule_set(election.jurisdiction).intent_choices(), mine,
                    _reasons([r.reason for r in items]))


def _mine_last(election: Election, contests: Sequence[ContestView], mine: Sequence[str]) -> tuple[ContestView, ...]:
    """Contests in ballot order, those waiting for another auditor's second half of mine last."""
    order = {c.id: n for n, c in enumerate(election.contests)}
    return tuple(sorted(contests, key=lambda c: (c.id in mine, order.get(c.id, len(order)))))


def pair_cards(store: Store, election: Election, pair: dict[str, Any], *, blind: bool) -> tuple[CardView, ...]:
    """The cards of a serial, duplicates first, each with its role."""
    roles = [(cid, "duplicate") for cid in pair["duplicates"]] + [(cid, "original") for cid in pair["originals"]]
    return tuple(card_view(store, election, cid, (), blind=blind, role=role) for cid, role in roles if store.get_card(cid) is not None)


def pair_page(store: Store, election: Election, serial: str, *, blind: bool, me: str) -> PageView:
    items = [r for r in rows_of(store, serial) if r.kind == "pair"]
    if not items:
        raise DecisionError(f"serial {serial} is not in the review queue")
    names = Names(election)
    pair = pair_row(store, serial)
    cards = pair_cards(store, election, pair, blind=blind)
    diffs = {d["contest"]: d for d in pair["detail"].get("differences", [])}
    own = {} if blind else {c.card_id: stored.card for c in cards if (stored := store.get_card(c.card_id)) is not None}
    contests = []
    for r in items:
        if r.state == "escalated":
            continue
        for cid in r.contests:
            d = diffs.get(cid)
            readings = () if blind else _pair_readings(names, cid, d, cards, own)
            contests.append(ContestView(cid, names.contest(cid), election.contest(cid).vote_for,
                                        _option_views(election, cid, None, True), r.state, None, readings))
    mine = tuple(c for r in items if r.state == "awaiting" and me in r.first_auditors for c in r.contests)
    return PageView("pair", serial, f"Serial {serial}", cards, _mine_last(election, contests, mine), rule_set(election.jurisdiction).intent_choices(), mine,
                    _reasons([r.reason for r in items]))


def _pair_readings(names: Names, contest: str, diff: dict[str, Any] | None, cards: Sequence[CardView],
                   own: dict[str, InterpretedCard]) -> tuple[tuple[str, str], ...]:
    """What each card of the pair reads in ``contest``: from the comparison where it
    differed, else from each card's own machine reading (an orphan or a conflict has no comparison)."""
    if diff is not None:
        return tuple((side.capitalize(), names.reading(diff.get(side))) for side in ("duplicate", "original"))
    return tuple((f"{c.role.capitalize()} {c.place}",
                  (_machine_votes(names, own[c.card_id], contest) if c.card_id in own else None) or "could not be read by the machine")
                 for c in cards)


def pair_row(store: Store, serial: str) -> dict[str, Any]:
    found = store.get_pair(serial)
    if found is None:
        raise DecisionError(f"there is no serial {serial}")
    return {"serial": found.serial, "status": found.status, "precinct": found.precinct, "duplicates": list(found.duplicates),
            "originals": list(found.originals), "contests": list(found.contests), "counted": found.counted, "detail": found.detail}


# --------------------------------------------------------------------------------------
# History: what people decided, read-only


STATE_WORDS = {"first_half": "first auditor's reading (awaiting a second)", "final": "final", "escalated": "escalated to the board",
               "superseded": "superseded"}


@dataclass(frozen=True, slots=True)
class DecisionView:
    id: int
    contest: str  # title
    contest_id: str
    reading: str  # names, with write-in names
    auditors: str
    state: str  # in words
    state_code: str
    rule: str  # the rule's text
    note: str
    at: str


@dataclass(frozen=True, slots=True)
class HistoryView:
    kind: str
    item: str
    title: str
    cards: tuple[CardView, ...]
    decisions: tuple[DecisionView, ...]
    facts: tuple[tuple[str, str], ...]  # (what, value) lines about the item
    in_queue: bool


def decision_views(store: Store, election: Election, records: Sequence[DecisionRecord]) -> tuple[DecisionView, ...]:
    names = Names(election)
    rules = dict(rule_set(election.jurisdiction).intent_choices())
    write_ins = store.write_in_names([d.id for d in records])
    return tuple(DecisionView(d.id, names.contest(d.contest), d.contest, names.votes(d.votes, write_ins=write_ins.get(d.id)),
                              ", ".join(d.auditors), STATE_WORDS.get(str(d.state), str(d.state)), str(d.state),
                              rules.get(d.rule or "", d.rule or "none cited"), d.note or "",
                              d.created_at.strftime("%Y-%m-%d %H:%M UTC")) for d in records)


def history_page(store: Store, election: Election, kind: str, item: str, *, blind: bool, reveal_open: bool = False) -> HistoryView:
    """A decided (or any) card or serial, read-only: its cards and every decision made on it.

    While the item is still queued, a first auditor's reading and escalated readings are left
    out unless ``reveal_open`` (the board and administrators): the second auditor must not see
    the first one's choice."""
    names = Names(election)
    in_queue = any(r.kind == kind for r in rows_of(store, item))
    if kind == "pair":
        pair = pair_row(store, item)
        cards = pair_cards(store, election, pair, blind=blind)
        counted = pair["counted"]
        facts: tuple[tuple[str, str], ...] = (("Precinct", names.precinct(pair["precinct"])),
                 ("Found", pair_status_label(str(pair["detail"].get("base_status", pair["status"])))),
                 ("Now", pair_status_label(pair["status"])),
                 ("Counts", "the duplicate" if counted == "duplicate" else ("nothing yet" if counted == "none" else f"new duplicate {counted}")))
        title = f"Serial {item}"
    else:
        view = card_view(store, election, item, (), blind=blind)
        cards = (view,)
        facts = (("Precinct", view.precinct), ("Ballot style", view.style or "not known"))
        title = f"Card {view.place}"
    decisions = decision_views(store, election, store.decisions(item))
    if in_queue and not reveal_open:  # an auditor still to decide must not see the others' open readings
        decisions = tuple(d for d in decisions if d.state_code in ("final", "superseded"))
    return HistoryView(kind, item, title, cards, decisions, facts, in_queue)


@dataclass(frozen=True, slots=True)
class DecidedRow:
    item: str
    kind: str
    title: str
    contests: str
    decisions: int
    last: str


def decided_items(store: Store, election: Election, *, limit: int = 200) -> list[DecidedRow]:
    """Items with a final decision, newest first (the history list)."""
    names = Names(election)
    by_item: dict[str, list[DecisionRecord]] = {}
    for d in store.decisions():
        by_item.setdefault(d.item, []).append(d)
    finals = [(max(d.id for d in ds), item, ds) for item, ds in by_item.items() if any(str(d.state) == "final" for d in ds)]
    finals.sort(reverse=True)
    finals = finals[:limit]
    places = store.card_places([item for _, item, ds in finals if str(ds[0].item_kind) == "card"])
    rows = []
    for _, item, ds in finals:
        kind = str(ds[0].item_kind)
        title = f"Serial {item}" if kind == "pair" else (f"Card {places[item].label}" if item in places else f"Card {item[:12]}")
        contests = names.contests(dict.fromkeys(d.contest for d in ds if str(d.state) == "final"))
        rows.append(DecidedRow(item, kind, title, contests, len(ds), max(d.created_at for d in ds).strftime("%Y-%m-%d %H:%M UTC")))
    return rows


# --------------------------------------------------------------------------------------
# The board


@dataclass(frozen=True, slots=True)
class BoardCase:
    item: str
    kind: str
    title: str
    contest: str  # id
    contest_title: str
    latest: int
    cards: tuple[CardView, ...]
    readings: tuple[DecisionView, ...]  # each auditor's escalated reading with rule and note


def board_case(store: Store, election: Election, item: ReviewItem, contest: str, latest: int) -> BoardCase:
    names = Names(election)
    if item.kind == "pair":
        cards = pair_cards(store, election, pair_row(store, item.item), blind=False)
        title = f"Serial {item.item}"
    else:
        view = card_view(store, election, item.item, (), blind=False)
        cards, title = (view,), f"Card {view.place}"
    escalated = [d for d in store.decisions(item.item) if d.contest == contest and str(d.state) == "escalated"]
    return BoardCase(item.item, item.kind, title, contest, names.contest(contest), latest, cards,
                     decision_views(store, election, escalated))


def recorded_message(election: Election, what: str, contest: str, votes: Sequence[str], write_ins: dict[str, str], message: str) -> str:
    """The line shown after a decision: what was recorded, in names, and where it stands."""
    names = Names(election)
    return f"{what} · {names.contest(contest)}: {names.votes(votes, write_ins=write_ins)} — {message}"
