"""Hudi's format objects (hudi_format) and the client's values (client/values.py) as the Hudi
extension's Thrift structs and back: table configs, instants, files and file slices, statistics.
The client's edge (HudiCatalog); the server's Hudi handler uses the same conversions."""

from __future__ import annotations

import json
import math
from base64 import b64decode

from hudi_format.file_slice import FileInfo
from hudi_format.file_slice import FileSlice as FormatSlice
from hudi_format.instant import Instant as FormatInstant
from hudi_format.table_config import HudiTableConfig as FormatConfig
from thrift_idl.hive_metastore.ttypes import FieldSchema, InvalidObjectException, Table
from thrift_idl.hudi_metastore.ttypes import (
    ColumnRange,
    ColumnValue,
    FileColumnStats,
    FileGroupKeys,
    FileSlice,
    HudiFile,
    HudiTableConfig,
    HudiTableStats,
    HudiTableType,
    ImportedInstant,
    ImportResult,
    Instant,
    InstantState,
    PrunedFileSlices,
    RecordKeyLocations,
)

from . import values


def optional(text: str | None) -> str | None:
    """Empty strings on the wire mean "not given"."""
    return text if text else None


def config_to_thrift(cfg: FormatConfig) -> HudiTableConfig:
    return HudiTableConfig(
        dbName=cfg.db_name, tableName=cfg.table_name,
        tableType=HudiTableType._NAMES_TO_VALUES[cfg.table_type],
        recordKeyFields=list(cfg.record_key_fields), partitionFields=list(cfg.partition_fields),
        precombineField=cfg.precombine_field, keyGenerator=cfg.key_generator,
        hiveStylePartitioning=bool(cfg.hive_style_partitioning),
        urlEncodePartitioning=bool(cfg.url_encode_partitioning),
        tableVersion=cfg.table_version, basePath=cfg.base_path, avroSchema=cfg.avro_schema,
        properties=dict(cfg.properties or {}))


def config_from_thrift(t: HudiTableConfig | None) -> FormatConfig:
    if t is None:
        raise InvalidObjectException("register_hudi_table needs a config")
    table_type = HudiTableType._VALUES_TO_NAMES.get(t.tableType) if t.tableType is not None else None
    if table_type is None:
        raise InvalidObjectException(f"Hudi table type must be COPY_ON_WRITE (1) or MERGE_ON_READ (2), "
                                     f"not {t.tableType!r}")
    return FormatConfig(
        db_name=t.dbName or "", table_name=t.tableName or "", table_type=table_type,
        record_key_fields=list(t.recordKeyFields or []), partition_fields=list(t.partitionFields or []),
        precombine_field=optional(t.precombineField), key_generator=optional(t.keyGenerator),
        hive_style_partitioning=bool(t.hiveStylePartitioning),
        url_encode_partitioning=bool(t.urlEncodePartitioning),
        table_version=6 if t.tableVersion is None else t.tableVersion,
        base_path=optional(t.basePath), avro_schema=optional(t.avroSchema), properties=dict(t.properties or {}))


def file_to_thrift(f: FileInfo) -> HudiFile:
    # positional: partitionPath, fileId, name, size, baseInstant, isLog, logVersion, commitTime, path
    return HudiFile(f.partition_path, f.file_id, f.name, f.size, f.base_instant, bool(f.is_log), f.log_version,
                    f.commit_ts, f.path)


def file_from_thrift(f: HudiFile | None) -> FileInfo:
    if f is None or not f.name:
        raise InvalidObjectException("A listed file needs a name")
    return FileInfo(partition_path=(f.partitionPath or "").strip("/"), file_id=f.fileId or "", name=f.name,
                    size=int(f.size or 0), base_instant=f.baseInstant or "", is_log=bool(f.isLog),
                    log_version=f.logVersion, commit_ts=f.commitTime or "")


