"""Hudi's format objects (hudi_format) as the Hudi extension's Thrift structs and back: table
configs, instants, files and file slices. Used by the server's Hudi handler and the CLI."""

from __future__ import annotations

from hudi_format.file_slice import FileInfo
from hudi_format.file_slice import FileSlice as FormatSlice
from hudi_format.instant import Instant as FormatInstant
from hudi_format.table_config import HudiTableConfig as FormatConfig
from thrift_idl.hive_metastore.ttypes import InvalidObjectException
from thrift_idl.hudi_metastore.ttypes import (
    FileSlice,
    HudiFile,
    HudiTableConfig,
    HudiTableType,
    Instant,
    InstantState,
)


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
