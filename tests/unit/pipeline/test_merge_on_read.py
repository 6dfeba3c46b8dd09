"""Merge-on-read without Spark: the log blocks the pipeline writes read back (hudi_format/log_file.py),
and a slice's base file merged with its logs by precombine value, deletes and rollback blocks
(pipeline/merge_on_read.py)."""

from __future__ import annotations

import json

import pyarrow as pa
import pytest

from hudi_format.commit_metadata import CompactionOperation, compaction_plan, parse_compaction_plan
from hudi_format.file_slice import parse_file_name
from hudi_format.log_file import (
    AVRO_DATA,
    COMMAND,
    COMMAND_BLOCK_TYPE,
    DELETE,
    INSTANT_TIME,
    ROLLBACK,
    TARGET_INSTANT_TIME,
    avro_data_block,
    blocks,
    data_block_records,
    delete_block,
    deleted_keys,
    encode_block,
    log_file_name,
)
from pipeline.base_file import with_meta, write_base_file
from pipeline.file_group_writer import log_schema
from pipeline.merge_on_read import read_slice

AVRO = json.dumps({"type": "record", "name": "t_record", "namespace": "hoodie.t", "fields": [
    {"name": "id", "type": ["null", "long"], "default": None},
    {"name": "ts", "type": ["null", "long"], "default": None},
    {"name": "m", "type": ["null", {"type": "map", "values": ["null", "long"]}], "default": None}]})
DATA = pa.schema([("id", pa.int64()), ("ts", pa.int64()), ("m", pa.map_(pa.string(), pa.int64()))])
SCHEMA = with_meta(DATA)


def T(n: int) -> str:  # noqa: N802 - an instant time
    return f"2026010100000000{n}"


def _record(instant: str, key: int, ts: int, m=None) -> dict:
    return {"_hoodie_commit_time": instant, "_hoodie_commit_seqno": f"{instant}_0_{key}",
            "_hoodie_record_key": str(key), "_hoodie_partition_path": "p", "_hoodie_file_name": "f1-0",
            "id": key, "ts": ts, "m": m}


def _data(instant: str, *rows) -> bytes:
    return avro_data_block(instant, log_schema(AVRO), [_record(instant, *r) for r in rows])


def test_blocks_read_back():
    name = log_file_name("f1-0", T(1), 2, "0-1-0")
    assert parse_file_name(name) == ("f1-0", T(1), True, 2)
    raw = _data(T(2), (1, 5, {"a": 1})) + delete_block(T(2), [("2", "p")])
    data, gone = list(blocks(raw))
    assert (data.block_type, data.instant, gone.block_type) == (AVRO_DATA, T(2), DELETE)
    assert [(r["id"], r["m"], r["_hoodie_record_key"]) for r in data_block_records(data)] == [(1, {"a": 1}, "1")]
    assert deleted_keys(gone) == ["2"]


def _slice(tmp_path, *logs: bytes) -> tuple[str, list[str]]:
    base = str(tmp_path / f"f1-0_0-1-0_{T(1)}.parquet")
    write_base_file(base, pa.Table.from_pylist([_record(T(1), k, 10) for k in (1, 2, 3)], schema=SCHEMA))
    paths = []
    for i, raw in enumerate(logs, 1):
        p = tmp_path / log_file_name("f1-0", T(1), i, "0-1-0")
        p.write_bytes(raw)
        paths.append(str(p))
    return base, paths


def _merged(t: pa.Table) -> dict:
    return {r["id"]: (r["ts"], r["_hoodie_commit_time"]) for r in t.to_pylist()}


