"""Names on the wire: catalog prefixes (`@<catalog>#<db>`), case folding, environment contexts."""

from __future__ import annotations

from thrift_idl.hive_metastore.ttypes import NoSuchObjectException

CATALOG = "hive"


def db_name(name: str | None) -> str:
    """Database name without Hive 3's `@catalog#` prefix (`!` stands for an empty name)."""
    if not name:
        return ""
    if name.startswith("@"):
        cat, sep, rest = name[1:].partition("#")
        check_catalog(cat)
        name = "" if rest == "!" else rest
    return name.lower()


def db_pattern(pattern: str | None) -> str | None:
    """A database pattern may carry the prefix too (`@hive#*`)."""
    if pattern and pattern.startswith("@"):
        cat, _, rest = pattern[1:].partition("#")
        check_catalog(cat)
        return rest or None
    return pattern


def check_catalog(cat: str | None) -> None:
    if cat and cat.lower() != CATALOG:
        raise NoSuchObjectException(f"Catalog {cat} does not exist")


def env_props(env) -> dict:
    return dict(getattr(env, "properties", None) or {})
