"""reconcile: pairs, new duplicates, the canvass duplication log

Revision ID: 0003
Revises: 0002
Create Date: 2026-11-30 15:15:00
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = '0003'
down_revision: str | None = '0002'
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table('pair',
    sa.Column('serial', sa.String(length=32), nullable=False),
    sa.Column('status', sa.String(length=40), nullable=False),
    sa.Column('precinct', sa.String(length=64), nullable=True),
    sa.Column('duplicates', sa.JSON(), nullable=False),
    sa.Column('originals', sa.JSON(), nullable=False),
    sa.Column('contests', sa.JSON(), nullable=False),
    sa.Column('counted', sa.String(length=40), nullable=False),
    sa.Column('detail', sa.JSON(), nullable=False),
    sa.Column('updated_at', sa.DateTime(timezone=True), nullable=False),
    sa.CheckConstraint("status IN ('match', 'mismatch', 'needs_review', 'resolved', 'orphan_duplicate', 'orphan_original', 'conflict')", name=op.f('ck_pair_status')),
    sa.PrimaryKeyConstraint('serial', name=op.f('pk_pair'))
    )
    with op.batch_alter_table('pair', schema=None) as batch_op:
        batch_op.create_index(batch_op.f('ix_pair_status'), ['status'], unique=False)
        batch_op.create_index(batch_op.f('ix_pair_precinct'), ['precinct'], unique=False)
    op.create_table('new_duplicate',
    sa.Column('serial', sa.String(length=32), nullable=False),
    sa.Column('base_serial', sa.String(length=32), nullable=False),
    sa.Column('revision', sa.Integer(), nullable=False),
    sa.Column('style', sa.String(length=64), nullable=False),
    sa.Column('precinct', sa.String(length=64), nullable=True),
    sa.Column('contests', sa.JSON(), nullable=False),
    sa.Column('decisions', sa.JSON(), nullable=False),
    sa.Column('auditors', sa.JSON(), nullable=False),
    sa.Column('original_cards', sa.JSON(), nullable=False),
    sa.Column('superseded_cards', sa.JSON(), nullable=False),
    sa.Column('image_path', sa.Text(), nullable=True),
    sa.Column('image_sha256', sa.String(length=64), nullable=True),
    sa.Column('pdf_path', sa.Text(), nullable=True),
    sa.Column('scanned_card_id', sa.String(length=80), nullable=True),
    sa.Column('created_at', sa.DateTime(timezone=True), nullable=False),
    sa.Column('superseded_by', sa.String(length=32), nullable=True),
    sa.PrimaryKeyConstraint('serial', name=op.f('pk_new_duplicate'))
    )
    with op.batch_alter_table('new_duplicate', schema=None) as batch_op:
        batch_op.create_index(batch_op.f('ix_new_duplicate_base_serial'), ['base_serial'], unique=False)
    op.create_table('duplication_log',
    sa.Column('serial', sa.String(length=32), nullable=False),
    sa.Column('precinct', sa.String(length=64), nullable=True),
    sa.Column('reason', sa.Text(), nullable=True),
    sa.Column('source', sa.Text(), nullable=False),
    sa.Column('imported_at', sa.DateTime(timezone=True), nullable=False),
    sa.PrimaryKeyConstraint('serial', name=op.f('pk_duplication_log'))
    )


def downgrade() -> None:
    op.drop_table('duplication_log')
    with op.batch_alter_table('new_duplicate', schema=None) as batch_op:
        batch_op.drop_index(batch_op.f('ix_new_duplicate_base_serial'))
    op.drop_table('new_duplicate')
    with op.batch_alter_table('pair', schema=None) as batch_op:
        batch_op.drop_index(batch_op.f('ix_pair_precinct'))
        batch_op.drop_index(batch_op.f('ix_pair_status'))
    op.drop_table('pair')
