"""Column statistics of a Parquet base file (RFC-27) from its footer: per indexed column, min and
max over the row groups, null count, value count (rows, nulls included). The pipeline sends them
with the commit of a file it has just written; import-hudi loads them for the files of a table it
adopts.

NaN: Parquet writers leave NaN out of float bounds, yet NaN matches `x > v` where engines order it
above every number; a float column holding NaN is sent with max NaN (the server then keeps no
bounds for it). Timestamps go as microseconds since the epoch (min rounded down, max up), dates
as days, decimals as text.
"""

from __future__ import annotations

import json
from base64 import b64encode
from decimal import Decimal
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from hudi_format.config_keys import COLUMN_STATS_COLUMN_LIST
from hudi_format.table_config import META_COLUMNS

_UNIT_DIVISOR = {"milliseconds": -1000, "microseconds": 1, "nanoseconds": 1000}  # <0: multiply


def indexed_columns(schema: pa.Schema, properties: dict[str, str]) -> list[str]:
    """The table's indexed columns: the property's list, else every column of an indexable type."""
    listed = [c.strip() for c in (properties.get(COLUMN_STATS_COLUMN_LIST) or "").split(",") if c.strip()]
    wanted = {c.lower() for c in listed}
    return [f.name for f in schema if f.name not in META_COLUMNS and _indexable(f.type)
            and (not wanted or f.name.lower() in wanted)]


def _indexable(t: pa.DataType) -> bool:
    return (pa.types.is_integer(t) or pa.types.is_floating(t) or pa.types.is_boolean(t)
            or pa.types.is_decimal(t) or pa.types.is_string(t) or pa.types.is_large_string(t)
            or pa.types.is_binary(t) or pa.types.is_large_binary(t) or pa.types.is_date32(t)
            or pa.types.is_timestamp(t))


def footer_stats(meta: pq.FileMetaData, table: pa.Table, columns: list[str],
                 index: dict[str, int] | None = None, row_groups: list[int] | None = None) -> list[dict]:
    """[{column, min, max, nulls, values, size, usize}] of `columns` (values tagged: i, d, dec, s, b;
    `size`, `usize`: the column chunks' compressed and uncompressed bytes over the row groups, as
    Hudi's totalSize and totalUncompressedSize) for the file
    whose footer is `meta` and whose rows were `table` (only to see NaN in float columns); `index`:
    `column_index(meta)` when the caller has it (files of one schema share it); `row_groups`: only
    those row groups (of `table`'s rows), as if they were the file's."""
    if index is None:
        index = column_index(meta)
    groups = [meta.row_group(i) for i in (range(meta.num_row_groups) if row_groups is None else row_groups)]
    out = []
    for name in columns:
        j = index.get(name)
        if j is None:
            continue
        entry = _column(groups, j, name)
        entry["size"] = sum(rg.column(j).total_compressed_size for rg in groups)
        entry["usize"] = sum(rg.column(j).total_uncompressed_size for rg in groups)
        if entry.get("max") and "d" in entry["max"] and _has_nan(table.column(name)):
            entry["max"] = {"d": "NaN"}
        out.append(entry)
    return out


def column_index(meta: pq.FileMetaData) -> dict[str, int]:
    """Column path -> the index of its column chunk in the footer's row groups."""
    schema = meta.schema
    return {schema.column(j).path: j for j in range(meta.num_columns)}


def _column(groups: list, j: int, name: str) -> dict:
    lo = hi = None
    nulls: int | None = 0
    rows = 0
    logical = None
    for rg in groups:
        rows += rg.num_rows
        s = rg.column(j).statistics
        if s is None or not s.has_null_count:
            nulls = None
        elif nulls is not None:
            nulls += s.null_count
        if rg.num_rows == (s.null_count if s is not None and s.has_null_count else -1):
            continue  # every value null: no bounds needed
        if s is None or not s.has_min_max:
            return {"column": name}  # no bounds, counts left unknown: never pruned by this column
        if logical is None:
            logical = str(s.logical_type)
        a, b = _bound(logical, s, True, False), _bound(logical, s, False, True)
        lo = a if lo is None else min(lo, a)
        hi = b if hi is None else max(hi, b)
    return {"column": name, "min": _tag(lo), "max": _tag(hi), "nulls": nulls, "values": rows}


