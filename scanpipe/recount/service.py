"""The recount case against the store: the library behind ``scanpipe recount ...`` and the case page.

Each function reads what it needs (one :func:`~scanpipe.workflow.standing` at most), calls the
pure core (:mod:`petition`, :mod:`costs`, :mod:`progress`, :mod:`report`) and writes through
:class:`~scanpipe.store.recount.RecountStore` in one transaction. Refusals under the rules are
values (``eligible``/``accepted`` false with reasons: exit 1); bad input and a missing case are
:class:`~scanpipe.errors.ConfigError` (exit 2), raised before anything is written.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from decimal import Decimal
from pathlib import Path
from typing import Any

from scanpipe import __version__
from scanpipe.errors import ConfigError
from scanpipe.recount.certified import read_certified
from scanpipe.recount.costs import CostInput, assess_costs
from scanpipe.recount.petition import (
    EarlierCase,
    PetitionRequest,
    assess_petition,
    contest_precincts,
)
from scanpipe.recount.progress import Snapshot, take_snapshot
from scanpipe.recount.report import (
    BoardRuling,
    NewDuplicateFact,
    ReportInputs,
    build_report,
    data_sha256,
)
from scanpipe.recount.scope import Scope, scope_items
from scanpipe.rules.recount import RecountRules, recount_rules
from scanpipe.store.recount import CaseRecord, RecountStore
from scanpipe.store.repository import Store
from scanpipe.types import Election

SOFTWARE = f"scanpipe {__version__}"


@dataclass(frozen=True)
class Case:
    """A case with what every verb needs: the election, its rule set, petitions, certified figures."""

    election: Election
    rules: RecountRules
    record: CaseRecord
    petitions: tuple[Any, ...]
    certified: dict[tuple[str, str, str], int]

    @property
    def scope(self) -> Scope:
        return Scope(self.record.id, self.record.contest, frozenset(self.record.precincts))

    @property
    def recounted(self) -> tuple[str, ...]:
        """Precincts whose recount figures stand: all in scope, or those finished when it was terminated."""
        if self.record.finished_precincts is not None:
            return self.record.finished_precincts
        return self.record.precincts


def _election(store: Store) -> tuple[Election, RecountRules]:
    election = store.current_election()
    return election, recount_rules(election.jurisdiction)


def load_case(store: Store) -> Case:
    """The current case of the loaded election; ConfigError (exit 2) when there is none."""
    election, rules = _election(store)
    rs = RecountStore(store)
    record = rs.current_case(election.id)
    if record is None:
        raise ConfigError(f"election '{election.id}' ({election.name}) has no recount case: file one with `scanpipe recount petition`")
    return Case(election, recount_rules(record.jurisdiction), record, tuple(rs.petitions(record.id)), rs.certified_counts(record.certified_import))


def active_scope(store: Store) -> Scope | None:
    """The scope of the case not yet certified (the queue and the review follow it), else None."""
    record = RecountStore(store).current_case(store.current_election_record().id)
    if record is None or not record.active:
        return None
    precincts = record.finished_precincts if record.finished_precincts is not None else record.precincts
    return Scope(record.id, record.contest, frozenset(precincts))


def _refresh_review(store: Store) -> None:
    """The review's index follows the scope: rebuild it when a case opens, grows or ends."""
    from scanpipe.review.index import refresh_all, review_in_use

    if review_in_use(store):
        refresh_all(store)


# --------------------------------------------------------------------------------------
# certified results


def import_certified(store: Store, path: Path, *, election_id: str | None = None, actor: str | None = None) -> dict[str, Any]:
    """Check and import the certified results (all rows or none)."""
    election, _ = _election(store)
    if election_id is not None and election_id != election.id:
        raise ConfigError(f"{path}: --election {election_id}: results for another election; loaded: '{election.id}' ({election.name})")
    results = read_certified(path, election)
    record = store.current_election_record()
    imp = RecountStore(store).import_certified(results.counts, election_id=election.id, election_sha256=record.sha256,
                                               source=str(path), sha256=results.sha256, format=results.format, status=results.status,
                                               actor=actor)
    contests = sorted(results.contests, key=[c.id for c in election.contests].index)
    return {"import": imp.id, "file": str(path), "sha256": results.sha256, "format": results.format, "rows": imp.rows,
            "election": election.id, "contests": contests, "contest_titles": [election.contest(c).title for c in contests],
            "precincts": sorted({p for p, _, _ in results.counts})}


