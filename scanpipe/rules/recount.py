"""The recount numbers of each jurisdiction, as versioned data with their sources.

Every number a recount statute sets (the 5 % margin, the 0.25 % margin, the 2 % gain, the
days to file, 48 hours, 25 cents a vote, $2,500 a county) is a :class:`Figure` here with the
section it comes from; every computation in :mod:`scanpipe.recount` records
``RecountRules.version`` and shows its arithmetic. Where the statute is ambiguous the rule
set names its :class:`Choice` (what it decided and what else the words could mean); the
README lists them. A change of any figure or choice is a new ``version``.

Statute texts: Md. Code, Election Law §§12-101..12-107 (read 2026 from the public code);
Ark. Code Ann. §7-5-319 (version of 2024-10-30, with the 2023 amendments of SB 430 on notice
and refunds).
"""

from __future__ import annotations

from dataclasses import dataclass
from decimal import Decimal
from typing import Any


@dataclass(frozen=True, slots=True)
class Figure:
    """A number the statute sets, with its unit and source."""

    value: Decimal
    unit: str  # "percent" | "days" | "hours" | "dollars" | "dollars per vote"
    source: str
    says: str

    def as_json(self) -> dict[str, str]:
        return {"value": str(self.value), "unit": self.unit, "source": self.source, "says": self.says}

    @property
    def days(self) -> int:
        assert self.unit == "days", self
        return int(self.value)


@dataclass(frozen=True, slots=True)
class Choice:
    """Where the statute can be read more than one way: what this rule set does."""

    key: str
    question: str
    choice: str
    otherwise: str  # the other reading(s)
    source: str

    def as_json(self) -> dict[str, str]:
        return {"key": self.key, "question": self.question, "choice": self.choice, "otherwise": self.otherwise, "source": self.source}


@dataclass(frozen=True, slots=True)
class RecountRules:
    """The recount rules of one jurisdiction (``election.json``'s ``jurisdiction``)."""

    code: str
    name: str
    version: str  # "<code>-<year>.<n>": recorded by every petition, cost and report
    statutes: str
    margin_test: bool  # a petition is refused when the margin exceeds ``margin_limit``
    margin_limit: Figure | None
    file_after_certification: Figure | None  # days after the certification (MD)
    file_after_unofficial: Figure | None  # days after the unofficial results (AR)
    file_before_election_plus: Figure | None  # AR (a)(3): outstanding overseas ballots could change the result
    counter_after_determination: Figure | None  # days after the recount found the outcome changed (MD)
    one_recount_per_candidate: bool
    questions_may_be_petitioned: bool
    cost_gain: Figure | None  # MD: a gain of this share of the votes in the recounted precincts
    cost_margin: Figure | None  # MD: a certified margin of this share or less
    charge_per_vote: Figure | None  # AR
    charge_cap_per_county: Figure | None  # AR
    refund_if_outcome_changed: bool
    notice_within: Figure | None  # AR: hours to notify the candidates
    official_ballot: str
    choices: tuple[Choice, ...]

    def choice(self, key: str) -> Choice:
        return next(c for c in self.choices if c.key == key)

    def as_json(self) -> dict[str, Any]:
        figures = {name: f.as_json() for name in FIGURE_FIELDS if (f := getattr(self, name)) is not None}
        return {"code": self.code, "name": self.name, "version": self.version, "statutes": self.statutes,
                "margin_test": self.margin_test, "one_recount_per_candidate": self.one_recount_per_candidate,
                "questions_may_be_petitioned": self.questions_may_be_petitioned,
                "refund_if_outcome_changed": self.refund_if_outcome_changed, "official_ballot": self.official_ballot,
                "figures": figures, "choices": [c.as_json() for c in self.choices]}


FIGURE_FIELDS = ("margin_limit", "file_after_certification", "file_after_unofficial", "file_before_election_plus",
                 "counter_after_determination", "cost_gain", "cost_margin", "charge_per_vote", "charge_cap_per_county",
                 "notice_within")

_MULTI_SEAT = Choice(
    "multi_seat_margin", "Which two candidates the margin is measured between when a contest elects several (vote for N)",
    "the apparent winner with the fewest votes (N-th place) and the defeated candidate with the most (N+1-th place)",
    "the first-placed winner and the top loser (a far larger margin)", "Md. Election Law §12-101(a)(2), §12-107(b)(2)(iii)")
_TIE = Choice(
    "tie", "Who is the apparent winner when the certified results tie for the last seat",
    "nobody in the tie: every tied candidate is a defeated candidate who may petition, the margin is 0; a recount that "
    "ends in a tie for the last seat has changed the outcome (the apparent winner no longer won)",
    "the candidate listed first, or the one a lot would later choose", "Md. Election Law §12-101(a)(1)")

