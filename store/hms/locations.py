"""Locations of databases, tables and partitions, checked before any transaction writes them: a
location the store cannot hold, or whose directory the server could never manage, is refused
before anything is written (Hive refuses them too, with a MetaException).

Refused: control characters (NUL included), text that is no URI, and the web schemes `http` and
`https` (read-only storage: Hadoop's HttpFileSystem cannot make a directory either). Other schemes
(s3a, gs, abfs, hdfs, ...) are accepted: the server makes their directories when it can, and a
directory it cannot make never fails the call (store/storage/warehouse.py).
"""

from __future__ import annotations

from urllib.parse import urlsplit

from store.errors import MetaError
from store.hms import column_widths

READ_ONLY_SCHEMES = frozenset({"http", "https"})


def check_location(value: str | None, what: str, table: str, column: str) -> None:
    """Refuse a location (`what` names it in the message; `table.column` is where it is stored)."""
    if value is None:
        return
    if any(ord(c) < 0x20 or c == "\x7f" for c in value):
        raise MetaError(f"{what} {value!r} contains a control character")
    try:
        scheme = urlsplit(value).scheme.lower()
    except ValueError as exc:
        raise MetaError(f"{what} {value!r} is not a valid URI: {exc}") from exc
    if scheme in READ_ONLY_SCHEMES:
        raise MetaError(f"{what} {value} is on {scheme} storage, which is read-only: the metastore "
                        "cannot create or manage a directory there")
    column_widths.check_value(table, column, value)


__all__ = ["READ_ONLY_SCHEMES", "check_location"]
