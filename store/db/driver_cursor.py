"""Statements on the driver's own cursor, for the hottest reads (no SQLAlchemy work per call), with
driver errors raised as SQLAlchemy raises them: the store's retries, timeouts and answers see the
same exceptions as for any other statement, and a connection the database dropped is invalidated."""

from __future__ import annotations

import re
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from sqlalchemy import Connection
from sqlalchemy.exc import DBAPIError
from sqlalchemy.sql import ClauseElement

from store.db import statement_cache
from store.db.connection_loss import connection_lost
from store.db.statement_timeout import restart_deadline


@contextmanager
def driver_errors(conn: Connection, what: str) -> Iterator[None]:
    """Inside: driver exceptions leave as SQLAlchemy's (DBAPIError and its subclasses)."""
    dbapi = conn.dialect.loaded_dbapi
    try:
        yield
    except dbapi.Error as exc:
        err = DBAPIError.instance(what, None, exc, dbapi.Error, dialect=conn.dialect)
        if connection_lost(err):
            # as SQLAlchemy does for its own statements: every pooled connection made before this
            # one is replaced at its next checkout (a restarted or failed-over database dropped them
            # all; a retry would otherwise meet them one by one)
            conn.engine.pool._invalidate(conn.connection, exc, _checkin=False)
            conn.invalidate(exc)
        raise err from exc


class DriverStatement:
    """One SQLAlchemy statement compiled once for a dialect, run on the driver's cursor with named
    parameters (the values of its own literals are kept: plain values only, no type conversion)."""

    def __init__(self, statement: ClauseElement, conn: Connection):
        compiled = statement.compile(dialect=conn.dialect)
        self.sql = str(compiled)
        self.positions = getattr(compiled, "positiontup", None)  # positional paramstyles (SQLite): the order of names
        self.values = {k: v for k, v in compiled.params.items() if v is not None}  # the statement's own literals
        # psycopg: the statement with $n placeholders for its RawCursor (no conversion per call),
        # kept with the connection for one-row reads (no new cursor per call either): together a
        # tenth of a getTable's interpreter time
        self.raw_sql: str | None = None
        self.raw_names: tuple[str, ...] = ()
        if conn.dialect.driver == "psycopg" and self.positions is None:
            self.raw_sql, self.raw_names = dollar_placeholders(self.sql)

    def first(self, conn: Connection, params: dict[str, Any]) -> tuple | None:
        rows = self._run(conn, params, one=True)
        return rows[0] if rows else None

    def all(self, conn: Connection, params: dict[str, Any], few: bool = False) -> list[tuple]:
        """`few`: a result of a few rows, read on the cursor kept with the connection (psycopg)."""
        return self._run(conn, params, one=False, few=few)

    def _run(self, conn: Connection, params: dict[str, Any], one: bool, few: bool = False) -> list[tuple]:
        raw = conn.connection.driver_connection
        assert raw is not None
        params = {**self.values, **params}
        if self.raw_sql is not None:
            values = tuple(params[k] for k in self.raw_names)
            with driver_errors(conn, self.sql):
                restart_deadline(conn)
                if one or few:  # a kept cursor: it holds the result until the next
                    cur = _raw_cursor(conn, raw)
                    cur.execute(self.raw_sql, values)
                    if few:
                        return [tuple(r) for r in cur.fetchall()]
                    row = cur.fetchone()
                    return [] if row is None else [tuple(row)]
                import psycopg

                with psycopg.RawCursor(raw) as cur:
                    cur.execute(self.raw_sql, values)
                    return [tuple(r) for r in cur.fetchall()]
        args: Any = params if self.positions is None else tuple(params[k] for k in self.positions)
        with driver_errors(conn, self.sql):
            restart_deadline(conn)
            cur = raw.cursor()
            try:
                cur.execute(self.sql, args)
                if one:
                    row = cur.fetchone()
                    return [] if row is None else [tuple(row)]
                return [tuple(r) for r in cur.fetchall()]
            finally:
                cur.close()


_PLACEHOLDER = re.compile(r"%\((\w+)\)s|%%")
_RAW_CURSOR = "hms_raw_cursor"  # in the pooled connection's info: (driver connection, its RawCursor)


def dollar_placeholders(sql: str) -> tuple[str, tuple[str, ...]]:
    """A pyformat statement (`%(name)s`, `%%`) as PostgreSQL's own `$n` form, with the names in
    their order (a name used twice is one `$n`)."""
    names: list[str] = []

    def one(m: re.Match[str]) -> str:
        if m.group(1) is None:
            return "%"
        if m.group(1) not in names:
            names.append(m.group(1))
        return f"${names.index(m.group(1)) + 1}"

    return _PLACEHOLDER.sub(one, sql), tuple(names)


def _raw_cursor(conn: Connection, raw: Any) -> Any:
    """The psycopg RawCursor kept for `raw` (the pooled connection's driver connection) in the pool
    record's info: made once per database connection, used by one thread at a time (the one that
    checked the connection out)."""
    info = conn.connection.info
    kept = info.get(_RAW_CURSOR)
    if kept is None or kept[0] is not raw or kept[1].closed:
        import psycopg

        kept = info[_RAW_CURSOR] = (raw, psycopg.RawCursor(raw))
    return kept[1]


_COMPILED: dict[Any, Any] = {}  # statement shape (SQLAlchemy's cache key) -> compiled, per process
_COMPILED_MAX = 512


def driver_rows(conn: Connection, statement: ClauseElement, binary: bool = False) -> list[tuple]:
    """The rows of `statement` on the driver's cursor: no SQLAlchemy work per row (the hottest list
    reads, thousands of rows). `binary` (PostgreSQL): results in binary form (a bytea comes as its
    bytes, not as hex text twice its size). A statement's shape is compiled once (as SQLAlchemy's
    own cache does, not one of thousands of values); one with expanding lists every time."""
    key = statement._generate_cache_key()
    compiled = _COMPILED.get((conn.dialect.name, key.key)) if key is not None else None
    if compiled is None:
        compiled = statement.compile(dialect=conn.dialect, cache_key=key)
        if key is None or any(b.expanding for b in getattr(compiled, "binds", {}).values()):
            compiled = statement.compile(dialect=conn.dialect, compile_kwargs={"render_postcompile": True})
            key = None
            statement_cache.keeps(compiled)  # never kept; a large one counts for the next collection
        elif statement_cache.keeps(compiled):  # a statement of thousands of values is not kept (issue 41)
            if len(_COMPILED) >= _COMPILED_MAX:
                _COMPILED.clear()
            _COMPILED[(conn.dialect.name, key.key)] = compiled
    params = (compiled.construct_params(extracted_parameters=key[1]) if key is not None else compiled.params) or {}
    positions = getattr(compiled, "positiontup", None)  # positional paramstyles (SQLite, MariaDB's)
    args: Any = params if positions is None else tuple(params[k] for k in positions)
    raw = conn.connection.driver_connection
    assert raw is not None
    sql = str(compiled)
    with driver_errors(conn, sql):
        restart_deadline(conn)
        cur = raw.cursor()
        try:
            if binary:
                cur.execute(sql, args, binary=True)
            else:
                cur.execute(sql, args)
            return cur.fetchall()
        finally:
            cur.close()
