"""Hudi's metadata table, the `partition_stats` partition, as Hudi 1.2 writes it for tables of
version 8 and 9 (beside `column_stats`, hudi_format/metadata_column_stats.py, whose record layout it
shares):

* only for partitioned tables (Hudi writes none for an unpartitioned one), on by default with
  `column_stats` from version 8 (`hoodie.metadata.index.partition.stats.enable`); no index
  definition of its own (it indexes `column_stats`' columns);
* one file group, `partition-stats-0000-0` (`hoodie.metadata.index.partition.stats.file.group.count`,
  1 by default), initialized at the instant after the metadata table's other partitions
  (`00000000000000002`, or `...003` after a record index; the mirror: `INIT_INSTANT` always) with
  a log file of one empty delete block, as `column_stats`;
* a record per (data table partition, column): HoodieMetadataRecord type 6 whose
  `ColumnStatsMetadata` holds the partition path as its file name, the column, min and max over the
  partition's latest files (wrapped as column_stats' records of the table's index version), the sums
  of their value counts, null counts and sizes, `isDeleted` false and `isTightBound` true;
* its key: base64 of xxHash64 of the column name, then of the partition path (`.` when
  unpartitioned), as column_stats' keys without the file part;
* per write commit one log file per file group (named after the commit) with an HFile data block
  of the records of the partitions the commit wrote, recomputed over their latest files; a clean
  writes nothing (the bounds it leaves stay true, only wider).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from hudi_format import metadata_column_stats as C
from hudi_format.metadata_table import GroupFileNames

PARTITION_STATS = "partition_stats"
FILE_ID_PREFIX = "partition-stats-"
FILE_GROUPS = 1
RECORD_TYPE = 6
INIT_INSTANT = "00000000000000003"  # the mirror's (Hudi's: the next after files, column_stats, record_index)


def record_key(column: str, partition: str) -> str:
    """The key of a partition's statistics of a column (`partition` '' when unpartitioned)."""
    return C._id64(column) + C._id64(partition or ".")


_NAMES = GroupFileNames(FILE_ID_PREFIX, FILE_GROUPS)
file_id = _NAMES.file_id
base_file_name = _NAMES.base_file_name
log_file_name = _NAMES.log_file_name
parse_name = _NAMES.parse_name


def file_group_of(key: str, groups: int = FILE_GROUPS) -> int:
    return C.file_group_of(key, groups)


@dataclass(frozen=True)
class PartitionStatsRecord:
    partition: str  # '' when unpartitioned
    column: str
    wrapper: str
    min_value: object
    max_value: object
    null_count: int
    value_count: int
    total_size: int = 0
    total_uncompressed_size: int = 0
    value_type: int | None = None
    type_info: str | None = None
    is_deleted: bool = False

    @property
    def key(self) -> str:
        return record_key(self.column, self.partition)


def encode_record(rec: PartitionStatsRecord) -> bytes:
    import io

    import fastavro

    buf = io.BytesIO()
    fastavro.schemaless_writer(buf, C._parsed(), {
        "key": "", "type": RECORD_TYPE, "filesystemMetadata": None,
        "ColumnStatsMetadata": {
            "fileName": rec.partition, "columnName": rec.column,
            "minValue": C._wrapped(rec.wrapper, rec.min_value, rec.type_info),
            "maxValue": C._wrapped(rec.wrapper, rec.max_value, rec.type_info),
            "valueCount": rec.value_count, "nullCount": rec.null_count, "totalSize": rec.total_size,
            "totalUncompressedSize": rec.total_uncompressed_size, "isDeleted": rec.is_deleted,
            "isTightBound": True,
            "valueType": None if rec.value_type is None else (
                f"{C.NAMESPACE}.HoodieValueTypeInfo",
                {"typeOrdinal": rec.value_type, "additionalInfo": rec.type_info})}})
    return buf.getvalue()


def cells(records: Iterable[PartitionStatsRecord]) -> list[tuple[bytes, bytes]]:
    return sorted({r.key.encode(): encode_record(r) for r in records}.items())


# --- files (the column_stats partition's, under this partition's names) -------------------------------

def base_file(cell_list: list[tuple[bytes, bytes]], now_ms: int | None = None) -> bytes:
    return C.base_file(cell_list, now_ms=now_ms)


def delete_block(instant: str, keys: Iterable[str], with_schema: bool = True) -> bytes:
    return C.delete_block(instant, keys, with_schema, partition=PARTITION_STATS)


def log_file_bytes(instant: str, cell_list: list[tuple[bytes, bytes]], deleted: Iterable[str] = (),
                   now_ms: int | None = None) -> bytes:
    return C.log_file_bytes(instant, cell_list, deleted, now_ms=now_ms, partition=PARTITION_STATS)


def read_cells(data: bytes, name: str) -> list[tuple[str | None, list[tuple[bytes, bytes]], list[str]]]:
    return C.read_cells(data, name)


def deltacommit_stat(group: int, path: str, size: int, records: int, prev_commit: str,
                     log_version: int | None) -> dict:
    return C.deltacommit_stat(group, path, size, records, prev_commit, log_version, PARTITION_STATS, file_id(group))
