"""SQLAlchemy 2 models: the schema of a scanpipe database.

The schema is write-once where it can be: a card, its raw target scores and its contest
readings are inserted once (keyed by the CVR card id, so ingesting the same bytes again
changes nothing); decisions and events are appended, never edited, except a decision's
``state`` moving on. Counts are derived by query, never kept in counters, so two writer
processes cannot lose each other's updates.

Every change to this module needs an Alembic revision in ``migrations/versions`` (a test
compares the models with the migrated schema).
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any, cast

from sqlalchemy import (
    JSON,
    CheckConstraint,
    DateTime,
    Double,
    ForeignKey,
    Index,
    Integer,
    LargeBinary,
    MetaData,
    String,
    Table,
    Text,
    UniqueConstraint,
    text,
)
from sqlalchemy.engine import Dialect
from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column
from sqlalchemy.types import TypeDecorator

NAMING = {
    "ix": "ix_%(table_name)s_%(column_0_N_name)s",
    "uq": "uq_%(table_name)s_%(column_0_N_name)s",
    "ck": "ck_%(table_name)s_%(constraint_name)s",
    "fk": "fk_%(table_name)s_%(column_0_name)s_%(referred_table_name)s",
    "pk": "pk_%(table_name)s",
}

ID = String(64)  # ids of the election definition: [A-Za-z0-9_.-]{1,64}
CARD_ID = String(80)  # 64 hex + "-p<N>", or "nd-<serial>"
SERIAL = String(32)  # [A-Z0-9]{1,16}(-R[0-9]{1,3})?
CODE = String(40)  # enum values and reason codes
RULE_SET = String(40)  # a rule set's id, "MD-2026.1"


class UtcDateTime(TypeDecorator[datetime]):
    """Timestamps in UTC: aware datetimes in Python whatever the backend keeps."""

    impl = DateTime(timezone=True)
    cache_ok = True

    def process_bind_param(self, value: datetime | None, dialect: Dialect) -> datetime | None:
        if value is None:
            return None
        assert value.tzinfo is not None, "store aware datetimes only"
        return value.astimezone(UTC)

    def process_result_value(self, value: datetime | None, dialect: Dialect) -> datetime | None:
        if value is None:
            return None
        return value.replace(tzinfo=UTC) if value.tzinfo is None else value.astimezone(UTC)


def utcnow() -> datetime:
    return datetime.now(UTC)


class Base(DeclarativeBase):
    metadata = MetaData(naming_convention=NAMING)
    type_annotation_map = {datetime: UtcDateTime(), dict[str, Any]: JSON(), list[Any]: JSON()}


class ElectionRow(Base):
    """One loaded version of the definition; the newest row is the current election."""

    __tablename__ = "election"

    row_id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    id: Mapped[str] = mapped_column(ID, index=True)
    name: Mapped[str] = mapped_column(Text)
    jurisdiction: Mapped[str] = mapped_column(String(16))
    definition: Mapped[dict[str, Any]] = mapped_column(JSON)
    layouts: Mapped[dict[str, Any]] = mapped_column(JSON)  # layout path as written -> JSON
    sha256: Mapped[str] = mapped_column(String(64))
    base: Mapped[str | None] = mapped_column(Text)  # folder of election.json when loaded
    loaded_at: Mapped[datetime]


class LayoutReferenceRow(Base):
    """The bytes of a layout page's reference scan, so the database is self-contained."""

    __tablename__ = "layout_reference"

    election_row: Mapped[int] = mapped_column(ForeignKey("election.row_id", ondelete="CASCADE"), primary_key=True)
    style: Mapped[str] = mapped_column(ID, primary_key=True)
    page: Mapped[int] = mapped_column(Integer, primary_key=True)
    filename: Mapped[str] = mapped_column(Text)
    sha256: Mapped[str] = mapped_column(String(64))
    data: Mapped[bytes] = mapped_column(LargeBinary)


class BatchRow(Base):
    __tablename__ = "batch"

    name: Mapped[str] = mapped_column(String(200), primary_key=True)
    created_at: Mapped[datetime]
    style: Mapped[str | None] = mapped_column(ID)
    precinct: Mapped[str | None] = mapped_column(ID)
    kind: Mapped[str | None] = mapped_column(CODE)
    voided_at: Mapped[datetime | None]
    void_reason: Mapped[str | None] = mapped_column(Text)


