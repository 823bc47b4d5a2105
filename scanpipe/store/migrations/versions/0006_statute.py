"""statute: ballot types, new duplicates on paper, board rulings and sign-offs, rule set ids

The duplication log gains ``ballot_type`` and ``eligible_contests`` (contract section 5a);
a new duplicate gains its paper's life (printed, scanned back, stored with its original)
and the rule set it was made under, as does every decision; the rendered pages, the
board's rulings on orphans and conflicts, and its sign-offs of matched pairs get tables.

Revision ID: 0006
Revises: 0004
Create Date: 2026-12-01 15:23:44.154308
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = '0006'
down_revision: str | None = '0004'
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table('board_ruling',
    sa.Column('id', sa.Integer(), autoincrement=True, nullable=False),
    sa.Column('serial', sa.String(length=32), nullable=False),
    sa.Column('matter', sa.String(length=40), nullable=False),
    sa.Column('ruling', sa.String(length=40), nullable=False),
    sa.Column('card_id', sa.String(length=80), nullable=True),
    sa.Column('cards', sa.JSON(), nullable=False),
    sa.Column('members', sa.JSON(), nullable=False),
    sa.Column('note', sa.Text(), nullable=True),
    sa.Column('actor', sa.Text(), nullable=False),
    sa.Column('rule_set', sa.String(length=40), nullable=False),
    sa.Column('created_at', sa.DateTime(timezone=True), nullable=False),
    sa.CheckConstraint("matter IN ('orphan_duplicate', 'orphan_original', 'conflict')", name=op.f('ck_board_ruling_matter')),
    sa.CheckConstraint("ruling IN ('counts_as_is', 'new_duplicate', 'nothing')", name=op.f('ck_board_ruling_ruling')),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_board_ruling')),
    sqlite_autoincrement=True
    )
    with op.batch_alter_table('board_ruling', schema=None) as batch_op:
        batch_op.create_index(batch_op.f('ix_board_ruling_serial'), ['serial'], unique=False)

    op.create_table('pair_signoff',
    sa.Column('id', sa.Integer(), autoincrement=True, nullable=False),
    sa.Column('members', sa.JSON(), nullable=False),
    sa.Column('note', sa.Text(), nullable=True),
    sa.Column('actor', sa.Text(), nullable=False),
    sa.Column('rule_set', sa.String(length=40), nullable=False),
    sa.Column('created_at', sa.DateTime(timezone=True), nullable=False),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_pair_signoff')),
    sqlite_autoincrement=True
    )
    op.create_table('new_duplicate_page',
    sa.Column('serial', sa.String(length=32), nullable=False),
    sa.Column('page', sa.Integer(), nullable=False),
    sa.Column('png', sa.LargeBinary(), nullable=False),
    sa.Column('sha256', sa.String(length=64), nullable=False),
    sa.Column('dpi', sa.Integer(), nullable=False),
    sa.Column('rendered_at', sa.DateTime(timezone=True), nullable=False),
    sa.ForeignKeyConstraint(['serial'], ['new_duplicate.serial'], name=op.f('fk_new_duplicate_page_serial_new_duplicate'), ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('serial', 'page', name=op.f('pk_new_duplicate_page'))
    )
    op.create_table('pair_signoff_serial',
    sa.Column('signoff_id', sa.Integer(), nullable=False),
    sa.Column('serial', sa.String(length=32), nullable=False),
    sa.Column('cards', sa.JSON(), nullable=False),
    sa.ForeignKeyConstraint(['signoff_id'], ['pair_signoff.id'], name=op.f('fk_pair_signoff_serial_signoff_id_pair_signoff'), ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('signoff_id', 'serial', name=op.f('pk_pair_signoff_serial'))
    )
    with op.batch_alter_table('pair_signoff_serial', schema=None) as batch_op:
        batch_op.create_index(batch_op.f('ix_pair_signoff_serial_serial'), ['serial'], unique=False)

    with op.batch_alter_table('decision', schema=None) as batch_op:
        batch_op.add_column(sa.Column('rule_set', sa.String(length=40), nullable=True))

    with op.batch_alter_table('duplication_log', schema=None) as batch_op:
        batch_op.add_column(sa.Column('ballot_type', sa.String(length=40), nullable=True))
        batch_op.add_column(sa.Column('eligible_contests', sa.JSON(), nullable=True))
        batch_op.create_check_constraint(op.f('ck_duplication_log_ballot_type'), "ballot_type IN ('mail', 'provisional', 'other')")

    with op.batch_alter_table('new_duplicate', schema=None) as batch_op:
        batch_op.add_column(sa.Column('rule_set', sa.String(length=40), nullable=True))
        batch_op.add_column(sa.Column('printed_at', sa.DateTime(timezone=True), nullable=True))
        batch_op.add_column(sa.Column('printed_by', sa.Text(), nullable=True))
        batch_op.add_column(sa.Column('scan_problem', sa.Text(), nullable=True))
        batch_op.add_column(sa.Column('stored_at', sa.DateTime(timezone=True), nullable=True))
        batch_op.add_column(sa.Column('stored_by', sa.Text(), nullable=True))
        batch_op.add_column(sa.Column('stored_where', sa.Text(), nullable=True))



def downgrade() -> None:
    with op.batch_alter_table('new_duplicate', schema=None) as batch_op:
        batch_op.drop_column('stored_where')
        batch_op.drop_column('stored_by')
        batch_op.drop_column('stored_at')
        batch_op.drop_column('scan_problem')
        batch_op.drop_column('printed_by')
        batch_op.drop_column('printed_at')
        batch_op.drop_column('rule_set')

    with op.batch_alter_table('duplication_log', schema=None) as batch_op:
        batch_op.drop_constraint(op.f('ck_duplication_log_ballot_type'), type_='check')
        batch_op.drop_column('eligible_contests')
        batch_op.drop_column('ballot_type')

    with op.batch_alter_table('decision', schema=None) as batch_op:
        batch_op.drop_column('rule_set')

    with op.batch_alter_table('pair_signoff_serial', schema=None) as batch_op:
        batch_op.drop_index(batch_op.f('ix_pair_signoff_serial_serial'))

    op.drop_table('pair_signoff_serial')
    op.drop_table('new_duplicate_page')
    op.drop_table('pair_signoff')
    with op.batch_alter_table('board_ruling', schema=None) as batch_op:
        batch_op.drop_index(batch_op.f('ix_board_ruling_serial'))

    op.drop_table('board_ruling')
