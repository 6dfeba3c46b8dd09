"""Locations of databases, tables and partitions, checked before any transaction writes them: a
location the store cannot hold, or whose directory the server could never manage, is refused
before anything is written (Hive refuses them too, with a MetaException).

Refused: control characters (NUL included), text that is no URI, the web schemes `http` and
`https` (read-only storage: Hadoop's HttpFileSystem cannot make a directory either), and every
scheme that is not a file system a lakehouse keeps tables on (`ftp`, `sftp`, `memory`, ...: a
location is something the server may later open). The file-system schemes below are accepted; the
server itself opens only those store/storage/warehouse.py is allowed to (the warehouse's), and a
directory it cannot make never fails the call.
"""

from __future__ import annotations

from urllib.parse import urlsplit

from store.errors import MetaError
from store.hms.common import column_widths
from store.storage import warehouse

READ_ONLY_SCHEMES = frozenset({"http", "https"})
# Hadoop-compatible file systems tables live on (Hive, Spark, Trino and Hudi name them so)
FILE_SYSTEM_SCHEMES = frozenset({
    "", "file", "hdfs", "viewfs", "webhdfs", "s3", "s3a", "s3n", "gs", "gcs", "abfs", "abfss", "wasb", "wasbs",
    "adl", "oss", "cos", "cosn", "obs", "ofs", "o3fs", "alluxio", "jfs", "lakefs", "dbfs", "maprfs", "swift"})


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
    if scheme not in FILE_SYSTEM_SCHEMES and not warehouse.opened(scheme):
        raise MetaError(f"{what} {value} has the scheme {scheme!r}, which is not a file system tables are "
                        f"kept on (accepted: {', '.join(sorted(s for s in FILE_SYSTEM_SCHEMES if s))})")
    column_widths.check_value(table, column, value)


__all__ = ["FILE_SYSTEM_SCHEMES", "READ_ONLY_SCHEMES", "check_location"]
