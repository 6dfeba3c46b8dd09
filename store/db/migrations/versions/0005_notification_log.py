"""notification log (Hive's NOTIFICATION_LOG) and its event id sequence row

Revision ID: 0005
Revises: 0004
Create Date: 2026-11-23 09:00:00
"""
import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import mysql

revision = '0005'
down_revision = '0004'
branch_labels = None
depends_on = None

SEQUENCE = "notification_event"
LONG_TEXT = sa.Text().with_variant(mysql.LONGTEXT(), 'mariadb').with_variant(mysql.LONGTEXT(), 'mysql')


def upgrade() -> None:
    op.create_table('notification_log',
    sa.Column('event_id', sa.BigInteger(), autoincrement=False, nullable=False),
    sa.Column('event_time', sa.Integer(), nullable=False),
    sa.Column('event_type', sa.String(length=64), nullable=False),
    sa.Column('cat_name', sa.String(length=128), nullable=True),
    sa.Column('db_name', sa.String(length=128), nullable=True),
    sa.Column('tbl_name', sa.String(length=256), nullable=True),
    sa.Column('message', LONG_TEXT, nullable=False),
    sa.Column('message_format', sa.String(length=32), nullable=True),
    sa.PrimaryKeyConstraint('event_id', name=op.f('pk_notification_log'))
    )
    # the first event gets id 1 (the log creates the row itself when it is missing, too)
    op.execute(sa.text("INSERT INTO sequences (name, next_val) VALUES (:name, 1)").bindparams(name=SEQUENCE))


def downgrade() -> None:
    op.execute(sa.text("DELETE FROM sequences WHERE name = :name").bindparams(name=SEQUENCE))
    op.drop_table('notification_log')
