"""Merge-on-read writes (issue 38): a fixed sequence of inserts, upserts (with repeated keys and
partition moves), deletes and a re-insert on a merge-on-read table; after every step pipeline.read's
snapshot and hudi-rs (reading storage) equal the model, the read-optimized query equals the base
files' rows, and the incremental read of the step gives what it wrote. One backend: the backend
does not shape the files the pipeline writes.
"""

from __future__ import annotations

import uuid

import pytest

from client import HudiMetastoreClient
from pipeline import read, write
from tests.pipeline_helpers import base_dir, hudi_rs, hudi_rs_slices, instants, ours, uri

pytestmark = [pytest.mark.spark, pytest.mark.slow, pytest.mark.backends("sqlite")]

SCHEMA = "id long, name string, ts long, dt string"
COLS = ["id", "name", "ts", "dt"]
MOR = "MERGE_ON_READ"


def _apply(model: dict, op: str, rows: list) -> dict:
    model = dict(model)
    for r in rows:
        if op == "delete":
            model.pop(str(r[0]), None)
        else:
            model[str(r[0])] = r
    return model


# (operation, rows): ts grows, so the newest write of a key is also its greatest precombine value
STEPS = [
    ("insert", [(k, "a", 1, f"p{k % 2}") for k in range(6)]),
    ("upsert", [(1, "b", 2, "p1"), (2, "b", 2, "p0"), (2, "c", 3, "p0"), (7, "n", 2, "p1")]),
    ("delete", [(0, None, 4, "p0"), (1, None, 4, "p1")]),
    ("upsert", [(3, "moved", 5, "p0"), (2, "d", 5, "p0")]),  # key 3 moves from p1 to p0
    ("upsert", [(1, "back", 6, "p1")]),  # a deleted key comes back
]


def _server_slices(port: int, table: str) -> dict:
    """As tests.pipeline_helpers.server_slices, with the log files."""
    db, name = table.split(".")
    with HudiMetastoreClient(uri(port)) as c:
        return {(s.partitionPath, s.fileId): (s.baseInstant, s.baseFile.name if s.baseFile else None,
                                              tuple(f.name for f in s.logFiles or []))
                for s in c.get_latest_file_slices(db, name)}


def test_merge_on_read_sequence(spark, our_server):
    table = f"mor_{uuid.uuid4().hex[:8]}.t"
    model: dict = {}
    before = None
    for step, (op, rows) in enumerate(STEPS):
        instant = write(spark.createDataFrame(rows, SCHEMA), table, op, record_key="id", precombine_field="ts",
                        partition_by="dt", metastore=uri(our_server), table_type=MOR)
        model = _apply(model, op, rows)
        where = f"step {step}: {op} {rows}"
        assert ours(spark, our_server, table, COLS) == model, where
        base = base_dir(our_server, table)
        assert hudi_rs(base, COLS) == model, where
        written = set() if op == "delete" else {str(r[0]) for r in rows}
        assert ours(spark, our_server, table, COLS, since=before, until=instant) == \
            {k: v for k, v in model.items() if k in written}, where
        before = instant
    done = instants(our_server, table, states=["COMPLETED"])
    assert [i.action for i in done] == ["deltacommit"] * len(STEPS)
    assert _server_slices(our_server, table) == hudi_rs_slices(base_dir(our_server, table))
    # read-optimized: the base files alone. Step 1 rewrote p1's small file (it took key 7, with key
    # 1's update); every later change of the first two file groups is in their logs, and the moved
    # key 3 and the returning key 1 went to new file groups (slices with logs take no inserts).
    ro = read(spark, table, metastore=uri(our_server), query_type="read_optimized").select(*COLS).collect()
    assert sorted(tuple(r) for r in ro) == sorted(
        [(0, "a", 1, "p0"), (2, "a", 1, "p0"), (4, "a", 1, "p0"), (1, "b", 2, "p1"), (3, "a", 1, "p1"),
         (5, "a", 1, "p1"), (7, "n", 2, "p1"), (3, "moved", 5, "p0"), (1, "back", 6, "p1")])
