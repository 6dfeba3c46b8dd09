"""Hudi's metadata table, the `column_stats` partition (RFC-27), as Hudi 1.2 writes it for tables of
version 6, 8 and 9 (beside the `files` partition, hudi_format/metadata_table.py):

* two file groups, `col-stats-0000-0` and `col-stats-0001-0`; a record goes to group
  `abs(abs(h) % 2)`, `h` the Java `String.hashCode` of its key. The partition is initialized at
  instant `00000000000000011` (version 6; `00000000000000001` from version 8, `init_instant`): a
  base HFile per group holding records, else (no records for the group) a log file with one empty
  delete block;
* a record per (base file, column): HoodieMetadataRecord type 3 whose `ColumnStatsMetadata` holds the
  file name, column, min and max wrapped by type, value count (rows), null count, sizes,
  `isDeleted` false, `isTightBound` false; the cell's row is its key, the record's `key` field left
  empty. Index version 1 (tables of version 6 and 8): bounds wrapped as `WRAPPERS` says, no
  `valueType`. Index version 2 (version 9, `index_version`): a `valueType` (HoodieValueTypeInfo:
  the ordinal of Hudi's ValueType, `V2_TYPES`, and for decimals "precision,scale") and the bounds
  in that type's primitive wrapper: dates as IntWrapper (days), timestamps LongWrapper
  (microseconds), decimals BytesWrapper (the unscaled value's two's complement, as Java's
  BigInteger.toByteArray);
* its key: base64 (with padding) of xxHash64 (seed 0xdabadaba sign-extended to 64 bits, big-endian)
  of the column name, then of the partition path (`.` when unpartitioned), then base64 of the MD5 of
  the file name;
* per deltacommit one log file per group with an HFile data block of the records written, and/or a
  delete block (version 3, HoodieDeleteRecordList, partition `column_stats`, ordering value
  IntWrapper 0) of the keys of files cleaned or rolled back (where it goes per table version:
  hudi_format/metadata_table_layout.py);
* the data table's index definitions (`.hoodie/.index_defs/index.json`) name the indexed columns
  and the index version (`V1`, `V2`).
"""

from __future__ import annotations

import base64
import datetime as dt
import hashlib
import io
import json
import struct
from collections.abc import Iterable
from dataclasses import dataclass
from decimal import Decimal

from hudi_format import hfile, log_file
from hudi_format.hfile_writer import write_hfile
from hudi_format.metadata_table import SCHEMA_JSON, GroupFileNames, _parsed

COLUMN_STATS = "column_stats"
INIT_INSTANT = "00000000000000011"  # the partition's initial instant (the files partition's is ...010)
V2_INIT_INSTANT = "00000000000000001"  # the same from table version 8 (files: ...000)
FILE_GROUPS = 2
RECORD_TYPE = 3
NAMESPACE = "org.apache.hudi.avro.model"
DECIMAL_PRECISION, DECIMAL_SCALE = 30, 15  # DecimalWrapper's

_SEED = 0xFFFFFFFFDABADABA  # Hudi's HashID seed, the int 0xdabadaba widened to long
_M = (1 << 64) - 1
_P1, _P2, _P3, _P4, _P5 = (11400714785074694791, 14029467366897019727, 1609587929392839161,
                           9650029242287828579, 2870177450012600261)


def _rotl(x: int, r: int) -> int:
    return ((x << r) | (x >> (64 - r))) & _M


def _round(acc: int, lane: int) -> int:
    return (_rotl((acc + lane * _P2) & _M, 31) * _P1) & _M


