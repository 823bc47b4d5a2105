"""the board's rulings on single pages (not a ballot card)

Revision ID: 0010
Revises: 0009
Create Date: 2026-12-02 15:10:00
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = '0010'
down_revision: str | None = '0009'
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table('card_ruling',
    sa.Column('id', sa.Integer(), autoincrement=True, nullable=False),
    sa.Column('card_id', sa.String(length=80), nullable=False),
    sa.Column('ruling', sa.String(length=40), nullable=False),
    sa.Column('why', sa.Text(), nullable=False),
    sa.Column('members', sa.JSON(), nullable=False),
    sa.Column('note', sa.Text(), nullable=True),
    sa.Column('actor', sa.Text(), nullable=False),
    sa.Column('rule_set', sa.String(length=40), nullable=False),
    sa.Column('created_at', sa.DateTime(timezone=True), nullable=False),
    sa.CheckConstraint("ruling IN ('not_a_ballot')", name=op.f('ck_card_ruling_ruling')),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_card_ruling')),
    sqlite_autoincrement=True
    )
    with op.batch_alter_table('card_ruling', schema=None) as batch_op:
        batch_op.create_index(batch_op.f('ix_card_ruling_card_id'), ['card_id'], unique=False)


def downgrade() -> None:
    with op.batch_alter_table('card_ruling', schema=None) as batch_op:
        batch_op.drop_index(batch_op.f('ix_card_ruling_card_id'))
    op.drop_table('card_ruling')
