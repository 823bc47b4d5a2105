"""NIST SP 1500-103 cast vote record export (contract section 6), as pure functions.

One ``CVR.CVR`` per :class:`CvrEntry` (a stored card, or a new duplicate). The ids of
``election.json`` are the ``@id`` of the exported Contest, ContestSelection and GpUnit
objects, so ``ContestId``, ``ContestSelectionId``, ``BallotStyleId`` and
``BallotStyleUnitId`` equal them. Ids this module makes up contain ``:``, which election
ids cannot (``[A-Za-z0-9_.-]``), so they never collide: ``candidate:<option>``,
``scope:<election>`` (the jurisdiction GpUnit), ``<card id>:interpreted`` and
``<card id>:modified`` (snapshots). CVR schema 1.0 has no BallotStyle object (the
Election admits no ``BallotStyle``), so ``BallotStyleId`` is the style id of election.json.

Snapshots of a CVR::

    interpreted   what the machine read; for an unreadable card no CVRContest, an
                  OtherStatus ``unreadable=<reason>`` and an Annotation with the detail
    modified      (after adjudication) the decided contests; Annotation names the auditors

The current snapshot (``CurrentSnapshotId``) carries ``Status: ["other"]`` and an
``OtherStatus`` of ``;``-joined ``key=value`` parts, ``role=<role>`` first, then
``unreadable=<reason>`` or ``reasons=<code>,<code>`` (what still needs a person).

Per option a ``SelectionPosition``: ``HasIndication`` yes/no/unknown (the target's
status; adjudicated contests: the decision), ``MarkMetricValue`` the score with three
decimals (machine-printed records and decisions without a scanned target: ``1.000`` /
``0.000``), ``NumberVotes`` 1, ``IsAllocable`` yes (counts) / no (no mark, overvote) /
unknown (not known until a person decides). Options are reported one by one: in a contest
that awaits a person only the doubtful options are ``unknown``; a clear option keeps what it
was read (``yes``/``no`` with its score), a clear ``no`` is not allocable, and a clear ``yes``
is allocable when even every doubtful option turning out a vote could not make an overvote.

Large exports: :func:`write_cvr_stream` writes the same document one CVR at a time, so
memory does not grow with the number of cards. :func:`validate_cvr_report` checks the
schema (Draft 4, with ``date-time`` and ``uri`` formats) and the references between
objects that the schema names (``refTypes``) but cannot check.
"""

from __future__ import annotations

import json
import os
import re
import tempfile
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime
from functools import cache
from importlib import resources
from pathlib import Path
from typing import Any, TextIO, assert_never
from urllib.parse import quote

from jsonschema import Draft4Validator, FormatChecker

from scanpipe import __version__
from scanpipe.classify import option_status
from scanpipe.errors import ConfigError, ScanpipeError
from scanpipe.types import (
    Contest,
    ContestOutcome,
    ContestReading,
    Election,
    InterpretedCard,
    MachinePrintedCard,
    MarkStatus,
    ReadCard,
    Reason,
    UnreadableCard,
)

ROLES = frozenset({"regular", "duplicate", "original", "superseded", "new_duplicate"})
SCHEMA_RESOURCE = "nist_cvr_schema.json"
MARK_METRIC_TYPE = (
    "scanpipe mark score in [0, 1] with three decimals (0 = blank target, 1 = fully marked);"
    " machine-printed records and decisions without a scanned target: 1.000 marked, 0.000 not"
)
# Characters a file path may keep in a URI path (RFC 3986 pchar and "/"); others are %-encoded.
_URI_PATH_SAFE = "/:@!$&'()*+,;=-._~"

Json = dict[str, Any]
_encode = json.JSONEncoder(ensure_ascii=False, separators=(",", ":")).encode


@dataclass(frozen=True)
class CvrEntry:
    """One CVR to export: a card, its role and, after adjudication, its decided contests."""

    card: InterpretedCard
    role: str
    preprinted_id: str | None
    modified: tuple[ContestReading, ...] | None
    auditors: tuple[str, ...] = ()
    notes: tuple[str, ...] = ()
    set_aside: int | None = None  # the board's page ruling that set this page aside as no ballot card
    image_location: str | None = None

    def __post_init__(self) -> None:
        if self.role not in ROLES:
            raise ValueError(f"unknown CVR role {self.role!r}; expected one of {sorted(ROLES)}")
        if self.modified is not None and not self.auditors:
            raise ValueError(f"card {self.card.source.card_id}: a modified snapshot needs its auditors")


