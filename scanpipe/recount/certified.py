"""The certified canvass results, read and checked against the election (pure but for reading the file).

Two forms (contract section 8): a CSV with header ``precinct,contest,option,votes`` (the shape
of ``tally --out``; the ``#overvotes`` / ``#undervotes`` rows optional, ``#pending`` rows only
with 0; an optional ``election`` column, which must then name the loaded election), or a NIST
SP 1500-100 v2 JSON election report whose ``@id``s are the election's ids (precinct
``GpUnit``, ``Contest``, ``ContestSelection``) and whose election names the loaded one (an
``ExternalIdentifier`` of the election id, or the same name). Every problem is collected
(each row or object named) and the whole file is refused: nothing is imported.
"""

from __future__ import annotations

import csv
import hashlib
import io
import json
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from scanpipe.errors import ConfigError, SourceError
from scanpipe.recount.figures import OVER, UNDER
from scanpipe.tally import contests_by_precinct
from scanpipe.types import Election

PENDING = "#pending"


class CertifiedResultsError(ConfigError):
    """The certified results are refused as a whole; ``problems`` names each row."""

    def __init__(self, file: str, problems: list[str]) -> None:
        self.problems = tuple(problems)
        shown = "\n".join(f"  {p}" for p in problems[:200])
        more = f"\n  ... and {len(problems) - 200} more" if len(problems) > 200 else ""
        super().__init__(f"{file}: certified results refused, nothing imported ({len(problems)} problem(s)):\n{shown}{more}")


@dataclass(frozen=True, slots=True)
class CertifiedResults:
    """Checked certified figures: ``{(precinct, contest, option): votes}``."""

    counts: dict[tuple[str, str, str], int]
    format: str  # "csv" | "nist-err-v2"
    source: str
    sha256: str
    status: str | None = None  # the NIST report's Status

    @property
    def contests(self) -> set[str]:
        return {c for _, c, _ in self.counts}


def read_certified(path: Path, election: Election) -> CertifiedResults:
    """Read and check a certified results file; raise :class:`CertifiedResultsError` with every problem."""
    try:
        data = path.read_bytes()
    except OSError as e:
        raise SourceError(f"{path}: cannot be read: {e.strerror or e}") from e
    digest = hashlib.sha256(data).hexdigest()
    text = data.decode("utf-8-sig", errors="replace")
    if text.lstrip().startswith("{"):
        rows, status, problems = _err_rows(text, election, str(path))
        fmt = "nist-err-v2"
    else:
        rows, problems = _csv_rows(text, election, str(path))
        status, fmt = None, "csv"
    counts = check_rows(rows, election, problems)
    if problems:
        raise CertifiedResultsError(str(path), problems)
    return CertifiedResults(counts, fmt, str(path), digest, status)


# --------------------------------------------------------------------------------------
# rows: (where, precinct, contest, option, votes as given)


Row = tuple[str, str, str, str, Any]


def _csv_rows(text: str, election: Election, file: str) -> tuple[list[Row], list[str]]:
    reader = csv.reader(io.StringIO(text))
    header = [h.strip().lower() for h in next(reader, [])]
    need = ["precinct", "contest", "option", "votes"]
    if any(h not in header for h in need) or any(h not in [*need, "election"] for h in header):
        return [], [f"line 1: the header must be precinct,contest,option,votes (and optionally election), not {','.join(header) or 'empty'}"]
    at = {h: header.index(h) for h in header}
    rows: list[Row] = []
    problems: list[str] = []
    for n, fields in enumerate(reader, start=2):
        if not any(f.strip() for f in fields):
            continue
        if len(fields) != len(header):
            problems.append(f"line {n}: {len(fields)} field(s), the header has {len(header)}")
            continue
        get = {h: fields[i].strip() for h, i in at.items()}
        if "election" in get and get["election"] != election.id:
            problems.append(f"line {n}: election '{get['election']}' is another election (loaded: '{election.id}', {election.name})")
            continue
        rows.append((f"line {n}", get["precinct"], get["contest"], get["option"], get["votes"]))
    return rows, problems


def check_rows(rows: list[Row], election: Election, problems: list[str]) -> dict[tuple[str, str, str], int]:
    """Validate ids, votes and duplicates; every (precinct, contest) given must list every option."""
    on_ballot = {p: set(cs) for p, cs in contests_by_precinct(election).items()}
    counts: dict[tuple[str, str, str], int] = {}
    seen: dict[tuple[str, str, str], str] = {}
    for where, precinct, contest, option, raw in rows:
        problem = _row_problem(election, on_ballot, precinct, contest, option, raw)
        if problem is None and (precinct, contest, option) in seen:
            problem = f"duplicate of {seen[(precinct, contest, option)]} ({precinct}, {contest}, {option})"
        if problem is not None:
            problems.append(f"{where}: {problem}")
            continue
        seen[(precinct, contest, option)] = where
        if option != PENDING:
            counts[(precinct, contest, option)] = int(raw)
    given = {(p, c) for p, c, _ in counts}
    for p, c in sorted(given):
        missing = [o.id for o in election.contest(c).options if (p, c, o.id) not in counts]
        if missing:
            problems.append(f"precinct {p}, contest {c}: no row for option(s) {', '.join(missing)}")
    return counts


