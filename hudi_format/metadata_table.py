"""Hudi's metadata table (RFC-15), the `files` partition, as Hudi 1.2 lays it out for a table of
version 6 (the layout the storage mirror writes): `<base>/.hoodie/metadata`, a merge-on-read table
of its own with timeline layout 1 in `.hoodie/metadata/.hoodie/`.

* `hoodie.properties`: MERGE_ON_READ, HFILE base files, record key `key`, payload class
  HoodieMetadataPayload, name `<table>_metadata` (`metadata_properties`);
* one file group in partition `files`, id `files-0000-0`: a base HFile
  `files-0000-0_<token>_<instant>.hfile` and log files `.files-0000-0_<base instant>.log.<n>_<token>`,
  one more per deltacommit, each one HFile data block (log_file.py) whose header names the instant;
* records: HoodieMetadataRecord in Avro binary (`METADATA_RECORD_SCHEMA`), the HFile cell's row
  its key and the record's `key` field left empty (Hudi stores the key once). Type 1 (key
  `__all_partitions__`): the partitions, each with size 0; type 2 (key: the partition path, `.`
  for a non-partitioned table): file name -> HoodieMetadataFileInfo(size, isDeleted). A reader merges
  the log blocks in order, then the base file under them: per name the later entry wins, a deleted
  entry drops the name (`merge_files_records`; a deletion of a name only the base file lists is
  kept until then);
* the data table's `hoodie.properties` lists `files` in `hoodie.table.metadata.partitions` once the
  metadata table holds it: only then do readers (Java Hudi, hudi-rs) use it instead of listing.

A log block counts only when its instant is a completed instant of the data table (or a metadata
table instant of its own, `00000000000000...`), and the data table's instant completes after its
metadata table deltacommit: a reader never sees a completed data commit whose files are missing.
"""

from __future__ import annotations

import io
import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

from hudi_format import hfile, log_file
from hudi_format.commit_metadata import (
    WRITE_ACTIONS,
    CommitMetadata,
    parse_clean,
    parse_commit,
    parse_restore,
    parse_rollback,
)
from hudi_format.config_keys import (
    ARCHIVELOG_FOLDER,
    BASE_FILE_FORMAT,
    DATABASE_NAME,
    DROP_PARTITION_COLUMNS,
    KEYGENERATOR_CLASS,
    PAYLOAD_CLASS,
    POPULATE_META_FIELDS,
    RECORDKEY_FIELDS,
    TABLE_NAME,
    TABLE_TYPE,
    TABLE_VERSION,
    TIMELINE_LAYOUT_VERSION,
    default_of,
)
from hudi_format.hfile_writer import write_hfile
from hudi_format.table_config import MOR

METADATA_FOLDER = ".hoodie/metadata"
FILES = "files"
FILE_ID = "files-0000-0"
INIT_INSTANT = "00000000000000010"  # the files partition's initial instant (Hudi: 17 digits, suffix 010)
WRITE_TOKEN = "0-0-0"
ALL_PARTITIONS = "__all_partitions__"
NON_PARTITIONED = "."
PARTITION_LIST, FILE_LIST = 1, 2  # record types
PAYLOAD = "org.apache.hudi.metadata.HoodieMetadataPayload"

# (name, type) of the one-field wrapper records of column statistics' bounds
_BOUNDS = [("BooleanWrapper", "boolean"), ("IntWrapper", "int"), ("LongWrapper", "long"),
           ("FloatWrapper", "float"), ("DoubleWrapper", "double"), ("BytesWrapper", "bytes"),
           ("StringWrapper", "string"), ("DateWrapper", "int"),
           ("DecimalWrapper", {"type": "bytes", "logicalType": "decimal", "precision": 30, "scale": 15}),
           ("TimeMicrosWrapper", {"type": "long", "logicalType": "time-micros"}),
           ("TimestampMicrosWrapper", "long"), ("LocalDateWrapper", "int")]


def _opt(name: str, type_) -> dict:
    return {"name": name, "type": ["null", type_], "default": None}


