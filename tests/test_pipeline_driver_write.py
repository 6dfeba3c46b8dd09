"""A small merge-on-read batch whose keys the table has is de-duplicated, tagged and appended to the
log files by the driver (pipeline/writer.py `_on_driver`, `hoodie.metastore.write.driver.max.records`);
a batch with new keys or partition moves is handed to Spark's tasks after the driver tagged it. Both
are checked against the model with our reader and hudi-rs, and the server's slices against hudi-rs's.
(tests/test_pipeline_services_property.py alternates the two paths in its random sequences.)"""

from __future__ import annotations

import uuid

import pyarrow as pa
import pytest

from hudi_format.config_keys import DRIVER_WRITE_MAX_BYTES, DRIVER_WRITE_MAX_RECORDS, RECORD_INDEX_UPDATE_PARTITION_PATH
from pipeline import write
from pipeline import writer as writer_module
from pipeline.writer import _split_groups
from tests.pipeline_helpers import base_dir, hudi_rs, hudi_rs_slices, ours, uri
from tests.pipeline_mor import _server_slices

# the subject is the driver's share of a write, not the database: each case on one backend
pytestmark = [pytest.mark.spark, pytest.mark.backends_in_turn("mysql", "postgresql", "sqlite")]

SCHEMA = "id long, name string, ts long, dt string"
COLS = ["id", "name", "ts", "dt"]


@pytest.fixture
def driver_writes(monkeypatch):
    """What each write's `_append_on_driver` returned (None: handed to Spark), in order."""
    seen: list = []
    original = writer_module._Job._append_on_driver

    def spy(self, tagged, slices):
        out = original(self, tagged, slices)
        seen.append(out)
        return out

    monkeypatch.setattr(writer_module._Job, "_append_on_driver", spy)
    return seen


def _check(spark, port, table, model):
    base = base_dir(port, table)
    assert ours(spark, port, table, COLS) == model
    assert hudi_rs(base, COLS) == model
    assert _server_slices(port, table) == hudi_rs_slices(base)


def _write(spark, port, table, op, rows, **options):
    return write(spark.createDataFrame(rows, SCHEMA), table, op, record_key="id", precombine_field="ts",
                 partition_by="dt", metastore=uri(port), table_type="MERGE_ON_READ", options=options or None)


def _apply(model, op, rows):
    for r in sorted(rows, key=lambda r: r[2]):
        if op == "delete":
            model.pop(str(r[0]), None)
        else:
            model[str(r[0])] = r
    return model


def test_updates_and_deletes_of_a_small_batch_are_appended_by_the_driver(spark, our_server, driver_writes):
    table = f"dw_{uuid.uuid4().hex[:8]}.t"
    rows = [(k, "a", 1, f"p{k % 3}") for k in range(30)]
    _write(spark, our_server, table, "insert", rows)  # (a new table: Spark's tasks)
    model = _apply({}, "insert", rows)
    assert driver_writes == []

    # repeated keys: the greatest precombine value wins, as in Spark's de-duplication
    ups = [(1, "b", 3, "p1"), (1, "c", 2, "p1"), (4, "b", 2, "p1"), (5, "b", 2, "p2"), (29, "b", 2, "p2")]
    _write(spark, our_server, table, "upsert", ups)
    model = _apply(model, "upsert", ups)
    assert len(driver_writes) == 1 and {r["fileId"] for r in driver_writes[0]} and \
        all(".log." in r["path"] for r in driver_writes[0])
    _check(spark, our_server, table, model)

    gone = [(4, None, 4, "p1"), (6, None, 4, "p0"), (1000, None, 4, "p0")]  # (1000: not in the table)
    _write(spark, our_server, table, "delete", gone)
    model = _apply(model, "delete", gone)
    assert driver_writes[-1] is not None and sum(r["numDeletes"] for r in driver_writes[-1]) == 2
    _check(spark, our_server, table, model)

    again = [(5, "d", 5, "p2"), (7, "d", 5, "p1")]  # an update through a second log file of p2's group
    _write(spark, our_server, table, "upsert", again)
    model = _apply(model, "upsert", again)
    assert driver_writes[-1] is not None
    _check(spark, our_server, table, model)


