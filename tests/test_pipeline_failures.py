"""Failures and concurrency of pipeline writers (every backend):

* a job SIGKILLed after writing its base files, before completing: readers (ours, hudi-rs) see the
  table as before, the server lists none of its files; once its heartbeat expired the next writer
  rolls it back, its files are deleted and no orphan file stays;
* a job losing the commit conflict to a concurrent writer of the same records fails with
  WriteConflictError, its instant rolled back and its files deleted at once;
* concurrent writers of disjoint partitions both commit.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
import uuid

import pytest

from client import HudiMetastoreClient
from pipeline import WriteConflictError, write
from pipeline.commit import WriteTransaction
from tests.harness import REPO_ROOT
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

pytestmark = [pytest.mark.spark, pytest.mark.slow]

SCHEMA = "id long, name string, ts long, dt string"
COLS = ["id", "name", "ts", "dt"]
SHORT_HEARTBEAT = {"hoodie.client.heartbeat.interval_in_ms": "500", "hoodie.client.heartbeat.tolerable.misses": "1"}
JOB = REPO_ROOT / "tests" / "spark" / "pipeline_job.py"


def _table():
    return f"fl_{uuid.uuid4().hex[:8]}.t"


def _seed(spark, port, table, rows):
    write(spark.createDataFrame(rows, SCHEMA), table, "insert", record_key="id", precombine_field="ts",
          partition_by="dt", metastore=uri(port))


def _state(spark, port, table):
    base = base_dir(port, table)
    return ours(spark, port, table, COLS), hudi_rs(base, COLS)


def _no_orphans(port, table):
    base = base_dir(port, table)
    assert data_files(base) == listed_files(port, table)
    assert server_slices(port, table) == hudi_rs_slices(base)


@pytest.mark.backends_in_turn("mysql")  # the rollback's SQL is tested on every backend in tests/unit
def test_killed_job_leaves_no_trace_and_is_rolled_back_by_the_next_writer(spark, our_server, tmp_path):
    t = _table()
    seed = [(1, "a", 1, "d1"), (2, "b", 1, "d2")]
    _seed(spark, our_server, t, seed)
    before = _state(spark, our_server, t)
    files_before = data_files(base_dir(our_server, t))

    rows = tmp_path / "rows.json"
    rows.write_text(json.dumps([[1, "a-killed", 9, "d1"], [3, "c-killed", 9, "d3"]]))
    signal_file = tmp_path / "held"
    env = dict(os.environ, PYTHONPATH=str(REPO_ROOT), PYSPARK_PYTHON=sys.executable)
    with open(tmp_path / "job.log", "wb") as log:
        proc = subprocess.Popen([sys.executable, str(JOB), "--metastore-uri", uri(our_server), "--table", t,
                                 "--operation", "upsert", "--rows", str(rows), "--schema", SCHEMA,
                                 "--options", json.dumps(SHORT_HEARTBEAT), "--hold-at", "written",
                                 "--signal", str(signal_file)],
                                stdout=log, stderr=subprocess.STDOUT, env=env, start_new_session=True)
    try:
        deadline = time.monotonic() + 300
        while not signal_file.exists():
            assert proc.poll() is None, (tmp_path / "job.log").read_text()[-3000:]
            assert time.monotonic() < deadline, "the job never reached its hold point"
            time.sleep(0.2)
        killed_ts = signal_file.read_text()
    finally:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait(timeout=60)

    base = base_dir(our_server, t)
    written = data_files(base) - files_before
    assert written and all(f.endswith(f"_{killed_ts}.parquet") for f in written)
    pending = [i for i in instants(our_server, t) if i.timestamp == killed_ts]
    assert pending and pending[0].state != 3  # not COMPLETED
    # readers see the table as before; the server lists none of the new files
    assert _state(spark, our_server, t) == before
    assert not (listed_files(our_server, t) & written)

    db, name = t.split(".")
    with HudiMetastoreClient(uri(our_server)) as c:
        deadline = time.monotonic() + 60
        while killed_ts not in [i.timestamp for i in c.get_failed_instants(db, name)]:
            assert time.monotonic() < deadline, "the killed job's heartbeat never expired"
            time.sleep(0.5)
    # the next writer rolls it back before writing
    write(spark.createDataFrame([(4, "d", 1, "d1")], SCHEMA), t, "upsert", metastore=uri(our_server))
    timeline = instants(our_server, t)
    assert killed_ts not in [i.timestamp for i in timeline]
    assert "rollback" in [i.action for i in timeline]
    assert not (data_files(base) & written)
    _no_orphans(our_server, t)
    exp = {**before[0], "4": (4, "d", 1, "d1")}
    assert _state(spark, our_server, t) == (exp, exp)


def _concurrently(monkeypatch, first, second):
    """Run `first`; while it is held after writing its files (before completing), run `second` to
    completion."""
    out = {}
    complete = WriteTransaction.complete

    def complete_after_second(txn, metadata, *args):
        if "second" not in out:
            out["first_instant"] = txn.instant
            out["second"] = "running"
            out["second"] = second()
        return complete(txn, metadata, *args)

    monkeypatch.setattr(WriteTransaction, "complete", complete_after_second)
    try:
        out["first"] = first()
    except Exception as exc:  # the caller looks at it
        out["first_error"] = exc
    return out


def test_writer_losing_a_conflict_fails_cleanly(spark, our_server, monkeypatch):
    t = _table()
    _seed(spark, our_server, t, [(1, "a", 1, "d1"), (2, "b", 1, "d1")])
    base = base_dir(our_server, t)
    before_files = data_files(base)

    def upsert(name):
        return lambda: write(spark.createDataFrame([(1, name, 5, "d1")], SCHEMA), t, "upsert",
                             metastore=uri(our_server))

    out = _concurrently(monkeypatch, upsert("loser"), upsert("winner"))
    err = out.get("first_error")
    assert isinstance(err, WriteConflictError), out
    assert out["second"] in str(err) and "conflicts with" in str(err) and "rolled back" in str(err)
    assert err.conflicting == [out["second"]]
    loser = out["first_instant"]
    assert loser not in [i.timestamp for i in instants(our_server, t)]  # rolled back at once
    assert not [f for f in data_files(base) if f.endswith(f"_{loser}.parquet")]
    assert data_files(base) - before_files  # the winner's files are there
    _no_orphans(our_server, t)
    exp = {"1": (1, "winner", 5, "d1"), "2": (2, "b", 1, "d1")}
    assert _state(spark, our_server, t) == (exp, exp)


def test_concurrent_inserts_of_one_new_key_exactly_one_commits(spark, our_server, monkeypatch):
    """Different partitions, so different file groups: file-level concurrency control cannot see
    it; the record index's unique key does (global uniqueness)."""
    t = _table()
    _seed(spark, our_server, t, [(1, "a", 1, "d1")])

    def insert(name, part):
        return lambda: write(spark.createDataFrame([(7, name, 5, part)], SCHEMA), t, "insert",
                             metastore=uri(our_server))

    out = _concurrently(monkeypatch, insert("loser", "d1"), insert("winner", "d2"))
    err = out.get("first_error")
    assert isinstance(err, WriteConflictError), out
    assert err.conflicting == [out["second"]] and "record key" in str(err)
    assert out["first_instant"] not in [i.timestamp for i in instants(our_server, t)]
    _no_orphans(our_server, t)
    exp = {"1": (1, "a", 1, "d1"), "7": (7, "winner", 5, "d2")}
    assert _state(spark, our_server, t) == (exp, exp)
    with HudiMetastoreClient(uri(our_server)) as c:
        db, name = t.split(".")
        assert [w[0] for w in c.lookup_record_keys(db, name, ["7", "1"])] == ["d2", "d1"]


def test_writers_of_disjoint_partitions_both_commit(spark, our_server, monkeypatch):
    t = _table()
    _seed(spark, our_server, t, [(1, "a", 1, "d1"), (2, "b", 1, "d2")])

    def upsert(key, part):
        return lambda: write(spark.createDataFrame([(key, f"new{key}", 5, part)], SCHEMA), t, "upsert",
                             metastore=uri(our_server))

    out = _concurrently(monkeypatch, upsert(1, "d1"), upsert(2, "d2"))
    assert "first_error" not in out, out.get("first_error")
    assert out["first"] == out["first_instant"]
    done = [i.timestamp for i in instants(our_server, t, states=["COMPLETED"])]
    assert out["first"] in done and out["second"] in done
    _no_orphans(our_server, t)
    exp = {"1": (1, "new1", 5, "d1"), "2": (2, "new2", 5, "d2")}
    assert _state(spark, our_server, t) == (exp, exp)