# --------------------------------------------------------------------------------------
# What the election says, indexed once per export


Options = tuple[tuple[str, int], ...]  # (option id, 0-based position in its contest)


@dataclass(frozen=True, slots=True)
class _Catalog:
    contests: dict[str, Contest]
    options: dict[str, Options]  # contest id -> all its options
    write_ins: frozenset[str]
    styles: dict[str, tuple[str, ...]]  # style id -> contest ids
    pages: dict[tuple[str, int], tuple[tuple[str, Options], ...]]  # (style, page) -> contests
    precincts: frozenset[str]


def _catalog(election: Election) -> _Catalog:
    options = {c.id: tuple((o.id, i) for i, o in enumerate(c.options)) for c in election.contests}
    pages = {}
    for style in election.ballot_styles:
        for page in style.layout.pages:
            on_page = {t.option for t in page.targets}
            contests = [c for c in style.contests if any(t.contest == c for t in page.targets)]
            pages[(style.id, page.page)] = tuple(
                (c, tuple(o for o in options[c] if o[0] in on_page)) for c in contests
            )
    return _Catalog(
        contests={c.id: c for c in election.contests},
        options=options,
        write_ins=frozenset(o.id for c in election.contests for o in c.options if o.write_in),
        styles={s.id: s.contests for s in election.ballot_styles},
        pages=pages,
        precincts=frozenset(p.id for p in election.precincts),
    )


# --------------------------------------------------------------------------------------
# Public API


def build_cvr_report(
    election: Election,
    entries: Iterable[CvrEntry],
    *,
    generated_at: datetime,
    device_id: str = "scanpipe",
) -> Json:
    """Build the whole ``CVR.CastVoteRecordReport`` as a JSON-ready dict.

    Raises ``ValueError`` for a naive ``generated_at`` and :class:`ConfigError` when a card
    names a style, page or contest the election does not define.
    """
    cvrs = list(iter_cvrs(election, entries, device_id=device_id))
    report = _report_header(election, generated_at, device_id)
    report["ReportType"] = _report_types(any(len(c["CVRSnapshot"]) > 1 for c in cvrs))
    report["CVR"] = cvrs
    return report


def iter_cvrs(
    election: Election, entries: Iterable[CvrEntry], *, device_id: str = "scanpipe"
) -> Iterator[Json]:
    """Yield one ``CVR.CVR`` dict per entry, in order."""
    catalog = _catalog(election)
    for entry in entries:
        yield _cvr(entry, election.id, catalog, device_id)


def write_cvr_report(report: Json, path: Path) -> None:
    """Write ``report`` as compact UTF-8 JSON, atomically (a temporary file, then rename).

    Encoded one CVR at a time: the C encoder is then used and no whole-document string is
    held in memory.
    """
    head = {key: value for key, value in report.items() if key != "CVR"}
    with _atomic_text(path) as out:
        out.write(_encode(head)[:-1] + ',"CVR":[' if head else '{"CVR":[')
        for i, cvr in enumerate(report.get("CVR", ())):
            out.write(("," if i else "") + _encode(cvr))
        out.write("]}\n")


def write_cvr_stream(
    election: Election,
    entries: Iterable[CvrEntry],
    path: Path,
    *,
    generated_at: datetime,
    device_id: str = "scanpipe",
) -> int:
    """Write the same document as :func:`build_cvr_report`, one CVR at a time; return the count."""
    header = _report_header(election, generated_at, device_id)
    count, adjudicated = 0, False
    with _atomic_text(path) as out:
        out.write(_encode(header)[:-1] + ',"CVR":[')
        for cvr in iter_cvrs(election, entries, device_id=device_id):
            out.write(("," if count else "") + _encode(cvr))
            count += 1
            adjudicated = adjudicated or len(cvr["CVRSnapshot"]) > 1
        out.write('],"ReportType":' + _encode(_report_types(adjudicated)) + "}\n")
    return count


