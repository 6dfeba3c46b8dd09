"""record_index_deletes: keys a commit took out of the record index, kept until the storage mirror
wrote them into the metadata table's `record_index` partition (store/hudi/metadata_table/);
column_stats.total_size and uncompressed_size: a column's bytes in a base file (the metadata
table's column_stats records carry them)

Revision ID: 0022
Revises: 0021
Create Date: 2026-12-04 01:40:00
"""
import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import mysql

revision = '0022'
down_revision = '0021'
branch_labels = None
depends_on = None

_ID = sa.BigInteger().with_variant(sa.Integer(), 'sqlite')


def upgrade() -> None:
    op.create_table(
        'record_index_deletes',
        sa.Column('tbl_id', _ID, nullable=False),
        sa.Column('instant', sa.BigInteger(), nullable=False),
        sa.Column('record_key', sa.String(length=512).with_variant(
            mysql.VARCHAR(512, collation='utf8mb4_bin'), 'mysql', 'mariadb'), nullable=False),
        sa.PrimaryKeyConstraint('tbl_id', 'instant', 'record_key', name=op.f('pk_record_index_deletes')),
        sqlite_with_rowid=False,
    )
    op.add_column('column_stats', sa.Column('total_size', sa.BigInteger(), nullable=True))
    op.add_column('column_stats', sa.Column('uncompressed_size', sa.BigInteger(), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table('column_stats') as batch:
        batch.drop_column('uncompressed_size')
        batch.drop_column('total_size')
    op.drop_table('record_index_deletes')
