"""Savepoint and restore of a table our pipeline writes (docs/hudi.md, "Savepoints and restore"):
the CLI's savepoint and restore through the server, refused restores answered with the declared
Thrift exception and changing nothing, and after the restore hudi-rs (reading storage: the mirrored
timeline, the files left) and our reader both read the table as it was at the savepoint, with the
server's file slices equal to hudi-rs's and the record index back to the savepoint's keys.

One local Spark session (the pipeline's); the server runs on SQLite (tests/unit/store/hudi/
test_savepoints.py covers the store on every backend)."""

from __future__ import annotations

import argparse
import uuid

import pytest

from adapter.commands.record_index_build import restore_keys
from adapter.commands.savepoints import run_delete_savepoint, run_restore, run_savepoint
from client import HudiCatalog, HudiMetastoreClient
from hudi_format.commit_metadata import restore_plan
from pipeline import write
from tests.pipeline_helpers import base_dir, hudi_rs, hudi_rs_slices, ours, server_slices, uri
from tests.test_pipeline_property import COLS, SCHEMA, _row
from thrift_idl.hive_metastore.ttypes import InvalidOperationException

pytestmark = [pytest.mark.spark, pytest.mark.slow, pytest.mark.backends("sqlite")]


def _args(table: str, port: int, **kw) -> argparse.Namespace:
    return argparse.Namespace(table=table, metastore=uri(port), **kw)


def test_savepoint_and_restore_of_a_pipeline_table(spark, our_server):
    port = our_server
    table = f"sr_{uuid.uuid4().hex[:8]}.t"
    db, name = table.split(".")

    def put(op: str, rows) -> str:
        return write(spark.createDataFrame(rows, SCHEMA), table, op, record_key="id", precombine_field="ts",
                     partition_by=["dt"], metastore=uri(port))

    c1 = put("insert", [_row(k, "a", 1) for k in range(6)])  # dt p0, p1, p2; the record index is on by default
    c2 = put("upsert", [_row(0, "b", 2), _row(4, "b", 2)])
    assert run_savepoint(_args(table, port, commit=None)) == 0  # the latest commit: c2
    base = base_dir(port, table)
    at_savepoint = hudi_rs(base, COLS)
    slices_at_savepoint = hudi_rs_slices(base)
    assert ours(spark, port, table, COLS) == at_savepoint
    assert server_slices(port, table) == slices_at_savepoint

    c3 = put("upsert", [_row(1, "c", 3), _row(6, "c", 3), _row(9, "c", 3)])  # updates and new keys
    c4 = put("delete", [_row(0, "c", 4), _row(2, "c", 4)])
    later = hudi_rs(base, COLS)
    assert later != at_savepoint and ours(spark, port, table, COLS) == later

    # refused: not a savepoint, not on the timeline; a savepoint deleted before the restore completes
    with HudiMetastoreClient(uri(port)) as c:
        for target in (c3, "20000101000000000"):
            with pytest.raises(InvalidOperationException):
                c.create_instant(db, name, "", "restore", restore_plan(target, []), 0)
        pending = c.create_instant(db, name, "", "restore", restore_plan(c2, []), 0).timestamp
        c.transition_to_inflight(db, name, pending, "restore", b"")
        c.delete_savepoint(db, name, c2)
        with pytest.raises(InvalidOperationException, match="no savepoint"):
            c.complete_instant(db, name, pending, "restore", b"")
    assert hudi_rs(base, COLS) == later and ours(spark, port, table, COLS) == later

    # the savepoint again, and the pending restore completes (with the savepoint's record keys)
    with HudiCatalog(uri(port)) as cat:
        cat.savepoint(db, name, c2)
        keys = restore_keys(cat, db, name, c2)
        assert keys
        cat.complete_instant(db, name, pending, "restore", b"", keys)

    def restored() -> None:
        assert hudi_rs(base, COLS) == at_savepoint
        assert hudi_rs_slices(base) == slices_at_savepoint == server_slices(port, table)
        assert ours(spark, port, table, COLS) == at_savepoint
        with HudiCatalog(uri(port)) as cat:
            times = {i.ts for i in cat.list_instants(db, name)}
            assert c3 not in times and c4 not in times and {c1, c2, pending} <= times
            found = cat.lookup_record_keys(db, name, [str(k) for k in (0, 1, 2, 6, 9)])
            assert [f is not None for f in found] == [True, True, True, False, False]
            assert found[0][2] == c2 and found[1][2] == c1  # key 0 as c2 wrote it, key 1 as c1 did

    restored()
    # the table goes on; the CLI restores it to the savepoint again, then deletes the savepoint
    put("upsert", [_row(6, "d", 5), _row(1, "d", 5)])
    assert hudi_rs(base, COLS) == ours(spark, port, table, COLS) == {
        **at_savepoint, "6": (6, "d", 5, "r0", "p0"), "1": (1, "d", 5, "r1", "p1")}
    assert run_restore(_args(table, port, instant=c2, yes=True)) == 0
    restored()
    assert run_delete_savepoint(_args(table, port, instant=c2)) == 0
    with HudiCatalog(uri(port)) as cat:
        assert "savepoint" not in {i.action for i in cat.list_instants(db, name)}
