"""RFC-15's CLI views (`stats`, `list-partitions`, `list-files`), run (tests/harness/cli_loop.py) against a
real server process on each backend: they print what the server serves (equal to hudi-rs's view of the
imported fixture), how long the lookup took, and JSON with --json; bad input is a clear error."""

from __future__ import annotations

import json
import os
import uuid

import pytest

from adapter.commands.import_hudi import import_hudi_table
from client import HudiMetastoreClient
from hudi_format.storage_timeline import StorageTimeline
from store.storage.warehouse import local_path
from tests.harness.hudi_tables import (
    run_cli,
    table_copy,
    theirs_partitions,
    theirs_slices,
)
from thrift_idl.hive_metastore.ttypes import Database

pytest.importorskip("hudi")  # hudi-rs, the reader the server's view is compared with


@pytest.fixture
def table(our_server_info, tmp_path):
    """table(name) -> (uri, "db.t", client, base): a fixture imported into a fresh database."""
    uri = f"thrift://127.0.0.1:{our_server_info.port}"
    db = f"cli_{uuid.uuid4().hex[:8]}"
    with HudiMetastoreClient(uri) as c:
        c.create_database(Database(name=db, description="", locationUri=None, parameters={}))

        def make(name: str):
            base = table_copy(name, tmp_path)
            import_hudi_table(uri, base, db, "t")
            return uri, f"{db}.t", c, base

        yield make


def _sizes(base: str) -> tuple[int, int]:
    """(files, bytes) of the table's data files on storage (every version)."""
    n = size = 0
    for root, dirs, names in os.walk(base):
        dirs[:] = [d for d in dirs if d != ".hoodie"]
        for f in names:
            if f.endswith(".parquet") or ".log." in f:
                n += 1
                size += os.path.getsize(os.path.join(root, f))
    return n, size


@pytest.mark.parametrize("name", ["mor_v6_trips_8i1u", "cow_v8_complexkeygen_hivestyle"])
def test_stats(table, name):
    uri, tbl, c, base = table(name)
    tl = StorageTimeline.read(base)
    r = run_cli("stats", tbl, "--json", "--metastore", uri)
    assert r.returncode == 0, r.stderr
    doc = json.loads(r.stdout)
    files, size = _sizes(base)
    last = tl.completed[-1]
    assert doc["partitions"] == len(theirs_partitions(base))
    assert (doc["files"], doc["total_size_bytes"]) == (files, size)
    assert doc["last_instant"]["timestamp"] == last.ts and doc["last_instant"]["action"] == last.done_action
    assert doc["last_instant"]["completion_time"] == last.completion_ts
    assert doc["storage_mirror"] is True
    assert doc["storage_mirror_lag_versions"] == 0
    assert "lookup took" in r.stderr and " ms" in r.stderr

    text = run_cli("stats", tbl, "--metastore", uri)
    assert text.returncode == 0
    assert f"partitions          {doc['partitions']}" in text.stdout
    assert f"last instant        {last.ts}.{last.done_action}" in text.stdout
    assert "storage mirror lag" in text.stdout and "lookup took" in text.stdout


def test_list_partitions(table):
    uri, tbl, c, base = table("cow_v6_complexkeygen_hivestyle")
    r = run_cli("list-partitions", tbl, "--json", "--metastore", uri)
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout) == theirs_partitions(base)
    assert "lookup took" in r.stderr
    text = run_cli("list-partitions", tbl, "--metastore", uri)
    assert text.stdout.splitlines()[0] == "PARTITION"
    assert text.stdout.splitlines()[1:-2] == theirs_partitions(base)
    assert text.stdout.splitlines()[-2] == "3 partition(s)"
    assert text.stdout.splitlines()[-1].startswith("lookup took")


@pytest.mark.parametrize("name", ["mor_v6_trips_8i1u", "cow_v8_nonpartitioned"])
def test_list_files(table, name):
    uri, tbl, c, base = table(name)
    r = run_cli("list-files", tbl, "--json", "--metastore", uri)
    assert r.returncode == 0, r.stderr
    docs = json.loads(r.stdout)
    assert all(set(d) == {"partition", "file_id", "base_instant", "base_file", "log_files", "base_file_path",
                          "log_file_paths"} for d in docs)
    for d in docs:  # the hive layout: files under the base path, each path a file that exists
        for n, path in [(d["base_file"], d["base_file_path"]), *zip(d["log_files"], d["log_file_paths"])]:
            if n is not None:
                assert path.endswith("/" + "/".join(filter(None, [d["partition"], n]))) and os.path.isfile(
                    local_path(path)), path
    got = {(d["partition"], d["file_id"]): (d["base_instant"], d["base_file"], tuple(d["log_files"])) for d in docs}
    assert got == theirs_slices(base)
    assert "lookup took" in r.stderr

    partition = sorted(got)[-1][0]
    one = run_cli("list-files", tbl, "--json", "--partition", partition, "--metastore", uri)
    assert one.returncode == 0, one.stderr
    assert {(d["partition"], d["file_id"]) for d in json.loads(one.stdout)} == {k for k in got if k[0] == partition}
    text = run_cli("list-files", tbl, "--metastore", uri)
    assert f"{len(docs)} file slice(s)" in text.stdout and "lookup took" in text.stdout


def test_views_bad_input(table):
    uri, tbl, c, base = table("cow_v6_simplekeygen_nonhivestyle")
    db = tbl.split(".")[0]
    for cmd in ("stats", "list-partitions", "list-files"):
        r = run_cli(cmd, f"{db}.missing", "--metastore", uri)
        assert r.returncode == 2 and "Hudi table" in r.stderr and "not found" in r.stderr, (cmd, r.stderr)
        r = run_cli(cmd, "nodot", "--metastore", uri)
        assert r.returncode == 2 and "expected <db>.<table>" in r.stderr
    r = run_cli("list-files", tbl, "--partition", "99", "--metastore", uri)
    assert r.returncode == 2 and "has no partition '99'" in r.stderr
    from tests.harness import free_port

    r = run_cli("stats", tbl, "--metastore", f"thrift://127.0.0.1:{free_port()}")
    assert r.returncode == 2 and "metastore thrift://127.0.0.1:" in r.stderr
    r = run_cli("stats", tbl, "--metastore", "http://x")
    assert r.returncode == 2
