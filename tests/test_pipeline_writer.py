"""pipeline.write / pipeline.read against our server (every backend): each operation on COW tables
(hive-style, plain multi-level, non-partitioned), commit metadata, small-file bin-packing, schema
evolution, time travel, incremental reads and partition pruning. hudi-rs reads storage as the oracle."""

from __future__ import annotations

import json
import uuid

import pytest

from client import HudiCatalog, HudiMetastoreClient
from pipeline import SchemaEvolutionError, write
from pipeline.reader import plan
from tests.pipeline_helpers import (
    base_dir,
    data_files,
    hudi_rs,
    hudi_rs_slices,
    instants,
    listed_files,
    ours,
    server_slices,
    uri,
)

pytestmark = [pytest.mark.spark]
# the pipeline's own behaviour, not the database's: each on one backend (tests/conftest.py);
# the server's pruning plan stays on all three
IN_TURN = pytest.mark.backends_in_turn("mysql", "postgresql", "sqlite")

HIVE = {"hoodie.datasource.write.hive_style_partitioning": "true"}
SCHEMA = "id long, name string, ts long, region string, dt string"
COLS = ["id", "name", "ts", "region", "dt"]


def _table() -> str:
    return f"pl_{uuid.uuid4().hex[:8]}.t"


def _check(spark, port, table, expected: dict):
    """Our reader == hudi-rs == expected; server slices == hudi-rs slices."""
    base = base_dir(port, table)
    assert ours(spark, port, table, COLS) == expected
    assert hudi_rs(base, COLS) == expected
    assert server_slices(port, table) == hudi_rs_slices(base)


def _rows(spark, rows):
    return spark.createDataFrame(rows, SCHEMA)


def _expect(rows, key=lambda r: str(r[0])):
    return {key(r): tuple(r) for r in rows}


@pytest.mark.backends_in_turn  # a layout per backend (the property test samples them on each backend)
@pytest.mark.parametrize("layout", ["hive", "plain_multi", "unpartitioned"])
def test_operations_in_sequence(spark, our_server, layout):
    t = _table()
    part = {"hive": ["dt"], "plain_multi": ["region", "dt"], "unpartitioned": []}[layout]
    opts = HIVE if layout == "hive" else {}
    r1 = [(1, "a", 1, "eu", "d1"), (2, "b", 1, "us", "d1"), (3, "c", 1, "eu", "d2")]
    ts1 = write(_rows(spark, r1), t, "insert", record_key="id", precombine_field="ts", partition_by=part,
                metastore=uri(our_server), options=opts)
    _check(spark, our_server, t, _expect(r1))

    # upsert: update 1 (a duplicate in the batch: the greater ts wins), insert 4
    up = [(1, "a2", 5, "eu", "d1"), (1, "a1", 3, "eu", "d1"), (4, "d", 1, "us", "d2")]
    ts2 = write(_rows(spark, up), t, "upsert", metastore=uri(our_server))
    exp = _expect([(1, "a2", 5, "eu", "d1"), r1[1], r1[2], up[2]])
    _check(spark, our_server, t, exp)
    assert ts2 > ts1

    # delete 2 (and a key that does not exist)
    write(_rows(spark, [(2, None, None, "us", "d1"), (99, None, None, "us", "d1")]), t, "delete",
          metastore=uri(our_server))
    del exp["2"]
    _check(spark, our_server, t, exp)

    # time travel and incremental
    assert ours(spark, our_server, t, COLS, as_of=ts1) == _expect(r1)
    assert ours(spark, our_server, t, COLS, since=ts1, until=ts2) == {
        "1": exp["1"], "4": exp["4"]}

    # bulk_insert of new keys
    write(_rows(spark, [(5, "e", 1, "eu", "d3")]), t, "bulk_insert", metastore=uri(our_server))
    exp["5"] = (5, "e", 1, "eu", "d3")
    _check(spark, our_server, t, exp)

    # insert_overwrite: partitions written are replaced
    ow = [(6, "f", 1, "eu", "d1")]
    write(_rows(spark, ow), t, "insert_overwrite", metastore=uri(our_server))
    if layout == "unpartitioned":
        exp = _expect(ow)
    else:
        written = {"hive": lambda r: r[4] == "d1", "plain_multi": lambda r: (r[3], r[4]) == ("eu", "d1")}[layout]
        exp = {k: v for k, v in exp.items() if not written(v)}
        exp.update(_expect(ow))
    _check(spark, our_server, t, exp)

    if layout != "unpartitioned":
        # delete_partition: the partitions of the DataFrame's rows go, HMS partitions too
        before = set(_hms_partitions(our_server, t))
        write(_rows(spark, [(0, None, None, "eu", "d2")]), t, "delete_partition", metastore=uri(our_server))
        gone = "dt=d2" if layout == "hive" else "eu/d2"
        exp = {k: v for k, v in exp.items() if not (v[4] == "d2" and (layout == "hive" or v[3] == "eu"))}
        _check(spark, our_server, t, exp)
        after = set(_hms_partitions(our_server, t))
        assert gone in before and gone not in after

    # insert_overwrite_table: everything replaced
    final = [(7, "g", 1, "us", "d9")]
    write(_rows(spark, final), t, "insert_overwrite_table", metastore=uri(our_server))
    _check(spark, our_server, t, _expect(final))

    acts = [(i.action) for i in instants(our_server, t)]
    assert acts.count("replacecommit") == (3 if layout != "unpartitioned" else 2)


