"""The recount part of ``scanpipe demo``: certified results that differ from the cards, a
petition, the count of what the case needs, the costs, the report and the board's sign-off.

The demo knows the truth of every mark (the generator wrote it), so it can play every part:
the canvass (certified figures from the truth, with a few votes moved between the two leading
candidates in one or two precincts, as a miscount would), the defeated candidate who petitions
for those precincts, two auditors who decide each unclear mark the case needs from the
generator's record of it (circled or partly filled: a vote; erased or damaged: no vote; a
written-in name: a write-in vote), and two board members who certify. Everything else runs
the real library: the same calls as ``scanpipe recount ...``.
"""

from __future__ import annotations

import csv
import io
import json
from collections import Counter
from datetime import date, timedelta
from pathlib import Path
from typing import Any

from scanpipe.decisions import Attestation
from scanpipe.store.repository import Store
from scanpipe.types import Election

AUDITORS = ("demo-auditor-ann", "demo-auditor-bob")
BOARD = ("demo-board-carol", "demo-board-dave")
VOTE_MARKS = {"circled": "md-circle", "small_partial": "md-fill", "none": "md-writein"}  # unclear marks read as votes
NO_VOTE_MARKS = {"erasure": "md-erasure", "damaged": "md-none"}


def truth_counts(election: Election, expected: dict[str, Any], contest: str, decide: dict[str, list[str]]) -> dict[tuple[str, str, str], int]:
    """Per precinct what a careful count finds in ``contest`` (``decide``: card file -> votes people decide)."""
    c = election.contest(contest)
    out: Counter[tuple[str, str, str]] = Counter()
    for card in expected["cards"]:
        reading = card.get("contests", {}).get(contest)
        if reading is None or card.get("kind") == "original":
            continue
        votes = decide.get(card["file"], reading["votes"]) if reading["outcome"] == "pending" else reading["votes"]
        p = card["precinct"]
        if reading["outcome"] == "overvote" or len(votes) > c.vote_for:
            out[(p, contest, "#overvotes")] += 1
            continue
        out[(p, contest, "#undervotes")] += c.vote_for - len(votes)
        for v in votes:
            out[(p, contest, v)] += 1
    from scanpipe.recount.petition import contest_precincts

    precincts = contest_precincts(election, contest)  # a precinct without cards was certified with zeros
    return {(p, contest, o): out[(p, contest, o)] for p in precincts for o in [x.id for x in c.options] + ["#overvotes", "#undervotes"]}


def people_read(card: dict[str, Any], contest: str) -> tuple[list[str], str | None]:
    """What the demo's auditors decide for an unclear contest of a card, and the rule they cite."""
    votes = list(card["contests"][contest]["votes"])
    rule = "md-fill"
    for t in card["targets"]:
        if t["contest"] != contest or t["intent"] != "ambiguous":
            continue
        if t["mark"] in VOTE_MARKS:
            votes.append(t["option"])
            rule = VOTE_MARKS[t["mark"]]
        else:
            rule = NO_VOTE_MARKS.get(t["mark"], "md-none")
    return votes, rule


def miscount(certified: dict[tuple[str, str, str], int], election: Election, contest: str) -> tuple[str, str, list[str]]:
    """Move votes from the true leader to the runner-up until the runner-up leads or ties (a canvass
    error); returns (true leader, runner-up, precincts changed)."""
    c = election.contest(contest)
    totals = Counter({o.id: sum(n for (p, cc, oo), n in certified.items() if oo == o.id) for o in c.options if not o.write_in})
    (leader, lv), (second, sv) = totals.most_common(2)
    to_move = (lv - sv + 1) // 2
    changed = []
    for p in sorted({p for p, _, _ in certified}, key=lambda p: -certified[(p, contest, leader)]):
        if to_move <= 0:
            break
        n = min(to_move, certified[(p, contest, leader)])
        certified[(p, contest, leader)] -= n
        certified[(p, contest, second)] += n
        to_move -= n
        changed.append(p)
    return leader, second, changed


