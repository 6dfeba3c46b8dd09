"""Hudi log files (merge-on-read): the blocks of one log file and the record keys they write.

A log file is a sequence of blocks, each:
`#HUDI#` | block size (int64: bytes after this field) | log format version (int32, 1) |
block type (int32) | header | content length (int64) | content | footer | total length (int64),
where header and footer are maps: count (int32), then per entry key ordinal (int32), value length
(int32) and UTF-8 value. Header keys: 0 INSTANT_TIME, 1 TARGET_INSTANT_TIME, 2 SCHEMA,
3 COMMAND_BLOCK_TYPE (0: rollback), 4 COMPACTED_BLOCK_TIMES (a log compaction's block: the
comma-separated instants of the blocks it merged), others ignored here.

Log compaction (Hudi 0.13+): a `logcompaction` instant writes one new block (a data block, plus a
delete block of the same instant when keys were deleted) whose COMPACTED_BLOCK_TIMES names the
instants of the blocks it replaces. Readers merge blocks in `merge_order`, as Hudi's log record
reader (BaseHoodieLogRecordReader's two passes): a compacted block stands in for the blocks of the
instants it names, at the place of the latest of them (so blocks written after that instant still
win), and those blocks are skipped; a compacted block of a later log compaction names the earlier
one's instant, and the replacement follows through.

Block types: 0 command, 1 delete, 2 corrupt, 3 Avro data, 4 HFile data, 5 Parquet data, 6 CDC.
Avro data content: version (int32), record count (int32, version >= 2), then per record its
length (int32) and the record in Avro binary with the header's schema. HFile data content: an
HFile (hudi_format/hfile.py) whose cells are (record key, record in Avro binary with the header's
schema). Parquet data content: a Parquet file. Records of data blocks carry the `_hoodie_*` meta fields.
Delete block content: version (int32), length (int32), then (version 3, Hudi 0.14 and later) a
HoodieDeleteRecordList in Avro binary: an array of records (recordKey, partitionPath, orderingVal),
the ordering value a union of one-field wrapper records; version 2 holds a Kryo-serialized
DeleteRecord array instead (hudi_format/kryo_deletes.py); version 1 (HoodieKey arrays) is not read.

Written here (the pipeline's merge-on-read writes, as Hudi's append handle writes them for table
version 6): one new log file per file group and deltacommit, `log_file_name`, holding an Avro data
block (version 3; header INSTANT_TIME and SCHEMA, the writer schema with the meta fields; its
records encoded a column at a time from an Arrow table: `avro_data_block_of_table`) and/or a
delete block (version 3; every delete with the default ordering value 0: it deletes whatever the
record's ordering value).
"""

from __future__ import annotations

import io
import json
import struct
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from hudi_format.errors import HudiFormatError

MAGIC = b"#HUDI#"
COMMAND, DELETE, CORRUPT, AVRO_DATA, HFILE_DATA, PARQUET_DATA, CDC_DATA = range(7)
INSTANT_TIME, TARGET_INSTANT_TIME, SCHEMA, COMMAND_BLOCK_TYPE, COMPACTED_BLOCK_TIMES = range(5)
ROLLBACK = "0"
KEY, COMMIT_TIME = "_hoodie_record_key", "_hoodie_commit_time"


@dataclass
class LogBlock:
    block_type: int
    header: dict[int, str]
    content: bytes
    source: str = ""  # the log file's name, for messages

    @property
    def instant(self) -> str | None:
        return self.header.get(INSTANT_TIME)

    @property
    def compacted_times(self) -> list[str] | None:
        """The instants a log compaction's block replaces (None: not such a block)."""
        raw = self.header.get(COMPACTED_BLOCK_TIMES)
        return None if raw is None else [t for t in raw.split(",") if t]

    @property
    def is_rollback(self) -> bool:
        return self.block_type == COMMAND and self.header.get(COMMAND_BLOCK_TYPE) == ROLLBACK


def blocks(data: bytes, name: str = "log file") -> Iterator[LogBlock]:
    """The blocks of one log file, in order. HudiFormatError for what is not a well-formed block
    (a torn write at the end included: the caller decides)."""
    pos = 0
    while pos < len(data):
        if data[pos:pos + 6] != MAGIC:
            raise HudiFormatError(f"{name}: no block at byte {pos}")
        try:
            (size,) = struct.unpack_from(">q", data, pos + 6)
            end = pos + 14 + size
            if size < 0 or end > len(data):
                raise HudiFormatError(f"{name}: block at byte {pos} is cut short")
            version, block_type = struct.unpack_from(">ii", data, pos + 14)
            if version < 1:
                raise HudiFormatError(f"{name}: log format version {version} is not read")
            header, at = _map(data, pos + 22)
            (length,) = struct.unpack_from(">q", data, at)
            content = data[at + 8:at + 8 + length]
        except struct.error:
            raise HudiFormatError(f"{name}: block at byte {pos} is cut short") from None
        yield LogBlock(block_type, header, content, name)
        pos = end