def _row_problem(election: Election, on_ballot: dict[str, set[str]], precinct: str, contest: str, option: str, raw: Any) -> str | None:
    if precinct == "#unassigned":
        return None if _int(raw) == 0 else "cards of no known precinct: certified results cannot have any"
    if not election.has_precinct(precinct):
        return f"precinct '{precinct}' is not a precinct of election '{election.id}'"
    if not any(c.id == contest for c in election.contests):
        return f"contest '{contest}' is not a contest of election '{election.id}'"
    if contest not in on_ballot.get(precinct, set()):
        return f"contest '{contest}' was not on the ballot in precinct '{precinct}'"
    if option not in {o.id for o in election.contest(contest).options} | {OVER, UNDER, PENDING}:
        return f"option '{option}' is not an option of contest '{contest}'"
    value = _int(raw)
    if value is None:
        return f"votes '{raw}' is not a whole number"
    if value < 0:
        return f"votes {value} is negative"
    if option == PENDING and value != 0:
        return f"{value} card(s) pending: certified results have nothing pending"
    return None


def _int(raw: Any) -> int | None:
    if isinstance(raw, bool):
        return None
    if isinstance(raw, int):
        return raw
    if isinstance(raw, float):
        return int(raw) if raw.is_integer() else None
    text = str(raw).strip()
    if text.isascii() and text.lstrip("-").isdigit():
        return int(text)
    return None


# --------------------------------------------------------------------------------------
# NIST SP 1500-100 v2


def _err_rows(text: str, election: Election, file: str) -> tuple[list[Row], str | None, list[str]]:
    try:
        doc = json.loads(text)
    except json.JSONDecodeError as e:
        return [], None, [f"not JSON: {e}"]
    problems = _schema_problems(doc)
    if problems:
        return [], None, problems
    elections = doc.get("Election", [])
    if not elections:
        return [], doc.get("Status"), ["$.Election: the report holds no election"]
    if not any(_is_this_election(e, election) for e in elections):
        names = ", ".join(_text(e.get("Name")) for e in elections)
        return [], doc.get("Status"), [f"$.Election: results for another election ({names}); loaded: '{election.id}', {election.name}"]
    if doc.get("Status") != "certified":
        problems.append(f"$.Status: '{doc.get('Status')}' results are not the certified results (Status must be 'certified')")
    rows: list[Row] = []
    for ei, found in enumerate(elections):
        if not _is_this_election(found, election):
            continue
        for ci, contest in enumerate(found.get("Contest", [])):
            rows.extend(_contest_rows(f"$.Election[{ei}].Contest[{ci}]", contest))
    return rows, doc.get("Status"), problems


def _contest_rows(where: str, contest: dict[str, Any]) -> Iterator[Row]:
    cid = contest["@id"]
    for si, sel in enumerate(contest.get("ContestSelection", [])):
        per_unit: dict[str, list[tuple[str, Any]]] = {}
        for vc in sel.get("VoteCounts", []):
            per_unit.setdefault(vc["GpUnitId"], []).append((vc["Type"], vc["Count"]))
        for unit, counts in per_unit.items():
            totals = [n for t, n in counts if t == "total"]
            value: Any = totals[0] if len(totals) == 1 else (sum(n for _, n in counts) if not totals else "several 'total' counts")
            yield (f"{where}.ContestSelection[{si}] ({sel['@id']}, {unit})", unit, cid, sel["@id"], value)
    for oi, other in enumerate(contest.get("OtherCounts", [])):
        for key, option in (("Overvotes", OVER), ("Undervotes", UNDER)):
            if key in other:
                yield (f"{where}.OtherCounts[{oi}].{key} ({other['GpUnitId']})", other["GpUnitId"], cid, option, other[key])


def _is_this_election(e: dict[str, Any], election: Election) -> bool:
    ids = {x.get("Value") for x in e.get("ExternalIdentifier", [])}
    return election.id in ids or _text(e.get("Name")) == election.name


def _text(value: Any) -> str:
    if isinstance(value, dict):
        return " / ".join(t.get("Content", "") for t in value.get("Text", []))
    return str(value or "")


def _schema_problems(doc: Any) -> list[str]:
    from scanpipe.recount.results_err import err_validator

    errors = sorted(err_validator().iter_errors(doc), key=lambda e: list(e.absolute_path))
    return [f"$.{'.'.join(str(p) for p in e.absolute_path)}: {e.message[:200]} (NIST SP 1500-100 v2 schema)" for e in errors[:50]]