def _hms_partitions(port, table):
    db, name = table.split(".")
    with HudiMetastoreClient(uri(port)) as c:
        return c.get_hudi_partitions(db, name)


@IN_TURN
def test_commit_metadata_and_base_files(spark, our_server):
    t = _table()
    ts = write(_rows(spark, [(1, "a", 1, "eu", "d1"), (2, "b", 1, "eu", "d2")]), t, "insert", record_key="id",
               precombine_field="ts", partition_by="dt", metastore=uri(our_server), options=HIVE)
    db, name = t.split(".")
    with HudiMetastoreClient(uri(our_server)) as c:
        meta = json.loads(c.get_instant_metadata(db, name, ts, "commit"))
        cfg = c.get_hudi_table(db, name)
        table = c.get_table(db, name)
    assert meta["operationType"] == "INSERT"
    schema = json.loads(meta["extraMetadata"]["schema"])
    assert schema["name"] == "t_record" and [f["name"] for f in schema["fields"]] == COLS
    stats = meta["partitionToWriteStats"]
    assert sorted(stats) == ["dt=d1", "dt=d2"]
    for p, ss in stats.items():
        (s,) = ss
        assert s["path"].startswith(p + "/") and s["path"].endswith(f"_{ts}.parquet")
        assert s["path"].split("/")[-1].startswith(s["fileId"] + "_")
        assert s["numWrites"] == 1 and s["numInserts"] == 1 and s["prevCommit"] == "null"
        assert s["fileSizeInBytes"] > 0
    assert cfg.recordKeyFields == ["id"] and cfg.partitionFields == ["dt"] and cfg.hiveStylePartitioning
    assert [k.name for k in table.partitionKeys] == ["dt"]
    assert [c.name for c in table.sd.cols][:5] == ["_hoodie_commit_time", "_hoodie_commit_seqno",
                                                    "_hoodie_record_key", "_hoodie_partition_path",
                                                    "_hoodie_file_name"]
    import pyarrow.parquet as pq

    base = base_dir(our_server, t)
    f = pq.read_table(f"{base}/{stats['dt=d1'][0]['path']}")
    assert f.column_names == ["_hoodie_commit_time", "_hoodie_commit_seqno", "_hoodie_record_key",
                              "_hoodie_partition_path", "_hoodie_file_name"] + COLS
    row = f.to_pylist()[0]
    assert row["_hoodie_commit_time"] == ts and row["_hoodie_record_key"] == "1"
    assert row["_hoodie_partition_path"] == "dt=d1" and row["_hoodie_commit_seqno"].startswith(ts + "_")
    assert row["_hoodie_file_name"] == stats["dt=d1"][0]["path"].split("/")[-1]


@IN_TURN
def test_small_files_are_filled_before_new_file_groups(spark, our_server):
    t = _table()
    # first write: no commit to learn the record size from, the estimate (1000 bytes) gives 40 per file;
    # then the average of the last commit (far less) leaves room in the small files
    opts = {**HIVE, "hoodie.parquet.max.file.size": "40000", "hoodie.parquet.small.file.limit": "30000",
            "hoodie.copyonwrite.record.size.estimate": "1000"}
    rows = [(i, f"n{i}", 1, "eu", "d1") for i in range(100)]
    write(_rows(spark, rows), t, "insert", record_key="id", precombine_field="ts", partition_by="dt",
          metastore=uri(our_server), options=opts)
    groups = server_slices(our_server, t)
    assert len(groups) == 3  # ceil(100 / 40)
    more = [(i, f"n{i}", 1, "eu", "d1") for i in range(100, 110)]
    write(_rows(spark, more), t, "insert", metastore=uri(our_server), options=opts)
    after = server_slices(our_server, t)
    assert set(after) == set(groups)  # went into existing small file groups, no new one
    _check(spark, our_server, t, _expect(rows + more))


