"""people: account approval, board proposals (readings, rulings, sign-offs) with members' own votes, decision attestations

Revision ID: 0008
Revises: 0007
Create Date: 2026-12-01 10:00:00.000000
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = '0008'
down_revision: str | None = '0007'
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    with op.batch_alter_table('user_account', schema=None) as batch_op:
        batch_op.add_column(sa.Column('created_by', sa.String(length=64), nullable=True))
        batch_op.add_column(sa.Column('approved_by', sa.String(length=64), nullable=True))
        batch_op.add_column(sa.Column('approved_at', sa.DateTime(timezone=True), nullable=True))
    # accounts made before approval existed stay usable (the audit log shows who added them)
    op.execute("UPDATE user_account SET approved_at = created_at")
    with op.batch_alter_table('login_failure', schema=None) as batch_op:
        batch_op.create_index('ix_login_failure_username_remote_at', ['username', 'remote', 'at'], unique=False)
    op.create_table('board_proposal',
    sa.Column('id', sa.Integer(), autoincrement=True, nullable=False),
    sa.Column('matter', sa.String(length=40), nullable=False),
    sa.Column('item', sa.String(length=80), nullable=True),
    sa.Column('item_kind', sa.String(length=40), nullable=True),
    sa.Column('contest', sa.String(length=64), nullable=True),
    sa.Column('escalation', sa.Integer(), nullable=True),
    sa.Column('votes', sa.JSON(), nullable=False),
    sa.Column('payload', sa.JSON(), nullable=False),
    sa.Column('rule', sa.Text(), nullable=True),
    sa.Column('note', sa.Text(), nullable=True),
    sa.Column('proposed_by', sa.String(length=64), nullable=False),
    sa.Column('created_at', sa.DateTime(timezone=True), nullable=False),
    sa.Column('state', sa.String(length=40), nullable=False),
    sa.Column('decision_id', sa.Integer(), nullable=True),
    sa.Column('recorded_as', sa.Text(), nullable=True),
    sa.Column('closed_by', sa.String(length=64), nullable=True),
    sa.Column('closed_at', sa.DateTime(timezone=True), nullable=True),
    sa.CheckConstraint("matter IN ('reading', 'ruling', 'sign_off')", name=op.f('ck_board_proposal_matter')),
    sa.CheckConstraint("state IN ('open', 'recorded', 'rejected', 'withdrawn')", name=op.f('ck_board_proposal_state')),
    sa.ForeignKeyConstraint(['decision_id'], ['decision.id'], name=op.f('fk_board_proposal_decision_id_decision')),
    sa.ForeignKeyConstraint(['escalation'], ['decision.id'], name=op.f('fk_board_proposal_escalation_decision')),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_board_proposal')),
    sqlite_autoincrement=True
    )
    with op.batch_alter_table('board_proposal', schema=None) as batch_op:
        batch_op.create_index('ix_board_proposal_item_contest', ['item', 'contest', 'state'], unique=False)
    op.create_table('board_ballot',
    sa.Column('proposal_id', sa.Integer(), nullable=False),
    sa.Column('member', sa.String(length=64), nullable=False),
    sa.Column('vote', sa.String(length=40), nullable=False),
    sa.Column('session_sha256', sa.String(length=64), nullable=False),
    sa.Column('at', sa.DateTime(timezone=True), nullable=False),
    sa.CheckConstraint("vote IN ('for', 'against', 'abstain')", name=op.f('ck_board_ballot_vote')),
    sa.ForeignKeyConstraint(['proposal_id'], ['board_proposal.id'], name=op.f('fk_board_ballot_proposal_id_board_proposal')),
    sa.PrimaryKeyConstraint('proposal_id', 'member', name=op.f('pk_board_ballot'))
    )
    op.create_table('decision_attestation',
    sa.Column('decision_id', sa.Integer(), nullable=False),
    sa.Column('operator', sa.Text(), nullable=False),
    sa.Column('accounts', sa.Boolean(), nullable=False),
    sa.Column('override_reason', sa.Text(), nullable=True),
    sa.ForeignKeyConstraint(['decision_id'], ['decision.id'], name=op.f('fk_decision_attestation_decision_id_decision')),
    sa.PrimaryKeyConstraint('decision_id', name=op.f('pk_decision_attestation'))
    )


def downgrade() -> None:
    op.drop_table('decision_attestation')
    op.drop_table('board_ballot')
    with op.batch_alter_table('board_proposal', schema=None) as batch_op:
        batch_op.drop_index('ix_board_proposal_item_contest')
    op.drop_table('board_proposal')
    with op.batch_alter_table('login_failure', schema=None) as batch_op:
        batch_op.drop_index('ix_login_failure_username_remote_at')
    with op.batch_alter_table('user_account', schema=None) as batch_op:
        batch_op.drop_column('approved_at')
        batch_op.drop_column('approved_by')
        batch_op.drop_column('created_by')
