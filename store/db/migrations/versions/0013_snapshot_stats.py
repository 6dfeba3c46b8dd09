"""snapshot_stats: Hive basic statistics per partition of a Hudi table's latest slices; column_stats
gains its table and the prefix-tree node of its range (fork_len, fork_key) for indexed pruning;
files get a (table, partition, file group) index

Revision ID: 0013
Revises: 0012
Create Date: 2026-11-24 19:30:00
"""
import sqlalchemy as sa
from alembic import op

revision = '0013'
down_revision = '0012'
branch_labels = None
depends_on = None

_ID = sa.BigInteger().with_variant(sa.Integer(), 'sqlite')
_FORK = 16


def _fork(lo: bytes | None, hi: bytes | None) -> tuple[int | None, bytes | None]:
    if lo is None or hi is None:
        return None, None
    lo, hi = bytes(lo), bytes(hi)
    n = 0
    while n < min(len(lo), len(hi), _FORK) and lo[n] == hi[n]:
        n += 1
    return n, lo[:n]


def upgrade() -> None:
    with op.batch_alter_table('column_stats') as b:
        b.add_column(sa.Column('tbl_id', _ID, nullable=True))
        b.add_column(sa.Column('fork_len', sa.SmallInteger(), nullable=True))
        b.add_column(sa.Column('fork_key', sa.LargeBinary(length=_FORK), nullable=True))
    conn = op.get_bind()
    cs = sa.table('column_stats', sa.column('file_row_id'), sa.column('column_name'), sa.column('min_key'),
                  sa.column('max_key'), sa.column('tbl_id'), sa.column('fork_len'), sa.column('fork_key'))
    files = sa.table('files', sa.column('id'), sa.column('tbl_id'))
    conn.execute(cs.update().values(tbl_id=sa.select(files.c.tbl_id).where(
        files.c.id == cs.c.file_row_id).scalar_subquery()))
    rows = conn.execute(sa.select(cs.c.file_row_id, cs.c.column_name, cs.c.min_key, cs.c.max_key).where(
        cs.c.min_key.is_not(None), cs.c.max_key.is_not(None))).all()
    upd = cs.update().where(cs.c.file_row_id == sa.bindparam('rid'), cs.c.column_name == sa.bindparam('col')).values(
        fork_len=sa.bindparam('fl'), fork_key=sa.bindparam('fk'))
    batch = []
    for r in rows:
        fl, fk = _fork(r.min_key, r.max_key)
        batch.append({'rid': r.file_row_id, 'col': r.column_name, 'fl': fl, 'fk': fk})
        if len(batch) == 1000:
            conn.execute(upd, batch)
            batch = []
    if batch:
        conn.execute(upd, batch)
    op.create_index('ix_files_group', 'files', ['tbl_id', 'partition_path', 'file_id'],
                    mysql_length={'partition_path': 255})
    op.create_index('ix_column_stats_fork', 'column_stats', ['tbl_id', 'column_name', 'fork_len', 'fork_key'],
                    mysql_length={'fork_key': _FORK})
    op.create_table(
        'snapshot_stats',
        sa.Column('tbl_id', _ID, nullable=False),
        sa.Column('partition_path', sa.String(length=767), nullable=False),
        sa.Column('num_slices', sa.BigInteger(), nullable=False),
        sa.Column('num_files', sa.BigInteger(), nullable=False),
        sa.Column('base_files', sa.BigInteger(), nullable=False),
        sa.Column('total_size', sa.BigInteger(), nullable=False),
        sa.Column('num_rows', sa.BigInteger(), nullable=True),
        sa.Column('raw_data_size', sa.BigInteger(), nullable=True),
        sa.ForeignKeyConstraint(['tbl_id'], ['tbl.tbl_id'], name=op.f('fk_snapshot_stats_tbl_id_tbl'),
                                ondelete='CASCADE'),
    )
    op.create_index('uq_snapshot_stats', 'snapshot_stats', ['tbl_id', 'partition_path'], unique=True,
                    mysql_length={'partition_path': 255})
    # Every partition with live files gets a row (data skipping relies on it), counted over every
    # live file version until a commit, clean or rollback touching the partition recomputes it.
    f = sa.table('files', sa.column('tbl_id'), sa.column('partition_path'), sa.column('size'),
                 sa.column('file_id'), sa.column('is_log', sa.Boolean), sa.column('is_deleted', sa.Boolean))
    ss = sa.table('snapshot_stats', sa.column('tbl_id'), sa.column('partition_path'), sa.column('num_slices'),
                  sa.column('num_files'), sa.column('base_files'), sa.column('total_size'))
    conn.execute(ss.insert().from_select(
        ['tbl_id', 'partition_path', 'num_slices', 'num_files', 'base_files', 'total_size'],
        sa.select(f.c.tbl_id, f.c.partition_path, sa.func.count(sa.distinct(f.c.file_id)), sa.func.count(),
                  sa.func.sum(sa.case((f.c.is_log.is_(False), 1), else_=0)), sa.func.sum(f.c.size))
        .where(f.c.is_deleted.is_(False)).group_by(f.c.tbl_id, f.c.partition_path)))


def downgrade() -> None:
    op.drop_table('snapshot_stats')
    op.drop_index('ix_column_stats_fork', table_name='column_stats')
    op.drop_index('ix_files_group', table_name='files')
    with op.batch_alter_table('column_stats') as b:
        b.drop_column('fork_key')
        b.drop_column('fork_len')
        b.drop_column('tbl_id')
