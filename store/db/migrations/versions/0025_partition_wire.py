"""partitions.w_values, w_times, w_location, w_params: each partition's own parts of its Thrift
encoding, so that list answers are concatenated by the database (issue 43,
store/hms/partitions/partition_wire.py); filled here for the partitions already stored

Revision ID: 0025
Revises: 0024
Create Date: 2026-12-04 23:00:00
"""
import sqlalchemy as sa
from alembic import op

from store.db.schema import Blob

revision = '0025'
down_revision = '0024'
branch_labels = None
depends_on = None

COLUMNS = ("w_values", "w_times", "w_location", "w_params")


def upgrade() -> None:
    with op.batch_alter_table("partitions") as batch:
        for name in COLUMNS:
            batch.add_column(sa.Column(name, Blob, nullable=True))
    fill(op.get_bind())


def fill(conn, chunk: int = 10_000) -> int:
    """Computes the parts of every partition without a descriptor of its own; how many."""
    from store.hms.partitions import refresh_partition_wire  # the store's own encoder
    ids = list(conn.execute(sa.text("SELECT part_id FROM partitions WHERE sd_id IS NULL ORDER BY part_id")).scalars())
    for start in range(0, len(ids), chunk):
        refresh_partition_wire(conn, ids[start:start + chunk])
    return len(ids)


def downgrade() -> None:
    with op.batch_alter_table("partitions") as batch:
        for name in COLUMNS:
            batch.drop_column(name)
