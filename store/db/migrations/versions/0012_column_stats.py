"""column_stats: per-file column statistics (RFC-27), file sizes, per-partition aggregates

Revision ID: 0012
Revises: 0011
Create Date: 2026-11-24 13:00:00
"""
import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import mysql

revision = '0012'
down_revision = '0011'
branch_labels = None
depends_on = None

_ID = sa.BigInteger().with_variant(sa.Integer(), 'sqlite')
_NAME = sa.String(length=256).with_variant(mysql.VARCHAR(256, collation='utf8mb4_bin'), 'mysql', 'mariadb')


def _bounds() -> list[sa.Column]:
    return [sa.Column('min_key', sa.LargeBinary(length=256), nullable=True),
            sa.Column('max_key', sa.LargeBinary(length=256), nullable=True),
            sa.Column('null_count', sa.BigInteger(), nullable=True),
            sa.Column('value_count', sa.BigInteger(), nullable=True)]


def upgrade() -> None:
    op.create_table(
        'file_stats',
        sa.Column('file_row_id', _ID, nullable=False),
        sa.Column('tbl_id', _ID, nullable=False),
        sa.Column('total_size', sa.BigInteger(), nullable=False),
        sa.Column('uncompressed_size', sa.BigInteger(), nullable=False),
        sa.Column('num_rows', sa.BigInteger(), nullable=True),
        sa.ForeignKeyConstraint(['file_row_id'], ['files.id'], name=op.f('fk_file_stats_file_row_id_files'),
                                ondelete='CASCADE'),
        sa.ForeignKeyConstraint(['tbl_id'], ['tbl.tbl_id'], name=op.f('fk_file_stats_tbl_id_tbl'), ondelete='CASCADE'),
        sa.PrimaryKeyConstraint('file_row_id', name=op.f('pk_file_stats')),
    )
    op.create_index('ix_file_stats_tbl', 'file_stats', ['tbl_id'])
    op.create_table(
        'column_stats',
        sa.Column('file_row_id', _ID, nullable=False),
        sa.Column('column_name', _NAME, nullable=False),
        *_bounds(),
        sa.ForeignKeyConstraint(['file_row_id'], ['files.id'], name=op.f('fk_column_stats_file_row_id_files'),
                                ondelete='CASCADE'),
        sa.PrimaryKeyConstraint('file_row_id', 'column_name', name=op.f('pk_column_stats')),
    )
    op.create_table(
        'partition_column_stats',
        sa.Column('tbl_id', _ID, nullable=False),
        sa.Column('partition_path', sa.String(length=767), nullable=False),
        sa.Column('column_name', _NAME, nullable=False),
        *_bounds(),
        sa.Column('files_without_stats', sa.BigInteger(), nullable=False),
        sa.ForeignKeyConstraint(['tbl_id'], ['tbl.tbl_id'], name=op.f('fk_partition_column_stats_tbl_id_tbl'),
                                ondelete='CASCADE'),
    )
    op.create_index('uq_partition_column_stats', 'partition_column_stats',
                    ['tbl_id', 'partition_path', 'column_name'], unique=True, mysql_length={'partition_path': 255})


def downgrade() -> None:
    op.drop_table('partition_column_stats')
    op.drop_table('column_stats')
    op.drop_table('file_stats')
