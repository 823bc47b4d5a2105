"""The recount tables' repository: certified results, cases, petitions, reports, certifications.

Every method is one transaction and appends what it writes to the audit log in that same
transaction. Only this module (and the migrations) touch the tables of
:mod:`scanpipe.store.models_recount`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy import select, update

from scanpipe.errors import ConfigError
from scanpipe.store.models import utcnow
from scanpipe.store.models_recount import (
    certification_table,
    certified_count_table,
    certified_import_table,
    petition_table,
    recount_case_table,
    recount_report_table,
)
from scanpipe.store.repository import Store
from scanpipe.store.transaction import insert_event


@dataclass(frozen=True, slots=True)
class CertifiedImport:
    id: int
    election_id: str
    election_sha256: str
    source: str
    sha256: str
    format: str
    status: str | None
    rows: int
    imported_at: datetime


@dataclass(frozen=True, slots=True)
class CaseRecord:
    id: int
    election_id: str
    jurisdiction: str
    rule_set: str
    contest: str
    petitioner: str
    petitioner_option: str
    precincts: tuple[str, ...]
    certified_import: int
    state: str  # open | terminated | certified
    opened_at: datetime
    terminated_at: datetime | None
    terminated_by: str | None
    termination_reason: str | None
    finished_precincts: tuple[str, ...] | None
    certified_at: datetime | None

    @property
    def active(self) -> bool:
        """Not yet certified: the queue and the review follow its scope."""
        return self.state != "certified"


@dataclass(frozen=True, slots=True)
class PetitionRecord:
    id: int
    case_id: int
    kind: str
    petitioner: str
    petitioner_option: str
    precincts: tuple[str, ...]
    filed_on: str
    certified_on: str
    assessment: dict[str, Any]
    at: datetime


@dataclass(frozen=True, slots=True)
class ReportRecord:
    id: int
    case_id: int
    generated_at: datetime
    data_sha256: str
    files: dict[str, str]
    folder: str
    complete: bool


@dataclass(frozen=True, slots=True)
class CertificationRecord:
    id: int
    case_id: int
    report_id: int
    members: tuple[str, ...]
    certified_at: datetime
    data_sha256: str
    report_sha256: str
    files: dict[str, str]


class RecountStore:
    """The recount tables of one :class:`~scanpipe.store.repository.Store`."""

    def __init__(self, store: Store) -> None:
        self.store = store

    # ----------------------------------------------------------------------------------
    # certified results

    def import_certified(self, counts: Mapping[tuple[str, str, str], int], *, election_id: str, election_sha256: str, source: str,
                         sha256: str, format: str, status: str | None, actor: str | None = None) -> CertifiedImport:
        now = utcnow()
        t = certified_import_table
        with self.store._write() as conn:
            row = conn.execute(t.insert().returning(*t.c), {
                "election_id": election_id, "election_sha256": election_sha256, "source": source, "sha256": sha256, "format": format,
                "status": status, "rows": len(counts), "imported_at": now}).mappings().one()
            if counts:
                conn.execute(certified_count_table.insert(), [
                    {"import_id": row["id"], "precinct": p, "contest": c, "option": o, "votes": n} for (p, c, o), n in sorted(counts.items())])
            insert_event(conn, "recount_certified_imported", {"import": row["id"], "source": source, "sha256": sha256, "format": format,
                                                               "rows": len(counts)}, actor, now)
        return _import(row)

    def latest_import(self, election_id: str) -> CertifiedImport | None:
        t = certified_import_table
        with self.store._read() as conn:
            row = conn.execute(select(t).where(t.c.election_id == election_id).order_by(t.c.id.desc()).limit(1)).mappings().first()
        return _import(row) if row is not None else None

    def get_import(self, import_id: int) -> CertifiedImport:
        t = certified_import_table
        with self.store._read() as conn:
            row = conn.execute(select(t).where(t.c.id == import_id)).mappings().one()
        return _import(row)

    def certified_counts(self, import_id: int) -> dict[tuple[str, str, str], int]:
        t = certified_count_table
        with self.store._read() as conn:
            rows = conn.execute(select(t.c.precinct, t.c.contest, t.c.option, t.c.votes).where(t.c.import_id == import_id)).all()
        return {(r.precinct, r.contest, r.option): r.votes for r in rows}

    # ----------------------------------------------------------------------------------
    # cases and petitions

    def cases(self, election_id: str | None = None) -> list[CaseRecord]:
        t = recount_case_table
        q = select(t).order_by(t.c.id)
        if election_id is not None:
            q = q.where(t.c.election_id == election_id)
        with self.store._read() as conn:
            return [_case(r) for r in conn.execute(q).mappings()]

    def current_case(self, election_id: str) -> CaseRecord | None:
        """The newest case of the election (open, terminated or certified)."""
        found = self.cases(election_id)
        return found[-1] if found else None

    def get_case(self, case_id: int) -> CaseRecord:
        t = recount_case_table
        with self.store._read() as conn:
            row = conn.execute(select(t).where(t.c.id == case_id)).mappings().first()
        if row is None:
            raise ConfigError(f"there is no recount case {case_id}")
        return _case(row)

    def open_case(self, *, election_id: str, jurisdiction: str, rule_set: str, contest: str, petitioner: str, petitioner_option: str,
                  precincts: Sequence[str], certified_import: int, filed_on: str, certified_on: str, assessment: dict[str, Any],
                  actor: str | None = None) -> CaseRecord:
        """Open a case with its petition, unless a case of this election is still open."""
        now = utcnow()
        t = recount_case_table
        with self.store._write() as conn:
            busy = conn.execute(select(t.c.id).where(t.c.election_id == election_id, t.c.state != "certified")).first()
            if busy is not None:
                raise ConfigError(f"recount case {busy.id} is still open; it must be certified before another case opens")
            row = conn.execute(t.insert().returning(*t.c), {
                "election_id": election_id, "jurisdiction": jurisdiction, "rule_set": rule_set, "contest": contest, "petitioner": petitioner,
                "petitioner_option": petitioner_option, "precincts": list(precincts), "certified_import": certified_import, "state": "open",
                "opened_at": now}).mappings().one()
            assessment = {**assessment, "case": row["id"]}
            conn.execute(petition_table.insert(), {
                "case_id": row["id"], "kind": "petition", "petitioner": petitioner, "petitioner_option": petitioner_option,
                "precincts": list(precincts), "filed_on": filed_on, "certified_on": certified_on, "assessment": assessment, "at": now})
            insert_event(conn, "recount_opened", {"case": row["id"], "contest": contest, "petitioner": petitioner,
                                                  "precincts": list(precincts), "rule_set": rule_set}, actor, now)
        return _case(row)

    def add_counterpetition(self, case_id: int, *, petitioner: str, petitioner_option: str, precincts: Sequence[str], filed_on: str,
                            certified_on: str, assessment: dict[str, Any], actor: str | None = None) -> CaseRecord:
        """Add a counterpetition's precincts to an open case's scope."""
        now = utcnow()
        t = recount_case_table
        with self.store._write() as conn:
            row = conn.execute(select(t).where(t.c.id == case_id)).mappings().one()
            if row["state"] != "open":
                raise ConfigError(f"recount case {case_id} is {row['state']}: a counterpetition joins an open case")
            scope = list(dict.fromkeys([*row["precincts"], *precincts]))
            conn.execute(update(t).where(t.c.id == case_id).values(precincts=scope))
            conn.execute(petition_table.insert(), {
                "case_id": case_id, "kind": "counterpetition", "petitioner": petitioner, "petitioner_option": petitioner_option,
                "precincts": list(precincts), "filed_on": filed_on, "certified_on": certified_on, "assessment": assessment, "at": now})
            insert_event(conn, "recount_counterpetition", {"case": case_id, "petitioner": petitioner, "precincts": list(precincts)}, actor, now)
            row = conn.execute(select(t).where(t.c.id == case_id)).mappings().one()
        return _case(row)

    def petitions(self, case_id: int) -> list[PetitionRecord]:
        t = petition_table
        with self.store._read() as conn:
            rows = conn.execute(select(t).where(t.c.case_id == case_id).order_by(t.c.id)).mappings().all()
        return [PetitionRecord(r["id"], r["case_id"], r["kind"], r["petitioner"], r["petitioner_option"], tuple(r["precincts"]),
                               r["filed_on"], r["certified_on"], dict(r["assessment"]), r["at"]) for r in rows]

    def terminate(self, case_id: int, *, by: str, reason: str, finished: Sequence[str], actor: str | None = None) -> CaseRecord:
        now = utcnow()
        t = recount_case_table
        with self.store._write() as conn:
            row = conn.execute(select(t).where(t.c.id == case_id)).mappings().one()
            if row["state"] != "open":
                raise ConfigError(f"recount case {case_id} is already {row['state']}")
            conn.execute(update(t).where(t.c.id == case_id).values(state="terminated", terminated_at=now, terminated_by=by,
                                                                    termination_reason=reason, finished_precincts=list(finished)))
            insert_event(conn, "recount_terminated", {"case": case_id, "requested_by": by, "reason": reason, "finished": list(finished)},
                         actor, now)
            row = conn.execute(select(t).where(t.c.id == case_id)).mappings().one()
        return _case(row)

    # ----------------------------------------------------------------------------------
    # reports and the board's certification

    def record_report(self, case_id: int, *, data_sha256: str, files: Mapping[str, str], folder: str, complete: bool,
                      generated_at: datetime, actor: str | None = None) -> ReportRecord:
        t = recount_report_table
        with self.store._write() as conn:
            row = conn.execute(t.insert().returning(*t.c), {"case_id": case_id, "generated_at": generated_at, "data_sha256": data_sha256,
                                                            "files": dict(files), "folder": folder, "complete": int(complete)}).mappings().one()
            insert_event(conn, "recount_report", {"case": case_id, "report": row["id"], "data_sha256": data_sha256, "files": dict(files),
                                                  "folder": folder, "complete": complete}, actor, utcnow())
        return _report(row)

    def reports(self, case_id: int) -> list[ReportRecord]:
        t = recount_report_table
        with self.store._read() as conn:
            return [_report(r) for r in conn.execute(select(t).where(t.c.case_id == case_id).order_by(t.c.id)).mappings()]

    def certify(self, case_id: int, report_id: int, *, members: Sequence[str], data_sha256: str, report_sha256: str,
                files: Mapping[str, str], frozen: Mapping[str, bytes], actor: str | None = None) -> CertificationRecord:
        """The board signs off: the case is certified and the report's files are kept as they were."""
        now = utcnow()
        c, t = certification_table, recount_case_table
        with self.store._write() as conn:
            state = conn.execute(select(t.c.state).where(t.c.id == case_id)).scalar_one()
            if state == "certified":
                raise ConfigError(f"recount case {case_id} is already certified")
            row = conn.execute(c.insert().returning(c.c.id, c.c.case_id, c.c.report_id, c.c.members, c.c.certified_at, c.c.data_sha256,
                                                    c.c.report_sha256, c.c.files), {
                "case_id": case_id, "report_id": report_id, "members": list(members), "certified_at": now, "data_sha256": data_sha256,
                "report_sha256": report_sha256, "files": dict(files), "report_json": frozen["report.json"].decode("utf-8"),
                "report_html": frozen["report.html"].decode("utf-8"), "report_pdf": frozen["report.pdf"],
                "results_json": frozen["results.json"].decode("utf-8")}).mappings().one()
            conn.execute(update(t).where(t.c.id == case_id).values(state="certified", certified_at=now))
            insert_event(conn, "recount_certified", {"case": case_id, "report": report_id, "members": list(members),
                                                     "data_sha256": data_sha256, "report_sha256": report_sha256}, actor, now)
        return _certification(row)

    def certification(self, case_id: int) -> CertificationRecord | None:
        c = certification_table
        cols = (c.c.id, c.c.case_id, c.c.report_id, c.c.members, c.c.certified_at, c.c.data_sha256, c.c.report_sha256, c.c.files)
        with self.store._read() as conn:
            row = conn.execute(select(*cols).where(c.c.case_id == case_id).order_by(c.c.id.desc()).limit(1)).mappings().first()
        return _certification(row) if row is not None else None

    def certified_file(self, case_id: int, name: str) -> bytes | None:
        """One file of the certified (frozen) report: report.json, report.html, report.pdf, results.json."""
        c = certification_table
        column = {"report.json": c.c.report_json, "report.html": c.c.report_html, "report.pdf": c.c.report_pdf,
                  "results.json": c.c.results_json}[name]
        with self.store._read() as conn:
            value = conn.execute(select(column).where(c.c.case_id == case_id).order_by(c.c.id.desc()).limit(1)).scalar()
        if value is None:
            return None
        return bytes(value) if isinstance(value, (bytes, memoryview)) else str(value).encode("utf-8")


def _import(r: Any) -> CertifiedImport:
    return CertifiedImport(r["id"], r["election_id"], r["election_sha256"], r["source"], r["sha256"], r["format"], r["status"], r["rows"],
                           r["imported_at"])


def _case(r: Any) -> CaseRecord:
    finished = r["finished_precincts"]
    return CaseRecord(r["id"], r["election_id"], r["jurisdiction"], r["rule_set"], r["contest"], r["petitioner"], r["petitioner_option"],
                      tuple(r["precincts"]), r["certified_import"], r["state"], r["opened_at"], r["terminated_at"], r["terminated_by"],
                      r["termination_reason"], tuple(finished) if finished is not None else None, r["certified_at"])


def _report(r: Any) -> ReportRecord:
    return ReportRecord(r["id"], r["case_id"], r["generated_at"], r["data_sha256"], dict(r["files"]), r["folder"], bool(r["complete"]))


def _certification(r: Any) -> CertificationRecord:
    return CertificationRecord(r["id"], r["case_id"], r["report_id"], tuple(r["members"]), r["certified_at"], r["data_sha256"],
                               r["report_sha256"], dict(r["files"]))
