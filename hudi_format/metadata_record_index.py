"""Hudi's metadata table, the `record_index` partition (RFC-08, Hudi's global record-level index), as
Hudi 1.2 writes it for tables of version 6, 8 and 9 (beside `files`, hudi_format/metadata_table.py,
and `column_stats`, hudi_format/metadata_column_stats.py):

* file groups `record-index-0000-0`, `record-index-0001-0`, ... (`file_id`), their number fixed when
  the partition is initialized (`file_group_count`: Hudi's estimate from the number of keys, between
  `hoodie.metadata.record.index.min.filegroup.count` (10) and `...max.filegroup.count` (10,000), a
  group holding at most `...max.filegroup.size` (1 GiB) of 48-byte records after growth by
  `...growth.factor` (2)); readers take the count from the groups they find. A key goes to group
  `abs(abs(h) % n)`, `h` the Java `String.hashCode` of the key (as column_stats' keys);
* initialized at `00000000000000012` (version 6) or `00000000000000002` (8, 9), after `files` and
  `column_stats`: a base HFile per group with records, else a log file of one empty delete block;
* a record per key: HoodieMetadataRecord type 5 whose `recordIndexMetadata` (HoodieRecordIndexInfo)
  holds the partition path, the file id as a UUID's high and low 64 bits and the file index (the
  number after the UUID; `fileIdEncoding` 0, `fileId` empty) or, for a file id that is no
  `<uuid>-<n>`, the file id itself (`fileIdEncoding` 1, the bits and index -1), and the instant
  that wrote the key in epoch milliseconds (UTC; a 14-digit instant gets 999 ms, as Hudi parses
  it); `position` null. The cell's row is the key, the record's `key` field empty;
* per deltacommit a log file per group it touches: an HFile data block of the keys inserted or
  moved (Hudi writes no record for a key updated in place; the server writes one with its new
  instant) and a delete block (partition `record_index`) of the keys deleted.
"""

from __future__ import annotations

import datetime as dt
import io
import uuid
from collections.abc import Iterable
from dataclasses import dataclass

from hudi_format import hfile
from hudi_format import metadata_column_stats as C
from hudi_format.hfile_writer import write_hfile
from hudi_format.metadata_table import SCHEMA_JSON, GroupFileNames, _parsed

RECORD_INDEX = "record_index"
FILE_ID_PREFIX = "record-index-"
INIT_INSTANT = "00000000000000012"  # version 6 (files ...010, column_stats ...011)
V2_INIT_INSTANT = "00000000000000002"  # versions 8, 9 (files ...000, column_stats ...001)
RECORD_TYPE = 5
MIN_FILE_GROUPS, MAX_FILE_GROUPS = 10, 10_000
MAX_FILE_GROUP_BYTES = 1 << 30
GROWTH_FACTOR = 2.0
AVERAGE_RECORD_BYTES = 48  # Hudi's RECORD_INDEX_AVERAGE_RECORD_SIZE


def init_instant(table_version: int) -> str:
    return INIT_INSTANT if table_version < 8 else V2_INIT_INSTANT


def file_group_count(keys: int, min_groups: int = MIN_FILE_GROUPS, max_groups: int = MAX_FILE_GROUPS,
                     max_bytes: int = MAX_FILE_GROUP_BYTES, growth: float = GROWTH_FACTOR) -> int:
    """Hudi's estimateFileGroupCount for the record index, `keys` the keys it starts with."""
    if min_groups == max_groups and min_groups != 0:
        return min_groups
    import math

    expected = math.ceil(keys * growth)
    estimated = expected // max(max_bytes // AVERAGE_RECORD_BYTES, 1)
    if estimated >= max_groups:
        return max_groups
    if estimated <= min_groups:
        return min_groups
    return max(1, int(estimated))


def file_group_of(key: str, groups: int) -> int:
    return C.file_group_of(key, groups)


_NAMES = GroupFileNames(FILE_ID_PREFIX)
file_id = _NAMES.file_id
base_file_name = _NAMES.base_file_name
log_file_name = _NAMES.log_file_name
parse_name = _NAMES.parse_name
# --- records ----------------------------------------------------------------------------------

def instant_millis(instant: str) -> int:
    """Hudi's parseDateFromInstantTime in UTC: 14 digits get 999 ms, longer ones are cut to 17."""
    ts = instant + "999" if len(instant) == 14 else instant[:17]
    t = dt.datetime.strptime(ts[:14], "%Y%m%d%H%M%S").replace(tzinfo=dt.timezone.utc)
    return int(t.timestamp()) * 1000 + int(ts[14:17])


