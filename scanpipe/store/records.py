"""Frozen values the store hands back: what a row means, not how it is kept."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from scanpipe.types import CardKind, DecisionState, InterpretedCard, ItemKind


@dataclass(frozen=True, slots=True)
class BatchRecord:
    """A batch and the hints remembered for it (contract section 5)."""

    name: str
    created_at: datetime
    style: str | None = None
    precinct: str | None = None
    kind: CardKind | None = None
    voided_at: datetime | None = None
    void_reason: str | None = None

    @property
    def voided(self) -> bool:
        return self.voided_at is not None


@dataclass(frozen=True, slots=True)
class StoredCard:
    """A card as stored: the rebuilt interpretation plus what the store knows about it."""

    card: InterpretedCard
    ingested_at: datetime
    interpreted_at: datetime
    batch_voided: bool
    interpretation_seq: int
    thresholds_source: str | None = None

    @property
    def card_id(self) -> str:
        return self.card.source.card_id


@dataclass(frozen=True, slots=True)
class DecisionRecord:
    """A person's decision of voter intent for one contest of one item."""

    id: int
    item: str
    item_kind: ItemKind
    contest: str
    votes: tuple[str, ...]
    auditors: tuple[str, ...]
    rule: str | None
    note: str | None
    state: DecisionState
    created_at: datetime
    supersedes: int | None = None
    rule_set: str | None = None  # the rule set's id it was made under ("MD-2026.1")


@dataclass(frozen=True, slots=True)
class ElectionRecord:
    """One loaded version of an election definition, as JSON (layouts included)."""

    row_id: int
    id: str
    name: str
    jurisdiction: str
    definition: dict[str, Any]
    layouts: dict[str, dict[str, Any]]
    sha256: str
    loaded_at: datetime
    base: str | None
    current: bool


@dataclass(frozen=True, slots=True)
class SkippedFile:
    path: str
    batch: str | None
    reason: str
    at: datetime


@dataclass(frozen=True, slots=True)
class EventRecord:
    id: int
    at: datetime
    actor: str | None
    action: str
    detail: dict[str, Any]
    prev_hash: str | None = None
    hash: str | None = None
