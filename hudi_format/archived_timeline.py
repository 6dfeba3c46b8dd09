"""The archived timeline as Hudi's archiver writes it: old completed instants moved out of the active
timeline (HoodieTimelineArchiver), per timeline layout.

* layout 2 (table versions 8 and 9): the LSM timeline in `.hoodie/timeline/history/`: Parquet files
  `<min instant>_<max instant>_<level>.parquet` (gzip, written as parquet-avro writes
  `HoodieLSMTimelineInstant` records: instantTime, completionTime, action, metadata = the completed
  file's bytes, plan = the requested file's bytes, version 1), a manifest per snapshot version
  `manifest_<n>` (JSON: every live file's name and length) and `_version_` (the latest n, written
  last: a reader takes the manifest it names). New files are level 0; levels are never compacted
  here (readers take any number of files).
* layout 1 (table version 6): log files `.commits_.archive.<n>_1-0-1` in `.hoodie/archived/`, each
  one Avro data block of `HoodieArchivedMetaEntry` records, one per state of each instant (its
  requested, inflight and completed metadata as Avro records of the entry's union fields).
"""

from __future__ import annotations

import io
import json
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

from hudi_format import log_file
from hudi_format.avro_metadata import (
    CLEAN_METADATA_SCHEMA,
    COMMIT_METADATA_SCHEMA,
    REPLACE_COMMIT_METADATA_SCHEMA,
    clean_record,
    commit_bytes,
    commit_record,
    tag_unions,
)
from hudi_format.commit_metadata import ROLLBACK_METADATA_SCHEMA, _load

VERSION_FILE = "_version_"
MANIFEST_PREFIX = "manifest_"
LSM_INSTANT_SCHEMA = {
    "type": "record", "name": "HoodieLSMTimelineInstant", "namespace": "org.apache.hudi.avro.model", "fields": [
        {"name": "instantTime", "type": ["null", {"type": "string", "avro.java.string": "String"}], "default": None},
        {"name": "completionTime", "type": ["null", {"type": "string", "avro.java.string": "String"}],
         "default": None},
        {"name": "action", "type": ["null", {"type": "string", "avro.java.string": "String"}], "default": None},
        {"name": "metadata", "type": ["null", "bytes"], "default": None},
        {"name": "plan", "type": ["null", "bytes"], "default": None},
        {"name": "version", "type": "int", "default": 1}]}


@dataclass
class ArchivedInstant:
    ts: str
    completion_ts: str
    action: str  # as completed (commit, deltacommit, replacecommit, clean, rollback, ...)
    metadata: bytes  # the completed file's bytes
    plan: bytes = b""  # the requested file's bytes
    inflight: bytes = b""  # the inflight file's bytes (layout 1 keeps them)


# --- layout 2: the LSM timeline ------------------------------------------------------------------

def lsm_file_name(instants: list[ArchivedInstant], level: int = 0) -> str:
    return f"{min(i.ts for i in instants)}_{max(i.ts for i in instants)}_{level}.parquet"


