"""Hudi instant metadata (table version 6 JSON, or Avro): commit, clean, rollback, savepoint and restore metadata.

Only what the snapshot needs is read: write stats (file, partition, size), replaced file groups,
and the files cleans and rollbacks deleted. The bytes themselves are stored as given.
"""

from __future__ import annotations

import functools
import json
import os
import re
from dataclasses import dataclass, field
from typing import NamedTuple

import orjson

from hudi_format.errors import InvalidMetadata

WRITE_ACTIONS = ("commit", "deltacommit", "replacecommit")


class WriteStat(NamedTuple):
    """One file a write stat names (a tuple: a commit builds thousands)."""
    partition_path: str
    path: str  # relative to the base path
    file_id: str
    size: int
    prev_commit: str | None


@dataclass
class CommitMetadata:
    write_stats: list[WriteStat] = field(default_factory=list)
    replaced: dict[str, list[str]] = field(default_factory=dict)  # partition -> file ids
    operation_type: str | None = None
    extra: dict = field(default_factory=dict)

    @property
    def partitions(self) -> set[str]:
        return {s.partition_path for s in self.write_stats} | set(self.replaced)


AVRO_MAGIC = b"Obj\x01"


@functools.lru_cache(maxsize=2)
def shared_json(data: bytes) -> object:
    """orjson.loads(data), kept for the next reader of the same bytes: a commit's parse in its
    transaction, then its Avro for storage (avro_metadata.for_storage). Read only, never changed,
    by both."""
    return orjson.loads(data)


def _load(data: bytes | None, what: str, shared: bool = False) -> dict:
    """Instant metadata as a dict: JSON (v6 commits) or an Avro object container file (v6 cleans
    and rollbacks, all of v8). `shared`: the document may be shared_json's (the caller only reads it)."""
    if not data:
        return {}
    if bytes(data[:4]) == AVRO_MAGIC:
        record = _avro_record(data) if type(data) is bytes else _avro_record.__wrapped__(bytes(data))
        if record is None:
            try:  # again, for the error
                list(fastavro_reader(bytes(data)))
            except Exception as exc:  # any decoding failure is bad input
                raise InvalidMetadata(f"{what} metadata is not a valid Avro file: {exc}") from exc
            raise InvalidMetadata(f"{what} metadata Avro file holds no record")
        return record
    try:
        doc = shared_json(data) if shared and type(data) is bytes else orjson.loads(data)
    except orjson.JSONDecodeError:  # what orjson refuses (NaN, integers beyond 64 bits) or its error
        try:
            doc = json.loads(data.decode("utf-8") if isinstance(data, (bytes, bytearray)) else data)
        except (UnicodeDecodeError, ValueError) as exc:
            raise InvalidMetadata(f"{what} metadata is not valid JSON: {exc}") from exc
    if not isinstance(doc, dict):
        raise InvalidMetadata(f"{what} metadata must be a JSON object")
    return doc


def commit_document(data: bytes | None) -> dict:
    """A write instant's metadata as a dict, JSON or Avro (Hudi 1.x's, e.g. caught up from storage);
    InvalidMetadata when it is neither."""
    return _load(data, "commit")


def fastavro_reader(data: bytes):
    import io

    import fastavro

    return fastavro.reader(io.BytesIO(data))


@functools.lru_cache(maxsize=16)
def _avro_record(data: bytes) -> dict | None:
    """The record of an Avro instant file, None when it holds none or is not valid Avro. Cached: a
    catch-up reads one commit's metadata several times (validation, files written, file groups
    touched, the import); the record is read only, never changed, by its readers here."""
    try:
        records = list(fastavro_reader(data))
    except Exception:  # any decoding failure is bad input
        return None
    return records[0] if records and isinstance(records[0], dict) else None


_CONTROL = re.compile("[\x00-\x1f\x7f]")


def confined(path: str, what: str) -> str:
    """A path relative to the table's base path, as given; InvalidMetadata for one that could leave
    it (a `..` segment) or holds a control character."""
    if not isinstance(path, str):
        raise InvalidMetadata(f"{what} must be a string: {path!r}")
    if _CONTROL.search(path):
        raise InvalidMetadata(f"{what} {path!r} contains a control character")
    if ".." in path and ".." in path.replace("\\", "/").split("/"):
        raise InvalidMetadata(f"{what} {path!r} leaves the table's base path ('..' is not allowed)")
    return path


