"""The storage mirror's `column_stats` partition (store/hudi/metadata_table/column_stats.py), read
back as Hudi's reader merges it, equals the server's column statistics after every commit and clean
(records written, cleaned files' keys deleted), also across compactions; the data table's
`hoodie.properties` lists it with the index definitions; `hoodie.metadata.index.column.stats.enable=false`
leaves it out. Tables of version 6, 8 and 9, each in its own layout (index version 2's value types
on version 9). (Hudi's Spark reader skipping files with it: tests/test_pipeline_hudi_reader.py.)"""

from __future__ import annotations

import json
import os

import pytest

from hudi_format import hfile
from hudi_format import metadata_column_stats as C
from hudi_format.config_keys import COLUMN_STATS_ENABLE, INDEX_DEFS_PATH, METADATA_ENABLE, METADATA_PARTITIONS
from hudi_format.metadata_table_layout import metadata_table_layout
from hudi_format.table_config import COW, MOR, HudiTableConfig, read_properties
from store.hudi.column_stats import ColumnBounds, FileColumnStats, encode_key
from tests.test_storage_mirror import AVRO_SCHEMA, attach, services
from thrift_idl.hive_metastore.ttypes import Database

AVRO = {**AVRO_SCHEMA, "fields": [*AVRO_SCHEMA["fields"], {"name": "score", "type": ["double", "null"]}]}
TYPES = {"id": "int", "name": "string", "ts": "bigint", "score": "double"}


def _table(tmp_path, properties: dict[str, str], version: int = 6, table_type: str = COW):
    tables, timeline, _snapshot = services(tmp_path)
    tables.create_database(Database(name="db1"))
    base = str(tmp_path / "t1")
    timeline.register_table(HudiTableConfig(
        db_name="db1", table_name="t1", table_type=table_type, record_key_fields=["id"], partition_fields=["dt"],
        precombine_field="ts", key_generator="org.apache.hudi.keygen.SimpleKeyGenerator", base_path=base,
        table_version=version,
        avro_schema=json.dumps(AVRO), properties={METADATA_ENABLE: "true", **properties}))
    return timeline, attach(timeline), base


def _bounds(column: str, lo, hi, nulls: int = 0, values: int = 10) -> ColumnBounds:
    t = TYPES[column]
    return ColumnBounds(column, None if lo is None else encode_key(t, lo), None if hi is None else encode_key(t, hi),
                        nulls, values, 100 + len(column), 300 + len(column))  # sizes: the writer's


def _commit(timeline, ts: str | None, files: dict[tuple[str, str], list[ColumnBounds]],
            action: str = "commit", logs: dict[tuple[str, str], str] | None = None) -> str:
    """A commit (at `ts`, else a new instant time) writing base files (partition, file id) -> their
    statistics (`logs`: log files, (partition, file id) -> name; their statistics, None: none); its
    instant time."""
    ts = timeline.create_instant("db1", "t1", ts, action, b"", 60).ts
    write_stats: dict[str, list] = {}
    stats = []
    for (p, fid), cols in files.items():
        name = (logs or {}).get((p, fid)) or f"{fid}_0-1-1_{ts}.parquet"
        if cols is None:
            write_stats.setdefault(p, []).append({"fileId": fid, "path": f"{p}/{name}", "partitionPath": p,
                                                  "fileSizeInBytes": 1000, "prevCommit": "null", "numWrites": 1})
            continue
        write_stats.setdefault(p, []).append({"fileId": fid, "path": f"{p}/{name}", "partitionPath": p,
                                              "fileSizeInBytes": 1000, "prevCommit": "null", "numWrites": 10})
        stats.append(FileColumnStats(p, name, 1000, 4000, cols))
    meta = json.dumps({"partitionToWriteStats": write_stats, "compacted": False, "extraMetadata": {},
                       "operationType": "UPSERT"}).encode()
    timeline.transition_to_inflight("db1", "t1", ts, action, b"")
    timeline.complete_instant("db1", "t1", ts, action, meta, column_stats=stats)
    return ts


