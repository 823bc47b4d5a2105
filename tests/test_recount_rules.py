"""The recount rules as the statutes read (pure): petitions, deadlines, costs; the issue's worked
examples and the edges (exactly 5 %, exactly 0.25 %, exactly 2 %, a tie)."""

from __future__ import annotations

from datetime import date
from decimal import Decimal

import pytest

from scanpipe.errors import ConfigError
from scanpipe.recount.costs import CostInput, assess_costs
from scanpipe.recount.petition import EarlierCase, PetitionRequest, assess_petition
from scanpipe.rules.recount import AR, FIGURE_FIELDS, MD, RECOUNT_RULES
from tests.helpers import tiny_election

E = tiny_election("MD")
EAR = tiny_election("AR")
ALL = ("P01", "P02", "P03")


def counts(a: int, b: int, *, contest: str = "gov", options: tuple[str, str] = ("gov-a", "gov-b"), where: str = "P01") -> dict[tuple[str, str, str], int]:
    """Certified figures: all of ``a`` and ``b`` in one precinct, nothing elsewhere."""
    out = {}
    for p in ALL:
        mine = p == where
        out[(p, contest, options[0])] = a if mine else 0
        out[(p, contest, options[1])] = b if mine else 0
        for other in E.contest(contest).options:
            out.setdefault((p, contest, other.id), 0)
    return out


def petition(certified, petitioner="gov-b", *, filed=date(2026, 11, 20), certified_on=date(2026, 11, 18), rules=MD, election=E, **kw):
    return assess_petition(election, rules, certified, PetitionRequest("gov" if "side" not in kw else "q1", petitioner, filed, certified_on, **kw), [])


def test_every_rule_set_names_a_version_a_source_for_every_figure_and_its_choices() -> None:
    assert set(RECOUNT_RULES) == {"MD", "AR"}
    for rules in (MD, AR):
        assert rules.version.startswith(rules.code + "-")
        for name in FIGURE_FIELDS:
            figure = getattr(rules, name)
            if figure is not None:
                assert figure.source and figure.says and figure.value >= 0, (rules.code, name)
    assert {c.key for c in MD.choices} >= {"question_base", "cost_margin_when", "cost_gain_base"}
    assert "votes_cast" in {c.key for c in AR.choices}
    assert MD.margin_limit is not None and MD.margin_limit.value == Decimal("5")
    assert MD.cost_margin is not None and MD.cost_margin.value == Decimal("0.25")
    assert AR.charge_per_vote is not None and AR.charge_per_vote.value == Decimal("0.25")
    assert AR.charge_cap_per_county is not None and AR.charge_cap_per_county.value == Decimal("2500")


# --------------------------------------------------------------------------------------
# Maryland petitions: the worked examples and the 5 % edge


def test_worked_example_a_2_5_percent_margin_may_petition() -> None:
    a = petition(counts(10_250, 9_750))
    j = a.as_json(E)
    assert a.eligible and j["margin_votes"] == 500 and j["margin_percent"] == "2.5000" and j["limit_percent"] == "5"
    assert j["apparent_winner"] == "gov-a" and j["top_loser"] == "gov-b" and j["rule_set"] == "MD-2026.1"
    assert any("500 / 20,000 × 100 = 2.5000 %" in line for line in j["arithmetic"])


def test_worked_example_a_5_2_percent_margin_is_refused() -> None:
    a = petition(counts(10_520, 9_480))
    assert not a.eligible and a.as_json(E)["margin_percent"] == "5.2000"
    assert a.reasons == ("the margin between A and B is more than 5 % of the votes cast for those two (Md. Election Law §12-101(a)(2); §12-103(a)(2))",)


def test_exactly_5_percent_is_allowed_and_one_vote_more_is_not() -> None:
    assert petition(counts(10_500, 9_500)).eligible  # 1,000 / 20,000 = 5 %
    over = petition(counts(10_501, 9_500))  # 1,001 / 20,001 = 5.0047 %
    assert not over.eligible
    assert any("exactly: 1,001 × 100 = 100,100 > 5 × 20,001 = 100,005" in line for line in over.arithmetic)