_new_stat = tuple.__new__  # WriteStat(*fields) without its Python-level __new__


def parse_commit(data: bytes | None) -> CommitMetadata:
    """A commit's metadata (a new object each call, its write stats shared: they never change).
    Cached: a catch-up reads one commit several times (validation, file groups touched, the import)."""
    m = _parse_commit(data) if isinstance(data, (bytes, type(None))) else _parse_commit.__wrapped__(data)
    return CommitMetadata(list(m.write_stats), {p: list(ids) for p, ids in m.replaced.items()}, m.operation_type,
                          dict(m.extra))


@functools.lru_cache(maxsize=16)
def _parse_commit(data: bytes | None) -> CommitMetadata:
    doc = _load(data, "commit", shared=True)
    out = CommitMetadata(operation_type=doc.get("operationType"), extra=dict(doc.get("extraMetadata") or {}))
    stats = doc.get("partitionToWriteStats") or {}
    if not isinstance(stats, dict):
        raise InvalidMetadata("partitionToWriteStats must be an object")
    checked: set[str] = set()  # partition paths found confined (a commit names few, each many times)
    out_stats = out.write_stats
    for partition, entries in stats.items():
        confined(partition, "partition path")
        for s in entries or []:
            get = s.get
            path = get("path")
            if not path or path == "null":
                continue  # e.g. a delete-only stat without a file
            # confined(path) where it could fail: a path with no `..` and only printable characters passes
            if type(path) is not str or ".." in path or not path.isprintable():
                confined(path, "write stat path")
            stat_partition = get("partitionPath")
            if stat_partition is None:
                stat_partition = partition
            elif stat_partition not in checked:
                checked.add(confined(stat_partition, "partition path"))
            file_id = get("fileId")
            if not file_id:
                raise InvalidMetadata(f"write stat without fileId: {s}")
            size = get("fileSizeInBytes")
            if size is None:
                size = get("totalWriteBytes", 0)
            prev = get("prevCommit")
            out_stats.append(_new_stat(WriteStat, (
                stat_partition, path, file_id, size if type(size) is int else int(size or 0),
                None if prev is None or prev == "null" else prev)))
    replaced = doc.get("partitionToReplaceFileIds") or {}
    if not isinstance(replaced, dict):
        raise InvalidMetadata("partitionToReplaceFileIds must be an object")
    out.replaced = {confined(p, "partition path"): list(ids or []) for p, ids in replaced.items() if ids}
    return out


def commit_partitions(data: bytes | None) -> set[str]:
    """`parse_commit(data).partitions` without building the write stats (the storage mirror's
    question after each commit)."""
    doc = _load(data, "commit")
    out = {p for p, ids in (doc.get("partitionToReplaceFileIds") or {}).items() if ids}
    for partition, entries in (doc.get("partitionToWriteStats") or {}).items():
        for s in entries or []:
            path = s.get("path")
            if path and path != "null":
                out.add(s.get("partitionPath") if s.get("partitionPath") is not None else partition)
    return out


def _count(value) -> int | None:
    try:
        return None if value is None else int(value)
    except (TypeError, ValueError):
        return None


def log_blocks(data: bytes | None) -> dict[tuple[str, str], int]:
    """(partition, file name) -> the log blocks a commit wrote into each file its write stats name,
    as the stats tell them: a data block when it wrote records (`numWrites`), a delete block when it
    deleted keys (`numDeletes`), one when a stat says neither (at least one block per file
    written). A writer that split its records into several data blocks (Hudi's
    `hoodie.logfile.data.block.max.size`) counts one: the stats do not say."""
    doc = _load(data, "commit")
    out: dict[tuple[str, str], int] = {}
    for partition, entries in (doc.get("partitionToWriteStats") or {}).items():
        for s in entries or []:
            path = s.get("path") if isinstance(s, dict) else None
            if not path or path == "null":
                continue
            writes, deletes = _count(s.get("numWrites")), _count(s.get("numDeletes"))
            n = max(1, (1 if writes else 0) + (1 if deletes else 0))
            key = (s.get("partitionPath") if s.get("partitionPath") is not None else partition,
                   path.strip("/").rpartition("/")[2])
            out[key] = out.get(key, 0) + n
    return out


