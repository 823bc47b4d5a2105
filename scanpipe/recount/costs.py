"""Who pays for a recount, and how much (pure): every statutory test with its inputs and result.

Maryland (§12-107): the petitioner pays unless (i) the outcome changed, (ii) the petitioner
gained votes equal to 2 % or more of the votes cast for the office (or on the question) in the
recounted precincts, or (iii) the certified margin between the apparent winner and the top
losing candidate (a question: for and against) is 0.25 % or less of the votes for those two;
then the county pays. Arkansas (§7-5-319(g), (h)): the petitioner pays the actual cost, never
more than 25 cents per vote cast in the requested precincts nor $2,500 for a county, whichever
is less; refunded when the outcome changed. The rule set's choices say which figures are used
(certified or recounted) where the statute does not.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from decimal import Decimal
from typing import Any

from scanpipe.recount.figures import (
    OVER,
    UNDER,
    Counts,
    Standing,
    at_least,
    at_most,
    combined,
    compare_text,
    describe_standing,
    fmt,
    money,
    option_names,
    rank,
    standing_over,
    totals,
)
from scanpipe.rules.recount import RecountRules
from scanpipe.types import Election


@dataclass(frozen=True, slots=True)
class CostInput:
    contest: str
    petitioner_option: str  # the candidate, or the side of a question the petition supports
    all_precincts: tuple[str, ...]  # where the contest was on the ballot
    recounted: tuple[str, ...]  # the precincts recounted (for a terminated case: those finished)
    requested: tuple[str, ...]  # the precincts the petition requested
    actual_cost: Decimal | None = None
    case_recounted: tuple[str, ...] | None = None  # every precinct the case recounted (petition and counterpetitions)


def outcome_test(election: Election, certified: Counts, recount: Counts, inp: CostInput) -> tuple[bool, dict[str, Any], Standing, Standing]:
    """Whether the outcome changed: the certified standing against the standing after the recount."""
    contest = election.contest(inp.contest)
    before = standing_over(election, certified, inp.contest, inp.all_precincts)
    recounted = inp.case_recounted if inp.case_recounted is not None else inp.recounted
    after = rank(contest, totals(combined(certified, recount, inp.contest, inp.all_precincts, recounted), inp.contest, inp.all_precincts))
    names = option_names(election, inp.contest)
    changed = before.outcome != after.outcome
    test = {
        "rule": "outcome_changed", "source": "", "result": changed,
        "inputs": {"certified_winners": list(before.winners), "certified_tied": list(before.tied),
                   "recount_winners": list(after.winners), "recount_tied": list(after.tied),
                   "recounted_precincts": list(recounted)},
        "arithmetic": (f"certified: {describe_standing(election, before)} (won: {_who(before, names)}); after the recount "
                       f"(recounted precincts as recounted, the others as certified): {describe_standing(election, after)} "
                       f"(won: {_who(after, names)}); the outcome {'changed' if changed else 'did not change'}"),
    }
    return changed, test, before, after


def _who(s: Standing, names: dict[str, str]) -> str:
    won = ", ".join(names[o] for o in s.winners) or "nobody outright"
    return won + (f"; tied for the last seat: {', '.join(names[o] for o in s.tied)}" if s.tied else "")


def assess_costs(election: Election, rules: RecountRules, certified: Counts, recount: Counts, inp: CostInput) -> dict[str, Any]:
    """Every statutory test with its inputs and result, who pays and (Arkansas) how much."""
    changed, outcome, before, after = outcome_test(election, certified, recount, inp)
    outcome["source"] = "Md. Election Law §12-107(b)(2)(i)" if rules.cost_gain is not None else "Ark. Code Ann. §7-5-319(h)"
    tests = [outcome]
    out: dict[str, Any] = {"rule_set": rules.version, "jurisdiction": rules.code, "contest": inp.contest,
                           "contest_title": election.contest(inp.contest).title, "outcome_changed": changed,
                           "recounted_precincts": list(inp.recounted)}
    if rules.cost_gain is not None and rules.cost_margin is not None:
        tests.append(_gain_test(election, rules, certified, recount, inp))
        tests.append(_margin_test(election, rules, before))
        out["payer"] = "county" if any(t["result"] for t in tests) else "petitioner"
        out["charge"] = None
        out["refund"] = None
    else:
        charge, cap_tests = _arkansas_charge(election, rules, certified, inp)
        tests += cap_tests
        out["payer"] = "county" if changed and rules.refund_if_outcome_changed else "petitioner"
        out["charge"] = money(charge)
        out["refund"] = bool(changed and rules.refund_if_outcome_changed)
    out["tests"] = tests
    out["why"] = _why(out, tests, rules)
    return out


def _gain_test(election: Election, rules: RecountRules, certified: Counts, recount: Counts, inp: CostInput) -> dict[str, Any]:
    assert rules.cost_gain is not None
    names = option_names(election, inp.contest)
    was = totals(certified, inp.contest, inp.recounted)
    now = totals(recount, inp.contest, inp.recounted)
    option = inp.petitioner_option
    gain = now.get(option, 0) - was.get(option, 0)
    base = sum(n for o, n in was.items() if o not in (OVER, UNDER))
    limit = rules.cost_gain.value
    ok = gain > 0 and at_least(gain, base, limit)
    arithmetic = (f"{names[option]}: certified {fmt(was.get(option, 0))}, recounted {fmt(now.get(option, 0))} in the "
                  f"{len(inp.recounted)} recounted precinct(s): gain {fmt(gain)}; base: the certified votes for every option there, "
                  f"{fmt(base)}; " + (compare_text(gain, base, limit, what="gain share") if gain > 0 else "no gain")
                  + f"; {f'{limit} % or more' if ok else f'less than {limit} %'}")
    return {"rule": "petitioner_gain", "source": rules.cost_gain.source, "result": ok, "arithmetic": arithmetic,
            "inputs": {"option": option, "certified_votes": was.get(option, 0), "recount_votes": now.get(option, 0), "gain": gain,
                       "base_votes": base, "limit_percent": str(limit), "basis": rules.choice("cost_gain_base").choice}}


def _margin_test(election: Election, rules: RecountRules, before: Standing) -> dict[str, Any]:
    assert rules.cost_margin is not None
    names = option_names(election, before.contest)
    limit = rules.cost_margin.value
    ok = at_most(before.margin, before.base, limit)
    w, lo = before.apparent_winner or "", before.top_loser or ""
    arithmetic = (f"certified margin {fmt(before.margin)} = {names.get(w, w)} {fmt(before.votes(w))} − {names.get(lo, lo)} {fmt(before.votes(lo))}"
                  + (" (tied)" if before.tied else "") + f"; base {fmt(before.base)}; " + compare_text(before.margin, before.base, limit, what="margin share")
                  + f"; {f'{limit} % or less' if ok else f'more than {limit} %'}")
    return {"rule": "certified_margin", "source": rules.cost_margin.source, "result": ok, "arithmetic": arithmetic,
            "inputs": {"apparent_winner": before.apparent_winner, "top_loser": before.top_loser, "margin_votes": before.margin,
                       "base_votes": before.base, "limit_percent": str(limit), "basis": rules.choice("cost_margin_when").choice}}


def _arkansas_charge(election: Election, rules: RecountRules, certified: Counts, inp: CostInput) -> tuple[Decimal, list[dict[str, Any]]]:
    assert rules.charge_per_vote is not None and rules.charge_cap_per_county is not None
    per_vote, cap = rules.charge_per_vote.value, rules.charge_cap_per_county.value
    county_of = {p.id: p.county or "(no county)" for p in election.precincts}
    tests: list[dict[str, Any]] = []
    total_cap = Decimal(0)
    for county in sorted({county_of[p] for p in inp.requested}):
        precincts = [p for p in inp.requested if county_of[p] == county]
        votes = sum(n for o, n in totals(certified, inp.contest, precincts).items() if o not in (OVER, UNDER))
        by_vote = per_vote * votes
        limit = min(by_vote, cap)
        total_cap += limit
        tests.append({"rule": "charge_cap", "source": rules.charge_per_vote.source, "result": money(limit),
                      "arithmetic": f"{county}: {fmt(votes)} vote(s) cast × ${money(per_vote)} = ${money(by_vote)}; "
                                    f"the least of that and ${money(cap)} is ${money(limit)}",
                      "inputs": {"county": county, "precincts": precincts, "votes_cast": votes, "per_vote": str(per_vote),
                                 "county_cap": str(cap), "basis": rules.choice("votes_cast").choice}})
    if inp.actual_cost is None:
        charge = total_cap
        text = f"actual cost not given: the most that may be charged is ${money(total_cap)} ({rules.choice('actual_cost_unknown').choice})"
    else:
        charge = min(inp.actual_cost, total_cap)
        text = f"the least of the actual cost ${money(inp.actual_cost)} and the cap ${money(total_cap)} is ${money(charge)}"
    tests.append({"rule": "charge", "source": rules.charge_cap_per_county.source, "result": money(charge), "arithmetic": text,
                  "inputs": {"actual_cost": money(inp.actual_cost) if inp.actual_cost is not None else None, "cap": money(total_cap)}})
    return charge, tests


def _why(out: dict[str, Any], tests: Sequence[dict[str, Any]], rules: RecountRules) -> str:
    if rules.cost_gain is not None:
        met = [t["rule"] for t in tests if t["result"] is True]
        if met:
            return f"the county pays (§12-107(c)): {', '.join(m.replace('_', ' ') for m in met)}"
        return "the petitioner pays: none of the three tests of §12-107(b)(2) is met"
    if out["refund"]:
        return f"the petitioner pays ${out['charge']} in advance and is refunded: the outcome changed (§7-5-319(h))"
    return f"the petitioner pays ${out['charge']} (§7-5-319(g))"
