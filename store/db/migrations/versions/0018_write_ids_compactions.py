"""txn_write_ids, next_write_ids, txn_write_set, compactions: Hive's write ids of transactional tables,
the write set of committed transactions and compaction requests (store/hms/txn/write_ids.py)

Revision ID: 0018
Revises: 0017
Create Date: 2026-12-03 12:20:00
"""
import sqlalchemy as sa
from alembic import op

revision = '0018'
down_revision = '0017'
branch_labels = None
depends_on = None

_ID = sa.BigInteger().with_variant(sa.Integer(), 'sqlite')


def upgrade() -> None:
    op.create_table(
        'txn_write_ids',
        sa.Column('db_name', sa.String(length=128), nullable=False),
        sa.Column('tbl_name', sa.String(length=256), nullable=False),
        sa.Column('txn_id', sa.BigInteger(), nullable=False),
        sa.Column('write_id', sa.BigInteger(), nullable=False),
        sa.PrimaryKeyConstraint('db_name', 'tbl_name', 'txn_id', name=op.f('pk_txn_write_ids')),
        sa.UniqueConstraint('db_name', 'tbl_name', 'write_id', name='uq_txn_write_ids_write_id'),
    )
    op.create_table(
        'next_write_ids',
        sa.Column('db_name', sa.String(length=128), nullable=False),
        sa.Column('tbl_name', sa.String(length=256), nullable=False),
        sa.Column('next_id', sa.BigInteger(), nullable=False),
        sa.PrimaryKeyConstraint('db_name', 'tbl_name', name=op.f('pk_next_write_ids')),
    )
    op.create_table(
        'txn_write_set',
        sa.Column('row_id', _ID, autoincrement=True, nullable=False),
        sa.Column('db_name', sa.String(length=128), nullable=False),
        sa.Column('tbl_name', sa.String(length=256), nullable=False),
        sa.Column('part_name', sa.String(length=767), nullable=True),
        sa.Column('txn_id', sa.BigInteger(), nullable=False),
        sa.Column('commit_id', sa.BigInteger(), nullable=False),
        sa.Column('operation', sa.Integer(), nullable=False),
        sa.PrimaryKeyConstraint('row_id', name=op.f('pk_txn_write_set')),
    )
    op.create_index('ix_txn_write_set_db_tbl', 'txn_write_set', ['db_name', 'tbl_name'])
    op.create_index('ix_txn_write_set_commit_id', 'txn_write_set', ['commit_id'])
    op.create_table(
        'compactions',
        sa.Column('id', sa.BigInteger(), autoincrement=False, nullable=False),
        sa.Column('db_name', sa.String(length=128), nullable=False),
        sa.Column('tbl_name', sa.String(length=256), nullable=False),
        sa.Column('part_name', sa.String(length=767), nullable=True),
        sa.Column('state', sa.String(length=1), nullable=False),
        sa.Column('type', sa.Integer(), nullable=False),
        sa.Column('run_as', sa.String(length=128), nullable=True),
        sa.Column('properties', sa.Text(), nullable=True),
        sa.Column('initiator_id', sa.String(length=128), nullable=True),
        sa.Column('initiator_version', sa.String(length=128), nullable=True),
        sa.Column('pool_name', sa.String(length=128), nullable=True),
        sa.Column('number_of_buckets', sa.Integer(), nullable=True),
        sa.Column('order_by', sa.Text(), nullable=True),
        sa.Column('enqueue_ms', sa.BigInteger(), nullable=False),
        sa.PrimaryKeyConstraint('id', name=op.f('pk_compactions')),
    )
    op.create_index('ix_compactions_db_tbl', 'compactions', ['db_name', 'tbl_name'])


def downgrade() -> None:
    op.drop_index('ix_compactions_db_tbl', table_name='compactions')
    op.drop_table('compactions')
    op.drop_index('ix_txn_write_set_commit_id', table_name='txn_write_set')
    op.drop_index('ix_txn_write_set_db_tbl', table_name='txn_write_set')
    op.drop_table('txn_write_set')
    op.drop_table('next_write_ids')
    op.drop_table('txn_write_ids')
