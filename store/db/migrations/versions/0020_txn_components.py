"""txn_components: Hive's TXN_COMPONENTS, what an open or aborted transaction writes (its write locks'
components and add_dynamic_partitions' partitions; store/hms/txn/locks.py). The write components of
the locks open transactions hold now are copied in: their commits' write sets come from here.

Revision ID: 0020
Revises: 0019
Create Date: 2026-12-03 17:40:00
"""
import sqlalchemy as sa
from alembic import op

revision = '0020'
down_revision = '0019'
branch_labels = None
depends_on = None

_ID = sa.BigInteger().with_variant(sa.Integer(), 'sqlite')


def upgrade() -> None:
    op.create_table(
        'txn_components',
        sa.Column('row_id', _ID, autoincrement=True, nullable=False),
        sa.Column('txn_id', sa.BigInteger(), nullable=False),
        sa.Column('db_name', sa.String(length=128), nullable=False),
        sa.Column('tbl_name', sa.String(length=256), nullable=True),
        sa.Column('part_name', sa.String(length=767), nullable=True),
        sa.Column('operation', sa.Integer(), nullable=False),
        sa.Column('write_id', sa.BigInteger(), nullable=True),
        sa.PrimaryKeyConstraint('row_id', name=op.f('pk_txn_components')),
    )
    op.create_index('ix_txn_components_txn_id', 'txn_components', ['txn_id'])
    op.create_index('ix_txn_components_db_tbl', 'txn_components', ['db_name', 'tbl_name'])
    # INSERT 2, UPDATE 3, DELETE 4 (Hive's DataOperationType) of open transactions' transactional locks
    op.execute(
        "INSERT INTO txn_components (txn_id, db_name, tbl_name, part_name, operation, write_id) "
        "SELECT l.txn_id, l.db_name, l.tbl_name, l.part_name, l.operation, w.write_id FROM locks l "
        "JOIN txns t ON t.txn_id = l.txn_id AND t.state = 'o' "
        "LEFT JOIN txn_write_ids w ON w.txn_id = l.txn_id AND w.db_name = l.db_name AND w.tbl_name = l.tbl_name "
        "WHERE l.txn_id > 0 AND l.operation IN (2, 3, 4) "
        "AND (l.is_transactional IS NULL OR l.is_transactional = TRUE)")


def downgrade() -> None:
    op.drop_index('ix_txn_components_db_tbl', table_name='txn_components')
    op.drop_index('ix_txn_components_txn_id', table_name='txn_components')
    op.drop_table('txn_components')
