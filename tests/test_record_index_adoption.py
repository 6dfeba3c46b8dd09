"""Adoption of the record-level index (RFC-08) for tables imported from storage, on every backend:
import-hudi builds it from the latest file slices' `_hoodie_record_key`s (equal to what hudi-rs
reads), validate checks it against storage and reports a damaged one, repair rebuilds it; a
merge-on-read table with log files is adopted without one (its log files cannot be read yet)."""

from __future__ import annotations

import uuid

import pyarrow as pa
import pytest

from adapter.client import HudiMetastoreClient, file_group_keys
from adapter.commands.import_hudi import import_hudi_table
from tests.harness.hudi_tables import run_cli, table_copy
from thrift_idl.hive_metastore.ttypes import Database

hudi = pytest.importorskip("hudi")


def _storage_keys(base: str) -> dict:
    t = pa.Table.from_batches(hudi.HudiTable(base).read())
    return {r["_hoodie_record_key"]: (r["_hoodie_partition_path"], r["_hoodie_file_name"].split("_")[0],
                                      r["_hoodie_commit_time"])
            for r in t.select(["_hoodie_record_key", "_hoodie_partition_path", "_hoodie_file_name",
                               "_hoodie_commit_time"]).to_pylist()}


@pytest.fixture
def imported(our_server, tmp_path):
    uri = f"thrift://127.0.0.1:{our_server}"
    db = f"ria_{uuid.uuid4().hex[:8]}"
    with HudiMetastoreClient(uri) as c:
        c.create_database(Database(name=db, description="", locationUri=None, parameters={}))

        def make(name: str):
            base = table_copy(name, tmp_path)
            return uri, db, c, base, import_hudi_table(uri, base, db, "t")

        yield make


def test_import_builds_validate_checks_repair_rebuilds(imported):
    uri, db, c, base, report = imported("cow_v6_complexkeygen_hivestyle")
    want = _storage_keys(base)
    assert want and report.index_keys == len(want)
    assert c.get_hudi_table(db, "t").properties["hoodie.index.type"] == "RECORD_INDEX"
    keys = sorted(want)
    assert dict(zip(keys, c.lookup_record_keys(db, "t", keys))) == want
    tbl = f"{db}.t"
    ok = run_cli("validate", tbl, "--metastore", uri)
    assert ok.returncode == 0, ok.stdout + ok.stderr

    # damage the index: one key gone, one key in a wrong file group
    p, fid, ts = want[keys[0]]
    c.load_record_index(db, "t", [file_group_keys(p, fid, inserted=keys[2:], instant=ts)], reset=True)
    c.load_record_index(db, "t", [file_group_keys(p, "elsewhere", inserted=[keys[1]], instant=ts)])
    bad = run_cli("validate", tbl, "--metastore", uri)
    assert bad.returncode == 1
    assert f"record-index: key {keys[0]!r}" in bad.stdout and "missing in the index" in bad.stdout
    assert f"record-index: key {keys[1]!r}" in bad.stdout and "/elsewhere in the index" in bad.stdout

    fixed = run_cli("repair", tbl, "--yes", "--metastore", uri)
    assert fixed.returncode == 0, fixed.stdout + fixed.stderr
    assert "built the record index" in fixed.stdout
    assert dict(zip(keys, c.lookup_record_keys(db, "t", keys))) == want
    assert run_cli("validate", tbl, "--metastore", uri).returncode == 0


def test_merge_on_read_with_log_files_is_adopted_without_index(imported):
    uri, db, c, base, report = imported("mor_v6_trips_8i1u")
    assert report.index_keys is None and "log files" in (report.index_note or "")
    assert "hoodie.index.type" not in (c.get_hudi_table(db, "t").properties or {})
    assert run_cli("validate", f"{db}.t", "--metastore", uri).returncode == 0
