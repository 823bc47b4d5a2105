"""identification: what a person stated about a card (identify)

Revision ID: 0002
Revises: 0001
Create Date: 2026-11-30 15:06:31.307004
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = '0002'
down_revision: str | None = '0001'
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table('identification',
    sa.Column('card_id', sa.String(length=80), nullable=False),
    sa.Column('style', sa.String(length=64), nullable=True),
    sa.Column('page', sa.Integer(), nullable=True),
    sa.Column('precinct', sa.String(length=64), nullable=True),
    sa.Column('kind', sa.String(length=40), nullable=True),
    sa.Column('serial', sa.String(length=32), nullable=True),
    sa.Column('at', sa.DateTime(timezone=True), nullable=False),
    sa.ForeignKeyConstraint(['card_id'], ['card.card_id'], name=op.f('fk_identification_card_id_card'), ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('card_id', name=op.f('pk_identification'))
    )


def downgrade() -> None:
    op.drop_table('identification')
