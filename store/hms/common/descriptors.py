"""Storage descriptors and columns: Thrift objects <-> rows of `sds` and the versioned `schema`."""

from __future__ import annotations

import json

from sqlalchemy import ColumnElement, Connection, bindparam, func, select

from store.db import schema as S
from store.db.database import inserted_id
from store.db.dialect import rows_of
from thrift_idl.hive_metastore.ttypes import (
    FieldSchema,
    Order,
    SerDeInfo,
    SkewedInfo,
    StorageDescriptor,
)


def _dump(value) -> str | None:
    return json.dumps(value, separators=(",", ":")) if value else None


def sd_row(sd: StorageDescriptor | None) -> dict:
    """The `sds` columns of a descriptor (everything but location and columns)."""
    sd = sd or StorageDescriptor()
    serde = sd.serdeInfo or SerDeInfo()
    extra = {
        k: v
        for k, v in (
            ("description", serde.description),
            ("serializerClass", serde.serializerClass),
            ("deserializerClass", serde.deserializerClass),
            ("serdeType", serde.serdeType),
        )
        if v is not None
    }
    skewed = None
    if sd.skewedInfo is not None:
        sk = sd.skewedInfo
        skewed = {
            "names": sk.skewedColNames or [],
            "values": sk.skewedColValues or [],
            "locations": [[list(k), v] for k, v in (sk.skewedColValueLocationMaps or {}).items()],
        }
    return {
        "input_format": sd.inputFormat,
        "output_format": sd.outputFormat,
        "compressed": bool(sd.compressed),
        # a Java server reads an absent numBuckets as 0 (Hive's own clients always send -1)
        "num_buckets": sd.numBuckets if sd.numBuckets is not None else 0,
        "serde_name": serde.name,
        "serde_lib": serde.serializationLib,
        "serde_params": json.dumps(serde.parameters or {}, separators=(",", ":")),
        "serde_extra": _dump(extra),
        "bucket_cols": _dump(sd.bucketCols),
        "sort_cols": _dump([[o.col, o.order] for o in sd.sortCols or []]),
        "sd_params": json.dumps(sd.parameters or {}, separators=(",", ":")),
        "skewed": json.dumps(skewed, separators=(",", ":")) if skewed is not None else None,
        "stored_as_subdirs": sd.storedAsSubDirectories,
    }


def build_sd(row, location: str | None, cols: list[FieldSchema]) -> StorageDescriptor:
    extra = json.loads(row.serde_extra) if row.serde_extra else {}
    serde = SerDeInfo(
        name=row.serde_name,
        serializationLib=row.serde_lib,
        parameters=json.loads(row.serde_params) if row.serde_params else {},
        **extra,
    )
    skewed = None
    if row.skewed:
        sk = json.loads(row.skewed)
        skewed = SkewedInfo(
            skewedColNames=sk["names"],
            skewedColValues=sk["values"],
            skewedColValueLocationMaps={tuple(k): v for k, v in sk["locations"]},
        )
    return StorageDescriptor(
        cols=cols,
        location=location,
        inputFormat=row.input_format,
        outputFormat=row.output_format,
        compressed=bool(row.compressed),
        numBuckets=row.num_buckets,
        serdeInfo=serde,
        bucketCols=json.loads(row.bucket_cols) if row.bucket_cols else [],
        sortCols=[Order(col=c, order=o) for c, o in json.loads(row.sort_cols)] if row.sort_cols else [],
        parameters=json.loads(row.sd_params) if row.sd_params else {},
        skewedInfo=skewed
        or SkewedInfo(skewedColNames=[], skewedColValues=[], skewedColValueLocationMaps={}),
        storedAsSubDirectories=bool(row.stored_as_subdirs),
    )


def insert_sd(conn: Connection, sd: StorageDescriptor | None) -> int:
    return inserted_id(conn.execute(S.sds.insert().values(**sd_row(sd))))


_NO_SKEW = json.dumps({"names": [], "values": [], "locations": []}, separators=(",", ":"))


def _as_answered(key: str, value):
    """A stored value as build_sd answers it: no skew info and an empty one, an unset and a false
    storedAsSubDirectories give the same descriptor."""
    if key == "skewed":
        return None if value in (None, _NO_SKEW) else value
    if key == "stored_as_subdirs":
        return bool(value)
    return value


