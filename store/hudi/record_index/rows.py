"""Bulk statements on `record_index` rows, per backend: PostgreSQL loads with COPY and matches
keys through `unnest` arrays (one statement per call); SQLite runs batched executemany and IN
lists, MySQL IN lists (PyMySQL sends an executemany of a DELETE or UPDATE a row at a time).
Callers run them inside their transaction.

A key is addressed as (shard, key); rows are (tbl_id, fg_id, instant, shard, key).
"""

from __future__ import annotations

import threading
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from sqlalchemy import Connection, text

from store.db import schema as S
from store.db.bulk import insert_rows as insert_rows_in
from store.db.dialect import pg_joined_list
from store.db.statement_timeout import restart_deadline

BATCH = 5000  # rows per executemany
IN_LIST = 500  # keys per IN list
# between keys in one text (lookups); a key that holds the unit separator takes a slower path
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
    try:
        insert_rows_in(conn, S.record_index, ("tbl_id", "fg_id", "instant", "shard", "record_key"), rows, None,
                       pg_types=("int8", "int8", "int8", "int2", "text"), batch=BATCH)
    except Exception as exc:
        if _is_duplicate(exc):
            raise DuplicateKey(str(exc)) from exc
        raise


def _is_duplicate(exc: Exception) -> bool:
    """The drivers' unique-violation errors: psycopg (SQLSTATE 23505), sqlite3, PyMySQL (1062), as
    they come or inside SQLAlchemy's IntegrityError (store/db/bulk.py raises them so)."""
    exc = getattr(exc, "orig", None) or exc
    if getattr(exc, "sqlstate", None) == "23505":
        return True
    args: tuple = tuple(getattr(exc, "args", ()))
    return type(exc).__name__ == "IntegrityError" and ("UNIQUE" in str(exc) or args[:1] == (1062,))


def _arrays(keys: Sequence[Key], fg_ids: Sequence[int] | None = None) -> tuple[str, dict[str, Any]]:
    """unnest(...) AS d(shard, k) of the keys (d(shard, k, fg) with their `fg_ids`), and its
    parameters: as delimited strings (the driver encodes a list parameter value by value,
    store/db/dialect.py pg_joined_list), else as arrays."""
    names = [k for _, k in keys]
    joined = pg_joined_list(names)
    fg = "" if fg_ids is None else ", CAST(string_to_array(:f, ',') AS int8[])"
    params: dict[str, Any] = {} if fg_ids is None else {"f": ",".join(map(str, fg_ids))}
    if joined is None:
        return (f"unnest(CAST(:s AS smallint[]), CAST(:k AS text[]){fg})",
                {**params, "s": [s for s, _ in keys], "k": names})
    return (f"unnest(CAST(string_to_array(:s, ',') AS smallint[]), (string_to_array(:k, chr(31)))[2:]{fg})",
            {**params, "s": ",".join([str(s) for s, _ in keys]), "k": joined})


def delete_keys(conn: Connection, tbl_id: int, fg_id: int, keys: Sequence[Key]) -> int:
    """Remove keys from one file group; the number of rows removed."""
    if not keys:
        return 0
    if conn.dialect.name == "postgresql":
        source, params = _arrays(keys)
        return conn.execute(text(
            f"DELETE FROM record_index r USING {source} AS d(shard, k) "
            "WHERE r.tbl_id = :t AND r.shard = d.shard AND r.record_key = d.k AND r.fg_id = :f"),
            {**params, "t": tbl_id, "f": fg_id}).rowcount
    if conn.dialect.name in ("mysql", "mariadb"):
        return _delete_in_lists(conn, tbl_id, fg_id, keys)
    stmt = text("DELETE FROM record_index WHERE tbl_id = :t AND shard = :s AND record_key = :k AND fg_id = :f")
    done = 0
    for start in range(0, len(keys), BATCH):
        done += conn.execute(stmt, [{"t": tbl_id, "s": s, "k": k, "f": fg_id}
                                    for s, k in keys[start:start + BATCH]]).rowcount
    return done


def _delete_in_lists(conn: Connection, tbl_id: int, fg_id: int, keys: Sequence[Key]) -> int:
    """MySQL: delete the keys of one file group, an IN list of up to IN_LIST keys per statement
    through the primary key (tbl_id, shard, key): PyMySQL runs an executemany of any statement but
    INSERT as one round trip per row. The rows deleted."""
    raw = conn.connection.driver_connection
    assert raw is not None
    done = 0
    cur = raw.cursor()
    try:
        for s, names in sorted(by_shard(keys).items()):
            for start in range(0, len(names), IN_LIST):
                chunk = names[start:start + IN_LIST]
                done += cur.execute("DELETE FROM record_index WHERE tbl_id = %s AND shard = %s AND fg_id = %s AND "
                                    f"record_key IN ({', '.join(['%s'] * len(chunk))})", [tbl_id, s, fg_id, *chunk])
    finally:
        cur.close()
    return done


