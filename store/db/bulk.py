"""Many rows into one table on the driver's own bulk path, inside the caller's transaction:
PostgreSQL's COPY, the driver's executemany of plain tuples elsewhere (SQLAlchemy's per-row
parameter handling and statement events cost more than the database's work at tens of thousands of
rows). The caller passes the check of column widths every other write gets (store/hms/common/column_widths):
it sees each text column's longest values and any value holding a NUL. Driver errors leave as
SQLAlchemy's (store/db/driver_cursor.py).
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from operator import itemgetter
from typing import Any

from sqlalchemy import Connection, String, Table

from store.db.driver_cursor import driver_errors
from store.db.statement_timeout import restart_deadline

BATCH = 1000
PG_COPY_ROWS = 500_000
WidthCheck = Callable[[Table, Iterable[dict[str, Any]]], None]


def insert_rows(conn: Connection, table: Table, columns: Sequence[str], rows: Sequence[Sequence[Any]],
                check_widths: WidthCheck | None, pg_types: Sequence[str] | None = None, batch: int = BATCH) -> None:
    """Insert `rows` (tuples in the order of `columns`) into `table`; `check_widths` None: the caller
    checked them. `pg_types`: PostgreSQL type names of the columns for a binary COPY (else text)."""
    if not rows:
        return
    if check_widths is not None:
        _check_widths(table, columns, rows, check_widths)
    with driver_errors(conn, f"bulk insert into {table.name}"):
        _insert(conn, table, columns, rows, pg_types, batch)


class Inserting:
    """Writes `insert_rows_started` or `writes_started` began: `finish()` waits for them and raises
    their error."""

    def __init__(self, conn: Connection, what: str, thread: threading.Thread | None = None,
                 failed: list[BaseException] | None = None):
        self.conn, self.what, self.thread = conn, what, thread
        self.failed = failed if failed is not None else []  # (the thread's list: filled after this)

    def finish(self) -> None:
        if self.thread is not None:
            self.thread.join()
            self.thread = None
        if self.failed:
            with driver_errors(self.conn, self.what):  # in the caller's thread: the connection's loss is handled there
                raise self.failed.pop()

    @contextmanager
    def alongside(self) -> Iterator[None]:
        """The block runs while the rows go in and finishes the insert: the insert's error first (a
        statement of the block that waited for it fails too, as the transaction has failed)."""
        try:
            yield
        except BaseException:
            self.finish()
            raise
        self.finish()


def insert_rows_started(conn: Connection, table: Table, columns: Sequence[str], rows: Sequence[Sequence[Any]],
                        check_widths: WidthCheck | None, pg_types: Sequence[str]) -> Inserting:
    """`insert_rows` begun: on PostgreSQL the COPY runs on a thread of its own, so that the caller's
    Python work overlaps the database's (most of a big COPY is waiting for the database to insert
    the rows and their index entries). The COPY holds the driver connection's lock from its start
    to its end, so a statement the caller makes meanwhile runs after it, in order; the caller makes
    none it needs to see fail for its own reason before `finish()`. Elsewhere, and for more rows
    than one COPY takes: the insert is done when this returns."""
    what = f"bulk insert into {table.name}"
    if conn.dialect.name != "postgresql" or not rows or len(rows) > PG_COPY_ROWS:
        insert_rows(conn, table, columns, rows, check_widths, pg_types)
        return Inserting(conn, what)
    if check_widths is not None:
        _check_widths(table, columns, rows, check_widths)
    locked = threading.Event()

    def copy() -> None:
        try:
            _copy(conn, table, columns, rows, pg_types, locked.set)
        finally:
            locked.set()

    started = _on_thread(conn, what, copy, "bulk-copy")
    locked.wait()  # the COPY holds the connection: the caller's next statement comes after it
    return started


def writes_started(conn: Connection, what: str, writes: Callable[[], None]) -> Inserting:
    """`writes` (statements on `conn`) begun: on PostgreSQL on a thread of their own, so that the
    caller's Python work overlaps the database's. Until `finish()` the connection is theirs: the
    caller makes no statement; and they need nothing of the calling thread's (its request's
    thread-local state). Elsewhere they are done when this returns."""
    if conn.dialect.name != "postgresql":
        writes()
        return Inserting(conn, what)
    return _on_thread(conn, what, writes, "bulk-writes")


def _on_thread(conn: Connection, what: str, work: Callable[[], None], name: str) -> Inserting:
    failed: list[BaseException] = []

    def run() -> None:
        try:
            work()
        except BaseException as exc:  # noqa: BLE001 - finish() raises it in the caller's thread
            failed.append(exc)

    thread = threading.Thread(target=run, name=name, daemon=True)
    thread.start()
    return Inserting(conn, what, thread, failed)


def _copy(conn: Connection, table: Table, columns: Sequence[str], rows: Sequence[Sequence[Any]],
          pg_types: Sequence[str] | None, started: Callable[[], None] | None = None) -> None:
    """PostgreSQL: one COPY per PG_COPY_ROWS rows: each stays well inside the statement timeout (a
    commit of 10,000,000 record keys as one COPY ran past 60 s); the transaction is the caller's.
    `started` is called once the first COPY holds the connection."""
    raw = conn.connection.driver_connection
    assert raw is not None
    names = ", ".join(columns)
    binary = " (FORMAT BINARY)" if pg_types else ""
    for start in range(0, len(rows), PG_COPY_ROWS):
        with raw.cursor() as cur, cur.copy(f"COPY {table.name} ({names}) FROM STDIN{binary}") as cp:
            if started is not None:
                started()
                started = None
            if pg_types:
                cp.set_types(list(pg_types))
            for r in rows[start:start + PG_COPY_ROWS]:
                cp.write_row(r)


def _insert(conn: Connection, table: Table, columns: Sequence[str], rows: Sequence[Sequence[Any]],
            pg_types: Sequence[str] | None, batch: int) -> None:
    if conn.dialect.name == "postgresql":
        _copy(conn, table, columns, rows, pg_types)
        return
    raw = conn.connection.driver_connection
    assert raw is not None
    names = ", ".join(columns)
    mark = "?" if conn.dialect.name == "sqlite" else "%s"
    cur = raw.cursor()
    try:
        sql = f"INSERT INTO {table.name} ({names}) VALUES ({', '.join([mark] * len(columns))})"
        for start in range(0, len(rows), batch):
            restart_deadline(conn)  # each batch is a statement of its own (SQLite's timeout)
            cur.executemany(sql, rows[start:start + batch])
    finally:
        cur.close()


def _check_widths(table: Table, columns: Sequence[str], rows: Sequence[Sequence[Any]], check: WidthCheck) -> None:
    """The longest value of each text column (in characters and in UTF-8 bytes) and any value with
    a NUL character, checked as every insert is (the same error)."""
    for i, name in enumerate(columns):
        if not isinstance(table.c[name].type, String):
            continue
        texts = list(map(itemgetter(i), rows))
        try:  # one pass in C for the common case: every value a text, ASCII, no NUL
            joined = "".join(texts)
        except TypeError:  # some value is no text (None, a number)
            texts = [v for v in texts if isinstance(v, str)]
            joined = "".join(texts)
        if not texts:
            continue
        worst = [v for v in texts if "\x00" in v][:1] if "\x00" in joined else []
        worst.append(max(texts, key=len))
        if not joined.isascii():  # then the longest in UTF-8 bytes may be another
            worst.append(max(texts, key=lambda v: len(v.encode("utf-8"))))
        for value in worst:
            check(table, [{name: value}])


def _pg_array(values: Sequence[Any], pg_type: str) -> Any:
    """An array parameter: int8 and bytea arrays as PostgreSQL's array text, written here (the
    driver's list dumper, element by element in Python, took 30 of 50 ms for 2,000 rows of four
    bytea and an int8); other values as a list for the driver."""
    if pg_type == "int8" and all(type(v) is int or v is None for v in values):
        return "{" + ",".join("NULL" if v is None else str(v) for v in values) + "}"
    if pg_type == "bytea" and all(type(v) is bytes or v is None for v in values):
        return "{" + ",".join("NULL" if v is None else '"\\\\x' + v.hex() + '"' for v in values) + "}"
    return list(values)


def update_rows(conn: Connection, table: Table, key: str, columns: Sequence[str], rows: Sequence[Sequence[Any]],
                pg_types: Sequence[str], also: dict[str, Any] | None = None) -> None:
    """UPDATE `columns` of many rows of `table` (each row: its `key` value, then the columns' values)
    in one statement per batch: from arrays on PostgreSQL (`pg_types`: the key's and the columns'
    types), from a VALUES list on SQLite, from a derived table on MariaDB. `also`: columns set to
    one value in every row, by the same statements."""
    if not rows:
        return
    backend = conn.dialect.name
    raw = conn.connection.driver_connection
    assert raw is not None
    names = [key, *columns]
    constants = dict(also or {})
    with driver_errors(conn, f"bulk update of {table.name}"):
        if backend == "postgresql":
            sets = ", ".join([f"{c} = v.{c}" for c in columns] + [f"{c} = %s" for c in constants])
            arrays = ", ".join(f"%s::{t}[]" for t in pg_types)
            sql = (f"UPDATE {table.name} SET {sets} FROM unnest({arrays}) AS v({', '.join(names)}) "
                   f"WHERE {table.name}.{key} = v.{key}")
            with raw.cursor() as cur:
                for start in range(0, len(rows), PG_COPY_ROWS):
                    restart_deadline(conn)
                    cur.execute(sql, [*constants.values(), *[
                        _pg_array(col, t) for col, t in zip(zip(*rows[start:start + PG_COPY_ROWS]), pg_types)]])
            return
        per = max(1, 500 // len(names))  # parameters a statement
        cur = raw.cursor()
        try:
            for start in range(0, len(rows), per):
                chunk = rows[start:start + per]
                restart_deadline(conn)
                values = [x for r in chunk for x in r]
                if backend == "sqlite":
                    marks = ", ".join(["(" + ", ".join(["?"] * len(names)) + ")"] * len(chunk))
                    sets = ", ".join([f"{c} = v.column{i + 2}" for i, c in enumerate(columns)]
                                     + [f"{c} = ?" for c in constants])
                    sql = (f"UPDATE {table.name} SET {sets} FROM (VALUES {marks}) AS v "
                           f"WHERE {table.name}.{key} = v.column1")
                    params = [*constants.values(), *values]  # the SET's marks come first
                else:
                    first = "SELECT " + ", ".join(f"%s AS {c}" for c in names)
                    more = "SELECT " + ", ".join(["%s"] * len(names))
                    derived = " UNION ALL ".join([first] + [more] * (len(chunk) - 1))
                    sets = ", ".join([f"{table.name}.{c} = v.{c}" for c in columns]
                                     + [f"{table.name}.{c} = %s" for c in constants])
                    sql = f"UPDATE {table.name} JOIN ({derived}) AS v ON {table.name}.{key} = v.{key} SET {sets}"
                    params = [*values, *constants.values()]  # the derived table's come first
                cur.execute(sql, params)
        finally:
            cur.close()
