"""a target score's lone dot (its extent in inches: a hesitation mark when its contest's votes are read elsewhere)

Revision ID: 0011
Revises: 0010
Create Date: 2026-12-06 18:20:00
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = '0011'
down_revision: str | None = '0010'
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    with op.batch_alter_table('target_score', schema=None) as batch_op:
        batch_op.add_column(sa.Column('dot_in', sa.Double(), server_default=sa.text('0'), nullable=False))


def downgrade() -> None:
    with op.batch_alter_table('target_score', schema=None) as batch_op:
        batch_op.drop_column('dot_in')
