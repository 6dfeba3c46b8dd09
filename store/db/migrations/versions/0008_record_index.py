"""record_index: the record-level index (RFC-08) and the file groups it points at

Revision ID: 0008
Revises: 0007
Create Date: 2026-11-24 10:00:00
"""
import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import mysql

revision = '0008'
down_revision = '0007'
branch_labels = None
depends_on = None

_ID = sa.BigInteger().with_variant(sa.Integer(), 'sqlite')
_PARTITIONS = 16  # store/db/schema.py RECORD_INDEX_PARTITIONS


def upgrade() -> None:
    op.create_table(
        'record_index_file_group',
        sa.Column('fg_id', _ID, autoincrement=True, nullable=False),
        sa.Column('tbl_id', _ID, nullable=False),
        sa.Column('partition_path', sa.String(length=767), nullable=False),
        sa.Column('file_id', sa.String(length=128), nullable=False),
        sa.ForeignKeyConstraint(['tbl_id'], ['tbl.tbl_id'], name=op.f('fk_record_index_file_group_tbl_id_tbl'),
                                ondelete='CASCADE'),
        sa.PrimaryKeyConstraint('fg_id', name=op.f('pk_record_index_file_group')),
    )
    op.create_index('uq_record_index_fg', 'record_index_file_group', ['tbl_id', 'partition_path', 'file_id'],
                    unique=True, mysql_length={'partition_path': 255})
    op.create_table(
        'record_index',
        sa.Column('tbl_id', _ID, nullable=False),
        sa.Column('fg_id', _ID, nullable=False),
        sa.Column('instant', sa.BigInteger(), nullable=False),
        sa.Column('shard', sa.SmallInteger(), nullable=False),
        sa.Column('record_key', sa.String(length=512).with_variant(
            mysql.VARCHAR(512, collation='utf8mb4_bin'), 'mysql', 'mariadb'), nullable=False),
        sa.ForeignKeyConstraint(['tbl_id'], ['tbl.tbl_id'], name=op.f('fk_record_index_tbl_id_tbl'),
                                ondelete='CASCADE'),
        sa.PrimaryKeyConstraint('tbl_id', 'shard', 'record_key', name=op.f('pk_record_index')),
        postgresql_partition_by='HASH (shard)',
        sqlite_with_rowid=False,
    )
    if op.get_bind().dialect.name == 'postgresql':
        for i in range(_PARTITIONS):
            op.execute(f'CREATE TABLE record_index_p{i:02d} PARTITION OF record_index '
                       f'FOR VALUES WITH (MODULUS {_PARTITIONS}, REMAINDER {i})')
    op.create_index('ix_record_index_fg', 'record_index', ['tbl_id', 'fg_id'])


def downgrade() -> None:
    op.drop_index('ix_record_index_fg', table_name='record_index')
    op.drop_table('record_index')  # PostgreSQL drops its partitions with it
    op.drop_index('uq_record_index_fg', table_name='record_index_file_group')
    op.drop_table('record_index_file_group')
