"""get_table_names_by_filter: Hive's table filters, compiled to one SQL WHERE clause over `tbl` (and
`tbl_params`); nothing is filtered in Python.

The filter text is parsed by the partition filter's parser (store/hms/partition_filter); its keys
name what a leaf tests, as Hive's constants say:

* ``hive_filter_field_params__<key>``: the table parameter <key> (case-sensitive); operators
  = != <> LIKE (IN, BETWEEN and NOT expand into those). As in Hive (whose store joins the table's
  parameters once per key named), a table that lacks any parameter the filter names matches
  nothing, whatever the rest: `params__a = "1" or owner = "x"` needs parameter a.
* ``hive_filter_field_owner__``, ``hive_filter_field_tableName__``, ``hive_filter_field_tableType__``:
  the owner, name and type; = != <> < <= > >= LIKE. No owner matches nothing.
* ``hive_filter_field_last_access__``: the last access time (seconds) against an integer (or a
  string holding one); = != <> < <= > >=, no LIKE.

LIKE is what Hive's store makes of the pattern (see partition_filter/like_pattern: `.*` any run,
`.` any character, everything else literal, the whole value must match; run as SQL LIKE or GLOB,
never as a regular expression); a leading
``(?i)`` makes it case-insensitive. Comparisons are exact and in code point order on every backend.
Errors are MetaError with Hive's texts.
"""

from __future__ import annotations

from typing import Any

from sqlalchemy import Connection, and_, bindparam, func, or_, select
from sqlalchemy.ext.compiler import compiles
from sqlalchemy.sql.expression import ColumnElement

from store.db import schema as S
from store.db.database import Store
from store.errors import MetaError
from store.hms.catalog.database_service import database_is
from store.hms.partition_filter import (
    And,
    FilterError,
    Leaf,
    Literal,
    Node,
    Or,
    like_test,
    parse_filter,
    push_not,
    tokenize,
)

PARAMS = "hive_filter_field_params__"
OWNER = "hive_filter_field_owner__"
LAST_ACCESS = "hive_filter_field_last_access__"
TABLE_NAME = "hive_filter_field_tableName__"
TABLE_TYPE = "hive_filter_field_tableType__"

_PARAM_OPS = ("=", "!=", "LIKE")
_ORDER_OPS = ("=", "!=", "<", "<=", ">", ">=")
_INVALID_KEY = "Invalid key name in filter.  Use constants from org.apache.hadoop.hive.metastore.api"


class TableNamesByFilter:
    def __init__(self, store: Store):
        self.store = store

    def table_names(self, db_name: str, filter_text: str, max_tables: int = -1) -> list[str]:
        """Names of the database's tables that pass the filter, in creation order, at most
        `max_tables` (all when negative); none when the database does not exist (as Hive)."""
        where = compile_table_filter(filter_text, self.store.backend)
        with self.store.read() as conn:
            return self._names(conn, db_name, where, max_tables)

    @staticmethod
    def _names(conn: Connection, db_name: str, where: ColumnElement[bool] | None, max_tables: int) -> list[str]:
        q = (select(S.tbl.c.name).select_from(S.tbl.join(S.db, S.tbl.c.db_id == S.db.c.db_id))
             .where(database_is(db_name)).order_by(S.tbl.c.tbl_id))
        if where is not None:
            q = q.where(where)
        if max_tables >= 0:
            q = q.limit(max_tables)
        return list(conn.execute(q).scalars())


def compile_table_filter(text: str, backend: str) -> ColumnElement[bool] | None:
    """The filter as a WHERE clause over `tbl`; None for an empty filter."""
    if not text.strip():
        return None
    try:
        tree = push_not(parse_filter(text))
        keys = {t.pos: t.value for t in tokenize(text) if t.kind == "ident"}  # as written: keys are case-sensitive
    except FilterError as exc:
        raise MetaError(str(exc)) from exc
    compiler = _Compiler(backend, keys)
    where = compiler.node(tree)
    present = _params_present(sorted(compiler.params))
    return and_(where, present) if present is not None else where


# Up to this many parameter keys are required one IN-subquery each (which planners turn into
# joins); more as one count per table (planned in linear time).
_JOINED_PRESENCE = 4