def _deleted_names(doc: dict, key: str) -> dict[str, list[str]]:
    out: dict[str, list[str]] = {}
    for partition, meta in (doc.get("partitionMetadata") or {}).items():
        names = [os.path.basename(p.rstrip("/")) for p in (meta or {}).get(key) or []]
        if names:
            out[confined((meta or {}).get("partitionPath", partition) or "", "partition path")] = names
    return out


def parse_clean(data: bytes | None) -> dict[str, list[str]]:
    """Partition -> names of the files the clean deleted."""
    return _deleted_names(_load(data, "clean"), "successDeleteFiles")


def clean_retained_from(data: bytes | None) -> str | None:
    """The earliest commit a clean retained (earliestCommitToRetain), None when it names none."""
    return str(_load(data, "clean").get("earliestCommitToRetain") or "") or None


def parse_rollback(data: bytes | None) -> tuple[list[str], dict[str, list[str]], CommitMetadata]:
    """(instants rolled back, partition -> names of deleted files, log files that stay in the table:
    the failed commit's and the ones the rollback's command blocks went to, as write stats)."""
    doc = _load(data, "rollback")
    written = CommitMetadata()
    for partition, meta in (doc.get("partitionMetadata") or {}).items():
        partition = confined((meta or {}).get("partitionPath", partition) or "", "partition path")
        # log files stay in their slice: the rollback's command block (in rollbackLogFiles) tells
        # readers to skip the failed commit's blocks (in logFilesFromFailedCommit)
        logs = {**((meta or {}).get("logFilesFromFailedCommit") or {}), **((meta or {}).get("rollbackLogFiles") or {})}
        for path, size in logs.items():
            name = os.path.basename(path.rstrip("/"))
            rel = f"{partition}/{name}" if partition else name
            written.write_stats.append(WriteStat(partition, rel, "", int(size or 0), None))
    return list(doc.get("commitsRollback") or []), _deleted_names(doc, "successDeleteFiles"), written


def parse_restore(data: bytes | None) -> list[tuple[list[str], dict[str, list[str]], CommitMetadata]]:
    """A restore (HoodieRestoreMetadata): what each of its rollbacks did, as parse_rollback gives it."""
    doc = _load(data, "restore")
    out = []
    for metas in (doc.get("hoodieRestoreMetadata") or {}).values():
        for meta in metas or []:
            out.append(parse_rollback(json.dumps(meta).encode("utf-8")))
    return out


# Avro schemas of Hudi's rollback metadata and plan (hudi-common/src/main/avro/HoodieRollbackMetadata.avsc,
# HoodieRollbackPlan.avsc; as embedded in the rollback files Hudi 0.15 writes): Java reads `.rollback`
# and `.rollback.requested` files with these (TimelineMetadataUtils.deserializeAvroMetadata).
_INSTANT_INFO = {"type": "record", "name": "HoodieInstantInfo", "namespace": "org.apache.hudi.avro.model",
                 "fields": [{"name": "commitTime", "type": "string"}, {"name": "action", "type": "string"}]}
ROLLBACK_METADATA_SCHEMA = {
    "type": "record", "name": "HoodieRollbackMetadata", "namespace": "org.apache.hudi.avro.model",
    "fields": [
        {"name": "startRollbackTime", "type": "string"},
        {"name": "timeTakenInMillis", "type": "long"},
        {"name": "totalFilesDeleted", "type": "int"},
        {"name": "commitsRollback", "type": {"type": "array", "items": "string"}},
        {"name": "partitionMetadata", "type": {"type": "map", "values": {
            "type": "record", "name": "HoodieRollbackPartitionMetadata",
            "fields": [
                {"name": "partitionPath", "type": "string"},
                {"name": "successDeleteFiles", "type": {"type": "array", "items": "string"}},
                {"name": "failedDeleteFiles", "type": {"type": "array", "items": "string"}},
                {"name": "rollbackLogFiles", "type": ["null", {"type": "map", "values": "long"}], "default": None},
                {"name": "logFilesFromFailedCommit", "type": ["null", {"type": "map", "values": "long"}],
                 "default": None},
            ]}}},
        {"name": "version", "type": ["int", "null"], "default": 1},
        {"name": "instantsRollback", "type": {"type": "array", "items": _INSTANT_INFO}, "default": []},
    ],
}
ROLLBACK_PLAN_SCHEMA = {
    "type": "record", "name": "HoodieRollbackPlan", "namespace": "org.apache.hudi.avro.model",
    "fields": [
        {"name": "instantToRollback", "type": ["null", _INSTANT_INFO], "default": None,
         "doc": "Hoodie instant that needs to be rolled back"},
        {"name": "RollbackRequests", "default": None, "type": ["null", {"type": "array", "items": {
            "type": "record", "name": "HoodieRollbackRequest",
            "fields": [
                {"name": "partitionPath", "type": "string"},
                {"name": "fileId", "type": ["null", "string"], "default": None},
                {"name": "latestBaseInstant", "type": ["null", "string"], "default": None},
                {"name": "filesToBeDeleted", "type": {"type": "array", "items": "string"}, "default": []},
                {"name": "logBlocksToBeDeleted", "type": ["null", {"type": "map", "values": "long"}],
                 "default": None},
            ]}}]},
        {"name": "version", "type": ["int", "null"], "default": 1},
    ],
}