def _clean(timeline, ts: str | None, deleted: dict[str, list[str]]) -> str:
    meta = json.dumps({"partitionMetadata": {p: {"partitionPath": p, "successDeleteFiles": names}
                                             for p, names in deleted.items()}}).encode()
    ts = timeline.create_instant("db1", "t1", ts, "clean", b"", 60).ts
    timeline.transition_to_inflight("db1", "t1", ts, "clean", b"")
    timeline.complete_instant("db1", "t1", ts, "clean", meta)
    return ts


def partition_view(base: str, version: int = 6) -> dict[str, dict]:
    """key -> decoded statistics, as a reader merges each file group's latest slice (base file,
    then its log blocks in order whose deltacommit completed; delete blocks drop keys). Version 6:
    a slice's log files carry its base instant; 8+: their own, completed at or after the base's."""
    lay = metadata_table_layout(version)
    d = os.path.join(base, ".hoodie", "metadata", C.COLUMN_STATS)
    completion = {n.split(".")[0].split("_")[0]: n.split(".")[0].split("_")[-1]
                  for n in os.listdir(os.path.join(base, lay.timeline_dir)) if n.endswith(".deltacommit")}
    done = set(completion)
    parsed = {n: p for n in os.listdir(d) if (p := C.parse_name(n))}
    out: dict[bytes, bytes] = {}
    for group in range(C.FILE_GROUPS):
        bases = [p[2] for p in parsed.values() if p[0] == group and p[1] == "base" and p[2] in done]
        if version < 8:
            logs_of = {p[2] for p in parsed.values() if p[0] == group and p[1] == "log" and p[2] in done}
            latest = max(bases + list(logs_of))
        else:
            latest = max(bases or [lay.column_stats_init])
        merged: dict[bytes, bytes] = {}
        if latest in bases:
            merged.update(hfile.cells(open(os.path.join(d, C.base_file_name(group, latest)), "rb").read()))
        logs = sorted((p[3] if version < 8 else p[2], n) for n, p in parsed.items()
                      if p[0] == group and p[1] == "log" and p[2] in done
                      and lay.in_slice(p[2], latest, completion.get(p[2])))
        for _v, n in logs:
            for instant, cells, deleted in C.read_cells(open(os.path.join(d, n), "rb").read(), n):
                if instant in done:
                    merged.update(cells)
                    for k in deleted:
                        merged.pop(k.encode(), None)
        assert all(C.file_group_of(k.decode()) == group for k in merged)
        out.update(merged)
    return {k.decode(): C.decode_stats(v) for k, v in out.items()}


def _value_types(view: dict[str, dict]) -> set:
    return {(s["columnName"], s["valueType"]) for s in view.values()}


def _summary(view: dict[str, dict]) -> dict[tuple[str, str], tuple]:
    return {(s["fileName"], s["columnName"]): (s["minValue"], s["maxValue"], s["nullCount"], s["valueCount"])
            for s in view.values()}


