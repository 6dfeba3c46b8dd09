"""Names on the wire: catalogs (`@<catalog>#<db>` prefixes, request fields), case folding,
environment contexts."""

from __future__ import annotations

from store.hms.common import DEFAULT_CATALOG, qualified_db_name
from thrift_idl.hive_metastore.ttypes import MetaException, NoSuchObjectException


def _parse(name: str, catalog: str | None) -> tuple[str | None, str | None]:
    """(catalog, database) as Hive's parseDbName reads a name: `@<catalog>#<db>`, where `!` stands
    for an empty name and nothing for none; a name without the prefix is of `catalog`."""
    if not name.startswith("@"):
        return catalog, name
    cat, sep, rest = name[1:].partition("#")
    if not sep:
        raise MetaException(f"{name} is prepended with the catalog marker but does not appear to have a "
                            "catalog name in it")
    return cat, ("" if rest == "!" else rest or None)


def db_name(name: str | None, catalog: str | None = None) -> str:
    """The store's name of a database named on the wire: its catalog is the one of the name's prefix,
    else `catalog` (a request's catName / catalogName field), else `hive`."""
    cat, db = _parse(name or "", catalog)
    return qualified_db_name(cat, db)


def db_pattern(pattern: str | None, catalog: str | None = None) -> str | None:
    """A database pattern (`get_databases`, `get_table_meta`), which may carry the prefix too
    (`@spark#*`; `@spark#` for all of the catalog's)."""
    if pattern is None:
        return None if catalog is None else qualified_db_name(catalog, "*")
    cat, rest = _parse(pattern, catalog)
    return qualified_db_name(cat, "*" if rest is None else rest)


def check_catalog(cat: str | None) -> None:
    """Calls that serve the default catalog only (constraints, request forms, privileges, partition
    events, aggregate statistics, notification filters): another catalog is refused by name."""
    if cat and cat.lower() != DEFAULT_CATALOG:
        raise NoSuchObjectException(f"catalog {cat}: this call serves the catalog {DEFAULT_CATALOG} only")


def env_props(env) -> dict:
    return dict(getattr(env, "properties", None) or {})