def avro_container(schema: dict, record: dict) -> bytes:
    """One record as an Avro object container file, as Hudi writes instant metadata
    (TimelineMetadataUtils.serializeAvroMetadata: DataFileWriter, no codec)."""
    import io

    import fastavro

    buf = io.BytesIO()
    fastavro.writer(buf, fastavro.parse_schema(schema), [record], codec="null")
    return buf.getvalue()


def _full_paths(base_path: str | None, partition: str, names: list[str]) -> list[str]:
    if not base_path:
        return list(names)
    root = base_path.rstrip("/")
    return [f"{root}/{partition}/{n}" if partition else f"{root}/{n}" for n in names]


def rollback_metadata(rollback_ts: str, instant_ts: str, action: str, deleted: dict[str, list[str]],
                      base_path: str | None = None) -> bytes:
    """HoodieRollbackMetadata (Avro, as Hudi writes `<ts>.rollback`) for a rollback the server performs.
    Deleted files are given as paths under `base_path` when it is known (Hudi records full paths)."""
    record = {
        "startRollbackTime": rollback_ts,
        "timeTakenInMillis": 0,
        "totalFilesDeleted": sum(len(v) for v in deleted.values()),
        "commitsRollback": [instant_ts],
        "partitionMetadata": {
            p: {"partitionPath": p, "successDeleteFiles": _full_paths(base_path, p, names),
                "failedDeleteFiles": [], "rollbackLogFiles": {}, "logFilesFromFailedCommit": {}}
            for p, names in deleted.items()
        },
        "version": 1,
        "instantsRollback": [{"commitTime": instant_ts, "action": action}],
    }
    return avro_container(ROLLBACK_METADATA_SCHEMA, record)


def rollback_plan(instant_ts: str, action: str, deleted: dict[str, list[str]],
                  base_path: str | None = None) -> bytes:
    """HoodieRollbackPlan (Avro, as Hudi writes `<ts>.rollback.requested`)."""
    record = {
        "instantToRollback": {"commitTime": instant_ts, "action": action},
        "RollbackRequests": [
            {"partitionPath": p, "fileId": "", "latestBaseInstant": "",
             "filesToBeDeleted": _full_paths(base_path, p, names), "logBlocksToBeDeleted": {}}
            for p, names in deleted.items()
        ],
        "version": 1,
    }
    return avro_container(ROLLBACK_PLAN_SCHEMA, record)


# --- savepoints and restores (Avro, as Hudi writes `<ts>.savepoint`, `<ts>.restore.requested`,
# `<ts>.restore`: hudi-common's HoodieSavepointMetadata, HoodieRestorePlan, HoodieRestoreMetadata) ---