def validate_cvr_report(report: Json) -> list[str]:
    """Problems of ``report`` as ``"$.path: message"`` strings; ``[]`` when it is valid.

    First the schema (Draft 4, formats ``date-time`` and ``uri`` checked); when that
    passes, the references between objects (ids that must name an existing object).
    """
    errors = sorted(_validator().iter_errors(report), key=lambda e: list(map(str, e.absolute_path)))
    problems = [f"{_json_path(e.absolute_path)}: {e.message}" for e in errors]
    return problems or _reference_problems(report)


# --------------------------------------------------------------------------------------
# Report header


def _report_header(election: Election, generated_at: datetime, device_id: str) -> Json:
    if generated_at.tzinfo is None:
        raise ValueError("generated_at must be timezone-aware")
    stamp = generated_at.astimezone(UTC).isoformat(timespec="seconds").replace("+00:00", "Z")
    return {
        "@type": "CVR.CastVoteRecordReport",
        "Version": "1.0.0",
        "GeneratedDate": stamp,
        "ReportGeneratingDeviceIds": [device_id],
        "ReportingDevice": [
            {
                "@type": "CVR.ReportingDevice",
                "@id": device_id,
                "Application": f"scanpipe {__version__}",
                "MarkMetricType": MARK_METRIC_TYPE,
            }
        ],
        "Election": [_election(election)],
        "GpUnit": _gp_units(election),
    }


def _report_types(adjudicated: bool) -> list[str]:
    return ["originating-device-export", "adjudicated"] if adjudicated else ["originating-device-export"]


def _election(election: Election) -> Json:
    candidates = [
        {"@type": "CVR.Candidate", "@id": f"candidate:{o.id}", "Name": o.name}
        for c in election.contests
        if c.kind == "candidate"
        for o in c.options
        if not o.write_in
    ]
    return {
        "@type": "CVR.Election",
        "@id": election.id,
        "Name": election.name,
        "ElectionScopeId": _scope_id(election),
        "Candidate": candidates,
        "Contest": [_contest(c) for c in election.contests],
    }


def _contest(contest: Contest) -> Json:
    if contest.kind == "candidate":
        selections: list[Json] = [
            (
                {"@type": "CVR.CandidateSelection", "@id": o.id, "IsWriteIn": True}
                if o.write_in
                else {"@type": "CVR.CandidateSelection", "@id": o.id, "CandidateIds": [f"candidate:{o.id}"]}
            )
            for o in contest.options
        ]
        return {
            "@type": "CVR.CandidateContest",
            "@id": contest.id,
            "Name": contest.title,
            "VotesAllowed": contest.vote_for,
            "VoteVariation": "plurality" if contest.vote_for == 1 else "n-of-m",
            "ContestSelection": selections,
        }
    if contest.kind == "question":
        return {
            "@type": "CVR.BallotMeasureContest",
            "@id": contest.id,
            "Name": contest.title,
            "ContestSelection": [
                {"@type": "CVR.BallotMeasureSelection", "@id": o.id, "Selection": o.name}
                for o in contest.options
            ],
        }
    raise ConfigError(f"contest {contest.id}: unknown kind {contest.kind!r} (candidate or question)")


def _scope_id(election: Election) -> str:
    return f"scope:{election.id}"


def _gp_units(election: Election) -> list[Json]:
    counties = sorted({p.county for p in election.precincts if p.county})
    scope_name = f"{', '.join(counties)} ({election.jurisdiction})" if counties else election.jurisdiction
    units = [
        {"@type": "CVR.GpUnit", "@id": p.id, "Type": "precinct", "Name": p.name} for p in election.precincts
    ]
    units.append(
        {
            "@type": "CVR.GpUnit",
            "@id": _scope_id(election),
            "Type": "other",
            "OtherType": "jurisdiction",
            "Name": scope_name,
        }
    )
    return units


# --------------------------------------------------------------------------------------
# One CVR