def xxhash64(data: bytes, seed: int = _SEED) -> int:
    """XXH64 of `data` (the reference algorithm)."""
    n, i = len(data), 0
    if n >= 32:
        v = [(seed + _P1 + _P2) & _M, (seed + _P2) & _M, seed & _M, (seed - _P1) & _M]
        while i + 32 <= n:
            for j in range(4):
                v[j] = _round(v[j], int.from_bytes(data[i + 8 * j:i + 8 * j + 8], "little"))
            i += 32
        h = (_rotl(v[0], 1) + _rotl(v[1], 7) + _rotl(v[2], 12) + _rotl(v[3], 18)) & _M
        for x in v:
            h = ((h ^ _round(0, x)) * _P1 + _P4) & _M
    else:
        h = (seed + _P5) & _M
    h = (h + n) & _M
    while i + 8 <= n:
        h = (_rotl(h ^ _round(0, int.from_bytes(data[i:i + 8], "little")), 27) * _P1 + _P4) & _M
        i += 8
    if i + 4 <= n:
        h = (_rotl(h ^ (int.from_bytes(data[i:i + 4], "little") * _P1 & _M), 23) * _P2 + _P3) & _M
        i += 4
    while i < n:
        h = (_rotl(h ^ (data[i] * _P5 & _M), 11) * _P1) & _M
        i += 1
    h ^= h >> 33
    h = h * _P2 & _M
    h ^= h >> 29
    h = h * _P3 & _M
    return h ^ (h >> 32)


def _b64(raw: bytes) -> str:
    return base64.b64encode(raw).decode("ascii")


def _id64(text: str) -> str:
    return _b64(xxhash64(text.encode("utf-8")).to_bytes(8, "big"))


def record_key(column: str, partition: str, file_name: str) -> str:
    """The key of a file's statistics of a column (`partition` '' when unpartitioned)."""
    return _id64(column) + _id64(partition or ".") + _b64(hashlib.md5(file_name.encode("utf-8")).digest())


def file_group_of(key: str, groups: int = FILE_GROUPS) -> int:
    """Hudi's mapRecordKeyToFileGroupIndex: Java String.hashCode of the key, modulo the groups."""
    h = 0
    for unit in struct.unpack(f">{len(key.encode('utf-16-be')) // 2}H", key.encode("utf-16-be")):
        h = (31 * h + unit) & 0xFFFFFFFF
    if h >= 1 << 31:
        h -= 1 << 32
    return abs(abs(h) % groups)


_NAMES = GroupFileNames("col-stats-", FILE_GROUPS)
file_id = _NAMES.file_id
base_file_name = _NAMES.base_file_name
log_file_name = _NAMES.log_file_name
parse_name = _NAMES.parse_name


# --- values -----------------------------------------------------------------------------------

# Hive type -> the wrapper of its bounds, as Hudi 1.2 writes them (timestamps: LongWrapper, micros)
WRAPPERS = {"tinyint": "IntWrapper", "smallint": "IntWrapper", "int": "IntWrapper", "integer": "IntWrapper",
            "bigint": "LongWrapper", "boolean": "BooleanWrapper", "float": "FloatWrapper",
            "double": "DoubleWrapper", "string": "StringWrapper", "varchar": "StringWrapper",
            "char": "StringWrapper", "date": "DateWrapper", "decimal": "DecimalWrapper",
            "timestamp": "LongWrapper"}


# index version 2: Hive type -> the ordinal of Hudi's ValueType (BOOLEAN 2, INT 3, LONG 4, FLOAT 5,
# DOUBLE 6, STRING 7, DECIMAL 10, DATE 12, TIMESTAMP_MICROS 16) and its primitive wrapper
V2_TYPES = {"boolean": 2, "tinyint": 3, "smallint": 3, "int": 3, "integer": 3, "bigint": 4, "float": 5,
            "double": 6, "string": 7, "varchar": 7, "char": 7, "decimal": 10, "date": 12, "timestamp": 16}
V2_WRAPPERS = {2: "BooleanWrapper", 3: "IntWrapper", 4: "LongWrapper", 5: "FloatWrapper", 6: "DoubleWrapper",
               7: "StringWrapper", 10: "BytesWrapper", 12: "IntWrapper", 16: "LongWrapper"}
