"""Tables of what people record beside a decision: the write-in name an auditor read.

Revision ``0009`` creates them; a test compares these models with the migrated schema.
"""

from __future__ import annotations

from typing import cast

from sqlalchemy import ForeignKey, Table, Text
from sqlalchemy.orm import Mapped, mapped_column

from scanpipe.store.models import ID, Base


class WriteInNameRow(Base):
    """The name written in a write-in space, as the auditor read it, for one option of one
    decision (a decision that counts a write-in option). Written with the decision."""

    __tablename__ = "decision_write_in"

    decision_id: Mapped[int] = mapped_column(ForeignKey("decision.id"), primary_key=True)
    option: Mapped[str] = mapped_column(ID, primary_key=True)
    name: Mapped[str] = mapped_column(Text)


write_in_table = cast(Table, WriteInNameRow.__table__)
