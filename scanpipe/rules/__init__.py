"""Recount rule sets per jurisdiction, as versioned data with the source of every rule.

``election.json``'s ``jurisdiction`` selects one (:func:`rule_set`). A rule set says who
decides voter intent (one person or a two-person team), which voter-intent rules an
auditor cites, how many board members must be present for a board decision, and how the
reports name the law they follow. Every rule carries its :class:`Source`: the statute, the
regulation (COMAR), or the local board's own policy where the law is silent, so a report
or a decision never claims a statute for what is only a local choice.

A rule set's :attr:`RuleSet.id` (``MD-2026.1``) is stored with every decision, board
ruling, sign-off, new duplicate and reconciliation, so a later change of the rules never
rewrites what was decided under the earlier ones. Change :attr:`RuleSet.version` whenever
a rule's content changes.

The sources cited were read from the public texts of Md. Election Law §12-108 and COMAR
33.08.02 / 33.08.04 / 33.12.02; Ark. Code Ann. §7-5-319 is cited for what it says (the
county board of election commissioners conducts the recount). Where this module says
"local policy" the law sets no rule and the value is the board's to change.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum


class SourceKind(StrEnum):
    STATUTE = "statute"
    REGULATION = "regulation"
    LOCAL_POLICY = "local policy"


@dataclass(frozen=True, slots=True)
class Source:
    """Where a rule comes from: its kind and citation, and what the cited text says."""

    kind: SourceKind
    citation: str
    says: str = ""

    def __str__(self) -> str:
        return f"{self.citation} ({self.kind.value})"


@dataclass(frozen=True, slots=True)
class IntentRule:
    """A voter-intent rule an auditor cites with a decision."""

    code: str
    description: str
    source: Source


@dataclass(frozen=True, slots=True)
class RuleSet:
    code: str
    name: str
    version: str
    two_auditors: bool  # a decision is final only when two different auditors agree
    two_auditors_source: Source
    intent_rules: tuple[IntentRule, ...]
    board_quorum: int  # board members who must be present for a board decision
    board_quorum_source: Source
    duplicates_source: Source  # the law on duplicates and their originals (report headings)
    comparison_source: Source  # which contests a duplicate must carry (mailed vs provisional)
    missing_record_source: Source  # a missing original or a serial used twice: the board's question
    examine_source: Source  # every pair is examined
    new_duplicate_source: Source  # a mismatch makes a new duplicate that counts
    store_source: Source  # a duplicate is stored with its original

    @property
    def id(self) -> str:
        """``<code>-<version>``, stored with every decision and computation."""
        return f"{self.code}-{self.version}"

    def intent_rule_codes(self) -> tuple[str, ...]:
        return tuple(r.code for r in self.intent_rules)

    def intent_choices(self) -> tuple[tuple[str, str], ...]:
        """``(code, description)`` of each voter-intent rule, for forms."""
        return tuple((r.code, r.description) for r in self.intent_rules)

    def report_heading(self, what: str) -> str:
        """A report's title naming the law it follows in this jurisdiction."""
        return f"{what} ({self.duplicates_source.citation})"


_MD_INTENT = Source(SourceKind.REGULATION, "COMAR 33.08.02",
                    "the standards for determining voter intent (COMAR 33.08.04.05B makes duplicating teams use them)")
_MD_LAW = "Md. Election Law §12-108"