def test_new_keys_and_moves_go_to_spark_after_the_driver_tagged_them(spark, our_server, driver_writes):
    table = f"dw_{uuid.uuid4().hex[:8]}.t"
    rows = [(k, "a", 1, f"p{k % 2}") for k in range(10)]
    _write(spark, our_server, table, "insert", rows)
    model = _apply({}, "insert", rows)

    mixed = [(2, "b", 2, "p0"), (2, "x", 1, "p0"), (50, "n", 2, "p1")]  # an update and a new key
    _write(spark, our_server, table, "upsert", mixed)
    model = _apply(model, "upsert", mixed)
    assert driver_writes == [None]
    _check(spark, our_server, table, model)

    moved = [(3, "m", 3, "p0"), (4, "u", 3, "p0")]  # 3 moves from p1 to p0; 4 stays in p0
    _write(spark, our_server, table, "upsert", moved)
    model = _apply(model, "upsert", moved)
    assert driver_writes == [None, None]
    _check(spark, our_server, table, model)

    # without moves, a changed partition is an update where the key lives (p1): the driver's again
    stay = [(5, "s", 4, "p0")]
    _write(spark, our_server, table, "upsert", stay, **{RECORD_INDEX_UPDATE_PARTITION_PATH: "false"})
    model = _apply(model, "upsert", stay)
    assert driver_writes[-1] is not None and [r["partitionPath"] for r in driver_writes[-1]] == ["p1"]
    _check(spark, our_server, table, model)

    # 0: Spark's tasks alone (the driver neither tags nor writes)
    ups = [(6, "z", 5, "p0")]
    _write(spark, our_server, table, "upsert", ups, **{DRIVER_WRITE_MAX_RECORDS: "0"})
    model = _apply(model, "upsert", ups)
    assert len(driver_writes) == 3
    _check(spark, our_server, table, model)

    # a batch above the limits (records; records times the table's bytes per record): Spark's tasks alone
    for limit in ({DRIVER_WRITE_MAX_RECORDS: "1"}, {DRIVER_WRITE_MAX_BYTES: "100"}):
        ups = [(7, "y", 6, "p1"), (8, "y", 6, "p0")]
        _write(spark, our_server, table, "upsert", ups, **limit)
        model = _apply(model, "upsert", ups)
        assert len(driver_writes) == 3
        _check(spark, our_server, table, model)


def test_a_batch_at_the_limit_is_the_drivers_and_a_null_key_is_refused_there(spark, our_server, driver_writes):
    """The driver fetches one record more than the limit (`_small_batch`, which also counts the
    batch instead of Spark): a batch of exactly the limit is the driver's, and a null record key is
    refused as Spark's count refuses it, with nothing written."""
    table = f"dw_{uuid.uuid4().hex[:8]}.t"
    rows = [(k, "a", 1, f"p{k % 2}") for k in range(10)]
    _write(spark, our_server, table, "insert", rows)
    model = _apply({}, "insert", rows)
    ups = [(1, "b", 2, "p1"), (2, "b", 2, "p0")]
    _write(spark, our_server, table, "upsert", ups, **{DRIVER_WRITE_MAX_RECORDS: "2"})
    model = _apply(model, "upsert", ups)
    assert len(driver_writes) == 1 and sorted(r["partitionPath"] for r in driver_writes[0]) == ["p0", "p1"]
    _check(spark, our_server, table, model)

    bad = spark.createDataFrame([(3, "c", 3, "p1"), (None, "c", 3, "p0")], SCHEMA)
    with pytest.raises(writer_module.HudiWriteError, match="1 record.s. have a null record key"):
        write(bad, table, "upsert", metastore=uri(our_server))
    assert len(driver_writes) == 1
    _check(spark, our_server, table, model)


def test_the_limits_must_be_whole_numbers(spark, our_server):
    table = f"dw_{uuid.uuid4().hex[:8]}.t"
    for key in (DRIVER_WRITE_MAX_RECORDS, DRIVER_WRITE_MAX_BYTES):
        for bad in ("-1", "many"):
            with pytest.raises(ValueError, match=key):
                _write(spark, our_server, table, "upsert", [(1, "a", 1, "p0")], **{key: bad})


def test_a_batch_is_split_between_the_driver_threads_by_whole_file_groups():
    fgs = ["a", "a", "a", "b", "c", "c", "d", "e", "e", "e"]
    t = pa.table({"_fg": fgs, "i": list(range(len(fgs)))})
    for k in range(1, 12):
        parts = _split_groups(t, k)
        assert 1 <= len(parts) <= k
        assert pa.concat_tables(parts).equals(t)
        seen = [set(p.column("_fg").to_pylist()) for p in parts]
        assert all(not (x & y) for i, x in enumerate(seen) for y in seen[i + 1:]), (k, seen)
    assert len(_split_groups(t, 2)) == 2 and len(_split_groups(t, 20)) == 5
    assert _split_groups(t.slice(0, 0), 4)[0].num_rows == 0