def _metadata_record_schema() -> dict:
    """HoodieMetadataRecord as Hudi 1.2 writes it into the metadata table's files."""
    wrappers: list = [{"type": "record", "name": n, "fields": [{"name": "value", "type": t}]} for n, t in _BOUNDS]
    array = {"type": "record", "name": "ArrayWrapper", "fields": [_opt("wrappedValues", {
        "type": "array", "items": ["null", *(n for n, _ in _BOUNDS)]})]}
    bound_names = [n for n, _ in _BOUNDS] + ["ArrayWrapper"]
    column_stats = {"type": "record", "name": "HoodieMetadataColumnStats", "fields": [
        _opt("fileName", "string"), _opt("columnName", "string"),
        {"name": "minValue", "type": ["null", *wrappers, array], "default": None},
        {"name": "maxValue", "type": ["null", *bound_names], "default": None},
        _opt("valueCount", "long"), _opt("nullCount", "long"), _opt("totalSize", "long"),
        _opt("totalUncompressedSize", "long"), {"name": "isDeleted", "type": "boolean"},
        {"name": "isTightBound", "type": "boolean", "default": False},
        _opt("valueType", {"type": "record", "name": "HoodieValueTypeInfo", "fields": [
            {"name": "typeOrdinal", "type": "int"}, _opt("additionalInfo", "string")]})]}
    record_index = {"type": "record", "name": "HoodieRecordIndexInfo", "fields": [
        _opt("partitionName", "string"), _opt("fileIdHighBits", "long"), _opt("fileIdLowBits", "long"),
        _opt("fileIndex", "int"), _opt("fileId", "string"), _opt("instantTime", "long"),
        {"name": "fileIdEncoding", "type": "int", "default": 0}, _opt("position", "long")]}
    own = _java_strings([
                {"name": "key", "type": "string"},
                {"name": "type", "type": "int"},
                {"name": "filesystemMetadata", "type": ["null", {"type": "map", "values": {
                    "type": "record", "name": "HoodieMetadataFileInfo", "fields": [
                        {"name": "size", "type": "long"}, {"name": "isDeleted", "type": "boolean"}]}}]},
                _opt("BloomFilterMetadata", {"type": "record", "name": "HoodieMetadataBloomFilter", "fields": [
                    {"name": "type", "type": "string"}, {"name": "timestamp", "type": "string"},
                    {"name": "bloomFilter", "type": "bytes"}, {"name": "isDeleted", "type": "boolean"}]}),
                _opt("ColumnStatsMetadata", column_stats),
                _opt("recordIndexMetadata", record_index),
                _opt("SecondaryIndexMetadata", {"type": "record", "name": "HoodieSecondaryIndexInfo", "fields": [
                    {"name": "isDeleted", "type": "boolean"}]}),
            ])
    return {"type": "record", "name": "HoodieMetadataRecord", "namespace": "org.apache.hudi.avro.model",
            "doc": "A record saved within the Metadata Table", "fields": [
                *(_opt(m, "string") for m in ("_hoodie_commit_time", "_hoodie_commit_seqno", "_hoodie_record_key",
                                              "_hoodie_partition_path", "_hoodie_file_name")), *own]}


def _java_strings(node):
    """`node` with every string type and map marked `"avro.java.string": "String"`, as in the schema
    Hudi writes (its generated class's): Hudi's Java readers that take the schema from the files or the
    deltacommit (its compaction of the metadata table) then read map keys as String, not Utf8
    (HoodieMetadataPayload casts them)."""
    if node == "string":
        return {"type": "string", "avro.java.string": "String"}
    if isinstance(node, list):
        return [_java_strings(n) for n in node]
    if not isinstance(node, dict):
        return node
    out = {k: _java_strings(v) if k in ("type", "fields", "items", "values") else v for k, v in node.items()}
    if out.get("type") == "map":
        out["avro.java.string"] = "String"
    return out


METADATA_RECORD_SCHEMA = _metadata_record_schema()
SCHEMA_JSON = json.dumps(METADATA_RECORD_SCHEMA, separators=(",", ":"))
_PARSED: list = []


def _parsed():
    import fastavro

    if not _PARSED:
        _PARSED.append(fastavro.parse_schema(METADATA_RECORD_SCHEMA))
    return _PARSED[0]


