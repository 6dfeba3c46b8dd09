"""Log compaction end to end (issue 38): a merge-on-read table with `hoodie.log.compaction.inline`
(blocks threshold 3; no compaction due) takes upserts and deletes that add log files to its file
groups; the server schedules a log compaction once a slice holds 3 log blocks, the next write runs it
inline (after which the slice's merged records are one new log file whose blocks carry
COMPACTED_BLOCK_TIMES), and a last one pending is run by `hudi-metastore table-services run`. After
every step pipeline.read and hudi-rs (reading storage) equal the model; time travel to before a log
compaction reads the blocks it replaced; the server's slices equal hudi-rs's."""

from __future__ import annotations

import json
import os
import uuid

import pytest

import pipeline
from client import HudiCatalog, HudiMetastoreClient
from hudi_format.config_keys import (
    COMPACT_MAX_DELTA_COMMITS,
    LOG_COMPACT_BLOCKS_THRESHOLD,
    LOG_COMPACT_ENABLE,
    LOG_COMPACT_INLINE,
)
from hudi_format.log_file import blocks
from pipeline import write
from tests.pipeline_helpers import base_dir, hudi_rs, hudi_rs_slices, ours, uri

pytestmark = [pytest.mark.spark, pytest.mark.backends("sqlite")]

SCHEMA = "id long, name string, ts long, dt string"
COLS = ["id", "name", "ts", "dt"]
OPTIONS = {LOG_COMPACT_INLINE: "true", LOG_COMPACT_BLOCKS_THRESHOLD: "3", COMPACT_MAX_DELTA_COMMITS: "50"}

# ts grows with every write but one: key 2's last upsert carries a smaller ts (the merge keeps the
# greater), and key 1 is deleted and written again (its base record stays deleted). Blocks count as
# Hudi's planner counts them: a log compaction's file holding a delete and a data block counts two.
STEPS = [
    ("insert", [(k, "a", 10, f"p{k % 2}") for k in range(6)]),
    ("upsert", [(1, "b", 20, "p1"), (2, "b", 20, "p0"), (4, "b", 20, "p0")]),
    ("delete", [(1, None, 30, "p1"), (0, None, 30, "p0")]),
    ("upsert", [(2, "old", 5, "p0"), (3, "c", 40, "p1"), (1, "back", 40, "p1")]),  # -> LC1: both groups
    ("upsert", [(5, "d", 50, "p1")]),  # runs LC1 first (2 blocks a group) -> LC2: p1's group (2 + 1 blocks)
    ("delete", [(5, None, 70, "p1")]),  # runs LC2 first -> LC3 of p1's group (2 + 1), left pending
]


def _apply(model: dict, op: str, rows: list) -> dict:
    model = dict(model)
    for r in rows:
        if op == "delete":
            model.pop(str(r[0]), None)
        elif str(r[0]) not in model or model[str(r[0])][2] <= r[2]:
            model[str(r[0])] = r
    return model


def _instants(port: int, table: str) -> list:
    db, name = table.split(".")
    with HudiCatalog(uri(port)) as c:
        return c.list_instants(db, name)


def _slices(port: int, table: str) -> dict:
    db, name = table.split(".")
    with HudiMetastoreClient(uri(port)) as c:
        return {(s.partitionPath, s.fileId): (s.baseInstant, s.baseFile.name if s.baseFile else None,
                                              tuple(f.name for f in s.logFiles or []))
                for s in c.get_latest_file_slices(db, name)}


def _sequence(spark, our_server) -> tuple[str, dict, list]:
    """Writes STEPS; after each our reader and hudi-rs equal the model. (table, model, history)"""
    table = f"lc_{uuid.uuid4().hex[:8]}.t"
    model: dict = {}
    history = []
    for step, (op, rows) in enumerate(STEPS):
        instant = write(spark.createDataFrame(rows, SCHEMA), table, op, record_key="id", precombine_field="ts",
                        partition_by="dt", metastore=uri(our_server), table_type="MERGE_ON_READ", options=OPTIONS)
        model = _apply(model, op, rows)
        history.append((instant, model))
        where = f"step {step}: {op} {rows}"
        assert ours(spark, our_server, table, COLS) == model, where
        assert hudi_rs(base_dir(our_server, table), COLS) == model, where
    return table, model, history


def _status(table: str, port: int, capsys) -> dict:
    """`table-services status --json`'s log compaction section."""
    from adapter.cli import build_parser

    args = build_parser().parse_args(["table-services", "status", table, "--json", "--metastore", uri(port)])
    capsys.readouterr()  # (what ran before)
    assert args.fn(args) == 0
    return json.loads(capsys.readouterr().out)["services"]["logcompaction"]


