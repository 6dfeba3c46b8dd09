"""Hive's rules for object names, name patterns, column types and table types, as its metastore
applies them (Hive 4 where it differs from 2.3)."""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence

from store.db.schema import DEFAULT_CATALOG
from store.errors import MetaError
from store.hms.common.wildcard_match import ANY_ONE, ANY_RUN, AnyOf, WildcardPattern
from thrift_idl.hive_metastore.ttypes import FieldSchema

DDL_TIME = "transient_lastDdlTime"
MANAGED, EXTERNAL, VIEW = "MANAGED_TABLE", "EXTERNAL_TABLE", "VIRTUAL_VIEW"

_VALID_NAME = re.compile(r"^[A-Za-z0-9_]+$")
# Hive 4 also takes these in database and table names (metastore.support.special.characters.tablename,
# on by default): every printable ASCII character but the backslash
_VALID_OBJECT_NAME = re.compile(r"^[A-Za-z0-9_ !@#$%^&*()\-+=\[\]{};:'\",.<>?/|`~]+$")


def valid_name(name: str | None) -> bool:
    """Catalog and function names: letters, digits and `_`."""
    return bool(name and _VALID_NAME.match(name))


def valid_object_name(name: str | None) -> bool:
    """Database and table names: Hive 4's rule (Hive 2.3 took only letters, digits and `_`)."""
    return bool(name and _VALID_OBJECT_NAME.match(name))


def table_dir_name(name: str) -> str:
    """The directory of a new table under its database: Hive 4 writes characters other than
    letters, digits and `_` as `-<code>-` (`bad-name` -> `bad-45-name`)."""
    return "".join(ch if ch.isalnum() or ch == "_" else f"-{ord(ch)}-" for ch in name)


# --- catalogs ---------------------------------------------------------------------------------
# The store takes a database as one name: a plain name is a database of the default catalog,
# `@<catalog>#<db>` (Hive's own prefix) one of another catalog.


def split_db_name(name: str | None) -> tuple[str, str]:
    """(catalog, database) of a database name the store was given, both lower-case."""
    name = (name or "").lower()
    if name.startswith("@") and "#" in name:
        cat, _, db = name[1:].partition("#")
        return cat, db
    return DEFAULT_CATALOG, name


def qualified_db_name(catalog: str | None, db: str | None) -> str:
    """The name the store takes for database `db` of `catalog` (None: the default catalog)."""
    cat, db = (catalog or DEFAULT_CATALOG).lower(), (db or "").lower()
    return db if cat == DEFAULT_CATALOG and not db.startswith("@") else f"@{cat}#{db}"


def name_pattern(pattern: str | None) -> AnyOf | None:
    """Hive's name patterns (as its JDO store evaluates them): the pattern is trimmed and split on
    `|`; in each alternative `*` matches any run of characters and `.` any one character, every
    other character is literal; case-insensitive. An empty pattern matches nothing; None (and `*`)
    everything. Matched in linear time (store/hms/common/wildcard_match.py)."""
    if pattern is None or pattern.strip() in ("*", ".*"):
        return None
    return AnyOf([WildcardPattern([ANY_RUN if ch == "*" else ANY_ONE if ch == "." else ch for ch in alt],
                                  ignore_case=True)
                  for alt in pattern.strip().split("|") if alt])


def match_names(names: Iterable[str], pattern: str | None) -> list[str]:
    matcher = name_pattern(pattern)
    return sorted(n for n in names if matcher is None or matcher.matches(n))


def is_external(params: dict[str, str] | None) -> bool:
    """Hive 4's rule (`"TRUE".equalsIgnoreCase(EXTERNAL)`; Hive 2.3 took the upper-case value only)."""
    return (params or {}).get("EXTERNAL", "").upper() == "TRUE"


def purges(params: dict[str, str] | None) -> bool:
    """Does dropping (or truncating) the external table delete its files? Hive's
    `external.table.purge` (MetaStoreUtils.isExternalTablePurge)."""
    return (params or {}).get("external.table.purge", "").upper() == "TRUE"


def is_insert_only(params: dict[str, str] | None) -> bool:
    """An insert-only transactional table: Hive's MetaStoreUtils.isInsertOnlyTableParam
    (`transactional_properties` = `insert_only`, in any case)."""
    return (params or {}).get("transactional_properties", "").lower() == "insert_only"


_INSERT_ONLY_TEXT = re.compile("insert_only", re.I)


def may_be_insert_only(params_text: str | None) -> bool:
    """A cheap first look at a table's parameters as text (JSON): False means not insert-only."""
    return bool(params_text) and _INSERT_ONLY_TEXT.search(params_text) is not None  # type: ignore[arg-type]


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
