"""Instant metadata in Avro, as table versions 8 and 9 keep it (Hudi 1.x, CommitMetadataSerDeV2):
the server stores what a writer sent (a version-6 style JSON document from our pipeline), the
storage mirror writes a table of version 8+ with the Avro record Hudi 1.x reads there
(`for_storage`). Avro files stay as they are.

Schemas: `HoodieCommitMetadata`, `HoodieReplaceCommitMetadata` (hudi-common's avro model, as
embedded in the commit files Hudi 1.2 writes) and `HoodieCleanMetadata`.
"""

from __future__ import annotations

import hashlib
import io
import json
from collections.abc import Callable
from typing import Any

import orjson

from hudi_format.commit_metadata import AVRO_MAGIC, shared_json

PAUSE_EVERY = 1000  # write stats between record_bytes' pauses (about 10 ms of encoding)

_NS = "org.apache.hudi.avro.model"


def _opt(name: str, type_: Any) -> dict:
    return {"name": name, "type": ["null", type_], "default": None}


_LONGS = ("numWrites", "numDeletes", "numUpdateWrites", "totalWriteBytes", "totalWriteErrors")
_WRITE_STAT: dict[str, Any] = {"type": "record", "name": "HoodieWriteStat", "namespace": _NS, "fields": [
    _opt("fileId", "string"), _opt("path", "string"), _opt("prevCommit", "string"),
    *(_opt(n, "long") for n in _LONGS), _opt("partitionPath", "string"),
    _opt("totalLogRecords", "long"), _opt("totalLogFiles", "long"), _opt("totalUpdatedRecordsCompacted", "long"),
    _opt("numInserts", "long"), _opt("totalLogBlocks", "long"), _opt("totalCorruptLogBlock", "long"),
    _opt("totalRollbackBlocks", "long"), _opt("fileSizeInBytes", "long"), _opt("logVersion", "int"),
    _opt("logOffset", "long"), _opt("baseFile", "string"), _opt("logFiles", {"type": "array", "items": "string"}),
    _opt("cdcStats", {"type": "map", "values": "long"}), _opt("prevBaseFile", "string"),
    _opt("minEventTime", "long"), _opt("maxEventTime", "long"),
    _opt("runtimeStats", {"type": "record", "name": "HoodieRuntimeStats", "fields": [
        _opt("totalScanTime", "long"), _opt("totalCreateTime", "long"), _opt("totalUpsertTime", "long")]}),
    _opt("totalLogFilesCompacted", "long"), _opt("totalLogReadTimeMs", "long"),
    _opt("totalLogSizeCompacted", "long"), _opt("tempPath", "string"), _opt("numUpdates", "long")]}
_COMMIT_FIELDS = [
    _opt("partitionToWriteStats", {"type": "map", "values": {"type": "array", "items": _WRITE_STAT}}),
    _opt("compacted", "boolean"),
    _opt("extraMetadata", {"type": "map", "values": "string"}),
    {"name": "version", "type": ["int", "null"], "default": 1},
    _opt("operationType", "string"),
]
COMMIT_METADATA_SCHEMA: dict[str, Any] = {"type": "record", "name": "HoodieCommitMetadata", "namespace": _NS,
                          "fields": _COMMIT_FIELDS}
REPLACE_COMMIT_METADATA_SCHEMA: dict[str, Any] = {
    "type": "record", "name": "HoodieReplaceCommitMetadata", "namespace": _NS, "fields": [
        *_COMMIT_FIELDS[:3],
        _opt("partitionToReplaceFileIds", {"type": "map", "values": {"type": "array", "items": "string"}}),
        *_COMMIT_FIELDS[3:]]}
CLEAN_METADATA_SCHEMA = {
    "type": "record", "name": "HoodieCleanMetadata", "namespace": _NS, "fields": [
        {"name": "startCleanTime", "type": "string"},
        {"name": "timeTakenInMillis", "type": "long"},
        {"name": "totalFilesDeleted", "type": "int"},
        {"name": "earliestCommitToRetain", "type": "string"},
        {"name": "lastCompletedCommitTimestamp", "type": "string", "default": ""},
        {"name": "partitionMetadata", "type": {"type": "map", "values": {
            "type": "record", "name": "HoodieCleanPartitionMetadata", "fields": [
                {"name": "partitionPath", "type": "string"},
                {"name": "policy", "type": "string"},
                {"name": "deletePathPatterns", "type": {"type": "array", "items": "string"}},
                {"name": "successDeleteFiles", "type": {"type": "array", "items": "string"}},
                {"name": "failedDeleteFiles", "type": {"type": "array", "items": "string"}},
                {"name": "isPartitionDeleted", "type": ["null", "boolean"], "default": None}]}}},
        {"name": "version", "type": ["int", "null"], "default": 1},
        {"name": "bootstrapPartitionMetadata", "default": None,
         "type": ["null", {"type": "map", "values": "HoodieCleanPartitionMetadata"}]},
        _opt("extraMetadata", {"type": "map", "values": "string"}),
    ]}