def slice_to_thrift(s: FormatSlice) -> FileSlice:
    # positional: partitionPath, fileId, baseInstant, baseFile, logFiles
    base = s.base_file
    return FileSlice(s.partition_path, s.file_id, s.base_instant, None if base is None else file_to_thrift(base),
                     list(map(file_to_thrift, s.log_files)))


def instant_to_thrift(i: FormatInstant) -> Instant:
    return Instant(timestamp=i.ts, action=i.action, state=InstantState._NAMES_TO_VALUES[i.state],
                   completionTime=i.completion_ts, requestedAtMs=i.requested_ms,
                   heartbeatAtMs=i.heartbeat_ms, heartbeatTimeoutSec=i.heartbeat_timeout_s)


def column_stats_struct(partition_path: str, path: str, size: int, uncompressed: int, blob: bytes | None):
    """A FileColumnStats struct of one file's statistics encoded by hudi_format.parquet_stats."""
    columns = [ColumnRange(columnName=c["column"], minValue=_column_value(c.get("min")),
                           maxValue=_column_value(c.get("max")),
                           nullCount=c.get("nulls"), valueCount=c.get("values"), totalSize=c.get("size"),
                           totalUncompressedSize=c.get("usize"))
               for c in json.loads(blob or b"[]")]
    return FileColumnStats(partitionPath=partition_path, fileName=path.rsplit("/", 1)[-1], totalSize=size,
                           totalUncompressedSize=uncompressed, columns=columns)


def _column_value(tagged: dict | None):
    if not tagged:
        return None
    if "i" in tagged:
        return ColumnValue(intValue=tagged["i"])
    if "d" in tagged:
        return ColumnValue(doubleValue=float(tagged["d"]) if tagged["d"] != "NaN" else math.nan)
    if "dec" in tagged:
        return ColumnValue(decimalValue=tagged["dec"])
    if "s" in tagged:
        return ColumnValue(stringValue=tagged["s"])
    return ColumnValue(binaryValue=b64decode(tagged["b"]))


# --------------------------------------------------------------------------- the server's answers


def instant_from_thrift(i: Instant) -> FormatInstant:
    return FormatInstant(ts=i.timestamp, action=i.action, state=InstantState._VALUES_TO_NAMES[i.state],
                         completion_ts=i.completionTime, requested_ms=i.requestedAtMs or 0,
                         heartbeat_ms=i.heartbeatAtMs or 0, heartbeat_timeout_s=i.heartbeatTimeoutSec or 0)


def file_from_answer(f: HudiFile) -> FileInfo:
    """A file as the server answers it (with its full path; None where the server does not place files)."""
    return FileInfo(partition_path=f.partitionPath or "", file_id=f.fileId or "", name=f.name or "",
                    size=f.size or 0, base_instant=f.baseInstant or "", is_log=bool(f.isLog),
                    log_version=f.logVersion, commit_ts=f.commitTime or "", path=f.path or None)


def slice_from_answer(s: FileSlice) -> FormatSlice:
    return FormatSlice(s.partitionPath or "", s.fileId or "", s.baseInstant or "",
                       None if s.baseFile is None else file_from_answer(s.baseFile),
                       [file_from_answer(f) for f in s.logFiles or []])


def pruned_from_answer(p: PrunedFileSlices) -> values.PrunedSlices:
    """Every slice of a prune_file_slices answer, compact or not, ordered by (partition, file id)
    as the server orders them."""
    out = [slice_from_answer(s) for s in p.slices or []]
    c = p.baseFiles
    if c is not None:
        out += [FormatSlice(part, fid, bi, FileInfo(part, fid, name, size, bi, False, None, ct, path or None), [])
                for part, fid, bi, name, size, ct, path in zip(c.partitionPaths, c.fileIds, c.baseInstants, c.names,
                                                               c.sizes, c.commitTimes, c.paths, strict=True)]
        out.sort(key=lambda s: (s.partition_path, s.file_id))
    return values.PrunedSlices(out, p.filesSkipped or 0, p.partitionsSkipped or 0, p.filesConsidered or 0)


