"""review: accounts, sessions, login failures, form tokens, board votes, the review index

Revision ID: 0004
Revises: 0003
Create Date: 2026-11-30 15:13:13.575831
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = '0004'
down_revision: str | None = '0003'
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table('form_use',
    sa.Column('nonce', sa.String(length=64), nullable=False),
    sa.Column('user_id', sa.Integer(), nullable=False),
    sa.Column('used_at', sa.DateTime(timezone=True), nullable=False),
    sa.PrimaryKeyConstraint('nonce', name=op.f('pk_form_use'))
    )
    op.create_table('login_failure',
    sa.Column('id', sa.Integer(), autoincrement=True, nullable=False),
    sa.Column('username', sa.String(length=64), nullable=False),
    sa.Column('remote', sa.String(length=64), nullable=False),
    sa.Column('at', sa.DateTime(timezone=True), nullable=False),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_login_failure'))
    )
    with op.batch_alter_table('login_failure', schema=None) as batch_op:
        batch_op.create_index('ix_login_failure_remote_at', ['remote', 'at'], unique=False)
        batch_op.create_index('ix_login_failure_username_at', ['username', 'at'], unique=False)
    op.create_table('review_item',
    sa.Column('item', sa.String(length=80), nullable=False),
    sa.Column('reason', sa.String(length=40), nullable=False),
    sa.Column('kind', sa.String(length=40), nullable=False),
    sa.Column('precinct', sa.String(length=64), nullable=True),
    sa.Column('batch', sa.String(length=200), nullable=True),
    sa.Column('contests', sa.JSON(), nullable=False),
    sa.Column('units', sa.Integer(), nullable=False),
    sa.Column('state', sa.String(length=40), nullable=False),
    sa.Column('first_auditors', sa.JSON(), nullable=False),
    sa.Column('updated_at', sa.DateTime(timezone=True), nullable=False),
    sa.CheckConstraint("state IN ('open', 'awaiting', 'escalated')", name=op.f('ck_review_item_state')),
    sa.PrimaryKeyConstraint('item', 'reason', name=op.f('pk_review_item'))
    )
    with op.batch_alter_table('review_item', schema=None) as batch_op:
        batch_op.create_index(batch_op.f('ix_review_item_batch'), ['batch'], unique=False)
        batch_op.create_index('ix_review_item_precinct_item', ['precinct', 'item'], unique=False)
        batch_op.create_index('ix_review_item_reason', ['reason'], unique=False)
        batch_op.create_index('ix_review_item_state_precinct', ['state', 'precinct', 'item'], unique=False)
    op.create_table('user_account',
    sa.Column('id', sa.Integer(), autoincrement=True, nullable=False),
    sa.Column('username', sa.String(length=64), nullable=False),
    sa.Column('role', sa.String(length=40), nullable=False),
    sa.Column('password_hash', sa.Text(), nullable=False),
    sa.Column('created_at', sa.DateTime(timezone=True), nullable=False),
    sa.Column('disabled_at', sa.DateTime(timezone=True), nullable=True),
    sa.CheckConstraint("role IN ('admin', 'auditor', 'board', 'observer')", name=op.f('ck_user_account_role')),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_user_account')),
    sa.UniqueConstraint('username', name=op.f('uq_user_account_username'))
    )
    op.create_table('board_vote',
    sa.Column('decision_id', sa.Integer(), nullable=False),
    sa.Column('member', sa.String(length=64), nullable=False),
    sa.Column('vote', sa.String(length=40), nullable=False),
    sa.ForeignKeyConstraint(['decision_id'], ['decision.id'], name=op.f('fk_board_vote_decision_id_decision')),
    sa.PrimaryKeyConstraint('decision_id', 'member', name=op.f('pk_board_vote'))
    )
    op.create_table('web_session',
    sa.Column('token_sha256', sa.String(length=64), nullable=False),
    sa.Column('user_id', sa.Integer(), nullable=False),
    sa.Column('csrf', sa.String(length=64), nullable=False),
    sa.Column('created_at', sa.DateTime(timezone=True), nullable=False),
    sa.Column('expires_at', sa.DateTime(timezone=True), nullable=False),
    sa.Column('last_seen', sa.DateTime(timezone=True), nullable=False),
    sa.Column('ended_at', sa.DateTime(timezone=True), nullable=True),
    sa.ForeignKeyConstraint(['user_id'], ['user_account.id'], name=op.f('fk_web_session_user_id_user_account'), ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('token_sha256', name=op.f('pk_web_session'))
    )
    with op.batch_alter_table('web_session', schema=None) as batch_op:
        batch_op.create_index(batch_op.f('ix_web_session_user_id'), ['user_id'], unique=False)



def downgrade() -> None:
    with op.batch_alter_table('web_session', schema=None) as batch_op:
        batch_op.drop_index(batch_op.f('ix_web_session_user_id'))
    op.drop_table('web_session')
    op.drop_table('board_vote')
    op.drop_table('user_account')
    with op.batch_alter_table('review_item', schema=None) as batch_op:
        batch_op.drop_index('ix_review_item_state_precinct')
        batch_op.drop_index('ix_review_item_reason')
        batch_op.drop_index('ix_review_item_precinct_item')
        batch_op.drop_index(batch_op.f('ix_review_item_batch'))
    op.drop_table('review_item')
    with op.batch_alter_table('login_failure', schema=None) as batch_op:
        batch_op.drop_index('ix_login_failure_username_at')
        batch_op.drop_index('ix_login_failure_remote_at')
    op.drop_table('login_failure')
    op.drop_table('form_use')
