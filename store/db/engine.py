"""Database engines for the three supported backends: SQLite (embedded default), PostgreSQL, MySQL/MariaDB."""

from __future__ import annotations

import os
import time

from sqlalchemy import Engine, create_engine, event
from sqlalchemy.engine import make_url
from sqlalchemy.exc import DisconnectionError

from store.db import DEFAULT_URL  # noqa: F401  (re-exported)
from store.db.driver_cursor import driver_errors
from store.db.statement_cache import bound_statement_cache
from store.db.statement_timeout import limit_statement_time, postgresql_options


def normalize_url(url: str) -> str:
    """Pick the drivers we ship (psycopg 3, PyMySQL) when a URL names only the database kind."""
    u = make_url(url)
    if u.drivername in ("postgresql", "postgres"):
        u = u.set(drivername="postgresql+psycopg")
    elif u.drivername in ("mysql", "mariadb"):
        u = u.set(drivername=f"{u.drivername}+pymysql")
    if u.get_backend_name() in ("mysql", "mariadb") and "charset" not in u.query:
        u = u.update_query_dict({"charset": "utf8mb4"})
    return u.render_as_string(hide_password=False)


def make_engine(url: str, pool_size: int = 16, autocommit: bool = False,
                statement_timeout_s: float | None = None) -> Engine:
    """`autocommit`: an engine for reads of one statement each (PostgreSQL/MySQL): no BEGIN/COMMIT
    round trips; under READ COMMITTED a transaction gives several statements no common snapshot
    anyway. `statement_timeout_s`: the database aborts any statement running longer (None or 0:
    no limit; see statement_timeout.py)."""
    url = normalize_url(url)
    backend = make_url(url).get_backend_name()
    if backend == "sqlite":
        path = make_url(url).database
        if path and path != ":memory:":
            os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
        engine = create_engine(
            url,
            pool_size=pool_size,
            max_overflow=pool_size,
            connect_args={"check_same_thread": False, "timeout": 60},
        )
        _sqlite_setup(engine)
        limit_statement_time(engine, statement_timeout_s)
        bound_statement_cache(engine)
        return engine
    connect_args = {}
    if backend == "postgresql":
        # metastore queries are short: JIT compiling one (above jit_above_cost, e.g. a filter over a
        # large table) costs tens of milliseconds and never pays back; nor does starting parallel
        # workers (a Gather doubled data skipping's 1,000-file answer, 7.6 -> 14.5 ms)
        connect_args["options"] = ("-c jit=off -c max_parallel_workers_per_gather=0"
                                   + postgresql_options(statement_timeout_s))
    engine = create_engine(
        url,
        connect_args=connect_args,
        pool_size=pool_size,
        max_overflow=pool_size,
        pool_recycle=3600,
        isolation_level="AUTOCOMMIT" if autocommit else "READ COMMITTED",
        pool_reset_on_return=None if autocommit else "rollback",
    )
    _ping_when_idle(engine)
    if backend in ("mysql", "mariadb"):
        @event.listens_for(engine, "connect")
        def _on_connect(dbapi_conn, _record):
            # JSON_ARRAYAGG is built on GROUP_CONCAT: without this, long aggregates are cut at 1 MB
            cur = dbapi_conn.cursor()
            cur.execute("SET SESSION group_concat_max_len = 4294967295")
            # Galera applies other nodes' commits asynchronously: a read waits until this node
            # has applied every commit the cluster had when it began (read-your-writes across
            # servers on different nodes; docs/deployment.md)
            cur.execute("SHOW VARIABLES LIKE 'wsrep_on'")
            row = cur.fetchone()
            if row is not None and str(row[1]).upper() == "ON":
                cur.execute("SET SESSION wsrep_sync_wait = 1")
            cur.close()
    limit_statement_time(engine, statement_timeout_s)
    bound_statement_cache(engine)
    return engine


def is_galera(conn) -> bool:
    """Is this MySQL/MariaDB connection's server a Galera node with replication on?"""
    row = conn.exec_driver_sql("SHOW VARIABLES LIKE 'wsrep_on'").first()
    return row is not None and str(row[1]).upper() == "ON"


IDLE_PING_S = 5.0


def _ping_when_idle(engine: Engine) -> None:
    """Pessimistic disconnect handling without a round trip per call: a pooled connection idle for
    more than IDLE_PING_S is pinged at checkout and replaced when the ping fails."""

    @event.listens_for(engine, "checkout")
    def _checkout(dbapi_conn, record, _proxy):
        last = record.info.get("last_used")
        if last is not None and time.monotonic() - last < IDLE_PING_S:
            return
        try:
            cur = dbapi_conn.cursor()
            cur.execute("SELECT 1")
            cur.fetchall()
            cur.close()
            if not getattr(dbapi_conn, "autocommit", False):
                dbapi_conn.rollback()
        except Exception as exc:  # noqa: BLE001
            raise DisconnectionError(str(exc)) from exc

    @event.listens_for(engine, "checkin")
    def _checkin(_dbapi_conn, record):
        if record is not None:
            record.info["last_used"] = time.monotonic()


def _sqlite_setup(engine: Engine) -> None:
    """WAL for concurrent readers; writers take the write lock at BEGIN so two writers never
    deadlock upgrading a read lock."""

    @event.listens_for(engine, "connect")
    def _on_connect(dbapi_conn, _record):
        dbapi_conn.isolation_level = None  # we issue BEGIN ourselves
        cur = dbapi_conn.cursor()
        cur.execute("PRAGMA journal_mode=WAL")
        cur.execute("PRAGMA synchronous=NORMAL")
        cur.execute("PRAGMA foreign_keys=ON")
        cur.execute("PRAGMA busy_timeout=60000")
        cur.close()

    @event.listens_for(engine, "begin")
    def _on_begin(conn):
        if conn.get_execution_options().get("hms_write", False):
            conn.exec_driver_sql("BEGIN IMMEDIATE")
        else:  # a read's BEGIN takes no lock and cannot wait: on the driver's connection (through
            with driver_errors(conn, "BEGIN"):  # SQLAlchemy it was a fifth of a kept get_table's time)
                conn.connection.driver_connection.execute("BEGIN")
