"""ix_files_group_latest: a file group's latest version in one index probe

Revision ID: 0015
Revises: 0014
Create Date: 2026-11-27 13:20:00
"""
from alembic import op

revision = '0015'
down_revision = '0014'
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_index('ix_files_group_latest', 'files', ['tbl_id', 'file_id', 'base_instant'])


def downgrade() -> None:
    op.drop_index('ix_files_group_latest', table_name='files')
