"""instant_meta.data compressed with lz4 on PostgreSQL (commit metadata of 10,000 files is ~4 MB:
pglz, the default, costs ~20 ms more per commit to write and to read back)

Revision ID: 0016
Revises: 0015
Create Date: 2026-11-27 23:40:00
"""
from alembic import op

from store.db.schema import lz4_compression

revision = '0016'
down_revision = '0015'
branch_labels = None
depends_on = None


def upgrade() -> None:
    lz4_compression(op.get_bind(), "instant_meta", "data")


def downgrade() -> None:
    bind = op.get_bind()
    if bind.dialect.name == "postgresql" and (bind.dialect.server_version_info or (0,)) >= (14,):
        op.execute("ALTER TABLE instant_meta ALTER COLUMN data SET COMPRESSION default")
