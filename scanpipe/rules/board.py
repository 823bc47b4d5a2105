"""How many board members must be present for a board decision, as data with its source.

A board decision settles what two auditors read differently. It is taken by the members
present, each voting from their own login; it needs a quorum present and a majority of the
members present for the reading. The quorum is a majority of the board's active member
accounts, and never fewer than ``minimum_present``.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class BoardRule:
    minimum_present: int  # never fewer members present than this
    majority_of_members: bool  # and at least a majority of the board's active member accounts
    source: str

    def quorum(self, members: int) -> int:
        """Members that must be present on a board of ``members`` active accounts."""
        majority = members // 2 + 1 if self.majority_of_members else 0
        return max(self.minimum_present, majority)


LOCAL_POLICY = BoardRule(
    minimum_present=2,
    majority_of_members=True,
    source="local policy of scanpipe's default rule set: a collective body acts by a majority of its members as "
           "a quorum, and a decision of voter intent is never one person's (change it with the board's own rules)",
)

BOARD_RULES: dict[str, BoardRule] = {"MD": LOCAL_POLICY, "AR": LOCAL_POLICY}


def board_rule(jurisdiction: str) -> BoardRule:
    return BOARD_RULES.get(jurisdiction, LOCAL_POLICY)
