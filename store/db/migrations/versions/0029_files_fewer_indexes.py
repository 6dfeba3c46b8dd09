"""files: no foreign key on tbl_id, and no ix_files_group (ix_files_group_latest finds a group's
files as well): a commit writes a row per file, and the check and every index cost each row (issue 43)

Revision ID: 0029
Revises: 0028
Create Date: 2026-12-06 00:40:00
"""
import sqlalchemy as sa
from alembic import op

revision = '0029'
down_revision = '0028'
branch_labels = None
depends_on = None


def upgrade() -> None:
    bind = op.get_bind()
    if bind.dialect.name != "sqlite":  # SQLite drops a constraint only by copying the table: it stays
        for fk in sa.inspect(bind).get_foreign_keys("files"):
            name = fk.get("name")
            if fk["referred_table"] == "tbl" and name:
                op.drop_constraint(name, "files", type_="foreignkey")
    op.drop_index("ix_files_group", table_name="files")


def downgrade() -> None:
    op.create_index("ix_files_group", "files", ["tbl_id", "partition_path", "file_id"],
                    mysql_length={"partition_path": 255})
    if op.get_bind().dialect.name != "sqlite":
        op.create_foreign_key("files_tbl_id_fkey", "files", "tbl", ["tbl_id"], ["tbl_id"], ondelete="CASCADE")