def _cvr(entry: CvrEntry, election_id: str, catalog: _Catalog, device_id: str) -> Json:
    source = entry.card.source
    uid = source.card_id
    style, precinct = _style_and_precinct(entry.card, catalog)
    interpreted = _interpreted_snapshot(uid, entry.card, style, catalog)
    snapshots = [interpreted]
    if entry.modified is not None:
        snapshots.append(_modified_snapshot(uid, entry, style, catalog))
    parts = _status_parts(entry.card) + ([f"set_aside=page ruling {entry.set_aside}"] if entry.set_aside is not None else [])
    current = snapshots[-1]
    if current is interpreted:
        _set_status(interpreted, [f"role={entry.role}", *parts])
    else:
        _set_status(current, [f"role={entry.role}"])
        _set_status(interpreted, parts)
    cvr: Json = {
        "@type": "CVR.CVR",
        "UniqueId": uid,
        "ElectionId": election_id,
        "CreatingDeviceId": device_id,
    }
    if style is not None:
        cvr["BallotStyleId"] = style
    if precinct is not None:
        cvr["BallotStyleUnitId"] = precinct
    if entry.preprinted_id is not None:
        cvr["BallotPrePrintedId"] = entry.preprinted_id
    if source.batch:
        cvr["BatchId"] = source.batch
    cvr["BallotImage"] = [_image(entry)]
    cvr["CVRSnapshot"] = snapshots
    cvr["CurrentSnapshotId"] = current["@id"]
    return cvr


def _style_and_precinct(card: InterpretedCard, catalog: _Catalog) -> tuple[str | None, str | None]:
    """The card's style and precinct; unknown ones (not in the election) become ``None``."""
    interp = card.interpretation
    style: str | None
    precinct: str | None
    match interp:
        case ReadCard():
            style, precinct = interp.style, interp.precinct
        case MachinePrintedCard():
            style, precinct = interp.record.style, interp.record.precinct
        case UnreadableCard():
            code = card.card_code
            trusted = code is not None and interp.reason not in (Reason.STYLE_CONFLICT, Reason.WRONG_ELECTION)
            style, precinct = (code.style, code.precinct) if code is not None and trusted else (None, None)
            style = style if style in catalog.styles else None
        case _:
            assert_never(interp)
    if style is not None and style not in catalog.styles:
        raise ConfigError(f"card {card.source.card_id}: style {style!r} is not in the election definition")
    return style, (precinct if precinct in catalog.precincts else None)


def _image(entry: CvrEntry) -> Json:
    source = entry.card.source
    if entry.image_location is not None:
        location = entry.image_location
        if not location.startswith("file:"):
            location = "file:" + quote(location, safe=_URI_PATH_SAFE)
    else:
        location = "file:" + quote(source.path, safe=_URI_PATH_SAFE)
        if source.page_count > 1:
            location += f"#page={source.page_index}"
    image: Json = {"@type": "CVR.ImageData", "Location": location}
    if source.sha256:
        image["Hash"] = {"@type": "CVR.Hash", "Type": "sha-256", "Value": source.sha256.lower()}
    return image


def _status_parts(card: InterpretedCard) -> list[str]:
    """``OtherStatus`` parts saying why the machine's reading is not final."""
    interp = card.interpretation
    if isinstance(interp, UnreadableCard):
        return [f"unreadable={interp.reason.value}"]
    return [f"reasons={','.join(r.value for r in interp.reasons)}"] if interp.reasons else []


def _set_status(snapshot: Json, parts: list[str]) -> None:
    if parts:
        snapshot["Status"] = ["other"]
        snapshot["OtherStatus"] = ";".join(parts)


# --------------------------------------------------------------------------------------
# Snapshots

Marks = dict[str, tuple[str, str]]  # option id -> (HasIndication, MarkMetricValue) as the machine read


def _interpreted_snapshot(uid: str, card: InterpretedCard, style: str | None, catalog: _Catalog) -> Json:
    snapshot: Json = {"@type": "CVR.CVRSnapshot", "@id": f"{uid}:interpreted", "Type": "interpreted"}
    interp = card.interpretation
    if isinstance(interp, UnreadableCard):
        message = f"{interp.reason.value}: {interp.detail}"
        snapshot["Annotation"] = [{"@type": "CVR.Annotation", "Message": [message]}]
        return snapshot
    assert style is not None  # read and machine-printed cards always name a known style
    marks = _machine_marks(interp, style, catalog)
    readings = {r.contest: r for r in interp.contests}
    snapshot["CVRContest"] = [
        _cvr_contest(catalog.contests[cid], options, readings.get(cid), marks, catalog.write_ins)
        for cid, options in _card_contests(interp, style, catalog)
    ]
    return snapshot