def test_a_margin_that_reads_5_0000_percent_but_exceeds_it_is_refused() -> None:
    a = petition(counts(1_050_001, 950_000))  # 100,001 / 2,000,001 = 5.0000475 %
    assert a.as_json(E)["margin_percent"] == "5.0000" and not a.eligible


def test_a_petitioner_who_won_is_refused() -> None:
    a = petition(counts(10_250, 9_750), petitioner="gov-a")
    assert not a.eligible and a.reasons == ("A won Governor in the certified results: only a defeated candidate may petition (Md. Election Law §12-101(a)(1))",)


def test_the_write_in_line_is_not_a_candidate() -> None:
    assert "the write-in line of Governor is not a candidate" in petition(counts(10_250, 9_750), petitioner="gov-w").reasons


def test_the_deadline_is_3_days_after_certification_and_a_filing_before_it_is_refused() -> None:
    c = counts(10_250, 9_750)
    on_time = petition(c, filed=date(2026, 11, 21))
    assert on_time.eligible and on_time.deadline == date(2026, 11, 21)
    late = petition(c, filed=date(2026, 11, 22))
    assert not late.eligible and late.reasons == ("filed 2026-11-22, after the last day to file (2026-11-21)",) and not late.filed_in_time
    early = petition(c, filed=date(2026, 11, 17))
    assert not early.eligible and early.reasons == ("filed 2026-11-17, before the certification (2026-11-18): a petition is filed after it",)


def test_a_tie_makes_both_defeated_with_a_zero_margin() -> None:
    for who in ("gov-a", "gov-b"):
        a = petition(counts(10_000, 10_000), petitioner=who)
        assert a.eligible and a.standing.margin == 0 and set(a.standing.tied) == {"gov-a", "gov-b"} and a.standing.winners == ()


def test_bad_input_is_an_error_not_a_refusal() -> None:
    c = counts(10_250, 9_750)
    with pytest.raises(ConfigError, match="--contest mayor: election 'demo-2026' has no such contest"):
        assess_petition(E, MD, c, PetitionRequest("mayor", "gov-b", date(2026, 11, 20), date(2026, 11, 18)), [])
    with pytest.raises(ConfigError, match="--petitioner gov-z: not a candidate of Governor"):
        petition(c, petitioner="gov-z")
    with pytest.raises(ConfigError, match="--precincts: P09: Governor was not on the ballot there"):
        petition(c, precincts=("P09",))
    with pytest.raises(ConfigError, match="lack contest 'gov'"):
        petition({k: v for k, v in c.items() if k[0] != "P02"})


def test_a_question_measures_for_against_and_needs_a_side() -> None:
    c = counts(5_100, 4_900, contest="q1", options=("q1-for", "q1-against"))
    a = assess_petition(E, MD, c, PetitionRequest("q1", "Vera Voter", date(2026, 11, 20), date(2026, 11, 18), side="q1-against"), [])
    j = a.as_json(E)
    assert a.eligible and j["margin_percent"] == "2.0000" and j["base_votes"] == 10_000 and a.petitioner_option == "q1-against"
    with pytest.raises(ConfigError, match="--side: a petition on Question 1 names the side it supports"):
        assess_petition(E, MD, c, PetitionRequest("q1", "Vera Voter", date(2026, 11, 20), date(2026, 11, 18)), [])


def test_a_multi_seat_contest_measures_the_last_winner_against_the_top_loser() -> None:
    c = {(p, "council", o): 0 for p in ALL for o in ("c-1", "c-2", "c-3")}
    c.update({("P01", "council", "c-1"): 9_000, ("P01", "council", "c-2"): 5_100, ("P01", "council", "c-3"): 4_900})
    a = assess_petition(E, MD, c, PetitionRequest("council", "c-3", date(2026, 11, 20), date(2026, 11, 18)), [])
    assert a.eligible and a.standing.winners == ("c-1", "c-2") and a.standing.apparent_winner == "c-2" and a.standing.margin == 200


