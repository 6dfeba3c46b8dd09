"""Column statistics are part of the commit's transaction: a server killed (SIGKILL) while it
completes an instant with statistics for thousands of files leaves either all of them (the instant
COMPLETED) or none (INFLIGHT; the retry then stores them), and the table's Hive statistics
(numFiles, numRows) are the new commit's or the previous one's. A clean removes the statistics of
the files it deleted and the partition aggregates and Hive statistics follow. Counts are read from
the database itself.
"""

from __future__ import annotations

import json
import random
import threading
import time
import uuid

import pytest
import sqlalchemy as sa
from thrift.transport.TTransport import TTransportException

from client import HudiMetastoreClient, state_name
from hudi_format.table_config import HudiTableConfig
from tests.harness import ServerStartError, start_our_server, stop_process
from tests.test_commit_atomicity import own_database  # noqa: F401 - the fixture
from thrift_idl.hive_metastore.ttypes import Database
from thrift_idl.hudi_metastore.ttypes import ColumnRange, ColumnValue, FileColumnStats

FILES = 600
MAX_ROUNDS = 8
TRANSPORT_ERRORS = (TTransportException, OSError, EOFError)


def _commit(ts: str, n: int) -> tuple[str, list[FileColumnStats]]:
    stats, write_stats = [], {}
    for k in range(n):
        p = f"p={k % 10}"
        name = f"f{k:05d}-0_0-1-1_{ts}.parquet"
        write_stats.setdefault(p, []).append({"fileId": f"f{k:05d}-0", "path": f"{p}/{name}", "partitionPath": p,
                                              "fileSizeInBytes": 1000, "prevCommit": "null"})
        stats.append(FileColumnStats(p, name, 1000, 4000, [
            ColumnRange("id", ColumnValue(intValue=k * 10), ColumnValue(intValue=k * 10 + 9), 0, 10),
            ColumnRange("name", ColumnValue(stringValue=f"n{k:05d}"), ColumnValue(stringValue=f"n{k:05d}z"), 1, 10),
            ColumnRange("score", ColumnValue(doubleValue=-1.5), ColumnValue(doubleValue=k / 7), 0, 10)]))
    meta = {"partitionToWriteStats": write_stats, "compacted": False, "extraMetadata": {}, "operationType": "INSERT"}
    return json.dumps(meta), stats


def _counts(url: str, ts: str) -> tuple[int, int]:
    """(column_stats rows, file_stats rows) of the files instant `ts` wrote."""
    eng = sa.create_engine(url)
    try:
        with eng.connect() as conn:
            cols = conn.execute(sa.text(
                "SELECT count(*) FROM column_stats s JOIN files f ON f.id = s.file_row_id WHERE f.created_ts = :ts"),
                {"ts": ts}).scalar()
            files = conn.execute(sa.text(
                "SELECT count(*) FROM file_stats s JOIN files f ON f.id = s.file_row_id WHERE f.created_ts = :ts"),
                {"ts": ts}).scalar()
        return int(cols or 0), int(files or 0)
    finally:
        eng.dispose()


