"""NIST SP 1500-103 CVR export: exact fields, schema validity, and the validator catching errors."""

from __future__ import annotations

import copy
import json
from datetime import UTC, datetime, timedelta, timezone
from pathlib import Path
from typing import Any

import pytest

from scanpipe.errors import ConfigError
from scanpipe.exports.cvr import (
    CvrEntry,
    build_cvr_report,
    validate_cvr_report,
    write_cvr_report,
    write_cvr_stream,
)
from scanpipe.types import (
    BallotStyle,
    CardCode,
    CardInterpretation,
    CardKind,
    CardSource,
    Contest,
    ContestOutcome,
    ContestReading,
    Election,
    InterpretedCard,
    Layout,
    LayoutPage,
    MachinePrintedCard,
    MachineRecord,
    MarkStatus,
    Option,
    Precinct,
    ReadCard,
    Reason,
    Registration,
    TargetDef,
    TargetReading,
    TargetScore,
    UnreadableCard,
)

Json = dict[str, Any]
GENERATED = datetime(2026, 11, 10, 10, 30, tzinfo=timezone(timedelta(hours=-5)))
COUNTED, OVERVOTE, PENDING = ContestOutcome.COUNTED, ContestOutcome.OVERVOTE, ContestOutcome.PENDING
YES, NO, UNKNOWN = MarkStatus.YES, MarkStatus.NO, MarkStatus.UNKNOWN


def _box(i: int) -> tuple[float, float, float, float]:
    return (0.9, 2.0 + 0.4 * i, 0.22, 0.14)


def make_election() -> Election:
    gov = Contest(
        "gov",
        "Governor",
        "candidate",
        1,
        (Option("gov-a", "Ada Alvarez"), Option("gov-b", "Ben Brooks"), Option("gov-w", "Write-in", True)),
    )
    council = Contest(
        "council",
        "Council",
        "candidate",
        2,
        (Option("c-x", "Xia"), Option("c-y", "Yves"), Option("c-z", "Zoe")),
    )
    q1 = Contest(
        "q1", "Question 1", "question", 1, (Option("q1-for", "For"), Option("q1-against", "Against"))
    )
    page1 = LayoutPage(
        1,
        (8.5, 11.0),
        tuple(
            TargetDef(c, o, _box(i))
            for i, (c, o) in enumerate(
                [
                    ("gov", "gov-a"),
                    ("gov", "gov-b"),
                    ("gov", "gov-w"),
                    ("council", "c-x"),
                    ("council", "c-y"),
                    ("council", "c-z"),
                ]
            )
        ),
    )
    page2 = LayoutPage(
        2, (8.5, 11.0), (TargetDef("q1", "q1-for", _box(0)), TargetDef("q1", "q1-against", _box(1)))
    )
    style = BallotStyle("S1", ("P01", "P02"), ("gov", "council", "q1"), Layout("S1", (page1, page2)))
    return Election(
        "demo-2026",
        "Demo County General 2026",
        "2026-11-03",
        "MD",
        (Precinct("P01", "Precinct 1", "Demo"), Precinct("P02", "Precinct 2", "Demo")),
        (gov, council, q1),
        (style,),
    )


REGISTRATION = Registration((1, 0, 0, 0, 1, 0, 0, 0, 1), "fiducials", False, 200.0, 4, 0.4)


def target(contest: str, option: str, status: MarkStatus, score: float) -> TargetReading:
    s = TargetScore(contest, option, score, score, 0.0, 0.0, 0.0, 0.0, (0.0, 0.0, 44.0, 28.0))
    return TargetReading(s, status, "test")


def source(card_id: str, path: str, *, page: int = 1, pages: int = 1, sha: str | None = None) -> CardSource:
    return CardSource(card_id, sha or card_id[:64], path, page, pages, "batch-1")


def card(src: CardSource, interp: CardInterpretation, kind: CardKind = CardKind.BALLOT) -> InterpretedCard:
    return InterpretedCard(src, kind, None, None, interp)


