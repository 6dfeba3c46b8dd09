"""tbl.parts_version, changed by triggers on `partitions` whenever a table's partition rows change:
what lets a server keep partition lists in memory (issue 43, store/db/parts_version.py)

Revision ID: 0026
Revises: 0025
Create Date: 2026-12-05 02:00:00
"""
import sqlalchemy as sa
from alembic import op

from store.db import parts_version

revision = '0026'
down_revision = '0025'
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("tbl") as batch:
        batch.add_column(sa.Column("parts_version", sa.BigInteger(), nullable=False, server_default="0"))
    conn = op.get_bind()
    # tables that have partitions already start from a value no cache has seen
    conn.execute(sa.text("UPDATE tbl SET parts_version = :v").bindparams(v=_random()))
    parts_version.install(conn)


def _random() -> int:
    import secrets
    return secrets.randbits(62) + 1


def downgrade() -> None:
    conn = op.get_bind()
    for name in parts_version.TRIGGERS:
        if conn.dialect.name == "postgresql":
            conn.exec_driver_sql(f"DROP TRIGGER IF EXISTS {name} ON partitions")
        else:
            conn.exec_driver_sql(f"DROP TRIGGER IF EXISTS {name}")
    with op.batch_alter_table("tbl") as batch:
        batch.drop_column("parts_version")
