"""Tables of the recount case: certified results, cases, petitions, reports, certifications.

Revision ``0007`` creates them; a test compares these models with the migrated schema.
Written once and appended to, like the rest of the store: a case's row changes only when it
is terminated or certified; certified results are kept per import (the newest is current).
"""

from __future__ import annotations

from datetime import datetime
from typing import Any, cast

from sqlalchemy import (
    CheckConstraint,
    ForeignKey,
    Integer,
    LargeBinary,
    String,
    Table,
    Text,
)
from sqlalchemy.orm import Mapped, mapped_column

from scanpipe.store.models import CODE, ID, Base

DAY = String(10)  # an ISO date, YYYY-MM-DD


class CertifiedImportRow(Base):
    """One import of the certified canvass results (`recount certified FILE`)."""

    __tablename__ = "recount_certified_import"
    __table_args__ = ({"sqlite_autoincrement": True},)

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    election_id: Mapped[str] = mapped_column(ID)
    election_sha256: Mapped[str] = mapped_column(String(64))  # the definition the ids were checked against
    source: Mapped[str] = mapped_column(Text)
    sha256: Mapped[str] = mapped_column(String(64))
    format: Mapped[str] = mapped_column(CODE)
    status: Mapped[str | None] = mapped_column(CODE)
    rows: Mapped[int] = mapped_column(Integer)
    imported_at: Mapped[datetime]


class CertifiedCountRow(Base):
    __tablename__ = "recount_certified_count"
    __table_args__ = ({"sqlite_with_rowid": False},)

    import_id: Mapped[int] = mapped_column(ForeignKey("recount_certified_import.id", ondelete="CASCADE"), primary_key=True)
    precinct: Mapped[str] = mapped_column(ID, primary_key=True)
    contest: Mapped[str] = mapped_column(ID, primary_key=True)
    option: Mapped[str] = mapped_column(ID, primary_key=True)
    votes: Mapped[int] = mapped_column(Integer)


class RecountCaseRow(Base):
    """A recount: one contest, its scope, the rule set it runs under, where it stands."""

    __tablename__ = "recount_case"
    __table_args__ = (CheckConstraint("state IN ('open', 'terminated', 'certified')", name="state"), {"sqlite_autoincrement": True})

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    election_id: Mapped[str] = mapped_column(ID)
    jurisdiction: Mapped[str] = mapped_column(String(16))
    rule_set: Mapped[str] = mapped_column(String(32))
    contest: Mapped[str] = mapped_column(ID)
    petitioner: Mapped[str] = mapped_column(Text)
    petitioner_option: Mapped[str] = mapped_column(ID)
    precincts: Mapped[list[Any]] = mapped_column()  # the scope: petition and counterpetitions
    certified_import: Mapped[int] = mapped_column(ForeignKey("recount_certified_import.id"))
    state: Mapped[str] = mapped_column(CODE)
    opened_at: Mapped[datetime]
    terminated_at: Mapped[datetime | None]
    terminated_by: Mapped[str | None] = mapped_column(Text)
    termination_reason: Mapped[str | None] = mapped_column(Text)
    finished_precincts: Mapped[list[Any] | None] = mapped_column()  # at termination: recounted to the end
    certified_at: Mapped[datetime | None]


class PetitionRow(Base):
    """A petition or counterpetition accepted into a case, with its whole assessment."""

    __tablename__ = "recount_petition"
    __table_args__ = (CheckConstraint("kind IN ('petition', 'counterpetition')", name="kind"), {"sqlite_autoincrement": True})

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    case_id: Mapped[int] = mapped_column(ForeignKey("recount_case.id"), index=True)
    kind: Mapped[str] = mapped_column(CODE)
    petitioner: Mapped[str] = mapped_column(Text)
    petitioner_option: Mapped[str] = mapped_column(ID)
    precincts: Mapped[list[Any]] = mapped_column()
    filed_on: Mapped[str] = mapped_column(DAY)
    certified_on: Mapped[str] = mapped_column(DAY)
    assessment: Mapped[dict[str, Any]] = mapped_column()  # the petition's JSON output, arithmetic included
    at: Mapped[datetime]


class RecountReportRow(Base):
    """A report written by `recount report`: the hashes of its files and of its data."""

    __tablename__ = "recount_report"
    __table_args__ = ({"sqlite_autoincrement": True},)

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    case_id: Mapped[int] = mapped_column(ForeignKey("recount_case.id"), index=True)
    generated_at: Mapped[datetime]
    data_sha256: Mapped[str] = mapped_column(String(64))
    files: Mapped[dict[str, Any]] = mapped_column()  # file name -> SHA-256
    folder: Mapped[str] = mapped_column(Text)
    complete: Mapped[int] = mapped_column(Integer)  # 1 when every card in scope was counted


class CertificationRow(Base):
    """The board's sign-off: members, the report frozen (its files' bytes and hashes)."""

    __tablename__ = "recount_certification"
    __table_args__ = ({"sqlite_autoincrement": True},)

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    case_id: Mapped[int] = mapped_column(ForeignKey("recount_case.id"), index=True)
    report_id: Mapped[int] = mapped_column(ForeignKey("recount_report.id"))
    members: Mapped[list[Any]] = mapped_column()
    certified_at: Mapped[datetime]
    data_sha256: Mapped[str] = mapped_column(String(64))
    report_sha256: Mapped[str] = mapped_column(String(64))  # of report.json
    files: Mapped[dict[str, Any]] = mapped_column()  # file name -> SHA-256
    report_json: Mapped[str] = mapped_column(Text)
    report_html: Mapped[str] = mapped_column(Text)
    report_pdf: Mapped[bytes] = mapped_column(LargeBinary)
    results_json: Mapped[str] = mapped_column(Text)


certified_import_table = cast(Table, CertifiedImportRow.__table__)
certified_count_table = cast(Table, CertifiedCountRow.__table__)
recount_case_table = cast(Table, RecountCaseRow.__table__)
petition_table = cast(Table, PetitionRow.__table__)
recount_report_table = cast(Table, RecountReportRow.__table__)
certification_table = cast(Table, CertificationRow.__table__)