# --- records ----------------------------------------------------------------------------------

Entries = dict[str, tuple[int, bool]]  # name -> (size, is deleted)


@dataclass
class FilesRecord:
    key: str  # ALL_PARTITIONS, or a partition's key (`partition_key`)
    entries: Entries = field(default_factory=dict)

    @property
    def record_type(self) -> int:
        return PARTITION_LIST if self.key == ALL_PARTITIONS else FILE_LIST


def partition_key(partition: str) -> str:
    """The record key of a data table partition ('' -> '.')."""
    return partition or NON_PARTITIONED


def partition_of_key(key: str) -> str:
    return "" if key == NON_PARTITIONED else key


def encode_record(rec: FilesRecord) -> bytes:
    import fastavro

    buf = io.BytesIO()
    fastavro.schemaless_writer(buf, _parsed(), {
        "key": "", "type": rec.record_type,
        "filesystemMetadata": {n: {"size": s, "isDeleted": d} for n, (s, d) in sorted(rec.entries.items())}})
    return buf.getvalue()


def decode_record(row: bytes, value: bytes, schema: dict | None = None) -> FilesRecord:
    import fastavro

    parsed = _parsed() if schema is None else fastavro.parse_schema(schema)
    rec: dict = fastavro.schemaless_reader(io.BytesIO(value), parsed)  # type: ignore[assignment]
    fs = rec.get("filesystemMetadata") or {}
    return FilesRecord(row.decode("utf-8"), {n: (int(i["size"]), bool(i["isDeleted"])) for n, i in fs.items()})


def files_records(added: Mapping[str, Mapping[str, int]], deleted: Mapping[str, Iterable[str]] | None = None,
                  new_partitions: Iterable[str] = ()) -> list[FilesRecord]:
    """The records of one change of the listing: per partition the files added (name -> size) and
    deleted; `__all_partitions__` with the partitions added to and `new_partitions`."""
    by_key: dict[str, FilesRecord] = {}
    for partition, files in added.items():
        rec = by_key.setdefault(partition_key(partition), FilesRecord(partition_key(partition)))
        rec.entries.update({n: (int(s), False) for n, s in files.items()})
    for partition, names in (deleted or {}).items():
        rec = by_key.setdefault(partition_key(partition), FilesRecord(partition_key(partition)))
        rec.entries.update({n: (0, True) for n in names})
    partitions = {partition_key(p) for p in [*added, *new_partitions]}
    out = [FilesRecord(ALL_PARTITIONS, {p: (0, False) for p in partitions})] if partitions else []
    return out + [by_key[k] for k in sorted(by_key)]


def merge_files_records(batches: Iterable[Iterable[FilesRecord]], as_hudi: bool = True) -> dict[str, dict[str, int]]:
    """The listing a file slice's records give (the first batch the base file's, the others its log
    blocks' in order): partition ('' when unpartitioned) -> file name -> size. HoodieMetadataPayload's
    combine: the largest size of a name wins (log files grow); a deletion drops the name and itself
    when the older records list it, and stays as a deletion when they do not. `as_hudi`: as Hudi's
    reader merges, the log blocks first, then the base file under them, so a name in the base file
    that a log block adds again and a later one deletes stays listed; else in order (the mirror's
    compaction: the listing as the instants changed it, which also drops such a name)."""
    batches = iter(batches)
    base = _fold([next(batches, [])])
    if as_hudi:
        logs = _fold(batches)
        merged = {k: _combine(base.get(k, {}), logs.get(k, {})) for k in {*base, *logs}}
    else:
        merged = _fold([[FilesRecord(k, v) for k, v in base.items()], *batches])
    partitions = [p for p, (_s, gone) in merged.get(ALL_PARTITIONS, {}).items() if not gone]
    return {partition_of_key(p): {n: s for n, (s, gone) in merged.get(p, {}).items() if not gone}
            for p in partitions}


def _fold(batches: Iterable[Iterable[FilesRecord]]) -> dict[str, Entries]:
    out: dict[str, Entries] = {}
    for batch in batches:
        for rec in batch:
            out[rec.key] = _combine(out.get(rec.key, {}), rec.entries)
    return out