# --------------------------------------------------------------------------------------
# petitions


def petition(store: Store, req: PetitionRequest, *, actor: str | None = None) -> tuple[dict[str, Any], bool]:
    """Assess a petition; open the case (or add a counterpetition's precincts) when it is allowed."""
    election, rules = _election(store)
    rs = RecountStore(store)
    cases = rs.cases(election.id)
    current = cases[-1] if cases and cases[-1].active else None
    imp = rs.get_import(current.certified_import) if (req.counter and current) else rs.latest_import(election.id)
    if imp is None:
        raise ConfigError(f"no certified results of election '{election.id}' are imported: run `scanpipe recount certified FILE` first")
    certified = rs.certified_counts(imp.id)
    earlier = [_earlier(store, c, rs, req.counter and c is current) for c in cases]
    assessment = assess_petition(election, rules, certified, req, earlier)
    out = assessment.as_json(election)
    out["certified_results"] = {"import": imp.id, "file": imp.source, "sha256": imp.sha256}
    if not assessment.eligible:
        return out, False
    if req.counter:
        assert current is not None
        record = rs.add_counterpetition(current.id, petitioner=req.petitioner, petitioner_option=assessment.petitioner_option or "",
                                        precincts=assessment.precincts, filed_on=req.filed.isoformat(), certified_on=req.certified_on.isoformat(),
                                        assessment=out, actor=actor)
    else:
        record = rs.open_case(election_id=election.id, jurisdiction=rules.code, rule_set=rules.version, contest=req.contest,
                              petitioner=req.petitioner, petitioner_option=assessment.petitioner_option or "", precincts=assessment.precincts,
                              certified_import=imp.id, filed_on=req.filed.isoformat(), certified_on=req.certified_on.isoformat(),
                              assessment=out, actor=actor)
    out["case"] = record.id
    out["scope"] = list(record.precincts)
    _refresh_review(store)
    return out, True


def _earlier(store: Store, record: CaseRecord, rs: RecountStore, need_outcome: bool) -> EarlierCase:
    counter = tuple(p.petitioner for p in rs.petitions(record.id) if p.kind == "counterpetition")
    changed: bool | None = None
    if need_outcome:
        case = load_case(store)
        snap = snapshot(store, case)
        changed = costs_of(case, snap)["outcome_changed"] if snap.complete else None
    return EarlierCase(record.id, record.contest, record.petitioner, record.precincts, record.active and record.state == "open", changed, counter)


# --------------------------------------------------------------------------------------
# where the case stands


def snapshot(store: Store, case: Case) -> Snapshot:
    """One reading of everything counted, cut to the case's scope."""
    from scanpipe.tally import tally_precincts
    from scanpipe.workflow import queue_of, standing

    s = standing(store)
    items = scope_items(queue_of(s), case.scope)
    return take_snapshot(case.election, case.scope, case.certified, s.counts, tally_precincts(s.election, s.counts), items, s.pairs,
                         s.decisions, outstanding_new_duplicates(store, case.scope))


def outstanding_new_duplicates(store: Store, scope: Scope) -> tuple[str, ...]:
    """New duplicates of the scope whose paper is not done (§12-108(c)(2), the lifecycle of
    ``scanpipe duplicates``): not printed, printed but not scanned back, or scanned back and
    not read as decided. A recount is not complete, and its report not final, until none is left."""
    return tuple(nd.serial for nd in store.new_duplicates() if nd.precinct in scope.precincts
                 and (nd.scanned_card_id is None or nd.scan_problem is not None))