def test_killed_commits_leave_no_statistics_behind(own_database, tmp_path):  # noqa: F811
    rng = random.Random(20261124)
    db = "csa_" + uuid.uuid4().hex[:8]
    procs: list = []

    def start() -> HudiMetastoreClient:
        try:
            port, proc = start_our_server(own_database, tmp_path / "server", warehouse=tmp_path / "wh")
        except ServerStartError as e:
            pytest.fail(str(e), pytrace=False)
        procs.append(proc)
        return HudiMetastoreClient(f"thrift://127.0.0.1:{port}", timeout_s=120, retries=2, backoff_s=0.05)

    c = start()
    try:
        c.create_database(Database(name=db, description="", locationUri=None, parameters={}))
        c.register_hudi_table(HudiTableConfig(
            db_name=db, table_name="t", table_type="COPY_ON_WRITE", record_key_fields=["id"], partition_fields=["p"],
            base_path=str(tmp_path / "t")), [("id", "bigint"), ("name", "string"), ("score", "double"),
                                            ("p", "string")])
        ts = c.create_instant(db, "t", None, "commit", b"", 600).timestamp
        c.transition_to_inflight(db, "t", ts, "commit")
        meta, stats = _commit(ts, FILES)
        t0 = time.monotonic()
        c.complete_instant(db, "t", ts, "commit", meta, None, stats)
        duration = time.monotonic() - t0
        assert _counts(own_database, ts) == (3 * FILES, FILES)
        written = [ts]
        interrupted = retried = 0
        hive = lambda: {k: c.get_table(db, "t").parameters.get(k) for k in ("numFiles", "numRows")}  # noqa: E731
        assert hive() == {"numFiles": str(FILES), "numRows": str(10 * FILES)}
        n = FILES
        rnd = 0
        # kills at seeded fractions of the last uninterrupted completion; rounds go on until one kill
        # left an instant INFLIGHT (a machine whose speed changes can make a kill land late)
        while rnd < 2 or not (interrupted and retried):
            assert rnd < MAX_ROUNDS, (interrupted, retried)
            ts = c.create_instant(db, "t", None, "commit", b"", 600).timestamp
            c.transition_to_inflight(db, "t", ts, "commit")
            before, n = n, FILES + 10 * (rnd + 1)  # new versions of every file group, and 10 new groups
            meta, stats = _commit(ts, n)
            written.append(ts)
            proc = procs[-1]
            timer = threading.Timer(rng.uniform(0.05, 1.0) * duration, proc.kill)
            timer.start()
            t0 = time.monotonic()
            try:
                c.complete_instant(db, "t", ts, "commit", meta, None, stats)
                duration = time.monotonic() - t0
            except TRANSPORT_ERRORS:
                interrupted += 1
            timer.join()
            proc.wait(timeout=30)
            c.close()
            c = start()
            state = state_name(next(i for i in c.list_instants(db, "t") if i.timestamp == ts).state)
            if state == "COMPLETED":
                assert _counts(own_database, ts) == (3 * n, n), f"round {rnd}"
            else:
                assert state == "INFLIGHT" and _counts(own_database, ts) == (0, 0), f"round {rnd}: {state}"
                assert hive() == {"numFiles": str(before), "numRows": str(10 * before)}, f"round {rnd}"
                c.complete_instant(db, "t", ts, "commit", meta, None, stats)
                assert _counts(own_database, ts) == (3 * n, n), f"round {rnd} retried"
                retried += 1
            assert hive() == {"numFiles": str(n), "numRows": str(10 * n)}, f"round {rnd}"
            rnd += 1
        assert interrupted >= 1 and retried >= 1, (interrupted, retried)

        # a clean removes its files' statistics (every version of one file group); the partitions are
        # then skipped by what remains
        first = f"f00000-0_0-1-1_{ts}.parquet"
        before = c.prune_file_slices(db, "t", "id = 5 AND p = 'p=0'")
        assert [s.baseFile.name for s in before.slices] == [first]
        clean = c.create_instant(db, "t", None, "clean", b"", 600).timestamp
        c.transition_to_inflight(db, "t", clean, "clean")
        c.complete_instant(db, "t", clean, "clean", {"partitionMetadata": {"p=0": {
            "partitionPath": "p=0", "successDeleteFiles": [f"f00000-0_0-1-1_{w}.parquet" for w in written]}}})
        cols, files = _counts(own_database, ts)
        assert (cols, files) == (3 * (n - 1), n - 1)
        assert hive() == {"numFiles": str(n - 1), "numRows": str(10 * (n - 1))}
        after = c.prune_file_slices(db, "t", "id = 5")
        assert after.slices == [] and after.partitionsSkipped == 10
    finally:
        c.close()
        for p in procs:
            stop_process(p)
