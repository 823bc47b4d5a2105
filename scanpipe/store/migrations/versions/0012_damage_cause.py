"""a target score's damage cause: what the damage score measured (a stain, a fold, a stamp across the card, ...)

Revision ID: 0012
Revises: 0011
Create Date: 2026-12-06 23:40:00
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = '0012'
down_revision: str | None = '0011'
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    # scores stored before this revision keep NULL: their reasons said "damage ... over the target" alone
    with op.batch_alter_table('target_score', schema=None) as batch_op:
        batch_op.add_column(sa.Column('damage_cause', sa.String(length=40), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table('target_score', schema=None) as batch_op:
        batch_op.drop_column('damage_cause')