def _combine(older: Entries, newer: Entries) -> Entries:
    out = dict(older)
    for name, (size, gone) in newer.items():
        was = out.get(name)
        if was is None or (gone and was[1]):
            out[name] = (size, gone)
        elif gone:
            del out[name]
        else:
            out[name] = (max(size, was[0]), False)
    return out


# --- files -------------------------------------------------------------------------------------

def _cells(records: Iterable[FilesRecord]) -> list[tuple[bytes, bytes]]:
    return sorted((r.key.encode("utf-8"), encode_record(r)) for r in records)


def base_file(records: Iterable[FilesRecord], now_ms: int | None = None) -> bytes:
    """A base HFile of the files partition (records with distinct keys)."""
    cells = _cells(records)
    info = {b"schema": SCHEMA_JSON.encode(), b"minRecordKey": cells[0][0], b"maxRecordKey": cells[-1][0]}
    return write_hfile(cells, info, now_ms=now_ms)


def log_file_bytes(instant: str, records: Iterable[FilesRecord], now_ms: int | None = None) -> bytes:
    """A log file of one HFile data block with the records, written at `instant`."""
    content = write_hfile(_cells(records), {b"schema": SCHEMA_JSON.encode()}, now_ms=now_ms)
    return log_file.encode_block(log_file.HFILE_DATA, {log_file.INSTANT_TIME: instant, log_file.SCHEMA: SCHEMA_JSON},
                                 content)


def read_base_file(data: bytes, name: str = "HFile") -> list[FilesRecord]:
    return [decode_record(row, value) for row, value in hfile.cells(data, name)]


def read_log_file(data: bytes, name: str = "log file") -> list[tuple[str | None, list[FilesRecord]]]:
    """(instant, records) of the HFile data blocks of a log file."""
    out = []
    for block in log_file.blocks(data, name):
        if block.block_type != log_file.HFILE_DATA:
            continue
        schema = json.loads(block.header[log_file.SCHEMA])
        out.append((block.instant, [decode_record(r, v, schema) for r, v in hfile.cells(block.content, name)]))
    return out


@dataclass(frozen=True)
class GroupFileNames:
    """Names of the files of a metadata-table partition kept in numbered file groups
    (`<prefix><group:04d>-0`: column_stats, record_index, partition_stats); `groups`: how many
    there may be (0: any number)."""

    prefix: str
    groups: int = 0

    def file_id(self, group: int) -> str:
        return f"{self.prefix}{group:04d}-0"

    def base_file_name(self, group: int, instant: str) -> str:
        return f"{self.file_id(group)}_{WRITE_TOKEN}_{instant}.hfile"

    def log_file_name(self, group: int, base_instant: str, version: int) -> str:
        return f".{self.file_id(group)}_{base_instant}.log.{version}_{WRITE_TOKEN}"

    def parse_name(self, name: str) -> tuple[int, str, str, int | None] | None:
        """(group, kind 'base' | 'log', base instant, log version) of a file of the partition; None
        else."""
        stem = name[1:] if name.startswith(".") else name
        if not stem.startswith(self.prefix):
            return None
        number, _, rest = stem[len(self.prefix):].partition("-0_")
        if not number.isdigit() or len(number) != 4:
            return None
        group = int(number)
        if self.groups and group >= self.groups:
            return None
        if not name.startswith(".") and name.endswith(".hfile"):
            return group, "base", name[:-len(".hfile")].rsplit("_", 1)[1], None
        if name.startswith(".") and ".log." in rest:
            instant, _, tail = rest.partition(".log.")
            version = tail.partition("_")[0]
            if instant.isdigit() and version.isdigit():
                return group, "log", instant, int(version)
        return None


def base_file_name(instant: str) -> str:
    return f"{FILE_ID}_{WRITE_TOKEN}_{instant}.hfile"


def log_file_name(base_instant: str, version: int) -> str:
    return f".{FILE_ID}_{base_instant}.log.{version}_{WRITE_TOKEN}"