class CardRow(Base):
    __tablename__ = "card"
    __table_args__ = (
        CheckConstraint("status IN ('read', 'machine_printed', 'unreadable')", name="status"),
        CheckConstraint("kind IN ('ballot', 'duplicate', 'original', 'unknown')", name="kind"),
    )

    card_id: Mapped[str] = mapped_column(CARD_ID, primary_key=True)
    sha256: Mapped[str] = mapped_column(String(64), index=True)
    path: Mapped[str] = mapped_column(Text, index=True)
    page_index: Mapped[int] = mapped_column(Integer)
    page_count: Mapped[int] = mapped_column(Integer)
    batch: Mapped[str] = mapped_column(ForeignKey("batch.name"), index=True)
    kind: Mapped[str] = mapped_column(CODE)
    label_kind: Mapped[str | None] = mapped_column(CODE)
    label_serial: Mapped[str | None] = mapped_column(SERIAL)
    base_serial: Mapped[str | None] = mapped_column(SERIAL, index=True)
    label_revision: Mapped[int | None] = mapped_column(Integer)
    card_code: Mapped[dict[str, Any] | None] = mapped_column(JSON)
    status: Mapped[str] = mapped_column(CODE)
    reason: Mapped[str | None] = mapped_column(CODE)  # why an unreadable card is unreadable
    detail: Mapped[str | None] = mapped_column(Text)
    reasons: Mapped[list[Any]] = mapped_column(JSON)  # what a person must still look at
    style: Mapped[str | None] = mapped_column(ID)
    page: Mapped[int | None] = mapped_column(Integer)
    precinct: Mapped[str | None] = mapped_column(ID)
    style_source: Mapped[str | None] = mapped_column(CODE)
    registration: Mapped[dict[str, Any] | None] = mapped_column(JSON)
    machine_record: Mapped[dict[str, Any] | None] = mapped_column(JSON)
    printed_text: Mapped[str | None] = mapped_column(Text)
    codes: Mapped[list[Any]] = mapped_column(JSON)
    seconds: Mapped[float] = mapped_column(Double)
    ingested_at: Mapped[datetime]
    interpreted_at: Mapped[datetime]
    thresholds_source: Mapped[str | None] = mapped_column(Text)
    interpretation_seq: Mapped[int] = mapped_column(Integer)


class TargetScoreRow(Base):
    """Every raw measurement of one target and the status it was given."""

    __tablename__ = "target_score"
    __table_args__ = (
        CheckConstraint("status IN ('yes', 'no', 'unknown')", name="status"),
        {"sqlite_with_rowid": False},  # one b-tree keyed by the primary key: about half the writes
    )

    card_id: Mapped[str] = mapped_column(ForeignKey("card.card_id", ondelete="CASCADE"), primary_key=True)
    contest: Mapped[str] = mapped_column(ID, primary_key=True)
    option: Mapped[str] = mapped_column(ID, primary_key=True)
    position: Mapped[int] = mapped_column(Integer)  # order in the interpretation
    score: Mapped[float] = mapped_column(Double)
    fill_score: Mapped[float] = mapped_column(Double)
    stroke_score: Mapped[float] = mapped_column(Double)
    ring_score: Mapped[float] = mapped_column(Double)
    damage_score: Mapped[float] = mapped_column(Double)
    write_in_score: Mapped[float] = mapped_column(Double)
    box_x: Mapped[float] = mapped_column(Double)
    box_y: Mapped[float] = mapped_column(Double)
    box_w: Mapped[float] = mapped_column(Double)
    box_h: Mapped[float] = mapped_column(Double)
    shift_x: Mapped[float] = mapped_column(Double)
    shift_y: Mapped[float] = mapped_column(Double)
    status: Mapped[str] = mapped_column(CODE)
    why: Mapped[str] = mapped_column(Text)
    dot_in: Mapped[float] = mapped_column(Double, server_default=text("0"))  # 0011: a lone dot's extent (in), 0 for none
    damage_cause: Mapped[str | None] = mapped_column(CODE, nullable=True)  # 0012: what the damage score measured (types.DamageCause)


