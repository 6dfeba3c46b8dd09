"""txns.txn_type, txns.min_open_txn: Hive's transaction types (TXNS.TXN_TYPE) and the lowest open
transaction when each one opened (Hive's MIN_HISTORY_LEVEL), which bounds the cleanup of
txn_write_ids (store/hms/txn/write_ids.py); an index on txn_write_ids.txn_id for that cleanup

Revision ID: 0019
Revises: 0018
Create Date: 2026-12-03 14:40:00
"""
import sqlalchemy as sa
from alembic import op

revision = '0019'
down_revision = '0018'
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table('txns') as b:
        b.add_column(sa.Column('txn_type', sa.Integer(), nullable=False, server_default='0'))
        b.add_column(sa.Column('min_open_txn', sa.BigInteger(), nullable=True))
    op.create_index('ix_txn_write_ids_txn_id', 'txn_write_ids', ['txn_id'])


def downgrade() -> None:
    op.drop_index('ix_txn_write_ids_txn_id', table_name='txn_write_ids')
    with op.batch_alter_table('txns') as b:
        b.drop_column('min_open_txn')
        b.drop_column('txn_type')
