"""write-in names beside decisions

Revision ID: 0009
Revises: 0008
Create Date: 2026-12-01 16:00:00
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = '0009'
down_revision: str | None = '0008'
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table('decision_write_in',
    sa.Column('decision_id', sa.Integer(), nullable=False),
    sa.Column('option', sa.String(length=64), nullable=False),
    sa.Column('name', sa.Text(), nullable=False),
    sa.ForeignKeyConstraint(['decision_id'], ['decision.id'], name=op.f('fk_decision_write_in_decision_id_decision')),
    sa.PrimaryKeyConstraint('decision_id', 'option', name=op.f('pk_decision_write_in'))
    )


def downgrade() -> None:
    op.drop_table('decision_write_in')