def _map(data: bytes, at: int) -> tuple[dict[int, str], int]:
    (count,) = struct.unpack_from(">i", data, at)
    at += 4
    out = {}
    for _ in range(count):
        key, length = struct.unpack_from(">ii", data, at)
        at += 8
        out[key] = data[at:at + length].decode("utf-8")
        at += length
    return out, at


def merge_order(scanned: list[LogBlock]) -> list[LogBlock]:
    """The data and delete blocks a reader merges, in merge order, of a file slice's blocks as
    scanned (log files by version, blocks as written; already filtered by the caller to the
    instants it reads). Corrupt blocks are left out; a rollback command drops the blocks of its
    target instant scanned before it; then log compactions are resolved as Hudi's reader does:
    blocks are grouped by instant in order of first appearance, and walking the instants from the
    latest, a compacted block maps each instant it names to itself (or to the compacted block that
    replaced it in turn); the blocks of a mapped instant are skipped and its compacted block merged
    at the place of the latest instant it replaced (once)."""
    order: list[str] = []
    by_instant: dict[str, list[LogBlock]] = {}
    for b in scanned:
        if b.block_type == CORRUPT:
            continue
        if b.is_rollback:
            target = b.header.get(TARGET_INSTANT_TIME) or ""
            if by_instant.pop(target, None) is not None:
                order.remove(target)
            continue
        if b.block_type == COMMAND:
            continue
        t = b.instant or ""
        if t not in by_instant:
            order.append(t)
            by_instant[t] = []
        by_instant[t].append(b)
    replaced_by: dict[str, str] = {}
    included: set[str] = set()
    picked: list[str] = []  # latest first
    for t in reversed(order):
        times = by_instant[t][0].compacted_times
        if times is not None:
            final = replaced_by.get(t, t)
            for original in times:
                replaced_by[original] = final
            continue
        final = replaced_by.get(t, t)
        if final not in included:
            included.add(final)
            picked.append(final)
    return [b for t in reversed(picked) for b in by_instant[t]]


def encode_block(block_type: int, header: dict[int, str], content: bytes,
                 footer: dict[int, str] | None = None) -> bytes:
    """One log block as Hudi writes it (log format version 1); `blocks` reads it back."""
    body = (struct.pack(">ii", 1, block_type) + _encode_map(header) + struct.pack(">q", len(content)) + content
            + _encode_map(footer or {}))
    block = MAGIC + struct.pack(">q", len(body) + 8) + body
    return block + struct.pack(">q", len(block))  # the block's length without this field


def _encode_map(entries: dict[int, str]) -> bytes:
    out = [struct.pack(">i", len(entries))]
    for key, value in entries.items():
        raw = value.encode("utf-8")
        out.append(struct.pack(">ii", key, len(raw)) + raw)
    return b"".join(out)


def data_block_table(block: LogBlock, columns: list[str], name: str = "log file"):
    """The `columns` of the records of an Avro, HFile or Parquet data block, as a pyarrow table."""
    import pyarrow as pa

    if block.block_type == PARQUET_DATA:
        import pyarrow.parquet as pq

        return pq.read_table(io.BytesIO(block.content), columns=columns)
    if block.block_type == AVRO_DATA:
        records = list(_avro_records(block))
        return pa.table({c: [r.get(c) for r in records] for c in columns})
    if block.block_type == HFILE_DATA:  # the cell's row is the record key, its value the record
        keyed = list(_hfile_records(block, name))
        return pa.table({c: [k if c == KEY else r.get(c) for k, r in keyed] for c in columns})
    raise HudiFormatError(f"block type {block.block_type} is not a data block")


def _avro_records(block: LogBlock, reader: Any = None) -> Iterator[dict]:
    """The block's records; `reader`: a parsed reader schema to project them on."""
    import fastavro

    schema = fastavro.parse_schema(json.loads(block.header[SCHEMA]))
    data = block.content
    (version,) = struct.unpack_from(">i", data, 0)
    at = 4
    count = None
    if version >= 2:
        (count,) = struct.unpack_from(">i", data, at)
        at += 4
    seen = 0
    while at < len(data) and (count is None or seen < count):
        (length,) = struct.unpack_from(">i", data, at)
        record = fastavro.schemaless_reader(io.BytesIO(data[at + 4:at + 4 + length]), schema, reader)
        at += 4 + length
        seen += 1
        yield record  # type: ignore[misc]


