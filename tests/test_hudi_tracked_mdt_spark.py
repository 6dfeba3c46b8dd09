"""A table only Apache Hudi's own Spark writer writes, with its metadata table's record index and
column statistics on and hive sync to the server (issue 45): the server follows the table (tracked
from its first sync) and its storage mirror leaves Hudi's metadata table as Hudi wrote it. After
Hudi's writes and the mirror's steps, `hoodie.properties` still lists every metadata partition Hudi
made (`record_index` among them), the partitions' folders are there, Hudi's next upsert (with the
record index as its index) finds its keys (no duplicate rows) and Hudi's reader reads the model."""

from __future__ import annotations

import json
import os
import threading
import uuid

import pytest

from client import HudiMetastoreClient, file_group_keys
from pipeline import write
from tests.harness.hudi_spark import hudi_spark_env, hudi_spark_python
from tests.harness.properties import examples
from tests.harness.spark import run_spark_script
from tests.pipeline_helpers import uri
from tests.test_hudi_mdt_mix_spark import _hudi_options
from thrift_idl.hive_metastore.ttypes import (
    Database,
    LockComponent,
    LockLevel,
    LockRequest,
    LockState,
    LockType,
    UnlockRequest,
)
from thrift_idl.hudi_metastore.ttypes import CommitConflictException

pytestmark = [pytest.mark.spark, pytest.mark.slow, pytest.mark.backends("postgresql")]

SCRIPT = os.path.join(os.path.dirname(__file__), "spark", "hudi_mdt_steps.py")
SCHEMA = "id long, name string, ts long, dt string"
COLS = ["id", "name", "ts", "dt"]
PARTITIONS_KEY = "hoodie.table.metadata.partitions"


def _options(db: str, port: int, table_type: str) -> dict[str, str]:
    """Hudi's datasource as in the mix test (version 9, hive sync in `hms` mode, Hudi's default
    strategy: a merge-on-read table gets `t_ro` and `t_rt` too), with the record index as its index
    and column statistics."""
    return {**_hudi_options(db, port, 9, False, table_type), "hoodie.metadata.record.index.enable": "true",
            "hoodie.index.type": "RECORD_INDEX", "hoodie.metadata.index.column.stats.enable": "true"}


# Hudi's writer without its metadata table, with the simple index (the writes the server's commits meet)
PLAIN = {"hoodie.metadata.enable": "false", "hoodie.index.type": "SIMPLE",
         "hoodie.metadata.record.index.enable": "false"}


def _database(port: int) -> tuple[str, str]:
    """A new database and the base path of its table `t` (inside the warehouse: the mirror's)."""
    db = f"trk_{uuid.uuid4().hex[:8]}"
    with HudiMetastoreClient(uri(port)) as c:
        c.create_database(Database(name=db, parameters={}))
        location = c.get_database(db).locationUri
    return db, os.path.join(location.removeprefix("file:"), "t")


def _inflight_on_hudis_group(port: int, db: str) -> tuple[str, dict, list]:
    """An inflight commit through the server on the one file group of Hudi's table: its instant
    time, the commit metadata and the record keys that complete it (a new key into that group)."""
    with HudiMetastoreClient(uri(port)) as c:
        [group] = c.get_latest_file_slices(db, "t")
        ts = c.create_instant(db, "t", None, "commit").timestamp
        c.transition_to_inflight(db, "t", ts, "commit", {"partitionToWriteStats": {}})
    part = group.partitionPath
    stat = {"fileId": group.fileId, "path": f"{part}/{group.fileId}_0-1-0_{ts}.parquet", "partitionPath": part,
            "prevCommit": group.baseInstant, "numWrites": 5, "numUpdateWrites": 0, "numInserts": 1,
            "numDeletes": 0, "totalWriteBytes": 1000, "fileSizeInBytes": 1000, "totalWriteErrors": 0}
    meta = {"partitionToWriteStats": {part: [stat]}, "operationType": "UPSERT", "compacted": False}
    return ts, meta, [file_group_keys(part, group.fileId, inserted=["99"])]


def _metadata_partitions(base: str) -> set[str]:
    with open(os.path.join(base, ".hoodie", "hoodie.properties")) as f:
        for line in f:
            if line.startswith(PARTITIONS_KEY + "="):
                return set(line.split("=", 1)[1].strip().split(","))
    return set()


def _properties_file(base: str) -> bytes:
    with open(os.path.join(base, ".hoodie", "hoodie.properties"), "rb") as f:
        return f.read()


def _run(port: int, tmp_path, name: str, steps: list[dict]) -> dict:
    return run_spark_script(SCRIPT, port, tmp_path / f"wh_{name}", tmp_path / f"{name}.json", timeout=1200,
                            python=hudi_spark_python(), env=hudi_spark_env(), own_process=True,
                            extra_args=["--steps", json.dumps(steps)])


