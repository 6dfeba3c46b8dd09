"""files: one unique index, uq_files_live (tbl_id, partition_path, is_deleted, file_id, base_instant,
name), instead of uq_files_name (tbl_id, partition_path, name) and ix_files_live (tbl_id,
partition_path, is_deleted, file_id, base_instant): each index cost a commit about a third of its
row inserts, the names landing at random places (issue 43). A name carries its file id, so lookups
by name go through the new index (store/hudi/file_listing.py names_in).

Revision ID: 0031
Revises: 0030
Create Date: 2026-12-06 04:00:00
"""
from alembic import op

revision = '0031'
down_revision = '0030'
branch_labels = None
depends_on = None

_COLUMNS = ["tbl_id", "partition_path", "is_deleted", "file_id", "base_instant", "name"]
_MYSQL_LENGTH = {"partition_path": 255, "name": 255}


def upgrade() -> None:
    op.create_index("uq_files_live", "files", _COLUMNS, unique=True, mysql_length=_MYSQL_LENGTH)
    op.drop_index("ix_files_live", table_name="files")
    op.drop_index("uq_files_name", table_name="files")


def downgrade() -> None:
    op.create_index("uq_files_name", "files", ["tbl_id", "partition_path", "name"], unique=True,
                    mysql_length={"partition_path": 200, "name": 255})
    op.create_index("ix_files_live", "files", _COLUMNS[:-1], mysql_length={"partition_path": 255})
    op.drop_index("uq_files_live", table_name="files")
