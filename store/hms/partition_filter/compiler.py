"""A parsed partition filter as one WHERE clause over `partitions`.

Each leaf is `partitions.part_id IN (SELECT part_id FROM partition_key_val WHERE tbl_id = :t
AND key_idx = :i AND <test>)` (see leaf_sql); And / Or become AND / OR of those. Nothing is
evaluated in Python. Optionally the clause also carries a driver (see `compile_filter`).

The SQL grows linearly with the filter, and so does the planner's work: the leaves of one key
under one AND become one subquery whose tests are ANDed (a partition has one row per key), their
`!=` / NOT IN values one NOT IN list, and the `=` / IN leaves of one key under one OR one IN list.
(N ANDed IN-subqueries are N semi-joins, which PostgreSQL plans in time that grows with a power
of N: 16 s for 200 `p != 'v'` terms.)
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import lru_cache
from typing import Any

from sqlalchemy import Select, and_, exists, or_, union
from sqlalchemy.sql.expression import ColumnElement

from store.db.schema import partition_key_val, partitions
from store.hms.partition_filter.leaf_sql import check_leaf, key_kind, leaf_select
from store.hms.partition_filter.nodes import And, Leaf, Node, Or, push_not
from store.hms.partition_filter.parser import parse_filter

# How many rows a leaf is likely to select, as a rank (lower: fewer): the driver of an AND starts
# from its lowest-ranked side.
_LEAF_RANK = {"=": 1, "IN": 2, "BETWEEN": 4, "<": 5, "<=": 5, ">": 5, ">=": 5, "LIKE": 6,
              "NOT BETWEEN": 8, "NOT LIKE": 9, "!=": 9, "NOT IN": 9}


# filters of at most this many characters are remembered (the last KEPT_FILTERS of them, with
# their table's keys): planners send the same few filters again and again, and parsing and building
# one took 0.2-0.6 ms of a 1-2 ms call
KEPT_FILTER_CHARS = 2_000
KEPT_FILTERS = 256


def compile_filter(text: str, tbl_id: int, partition_keys: Sequence[tuple[str, str]], dialect: str,
                   driven: bool | str = False) -> ColumnElement[Any]:
    """`_compile`'s clause, remembered for short filters (clauses are not changed by their use)."""
    keys = tuple((name, hive_type) for name, hive_type in partition_keys)
    if len(text) > KEPT_FILTER_CHARS:
        return _compile(text, tbl_id, keys, dialect, driven)
    return _kept(text, tbl_id, keys, dialect, driven)


def _compile(text: str, tbl_id: int, partition_keys: Sequence[tuple[str, str]], dialect: str,
             driven: bool | str = False) -> ColumnElement[Any]:
    """A WHERE clause over `store.db.schema.partitions` selecting the partitions of table `tbl_id`
    that match the Hive filter `text`; use with `partitions.c.tbl_id == tbl_id`.
    `partition_keys`: the table's partition columns in order, as (name, hive type). `dialect`: the
    backend's SQLAlchemy name; the clause is written for it, so statements holding it are cached
    (compiled once per shape of filter, with the values as parameters).

    `driven`: also require `part_id IN (driver)`, where the driver is a superset of the answer
    built from the key-value index alone (a leaf's rows; an OR's union; an AND's likely smallest
    side), so that the database starts from the index and the cost follows the answer, not the
    table (SQLite and PostgreSQL otherwise walk every partition of the table for an OR).
    `driven="or"`: only when the filter has an OR (PostgreSQL plans ANDs of IN-subqueries as joins
    from the index already, choosing the side by its statistics)."""
    tree = push_not(parse_filter(text))
    keys = {name.lower(): (i, key_kind(t)) for i, (name, t) in enumerate(partition_keys)}
    for leaf in _leaves(tree):  # the first invalid leaf, as written, is the error
        check_leaf(leaf, text, keys)
    tree = _merged(tree)
    leaves = _LeafSelects(text, tbl_id, keys, dialect)
    if not driven or (driven == "or" and not _has_or(tree)):
        return leaves.where(tree)
    selects = leaves.driver(tree)
    drive = partitions.c.part_id.in_(selects[0] if len(selects) == 1 else union(*selects))
    # without an AND the driver is the answer itself
    return and_(drive, leaves.where(tree, per_row=True)) if _has_and(tree) else drive


_kept = lru_cache(maxsize=KEPT_FILTERS)(_compile)