MAX_DECIMAL_PRECISION = 38


def index_version(table_version: int) -> int:
    """The column_stats index version Hudi 1.2 writes for a table of `table_version`."""
    return 2 if table_version >= 9 else 1


def init_instant(table_version: int) -> str:
    return INIT_INSTANT if table_version < 8 else V2_INIT_INSTANT


def _decimal_of(hive_type: str) -> tuple[int, int] | None:
    try:
        precision, scale = (int(x) for x in hive_type.split("(", 1)[1].rstrip(") ").split(","))
    except (ValueError, IndexError):
        return None
    return precision, scale


@dataclass(frozen=True)
class ColumnType:
    """How a column's bounds are written: the wrapper, and (index version 2) the value type."""
    wrapper: str
    value_type: int | None = None
    type_info: str | None = None  # decimals: "precision,scale"


def column_type(hive_type: str, version: int = 1) -> ColumnType | None:
    """How the bounds of a column of `hive_type` are written in index `version`; None for types not
    indexed here (binary, nested; version 1: decimals wider than DecimalWrapper)."""
    t = hive_type.split("(", 1)[0].strip().lower()
    decimal = _decimal_of(hive_type) if t == "decimal" and "(" in hive_type else (10, 0) if t == "decimal" else None
    if t == "decimal" and decimal is None:
        return None
    if version >= 2:
        ordinal = V2_TYPES.get(t)
        if ordinal is None:
            return None
        if decimal is not None:
            if not 0 <= decimal[1] <= decimal[0] <= MAX_DECIMAL_PRECISION:
                return None
            return ColumnType(V2_WRAPPERS[ordinal], ordinal, f"{decimal[0]},{decimal[1]}")
        return ColumnType(V2_WRAPPERS[ordinal], ordinal)
    if decimal is not None:
        precision, scale = decimal
        if scale > DECIMAL_SCALE or precision - scale > DECIMAL_PRECISION - DECIMAL_SCALE:
            return None
    wrapper = WRAPPERS.get(t)
    return ColumnType(wrapper) if wrapper else None


def wrapper_of(hive_type: str, version: int = 1) -> str | None:
    """The wrapper of a column's bounds in index `version`; None for types not indexed here."""
    ct = column_type(hive_type, version)
    return ct.wrapper if ct else None


@dataclass(frozen=True)
class ColumnStatsRecord:
    partition: str  # '' when unpartitioned
    file_name: str
    column: str
    wrapper: str  # WRAPPERS' names
    min_value: object  # None: no non-null value
    max_value: object
    null_count: int
    value_count: int
    total_size: int = 0
    total_uncompressed_size: int = 0
    value_type: int | None = None  # index version 2: Hudi's ValueType ordinal
    type_info: str | None = None  # its additional info (decimals: "precision,scale")

    @property
    def key(self) -> str:
        return record_key(self.column, self.partition, self.file_name)