SHA_A = "AB" * 32  # upper case on purpose: the export writes lower case
SHA_B, SHA_U, SHA_M, SHA_D, SHA_O, SHA_N = ("b" * 64, "c" * 64, "d" * 64, "e" * 64, "f" * 64, "0" * 64)
SHA_T = "1" * 64

READ_A = ReadCard(
    "S1",
    1,
    "P01",
    REGISTRATION,
    (
        target("gov", "gov-a", YES, 0.7342),
        target("gov", "gov-b", NO, 0.0121),
        target("gov", "gov-w", UNKNOWN, 0.3),
        target("council", "c-x", YES, 0.9),
        target("council", "c-y", NO, 0.02),
        target("council", "c-z", NO, 0.0),
    ),
    (
        ContestReading("gov", ("gov-a",), PENDING, 0, ("gov-w",)),
        ContestReading("council", ("c-x",), COUNTED, 1),
    ),
    reasons=(Reason.WRITE_IN,),
)
READ_B = ReadCard(
    "S1",
    1,
    "P02",
    REGISTRATION,
    (
        target("gov", "gov-a", YES, 0.8),
        target("gov", "gov-b", YES, 0.95),
        target("gov", "gov-w", NO, 0.01),
        target("council", "c-x", NO, 0.0),
        target("council", "c-y", NO, 0.0),
        target("council", "c-z", NO, 0.0),
    ),
    (ContestReading("gov", ("gov-a", "gov-b"), OVERVOTE, 0), ContestReading("council", (), COUNTED, 2)),
)
READ_P2 = ReadCard(
    "S1",
    2,
    "P01",
    REGISTRATION,
    (target("q1", "q1-for", YES, 0.9996), target("q1", "q1-against", NO, 0.0004)),
    (ContestReading("q1", ("q1-for",), COUNTED, 0),),
)
MACHINE = MachinePrintedCard(
    MachineRecord("demo-2026", "S1", "P02", (("gov", ("gov-b",)), ("council", ("c-y", "c-z")), ("q1", ()))),
    (
        ContestReading("gov", ("gov-b",), COUNTED, 0),
        ContestReading("council", ("c-y", "c-z"), COUNTED, 0),
        ContestReading("q1", (), COUNTED, 1),
    ),
)
DECIDED = (
    ContestReading("gov", ("gov-w",), COUNTED, 0, source="adjudicated"),
    ContestReading("council", ("c-x",), COUNTED, 1),
)


def make_entries() -> list[CvrEntry]:
    unreadable = InterpretedCard(
        source(SHA_U, "scans/u.png"),
        CardKind.BALLOT,
        None,
        CardCode("demo-2026", "S1", "P01", 1),
        UnreadableCard(Reason.NO_FIDUCIALS, "found 2 of 4 fiducials"),
    )
    return [
        CvrEntry(card(source(SHA_A.lower(), "scans/a.png", sha=SHA_A), READ_A), "regular", None, None),
        CvrEntry(card(source(SHA_B, "/abs/scans/b.tif"), READ_B), "regular", None, None),
        CvrEntry(unreadable, "regular", None, None),
        CvrEntry(
            card(source(SHA_M + "-p2", "scans/multi.pdf", page=2, pages=3, sha=SHA_M), READ_P2),
            "regular",
            None,
            None,
        ),
        CvrEntry(card(source(SHA_T, "scans/bmd.png"), MACHINE), "regular", None, None),
        CvrEntry(
            card(source(SHA_D, "scans/dup.png"), READ_A, CardKind.DUPLICATE), "superseded", "A0042", None
        ),
        CvrEntry(card(source(SHA_O, "scans/org.png"), READ_B, CardKind.ORIGINAL), "original", "A0042", None),
        CvrEntry(
            card(source("nd-A0042-R1", "", sha=SHA_N), READ_A, CardKind.DUPLICATE),
            "new_duplicate",
            "A0042-R1",
            DECIDED,
            auditors=("Ann Auditor", "Bob Board"),
            notes=("voter wrote in a name",),
            image_location="renders/A0042-R1.png",
        ),
    ]


