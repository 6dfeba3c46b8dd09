"""record_index: no foreign key to tbl (the table's drop deletes its rows); on PostgreSQL the
primary key's index carries fg_id and instant (index-only lookups) and autovacuum visits the
partitions after 2% new rows

Revision ID: 0010
Revises: 0009
Create Date: 2026-11-24 12:00:00
"""
import sqlalchemy as sa
from alembic import op

revision = '0010'
down_revision = '0009'
branch_labels = None
depends_on = None

_ID = sa.BigInteger().with_variant(sa.Integer(), 'sqlite')
_PARTITIONS = 16  # store/db/schema.py RECORD_INDEX_PARTITIONS
_FK = 'fk_record_index_tbl_id_tbl'
_PK_COLUMNS = 'tbl_id, shard, record_key'


def upgrade() -> None:
    dialect = op.get_bind().dialect.name
    if dialect == 'sqlite':
        _rebuild_sqlite(foreign_key=False)
        return
    op.drop_constraint(_FK, 'record_index', type_='foreignkey')
    if dialect == 'postgresql':
        op.execute('ALTER TABLE record_index DROP CONSTRAINT pk_record_index, ADD CONSTRAINT pk_record_index '
                   f'PRIMARY KEY ({_PK_COLUMNS}) INCLUDE (fg_id, instant)')
        for i in range(_PARTITIONS):
            op.execute(f'ALTER TABLE record_index_p{i:02d} SET (autovacuum_vacuum_insert_scale_factor = 0.02)')


def downgrade() -> None:
    dialect = op.get_bind().dialect.name
    if dialect == 'sqlite':
        _rebuild_sqlite(foreign_key=True)
        return
    if dialect == 'postgresql':
        for i in range(_PARTITIONS):
            op.execute(f'ALTER TABLE record_index_p{i:02d} RESET (autovacuum_vacuum_insert_scale_factor)')
        op.execute('ALTER TABLE record_index DROP CONSTRAINT pk_record_index, ADD CONSTRAINT pk_record_index '
                   f'PRIMARY KEY ({_PK_COLUMNS})')
    op.execute('DELETE FROM record_index WHERE tbl_id NOT IN (SELECT tbl_id FROM tbl)')
    op.create_foreign_key(_FK, 'record_index', 'tbl', ['tbl_id'], ['tbl_id'], ondelete='CASCADE')


def _rebuild_sqlite(foreign_key: bool) -> None:
    """SQLite alters a foreign key only by copying the table (WITHOUT ROWID kept)."""
    extra = [sa.ForeignKeyConstraint(['tbl_id'], ['tbl.tbl_id'], name=_FK, ondelete='CASCADE')] if foreign_key else []
    op.create_table(
        'record_index_new',
        sa.Column('tbl_id', _ID, nullable=False),
        sa.Column('fg_id', _ID, nullable=False),
        sa.Column('instant', sa.BigInteger(), nullable=False),
        sa.Column('shard', sa.SmallInteger(), nullable=False),
        sa.Column('record_key', sa.String(length=512), nullable=False),
        sa.PrimaryKeyConstraint('tbl_id', 'shard', 'record_key', name='pk_record_index'),
        *extra,
        sqlite_with_rowid=False,
    )
    keep = ' WHERE tbl_id IN (SELECT tbl_id FROM tbl)' if foreign_key else ''
    op.execute(f'INSERT INTO record_index_new (tbl_id, fg_id, instant, shard, record_key) '
               f'SELECT tbl_id, fg_id, instant, shard, record_key FROM record_index{keep}')
    op.drop_index('ix_record_index_fg', table_name='record_index')
    op.drop_table('record_index')
    op.rename_table('record_index_new', 'record_index')
    op.create_index('ix_record_index_fg', 'record_index', ['tbl_id', 'fg_id'])
