"""Plain values HudiCatalog takes and answers besides hudi_format's own (HudiTableConfig, Instant,
FileSlice, FileInfo): what the Hive Metastore says of databases and tables, and the Hudi extension's
answers and requests that have no hudi_format counterpart."""

from __future__ import annotations

from dataclasses import dataclass, field

from hudi_format.file_slice import FileSlice
from hudi_format.instant import Instant
from hudi_format.record_key_codec import encode_keys

__all__ = ["BaseFileStats", "Column", "Database", "FileGroupKeys", "HiveTable", "ImportResult", "ImportedInstant",
           "KeyLocations", "PrunedSlices", "TableStats"]


@dataclass
class Column:
    name: str
    type: str  # Hive type text
    comment: str | None = None


@dataclass
class Database:
    name: str
    location: str | None
    description: str | None = None
    owner: str | None = None
    parameters: dict[str, str] = field(default_factory=dict)


@dataclass
class HiveTable:
    """A table as the Hive Metastore has it (Hudi or not)."""

    db: str
    name: str
    table_type: str | None  # MANAGED_TABLE, EXTERNAL_TABLE, ...
    location: str | None
    columns: list[Column] = field(default_factory=list)  # data columns
    partition_keys: list[Column] = field(default_factory=list)
    parameters: dict[str, str] = field(default_factory=dict)
    owner: str | None = None
    create_time: int | None = None  # seconds since the epoch
    input_format: str | None = None
    output_format: str | None = None
    serde: str | None = None  # the SerDe's class
    view_text: str | None = None  # a view's expanded text

    @property
    def is_hudi(self) -> bool:
        """Registered as a Hudi table (Hudi's input format or Spark's `hudi` provider): the table may
        still have no Hudi timeline on the metastore (HudiCatalog.get_hudi_table says)."""
        provider = self.parameters.get("spark.sql.sources.provider", "").lower()
        return provider == "hudi" or "hudi" in (self.input_format or "").lower()


@dataclass
class TableStats:
    """RFC-15's "stats" view of a Hudi table, counted by the server."""

    partitions: int
    files: int  # live files, every version, base and log
    total_size_bytes: int
    last_instant: Instant | None  # the latest completed instant
    table_version: int  # the table's snapshot version
    mirrored: bool  # the storage mirror writes this table
    mirror_lag_versions: int  # table versions not yet written to storage
    record_index_keys: int | None  # None: the table keeps no record index


@dataclass
class PrunedSlices:
    """The latest file slices a predicate may match, and what the statistics skipped."""

    slices: list[FileSlice]  # ordered by (partition path, file id)
    files_skipped: int  # latest base files skipped in the partitions that kept a slice
    partitions_skipped: int  # partitions none of whose slices is kept
    files_considered: int  # latest base files of the partitions that kept a slice


@dataclass
class KeyLocations:
    """One record-index lookup as columns: key i lives in file group `file_group_of_key[i]` (an
    index into `partition_paths` and `file_ids`; -1: unknown key), written by `instant_of_key[i]`."""

    partition_paths: list[str]
    file_ids: list[str]
    file_group_of_key: list[int]
    instant_of_key: list[str]


@dataclass
class FileGroupKeys:
    """The record keys a commit inserted, updated and deleted in one file group, as key blocks
    (hudi_format/record_key_codec.py); `instant`: the keys' commit when it is not the one sent with."""

    partition_path: str
    file_id: str
    inserted: bytes | None = None
    updated: bytes | None = None
    deleted: bytes | None = None
    instant: str | None = None

    @classmethod
    def of(cls, partition_path: str, file_id: str, inserted=(), updated=(), deleted=(),
           instant: str | None = None) -> FileGroupKeys:
        """From lists of keys (encoded here)."""
        return cls(partition_path, file_id, encode_keys(inserted) if inserted else None,
                   encode_keys(updated) if updated else None, encode_keys(deleted) if deleted else None, instant)


@dataclass
class BaseFileStats:
    """Column statistics (RFC-27) of one base file or log file as hudi_format.parquet_stats encodes them."""

    partition_path: str
    path: str  # relative to the table (its file name is what the server keys them by)
    size: int  # bytes on storage
    uncompressed_size: int
    stats: bytes | None  # parquet_stats.encode(...); None: no columns


@dataclass
class ImportedInstant:
    """One instant of a table's timeline as found on storage, with each state's file."""

    timestamp: str
    action: str  # as requested: compaction, clustering, ... stay so
    state: int  # hudi_format.instant REQUESTED | INFLIGHT | COMPLETED
    completion_time: str | None = None  # COMPLETED only
    requested: bytes | None = None
    inflight: bytes | None = None
    completed: bytes | None = None


@dataclass
class ImportResult:
    imported: list[Instant]  # instants created or moved to a later state
    unchanged: int  # instants the server had in that state (or later) already
    files_added: int  # listed files recorded
    files_removed: int  # live files marked deleted
    files_resized: int  # live files whose size was taken from the listing