SAVEPOINT_METADATA_SCHEMA = {
    "type": "record", "name": "HoodieSavepointMetadata", "namespace": "org.apache.hudi.avro.model",
    "fields": [
        {"name": "savepointedBy", "type": "string"},
        {"name": "savepointedAt", "type": "long"},
        {"name": "comments", "type": "string"},
        {"name": "partitionMetadata", "type": {"type": "map", "values": {
            "type": "record", "name": "HoodieSavepointPartitionMetadata",
            "fields": [
                {"name": "partitionPath", "type": "string"},
                {"name": "savepointDataFile", "type": {"type": "array", "items": "string"}},
            ]}}},
        {"name": "version", "type": ["int", "null"], "default": 1},
    ],
}
RESTORE_PLAN_SCHEMA = {
    "type": "record", "name": "HoodieRestorePlan", "namespace": "org.apache.hudi.avro.model",
    "fields": [
        {"name": "instantsToRollback", "type": {"type": "array", "items": _INSTANT_INFO}, "default": []},
        {"name": "version", "type": ["int", "null"], "default": 2},
        {"name": "savepointToRestoreTimestamp", "type": ["string", "null"], "default": None},
    ],
}
RESTORE_METADATA_SCHEMA = {
    "type": "record", "name": "HoodieRestoreMetadata", "namespace": "org.apache.hudi.avro.model",
    "fields": [
        {"name": "startRestoreTime", "type": "string"},
        {"name": "timeTakenInMillis", "type": "long"},
        {"name": "instantsToRollback", "type": {"type": "array", "items": "string"}},
        {"name": "hoodieRestoreMetadata", "type": {"type": "map", "values": {
            "type": "array", "items": ["null", ROLLBACK_METADATA_SCHEMA]}}},
        {"name": "version", "type": ["int", "null"], "default": 1},
        {"name": "restoreInstantInfo", "type": {"type": "array", "items": "HoodieInstantInfo"}, "default": []},
        {"name": "extraMetadata", "type": ["null", {"type": "map", "values": "string"}], "default": None},
    ],
}


def savepoint_metadata(files: dict[str, list[str]], by: str, at_ms: int, comments: str = "") -> bytes:
    """HoodieSavepointMetadata: per partition the file names (base and log) of its latest file
    slices as of the savepointed commit."""
    record = {"savepointedBy": by, "savepointedAt": at_ms, "comments": comments,
              "partitionMetadata": {p: {"partitionPath": p, "savepointDataFile": sorted(names)}
                                    for p, names in files.items()},
              "version": 1}
    return avro_container(SAVEPOINT_METADATA_SCHEMA, record)


def parse_savepoint(data: bytes | None) -> dict[str, list[str]]:
    """Partition -> names of the files a savepoint holds (its savepointDataFile lists)."""
    out: dict[str, list[str]] = {}
    for partition, meta in (_load(data, "savepoint").get("partitionMetadata") or {}).items():
        names = [os.path.basename(str(p).rstrip("/")) for p in (meta or {}).get("savepointDataFile") or []]
        out[confined((meta or {}).get("partitionPath", partition) or "", "partition path")] = names
    return out


def restore_plan(target: str, instants: list[tuple[str, str]]) -> bytes:
    """HoodieRestorePlan: the savepoint restored to and the instants (time, action) it rolls back."""
    record = {"instantsToRollback": [{"commitTime": t, "action": a} for t, a in instants], "version": 2,
              "savepointToRestoreTimestamp": target}
    return avro_container(RESTORE_PLAN_SCHEMA, record)


def restore_target(data: bytes | None) -> str | None:
    """The instant a restore plan restores to (savepointToRestoreTimestamp), None when it names none."""
    target = _load(data, "restore plan").get("savepointToRestoreTimestamp")
    if target is not None and not isinstance(target, str):
        raise InvalidMetadata(f"savepointToRestoreTimestamp must be a string: {target!r}")
    return target or None


def restore_metadata(restore_ts: str, rolled: list[tuple[str, str]], deleted: dict[str, dict[str, list[str]]],
                     base_path: str | None = None) -> bytes:
    """HoodieRestoreMetadata for a restore the server performs: per rolled-back instant (time,
    action) one HoodieRollbackMetadata naming the files it deleted (`deleted`: instant -> partition
    -> names)."""
    per_instant = {}
    for ts, action in rolled:
        files = deleted.get(ts, {})
        per_instant[ts] = [{
            "startRollbackTime": restore_ts, "timeTakenInMillis": 0,
            "totalFilesDeleted": sum(len(v) for v in files.values()), "commitsRollback": [ts],
            "partitionMetadata": {
                p: {"partitionPath": p, "successDeleteFiles": _full_paths(base_path, p, names),
                    "failedDeleteFiles": [], "rollbackLogFiles": {}, "logFilesFromFailedCommit": {}}
                for p, names in files.items()},
            "version": 1, "instantsRollback": [{"commitTime": ts, "action": action}]}]
    record = {"startRestoreTime": restore_ts, "timeTakenInMillis": 0, "instantsToRollback": [t for t, _ in rolled],
              "hoodieRestoreMetadata": per_instant, "version": 1,
              "restoreInstantInfo": [{"commitTime": t, "action": a} for t, a in rolled], "extraMetadata": None}
    return avro_container(RESTORE_METADATA_SCHEMA, record)


