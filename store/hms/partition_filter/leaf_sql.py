"""One leaf of a partition filter as SQL: the `partition_key_val` rows of one key that pass one test.

* Integral partition keys (tinyint, smallint, int, integer, bigint) compare numerically on
  `partition_key_val.part_key_num`; a value that is not an integer (the default partition
  `__HIVE_DEFAULT_PARTITION__`, ...) never satisfies a numeric comparison, not even under NOT:
  NOT is pushed down to the leaves (De Morgan, inverted operators), so every leaf is a positive
  test on one key row. Comparing an integral key with a string or date literal is an error.
* Every other key compares as a string on `part_key_val`, in code point order on every backend;
  integer literals compare as their text, date / timestamp literals as 'yyyy-mm-dd[ hh:mm:ss]'.
* Key types: `string` keys compare as strings (string or bare date literals; an integer literal is
  an error); integral keys numerically; `date` keys as Hive 4 compares them, as the value's text
  (yyyy-mm-dd, as Spark sends them; a string that is no such date matches nothing, `'2024-1-1'`
  included; the default partition never matches); keys of any other type (varchar, char, double,
  timestamp, ...) cannot be filtered on. These errors say "Filtering is supported only on
  partition keys of type string", as Hive's do.
* LIKE on a string key is what Hive 2.3's store makes of the pattern (DataNucleus turns the
  "regular expression" into SQL LIKE): `.*` matches any run of characters, `.` any one
  character, a backslash before a dot a dot, and every other character only itself (`%`, `_`,
  `(`, `[`, `*`, `+`, `?`, `|` included); the whole value must match, case-sensitively
  (`ds like "us.*"` is what Spark sends for `startsWith("us")`). Hive 4 reads SQL patterns there
  (`%`, `_`, the dot literal), which would answer nothing to Spark's: see docs/conformance.md. On a
  date key (Hive 4; Hive 2.3 refuses) `%` and `_` are wildcards too, as in Hive 4's store: no date
  holds them. It runs as a wildcard pattern built from those rules, never as a regular
  expression (see like_pattern): SQL LIKE on PostgreSQL and MySQL/MariaDB (under a binary
  collation), GLOB on SQLite.
* Ordering / equality per backend: SQLite's BINARY collation is code point order; PostgreSQL
  compares ranges `COLLATE "C"` (equality is exact under any deterministic collation);
  MySQL / MariaDB compare `CAST(CONVERT(x USING utf8mb4) AS BINARY)` on both sides (the
  default collations ignore case and trailing spaces); equality and IN also keep a plain
  `part_key_val = v` so the index is used.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from sqlalchemy import Select, String, all_, and_, any_, bindparam, func, not_, or_, select
from sqlalchemy.dialects import postgresql
from sqlalchemy.ext.compiler import compiles
from sqlalchemy.sql.expression import ColumnElement
from sqlalchemy.sql.visitors import InternalTraversal

from store.db import statement_cache
from store.db.schema import partition_key_val
from store.hms.partition_filter.errors import FilterError
from store.hms.partition_filter.like_pattern import like_test
from store.hms.partition_filter.nodes import Leaf, Literal

# value lists longer than this are one parameter (see _long_list); shorter ones a parameter per
# value, so that a statement's cache key keeps their number (store/db/statement_cache.py keeps no
# statement of more parameters anyway)
LONG_LIST = statement_cache.MAX_CACHED_PARAMETERS
INTEGRAL_TYPES = frozenset({"tinyint", "smallint", "int", "integer", "bigint"})
UNSUPPORTED_TYPE = "Filtering is supported only on partition keys of type string"


def is_integral(hive_type: str) -> bool:
    base = hive_type.strip().lower().split("(", 1)[0].strip()
    return base in INTEGRAL_TYPES


def key_kind(hive_type: str) -> str:
    """How a partition key can be filtered: "integral", "string", "date" or "other" (not at all)."""
    t = hive_type.strip().lower()
    if is_integral(t):
        return "integral"
    return t if t in ("string", "date") else "other"


def leaf_select(leaves: Sequence[Leaf], text: str, tbl_id: int, keys: dict[str, tuple[int, str]],
                dialect: str) -> Select[Any]:
    """`SELECT part_id FROM partition_key_val WHERE tbl_id = :t AND key_idx = :i AND <test> [AND
    <test> ...]`, which the `(tbl_id, key_idx, part_key_val|part_key_num)` indexes serve: the
    partitions whose key passes every test of `leaves` (leaves of one key). `keys`: name -> (index,
    kind); `dialect`: the backend's (SQLAlchemy's name for it)."""
    tests = [leaf_test(leaf, text, keys, dialect) for leaf in leaves]
    kv = partition_key_val
    return select(kv.c.part_id).where(kv.c.tbl_id == tbl_id, kv.c.key_idx == tests[0][0], *(t for _, t in tests))


def check_leaf(leaf: Leaf, text: str, keys: dict[str, tuple[int, str]]) -> tuple[int, str]:
    """(key index, key kind) of a valid leaf; FilterError if it is invalid (no SQL built)."""
    if leaf.key not in keys:
        names = ", ".join(keys) or "none"
        raise FilterError(f"{leaf.key} is not a partition key (partition keys: {names})", text, leaf.pos)
    idx, kind = keys[leaf.key]
    if leaf.op in ("IS NULL", "IS NOT NULL"):
        raise FilterError(f"{leaf.op} is not supported in partition filters", text, leaf.pos)
    if kind == "other":
        raise FilterError(UNSUPPORTED_TYPE, text, leaf.pos)
    if kind == "date":
        for lit in leaf.values:
            _date_text(lit, text)
    elif kind == "integral":
        if leaf.op in ("LIKE", "NOT LIKE"):
            raise FilterError(f"LIKE is not supported on integer partition key {leaf.key}", text, leaf.pos)
        for lit in leaf.values:
            if not isinstance(lit.value, int):
                raise FilterError(
                    f"cannot compare integer partition key {leaf.key} with a {lit.kind} literal", text, lit.pos)
    else:
        for lit in leaf.values:
            if lit.kind == "int":
                raise FilterError(UNSUPPORTED_TYPE, text, lit.pos)
    return idx, kind


def leaf_test(leaf: Leaf, text: str, keys: dict[str, tuple[int, str]],
              dialect: str) -> tuple[int, ColumnElement[Any]]:
    """(key index, test on the key's `partition_key_val` row) of one leaf; FilterError if invalid."""
    idx, kind = check_leaf(leaf, text, keys)
    test: ColumnElement[Any]
    if kind == "date":
        test = and_(partition_key_val.c.part_key_val != "__HIVE_DEFAULT_PARTITION__",
                    _string_test(dialect, leaf.op, [_date_text(lit, text) for lit in leaf.values],
                                 sql_wildcards=True))
    elif kind == "integral":
        test = _numeric_test(dialect, leaf.op, [lit.value for lit in leaf.values])  # type: ignore[misc]
    else:
        test = _string_test(dialect, leaf.op, [lit.text for lit in leaf.values])
    return idx, test


def _date_text(lit: Literal, text: str) -> str:
    """A literal compared with a date key: a date as yyyy-mm-dd, a string as written (Hive 4)."""
    if lit.kind in ("date", "string"):
        return str(lit.value)
    raise FilterError(UNSUPPORTED_TYPE, text, lit.pos)


# --- per-backend SQL -----------------------------------------------------------------------------


class _MyBinary(ColumnElement[Any]):
    """MySQL/MariaDB: the expression as utf8mb4 bytes (exact, code point order, no padding)."""

    inherit_cache = False  # the key comes from _traverse_internals (the wrapped expression)
    _traverse_internals = [("expr", InternalTraversal.dp_clauseelement)]

    def __init__(self, expr: ColumnElement[Any]):
        self.expr = expr
        self.type = expr.type


@compiles(_MyBinary)
def _compile_mybinary(element, compiler, **kw):
    return f"CAST(CONVERT({compiler.process(element.expr, **kw)} USING utf8mb4) AS BINARY)"


class _MyConvertBin(ColumnElement[Any]):
    """MySQL/MariaDB: `CONVERT(x USING utf8mb4) COLLATE utf8mb4_bin`, for a case-sensitive LIKE."""

    inherit_cache = False  # the key comes from _traverse_internals (the wrapped expression)
    _traverse_internals = [("expr", InternalTraversal.dp_clauseelement)]

    def __init__(self, expr: ColumnElement[Any]):
        self.expr = expr
        self.type = expr.type


@compiles(_MyConvertBin)
def _compile_myconvertbin(element, compiler, **kw):
    return f"CONVERT({compiler.process(element.expr, **kw)} USING utf8mb4) COLLATE utf8mb4_bin"


def _like_test(dialect: str, op: str, pattern: str, sql_wildcards: bool) -> ColumnElement[Any]:
    col: Any = partition_key_val.c.part_key_val
    if dialect in ("mysql", "mariadb"):
        col = _MyConvertBin(col)
    test = like_test(dialect, col, pattern, sql_wildcards)
    return not_(test) if op == "NOT LIKE" else test


def _string_test(dialect: str, op: str, values: Sequence[str], sql_wildcards: bool = False) -> ColumnElement[Any]:
    """`sql_wildcards`: LIKE patterns also take `%` and `_` (date keys)."""
    col = partition_key_val.c.part_key_val
    if op in ("LIKE", "NOT LIKE"):
        (pattern,) = values
        return _like_test(dialect, op, pattern, sql_wildcards)

    if op in ("IN", "NOT IN") and len(values) > LONG_LIST:
        return _long_list(dialect, op, col, values)
    binds = [bindparam(None, v, type_=col.type) for v in values]
    ordered: ColumnElement[Any]
    cmp_binds: list[ColumnElement[Any]]
    if dialect in ("mysql", "mariadb"):
        ordered = _MyBinary(col)
        cmp_binds = [_MyBinary(b) for b in binds]
        index_col = col  # the indexed column, case- and pad-insensitive: a superset test
    elif dialect == "postgresql":
        ordered = col.collate("C")
        cmp_binds = list(binds)
        index_col = None
    else:
        ordered = col
        cmp_binds = list(binds)
        index_col = None
    exact = col if dialect != "mysql" and dialect != "mariadb" else ordered

    if op == "=":
        test = exact == cmp_binds[0]
        return and_(index_col == binds[0], test) if index_col is not None else test
    if op == "!=":
        return exact != cmp_binds[0]
    if op == "IN":
        test = exact.in_(cmp_binds)
        return and_(index_col.in_(binds), test) if index_col is not None else test
    if op == "NOT IN":
        return exact.not_in(cmp_binds)
    return _ordered_test(op, ordered, cmp_binds)


def _long_list(dialect: str, op: str, col: Any, values: Sequence[Any]) -> ColumnElement[Any]:
    """IN / NOT IN of many values as one parameter, not a bound parameter per value (a 50,000-term
    filter built, compiled and collected 100,000 of them, and SQLite kept the statement prepared for
    each length of list, some 20 MB each): on SQLite a JSON array read by `json_each`, on
    PostgreSQL an array (`= ANY`, `<> ALL`), on MySQL / MariaDB an expanding parameter (the driver
    writes the values into the statement's text; nothing is prepared). MySQL / MariaDB compare a
    string key's utf8mb4 bytes with the values, as `_MyBinary` does (a binary operand makes the
    comparison binary; the values come in the connection's utf8mb4), and keep the plain indexed
    superset test."""
    values = list(values)
    if dialect == "sqlite":
        rows = select(func.json_each(bindparam(None, json.dumps(values), type_=String)).table_valued("value").c.value)
        return col.in_(rows) if op == "IN" else col.not_in(rows)
    if dialect == "postgresql":
        array = bindparam(None, values, type_=postgresql.ARRAY(col.type))
        return col == any_(array) if op == "IN" else col != all_(array)
    listed = bindparam(None, values, type_=col.type, expanding=True)
    if col is partition_key_val.c.part_key_val:
        exact: ColumnElement[Any] = _MyBinary(col)
        if op == "NOT IN":
            return exact.not_in(listed)
        return and_(col.in_(listed), exact.in_(listed))
    return col.in_(listed) if op == "IN" else col.not_in(listed)


def _ordered_test(op: str, col: ColumnElement[Any], b: Sequence[ColumnElement[Any]]) -> ColumnElement[Any]:
    """The comparisons of an order: < <= > >= BETWEEN, NOT BETWEEN."""
    if op == "<":
        return col < b[0]
    if op == "<=":
        return col <= b[0]
    if op == ">":
        return col > b[0]
    if op == ">=":
        return col >= b[0]
    if op == "BETWEEN":
        return and_(col >= b[0], col <= b[1])
    if op == "NOT BETWEEN":
        return or_(col < b[0], col > b[1])
    raise AssertionError(op)


def _numeric_test(dialect: str, op: str, values: Sequence[int]) -> ColumnElement[Any]:
    col = partition_key_val.c.part_key_num
    if op in ("IN", "NOT IN") and len(values) > LONG_LIST:
        return _long_list(dialect, op, col, values)
    b = [bindparam(None, v, type_=col.type) for v in values]
    if op == "=":
        return col == b[0]
    if op == "!=":
        return col != b[0]
    if op == "IN":
        return col.in_(b)
    if op == "NOT IN":
        return col.not_in(b)
    return _ordered_test(op, col, b)