def _hfile_records(block: LogBlock, name: str) -> Iterator[tuple[str, dict]]:
    import fastavro

    from hudi_format import hfile

    if SCHEMA not in block.header:
        raise HudiFormatError(f"{name}: HFile data block without a schema in its header")
    schema = fastavro.parse_schema(json.loads(block.header[SCHEMA]))
    for row, value in hfile.cells(block.content, f"{name}: HFile data block"):
        try:
            record = fastavro.schemaless_reader(io.BytesIO(value), schema)
            key = row.decode("utf-8")
        except (EOFError, ValueError, IndexError, UnicodeDecodeError) as exc:
            raise HudiFormatError(f"{name}: HFile data block holds a record that does not decode ({exc})") from None
        yield key, record  # type: ignore[misc]


# HoodieDeleteRecordList as Hudi 0.14 to 1.2 write it: the ordering value's union gained branches at
# the end only (ArrayWrapper in 1.1), so this reads every version-3 delete block those releases wrote.
_WRAPPED = [("BooleanWrapper", "boolean"), ("IntWrapper", "int"), ("LongWrapper", "long"),
            ("FloatWrapper", "float"), ("DoubleWrapper", "double"), ("BytesWrapper", "bytes"),
            ("StringWrapper", "string"), ("DateWrapper", "int"), ("DecimalWrapper", "bytes"),
            ("TimeMicrosWrapper", "long"), ("TimestampMicrosWrapper", "long")]


def _delete_list_schema() -> dict:
    wrappers: list = [{"type": "record", "name": n, "fields": [{"name": "value", "type": t}]} for n, t in _WRAPPED]
    local_date = {"type": "record", "name": "LocalDateWrapper", "fields": [{"name": "value", "type": "int"}]}
    array = {"type": "record", "name": "ArrayWrapper", "fields": [{"name": "wrappedValues", "type": [
        "null", {"type": "array", "items": ["null", *(n for n, _ in _WRAPPED), local_date]}]}]}
    record = {"type": "record", "name": "HoodieDeleteRecord", "fields": [
        {"name": "recordKey", "type": ["null", "string"]},
        {"name": "partitionPath", "type": ["null", "string"]},
        {"name": "orderingVal", "type": ["null", *wrappers, array]}]}
    return {"type": "record", "name": "HoodieDeleteRecordList", "namespace": "org.apache.hudi.avro.model",
            "fields": [{"name": "deleteRecordList", "type": {"type": "array", "items": record}}]}


_DELETE_SCHEMA: list = []


def deleted_keys(block: LogBlock, name: str = "log file") -> list[str]:
    """The record keys a delete block deletes. HudiFormatError for what is not read: version-1
    blocks (Kryo-serialized HoodieKey arrays), and deletes carrying an ordering value of their own (a reader keeps a
    record whose ordering value is higher; only the default ordering value, 0, deletes for sure)."""
    import fastavro

    data = block.content
    try:
        version, length = struct.unpack_from(">ii", data, 0)
    except struct.error:
        raise HudiFormatError(f"{name}: delete block is cut short") from None
    if version == 2:
        if length < 0 or length > len(data) - 8:
            raise HudiFormatError(f"{name}: delete block is cut short")
        from hudi_format.kryo_deletes import deleted_records

        return _keys_deleted_for_sure(
            [{"recordKey": k, "orderingVal": o} for k, _p, o in deleted_records(data[8:8 + length], name)], name)
    if version != 3:
        raise HudiFormatError(f"{name}: delete block of version {version} (Java-serialized keys) is not read")
    if not _DELETE_SCHEMA:
        _DELETE_SCHEMA.append(fastavro.parse_schema(_delete_list_schema()))
    body = io.BytesIO(data[8:8 + length])
    try:
        decoded: dict = fastavro.schemaless_reader(body, _DELETE_SCHEMA[0])  # type: ignore[assignment]
        records: list[dict] = decoded["deleteRecordList"]
    except (EOFError, ValueError, IndexError, UnicodeDecodeError) as exc:
        raise HudiFormatError(f"{name}: delete block is not a HoodieDeleteRecordList ({exc})") from None
    if length > len(data) - 8 or body.tell() != length:
        raise HudiFormatError(f"{name}: delete block is not a HoodieDeleteRecordList "
                              f"({body.tell()} of {length} bytes read)")
    return _keys_deleted_for_sure(records, name)


def _keys_deleted_for_sure(records: list[dict], name: str) -> list[str]:
    keys = []
    for r in records:
        if not _default_ordering(r["orderingVal"]):
            raise HudiFormatError(f"{name}: delete block orders its deletes by value "
                                  f"({r['orderingVal']!r} for key {r['recordKey']!r}; not read)")
        if r["recordKey"] is None:
            raise HudiFormatError(f"{name}: delete block holds a delete without a record key")
        keys.append(r["recordKey"])
    return keys


