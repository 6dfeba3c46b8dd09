"""tbl.meta_version, changed by triggers whenever what a Table answer is built from changes: what
lets a server find a table's kept answer by the table's id and this value alone (issue 43,
store/db/table_version.py)

Revision ID: 0028
Revises: 0027
Create Date: 2026-12-05 17:30:00
"""
import sqlalchemy as sa
from alembic import op

from store.db import table_version

revision = '0028'
down_revision = '0027'
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("tbl") as batch:
        batch.add_column(sa.Column("meta_version", sa.BigInteger(), nullable=False, server_default="0"))
    table_version.install(op.get_bind())  # the triggers then give every existing row its own value
    op.get_bind().execute(sa.text("UPDATE tbl SET meta_version = 0"))


def downgrade() -> None:
    conn = op.get_bind()
    for name in table_version.TRIGGERS:
        if conn.dialect.name == "postgresql":
            on = {"hms_tbl_meta_ins": "tbl", "hms_tbl_meta_upd": "tbl", "hms_db_meta_upd": "db"}.get(
                name, '"' + name.removeprefix("hms_").rsplit("_meta_", 1)[0] + '"')
            conn.exec_driver_sql(f"DROP TRIGGER IF EXISTS {name} ON {on}")
        else:
            conn.exec_driver_sql(f"DROP TRIGGER IF EXISTS {name}")
    with op.batch_alter_table("tbl") as batch:
        batch.drop_column("meta_version")
