"""store/db/bulk.py: many rows inserted on the driver's bulk path, split into statements that each
stay inside the statement timeout (PostgreSQL: several COPYs), every row there once."""

from __future__ import annotations

from sqlalchemy import BigInteger, Column, MetaData, String, Table, create_engine, func, select

from store.db import bulk


def test_rows_over_several_statements_all_arrive(backend_url, monkeypatch):
    monkeypatch.setattr(bulk, "PG_COPY_ROWS", 7)
    monkeypatch.setattr(bulk, "BATCH", 7)
    engine = create_engine(backend_url)
    try:
        with engine.connect() as c:
            md = MetaData()
            t = Table("tmp_bulk", md, Column("n", BigInteger), Column("name", String(64)), prefixes=["TEMPORARY"])
            md.create_all(c)
            rows = [(i, f"row {i} ü") for i in range(50)]
            bulk.insert_rows(c, t, ("n", "name"), rows, None, pg_types=("int8", "text"), batch=7)
            bulk.insert_rows(c, t, ("n", "name"), [(50, "text copy")], None)
            got = sorted(tuple(r) for r in c.execute(select(t.c.n, t.c.name)))
            assert got == [*rows, (50, "text copy")]
            assert c.execute(select(func.count()).select_from(t)).scalar() == 51
            c.rollback()
    finally:
        engine.dispose()