def _modified_snapshot(uid: str, entry: CvrEntry, style: str | None, catalog: _Catalog) -> Json:
    assert entry.modified is not None
    interp = entry.card.interpretation
    marks = (
        {} if isinstance(interp, UnreadableCard) or style is None else _machine_marks(interp, style, catalog)
    )
    on_page = (
        dict(catalog.pages.get((style, interp.page), ())) if isinstance(interp, ReadCard) and style else {}
    )
    contests = []
    for reading in entry.modified:
        contest = catalog.contests.get(reading.contest)
        if contest is None:
            raise ConfigError(f"card {uid}: contest {reading.contest!r} is not in the election definition")
        options = on_page.get(reading.contest) or catalog.options[reading.contest]
        contests.append(_cvr_contest(contest, options, reading, marks, catalog.write_ins))
    annotation: Json = {"@type": "CVR.Annotation", "AdjudicatorName": list(entry.auditors)}
    if entry.notes:
        annotation["Message"] = list(entry.notes)
    return {
        "@type": "CVR.CVRSnapshot",
        "@id": f"{uid}:modified",
        "Type": "modified",
        "Annotation": [annotation],
        "CVRContest": contests,
    }


def _card_contests(
    interp: ReadCard | MachinePrintedCard, style: str, catalog: _Catalog
) -> tuple[tuple[str, Options], ...]:
    """Contests and options a card shows: its layout page's targets, or its whole style."""
    if isinstance(interp, MachinePrintedCard):
        return tuple((cid, catalog.options[cid]) for cid in catalog.styles[style])
    page = catalog.pages.get((style, interp.page))
    if page is None:
        raise ConfigError(f"style {style!r} has no layout page {interp.page}")
    return page


def _machine_marks(interp: ReadCard | MachinePrintedCard, style: str, catalog: _Catalog) -> Marks:
    if isinstance(interp, ReadCard):
        return {t.score.option: (t.status.value, _score_text(t.score.score)) for t in interp.targets}
    chosen = {option for _, options in interp.record.selections for option in options}
    return {
        option: (("yes", "1.000") if option in chosen else ("no", "0.000"))
        for cid in catalog.styles[style]
        for option, _ in catalog.options[cid]
    }


def _score_text(score: float) -> str:
    if score != score:  # NaN
        raise ValueError("a mark score is NaN")
    return f"{min(1.0, max(0.0, score)):.3f}"


# --------------------------------------------------------------------------------------
# Contests and selections


def _cvr_contest(
    contest: Contest,
    options: Options,
    reading: ContestReading | None,
    marks: Marks,
    write_ins: frozenset[str],
) -> Json:
    outcome = reading.outcome if reading is not None else ContestOutcome.PENDING
    votes = reading.votes if reading is not None else ()
    out: Json = {"@type": "CVR.CVRContest", "ContestId": contest.id}
    if outcome is ContestOutcome.PENDING:
        unknown = reading.unknown_options if reading is not None else ()
        out["Status"] = ["other"]
        out["OtherStatus"] = f"pending;unknown={','.join(unknown)}" if unknown else "pending"
    elif outcome is ContestOutcome.OVERVOTE:
        out.update(Overvotes=contest.vote_for, Undervotes=0, Status=["overvoted", "invalidated-rules"])
    else:
        assert reading is not None
        status = (["not-indicated"] if not votes else []) + (["undervoted"] if reading.undervotes > 0 else [])
        out.update(Overvotes=0, Undervotes=reading.undervotes)
        if status:
            out["Status"] = status
    if outcome is not ContestOutcome.PENDING:
        out["WriteIns"] = sum(1 for v in votes if v in write_ins)
    decided = reading is not None and reading.source == "adjudicated"
    out["CVRContestSelection"] = [
        _selection(option, position, reading, outcome, marks.get(option), decided, contest.vote_for)
        for option, position in options
    ]
    return out