def paper_state(nd: Any) -> str:
    """Where a new duplicate's paper is, in words."""
    if nd.scan_problem is not None:
        return f"scanned back, not read as decided: {nd.scan_problem}"
    if nd.stored_at is not None:
        return "printed, scanned back and stored"
    if nd.scanned_card_id is not None:
        return "printed and scanned back"
    return "printed, to scan back" if nd.printed_at is not None else "to print"


def case_json(case: Case) -> dict[str, Any]:
    e, r = case.election, case.record
    contest = e.contest(r.contest)
    names = {o.id: o.name for o in contest.options}
    pnames = {p.id: p.name for p in e.precincts}
    terminated = None
    if r.terminated_at is not None:
        finished = list(r.finished_precincts or ())
        terminated = {"at": _iso(r.terminated_at), "requested_by": r.terminated_by, "reason": r.termination_reason,
                      "finished": finished, "finished_names": [pnames[p] for p in finished],
                      "kept_certified": [p for p in r.precincts if p not in finished],
                      "kept_certified_names": [pnames[p] for p in r.precincts if p not in finished]}
    petitions = [{"kind": p.kind, "petitioner": p.petitioner, "petitioner_name": names.get(p.petitioner, p.petitioner),
                  "side": p.petitioner_option if contest.kind == "question" else None,
                  "side_name": names.get(p.petitioner_option) if contest.kind == "question" else None,
                  "filed_on": p.filed_on, "certified_on": p.certified_on, "deadline": p.assessment.get("deadline"),
                  "precincts": list(p.precincts), "precinct_names": [pnames[x] for x in p.precincts],
                  "margin_percent": p.assessment.get("margin_percent"), "arithmetic": p.assessment.get("arithmetic", [])}
                 for p in case.petitions]
    return {"id": r.id, "election": e.id, "election_name": e.name, "election_date": e.date, "jurisdiction": r.jurisdiction,
            "rule_set": r.rule_set, "contest": r.contest, "contest_title": contest.title, "contest_kind": contest.kind,
            "petitioner": r.petitioner, "petitioner_name": names.get(r.petitioner, r.petitioner),
            "petitioner_option": r.petitioner_option, "petitioner_option_name": names.get(r.petitioner_option, r.petitioner_option),
            "precincts": list(r.precincts), "precinct_names": [pnames[p] for p in r.precincts], "state": r.state,
            "opened_at": _iso(r.opened_at), "petitions": petitions, "terminated": terminated,
            "certified_at": _iso(r.certified_at) if r.certified_at else None}


def _iso(at: datetime) -> str:
    return at.astimezone(UTC).replace(microsecond=0).isoformat().replace("+00:00", "Z")


def status(store: Store) -> dict[str, Any]:
    case = load_case(store)
    snap = snapshot(store, case)
    return status_of(case, snap)


def status_of(case: Case, snap: Snapshot) -> dict[str, Any]:
    pnames = {p.id: p.name for p in case.election.precincts}
    per = []
    for p in snap.precincts:
        left: dict[str, int] = {}
        for item in p.left:
            left[item.reason] = left.get(item.reason, 0) + 1
        per.append({"precinct": p.precinct, "precinct_name": pnames[p.precinct], "cards_counted": p.counted, "cards_pending": p.pending,
                    "certified_ballots": p.certified_ballots, "finished": p.finished, "left": left,
                    "recounted": p.precinct in case.recounted})
    return {"case": case_json(case), "rule_set": case.record.rule_set, "scope": list(case.record.precincts), "precincts": per,
            "cards_of_no_known_precinct": len(snap.unassigned), "new_duplicates_to_print_and_scan": list(snap.outstanding_new_duplicates),
            "complete": snap.complete}


# --------------------------------------------------------------------------------------
# termination


