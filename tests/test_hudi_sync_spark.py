"""Apache Hudi's own writers tracked from their first hive sync, with no import command: ONE Spark 3.5 +
Hudi subprocess per backend (tests/spark/hudi_sync_jobs.py) writes COW and MOR tables through the
datasource (insert, upsert, delete, delete_partition, insert_overwrite; cleans, inline compaction) and
Spark SQL (CREATE TABLE ... USING hudi, INSERT, MERGE INTO, UPDATE, DELETE; Hudi's procedures
`run_clustering`, `run_compaction`, `run_clean`, `create_savepoint`, `rollback_to_savepoint`,
`delete_savepoint`, each caught up by the next INSERT's sync) with hive sync in `hms` mode into our
server (on PostgreSQL: the catch-up's SQL on every backend is tests/unit/store/hudi/test_hudi_sync.py's;
one worker runs the whole file).
After every step the server's latest file slices (`list-files`) are hudi-rs's file-system view of
the table's storage at that step, `lookup-keys` (asked for every key the script ever writes) finds
every key where hudi-rs reads it and no other, `validate` exits 0, and every sync call was answered
(Hudi's write did not fail). Hudi's own reader reads each table after its last step and the savepoint
steps (compared with hudi-rs and with the savepoint's rows)."""

from __future__ import annotations

import os
import uuid

import pytest

from client import HudiMetastoreClient
from hudi_format.file_slice import parse_file_name
from tests.harness.hudi_spark import hudi_spark_env, hudi_spark_python
from tests.harness.procs import VENV_PYTHON
from tests.harness.spark import run_spark_script
from tests.pipeline_helpers import hudi_rs, hudi_rs_slices, uri

pytestmark = [pytest.mark.spark, pytest.mark.slow, pytest.mark.backends("postgresql"),
              pytest.mark.xdist_group("hudi-sync-spark")]
SCRIPT = os.path.join(os.path.dirname(__file__), "spark", "hudi_sync_jobs.py")
TABLES = ("cow_ds", "mor_ds", "cow_sql", "mor_sql")


@pytest.fixture(scope="module")
def synced(our_server, tmp_path_factory):
    tmp = tmp_path_factory.mktemp("hudi-sync")
    db = f"hsync_{uuid.uuid4().hex[:6]}"
    # a process of its own: in the shared host (tests/harness/spark_host.py) the hive sync of Hudi's
    # Spark SQL writes found no metastore URI and started an embedded Derby one
    out = run_spark_script(SCRIPT, our_server, tmp / "wh", tmp / "out.json", timeout=2400,
                           python=hudi_spark_python(), env=hudi_spark_env(), own_process=True,
                           extra_args=["--db", db, "--cli-python", VENV_PYTHON])
    return our_server, db, out


def _steps(out, table):
    return [s for s in out["steps"] if s["table"] == table]


def test_every_step_ran_and_every_table_is_tracked(synced):
    port, db, out = synced
    assert not out.get("errors"), out.get("errors")
    assert {s["table"] for s in out["steps"]} == set(TABLES)
    for s in out["steps"]:
        assert "error" not in s, (s["table"], s["step"], s.get("error"), s.get("trace"))
    with HudiMetastoreClient(uri(port)) as c:
        names = set(c.get_all_tables(db))
        assert set(TABLES) <= names
        assert {"mor_ds_ro", "mor_ds_rt"} <= names  # MOR views: plain HMS tables over the tracked one's path
        for t in TABLES:
            cfg = c.get_hudi_table(db, t)
            assert cfg.properties.get("hoodie.metastore.timeline.source") == "storage", t
        for view in ("mor_ds_ro", "mor_ds_rt"):
            assert c.get_partition_names(db, view, -1) == c.get_partition_names(db, "mor_ds", -1), view


@pytest.mark.parametrize("table", TABLES)
def test_server_view_equals_hudi_after_each_step(synced, table):
    port, db, out = synced
    steps = _steps(out, table)
    assert steps
    for s in steps:
        where = (table, s["step"])
        assert s["list_files"] is not None, (where, s.get("list_files_error"))
        ours = {(d["partition"], d["file_id"]): (d["base_instant"], d["base_file"], tuple(d["log_files"]))
                for d in s["list_files"]}
        theirs = hudi_rs_slices(s["snapshot"])
        assert ours == theirs, where
        assert s["validate_rc"] == 0, (where, s["validate_out"])


