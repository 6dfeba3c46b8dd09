"""roles: roles created with create_role and their members (users, groups, roles)

Revision ID: 0009
Revises: 0008
Create Date: 2026-11-24 06:30:00
"""
import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import mysql

revision = '0009'
down_revision = '0008'
branch_labels = None
depends_on = None


def _case_sensitive(length: int):
    return sa.String(length).with_variant(mysql.VARCHAR(length, collation='utf8mb4_bin'), 'mysql', 'mariadb')


def upgrade() -> None:
    op.create_table(
        'roles',
        sa.Column('role_name', _case_sensitive(128), nullable=False),
        sa.Column('owner_name', sa.String(length=128), nullable=True),
        sa.Column('create_time', sa.Integer(), nullable=False),
        sa.PrimaryKeyConstraint('role_name', name=op.f('pk_roles')),
    )
    op.create_table(
        'role_members',
        sa.Column('role_name', _case_sensitive(128), nullable=False),
        sa.Column('principal_name', _case_sensitive(128), nullable=False),
        sa.Column('principal_type', sa.Integer(), nullable=False),
        sa.Column('grant_option', sa.Boolean(), nullable=False),
        sa.Column('grantor', sa.String(length=128), nullable=True),
        sa.Column('grantor_type', sa.Integer(), nullable=True),
        sa.Column('add_time', sa.Integer(), nullable=False),
        sa.PrimaryKeyConstraint('role_name', 'principal_name', 'principal_type', name=op.f('pk_role_members')),
    )
    op.create_index('ix_role_members_principal', 'role_members', ['principal_name', 'principal_type'])


def downgrade() -> None:
    op.drop_index('ix_role_members_principal', table_name='role_members')
    op.drop_table('role_members')
    op.drop_table('roles')
