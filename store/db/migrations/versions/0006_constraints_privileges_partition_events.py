"""table constraints, privileges and partition events

Revision ID: 0006
Revises: 0005
Create Date: 2026-11-23 21:00:00
"""
import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import mysql

revision = '0006'
down_revision = '0005'
branch_labels = None
depends_on = None

_ID = sa.BigInteger().with_variant(sa.Integer(), 'sqlite')


def _case_sensitive(length: int):
    return sa.String(length).with_variant(mysql.VARCHAR(length, collation='utf8mb4_bin'), 'mysql', 'mariadb')


def upgrade() -> None:
    _table_constraints()
    _privileges()
    _partition_events()


def _table_constraints() -> None:
    op.create_table('table_constraints',
    sa.Column('constraint_id', _ID, autoincrement=True, nullable=False),
    sa.Column('tbl_id', _ID, nullable=False),
    sa.Column('name', sa.String(length=400), nullable=False),
    sa.Column('position', sa.Integer(), nullable=False),
    sa.Column('kind', sa.Integer(), nullable=False),
    sa.Column('column_name', sa.String(length=767), nullable=False),
    sa.Column('child_tbl_id', _ID, nullable=True),
    sa.Column('child_column', sa.String(length=767), nullable=True),
    sa.Column('ref_name', sa.String(length=400), nullable=True),
    sa.Column('update_rule', sa.Integer(), nullable=True),
    sa.Column('delete_rule', sa.Integer(), nullable=True),
    sa.Column('enable_cstr', sa.Boolean(), nullable=False),
    sa.Column('validate_cstr', sa.Boolean(), nullable=False),
    sa.Column('rely_cstr', sa.Boolean(), nullable=False),
    sa.Column('value', sa.Text(), nullable=True),
    sa.ForeignKeyConstraint(['tbl_id'], ['tbl.tbl_id'], name=op.f('fk_table_constraints_tbl_id_tbl'),
                            ondelete='CASCADE'),
    sa.ForeignKeyConstraint(['child_tbl_id'], ['tbl.tbl_id'], name=op.f('fk_table_constraints_child_tbl_id_tbl'),
                            ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('constraint_id', name=op.f('pk_table_constraints')),
    sa.UniqueConstraint('tbl_id', 'name', 'position', name=op.f('uq_table_constraints_tbl_id_name_position'))
    )
    with op.batch_alter_table('table_constraints', schema=None) as batch_op:
        batch_op.create_index(batch_op.f('ix_table_constraints_child_tbl_id'), ['child_tbl_id'], unique=False)


def _privileges() -> None:
    op.create_table('privileges',
    sa.Column('grant_id', _ID, autoincrement=True, nullable=False),
    sa.Column('object_type', sa.Integer(), nullable=False),
    sa.Column('db_id', _ID, nullable=True),
    sa.Column('tbl_id', _ID, nullable=True),
    sa.Column('part_id', _ID, nullable=True),
    sa.Column('column_name', sa.String(length=767), nullable=True),
    sa.Column('principal_name', _case_sensitive(128), nullable=False),
    sa.Column('principal_type', sa.Integer(), nullable=False),
    sa.Column('privilege', sa.String(length=128), nullable=False),
    sa.Column('grantor', sa.String(length=128), nullable=True),
    sa.Column('grantor_type', sa.Integer(), nullable=True),
    sa.Column('grant_option', sa.Boolean(), nullable=False),
    sa.Column('authorizer', sa.String(length=128), nullable=True),
    sa.Column('create_time', sa.Integer(), nullable=False),
    sa.ForeignKeyConstraint(['db_id'], ['db.db_id'], name=op.f('fk_privileges_db_id_db'), ondelete='CASCADE'),
    sa.ForeignKeyConstraint(['tbl_id'], ['tbl.tbl_id'], name=op.f('fk_privileges_tbl_id_tbl'), ondelete='CASCADE'),
    sa.ForeignKeyConstraint(['part_id'], ['partitions.part_id'], name=op.f('fk_privileges_part_id_partitions'),
                            ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('grant_id', name=op.f('pk_privileges'))
    )
    with op.batch_alter_table('privileges', schema=None) as batch_op:
        batch_op.create_index('ix_privileges_object', ['object_type', 'db_id', 'tbl_id'], unique=False)
        batch_op.create_index('ix_privileges_tbl', ['tbl_id'], unique=False)
        batch_op.create_index('ix_privileges_part', ['part_id'], unique=False)


def _partition_events() -> None:
    op.create_table('partition_events',
    sa.Column('event_id', _ID, autoincrement=True, nullable=False),
    sa.Column('db_name', sa.String(length=128), nullable=False),
    sa.Column('tbl_name', sa.String(length=256), nullable=False),
    sa.Column('part_name', _case_sensitive(767), nullable=False),
    sa.Column('event_type', sa.Integer(), nullable=False),
    sa.Column('event_time', sa.BigInteger(), nullable=False),
    sa.PrimaryKeyConstraint('event_id', name=op.f('pk_partition_events'))
    )
    with op.batch_alter_table('partition_events', schema=None) as batch_op:
        batch_op.create_index('ix_partition_events', ['db_name', 'tbl_name', 'part_name', 'event_type'],
                              unique=False, mysql_length={'part_name': 255})


def downgrade() -> None:
    op.drop_table('partition_events')
    op.drop_table('privileges')
    op.drop_table('table_constraints')