@pytest.fixture(scope="module")
def report() -> Json:
    return build_cvr_report(
        make_election(), make_entries(), generated_at=GENERATED, device_id="scanpipe-test"
    )


def cvr_by_id(report: Json, uid: str) -> Json:
    found: list[Json] = [c for c in report["CVR"] if c["UniqueId"] == uid]
    assert len(found) == 1
    return found[0]


def snapshot(cvr: Json, kind: str) -> Json:
    found: list[Json] = [s for s in cvr["CVRSnapshot"] if s["Type"] == kind]
    assert len(found) == 1
    return found[0]


def positions(snap: Json, contest: str) -> dict[str, Json]:
    (c,) = [c for c in snap["CVRContest"] if c["ContestId"] == contest]
    return {s["ContestSelectionId"]: s["SelectionPosition"][0] for s in c["CVRContestSelection"]}


def cvr_contest(snap: Json, contest: str) -> Json:
    found: list[Json] = [c for c in snap["CVRContest"] if c["ContestId"] == contest]
    assert len(found) == 1
    return found[0]


# --------------------------------------------------------------------------------------


def test_report_validates_against_the_schema(report: Json) -> None:
    assert validate_cvr_report(report) == []
    assert len(report["CVR"]) == 8


def test_report_header(report: Json) -> None:
    assert report["@type"] == "CVR.CastVoteRecordReport"
    assert report["Version"] == "1.0.0"
    assert report["GeneratedDate"] == "2026-11-10T15:30:00Z"
    assert report["ReportGeneratingDeviceIds"] == ["scanpipe-test"]
    assert [d["@id"] for d in report["ReportingDevice"]] == ["scanpipe-test"]
    assert report["ReportType"] == ["originating-device-export", "adjudicated"]
    (election,) = report["Election"]
    assert election["@id"] == "demo-2026"
    assert [c["@id"] for c in election["Contest"]] == ["gov", "council", "q1"]
    assert [c["@type"] for c in election["Contest"]] == ["CVR.CandidateContest"] * 2 + [
        "CVR.BallotMeasureContest"
    ]
    gov = election["Contest"][0]
    assert gov["VotesAllowed"] == 1
    assert [s["@id"] for s in gov["ContestSelection"]] == ["gov-a", "gov-b", "gov-w"]
    assert gov["ContestSelection"][2] == {
        "@type": "CVR.CandidateSelection",
        "@id": "gov-w",
        "IsWriteIn": True,
    }
    assert gov["ContestSelection"][0]["CandidateIds"] == ["candidate:gov-a"]
    assert {"@type": "CVR.Candidate", "@id": "candidate:gov-a", "Name": "Ada Alvarez"} in election[
        "Candidate"
    ]
    assert election["Contest"][2]["ContestSelection"][0] == {
        "@type": "CVR.BallotMeasureSelection",
        "@id": "q1-for",
        "Selection": "For",
    }
    units = {u["@id"]: u for u in report["GpUnit"]}
    assert units["P01"] == {"@type": "CVR.GpUnit", "@id": "P01", "Type": "precinct", "Name": "Precinct 1"}
    assert units[election["ElectionScopeId"]]["Name"] == "Demo (MD)"