def lsm_file(instants: list[ArchivedInstant]) -> bytes:
    """The Parquet file of the instants, ordered by instant time."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    rows = sorted(instants, key=lambda i: i.ts)
    schema = pa.schema([
        pa.field("instantTime", pa.string()), pa.field("completionTime", pa.string()),
        pa.field("action", pa.string()), pa.field("metadata", pa.binary()), pa.field("plan", pa.binary()),
        pa.field("version", pa.int32(), nullable=False)],
        metadata={"parquet.avro.schema": json.dumps(LSM_INSTANT_SCHEMA, separators=(",", ":")),
                  "writer.model.name": "avro"})
    table = pa.table({
        "instantTime": [i.ts for i in rows], "completionTime": [i.completion_ts for i in rows],
        "action": [i.action for i in rows], "metadata": [bytes(i.metadata) or None for i in rows],
        "plan": [bytes(i.plan) or None for i in rows], "version": pa.array([1] * len(rows), pa.int32())},
        schema=schema)
    buf = io.BytesIO()
    pq.write_table(table, buf, compression="gzip")
    return buf.getvalue()


def read_lsm_file(data: bytes) -> list[dict]:
    import pyarrow.parquet as pq

    return pq.read_table(io.BytesIO(data)).to_pylist()


def manifest(files: Iterable[tuple[str, int]]) -> bytes:
    """`manifest_<n>` as Hudi writes it (Jackson's pretty printer)."""
    entries = [f'{{\n    "fileName" : {json.dumps(n)},\n    "fileLen" : {size}\n  }}' for n, size in files]
    return ('{\n  "files" : [ ' + ", ".join(entries) + " ]\n}").encode()


def parse_manifest(data: bytes) -> list[tuple[str, int]]:
    doc = json.loads(data.decode("utf-8"))
    return [(str(f["fileName"]), int(f["fileLen"])) for f in doc.get("files") or []]


def max_archived(files: Iterable[str]) -> str | None:
    """The newest instant the LSM timeline's files hold, from their names."""
    tops = [n.split("_")[1] for n in files if n.endswith(".parquet") and n.count("_") == 2]
    return max(tops) if tops else None


# --- layout 1: the archive log --------------------------------------------------------------------

ARCHIVE_PREFIX = ".commits_.archive."
ARCHIVE_TOKEN = "1-0-1"


def archive_log_name(version: int) -> str:
    return f"{ARCHIVE_PREFIX}{version}_{ARCHIVE_TOKEN}"


def archive_log_version(name: str) -> int | None:
    if not name.startswith(ARCHIVE_PREFIX):
        return None
    v = name[len(ARCHIVE_PREFIX):].partition("_")[0]
    return int(v) if v.isdigit() else None


def _opt(name: str, schema: Any) -> dict:
    return {"name": name, "type": ["null", schema], "default": None}


def _string(name: str) -> dict:
    return {"name": name, "type": ["null", {"type": "string", "avro.java.string": "String"}], "default": None}


# the replace commit's record beside the commit's: its write stats by name (a type is defined once)
_REPLACE_BY_NAME = {**REPLACE_COMMIT_METADATA_SCHEMA, "fields": [
    {**f, "type": ["null", {"type": "map", "values": {"type": "array", "items": "HoodieWriteStat"}}]}
    if f["name"] == "partitionToWriteStats" else f for f in REPLACE_COMMIT_METADATA_SCHEMA["fields"]]}
ARCHIVED_META_ENTRY_SCHEMA = {
    "type": "record", "name": "HoodieArchivedMetaEntry", "namespace": "org.apache.hudi.avro.model", "fields": [
        _opt("hoodieCommitMetadata", COMMIT_METADATA_SCHEMA),
        _opt("hoodieCleanMetadata", CLEAN_METADATA_SCHEMA),
        _opt("hoodieRollbackMetadata", ROLLBACK_METADATA_SCHEMA),
        _string("commitTime"), _string("actionType"),
        {"name": "version", "type": ["int", "null"], "default": 1},
        _string("actionState"),
        _opt("hoodieReplaceCommitMetadata", _REPLACE_BY_NAME),
        _string("stateTransitionTime")]}
_ENTRY_FIELD = {"commit": "hoodieCommitMetadata", "deltacommit": "hoodieCommitMetadata",
                "replacecommit": "hoodieReplaceCommitMetadata", "clean": "hoodieCleanMetadata",
                "rollback": "hoodieRollbackMetadata"}


def _record_types(schema: dict) -> dict[str, str]:
    """Each optional record field of `schema` -> its record type's full name."""
    out = {}
    for f in schema["fields"]:
        t = f["type"]
        if isinstance(t, list) and isinstance(t[1], dict) and t[1].get("type") == "record":
            out[f["name"]] = f"{t[1].get('namespace', 'org.apache.hudi.avro.model')}.{t[1]['name']}"
    return out


_ENTRY_TYPE = _record_types(ARCHIVED_META_ENTRY_SCHEMA)  # to name a union's branch


def _entry_record(action: str, data: bytes) -> dict | None:
    """The instant's metadata as the archived entry's record (a commit's: its JSON document,
    encoded by commit_bytes; None: none it can hold)."""
    if not data or action not in _ENTRY_FIELD:
        return None
    try:
        doc = _load(data, action)
    except Exception:  # noqa: BLE001 - unreadable metadata is archived without it
        return None
    if action in ("commit", "deltacommit"):
        return doc  # encoded from the document itself (commit_bytes)
    if action == "replacecommit":
        return commit_record(doc, True)
    if action == "clean":
        return clean_record(doc)
    return doc


def archive_log_block(instants: list[ArchivedInstant], pause: Callable[[], None] | None = None) -> bytes:
    """One Avro data block (log format, version-2 content) of the entries of the instants: per
    instant its requested, inflight and completed states, in that order. `pause`: called before
    each entry and within a commit's write stats (commit_bytes)."""
    import fastavro

    parsed = fastavro.parse_schema(ARCHIVED_META_ENTRY_SCHEMA)
    entries: list[bytes] = []
    for i in sorted(instants, key=lambda i: i.ts):
        for state, data in (("REQUESTED", i.plan), ("INFLIGHT", i.inflight), ("COMPLETED", i.metadata)):
            if pause is not None:
                pause()
            rec: dict[str, Any] = {"commitTime": i.ts, "actionType": i.action, "actionState": state,
                                   "version": 1, "stateTransitionTime": i.completion_ts}
            field = _ENTRY_FIELD.get(i.action) \
                if state == "COMPLETED" or (state == "INFLIGHT" and i.action in ("commit", "deltacommit")) else None
            value = _entry_record(i.action, data) if field else None
            one = io.BytesIO()
            if field == "hoodieCommitMetadata" and value is not None:
                # the entry's first field (commit_bytes), after its branch (1)
                fastavro.schemaless_writer(one, parsed, rec)
                entries.append(b"\x02" + commit_bytes(value, False, pause) + one.getvalue()[1:])
                continue
            if field and value is not None:  # the union's branch named, else fastavro validates it all
                rec[field] = (_ENTRY_TYPE[field], tag_unions(value))
            fastavro.schemaless_writer(one, parsed, rec)
            entries.append(one.getvalue())
    body = io.BytesIO()
    body.write((2).to_bytes(4, "big") + len(entries).to_bytes(4, "big"))
    for data in entries:
        body.write(len(data).to_bytes(4, "big") + data)
    header = {log_file.SCHEMA: json.dumps(ARCHIVED_META_ENTRY_SCHEMA, separators=(",", ":"))}
    return log_file.encode_block(log_file.AVRO_DATA, header, body.getvalue())


_TIMES_ONLY = {"type": "record", "name": "HoodieArchivedMetaEntry", "namespace": "org.apache.hudi.avro.model",
               "fields": [_string("commitTime")]}


def archived_times(data: bytes) -> list[str]:
    """The instant time of every entry of an archive log file: `read_archive_log` reading only
    `commitTime` (the rest is skipped, not built: under half the time for commits of many files)."""
    import fastavro

    reader = fastavro.parse_schema(_TIMES_ONLY)
    out: list[str] = []
    for block in log_file.blocks(data, "archive log"):
        if block.block_type == log_file.AVRO_DATA:
            out.extend(str(r["commitTime"]) for r in log_file._avro_records(block, reader)
                       if r.get("commitTime") is not None)
    return out


def read_archive_log(data: bytes) -> list[dict]:
    """The entries of an archive log file (every Avro data block)."""
    out: list[dict] = []
    for block in log_file.blocks(data, "archive log"):
        if block.block_type == log_file.AVRO_DATA:
            out.extend(log_file._avro_records(block))
    return out
