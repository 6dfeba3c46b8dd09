"""Property test of the record-level index (hypothesis, a new seed every run): random sequences of insert,
upsert (records change partition: moves), delete, delete_partition, insert_overwrite,
insert_overwrite_table and rolled-back failed writes on a table created with the index (the
default). After every step:

* the index equals storage: every key hudi-rs reads is found at its partition and file group, with
  the instant that put it there (its `_hoodie_commit_time` then: an update in place keeps it, as in
  Hudi's record index); keys storage does not hold are unknown; the index holds no other key;
* no key is in two partitions (hudi-rs reads each key once);
* our reader and hudi-rs equal a model with global keys (a record lives where it was last written).
"""

from __future__ import annotations

import itertools
import time
import uuid
from unittest import mock

import pyarrow as pa
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from client import HudiMetastoreClient
from pipeline import write
from pipeline.commit import WriteTransaction
from tests.harness.properties import examples
from tests.pipeline_helpers import base_dir, hudi_rs, ours, uri

pytestmark = [pytest.mark.spark, pytest.mark.slow]

SCHEMA = "id long, name string, ts long, dt string"
COLS = ["id", "name", "ts", "dt"]
KEYS = list(range(10))
PARTS = ["p0", "p1", "p2"]
OPS = ["insert", "upsert", "upsert", "delete", "delete_partition", "insert_overwrite", "insert_overwrite_table",
       "failed_write"]
FAST_HEARTBEAT = {"hoodie.client.heartbeat.interval_in_ms": "300", "hoodie.client.heartbeat.tolerable.misses": "1"}


class _Killed(Exception):
    pass


def _latest(rows: list) -> dict:
    """key -> the row with the greatest ts (the batch de-duplicated as the writer does)."""
    out: dict = {}
    for r in sorted(rows, key=lambda r: r[2]):
        out[str(r[0])] = r
    return out


def _apply(model: dict, op: str, rows: list) -> dict:
    model = dict(model)
    if op in ("insert", "upsert"):
        model.update(_latest(rows))
    elif op == "delete":
        for r in rows:
            model.pop(str(r[0]), None)
    elif op == "insert_overwrite":
        parts = {r[3] for r in rows}
        model = {k: v for k, v in model.items() if v[3] not in parts}
        model.update(_latest(rows))
    elif op == "insert_overwrite_table":
        model = _latest(rows)
    elif op == "delete_partition":
        parts = {r[3] for r in rows}
        model = {k: v for k, v in model.items() if v[3] not in parts}
    return model


def _storage_keys(base: str) -> dict:
    """key -> (partition path, file id, commit time), as hudi-rs reads the table."""
    import hudi

    batches = hudi.HudiTable(base).read()
    out: dict = {}
    if not batches:
        return out
    t = pa.Table.from_batches(batches)
    for r in t.select(["_hoodie_record_key", "_hoodie_partition_path", "_hoodie_file_name",
                       "_hoodie_commit_time"]).to_pylist():
        key = r["_hoodie_record_key"]
        assert key not in out, f"key {key} in two places: {out[key]} and {r}"
        out[key] = (r["_hoodie_partition_path"], r["_hoodie_file_name"].split("_")[0], r["_hoodie_commit_time"])
    return out


def _check_index(port: int, table: str, base: str, where: str, placed: dict) -> None:
    """`placed`: key -> (partition, file id, instant) the index answered after the step before
    (updated here): a key still in its file group keeps that instant, one that came there takes
    its `_hoodie_commit_time`."""
    db, name = table.split(".")
    storage = _storage_keys(base)
    want = {k: placed[k] if k in placed and placed[k][:2] == v[:2] else v for k, v in storage.items()}
    asked = sorted(set(storage) | {str(k) for k in KEYS})
    with HudiMetastoreClient(uri(port)) as c:
        found = dict(zip(asked, c.lookup_record_keys(db, name, asked)))
        count = c.get_hudi_table_stats(db, name).recordIndexKeys
    assert {k: v for k, v in found.items() if v is not None} == want, where
    assert count == len(storage), where
    placed.clear()
    placed.update(want)


def _failed_write(spark, port: int, table: str, rows: list) -> None:
    """A job that writes its files and dies before completing; then it is rolled back."""
    df = spark.createDataFrame(rows, SCHEMA)
    with mock.patch.object(WriteTransaction, "complete", side_effect=_Killed()), pytest.raises(_Killed):
        write(df, table, "upsert", metastore=uri(port), options=FAST_HEARTBEAT)
    db, name = table.split(".")
    with HudiMetastoreClient(uri(port)) as c:
        deadline = time.monotonic() + 30
        while not c.get_failed_instants(db, name):
            assert time.monotonic() < deadline, "the failed write's heartbeat never expired"
            time.sleep(0.2)
        for inst in c.get_failed_instants(db, name):
            c.rollback_instant(db, name, inst.timestamp)


