"""case-sensitive partition names, key values and parameter keys on MySQL/MariaDB

Revision ID: 0003
Revises: 0002
Create Date: 2026-11-22 07:00:00
"""
import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import mysql

revision = '0003'
down_revision = '0002'
branch_labels = None
depends_on = None

# (table, column, length, nullable): compared exactly (utf8mb4_bin) instead of the default
# case- and trailing-space-insensitive collation; other backends already compare exactly.
COLUMNS = [
    ("partitions", "part_name", 767, False),
    ("partition_key_val", "part_key_val", 256, False),
    ("db_params", "param_key", 256, False),
    ("tbl_params", "param_key", 256, False),
    ("partition_params", "param_key", 256, False),
]


def upgrade() -> None:
    if op.get_bind().dialect.name not in ("mysql", "mariadb"):
        return
    for table, column, length, nullable in COLUMNS:
        op.alter_column(table, column, existing_type=sa.String(length), existing_nullable=nullable,
                        type_=mysql.VARCHAR(length, charset="utf8mb4", collation="utf8mb4_bin"))


def downgrade() -> None:
    if op.get_bind().dialect.name not in ("mysql", "mariadb"):
        return
    for table, column, length, nullable in COLUMNS:
        op.alter_column(table, column, existing_type=mysql.VARCHAR(length, collation="utf8mb4_bin"),
                        existing_nullable=nullable, type_=sa.String(length))
