"""Bulk statements on `record_index` rows, per backend: PostgreSQL loads with COPY and matches
keys through `unnest` arrays (one statement per call); SQLite and MySQL run batched executemany
and IN lists. Callers run them inside their transaction.

A key is addressed as (shard, key); rows are (tbl_id, fg_id, instant, shard, key).
"""

from __future__ import annotations

from collections.abc import Sequence

from sqlalchemy import Connection, text

BATCH = 5000  # rows per executemany
IN_LIST = 500  # keys per IN list
# PostgreSQL lookups send the keys as one string split in SQL (a 100,000-element array parameter
# costs ~0.2 s to encode in Python); the unit separator, unless a key holds it
_SEPARATOR = "\x1f"

Row = tuple[int, int, int, int, str]
Key = tuple[int, str]


class DuplicateKey(Exception):
    """An inserted key is in the table already (the primary key refused it)."""


def insert_rows(conn: Connection, rows: Sequence[Row]) -> None:
    """Add index rows on the driver's own bulk path (COPY; executemany of plain tuples); a key the
    table has already raises DuplicateKey (the caller's savepoint undoes the statement)."""
    if not rows:
        return
    raw = conn.connection.driver_connection
    assert raw is not None
    try:
        if conn.dialect.name == "postgresql":
            with raw.cursor() as cur, cur.copy(
                    "COPY record_index (tbl_id, fg_id, instant, shard, record_key) FROM STDIN (FORMAT BINARY)") as cp:
                cp.set_types(["int8", "int8", "int8", "int2", "text"])
                for r in rows:
                    cp.write_row(r)
            return
        mark = "?" if conn.dialect.name == "sqlite" else "%s"
        cur = raw.cursor()
        try:
            for start in range(0, len(rows), BATCH):
                cur.executemany("INSERT INTO record_index (tbl_id, fg_id, instant, shard, record_key) "
                                f"VALUES ({', '.join([mark] * 5)})", rows[start:start + BATCH])
        finally:
            cur.close()
    except Exception as exc:
        if _is_duplicate(exc):
            raise DuplicateKey(str(exc)) from exc
        raise


def _is_duplicate(exc: Exception) -> bool:
    """The drivers' unique-violation errors: psycopg (SQLSTATE 23505), sqlite3, PyMySQL (1062)."""
    if getattr(exc, "sqlstate", None) == "23505":
        return True
    args: tuple = tuple(getattr(exc, "args", ()))
    return type(exc).__name__ == "IntegrityError" and ("UNIQUE" in str(exc) or args[:1] == (1062,))


def _arrays(keys: Sequence[Key]) -> tuple[list[int], list[str]]:
    return [s for s, _ in keys], [k for _, k in keys]


def delete_keys(conn: Connection, tbl_id: int, fg_id: int, keys: Sequence[Key]) -> int:
    """Remove keys from one file group; the number of rows removed."""
    if not keys:
        return 0
    if conn.dialect.name == "postgresql":
        shards, names = _arrays(keys)
        return conn.execute(text(
            "DELETE FROM record_index r USING unnest(CAST(:s AS smallint[]), CAST(:k AS text[])) AS d(shard, k) "
            "WHERE r.tbl_id = :t AND r.shard = d.shard AND r.record_key = d.k AND r.fg_id = :f"),
            {"s": shards, "k": names, "t": tbl_id, "f": fg_id}).rowcount
    stmt = text("DELETE FROM record_index WHERE tbl_id = :t AND shard = :s AND record_key = :k AND fg_id = :f")
    done = 0
    for start in range(0, len(keys), BATCH):
        done += conn.execute(stmt, [{"t": tbl_id, "s": s, "k": k, "f": fg_id}
                                    for s, k in keys[start:start + BATCH]]).rowcount
    return done


def update_instants(conn: Connection, tbl_id: int, fg_id: int, instant: int, keys: Sequence[Key]) -> int:
    """Keys rewritten in place by `instant`; the number of rows changed."""
    if not keys:
        return 0
    if conn.dialect.name == "postgresql":
        shards, names = _arrays(keys)
        return conn.execute(text(
            "UPDATE record_index r SET instant = :i FROM unnest(CAST(:s AS smallint[]), CAST(:k AS text[])) "
            "AS d(shard, k) WHERE r.tbl_id = :t AND r.shard = d.shard AND r.record_key = d.k AND r.fg_id = :f"),
            {"s": shards, "k": names, "t": tbl_id, "f": fg_id, "i": instant}).rowcount
    stmt = text("UPDATE record_index SET instant = :i "
                "WHERE tbl_id = :t AND shard = :s AND record_key = :k AND fg_id = :f")
    done = 0
    for start in range(0, len(keys), BATCH):
        done += conn.execute(stmt, [{"t": tbl_id, "s": s, "k": k, "f": fg_id, "i": instant}
                                    for s, k in keys[start:start + BATCH]]).rowcount
    return done


def find_keys(conn: Connection, tbl_id: int, keys: Sequence[Key]) -> dict[str, tuple[int, int]]:
    """key -> (fg_id, instant) of the keys the index holds. On the driver's cursor: a lookup of
    100,000 keys is 100,000 rows, which SQLAlchemy's statement and row layers would double."""
    out: dict[str, tuple[int, int]] = {}
    if not keys:
        return out
    raw = conn.connection.driver_connection
    assert raw is not None
    if conn.dialect.name == "postgresql":
        shards, names = _arrays(keys)
        joined = _SEPARATOR.join(names)
        if joined.count(_SEPARATOR) == len(names) - 1:  # no key holds the separator: two strings
            source = "unnest(string_to_array(%s, ',')::smallint[], string_to_array(%s, E'\\x1f'))"
            params: tuple = (",".join(map(str, shards)), joined, tbl_id)
        else:
            source = "unnest(%s::smallint[], %s::text[])"
            params = (shards, names, tbl_id)
        with raw.cursor() as cur:
            cur.execute(f"SELECT d.o, r.fg_id, r.instant FROM {source} WITH ORDINALITY AS d(shard, k, o) "
                        "JOIN record_index r ON r.tbl_id = %s AND r.shard = d.shard AND r.record_key = d.k", params)
            for o, fg, inst in cur:
                out[names[o - 1]] = (fg, inst)
        return out
    mark = "?" if conn.dialect.name == "sqlite" else "%s"
    by_shard: dict[int, list[str]] = {}
    for s, k in keys:
        by_shard.setdefault(s, []).append(k)
    cur = raw.cursor()
    try:
        for s, names in sorted(by_shard.items()):  # through the primary key: (tbl_id, shard, key IN ...)
            unique = list(dict.fromkeys(names))
            for start in range(0, len(unique), IN_LIST):
                chunk = unique[start:start + IN_LIST]
                cur.execute(f"SELECT record_key, fg_id, instant FROM record_index WHERE tbl_id = {mark} "
                            f"AND shard = {mark} AND record_key IN ({', '.join([mark] * len(chunk))})",
                            [tbl_id, s, *chunk])
                for k, fg, inst in cur.fetchall():
                    out[k] = (fg, inst)
    finally:
        cur.close()
    return out
