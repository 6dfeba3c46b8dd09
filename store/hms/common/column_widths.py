"""The same value limits on every backend: the widths of the PostgreSQL and MariaDB columns
(store/db/schema.py), enforced for SQLite too, so a SQLite metastore can always be moved.

Every INSERT and UPDATE the store runs is checked before it reaches the database (one engine hook,
`enforce`), so no write path can forget it:

* `String(n)` columns hold at most n characters (PostgreSQL `varchar(n)`, MariaDB `VARCHAR(n)`);
* text and binary columns hold at most what MariaDB's type holds, in bytes (`TEXT`/`BLOB` 65,535,
  `MEDIUMTEXT` 16,777,215; `LONGTEXT`/`LONGBLOB` are not limited here);
* no text holds a NUL character (PostgreSQL refuses them in text).

A value beyond its column's width is refused with a MetaError naming the column, its width and
what the value is (Hive's own store refuses such values with a MetaException too); the statement
never runs, and the write transaction it belongs to is rolled back.
"""

from __future__ import annotations

from collections.abc import Iterable
from functools import cache
from typing import Any

from sqlalchemy import Engine, Table, event
from sqlalchemy.dialects import mysql
from sqlalchemy.types import LargeBinary, String, Text

from store.db import schema as S
from store.errors import MetaError

# what a client knows a column as
_FIELDS = {
    "partition_key_val.part_key_val": "a partition value",
    "partition_key_val.part_key_name": "a partition key name",
    "partitions.part_name": "a partition name (key=value/...)",
    "db_params.param_key": "a database parameter key",
    "tbl_params.param_key": "a table parameter key",
    "partition_params.param_key": "a partition parameter key",
    "db.name": "a database name",
    "tbl.name": "a table name",
    "schema.name": "a column name",
    "schema.comment": "a column comment",
    "schema.type": "a column type",
    "db.location_uri": "a database location",
    "tbl.location": "a table location",
    "partitions.location": "a partition location",
}

_MYSQL = mysql.dialect()
_BYTES: dict[type, int | None] = {mysql.TINYTEXT: 255, mysql.MEDIUMTEXT: 16_777_215, mysql.LONGTEXT: None,
          mysql.TINYBLOB: 255, mysql.MEDIUMBLOB: 16_777_215, mysql.LONGBLOB: None}


def _width(column) -> tuple[int, str] | None:
    """(limit, 'characters' | 'bytes') of a column on MariaDB/PostgreSQL; None when unlimited."""
    impl = column.type.dialect_impl(_MYSQL)
    for cls, limit in _BYTES.items():
        if isinstance(impl, cls):
            return (limit, "bytes") if limit else None
    if isinstance(impl, (Text, LargeBinary)):
        return 65_535, "bytes"  # TEXT / BLOB
    if isinstance(impl, String) and impl.length:
        return impl.length, "characters"
    return None


@cache
def widths(table: Table) -> dict[str, tuple[int, str]]:
    """Column key -> (limit, unit) of the limited columns of a table of the schema."""
    return {c.key: w for c in table.c if (w := _width(c)) is not None}


def check_value(table: str, column: str, value: Any) -> None:
    """Refuse `value` for `table.column` when the column cannot hold it on every backend."""
    width = widths(S.metadata.tables[table]).get(column)
    _check(f"{table}.{column}", width, value)


def _check(field: str, width: tuple[int, str] | None, value: Any) -> None:
    if isinstance(value, str):
        if "\x00" in value:
            raise MetaError(f"{_describe(field)} contains a NUL character, which the metastore "
                            "cannot store")
        if width is None:
            return
        limit, unit = width
        size = len(value) if unit == "characters" else (
            len(value) if len(value) * 4 <= limit else len(value.encode("utf-8")))
    elif isinstance(value, (bytes, bytearray)) and width is not None:
        limit, unit = width
        size = len(value)
    else:
        return
    if size > limit:
        raise MetaError(f"{_describe(field)} of {size} {unit} is too long: column {field} has a "
                        f"maximum length of {limit} {unit}. Please correct your data!")


def _describe(field: str) -> str:
    what = _FIELDS.get(field)
    return f"The value for {field} ({what})" if what else f"The value for {field}"


def check_rows(table: Table, rows: Iterable[dict[str, Any]]) -> None:
    limited = widths(table)
    for row in rows:
        for key, value in row.items():
            if isinstance(value, (str, bytes, bytearray)):
                _check(f"{table.name}.{key}", limited.get(key), value)


def enforce(engine: Engine) -> None:
    """Check every INSERT and UPDATE run on `engine` against the schema's widths."""

    @event.listens_for(engine, "before_cursor_execute")
    def _before(_conn, _cursor, _statement, _parameters, context, _executemany):
        if context is None or not (context.isinsert or context.isupdate):
            return
        if getattr(context, "_hms_widths_checked", False):
            return  # one execute sent as several batches (insertmanyvalues)
        context._hms_widths_checked = True
        compiled = context.compiled
        table = getattr(getattr(compiled, "statement", None), "table", None)
        if isinstance(table, Table) and table.metadata is S.metadata:
            check_rows(table, context.compiled_parameters)


__all__ = ["check_value", "enforce", "widths"]