class _LeafSelects:
    """The leaves of one filter as SQL, each built once: a leaf that appears in both the driver and
    the clause is the same statement object (and the same bound parameters) in both."""

    def __init__(self, text: str, tbl_id: int, keys: dict[str, tuple[int, str]], dialect: str):
        self.text = text
        self.tbl_id = tbl_id
        self.keys = keys
        self.dialect = dialect
        self._selects: dict[int, Select[Any]] = {}

    def leaf(self, node: Node) -> Select[Any]:
        """The select of a Leaf or of an And of leaves of one key."""
        if id(node) not in self._selects:
            leaves = [node] if isinstance(node, Leaf) else node.items  # type: ignore[union-attr]
            self._selects[id(node)] = leaf_select(leaves, self.text, self.tbl_id, self.keys,  # type: ignore[arg-type]
                                                    self.dialect)
        return self._selects[id(node)]

    def where(self, node: Node, per_row: bool = False) -> ColumnElement[Any]:
        """The clause of a NOT-free tree. `per_row`: leaves as correlated EXISTS on the key row of
        each partition (one primary-key lookup per driven row), instead of IN over every partition
        matching the leaf."""
        if isinstance(node, Leaf) or _one_key(node):
            if not per_row:
                return partitions.c.part_id.in_(self.leaf(node))
            sub = self.leaf(node)
            return exists(sub.where(partition_key_val.c.part_id == partitions.c.part_id))
        assert isinstance(node, (And, Or)), node  # push_not left no Not
        parts = [self.where(i, per_row) for i in node.items]
        return and_(*parts) if isinstance(node, And) else or_(*parts)

    def driver(self, node: Node) -> list[Select[Any]]:
        """Selects whose union is a superset of the node's partitions."""
        if isinstance(node, Leaf) or _one_key(node):
            return [self.leaf(node)]
        assert isinstance(node, (And, Or)), node
        if isinstance(node, And):
            return self.driver(min(node.items, key=_rank))
        return [s for i in node.items for s in self.driver(i)]


def _rank(node: Node) -> int:
    if isinstance(node, Leaf):
        return _LEAF_RANK.get(node.op, 9)
    assert isinstance(node, (And, Or)), node
    ranks = [_rank(i) for i in node.items]
    return min(ranks) if isinstance(node, And) else sum(ranks)


def _has_or(node: Node) -> bool:
    return isinstance(node, Or) or (isinstance(node, And) and any(_has_or(i) for i in node.items))


def _has_and(node: Node) -> bool:
    return isinstance(node, And) or (isinstance(node, Or) and any(_has_and(i) for i in node.items))


def _leaves(node: Node) -> list[Leaf]:
    if isinstance(node, Leaf):
        return [node]
    assert isinstance(node, (And, Or)), node
    return [leaf for i in node.items for leaf in _leaves(i)]


def _one_key(node: Node) -> bool:
    """An And of leaves of one key (compiled as one select)."""
    return isinstance(node, And) and all(isinstance(i, Leaf) and i.key == node.items[0].key  # type: ignore[union-attr]
                                         for i in node.items)


def _merged(node: Node) -> Node:
    """The same filter with nested Ands (Ors) flattened, the leaves of one key under an And grouped
    into an And of their own (their != / NOT IN values one NOT IN leaf) and the = / IN leaves of
    one key under an Or one IN leaf."""
    if isinstance(node, Leaf):
        return node
    assert isinstance(node, (And, Or)), node
    kind = type(node)
    items: list[Node] = []
    for item in node.items:
        item = _merged(item)
        items.extend(item.items if isinstance(item, kind) else (item,))
    merged = _grouped_and(items) if kind is And else _grouped_or(items)
    return merged[0] if len(merged) == 1 else kind(tuple(merged))


def _by_key(items: list[Node], wanted: tuple[str, ...]) -> tuple[list[Node | str], dict[str, list[Leaf]]]:
    """The items with each key's leaves whose op is in `wanted` replaced by the key (at its first
    place), and those leaves per key."""
    order: list[Node | str] = []
    groups: dict[str, list[Leaf]] = {}
    for item in items:
        if isinstance(item, Leaf) and item.op in wanted:
            if item.key not in groups:
                groups[item.key] = []
                order.append(item.key)
            groups[item.key].append(item)
        else:
            order.append(item)
    return order, groups


def _as_list(leaves: list[Leaf], op: str) -> Leaf:
    first = leaves[0]
    if len(leaves) == 1:
        return first
    return Leaf(first.key, op, tuple(v for leaf in leaves for v in leaf.values), first.pos)


def _grouped_or(items: list[Node]) -> list[Node]:
    order, groups = _by_key(items, ("=", "IN"))
    return [_as_list(groups[i], "IN") if isinstance(i, str) else i for i in order]


def _grouped_and(items: list[Node]) -> list[Node]:
    order, groups = _by_key(items, ("!=", "NOT IN"))
    flat = [_as_list(groups[i], "NOT IN") if isinstance(i, str) else i for i in order]
    out: list[Node] = []
    per_key: dict[str, list[Leaf]] = {}
    for item in flat:
        if isinstance(item, Leaf):
            if item.key not in per_key:
                per_key[item.key] = []
                out.append(item)  # the key's place; replaced below
            per_key[item.key].append(item)
        else:
            out.append(item)
    return [And(tuple(per_key[i.key])) if isinstance(i, Leaf) and len(per_key[i.key]) > 1 else i for i in out]