def terminate(store: Store, *, requested_by: str, reason: str, finished: Sequence[str] | None = None,
              actor: str | None = None) -> tuple[dict[str, Any], bool]:
    """Stop the recount at a precinct boundary (§12-106(c)): finished precincts stand, the rest keep their certified figures."""
    case = load_case(store)
    r = case.record
    out: dict[str, Any] = {"case": r.id, "rule_set": r.rule_set, "accepted": False, "reasons": []}
    if not reason.strip():
        raise ConfigError("--reason: say why the recount is terminated")
    if r.state != "open":
        out["reasons"].append(f"recount case {r.id} is already {r.state}")
        return out, False
    names = {o.id: o.name for o in case.election.contest(r.contest).options}
    who = {p.petitioner for p in case.petitions} | {names.get(p.petitioner, "") for p in case.petitions}
    if requested_by not in who:
        out["reasons"].append(f"{requested_by} is not a petitioner or counterpetitioner of case {r.id} "
                              f"({', '.join(sorted(names.get(p.petitioner, p.petitioner) for p in case.petitions))}): only they may ask to terminate it "
                              "(Md. Election Law §12-106(c))")
    snap = snapshot(store, case)
    done = [p.precinct for p in snap.precincts if p.finished]
    if finished is not None:
        unknown = [p for p in finished if p not in r.precincts]
        if unknown:
            raise ConfigError(f"--finished: {', '.join(unknown)} not in the case's scope ({', '.join(r.precincts)})")
        for p in finished:
            progress = snap.progress(p)
            if progress.counted == 0 or progress.pending or progress.left:
                out["reasons"].append(f"precinct {p} cannot be declared finished: {progress.counted} card(s) counted, "
                                      f"{progress.pending + len(progress.left)} awaiting a person")
        done = [p for p in r.precincts if p in set(finished)]
    if out["reasons"]:
        return out, False
    record = RecountStore(store).terminate(r.id, by=requested_by, reason=reason, finished=done, actor=actor)
    _refresh_review(store)
    case = Case(case.election, case.rules, record, case.petitions, case.certified)
    out.update({"accepted": True, "case": case_json(case), "finished": done, "kept_certified": [p for p in r.precincts if p not in done]})
    return out, True


# --------------------------------------------------------------------------------------
# costs


def costs(store: Store, *, actual_cost: Decimal | None = None) -> dict[str, Any]:
    case = load_case(store)
    return costs_of(case, snapshot(store, case), actual_cost=actual_cost)


def costs_of(case: Case, snap: Snapshot, *, actual_cost: Decimal | None = None) -> dict[str, Any]:
    """Who pays, per petition (a counterpetitioner is a petitioner of §12-107(a)); the first petition's answer on top."""
    r = case.record
    everywhere = contest_precincts(case.election, r.contest)
    per = []
    for p in case.petitions:
        mine = tuple(x for x in p.precincts if x in case.recounted)
        inp = CostInput(r.contest, p.petitioner_option, everywhere, mine, p.precincts, actual_cost, case.recounted)
        result = assess_costs(case.election, case.rules, case.certified, snap.recount, inp)
        per.append({"kind": p.kind, "petitioner": p.petitioner, **result})
    out = dict(per[0])
    out["petitions"] = per
    out["complete"] = snap.complete
    if not snap.complete:
        out["note"] = "the recount is not complete: these are the costs so far, on the figures counted until now"
    return out


# --------------------------------------------------------------------------------------
# the report


@dataclass(frozen=True)
class BuiltReport:
    case: Case
    report: dict[str, Any]
    complete: bool


def build(store: Store, *, now: datetime | None = None, loaded: tuple[Case, Snapshot] | None = None) -> BuiltReport:
    """The report of the current case, as a value (nothing written). ``loaded``: the case and
    its snapshot when the caller has them already."""
    case, snap = loaded if loaded is not None else (load_case(store), None)
    snap = snap if snap is not None else snapshot(store, case)
    cost = costs_of(case, snap)
    cj = case_json(case)
    cert = RecountStore(store).certification(case.record.id)
    certification = None
    if cert is not None:
        current = data_sha256(cj, case.certified, snap)
        certification = {"certified_at": _iso(cert.certified_at), "members": list(cert.members), "report_sha256": cert.report_sha256,
                          "data_sha256": cert.data_sha256, "stale": current != cert.data_sha256}
    rulings = {serial: {"ruling": r.ruling.value, "members": dict(r.members), "note": r.note}
               for serial, r in store.board_rulings().items() if serial in {p.serial for p in snap.pairs}}
    inputs = ReportInputs(case.election, case.rules, cj, case.certified, snap, case.recounted, cost, _new_duplicates(store),
                          _board_rulings(store, snap, case), certification, now or datetime.now(UTC), SOFTWARE, rulings)
    return BuiltReport(case, build_report(inputs), snap.complete)


