"""Metastore objects as plain data to compare source and target, and copies fit for writing."""

from __future__ import annotations

import copy
from urllib.parse import unquote

VIEW_TYPES = ("VIRTUAL_VIEW", "MATERIALIZED_VIEW")
HUDI_INPUT_FORMAT_PREFIX = "org.apache.hudi.hadoop."

# Fields a metastore sets itself (times, ids, catalogs, grants): not compared, not copied.
_IGNORED_FIELDS = {"createTime", "lastAccessTime", "catName", "privileges", "id", "writeId",
                   "isStatsCompliant", "colStats", "accessType", "requiredReadCapabilities",
                   "requiredWriteCapabilities", "ownerType", "temporary", "creationMetadata",
                   "createType", "managedLocationUri", "fileMetadata", "lastAnalyzed",
                   "catalogName"}
_IGNORED_PARAMS = {"transient_lastDdlTime"}


def plain(obj):
    """A Thrift struct as nested dicts without the fields a metastore sets itself; None and empty
    collections dropped, so that "absent" and "empty" compare equal."""
    if hasattr(obj, "thrift_spec"):
        out = {}
        for spec in obj.thrift_spec or ():
            if spec is None:
                continue
            name = spec[2]
            if name in _IGNORED_FIELDS:
                continue
            v = plain(getattr(obj, name, None))
            if v is not None and v != {} and v != []:
                out[name] = v
        return out
    if isinstance(obj, dict):
        return {k: plain(v) for k, v in obj.items() if k not in _IGNORED_PARAMS}
    if isinstance(obj, (list, tuple)):
        return [plain(v) for v in obj]
    return obj


# Statistics our server keeps itself for a Hudi table from its latest file slices
# (store/hudi/hive_table_statistics.py): a source's values are not copied nor compared.
HUDI_KEPT_STATS = ("numFiles", "totalSize", "numRows", "rawDataSize", "COLUMN_STATS_ACCURATE")
SPARK_STATS_PREFIX = "spark.sql.statistics."


def table_view(t, hudi: bool = False) -> dict:
    d = plain(t)
    d["tableName"] = (t.tableName or "").lower()
    d["dbName"] = (t.dbName or "").lower()
    for own in ("id", "writeId"):  # each metastore's own numbering
        d.pop(own, None)
    if hudi and isinstance(d.get("parameters"), dict):
        d["parameters"] = {k: v for k, v in d["parameters"].items()
                           if k not in HUDI_KEPT_STATS and not k.startswith(SPARK_STATS_PREFIX)}
    return d


def partition_view(p) -> dict:
    d = plain(p)
    d["tableName"] = (p.tableName or "").lower()
    d["dbName"] = (p.dbName or "").lower()
    return d


def stats_view(objs) -> list:
    return sorted((plain(o) for o in objs or []), key=lambda o: o.get("colName", ""))


def differing_fields(a: dict, b: dict) -> list[str]:
    """Names of differing fields; parameters are named per key (`parameters.numRows`)."""
    out = []
    for k in sorted(set(a) | set(b)):
        x, y = a.get(k), b.get(k)
        if x == y:
            continue
        if k == "parameters" and isinstance(x or {}, dict) and isinstance(y or {}, dict):
            x, y = x or {}, y or {}
            out += [f"parameters.{p}" for p in sorted(set(x) | set(y)) if x.get(p) != y.get(p)]
        else:
            out.append(k)
    return out


def database_diff(sdb, tdb) -> list[str]:
    """Differing fields of two databases; an existing database keeps its location."""
    a, b = plain(sdb), plain(tdb)
    a["name"], b["name"] = (sdb.name or "").lower(), (tdb.name or "").lower()
    for v in (a, b):
        v.pop("locationUri", None)
        v.pop("type", None)  # Hive 4: NATIVE, set by the metastore (Hive 2.3 has no such field)
    return differing_fields(a, b)


def for_write(obj):
    """A copy of a source object without the fields the target sets itself."""
    c = copy.deepcopy(obj)
    for name in ("privileges", "catName", "id", "writeId", "creationMetadata"):
        if hasattr(c, name):
            setattr(c, name, None)
    return c


def is_hudi_table(t) -> bool:
    """Hudi tables as hive-sync and Hudi's Spark catalog register them, or any table whose location
    holds a `.hoodie/` folder."""
    params = t.parameters or {}
    if (params.get("spark.sql.sources.provider") or "").lower() == "hudi":
        return True
    if t.sd is not None and (t.sd.inputFormat or "").startswith(HUDI_INPUT_FORMAT_PREFIX):
        return True
    location = table_location(t)
    if not location or t.tableType in VIEW_TYPES:
        return False
    try:
        import fsspec

        fs, root = fsspec.core.url_to_fs(location)
        return bool(fs.isdir(root.rstrip("/") + "/.hoodie"))
    except Exception:  # an unreadable location is just not known to be Hudi
        return False


def table_location(t) -> str | None:
    if t.sd is None:
        return None
    path = (t.sd.serdeInfo.parameters or {}).get("path") if t.sd.serdeInfo else None
    return t.sd.location or path


def column_names(t) -> list[str]:
    return [c.name for c in (t.sd.cols if t.sd else []) or []]


def values_of_name(part_name: str) -> tuple:
    """Partition values of a partition name (`k1=v1/k2=v2`)."""
    return tuple(unquote(kv.partition("=")[2]) for kv in part_name.split("/"))


def chunks(items: list, n: int):
    for i in range(0, len(items), n):
        yield items[i:i + n]
