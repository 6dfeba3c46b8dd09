"""A statement timeout on every backend: the database aborts any one statement that runs longer than
the limit, so that no request (an expensive filter, a pattern over many names) can hold a worker or
the database for longer.

* PostgreSQL: `statement_timeout`, set when the connection opens (see `postgresql_options`).
* MariaDB: `max_statement_time`; MySQL: `max_execution_time` (SELECTs only), set on connect.
* SQLite: a progress handler, called every few thousand VM steps, interrupts the statement once
  its deadline has passed; the deadline is set when a statement starts and cleared before COMMIT or
  ROLLBACK (which are never interrupted) and when the pool resets the connection. Statements sent on
  the driver's own cursor (bulk inserts, record-key lookups, DriverStatement) start theirs with
  `restart_deadline`.

`is_statement_timeout` recognizes the resulting driver error; the store answers it as
`store.errors.TooExpensive`.
"""

from __future__ import annotations

import time

from sqlalchemy import Engine, event
from sqlalchemy.exc import DBAPIError, OperationalError

DEFAULT_STATEMENT_TIMEOUT_S = 60.0
# SQLite VM steps between two looks at the deadline (each look takes the GIL: not too often)
SQLITE_STEPS = 100_000
_DEADLINE = "hms_statement_deadline"
_SECONDS = "hms_statement_timeout_s"
_PG_CANCELED = "57014"  # query_canceled: statement_timeout
_MYSQL_TIMEOUTS = (1969, 3024)  # MariaDB max_statement_time, MySQL max_execution_time


def postgresql_options(seconds: float | None) -> str:
    """The libpq `options` that set the timeout ("" for none)."""
    return f" -c statement_timeout={max(1, round(seconds * 1000))}" if seconds and seconds > 0 else ""


def limit_statement_time(engine: Engine, seconds: float | None) -> None:
    """Install the timeout on MySQL/MariaDB and SQLite engines (PostgreSQL: postgresql_options)."""
    if not seconds or seconds <= 0:
        return
    backend = engine.dialect.name
    if backend in ("mysql", "mariadb"):
        _mysql_timeout(engine, seconds)
    elif backend == "sqlite":
        _sqlite_timeout(engine, seconds)


def _mysql_timeout(engine: Engine, seconds: float) -> None:
    @event.listens_for(engine, "connect")
    def _on_connect(dbapi_conn, _record):
        cur = dbapi_conn.cursor()
        cur.execute("SELECT VERSION()")
        (version,) = cur.fetchone()
        if "mariadb" in str(version).lower():
            cur.execute(f"SET SESSION max_statement_time = {float(seconds):.3f}")
        else:
            cur.execute(f"SET SESSION max_execution_time = {max(1, round(seconds * 1000))}")
        cur.close()


def _sqlite_timeout(engine: Engine, seconds: float) -> None:
    @event.listens_for(engine, "connect")
    def _on_connect(dbapi_conn, record):
        deadline: list[float | None] = [None]
        record.info[_DEADLINE] = deadline
        record.info[_SECONDS] = seconds
        dbapi_conn.set_progress_handler(
            lambda: deadline[0] is not None and time.monotonic() > deadline[0], SQLITE_STEPS)

    def _set(info, value: float | None) -> None:
        cell = info.get(_DEADLINE)
        if cell is not None:
            cell[0] = value

    @event.listens_for(engine, "before_cursor_execute")
    def _start(conn, _cursor, _statement, _params, _context, _many):
        _set(conn.info, time.monotonic() + seconds)

    @event.listens_for(engine, "commit")
    @event.listens_for(engine, "rollback")
    def _end(conn):
        _set(conn.info, None)

    @event.listens_for(engine, "reset")
    def _reset(_dbapi_conn, record, _state):
        if record is not None:
            _set(record.info, None)


def restart_deadline(conn) -> None:
    """A statement sent on the driver's own cursor of `conn` (a SQLAlchemy Connection) starts now:
    SQLite's deadline is set anew, as SQLAlchemy's statements set it (without this, a long bulk
    insert after a statement was interrupted once that statement's deadline passed). Other
    backends and connections without a timeout: nothing."""
    info = conn.info
    cell = info.get(_DEADLINE)
    if cell is not None:
        cell[0] = time.monotonic() + info[_SECONDS]


def is_statement_timeout(exc: DBAPIError) -> bool:
    """The driver error of a statement the database aborted at the timeout."""
    orig = exc.orig
    if getattr(orig, "sqlstate", None) == _PG_CANCELED:
        return True
    args = getattr(orig, "args", ())
    if args and isinstance(args[0], int) and args[0] in _MYSQL_TIMEOUTS:
        return True
    return isinstance(exc, OperationalError) and str(orig) == "interrupted"