def _default_ordering(value) -> bool:
    """No ordering value, or Hudi's default (0): the delete wins whatever the record's ordering value."""
    if value is None:
        return True
    if not isinstance(value, dict):  # Kryo blocks: the value itself
        return value == 0 and not isinstance(value, bool)
    if "wrappedValues" in value:
        return all(_default_ordering(v) for v in value["wrappedValues"] or [])
    return value.get("value") in (None, 0) and not isinstance(value.get("value"), bool)


# --- writing ---------------------------------------------------------------------------------------

AVRO_DATA_BLOCK_VERSION = 3  # HoodieLogBlock.version: from 2 on with the record count
DELETE_BLOCK_VERSION = 3  # a HoodieDeleteRecordList in Avro
LOG_BASE_VERSION = 1  # the first log file of a file slice


def log_file_name(file_id: str, base_instant: str, version: int, write_token: str) -> str:
    """`.<fileId>_<baseInstant>.log.<version>_<writeToken>` (table version 6)."""
    return f".{file_id}_{base_instant}.log.{version}_{write_token}"


def avro_data_block(instant: str, schema_json: str, records) -> bytes:
    """An Avro data block of `records` (dicts, in the writer schema `schema_json`, meta fields
    included), as Hudi's HoodieAvroDataBlock writes it."""
    import fastavro

    schema = fastavro.parse_schema(json.loads(schema_json))
    parts, count = [], 0
    for r in records:
        buf = io.BytesIO()
        fastavro.schemaless_writer(buf, schema, r)
        raw = buf.getvalue()
        parts.append(struct.pack(">i", len(raw)) + raw)
        count += 1
    content = struct.pack(">ii", AVRO_DATA_BLOCK_VERSION, count) + b"".join(parts)
    return encode_block(AVRO_DATA, {INSTANT_TIME: instant, SCHEMA: schema_json}, content)


def avro_data_block_of_table(instant: str, schema_json: str, table, compacted: list[str] | None = None) -> bytes:
    """The Avro data block of an Arrow table's rows (columns named as the schema's fields), equal to
    `avro_data_block` of its rows as dicts; encoded a column at a time (`avro_rows`). `compacted`:
    a log compaction's block, replacing the blocks of these instants (COMPACTED_BLOCK_TIMES)."""
    from hudi_format.avro_rows import encode_prefixed

    return avro_data_block_of_encoded(instant, schema_json, encode_prefixed(table, json.loads(schema_json)),
                                      compacted)


def avro_data_block_of_encoded(instant: str, schema_json: str, prefixed, compacted: list[str] | None = None) -> bytes:
    """The Avro data block of records already encoded in the schema, each with its length
    (`avro_rows.encode_prefixed`, or a slice of its array: several blocks encoded at once);
    `compacted` as `avro_data_block_of_table`'s."""
    from hudi_format.avro_rows import records_section

    count, section = records_section(prefixed)
    content = struct.pack(">ii", AVRO_DATA_BLOCK_VERSION, count) + section
    return encode_block(AVRO_DATA, {INSTANT_TIME: instant, SCHEMA: schema_json, **_compacted(compacted)}, content)


def _compacted(times: list[str] | None) -> dict[int, str]:
    if times is None:
        return {}
    if not times or any(not t or "," in t for t in times):
        raise HudiFormatError(f"a log compaction's block names the instants it replaces, not {times!r}")
    return {COMPACTED_BLOCK_TIMES: ",".join(times)}


def delete_block(instant: str, deletes, compacted: list[str] | None = None) -> bytes:
    """A delete block of (record key, partition path) pairs; each delete carries Hudi's default
    ordering value (the int 0): it wins over the record whatever the record's ordering value.
    `compacted`: as `avro_data_block_of_table`'s."""
    import fastavro

    if not _DELETE_SCHEMA:
        _DELETE_SCHEMA.append(fastavro.parse_schema(_delete_list_schema()))
    zero = ("org.apache.hudi.avro.model.IntWrapper", {"value": 0})
    buf = io.BytesIO()
    fastavro.schemaless_writer(buf, _DELETE_SCHEMA[0], {"deleteRecordList": [
        {"recordKey": k, "partitionPath": p, "orderingVal": zero} for k, p in deletes]})
    body = buf.getvalue()
    content = struct.pack(">ii", DELETE_BLOCK_VERSION, len(body)) + body
    return encode_block(DELETE, {INSTANT_TIME: instant, **_compacted(compacted)}, content)


def data_block_records(block: LogBlock, name: str = "log file") -> list[dict]:
    """The records of an Avro or HFile data block, as dicts in the block's schema."""
    if block.block_type == AVRO_DATA:
        return list(_avro_records(block))
    if block.block_type == HFILE_DATA:
        return [r for _k, r in _hfile_records(block, name)]
    raise HudiFormatError(f"{name}: block type {block.block_type} is not an Avro or HFile data block")