def by_shard(keys: Iterable[Key]) -> dict[int, list[str]]:
    """shard -> its keys, of (shard, key) pairs."""
    out: dict[int, list[str]] = {}
    for s, k in keys:
        out.setdefault(s, []).append(k)
    return out


def find_keys(conn: Connection, tbl_id: int, shards: Mapping[int, Sequence[str]]) -> dict[str, tuple[int, int]]:
    """key -> (fg_id, instant) of the keys (shard -> keys) the index holds."""
    found, fgs, insts = key_columns(conn, tbl_id, shards)
    return dict(zip(found, zip(map(int, fgs), map(int, insts))))


Column = Sequence[int | str]


def key_columns(conn: Connection, tbl_id: int, shards: Mapping[int, Sequence[str]],
                parallel: bool = True) -> tuple[list[str], Column, Column]:
    """(keys found, their fg_ids, their instants) of the keys (shard -> keys) the index holds, as
    parallel lists; ids and instants are ints or digit texts, as the statement answered them
    (`int(...)` takes both). On the driver's cursor: a lookup of 100,000 keys is 100,000 rows,
    which SQLAlchemy's statement and row layers would double. `parallel` False: on `conn` alone
    (inside a transaction whose own view counts)."""
    if not any(shards.values()):
        return [], [], []
    raw = conn.connection.driver_connection
    assert raw is not None
    if conn.dialect.name == "postgresql":
        return _find_keys_pg(conn, raw, tbl_id, shards, parallel)
    return _find_keys_in_lists(raw, tbl_id, shards, one_text=conn.dialect.name == "sqlite",
                               restart=lambda: restart_deadline(conn))


def _extend(rows: Sequence[tuple], *columns: list) -> None:
    """Append rows' values to one list per column, without a Python loop per row."""
    if rows:
        for column, values in zip(columns, zip(*rows)):
            column.extend(values)


def _extend_split(n: int, text: str | None, found: list[str], fgs: list, insts: list) -> bool:
    """Append the n rows of one text (key, fg_id, instant, key, ... between separators); False,
    appending nothing, when it does not split into 3n parts (a key holds the separator)."""
    if not n:
        return True
    assert text is not None
    parts = text.split(_SEPARATOR)
    if len(parts) != 3 * n:
        return False
    found.extend(parts[0::3])
    fgs.extend(parts[1::3])
    insts.extend(parts[2::3])
    return True


# SQLite and MySQL: IN lists per shard, through the primary key (tbl_id, shard, key IN ...). On
# SQLite each list's rows come back as one row, one text, split in C. The module lets go of the
# interpreter lock only while SQLite steps, so a row per key would hand the lock back and forth
# 100,000 times, and two lookups at once would run one after the other; one step per statement
# lets them probe in parallel.
_SQLITE_TEXT = "SELECT count(*), group_concat(record_key || char(31) || fg_id || char(31) || instant, char(31)) "


def _find_keys_in_lists(raw, tbl_id: int, shards: Mapping[int, Sequence[str]],
                        one_text: bool, restart=lambda: None) -> tuple[list[str], list, list]:
    """`restart`: called before each statement (SQLite's statement deadline)."""
    mark = "?" if one_text else "%s"
    match = f"FROM record_index WHERE tbl_id = {mark} AND shard = {mark} AND record_key IN "
    full_list = f"({', '.join([mark] * IN_LIST)})"
    found: list[str] = []
    fgs: list = []
    insts: list = []
    cur = raw.cursor()
    try:
        for s, names in sorted(shards.items()):
            for start in range(0, len(names), IN_LIST):
                chunk = names[start:start + IN_LIST]
                marks = full_list if len(chunk) == IN_LIST else f"({', '.join([mark] * len(chunk))})"
                params = [tbl_id, s, *chunk]
                restart()
                if one_text:
                    cur.execute(_SQLITE_TEXT + match + marks, params)
                    n, text = cur.fetchone()
                    if _extend_split(n, text, found, fgs, insts):
                        continue  # else a key holds the separator: the rows one by one
                cur.execute("SELECT record_key, fg_id, instant " + match + marks, params)
                _extend(cur.fetchall(), found, fgs, insts)
    finally:
        cur.close()
    return found, fgs, insts