@IN_TURN
def test_schema_evolution(spark, our_server):
    t = _table()
    write(_rows(spark, [(1, "a", 1, "eu", "d1")]), t, "insert", record_key="id", precombine_field="ts",
          partition_by="dt", metastore=uri(our_server))
    # an added column: older rows read it as null
    df = spark.createDataFrame([(2, "b", 1, "eu", "d1", 2.5)], SCHEMA + ", score double")
    write(df, t, "upsert", metastore=uri(our_server))
    got = ours(spark, our_server, t, COLS + ["score"])
    assert got == {"1": (1, "a", 1, "eu", "d1", None), "2": (2, "b", 1, "eu", "d1", 2.5)}
    assert hudi_rs(base_dir(our_server, t), COLS + ["score"]) == got
    # an incompatible change fails before anything is written: no instant, no file
    n_instants, files = len(instants(our_server, t)), data_files(base_dir(our_server, t))
    bad = spark.createDataFrame([(3, 7, 1, "eu", "d1")], "id long, name int, ts long, region string, dt string")
    with pytest.raises(SchemaEvolutionError, match="name"):
        write(bad, t, "upsert", metastore=uri(our_server))
    assert len(instants(our_server, t)) == n_instants and data_files(base_dir(our_server, t)) == files


def test_partition_pruning_is_planned_by_the_server(spark, our_server):
    t = _table()
    rows = [(i, "x", 1, "eu" if i % 2 else "us", f"d{i % 5}") for i in range(20)]
    write(_rows(spark, rows), t, "insert", record_key="id", precombine_field="ts", partition_by=["region", "dt"],
          metastore=uri(our_server), options=HIVE)
    with HudiCatalog(uri(our_server)) as c:
        p = plan(c, t, filters=[("region", "=", "eu"), ("dt", "in", ["d1", "d3"]), ("id", ">", 4)])
        assert {f.split("/")[0] + "/" + f.split("/")[1] for f in p.files} == {"region=eu/dt=d1", "region=eu/dt=d3"}
        p2 = plan(c, t, filters="region = 'us' and dt = 'd0'")
        assert len(p2.files) == 1 and p2.files[0].startswith("region=us/dt=d0/")
    # one key field, two partition fields: ComplexKeyGenerator, whose keys Hudi writes `id:<value>`
    import pyarrow.parquet as pq

    with HudiCatalog(uri(our_server)) as c:
        keys = [pq.read_table(f"{base_dir(our_server, t)}/{f}", columns=["_hoodie_record_key"]).column(0).to_pylist()
                for f in plan(c, t).files]
    assert sorted(k for ks in keys for k in ks) == sorted(f"id:{r[0]}" for r in rows)
    got = ours(spark, our_server, t, ["id"],
               filters=[("region", "=", "eu"), ("dt", "in", ["d1", "d3"]), ("id", ">", 4)])
    assert sorted(v[0] for v in got.values()) == sorted(
        r[0] for r in rows if r[3] == "eu" and r[4] in ("d1", "d3") and r[0] > 4)


@IN_TURN
def test_bad_input_is_refused_before_writing(spark, our_server):
    t = _table()
    with pytest.raises(ValueError, match="unknown write operation"):
        write(_rows(spark, []), t, "merge", record_key="id", metastore=uri(our_server))
    with pytest.raises(ValueError, match="database.table"):
        write(_rows(spark, []), "nodb", "insert", record_key="id", metastore=uri(our_server))
    with pytest.raises(ValueError, match="record_key"):
        write(_rows(spark, [(1, "a", 1, "eu", "d1")]), t, "insert", metastore=uri(our_server))
    write(_rows(spark, [(1, "a", 1, "eu", "d1")]), t, "insert", record_key="id", partition_by="dt",
          metastore=uri(our_server))
    with pytest.raises(ValueError, match="config conflict"):
        write(_rows(spark, [(1, "a", 1, "eu", "d1")]), t, "upsert", record_key="name", metastore=uri(our_server))
    from pipeline import HudiWriteError

    with pytest.raises(HudiWriteError, match="null record key"):
        write(_rows(spark, [(None, "a", 1, "eu", "d1")]), t, "upsert", metastore=uri(our_server))
    assert len(instants(our_server, t)) == 1
    assert listed_files(our_server, t) == data_files(base_dir(our_server, t))

    # a failed first write leaves no table registered
    fresh = _table()
    with pytest.raises(HudiWriteError, match="null record key"):
        write(_rows(spark, [(None, "a", 1, "eu", "d1")]), fresh, "insert", record_key="id",
              metastore=uri(our_server))
    from thrift_idl.hive_metastore.ttypes import NoSuchObjectException

    with HudiMetastoreClient(uri(our_server)) as c, pytest.raises(NoSuchObjectException):
        c.get_table(*fresh.split("."))


@IN_TURN
def test_object_style_api(spark, our_server):
    from pipeline import HudiTable

    t = HudiTable(spark, _table(), metastore=uri(our_server))
    ts = t.write(_rows(spark, [(1, "a", 1, "eu", "d1")]), "insert", record_key="id", partition_by="dt")
    t.write(_rows(spark, [(2, "b", 1, "eu", "d2")]), "upsert")
    assert t.instants()[0] == ts and len(t.instants()) == 2
    assert t.partitions() == ["d1", "d2"] and t.partitions("dt = 'd2'") == ["d2"]
    assert sorted(r.id for r in t.read().collect()) == [1, 2]
    assert [r.id for r in t.read(as_of=ts).collect()] == [1]
