"""The report the board certifies, as one JSON-able value (pure): ``report.json`` is this value,
and ``report.html`` / ``report.pdf`` render it (:mod:`scanpipe.recount.render`).

Contents (contract section 8, "Report"): the case; per precinct the certified and recounted
figures of every option, over- and undervotes, and the change; totals over the scope and for
the whole contest; whether the outcome changed; the duplicate reconciliation (examined, match,
mismatch, resolved, new duplicates with their serials, orphans, conflicts, who decided); the
decisions of people (counts per rule, escalations, board rulings); costs and who pays; the
software, the time and the SHA-256 of the data it was built from. Every place a person reads
carries names (``*_name`` beside each id).
"""

from __future__ import annotations

import hashlib
import json
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from scanpipe.recount.figures import (
    OVER,
    UNDER,
    Counts,
    option_names,
    precinct_names,
    rank,
    totals,
)
from scanpipe.recount.progress import Snapshot
from scanpipe.rules.recount import RecountRules
from scanpipe.types import Election

PAIR_COLUMNS = ("examined", "match", "mismatch", "needs_review", "resolved", "new_duplicates", "orphan_duplicate", "orphan_original", "conflict")


@dataclass(frozen=True, slots=True)
class BoardRuling:
    item: str
    contest: str
    votes: tuple[str, ...]
    members: Mapping[str, str]  # member -> for / against / abstain
    at: str


@dataclass(frozen=True, slots=True)
class NewDuplicateFact:
    serial: str
    base_serial: str
    precinct: str | None
    auditors: tuple[str, ...]
    scanned: bool  # printed, scanned back and read as decided
    paper: str = ""  # where its paper is, in words


@dataclass(frozen=True, slots=True)
class ReportInputs:
    election: Election
    rules: RecountRules
    case: dict[str, Any]  # the case as JSON (service.case_json)
    certified: Counts
    snapshot: Snapshot
    recounted: tuple[str, ...]  # precincts whose recount figures stand (all in scope, or those finished at termination)
    costs: dict[str, Any]
    new_duplicates: tuple[NewDuplicateFact, ...]
    board_rulings: tuple[BoardRuling, ...]
    certification: dict[str, Any] | None  # the board's earlier sign-off, with "stale"
    generated_at: datetime
    software: str
    pair_rulings: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)  # serial -> the board's ruling on an orphan or conflict


def data_sha256(case: Mapping[str, Any], certified: Counts, snapshot: Snapshot) -> str:
    """SHA-256 of what the report is built from: the case and its petitions, the certified
    figures of the contest, and per card, serial and decision in scope what was counted."""
    doc = {"case": {k: case[k] for k in ("id", "contest", "precincts", "petitions", "terminated")},
           "certified": sorted([list(k) + [v] for k, v in certified.items() if k[1] == case["contest"]]),
           "counted": [list(map(_plain, row)) for row in snapshot.digest_rows]}
    return hashlib.sha256(json.dumps(doc, sort_keys=True, separators=(",", ":")).encode()).hexdigest()


def _plain(value: object) -> object:
    return list(value) if isinstance(value, tuple) else value


def build_report(inp: ReportInputs) -> dict[str, Any]:
    e, case, snap = inp.election, inp.case, inp.snapshot
    contest = e.contest(case["contest"])
    onames, pnames = option_names(e, contest.id), precinct_names(e)
    labels = [o.id for o in contest.options] + [OVER, UNDER]
    recounted = set(inp.recounted)
    rows: list[dict[str, Any]] = []
    for p in [x.precinct for x in snap.precincts]:
        source = snap.recount if p in recounted else inp.certified
        for label in labels:
            was, now = inp.certified.get((p, contest.id, label), 0), source.get((p, contest.id, label), 0)
            rows.append({"precinct": p, "precinct_name": pnames[p], "option": label, "option_name": onames[label],
                         "certified": was, "recount": now, "change": now - was, "recounted": p in recounted})
    scope_totals = []
    for label in labels:
        was = sum(r["certified"] for r in rows if r["option"] == label)
        now = sum(r["recount"] for r in rows if r["option"] == label)
        scope_totals.append({"option": label, "option_name": onames[label], "certified": was, "recount": now, "change": now - was})
    return {
        "report": "recount", "complete": snap.complete, "state": case["state"], "rule_set": inp.rules.version,
        "case": case, "precincts": rows, "totals": scope_totals, "contest_result": _contest_result(inp, recounted),
        "outcome_changed": inp.costs["outcome_changed"], "progress": _progress(inp), "duplicates": _duplicates(inp),
        "decisions": _decisions(inp), "costs": inp.costs, "rules": inp.rules.as_json(), "certification": inp.certification,
        "generated_at": inp.generated_at.replace(microsecond=0).isoformat().replace("+00:00", "Z"), "software_version": inp.software,
        "data_sha256": data_sha256(case, inp.certified, snap),
        "data_hashed": "the case and its petitions, the certified figures of the contest, and per card, serial and decision in "
                       "the scope what was counted (canonical JSON, SHA-256)",
    }


