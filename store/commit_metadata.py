"""Hudi instant metadata (table version 6 JSON): commit, clean and rollback metadata.

Only what the snapshot needs is read: write stats (file, partition, size), replaced file groups,
and the files cleans and rollbacks deleted. The bytes themselves are stored as given.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field

from thrift_idl.hive_metastore.ttypes import InvalidObjectException

WRITE_ACTIONS = ("commit", "deltacommit", "replacecommit")


@dataclass
class WriteStat:
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


def _load(data: bytes | None, what: str) -> dict:
    """Instant metadata as a dict: JSON (v6 commits) or an Avro object container file (v6 cleans
    and rollbacks, all of v8)."""
    if not data:
        return {}
    if bytes(data[:4]) == AVRO_MAGIC:
        import io

        import fastavro

        try:
            records = list(fastavro.reader(io.BytesIO(bytes(data))))
        except Exception as exc:  # noqa: BLE001 - any decoding failure is bad input
            raise InvalidObjectException(f"{what} metadata is not a valid Avro file: {exc}")
        if not records or not isinstance(records[0], dict):
            raise InvalidObjectException(f"{what} metadata Avro file holds no record")
        return records[0]
    try:
        doc = json.loads(data.decode("utf-8") if isinstance(data, (bytes, bytearray)) else data)
    except (UnicodeDecodeError, ValueError) as exc:
        raise InvalidObjectException(f"{what} metadata is not valid JSON: {exc}")
    if not isinstance(doc, dict):
        raise InvalidObjectException(f"{what} metadata must be a JSON object")
    return doc


def parse_commit(data: bytes | None) -> CommitMetadata:
    doc = _load(data, "commit")
    out = CommitMetadata(operation_type=doc.get("operationType"), extra=doc.get("extraMetadata") or {})
    stats = doc.get("partitionToWriteStats") or {}
    if not isinstance(stats, dict):
        raise InvalidObjectException("partitionToWriteStats must be an object")
    for partition, entries in stats.items():
        for s in entries or []:
            path = s.get("path")
            if not path or path == "null":
                continue  # e.g. a delete-only stat without a file
            file_id = s.get("fileId")
            if not file_id:
                raise InvalidObjectException(f"write stat without fileId: {s}")
            size = s.get("fileSizeInBytes")
            if size is None:
                size = s.get("totalWriteBytes", 0)
            prev = s.get("prevCommit")
            out.write_stats.append(WriteStat(
                partition_path=s.get("partitionPath") if s.get("partitionPath") is not None else partition,
                path=path, file_id=file_id, size=int(size or 0),
                prev_commit=None if prev in (None, "null") else prev))
    replaced = doc.get("partitionToReplaceFileIds") or {}
    if not isinstance(replaced, dict):
        raise InvalidObjectException("partitionToReplaceFileIds must be an object")
    out.replaced = {p: list(ids or []) for p, ids in replaced.items() if ids}
    return out


def _deleted_names(doc: dict, key: str) -> dict[str, list[str]]:
    out: dict[str, list[str]] = {}
    for partition, meta in (doc.get("partitionMetadata") or {}).items():
        names = [os.path.basename(p.rstrip("/")) for p in (meta or {}).get(key) or []]
        if names:
            out[(meta or {}).get("partitionPath", partition) or ""] = names
    return out


def parse_clean(data: bytes | None) -> dict[str, list[str]]:
    """Partition -> names of the files the clean deleted."""
    return _deleted_names(_load(data, "clean"), "successDeleteFiles")


def parse_rollback(data: bytes | None) -> tuple[list[str], dict[str, list[str]], CommitMetadata]:
    """(instants rolled back, partition -> names of deleted files, log files that stay in the table:
    the failed commit's and the ones the rollback's command blocks went to, as write stats)."""
    doc = _load(data, "rollback")
    written = CommitMetadata()
    for partition, meta in (doc.get("partitionMetadata") or {}).items():
        partition = (meta or {}).get("partitionPath", partition) or ""
        # log files stay in their slice: the rollback's command block (in rollbackLogFiles) tells
        # readers to skip the failed commit's blocks (in logFilesFromFailedCommit)
        logs = {**((meta or {}).get("logFilesFromFailedCommit") or {}), **((meta or {}).get("rollbackLogFiles") or {})}
        for path, size in logs.items():
            name = os.path.basename(path.rstrip("/"))
            rel = f"{partition}/{name}" if partition else name
            written.write_stats.append(WriteStat(partition, rel, "", int(size or 0), None))
    return list(doc.get("commitsRollback") or []), _deleted_names(doc, "successDeleteFiles"), written


def rollback_metadata(rollback_ts: str, instant_ts: str, action: str, deleted: dict[str, list[str]]) -> bytes:
    """HoodieRollbackMetadata (v6 JSON) for a rollback the server performs."""
    doc = {
        "startRollbackTime": rollback_ts,
        "timeTakenInMillis": 0,
        "totalFilesDeleted": sum(len(v) for v in deleted.values()),
        "commitsRollback": [instant_ts],
        "partitionMetadata": {
            p: {"partitionPath": p, "successDeleteFiles": names, "failedDeleteFiles": [],
                "rollbackLogFiles": {}, "logFilesFromFailedCommit": {}}
            for p, names in deleted.items()
        },
        "version": 1,
        "instantsRollback": [{"commitTime": instant_ts, "action": action}],
    }
    return json.dumps(doc).encode()