def _new_duplicates(store: Store) -> tuple[NewDuplicateFact, ...]:
    return tuple(NewDuplicateFact(nd.serial, nd.base_serial, nd.precinct, nd.auditors,
                                  nd.scanned_card_id is not None and nd.scan_problem is None, paper_state(nd))
                 for nd in store.new_duplicates())


def _board_rulings(store: Store, snap: Snapshot, case: Case) -> tuple[BoardRuling, ...]:
    from sqlalchemy import select

    from scanpipe.store.models_review import board_vote_table

    mine = {d.id: d for d in snap.decisions}
    t = board_vote_table
    with store._read() as conn:
        votes = conn.execute(select(t.c.decision_id, t.c.member, t.c.vote).order_by(t.c.decision_id, t.c.member)).all()
    members: dict[int, dict[str, str]] = {}
    for v in votes:
        if v.decision_id in mine:
            members.setdefault(v.decision_id, {})[v.member] = v.vote
    out = []
    for did, who in members.items():
        d = mine[did]
        label = f"serial {d.item}" if d.item_kind == "pair" else f"card {_card_name(store, d.item)}"
        out.append(BoardRuling(label, case.election.contest(d.contest).title, d.votes, who, d.created_at))
    return tuple(out)


def _card_name(store: Store, card_id: str) -> str:
    stored = store.get_card(card_id)
    return Path(stored.card.source.path).name if stored is not None else card_id[:12]


REPORT_FILES = ("report.json", "report.html", "report.pdf", "results.json")


def render_files(built: BuiltReport) -> dict[str, bytes]:
    """The four files of a report, in memory (results.json validated against NIST SP 1500-100 v2)."""
    import json

    from scanpipe.recount.figures import combined
    from scanpipe.recount.render import render_html, render_pdf
    from scanpipe.recount.results_err import build_results, results_text

    case, report = built.case, built.report
    r = case.record
    everywhere = contest_precincts(case.election, r.contest)
    recount = {(x["precinct"], r.contest, x["option"]): x["recount"] for x in report["precincts"]}
    figures = combined(case.certified, recount, r.contest, everywhere, case.recounted)
    pnames = {p.id: p.name for p in case.election.precincts}
    notes = (f"Recount of {case.election.contest(r.contest).title} (case {r.id}, rule set {r.rule_set}); recounted: "
             f"{', '.join(pnames[p] for p in case.recounted) or 'none'}; other precincts as certified"
             + ("" if built.complete else "; PRELIMINARY: the recount is not complete"))
    generated = datetime.fromisoformat(report["generated_at"].replace("Z", "+00:00"))
    results = build_results(case.election, figures, contests=[r.contest], status="recount", generated_at=generated, software=SOFTWARE, notes=notes)
    return {"report.json": (json.dumps(report, indent=2, ensure_ascii=False) + "\n").encode("utf-8"),
            "report.html": render_html(report).encode("utf-8"), "report.pdf": render_pdf(report),
            "results.json": results_text(results).encode("utf-8")}