# HoodieCleanerPlan (version 2), as Hudi writes `<ts>.clean.requested`
CLEANER_PLAN_SCHEMA = {
    "type": "record", "name": "HoodieCleanerPlan", "namespace": _NS, "fields": [
        {"name": "earliestInstantToRetain", "default": None, "type": ["null", {
            "type": "record", "name": "HoodieActionInstant", "fields": [
                {"name": "timestamp", "type": "string"}, {"name": "action", "type": "string"},
                {"name": "state", "type": "string"}]}]},
        {"name": "policy", "type": "string"},
        _opt("filesToBeDeletedPerPartition", {"type": "map", "values": {"type": "array", "items": "string"}}),
        {"name": "version", "type": ["int", "null"], "default": 1},
        _opt("filePathsToBeDeletedPerPartition", {"type": "map", "values": {"type": "array", "items": {
            "type": "record", "name": "HoodieCleanFileInfo", "fields": [
                _opt("filePath", "string"), _opt("isBootstrapBaseFile", "boolean")]}}}),
        _opt("partitionsToBeDeleted", {"type": "array", "items": "string"}),
    ]}
CLEAN_PLAN_VERSION = 2


def clean_plan(earliest: str | None, earliest_action: str, policy: str, paths: dict[str, list[str]]) -> bytes:
    """A HoodieCleanerPlan (Avro): `paths` partition -> full paths of the files to delete."""
    record: dict[str, Any] = {
        "earliestInstantToRetain": ({"timestamp": earliest, "action": earliest_action, "state": "COMPLETED"}
                                    if earliest else None),
        "policy": policy, "filesToBeDeletedPerPartition": {}, "version": CLEAN_PLAN_VERSION,
        "filePathsToBeDeletedPerPartition": {p: [{"filePath": f, "isBootstrapBaseFile": False} for f in fs]
                                             for p, fs in paths.items()},
        "partitionsToBeDeleted": []}
    return avro_file(CLEANER_PLAN_SCHEMA, record)


def parse_clean_plan(data: bytes) -> tuple[str | None, str, dict[str, list[str]]]:
    """(earliest instant retained, policy, partition -> file paths) of a HoodieCleanerPlan (Avro)."""
    import fastavro

    records: list[Any] = list(fastavro.reader(io.BytesIO(bytes(data))))
    if not records or not isinstance(records[0], dict):
        raise ValueError("a clean plan must be a HoodieCleanerPlan (Avro)")
    r: dict[str, Any] = records[0]
    earliest = (r.get("earliestInstantToRetain") or {}).get("timestamp") or None
    paths = {p: [str(i.get("filePath")) for i in infos if i.get("filePath")]
             for p, infos in (r.get("filePathsToBeDeletedPerPartition") or {}).items()}
    for p, names in (r.get("filesToBeDeletedPerPartition") or {}).items():  # version 1
        paths.setdefault(p, []).extend(names)
    return earliest, str(r.get("policy") or ""), paths


def clean_metadata_avro(doc: dict) -> bytes:
    """HoodieCleanMetadata (Avro, as Hudi writes a completed clean) of a v6-shaped JSON document."""
    return avro_file(CLEAN_METADATA_SCHEMA, clean_record(doc))


_PARSED: dict[str, Any] = {}


def _parsed(schema: dict) -> Any:
    import fastavro

    name = schema["name"]
    if name not in _PARSED:
        _PARSED[name] = fastavro.parse_schema(schema)
    return _PARSED[name]


def avro_file(schema: dict, record: dict) -> bytes:
    """One record as an Avro object container file (no codec), its sync marker derived from the
    record's bytes so the same record always gives the same file (the mirror's writes are idempotent)."""
    return container_file(schema, record_bytes(schema, record))


