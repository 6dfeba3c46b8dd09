"""The storage mirror's `partition_stats` partition (store/hudi/metadata_table/partition_stats.py),
read back as Hudi's reader merges it, equals the server's per-partition aggregates after commits, a
clean (which writes nothing), a rollback (which brings older bounds back) and compactions; a column
some live partition has no usable bounds for is left out everywhere, also when a later commit takes
them away; the data table's `hoodie.properties` lists it; version-6, unpartitioned and
`hoodie.metadata.index.partition.stats.enable=false` tables have none. (Hudi's own files:
tests/unit/hudi_format/test_metadata_partition_stats_files.py; Hudi's Spark reader pruning
partitions with it: tests/test_pipeline_hudi_reader.py.)"""

from __future__ import annotations

import os

import pytest

from hudi_format import hfile
from hudi_format import metadata_column_stats as C
from hudi_format import metadata_partition_stats as P
from hudi_format.commit_metadata import restore_plan
from hudi_format.config_keys import METADATA_PARTITIONS, PARTITION_STATS_ENABLE
from hudi_format.metadata_table_layout import metadata_table_layout
from hudi_format.storage import TableStorage
from hudi_format.table_config import MOR, read_properties
from tests.unit.store.hudi.test_metadata_column_stats import _bounds, _clean, _commit, _table


def stats_view(base: str, version: int) -> dict[tuple[str, str], tuple]:
    """(partition, column) -> (min, max, null count, value count) as a reader merges the one file
    group's latest slice (its base file, then the log blocks of completed deltacommits in the slice)."""
    lay = metadata_table_layout(version)
    d = os.path.join(base, ".hoodie", "metadata", P.PARTITION_STATS)
    completion = {n.split(".")[0].split("_")[0]: n.split(".")[0].split("_")[-1]
                  for n in os.listdir(os.path.join(base, lay.timeline_dir)) if n.endswith(".deltacommit")}
    parsed = {n: p for n in os.listdir(d) if (p := P.parse_name(n))}
    bases = [p[2] for p in parsed.values() if p[1] == "base" and p[2] in completion]
    latest = max(bases or [P.INIT_INSTANT])
    merged: dict[bytes, bytes] = {}
    if latest in bases:
        merged.update(hfile.cells(open(os.path.join(d, P.base_file_name(0, latest)), "rb").read()))
    logs = sorted((p[2], n) for n, p in parsed.items() if p[1] == "log" and p[2] in completion
                  and lay.in_slice(p[2], latest, completion.get(p[2])))
    for _ts, n in logs:
        for _instant, cells, deleted in P.read_cells(open(os.path.join(d, n), "rb").read(), n):
            merged.update(cells)
            for k in deleted:
                merged.pop(k.encode(), None)
    out = {}
    for k, v in merged.items():
        s = C.decode_stats(v)
        assert k.decode() == P.record_key(s["columnName"], s["fileName"]) and s["isTightBound"], s
        out[(s["fileName"], s["columnName"])] = (s["minValue"], s["maxValue"], s["nullCount"], s["valueCount"])
    return out


def sizes_view(base: str, version: int) -> dict[tuple[str, str], tuple[int, int]]:
    """(partition, column) -> (totalSize, totalUncompressedSize) of the records in the log files."""
    d = os.path.join(base, ".hoodie", "metadata", P.PARTITION_STATS)
    out = {}
    for n in sorted(os.listdir(d), key=lambda n: (P.parse_name(n) or (0, "", ""))[2]):
        parsed = P.parse_name(n)
        if parsed is None:
            continue
        data = open(os.path.join(d, n), "rb").read()
        blocks = [hfile.cells(data)] if parsed[1] == "base" else [c for _i, c, _d in P.read_cells(data, n)]
        for cells in blocks:
            for _k, v in cells:
                s = C.decode_stats(v)
                out[(s["fileName"], s["columnName"])] = (s["totalSize"], s["totalUncompressedSize"])
    return out


def _listed(base: str) -> str:
    return read_properties(open(os.path.join(base, ".hoodie", "hoodie.properties")).read())[METADATA_PARTITIONS]