def test_slice_merges_by_precombine_deletes_and_rollbacks(tmp_path):
    rollback = encode_block(COMMAND, {INSTANT_TIME: T(5), TARGET_INSTANT_TIME: T(4), COMMAND_BLOCK_TYPE: ROLLBACK},
                            b"")
    base, logs = _slice(tmp_path,
                        _data(T(2), (1, 11), (2, 9), (4, 1)),  # 1 wins; 2 loses to the base's greater ts
                        delete_block(T(3), [("3", "p"), ("4", "p")]),
                        _data(T(4), (1, 99)) + rollback,  # rolled back
                        _data(T(6), (4, 0)))  # a deleted key comes back
    assert _merged(read_slice(base, logs, SCHEMA, "ts")) == {1: (11, T(2)), 2: (10, T(1)), 4: (0, T(6))}
    # no precombine field: the later record wins
    assert _merged(read_slice(base, logs, SCHEMA, None))[2] == (9, T(2))
    # as of an instant: later blocks are skipped
    assert _merged(read_slice(base, logs, SCHEMA, "ts", as_of=T(2))) == {1: (11, T(2)), 2: (10, T(1)),
                                                                          3: (10, T(1)), 4: (1, T(2))}


def test_compaction_plan_reads_back():
    op = CompactionOperation("p", "f1-0", T(1), f"f1-0_0-1-0_{T(1)}.parquet", [f".f1-0_{T(1)}.log.1_0-1-0"])
    assert parse_compaction_plan(compaction_plan([op])) == [op]
    with pytest.raises(Exception, match="HoodieCompactionPlan"):
        parse_compaction_plan(b"not avro")


def test_slice_whose_every_record_is_deleted_reads_empty(tmp_path):
    """(Found by tests/test_pipeline_services_property.py: a file group whose keys were all deleted.)"""
    base, logs = _slice(tmp_path, delete_block(T(2), [("1", "p"), ("2", "p"), ("3", "p")]))
    merged = read_slice(base, logs, SCHEMA, "ts")
    assert merged.num_rows == 0 and merged.schema.names == read_slice(base, [], SCHEMA, "ts").schema.names


def _upserts_and_deletes(rows: list[dict], deleted: list[int]) -> tuple[pa.Table, pa.Table]:
    def table(rs: list[dict], delete: bool) -> pa.Table:
        return pa.Table.from_pylist([{**r, "_hoodie_record_key": str(r["id"]), "_delete": delete} for r in rs],
                                    schema=DATA.append(pa.field("_hoodie_record_key", pa.string()))
                                    .append(pa.field("_delete", pa.bool_())))
    return table(rows, False), table([{"id": k, "ts": None, "m": None} for k in deleted], True)


class _NoMarkers:
    def add_markers(self, *args) -> None:
        pass


def _appended(w, upserts: pa.Table, deletes: pa.Table, rel: str) -> dict:
    """The write stats row of the log file `w` appends for one file group's records (as a task's run)."""
    [row] = [r for b in w._write_run([("f1-0", pa.concat_tables([upserts, deletes]).to_batches())], "0-1-0",
                                     client=_NoMarkers()) for r in b.to_pylist()]
    assert row["path"] == rel
    return row


def test_log_file_write_stat_carries_its_data_records_statistics(tmp_path):
    from hudi_format.storage_strategy import HiveStorageStrategy
    from pipeline.file_group_writer import FileGroupWriter
    from pipeline.storage import FileLayout

    w = FileGroupWriter(metastore="thrift://127.0.0.1:1", db="d", table="t",
                        layout=FileLayout(HiveStorageStrategy(str(tmp_path))), instant=T(2), data_schema=DATA,
                        groups={"f1-0": ("p", None, T(1))}, stats_columns=["id", "ts"],
                        appends={"f1-0": (T(1), 1)}, avro_schema=AVRO)
    rel = "p/" + log_file_name("f1-0", T(1), 1, "0-1-0")
    upserts, deletes = _upserts_and_deletes([{"id": 7, "ts": 40, "m": None}, {"id": 3, "ts": None, "m": None},
                                             {"id": 5, "ts": 100, "m": {"a": 1}}], [9])
    row = _appended(w, upserts, deletes, rel)
    stats = {c["column"]: c for c in json.loads(row["columnStats"])}
    # the upserts only (the deleted key 9 is no data record); sizes 0, as Hudi's log records
    assert stats["id"] == {"column": "id", "min": {"i": 3}, "max": {"i": 7}, "nulls": 0, "values": 3,
                           "size": 0, "usize": 0}
    assert stats["ts"] == {"column": "ts", "min": {"i": 40}, "max": {"i": 100}, "nulls": 1, "values": 3,
                           "size": 0, "usize": 0}
    assert set(stats) == {"id", "ts"}
    # a delete-only log file: no bounds and 0 values (Hudi 1.2's record of such a file); a log file
    # of a table indexing no column: none
    upserts, deletes = _upserts_and_deletes([], [3])
    rel2 = "p/" + log_file_name("f1-0", T(1), 2, "0-1-0")
    w.appends = {"f1-0": (T(1), 2)}
    assert json.loads(_appended(w, upserts, deletes, rel2)["columnStats"]) == [
        {"column": c, "min": None, "max": None, "nulls": 0, "values": 0, "size": 0, "usize": 0} for c in ("id", "ts")]
    w.stats_columns = []
    upserts, _ = _upserts_and_deletes([{"id": 1, "ts": 1, "m": None}], [])
    assert _appended(w, upserts, deletes, rel2)["columnStats"] is None