def unscaled_bytes(value: Decimal, scale: int) -> bytes:
    """The unscaled value of `value` at `scale` as Java's BigInteger.toByteArray (minimal two's complement)."""
    n = int(value.scaleb(scale).to_integral_value())
    bits = n.bit_length() if n >= 0 else (~n).bit_length()
    return n.to_bytes(bits // 8 + 1, "big", signed=True)


def _wrapped(wrapper: str, value: object, type_info: str | None = None):
    if value is None:
        return None
    if wrapper == "DecimalWrapper":
        value = Decimal(value).quantize(Decimal(1).scaleb(-DECIMAL_SCALE))  # type: ignore[arg-type]
    elif wrapper == "BytesWrapper" and type_info is not None and not isinstance(value, bytes):
        value = unscaled_bytes(Decimal(value), int(type_info.split(",")[1]))  # type: ignore[arg-type]
    elif isinstance(value, dt.date) and not isinstance(value, dt.datetime):
        value = (value - dt.date(1970, 1, 1)).days
    return (f"{NAMESPACE}.{wrapper}", {"value": value})


def encode_record(rec: ColumnStatsRecord) -> bytes:
    import fastavro

    buf = io.BytesIO()
    fastavro.schemaless_writer(buf, _parsed(), {
        "key": "", "type": RECORD_TYPE, "filesystemMetadata": None,
        "ColumnStatsMetadata": {
            "fileName": rec.file_name, "columnName": rec.column,
            "minValue": _wrapped(rec.wrapper, rec.min_value, rec.type_info),
            "maxValue": _wrapped(rec.wrapper, rec.max_value, rec.type_info),
            "valueCount": rec.value_count, "nullCount": rec.null_count, "totalSize": rec.total_size,
            "totalUncompressedSize": rec.total_uncompressed_size, "isDeleted": False, "isTightBound": False,
            "valueType": None if rec.value_type is None else (
                f"{NAMESPACE}.HoodieValueTypeInfo", {"typeOrdinal": rec.value_type, "additionalInfo": rec.type_info})}})
    return buf.getvalue()


def decode_stats(value: bytes, schema: dict | None = None) -> dict:
    """The `ColumnStatsMetadata` of a record's value, its bounds as (wrapper, value), its `valueType`
    as (ordinal, additional info) or None."""
    import fastavro

    parsed = _parsed() if schema is None else fastavro.parse_schema(schema)
    rec: dict = fastavro.schemaless_reader(io.BytesIO(value), parsed, return_record_name=True)  # type: ignore
    out = dict(rec["ColumnStatsMetadata"][1])
    for bound in ("minValue", "maxValue"):
        if out[bound] is not None:
            name, inner = out[bound]
            out[bound] = (name.rsplit(".", 1)[-1], inner["value"])
    if out.get("valueType") is not None:
        info = out["valueType"][1] if isinstance(out["valueType"], tuple) else out["valueType"]
        out["valueType"] = (info["typeOrdinal"], info.get("additionalInfo"))
    return out


# --- files ------------------------------------------------------------------------------------

def cells(records: Iterable[ColumnStatsRecord]) -> list[tuple[bytes, bytes]]:
    return sorted({r.key.encode(): encode_record(r) for r in records}.items())


def base_file(cell_list: list[tuple[bytes, bytes]], now_ms: int | None = None) -> bytes:
    info = {b"schema": SCHEMA_JSON.encode(), b"minRecordKey": cell_list[0][0], b"maxRecordKey": cell_list[-1][0]}
    return write_hfile(cell_list, info, now_ms=now_ms)


def delete_block(instant: str, keys: Iterable[str], with_schema: bool = True, partition: str = COLUMN_STATS) -> bytes:
    """A delete block (version 3) of `keys` of the metadata table's `partition`, each deleted for
    sure (ordering value IntWrapper 0)."""
    import fastavro

    if not _DELETE_SCHEMA:
        _DELETE_SCHEMA.append(fastavro.parse_schema(log_file._delete_list_schema()))
    buf = io.BytesIO()
    fastavro.schemaless_writer(buf, _DELETE_SCHEMA[0], {"deleteRecordList": [
        {"recordKey": k, "partitionPath": partition, "orderingVal": (f"{NAMESPACE}.IntWrapper", {"value": 0})}
        for k in sorted(set(keys))]})
    body = buf.getvalue()
    header = {log_file.INSTANT_TIME: instant}
    if with_schema:
        header[log_file.SCHEMA] = SCHEMA_JSON
    return log_file.encode_block(log_file.DELETE, header, struct.pack(">ii", 3, len(body)) + body)


_DELETE_SCHEMA: list = []


def log_file_bytes(instant: str, cell_list: list[tuple[bytes, bytes]], deleted: Iterable[str] = (),
                   now_ms: int | None = None, partition: str = COLUMN_STATS) -> bytes:
    """One log file of a deltacommit into `partition`: an HFile data block of the cells (when any),
    then a delete block of the deleted keys (when any)."""
    out = b""
    if cell_list:
        content = write_hfile(cell_list, {b"schema": SCHEMA_JSON.encode()}, now_ms=now_ms)
        out += log_file.encode_block(log_file.HFILE_DATA, {log_file.INSTANT_TIME: instant,
                                                           log_file.SCHEMA: SCHEMA_JSON}, content)
    deleted = sorted(set(deleted))
    if deleted:
        out += delete_block(instant, deleted, partition=partition)
    return out


def read_cells(data: bytes, name: str) -> list[tuple[str | None, list[tuple[bytes, bytes]], list[str]]]:
    """(instant, cells, deleted keys) per block of a log file."""
    out: list[tuple[str | None, list[tuple[bytes, bytes]], list[str]]] = []
    for block in log_file.blocks(data, name):
        if block.block_type == log_file.HFILE_DATA:
            out.append((block.instant, hfile.cells(block.content, name), []))
        elif block.block_type == log_file.DELETE:
            out.append((block.instant, [], log_file.deleted_keys(block, name)))
    return out


def deltacommit_stat(group: int, path: str, size: int, records: int, prev_commit: str,
                     log_version: int | None, partition: str = COLUMN_STATS, fid: str | None = None) -> dict:
    """The write stat of one file of the metadata table's `partition` (file group `fid`, else the
    column_stats group `group`) in a deltacommit's metadata (`path` relative to the metadata table's
    base path)."""
    stat = {"fileId": fid or file_id(group), "path": path, "prevCommit": prev_commit, "numWrites": records,
            "numDeletes": 0, "numUpdateWrites": records if log_version else 0,
            "numInserts": 0 if log_version else records, "totalWriteBytes": size, "totalWriteErrors": 0,
            "partitionPath": partition, "fileSizeInBytes": size, "totalLogRecords": 0,
            "totalLogFilesCompacted": 0, "totalLogSizeCompacted": 0, "totalUpdatedRecordsCompacted": 0,
            "totalLogBlocks": 0, "totalCorruptLogBlock": 0, "totalRollbackBlocks": 0}
    if log_version is not None:
        stat.update({"logVersion": log_version, "logOffset": 0})
    return stat


def with_stats(deltacommit: bytes, stats: list[dict]) -> bytes:
    """A deltacommit's metadata JSON with the write stats of other partitions' files added (each
    under its `partitionPath`)."""
    if not stats:
        return deltacommit
    meta = json.loads(deltacommit)
    for stat in stats:
        meta["partitionToWriteStats"].setdefault(stat["partitionPath"], []).append(stat)
    return json.dumps(meta, indent=2).encode()


INDEX_DEFS = ".hoodie/.index_defs/index.json"  # under the data table's base path


def index_definitions(columns: Iterable[str], version: int = 1, record_index: bool = False) -> bytes:
    """The data table's index definitions (as Hudi 1.2 writes them, Jackson's pretty print) naming
    the columns the `column_stats` partition indexes (Hudi's reader skips files only by those) and
    its index `version`; with `record_index`, first the global `record_index` partition's (version
    V1 for every table version)."""
    fields = ", ".join(json.dumps(c) for c in columns)
    ri = ('    "record_index" : {\n      "indexName" : "record_index",\n      "indexType" : "record_index",\n'
          '      "indexFunction" : "",\n      "sourceFields" : [ ],\n      "indexOptions" : {\n'
          '        "isPartitioned" : "false"\n      },\n      "version" : "V1"\n    },\n') if record_index else ""
    return ('{\n  "indexDefinitions" : {\n' + ri + '    "column_stats" : {\n      "indexName" : "column_stats",\n'
            '      "indexType" : "column_stats",\n      "indexFunction" : "column_stats",\n'
            f'      "sourceFields" : [ {fields} ],\n      "indexOptions" : {{ }},\n      "version" : "V{version}"\n'
            '    }\n  }\n}').encode()
