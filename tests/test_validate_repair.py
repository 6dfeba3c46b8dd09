"""validate / repair (RFC-15 validate mode): validate finds a file deleted behind the server's back,
a partition added on storage only and a completed instant missing from the server; repair fixes
each through the import path; validate then agrees, and the server's view equals hudi-rs's.
The CLI runs against a real server process on each backend (in the test worker's CLI process,
tests/harness/cli_loop.py)."""

from __future__ import annotations

import os
import shutil
import uuid

import pytest

from adapter.commands.import_hudi import import_hudi_table
from adapter.commands.validate_repair import compare
from client import HudiCatalog, HudiMetastoreClient
from hudi_format.storage_timeline import StorageTimeline
from tests.harness.hudi_tables import (
    hold_back,
    ours_slices,
    put_back,
    rows_of_slices,
    run_cli,
    table_copy,
    theirs_partitions,
    theirs_rows,
    theirs_slices,
)
from thrift_idl.hive_metastore.ttypes import Database

pytest.importorskip("hudi")  # hudi-rs, the reader the server's view is compared with


@pytest.fixture
def imported(our_server_info, tmp_path):
    """import(name, hold_last=False) -> (uri, db, client, base): a fixture table imported into a fresh database."""
    uri = f"thrift://127.0.0.1:{our_server_info.port}"
    db = f"val_{uuid.uuid4().hex[:8]}"
    with HudiMetastoreClient(uri) as c:
        c.create_database(Database(name=db, description="", locationUri=None, parameters={}))

        def make(name: str, hold_last: bool = False):
            base = table_copy(name, tmp_path)
            held = tmp_path / "held"
            if hold_last:
                hold_back(base, StorageTimeline.read(base).instants[-1].ts, held)
            import_hudi_table(uri, base, db, "t")
            if hold_last:
                put_back(base, held)
            return uri, db, c, base

        yield make


def validate(uri: str, db: str):
    return run_cli("validate", f"{db}.t", "--metastore", uri)


def assert_agrees(uri, c, db, base, rows=True):
    r = validate(uri, db)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "agrees" in r.stdout
    slices = c.get_latest_file_slices(db, "t")
    assert ours_slices(slices) == theirs_slices(base)
    if c.get_hudi_table(db, "t").partitionFields:
        assert c.get_hudi_partitions(db, "t") == theirs_partitions(base)
        assert len(c.get_partition_names(db, "t", -1)) == len(theirs_partitions(base))
    if rows:
        assert rows_of_slices(base, slices) == theirs_rows(base)


def repair(uri: str, db: str):
    r = run_cli("repair", f"{db}.t", "--yes", "--metastore", uri)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "now agrees" in r.stdout
    return r


def test_fresh_import_validates(imported):
    uri, db, c, base = imported("mor_v6_trips_8i1u")
    assert_agrees(uri, c, db, base)
    r = run_cli("repair", f"{db}.t", "--yes", "--metastore", uri)
    assert r.returncode == 0 and "nothing to repair" in r.stdout


@pytest.mark.parametrize("name,rel", [
    # the latest base file of a group: the slice before it is the latest again
    ("cow_v6_simplekeygen_nonhivestyle",
     "10/97de74b1-2a8e-4bb7-874c-0a74e1f42a77-0_0-119-166_20240418172804498.parquet"),
    # the only file of a partition: the partition goes
    ("cow_v6_simplekeygen_nonhivestyle",
     "30/6db57019-98ee-480e-8eb1-fb3de48e1c24-0_1-119-167_20240418172804498.parquet"),
    # a log file of a merge-on-read slice
    ("mor_v6_trips_8i1u", "city=san_francisco/.d0304c53-6fd2-4b7a-a9d6-5ff632f79224-0_20250331030642808.log.1_0-26-85"),
])
def test_file_deleted_behind_the_servers_back(imported, name, rel):
    uri, db, c, base = imported(name)
    os.remove(os.path.join(base, rel))
    partition, _, fname = rel.rpartition("/")
    _, diffs = compare(HudiCatalog(uri), db, "t")
    assert diffs and any(fname in str(d) for d in diffs), diffs
    r = validate(uri, db)
    assert r.returncode == 1 and f"{partition}/" in r.stdout and "difference(s)" in r.stdout
    before = ours_slices(c.get_latest_file_slices(db, "t"))

    refused = run_cli("repair", f"{db}.t", "--metastore", uri)  # no terminal, no --yes: nothing changes
    assert refused.returncode == 2 and "--yes" in refused.stderr
    assert ours_slices(c.get_latest_file_slices(db, "t")) == before

    out = repair(uri, db)
    assert "marked 1 file(s) missing on storage deleted" in out.stdout
    assert fname not in {f.name for f in c.get_all_files(db, "t", partition)}
    assert_agrees(uri, c, db, base)


