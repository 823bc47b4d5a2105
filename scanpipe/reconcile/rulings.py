"""The board's rulings on serials the machine cannot pair (§12-108(c)), as values. Pure.

An orphan (a duplicate whose original is missing, or an original without its duplicate) or
a conflict (one serial on two duplicates or two originals) has nothing a machine can
compare: the local board decides whether and how the serial counts. Its ruling is one of:

* ``counts_as_is``: one duplicate of the serial (``card``) counts as it was read;
* ``new_duplicate``: a new duplicate is made over every contest of the style (of ``card``'s
  sheet, else the duplicate's; an orphan original: its own), each contest decided by
  auditors as for a mismatch;
* ``nothing``: nothing counts for the serial.

A ruling holds only for the cards the board saw (``cards``): a card of the serial scanned
later (the missing original found) reopens the serial. A board decision needs the rule
set's quorum of members present and a majority of them voting for it
(:func:`check_board_votes`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from enum import StrEnum

from scanpipe.errors import DecisionError
from scanpipe.reconcile.pairing import PairStatus

BOARD_VOTES = ("for", "against", "abstain")
BOARD_MATTERS = (PairStatus.ORPHAN_DUPLICATE, PairStatus.ORPHAN_ORIGINAL, PairStatus.CONFLICT)


class RulingKind(StrEnum):
    COUNTS_AS_IS = "counts_as_is"
    NEW_DUPLICATE = "new_duplicate"
    NOTHING = "nothing"


@dataclass(frozen=True, slots=True)
class BoardRuling:
    id: int
    serial: str
    matter: PairStatus
    ruling: RulingKind
    card: str | None  # the duplicate that counts as is, or the new duplicate's basis
    cards: tuple[str, ...]  # every card of the serial when the board ruled
    members: Mapping[str, str]  # member -> for | against | abstain
    rule_set: str
    note: str | None = None

    def applies_to(self, matter: PairStatus, cards: Sequence[str]) -> bool:
        """Whether the ruling still holds: same matter, same cards."""
        return self.matter is matter and sorted(self.cards) == sorted(cards)

    @property
    def ayes(self) -> tuple[str, ...]:
        return tuple(sorted(m for m, v in self.members.items() if v == "for"))


@dataclass(frozen=True, slots=True)
class PageRuling:
    """The board's ruling that a stored page is not a ballot card (a sheet fed by mistake, a
    batch header, a card of another election): it counts nothing and awaits no one."""

    id: int
    card: str
    why: str  # what the board saw on the paper
    members: Mapping[str, str]  # member -> for | against | abstain
    rule_set: str
    actor: str
    note: str | None = None

    @property
    def ayes(self) -> tuple[str, ...]:
        return tuple(sorted(m for m, v in self.members.items() if v == "for"))


def board_question(matter: PairStatus, serial: str, citation: str) -> str:
    """The statute's question put to the board for a serial (names, not codes)."""
    what = {
        PairStatus.ORPHAN_DUPLICATE: f"The voter's original (paper record) for duplicate {serial} is missing",
        PairStatus.ORPHAN_ORIGINAL: f"The voter's original {serial} has no duplicate",
        PairStatus.CONFLICT: f"Serial {serial} is on more than one duplicate or more than one original",
    }[matter]
    return (f"{what} ({citation}: each duplicate is stored with its original). Does a duplicate of this serial count "
            "as it is, is a new duplicate made over every contest of the style, or does nothing count for it?")


def check_board_votes(members: Mapping[str, str], board_members: Sequence[str], quorum: int) -> tuple[str, ...]:
    """The members voting for a board decision; refuses outsiders, votes other than
    for / against / abstain, fewer members present than ``quorum``, and no majority."""
    outsiders = sorted(set(members) - set(board_members))
    if outsiders:
        raise DecisionError(f"not board members: {', '.join(outsiders)}")
    bad = sorted(m for m, v in members.items() if v not in BOARD_VOTES)
    if bad:
        raise DecisionError(f"each member present votes for, against or abstain; not so: {', '.join(bad)}")
    if len(members) < quorum:
        raise DecisionError(f"a board decision needs at least {quorum} members present; {len(members)} present")
    ayes = tuple(sorted(m for m, v in members.items() if v == "for"))
    if len(ayes) * 2 <= len(members):
        raise DecisionError(f"{len(ayes)} of {len(members)} members present voted for it: a majority of the members present must vote for it")
    return ayes