def _selection(
    option: str,
    position: int,
    reading: ContestReading | None,
    outcome: ContestOutcome,
    machine: tuple[str, str] | None,
    decided: bool,
    vote_for: int,
) -> Json:
    score: str | None
    if machine is not None and not decided:
        indication, score = machine
    else:
        indication = _indication_from_reading(option, reading)
        score = machine[1] if machine is not None else _DECIDED_SCORE[indication]
    if outcome is ContestOutcome.PENDING:
        allocable = _pending_allocable(indication, reading, vote_for)
    elif outcome is ContestOutcome.OVERVOTE:
        allocable = "no"
    else:
        allocable = "yes" if reading is not None and option in reading.votes else "no"
    pos: Json = {
        "@type": "CVR.SelectionPosition",
        "HasIndication": indication,
        "NumberVotes": 1,
        "IsAllocable": allocable,
    }
    if score is not None:
        pos["MarkMetricValue"] = [score]
    status = (["adjudicated"] if decided else []) + (
        ["invalidated-rules"] if outcome is ContestOutcome.OVERVOTE and indication == "yes" else []
    )
    if status:
        pos["Status"] = status
    selection: Json = {
        "@type": "CVR.CVRContestSelection",
        "ContestSelectionId": option,
        "OptionPosition": position,
        "SelectionPosition": [pos],
    }
    if indication == MarkStatus.UNKNOWN.value:
        selection["Status"] = ["needs-adjudication"]
    return selection


_DECIDED_SCORE: dict[str, str | None] = {"yes": "1.000", "no": "0.000", "unknown": None}


def _indication_from_reading(option: str, reading: ContestReading | None) -> str:
    if reading is None:
        return "unknown"
    return option_status(reading, option).value


def _pending_allocable(indication: str, reading: ContestReading | None, vote_for: int) -> str:
    """``IsAllocable`` of one option of a contest that awaits a person (see the module docstring)."""
    if reading is None or indication == MarkStatus.UNKNOWN.value:
        return "unknown"
    if indication == MarkStatus.NO.value:
        return "no"
    doubtful = len(reading.unknown_options)
    return "yes" if len(reading.votes) + doubtful <= vote_for else "unknown"


# --------------------------------------------------------------------------------------
# Validation


@cache
def _validator() -> Draft4Validator:
    text = resources.files("scanpipe.exports").joinpath(SCHEMA_RESOURCE).read_text(encoding="utf-8")
    schema = json.loads(text)
    Draft4Validator.check_schema(schema)
    formats = FormatChecker(formats=())
    formats.checks("date-time")(_is_date_time)
    formats.checks("uri")(_is_uri)
    return Draft4Validator(schema, format_checker=formats)


_DATE_TIME = re.compile(r"\d{4}-\d{2}-\d{2}[Tt]\d{2}:\d{2}:\d{2}(\.\d+)?([Zz]|[+-]\d{2}:\d{2})")
_URI = re.compile(
    r"[A-Za-z][A-Za-z0-9+.\-]*:(?:[A-Za-z0-9\-._~!$&'()*+,;=:@/?]|%[0-9A-Fa-f]{2})*"
    r"(?:#(?:[A-Za-z0-9\-._~!$&'()*+,;=:@/?]|%[0-9A-Fa-f]{2})*)?"
)
_SHA256 = re.compile(r"[0-9a-f]{64}")


def _is_date_time(value: object) -> bool:
    if not isinstance(value, str):
        return True  # the type keyword reports non-strings
    if not _DATE_TIME.fullmatch(value):
        return False
    try:
        datetime.fromisoformat(value.upper().replace("Z", "+00:00"))
    except ValueError:
        return False
    return True


def _is_uri(value: object) -> bool:
    return not isinstance(value, str) or _URI.fullmatch(value) is not None


def _json_path(parts: Iterable[str | int]) -> str:
    return "$" + "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in parts)