@pytest.mark.parametrize("name,src,dst", [
    ("cow_v6_simplekeygen_nonhivestyle", "20", "40"),
    ("mor_v6_trips_8i1u", "city=san_francisco", "city=tokyo"),
    ("cow_v8_complexkeygen_hivestyle", "byteField=10/shortField=300", "byteField=99/shortField=1"),
])
def test_partition_added_on_storage_only(imported, name, src, dst):
    uri, db, c, base = imported(name)
    shutil.copytree(os.path.join(base, src), os.path.join(base, dst))
    r = validate(uri, db)
    assert r.returncode == 1 and f"partition: {dst} is on storage only" in r.stdout
    out = repair(uri, db)
    assert "from the listing" in out.stdout
    assert dst in c.get_hudi_partitions(db, "t")
    # rows: the copied files still say they are in `src` (_hoodie_partition_path); slices are compared
    assert_agrees(uri, c, db, base, rows=False)
    assert sorted(p.sd.location for p in c.get_partitions(db, "t", -1))[-1].startswith(base)


@pytest.mark.parametrize("name", ["cow_v8_simplekeygen_nonhivestyle", "mor_v6_trips_8i1u",
                                  "mor_v6_nonpartitioned_rollback"])
def test_completed_instant_missing_from_the_server(imported, name):
    uri, db, c, base = imported(name, hold_last=True)
    last = StorageTimeline.read(base).instants[-1]
    r = validate(uri, db)
    assert r.returncode == 1
    assert f"instant: {last.ts}.{last.done_action} is COMPLETED on storage, missing on the server" in r.stdout
    out = repair(uri, db)
    assert f"{last.ts}.{last.done_action}.COMPLETED" in out.stdout
    assert last.ts in {i.timestamp for i in c.list_instants(db, "t")}
    assert_agrees(uri, c, db, base)


def test_all_three_at_once(imported):
    uri, db, c, base = imported("cow_v6_simplekeygen_nonhivestyle", hold_last=True)
    os.remove(os.path.join(base, "20/76e0556b-390d-4249-b7ad-9059e2bc2cbd-0_0-98-141_20240418172802262.parquet"))
    shutil.copytree(os.path.join(base, "30"), os.path.join(base, "35"))
    _, diffs = compare(HudiCatalog(uri), db, "t")
    kinds = {d.kind for d in diffs}
    assert kinds == {"instant", "partition", "file-slice"}, diffs
    repair(uri, db)
    assert_agrees(uri, c, db, base, rows=False)


def test_validate_bad_input(imported):
    uri, db, c, base = imported("cow_v6_nonpartitioned")
    r = run_cli("validate", f"{db}.nope", "--metastore", uri)
    assert r.returncode == 2 and "not found" in r.stderr
    r = run_cli("validate", "nodot", "--metastore", uri)
    assert r.returncode == 2 and "expected <db>.<table>" in r.stderr
    shutil.rmtree(os.path.join(base, ".hoodie"))
    r = run_cli("validate", f"{db}.t", "--metastore", uri)
    assert r.returncode == 2 and "is not a Hudi table" in r.stderr
    r = run_cli("repair", f"{db}.t", "--yes", "--metastore", uri)
    assert r.returncode == 2 and "is not a Hudi table" in r.stderr
    assert len(c.list_instants(db, "t")) == 2  # nothing changed


def test_table_written_through_the_server_validates(our_server_info, tmp_path):
    """A table the server wrote (and mirrored to storage in version 6 layout) agrees with storage;
    a commit file removed from storage is found."""
    import json

    from hudi_format.table_config import HudiTableConfig
    from tests.test_storage_mirror import (
        AVRO_SCHEMA,
        ROWS,
        commit_json,
        write_base_file,
    )

    uri = f"thrift://127.0.0.1:{our_server_info.port}"
    db = f"val_{uuid.uuid4().hex[:8]}"
    base = str(tmp_path / "written")
    with HudiMetastoreClient(uri) as c:
        c.create_database(Database(name=db, description="", locationUri=None, parameters={}))
        c.register_hudi_table(HudiTableConfig(db_name=db, table_name="t", table_type="COPY_ON_WRITE",
                                              record_key_fields=["id"], partition_fields=["dt"],
                                              precombine_field="ts", hive_style_partitioning=False,
                                              base_path=base, avro_schema=json.dumps(AVRO_SCHEMA)))
        stamps = []
        for partition in ("2024-01-01", "2024-01-02"):
            inst = c.create_instant(db, "t", None, "commit")
            fid, rel, size = write_base_file(base, partition, inst.timestamp, ROWS)
            c.transition_to_inflight(db, "t", inst.timestamp, "commit")
            c.complete_instant(db, "t", inst.timestamp, "commit", commit_json(partition, fid, rel, size, len(ROWS)))
            stamps.append(inst.timestamp)
        c.sync_storage(db, "t")
        assert_agrees(uri, c, db, base)
        os.remove(os.path.join(base, ".hoodie", f"{stamps[-1]}.commit"))
        r = validate(uri, db)
        assert r.returncode == 1
        assert f"instant: {stamps[-1]}.commit is INFLIGHT on storage, COMPLETED on the server" in r.stdout
        assert "partition: 2024-01-02 is on the server only" in r.stdout


