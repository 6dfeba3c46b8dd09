"""Hudi log files (merge-on-read): the blocks of one log file and the record keys they write.

A log file is a sequence of blocks, each:
`#HUDI#` | block size (int64: bytes after this field) | log format version (int32, 1) |
block type (int32) | header | content length (int64) | content | footer | total length (int64),
where header and footer are maps: count (int32), then per entry key ordinal (int32), value length
(int32) and UTF-8 value. Header keys: 0 INSTANT_TIME, 1 TARGET_INSTANT_TIME, 2 SCHEMA,
3 COMMAND_BLOCK_TYPE (0: rollback), others ignored here.

Block types: 0 command, 1 delete, 2 corrupt, 3 Avro data, 4 HFile data, 5 Parquet data, 6 CDC.
Avro data content: version (int32), record count (int32, version >= 2), then per record its
length (int32) and the record in Avro binary with the header's schema. Parquet data content: a
Parquet file. Records of data blocks carry the `_hoodie_*` meta fields.
"""

from __future__ import annotations

import io
import json
import struct
from collections.abc import Iterator
from dataclasses import dataclass

from hudi_format.errors import HudiFormatError

MAGIC = b"#HUDI#"
COMMAND, DELETE, CORRUPT, AVRO_DATA, HFILE_DATA, PARQUET_DATA, CDC_DATA = range(7)
INSTANT_TIME, TARGET_INSTANT_TIME, SCHEMA, COMMAND_BLOCK_TYPE = range(4)
ROLLBACK = "0"
KEY, COMMIT_TIME = "_hoodie_record_key", "_hoodie_commit_time"


@dataclass
class LogBlock:
    block_type: int
    header: dict[int, str]
    content: bytes

    @property
    def instant(self) -> str | None:
        return self.header.get(INSTANT_TIME)


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
        yield LogBlock(block_type, header, content)
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


def data_block_table(block: LogBlock, columns: list[str]):
    """The `columns` of the records of an Avro or Parquet data block, as a pyarrow table."""
    import pyarrow as pa

    if block.block_type == PARQUET_DATA:
        import pyarrow.parquet as pq

        return pq.read_table(io.BytesIO(block.content), columns=columns)
    if block.block_type == AVRO_DATA:
        records = list(_avro_records(block))
        return pa.table({c: [r.get(c) for r in records] for c in columns})
    raise HudiFormatError(f"block type {block.block_type} is not a data block")


def _avro_records(block: LogBlock) -> Iterator[dict]:
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
        record = fastavro.schemaless_reader(io.BytesIO(data[at + 4:at + 4 + length]), schema)
        at += 4 + length
        seen += 1
        yield record  # type: ignore[misc]