def test_a_run_of_appended_file_groups_is_encoded_at_once_and_each_log_file_holds_its_own(tmp_path, monkeypatch):
    """A task's run of file groups has its upserts encoded in one pass (`_log_records`); each log
    file still holds its own records, numbered from 0 (`_hoodie_commit_seqno`), with its own
    partition and file name, and its deletes."""
    import pipeline.file_group_writer as fgw
    from hudi_format.log_file import blocks, data_block_records, deleted_keys
    from hudi_format.storage_strategy import HiveStorageStrategy
    from pipeline.storage import FileLayout

    class NoServer:
        def add_markers(self, *args):
            pass

    monkeypatch.setattr(fgw, "executor_client", lambda *a: NoServer())
    groups = {"f1-0": ("p=1", None, T(1)), "f2-0": ("p=2", None, T(1)), "f3-0": ("p=3", None, T(1))}
    w = fgw.FileGroupWriter(metastore="thrift://127.0.0.1:1", db="d", table="t",
                            layout=FileLayout(HiveStorageStrategy(str(tmp_path))), instant=T(2), data_schema=DATA,
                            groups=groups, appends={f: (T(1), 1) for f in groups}, avro_schema=AVRO)
    rows = {"f1-0": ([{"id": 1, "ts": 5, "m": None}, {"id": 2, "ts": None, "m": {"k": 3}}], []),
            "f2-0": ([], [7]),
            "f3-0": ([{"id": 9, "ts": 6, "m": None}], [8])}
    run = []
    for fid, (ups, dels) in rows.items():
        u, d = _upserts_and_deletes(ups, dels)
        run.append((fid, pa.concat_tables([u, d]).to_batches()))
    stats = pa.Table.from_batches(list(w._write_run(run, "0-1-0"))).to_pylist()
    assert [s["numWrites"] for s in stats] == [2, 0, 1] and [s["numDeletes"] for s in stats] == [0, 1, 1]
    for s in stats:
        with open(tmp_path / s["path"], "rb") as f:
            found = list(blocks(f.read()))
        records = [r for b in found if b.block_type == 3 for r in data_block_records(b)]
        ppath = groups[s["fileId"]][0]
        ups, dels = rows[s["fileId"]]
        assert [(r["id"], r["ts"], r["m"]) for r in records] == [(u["id"], u["ts"], u["m"]) for u in ups]
        assert [r["_hoodie_commit_seqno"] for r in records] == [f"{T(2)}_0_{i}" for i in range(len(ups))]
        assert {(r["_hoodie_partition_path"], r["_hoodie_file_name"], r["_hoodie_commit_time"]) for r in records} <= {
            (ppath, s["fileId"], T(2))}
        assert [k for b in found if b.block_type == 1 for k in deleted_keys(b)] == [str(k) for k in dels]
