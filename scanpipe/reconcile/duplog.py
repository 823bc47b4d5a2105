"""The canvass duplication log (contract section 5a): parse and check it. Pure but for reading the file.

UTF-8 CSV with the header ``serial,precinct,reason`` and the optional columns
``ballot_type`` (``mail``, ``provisional``, ``other``; empty = not known) and
``eligible_contests`` (contest ids, ``;``-separated, for a provisional ballot). Without a
header the columns are taken in that order. Every problem is collected with its line number
and the whole log is refused when there is one (nothing is imported): a serial that is not
``[A-Z0-9]{1,16}``, a serial twice, an unknown column, precinct, ballot type or contest id,
and eligible contests given for a ballot that is not provisional.
"""

from __future__ import annotations

import csv
import io
from dataclasses import dataclass
from pathlib import Path

from scanpipe.errors import ConfigError, SourceError
from scanpipe.reconcile.compare import BallotType, ComparisonScope
from scanpipe.types import Election

SERIAL_CHARS = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789")
COLUMNS = ("serial", "precinct", "reason", "ballot_type", "eligible_contests")
BALLOT_TYPES = {"mail": BallotType.MAIL, "provisional": BallotType.PROVISIONAL, "other": BallotType.OTHER, "": BallotType.UNKNOWN}


@dataclass(frozen=True, slots=True)
class LogEntry:
    """One serial of the canvass duplication log."""

    serial: str
    precinct: str | None
    reason: str | None
    ballot_type: BallotType = BallotType.UNKNOWN
    eligible_contests: tuple[str, ...] | None = None
    line: int = 0

    @property
    def scope(self) -> ComparisonScope:
        return ComparisonScope(self.ballot_type, self.eligible_contests)


def read_duplication_log(path: Path, election: Election) -> list[LogEntry]:
    """Read and check the log file; ConfigError naming every bad line (nothing is imported)."""
    try:
        text = path.read_text(encoding="utf-8-sig")
    except UnicodeDecodeError as e:
        raise ConfigError(f"{path}: not UTF-8 text ({e.reason} at byte {e.start})") from e
    except OSError as e:
        raise SourceError(f"{path}: cannot be read: {e.strerror or e}") from e
    return parse_duplication_log(text, str(path), election)


def parse_duplication_log(text: str, name: str, election: Election) -> list[LogEntry]:
    rows = list(csv.reader(io.StringIO(text)))
    problems: list[str] = []
    columns: tuple[str, ...] = COLUMNS
    first = next((n for n, row in enumerate(rows) if any(c.strip() for c in row)), None)
    if first is not None and rows[first][0].strip().lower() == "serial":
        columns = tuple(c.strip().lower() for c in rows[first])
        unknown = [c for c in columns if c not in COLUMNS]
        if unknown:
            problems.append(f"line {first + 1}: unknown column(s) {', '.join(repr(c) for c in unknown)}; the columns are {', '.join(COLUMNS)}")
        rows[first] = []
    entries: list[LogEntry] = []
    seen: dict[str, int] = {}
    for n, row in enumerate(rows, start=1):
        if not any(c.strip() for c in row):
            continue
        entry, said = _entry(dict(zip(columns, (c.strip() for c in row), strict=False)), n, len(row) > len(columns), election)
        problems += [f"line {n}: {p}" for p in said]
        if entry is None:
            continue
        if entry.serial in seen:
            problems.append(f"line {n}: serial {entry.serial} is also on line {seen[entry.serial]}")
            continue
        seen[entry.serial] = n
        entries.append(entry)
    if problems:
        raise ConfigError(f"{name}: the duplication log was not imported (nothing was):\n  " + "\n  ".join(problems))
    return entries


def _entry(row: dict[str, str], line: int, extra: bool, election: Election) -> tuple[LogEntry | None, list[str]]:
    said: list[str] = []
    if extra:
        said.append(f"more fields than the {len(COLUMNS)} columns ({', '.join(COLUMNS)})")
    serial = row.get("serial", "").upper()
    if not serial or not set(serial) <= SERIAL_CHARS or len(serial) > 16:
        said.append(f"'{row.get('serial', '')}' is not a serial ([A-Z0-9]{{1,16}})")
    precinct = row.get("precinct") or None
    if precinct is not None and not election.has_precinct(precinct):
        said.append(f"precinct '{precinct}' is not a precinct of election '{election.id}'")
    kind = row.get("ballot_type", "").lower()
    if kind not in BALLOT_TYPES:
        said.append(f"ballot type '{row.get('ballot_type')}' is not one of mail, provisional, other (or empty: not known)")
    eligible = _eligible(row.get("eligible_contests", ""), election, said)
    ballot_type = BALLOT_TYPES.get(kind, BallotType.UNKNOWN)
    if eligible is not None and ballot_type is not BallotType.PROVISIONAL:
        said.append(f"eligible contests are for a provisional ballot; this one is '{kind or 'not known'}'")
    if said:
        return None, said
    return LogEntry(serial, precinct, row.get("reason") or None, ballot_type, eligible, line), said


def _eligible(text: str, election: Election, said: list[str]) -> tuple[str, ...] | None:
    if not text:
        return None
    ids = tuple(dict.fromkeys(c.strip() for c in text.split(";") if c.strip()))
    known = {c.id for c in election.contests}
    unknown = [c for c in ids if c not in known]
    if unknown:
        said.append(f"contest id(s) {', '.join(repr(c) for c in unknown)} not in election '{election.id}'")
    return ids
