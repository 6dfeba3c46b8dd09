"""notification_log.message compressed with lz4 on PostgreSQL (the events of an alter of 2,000
partitions are ~14 MB of JSON: pglz, the default, doubles the time of writing them)

Revision ID: 0021
Revises: 0020
Create Date: 2026-12-03 22:15:00
"""
from alembic import op

from store.db.schema import lz4_compression

revision = '0021'
down_revision = '0020'
branch_labels = None
depends_on = None


def upgrade() -> None:
    lz4_compression(op.get_bind(), "notification_log", "message")


def downgrade() -> None:
    bind = op.get_bind()
    if bind.dialect.name == "postgresql" and (bind.dialect.server_version_info or (0,)) >= (14,):
        op.execute("ALTER TABLE notification_log ALTER COLUMN message SET COMPRESSION default")