def restored_instants(data: bytes | None) -> list[str]:
    """The instant times a restore rolled back (instantsToRollback, else its rollbacks' own lists)."""
    doc = _load(data, "restore")
    listed = [str(t) for t in doc.get("instantsToRollback") or []]
    if listed:
        return listed
    return [t for rb in parse_restore(data) for t in rb[0]]


# HoodieCompactionPlan (hudi-common/src/main/avro/HoodieCompactionPlan.avsc; fields Hudi's reader
# defaults are left out): `<ts>.compaction.requested` holds it. Version 2: the operations name their
# files by name (relative to the partition), not by path.
COMPACTION_PLAN_SCHEMA = {
    "type": "record", "name": "HoodieCompactionPlan", "namespace": "org.apache.hudi.avro.model",
    "fields": [
        {"name": "operations", "default": None, "type": ["null", {"type": "array", "items": {
            "type": "record", "name": "HoodieCompactionOperation",
            "fields": [
                {"name": "baseInstantTime", "type": ["null", "string"]},
                {"name": "deltaFilePaths", "type": ["null", {"type": "array", "items": "string"}], "default": None},
                {"name": "dataFilePath", "type": ["null", "string"], "default": None},
                {"name": "fileId", "type": ["null", "string"]},
                {"name": "partitionPath", "type": ["null", "string"], "default": None},
                {"name": "metrics", "type": ["null", {"type": "map", "values": "double"}], "default": None},
                {"name": "bootstrapFilePath", "type": ["null", "string"], "default": None},
            ]}}]},
        {"name": "extraMetadata", "type": ["null", {"type": "map", "values": "string"}], "default": None},
        {"name": "version", "type": ["int", "null"], "default": 1},
    ],
}
COMPACTION_PLAN_VERSION = 2


@dataclass
class CompactionOperation:
    partition_path: str
    file_id: str
    base_instant: str
    base_file: str | None  # file name
    log_files: list[str]  # file names, in order
    base_size: int = 0  # bytes (the plan's metrics, as Hudi's)
    log_size: int = 0  # bytes of the log files


def compaction_plan(operations: list[CompactionOperation]) -> bytes:
    """HoodieCompactionPlan (Avro, as Hudi writes `<ts>.compaction.requested`)."""
    return avro_container(COMPACTION_PLAN_SCHEMA, _compaction_plan_doc(operations))


MAX_PARQUET_FILE_SIZE = 120 * 1024 * 1024  # Hudi's hoodie.parquet.max.file.size (a slice without base file)


def _plan_metrics(o: CompactionOperation) -> dict[str, float]:
    """An operation's metrics as Hudi's CompactionStrategy captures them (whole MB); Hudi 1.2's
    executor of a compaction (FileGroupReaderBasedMergeHandle) reads TOTAL_LOG_FILES_SIZE."""
    read_mb = (o.base_size + o.log_size) // (1024 * 1024)
    write_mb = (o.base_size if o.base_file else MAX_PARQUET_FILE_SIZE) // (1024 * 1024)
    return {"TOTAL_LOG_FILES": float(len(o.log_files)), "TOTAL_IO_MB": float(read_mb + write_mb),
            "TOTAL_IO_READ_MB": float(read_mb), "TOTAL_LOG_FILES_SIZE": float(o.log_size),
            "TOTAL_IO_WRITE_MB": float(write_mb)}


def _compaction_plan_doc(operations: list[CompactionOperation]) -> dict:
    ops = [{"baseInstantTime": o.base_instant, "deltaFilePaths": list(o.log_files), "dataFilePath": o.base_file,
            "fileId": o.file_id, "partitionPath": o.partition_path,
            "metrics": _plan_metrics(o), "bootstrapFilePath": None}
           for o in operations]
    return {"operations": ops, "extraMetadata": None, "version": COMPACTION_PLAN_VERSION}