def _where_hudi_rs_finds(base: str) -> dict:
    """record key -> (partition, file id) of the rows hudi-rs reads (a log record names its file group)."""
    import hudi
    import pyarrow as pa

    batches = [b for b in hudi.HudiTable(base).read() if b.num_rows]
    out = {}
    for r in (pa.Table.from_batches(batches).to_pylist() if batches else []):
        name = r["_hoodie_file_name"]
        try:
            fid = parse_file_name(name)[0]
        except ValueError:
            fid = name
        out[r["_hoodie_record_key"]] = (r["_hoodie_partition_path"] or "", fid)
    return out


@pytest.mark.parametrize("table", TABLES)
def test_record_index_finds_keys_where_hudi_does_after_each_step(synced, table):
    port, db, out = synced
    for s in _steps(out, table):
        where = (table, s["step"])
        assert s["lookup"] is not None, (where, s.get("lookup_error"))
        got = {d["key"]: (d["partition"], d["file_id"]) for d in s["lookup"] if d["file_id"] is not None}
        theirs = _where_hudi_rs_finds(s["snapshot"])
        assert got == theirs, where
        # every key the script ever wrote was asked: the others (deleted, overwritten, not yet written) are not found
        assert {d["key"] for d in s["lookup"] if d["file_id"] is None} == set(s["asked"]) - set(theirs), where
        assert "no-such-key" in s["asked"] and set(theirs) <= set(s["asked"]), where


@pytest.mark.parametrize("table", TABLES)
def test_hudi_reader_and_hudi_rs_agree_at_the_end(synced, table):
    port, db, out = synced
    last = _steps(out, table)[-1]
    got = sorted([int(k), v[0], v[1]] for k, v in hudi_rs(last["snapshot"], ["fare", "city"]).items())
    assert got == last["rows"], table


def test_partitions_follow_the_commits(synced):
    port, db, out = synced
    with HudiMetastoreClient(uri(port)) as c:
        for t in TABLES:
            last = _steps(out, t)[-1]
            partitions = sorted({p for p, _ in hudi_rs_slices(last["snapshot"])})
            assert sorted(c.get_partition_names(db, t, -1)) == partitions, t
            assert c.get_hudi_partitions(db, t) == partitions, t
    # the datasource tables' delete_partition dropped city=sea (its sync's drop was a no-op)
    for t in ("cow_ds", "mor_ds"):
        assert "city=sea" not in {p for p, _ in hudi_rs_slices(_steps(out, t)[-1]["snapshot"])}


def _timeline(snapshot: str) -> list[str]:
    return sorted(os.listdir(os.path.join(snapshot, ".hoodie", "timeline")))


def test_compaction_and_clean_by_hudis_procedures_ran(synced):
    port, db, out = synced
    for table in ("cow_sql", "mor_sql"):
        by = {s["step"]: s for s in _steps(out, table)}
        assert any(n.endswith(".clean") for n in _timeline(by["clean_insert"]["snapshot"])), table
    by = {s["step"]: s for s in _steps(out, "mor_sql")}
    names = _timeline(by["compact_insert"]["snapshot"])
    compacted = {n.split(".")[0] for n in names if n.endswith(".compaction.requested")}
    assert compacted and any(n.split("_")[0] in compacted and n.endswith(".commit") for n in names), names


@pytest.mark.parametrize("table", ("cow_sql", "mor_sql"))
def test_savepoint_restore_and_delete_savepoint_by_hudis_procedures(synced, table):
    """The server knows the savepoint Hudi's create_savepoint made (sharing its commit's time), rolls
    the instants after it back with rollback_to_savepoint, and releases it with delete_savepoint."""
    port, db, out = synced
    by = {s["step"]: s for s in _steps(out, table)}
    saved = by["savepoint_writes"]["saved"]
    for step in ("savepoint_writes", "restore_insert"):
        assert [saved, "savepoint", "COMPLETED"] in by[step]["instants"], step
    assert [i for i in by["restore_insert"]["instants"] if i[1] == "restore" and i[2] == "COMPLETED"]
    # the insert of 10 and the update of 9 after the savepoint are rolled back; 11 came after the restore
    before = {r[0]: r for r in by["savepoint_writes"]["rows"]}
    assert 10 in before and before[9][1] == 10.0
    rows = {r[0]: r for r in by["restore_insert"]["rows"]}
    assert 10 not in rows and rows[9][1] == 9.0 and 11 in rows
    written_after = {i[0] for i in by["savepoint_writes"]["instants"] if i[0] > saved and i[1] != "savepoint"}
    assert written_after and not written_after & {i[0] for i in by["restore_insert"]["instants"]}
    assert not [i for i in by["delete_savepoint_insert"]["instants"] if i[1] == "savepoint"]
    with HudiMetastoreClient(uri(port)) as c:
        assert saved in {i.timestamp for i in c.list_instants(db, table)}  # its commit stays
