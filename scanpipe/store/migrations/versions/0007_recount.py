"""recount case: certified results, cases, petitions, reports, certifications

Revision ID: 0007
Revises: 0006
Create Date: 2026-12-01 15:23:45.429794
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = '0007'
down_revision: str | None = '0006'
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table('recount_certified_import',
    sa.Column('id', sa.Integer(), autoincrement=True, nullable=False),
    sa.Column('election_id', sa.String(length=64), nullable=False),
    sa.Column('election_sha256', sa.String(length=64), nullable=False),
    sa.Column('source', sa.Text(), nullable=False),
    sa.Column('sha256', sa.String(length=64), nullable=False),
    sa.Column('format', sa.String(length=40), nullable=False),
    sa.Column('status', sa.String(length=40), nullable=True),
    sa.Column('rows', sa.Integer(), nullable=False),
    sa.Column('imported_at', sa.DateTime(timezone=True), nullable=False),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_recount_certified_import')),
    sqlite_autoincrement=True
    )
    op.create_table('recount_case',
    sa.Column('id', sa.Integer(), autoincrement=True, nullable=False),
    sa.Column('election_id', sa.String(length=64), nullable=False),
    sa.Column('jurisdiction', sa.String(length=16), nullable=False),
    sa.Column('rule_set', sa.String(length=32), nullable=False),
    sa.Column('contest', sa.String(length=64), nullable=False),
    sa.Column('petitioner', sa.Text(), nullable=False),
    sa.Column('petitioner_option', sa.String(length=64), nullable=False),
    sa.Column('precincts', sa.JSON(), nullable=False),
    sa.Column('certified_import', sa.Integer(), nullable=False),
    sa.Column('state', sa.String(length=40), nullable=False),
    sa.Column('opened_at', sa.DateTime(timezone=True), nullable=False),
    sa.Column('terminated_at', sa.DateTime(timezone=True), nullable=True),
    sa.Column('terminated_by', sa.Text(), nullable=True),
    sa.Column('termination_reason', sa.Text(), nullable=True),
    sa.Column('finished_precincts', sa.JSON(), nullable=True),
    sa.Column('certified_at', sa.DateTime(timezone=True), nullable=True),
    sa.CheckConstraint("state IN ('open', 'terminated', 'certified')", name=op.f('ck_recount_case_state')),
    sa.ForeignKeyConstraint(['certified_import'], ['recount_certified_import.id'], name=op.f('fk_recount_case_certified_import_recount_certified_import')),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_recount_case')),
    sqlite_autoincrement=True
    )
    op.create_table('recount_certified_count',
    sa.Column('import_id', sa.Integer(), nullable=False),
    sa.Column('precinct', sa.String(length=64), nullable=False),
    sa.Column('contest', sa.String(length=64), nullable=False),
    sa.Column('option', sa.String(length=64), nullable=False),
    sa.Column('votes', sa.Integer(), nullable=False),
    sa.ForeignKeyConstraint(['import_id'], ['recount_certified_import.id'], name=op.f('fk_recount_certified_count_import_id_recount_certified_import'), ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('import_id', 'precinct', 'contest', 'option', name=op.f('pk_recount_certified_count')),
    sqlite_with_rowid=False
    )
    op.create_table('recount_petition',
    sa.Column('id', sa.Integer(), autoincrement=True, nullable=False),
    sa.Column('case_id', sa.Integer(), nullable=False),
    sa.Column('kind', sa.String(length=40), nullable=False),
    sa.Column('petitioner', sa.Text(), nullable=False),
    sa.Column('petitioner_option', sa.String(length=64), nullable=False),
    sa.Column('precincts', sa.JSON(), nullable=False),
    sa.Column('filed_on', sa.String(length=10), nullable=False),
    sa.Column('certified_on', sa.String(length=10), nullable=False),
    sa.Column('assessment', sa.JSON(), nullable=False),
    sa.Column('at', sa.DateTime(timezone=True), nullable=False),
    sa.CheckConstraint("kind IN ('petition', 'counterpetition')", name=op.f('ck_recount_petition_kind')),
    sa.ForeignKeyConstraint(['case_id'], ['recount_case.id'], name=op.f('fk_recount_petition_case_id_recount_case')),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_recount_petition')),
    sqlite_autoincrement=True
    )
    with op.batch_alter_table('recount_petition', schema=None) as batch_op:
        batch_op.create_index(batch_op.f('ix_recount_petition_case_id'), ['case_id'], unique=False)

    op.create_table('recount_report',
    sa.Column('id', sa.Integer(), autoincrement=True, nullable=False),
    sa.Column('case_id', sa.Integer(), nullable=False),
    sa.Column('generated_at', sa.DateTime(timezone=True), nullable=False),
    sa.Column('data_sha256', sa.String(length=64), nullable=False),
    sa.Column('files', sa.JSON(), nullable=False),
    sa.Column('folder', sa.Text(), nullable=False),
    sa.Column('complete', sa.Integer(), nullable=False),
    sa.ForeignKeyConstraint(['case_id'], ['recount_case.id'], name=op.f('fk_recount_report_case_id_recount_case')),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_recount_report')),
    sqlite_autoincrement=True
    )
    with op.batch_alter_table('recount_report', schema=None) as batch_op:
        batch_op.create_index(batch_op.f('ix_recount_report_case_id'), ['case_id'], unique=False)

    op.create_table('recount_certification',
    sa.Column('id', sa.Integer(), autoincrement=True, nullable=False),
    sa.Column('case_id', sa.Integer(), nullable=False),
    sa.Column('report_id', sa.Integer(), nullable=False),
    sa.Column('members', sa.JSON(), nullable=False),
    sa.Column('certified_at', sa.DateTime(timezone=True), nullable=False),
    sa.Column('data_sha256', sa.String(length=64), nullable=False),
    sa.Column('report_sha256', sa.String(length=64), nullable=False),
    sa.Column('files', sa.JSON(), nullable=False),
    sa.Column('report_json', sa.Text(), nullable=False),
    sa.Column('report_html', sa.Text(), nullable=False),
    sa.Column('report_pdf', sa.LargeBinary(), nullable=False),
    sa.Column('results_json', sa.Text(), nullable=False),
    sa.ForeignKeyConstraint(['case_id'], ['recount_case.id'], name=op.f('fk_recount_certification_case_id_recount_case')),
    sa.ForeignKeyConstraint(['report_id'], ['recount_report.id'], name=op.f('fk_recount_certification_report_id_recount_report')),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_recount_certification')),
    sqlite_autoincrement=True
    )
    with op.batch_alter_table('recount_certification', schema=None) as batch_op:
        batch_op.create_index(batch_op.f('ix_recount_certification_case_id'), ['case_id'], unique=False)



def downgrade() -> None:
    with op.batch_alter_table('recount_certification', schema=None) as batch_op:
        batch_op.drop_index(batch_op.f('ix_recount_certification_case_id'))

    op.drop_table('recount_certification')
    with op.batch_alter_table('recount_report', schema=None) as batch_op:
        batch_op.drop_index(batch_op.f('ix_recount_report_case_id'))

    op.drop_table('recount_report')
    with op.batch_alter_table('recount_petition', schema=None) as batch_op:
        batch_op.drop_index(batch_op.f('ix_recount_petition_case_id'))

    op.drop_table('recount_petition')
    op.drop_table('recount_certified_count')
    op.drop_table('recount_case')
    op.drop_table('recount_certified_import')
