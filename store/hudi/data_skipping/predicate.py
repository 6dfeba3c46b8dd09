"""A predicate over a table's columns (the Hive filter grammar plus IS [NOT] NULL) as SQL over column
statistics (RFC-27): for each file (or partition), whether its statistics allow a matching row.

Negations are pushed to the leaves first (De Morgan, operators inverted: in SQL's three-valued logic
NOT(x < 5) keeps the same rows as x >= 5, nulls matching neither). Each leaf becomes "no statistics
row of this column says no value can match" (`NOT EXISTS (... prune condition)`): a file without
statistics for the column, or with unknown bounds, is never pruned by it. Bounds are compared as
order-preserving bytes (store/hudi/column_stats/codec.py).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from sqlalchemy import ColumnElement, FromClause, and_, exists, false, func, not_, or_, true

from store.hms.common import ANY_RUN
from store.hms.partition_filter import And, FilterError, Leaf, Node, Or, like_elements, parse_filter, push_not
from store.hudi.column_stats import TEXT_TYPES, base_type, encode_key, is_indexable, prefix_successor

# (stats table alias, column name) -> an EXISTS-able select restricted to the outer row
StatsRows = Callable[[str], Any]


def parse_predicate(text: str) -> Node:
    return push_not(parse_filter(text))


def without_columns(node: Node, drop: set[str]) -> Node | None:
    """The predicate with the leaves on `drop` columns taken as TRUE (None: TRUE as a whole)."""
    if isinstance(node, Leaf):
        return None if node.key in drop else node
    if isinstance(node, (And, Or)):
        items = [without_columns(i, drop) for i in node.items]
        if isinstance(node, Or):
            return None if any(i is None for i in items) else Or(tuple(i for i in items if i is not None))
        kept = tuple(i for i in items if i is not None)
        return None if not kept else kept[0] if len(kept) == 1 else And(kept)
    return node


def keep_condition(node: Node, text: str, types: dict[str, str], t: FromClause, rows: StatsRows,
                   row_of: Callable[[str], FromClause | None] | None = None) -> ColumnElement[bool]:
    """SQL true for a file (or partition) whose statistics allow a row matching `node`; `t` is the
    statistics table, `rows(column)` its rows of the outer file and that column (a Select).
    `row_of(column)`: where the query already holds the outer file's statistics row of that column
    (None: not held), a leaf on it is checked on that row instead of through `rows`."""
    if isinstance(node, And):
        return and_(*(keep_condition(i, text, types, t, rows, row_of) for i in node.items))
    if isinstance(node, Or):
        return or_(*(keep_condition(i, text, types, t, rows, row_of) for i in node.items))
    assert isinstance(node, Leaf)
    if node.key not in types:
        raise FilterError(f"{node.key} is not a column of the table", text, node.pos)
    if not is_indexable(types[node.key]):
        return true()
    held = row_of(node.key) if row_of is not None else None
    prune = leaf_prune(node, text, types[node.key], held if held is not None else t)
    if prune is None:
        return true()
    if held is not None:  # as NOT EXISTS over that one row: an unknown (NULL) prune keeps the file
        return not_(func.coalesce(prune, false()))
    return not_(exists(rows(node.key).where(prune)))


def check_literals(node: Node, text: str, types: dict[str, str]) -> None:
    """FilterError for a literal its column's type cannot take, as keep_condition would raise it,
    without building SQL."""
    if isinstance(node, (And, Or)):
        for item in node.items:
            check_literals(item, text, types)
        return
    assert isinstance(node, Leaf)
    hive_type = types.get(node.key)
    if hive_type is None or not is_indexable(hive_type) or node.op in _NO_KEYS:
        return
    for i in range(len(node.values)):
        _key(node, text, hive_type, i)


_NO_KEYS = ("IS NULL", "IS NOT NULL", "LIKE", "NOT LIKE")  # leaves whose literals leaf_prune never encodes


def leaf_prune(leaf: Leaf, text: str, hive_type: str, t: FromClause) -> ColumnElement[bool] | None:
    """SQL true when a statistics row shows that no value of the column satisfies the leaf; None when
    statistics cannot tell."""
    lo, hi, nulls, values = t.c.min_key, t.c.max_key, t.c.null_count, t.c.value_count
    all_null = nulls == values  # NULL (never prunes) when either count is unknown
    op = leaf.op
    if op == "IS NULL":
        return nulls == 0
    if op == "IS NOT NULL":
        return all_null
    if op in ("LIKE", "NOT LIKE"):
        return _like_prune(leaf, text, hive_type, t)
    keys = [_key(leaf, text, hive_type, i) for i in range(len(leaf.values))]
    if any(k is None for k in keys):
        return None
    tests: dict[str, Callable[[bytes], ColumnElement[bool]]] = {
        "=": lambda k: or_(lo > k, hi < k), "!=": lambda k: and_(lo == k, hi == k),
        "<": lambda k: lo >= k, "<=": lambda k: lo > k, ">": lambda k: hi <= k, ">=": lambda k: hi < k}
    if op in tests:
        return or_(all_null, tests[op](keys[0]))  # type: ignore[arg-type]
    if op == "IN":
        return or_(all_null, and_(*(tests["="](k) for k in keys)))  # type: ignore[arg-type]
    if op == "NOT IN":
        return or_(all_null, *(tests["!="](k) for k in keys))  # type: ignore[arg-type]
    if op == "BETWEEN":
        empty = true() if keys[0] > keys[1] else false()  # type: ignore[operator]
        return or_(all_null, lo > keys[1], hi < keys[0], empty)
    if op == "NOT BETWEEN":  # x < a OR x > b: pruned when every value lies in [a, b]
        return or_(all_null, and_(lo >= keys[0], hi <= keys[1]))
    return None


def _key(leaf: Leaf, text: str, hive_type: str, i: int) -> bytes | None:
    lit = leaf.values[i]
    try:
        return encode_key(hive_type, lit.value)
    except ValueError as exc:
        raise FilterError(f"cannot compare {hive_type} column {leaf.key} with {lit.text!r}: {exc}",
                          text, lit.pos) from exc


def like_prefix(leaf: Leaf, hive_type: str) -> tuple[bytes, bool] | None:
    """(prefix, exact) of a LIKE pattern on a string column that is a literal prefix followed by
    `.*` (exact: the whole pattern is a literal); None for any other pattern."""
    if base_type(hive_type) not in TEXT_TYPES:
        return None
    elements = like_elements(str(leaf.values[0].value))
    literal = elements[:-1] if elements and elements[-1] is ANY_RUN else elements
    if not all(isinstance(e, str) for e in literal):
        return None
    return "".join(str(e) for e in literal).encode(), len(literal) == len(elements)


def _like_prune(leaf: Leaf, text: str, hive_type: str, t: FromClause) -> ColumnElement[bool] | None:
    """A pattern that is a literal prefix followed by `.*` (or a literal): a range of strings."""
    found = like_prefix(leaf, hive_type)
    if found is None:
        return None
    prefix, exact = found
    lo, hi, all_null = t.c.min_key, t.c.max_key, t.c.null_count == t.c.value_count
    succ = prefix if exact else prefix_successor(prefix)
    if leaf.op == "LIKE":  # values in [prefix, succ) (or = prefix)
        if exact:
            return or_(all_null, lo > prefix, hi < prefix)
        return or_(all_null, hi < prefix, false() if succ is None else lo >= succ)
    if exact:
        return or_(all_null, and_(lo == prefix, hi == prefix))
    return or_(all_null, and_(lo >= prefix, true() if succ is None else hi < succ))
