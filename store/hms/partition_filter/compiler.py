"""A parsed partition filter as one WHERE clause over `partitions`.

Each leaf is `partitions.part_id IN (SELECT part_id FROM partition_key_val WHERE tbl_id = :t
AND key_idx = :i AND <test>)` (see leaf_sql); And / Or become AND / OR of those. Nothing is
evaluated in Python. Optionally the clause also carries a driver (see `compile_filter`).
"""

from __future__ import annotations

from typing import Any

from sqlalchemy import Select, and_, exists, or_, union
from sqlalchemy.sql.expression import ColumnElement

from store.db.schema import partition_key_val, partitions
from store.hms.partition_filter.leaf_sql import key_kind, leaf_select
from store.hms.partition_filter.nodes import And, Leaf, Node, Or, push_not
from store.hms.partition_filter.parser import parse_filter

# How many rows a leaf is likely to select, as a rank (lower: fewer): the driver of an AND starts
# from its lowest-ranked side.
_LEAF_RANK = {"=": 1, "IN": 2, "BETWEEN": 4, "<": 5, "<=": 5, ">": 5, ">=": 5, "LIKE": 6,
              "NOT BETWEEN": 8, "NOT LIKE": 9, "!=": 9, "NOT IN": 9}


def compile_filter(text: str, tbl_id: int, partition_keys: list[tuple[str, str]],
                   driven: bool | str = False) -> ColumnElement[Any]:
    """A WHERE clause over `store.db.schema.partitions` selecting the partitions of table `tbl_id`
    that match the Hive filter `text`; use with `partitions.c.tbl_id == tbl_id`.
    `partition_keys`: the table's partition columns in order, as (name, hive type).

    `driven`: also require `part_id IN (driver)`, where the driver is a superset of the answer
    built from the key-value index alone (a leaf's rows; an OR's union; an AND's likely smallest
    side), so that the database starts from the index and the cost follows the answer, not the
    table (SQLite and PostgreSQL otherwise walk every partition of the table for an OR).
    `driven="or"`: only when the filter has an OR (PostgreSQL plans ANDs of IN-subqueries as joins
    from the index already, choosing the side by its statistics)."""
    tree = push_not(parse_filter(text))
    keys = {name.lower(): (i, key_kind(t)) for i, (name, t) in enumerate(partition_keys)}
    leaves = _LeafSelects(text, tbl_id, keys)
    if not driven or (driven == "or" and not _has_or(tree)):
        return leaves.where(tree)
    selects = leaves.driver(tree)
    drive = partitions.c.part_id.in_(selects[0] if len(selects) == 1 else union(*selects))
    # without an AND the driver is the answer itself
    return and_(drive, leaves.where(tree, per_row=True)) if _has_and(tree) else drive


class _LeafSelects:
    """The leaves of one filter as SQL, each built once: a leaf that appears in both the driver and
    the clause is the same statement object (and the same bound parameters) in both."""

    def __init__(self, text: str, tbl_id: int, keys: dict[str, tuple[int, str]]):
        self.text = text
        self.tbl_id = tbl_id
        self.keys = keys
        self._selects: dict[int, Select[Any]] = {}

    def leaf(self, node: Leaf) -> Select[Any]:
        if id(node) not in self._selects:
            self._selects[id(node)] = leaf_select(node, self.text, self.tbl_id, self.keys)
        return self._selects[id(node)]

    def where(self, node: Node, per_row: bool = False) -> ColumnElement[Any]:
        """The clause of a NOT-free tree. `per_row`: leaves as correlated EXISTS on the key row of
        each partition (one primary-key lookup per driven row), instead of IN over every partition
        matching the leaf."""
        if isinstance(node, Leaf):
            if not per_row:
                return partitions.c.part_id.in_(self.leaf(node))
            sub = self.leaf(node)
            return exists(sub.where(partition_key_val.c.part_id == partitions.c.part_id))
        assert isinstance(node, (And, Or)), node  # push_not left no Not
        parts = [self.where(i, per_row) for i in node.items]
        return and_(*parts) if isinstance(node, And) else or_(*parts)

    def driver(self, node: Node) -> list[Select[Any]]:
        """Selects whose union is a superset of the node's partitions."""
        if isinstance(node, Leaf):
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