def test_read_card_with_yes_no_unknown(report: Json) -> None:
    cvr = cvr_by_id(report, SHA_A.lower())
    assert cvr["@type"] == "CVR.CVR"
    assert cvr["ElectionId"] == "demo-2026"
    assert cvr["BallotStyleId"] == "S1"
    assert cvr["BallotStyleUnitId"] == "P01"
    assert cvr["BatchId"] == "batch-1"
    assert "BallotPrePrintedId" not in cvr
    assert cvr["BallotImage"] == [
        {
            "@type": "CVR.ImageData",
            "Location": "file:scans/a.png",
            "Hash": {"@type": "CVR.Hash", "Type": "sha-256", "Value": "ab" * 32},
        }
    ]
    assert cvr["CurrentSnapshotId"] == f"{SHA_A.lower()}:interpreted"
    (snap,) = cvr["CVRSnapshot"]
    assert snap["Status"] == ["other"]
    assert snap["OtherStatus"] == "role=regular;reasons=write_in"
    gov = positions(snap, "gov")
    assert gov["gov-a"] == {
        "@type": "CVR.SelectionPosition",
        "HasIndication": "yes",
        "NumberVotes": 1,
        "IsAllocable": "unknown",
        "MarkMetricValue": ["0.734"],
    }
    assert gov["gov-b"]["HasIndication"] == "no" and gov["gov-b"]["MarkMetricValue"] == ["0.012"]
    assert gov["gov-w"]["HasIndication"] == "unknown" and gov["gov-w"]["MarkMetricValue"] == ["0.300"]
    assert cvr_contest(snap, "gov")["OtherStatus"] == "pending;unknown=gov-w"
    needs = [s["ContestSelectionId"] for s in cvr_contest(snap, "gov")["CVRContestSelection"] if "Status" in s]
    assert needs == ["gov-w"]
    assert cvr_contest(snap, "gov")["CVRContestSelection"][2]["Status"] == ["needs-adjudication"]
    council = positions(snap, "council")
    assert [council[o]["IsAllocable"] for o in ("c-x", "c-y", "c-z")] == ["yes", "no", "no"]
    c = cvr_contest(snap, "council")
    assert (c["Overvotes"], c["Undervotes"], c["Status"]) == (0, 1, ["undervoted"])
    assert [cc["ContestId"] for cc in snap["CVRContest"]] == ["gov", "council"]  # page 1 only: no q1


def test_overvote(report: Json) -> None:
    snap = snapshot(cvr_by_id(report, SHA_B), "interpreted")
    assert snap["OtherStatus"] == "role=regular"
    gov = cvr_contest(snap, "gov")
    assert (gov["Overvotes"], gov["Undervotes"], gov["Status"]) == (1, 0, ["overvoted", "invalidated-rules"])
    pos = positions(snap, "gov")
    assert [pos[o]["IsAllocable"] for o in ("gov-a", "gov-b", "gov-w")] == ["no", "no", "no"]
    assert pos["gov-b"]["Status"] == ["invalidated-rules"] and "Status" not in pos["gov-w"]
    council = cvr_contest(snap, "council")
    assert (council["Undervotes"], council["Status"]) == (2, ["not-indicated", "undervoted"])
    assert cvr_by_id(report, SHA_B)["BallotImage"][0]["Location"] == "file:/abs/scans/b.tif"


def test_unreadable_card(report: Json) -> None:
    cvr = cvr_by_id(report, SHA_U)
    (snap,) = cvr["CVRSnapshot"]
    assert "CVRContest" not in snap
    assert snap["Status"] == ["other"]
    assert snap["OtherStatus"] == "role=regular;unreadable=no_fiducials"
    assert snap["Annotation"] == [
        {"@type": "CVR.Annotation", "Message": ["no_fiducials: found 2 of 4 fiducials"]}
    ]
    assert cvr["BallotStyleId"] == "S1"  # from the card code it did read
    assert cvr["CurrentSnapshotId"] == snap["@id"]


def test_page_two_of_a_multi_page_file(report: Json) -> None:
    cvr = cvr_by_id(report, SHA_M + "-p2")
    assert cvr["BallotImage"][0]["Location"] == "file:scans/multi.pdf#page=2"
    assert cvr["BallotImage"][0]["Hash"]["Value"] == SHA_M
    q1 = positions(snapshot(cvr, "interpreted"), "q1")
    assert (q1["q1-for"]["MarkMetricValue"], q1["q1-for"]["IsAllocable"]) == (["1.000"], "yes")
    assert q1["q1-against"]["MarkMetricValue"] == ["0.000"]