def same_sd(row, sd: StorageDescriptor | None) -> bool:
    """Does descriptor `sd` answer as the stored row does (ignoring location and columns)? A Java
    client's copy of its table's descriptor carries an empty SkewedInfo and storedAsSubDirectories
    false where the table was created without them."""
    return all(_as_answered(k, getattr(row, k)) == _as_answered(k, v) for k, v in sd_row(sd).items())


class SdView:
    """The `sd_*` columns of a row that joined its table's descriptor, seen without the prefix (an
    `sds` row for build_sd and same_sd)."""

    __slots__ = ("_row",)

    def __init__(self, row):
        self._row = row

    def __getattr__(self, item):
        return getattr(self._row, "sd_" + item)


# --- versioned columns -------------------------------------------------------------------------

def col_tuples(cols: list[FieldSchema] | None) -> list[tuple]:
    return [((c.name or "").lower(), c.type or "", c.comment) for c in cols or []]


def insert_columns(conn: Connection, tbl_id: int, version: int, cols, partition_keys) -> None:
    rows = [
        {"tbl_id": tbl_id, "version": version, "is_partition_col": False, "position": i,
         "name": n, "type": t, "comment": c}
        for i, (n, t, c) in enumerate(col_tuples(cols))
    ]
    rows += [
        {"tbl_id": tbl_id, "version": version, "is_partition_col": True, "position": i,
         "name": n, "type": t, "comment": c}
        for i, (n, t, c) in enumerate(col_tuples(partition_keys))
    ]
    if rows:
        conn.execute(S.schema.insert(), rows)


def load_columns(conn: Connection, tbl_id: int, versions) -> dict[int, tuple[list, list]]:
    """{version: (cols, partition_keys)} as FieldSchema lists."""
    out: dict[int, tuple[list, list]] = {v: ([], []) for v in versions}
    rows = conn.execute(
        select(S.schema.c.version, S.schema.c.is_partition_col, S.schema.c.name, S.schema.c.type,
               S.schema.c.comment)
        .where(S.schema.c.tbl_id == tbl_id, S.schema.c.version.in_(list(out)))
        .order_by(S.schema.c.version, S.schema.c.is_partition_col, S.schema.c.position)
    )
    for r in rows:
        out[r.version][1 if r.is_partition_col else 0].append(
            FieldSchema(name=r.name, type=r.type, comment=r.comment))
    return out


def version_for_columns(conn: Connection, tbl_id: int, current: int, cols, partition_keys) -> int:
    """The schema version whose data columns and partition keys (comments included: COMMENT ON
    COLUMN of a partition key) equal `cols` and `partition_keys`, creating one if none does."""
    want, want_keys = col_tuples(cols), col_tuples(partition_keys)
    loaded = load_columns(conn, tbl_id, [current])[current]
    if col_tuples(loaded[0]) == want and col_tuples(loaded[1]) == want_keys:
        return current
    top = conn.execute(select(func.max(S.schema.c.version)).where(S.schema.c.tbl_id == tbl_id)).scalar() or 0
    versions = range(max(0, top - 20), top + 1)  # recent versions only; older ones just get a new copy
    for v, (c, k) in load_columns(conn, tbl_id, versions).items():
        if col_tuples(c) == want and col_tuples(k) == want_keys and (c or k or not (want or want_keys)):
            return v
    insert_columns(conn, tbl_id, top + 1, cols, partition_keys)
    return top + 1


def columns_of(cols_json) -> tuple[list[FieldSchema], list[FieldSchema]]:
    """(data columns, partition keys) from a json_rows(is_partition_col, position, name, type,
    comment) aggregate of `schema` rows."""
    data: list = []
    keys: list = []
    for is_key, _pos, name, type_, comment in sorted(rows_of(cols_json), key=lambda c: (bool(c[0]), c[1])):
        (keys if is_key else data).append(FieldSchema(name=name, type=type_, comment=comment))
    return data, keys


def named_table() -> tuple[ColumnElement[bool], ...]:
    """Where a statement over `tbl` joined with `db` finds one table: by the bind parameters
    `cat_name`, `db_name` and `tbl_name` (lower case)."""
    return (S.db.c.cat_name == bindparam("cat_name"), S.db.c.name == bindparam("db_name"),
            S.tbl.c.name == bindparam("tbl_name"))
