"""Whether a recount petition (or counterpetition) is allowed, and until when (pure).

Bad input (an unknown contest, a precinct where the contest was not on the ballot, a
question petition without a side, no certified results for the contest) raises
:class:`~scanpipe.errors.ConfigError` (exit 2). A petition the rules refuse (a petitioner
who won, a margin above the limit, a late or early filing, a second recount by the same
candidate) is an assessment with ``eligible`` false and the reasons (exit 1). Every
assessment records the rule set's version and its arithmetic.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import date, timedelta
from typing import Any

from scanpipe.errors import ConfigError
from scanpipe.recount.figures import (
    Counts,
    Standing,
    at_most,
    compare_text,
    describe_standing,
    fmt,
    percent_text,
    standing_over,
)
from scanpipe.rules.recount import RecountRules
from scanpipe.tally import contests_by_precinct
from scanpipe.types import Contest, Election


@dataclass(frozen=True, slots=True)
class PetitionRequest:
    contest: str
    petitioner: str  # a candidate's option id; for a question, the voter's name
    filed: date
    certified_on: date
    precincts: tuple[str, ...] | None = None  # None: every precinct where the contest was on the ballot
    side: str | None = None  # a question: the option (for / against) the petition supports
    unofficial_on: date | None = None  # Arkansas: the date of the preliminary and unofficial results
    overseas_could_change: bool = False  # Arkansas §7-5-319(a)(3)
    counter: bool = False
    determined_on: date | None = None  # a counterpetition: the day the recount found the outcome changed


@dataclass(frozen=True, slots=True)
class EarlierCase:
    """What a petition needs to know of the cases before it."""

    id: int
    contest: str
    petitioner: str
    precincts: tuple[str, ...]
    open: bool
    outcome_changed: bool | None  # for the open case: what its recount found so far (None: not complete)
    counter_petitioners: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class Assessment:
    eligible: bool
    reasons: tuple[str, ...]
    rules: RecountRules
    contest: Contest
    petitioner: str
    petitioner_option: str | None  # the option whose gain §12-107 measures (a candidate, or a question's side)
    standing: Standing
    deadline: date | None
    filed_in_time: bool
    precincts: tuple[str, ...]
    counter: bool
    case_id: int | None
    arithmetic: tuple[str, ...] = field(default=())
    notice_by: date | None = None

    def as_json(self, election: Election) -> dict[str, Any]:
        s, names = self.standing, {o.id: o.name for o in self.contest.options}
        pnames = {p.id: p.name for p in election.precincts}
        return {
            "eligible": self.eligible, "reasons": list(self.reasons), "rule_set": self.rules.version,
            "jurisdiction": self.rules.code, "kind": "counterpetition" if self.counter else "petition",
            "contest": self.contest.id, "contest_title": self.contest.title,
            "petitioner": self.petitioner, "petitioner_name": names.get(self.petitioner, self.petitioner),
            "side": self.petitioner_option if self.contest.kind == "question" else None,
            "apparent_winner": s.apparent_winner, "apparent_winner_name": names.get(s.apparent_winner or "", None),
            "top_loser": s.top_loser, "top_loser_name": names.get(s.top_loser or "", None), "tied": list(s.tied),
            "margin_votes": s.margin, "base_votes": s.base, "margin_percent": percent_text(s.margin, s.base),
            "limit_percent": str(self.rules.margin_limit.value) if self.rules.margin_test and self.rules.margin_limit else None,
            "deadline": self.deadline.isoformat() if self.deadline else None, "filed_in_time": self.filed_in_time,
            "notice_by": self.notice_by.isoformat() if self.notice_by else None,
            "precincts": list(self.precincts), "precinct_names": [pnames[p] for p in self.precincts],
            "case": self.case_id, "arithmetic": list(self.arithmetic),
        }


def contest_precincts(election: Election, contest: str) -> tuple[str, ...]:
    """Precincts where the contest was on the ballot, in definition order."""
    by = contests_by_precinct(election)
    return tuple(p.id for p in election.precincts if contest in by.get(p.id, []))


def assess_petition(election: Election, rules: RecountRules, certified: Counts, req: PetitionRequest,
                    earlier: Sequence[EarlierCase]) -> Assessment:
    """Check a petition against the rules; raise ConfigError for bad input."""
    contest = _contest(election, req.contest)
    on_ballot = contest_precincts(election, contest.id)
    missing = [p for p in on_ballot if not any(k[0] == p and k[1] == contest.id for k in certified)]
    if missing:
        raise ConfigError(f"the certified results lack contest '{contest.id}' ({contest.title}) in precinct(s) {', '.join(missing)}: "
                          "import them with `scanpipe recount certified FILE`")
    option = _petitioner_option(contest, req)
    standing = standing_over(election, certified, contest.id, on_ballot)
    open_case = next((c for c in earlier if c.open), None)
    precincts = _scope(election, contest, on_ballot, req, open_case)
    reasons: list[str] = []
    arithmetic = [f"certified results of {contest.title} in every precinct where it was on the ballot: {describe_standing(election, standing)}"]
    names = {o.id: o.name for o in contest.options}
    reasons += _who(rules, contest, req, option, standing, names, earlier, open_case)
    if rules.margin_test and rules.margin_limit is not None and not req.counter:
        ok, text = _margin(standing, rules, names)
        arithmetic.append(text)
        if not ok:
            reasons.append(f"the margin between {names[standing.apparent_winner or '']} and {names[standing.top_loser or '']} is more than "
                           f"{rules.margin_limit.value} % of the votes cast for those two ({rules.margin_limit.source})")
    deadline, timing, when = _deadline(election, rules, req, open_case)
    arithmetic.append(when)
    reasons += timing
    in_time = not timing
    notice = req.filed + timedelta(hours=int(rules.notice_within.value)) if rules.notice_within is not None else None
    return Assessment(not reasons, tuple(reasons), rules, contest, req.petitioner, option, standing, deadline, in_time, precincts,
                      req.counter, open_case.id if (req.counter and open_case) else None, tuple(arithmetic), notice)


def _contest(election: Election, cid: str) -> Contest:
    found = next((c for c in election.contests if c.id == cid), None)
    if found is None:
        known = ", ".join(f"{c.id} ({c.title})" for c in election.contests)
        raise ConfigError(f"--contest {cid}: election '{election.id}' has no such contest; its contests: {known}")
    return found


def _petitioner_option(contest: Contest, req: PetitionRequest) -> str:
    ids = {o.id for o in contest.options}
    if contest.kind == "question":
        if req.side is None or req.side not in ids:
            sides = ", ".join(f"{o.id} ({o.name})" for o in contest.options)
            raise ConfigError(f"--side: a petition on {contest.title} names the side it supports: one of {sides}")
        if not req.petitioner.strip():
            raise ConfigError("--petitioner: the voter's name is empty")
        return req.side
    if req.side is not None:
        raise ConfigError(f"--side is for a question; {contest.title} is a candidate contest")
    if req.petitioner not in ids:
        names = ", ".join(f"{o.id} ({o.name})" for o in contest.options if not o.write_in)
        raise ConfigError(f"--petitioner {req.petitioner}: not a candidate of {contest.title}; its candidates: {names}")
    return req.petitioner


def _scope(election: Election, contest: Contest, on_ballot: tuple[str, ...], req: PetitionRequest,
           open_case: EarlierCase | None) -> tuple[str, ...]:
    if req.precincts is None:
        if req.counter and open_case is not None:
            return tuple(p for p in on_ballot if p not in open_case.precincts)
        return on_ballot
    wanted = list(dict.fromkeys(p.strip() for p in req.precincts if p.strip()))
    bad = [p for p in wanted if p not in on_ballot]
    if bad or not wanted:
        where = ", ".join(on_ballot)
        raise ConfigError(f"--precincts: {', '.join(bad) or 'none given'}: {contest.title} was not on the ballot there; it was in {where}")
    return tuple(p for p in on_ballot if p in wanted)


def _who(rules: RecountRules, contest: Contest, req: PetitionRequest, option: str, standing: Standing, names: dict[str, str],
         earlier: Sequence[EarlierCase], open_case: EarlierCase | None) -> list[str]:
    reasons: list[str] = []
    if contest.kind == "question" and not rules.questions_may_be_petitioned:
        reasons.append(f"{rules.name} provides no recount petition on a question ({rules.statutes})")
    if req.counter:
        return reasons + _counter(rules, contest, req, open_case, names)
    if open_case is not None:
        reasons.append(f"a recount is already open (case {open_case.id}, {open_case.contest}): one case at a time")
    if contest.kind == "candidate":
        if next(o for o in contest.options if o.id == option).write_in:
            reasons.append(f"the write-in line of {contest.title} is not a candidate")
        elif rules.margin_test and not standing.defeated(option):
            reasons.append(f"{names[option]} won {contest.title} in the certified results: only a defeated candidate may petition "
                           "(Md. Election Law §12-101(a)(1))")
    if rules.one_recount_per_candidate:
        before = [c for c in earlier if c.contest == contest.id and req.petitioner in (c.petitioner, *c.counter_petitioners)]
        if before:
            reasons.append(f"{names.get(req.petitioner, req.petitioner)} already requested a recount of {contest.title} (case {before[0].id}): "
                           f"one recount per candidate per election ({rules.statutes}(b))")
    return reasons


def _counter(rules: RecountRules, contest: Contest, req: PetitionRequest, open_case: EarlierCase | None, names: dict[str, str]) -> list[str]:
    if rules.counter_after_determination is None:
        return [f"{rules.name} provides no counterpetition"]
    if open_case is None or open_case.contest != contest.id:
        return [f"there is no open recount of {contest.title} to counterpetition"]
    reasons = []
    if contest.kind == "candidate" and req.petitioner == open_case.petitioner:
        reasons.append(f"{names[req.petitioner]} filed the petition; a counterpetition is another candidate's")
    if open_case.outcome_changed is None:
        reasons.append("the recount of the petitioned precincts is not complete: a counterpetition follows its completion")
    elif not open_case.outcome_changed:
        reasons.append("the recount did not change the outcome: a counterpetition is allowed only when it did (§12-102; §12-104(a)(2))")
    if req.precincts is not None and set(req.precincts) & set(open_case.precincts):
        reasons.append(f"a counterpetition names precincts not in the petition; already recounted: {', '.join(sorted(set(req.precincts) & set(open_case.precincts)))}")
    return reasons


def _margin(s: Standing, rules: RecountRules, names: dict[str, str]) -> tuple[bool, str]:
    assert rules.margin_limit is not None
    limit = rules.margin_limit.value
    if s.apparent_winner is None or s.top_loser is None:
        return True, "no margin: fewer than two candidates"
    first, second = s.votes(s.apparent_winner), s.votes(s.top_loser)
    text = (f"margin {fmt(s.margin)} = {names[s.apparent_winner]} {fmt(first)} − {names[s.top_loser]} {fmt(second)}"
            + (" (tied for the last seat)" if s.tied else "") + f"; base {fmt(s.base)} = {fmt(first)} + {fmt(second)}; "
            + compare_text(s.margin, s.base, limit, what="margin share"))
    ok = at_most(s.margin, s.base, limit)
    text += f"; {'not more than' if ok else 'more than'} {limit} % ({rules.margin_limit.source})"
    return ok, text


def _deadline(election: Election, rules: RecountRules, req: PetitionRequest, open_case: EarlierCase | None) -> tuple[date | None, list[str], str]:
    """The last day to file, the timing reasons to refuse, and the arithmetic."""
    if req.counter:
        fig = rules.counter_after_determination
        if fig is None or req.determined_on is None:
            return None, ([] if fig is None else ["--determined-on: a counterpetition needs the date the recount found the outcome changed"]), "no counterpetition deadline"
        last = req.determined_on + timedelta(days=fig.days)
        return last, _window(req.filed, req.determined_on, last, "the determination"), f"deadline {last} = determined {req.determined_on} + {fig.days} days ({fig.source})"
    if rules.file_after_certification is not None:
        fig = rules.file_after_certification
        last = req.certified_on + timedelta(days=fig.days)
        return last, _window(req.filed, req.certified_on, last, "the certification"), f"deadline {last} = certified {req.certified_on} + {fig.days} days ({fig.source})"
    assert rules.file_after_unofficial is not None
    if req.unofficial_on is None:
        raise ConfigError(f"--unofficial-on: in {rules.name} the deadline runs from the preliminary and unofficial results ({rules.file_after_unofficial.source})")
    if req.overseas_could_change and rules.file_before_election_plus is not None:
        fig = rules.file_before_election_plus
        seventh = date.fromisoformat(election.date) + timedelta(days=fig.days)
        last = min(req.certified_on - timedelta(days=1), seventh)
        why = (f"deadline {last} = the earlier of the day before certification ({req.certified_on}) and election day "
               f"{election.date} + {fig.days} days ({seventh}) ({fig.source})")
        return last, _window(req.filed, req.unofficial_on, last, "the unofficial results"), why
    fig = rules.file_after_unofficial
    last = req.unofficial_on + timedelta(days=fig.days)
    return last, _window(req.filed, req.unofficial_on, last, "the unofficial results"), f"deadline {last} = unofficial results {req.unofficial_on} + {fig.days} days ({fig.source})"


def _window(filed: date, start: date, last: date, what: str) -> list[str]:
    if filed < start:
        return [f"filed {filed}, before {what} ({start}): a petition is filed after it"]
    if filed > last:
        return [f"filed {filed}, after the last day to file ({last})"]
    return []