def test_machine_printed_record(report: Json) -> None:
    snap = snapshot(cvr_by_id(report, SHA_T), "interpreted")
    assert [c["ContestId"] for c in snap["CVRContest"]] == ["gov", "council", "q1"]
    every = {o: p for c in ("gov", "council", "q1") for o, p in positions(snap, c).items()}
    assert {o: (p["HasIndication"], p["MarkMetricValue"][0], p["IsAllocable"]) for o, p in every.items()} == {
        "gov-a": ("no", "0.000", "no"),
        "gov-b": ("yes", "1.000", "yes"),
        "gov-w": ("no", "0.000", "no"),
        "c-x": ("no", "0.000", "no"),
        "c-y": ("yes", "1.000", "yes"),
        "c-z": ("yes", "1.000", "yes"),
        "q1-for": ("no", "0.000", "no"),
        "q1-against": ("no", "0.000", "no"),
    }
    assert cvr_by_id(report, SHA_T)["BallotStyleUnitId"] == "P02"


def test_new_duplicate_with_modified_snapshot(report: Json) -> None:
    cvr = cvr_by_id(report, "nd-A0042-R1")
    assert cvr["BallotPrePrintedId"] == "A0042-R1"
    assert cvr["BallotImage"][0]["Location"] == "file:renders/A0042-R1.png"
    assert [s["Type"] for s in cvr["CVRSnapshot"]] == ["interpreted", "modified"]
    assert cvr["CurrentSnapshotId"] == "nd-A0042-R1:modified"
    interpreted, modified = cvr["CVRSnapshot"]
    assert (modified["Status"], modified["OtherStatus"]) == (["other"], "role=new_duplicate")
    assert interpreted["OtherStatus"] == "reasons=write_in"  # not current: no role
    assert modified["Annotation"] == [
        {
            "@type": "CVR.Annotation",
            "AdjudicatorName": ["Ann Auditor", "Bob Board"],
            "Message": ["voter wrote in a name"],
        }
    ]
    gov = positions(modified, "gov")
    assert gov["gov-w"] == {
        "@type": "CVR.SelectionPosition",
        "HasIndication": "yes",
        "NumberVotes": 1,
        "IsAllocable": "yes",
        "MarkMetricValue": ["0.300"],
        "Status": ["adjudicated"],
    }
    assert (gov["gov-a"]["HasIndication"], gov["gov-a"]["IsAllocable"]) == ("no", "no")
    council = positions(modified, "council")  # not adjudicated: the machine's reading
    assert council["c-x"] == positions(interpreted, "council")["c-x"]
    assert cvr_contest(modified, "gov")["WriteIns"] == 1


def test_pairing_roles(report: Json) -> None:
    sup, org = cvr_by_id(report, SHA_D), cvr_by_id(report, SHA_O)
    assert (sup["BallotPrePrintedId"], org["BallotPrePrintedId"]) == ("A0042", "A0042")
    assert sup["CVRSnapshot"][0]["OtherStatus"] == "role=superseded;reasons=write_in"
    assert org["CVRSnapshot"][0]["OtherStatus"] == "role=original"


# --------------------------------------------------------------------------------------
# The validator catches what is wrong


def test_validator_reports_missing_required_field(report: Json) -> None:
    bad = copy.deepcopy(report)
    del bad["CVR"][2]["CurrentSnapshotId"]
    assert validate_cvr_report(bad) == ["$.CVR[2]: 'CurrentSnapshotId' is a required property"]


