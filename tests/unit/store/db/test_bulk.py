"""store/db/bulk.py: many rows inserted on the driver's bulk path, split into statements that each
stay inside the statement timeout (PostgreSQL: several COPYs), every row there once."""

from __future__ import annotations

from contextlib import contextmanager

import pytest
from sqlalchemy import BigInteger, Column, Index, MetaData, String, Table, create_engine, func, select
from sqlalchemy.exc import IntegrityError

from store.db import bulk


@contextmanager
def temp_table(backend_url: str, name: str, *items):
    """A connection and a temporary table of `items` (columns, indexes) on it; rolled back after."""
    engine = create_engine(backend_url)
    try:
        with engine.connect() as c:
            md = MetaData()
            t = Table(name, md, *items, prefixes=["TEMPORARY"])
            md.create_all(c)
            yield c, t
            c.rollback()
    finally:
        engine.dispose()


def test_rows_over_several_statements_all_arrive(backend_url, monkeypatch):
    monkeypatch.setattr(bulk, "PG_COPY_ROWS", 7)
    monkeypatch.setattr(bulk, "BATCH", 7)
    with temp_table(backend_url, "tmp_bulk", Column("n", BigInteger), Column("name", String(64))) as (c, t):
        rows = [(i, f"row {i} ü") for i in range(50)]
        bulk.insert_rows(c, t, ("n", "name"), rows, None, pg_types=("int8", "text"), batch=7)
        bulk.insert_rows(c, t, ("n", "name"), [(50, "text copy")], None)
        got = sorted(tuple(r) for r in c.execute(select(t.c.n, t.c.name)))
        assert got == [*rows, (50, "text copy")]
        assert c.execute(select(func.count()).select_from(t)).scalar() == 51


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


def test_an_update_of_many_rows_writes_every_value_as_given(backend_url):
    """update_rows: every byte value (NUL, quotes, backslashes, braces, commas, empty, NULL), ints
    of either sign and NULL arrive as given (on PostgreSQL in array text written by bulk.py, a
    value of another kind through the driver's dumper)."""
    from sqlalchemy import LargeBinary

    engine = create_engine(backend_url)
    try:
        with engine.connect() as c:
            md = MetaData()
            t = Table("tmp_bulk_up", md, Column("k", BigInteger), Column("n", BigInteger), Column("b", LargeBinary),
                      Column("s", String(64)), prefixes=["TEMPORARY"])
            md.create_all(c)
            odd = [bytes(range(256)), b"", b'"{},\\ NULL', b"\x00", None, b"NULL", bytes([255, 0, 92, 34])]
            c.execute(t.insert(), [{"k": k, "n": 0, "b": b"old", "s": "old"} for k in range(len(odd) + 1)])
            rows = [(k, -(2 ** 62) + k if k % 2 else (None if k == 2 else 2 ** 62 - k), v, f"s{k} ü")
                    for k, v in enumerate(odd)]
            bulk.update_rows(c, t, "k", ("n", "b", "s"), rows, ("int8", "int8", "bytea", "text"))
            got = sorted((r.k, r.n, None if r.b is None else bytes(r.b), r.s)
                         for r in c.execute(select(t.c.k, t.c.n, t.c.b, t.c.s)))
            assert got == [*rows, (len(odd), 0, b"old", "old")]
            # `also`: columns set to one value in the rows updated, by the same statements
            bulk.update_rows(c, t, "k", ("b",), [(0, b"x'"), (len(odd), None)], ("int8", "bytea"),
                             also={"s": "one 'é", "n": None})
            got = sorted((r.k, r.n, None if r.b is None else bytes(r.b), r.s)
                         for r in c.execute(select(t.c.k, t.c.n, t.c.b, t.c.s)))
            assert got == [(0, None, b"x'", "one 'é"), *rows[1:], (len(odd), None, None, "one 'é")]
            c.rollback()
    finally:
        engine.dispose()


