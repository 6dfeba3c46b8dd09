"""files: ix_files_live (tbl_id, partition_path, is_deleted) gains file_id and base_instant and
replaces ix_files_group_latest (tbl_id, file_id, base_instant), whose random file ids made each
commit's rows land all over it (issue 43)

Revision ID: 0030
Revises: 0029
Create Date: 2026-12-06 01:00:00
"""
from alembic import op

revision = '0030'
down_revision = '0029'
branch_labels = None
depends_on = None

_MYSQL_LENGTH = {"partition_path": 255}


def upgrade() -> None:
    op.drop_index("ix_files_live", table_name="files")
    op.create_index("ix_files_live", "files", ["tbl_id", "partition_path", "is_deleted", "file_id", "base_instant"],
                    mysql_length=_MYSQL_LENGTH)
    op.drop_index("ix_files_group_latest", table_name="files")


def downgrade() -> None:
    op.create_index("ix_files_group_latest", "files", ["tbl_id", "file_id", "base_instant"])
    op.drop_index("ix_files_live", table_name="files")
    op.create_index("ix_files_live", "files", ["tbl_id", "partition_path", "is_deleted"], mysql_length=_MYSQL_LENGTH)