def stats_from_thrift(st: HudiTableStats) -> values.TableStats:
    last = st.lastInstant
    return values.TableStats(partitions=st.partitionCount, files=st.fileCount, total_size_bytes=st.totalSizeBytes,
                             last_instant=None if last is None else instant_from_thrift(last),
                             table_version=st.tableVersion, mirrored=bool(st.mirrored),
                             mirror_lag_versions=st.mirrorLagVersions, record_index_keys=st.recordIndexKeys)


def key_locations_from_thrift(r: RecordKeyLocations) -> values.KeyLocations:
    return values.KeyLocations(r.partitionPaths, r.fileIds, r.fileGroupOfKey, r.instantOfKey)


def import_result_from_thrift(r: ImportResult) -> values.ImportResult:
    return values.ImportResult([instant_from_thrift(i) for i in r.imported or []], r.unchanged or 0,
                               r.filesAdded or 0, r.filesRemoved or 0, r.filesResized or 0)


def _columns(cols) -> list[values.Column]:
    return [values.Column(c.name, c.type, c.comment) for c in cols or []]


def table_from_thrift(t: Table) -> values.HiveTable:
    sd = t.sd
    return values.HiveTable(db=t.dbName, name=t.tableName, table_type=t.tableType,
                            location=sd.location if sd is not None else None,
                            columns=_columns(sd.cols if sd is not None else None),
                            partition_keys=_columns(t.partitionKeys), parameters=dict(t.parameters or {}),
                            owner=t.owner, create_time=t.createTime or None,
                            input_format=sd.inputFormat if sd is not None else None,
                            output_format=sd.outputFormat if sd is not None else None,
                            serde=sd.serdeInfo.serializationLib if sd is not None and sd.serdeInfo else None,
                            view_text=t.viewExpandedText or t.viewOriginalText or None)


# Hive's FileUtils.escapePathName: the characters a partition name writes as %XX
_ESCAPED = set('"#%\'*/:=?\\\x7f{[]^') | {chr(c) for c in range(1, 32)}


def _escape_path_name(text: str) -> str:
    return "".join(f"%{ord(ch):02X}" if ch in _ESCAPED else ch for ch in text) if text else \
        "__HIVE_DEFAULT_PARTITION__"


def partition_name(keys: list[str], values: list[str]) -> str:
    """Hive's name of a partition (`k1=v1/k2=v2`, names and values escaped)."""
    return "/".join(f"{_escape_path_name(k.lower())}={_escape_path_name(v)}" for k, v in zip(keys, values))


def columns_to_thrift(cols) -> list[FieldSchema]:
    """Columns (values.Column, or (name, type[, comment]) tuples) as FieldSchema structs."""
    return [FieldSchema(c.name, c.type, c.comment) if isinstance(c, values.Column)
            else FieldSchema(c[0], c[1], c[2] if len(c) > 2 else None) for c in cols]


# --------------------------------------------------------------------------- the client's requests


def keys_to_thrift(k: values.FileGroupKeys) -> FileGroupKeys:
    return FileGroupKeys(partitionPath=k.partition_path, fileId=k.file_id, inserted=k.inserted, updated=k.updated,
                         deleted=k.deleted, instant=k.instant)


def file_stats_to_thrift(s: values.BaseFileStats) -> FileColumnStats:
    return column_stats_struct(s.partition_path, s.path, s.size, s.uncompressed_size, s.stats)


def imported_instant_to_thrift(i: values.ImportedInstant) -> ImportedInstant:
    return ImportedInstant(timestamp=i.timestamp, action=i.action, state=i.state, completionTime=i.completion_time,
                           requestedMetadata=i.requested, inflightMetadata=i.inflight,
                           completedMetadata=i.completed)