@pytest.mark.parametrize("table_type", ["COPY_ON_WRITE", "MERGE_ON_READ"])
def test_mirror_leaves_hudis_metadata_table_of_a_tracked_table(our_server, tmp_path, table_type):
    port = our_server
    db, base = _database(port)
    opts = _options(db, port, table_type)
    model: dict = {}
    writes = [[(k, f"a{k}", 1, f"p{k % 2}") for k in range(6)],
              [(1, "b1", 2, "p1"), (2, "b2", 2, "p0"), (7, "b7", 2, "p1")]]
    steps = []
    for n, rows in enumerate(writes):
        steps.append({"write": f"w{n}", "base": base, "rows": rows, "schema": SCHEMA, "options": opts})
        model.update({r[0]: list(r) for r in rows})
    out = _run(port, tmp_path, "first", steps)
    for n in range(len(writes)):
        assert out[f"w{n}"] == {"written": True}, out[f"w{n}"]
    made = _metadata_partitions(base)
    assert {"files", "record_index", "column_stats"} <= made, made
    with HudiMetastoreClient(uri(port)) as c:
        assert c.get_hudi_table(db, "t").properties.get("hoodie.metastore.timeline.source") == "storage"
        names = {t.lower() for t in c.get_all_tables(db)}
        if table_type == "MERGE_ON_READ":
            assert {"t", "t_ro", "t_rt"} <= names, names
        props = _properties_file(base)
        c.sync_storage(db, "t")  # the mirror's step on the tracked table
    assert _properties_file(base) == props  # as Hudi's writer left it
    for p in made:
        assert os.path.isdir(os.path.join(base, ".hoodie", "metadata", p)), p

    rows = [(1, "c1", 3, "p1"), (3, "c3", 3, "p1"), (8, "c8", 3, "p0")]
    model.update({r[0]: list(r) for r in rows})
    out = _run(port, tmp_path, "second", [
        {"write": "w_again", "base": base, "rows": rows, "schema": SCHEMA, "options": opts},
        {"read": "last", "base": base, "columns": COLS}])
    assert out["w_again"] == {"written": True}, out["w_again"]
    got = out["last"]
    assert "error" not in got, got
    assert got["snapshot"] == sorted(model.values())
    check = got["files_check"]
    assert check["partitions_md"] == check["partitions_fs"] and check["mismatches"] == [], check
    assert _metadata_partitions(base) == made


# merge-on-read in the thorough run only (about 40 s; its views are in the test above and the mix test)
@pytest.mark.parametrize("table_type", ["COPY_ON_WRITE", "MERGE_ON_READ"][:examples(1, 2)])
def test_pipeline_write_into_a_table_hudis_writer_made(spark, our_server, tmp_path, table_type):
    """Hudi's writer makes the table (metadata table, record index); the pipeline then writes it through
    the server, whose mirror does not write Hudi's metadata table: it withdraws it (readers list
    storage). Hudi's reader reads the pipeline's rows, Hudi's next upsert builds its metadata table
    again and updates a key the pipeline inserted (no second row)."""
    port = our_server
    db, base = _database(port)
    opts = _options(db, port, table_type)
    model: dict = {}
    rows = [(k, f"a{k}", 1, f"p{k % 2}") for k in range(6)]
    model.update({r[0]: list(r) for r in rows})
    out = _run(port, tmp_path, "first", [{"write": "w0", "base": base, "rows": rows, "schema": SCHEMA,
                                          "options": opts}])
    assert out["w0"] == {"written": True}, out["w0"]
    rows = [(1, "b1", 2, "p1"), (20, "b20", 2, "p0")]
    write(spark.createDataFrame(rows, SCHEMA), f"{db}.t", "upsert", record_key="id", precombine_field="ts",
          partition_by="dt", metastore=uri(port), options={"hoodie.datasource.write.hive_style_partitioning": "true"})
    model.update({r[0]: list(r) for r in rows})
    with HudiMetastoreClient(uri(port)) as c:
        c.sync_storage(db, "t")
    assert _metadata_partitions(base) == set()
    assert not os.path.exists(os.path.join(base, ".hoodie", "metadata"))
    rows = [(20, "c20", 3, "p0"), (2, "c2", 3, "p0")]
    out = _run(port, tmp_path, "second", [
        {"read": "pipeline", "base": base, "columns": COLS, "files_check": False},
        {"write": "w1", "base": base, "rows": rows, "schema": SCHEMA, "options": opts},
        {"read": "last", "base": base, "columns": COLS}])
    got = out["pipeline"]
    assert "error" not in got, got
    assert got["snapshot"] == sorted(model.values())
    assert out["w1"] == {"written": True}, out["w1"]
    model.update({r[0]: list(r) for r in rows})
    got = out["last"]
    assert "error" not in got, got
    assert got["snapshot"] == sorted(model.values())
    check = got["files_check"]
    assert check["partitions_md"] == check["partitions_fs"] and check["mismatches"] == [], check
    assert {"files", "record_index", "column_stats"} <= _metadata_partitions(base)  # built again


