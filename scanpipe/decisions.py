"""The two-people rule as a pure function (contract section 5, "Two people").

Where the jurisdiction requires two auditors, one auditor's call records the first half of a
decision; a later call by a *different* auditor with the same votes makes it final, with
different votes escalates it to the board. Two auditors in one call attest jointly. A new
final decision of an already decided contest supersedes the earlier one.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from scanpipe.counting import Decision, DecisionState
from scanpipe.errors import DecisionError


@dataclass(frozen=True)
class DecisionPlan:
    state: DecisionState
    auditors: tuple[str, ...]
    updates: tuple[tuple[int, DecisionState], ...]
    supersedes: int | None
    message: str


def plan_decision(existing: Sequence[Decision], votes: tuple[str, ...], auditors: tuple[str, ...], *, two_auditors: bool,
                  board_settles: int | None = None) -> DecisionPlan:
    """Pure: what a new decision does given the earlier ones for the same item and contest.

    ``board_settles``: the id of the open escalation the board is deciding (``auditors``
    are then the members who voted for the reading); anything else refuses an escalated
    contest, and a board reading needs that very escalation to be the open one.
    """
    live = [d for d in sorted(existing, key=lambda d: d.id) if d.state is not DecisionState.SUPERSEDED]
    final = next((d for d in reversed(live) if d.state is DecisionState.FINAL), None)
    first = next((d for d in reversed(live) if d.state is DecisionState.FIRST_HALF), None)
    escalated = next((d for d in reversed(live) if d.state is DecisionState.ESCALATED), None)
    if board_settles is not None:
        if escalated is None:
            raise DecisionError("this contest has no open escalation for the board (another board decision may have settled it); reload the board page")
        if escalated.id != board_settles:
            raise DecisionError(f"decision {board_settles} is not the open escalation of this contest (it is {escalated.id}); reload the board page")
        supersede = tuple((d.id, DecisionState.SUPERSEDED) for d in live)
        return DecisionPlan(DecisionState.FINAL, auditors, supersede, escalated.id, "final: board decision")
    if escalated is not None:
        raise DecisionError("this contest was escalated to the board: two auditors disagreed; the board decides it in the review")
    if not two_auditors or len(auditors) >= 2:
        supersede = tuple((d.id, DecisionState.SUPERSEDED) for d in live)
        return DecisionPlan(DecisionState.FINAL, auditors, supersede, final.id if final else None, "final" + (" (supersedes an earlier decision)" if final else ""))
    if first is None:
        return DecisionPlan(DecisionState.FIRST_HALF, auditors, (), final.id if final else None, "recorded; awaiting a second, different auditor")
    if auditors[0] in first.auditors:
        raise DecisionError(f"{auditors[0]} already recorded the first half of this decision; a different auditor must confirm it")
    if first.votes == votes:
        updates = tuple((d.id, DecisionState.SUPERSEDED) for d in live)
        return DecisionPlan(DecisionState.FINAL, tuple(first.auditors) + auditors, updates, first.id, f"final: confirmed by {auditors[0]} after {', '.join(first.auditors)}")
    return DecisionPlan(DecisionState.ESCALATED, auditors, ((first.id, DecisionState.ESCALATED),), first.id, f"escalated to the board: {auditors[0]} read it differently from {', '.join(first.auditors)}")


@dataclass(frozen=True)
class Attestation:
    """Who stands behind a decision, beyond the auditors' names.

    ``operator``: what recorded it, e.g. ``review:ann`` (a review login) or
    ``cli:ann@host`` (a command-line login on a host); ``accounts``: the auditors are review
    accounts the caller authenticated (a review session, or each auditor's password at the
    command line), else free names of a test deck (``--no-accounts``, allowed only while the
    database has no account); ``override``: the reason for deciding a contest of a card that
    nothing queued.
    """

    operator: str
    accounts: bool
    override: str | None = None


def check_second_half(first_operator: str | None, attestation: Attestation) -> None:
    """Pure: the second half of a decision may not come from the operator that recorded the
    first half (one login, or one command-line login on one host, is one person's hands)."""
    if attestation.accounts and first_operator is not None and first_operator == attestation.operator:
        raise DecisionError(f"the first half of this decision was recorded from {first_operator}; the second half must come "
                            "from another login (the second auditor's own review login, or their own login at a workstation), "
                            "or both auditors attest together in one call, each with their password")
