"""Merge-on-read writes (issue 38): a fixed sequence of inserts, upserts (with repeated keys and
partition moves), deletes and a re-insert on a merge-on-read table; after every step pipeline.read's
snapshot and hudi-rs (reading storage) equal the model (and the incremental read of the steps after
the compaction gives what they wrote); at the end the server's slices equal hudi-rs's and the read-optimized query gives
the base files' rows. Run by tests/test_pipeline_hudi_reader.py on one backend (the backend does not
shape the files the pipeline writes), whose Hudi Spark job then reads the same table.
"""

from __future__ import annotations

import uuid

from client import HudiCatalog, HudiMetastoreClient
from hudi_format.config_keys import COMPACT_MAX_DELTA_COMMITS
from pipeline import read, write
from tests.pipeline_helpers import base_dir, hudi_rs, hudi_rs_slices, ours, uri

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


# (operation, rows): ts grows, so the newest write of a key is also its greatest precombine value.
# The server schedules a compaction after every 3 deltacommits; the next write runs it first.
STEPS = [
    ("insert", [(k, "a", 1, f"p{k % 2}") for k in range(6)]),
    ("upsert", [(1, "b", 2, "p1"), (2, "b", 2, "p0"), (2, "c", 3, "p0"), (7, "n", 2, "p1")]),
    ("delete", [(0, None, 4, "p0"), (1, None, 4, "p1")]),  # -> compaction scheduled
    ("upsert", [(3, "moved", 5, "p0"), (2, "d", 5, "p0")]),  # compaction ran; key 3 moves from p1 to p0
    ("upsert", [(1, "back", 6, "p1")]),  # a deleted key comes back
    ("delete", [(7, None, 7, "p1")]),  # -> compaction scheduled (left pending)
]
DELTA_COMMITS = 3


def _timeline(port: int, table: str) -> list[tuple[str, str]]:
    """(action, state) of every instant, oldest first."""
    db, name = table.split(".")
    with HudiCatalog(uri(port)) as c:
        return [(i.action, i.state) for i in c.list_instants(db, name)]


def _server_slices(port: int, table: str) -> dict:
    """As tests.pipeline_helpers.server_slices, with the log files."""
    db, name = table.split(".")
    with HudiMetastoreClient(uri(port)) as c:
        return {(s.partitionPath, s.fileId): (s.baseInstant, s.baseFile.name if s.baseFile else None,
                                              tuple(f.name for f in s.logFiles or []))
                for s in c.get_latest_file_slices(db, name)}


def mor_sequence(spark, our_server) -> dict:
    """Writes and checks the sequence; what Hudi's Spark reader must give back (as
    tests/test_pipeline_hudi_reader.py's sequences)."""
    table = f"mor_{uuid.uuid4().hex[:8]}.t"
    model: dict = {}
    before = None
    history: list[tuple[str, dict]] = []
    last_write: dict[str, str] = {}
    for step, (op, rows) in enumerate(STEPS):
        instant = write(spark.createDataFrame(rows, SCHEMA), table, op, record_key="id", precombine_field="ts",
                        partition_by="dt", metastore=uri(our_server), table_type=MOR,
                        options={COMPACT_MAX_DELTA_COMMITS: str(DELTA_COMMITS)})
        model = _apply(model, op, rows)
        where = f"step {step}: {op} {rows}"
        assert ours(spark, our_server, table, COLS) == model, where
        base = base_dir(our_server, table)
        assert hudi_rs(base, COLS) == model, where
        written = set() if op == "delete" else {str(r[0]) for r in rows}
        if step in (3, 4):  # (Hudi's reader checks every step's incremental read; ours: around a compaction)
            assert ours(spark, our_server, table, COLS, since=before, until=instant) == \
                {k: v for k, v in model.items() if k in written}, where
        before = instant
        history.append((instant, model))
        last_write.update({k: instant for k in written})
    assert _timeline(our_server, table) == [("deltacommit", "COMPLETED")] * 3 + [("commit", "COMPLETED")] + \
        [("deltacommit", "COMPLETED")] * 3 + [("compaction", "REQUESTED")]
    assert _server_slices(our_server, table) == hudi_rs_slices(base_dir(our_server, table))
    # read-optimized: the base files alone. The compaction merged steps 0-2; step 3 rewrote p0's
    # small file (no logs since the compaction) with the moved key 3 and key 2's update; p1's file
    # group has logs (key 3 left, key 7 deleted), so the returning key 1 went to a new file group.
    ro = [tuple(r) for r in read(spark, table, metastore=uri(our_server), query_type="read_optimized")
          .select(*COLS).collect()]
    assert sorted(ro) == sorted(
        [(2, "d", 5, "p0"), (4, "a", 1, "p0"), (3, "moved", 5, "p0"), (3, "a", 1, "p1"), (5, "a", 1, "p1"),
         (7, "n", 2, "p1"), (1, "back", 6, "p1")])
    # time travel to before the compaction (log blocks of later instants skipped)
    then, then_model = history[1]
    assert ours(spark, our_server, table, COLS, as_of=then) == then_model
    assert hudi_rs(base_dir(our_server, table), COLS, as_of=then) == then_model
    return {"table": table, "base": base_dir(our_server, table), "model": model, "history": history,
            "last_write": last_write, "read_optimized": sorted(list(r) for r in ro)}


def compact_and_check(spark, our_server, mor: dict) -> None:
    """Runs the pending compaction (`hudi-metastore table-services run`, in-process: the test's Spark
    session, which it leaves running): the table reads the same, the read-optimized query now too,
    and no compaction is left pending (a second run finds nothing: exit status 1)."""
    from adapter.cli import build_parser

    table, model = mor["table"], mor["model"]
    args = build_parser().parse_args(["table-services", "run", table, "--metastore", uri(our_server)])
    assert args.fn(args) == 0  # (not main(): it would configure the test process's logging)
    assert args.fn(args) == 1
    assert ours(spark, our_server, table, COLS) == model
    assert hudi_rs(mor["base"], COLS) == model
    assert ours(spark, our_server, table, COLS, query_type="read_optimized") == model
    assert _timeline(our_server, table)[-1] == ("commit", "COMPLETED")