MD = RuleSet(
    code="MD",
    name="Maryland",
    version="2026.1",
    two_auditors=True,
    two_auditors_source=Source(
        SourceKind.REGULATION, "COMAR 33.12.02.05; COMAR 33.08.04.02",
        "the local board conducts the recount with its staff and teams; canvass teams are bipartisan to the extent "
        "practicable (two people of different parties read each ballot)"),
    intent_rules=(
        IntentRule("md-fill", "The target is filled, partly filled, checked or crossed", _MD_INTENT),
        IntentRule("md-circle", "The voter circled the option or its name", _MD_INTENT),
        IntentRule("md-erasure", "An erasure or correction shows the voter's final choice", _MD_INTENT),
        IntentRule("md-writein", "A write-in name is written with or without the target marked", _MD_INTENT),
        IntentRule("md-consistent", "The voter's marking pattern across the card shows intent", _MD_INTENT),
        IntentRule("md-none", "No discernible intent: no vote in the contest", _MD_INTENT),
    ),
    board_quorum=2,
    board_quorum_source=Source(SourceKind.LOCAL_POLICY, "the local board's rules of procedure",
                               "members present for a board decision; a majority of those present decides"),
    duplicates_source=Source(SourceKind.STATUTE, f"{_MD_LAW}(d)",
                             "in a recount the local board examines each voter-verifiable paper record and its duplicate"),
    comparison_source=Source(SourceKind.STATUTE, f"{_MD_LAW}(a)(2)(ii)",
                             "a duplicate of a mailed absentee ballot reflects the voter's intent; of a provisional ballot, "
                             "only the votes for contests the voter is eligible to vote in"),
    missing_record_source=Source(SourceKind.STATUTE, f"{_MD_LAW}(c)",
                                 "the local board preserves the paper record of each duplicate and stores the two together"),
    examine_source=Source(SourceKind.STATUTE, f"{_MD_LAW}(d)(1)",
                          "the local board examines the voter-verifiable paper record and the duplicate ballot"),
    new_duplicate_source=Source(SourceKind.STATUTE, f"{_MD_LAW}(d)(2)",
                                "if they do not match, a new duplicate that accurately reflects the voter's intent is made "
                                "and counted; if they match, the duplicate is counted"),
    store_source=Source(SourceKind.STATUTE, f"{_MD_LAW}(c)(2)",
                        "each duplicate ballot created is stored together with its voter-verifiable paper record"),
)

_AR_BOARD = Source(SourceKind.STATUTE, "Ark. Code Ann. §7-5-319",
                   "the county board of election commissioners conducts the recount")
_AR_LOCAL_INTENT = Source(SourceKind.LOCAL_POLICY, "the county board's recount procedure",
                          "Arkansas law names no voter-intent standard for a recount; the board adopts these")
_AR_LOCAL_DUPLICATES = Source(SourceKind.LOCAL_POLICY, "the county board's recount procedure (Ark. Code Ann. §7-5-319)",
                              "Arkansas law sets no duplicate-reconciliation rule; the county board follows this procedure")

AR = RuleSet(
    code="AR",
    name="Arkansas",
    version="2026.1",
    two_auditors=False,
    two_auditors_source=Source(
        SourceKind.LOCAL_POLICY, "the county board's recount procedure",
        "Ark. Code Ann. §7-5-319 gives the recount to the county board, a collective body; a single reader whose "
        "reading is final is the board's own delegation, not the statute's"),
    intent_rules=(
        IntentRule("ar-fill", "The target is marked", _AR_LOCAL_INTENT),
        IntentRule("ar-intent", "The voter's intent is clearly discernible", _AR_LOCAL_INTENT),
        IntentRule("ar-none", "Intent cannot be determined: no vote", _AR_LOCAL_INTENT),
    ),
    board_quorum=2,
    board_quorum_source=Source(SourceKind.LOCAL_POLICY, "the county board's rules of procedure",
                               "members present for a board decision; a majority of those present decides"),
    duplicates_source=_AR_LOCAL_DUPLICATES,
    comparison_source=_AR_LOCAL_DUPLICATES,
    missing_record_source=_AR_BOARD,
    examine_source=_AR_LOCAL_DUPLICATES,
    new_duplicate_source=_AR_LOCAL_DUPLICATES,
    store_source=_AR_LOCAL_DUPLICATES,
)

JURISDICTIONS: dict[str, RuleSet] = {r.code: r for r in (MD, AR)}


def rule_set(code: str) -> RuleSet:
    """The rule set for a jurisdiction code (validated when the election is loaded)."""
    return JURISDICTIONS[code]


def sources(rules: RuleSet) -> list[tuple[str, Source]]:
    """Every rule of a rule set with its source, for reports and ``scanpipe rules``."""
    out = [("decisions need two different auditors" if rules.two_auditors else "one auditor's decision is final",
            rules.two_auditors_source),
           (f"a board decision needs {rules.board_quorum} members present", rules.board_quorum_source),
           ("which contests a duplicate is compared on", rules.comparison_source),
           ("every pair is examined", rules.examine_source),
           ("a mismatch makes a new duplicate that counts", rules.new_duplicate_source),
           ("a missing original or a serial used twice goes to the board", rules.missing_record_source),
           ("a duplicate is stored with its original", rules.store_source)]
    out += [(f"intent rule {r.code}: {r.description}", r.source) for r in rules.intent_rules]
    return out