@pytest.mark.parametrize(("version", "compact_after"), [(8, None), (9, 2)])
def test_partition_stats_follow_commits(tmp_path, version, compact_after):
    timeline, mirror, base = _table(tmp_path, {}, version)
    if compact_after:
        mirror.metadata_table.partition_stats.compact_after = compact_after
    i = "IntWrapper"
    _commit(timeline, None, {("dt=a", "g1-0"): [_bounds("id", 1, 9), _bounds("name", "ab", "zé"), _bounds("ts", 3, 4)],
                             ("dt=b", "g2-0"): [_bounds("id", 10, 19), _bounds("name", None, None, 10),
                                                _bounds("ts", 5, 7)]})
    assert _listed(base) == "column_stats,files,partition_stats"
    # `score` has statistics in no file: not indexed; the others in every partition
    first = {("dt=a", "id"): ((i, 1), (i, 9), 0, 10), ("dt=a", "name"): (("StringWrapper", "ab"),
                                                                        ("StringWrapper", "zé"), 0, 10),
             ("dt=a", "ts"): (("LongWrapper", 3), ("LongWrapper", 4), 0, 10),
             ("dt=b", "id"): ((i, 10), (i, 19), 0, 10), ("dt=b", "name"): (None, None, 10, 10),
             ("dt=b", "ts"): (("LongWrapper", 5), ("LongWrapper", 7), 0, 10)}
    assert stats_view(base, version) == first
    # the indexed columns are on storage (any of the server's processes continues the partition)
    # sizes: the sums over the partition's latest base files (the writer's, per column)
    assert sizes_view(base, version)[("dt=a", "name")] == (104, 304)
    fresh = type(mirror.metadata_table.partition_stats)(timeline.store, lambda: 0, 20)
    assert fresh.columns(TableStorage(base)) == {"id": "id", "name": "name", "ts": "ts"}
    # a second file in dt=a widens its bounds and adds its counts; dt=b is not rewritten
    t2 = _commit(timeline, None, {("dt=a", "g3-0"): [_bounds("id", 0, 5), _bounds("name", "b", "c"),
                                                      _bounds("ts", 1, 2)]})
    second = {**first, ("dt=a", "id"): ((i, 0), (i, 9), 0, 20),
              ("dt=a", "name"): (("StringWrapper", "ab"), ("StringWrapper", "zé"), 0, 20),
              ("dt=a", "ts"): (("LongWrapper", 1), ("LongWrapper", 4), 0, 20)}
    assert stats_view(base, version) == second
    assert sizes_view(base, version)[("dt=a", "name")] == (208, 608)
    # a new version of g3 narrows dt=a again; a restore to t2 brings the older version back
    timeline.create_instant("db1", "t1", t2, "savepoint", b"", 60)
    timeline.transition_to_inflight("db1", "t1", t2, "savepoint", b"")
    timeline.complete_instant("db1", "t1", t2, "savepoint", b"")
    narrow = [_bounds("id", 4, 5), _bounds("name", "b", "c"), _bounds("ts", 3, 3)]
    _commit(timeline, None, {("dt=a", "g3-0"): narrow})
    third = {**first, ("dt=a", "id"): ((i, 1), (i, 9), 0, 20),
             ("dt=a", "name"): (("StringWrapper", "ab"), ("StringWrapper", "zé"), 0, 20),
             ("dt=a", "ts"): (("LongWrapper", 3), ("LongWrapper", 4), 0, 20)}
    assert stats_view(base, version) == third
    r = timeline.create_instant("db1", "t1", None, "restore", restore_plan(t2, []), 60).ts
    timeline.transition_to_inflight("db1", "t1", r, "restore", b"")
    timeline.complete_instant("db1", "t1", r, "restore", b"")
    assert stats_view(base, version) == second
    # narrowed again; the clean of g3's older version writes nothing
    _commit(timeline, None, {("dt=a", "g3-0"): narrow})
    assert stats_view(base, version) == third
    timeline.delete_savepoint("db1", "t1", t2)
    files = sorted(os.listdir(os.path.join(base, ".hoodie", "metadata", P.PARTITION_STATS)))
    _clean(timeline, None, {"dt=a": [f"g3-0_0-1-1_{t2}.parquet"]})
    assert sorted(os.listdir(os.path.join(base, ".hoodie", "metadata", P.PARTITION_STATS))) == files
    # a file of a new partition without statistics of `ts`: `ts` leaves every partition
    _commit(timeline, None, {("dt=c", "g4-0"): [_bounds("id", 30, 31), _bounds("name", "x", "y")]})
    fourth = {k: v for k, v in third.items() if k[1] != "ts"} | {
        ("dt=c", "id"): ((i, 30), (i, 31), 0, 10), ("dt=c", "name"): (("StringWrapper", "x"), ("StringWrapper", "y"),
                                                                    0, 10)}
    assert stats_view(base, version) == fourth
    assert _listed(base) == "column_stats,files,partition_stats"


def test_not_written_for_version_6_or_when_turned_off(tmp_path):
    for name, version, props in (("v6", 6, {}), ("off", 9, {PARTITION_STATS_ENABLE: "false"})):
        timeline, _mirror, base = _table(tmp_path / name, props, version)
        _commit(timeline, None, {("dt=a", "g1-0"): [_bounds("id", 1, 9)]})
        assert _listed(base) == "column_stats,files", name
        assert not os.path.exists(os.path.join(base, ".hoodie", "metadata", P.PARTITION_STATS)), name


def _savepoint(timeline, ts: str) -> None:
    timeline.create_instant("db1", "t1", ts, "savepoint", b"", 60)
    timeline.transition_to_inflight("db1", "t1", ts, "savepoint", b"")
    timeline.complete_instant("db1", "t1", ts, "savepoint", b"")