MD = RecountRules(
    code="MD", name="Maryland", version="MD-2026.1", statutes="Md. Code, Election Law §§12-101 to 12-107",
    margin_test=True,
    margin_limit=Figure(Decimal("5"), "percent", "Md. Election Law §12-101(a)(2); §12-103(a)(2)",
                        "a candidate may not petition if the margin between an apparent winner and the top losing candidate is "
                        "greater than 5 % of the total votes cast for those candidates; a voter may not petition on a question "
                        "if for and against differ by more than 5 %"),
    file_after_certification=Figure(Decimal("3"), "days", "Md. Election Law §12-101(d); §12-103(d)",
                                    "the petition must be filed within 3 days after the results are certified"),
    file_after_unofficial=None, file_before_election_plus=None,
    counter_after_determination=Figure(Decimal("2"), "days", "Md. Election Law §12-102; §12-104(d)",
                                       "when the petition named some precincts only and, on completion of the recount, the "
                                       "outcome changed, a counterpetition for the other precincts within 2 days of that determination"),
    one_recount_per_candidate=False, questions_may_be_petitioned=True,
    cost_gain=Figure(Decimal("2"), "percent", "Md. Election Law §12-107(b)(2)(ii)",
                     "the petitioner is not liable when they gained votes equal to 2 % or more of the total votes cast for the "
                     "office or on the question in all precincts being recounted"),
    cost_margin=Figure(Decimal("0.25"), "percent", "Md. Election Law §12-107(b)(2)(iii)",
                       "the petitioner is not liable when the margin between an apparent winner and the top losing candidate "
                       "is 0.25 % or less of the votes cast for those candidates (a question: for and against)"),
    charge_per_vote=None, charge_cap_per_county=None, refund_if_outcome_changed=False, notice_within=None,
    official_ballot="the paper ballot; a duplicate counts once reconciled with its original (Md. Election Law §12-108(d))",
    choices=(
        Choice("question_base", "The base of a question's 5 % (§12-103(a)(2) names no base)",
               "the votes cast for and against the question (for + against), as for a candidate's two",
               "all ballots cast in the election, or all ballots carrying the question (undervotes included)",
               "Md. Election Law §12-103(a)(2)"),
        Choice("cost_margin_when", "Whether the 0.25 % margin of §12-107(b)(2)(iii) is taken before or after the recount",
               "before: the certified margin over the whole contest (known when the petition is filed)",
               "after: the margin the recount finds", "Md. Election Law §12-107(b)(2)(iii)"),
        Choice("cost_gain_base", "Whether the 2 % gain is measured against the certified or the recounted total of the recounted precincts",
               "the certified total of votes for every option of the contest in the recounted precincts",
               "the recount's total in those precincts", "Md. Election Law §12-107(b)(2)(ii)"),
        Choice("days", "How 'within 3 days after' (and 2 days) are counted",
               "calendar days: the last day to file is the certification date plus 3 (a weekend is not skipped)",
               "business days, or the next business day when the last day is a weekend or holiday",
               "Md. Election Law §12-101(d)"),
        Choice("counterpetitioner", "Who may file a counterpetition for a candidate contest",
               "a candidate for the office other than the petitioner (§12-104 says, for a question, a voter eligible to vote on it)",
               "only the apparent winner of the certified results", "Md. Election Law §12-102; §12-104(a)"),
        Choice("terminated_precincts", "What a terminated recount (§12-106(c)) counts",
               "precincts finished when it stopped count as recounted; the others keep their certified figures",
               "the certified figures everywhere", "Md. Election Law §12-106(c)"),
        _MULTI_SEAT, _TIE,
    ),
)

AR = RecountRules(
    code="AR", name="Arkansas", version="AR-2026.1", statutes="Ark. Code Ann. §7-5-319",
    margin_test=False, margin_limit=None, file_after_certification=None,
    file_after_unofficial=Figure(Decimal("2"), "days", "Ark. Code Ann. §7-5-319(a)(2)",
                                 "no later than 2 days after the county board declares the preliminary and unofficial results"),
    file_before_election_plus=Figure(Decimal("7"), "days", "Ark. Code Ann. §7-5-319(a)(3)",
                                     "when outstanding overseas ballots (with uncanvassed provisional ballots) could change the "
                                     "result: before the board certifies, or before noon on the 7th day after the election"),
    counter_after_determination=None, one_recount_per_candidate=True, questions_may_be_petitioned=False,
    cost_gain=None, cost_margin=None,
    charge_per_vote=Figure(Decimal("0.25"), "dollars per vote", "Ark. Code Ann. §7-5-319(g)",
                           "the actual cost, but never more than 25 cents per vote cast in the requested precincts"),
    charge_cap_per_county=Figure(Decimal("2500"), "dollars", "Ark. Code Ann. §7-5-319(g)",
                                 "nor more than $2,500 for the county, whichever is less"),
    refund_if_outcome_changed=True,
    notice_within=Figure(Decimal("48"), "hours", "Ark. Code Ann. §7-5-319(i)", "the county board notifies the candidates within 48 hours"),
    official_ballot="the paper ballot; where a voting machine has a voter-verified paper audit trail, the VVPAT is the official "
                    "ballot (Ark. Code Ann. §7-5-319(c)); the board certifies the last recount (§7-5-319(b))",
    choices=(
        Choice("votes_cast", "What 'votes cast in the requested precincts' means for the 25-cent cap",
               "the certified votes for every option of the recounted contest in the requested precincts",
               "all ballots cast in those precincts (turnout), which the certified contest results do not carry",
               "Ark. Code Ann. §7-5-319(g)"),
        Choice("overseas_deadline", "The deadline of §7-5-319(a)(3) ('before certification or before noon on the 7th day')",
               "the earlier of the two: filed before the certification date and no later than the 7th day after the election",
               "the later of the two", "Ark. Code Ann. §7-5-319(a)(3)"),
        Choice("actual_cost_unknown", "The charge when the actual cost is not yet known",
               "the cap (the least of 25 cents a vote and $2,500 a county) is what may be collected in advance",
               "nothing until the actual cost is known", "Ark. Code Ann. §7-5-319(g)"),
        Choice("days", "How '2 days after' is counted", "calendar days after the date of the unofficial results",
               "business days", "Ark. Code Ann. §7-5-319(a)(2)"),
        _MULTI_SEAT, _TIE,
    ),
)

RECOUNT_RULES: dict[str, RecountRules] = {r.code: r for r in (MD, AR)}


def recount_rules(code: str) -> RecountRules:
    """The recount rule set of a jurisdiction code (validated when the election is loaded)."""
    return RECOUNT_RULES[code]