def file_groups(conn: Connection, fg_ids: Sequence[int]) -> dict[int, tuple[str, str]]:
    """fg_id -> (partition path, file id), on the driver's cursor (a lookup names up to one group
    per key: one statement on PostgreSQL, IN lists elsewhere)."""
    out: dict[int, tuple[str, str]] = {}
    if not fg_ids:
        return out
    raw = conn.connection.driver_connection
    assert raw is not None
    cur = raw.cursor()
    try:
        if conn.dialect.name == "postgresql":
            cur.execute("SELECT fg_id, partition_path, file_id FROM record_index_file_group "
                        "WHERE fg_id = ANY(%s::int8[])", (list(fg_ids),))
            return {f: (p, i) for f, p, i in cur.fetchall()}
        mark = "?" if conn.dialect.name == "sqlite" else "%s"
        for start in range(0, len(fg_ids), IN_LIST):
            chunk = list(fg_ids[start:start + IN_LIST])
            cur.execute("SELECT fg_id, partition_path, file_id FROM record_index_file_group "
                        f"WHERE fg_id IN ({', '.join([mark] * len(chunk))})", chunk)
            out.update((f, (p, i)) for f, p, i in cur.fetchall())
    finally:
        cur.close()
    return out


# PostgreSQL: one statement per shard (its hash partition is chosen when planning), the shard's keys
# sorted and sent as one string split in SQL (a 100,000-element array parameter costs ~0.2 s to
# encode), matched as `record_key = ANY(...)` in the primary key's index (one descent per key; a
# join with the unnested keys would add a nested loop per key, a hash join would read the whole
# index). A large lookup runs its shards on two connections at once. The statements are
# separate snapshots: a lookup racing a commit may see some keys before it and some after (commits
# check what writers claim, so a stale answer is refused at commit, never applied).
PARALLEL_FROM = 20_000  # keys
# second connections taken at once, so that lookups waiting for one can never hold the whole pool
_SECONDS = threading.BoundedSemaphore(4)
_PG_MATCH = "FROM record_index WHERE tbl_id = %s AND shard = %s AND record_key = ANY({keys})"
_PG_LOOKUP_TEXTS = ("SELECT count(*), string_agg(concat_ws(E'\\x1f', record_key, fg_id, instant), E'\\x1f') "
                    + _PG_MATCH.format(keys="string_to_array(%s, E'\\x1f')"))
_PG_LOOKUP_ROWS = "SELECT record_key, fg_id, instant " + _PG_MATCH.format(keys="%s::text[]")


def _find_keys_pg(conn: Connection, raw, tbl_id: int, keys_of: Mapping[int, Sequence[str]],
                  parallel: bool = True) -> tuple[list[str], Column, Column]:
    shards = [(s, sorted(set(names))) for s, names in sorted(keys_of.items()) if names]
    if not parallel or sum(len(names) for _, names in shards) < PARALLEL_FROM or not _SECONDS.acquire(blocking=False):
        return _probe_shards(raw, tbl_id, shards)
    try:
        return _probe_on_two(conn, raw, tbl_id, shards)
    finally:
        _SECONDS.release()


def _probe_on_two(conn: Connection, raw, tbl_id: int,
                  shards: list[tuple[int, list[str]]]) -> tuple[list[str], Column, Column]:
    half: list[tuple[list[str], list, list]] = []
    failed: list[BaseException] = []

    def other() -> None:
        try:
            with conn.engine.connect() as second:
                half.append(_probe_shards(second.connection.driver_connection, tbl_id, shards[1::2]))
        except BaseException as exc:  # re-raised on the caller's thread
            failed.append(exc)

    worker = threading.Thread(target=other, daemon=True)
    worker.start()
    try:
        out = _probe_shards(raw, tbl_id, shards[0::2])
    finally:
        worker.join()
    if failed:
        raise failed[0]
    for mine, theirs in zip(out, half[0]):
        mine.extend(theirs)
    return out


def _probe_shards(raw, tbl_id: int, shards: Sequence[tuple[int, list[str]]]) -> tuple[list[str], list, list]:
    """Per shard one statement; its rows come back as one text (as on SQLite), or, when a key
    holds the separator, row by row."""
    found: list[str] = []
    fgs: list = []
    insts: list = []
    with raw.cursor() as cur:
        for shard, names in shards:
            joined = _SEPARATOR.join(names)
            if joined and joined.count(_SEPARATOR) == len(names) - 1:  # ("" splits into no key)
                cur.execute(_PG_LOOKUP_TEXTS, (tbl_id, shard, joined))
                n, joined_rows = cur.fetchone()
                if _extend_split(n, joined_rows, found, fgs, insts):
                    continue
            cur.execute(_PG_LOOKUP_ROWS, (tbl_id, shard, names))
            _extend(cur.fetchall(), found, fgs, insts)
    return found, fgs, insts