class ContestReadingRow(Base):
    __tablename__ = "contest_reading"
    __table_args__ = (
        CheckConstraint("outcome IN ('counted', 'overvote', 'pending')", name="outcome"),
        {"sqlite_with_rowid": False},
    )

    card_id: Mapped[str] = mapped_column(ForeignKey("card.card_id", ondelete="CASCADE"), primary_key=True)
    contest: Mapped[str] = mapped_column(ID, primary_key=True)
    position: Mapped[int] = mapped_column(Integer)
    votes: Mapped[list[Any]] = mapped_column(JSON)
    outcome: Mapped[str] = mapped_column(CODE)
    undervotes: Mapped[int] = mapped_column(Integer)
    unknown_options: Mapped[list[Any]] = mapped_column(JSON)
    source: Mapped[str] = mapped_column(CODE)


class DecisionRow(Base):
    """A person's decision for one contest of a card or a pair. Appended, never edited,
    except ``state`` moving on (first_half -> final | escalated, any -> superseded)."""

    __tablename__ = "decision"
    __table_args__ = (
        CheckConstraint("item_kind IN ('card', 'pair')", name="item_kind"),
        CheckConstraint("state IN ('first_half', 'final', 'escalated', 'superseded')", name="state"),
        Index("ix_decision_item_contest", "item", "contest"),
        {"sqlite_autoincrement": True},
    )

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    item: Mapped[str] = mapped_column(CARD_ID)
    item_kind: Mapped[str] = mapped_column(CODE)
    contest: Mapped[str] = mapped_column(ID)
    votes: Mapped[list[Any]] = mapped_column(JSON)
    auditors: Mapped[list[Any]] = mapped_column(JSON)
    rule: Mapped[str | None] = mapped_column(Text)
    note: Mapped[str | None] = mapped_column(Text)
    state: Mapped[str] = mapped_column(CODE)
    created_at: Mapped[datetime]
    supersedes: Mapped[int | None] = mapped_column(ForeignKey("decision.id"))
    rule_set: Mapped[str | None] = mapped_column(RULE_SET)  # "MD-2026.1": the rules it was made under