def test_log_compaction_inline_and_by_table_services(spark, our_server, capsys):
    from adapter.cli import build_parser

    table, model, history = _sequence(spark, our_server)
    base = base_dir(our_server, table)
    done = sorted(i.ts for i in _instants(our_server, table) if i.action == "deltacommit" and i.ts not in dict(history))
    assert len(done) == 2, done  # LC1 and LC2, completed as deltacommits
    assert not [i for i in _instants(our_server, table) if i.action in ("commit", "compaction")]
    pending = [i for i in _instants(our_server, table) if i.action == "logcompaction"]
    assert [i.state for i in pending] == ["REQUESTED"]
    # their log files: a delete block (p1's: key 1) and/or a data block, naming the merged instants
    found: dict = {}
    for (ppath, _fid), (_base, _name, logs) in _slices(our_server, table).items():
        for name in logs:
            for b in blocks(open(os.path.join(base, ppath, name), "rb").read(), name):
                if b.instant in done:
                    found.setdefault(ppath, []).append((b.instant, b.block_type, b.compacted_times))
    t = [ts for ts, _ in history]
    lc1, lc2 = done
    # LC1 merged the log blocks of writes 1-3 (p0: key 0 deleted; p1: key 1), LC2 LC1's blocks and
    # write 4 (key 1's delete carried on); each a delete block, then a data block
    assert {p: sorted(v) for p, v in found.items()} == {
        "p0": [(lc1, 1, t[1:4]), (lc1, 3, t[1:4])],
        "p1": [(lc1, 1, t[1:4]), (lc1, 3, t[1:4]), (lc2, 1, [lc1, t[4]]), (lc2, 3, [lc1, t[4]])]}
    assert _slices(our_server, table) == hudi_rs_slices(base)
    # time travel to before the log compactions: the blocks they replaced are read
    then, then_model = history[3]
    assert ours(spark, our_server, table, COLS, as_of=then) == then_model
    assert hudi_rs(base, COLS, as_of=then) == then_model
    status = _status(table, our_server, capsys)
    assert status["enabled"] and status[LOG_COMPACT_BLOCKS_THRESHOLD] == "3" and status[LOG_COMPACT_ENABLE] == "false"
    assert [i["instant"] for i in status["pending"]] == [i.ts for i in pending]
    assert [i["instant"] for i in status["recent"]] == done
    args = build_parser().parse_args(["table-services", "status", table, "--metastore", uri(our_server)])
    assert args.fn(args) == 0
    out = capsys.readouterr().out
    assert "log compaction  on: slices of 3 log blocks or more" in out, out
    assert f"\nlogcompaction\t{pending[0].ts}\tREQUESTED\t-" in out and f"\nlogcompaction\t{done[0]}\t" in out, out
    # the pending one runs through table-services run; the table reads the same
    args = build_parser().parse_args(["table-services", "run", table, "--metastore", uri(our_server)])
    assert args.fn(args) == 0
    status = _status(table, our_server, capsys)
    assert status["pending"] == [] and [i["instant"] for i in status["recent"]] == done + [pending[0].ts]
    assert [i.state for i in _instants(our_server, table) if i.action == "logcompaction"] == []
    assert ours(spark, our_server, table, COLS) == model
    assert hudi_rs(base, COLS) == model
    assert _slices(our_server, table) == hudi_rs_slices(base)


def test_pipeline_log_compact_runs_the_pending_ones_of_a_table_with_hoodie_log_compaction_enable(spark, our_server):
    """A table whose first write says only `hoodie.log.compaction.enable=true` (threshold 2): the
    write that brings a slice to 2 log blocks (a delete and a data block in one log file) makes the
    server schedule a log compaction; `pipeline.log_compact` runs it (its instant time returned,
    again: none), `pipeline.compact` finds no compaction; the table reads the model."""
    table = f"lc_{uuid.uuid4().hex[:8]}.t"
    opts = {LOG_COMPACT_ENABLE: "true", LOG_COMPACT_BLOCKS_THRESHOLD: "2", COMPACT_MAX_DELTA_COMMITS: "50"}

    def run(op: str, rows: list) -> None:
        write(spark.createDataFrame(rows, SCHEMA), table, op, record_key="id", precombine_field="ts",
              partition_by="dt", metastore=uri(our_server), table_type="MERGE_ON_READ", options=opts)

    run("insert", [(k, "a", 10, "p0") for k in range(4)])
    run("upsert", [(1, "b", 20, "p0")])
    assert [i for i in _instants(our_server, table) if i.action == "logcompaction"] == []  # 1 block
    # an upsert moving key 2 to p1: p0's log file holds a data and a delete block
    run("upsert", [(3, "c", 30, "p0"), (2, "m", 30, "p1")])
    [lc] = [i for i in _instants(our_server, table) if i.action == "logcompaction"]
    assert lc.state == "REQUESTED"
    assert pipeline.compact(spark, table, metastore=uri(our_server)) == []
    assert pipeline.log_compact(spark, table, metastore=uri(our_server)) == [lc.ts]
    assert pipeline.log_compact(spark, table, metastore=uri(our_server)) == []
    [done] = [i for i in _instants(our_server, table) if i.ts == lc.ts]
    assert (done.action, done.state) == ("deltacommit", "COMPLETED")
    model = {"0": (0, "a", 10, "p0"), "1": (1, "b", 20, "p0"), "2": (2, "m", 30, "p1"), "3": (3, "c", 30, "p0")}
    assert ours(spark, our_server, table, COLS) == model
    assert hudi_rs(base_dir(our_server, table), COLS) == model

    # the next write runs a pending one inline first (this key alone turns log compaction on)
    run("upsert", [(0, "d", 40, "p0")])
    [again] = [i for i in _instants(our_server, table) if i.action == "logcompaction"]
    run("upsert", [(1, "e", 50, "p0")])
    [done] = [i for i in _instants(our_server, table) if i.ts == again.ts]
    assert (done.action, done.state) == ("deltacommit", "COMPLETED")
    model.update({"0": (0, "d", 40, "p0"), "1": (1, "e", 50, "p0")})
    assert ours(spark, our_server, table, COLS) == model
    assert hudi_rs(base_dir(our_server, table), COLS) == model


