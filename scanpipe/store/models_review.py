"""Tables of the auditors' review app: accounts, sessions, login failures, used form tokens,
board votes, and the review index (the queue kept as rows, so pages never count every card).

Revision ``0004`` creates them; a test compares these models with the migrated schema.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any, cast

from sqlalchemy import CheckConstraint, ForeignKey, Index, Integer, String, Table, Text
from sqlalchemy.orm import Mapped, mapped_column

from scanpipe.store.models import CARD_ID, CODE, ID, Base

ROLES = ("admin", "auditor", "board", "observer")


class UserRow(Base):
    """An account of the review app. Disabled, never deleted (the audit log names it)."""

    __tablename__ = "user_account"
    __table_args__ = (CheckConstraint("role IN ('admin', 'auditor', 'board', 'observer')", name="role"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    username: Mapped[str] = mapped_column(String(64), unique=True)
    role: Mapped[str] = mapped_column(CODE)
    password_hash: Mapped[str] = mapped_column(Text)  # argon2id, PHC string
    created_at: Mapped[datetime]
    disabled_at: Mapped[datetime | None]
    created_by: Mapped[str | None] = mapped_column(String(64))  # the admin who added it (None: set-up)
    approved_by: Mapped[str | None] = mapped_column(String(64))  # a second admin (None: set-up or before 0005)
    approved_at: Mapped[datetime | None]  # an account is usable only once approved


class WebSessionRow(Base):
    """A login session; the browser holds the token, the store only its SHA-256."""

    __tablename__ = "web_session"

    token_sha256: Mapped[str] = mapped_column(String(64), primary_key=True)
    user_id: Mapped[int] = mapped_column(ForeignKey("user_account.id", ondelete="CASCADE"), index=True)
    csrf: Mapped[str] = mapped_column(String(64))
    created_at: Mapped[datetime]
    expires_at: Mapped[datetime]  # absolute end
    last_seen: Mapped[datetime]  # idle timeout counts from here
    ended_at: Mapped[datetime | None]


class LoginFailureRow(Base):
    """A failed login, for throttling (HTTP 429) per account and address pair."""

    __tablename__ = "login_failure"
    __table_args__ = (Index("ix_login_failure_username_at", "username", "at"),
                      Index("ix_login_failure_remote_at", "remote", "at"),
                      Index("ix_login_failure_username_remote_at", "username", "remote", "at"))

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    username: Mapped[str] = mapped_column(String(64))
    remote: Mapped[str] = mapped_column(String(64))
    at: Mapped[datetime]


class FormUseRow(Base):
    """A decision form's one-time token once submitted: a second submission is refused."""

    __tablename__ = "form_use"

    nonce: Mapped[str] = mapped_column(String(64), primary_key=True)
    user_id: Mapped[int] = mapped_column(Integer)
    used_at: Mapped[datetime]


class BoardVoteRow(Base):
    """How each board member present voted on a board decision."""

    __tablename__ = "board_vote"

    decision_id: Mapped[int] = mapped_column(ForeignKey("decision.id"), primary_key=True)
    member: Mapped[str] = mapped_column(String(64), primary_key=True)
    vote: Mapped[str] = mapped_column(CODE)  # "for" | "against" | "abstain"


class ReviewItemRow(Base):
    """One queue item (item and reason), refreshed from the library's queue after ingest,
    reconcile and each decision; the review pages read only this table."""

    __tablename__ = "review_item"
    __table_args__ = (
        CheckConstraint("state IN ('open', 'awaiting', 'escalated')", name="state"),
        Index("ix_review_item_state_precinct", "state", "precinct", "item"),
        Index("ix_review_item_precinct_item", "precinct", "item"),
        Index("ix_review_item_reason", "reason"),
    )

    item: Mapped[str] = mapped_column(CARD_ID, primary_key=True)
    reason: Mapped[str] = mapped_column(CODE, primary_key=True)
    kind: Mapped[str] = mapped_column(CODE)  # "card" | "pair"
    precinct: Mapped[str | None] = mapped_column(ID)
    batch: Mapped[str | None] = mapped_column(String(200), index=True)
    contests: Mapped[list[Any]] = mapped_column()
    units: Mapped[int] = mapped_column(Integer)  # contests to decide (1 for a whole-card problem)
    state: Mapped[str] = mapped_column(CODE)
    first_auditors: Mapped[list[Any]] = mapped_column()  # who recorded the first half (never what)
    updated_at: Mapped[datetime]


user_table = cast(Table, UserRow.__table__)
web_session_table = cast(Table, WebSessionRow.__table__)
login_failure_table = cast(Table, LoginFailureRow.__table__)
form_use_table = cast(Table, FormUseRow.__table__)
board_vote_table = cast(Table, BoardVoteRow.__table__)
review_item_table = cast(Table, ReviewItemRow.__table__)
