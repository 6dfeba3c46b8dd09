"""Hive's name widths: table names up to 256 characters, column names up to 767

Revision ID: 0004
Revises: 0003
Create Date: 2026-11-22 07:05:00
"""
import sqlalchemy as sa
from alembic import op

revision = '0004'
down_revision = '0003'
branch_labels = None
depends_on = None

# (table, column, old length, new length, nullable). SQLite does not enforce lengths.
COLUMNS = [
    ("tbl", "name", 128, 256, False),
    ("locks", "tbl_name", 128, 256, True),
    ("schema", "name", 128, 767, False),
    ("partition_key_val", "part_key_name", 128, 767, False),
]


def upgrade() -> None:
    if op.get_bind().dialect.name == "sqlite":
        return
    for table, column, old, new, nullable in COLUMNS:
        op.alter_column(table, column, existing_type=sa.String(old), existing_nullable=nullable,
                        type_=sa.String(new))


def downgrade() -> None:
    if op.get_bind().dialect.name == "sqlite":
        return
    for table, column, old, new, nullable in COLUMNS:
        op.alter_column(table, column, existing_type=sa.String(new), existing_nullable=nullable,
                        type_=sa.String(old))
