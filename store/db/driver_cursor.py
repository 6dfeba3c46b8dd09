"""Statements on the driver's own cursor, for the hottest reads (no SQLAlchemy work per call), with
driver errors raised as SQLAlchemy raises them: the store's retries, timeouts and answers see the
same exceptions as for any other statement, and a connection the database dropped is invalidated."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from sqlalchemy import Connection
from sqlalchemy.exc import DBAPIError
from sqlalchemy.sql import ClauseElement

from store.db.connection_loss import connection_lost


@contextmanager
def driver_errors(conn: Connection, what: str) -> Iterator[None]:
    """Inside: driver exceptions leave as SQLAlchemy's (DBAPIError and its subclasses)."""
    dbapi = conn.dialect.loaded_dbapi
    try:
        yield
    except dbapi.Error as exc:
        err = DBAPIError.instance(what, None, exc, dbapi.Error, dialect=conn.dialect)
        if connection_lost(err):
            conn.invalidate(exc)
        raise err from exc


class DriverStatement:
    """One SQLAlchemy statement compiled once for a dialect, run on the driver's cursor with named
    parameters."""

    def __init__(self, statement: ClauseElement, conn: Connection):
        compiled = statement.compile(dialect=conn.dialect)
        self.sql = str(compiled)
        self.positions = getattr(compiled, "positiontup", None)  # positional paramstyles (SQLite): the order of names

    def first(self, conn: Connection, params: dict[str, Any]) -> tuple | None:
        raw = conn.connection.driver_connection
        assert raw is not None
        args: Any = params if self.positions is None else tuple(params[k] for k in self.positions)
        with driver_errors(conn, self.sql):
            cur = raw.cursor()
            try:
                cur.execute(self.sql, args)
                row = cur.fetchone()
            finally:
                cur.close()
        return None if row is None else tuple(row)
