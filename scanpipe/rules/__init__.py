"""Recount rule sets per jurisdiction, as versioned data.

``election.json``'s ``jurisdiction`` selects one. Each rule set says whether a decision of
voter intent needs two different auditors, and lists the voter-intent rules an auditor cites.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class RuleSet:
    code: str
    name: str
    version: str
    two_auditors: bool  # a decision is final only when two different auditors agree
    intent_rules: tuple[tuple[str, str], ...]  # (code, description) an auditor cites
    statute: str


MD = RuleSet(
    code="MD",
    name="Maryland",
    version="2026.1",
    two_auditors=True,
    intent_rules=(
        ("md-fill", "The target is filled, partly filled, checked or crossed"),
        ("md-circle", "The voter circled the option or its name"),
        ("md-erasure", "An erasure or correction shows the voter's final choice"),
        ("md-writein", "A write-in name is written with or without the target marked"),
        ("md-consistent", "The voter's marking pattern across the card shows intent"),
        ("md-none", "No discernible intent: no vote in the contest"),
    ),
    statute="Md. Election Law §12-108(d); COMAR 33.12.05",
)

AR = RuleSet(
    code="AR",
    name="Arkansas",
    version="2026.1",
    two_auditors=False,
    intent_rules=(
        ("ar-fill", "The target is marked"),
        ("ar-intent", "The voter's intent is clearly discernible"),
        ("ar-none", "Intent cannot be determined: no vote"),
    ),
    statute="Ark. Code Ann. §7-5-319",
)

JURISDICTIONS: dict[str, RuleSet] = {r.code: r for r in (MD, AR)}


def rule_set(code: str) -> RuleSet:
    """The rule set for a jurisdiction code (validated when the election is loaded)."""
    return JURISDICTIONS[code]
