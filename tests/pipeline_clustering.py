"""Clustering run inline by the pipeline (issue 38): a sort column the table lacks fails the first
write; two bulk inserts leave two small file groups per partition and make a clustering due
(`hoodie.clustering.inline.max.commits` 2); the next write runs it first (a replacecommit: one file
group per partition, records sorted by `name`), then upserts (the clustered records in place: the
record index followed them); while another executor runs a clustering, an upsert into its file
groups is refused. After every step our reader and
hudi-rs equal the model, the server's slices equal hudi-rs's, and our incremental read across the
clustering returns only what the writes wrote. Run by tests/test_pipeline_hudi_reader.py (its Hudi
Spark job then reads the table: snapshot, time travel and incremental, the clustering included).
"""

from __future__ import annotations

import json
import uuid

import pytest

from client import HudiCatalog
from hudi_format.config_keys import (
    CLUSTERING_INLINE,
    CLUSTERING_MAX_COMMITS,
    CLUSTERING_SORT_COLUMNS,
    HIVE_STYLE_PARTITIONING,
)
from pipeline import write
from tests.pipeline_helpers import base_dir, hudi_rs, hudi_rs_slices, ours, server_slices, uri

SCHEMA = "id long, name string, ts long, dt string"
COLS = ["id", "name", "ts", "dt"]
STEPS = [
    ("bulk_insert", [(k, "zyxwvu"[k], 1, f"p{k % 2}") for k in range(6)]),
    ("bulk_insert", [(k, "fedcba"[k - 6], 2, f"p{k % 2}") for k in range(6, 12)]),  # -> clustering due
    ("upsert", [(1, "new", 3, "p1"), (8, "new", 3, "p0"), (12, "n", 3, "p0")]),  # runs it first
]


def c_pending(port: int, table: str) -> list[str]:
    """States of the table's clusterings not completed."""
    with HudiCatalog(uri(port)) as c:
        return [i.state for i in c.list_instants(*table.split("."), actions=["clustering"])]


def _sorted_by_name(port: int, table: str, clustered: str) -> None:
    """The clustering wrote one file group per partition, its records sorted by `name`."""
    import pyarrow.parquet as pq

    db, name = table.split(".")
    with HudiCatalog(uri(port)) as c:
        meta = json.loads(c.get_instant_metadata(db, name, clustered, "replacecommit"))
    assert meta["operationType"] == "CLUSTER"
    assert {p: len(ids) for p, ids in meta["partitionToReplaceFileIds"].items()} == {"dt=p0": 2, "dt=p1": 2}
    base = base_dir(port, table)
    for p, stats in meta["partitionToWriteStats"].items():
        [stat] = stats
        names = pq.read_table(f"{base}/{stat['path']}", columns=["name"]).column("name").to_pylist()
        assert names == sorted(names) and len(names) == 6, p


def clustered_sequence(spark, our_server) -> dict:
    table = f"cl_{uuid.uuid4().hex[:8]}.t"
    db, name = table.split(".")
    opts = {HIVE_STYLE_PARTITIONING: "true", CLUSTERING_INLINE: "true", CLUSTERING_MAX_COMMITS: "2",
            CLUSTERING_SORT_COLUMNS: "name"}
    with pytest.raises(ValueError, match="sort.columns: nope not among the columns written"):
        write(spark.createDataFrame(STEPS[0][1], SCHEMA), table, "bulk_insert", record_key="id",
              precombine_field="ts", partition_by="dt", metastore=uri(our_server),
              options={**opts, CLUSTERING_SORT_COLUMNS: "nope"})
    model: dict = {}
    history: list[tuple[str, dict]] = []
    last_write: dict[str, str] = {}
    for step, (op, rows) in enumerate(STEPS):
        instant = write(spark.createDataFrame(rows, SCHEMA), table, op, record_key="id", precombine_field="ts",
                        partition_by="dt", metastore=uri(our_server), options=opts)
        with HudiCatalog(uri(our_server)) as c:
            done = [i for i in c.list_instants(db, name) if i.state == "COMPLETED"]
        if step == 1:  # two small file groups per partition: due
            assert len(server_slices(our_server, table)) == 4 and done[-1].action == "commit"
            assert c_pending(our_server, table) == ["REQUESTED"]
        if step == 2:  # the clustering ran before this write: the table as of it is the model before
            [clustered] = [i.ts for i in done if i.action == "replacecommit"]
            assert clustered < instant
            history.append((clustered, model))
            _sorted_by_name(our_server, table, clustered)
        model = {**model, **{str(r[0]): r for r in rows}}
        last_write.update({str(r[0]): instant for r in rows})
        history.append((instant, model))
        base = base_dir(our_server, table)
        assert ours(spark, our_server, table, COLS) == model, step
        assert hudi_rs(base, COLS) == model, step
        assert server_slices(our_server, table) == hudi_rs_slices(base), step
    assert [i.action for i in done] == ["commit", "commit", "replacecommit", "commit"]
    first = history[0][0]
    assert ours(spark, our_server, table, COLS, since=first) == {k: v for k, v in model.items()
                                                                  if last_write[k] > first}
    _refused_while_clustering_runs(spark, our_server, table, opts, model)
    return {"table": table, "base": base_dir(our_server, table), "model": model, "history": history,
            "last_write": last_write}


def _refused_while_clustering_runs(spark, port: int, table: str, opts: dict, model: dict) -> None:
    """A clustering another executor runs (claimed, heartbeating): an upsert of a record in a file
    group it replaces fails before its commit, and the table reads as before."""
    from hudi_format.commit_metadata import ClusteringGroup, ClusteringPlan, ClusteringSlice, clustering_plan
    from pipeline.compaction import claim
    from pipeline.errors import HudiWriteError

    db, name = table.split(".")
    [((p, fid), (_, base_name, _))] = [(k, v) for k, v in server_slices(port, table).items() if k[0] == "dt=p1"]
    plan = clustering_plan(ClusteringPlan([ClusteringGroup([ClusteringSlice(p, fid, base_name, [])])]),
                           CLUSTERING_SORT_COLUMNS)
    with HudiCatalog(uri(port)) as c:
        ts = c.create_instant(db, name, None, "clustering", plan).ts
        claim(c, db, name, ts, "clustering")
    with pytest.raises(HudiWriteError, match=f"file group {fid} in 'dt=p1' is under pending clustering {ts}"):
        write(spark.createDataFrame([(1, "refused", 9, "p1")], SCHEMA), table, "upsert", metastore=uri(port),
              options=opts)
    assert ours(spark, port, table, COLS) == model