def _reference_problems(report: Json) -> list[str]:
    """Ids that must name an object of the report (the schema's ``refTypes``)."""
    devices = {d["@id"] for d in report["ReportingDevice"]}
    units = {u["@id"] for u in report["GpUnit"]}
    problems = [
        f"$.ReportGeneratingDeviceIds[{i}]: {d!r} names no ReportingDevice"
        for i, d in enumerate(report["ReportGeneratingDeviceIds"])
        if d not in devices
    ]
    elections: dict[str, dict[str, set[str]]] = {}
    for i, election in enumerate(report["Election"]):
        if election["ElectionScopeId"] not in units:
            problems.append(
                f"$.Election[{i}].ElectionScopeId: {election['ElectionScopeId']!r} names no GpUnit"
            )
        candidates = {c["@id"] for c in election.get("Candidate", [])}
        for j, contest in enumerate(election["Contest"]):
            for k, sel in enumerate(contest["ContestSelection"]):
                at = f"$.Election[{i}].Contest[{j}].ContestSelection[{k}].CandidateIds"
                problems += [
                    f"{at}: {c!r} names no Candidate"
                    for c in sel.get("CandidateIds", [])
                    if c not in candidates
                ]
        elections[election["@id"]] = {
            c["@id"]: {s["@id"] for s in c["ContestSelection"]} for c in election["Contest"]
        }
    seen: set[str] = set()
    for i, cvr in enumerate(report.get("CVR", [])):
        problems += _cvr_reference_problems(f"$.CVR[{i}]", cvr, elections, units, devices, seen)
    return problems


def _cvr_reference_problems(
    at: str,
    cvr: Json,
    elections: dict[str, dict[str, set[str]]],
    units: set[str],
    devices: set[str],
    seen: set[str],
) -> list[str]:
    problems = []
    contests = elections.get(cvr["ElectionId"])
    if contests is None:
        problems.append(f"{at}.ElectionId: {cvr['ElectionId']!r} names no Election")
    if "BallotStyleUnitId" in cvr and cvr["BallotStyleUnitId"] not in units:
        problems.append(f"{at}.BallotStyleUnitId: {cvr['BallotStyleUnitId']!r} names no GpUnit")
    if "CreatingDeviceId" in cvr and cvr["CreatingDeviceId"] not in devices:
        problems.append(f"{at}.CreatingDeviceId: {cvr['CreatingDeviceId']!r} names no ReportingDevice")
    if "UniqueId" in cvr:
        key = "cvr " + cvr["UniqueId"]
        if key in seen:
            problems.append(f"{at}.UniqueId: {cvr['UniqueId']!r} is used by another CVR")
        seen.add(key)
    if cvr["CurrentSnapshotId"] not in {s["@id"] for s in cvr["CVRSnapshot"]}:
        problems.append(f"{at}.CurrentSnapshotId: {cvr['CurrentSnapshotId']!r} names no snapshot of this CVR")
    for j, image in enumerate(cvr.get("BallotImage", [])):
        digest = image.get("Hash")
        if digest is not None and digest["Type"] == "sha-256" and not _SHA256.fullmatch(digest["Value"]):
            problems.append(f"{at}.BallotImage[{j}].Hash.Value: not 64 lowercase hex digits")
    for j, snapshot in enumerate(cvr["CVRSnapshot"]):
        key = "snapshot " + snapshot["@id"]
        if key in seen:
            problems.append(f"{at}.CVRSnapshot[{j}].@id: {snapshot['@id']!r} is used by another snapshot")
        seen.add(key)
        for k, contest in enumerate(snapshot.get("CVRContest", [])):
            if contests is None:
                break
            here = f"{at}.CVRSnapshot[{j}].CVRContest[{k}]"
            options = contests.get(contest["ContestId"])
            if options is None:
                problems.append(f"{here}.ContestId: {contest['ContestId']!r} names no Contest")
                continue
            problems += [
                f"{here}.CVRContestSelection[{m}].ContestSelectionId: {s['ContestSelectionId']!r}"
                f" is not a selection of contest {contest['ContestId']!r}"
                for m, s in enumerate(contest.get("CVRContestSelection", []))
                if "ContestSelectionId" in s and s["ContestSelectionId"] not in options
            ]
    return problems


# --------------------------------------------------------------------------------------
# Files


@contextmanager
def _atomic_text(path: Path) -> Iterator[TextIO]:
    """Write a text file through a temporary sibling, renamed over ``path`` on success."""
    path = Path(path)
    try:
        fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    except OSError as exc:
        raise ScanpipeError(f"cannot write the CVR export {path}: {exc.strerror}") from exc
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="\n") as out:
            yield out
        os.chmod(tmp, 0o644)
        os.replace(tmp, path)
    except OSError as exc:
        os.unlink(tmp)
        raise ScanpipeError(f"cannot write the CVR export {path}: {exc.strerror}") from exc
    except BaseException:
        os.unlink(tmp)
        raise
