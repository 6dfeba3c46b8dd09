"""catalogs: a catalogs table holding hive; every database in one (db.cat_name, unique name in it)

Revision ID: 0007
Revises: 0006
Create Date: 2026-11-23 21:00:00
"""
import sqlalchemy as sa
from alembic import op

revision = '0007'
down_revision = '0006'
branch_labels = None
depends_on = None


def upgrade() -> None:
    catalogs = op.create_table(
        'catalogs',
        sa.Column('name', sa.String(length=128), nullable=False),
        sa.Column('description', sa.String(length=4000), nullable=True),
        sa.Column('location_uri', sa.String(length=4000), nullable=True),
        sa.Column('create_time', sa.Integer(), nullable=True),
        sa.PrimaryKeyConstraint('name', name=op.f('pk_catalogs')),
    )
    # the default catalog; its location (NULL) is the server's warehouse
    op.bulk_insert(catalogs, [{'name': 'hive', 'description': 'Default catalog for Hive'}])
    # SQLite rebuilds the table (env.py turns its foreign keys off for that)
    with op.batch_alter_table('db') as batch_op:
        batch_op.add_column(sa.Column('cat_name', sa.String(length=128), nullable=False, server_default='hive'))
        batch_op.drop_constraint('uq_db_name', type_='unique')
        batch_op.create_unique_constraint(batch_op.f('uq_db_cat_name_name'), ['cat_name', 'name'])
        batch_op.create_foreign_key(batch_op.f('fk_db_cat_name_catalogs'), 'catalogs', ['cat_name'], ['name'])


def downgrade() -> None:
    with op.batch_alter_table('db') as batch_op:
        batch_op.drop_constraint(batch_op.f('fk_db_cat_name_catalogs'), type_='foreignkey')
        batch_op.drop_constraint(batch_op.f('uq_db_cat_name_name'), type_='unique')
        batch_op.create_unique_constraint(batch_op.f('uq_db_name'), ['name'])
        batch_op.drop_column('cat_name')
    op.drop_table('catalogs')
