"""Tables that make people accounts: board proposals with each member's own vote, and how
each decision was attested (by whom, from which operator, with accounts or without).

Revision ``0005`` creates them (and adds account approval to ``user_account``); a test
compares these models with the migrated schema.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any, cast

from sqlalchemy import (
    Boolean,
    CheckConstraint,
    ForeignKey,
    Index,
    Integer,
    String,
    Table,
    Text,
)
from sqlalchemy.orm import Mapped, mapped_column

from scanpipe.store.models import CARD_ID, CODE, ID, Base

PROPOSAL_STATES = ("open", "recorded", "rejected", "withdrawn")
PROPOSAL_MATTERS = ("reading", "ruling", "sign_off")
BOARD_VOTES = ("for", "against", "abstain")


class BoardProposalRow(Base):
    """A board decision a member proposed: the reading of an escalated contest, a ruling on
    an orphan or a conflict, or the sign-off of a batch of matched pairs. Each member present
    votes on it from their own login (:class:`BoardBallotRow`); closing it records it."""

    __tablename__ = "board_proposal"
    __table_args__ = (
        CheckConstraint("state IN ('open', 'recorded', 'rejected', 'withdrawn')", name="state"),
        CheckConstraint("matter IN ('reading', 'ruling', 'sign_off')", name="matter"),
        Index("ix_board_proposal_item_contest", "item", "contest", "state"),
        {"sqlite_autoincrement": True},
    )

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    matter: Mapped[str] = mapped_column(CODE)
    item: Mapped[str | None] = mapped_column(CARD_ID)  # a card id or serial (reading), a serial (ruling)
    item_kind: Mapped[str | None] = mapped_column(CODE)
    contest: Mapped[str | None] = mapped_column(ID)
    escalation: Mapped[int | None] = mapped_column(ForeignKey("decision.id"))  # the open escalation a reading settles
    votes: Mapped[list[Any]] = mapped_column()  # the proposed reading (option ids; empty for other matters)
    payload: Mapped[dict[str, Any]] = mapped_column()  # a ruling: {"ruling", "card"}; a sign-off: {"serials"}
    rule: Mapped[str | None] = mapped_column(Text)
    note: Mapped[str | None] = mapped_column(Text)
    proposed_by: Mapped[str] = mapped_column(String(64))
    created_at: Mapped[datetime]
    state: Mapped[str] = mapped_column(CODE)
    decision_id: Mapped[int | None] = mapped_column(ForeignKey("decision.id"))  # a reading, once recorded
    recorded_as: Mapped[str | None] = mapped_column(Text)  # "decision 12", "ruling 3", "sign-off 2"
    closed_by: Mapped[str | None] = mapped_column(String(64))
    closed_at: Mapped[datetime | None]


class BoardBallotRow(Base):
    """One member's own vote on a proposal, cast from that member's session (never from a
    form field another member filled)."""

    __tablename__ = "board_ballot"
    __table_args__ = (CheckConstraint("vote IN ('for', 'against', 'abstain')", name="vote"),)

    proposal_id: Mapped[int] = mapped_column(ForeignKey("board_proposal.id"), primary_key=True)
    member: Mapped[str] = mapped_column(String(64), primary_key=True)
    vote: Mapped[str] = mapped_column(CODE)
    session_sha256: Mapped[str] = mapped_column(String(64))  # the login session it came from
    at: Mapped[datetime]


class DecisionAttestationRow(Base):
    """How a decision's auditors were established: the operator that recorded it (a review
    login, a command-line login on a host), whether the auditors are authenticated review
    accounts (``accounts``) or free names of a test deck (``--no-accounts``), and the reason
    given for overriding a contest nobody queued."""

    __tablename__ = "decision_attestation"

    decision_id: Mapped[int] = mapped_column(ForeignKey("decision.id"), primary_key=True)
    operator: Mapped[str] = mapped_column(Text)
    accounts: Mapped[bool] = mapped_column(Boolean)
    override_reason: Mapped[str | None] = mapped_column(Text)


board_proposal_table = cast(Table, BoardProposalRow.__table__)
board_ballot_table = cast(Table, BoardBallotRow.__table__)
decision_attestation_table = cast(Table, DecisionAttestationRow.__table__)