def test_one_case_at_a_time() -> None:
    open_case = EarlierCase(1, "gov", "gov-b", ("P01",), True, None)
    a = assess_petition(E, MD, counts(10_250, 9_750), PetitionRequest("gov", "gov-b", date(2026, 11, 20), date(2026, 11, 18)), [open_case])
    assert not a.eligible and a.reasons == ("a recount is already open (case 1, gov): one case at a time",)


def test_a_counterpetition_needs_a_changed_outcome_and_the_other_precincts() -> None:
    case = EarlierCase(1, "gov", "gov-b", ("P01",), True, True)
    req = PetitionRequest("gov", "gov-a", date(2026, 12, 2), date(2026, 11, 18), counter=True, determined_on=date(2026, 12, 1))
    a = assess_petition(E, MD, counts(10_250, 9_750), req, [case])
    assert a.eligible and a.precincts == ("P02", "P03") and a.deadline == date(2026, 12, 3)
    unchanged = assess_petition(E, MD, counts(10_250, 9_750), req, [EarlierCase(1, "gov", "gov-b", ("P01",), True, False)])
    assert unchanged.reasons == ("the recount did not change the outcome: a counterpetition is allowed only when it did (§12-102; §12-104(a)(2))",)


# --------------------------------------------------------------------------------------
# Arkansas petitions


def test_arkansas_has_no_margin_test_and_lets_a_winner_petition_once() -> None:
    c = counts(15_000, 5_000)
    a = petition(c, petitioner="gov-a", rules=AR, election=EAR, unofficial_on=date(2026, 11, 4), filed=date(2026, 11, 6))
    j = a.as_json(EAR)
    assert a.eligible and j["limit_percent"] is None and j["deadline"] == "2026-11-06" and j["notice_by"] == "2026-11-08"
    again = assess_petition(EAR, AR, c, PetitionRequest("gov", "gov-a", date(2026, 11, 6), date(2026, 11, 18), unofficial_on=date(2026, 11, 4)),
                            [EarlierCase(1, "gov", "gov-a", ALL, False, None)])
    assert not again.eligible and "one recount per candidate per election" in again.reasons[0]
    late = petition(c, rules=AR, election=EAR, unofficial_on=date(2026, 11, 4), filed=date(2026, 11, 7))
    assert late.reasons == ("filed 2026-11-07, after the last day to file (2026-11-06)",)
    with pytest.raises(ConfigError, match="--unofficial-on"):
        petition(c, rules=AR, election=EAR)


def test_arkansas_outstanding_overseas_ballots_move_the_deadline() -> None:
    a = petition(counts(10, 9), rules=AR, election=EAR, unofficial_on=date(2026, 11, 4), filed=date(2026, 11, 9), overseas_could_change=True,
                 certified_on=date(2026, 11, 18))
    assert a.eligible and a.deadline == date(2026, 11, 10)  # the earlier of the day before certification and election day + 7


# --------------------------------------------------------------------------------------
# Costs


def cost(certified, recount, *, rules=MD, election=E, petitioner="gov-b", recounted=("P01",), actual=None):
    inp = CostInput("gov", petitioner, ALL, recounted, recounted, actual)
    return assess_costs(election, rules, certified, recount, inp)


def test_worked_example_a_margin_of_40_in_20000_the_county_pays() -> None:
    c = counts(10_020, 9_980)
    out = cost(c, c)
    tests = {t["rule"]: t for t in out["tests"]}
    assert out["payer"] == "county" and out["rule_set"] == "MD-2026.1" and not out["outcome_changed"]
    assert tests["certified_margin"]["result"] is True and tests["certified_margin"]["inputs"]["margin_votes"] == 40
    assert "40 / 20,000 × 100 = 0.2000 %" in tests["certified_margin"]["arithmetic"]
    assert tests["petitioner_gain"]["result"] is False and tests["outcome_changed"]["result"] is False