def _contest_result(inp: ReportInputs, recounted: set[str]) -> dict[str, Any]:
    """The whole contest: certified, and after the recount (recounted precincts as recounted)."""
    e, cid = inp.election, inp.case["contest"]
    contest = e.contest(cid)
    everywhere = [p for p, c, _ in inp.certified if c == cid]
    before = totals(inp.certified, cid, everywhere)
    after = dict(before)
    for (p, c, o), n in inp.snapshot.recount.items():
        if c == cid and p in recounted:
            after[o] = after.get(o, 0) + n - inp.certified.get((p, c, o), 0)
    names = option_names(e, cid)
    b, a = rank(contest, before), rank(contest, after)
    return {"options": [{"option": o.id, "option_name": o.name, "certified": before.get(o.id, 0), "after_recount": after.get(o.id, 0),
                         "change": after.get(o.id, 0) - before.get(o.id, 0)} for o in contest.options],
            "certified_winners": [names[o] for o in b.winners], "certified_tied": [names[o] for o in b.tied],
            "winners_after_recount": [names[o] for o in a.winners], "tied_after_recount": [names[o] for o in a.tied]}


def _progress(inp: ReportInputs) -> dict[str, Any]:
    pnames = precinct_names(inp.election)
    per = [{"precinct": p.precinct, "precinct_name": pnames[p.precinct], "counted": p.counted, "pending": p.pending,
            "certified_ballots": p.certified_ballots, "finished": p.finished,
            "left": dict(Counter(i.reason for i in p.left))} for p in inp.snapshot.precincts]
    return {"precincts": per, "cards_of_no_known_precinct": len(inp.snapshot.unassigned),
            "new_duplicates_to_print_and_scan": list(inp.snapshot.outstanding_new_duplicates)}


def _duplicates(inp: ReportInputs) -> dict[str, Any]:
    pnames = precinct_names(inp.election)
    current = {nd.base_serial: nd for nd in inp.new_duplicates}
    per: dict[str, Counter[str]] = {}
    orphans, conflicts, decided_by = [], [], Counter[str]()
    for pair in inp.snapshot.pairs:
        c = per.setdefault(pair.precinct or "", Counter())
        c["examined"] += 1
        c[pair.base_status.value] += 1
        c["resolved"] += pair.status.value == "resolved"
        c["new_duplicates"] += pair.counted == "new" and pair.serial in current
        ruling = inp.pair_rulings.get(pair.serial)
        if pair.base_status.value.startswith("orphan"):
            orphans.append({"serial": pair.serial, "kind": pair.base_status.value, "status": pair.status.value, "board_ruling": ruling})
        if pair.base_status.value == "conflict":
            conflicts.append({"serial": pair.serial, "status": pair.status.value, "board_ruling": ruling})
        decided_by.update(pair.auditors)
        if ruling is not None:
            decided_by.update(m for m, vote in ruling["members"].items() if vote == "for")
    rows: list[dict[str, Any]] = [{"precinct": p.precinct, "precinct_name": pnames[p.precinct],
                                   **{k: per.get(p.precinct, Counter())[k] for k in PAIR_COLUMNS}} for p in inp.snapshot.precincts]
    total = {k: sum(r[k] for r in rows) for k in PAIR_COLUMNS}
    scope = {p.precinct for p in inp.snapshot.precincts}
    made = [{"serial": nd.serial, "replaces": nd.base_serial, "precinct": nd.precinct, "precinct_name": pnames.get(nd.precinct or "", None),
             "decided_by": list(nd.auditors), "printed_and_scanned": nd.scanned, "paper": nd.paper}
            for nd in inp.new_duplicates if nd.precinct in scope]
    return {"per_precinct": rows, "totals": total, "new_duplicates": made, "orphans": orphans, "conflicts": conflicts,
            "decided_by": dict(sorted(decided_by.items()))}


def _decisions(inp: ReportInputs) -> dict[str, Any]:
    decisions = inp.snapshot.decisions
    names = option_names(inp.election, inp.case["contest"])
    final = [d for d in decisions if d.state.value == "final"]
    people: Counter[str] = Counter(a for d in final for a in d.auditors)
    return {
        "final": len(final), "per_rule": dict(sorted(Counter(d.rule or "(no rule cited)" for d in final).items())),
        "awaiting_second_auditor": sum(d.state.value == "first_half" for d in decisions),
        "escalated_open": sum(d.state.value == "escalated" for d in decisions),
        "board_rulings": [{"item": r.item, "contest": r.contest, "votes": [names.get(v, v) for v in r.votes] or ["no vote"],
                           "members": dict(r.members), "at": r.at} for r in inp.board_rulings],
        "by_person": dict(sorted(people.items())),
    }


def change_per_precinct(report: Mapping[str, Any]) -> list[tuple[str, list[tuple[str, int]]]]:
    """For the chart: per precinct (name), the change of each candidate option (name)."""
    out: dict[str, list[tuple[str, int]]] = {}
    for r in report["precincts"]:
        if not r["option"].startswith("#"):
            out.setdefault(r["precinct_name"], []).append((r["option_name"], r["change"]))
    return list(out.items())


def petition_lines(case: Mapping[str, Any]) -> Sequence[str]:
    return [f"{p['kind']} by {p['petitioner_name']}, filed {p['filed_on']}: {', '.join(p['precinct_names'])}" for p in case["petitions"]]