def _params_present(names: list[str]) -> ColumnElement[bool] | None:
    """The table has every parameter of `names`."""
    tp = S.tbl_params
    if not names:
        return None
    if len(names) <= _JOINED_PRESENCE:
        return and_(*[S.tbl.c.tbl_id.in_(select(tp.c.tbl_id).where(tp.c.param_key == k)) for k in names])
    count = (select(func.count()).select_from(tp)
             .where(tp.c.tbl_id == S.tbl.c.tbl_id, tp.c.param_key.in_(names)).scalar_subquery())
    return count == len(names)


class _Compiler:
    def __init__(self, backend: str, keys: dict[int, str]):
        self.backend = backend
        self.keys = keys
        self.params: set[str] = set()  # the parameter keys the filter names

    def node(self, node: Node) -> ColumnElement[bool]:
        if isinstance(node, And):
            return and_(*[self.node(i) for i in self.merged(node, ("!=", "NOT IN"), "NOT IN")])
        if isinstance(node, Or):
            return or_(*[self.node(i) for i in self.merged(node, ("=", "IN"), "IN")])
        assert isinstance(node, Leaf), node  # push_not left no Not
        return self.leaf(node)

    def merged(self, node: And | Or, ops: tuple[str, ...], list_op: str) -> list[Node]:
        """The items of an And (Or), nested ones of the same kind flattened, with the `ops` leaves
        of each parameter, owner, name or type key as one `list_op` leaf: one subquery, so that
        the SQL and its plan grow linearly with the filter."""
        items: list[Node] = []
        for item in node.items:
            items.extend(item.items if isinstance(item, (And, Or)) and type(item) is type(node) else (item,))
        out: list[Node | str] = []  # a str: the place of that key's list leaf
        groups: dict[str, list[Leaf]] = {}
        for item in items:
            key = self.keys.get(item.pos, item.key) if isinstance(item, Leaf) else ""
            if not (isinstance(item, Leaf) and item.op in ops and _listable(key)):
                out.append(item)
            elif key in groups:
                groups[key].append(item)
            else:
                groups[key] = [item]
                out.append(key)
        return [_as_list(groups[i], list_op) if isinstance(i, str) else i for i in out]

    def leaf(self, leaf: Leaf) -> ColumnElement[bool]:
        """IN, BETWEEN and their negations as Hive's parser builds them: ORs and ANDs of comparisons
        (IN lists of parameters, owners, names and types as one list test)."""
        v = leaf.values
        key = self.keys.get(leaf.pos, leaf.key)
        if leaf.op in ("IN", "NOT IN") and _listable(key):
            return self.list_test(key, leaf.op, [lit.text for lit in v])
        if leaf.op in ("IN", "NOT IN"):
            tests = [self.test(leaf, "=" if leaf.op == "IN" else "!=", lit) for lit in v]
            return or_(*tests) if leaf.op == "IN" else and_(*tests)
        if leaf.op == "BETWEEN":
            return and_(self.test(leaf, ">=", v[0]), self.test(leaf, "<=", v[1]))
        if leaf.op == "NOT BETWEEN":
            return or_(self.test(leaf, "<", v[0]), self.test(leaf, ">", v[1]))
        return self.test(leaf, leaf.op, v[0])

    def test(self, leaf: Leaf, op: str, lit: Literal) -> ColumnElement[bool]:
        key = self.keys.get(leaf.pos, leaf.key)
        if key.startswith(PARAMS):
            if op not in _PARAM_OPS:
                raise MetaError("Only [LIKE, =, <>, !=] are supported operators for HIVE_FILTER_FIELD_PARAMS")
            tp = S.tbl_params
            self.params.add(key[len(PARAMS):])
            return S.tbl.c.tbl_id.in_(select(tp.c.tbl_id).where(
                tp.c.param_key == key[len(PARAMS):], self.string_test(tp.c.param_value, op, lit.text)))
        if key == LAST_ACCESS:
            if op not in _ORDER_OPS:
                raise MetaError("Like is not supported for HIVE_FILTER_FIELD_LAST_ACCESS")
            return _compare(S.tbl.c.last_access_time, op, bindparam(None, _integer(lit)))
        column = _COLUMNS.get(key)
        if column is None:
            raise MetaError(_INVALID_KEY)
        if op not in _ORDER_OPS + ("LIKE",):
            raise MetaError(f"{op} is not supported in table filters")
        return self.string_test(column, op, lit.text)

    def list_test(self, key: str, op: str, values: list[str]) -> ColumnElement[bool]:
        """The value of a parameter, the owner, name or type is (not) one of `values`."""
        if key.startswith(PARAMS):
            tp = S.tbl_params
            self.params.add(key[len(PARAMS):])
            return S.tbl.c.tbl_id.in_(select(tp.c.tbl_id).where(
                tp.c.param_key == key[len(PARAMS):], self.in_list(tp.c.param_value, op, values)))
        return self.in_list(_COLUMNS[key], op, values)

    def in_list(self, col: Any, op: str, values: list[str]) -> ColumnElement[bool]:
        binds: list[Any] = [bindparam(None, v) for v in values]
        if self.backend in ("mysql", "mariadb"):
            col, binds = _Utf8(col, binary=True), [_Utf8(b, binary=True) for b in binds]
        return col.in_(binds) if op == "IN" else col.not_in(binds)

    def string_test(self, col: Any, op: str, value: str) -> ColumnElement[bool]:
        """An exact, code point ordered comparison, or a LIKE pattern, on a text column."""
        if op == "LIKE":
            return self.like(col, value)
        if op == "NOT LIKE":
            raise MetaError("NOT LIKE is not supported in table filters")
        bound: Any = bindparam(None, value)
        if self.backend in ("mysql", "mariadb"):
            return _compare(_Utf8(col, binary=True), op, _Utf8(bound, binary=True))
        if self.backend == "postgresql" and op not in ("=", "!="):
            return _compare(col.collate("C"), op, bound)
        return _compare(col, op, bound)

    def like(self, col: Any, pattern: str) -> ColumnElement[bool]:
        if pattern.startswith("(?i)"):
            col, pattern = func.lower(col), pattern[4:].lower()
        if self.backend in ("mysql", "mariadb"):
            col = _Utf8(col, binary=False)
        return like_test(self.backend, col, pattern)


