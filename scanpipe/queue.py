"""What needs a person (contract section 5, ``queue``). Pure: card counts and decisions in.

One item per card and reason. A contest whose first auditor has decided shows as
``awaiting_second_auditor``; one whose auditors disagreed as ``escalated``. A card item also
names the options a person must read (``options``, an extension of the contract's object):
the doubtful targets only, never their clearly read neighbours.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from scanpipe.counting import CardCount, Decision, DecisionState
from scanpipe.reconcile.resolve import PairOutcome
from scanpipe.types import Reason


@dataclass(frozen=True, slots=True)
class QueueItem:
    item: str  # card id, serial, or the path of a card file not read
    kind: str  # "card" | "pair" | "file"
    reason: str  # a Reason code
    precinct: str | None
    contests: tuple[str, ...]
    options: tuple[str, ...] = ()  # the doubtful options of those contests (card items)

    def as_json(self) -> dict[str, object]:
        return {"item": self.item, "kind": self.kind, "reason": self.reason, "precinct": self.precinct,
                "contests": list(self.contests), "options": list(self.options)}


PERSON_READS = (Reason.MARGINAL_MARK, Reason.WRITE_IN, Reason.SCANNER_STREAK)  # contest-level reasons


def split_by_open_decisions(item: str, contests: Iterable[str], opened: Mapping[tuple[str, str], Decision]) -> tuple[list[str], dict[str, list[str]]]:
    """Contests nobody decided yet, and those waiting (``awaiting_second_auditor`` / ``escalated``)."""
    undecided: list[str] = []
    waiting: dict[str, list[str]] = {}
    for cid in contests:
        d = opened.get((item, cid))
        if d is None:
            undecided.append(cid)
        else:
            code = Reason.ESCALATED if d.state is DecisionState.ESCALATED else Reason.AWAITING_SECOND_AUDITOR
            waiting.setdefault(code.value, []).append(cid)
    return undecided, waiting


def card_queue_items(card: CardCount, open_by_contest: Mapping[tuple[str, str], Decision]) -> list[QueueItem]:
    """The queue items of one card (none when nothing awaits a person).

    A card blocked as a whole (unreadable, no precinct, a label problem...) is one item per
    blocking reason; otherwise its undecided contests are listed under their contest-level
    reason; contests whose first auditor has decided, or that were escalated, are items of
    their own.
    """
    overridden = [c.contest for c in card.contests  # a person opened a decision of a contest nothing queued (--override)
                  if c.contest not in card.pending_contests and (card.card_id, c.contest) in open_by_contest]
    if not card.card_pending and not card.pending_contests and not overridden:
        return []
    undecided, waiting = split_by_open_decisions(card.card_id, [*card.pending_contests, *overridden], open_by_contest)
    blocking = [r for r in card.reasons if r not in PERSON_READS]
    reasons: list[Reason] = []
    if card.card_pending:
        reasons = blocking or [Reason.NO_PRECINCT]
    elif undecided:  # an unreadable card a person identified keeps its reason; else marks
        reasons = blocking or [r for r in card.reasons if r in PERSON_READS] or [Reason.MARGINAL_MARK]
    items = [QueueItem(card.card_id, "card", r.value, card.precinct, tuple(undecided), doubtful_options(card, undecided))
             for r in reasons]
    items += [QueueItem(card.card_id, "card", code, card.precinct, tuple(cids), doubtful_options(card, cids))
              for code, cids in waiting.items()]
    return items


def doubtful_options(card: CardCount, contests: Iterable[str]) -> tuple[str, ...]:
    """The options of ``contests`` on the card that the machine could not read clearly."""
    wanted = set(contests)
    return tuple(o for r in card.contests if r.contest in wanted for o in r.unknown_options)


PAIR_REASON = {
    "mismatch": Reason.PAIR_MISMATCH, "needs_review": Reason.PAIR_NEEDS_REVIEW, "orphan_duplicate": Reason.ORPHAN_DUPLICATE,
    "orphan_original": Reason.ORPHAN_ORIGINAL, "conflict": Reason.CONFLICT,
}


def pair_queue_items(pair: PairOutcome, opened: Mapping[tuple[str, str], Decision]) -> list[QueueItem]:
    """The queue items of one serial still waiting for people."""
    if pair.status.value in ("match", "resolved"):
        return []
    reason = PAIR_REASON[pair.base_status.value]
    if reason is Reason.PAIR_NEEDS_REVIEW and pair.text_code_disagree:
        reason = Reason.TEXT_CODE_DISAGREE
    undecided, waiting = split_by_open_decisions(pair.serial, pair.waiting, opened)
    items = []
    if undecided or not pair.listed:
        items.append(QueueItem(pair.serial, "pair", reason.value, pair.precinct, tuple(undecided)))
    items += [QueueItem(pair.serial, "pair", code, pair.precinct, tuple(cids)) for code, cids in waiting.items()]
    return items


def file_queue_items(not_read: Iterable[tuple[str, str]]) -> list[QueueItem]:
    """One item per card file (or folder) ingest found but could not read, by path: it stays
    until a card is read from that path. Not an auditor's matter (nothing to decide), but
    nothing is complete while a card may be missing."""
    return [QueueItem(path, "file", Reason.FILE_UNREAD.value, None, ()) for path, _reason in not_read]


def build_queue(
    cards: Iterable[CardCount], decisions: Iterable[Decision], pairs: Iterable[PairOutcome] = (), *,
    paired_cards: frozenset[str] | set[str] = frozenset(), files_not_read: Iterable[tuple[str, str]] = (),
) -> list[QueueItem]:
    """Every item awaiting a person, sorted by precinct, item and reason.

    Cards that belong to a serial are decided through their pair (the pair item lists the
    contests), so they get no card items of their own.
    """
    from scanpipe.counting import open_decisions

    opened = open_decisions(decisions)
    items = [item for card in cards if not card.voided and card.card_id not in paired_cards and not card.card_id.startswith("serial:")
             and (card.counts or card.card_pending) for item in card_queue_items(card, opened)]
    items += [item for pair in pairs for item in pair_queue_items(pair, opened)]
    items += file_queue_items(files_not_read)
    return sorted(items, key=lambda i: (i.precinct or "~", i.item, i.reason))