class SkippedFileRow(Base):
    """A file ingest did not read (not a card by its extension)."""

    __tablename__ = "skipped_file"
    __table_args__ = (UniqueConstraint("path", "batch"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    path: Mapped[str] = mapped_column(Text)
    batch: Mapped[str] = mapped_column(String(200))
    reason: Mapped[str] = mapped_column(Text)
    at: Mapped[datetime]


class IdentificationRow(Base):
    """What a person stated about a card (``identify``): the latest statement per card."""

    __tablename__ = "identification"

    card_id: Mapped[str] = mapped_column(ForeignKey("card.card_id", ondelete="CASCADE"), primary_key=True)
    style: Mapped[str | None] = mapped_column(ID)
    page: Mapped[int | None] = mapped_column(Integer)
    precinct: Mapped[str | None] = mapped_column(ID)
    kind: Mapped[str | None] = mapped_column(CODE)
    serial: Mapped[str | None] = mapped_column(SERIAL)
    at: Mapped[datetime]


class EventRow(Base):
    """Append-only operational log; ``prev_hash``/``hash`` are for the hash-chained audit log."""

    __tablename__ = "event"
    __table_args__ = ({"sqlite_autoincrement": True},)

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    at: Mapped[datetime]
    actor: Mapped[str | None] = mapped_column(Text)
    action: Mapped[str] = mapped_column(String(64), index=True)
    detail: Mapped[dict[str, Any]] = mapped_column(JSON)
    prev_hash: Mapped[str | None] = mapped_column(String(64))
    hash: Mapped[str | None] = mapped_column(String(64))


class PairRow(Base):
    """The reconciliation of one base serial, as ``reconcile`` last computed it.

    Derived data: ``reconcile`` recomputes it from the cards and decisions (idempotent), so
    pages that list pairs need not pair every card on every request.
    """

    __tablename__ = "pair"
    __table_args__ = (
        CheckConstraint("status IN ('match', 'mismatch', 'needs_review', 'resolved', 'orphan_duplicate', "
                        "'orphan_original', 'conflict')", name="status"),
    )

    serial: Mapped[str] = mapped_column(SERIAL, primary_key=True)
    status: Mapped[str] = mapped_column(CODE, index=True)
    precinct: Mapped[str | None] = mapped_column(ID, index=True)
    duplicates: Mapped[list[Any]] = mapped_column(JSON)  # card ids of the duplicate sheet(s)
    originals: Mapped[list[Any]] = mapped_column(JSON)  # card ids of the original sheet(s)
    contests: Mapped[list[Any]] = mapped_column(JSON)  # contests that differ or need a person
    counted: Mapped[str] = mapped_column(String(40))  # "duplicate", "<serial>-R<n>" or "none"
    detail: Mapped[dict[str, Any]] = mapped_column(JSON)  # both readings of every difference
    updated_at: Mapped[datetime]


class NewDuplicateRow(Base):
    """A new duplicate made when auditors decided a pair (§12-108(d)(2)(i)).

    Insert-only but for ``superseded_by`` (a later decision) and the scanned card attached
    when its printed form is scanned.
    """

    __tablename__ = "new_duplicate"

    serial: Mapped[str] = mapped_column(SERIAL, primary_key=True)  # "<base>-R<n>"
    base_serial: Mapped[str] = mapped_column(SERIAL, index=True)
    revision: Mapped[int] = mapped_column(Integer)
    style: Mapped[str] = mapped_column(ID)
    precinct: Mapped[str | None] = mapped_column(ID)
    contests: Mapped[list[Any]] = mapped_column(JSON)  # ContestReading dicts, every contest it carries
    decisions: Mapped[list[Any]] = mapped_column(JSON)  # decision ids it rests on
    auditors: Mapped[list[Any]] = mapped_column(JSON)
    original_cards: Mapped[list[Any]] = mapped_column(JSON)
    superseded_cards: Mapped[list[Any]] = mapped_column(JSON)  # the duplicate it replaces
    image_path: Mapped[str | None] = mapped_column(Text)  # the rendered card (PNG)
    image_sha256: Mapped[str | None] = mapped_column(String(64))
    pdf_path: Mapped[str | None] = mapped_column(Text)
    scanned_card_id: Mapped[str | None] = mapped_column(CARD_ID)
    created_at: Mapped[datetime]
    superseded_by: Mapped[str | None] = mapped_column(SERIAL)
    rule_set: Mapped[str | None] = mapped_column(RULE_SET)
    printed_at: Mapped[datetime | None]  # the paper's life (§12-108(c)(2)): printed,
    printed_by: Mapped[str | None] = mapped_column(Text)
    scan_problem: Mapped[str | None] = mapped_column(Text)  # scanned back but not read as decided
    stored_at: Mapped[datetime | None]  # ... scanned back (scanned_card_id), stored with its original
    stored_by: Mapped[str | None] = mapped_column(Text)
    stored_where: Mapped[str | None] = mapped_column(Text)


class DuplicationLogRow(Base):
    """The canvass duplication log (contract section 5a), as imported."""

    __tablename__ = "duplication_log"
    __table_args__ = (CheckConstraint("ballot_type IN ('mail', 'provisional', 'other')", name="ballot_type"),)

    serial: Mapped[str] = mapped_column(SERIAL, primary_key=True)
    precinct: Mapped[str | None] = mapped_column(ID)
    reason: Mapped[str | None] = mapped_column(Text)
    ballot_type: Mapped[str | None] = mapped_column(CODE)  # None: not known
    eligible_contests: Mapped[list[Any] | None] = mapped_column(JSON)  # a provisional ballot's contests
    source: Mapped[str] = mapped_column(Text)
    imported_at: Mapped[datetime]


election_table = cast(Table, ElectionRow.__table__)
layout_reference_table = cast(Table, LayoutReferenceRow.__table__)
batch_table = cast(Table, BatchRow.__table__)
card_table = cast(Table, CardRow.__table__)
target_score_table = cast(Table, TargetScoreRow.__table__)
contest_reading_table = cast(Table, ContestReadingRow.__table__)
decision_table = cast(Table, DecisionRow.__table__)
skipped_file_table = cast(Table, SkippedFileRow.__table__)
event_table = cast(Table, EventRow.__table__)
identification_table = cast(Table, IdentificationRow.__table__)
pair_table = cast(Table, PairRow.__table__)
new_duplicate_table = cast(Table, NewDuplicateRow.__table__)
duplication_log_table = cast(Table, DuplicationLogRow.__table__)
from scanpipe.store import models_people as _models_people  # noqa: E402,F401  (board proposals, attestations)
from scanpipe.store import models_recount as _models_recount  # noqa: E402,F401  (the recount case's tables)
from scanpipe.store import models_review as _models_review  # noqa: E402,F401  (the review app's tables)
from scanpipe.store import models_statute as _models_statute  # noqa: E402,F401  (paper, board rulings, sign-offs)
from scanpipe.store import models_view as _models_view  # noqa: E402,F401  (write-in names beside decisions)