_COLUMNS = {OWNER: S.tbl.c.owner, TABLE_NAME: S.tbl.c.name, TABLE_TYPE: S.tbl.c.tbl_type}


def _listable(key: str) -> bool:
    """Keys whose =, != and IN leaves compile to one list test (all but the last access time)."""
    return key.startswith(PARAMS) or key in _COLUMNS


def _as_list(leaves: list[Leaf], op: str) -> Leaf:
    first = leaves[0]
    if len(leaves) == 1:
        return first
    return Leaf(first.key, op, tuple(v for leaf in leaves for v in leaf.values), first.pos)


def _integer(lit: Literal) -> int:
    if isinstance(lit.value, int):
        return lit.value
    try:
        return int(str(lit.value).strip())
    except ValueError:
        raise MetaError(f"HIVE_FILTER_FIELD_LAST_ACCESS compares with integers, not {lit.text!r}") from None


def _compare(left: Any, op: str, right: Any) -> ColumnElement[bool]:
    if op == "=":
        return left == right
    if op == "!=":
        return left != right
    if op == "<":
        return left < right
    if op == "<=":
        return left <= right
    if op == ">":
        return left > right
    if op == ">=":
        return left >= right
    raise AssertionError(op)


class _Utf8(ColumnElement[Any]):
    """MySQL/MariaDB: the expression as utf8mb4, compared exactly: as bytes (`binary`, code point
    order, no padding) or under utf8mb4_bin (for REGEXP)."""

    inherit_cache = False

    def __init__(self, expr: Any, binary: bool):
        self.expr = expr
        self.binary = binary
        self.type = expr.type


@compiles(_Utf8)
def _compile_utf8(element, compiler, **kw):
    inner = f"CONVERT({compiler.process(element.expr, **kw)} USING utf8mb4)"
    return f"CAST({inner} AS BINARY)" if element.binary else f"{inner} COLLATE utf8mb4_bin"
