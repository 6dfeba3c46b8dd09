"""delegation_keys, delegation_tokens: Hive delegation tokens issued to Kerberos users

Revision ID: 0014
Revises: 0013
Create Date: 2026-11-25 00:30:00
"""
import sqlalchemy as sa
from alembic import op

revision = '0014'
down_revision = '0013'
branch_labels = None
depends_on = None

_ID = sa.BigInteger().with_variant(sa.Integer(), 'sqlite')


def upgrade() -> None:
    op.create_table(
        'delegation_keys',
        sa.Column('key_id', sa.Integer(), autoincrement=False, nullable=False),
        sa.Column('secret', sa.LargeBinary(length=64), nullable=False),
        sa.Column('create_time', sa.BigInteger(), nullable=False),
        sa.PrimaryKeyConstraint('key_id', name=op.f('pk_delegation_keys')),
    )
    op.create_table(
        'delegation_tokens',
        sa.Column('seq', _ID, autoincrement=True, nullable=False),
        sa.Column('key_id', sa.Integer(), nullable=False),
        sa.Column('owner', sa.String(length=256), nullable=False),
        sa.Column('renewer', sa.String(length=256), nullable=False),
        sa.Column('real_user', sa.String(length=256), nullable=False),
        sa.Column('issue_date', sa.BigInteger(), nullable=False),
        sa.Column('max_date', sa.BigInteger(), nullable=False),
        sa.Column('expiry_date', sa.BigInteger(), nullable=False),
        sa.PrimaryKeyConstraint('seq', name=op.f('pk_delegation_tokens')),
    )


def downgrade() -> None:
    op.drop_table('delegation_tokens')
    op.drop_table('delegation_keys')
