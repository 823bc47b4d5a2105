"""NIST SP 1500-100 v2 election results (``results.json``), built and validated (pure but for the schema file).

The ids of ``election.json`` are the ``@id``s (precinct ``GpUnit``s, ``Contest``,
``ContestSelection``), so the file reads back with ``recount certified`` (which also checks
that ``Status`` is ``certified``). Counts are precinct-level (``VoteCounts`` of ``Type``
``total``; ``OtherCounts`` carry over- and undervotes). A report is validated against the
schema (Draft 4, ``date``/``date-time`` formats checked) and its references before it is written.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from datetime import date, datetime
from functools import cache
from importlib import resources
from typing import Any

from jsonschema import Draft4Validator, FormatChecker

from scanpipe.errors import ScanpipeError
from scanpipe.recount.figures import OVER, UNDER
from scanpipe.types import Election

SCHEMA_RESOURCE = "nist_err_schema.json"  # shared/spec/nist/nist-err-v2.schema.json, packaged with scanpipe.exports
Json = dict[str, Any]


def _text(value: str) -> Json:
    return {"@type": "ElectionResults.InternationalizedText", "Text": [{"@type": "ElectionResults.LanguageString", "Content": value, "Language": "en"}]}


def scope_unit_id(election: Election) -> str:
    return f"scope-{election.id}"


def build_results(election: Election, counts: Mapping[tuple[str, str, str], int], *, contests: Sequence[str], status: str,
                  generated_at: datetime, software: str, notes: str | None = None) -> Json:
    """An election report of ``counts`` (``{(precinct, contest, option): votes}``) for ``contests``."""
    precincts = sorted({p for p, c, _ in counts if c in contests}, key=[p.id for p in election.precincts].index)
    names = {p.id: p.name for p in election.precincts}
    units: list[Json] = [{"@id": p, "@type": "ElectionResults.ReportingUnit", "Type": "precinct", "Name": _text(names[p])} for p in precincts]
    units.append({"@id": scope_unit_id(election), "@type": "ElectionResults.ReportingUnit", "Type": "other", "OtherType": "election scope",
                  "Name": _text(election.name), "ComposingGpUnitIds": list(precincts)})
    candidates: list[Json] = []
    out_contests: list[Json] = []
    for seq, cid in enumerate(contests, start=1):
        contest = election.contest(cid)
        selections = []
        for oseq, option in enumerate(contest.options, start=1):
            votes = [{"@type": "ElectionResults.VoteCounts", "GpUnitId": p, "Type": "total", "Count": counts[(p, cid, option.id)]}
                     for p in precincts if (p, cid, option.id) in counts]
            if contest.kind == "question":
                selections.append({"@id": option.id, "@type": "ElectionResults.BallotMeasureSelection", "Selection": _text(option.name),
                                   "SequenceOrder": oseq, "VoteCounts": votes})
                continue
            sel: Json = {"@id": option.id, "@type": "ElectionResults.CandidateSelection", "SequenceOrder": oseq, "VoteCounts": votes}
            if option.write_in:
                sel["IsWriteIn"] = True
            else:
                candidates.append({"@id": f"cand-{option.id}", "@type": "ElectionResults.Candidate", "BallotName": _text(option.name)})
                sel["CandidateIds"] = [f"cand-{option.id}"]
            selections.append(sel)
        other = [{"@type": "ElectionResults.OtherCounts", "GpUnitId": p,
                  **({"Overvotes": counts[(p, cid, OVER)]} if (p, cid, OVER) in counts else {}),
                  **({"Undervotes": counts[(p, cid, UNDER)]} if (p, cid, UNDER) in counts else {})} for p in precincts]
        item: Json = {"@id": cid, "@type": "ElectionResults.BallotMeasureContest" if contest.kind == "question" else "ElectionResults.CandidateContest",
                      "Name": contest.title, "ElectionDistrictId": scope_unit_id(election), "SequenceOrder": seq,
                      "ContestSelection": selections, "OtherCounts": other}
        if contest.kind != "question":
            item["VotesAllowed"] = contest.vote_for
            item["NumberElected"] = contest.vote_for
        out_contests.append(item)
    day = date.fromisoformat(election.date).isoformat()
    report: Json = {
        "@type": "ElectionResults.ElectionReport", "Format": "precinct-level", "GeneratedDate": _stamp(generated_at),
        "Issuer": f"{election.name}: local board of elections", "IssuerAbbreviation": election.jurisdiction,
        "SequenceStart": 1, "SequenceEnd": 1, "Status": status, "VendorApplicationId": software, "GpUnit": units,
        "Election": [{"@type": "ElectionResults.Election", "ElectionScopeId": scope_unit_id(election), "Name": _text(election.name),
                      "StartDate": day, "EndDate": day, "Type": "general", "Candidate": candidates, "Contest": out_contests,
                      "ExternalIdentifier": [{"@type": "ElectionResults.ExternalIdentifier", "Type": "local-level", "Value": election.id}]}],
    }
    if notes:
        report["Notes"] = notes
    return report


def _stamp(at: datetime) -> str:
    return at.replace(microsecond=0).isoformat().replace("+00:00", "Z")


class ResultsInvalid(ScanpipeError):
    """A results report that does not validate (a bug: it is never written)."""


def validate_results(report: Json) -> None:
    problems = [f"$.{'.'.join(str(p) for p in e.absolute_path)}: {e.message[:300]}" for e in err_validator().iter_errors(report)]
    problems += _reference_problems(report)
    if problems:
        raise ResultsInvalid("results.json does not validate against NIST SP 1500-100 v2:\n  " + "\n  ".join(problems[:20]))


def results_text(report: Json) -> str:
    validate_results(report)
    return json.dumps(report, indent=2, ensure_ascii=False) + "\n"


@cache
def err_validator() -> Draft4Validator:
    schema = json.loads(resources.files("scanpipe.exports").joinpath(SCHEMA_RESOURCE).read_text(encoding="utf-8"))
    Draft4Validator.check_schema(schema)
    formats = FormatChecker(formats=())
    formats.checks("date-time")(_is_date_time)
    formats.checks("date")(_is_date)
    return Draft4Validator(schema, format_checker=formats)


_DATE_TIME = re.compile(r"\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})")


def _is_date_time(value: object) -> bool:
    if not isinstance(value, str):
        return True
    try:
        return bool(_DATE_TIME.fullmatch(value)) and datetime.fromisoformat(value.replace("Z", "+00:00")) is not None
    except ValueError:
        return False


def _is_date(value: object) -> bool:
    if not isinstance(value, str):
        return True
    try:
        return len(value) == 10 and date.fromisoformat(value) is not None
    except ValueError:
        return False


def _reference_problems(report: Json) -> list[str]:
    units = {u["@id"] for u in report.get("GpUnit", [])}
    problems = []
    for i, e in enumerate(report.get("Election", [])):
        if e["ElectionScopeId"] not in units:
            problems.append(f"$.Election[{i}].ElectionScopeId names no GpUnit")
        candidates = {c["@id"] for c in e.get("Candidate", [])}
        for j, c in enumerate(e.get("Contest", [])):
            if c.get("ElectionDistrictId") not in units:
                problems.append(f"$.Election[{i}].Contest[{j}].ElectionDistrictId names no GpUnit")
            for k, s in enumerate(c.get("ContestSelection", [])):
                problems += [f"$.Election[{i}].Contest[{j}].ContestSelection[{k}]: candidate {x} is not listed" for x in s.get("CandidateIds", [])
                             if x not in candidates]
                problems += [f"$.Election[{i}].Contest[{j}].ContestSelection[{k}]: GpUnit {v['GpUnitId']} is not listed"
                             for v in s.get("VoteCounts", []) if v["GpUnitId"] not in units]
    return problems