def test_exactly_0_25_percent_the_county_pays_and_just_above_the_petitioner_pays() -> None:
    exactly = counts(10_025, 9_975)  # 50 / 20,000
    assert cost(exactly, exactly)["payer"] == "county"
    above = counts(10_026, 9_974)  # 52 / 20,000 = 0.26 %
    out = cost(above, above)
    assert out["payer"] == "petitioner" and out["why"] == "the petitioner pays: none of the three tests of §12-107(b)(2) is met"


def test_a_gain_of_exactly_2_percent_makes_the_county_pay() -> None:
    c = counts(12_000, 8_000)  # margin 20 %: only the gain test can help
    gained = dict(c)
    gained[("P01", "gov", "gov-b")] = 8_400  # +400 of 20,000 certified votes there = 2 %
    out = cost(c, gained)
    gain = next(t for t in out["tests"] if t["rule"] == "petitioner_gain")
    assert gain["result"] is True and gain["inputs"]["gain"] == 400 and gain["inputs"]["base_votes"] == 20_000 and out["payer"] == "county"
    gained[("P01", "gov", "gov-b")] = 8_399
    assert cost(c, gained)["payer"] == "petitioner"


def test_a_recount_that_changes_the_winner_makes_the_county_pay() -> None:
    c = counts(10_300, 9_700)
    flipped = dict(c)
    flipped[("P01", "gov", "gov-a")], flipped[("P01", "gov", "gov-b")] = 9_700, 10_300
    out = cost(c, flipped)
    assert out["outcome_changed"] and out["payer"] == "county"


def test_a_recount_ending_in_a_tie_changed_the_outcome() -> None:
    c = counts(10_001, 9_999)
    tied = dict(c)
    tied[("P01", "gov", "gov-a")] = 10_000
    tied[("P01", "gov", "gov-b")] = 10_000
    out = cost(c, tied)
    test = out["tests"][0]
    assert out["outcome_changed"] and test["inputs"]["recount_tied"] == ["gov-a", "gov-b"] and test["inputs"]["recount_winners"] == []


def test_precincts_not_recounted_keep_their_certified_figures() -> None:
    c = counts(10_300, 9_700, where="P02")
    recount = {k: (0 if k[0] == "P02" else v) for k, v in c.items()}  # P02 "recounted" as zero, but it is not in the recount
    assert not cost(c, recount, recounted=("P01",))["outcome_changed"]


def test_arkansas_charges_the_least_of_the_actual_cost_25_cents_a_vote_and_2500_a_county() -> None:
    c = counts(3_000, 2_000)  # 5,000 votes: $1,250 by vote
    out = cost(c, c, rules=AR, election=EAR, actual=Decimal("1800"))
    assert out["charge"] == "1250.00" and out["payer"] == "petitioner" and out["refund"] is False
    assert cost(c, c, rules=AR, election=EAR, actual=Decimal("900"))["charge"] == "900.00"
    big = counts(30_000, 20_000)  # 50,000 votes: $12,500 by vote, capped at $2,500
    assert cost(big, big, rules=AR, election=EAR, actual=Decimal("9000"))["charge"] == "2500.00"
    assert cost(big, big, rules=AR, election=EAR)["charge"] == "2500.00"  # the cap, until the actual cost is known


def test_arkansas_refunds_when_the_outcome_changed() -> None:
    c = counts(10_300, 9_700)
    flipped = dict(c)
    flipped[("P01", "gov", "gov-a")], flipped[("P01", "gov", "gov-b")] = 9_000, 11_000
    out = cost(c, flipped, rules=AR, election=EAR, actual=Decimal("100"))
    assert out["refund"] is True and out["payer"] == "county" and out["charge"] == "100.00"