def test_the_width_check_sees_the_longest_values_and_any_nul():
    """_check_widths hands the check, per text column, the longest value in characters, the longest
    in UTF-8 bytes (another one when some value is not ASCII) and a value holding a NUL."""
    md = MetaData()
    t = Table("w", md, Column("n", BigInteger), Column("name", String(64)))
    seen: list[str] = []

    def check(table, rows):
        seen.extend(r["name"] for r in rows)

    bulk._check_widths(t, ("n", "name"), [(1, "abcd"), (2, "ab"), (3, None)], check)
    assert seen == ["abcd"]
    seen.clear()
    bulk._check_widths(t, ("n", "name"), [(1, "abcd"), (2, "üüü"), (3, "a\x00")], check)
    assert seen == ["a\x00", "abcd", "üüü"]  # "üüü" is 6 bytes


def test_rows_started_are_in_before_any_statement_of_the_block(backend_url):
    """insert_rows_started: on PostgreSQL the COPY runs on a thread while the block runs; a statement
    of the block comes after it (it sees every row), and `finish` leaves them in."""
    with temp_table(backend_url, "tmp_started", Column("n", BigInteger), Column("name", String(64))) as (c, t):
        rows = [(i, f"row {i} ü") for i in range(20_000)]
        adding = bulk.insert_rows_started(c, t, ("n", "name"), rows, None, pg_types=("int8", "text"))
        with adding.alongside():
            seen = c.execute(select(func.count()).select_from(t)).scalar()
        assert seen == 20_000
        assert sorted(tuple(r) for r in c.execute(select(t.c.n, t.c.name))) == rows


@pytest.mark.parametrize("statement_in_block", [True, False])
def test_a_failed_started_insert_is_the_error_raised(backend_url, statement_in_block):
    """A COPY that fails (a duplicate key) raises its own error from `alongside`, not the error of a
    statement the block made meanwhile (which fails as the transaction has failed), and not nothing
    when the block made none."""
    with temp_table(backend_url, "tmp_started_dup", Column("n", BigInteger), Column("name", String(64)),
                    Index("uq_tmp_started_dup", "n", unique=True)) as (c, t):
        rows = [(i, "x") for i in range(5_000)] + [(7, "again")]
        with pytest.raises(IntegrityError):  # (elsewhere the insert is done when started)
            adding = bulk.insert_rows_started(c, t, ("n", "name"), rows, None, pg_types=("int8", "text"))
            with adding.alongside():
                if statement_in_block:
                    c.execute(select(func.count()).select_from(t)).scalar()


def test_an_error_of_the_block_leaves_after_the_insert(backend_url):
    with temp_table(backend_url, "tmp_started_block", Column("n", BigInteger)) as (c, t):
        adding = bulk.insert_rows_started(c, t, ("n",), [(i,) for i in range(3_000)], None, pg_types=("int8",))
        with pytest.raises(KeyError), adding.alongside():
            raise KeyError("the block's own")
        assert adding.thread is None  # finished: the connection is free again
        assert c.execute(select(func.count()).select_from(t)).scalar() == 3_000


def test_writes_started_run_beside_the_block_and_raise_their_error(backend_url):
    """writes_started: on PostgreSQL the writes run on a thread of their own while the block runs (the
    block makes no statement) and are all in after `alongside`, their error raised after the block;
    elsewhere they are done (or have failed) when started."""
    import threading

    with temp_table(backend_url, "tmp_writes", Column("n", BigInteger), Column("name", String(64)),
                    Index("uq_tmp_writes", "n", unique=True)) as (c, t):
        threads = []

        def writes():
            threads.append(threading.get_ident())
            bulk.insert_rows(c, t, ("n", "name"), [(i, "x") for i in range(2_000)], None, pg_types=("int8", "text"))
            c.execute(t.update().where(t.c.n < 10).values(name="updated"))

        ran_block = []
        with bulk.writes_started(c, "test writes", writes).alongside():
            ran_block.append(threading.get_ident())
        assert (threads[0] != ran_block[0]) == (c.dialect.name == "postgresql")
        assert c.execute(select(func.count()).select_from(t).where(t.c.name == "updated")).scalar() == 10
        assert c.execute(select(func.count()).select_from(t)).scalar() == 2_000

        def failing():
            bulk.insert_rows(c, t, ("n", "name"), [(5, "again")], None, pg_types=("int8", "text"))

        block_done = []
        with pytest.raises(IntegrityError), bulk.writes_started(c, "test writes", failing).alongside():
            block_done.append(True)
        assert block_done == ([True] if c.dialect.name == "postgresql" else [])  # (elsewhere: raised when started)
