"""Merge-on-read on executors: a file slice's base file merged with its log files (pyarrow).

The slice's records are its base file's, then each log block's in order (log files by version,
blocks as written). A record of a key replaces the one before it unless that one's precombine value
is greater (Hudi's DefaultHoodieRecordPayload; equal values: the later record; no precombine field:
the later record). A delete block removes the key's records before it (its deletes carry the default
ordering value: they win whatever the record's); a later record of the key brings it back. A
rollback command block drops the blocks of the instant it names that came before it. A log
compaction's block stands in for the blocks it replaced (hudi_format/log_file.py `merge_order`). As
of an instant (time travel, incremental reads), blocks written by later instants are skipped first
(the server's slices as of T hold the log files of slices begun by T, as Hudi's file-system view):
as of a time before a log compaction, the blocks it replaced are read.
"""

from __future__ import annotations

from dataclasses import dataclass

import pyarrow as pa
import pyarrow.parquet as pq

from hudi_format.errors import HudiFormatError
from hudi_format.log_file import (
    AVRO_DATA,
    COMMAND,
    DELETE,
    HFILE_DATA,
    PARQUET_DATA,
    LogBlock,
    blocks,
    data_block_records,
    deleted_keys,
    merge_order,
)

from .base_file import conform, read_base_file
from .storage import locate

KEY = "_hoodie_record_key"


def read_log_blocks(location: str) -> list[LogBlock]:
    """The blocks of one log file, as written."""
    fs, path = locate(location)
    with fs.open_input_file(path) as f:
        data = f.read()
    return list(blocks(data, location))


def _block_table(block: LogBlock, schema: pa.Schema, name: str) -> pa.Table:
    if block.block_type == PARQUET_DATA:
        import io

        return conform(pq.read_table(io.BytesIO(block.content)), schema)
    return pa.Table.from_pylist(data_block_records(block, name), schema=schema)


def read_slice(base: str | None, logs: list[str], schema: pa.Schema, ordering_field: str | None,
               as_of: str | None = None) -> pa.Table:
    """The merged records of a file slice (base file `base`, if any, and `logs` in order), in
    `schema` (meta columns included); `as_of`: only blocks of instants at or before it."""
    return _merge(base, logs, schema, ordering_field, as_of).table


@dataclass
class Merged:
    table: pa.Table  # the surviving records
    deleted: list[str]  # keys a delete block deleted (some may be back: a later record)
    instants: list[str]  # the instants of the blocks merged, in merge order


def merge_logs(logs: list[str], schema: pa.Schema, ordering_field: str | None) -> Merged:
    """A log compaction's input: the slice's log blocks merged without its base file."""
    return _merge(None, logs, schema, ordering_field, None)


def _merge(base: str | None, logs: list[str], schema: pa.Schema, ordering_field: str | None,
           as_of: str | None) -> Merged:
    parts: list[pa.Table] = []
    positions: list[int] = []
    deletes: dict[str, int] = {}  # key -> position of its last delete
    if base:
        t = read_base_file(base, schema)
        parts.append(t)
        positions += [0] * t.num_rows
    scanned = [b for location in logs for b in read_log_blocks(location)
               if b.block_type == COMMAND or not as_of or (b.instant or "") <= as_of]
    merged = merge_order(scanned)
    instants = list(dict.fromkeys(b.instant or "" for b in merged))
    for pos, block in enumerate(merged, start=1):
        if block.block_type == DELETE:
            for k in deleted_keys(block, block.source):
                deletes[k] = pos
        elif block.block_type in (AVRO_DATA, HFILE_DATA, PARQUET_DATA):
            t = _block_table(block, schema, block.source)
            parts.append(t)
            positions += [pos] * t.num_rows
        else:
            raise HudiFormatError(f"{block.source}: block type {block.block_type} is not read")
    if not parts:
        return Merged(schema.empty_table(), list(deletes), instants)
    table = pa.concat_tables(parts)
    keys = table.column(KEY).to_pylist()
    field = next((f.name for f in schema if ordering_field and f.name.lower() == ordering_field.lower()), None)
    order = table.column(field).to_pylist() if field else [None] * len(keys)
    best: dict[str, int] = {}
    for i, (k, p) in enumerate(zip(keys, positions)):  # rows in write order
        if deletes.get(k, -1) > p:
            continue
        j = best.get(k)
        if j is None or not _greater(order[j], order[i]):
            best[k] = i
    # typed: every row may be deleted
    return Merged(table.take(pa.array(sorted(best.values()), pa.int64())), list(deletes), instants)


def _greater(a, b) -> bool:
    """`a` orders after `b` (None orders first)."""
    if a is None:
        return False
    return b is None or a > b