def parse_files_partition_name(name: str) -> tuple[str, str, int | None] | None:
    """(kind 'base' | 'log', base instant, log version) of a file of the files partition; None else."""
    if name.startswith(f"{FILE_ID}_") and name.endswith(".hfile"):
        return "base", name[:-len(".hfile")].rsplit("_", 1)[1], None
    prefix = f".{FILE_ID}_"
    if name.startswith(prefix) and ".log." in name:
        instant, _, rest = name[len(prefix):].partition(".log.")
        version = rest.partition("_")[0]
        if instant.isdigit() and version.isdigit():
            return "log", instant, int(version)
    return None


def metadata_properties(table_name: str, database: str | None = None) -> dict[str, str]:
    """`.hoodie/metadata/.hoodie/hoodie.properties` of a version-6 data table's metadata table
    (without the checksum, which hudi_format.layout adds)."""
    props = {
        TABLE_NAME: f"{table_name}_metadata",
        TABLE_TYPE: MOR,
        TABLE_VERSION: "6",
        TIMELINE_LAYOUT_VERSION: "1",
        ARCHIVELOG_FOLDER: default_of(ARCHIVELOG_FOLDER),
        BASE_FILE_FORMAT: "HFILE",
        RECORDKEY_FIELDS: "key",
        POPULATE_META_FIELDS: "false",
        PAYLOAD_CLASS: PAYLOAD,
        KEYGENERATOR_CLASS: "org.apache.hudi.metadata.HoodieTableMetadataKeyGenerator",
        DROP_PARTITION_COLUMNS: "false",
    }
    if database:
        props[DATABASE_NAME] = database
    return props


def deltacommit_metadata(path: str, size: int, records: int, prev_commit: str, operation: str,
                         log_version: int | None = None) -> bytes:
    """The completed deltacommit's JSON (HoodieCommitMetadata) for the file it wrote, `path`
    relative to the metadata table's base path."""
    stat = {"fileId": FILE_ID, "path": path, "prevCommit": prev_commit, "numWrites": records,
            "numDeletes": 0, "numUpdateWrites": records if log_version else 0,
            "numInserts": 0 if log_version else records, "totalWriteBytes": size, "totalWriteErrors": 0,
            "partitionPath": FILES, "fileSizeInBytes": size, "totalLogRecords": 0, "totalLogFilesCompacted": 0,
            "totalLogSizeCompacted": 0, "totalUpdatedRecordsCompacted": 0, "totalLogBlocks": 0,
            "totalCorruptLogBlock": 0, "totalRollbackBlocks": 0}
    if log_version is not None:
        stat.update({"logVersion": log_version, "logOffset": 0})
    meta = {"partitionToWriteStats": {FILES: [stat]}, "compacted": False,
            "extraMetadata": {"schema": SCHEMA_JSON}, "operationType": operation}
    return json.dumps(meta, indent=2).encode()


def listing_change(action: str, data: bytes) -> tuple[dict[str, dict[str, int]], dict[str, list[str]]]:
    """(added: partition -> name -> size, deleted: partition -> names) of a completed instant, from its
    metadata, as Hudi's writer turns the instant into files-partition records: the files a write
    action wrote (log files with their size after it), those a clean deleted, those a rollback or a
    restore deleted (and the log files its command blocks went to). Other actions change nothing."""
    from os.path import basename

    added: dict[str, dict[str, int]] = {}
    deleted: dict[str, list[str]] = {}

    def written(meta: CommitMetadata) -> None:
        for s in meta.write_stats:
            added.setdefault(s.partition_path or "", {})[basename(s.path.rstrip("/"))] = s.size

    def removed(names: Mapping[str, list[str]]) -> None:
        for p, ns in names.items():
            deleted.setdefault(p or "", []).extend(ns)

    if action in WRITE_ACTIONS:
        written(parse_commit(data))
    elif action == "clean":
        removed(parse_clean(data))
    elif action == "rollback":
        _rolled, gone, logs = parse_rollback(data)
        removed(gone)
        written(logs)
    elif action == "restore":
        for _rolled, gone, logs in parse_restore(data):
            removed(gone)
            written(logs)
    return added, deleted
