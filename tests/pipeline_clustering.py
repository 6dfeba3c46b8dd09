"""Clustering run inline by the pipeline (issue 38): two bulk inserts leave two small file groups per
partition and make a clustering due (`hoodie.clustering.inline.max.commits` 2); the next write runs
it first (a replacecommit, records sorted by `name`), then upserts. After every step our reader and
hudi-rs equal the model, the server's slices equal hudi-rs's, and our incremental read across the
clustering returns only what the writes wrote. Run by tests/test_pipeline_hudi_reader.py (its Hudi
Spark job then reads the table: snapshot, time travel and incremental, the clustering included).
"""

from __future__ import annotations

import uuid

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


def clustered_sequence(spark, our_server) -> dict:
    table = f"cl_{uuid.uuid4().hex[:8]}.t"
    db, name = table.split(".")
    opts = {HIVE_STYLE_PARTITIONING: "true", CLUSTERING_INLINE: "true", CLUSTERING_MAX_COMMITS: "2",
            CLUSTERING_SORT_COLUMNS: "name"}
    model: dict = {}
    history: list[tuple[str, dict]] = []
    last_write: dict[str, str] = {}
    for step, (op, rows) in enumerate(STEPS):
        instant = write(spark.createDataFrame(rows, SCHEMA), table, op, record_key="id", precombine_field="ts",
                        partition_by="dt", metastore=uri(our_server), options=opts)
        with HudiCatalog(uri(our_server)) as c:
            done = [i for i in c.list_instants(db, name) if i.state == "COMPLETED"]
        if step == 2:  # the clustering ran before this write: the table as of it is the model before
            [clustered] = [i.ts for i in done if i.action == "replacecommit"]
            assert clustered < instant and len(server_slices(our_server, table)) >= 2
            history.append((clustered, model))
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
    return {"table": table, "base": base_dir(our_server, table), "model": model, "history": history,
            "last_write": last_write}