def container_file(schema: dict, body: bytes) -> bytes:
    """One record's Avro binary encoding `body` as avro_file writes it."""
    import fastavro

    parsed = _parsed(schema)
    marker = hashlib.md5(body).digest()
    buf = io.BytesIO()
    fastavro.writer(buf, parsed, [], codec="null", sync_marker=marker)  # the header alone
    # one block: its record count, its size, the record, the marker (Avro's object container)
    buf.write(_zigzag(1) + _zigzag(len(body)) + body + marker)
    return buf.getvalue()


def record_bytes(schema: dict, record: dict, pause: Callable[[], None] | None = None) -> bytes:
    """The record's Avro binary encoding. A (replace) commit's write stats, its first field, are
    written one call per stat: a single call for 10,000 stats holds the interpreter for a tenth
    of a second, which a server's other threads would wait for (`pause`: called every
    PAUSE_EVERY stats). The bytes fastavro gives."""
    import fastavro

    stats = record.get("partitionToWriteStats")
    if schema["fields"][0]["name"] != "partitionToWriteStats" or not isinstance(stats, dict):
        body = io.BytesIO()
        fastavro.schemaless_writer(body, _parsed(schema), tag_unions(record))
        return body.getvalue()
    stat_schema = _parsed(_WRITE_STAT)

    def encode(item: dict) -> bytes:
        one = io.BytesIO()
        fastavro.schemaless_writer(one, stat_schema, item)
        return one.getvalue()

    return _with_stats(schema, record, stats, encode, pause)


def _with_stats(schema: dict, record: dict, stats: dict, encode: Callable[[Any], bytes],
                pause: Callable[[], None] | None) -> bytes:
    """The (replace) commit record's encoding, its first field the map `stats` (partition -> write
    stats, each encoded by `encode`; `pause` called every PAUSE_EVERY of them), the rest as
    fastavro writes `record`'s other fields."""
    import fastavro

    rest = io.BytesIO()  # the record with no stats: the union's branch 1, an empty map (0), the rest
    fastavro.schemaless_writer(rest, _parsed(schema), {**record, "partitionToWriteStats": ("map", {})})
    head = rest.getvalue()
    if head[:2] != b"\x02\x00":  # the schema's first field is not the optional map it should be
        raise ValueError(f"unexpected encoding of {schema['name']}'s first field: {head[:2]!r}")
    out = [b"\x02"]
    written = 0
    if stats:
        out.append(_zigzag(len(stats)))
        for partition, items in stats.items():
            out.append(_text(partition))
            if items:
                out.append(_zigzag(len(items)))
                for item in items:
                    if pause is not None:
                        written += 1
                        if written % PAUSE_EVERY == 0:
                            pause()
                    out.append(encode(item))
            out.append(b"\x00")
    out.append(b"\x00")
    out.append(head[2:])
    return b"".join(out)


_SMALL = [bytes((n,)) for n in range(128)]  # one-byte varints


def _varint(z: int) -> bytes:
    """An already zigzagged value as Avro's varint."""
    if z < 128:
        return _SMALL[z]
    if z < 0x4000:
        return bytes(((z & 0x7F) | 0x80, z >> 7))
    if z < 0x200000:
        return bytes(((z & 0x7F) | 0x80, ((z >> 7) & 0x7F) | 0x80, z >> 14))
    out = bytearray()
    while z > 0x7F:
        out.append((z & 0x7F) | 0x80)
        z >>= 7
    out.append(z)
    return bytes(out)


def _zigzag(n: int) -> bytes:
    return _varint((n << 1) ^ (n >> 63))


def tag_unions(record: dict) -> dict:
    """The record with its write stats' union branch named (fastavro's tuple notation): untagged,
    fastavro picks a union's branch by validating the whole value against it, which for 10,000
    write stats costs more than writing them. Same bytes."""
    stats = record.get("partitionToWriteStats")
    return {**record, "partitionToWriteStats": ("map", stats)} if isinstance(stats, dict) else record


def _int(v: Any) -> int | None:
    if v is None or v == "null":
        return None
    try:
        return int(v)
    except (TypeError, ValueError):
        return None


