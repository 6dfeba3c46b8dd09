"""Two Apache Hudi writers with optimistic concurrency control on one table, their lock provider
Hudi's `HiveMetastoreBasedLockProvider` pointed at our server (its Hive Metastore locks: `lock`,
`unlock`, `heartbeat`), in ONE Spark subprocess with a writer thread each
(tests/spark/hudi_locks.py):

* every write Hudi acknowledged is in the table, read by Hudi's reader and by hudi-rs; a write that
  lost is reported by Hudi as a `HoodieWriteConflictException` and left nothing behind;
* while they ran, our server's lock table (`show_locks`, polled) held EXCLUSIVE table locks on the
  table, never two acquired at once; afterwards it holds none, and its call log has an `unlock`
  for every `lock`.
"""

from __future__ import annotations

import os
import re
import threading
import time
import uuid

import pytest

from tests.harness import open_thrift_client
from tests.harness.hudi_spark import hudi_spark_env, hudi_spark_python
from tests.harness.spark import run_spark_script
from tests.pipeline_helpers import hudi_rs
from thrift_idl.hive_metastore.ttypes import LockState, LockType, ShowLocksRequest

# PostgreSQL: the lock manager's decisions are serialized there by a row lock (SQLite's by its
# write transaction; both are covered by tests/unit/store/hms/test_locks.py)
# one worker runs the file's tests: one Spark subprocess (the module fixture) serves them all
pytestmark = [pytest.mark.spark, pytest.mark.slow, pytest.mark.backends("postgresql"),
              pytest.mark.xdist_group("hudi-locks")]
SCRIPT = os.path.join(os.path.dirname(__file__), "spark", "hudi_locks.py")


class LockWatch:
    """Polls show_locks for one table in a thread; every distinct lock row seen, and each poll's
    acquired lock ids."""

    def __init__(self, port: int, db: str, table: str):
        self.port, self.db, self.table = port, db, table
        self.seen: dict[tuple[int, int], tuple] = {}
        self.acquired_at_once: list[set[int]] = []
        self.polls = 0
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        client, transport = open_thrift_client(self.port)
        try:
            while not self.stop.is_set():
                locks = client.show_locks(ShowLocksRequest(dbname=self.db, tablename=self.table)).locks or []
                self.polls += 1
                for e in locks:
                    self.seen.setdefault((e.lockid, e.state), (e.type, e.dbname, e.tablename, e.partname))
                self.acquired_at_once.append({e.lockid for e in locks if e.state == LockState.ACQUIRED})
                time.sleep(0.02)
        finally:
            transport.close()

    def __enter__(self):
        self.thread.start()
        return self

    def __exit__(self, *exc):
        self.stop.set()
        self.thread.join(30)


@pytest.fixture(scope="module")
def run(our_server_info, tmp_path_factory):
    port = our_server_info.port
    db, table = f"hudi_locks_{uuid.uuid4().hex[:6]}", "trips"
    tmp = tmp_path_factory.mktemp("hudi-locks")
    log_start = our_server_info.log_path.stat().st_size
    with LockWatch(port, db, table) as watch:
        out = run_spark_script(SCRIPT, port, tmp / "wh", tmp / "out.json", timeout=900,
                               python=hudi_spark_python(), env=hudi_spark_env(),
                               extra_args=["--db", db, "--table", table])
    with open(our_server_info.log_path, "rb") as f:
        f.seek(log_start)
        log = f.read().decode("utf-8", "replace")
    client, transport = open_thrift_client(port)
    try:
        left = client.show_locks(ShowLocksRequest(dbname=db, tablename=table)).locks or []
    finally:
        transport.close()
    return {"out": out, "watch": watch, "log": log, "left": left, "db": db, "table": table}


def _expected(writes: list[dict]) -> dict:
    """id -> (fare, city) that the acknowledged writes leave: the job's data (as
    tests/spark/hudi_locks.py writes it). Later rounds have higher ts; rounds go on while both
    writers commit (B's rows then win: higher ts) and end at the first with a conflict."""
    rows = {i: (float(i), "sf" if i % 2 else "nyc") for i in range(10)}
    ok = {(w["step"], w["round"], w["writer"]) for w in writes if w["ok"]}
    for i in range(100, 105):
        if ("disjoint", 0, "A") in ok:
            rows[i] = (float(i), "a")
    for i in range(200, 205):
        if ("disjoint", 0, "B") in ok:
            rows[i] = (float(i), "b")
    for r in sorted({w["round"] for w in writes if w["step"] == "same"}):
        for writer, fare in (("A", 1000.0 + r), ("B", 2000.0 + r)):
            if ("same", r, writer) in ok:
                rows.update({i: (fare, "sf" if i % 2 else "nyc") for i in range(10)})
    return rows


def test_writes_commit_or_fail_as_conflicts(run):
    writes = run["out"]["writes"]
    for w in writes:  # success, or Hudi's own conflict error; nothing else
        assert w["ok"] or w["conflict"], w
    by = {(w["step"], w["writer"]) for w in writes if w["ok"]}
    assert {("init", "A"), ("disjoint", "A"), ("disjoint", "B")} <= by  # different file groups: no conflict
    same = [w for w in writes if w["step"] == "same"]
    lost = [w for w in same if not w["ok"]]
    assert lost, same  # upserts of the same file groups at once: Hudi found the conflict
    assert all("ConcurrentModificationException" in w["error"] or "Cannot resolve conflicts" in w["error"]
               for w in lost), lost
    # every acknowledged write is one completed commit, the lost ones none
    assert len(run["out"]["commits"]) == sum(w["ok"] for w in writes)


def test_every_acknowledged_write_is_read_back(run):
    out = run["out"]
    assert "read_error" not in out, out["read_error"]
    expected = _expected(out["writes"])
    assert out["rows"] == sorted([i, fare, city] for i, (fare, city) in expected.items())  # Hudi's reader
    assert {int(k): v for k, v in hudi_rs(out["base"], ["fare", "city"]).items()} == expected


def test_server_locks_taken_exclusive_and_released(run):
    watch = run["watch"]
    assert watch.polls > 10
    assert watch.seen, "show_locks never showed a lock on the table"
    for (_, state), (typ, db, table, part) in watch.seen.items():
        assert (typ, db, table, part) == (LockType.EXCLUSIVE, run["db"], run["table"], None)
        assert state in (LockState.ACQUIRED, LockState.WAITING)
    assert all(len(ids) <= 1 for ids in watch.acquired_at_once)  # one holder at a time
    assert run["left"] == []  # every lock released

    calls = {m: len(re.findall(rf"call={m} ms=[\d.]+ status=ok", run["log"])) for m in ("lock", "unlock", "heartbeat")}
    failed = re.findall(r"call=(lock|unlock|heartbeat|check_lock) ms=[\d.]+ status=(?!ok)(\S+)", run["log"])
    # Hudi's provider cancels its heartbeat as it unlocks, but a tick already inside the heartbeat
    # call outlives the lock (Hudi ignores that failure): the server answers it NoSuchLockException,
    # as Hive's does. At most one such late tick per unlock; nothing else may fail.
    late = [f for f in failed if f == ("heartbeat", "NoSuchLockException")]
    assert [f for f in failed if f not in late] == []
    # a lock for each commit at least; every lock released by the writer itself (none expired)
    assert calls["lock"] >= len(run["out"]["commits"])
    assert calls["unlock"] == calls["lock"]
    assert len(late) <= calls["unlock"]
    assert calls["heartbeat"] > 0  # a lock held longer than half the heartbeat interval (200 ms) is renewed
