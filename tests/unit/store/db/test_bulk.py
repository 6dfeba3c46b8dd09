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


def test_a_bulk_insert_gets_a_deadline_of_its_own_on_sqlite(tmp_path, monkeypatch):
    """SQLite's statement timeout (a progress handler's deadline, set as each SQLAlchemy statement
    starts): the driver-cursor batches of a bulk insert each start a deadline of their own, so a
    long bulk insert after a statement is not stopped at that statement's deadline."""
    import time

    from sqlalchemy import text

    from store.db import statement_timeout

    monkeypatch.setattr(statement_timeout, "SQLITE_STEPS", 100)
    engine = create_engine(f"sqlite:///{tmp_path / 'db.sqlite'}")
    statement_timeout.limit_statement_time(engine, 0.3)
    try:
        with engine.connect() as c:
            md = MetaData()
            t = Table("bulk_rows", md, Column("n", BigInteger), Column("name", String(64)))
            md.create_all(c)
            c.execute(text("SELECT 1")).all()
            time.sleep(0.4)  # that statement's deadline has passed
            rows = [(i, f"row {i}") for i in range(5000)]
            bulk.insert_rows(c, t, ("n", "name"), rows, None, batch=500)
            assert c.execute(select(func.count()).select_from(t)).scalar() == 5000
            time.sleep(0.4)
            from store.db.driver_cursor import DriverStatement

            assert DriverStatement(select(func.count()).select_from(t), c).first(c, {}) == (5000,)
            c.rollback()
    finally:
        engine.dispose()
