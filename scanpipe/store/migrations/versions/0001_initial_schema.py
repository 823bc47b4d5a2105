"""initial schema: election, layout references, batches, cards, target scores, contest
readings, decisions, skipped files, events

Revision ID: 0001
Revises: (none)
Create Date: 2026-11-30 14:48:52.638661
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = '0001'
down_revision: str | None = None
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table('batch',
    sa.Column('name', sa.String(length=200), nullable=False),
    sa.Column('created_at', sa.DateTime(timezone=True), nullable=False),
    sa.Column('style', sa.String(length=64), nullable=True),
    sa.Column('precinct', sa.String(length=64), nullable=True),
    sa.Column('kind', sa.String(length=40), nullable=True),
    sa.Column('voided_at', sa.DateTime(timezone=True), nullable=True),
    sa.Column('void_reason', sa.Text(), nullable=True),
    sa.PrimaryKeyConstraint('name', name=op.f('pk_batch'))
    )
    op.create_table('decision',
    sa.Column('id', sa.Integer(), autoincrement=True, nullable=False),
    sa.Column('item', sa.String(length=80), nullable=False),
    sa.Column('item_kind', sa.String(length=40), nullable=False),
    sa.Column('contest', sa.String(length=64), nullable=False),
    sa.Column('votes', sa.JSON(), nullable=False),
    sa.Column('auditors', sa.JSON(), nullable=False),
    sa.Column('rule', sa.Text(), nullable=True),
    sa.Column('note', sa.Text(), nullable=True),
    sa.Column('state', sa.String(length=40), nullable=False),
    sa.Column('created_at', sa.DateTime(timezone=True), nullable=False),
    sa.Column('supersedes', sa.Integer(), nullable=True),
    sa.CheckConstraint("item_kind IN ('card', 'pair')", name=op.f('ck_decision_item_kind')),
    sa.CheckConstraint("state IN ('first_half', 'final', 'escalated', 'superseded')", name=op.f('ck_decision_state')),
    sa.ForeignKeyConstraint(['supersedes'], ['decision.id'], name=op.f('fk_decision_supersedes_decision')),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_decision')),
    sqlite_autoincrement=True
    )
    with op.batch_alter_table('decision', schema=None) as batch_op:
        batch_op.create_index('ix_decision_item_contest', ['item', 'contest'], unique=False)

    op.create_table('election',
    sa.Column('row_id', sa.Integer(), autoincrement=True, nullable=False),
    sa.Column('id', sa.String(length=64), nullable=False),
    sa.Column('name', sa.Text(), nullable=False),
    sa.Column('jurisdiction', sa.String(length=16), nullable=False),
    sa.Column('definition', sa.JSON(), nullable=False),
    sa.Column('layouts', sa.JSON(), nullable=False),
    sa.Column('sha256', sa.String(length=64), nullable=False),
    sa.Column('base', sa.Text(), nullable=True),
    sa.Column('loaded_at', sa.DateTime(timezone=True), nullable=False),
    sa.PrimaryKeyConstraint('row_id', name=op.f('pk_election'))
    )
    with op.batch_alter_table('election', schema=None) as batch_op:
        batch_op.create_index(batch_op.f('ix_election_id'), ['id'], unique=False)

    op.create_table('event',
    sa.Column('id', sa.Integer(), autoincrement=True, nullable=False),
    sa.Column('at', sa.DateTime(timezone=True), nullable=False),
    sa.Column('actor', sa.Text(), nullable=True),
    sa.Column('action', sa.String(length=64), nullable=False),
    sa.Column('detail', sa.JSON(), nullable=False),
    sa.Column('prev_hash', sa.String(length=64), nullable=True),
    sa.Column('hash', sa.String(length=64), nullable=True),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_event')),
    sqlite_autoincrement=True
    )
    with op.batch_alter_table('event', schema=None) as batch_op:
        batch_op.create_index(batch_op.f('ix_event_action'), ['action'], unique=False)

    op.create_table('skipped_file',
    sa.Column('id', sa.Integer(), autoincrement=True, nullable=False),
    sa.Column('path', sa.Text(), nullable=False),
    sa.Column('batch', sa.String(length=200), nullable=False),
    sa.Column('reason', sa.Text(), nullable=False),
    sa.Column('at', sa.DateTime(timezone=True), nullable=False),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_skipped_file')),
    sa.UniqueConstraint('path', 'batch', name=op.f('uq_skipped_file_path_batch'))
    )
    op.create_table('card',
    sa.Column('card_id', sa.String(length=80), nullable=False),
    sa.Column('sha256', sa.String(length=64), nullable=False),
    sa.Column('path', sa.Text(), nullable=False),
    sa.Column('page_index', sa.Integer(), nullable=False),
    sa.Column('page_count', sa.Integer(), nullable=False),
    sa.Column('batch', sa.String(length=200), nullable=False),
    sa.Column('kind', sa.String(length=40), nullable=False),
    sa.Column('label_kind', sa.String(length=40), nullable=True),
    sa.Column('label_serial', sa.String(length=32), nullable=True),
    sa.Column('base_serial', sa.String(length=32), nullable=True),
    sa.Column('label_revision', sa.Integer(), nullable=True),
    sa.Column('card_code', sa.JSON(), nullable=True),
    sa.Column('status', sa.String(length=40), nullable=False),
    sa.Column('reason', sa.String(length=40), nullable=True),
    sa.Column('detail', sa.Text(), nullable=True),
    sa.Column('reasons', sa.JSON(), nullable=False),
    sa.Column('style', sa.String(length=64), nullable=True),
    sa.Column('page', sa.Integer(), nullable=True),
    sa.Column('precinct', sa.String(length=64), nullable=True),
    sa.Column('style_source', sa.String(length=40), nullable=True),
    sa.Column('registration', sa.JSON(), nullable=True),
    sa.Column('machine_record', sa.JSON(), nullable=True),
    sa.Column('printed_text', sa.Text(), nullable=True),
    sa.Column('codes', sa.JSON(), nullable=False),
    sa.Column('seconds', sa.Double(), nullable=False),
    sa.Column('ingested_at', sa.DateTime(timezone=True), nullable=False),
    sa.Column('interpreted_at', sa.DateTime(timezone=True), nullable=False),
    sa.Column('thresholds_source', sa.Text(), nullable=True),
    sa.Column('interpretation_seq', sa.Integer(), nullable=False),
    sa.CheckConstraint("kind IN ('ballot', 'duplicate', 'original', 'unknown')", name=op.f('ck_card_kind')),
    sa.CheckConstraint("status IN ('read', 'machine_printed', 'unreadable')", name=op.f('ck_card_status')),
    sa.ForeignKeyConstraint(['batch'], ['batch.name'], name=op.f('fk_card_batch_batch')),
    sa.PrimaryKeyConstraint('card_id', name=op.f('pk_card'))
    )
    with op.batch_alter_table('card', schema=None) as batch_op:
        batch_op.create_index(batch_op.f('ix_card_base_serial'), ['base_serial'], unique=False)
        batch_op.create_index(batch_op.f('ix_card_batch'), ['batch'], unique=False)
        batch_op.create_index(batch_op.f('ix_card_path'), ['path'], unique=False)
        batch_op.create_index(batch_op.f('ix_card_sha256'), ['sha256'], unique=False)

    op.create_table('layout_reference',
    sa.Column('election_row', sa.Integer(), nullable=False),
    sa.Column('style', sa.String(length=64), nullable=False),
    sa.Column('page', sa.Integer(), nullable=False),
    sa.Column('filename', sa.Text(), nullable=False),
    sa.Column('sha256', sa.String(length=64), nullable=False),
    sa.Column('data', sa.LargeBinary(), nullable=False),
    sa.ForeignKeyConstraint(['election_row'], ['election.row_id'], name=op.f('fk_layout_reference_election_row_election'), ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('election_row', 'style', 'page', name=op.f('pk_layout_reference'))
    )
    op.create_table('contest_reading',
    sa.Column('card_id', sa.String(length=80), nullable=False),
    sa.Column('contest', sa.String(length=64), nullable=False),
    sa.Column('position', sa.Integer(), nullable=False),
    sa.Column('votes', sa.JSON(), nullable=False),
    sa.Column('outcome', sa.String(length=40), nullable=False),
    sa.Column('undervotes', sa.Integer(), nullable=False),
    sa.Column('unknown_options', sa.JSON(), nullable=False),
    sa.Column('source', sa.String(length=40), nullable=False),
    sa.CheckConstraint("outcome IN ('counted', 'overvote', 'pending')", name=op.f('ck_contest_reading_outcome')),
    sa.ForeignKeyConstraint(['card_id'], ['card.card_id'], name=op.f('fk_contest_reading_card_id_card'), ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('card_id', 'contest', name=op.f('pk_contest_reading')),
    sqlite_with_rowid=False
    )
    op.create_table('target_score',
    sa.Column('card_id', sa.String(length=80), nullable=False),
    sa.Column('contest', sa.String(length=64), nullable=False),
    sa.Column('option', sa.String(length=64), nullable=False),
    sa.Column('position', sa.Integer(), nullable=False),
    sa.Column('score', sa.Double(), nullable=False),
    sa.Column('fill_score', sa.Double(), nullable=False),
    sa.Column('stroke_score', sa.Double(), nullable=False),
    sa.Column('ring_score', sa.Double(), nullable=False),
    sa.Column('damage_score', sa.Double(), nullable=False),
    sa.Column('write_in_score', sa.Double(), nullable=False),
    sa.Column('box_x', sa.Double(), nullable=False),
    sa.Column('box_y', sa.Double(), nullable=False),
    sa.Column('box_w', sa.Double(), nullable=False),
    sa.Column('box_h', sa.Double(), nullable=False),
    sa.Column('shift_x', sa.Double(), nullable=False),
    sa.Column('shift_y', sa.Double(), nullable=False),
    sa.Column('status', sa.String(length=40), nullable=False),
    sa.Column('why', sa.Text(), nullable=False),
    sa.CheckConstraint("status IN ('yes', 'no', 'unknown')", name=op.f('ck_target_score_status')),
    sa.ForeignKeyConstraint(['card_id'], ['card.card_id'], name=op.f('fk_target_score_card_id_card'), ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('card_id', 'contest', 'option', name=op.f('pk_target_score')),
    sqlite_with_rowid=False
    )


def downgrade() -> None:
    op.drop_table('target_score')
    op.drop_table('contest_reading')
    op.drop_table('layout_reference')
    with op.batch_alter_table('card', schema=None) as batch_op:
        batch_op.drop_index(batch_op.f('ix_card_sha256'))
        batch_op.drop_index(batch_op.f('ix_card_path'))
        batch_op.drop_index(batch_op.f('ix_card_batch'))
        batch_op.drop_index(batch_op.f('ix_card_base_serial'))

    op.drop_table('card')
    op.drop_table('skipped_file')
    with op.batch_alter_table('event', schema=None) as batch_op:
        batch_op.drop_index(batch_op.f('ix_event_action'))

    op.drop_table('event')
    with op.batch_alter_table('election', schema=None) as batch_op:
        batch_op.drop_index(batch_op.f('ix_election_id'))

    op.drop_table('election')
    with op.batch_alter_table('decision', schema=None) as batch_op:
        batch_op.drop_index('ix_decision_item_contest')

    op.drop_table('decision')
    op.drop_table('batch')
