"""Tables of §12-108 as the statute reads: the new duplicate's paper, the board's rulings on
orphans and conflicts, and the board's sign-off of matched pairs.

Insert-only: a later ruling on a serial replaces an earlier one by being newer (the earlier
stays as evidence); a sign-off is never edited. Revision ``0006`` creates them (``0010`` the
board's rulings on single pages); a test compares these models with the migrated schema.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any, cast

from sqlalchemy import CheckConstraint, ForeignKey, Integer, LargeBinary, String, Table, Text
from sqlalchemy.orm import Mapped, mapped_column

from scanpipe.store.models import CARD_ID, CODE, RULE_SET, SERIAL, Base


class NewDuplicatePageRow(Base):
    """One rendered page of a new duplicate (PNG), as printed: the paper exists in the
    database from the moment the new duplicate is made, whichever way it was decided."""

    __tablename__ = "new_duplicate_page"

    serial: Mapped[str] = mapped_column(ForeignKey("new_duplicate.serial", ondelete="CASCADE"), primary_key=True)
    page: Mapped[int] = mapped_column(Integer, primary_key=True)
    png: Mapped[bytes] = mapped_column(LargeBinary)
    sha256: Mapped[str] = mapped_column(String(64))
    dpi: Mapped[int] = mapped_column(Integer)
    rendered_at: Mapped[datetime]


class BoardRulingRow(Base):
    """The board's answer to a missing original or duplicate, or a serial used twice
    (§12-108(c)): whether and how the duplicate counts, with each member's vote."""

    __tablename__ = "board_ruling"
    __table_args__ = (
        CheckConstraint("matter IN ('orphan_duplicate', 'orphan_original', 'conflict')", name="matter"),
        CheckConstraint("ruling IN ('counts_as_is', 'new_duplicate', 'nothing')", name="ruling"),
        {"sqlite_autoincrement": True},
    )

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    serial: Mapped[str] = mapped_column(SERIAL, index=True)
    matter: Mapped[str] = mapped_column(CODE)
    ruling: Mapped[str] = mapped_column(CODE)
    card_id: Mapped[str | None] = mapped_column(CARD_ID)  # the duplicate that counts as is / the new duplicate's basis
    cards: Mapped[list[Any]] = mapped_column()  # every card of the serial the board saw
    members: Mapped[dict[str, Any]] = mapped_column()  # member -> for | against | abstain
    note: Mapped[str | None] = mapped_column(Text)
    actor: Mapped[str] = mapped_column(Text)
    rule_set: Mapped[str] = mapped_column(RULE_SET)
    created_at: Mapped[datetime]


class CardRulingRow(Base):
    """The board's ruling that a stored page is not a ballot card (a sheet fed by mistake, a
    batch header, a card of another election): it counts nothing and awaits no one, its image
    and reading kept. Only a page read as no card of the election may be set aside so."""

    __tablename__ = "card_ruling"
    __table_args__ = (
        CheckConstraint("ruling IN ('not_a_ballot')", name="ruling"),
        {"sqlite_autoincrement": True},
    )

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    card_id: Mapped[str] = mapped_column(CARD_ID, index=True)
    ruling: Mapped[str] = mapped_column(CODE)
    why: Mapped[str] = mapped_column(Text)  # what the board saw on the paper
    members: Mapped[dict[str, Any]] = mapped_column()  # member -> for | against | abstain
    note: Mapped[str | None] = mapped_column(Text)
    actor: Mapped[str] = mapped_column(Text)
    rule_set: Mapped[str] = mapped_column(RULE_SET)
    created_at: Mapped[datetime]


class PairSignoffRow(Base):
    """The board's examination of a batch of matched pairs (§12-108(d)(1)): one decision."""

    __tablename__ = "pair_signoff"
    __table_args__ = ({"sqlite_autoincrement": True},)

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    members: Mapped[dict[str, Any]] = mapped_column()  # member -> for | against | abstain
    note: Mapped[str | None] = mapped_column(Text)
    actor: Mapped[str] = mapped_column(Text)
    rule_set: Mapped[str] = mapped_column(RULE_SET)
    created_at: Mapped[datetime]


class PairSignoffSerialRow(Base):
    """A serial of a sign-off and the cards the board saw (a later card reopens it)."""

    __tablename__ = "pair_signoff_serial"

    signoff_id: Mapped[int] = mapped_column(ForeignKey("pair_signoff.id", ondelete="CASCADE"), primary_key=True)
    serial: Mapped[str] = mapped_column(SERIAL, primary_key=True, index=True)
    cards: Mapped[list[Any]] = mapped_column()


new_duplicate_page_table = cast(Table, NewDuplicatePageRow.__table__)
board_ruling_table = cast(Table, BoardRulingRow.__table__)
card_ruling_table = cast(Table, CardRulingRow.__table__)
pair_signoff_table = cast(Table, PairSignoffRow.__table__)
pair_signoff_serial_table = cast(Table, PairSignoffSerialRow.__table__)