def write_report(store: Store, out: Path, *, actor: str | None = None) -> dict[str, Any]:
    """Build the report, write its four files into ``out`` (each replaced whole) and record their hashes."""
    import hashlib
    import os

    built = build(store)
    files = render_files(built)
    try:
        out.mkdir(parents=True, exist_ok=True)
        for name, data in files.items():
            tmp = out / f".{name}.partial"
            tmp.write_bytes(data)
            os.replace(tmp, out / name)
    except OSError as e:
        from scanpipe.errors import SourceError

        raise SourceError(f"{out}: cannot write the report: {e.strerror or e}") from e
    hashes = {name: hashlib.sha256(data).hexdigest() for name, data in files.items()}
    generated = datetime.fromisoformat(built.report["generated_at"].replace("Z", "+00:00"))
    record = RecountStore(store).record_report(built.case.record.id, data_sha256=built.report["data_sha256"], files=hashes,
                                               folder=str(out.resolve()), complete=built.complete, generated_at=generated, actor=actor)
    cert = built.report["certification"]
    return {"case": built.case.record.id, "report": record.id, "folder": str(out), "complete": built.complete,
            "outcome_changed": built.report["outcome_changed"], "payer": built.report["costs"]["payer"],
            "data_sha256": built.report["data_sha256"], "stale": bool(cert and cert["stale"]),
            "files": {name: {"sha256": hashes[name], "bytes": len(files[name])} for name in files}}


def certify(store: Store, *, members: Sequence[str], report_dir: Path, actor: str | None = None) -> tuple[dict[str, Any], bool]:
    """The board signs off the report in ``report_dir`` (as `recount report` wrote it, the data unchanged since)."""
    import hashlib
    import json

    from scanpipe.review.accounts import usernames_with_role
    from scanpipe.review.index import review_in_use

    case = load_case(store)
    names = [m.strip() for m in members if m.strip()]
    if len(set(names)) != len(names):
        raise ConfigError(f"--member: a name is given twice ({', '.join(names)})")
    if len(names) < 2:
        raise ConfigError("--member: the board certifies: name at least two members present")
    if review_in_use(store):
        board = set(usernames_with_role(store, "board"))
        strangers = [m for m in names if m not in board]
        if strangers:
            raise ConfigError(f"--member: {', '.join(strangers)} not an enabled board account ({', '.join(sorted(board)) or 'none'})")
    files: dict[str, bytes] = {}
    for name in REPORT_FILES:
        path = report_dir / name
        if not path.is_file():
            raise ConfigError(f"{path}: no such file: certify the folder `scanpipe recount report --out DIR` wrote")
        files[name] = path.read_bytes()
    out: dict[str, Any] = {"case": case.record.id, "certified": False, "reasons": []}
    if case.record.state == "certified":
        out["reasons"].append(f"recount case {case.record.id} is already certified")
        return out, False
    snap = snapshot(store, case)
    if not snap.complete:
        from scanpipe.recount.render import left_text

        built = build(store)
        out["reasons"].append(f"the recount is not complete: {left_text(built.report)}")
    report = json.loads(files["report.json"])
    current = data_sha256(case_json(case), case.certified, snap)
    if report.get("case", {}).get("id") != case.record.id:
        out["reasons"].append(f"{report_dir} is the report of case {report.get('case', {}).get('id')}, not of case {case.record.id}")
    elif report.get("data_sha256") != current:
        out["reasons"].append("the data changed since this report was written (its data SHA-256 differs): write the report again, read it, then certify")
    hashes = {name: hashlib.sha256(data).hexdigest() for name, data in files.items()}
    written = next((r for r in RecountStore(store).reports(case.record.id) if r.files == hashes), None)
    if written is None:
        out["reasons"].append(f"the files in {report_dir} are not a report scanpipe wrote for case {case.record.id}, or were edited since")
    if out["reasons"]:
        return out, False
    assert written is not None
    record = RecountStore(store).certify(case.record.id, written.id, members=names, data_sha256=current, report_sha256=hashes["report.json"],
                                         files=hashes, frozen=files, actor=actor)
    _refresh_review(store)
    out.update({"certified": True, "members": list(record.members), "certified_at": _iso(record.certified_at), "report": written.id,
                "report_sha256": record.report_sha256, "data_sha256": record.data_sha256, "files": hashes})
    return out, True