def _bound(logical: str, s, low: bool, upper: bool):
    """The min (`low`) or max of statistics `s` of a column of `logical` type, tagged."""
    if logical.startswith("Timestamp"):
        raw = s.min_raw if low else s.max_raw
        unit = logical.split("timeUnit=", 1)[1].split(",", 1)[0]
        d = _UNIT_DIVISOR[unit]
        return ("ts", raw * -d if d < 0 else (-(-raw // d) if upper else raw // d))
    if logical == "Date":
        return ("date", int(s.min_raw if low else s.max_raw))
    value = s.min if low else s.max
    if isinstance(value, bool):
        return ("i", int(value))
    if isinstance(value, int):
        return ("i", value)
    if isinstance(value, float):
        return ("d", value)
    if isinstance(value, Decimal):
        return ("dec", value)
    if isinstance(value, str):
        return ("s", value.encode())
    return ("b", bytes(value))


def _tag(v) -> dict | None:
    if v is None:
        return None
    kind, x = v
    if kind in ("i", "ts", "date"):
        return {"i": x}
    if kind == "d":
        return {"d": 0.0 if x == 0 else x}  # -0.0 and 0.0 are one bound
    if kind == "dec":
        return {"dec": str(x)}
    if kind == "s":
        return {"s": x.decode()}
    return {"b": b64encode(x).decode()}


def _has_nan(col: pa.ChunkedArray) -> bool:
    if not pa.types.is_floating(col.type) or len(col) == 0:
        return False
    return bool(pc.any(pc.is_nan(col)).as_py())


def encode(stats: list[dict]) -> bytes:
    return json.dumps(stats).encode()


def uncompressed_size(meta: pq.FileMetaData) -> int:
    return sum(meta.row_group(i).total_byte_size for i in range(meta.num_row_groups))


def raw_footer_stats(footer, columns: list[str], kinds: dict[str, str], nan: set[str]) -> list[dict]:
    """footer_stats from a footer read by hudi_format/parquet_footer.py (same answers as pyarrow's
    statistics give there); `nan`: the float columns holding NaN."""
    from hudi_format.parquet_footer import decode_stat

    groups = footer.meta.row_groups or []
    out = []
    for name in columns:
        col = footer.columns.get(name)
        if col is None:
            continue
        kind = kinds[name]
        lo = hi = None
        nulls: int | None = 0
        rows = 0
        entry: dict | None = None
        for rg in groups:
            rows += rg.num_rows
            md = rg.columns[col.index].meta_data
            s: Any = md.statistics if md is not None else None
            has_nulls = s is not None and s.null_count is not None
            if not has_nulls:
                nulls = None
            elif nulls is not None:
                nulls += s.null_count
            if rg.num_rows == (s.null_count if has_nulls else -1):
                continue
            if s is not None and s.min_value is None and s.max_value is None and (
                    s.min is not None or s.max is not None):
                from hudi_format.parquet_footer import Unsupported

                raise Unsupported("statistics only in the deprecated fields")
            if s is None or s.min_value is None or s.max_value is None:
                entry = {"column": name}
                break
            a, b = decode_stat(col, kind, s.min_value), decode_stat(col, kind, s.max_value)
            if a[0] == "ts":
                d = _UNIT_DIVISOR[kind[3:]]
                a = ("ts", a[1] * -d if d < 0 else a[1] // d)
                b = ("ts", b[1] * -d if d < 0 else -(-b[1] // d))
            lo = a if lo is None else min(lo, a)
            hi = b if hi is None else max(hi, b)
        if entry is None:
            entry = {"column": name, "min": _tag(lo), "max": _tag(hi), "nulls": nulls, "values": rows}
            if entry.get("max") and "d" in entry["max"] and name in nan:
                entry["max"] = {"d": "NaN"}
        chunks = [rg.columns[col.index].meta_data for rg in groups]
        if all(md is not None for md in chunks):
            entry["size"] = sum(md.total_compressed_size for md in chunks)
            entry["usize"] = sum(md.total_uncompressed_size for md in chunks)
        out.append(entry)
    return out