# A log compaction's plan (Hudi's HoodieLogCompactionPlanGenerator): the compaction plan's fields
# plus its execution strategy and preserveHoodieMetadata (Hudi 1.2's plan schema).
LOG_COMPACTION_PLAN_SCHEMA = {**COMPACTION_PLAN_SCHEMA, "fields": [*COMPACTION_PLAN_SCHEMA["fields"], {
    "name": "strategy", "default": None, "type": ["null", {
        "type": "record", "name": "HoodieCompactionStrategy", "fields": [
            {"name": "compactorClassName", "type": ["null", "string"], "default": None},
            {"name": "strategyParams", "type": ["null", {"type": "map", "values": "string"}], "default": None},
            {"name": "version", "type": ["int", "null"], "default": 1}]}]},
    {"name": "preserveHoodieMetadata", "type": ["boolean", "null"], "default": False}]}
LOG_COMPACTION_EXECUTOR = "org.apache.hudi.table.action.compact.LogCompactionExecutionHelper"


def log_compaction_plan(operations: list[CompactionOperation]) -> bytes:
    """HoodieCompactionPlan of a log compaction (`<ts>.logcompaction.requested`): as a compaction's,
    with the strategy naming Hudi's LogCompactionExecutionHelper and preserveHoodieMetadata true."""
    doc = _compaction_plan_doc(operations)
    doc.update({"extraMetadata": {}, "strategy": {"compactorClassName": LOG_COMPACTION_EXECUTOR,
                                                  "strategyParams": {}, "version": 1},
                "preserveHoodieMetadata": True})
    return avro_container(LOG_COMPACTION_PLAN_SCHEMA, doc)


def parse_compaction_plan(data: bytes | None) -> list[CompactionOperation]:
    """The operations of a HoodieCompactionPlan (Avro); file paths reduced to names."""
    record = _avro_record(data or b"")
    if record is None:
        raise InvalidMetadata("a compaction plan must be a HoodieCompactionPlan (Avro)")
    out = []
    for o in record.get("operations") or []:
        data_file = o.get("dataFilePath")
        out.append(CompactionOperation(o.get("partitionPath") or "", o["fileId"], o["baseInstantTime"],
                                       data_file.rsplit("/", 1)[-1] if data_file else None,
                                       [p.rsplit("/", 1)[-1] for p in o.get("deltaFilePaths") or []]))
    return out


# HoodieRequestedReplaceMetadata with a HoodieClusteringPlan (hudi-common/src/main/avro; the schema of
# Hudi 0.15, table version 6): `<ts>.replacecommit.requested` of a clustering holds it. Slices name
# their files by path, as Hudi's planner writes them.
_STR = ["null", "string"]
_STR_MAP = ["null", {"type": "map", "values": "string"}]
_SLICE_INFO = {"type": "record", "name": "HoodieSliceInfo", "fields": [
    {"name": "dataFilePath", "type": _STR, "default": None},
    {"name": "deltaFilePaths", "type": ["null", {"type": "array", "items": "string"}], "default": None},
    {"name": "fileId", "type": _STR},
    {"name": "partitionPath", "type": _STR, "default": None},
    {"name": "bootstrapFilePath", "type": _STR, "default": None},
    {"name": "version", "type": ["int", "null"], "default": 1}]}
_CLUSTERING_GROUP = {"type": "record", "name": "HoodieClusteringGroup", "fields": [
    {"name": "slices", "type": ["null", {"type": "array", "items": _SLICE_INFO}], "default": None},
    {"name": "metrics", "type": ["null", {"type": "map", "values": "double"}], "default": None},
    {"name": "numOutputFileGroups", "type": ["int", "null"], "default": 1},
    {"name": "extraMetadata", "type": _STR_MAP, "default": None},
    {"name": "version", "type": ["int", "null"], "default": 1}]}
_CLUSTERING_STRATEGY = {"type": "record", "name": "HoodieClusteringStrategy", "fields": [
    {"name": "strategyClassName", "type": _STR, "default": None},
    {"name": "strategyParams", "type": _STR_MAP, "default": None},
    {"name": "version", "type": ["int", "null"], "default": 1}]}