def _step(spark, our_server, table: str, op: str, rows, model: dict, where: str, placed: dict) -> dict:
    """Run one step, then check storage (hudi-rs), our reader and the index against the model."""
    if op == "failed_write":
        _failed_write(spark, our_server, table, rows)
    else:
        write(spark.createDataFrame(rows, SCHEMA), table, op, record_key="id", precombine_field="ts",
              partition_by="dt", metastore=uri(our_server),
              options={"hoodie.datasource.write.hive_style_partitioning": "true"})
        model = _apply(model, op, rows)
    base = base_dir(our_server, table)
    assert hudi_rs(base, COLS) == model, where
    assert ours(spark, our_server, table, COLS) == model, where
    _check_index(our_server, table, base, where, placed)
    return model


@settings(max_examples=examples(1, 12))  # per backend; a new seed every run (tests/harness/properties.py)
@given(data=st.data())
def test_index_follows_random_operation_sequences(spark, our_server, data):
    table = f"rip_{uuid.uuid4().hex[:8]}.t"
    ts = itertools.count(1)
    model: dict = {}
    placed: dict = {}
    steps = data.draw(st.integers(min_value=3, max_value=6), label="steps")
    for step in range(steps):
        op = data.draw(st.sampled_from(OPS if model else ["insert", "upsert"]), label=f"op{step}")
        if op in ("delete", "delete_partition"):
            pool = sorted({int(k) for k in model} | {KEYS[-1]})
            keys = data.draw(st.lists(st.sampled_from(pool), min_size=1, max_size=3, unique=True), label="keys")
        else:  # keys may repeat in a batch; any key may land in any partition (moves)
            keys = data.draw(st.lists(st.sampled_from(KEYS), min_size=1, max_size=6), label="keys")
        rows = []
        for k in keys:
            part = model[str(k)][3] if op in ("delete", "delete_partition") and str(k) in model else \
                data.draw(st.sampled_from(PARTS), label="part")
            rows.append((k, f"n{step}", next(ts), part))
        model = _step(spark, our_server, table, op, rows, model, f"step {step}: {op} {rows}", placed)


def test_index_follows_a_fixed_sequence_with_moves(spark, our_server):
    """Every kind of step once, whatever hypothesis draws: moves by upsert and insert_overwrite, a
    rolled-back failed write, delete, delete_partition."""
    table = f"rif_{uuid.uuid4().hex[:8]}.t"
    steps = [("insert", [(1, "a", 1, "p0"), (2, "b", 2, "p0"), (3, "c", 3, "p1")]),
             ("upsert", [(1, "a2", 4, "p1"), (2, "b2", 5, "p0"), (4, "d", 6, "p2")]),  # 1 moves p0 -> p1
             ("insert_overwrite", [(3, "c2", 7, "p2")]),  # p2 overwritten (4 leaves), 3 moves from p1
             ("failed_write", [(2, "lost", 8, "p2")]),
             ("delete", [(1, "", 9, "p0")]),  # global delete: 1 lives in p1
             ("upsert", [(5, "e", 10, "p1"), (2, "b3", 11, "p1")]),
             ("delete_partition", [(0, "", 12, "p1")])]
    model: dict = {}
    placed: dict = {}
    for op, rows in steps:
        model = _step(spark, our_server, table, op, rows, model, f"{op} {rows}", placed)
    assert model == {"3": (3, "c2", 7, "p2")}


@pytest.mark.backends("sqlite")  # tagging's lookup blocks; the lookups themselves are tested on every backend
def test_tagging_in_blocks_of_any_size_agrees(spark, our_server):
    from pipeline import index_tagging

    table = f"rit_{uuid.uuid4().hex[:8]}.t"
    rows = [(k, "a", k, PARTS[k % 3]) for k in range(40)]
    write(spark.createDataFrame(rows, SCHEMA), table, "insert", record_key="id", precombine_field="ts",
          partition_by="dt", metastore=uri(our_server),
          options={"hoodie.datasource.write.hive_style_partitioning": "true"})
    batch = spark.createDataFrame([(str(k), PARTS[(k + 1) % 3], k) for k in range(30, 50)],
                                  "_hoodie_record_key string, _hoodie_partition_path string, v long").repartition(3)
    db, name = table.split(".")

    def tagged(lookup_batch: int) -> list:
        out = index_tagging.tag(batch, uri(our_server), db, name, lookup_batch=lookup_batch)
        assert out.columns == batch.columns + ["_old_ppath", "_fg"]
        return sorted(tuple(r) for r in out.collect())

    one, three, all_ = tagged(1), tagged(3), tagged(100_000)  # 20 keys over 3 partitions
    assert one == three == all_
    assert len(all_) == 20 and sorted(r[2] for r in all_) == list(range(30, 50))  # every record, once
    assert [r[0] for r in all_ if r[4] is not None] == [str(k) for k in range(30, 40)]
    assert all(r[3] == f"dt={PARTS[int(r[0]) % 3]}" for r in all_ if r[4] is not None)
    assert all(r[3] is None for r in all_ if r[4] is None)
