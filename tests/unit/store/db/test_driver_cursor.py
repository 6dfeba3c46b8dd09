"""Statements on the driver's cursor (store/db/driver_cursor.py) after the database dropped the
pool's connections: the first failure replaces every pooled connection, so a read run again
(Store.run_read, as the router runs a call again) gets a fresh one. PostgreSQL only (its admin
can terminate other sessions)."""

from __future__ import annotations

import pytest
from sqlalchemy import literal, select, text

from store.db.driver_cursor import DriverStatement


def test_one_lost_connection_replaces_the_whole_pool(backend_specs):
    from sqlalchemy import create_engine

    from store.db.database import Store
    from tests.harness import ci_mode

    spec = backend_specs["postgresql"]
    if not spec.available:
        (pytest.fail if ci_mode() else pytest.skip)(f"postgresql backend unavailable: {spec.reason}")
    url = spec.admin_url  # no tables needed: the statement reads none
    store = Store(url)
    stmt: list[DriverStatement] = []

    def one(conn):
        if not stmt:
            stmt.append(DriverStatement(select(literal(1)), conn))
        return stmt[0].first(conn, {})

    try:
        held = [store.read_engine.connect() for _ in range(4)]  # four idle pooled connections
        pids = [c.exec_driver_sql("SELECT pg_backend_pid()").scalar() for c in held]
        for c in held:
            c.close()
        admin = create_engine(url, isolation_level="AUTOCOMMIT")
        with admin.connect() as a:
            for pid in pids:
                a.execute(text("SELECT pg_terminate_backend(:p)"), {"p": pid})
        admin.dispose()
        assert store.run_read(one) == (1,)  # the first attempt fails, the second gets a new connection
    finally:
        store.dispose()


def test_dollar_placeholders():
    from store.db.driver_cursor import dollar_placeholders

    sql, names = dollar_placeholders("SELECT %(a)s, %(b)s WHERE x LIKE 'p%%' AND y = %(a)s")
    assert sql == "SELECT $1, $2 WHERE x LIKE 'p%' AND y = $1"
    assert names == ("a", "b")
    assert dollar_placeholders("SELECT 1") == ("SELECT 1", ())


def test_raw_cursor_kept_per_connection(backend_specs):
    """psycopg: one-row reads use a RawCursor kept with the pooled connection (one per database
    connection, a new one after the connection was replaced), with the statement's own literals,
    a repeated parameter and a literal '%' as SQLAlchemy's own execution has them."""
    from sqlalchemy import bindparam, create_engine

    from store.db.database import Store
    from tests.harness import ci_mode

    spec = backend_specs["postgresql"]
    if not spec.available:
        (pytest.fail if ci_mode() else pytest.skip)(f"postgresql backend unavailable: {spec.reason}")
    store = Store(spec.admin_url)
    q = select(bindparam("a") + literal("%x"), literal(7), bindparam("b"), bindparam("a"))
    seen: list = []

    def one(conn):
        stmt = DriverStatement(q, conn)
        assert stmt.raw_sql is not None and "$1" in stmt.raw_sql
        row = stmt.first(conn, {"a": "p", "b": 2})
        assert row == tuple(conn.execute(q, {"a": "p", "b": 2}).one())
        seen.append((conn.connection.driver_connection, conn.connection.info["hms_raw_cursor"][1]))
        assert stmt.all(conn, {"a": "q", "b": 3}) == [("q%x", 7, 3, "q")]
        return row

    try:
        assert store.run_read(one) == ("p%x", 7, 2, "p")
        store.run_read(one)
        (raw1, cur1), (raw2, cur2) = seen
        assert raw1 is raw2 and cur1 is cur2  # the pool's one connection, its one cursor
        with store.read_engine.connect() as c:
            pid = c.exec_driver_sql("SELECT pg_backend_pid()").scalar()
        admin = create_engine(spec.admin_url, isolation_level="AUTOCOMMIT")
        with admin.connect() as a:
            a.execute(text("SELECT pg_terminate_backend(:p)"), {"p": pid})
        admin.dispose()
        store.read_engine.pool.dispose()  # the next read gets a new connection
        store.run_read(one)
        assert seen[-1][1] is not cur1 and seen[-1][0] is not raw1
    finally:
        store.dispose()