@pytest.mark.slow
def test_hudis_spark_reader_reads_log_compacted_slices(spark, our_server, tmp_path):
    """Hudi 1.2's Spark reader (tests/spark/hudi_spark_jobs.py) reads the table with two completed
    log compactions and one pending: its snapshot and time travel to every write equal the model, its
    incremental read from every write the records written after it."""
    from tests.harness.hudi_spark import hudi_spark_env, hudi_spark_python
    from tests.harness.spark import run_spark_script

    table, model, history = _sequence(spark, our_server)
    base = base_dir(our_server, table)
    # the instant of each key's surviving record (its _hoodie_commit_time: a log compaction keeps it)
    written = {k: v[0] for k, v in ours(spark, our_server, table, ["_hoodie_commit_time"]).items()}
    read = {"lc": {"base": base, "instants": [ts for ts, _ in history], "columns": COLS}}
    script = os.path.join(os.path.dirname(__file__), "spark", "hudi_spark_jobs.py")
    out = run_spark_script(script, our_server, tmp_path / "hudi-wh", tmp_path / "hudi-read.json", timeout=900,
                           python=hudi_spark_python(), env=hudi_spark_env(),
                           extra_args=["--read-only", "--read", json.dumps(read)])
    got = out["read"]["lc"]
    assert "error" not in got, got

    def rows(m: dict) -> list:
        return sorted(list(v) for v in m.values())

    assert got["snapshot"] == rows(model)
    for ts, then in history:
        assert got["as_of"][ts] == rows(then), ts
    # incremental from each write: the records written after it (compacted ones are not new)
    incremental = {ts: got["incremental"][ts] for ts, _ in history}
    assert incremental == {ts: rows({k: v for k, v in model.items() if written[k] > ts}) for ts, _ in history}


@pytest.mark.slow
def test_a_failed_log_compaction_is_rolled_back_and_run_again(spark, our_server):
    """A log compaction failing after its executor wrote its log file (the completion raises): the
    table reads the same (the stray log file's blocks belong to no completed instant: hudi-rs,
    listing storage, skips them too), the instant stays INFLIGHT while its claim lives; once it
    expired, the next run rolls it back (the file deleted, REQUESTED again) and completes it."""
    from tests.pipeline_helpers import listed_files
    from tests.test_pipeline_service_failures import _expired, _failing, _on_storage, _states, _Table

    mor = _Table(spark, our_server, "MERGE_ON_READ", {**OPTIONS, LOG_COMPACT_BLOCKS_THRESHOLD: "2"})
    mor.write("upsert", [(k, "a", 1, f"p{k % 2}") for k in range(4)])
    mor.write("upsert", [(k, "b", 2, f"p{k % 2}") for k in (0, 1)])
    mor.write("upsert", [(k, "c", 3, f"p{k % 2}") for k in (0, 1)])
    with HudiCatalog(uri(our_server)) as c:
        [(ts, state)] = _states(c, mor.table, "logcompaction")
        assert state == "REQUESTED"
        with _failing("logcompaction"):
            assert mor.run_services() == [("logcompaction", ts, "failed")]
        assert _states(c, mor.table, "logcompaction") == [(ts, "INFLIGHT")]
        mor.check(settled=False)
        base = base_dir(our_server, mor.table)
        stray = _on_storage(base) - listed_files(our_server, mor.table)
        assert len(stray) == 2 and all(".log.3_" in f for f in stray), stray  # one per file group
        _expired(c, mor.table, ts)
        assert mor.run_services() == [("logcompaction", ts, "rolled back"), ("logcompaction", ts, "completed")]
        assert [i.action for i in c.list_instants(*mor.table.split("."), states=["COMPLETED"])
                if i.ts == ts] == ["deltacommit"]
        assert not stray & _on_storage(base)
    mor.check()