@dataclass(frozen=True)
class RecordIndexEntry:
    key: str
    partition: str  # the data table's partition path ('' when unpartitioned)
    file_id: str
    instant: str  # the instant that wrote the key


def _uuid_parts(fid: str) -> tuple[int, int, int] | None:
    """(high bits, low bits, file index) of a `<uuid>-<n>` (or bare UUID: index -1) file id."""
    try:
        if len(fid) == 36:
            u, index = uuid.UUID(fid), -1
        else:
            head, _, tail = fid.rpartition("-")
            u, index = uuid.UUID(head), int(tail)
        if str(u) != (fid if len(fid) == 36 else head).lower() or not -(1 << 31) <= index < 1 << 31:
            return None
    except ValueError:
        return None
    n = u.int
    signed = [(x - (1 << 64)) if x >= 1 << 63 else x for x in (n >> 64, n & ((1 << 64) - 1))]
    return signed[0], signed[1], index


def encode_record(entry: RecordIndexEntry) -> bytes:
    import fastavro

    parts = _uuid_parts(entry.file_id)
    if parts is not None:
        info = {"partitionName": entry.partition, "fileIdHighBits": parts[0], "fileIdLowBits": parts[1],
                "fileIndex": parts[2], "fileId": "", "instantTime": instant_millis(entry.instant),
                "fileIdEncoding": 0, "position": None}
    else:
        info = {"partitionName": entry.partition, "fileIdHighBits": -1, "fileIdLowBits": -1, "fileIndex": -1,
                "fileId": entry.file_id, "instantTime": instant_millis(entry.instant), "fileIdEncoding": 1,
                "position": None}
    buf = io.BytesIO()
    fastavro.schemaless_writer(buf, _parsed(), {"key": "", "type": RECORD_TYPE, "filesystemMetadata": None,
                                                "recordIndexMetadata": info})
    return buf.getvalue()


def decode_location(value: bytes) -> tuple[str, str, int]:
    """(partition, file id, instant millis) of a record's value, the file id rebuilt as Hudi's
    reader does (HoodieTableMetadataUtil.getLocationFromRecordIndexInfo)."""
    import fastavro

    rec: dict = fastavro.schemaless_reader(io.BytesIO(value), _parsed())  # type: ignore[assignment]
    if rec["type"] != RECORD_TYPE:
        raise ValueError(f"not a record index record (type {rec['type']})")
    info = rec["recordIndexMetadata"]
    if info["fileIdEncoding"] == 0:
        high, low = (x & ((1 << 64) - 1) for x in (info["fileIdHighBits"], info["fileIdLowBits"]))
        fid = str(uuid.UUID(int=high << 64 | low))
        if info["fileIndex"] != -1:
            fid = f"{fid}-{info['fileIndex']}"
    else:
        fid = info["fileId"]
    return info["partitionName"], fid, info["instantTime"]


def cells(entries: Iterable[RecordIndexEntry]) -> list[tuple[bytes, bytes]]:
    return sorted({e.key.encode("utf-8"): encode_record(e) for e in entries}.items())


# --- files ------------------------------------------------------------------------------------

def base_file(cell_list: list[tuple[bytes, bytes]], now_ms: int | None = None) -> bytes:
    info = {b"schema": SCHEMA_JSON.encode(), b"minRecordKey": cell_list[0][0], b"maxRecordKey": cell_list[-1][0]}
    return write_hfile(cell_list, info, now_ms=now_ms)


def delete_block(instant: str, keys: Iterable[str], with_schema: bool = True) -> bytes:
    return C.delete_block(instant, keys, with_schema, RECORD_INDEX)


def log_file_bytes(instant: str, cell_list: list[tuple[bytes, bytes]], deleted: Iterable[str] = (),
                   now_ms: int | None = None) -> bytes:
    """One log file of a deltacommit (as the column_stats partition's)."""
    return C.log_file_bytes(instant, cell_list, deleted, now_ms, RECORD_INDEX)


def read_cells(data: bytes, name: str) -> list[tuple[str | None, list[tuple[bytes, bytes]], list[str]]]:
    """(instant, cells, deleted keys) per block of a log file."""
    return C.read_cells(data, name)


def base_cells(data: bytes, name: str) -> list[tuple[bytes, bytes]]:
    return hfile.cells(data, name)


def deltacommit_stat(group: int, path: str, size: int, records: int, prev_commit: str,
                     log_version: int | None) -> dict:
    return C.deltacommit_stat(group, path, size, records, prev_commit, log_version, RECORD_INDEX, file_id(group))
