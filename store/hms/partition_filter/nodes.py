"""The parsed filter: a tree of And / Or / Not over Leaf tests of one partition key each."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Literal:
    kind: str  # "string" | "int" | "date" | "timestamp"
    value: str | int  # str for string/date/timestamp, int for int
    text: str  # the value as a string: the string itself, the integer as written, the date text
    pos: int = -1

    def __repr__(self) -> str:
        return f"{self.kind}:{self.text!r}"


@dataclass(frozen=True, slots=True)
class Leaf:
    """One test of one partition key. `op` is one of
    = != < <= > >= LIKE, NOT LIKE, IN, NOT IN, BETWEEN, NOT BETWEEN, IS NULL, IS NOT NULL."""

    key: str  # lower-cased
    op: str
    values: tuple[Literal, ...]
    pos: int = -1  # position of the identifier


@dataclass(frozen=True, slots=True)
class And:
    items: tuple[Node, ...]


@dataclass(frozen=True, slots=True)
class Or:
    items: tuple[Node, ...]


@dataclass(frozen=True, slots=True)
class Not:
    item: Node


Node = Leaf | And | Or | Not

_NEGATE = {
    "=": "!=",
    "!=": "=",
    "<": ">=",
    ">=": "<",
    ">": "<=",
    "<=": ">",
    "LIKE": "NOT LIKE",
    "NOT LIKE": "LIKE",
    "IN": "NOT IN",
    "NOT IN": "IN",
    "BETWEEN": "NOT BETWEEN",
    "NOT BETWEEN": "BETWEEN",
    "IS NULL": "IS NOT NULL",
    "IS NOT NULL": "IS NULL",
}


def push_not(node: Node, negate: bool = False) -> Node:
    """The same filter without Not nodes: negations inverted into the leaves (De Morgan)."""
    if isinstance(node, Not):
        return push_not(node.item, not negate)
    if isinstance(node, And):
        items = tuple(push_not(i, negate) for i in node.items)
        return Or(items) if negate else And(items)
    if isinstance(node, Or):
        items = tuple(push_not(i, negate) for i in node.items)
        return And(items) if negate else Or(items)
    if negate:
        return Leaf(node.key, _NEGATE[node.op], node.values, node.pos)
    return node
