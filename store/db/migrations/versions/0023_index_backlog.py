"""index_backlog: file groups of tracked Hudi tables whose column statistics and record index
keys a catch-up left to be read after its call (store/hudi/timeline/catch_up.py)

Revision ID: 0023
Revises: 0022
Create Date: 2026-12-04 16:40:00
"""
import sqlalchemy as sa
from alembic import op

revision = '0023'
down_revision = '0022'
branch_labels = None
depends_on = None

_ID = sa.BigInteger().with_variant(sa.Integer(), 'sqlite')


def upgrade() -> None:
    op.create_table(
        'index_backlog',
        sa.Column('entry_id', _ID, autoincrement=True, nullable=False),
        sa.Column('tbl_id', _ID, nullable=False),
        sa.Column('partition_path', sa.String(length=767), nullable=False),
        sa.Column('file_id', sa.String(length=128), nullable=False),
        sa.ForeignKeyConstraint(['tbl_id'], ['tbl.tbl_id'], name=op.f('fk_index_backlog_tbl_id_tbl'),
                                ondelete='CASCADE'),
        sa.PrimaryKeyConstraint('entry_id', name=op.f('pk_index_backlog')),
    )
    op.create_index('ix_index_backlog_tbl', 'index_backlog', ['tbl_id'])


def downgrade() -> None:
    op.drop_index('ix_index_backlog_tbl', table_name='index_backlog')
    op.drop_table('index_backlog')