@pytest.mark.parametrize(
    ("where", "value", "expected"),
    [
        (
            ("CVR", 0, "CVRSnapshot", 0, "Type"),
            "scanned",
            "$.CVR[0].CVRSnapshot[0].Type: 'scanned' is not one of",
        ),
        (("GeneratedDate",), "10 Nov 2026", "$.GeneratedDate: '10 Nov 2026' is not a 'date-time'"),
        (
            ("CVR", 1, "BallotImage", 0, "Location"),
            "file:a b.png",
            "$.CVR[1].BallotImage[0].Location: 'file:a b.png' is not a 'uri'",
        ),
        (("CVR", 1, "@type"), "CVR.Cvr", "$.CVR[1].@type: 'CVR.Cvr' is not one of ['CVR.CVR']"),
        (("CVR", 1, "BallotStyleUnitId"), "P99", "$.CVR[1].BallotStyleUnitId: 'P99' names no GpUnit"),
        (
            ("CVR", 1, "CurrentSnapshotId"),
            "x",
            "$.CVR[1].CurrentSnapshotId: 'x' names no snapshot of this CVR",
        ),
        (
            ("CVR", 1, "BallotImage", 0, "Hash", "Value"),
            "B" * 64,
            "$.CVR[1].BallotImage[0].Hash.Value: not 64 lowercase hex digits",
        ),
        (
            ("CVR", 1, "CVRSnapshot", 0, "CVRContest", 0, "CVRContestSelection", 0, "ContestSelectionId"),
            "q1-for",
            "$.CVR[1].CVRSnapshot[0].CVRContest[0].CVRContestSelection[0].ContestSelectionId:"
            " 'q1-for' is not a selection of contest 'gov'",
        ),
    ],
)
def test_validator_reports_bad_values(
    report: Json, where: tuple[str | int, ...], value: str, expected: str
) -> None:
    bad = copy.deepcopy(report)
    node: Any = bad
    for key in where[:-1]:
        node = node[key]
    node[where[-1]] = value
    problems = validate_cvr_report(bad)
    assert len(problems) == 1 and problems[0].startswith(expected), problems


def test_validator_reports_duplicate_unique_ids(report: Json) -> None:
    bad = copy.deepcopy(report)
    bad["CVR"].append(copy.deepcopy(bad["CVR"][0]))
    assert validate_cvr_report(bad) == [
        f"$.CVR[8].UniqueId: {SHA_A.lower()!r} is used by another CVR",
        f"$.CVR[8].CVRSnapshot[0].@id: '{SHA_A.lower()}:interpreted' is used by another snapshot",
    ]


# --------------------------------------------------------------------------------------
# Edges


def test_path_with_space_is_percent_encoded_and_valid() -> None:
    entry = CvrEntry(card(source(SHA_B, "scans/batch 1/b#1.png"), READ_B), "regular", None, None)
    report = build_cvr_report(make_election(), [entry], generated_at=GENERATED)
    assert report["CVR"][0]["BallotImage"][0]["Location"] == "file:scans/batch%201/b%231.png"
    assert report["ReportType"] == ["originating-device-export"]
    assert validate_cvr_report(report) == []


def test_stream_writes_the_same_document(tmp_path: Path, report: Json) -> None:
    out = tmp_path / "cvr.json"
    count = write_cvr_stream(
        make_election(), make_entries(), out, generated_at=GENERATED, device_id="scanpipe-test"
    )
    assert count == 8
    assert json.loads(out.read_text(encoding="utf-8")) == report
    write_cvr_report(report, tmp_path / "whole.json")
    assert json.loads((tmp_path / "whole.json").read_text(encoding="utf-8")) == report
    assert sorted(p.name for p in tmp_path.iterdir()) == ["cvr.json", "whole.json"]  # no temporary files left


def test_empty_export_is_valid() -> None:
    report = build_cvr_report(make_election(), [], generated_at=datetime(2026, 11, 10, tzinfo=UTC))
    assert report["CVR"] == []
    assert validate_cvr_report(report) == []


def test_refusals() -> None:
    with pytest.raises(ValueError, match="unknown CVR role 'copy'"):
        CvrEntry(card(source(SHA_B, "b.png"), READ_B), "copy", None, None)
    with pytest.raises(ValueError, match="needs its auditors"):
        CvrEntry(card(source(SHA_B, "b.png"), READ_B), "new_duplicate", "A1-R1", DECIDED)
    with pytest.raises(ValueError, match="timezone-aware"):
        build_cvr_report(make_election(), [], generated_at=datetime(2026, 11, 10))
    foreign = ReadCard("S9", 1, "P01", REGISTRATION, (), ())
    with pytest.raises(ConfigError, match="style 'S9' is not in the election definition"):
        build_cvr_report(
            make_election(),
            [CvrEntry(card(source(SHA_B, "b.png"), foreign), "regular", None, None)],
            generated_at=GENERATED,
        )
