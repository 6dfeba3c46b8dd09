"""location_owners: which object owns which location (store/storage/owner_index.py), filled from the
databases, tables, partitions outside their table's location and Hudi base paths there are

Revision ID: 0017
Revises: 0016
Create Date: 2026-11-28 10:00:00
"""
import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import mysql, postgresql

revision = '0017'
down_revision = '0016'
branch_labels = None
depends_on = None

_ID = sa.BigInteger().with_variant(sa.Integer(), 'sqlite')
_PREFIX = sa.String(255).with_variant(postgresql.VARCHAR(255, collation="C"), "postgresql") \
    .with_variant(mysql.VARCHAR(255, collation="utf8mb4_bin"), "mysql", "mariadb")


def upgrade() -> None:
    op.create_table(
        'location_owners',
        sa.Column('owner_row', _ID, autoincrement=True, nullable=False),
        sa.Column('loc_prefix', _PREFIX, nullable=False),
        sa.Column('loc_key', sa.Text(), nullable=False),
        sa.Column('kind', sa.String(length=8), nullable=False),
        sa.Column('db_id', _ID, nullable=False),
        sa.Column('tbl_id', _ID, nullable=True),
        sa.Column('part_id', _ID, nullable=True),
        sa.ForeignKeyConstraint(['db_id'], ['db.db_id'], name=op.f('fk_location_owners_db_id_db'),
                                ondelete='CASCADE'),
        sa.ForeignKeyConstraint(['tbl_id'], ['tbl.tbl_id'], name=op.f('fk_location_owners_tbl_id_tbl'),
                                ondelete='CASCADE'),
        sa.ForeignKeyConstraint(['part_id'], ['partitions.part_id'],
                                name=op.f('fk_location_owners_part_id_partitions'), ondelete='CASCADE'),
        sa.PrimaryKeyConstraint('owner_row', name=op.f('pk_location_owners')),
    )
    op.create_index('ix_location_owners_loc_prefix', 'location_owners', ['loc_prefix'])
    op.create_index('ix_location_owners_db_id', 'location_owners', ['db_id'])
    op.create_index('ix_location_owners_tbl_id', 'location_owners', ['tbl_id'])
    op.create_index('ix_location_owners_part_id', 'location_owners', ['part_id'])
    _fill(op.get_bind())


def _fill(conn) -> None:
    from store.storage.ownership import location_key

    rows: list[dict] = []

    def add(loc, kind, db_id, tbl_id=None, part_id=None):
        key = location_key(loc) if loc else None
        if key:
            rows.append({"loc_prefix": key[:255], "loc_key": key, "kind": kind, "db_id": db_id,
                         "tbl_id": tbl_id, "part_id": part_id})

    for db_id, loc, managed in conn.execute(sa.text("SELECT db_id, location_uri, managed_location_uri FROM db")):
        add(loc, "db", db_id)
        if managed and location_key(managed) != location_key(loc):
            add(managed, "db", db_id)
    tables = {}
    for tbl_id, db_id, loc, kind in conn.execute(sa.text("SELECT tbl_id, db_id, location, tbl_type FROM tbl")):
        if kind != "VIRTUAL_VIEW" and loc:
            add(loc, "tbl", db_id, tbl_id)
            tables[tbl_id] = (db_id, location_key(loc, resolve=False))
    for tbl_id, base in conn.execute(sa.text("SELECT tbl_id, base_path FROM hudi_table")):
        if tbl_id in tables and base and location_key(base, resolve=False) != tables[tbl_id][1]:
            add(base, "hudi", tables[tbl_id][0], tbl_id)
    _flush(conn, rows)
    result = conn.execute(sa.text("SELECT part_id, tbl_id, location FROM partitions WHERE location IS NOT NULL")
                          .execution_options(stream_results=True))
    for part_id, tbl_id, loc in result:
        if tbl_id in tables and not (location_key(loc, resolve=False) or "").startswith(tables[tbl_id][1] or "\0"):
            add(loc, "part", tables[tbl_id][0], tbl_id, part_id)
    _flush(conn, rows)


def _flush(conn, rows: list[dict]) -> None:
    if rows:
        table = sa.table("location_owners", *[sa.column(c) for c in rows[0]])
        for i in range(0, len(rows), 1000):
            conn.execute(table.insert(), rows[i:i + 1000])
        rows.clear()


def downgrade() -> None:
    op.drop_table('location_owners')