REQUESTED_REPLACE_SCHEMA = {
    "type": "record", "name": "HoodieRequestedReplaceMetadata", "namespace": "org.apache.hudi.avro.model",
    "fields": [
        {"name": "operationType", "type": _STR, "default": None},
        {"name": "clusteringPlan", "default": None, "type": ["null", {
            "type": "record", "name": "HoodieClusteringPlan", "fields": [
                {"name": "inputGroups", "type": ["null", {"type": "array", "items": _CLUSTERING_GROUP}],
                 "default": None},
                {"name": "strategy", "type": ["null", _CLUSTERING_STRATEGY], "default": None},
                {"name": "extraMetadata", "type": _STR_MAP, "default": None},
                {"name": "version", "type": ["int", "null"], "default": 1},
                {"name": "preserveHoodieMetadata", "type": ["null", "boolean"], "default": None}]}]},
        {"name": "extraMetadata", "type": _STR_MAP, "default": None},
        {"name": "version", "type": ["int", "null"], "default": 1},
    ],
}
CLUSTER = "CLUSTER"  # the operationType of a clustering
SORT_AND_SIZE_STRATEGY = "org.apache.hudi.client.clustering.run.strategy.SparkSortAndSizeExecutionStrategy"


@dataclass
class ClusteringSlice:
    partition_path: str
    file_id: str
    base_file: str | None  # path as the plan names it (a name once parsed)
    log_files: list[str]
    size: int = 0


@dataclass
class ClusteringGroup:
    slices: list[ClusteringSlice]
    output_file_groups: int = 1


@dataclass
class ClusteringPlan:
    groups: list[ClusteringGroup]
    sort_columns: list[str] = field(default_factory=list)


def clustering_plan(plan: ClusteringPlan, sort_key: str) -> bytes:
    """HoodieRequestedReplaceMetadata (Avro) of a clustering; `sort_key`: the strategy parameter's
    name of the sort columns (hoodie.clustering.plan.strategy.sort.columns)."""
    groups = [{"slices": [{"dataFilePath": s.base_file, "deltaFilePaths": list(s.log_files), "fileId": s.file_id,
                           "partitionPath": s.partition_path, "bootstrapFilePath": None, "version": 1}
                          for s in g.slices],
               "metrics": {"TOTAL_FILE_SIZE": float(sum(s.size for s in g.slices)),
                           "NUM_FILE_SLICES": float(len(g.slices))},
               "numOutputFileGroups": g.output_file_groups, "extraMetadata": None, "version": 1}
              for g in plan.groups]
    params = {sort_key: ",".join(plan.sort_columns)} if plan.sort_columns else None
    record = {"operationType": CLUSTER, "extraMetadata": None, "version": 1, "clusteringPlan": {
        "inputGroups": groups, "extraMetadata": None, "version": 1, "preserveHoodieMetadata": True,
        "strategy": {"strategyClassName": SORT_AND_SIZE_STRATEGY, "strategyParams": params, "version": 1}}}
    return avro_container(REQUESTED_REPLACE_SCHEMA, record)


def parse_clustering_plan(data: bytes | None, sort_key: str) -> ClusteringPlan:
    """The groups of a clustering's HoodieRequestedReplaceMetadata (Avro); file paths reduced to names."""
    record = _avro_record(data or b"")
    plan = (record or {}).get("clusteringPlan")
    if record is None or (record.get("operationType") or "").upper() != CLUSTER or plan is None:
        raise InvalidMetadata("a clustering plan must be a HoodieRequestedReplaceMetadata (Avro) with "
                              "operationType CLUSTER and a clusteringPlan")
    groups = []
    for g in plan.get("inputGroups") or []:
        slices = [ClusteringSlice(s.get("partitionPath") or "", s["fileId"],
                                  s["dataFilePath"].rsplit("/", 1)[-1] if s.get("dataFilePath") else None,
                                  [p.rsplit("/", 1)[-1] for p in s.get("deltaFilePaths") or []])
                  for s in g.get("slices") or []]
        groups.append(ClusteringGroup(slices, max(1, int(g.get("numOutputFileGroups") or 1))))
    params = (plan.get("strategy") or {}).get("strategyParams") or {}
    sort = [c.strip() for c in (params.get(sort_key) or "").split(",") if c.strip()]
    return ClusteringPlan(groups, sort)
