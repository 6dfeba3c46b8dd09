"""Making and finding the store's triggers (parts_version.py, table_version.py): per backend, with
a warning instead of a failure where the database refuses them."""

from __future__ import annotations

import logging
from collections.abc import Iterable, Sequence

from sqlalchemy import Connection
from sqlalchemy.exc import DBAPIError

log = logging.getLogger(__name__)


def backend(conn: Connection) -> str:
    name = conn.dialect.name
    return "mysql" if name in ("mysql", "mariadb") else name


def install(conn: Connection, statements: dict[str, Sequence[str]], refused: str) -> bool:
    """Run the backend's statements (they make the triggers again); False, with the warning
    "<refused> (<the database's reason>)", where the database refuses (MariaDB with binary logging
    and no SUPER privilege)."""
    todo = statements.get(backend(conn))
    if todo is None:
        return False
    try:
        if backend(conn) == "mysql":  # DDL commits there: no savepoint to fall back to
            for sql in todo:
                conn.exec_driver_sql(sql)
        else:
            with conn.begin_nested():
                for sql in todo:
                    conn.exec_driver_sql(sql)
    except DBAPIError as exc:
        log.warning("%s (%s)", refused, str(exc.orig).splitlines()[0] if exc.orig else exc)
        return False
    return True


def present(conn: Connection, names: Iterable[str], tables: Sequence[str]) -> bool:
    """Are all the triggers `names` on the `tables` there?"""
    b = backend(conn)
    if b == "sqlite":
        sql = ("SELECT name FROM sqlite_master WHERE type = 'trigger' AND tbl_name IN ("
               + ", ".join(f"'{t}'" for t in tables) + ")")
    elif b == "postgresql":
        sql = ("SELECT tgname FROM pg_trigger WHERE tgrelid IN ("
               + ", ".join(f"'\"{t}\"'::regclass" for t in tables) + ")")
    elif b == "mysql":
        sql = ("SELECT trigger_name FROM information_schema.triggers WHERE event_object_schema = DATABASE() "
               "AND event_object_table IN (" + ", ".join(f"'{t}'" for t in tables) + ")")
    else:
        return False
    return set(names) <= set(conn.exec_driver_sql(sql).scalars())
