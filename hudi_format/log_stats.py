"""Column statistics of a merge-on-read log file (RFC-27), as Hudi's append handle keeps them: per
indexed column min, max, null count and value count over the records of the file's data blocks
(delete records are none of them), column sizes 0. Bounds are encoded as a base file's
(hudi_format/parquet_stats.py: the records are written as Parquet in memory and read back with the
footer code). A log file of delete blocks alone: no bounds and 0 values per column, as Hudi 1.2's
`column_stats` record of such a file.

Read here: Avro and HFile data blocks, delete blocks. Any other block (a command block: a rollback
invalidates earlier blocks; a corrupt block; Parquet or CDC data blocks; an unknown type) or a block
that does not decode gives the file no statistics (None), so its slice is never skipped. A column is
bounded only when every data block's schema holds it with one indexable type (else it is left out:
never pruned by it).
"""

from __future__ import annotations

import json
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

from hudi_format.errors import HudiFormatError
from hudi_format.log_file import AVRO_DATA, DELETE, HFILE_DATA, SCHEMA, blocks, data_block_records
from hudi_format.parquet_stats import encode, footer_stats, indexed_columns

_PRIMITIVE = {"int": pa.int32(), "long": pa.int64(), "float": pa.float32(), "double": pa.float64(),
              "boolean": pa.bool_(), "string": pa.string(), "bytes": pa.binary(), "enum": pa.string(),
              "fixed": pa.binary()}
_LOGICAL = {"date": pa.date32(), "timestamp-millis": pa.timestamp("ms", tz="UTC"),
            "timestamp-micros": pa.timestamp("us", tz="UTC"), "local-timestamp-millis": pa.timestamp("ms"),
            "local-timestamp-micros": pa.timestamp("us")}


def records_stats(records: pa.Table, columns: list[str]) -> list[dict]:
    """[{column, min, max, nulls, values, size 0, usize 0}] of a log file's data records; no
    records: no bounds and 0 values (a log file of deletes alone)."""
    buf = pa.BufferOutputStream()
    pq.write_table(records, buf)
    meta = pq.read_metadata(pa.BufferReader(buf.getvalue()))
    stats = footer_stats(meta, records, columns)
    if not records.num_rows:
        stats = [{"column": c["column"], "min": None, "max": None, "nulls": 0, "values": 0} for c in stats]
    return [{**c, "size": 0, "usize": 0} for c in stats]


def records_stats_many(tables: list[pa.Table], columns: list[str]) -> list[list[dict]]:
    """`records_stats` of each table (one schema), from one Parquet file written in memory with a
    row group per table: one footer for many log files."""
    out: list[list[dict] | None] = [None] * len(tables)
    full = [i for i, t in enumerate(tables) if t.num_rows]
    for i, t in enumerate(tables):
        if not t.num_rows:
            out[i] = records_stats(t, columns)
    if full:
        buf = pa.BufferOutputStream()
        with pq.ParquetWriter(buf, tables[full[0]].schema) as w:
            for i in full:
                w.write_table(tables[i], row_group_size=tables[i].num_rows)
        meta = pq.read_metadata(pa.BufferReader(buf.getvalue()))
        if meta.num_row_groups != len(full):
            raise ValueError(f"{meta.num_row_groups} row groups written for {len(full)} tables")
        for g, i in enumerate(full):
            out[i] = [{**c, "size": 0, "usize": 0} for c in footer_stats(meta, tables[i], columns, row_groups=[g])]
    return out  # type: ignore[return-value]


def log_file_stats(data: bytes, properties: dict[str, str], schema: pa.Schema | None = None,
                   name: str = "log file") -> list[dict] | None:
    """The statistics of the log file whose bytes are `data` (as `records_stats`), or None when a
    block is not read here. `schema`: the table's columns (e.g. its base file's), which say the
    indexed columns of a log file without data blocks; without it such a file gets None."""
    try:
        tables, schemas = _data_blocks(data, name)
    except (HudiFormatError, ValueError, KeyError, EOFError, IndexError, TypeError, UnicodeDecodeError):
        return None
    if tables is None:
        return None
    if not tables:  # delete blocks alone (or an empty file)
        if schema is None:
            return None
        columns = indexed_columns(schema, properties)
        if not columns:
            return None
        empty = pa.table({c: pa.array([], schema.field(c).type) for c in columns})
        return records_stats(empty, columns)
    common = _common_fields(schemas)
    columns = indexed_columns(pa.schema(list(common.values())), properties)
    if not columns:
        return None
    try:
        merged = pa.concat_tables([t.select(columns).cast(pa.schema([common[c] for c in columns])) for t in tables])
    except (pa.ArrowInvalid, pa.ArrowTypeError, KeyError):
        return None
    return records_stats(merged, columns)


def encoded_log_file_stats(data: bytes, properties: dict[str, str], schema: pa.Schema | None = None,
                           name: str = "log file") -> bytes | None:
    """`log_file_stats` encoded as a base file's statistics are sent (parquet_stats.encode)."""
    stats = log_file_stats(data, properties, schema, name)
    return None if stats is None else encode(stats)


def _data_blocks(data: bytes, name: str) -> tuple[list[pa.Table] | None, list[pa.Schema]]:
    """(each data block's indexable top-level columns as a table, their schemas); (None, []) when
    a block is of a kind not read here."""
    tables: list[pa.Table] = []
    schemas: list[pa.Schema] = []
    for block in blocks(data, name):
        if block.block_type == DELETE:
            continue
        if block.block_type not in (AVRO_DATA, HFILE_DATA) or SCHEMA not in block.header:
            return None, []
        fields = _arrow_fields(json.loads(block.header[SCHEMA]))
        records = data_block_records(block, name)
        table = pa.table({f.name: pa.array([r.get(f.name) for r in records], f.type) for f in fields},
                         schema=pa.schema(fields))
        tables.append(table)
        schemas.append(table.schema)
    return tables, schemas


def _common_fields(schemas: list[pa.Schema]) -> dict[str, pa.Field]:
    """The fields every block holds with one type (by name)."""
    out = {f.name: f for f in schemas[0]}
    for s in schemas[1:]:
        out = {n: f for n, f in out.items() if s.get_field_index(n) >= 0 and s.field(n).type == f.type}
    return out


def _arrow_fields(avro: dict) -> list[pa.Field]:
    """The top-level fields of an Avro record schema that map to an indexable Arrow type."""
    if not isinstance(avro, dict) or avro.get("type") != "record":
        raise HudiFormatError("a data block's schema is not an Avro record")
    out = []
    for f in avro.get("fields", []):
        t = _arrow_type(f.get("type"))
        if t is not None:
            out.append(pa.field(f["name"], t))
    return out


def _arrow_type(avro: Any) -> pa.DataType | None:
    if isinstance(avro, list):  # a union: null and one type
        branches = [b for b in avro if b != "null"]
        return _arrow_type(branches[0]) if len(branches) == 1 else None
    if isinstance(avro, str):
        return _PRIMITIVE.get(avro) if avro not in ("enum", "fixed") else None
    if not isinstance(avro, dict):
        return None
    logical, base = avro.get("logicalType"), avro.get("type")
    if logical == "decimal" and base in ("bytes", "fixed"):
        precision, scale = int(avro.get("precision", 0)), int(avro.get("scale", 0))
        if not 0 < precision <= 38:
            return None
        return pa.decimal128(precision, scale)
    if logical in _LOGICAL:
        return _LOGICAL[logical]
    if isinstance(base, str) and base in _PRIMITIVE:
        return _PRIMITIVE[base]
    return None