def _write_stat(s: dict) -> dict:
    out: dict[str, Any] = {}
    for f in _WRITE_STAT["fields"]:
        name, kind = f["name"], f["type"][1]
        v = s.get(name)
        if v is None:
            out[name] = None
        elif kind in ("long", "int"):
            out[name] = _int(v)
        elif kind == "string":
            out[name] = str(v)
        elif name == "logFiles":
            out[name] = [str(x) for x in v]
        elif name == "cdcStats":
            out[name] = {str(k): int(x) for k, x in dict(v).items()}
        elif name == "runtimeStats":
            out[name] = {k: _int(dict(v).get(k)) for k in ("totalScanTime", "totalCreateTime", "totalUpsertTime")}
    return out


def _text(v: Any) -> bytes:
    b = str(v).encode("utf-8")
    return _varint(len(b) << 1) + b


_LONG, _INT, _STRING, _LOG_FILES, _CDC, _RUNTIME = range(6)
_STAT_KINDS: list[tuple[str, int]] = [
    (f["name"], {"long": _LONG, "int": _INT, "string": _STRING}[f["type"][1]] if isinstance(f["type"][1], str)
     else {"logFiles": _LOG_FILES, "cdcStats": _CDC, "runtimeStats": _RUNTIME}[f["name"]])
    for f in _WRITE_STAT["fields"]]
_RUNTIME_KEYS = ("totalScanTime", "totalCreateTime", "totalUpsertTime")


class _Unusual(Exception):
    """A value the fast stat encoding leaves to fastavro (out of a long's or an int's range)."""


def _long(v: Any, bits: int = 64) -> bytes:
    """An optional long (int) field's value as _write_stat converts it: null, or branch 1 and it."""
    n = v if v.__class__ is int else _int(v)
    if n is None:
        return b"\x00"
    if not -(1 << (bits - 1)) <= n < (1 << (bits - 1)):
        raise _Unusual
    return b"\x02" + _varint((n << 1) ^ (n >> 63))


def _other(v: Any, kind: int) -> bytes:
    """A non-null value of an int, array, map or record field of the write stat."""
    if kind == _INT:
        return _long(v, 32)
    if kind == _LOG_FILES:
        items = [_text(x) for x in v]
        return b"\x02" + (_varint(len(items) << 1) + b"".join(items) if items else b"") + b"\x00"
    if kind == _CDC:
        pairs = [_text(k) + _long(int(x))[1:] for k, x in dict(v).items()]
        return b"\x02" + (_varint(len(pairs) << 1) + b"".join(pairs) if pairs else b"") + b"\x00"
    runtime = dict(v)
    return b"\x02" + b"".join(_long(runtime.get(k)) for k in _RUNTIME_KEYS)


def _stat_encoder() -> Callable[[dict], bytes]:
    """The straight-line encoder of the write stat's fields, in schema order (generated from
    _STAT_KINDS: a loop over the fields took twice as long). A text is two parts (branch and
    length, then its bytes), an int within range written here; anything else by _long/_other."""
    lines = ["def encode(s):", "    g = s.get"]
    parts = []
    for i, (name, kind) in enumerate(_STAT_KINDS):
        lines.append(f"    v = g({name!r})")
        if kind == _STRING:
            lines.append(f"    if v is None: a{i} = b'\\x00'; b{i} = b''")
            lines.append(f"    else: b{i} = v.encode() if v.__class__ is str else str(v).encode(); "
                         f"a{i} = b'\\x02' + varint(len(b{i}) << 1)")
            parts += [f"a{i}", f"b{i}"]
            continue
        if kind == _LONG:
            value = "b'\\x02' + varint((v << 1) ^ (v >> 63)) if v.__class__ is int and LO <= v < HI else long(v)"
        else:
            value = f"other(v, {kind})"
        lines.append(f"    a{i} = b'\\x00' if v is None else {value}")
        parts.append(f"a{i}")
    lines.append(f"    return b''.join(({', '.join(parts)},))")
    scope: dict[str, Any] = {"long": _long, "other": _other, "varint": _varint,
                             "LO": -(1 << 63), "HI": 1 << 63}
    exec("\n".join(lines), scope)  # noqa: S102 - code built above from the schema's names alone
    return scope["encode"]


_encode_stat = _stat_encoder()


def stat_bytes(s: dict) -> bytes:
    """A JSON write stat as HoodieWriteStat's Avro binary encoding: the bytes fastavro writes for
    `_write_stat(s)`, without building that record (a third of the time)."""
    try:
        return _encode_stat(s)
    except (_Unusual, UnicodeEncodeError):
        import fastavro

        out = io.BytesIO()
        fastavro.schemaless_writer(out, _parsed(_WRITE_STAT), _write_stat(s))
        return out.getvalue()


