"""SQL forms that differ per backend.

JSON aggregation: child rows (parameters, columns) come back inside their parent's row, so one
statement answers a call instead of one per child table. Lists: `col IN (...)` as one array
parameter on PostgreSQL."""

from __future__ import annotations

import json

from sqlalchemy import BigInteger, String, Text, any_, bindparam, cast, func
from sqlalchemy.dialects.postgresql import ARRAY

# Lists of ids or names go to the database in chunks of at most BATCH values (IN lists, deletes).
BATCH = 500


def json_rows(backend: str, *cols):
    """An aggregate: a JSON array holding one array [c1, c2, ...] per row of the group
    (NULL or '[]' for no rows; order unspecified)."""
    if backend == "postgresql":
        return func.json_agg(func.json_build_array(*cols))
    if backend == "sqlite":
        return func.json_group_array(func.json_array(*cols))
    return func.json_arrayagg(func.json_array(*cols))


def rows_of(value) -> list:
    """The Python list an aggregate from json_rows came back as."""
    if value is None:
        return []
    if isinstance(value, (str, bytes, bytearray)):
        return json.loads(value)
    return value  # psycopg parses json itself


def params_of_many(values) -> list[dict]:
    """params_of for many rows with one JSON decode (aggregates selected as text, see as_text)."""
    texts = []
    for v in values:
        if v is None:
            texts.append("[]")
        elif isinstance(v, (bytes, bytearray)):
            texts.append(v.decode())
        elif isinstance(v, str):
            texts.append(v)
        else:
            texts.append(json.dumps(v))
    return [{k: (x if x is not None else "") for k, x in pairs}
            for pairs in json.loads("[" + ",".join(texts) + "]")]


def as_text(backend: str, agg):
    """An aggregate from json_rows as text (psycopg would otherwise parse each row's JSON)."""
    return cast(agg, Text) if backend == "postgresql" else agg


def params_of(value) -> dict:
    """A parameters dict from json_rows(key, value); NULL values read as "" (as Hive answers)."""
    return {k: (v if v is not None else "") for k, v in rows_of(value)}


# PostgreSQL: lists longer than this go as one delimited string (pg_joined_list), shorter ones as
# an array parameter
JOINED_OVER = BATCH
SEP = "\x1f"  # the unit separator between the strings of a joined list


def plan_with_values(conn) -> None:
    """PostgreSQL: the rest of this transaction plans every statement with its parameters' values.
    A transaction that fills a table and then reads it back by long lists (a Hudi table's
    registration: 10,000 partitions) otherwise runs the driver's prepared statements on generic
    plans made while the table looked empty, whose `= ANY(array)` tests each row against the whole
    list (a collation compare per element: 0.1-0.5 s per statement there, 1-5 ms planned with the
    values, which hashes the list)."""
    if conn.dialect.name == "postgresql":
        conn.exec_driver_sql("SET LOCAL plan_cache_mode = force_custom_plan")


def pg_joined_list(values: list) -> str | None:
    """A list of strings as one text parameter, each value preceded by SEP (so that a list of one
    empty string is not an empty array): `(string_to_array(:p, chr(31)))[2:]` in SQL. The driver
    encodes a list parameter value by value in Python (17 ms for 10,000 strings here), one string
    at once (2.6 ms). None when a value holds SEP (then pass the list)."""
    joined = SEP + SEP.join(values)
    return joined if joined.count(SEP) == len(values) else None


LIST_BATCH_PG = 50_000  # PostgreSQL: values one in_list takes (one parameter, whatever the count)


def list_batch(backend: str) -> int:
    """How many values one `in_list` may hold on `backend`: BATCH where each value is a parameter,
    far more on PostgreSQL, where a list is one parameter (so a batch of partitions takes one
    statement)."""
    return LIST_BATCH_PG if backend == "postgresql" else BATCH


def in_list(backend: str, col, values):
    """`col IN values`; on PostgreSQL `col = ANY(array)`: one parameter instead of one per value
    (the driver's query conversion then costs nothing per value), a long list as one delimited
    string (pg_joined_list; integers comma-separated)."""
    values = list(values)
    if backend == "postgresql" and values:
        ints = isinstance(values[0], int)
        if len(values) > JOINED_OVER:
            if ints and all(type(v) is int for v in values):
                text = bindparam(None, ",".join(map(str, values)), type_=Text())
                return col == any_(cast(func.string_to_array(text, ","), ARRAY(BigInteger)))
            joined = None if ints else pg_joined_list(values)
            if joined is not None:
                arr = func.string_to_array(bindparam(None, joined, type_=Text()), func.chr(31), type_=ARRAY(Text))
                return col == any_(arr[2:len(values) + 1])
        elem = BigInteger() if ints else String()
        return col == any_(bindparam(None, values, type_=ARRAY(elem)))
    return col.in_(values)


def pair_chunks(pairs, size: int = BATCH // 2):
    """Sorted (a, b) pairs in chunks for `pairs_in` (two lists of at most `size` values each)."""
    ordered = sorted(set(pairs))
    for k in range(0, len(ordered), size):
        yield ordered[k:k + size]


def pairs_in(backend: str, col_a, col_b, pairs):
    """`(col_a, col_b) IN pairs`, widened to `col_a IN {a's} AND col_b IN {b's}` (one index range per
    value, the same query on every backend): the caller keeps the rows whose pair it asked for."""
    return (in_list(backend, col_a, sorted({a for a, _ in pairs}))
            & in_list(backend, col_b, sorted({b for _, b in pairs})))
