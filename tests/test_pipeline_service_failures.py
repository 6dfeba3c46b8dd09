"""Table services that fail (issue 38; SQLite, the pipeline's Spark): a compaction of a merge-on-read
table and a clustering of a copy-on-write one, each failing after its executor wrote its files (the
completion raises, as a job killed before it completes). The table stays readable: our reader and
hudi-rs equal the model, the server lists none of the attempt's files, and the instant stays
INFLIGHT while its executor's claim lives (0.5 s heartbeats, 1 s timeout, from the first write's
options). Once the claim expired, the next executor rolls the attempt back (a rollback instant, the
attempt's files deleted, the instant REQUESTED again with its plan) and runs the plan: the
compaction through `table-services run` (pipeline/table_services.py), the clustering inline before
the next write. Afterwards storage holds exactly the files the server lists. (A live claim is left
alone: tests/test_cli_consistency.py, without Spark.) And a real kill: `hudi-metastore table-services
run` as its own process, SIGKILLed (with its Spark JVM) while its compaction is INFLIGHT, its files
written; the next run rolls the attempt back once the claim expired and completes the compaction.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
import uuid
from unittest import mock

import pytest

from client import HudiCatalog
from hudi_format.config_keys import (
    CLIENT_HEARTBEAT_INTERVAL_MS,
    CLIENT_HEARTBEAT_TOLERABLE_MISSES,
    CLUSTERING_INLINE,
    CLUSTERING_MAX_COMMITS,
    CLUSTERING_SORT_COLUMNS,
    COMPACT_MAX_DELTA_COMMITS,
)
from pipeline import table_services, write
from pipeline.table import load
from tests.harness import REPO_ROOT
from tests.pipeline_helpers import base_dir, hudi_rs, listed_files, ours, uri

pytestmark = [pytest.mark.spark, pytest.mark.slow, pytest.mark.backends("sqlite")]

SCHEMA = "id long, name string, ts long, dt string"
COLS = ["id", "name", "ts", "dt"]
BEATS = {CLIENT_HEARTBEAT_INTERVAL_MS: "500", CLIENT_HEARTBEAT_TOLERABLE_MISSES: "1"}


def _on_storage(base: str) -> set[str]:
    out = set()
    for root, dirs, names in os.walk(base):
        dirs[:] = [d for d in dirs if d != ".hoodie"]
        out.update(os.path.relpath(os.path.join(root, n), base) for n in names
                   if n.endswith(".parquet") or ".log." in n)
    return out


def _failing(action: str):
    """HudiCatalog.complete_instant, raising for `action` (after the executors wrote their files)."""
    real = HudiCatalog.complete_instant

    def complete(self, db, table, ts, act, *args, **kwargs):
        if act == action:
            raise RuntimeError(f"injected: {action} {ts} dies before it completes")
        return real(self, db, table, ts, act, *args, **kwargs)

    return mock.patch.object(HudiCatalog, "complete_instant", complete)


def _states(c: HudiCatalog, table: str, action: str) -> list[tuple[str, str]]:
    return [(i.ts, i.state) for i in c.list_instants(*table.split("."), actions=[action])]


def _expired(c: HudiCatalog, table: str, ts: str) -> None:
    deadline = time.monotonic() + 60
    while ts not in {i.ts for i in c.get_failed_instants(*table.split("."))}:
        assert time.monotonic() < deadline, f"the claim of {ts} did not expire"
        time.sleep(0.2)


class _Table:
    def __init__(self, spark, port: int, table_type: str, options: dict[str, str]):
        self.spark, self.port, self.table_type = spark, port, table_type
        self.table = f"sf_{uuid.uuid4().hex[:8]}.t"
        self.options = {**BEATS, **options}
        self.model: dict = {}

    def write(self, op: str, rows: list[tuple]) -> str:
        instant = write(self.spark.createDataFrame(rows, SCHEMA), self.table, op, record_key="id",
                        precombine_field="ts", partition_by="dt", metastore=uri(self.port),
                        table_type=self.table_type, options=self.options)
        self.model.update({str(r[0]): r for r in rows})
        self.check()
        return instant

    def check(self, settled: bool = True) -> None:
        """Our reader and hudi-rs hold the model; with `settled`, storage holds what the server lists."""
        assert ours(self.spark, self.port, self.table, COLS) == self.model
        base = base_dir(self.port, self.table)
        assert hudi_rs(base, COLS) == self.model
        if settled:
            assert _on_storage(base) == listed_files(self.port, self.table)

    def run_services(self) -> list[tuple[str, str, str]]:
        with HudiCatalog(uri(self.port)) as c:
            got = table_services.run(self.spark, c, load(c, *self.table.split(".")), uri(self.port))
        return [(o.service, o.instant, o.result) for o in got]


def test_a_failed_compaction_and_clustering_are_rolled_back_and_run_again(spark, our_server):
    # a compaction (merge-on-read, after 2 deltacommits) fails in `table-services run`; the next run
    # rolls it back and completes it
    mor = _Table(spark, our_server, "MERGE_ON_READ", {COMPACT_MAX_DELTA_COMMITS: "2"})
    mor.write("upsert", [(k, "a", 1, f"p{k % 2}") for k in range(6)])
    mor.write("upsert", [(k, "b", 2, f"p{k % 2}") for k in (0, 1, 4)])
    with HudiCatalog(uri(our_server)) as c:
        [(cts, state)] = _states(c, mor.table, "compaction")
        assert state == "REQUESTED"
        with _failing("compaction"):
            assert mor.run_services() == [("compaction", cts, "failed")]
        assert _states(c, mor.table, "compaction") == [(cts, "INFLIGHT")]
        mor.check(settled=False)  # readable: the attempt's files belong to no completed instant
        base = base_dir(our_server, mor.table)
        stray = _on_storage(base) - listed_files(our_server, mor.table)
        assert stray and all(f.endswith(f"_{cts}.parquet") for f in stray), stray
        _expired(c, mor.table, cts)
        assert mor.run_services() == [("compaction", cts, "rolled back"), ("compaction", cts, "completed")]
        assert [i.action for i in c.list_instants(*mor.table.split("."), states=["COMPLETED"])
                if i.ts == cts] == ["commit"]
        assert c.list_instants(*mor.table.split("."), actions=["rollback"])
        assert not stray & _on_storage(base)
    mor.check()

    # a clustering (copy-on-write, after 2 commits) fails in `table-services run`; the next write
    # rolls it back and runs it inline first, then updates the clustered records
    cow = _Table(spark, our_server, "COPY_ON_WRITE",
                 {CLUSTERING_INLINE: "true", CLUSTERING_MAX_COMMITS: "2", CLUSTERING_SORT_COLUMNS: "name"})
    cow.write("bulk_insert", [(k, "zyx"[k], 1, f"p{k % 2}") for k in range(3)])
    cow.write("bulk_insert", [(k, "cba"[k - 3], 2, f"p{k % 2}") for k in range(3, 6)])
    with HudiCatalog(uri(our_server)) as c:
        [(kts, state)] = _states(c, cow.table, "clustering")
        assert state == "REQUESTED"
        with _failing("clustering"):
            assert cow.run_services() == [("clustering", kts, "failed")]
        assert _states(c, cow.table, "clustering") == [(kts, "INFLIGHT")]
        cow.check(settled=False)
        base = base_dir(our_server, cow.table)
        stray = _on_storage(base) - listed_files(our_server, cow.table)
        assert stray and all(f.endswith(f"_{kts}.parquet") for f in stray), stray
        _expired(c, cow.table, kts)
        upsert = cow.write("upsert", [(0, "new", 3, "p0"), (5, "new", 3, "p1")])
        done = {i.ts: i.action for i in c.list_instants(*cow.table.split("."), states=["COMPLETED"])}
        assert done[kts] == "replacecommit" and kts < upsert
        assert not stray & _on_storage(base)
        assert _states(c, cow.table, "clustering") == []  # (completed ones answer as replacecommits)


def test_a_killed_table_services_run_is_rolled_back_and_its_compaction_completed(spark, our_server, tmp_path):
    """`hudi-metastore table-services run` in its own process (tests/spark/table_services_job.py),
    held once its executors wrote the compaction's files and killed there with SIGKILL (the process
    group: its Spark JVM too) while the server shows the compaction INFLIGHT."""
    mor = _Table(spark, our_server, "MERGE_ON_READ", {COMPACT_MAX_DELTA_COMMITS: "2"})
    mor.write("upsert", [(k, "a", 1, f"p{k % 2}") for k in range(4)])
    mor.write("upsert", [(k, "b", 2, f"p{k % 2}") for k in (0, 3)])
    base = base_dir(our_server, mor.table)
    signal_file = tmp_path / "held"
    env = dict(os.environ, PYTHONPATH=str(REPO_ROOT), PYSPARK_PYTHON=sys.executable)
    with HudiCatalog(uri(our_server)) as c:
        [(cts, state)] = _states(c, mor.table, "compaction")
        assert state == "REQUESTED"
        with open(tmp_path / "job.log", "wb") as log:
            proc = subprocess.Popen(
                [sys.executable, str(REPO_ROOT / "tests" / "spark" / "table_services_job.py"), "--metastore-uri",
                 uri(our_server), "--table", mor.table, "--hold-at", "compaction", "--signal", str(signal_file)],
                stdout=log, stderr=subprocess.STDOUT, env=env, start_new_session=True)
        try:
            deadline = time.monotonic() + 300
            while not (signal_file.exists() and _states(c, mor.table, "compaction") == [(cts, "INFLIGHT")]):
                assert proc.poll() is None, (tmp_path / "job.log").read_text()[-3000:]
                assert time.monotonic() < deadline, "the run never reached its hold point"
                time.sleep(0.2)
            assert signal_file.read_text() == cts
        finally:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait(timeout=60)
        assert proc.returncode == -signal.SIGKILL
        assert _states(c, mor.table, "compaction") == [(cts, "INFLIGHT")]
        mor.check(settled=False)  # readable: the attempt's files belong to no completed instant
        stray = _on_storage(base) - listed_files(our_server, mor.table)
        assert stray and all(f.endswith(f"_{cts}.parquet") for f in stray), stray
        _expired(c, mor.table, cts)  # its claim (0.5 s heartbeats, 1 s timeout) expired
        assert mor.run_services() == [("compaction", cts, "rolled back"), ("compaction", cts, "completed")]
        assert [i.action for i in c.list_instants(*mor.table.split("."), states=["COMPLETED"])
                if i.ts == cts] == ["commit"]
        assert not stray & _on_storage(base)
    mor.check()