def commit_bytes(doc: dict, replace: bool, pause: Callable[[], None] | None = None) -> bytes:
    """The Avro binary encoding of `commit_record(doc, replace)` (the bytes record_bytes gives),
    its write stats encoded from the document by stat_bytes; `pause`: called every PAUSE_EVERY
    stats (record_bytes)."""
    schema = REPLACE_COMMIT_METADATA_SCHEMA if replace else COMMIT_METADATA_SCHEMA
    stats = {str(p): entries or [] for p, entries in (doc.get("partitionToWriteStats") or {}).items()}
    return _with_stats(schema, commit_record({**doc, "partitionToWriteStats": None}, replace), stats, stat_bytes,
                       pause)


def commit_record(doc: dict, replace: bool) -> dict:
    """A (replace) commit's JSON document as the Avro record."""
    stats = {str(p): [_write_stat(s) for s in (entries or [])]
             for p, entries in (doc.get("partitionToWriteStats") or {}).items()}
    rec: dict[str, Any] = {
        "partitionToWriteStats": stats, "compacted": bool(doc.get("compacted") or False),
        "extraMetadata": {str(k): str(v) for k, v in (doc.get("extraMetadata") or {}).items()},
        "version": 1, "operationType": doc.get("operationType") or "UNKNOWN"}
    if replace:
        rec["partitionToReplaceFileIds"] = {str(p): [str(i) for i in ids or []]
                                            for p, ids in (doc.get("partitionToReplaceFileIds") or {}).items()}
    return rec


def clean_record(doc: dict) -> dict:
    parts = {}
    for p, m in (doc.get("partitionMetadata") or {}).items():
        m = m or {}
        parts[str(p)] = {"partitionPath": str(m.get("partitionPath", p)), "policy": str(m.get("policy") or ""),
                         "deletePathPatterns": [str(x) for x in m.get("deletePathPatterns") or []],
                         "successDeleteFiles": [str(x) for x in m.get("successDeleteFiles") or []],
                         "failedDeleteFiles": [str(x) for x in m.get("failedDeleteFiles") or []],
                         "isPartitionDeleted": m.get("isPartitionDeleted")}
    return {"startCleanTime": str(doc.get("startCleanTime") or ""),
            "timeTakenInMillis": _int(doc.get("timeTakenInMillis")) or 0,
            "totalFilesDeleted": _int(doc.get("totalFilesDeleted")) or 0,
            "earliestCommitToRetain": str(doc.get("earliestCommitToRetain") or ""),
            "lastCompletedCommitTimestamp": str(doc.get("lastCompletedCommitTimestamp") or ""),
            "partitionMetadata": parts, "version": 2, "bootstrapPartitionMetadata": {}, "extraMetadata": None}


_WRITE_ACTIONS = ("commit", "deltacommit", "replacecommit")


def for_storage(action: str, state: int, data: bytes, requested_as: str | None = None) -> bytes:
    """The bytes a table of version 8+ keeps for an instant's metadata in `state` (1 requested,
    2 inflight, 3 completed) of `action` (as its file names it): JSON commit and clean metadata as
    Hudi 1.x's Avro records; Avro, empty and other metadata as stored."""
    if not data or bytes(data[:4]) == AVRO_MAGIC:
        return bytes(data)
    if state == 1:  # requested: plans as the writer gave them
        return bytes(data)
    try:  # the document the commit's parse read, when it was of these bytes (read only here)
        doc = shared_json(data) if type(data) is bytes else orjson.loads(data)
    except orjson.JSONDecodeError:  # what orjson refuses (NaN, integers beyond 64 bits) or no JSON
        try:
            doc = json.loads(bytes(data).decode("utf-8"))
        except (UnicodeDecodeError, ValueError):
            return bytes(data)
    if not isinstance(doc, dict):
        return bytes(data)
    if action in _WRITE_ACTIONS or (state == 2 and requested_as in ("compaction", "clustering", "logcompaction")):
        replace = action == "replacecommit" or requested_as == "clustering"
        return container_file(REPLACE_COMMIT_METADATA_SCHEMA if replace else COMMIT_METADATA_SCHEMA,
                              commit_bytes(doc, replace))
    if action == "clean" and state == 3:
        return avro_file(CLEAN_METADATA_SCHEMA, clean_record(doc))
    return bytes(data)