def _repair_on_a_terminal(uri: str, db: str, answer: str):
    """`repair` with a terminal on stdin (it asks); returns (exit status, output)."""
    import pty
    import subprocess

    from tests.harness.procs import REPO_ROOT, VENV_PYTHON

    master, slave = pty.openpty()
    env = dict(os.environ, PYTHONPATH=str(REPO_ROOT))
    proc = subprocess.Popen([VENV_PYTHON, "-m", "adapter.cli", "repair", f"{db}.t", "--metastore", uri],
                            cwd=str(REPO_ROOT), env=env, stdin=slave, stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, text=True)
    os.close(slave)
    os.write(master, answer.encode() + b"\n")
    out, _ = proc.communicate(timeout=120)
    os.close(master)
    return proc.returncode, out


def test_repair_asks_on_a_terminal(imported):
    uri, db, c, base = imported("cow_v6_simplekeygen_nonhivestyle", hold_last=True)
    before = [i.timestamp for i in c.list_instants(db, "t")]
    code, out = _repair_on_a_terminal(uri, db, "n")
    assert code == 1 and "Reconcile" in out and "cancelled; nothing changed" in out
    assert [i.timestamp for i in c.list_instants(db, "t")] == before
    code, out = _repair_on_a_terminal(uri, db, "y")
    assert code == 0 and "now agrees" in out, out
    assert_agrees(uri, c, db, base)


@pytest.mark.parametrize("name,rel", [
    ("cow_v6_nonpartitioned", None),  # the latest base file
    ("mor_v6_trips_8i1u", "city=san_francisco/.d0304c53-6fd2-4b7a-a9d6-5ff632f79224-0_20250331030642808.log.1_0-26-85"),
])
def test_file_changed_size_behind_the_servers_back(imported, name, rel):
    uri, db, c, base = imported(name)
    if rel is None:
        s = c.get_latest_file_slices(db, "t")[0]
        rel = f"{s.partitionPath}/{s.baseFile.name}" if s.partitionPath else s.baseFile.name
    path = os.path.join(base, rel)
    with open(path, "ab") as f:
        f.write(b"appended behind the server's back")
    size = os.path.getsize(path)
    r = validate(uri, db)
    assert r.returncode == 1 and f"{os.path.basename(path)} is {size} bytes on storage" in r.stdout
    out = repair(uri, db)
    assert "took the size of 1 file(s)" in out.stdout
    partition = os.path.relpath(os.path.dirname(path), base)
    partition = "" if partition == "." else partition
    assert {f.name: f.size for f in c.get_all_files(db, "t", partition)}[os.path.basename(path)] == size
    r = validate(uri, db)
    assert r.returncode == 0, r.stdout


def test_files_no_commit_wrote_are_reported_and_moved_aside(imported):
    """A plain INSERT (Spark without Hudi's bundle into a Hive-registered Hudi table) writes Spark-named
    parquet files next to Hudi's: validate reports each, repair moves them under .hoodie/.quarantine."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    uri, db, c, base = imported("mor_v6_trips_8i1u")
    before = ours_slices(c.get_latest_file_slices(db, "t"))
    spark_names = ["city=san_francisco/part-00000-1b2c3d4e-0000-4000-8000-000000000001.c000.snappy.parquet",
                   "city=new_york/part-00001-1b2c3d4e-0000-4000-8000-000000000002.c000.snappy.parquet"]
    for rel in spark_names:
        os.makedirs(os.path.dirname(os.path.join(base, rel)), exist_ok=True)
        pq.write_table(pa.table({"uuid": ["x"], "fare": [1.0]}), os.path.join(base, rel))
    open(os.path.join(base, "city=san_francisco", "_SUCCESS"), "w").close()  # a marker, not data
    r = validate(uri, db)
    assert r.returncode == 1, r.stdout + r.stderr
    strays = [line for line in r.stdout.splitlines() if line.startswith("stray-file: ")]
    assert [s.split()[1] for s in strays] == sorted(spark_names) and "_SUCCESS" not in r.stdout
    out = repair(uri, db)
    for rel in spark_names:
        assert not os.path.exists(os.path.join(base, rel))
        [moved] = [line.rsplit(" to ", 1)[1] for line in out.stdout.splitlines() if line.startswith(f"moved {rel} ")]
        assert "/.hoodie/.quarantine/" in moved and moved.endswith(rel) and os.path.exists(moved)
    assert ours_slices(c.get_latest_file_slices(db, "t")) == before
    assert_agrees(uri, c, db, base)
