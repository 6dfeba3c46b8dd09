"""The pipeline's property test (tests/test_pipeline_property.py) on the S3-compatible store, with
both storage strategies (RFC-60): random operation sequences on an `s3://` table; after every step
our reader and an in-memory model hold the same rows, time travel to an earlier step gives that
step's model, and the incremental read of the step gives the records it wrote. The third oracle:
hudi-rs reading the store (`hive` strategy; it does not know the `object-store` layout), and for
`object-store` the repair tools' listing of the storage path's prefixes (validate finds no
difference between the server and the store).
"""

from __future__ import annotations

import itertools
import uuid

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from adapter.commands.validate_repair import compare
from client import HudiCatalog
from hudi_format.config_keys import STORAGE_PATH, STORAGE_STRATEGY_CLASS
from pipeline import write
from tests.harness import start_our_server, stop_process
from tests.harness.properties import examples
from tests.pipeline_helpers import hudi_rs, ours, uri
from tests.test_pipeline_property import COLS, KEYS, OPS, SCHEMA, _apply, _row

pytestmark = [pytest.mark.spark, pytest.mark.slow, pytest.mark.backends("sqlite")]
FIELDS = ["dt"]


@pytest.fixture(scope="module")
def s3_server(object_store, tmp_path_factory):
    """(port, bucket): a server of its own whose storage boundary holds a new bucket."""
    bucket = object_store.bucket()
    tmp = tmp_path_factory.mktemp("s3-property")
    port, proc = start_our_server(f"sqlite:///{tmp}/store.db", tmp / "server", warehouse=tmp / "wh",
                                  extra_args=["--storage-roots", f"s3://{bucket}/,s3a://{bucket}/"])
    try:
        yield port, bucket, object_store
    finally:
        stop_process(proc)


@settings(max_examples=examples(4, 16))  # a new seed every run (tests/harness/properties.py)
@given(data=st.data(), strategy=st.sampled_from(["hive", "object-store"]))
def test_random_operation_sequences_on_object_store(spark, s3_server, data, strategy):
    port, bucket, store = s3_server
    name = f"t{uuid.uuid4().hex[:8]}"
    table = f"s3prop.{name}"
    base = f"s3://{bucket}/wh/{name}"
    options = {"hoodie.datasource.write.hive_style_partitioning": "true"}
    if strategy == "object-store":
        options |= {STORAGE_STRATEGY_CLASS: "object-store", STORAGE_PATH: f"s3://{bucket}/data"}
    ts = itertools.count(1)
    model: dict = {}
    history: list = []
    for step in range(data.draw(st.integers(min_value=2, max_value=4), label="steps")):
        op = data.draw(st.sampled_from(OPS if model else ["insert", "upsert", "bulk_insert"]), label=f"op{step}")
        free = [k for k in KEYS if str(k) not in model]
        if op in ("insert", "bulk_insert") and not free:
            op = "upsert"
        if op in ("insert", "bulk_insert"):
            keys = data.draw(st.lists(st.sampled_from(free), min_size=1, max_size=5, unique=True), label="keys")
        elif op in ("upsert", "insert_overwrite", "insert_overwrite_table"):
            keys = data.draw(st.lists(st.sampled_from(list(KEYS)), min_size=1, max_size=5, unique=True), label="keys")
        else:
            pool = sorted({int(k) for k in model} | {KEYS[-1]})
            keys = data.draw(st.lists(st.sampled_from(pool), min_size=1, max_size=3, unique=True), label="keys")
        rows = [_row(k, data.draw(st.text(alphabet="ab", max_size=2), label="name"), next(ts)) for k in keys]
        instant = write(spark.createDataFrame(rows, SCHEMA), table, op, record_key="id", precombine_field="ts",
                        partition_by=FIELDS, metastore=uri(port), options=options,
                        path=base if step == 0 else None)
        model = _apply(model, op, rows, FIELDS)
        where = f"{strategy} step {step}: {op} {rows}"
        assert ours(spark, port, table, COLS) == model, where
        if strategy == "hive":
            assert hudi_rs(base, COLS, storage_options=store.storage_options()) == model, where
        else:
            with HudiCatalog(uri(port)) as c:
                assert compare(c, "s3prop", name)[1] == [], where
        written = set() if op in ("delete", "delete_partition") else {str(r[0]) for r in rows}
        assert ours(spark, port, table, COLS, since=history[-1][0] if history else None, until=instant) == \
            {k: v for k, v in model.items() if k in written}, where
        history.append((instant, model))
        then, then_model = history[data.draw(st.integers(0, len(history) - 1), label="as_of")]
        assert ours(spark, port, table, COLS, as_of=then) == then_model, where
        if strategy == "hive":
            assert hudi_rs(base, COLS, then, store.storage_options()) == then_model, where
