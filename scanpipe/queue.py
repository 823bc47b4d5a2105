"""What needs a person (contract section 5, ``queue``). Pure: card counts and decisions in.

One item per card and reason. A contest whose first auditor has decided shows as
``awaiting_second_auditor``; one whose auditors disagreed as ``escalated``.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from scanpipe.counting import CardCount, Decision, DecisionState
from scanpipe.types import Reason


@dataclass(frozen=True, slots=True)
class QueueItem:
    item: str  # card id or serial
    kind: str  # "card" | "pair"
    reason: str  # a Reason code
    precinct: str | None
    contests: tuple[str, ...]

    def as_json(self) -> dict[str, object]:
        return {"item": self.item, "kind": self.kind, "reason": self.reason, "precinct": self.precinct, "contests": list(self.contests)}


def card_queue_items(card: CardCount, open_by_contest: Mapping[tuple[str, str], Decision]) -> list[QueueItem]:
    """The queue items of one card (none when nothing awaits a person)."""
    if not card.card_pending and not card.pending_contests:
        return []
    items: list[QueueItem] = []
    waiting: dict[str, list[str]] = {}
    undecided = []
    for cid in card.pending_contests:
        d = open_by_contest.get((card.card_id, cid))
        if d is None:
            undecided.append(cid)
        else:
            code = Reason.ESCALATED if d.state is DecisionState.ESCALATED else Reason.AWAITING_SECOND_AUDITOR
            waiting.setdefault(code.value, []).append(cid)
    if card.card_pending:
        card_reasons = [r for r in card.reasons if r not in (Reason.MARGINAL_MARK, Reason.WRITE_IN)] or [Reason.NO_PRECINCT]
        for reason in card_reasons:
            items.append(QueueItem(card.card_id, "card", reason.value, card.precinct, tuple(undecided)))
    elif undecided:
        reasons = [r for r in card.reasons if r in (Reason.MARGINAL_MARK, Reason.WRITE_IN)] or [Reason.MARGINAL_MARK]
        if card.style is None or any(r not in (Reason.MARGINAL_MARK, Reason.WRITE_IN) for r in card.reasons):
            # an unreadable card identified by a person, decided contest by contest
            reasons = [r for r in card.reasons if r not in (Reason.MARGINAL_MARK, Reason.WRITE_IN)] or reasons
        for reason in reasons:
            items.append(QueueItem(card.card_id, "card", reason.value, card.precinct, tuple(undecided)))
    for code, cids in waiting.items():
        items.append(QueueItem(card.card_id, "card", code, card.precinct, tuple(cids)))
    return items


def build_queue(cards: Iterable[CardCount], decisions: Iterable[Decision]) -> list[QueueItem]:
    """Every item awaiting a person, sorted by precinct, item and reason."""
    from scanpipe.counting import open_decisions

    opened = open_decisions(decisions)
    items = [item for card in cards if card.counts or card.card_pending for item in card_queue_items(card, opened)]
    return sorted(items, key=lambda i: (i.precinct or "~", i.item, i.reason))