@pytest.mark.parametrize(("version", "compact_after"), [(6, None), (6, 2), (8, 2), (9, None), (9, 2)])
def test_partition_follows_commits_and_cleans(tmp_path, version, compact_after):
    timeline, mirror, base = _table(tmp_path, {}, version)
    lay = metadata_table_layout(version)
    if compact_after:
        mirror.metadata_table.column_stats.compact_after = compact_after
    # instant times from the server's clock: Hudi 1.x slices the metadata table by completion times
    t1 = _commit(timeline, None, {("dt=a", "g1-0"): [_bounds("id", 1, 9), _bounds("name", "ab", "zé"),
                                               _bounds("score", -1.5, 2.25, 1)],
                           ("dt=b", "g2-0"): [_bounds("id", 10, 19), _bounds("name", None, None, 10),
                                              _bounds("ts", 5, 7)]})
    props = read_properties(open(os.path.join(base, ".hoodie", "hoodie.properties")).read())
    assert props[METADATA_PARTITIONS] == "column_stats,files" + (",partition_stats" if version >= 8 else "")
    index = json.loads(open(os.path.join(base, props[INDEX_DEFS_PATH]), "rb").read())
    assert index["indexDefinitions"]["column_stats"]["sourceFields"] == ["id", "name", "ts", "score", "dt"]
    assert index["indexDefinitions"]["column_stats"]["version"] == ("V2" if version >= 9 else "V1")
    first = {(f"g1-0_0-1-1_{t1}.parquet", "id"): (("IntWrapper", 1), ("IntWrapper", 9), 0, 10),
             (f"g1-0_0-1-1_{t1}.parquet", "name"): (("StringWrapper", "ab"), ("StringWrapper", "zé"), 0, 10),
             (f"g1-0_0-1-1_{t1}.parquet", "score"): (("DoubleWrapper", -1.5), ("DoubleWrapper", 2.25), 1, 10),
             (f"g2-0_0-1-1_{t1}.parquet", "id"): (("IntWrapper", 10), ("IntWrapper", 19), 0, 10),
             (f"g2-0_0-1-1_{t1}.parquet", "name"): (None, None, 10, 10),
             (f"g2-0_0-1-1_{t1}.parquet", "ts"): (("LongWrapper", 5), ("LongWrapper", 7), 0, 10)}
    view = partition_view(base, version)
    assert _summary(view) == first
    # each column's sizes as the writer sent them (the column chunks' bytes: Hudi's totalSize)
    assert {(s["columnName"], s["totalSize"], s["totalUncompressedSize"]) for s in view.values()} == {
        (c, 100 + len(c), 300 + len(c)) for c in ("id", "name", "score", "ts")}
    # index version 2 (table version 9): Hudi's value types (INT 3, STRING 7, LONG 4, DOUBLE 6)
    assert _value_types(view) == ({("id", (3, None)), ("name", (7, None)), ("ts", (4, None)), ("score", (6, None))}
                                  if version >= 9 else {(c, None) for c in ("id", "name", "ts", "score")})
    assert all(k == C.record_key(s["columnName"], p, s["fileName"]) for k, s in view.items()
               for p in ["dt=a" if s["fileName"].startswith("g1") else "dt=b"])

    # a new version of g1, then a clean of the old one: its keys are deleted
    t2 = _commit(timeline, None, {("dt=a", "g1-0"): [_bounds("id", 2, 3)]})
    t3 = _commit(timeline, None, {("dt=b", "g3-0"): [_bounds("id", 30, 31), _bounds("score", float("nan"), 1.0)]})
    t4 = _clean(timeline, None, {"dt=a": [f"g1-0_0-1-1_{t1}.parquet"]})
    want = {k: v for k, v in first.items() if not k[0].startswith("g1")}
    want[(f"g1-0_0-1-1_{t2}.parquet", "id")] = (("IntWrapper", 2), ("IntWrapper", 3), 0, 10)
    # g3's score has no usable bounds (a NaN): the file gets no records at all, readers keep it
    assert _summary(partition_view(base, version)) == want
    names = os.listdir(os.path.join(base, ".hoodie", "metadata", C.COLUMN_STATS))
    if compact_after:  # the groups' slices were compacted into base files at later instants
        assert any((p := C.parse_name(n)) and p[1] == "base" and p[2] > lay.column_stats_init for n in names), names
    if version >= 8:  # one log file per deltacommit, named after it
        assert all(p[2] in (t1, t2, t3, t4) and p[3] == 1 for n in names if (p := C.parse_name(n)) and p[1] == "log"
                   and p[2] != lay.column_stats_init), names
    timeline_dir = os.path.join(base, lay.timeline_dir)
    init_done = lay.completed_file(os.listdir(timeline_dir), lay.column_stats_init)
    assert init_done and init_done.startswith(lay.column_stats_init), os.listdir(timeline_dir)

    # rewritten from the rows when its initialization did not complete
    os.remove(os.path.join(timeline_dir, init_done))
    mirror.metadata_table.forget(base)
    mirror.sync("db1", "t1")
    assert _summary(partition_view(base, version)) == want


