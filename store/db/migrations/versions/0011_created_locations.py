"""created_locations: directories the server made itself (what it may later delete or move)

Revision ID: 0011
Revises: 0010
Create Date: 2026-11-24 09:40:00
"""
import sqlalchemy as sa
from alembic import op

revision = '0011'
down_revision = '0010'
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        'created_locations',
        sa.Column('loc_hash', sa.String(length=64), nullable=False),
        sa.Column('location', sa.Text(), nullable=False),
        sa.Column('create_time', sa.BigInteger(), nullable=False),
        sa.PrimaryKeyConstraint('loc_hash', name=op.f('pk_created_locations')),
    )


def downgrade() -> None:
    op.drop_table('created_locations')
