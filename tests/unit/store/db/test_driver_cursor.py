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