def test_pipeline_write_after_a_hudi_write_the_server_was_not_told_of(spark, our_server, tmp_path):
    """Hudi's writer commits without hive sync (the server has not caught it up); the pipeline then
    upserts into the same file group through the server: its write starts from Hudi's commit, so
    Hudi's update stays."""
    port = our_server
    db, base = _database(port)
    opts = _options(db, port, "COPY_ON_WRITE")
    quiet = {**opts, "hoodie.datasource.hive_sync.enable": "false"}
    model: dict = {}
    first = [(k, f"a{k}", 1, "p0") for k in range(4)]
    second = [(2, "b2", 2, "p0")]
    out = _run(port, tmp_path, "first", [
        {"write": "w0", "base": base, "rows": first, "schema": SCHEMA, "options": opts},
        {"write": "w1", "base": base, "rows": second, "schema": SCHEMA, "options": quiet}])
    assert out["w1"] == {"written": True}, out["w1"]
    for rows in (first, second):
        model.update({r[0]: list(r) for r in rows})
    rows = [(0, "c0", 3, "p0")]
    write(spark.createDataFrame(rows, SCHEMA), f"{db}.t", "upsert", record_key="id", precombine_field="ts",
          partition_by="dt", metastore=uri(port), options={"hoodie.datasource.write.hive_style_partitioning": "true"})
    model.update({r[0]: list(r) for r in rows})
    with HudiMetastoreClient(uri(port)) as c:
        c.sync_storage(db, "t")
    out = _run(port, tmp_path, "second", [{"read": "last", "base": base, "columns": COLS, "files_check": False}])
    got = out["last"]
    assert "error" not in got, got
    assert got["snapshot"] == sorted(model.values())


def test_commit_conflicts_with_a_hudi_commit_the_server_was_not_told_of(our_server, tmp_path):
    """A write through the server begins; Hudi's writer then commits to the same file group without
    hive sync; the server's commit is refused (CommitConflictException, nothing written), because
    the completion first catches up what Hudi's writer completed on storage."""
    port = our_server
    db, base = _database(port)
    opts = {**_options(db, port, "COPY_ON_WRITE"), **PLAIN}
    rows = [(k, f"a{k}", 1, "p0") for k in range(4)]
    out = _run(port, tmp_path, "first", [{"write": "w0", "base": base, "rows": rows, "schema": SCHEMA,
                                          "options": opts}])
    assert out["w0"] == {"written": True}, out["w0"]
    ts, meta, keys = _inflight_on_hudis_group(port, db)
    with HudiMetastoreClient(uri(port)) as c:
        before = {i.timestamp for i in c.list_instants(db, "t")}
    out = _run(port, tmp_path, "second", [{"write": "w1", "base": base, "rows": [(2, "b2", 2, "p0")],
                                           "schema": SCHEMA,
                                           "options": {**opts, "hoodie.datasource.hive_sync.enable": "false"}}])
    assert out["w1"] == {"written": True}, out["w1"]
    with HudiMetastoreClient(uri(port)) as c:
        with pytest.raises(CommitConflictException, match="conflicts with instant"):
            c.complete_instant(db, "t", ts, "commit", meta, record_keys=keys)
        after = {i.timestamp: i.state for i in c.list_instants(db, "t")}
    assert len(set(after) - before) == 1  # Hudi's commit, caught up; ours was not completed
    assert after[ts] != "COMPLETED"


def test_commit_through_the_server_waits_for_hudis_table_lock(our_server, tmp_path):
    """While Hudi's writer holds its lock provider's EXCLUSIVE table lock (HiveMetastoreBasedLockProvider,
    taken here as it takes it), a commit through the server on the tracked table waits; it completes
    once the lock is released."""
    port = our_server
    db, base = _database(port)
    rows = [(k, f"a{k}", 1, "p0") for k in range(4)]
    out = _run(port, tmp_path, "first", [{"write": "w0", "base": base, "rows": rows, "schema": SCHEMA,
                                          "options": {**_options(db, port, "COPY_ON_WRITE"), **PLAIN}}])
    assert out["w0"] == {"written": True}, out["w0"]
    ts, meta, keys = _inflight_on_hudis_group(port, db)
    with HudiMetastoreClient(uri(port)) as c:
        held = c.lock(LockRequest(component=[LockComponent(type=LockType.EXCLUSIVE, level=LockLevel.TABLE,
                                                           dbname=db, tablename="t")], user="hudi", hostname="h"))
        assert held.state == LockState.ACQUIRED
    result: list = []

    def commit():
        with HudiMetastoreClient(uri(port)) as w:
            result.append(w.complete_instant(db, "t", ts, "commit", meta, record_keys=keys))

    t = threading.Thread(target=commit)
    t.start()
    t.join(1.5)
    with HudiMetastoreClient(uri(port)) as c:
        assert t.is_alive() and not result  # waiting for Hudi's lock
        assert {i.timestamp: i.state for i in c.list_instants(db, "t")}[ts] == 2  # INFLIGHT
        c.unlock(UnlockRequest(lockid=held.lockid))
    t.join(30)
    assert result and result[0].instant.timestamp == ts
