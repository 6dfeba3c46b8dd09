"""Hive's rules for object names, name patterns, column types and table types, as its metastore
(2.3) applies them."""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence

from store.errors import MetaError
from thrift_idl.hive_metastore.ttypes import FieldSchema

CATALOG = "hive"
DDL_TIME = "transient_lastDdlTime"
MANAGED, EXTERNAL, VIEW = "MANAGED_TABLE", "EXTERNAL_TABLE", "VIRTUAL_VIEW"

_VALID_NAME = re.compile(r"^[A-Za-z0-9_]+$")


def valid_name(name: str | None) -> bool:
    return bool(name and _VALID_NAME.match(name))


def pattern_regex(pattern: str | None) -> re.Pattern | None:
    """Hive's name patterns (as its JDO store evaluates them): the pattern is trimmed and split on
    `|`; in each alternative `*` matches any run of characters and `.` any one character, every
    other character is literal; case-insensitive. An empty pattern matches nothing."""
    if pattern is None or pattern.strip() in ("*", ".*"):
        return None
    alts = []
    for alt in pattern.strip().split("|"):
        if alt:
            alts.append("".join(".*" if ch == "*" else "." if ch == "." else re.escape(ch) for ch in alt))
    if not alts:
        return re.compile(r"(?!)")
    return re.compile("^(?:" + "|".join(alts) + ")$", re.IGNORECASE | re.DOTALL)


def match_names(names: Iterable[str], pattern: str | None) -> list[str]:
    rx = pattern_regex(pattern)
    return sorted(n for n in names if rx is None or rx.match(n))


def is_external(params: dict[str, str] | None) -> bool:
    """Hive 2.3's rule (`"TRUE".equals(EXTERNAL)`): only the upper-case value counts."""
    return (params or {}).get("EXTERNAL") == "TRUE"


def effective_table_type(requested: str, params: dict[str, str]) -> str:
    """The type a table gets: the EXTERNAL parameter turns a managed table external and its absence
    an external table managed."""
    if requested == MANAGED and is_external(params):
        return EXTERNAL
    if requested == EXTERNAL and not is_external(params):
        return MANAGED
    return requested


# Hive's column type check: the first token of the type (a run of letters/digits/_ or of other
# characters) must be one of its type names, lower-case ("<derived from deserializer>" passes).
_TYPE_NAMES = frozenset({
    "void", "boolean", "tinyint", "smallint", "int", "bigint", "float", "double", "string", "varchar",
    "char", "date", "datetime", "timestamp", "interval_year_month", "interval_day_time", "decimal",
    "binary", "array", "map", "struct", "uniontype",
})


def _type_ok(type_: str) -> bool:
    if type_ == "<derived from deserializer>":
        return True
    word = type_[0].isalnum() or type_[0] == "_"
    end = 1
    while end < len(type_) and (type_[end].isalnum() or type_[end] == "_") == word:
        end += 1
    return type_[:end] in _TYPE_NAMES


def column_problem(cols: Sequence[FieldSchema] | None, what: str = "column ") -> str | None:
    """Hive's validateTblColumns: the error text for the first bad column, or None."""
    for c in cols or []:
        if c.name is None or not c.type:  # Hive fails on these with a NullPointer/StringIndex exception
            raise MetaError(f"Invalid column {c.name!r} of type {c.type!r}")
        if not _type_ok(c.type):
            return f"Invalid {what}type: {c.type}"
    return None


# Hive's implicit conversions (TypeInfoUtils.implicitConvertible), which decide whether alter_table
# may change a column's type in place (hive.metastore.disallow.incompatible.col.type.changes).
_NUMERIC_RANK = {"tinyint": 1, "smallint": 2, "int": 3, "bigint": 4, "decimal": 5, "float": 6, "double": 7,
                 "string": 8}
_TYPE_GROUP = {**{t: "numeric" for t in ("tinyint", "smallint", "int", "bigint", "float", "double", "decimal")},
               "string": "string", "char": "string", "varchar": "string", "date": "date", "timestamp": "date"}


def _primitive(type_: str) -> str | None:
    t = "".join(type_.split()).lower()
    return None if "<" in t else t.split("(", 1)[0]


def types_compatible(old: str, new: str) -> bool:
    if "".join(old.split()).lower() == "".join(new.split()).lower():
        return True
    o, n = _primitive(old), _primitive(new)
    if o is None or n is None:
        return False  # complex types must stay the same
    og, ng = _TYPE_GROUP.get(o), _TYPE_GROUP.get(n)
    if o == n or o == "void" or (og == "string" and n == "double") \
            or (og in ("date", "numeric", "string") and ng == "string"):
        return True
    f, t = _NUMERIC_RANK.get(o), _NUMERIC_RANK.get(n)
    return f is not None and t is not None and f <= t


def incompatible_columns(old_cols: Sequence[FieldSchema] | None,
                         new_cols: Sequence[FieldSchema] | None) -> list[str]:
    """Names of new columns whose type cannot replace the old type at the same position."""
    return [n.name for o, n in zip(old_cols or [], new_cols or []) if not types_compatible(o.type, n.type)]