@pytest.mark.parametrize("version", [6, 9])
def test_off_by_config(tmp_path, version):
    timeline, _mirror, base = _table(tmp_path, {COLUMN_STATS_ENABLE: "false"}, version)
    _commit(timeline, None, {("dt=a", "g1-0"): [_bounds("id", 1, 9)]})
    props = read_properties(open(os.path.join(base, ".hoodie", "hoodie.properties")).read())
    assert props[METADATA_PARTITIONS] == "files" and INDEX_DEFS_PATH not in props
    assert not os.path.exists(os.path.join(base, ".hoodie", "metadata", C.COLUMN_STATS))


@pytest.mark.parametrize("version", [6, 9])
def test_log_files_records_follow_deltacommits_appends_and_cleans(tmp_path, version):
    """A merge-on-read table: a log file the server has statistics of gets a record per column as
    Hudi 1.2 writes it (sizes 0); one without statistics none; one appended to again (its
    statistics dropped) and one cleaned lose theirs (deleted by key)."""
    timeline, _mirror, base = _table(tmp_path, {}, version, MOR)
    t1 = _commit(timeline, None, {("dt=a", "g1-0"): [_bounds("id", 1, 9)], ("dt=a", "g2-0"): [_bounds("id", 20, 29)]},
                 "deltacommit")
    log1, log2 = f".g1-0_{t1}.log.1_0-1-1", f".g2-0_{t1}.log.1_0-1-1"
    _commit(timeline, None, {("dt=a", "g1-0"): [_bounds("id", 100, 102, 0, 3), _bounds("name", "x", "y", 1, 3)],
                             ("dt=a", "g2-0"): None},
            "deltacommit", {("dt=a", "g1-0"): log1, ("dt=a", "g2-0"): log2})
    view = partition_view(base, version)
    assert _summary(view) == {
        (f"g1-0_0-1-1_{t1}.parquet", "id"): (("IntWrapper", 1), ("IntWrapper", 9), 0, 10),
        (f"g2-0_0-1-1_{t1}.parquet", "id"): (("IntWrapper", 20), ("IntWrapper", 29), 0, 10),
        (log1, "id"): (("IntWrapper", 100), ("IntWrapper", 102), 0, 3),
        (log1, "name"): (("StringWrapper", "x"), ("StringWrapper", "y"), 1, 3)}
    logs = [s for s in view.values() if s["fileName"] == log1]
    assert all((s["totalSize"], s["totalUncompressedSize"], s["isTightBound"]) == (0, 0, False) for s in logs)
    assert all(k == C.record_key(s["columnName"], "dt=a", s["fileName"]) for k, s in view.items())
    # log1 appended to again (a later deltacommit, no statistics for it): its records are deleted
    _commit(timeline, None, {("dt=a", "g1-0"): None}, "deltacommit", {("dt=a", "g1-0"): log1})
    assert {k[0] for k in _summary(partition_view(base, version))} == {
        f"g1-0_0-1-1_{t1}.parquet", f"g2-0_0-1-1_{t1}.parquet"}
    # a new log file with statistics, then cleaned
    log3 = f".g2-0_{t1}.log.2_0-1-1"
    _commit(timeline, None, {("dt=a", "g2-0"): [_bounds("id", 5, 5, 0, 1)]}, "deltacommit",
            {("dt=a", "g2-0"): log3})
    assert (log3, "id") in _summary(partition_view(base, version))
    _clean(timeline, None, {"dt=a": [log3]})
    assert {k[0] for k in _summary(partition_view(base, version))} == {
        f"g1-0_0-1-1_{t1}.parquet", f"g2-0_0-1-1_{t1}.parquet"}
