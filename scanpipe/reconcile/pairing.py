"""Pair duplicates with originals by serial (Md. Election Law §12-108(d)). Pure.

A *sheet* of one kind and serial may be several cards (the pages of one physical sheet,
scanned as one multi-page file or as separate files): cards of the same kind and serial
whose page numbers differ belong to one sheet. Two cards of the same kind and serial on the
same page (or of different styles) mean two sheets carry one serial: a ``conflict``.

Printed new duplicates (``DUP-<serial>-R<n>``) are not duplicates to pair: they are the
paper form of a new duplicate that auditors already decided, and attach to that record.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from enum import StrEnum

from scanpipe.types import NOTHING_TO_DECIDE, CardKind, InterpretedCard, MachinePrintedCard, ReadCard, Reason, UnreadableCard

MAX_SIDES = 2  # a sheet has two sides


class PairStatus(StrEnum):
    MATCH = "match"
    MISMATCH = "mismatch"
    NEEDS_REVIEW = "needs_review"
    RESOLVED = "resolved"
    ORPHAN_DUPLICATE = "orphan_duplicate"
    ORPHAN_ORIGINAL = "orphan_original"
    CONFLICT = "conflict"


@dataclass(frozen=True, slots=True)
class Sheet:
    """The cards of one physical sheet of one kind and serial, in page order."""

    kind: CardKind
    serial: str
    cards: tuple[InterpretedCard, ...]

    @property
    def card_ids(self) -> tuple[str, ...]:
        return tuple(c.source.card_id for c in self.cards)

    @property
    def paths(self) -> tuple[str, ...]:
        return tuple(dict.fromkeys(c.source.path for c in self.cards))

    @property
    def style(self) -> str | None:
        for c in self.cards:
            style = card_style(c)
            if style is not None:
                return style
        return None


@dataclass(frozen=True, slots=True)
class Pairing:
    """Everything scanned under one base serial."""

    serial: str
    duplicates: tuple[Sheet, ...]
    originals: tuple[Sheet, ...]
    reprints: tuple[InterpretedCard, ...] = ()  # scanned printed new duplicates (-R<n>)

    @property
    def structural_status(self) -> PairStatus | None:
        """Orphan or conflict when the pairing itself is wrong; None when there is one of each."""
        if len(self.duplicates) > 1 or len(self.originals) > 1:
            return PairStatus.CONFLICT
        if not self.originals:
            return PairStatus.ORPHAN_DUPLICATE
        if not self.duplicates:
            return PairStatus.ORPHAN_ORIGINAL
        return None


def card_style(card: InterpretedCard) -> str | None:
    r = card.interpretation
    if isinstance(r, ReadCard):
        return r.style
    if isinstance(r, MachinePrintedCard):
        return r.record.style
    return None


def card_page(card: InterpretedCard) -> int | None:
    r = card.interpretation
    if isinstance(r, ReadCard):
        return r.page
    if isinstance(r, UnreadableCard):
        return card.card_code.page if card.card_code is not None else None
    return 1


def serial_of(card: InterpretedCard, stated: dict[str, str] | None = None) -> tuple[str, int | None] | None:
    """``(base serial, revision)`` from a person's statement, else the card's label."""
    if stated and card.source.card_id in stated:
        text = stated[card.source.card_id]
        base, _, rev = text.partition("-R")
        return base, int(rev) if rev.isdigit() else None
    if card.label is not None:
        return card.label.base_serial, card.label.revision
    return None


def group_sheets(kind: CardKind, serial: str, cards: Sequence[InterpretedCard]) -> list[Sheet]:
    """Split the cards of one kind and serial into sheets (see the module docstring).

    The pages of one file are one sheet (a file of more than two pages is a stack: each page
    is a sheet of its own). Files are merged into one sheet when every page is known, no page
    repeats and the style is the same (front and back scanned separately).
    """
    by_file: dict[str, list[InterpretedCard]] = defaultdict(list)
    for c in sorted(cards, key=lambda c: c.source.card_id):
        by_file[c.source.sha256 if c.source.page_count <= MAX_SIDES else c.source.card_id].append(c)
    sheets: list[list[InterpretedCard]] = []
    for sha in sorted(by_file):
        group = by_file[sha]
        for sheet in sheets:
            if _same_sheet(sheet, group):
                sheet.extend(group)
                break
        else:
            sheets.append(list(group))
    return [Sheet(kind, serial, tuple(sorted(s, key=lambda c: (card_page(c) or 0, c.source.card_id)))) for s in sheets]


def _same_sheet(sheet: Sequence[InterpretedCard], group: Sequence[InterpretedCard]) -> bool:
    """Whether separately scanned files are sides of one sheet: their known pages do not
    repeat and their known styles agree. A side whose page could not be read (an unreadable
    card code) joins a sheet that still lacks a side, so one damaged side does not turn a
    pair into a conflict."""
    cards = (*sheet, *group)
    pages = [p for p in (card_page(c) for c in cards) if p is not None]
    styles = {s for s in (card_style(c) for c in cards) if s is not None}
    return len(set(pages)) == len(pages) and len(styles) <= 1 and len(cards) <= MAX_SIDES


def _other_election(card: InterpretedCard) -> bool:
    """A card of another election is queued as such; it never joins (or breaks) a pair of this one."""
    r = card.interpretation
    return isinstance(r, UnreadableCard) and r.reason is Reason.WRONG_ELECTION


def _blank_back(card: InterpretedCard) -> bool:
    """A one-sided card's blank back: its sheet is paired by the front (it carries no contest)."""
    r = card.interpretation
    return isinstance(r, UnreadableCard) and r.reason in NOTHING_TO_DECIDE


def pair_cards(cards: Iterable[InterpretedCard], stated: dict[str, str] | None = None) -> list[Pairing]:
    """Group labelled cards by base serial. The result does not depend on input order."""
    dups: dict[str, list[InterpretedCard]] = defaultdict(list)
    orgs: dict[str, list[InterpretedCard]] = defaultdict(list)
    reprints: dict[str, list[InterpretedCard]] = defaultdict(list)
    for card in cards:
        found = serial_of(card, stated)
        if found is None or card.kind not in (CardKind.DUPLICATE, CardKind.ORIGINAL) or _other_election(card) or _blank_back(card):
            continue
        base, revision = found
        if card.kind is CardKind.DUPLICATE and revision is not None:
            reprints[base].append(card)
        elif card.kind is CardKind.DUPLICATE:
            dups[base].append(card)
        else:
            orgs[base].append(card)
    serials = sorted(set(dups) | set(orgs) | set(reprints))
    return [
        Pairing(s, tuple(group_sheets(CardKind.DUPLICATE, s, dups.get(s, []))), tuple(group_sheets(CardKind.ORIGINAL, s, orgs.get(s, []))),
                tuple(sorted(reprints.get(s, []), key=lambda c: c.source.card_id)))
        for s in serials
    ]