def run_recount_demo(store: Store, directory: Path, expected_path: Path) -> list[str]:
    """The recount of the demo election's first candidate contest, end to end; the summary lines."""
    from scanpipe.recount import service
    from scanpipe.recount.petition import PetitionRequest
    from scanpipe.rules import rule_set
    from scanpipe.workflow import queue, record_decision

    election = store.current_election()
    contest = next(c for c in election.contests if c.kind == "candidate")
    expected = json.loads(expected_path.read_text())
    by_file = {str((expected_path.parent / card["file"]).resolve()): card for card in expected["cards"]}
    decided = {card["file"]: people_read(card, contest.id)[0] for card in expected["cards"]
               if card.get("contests", {}).get(contest.id, {}).get("outcome") == "pending"}
    certified = truth_counts(election, expected, contest.id, decided)
    leader, second, changed = miscount(certified, election, contest.id)
    names = {o.id: o.name for o in contest.options}
    pnames = {p.id: p.name for p in election.precincts}
    path = directory / "certified.csv"
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(["precinct", "contest", "option", "votes"])
    w.writerows([p, c, o, n] for (p, c, o), n in sorted(certified.items()))
    path.write_text(buf.getvalue(), encoding="utf-8")
    service.import_certified(store, path)
    certified_on = date.fromisoformat(election.date) + timedelta(days=10)
    unclear = Counter(i.precinct for i in queue(store) if contest.id in i.contests and i.precinct is not None)
    scope = tuple(sorted(set(changed) | {p for p, _ in unclear.most_common(1)})) or (election.precincts[0].id,)
    req = PetitionRequest(contest.id, leader, certified_on + timedelta(days=1), certified_on, precincts=scope)
    petition, accepted = service.petition(store, req)
    lines = ["", "Recount (Md. Election Law §§12-101..108):",
             f"  certified results ({path.name}) differ from the cards: {names[second]} certified ahead of {names[leader]} "
             f"after {len(changed)} precinct(s) were miscounted",
             f"  petition by {names[leader]} for {contest.title} in {', '.join(pnames[p] for p in scope)}: "
             + ("accepted" if accepted else "refused: " + "; ".join(petition["reasons"]))
             + f" (margin {petition['margin_votes']} = {petition['margin_percent']} %, limit {petition['limit_percent']} %, rule set {petition['rule_set']})"]
    if not accepted:
        return lines
    intent_rules = set(rule_set(election.jurisdiction).intent_rule_codes())
    made = 0
    for item in queue(store):  # the case's scope only
        stored = store.get_card(item.item)
        card = by_file.get(str(Path(stored.card.source.path).resolve())) if stored is not None else None
        if card is None or item.kind != "card" or contest.id not in item.contests:
            continue
        votes, rule = people_read(card, contest.id)
        record_decision(store, election, item=item.item, item_kind="card", contest=contest.id, votes=votes, auditors=list(AUDITORS),
                        rule=rule if rule in intent_rules else None, note="demo: decided from the generator's record of the mark",
                        attestation=Attestation("cli:demo@localhost", accounts=False))
        made += 1
    status = service.status(store)
    lines.append(f"  the count: {made} unclear {contest.title} mark(s) in scope decided by two auditors; the queue now asks about "
                 f"{len(queue(store))} item(s) (other contests and precincts are not asked about while the case is open)")
    for p in status["precincts"]:
        lines.append(f"    {p['precinct_name']:<24} {p['cards_counted']:>4} cards counted, {p['cards_pending']} awaiting a person")
    written = service.write_report(store, directory / "recount-report")
    costs = service.costs(store)
    report = json.loads((directory / "recount-report" / "report.json").read_text())
    for t in report["totals"]:
        if not t["option"].startswith("#"):
            lines.append(f"    {t['option_name']:<24} certified {t['certified']:>4}  recount {t['recount']:>4}  change {t['change']:+d}")
    lines.append(f"  outcome changed: {'yes' if report['outcome_changed'] else 'no'}; costs: {costs['why']}")
    if written["complete"]:
        cert, ok = service.certify(store, members=BOARD, report_dir=directory / "recount-report")
        lines.append(f"  certified by {', '.join(BOARD)}: report.json SHA-256 {cert['report_sha256'][:16]}…" if ok
                     else "  not certified: " + "; ".join(cert["reasons"]))
    else:
        lines.append("  the recount is not complete (see `scanpipe recount status`): the report is preliminary and not certified")
    lines.append(f"  report     {directory / 'recount-report'} (report.html, report.pdf, report.json, results.json)")
    return lines
