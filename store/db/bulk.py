"""Many rows into one table on the driver's own bulk path, inside the caller's transaction:
PostgreSQL's COPY, the driver's executemany of plain tuples elsewhere (SQLAlchemy's per-row
parameter handling and statement events cost more than the database's work at tens of thousands of
rows). The caller passes the check of column widths every other write gets (store/hms/column_widths):
it sees the longest value of each text column.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from typing import Any

from sqlalchemy import Connection, String, Table

BATCH = 1000
WidthCheck = Callable[[Table, Iterable[dict[str, Any]]], None]


def insert_rows(conn: Connection, table: Table, columns: Sequence[str], rows: Sequence[Sequence[Any]],
                check_widths: WidthCheck | None, pg_types: Sequence[str] | None = None, batch: int = BATCH) -> None:
    """Insert `rows` (tuples in the order of `columns`) into `table`; `check_widths` None: the caller
    checked them. `pg_types`: PostgreSQL type names of the columns for a binary COPY (else text)."""
    if not rows:
        return
    if check_widths is not None:
        _check_widths(table, columns, rows, check_widths)
    raw = conn.connection.driver_connection
    assert raw is not None
    names = ", ".join(columns)
    if conn.dialect.name == "postgresql":
        binary = " (FORMAT BINARY)" if pg_types else ""
        with raw.cursor() as cur, cur.copy(f"COPY {table.name} ({names}) FROM STDIN{binary}") as cp:
            if pg_types:
                cp.set_types(list(pg_types))
            for r in rows:
                cp.write_row(r)
        return
    mark = "?" if conn.dialect.name == "sqlite" else "%s"
    cur = raw.cursor()
    try:
        sql = f"INSERT INTO {table.name} ({names}) VALUES ({', '.join([mark] * len(columns))})"
        for start in range(0, len(rows), batch):
            cur.executemany(sql, rows[start:start + batch])
    finally:
        cur.close()


def _check_widths(table: Table, columns: Sequence[str], rows: Sequence[Sequence[Any]], check: WidthCheck) -> None:
    """The longest value of each text column, checked as every insert is (the same error)."""
    for i, name in enumerate(columns):
        if not isinstance(table.c[name].type, String):
            continue
        longest = max((r[i] for r in rows if isinstance(r[i], str)), key=len, default=None)
        if longest is not None:
            check(table, [{name: longest}])
