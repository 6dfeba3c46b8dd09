"""Property test (hypothesis, a new seed every run): random sequences of write operations on small tables
(hive-style, plain, plain multi-level and non-partitioned). After every step our reader, hudi-rs
reading storage and an in-memory model hold exactly the same rows (by record key, with values),
and the server's file slices equal hudi-rs's; time travel to an earlier step (ours and hudi-rs)
gives that step's model, and the incremental read of the step gives the records it wrote.

Keys decide their partition (Hudi's indexes keep keys unique per partition, not across them);
insert and bulk_insert get keys not in the table (they do not look keys up, as in Hudi); upsert
batches may repeat a key (the greatest `ts` wins).
"""

from __future__ import annotations

import itertools
import uuid

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pipeline import write
from tests.harness.properties import examples
from tests.pipeline_helpers import (
    base_dir,
    hudi_rs,
    hudi_rs_slices,
    ours,
    server_slices,
    uri,
)

pytestmark = [pytest.mark.spark, pytest.mark.slow]

SCHEMA = "id long, name string, ts long, region string, dt string"
COLS = ["id", "name", "ts", "region", "dt"]
KEYS = range(12)
LAYOUTS = {"hive": (["dt"], True), "plain": (["dt"], False), "plain_multi": (["region", "dt"], False),
           "unpartitioned": ([], False)}
OPS = ["insert", "upsert", "upsert", "delete", "bulk_insert", "insert_overwrite", "insert_overwrite_table",
       "delete_partition"]


def _row(key: int, name: str, ts: int):
    return (key, name, ts, f"r{key % 2}", f"p{key % 3}")


def _partition(row, fields):
    return tuple(row[COLS.index(f)] for f in fields)


def _apply(model: dict, op: str, rows: list, fields: list[str]) -> dict:
    model = dict(model)
    if op in ("insert", "bulk_insert"):
        model.update({str(r[0]): r for r in rows})
    elif op == "upsert":
        for r in sorted(rows, key=lambda r: r[2]):
            model[str(r[0])] = r
    elif op == "delete":
        for r in rows:
            model.pop(str(r[0]), None)
    elif op == "insert_overwrite":
        parts = {_partition(r, fields) for r in rows}
        model = {k: v for k, v in model.items() if _partition(v, fields) not in parts}
        model.update({str(r[0]): r for r in rows})
    elif op == "insert_overwrite_table":
        model = {str(r[0]): r for r in rows}
    elif op == "delete_partition":
        parts = {_partition(r, fields) for r in rows}
        model = {k: v for k, v in model.items() if _partition(v, fields) not in parts}
    return model


@settings(max_examples=examples(2, 30))  # per backend; a new seed every run (tests/harness/properties.py)
@given(data=st.data(), layout=st.sampled_from(sorted(LAYOUTS)))
def test_random_operation_sequences(spark, our_server, data, layout):
    fields, hive = LAYOUTS[layout]
    table = f"prop_{uuid.uuid4().hex[:8]}.t"
    ts = itertools.count(1)
    names = st.text(alphabet="abc", min_size=0, max_size=3)
    model: dict = {}
    history: list = []  # (instant, model after it)
    steps = data.draw(st.integers(min_value=2, max_value=5), label="steps")
    for step in range(steps):
        op = data.draw(st.sampled_from(OPS if model else ["insert", "upsert", "bulk_insert"]), label=f"op{step}")
        if op in ("insert", "bulk_insert"):
            free = [k for k in KEYS if str(k) not in model]
            if not free:
                op = "upsert"
        if op in ("insert", "bulk_insert"):
            keys = data.draw(st.lists(st.sampled_from(free), min_size=1, max_size=5, unique=True), label="keys")
        elif op == "upsert":
            keys = data.draw(st.lists(st.sampled_from(list(KEYS)), min_size=1, max_size=6), label="keys")
        elif op in ("insert_overwrite", "insert_overwrite_table"):
            keys = data.draw(st.lists(st.sampled_from(list(KEYS)), min_size=1, max_size=5, unique=True), label="keys")
        else:  # delete, delete_partition: mostly keys of the table
            pool = sorted({int(k) for k in model} | {KEYS[-1]})
            keys = data.draw(st.lists(st.sampled_from(pool), min_size=1, max_size=3, unique=True), label="keys")
        rows = [_row(k, data.draw(names, label="name"), next(ts)) for k in keys]
        if op == "delete_partition" and not fields:
            op = "delete"
        instant = write(spark.createDataFrame(rows, SCHEMA), table, op, record_key="id", precombine_field="ts",
                        partition_by=fields, metastore=uri(our_server),
                        options={"hoodie.datasource.write.hive_style_partitioning": str(hive).lower()})
        model = _apply(model, op, rows, fields)
        base = base_dir(our_server, table)
        where = f"step {step}: {op} {rows}"
        assert ours(spark, our_server, table, COLS) == model, where
        assert hudi_rs(base, COLS) == model, where
        assert server_slices(our_server, table) == hudi_rs_slices(base), where
        # incremental: what this step wrote and still holds; time travel to an earlier step
        written = set() if op in ("delete", "delete_partition") else {str(r[0]) for r in rows}
        assert ours(spark, our_server, table, COLS, since=history[-1][0] if history else None, until=instant) == \
            {k: v for k, v in model.items() if k in written}, where
        history.append((instant, model))
        then, then_model = history[data.draw(st.integers(0, len(history) - 1), label="as_of")]
        assert ours(spark, our_server, table, COLS, as_of=then) == then_model, where
        assert hudi_rs(base, COLS, as_of=then) == then_model, where