def _restore(timeline, target: str) -> None:
    r = timeline.create_instant("db1", "t1", None, "restore", restore_plan(target, []), 60).ts
    timeline.transition_to_inflight("db1", "t1", r, "restore", b"")
    timeline.complete_instant("db1", "t1", r, "restore", b"")


@pytest.mark.parametrize(("version", "compact_after"), [(8, None), (9, 2)])
def test_merge_on_read_partition_stats_cover_log_files(tmp_path, version, compact_after):
    """A merge-on-read table, as Hudi 1.2 writes it (tests/unit/hudi_format/
    test_metadata_partition_stats_files.py, merge-on-read fixture): a partition's record covers its
    latest slices' base files and log files (bounds their union, counts their sums; sizes the base
    files' alone); a restore taking a log file away and a compaction narrow it again; a log file of
    deletes alone changes nothing; a log file without statistics takes every column out."""
    timeline, mirror, base = _table(tmp_path, {}, version, MOR)
    if compact_after:
        mirror.metadata_table.partition_stats.compact_after = compact_after
    i, s, n = "IntWrapper", "StringWrapper", "LongWrapper"
    t1 = _commit(timeline, None, {("dt=a", "g1-0"): [_bounds("id", 1, 9), _bounds("name", "ab", "zé"),
                                                      _bounds("ts", 3, 4)],
                                  ("dt=b", "g2-0"): [_bounds("id", 10, 19), _bounds("name", "c", "d"),
                                                     _bounds("ts", 5, 7)]}, "deltacommit")
    assert _listed(base) == "column_stats,files,partition_stats"
    first = {("dt=a", "id"): ((i, 1), (i, 9), 0, 10), ("dt=a", "name"): ((s, "ab"), (s, "zé"), 0, 10),
             ("dt=a", "ts"): ((n, 3), (n, 4), 0, 10), ("dt=b", "id"): ((i, 10), (i, 19), 0, 10),
             ("dt=b", "name"): ((s, "c"), (s, "d"), 0, 10), ("dt=b", "ts"): ((n, 5), (n, 7), 0, 10)}
    assert stats_view(base, version) == first
    _savepoint(timeline, t1)
    # upserts into a log file of dt=a's slice: the union of its bounds and the base file's, counts summed
    log = f".g1-0_{t1}.log.1_0-1-1"
    _commit(timeline, None, {("dt=a", "g1-0"): [_bounds("id", -5, 100, 0, 3), _bounds("name", "a", "b", 1, 3),
                                                 _bounds("ts", 8, 8, 0, 3)]}, "deltacommit", {("dt=a", "g1-0"): log})
    second = {**first, ("dt=a", "id"): ((i, -5), (i, 100), 0, 13), ("dt=a", "name"): ((s, "a"), (s, "zé"), 1, 13),
              ("dt=a", "ts"): ((n, 3), (n, 8), 0, 13)}
    assert stats_view(base, version) == second
    assert sizes_view(base, version)[("dt=a", "name")] == (104, 304)  # a log file adds no sizes
    # a restore to t1 takes the log file away: dt=a's base file alone again
    _restore(timeline, t1)
    assert stats_view(base, version) == first
    timeline.delete_savepoint("db1", "t1", t1)
    # a new log file as the first, then a compaction: the new base file's bounds alone (the old slice is gone)
    _commit(timeline, None, {("dt=a", "g1-0"): [_bounds("id", -5, 100, 0, 3), _bounds("name", "a", "b", 1, 3),
                                                 _bounds("ts", 8, 8, 0, 3)]}, "deltacommit",
            {("dt=a", "g1-0"): f".g1-0_{t1}.log.2_0-1-1"})
    assert stats_view(base, version) == second
    _commit(timeline, None, {("dt=a", "g1-0"): [_bounds("id", 2, 100, 0, 11), _bounds("name", "a", "zé", 1, 11),
                                                 _bounds("ts", 3, 8, 0, 11)]})
    third = {**first, ("dt=a", "id"): ((i, 2), (i, 100), 0, 11), ("dt=a", "name"): ((s, "a"), (s, "zé"), 1, 11),
             ("dt=a", "ts"): ((n, 3), (n, 8), 0, 11)}
    assert stats_view(base, version) == third
    # a log file of deletes alone in dt=b (no bounds, 0 values: the pipeline's, as Hudi's): unchanged
    _commit(timeline, None, {("dt=b", "g2-0"): [_bounds(c, None, None, 0, 0) for c in ("id", "name", "ts")]},
            "deltacommit", {("dt=b", "g2-0"): f".g2-0_{t1}.log.1_0-1-1"})
    assert stats_view(base, version) == third
    # a log file without statistics in dt=b: no column has usable bounds there, so none is indexed
    _commit(timeline, None, {("dt=b", "g2-0"): None}, "deltacommit", {("dt=b", "g2-0"): f".g2-0_{t1}.log.2_0-1-1"})
    assert stats_view(base, version) == {}
    assert _listed(base) == "column_stats,files,partition_stats"
