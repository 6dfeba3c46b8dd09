"""Apache Hudi's own Spark reader (its Spark 3.5 bundle, tests/harness/hudi_spark.py) as a third oracle
for what our pipeline writes: seeded random operation sequences (the property test's operations and
layouts: hive-style, plain, plain multi-level, non-partitioned) are written through our server, then
one Hudi Spark job reads every table from storage. Its snapshot, its time travel to each instant
and its incremental read from each instant must equal the model (tests/test_pipeline_property.py
checks our reader and hudi-rs against the same model after every step).

The tables carry the metadata table the server writes (`hoodie.metadata.enable=true`, issue 45) and
Hudi's reader reads with it on: it lists files from our `files` partition, not from storage (a stray
copy of a data file the metadata table does not name, put there after the writes, is not read), and
with `hoodie.enable.data.skipping=true` it skips files by our `column_stats` partition: on a
predicate over a data column it reads as many files as the server's pruning keeps (`list-files
--where`), fewer than without skipping, and the same rows.

Runs on SQLite and PostgreSQL (the reader reads storage; the backend shapes what the server commits).
On SQLite the same job also reads a merge-on-read table (tests/pipeline_mor.py: base files and logs
with Avro data and delete blocks, a compaction the server scheduled and the next write ran, another
one pending): snapshot, read-optimized, time travel and incremental; the pending one runs after.
"""

from __future__ import annotations

import itertools
import json
import os
import random
import shutil
import uuid

import pytest

from client import HudiCatalog
from hudi_format.config_keys import METADATA_ENABLE, METADATA_PARTITIONS
from hudi_format.metadata_table import INIT_INSTANT
from hudi_format.table_config import read_properties
from pipeline import write
from tests.harness.hudi_spark import hudi_spark_env, hudi_spark_python
from tests.harness.spark import run_spark_script
from tests.pipeline_helpers import base_dir, hudi_rs, ours, uri
from tests.pipeline_mor import COLS as MOR_COLS
from tests.pipeline_mor import compact_and_check, mor_sequence
from tests.test_pipeline_property import COLS, KEYS, LAYOUTS, OPS, SCHEMA, _apply, _row

pytestmark = [pytest.mark.spark, pytest.mark.slow, pytest.mark.backends("sqlite", "postgresql")]

SCRIPT = os.path.join(os.path.dirname(__file__), "spark", "hudi_spark_jobs.py")
STEPS = 5


def _sequence(spark, port: int, layout: str, rng: random.Random) -> dict:
    """Writes one random sequence; what Hudi's reader must give back."""
    fields, hive = LAYOUTS[layout]
    table = f"hr_{uuid.uuid4().hex[:8]}.t"
    ts = itertools.count(1)
    model: dict = {}
    last_write: dict[str, str] = {}  # key -> the instant that last wrote its row
    history: list[tuple[str, dict]] = []
    for step in range(STEPS + 1):
        # the last step upserts, so every table ends with rows for the snapshot and incremental reads
        op = "upsert" if step == STEPS else rng.choice(OPS if model else ["insert", "upsert", "bulk_insert"])
        free = [k for k in KEYS if str(k) not in model]
        if op in ("insert", "bulk_insert") and not free:
            op = "upsert"
        if op in ("insert", "bulk_insert"):
            keys = rng.sample(free, rng.randint(1, min(4, len(free))))
        elif op == "upsert":
            keys = [rng.choice(list(KEYS)) for _ in range(rng.randint(1, 5))]
        elif op in ("insert_overwrite", "insert_overwrite_table"):
            keys = rng.sample(list(KEYS), rng.randint(1, 4))
        else:
            pool = sorted({int(k) for k in model} | {KEYS[-1]})
            keys = rng.sample(pool, rng.randint(1, min(3, len(pool))))
        if op == "delete_partition" and not fields:
            op = "delete"
        rows = [_row(k, rng.choice(["", "a", "bc"]), next(ts)) for k in keys]
        instant = write(spark.createDataFrame(rows, SCHEMA), table, op, record_key="id", precombine_field="ts",
                        partition_by=fields, metastore=uri(port),
                        options={"hoodie.datasource.write.hive_style_partitioning": str(hive).lower(),
                                 METADATA_ENABLE: "true"})
        model = _apply(model, op, rows, fields)
        if op not in ("delete", "delete_partition"):
            last_write.update({str(r[0]): instant for r in rows})
        history.append((instant, model))
        assert ours(spark, port, table, COLS) == model, (layout, step, op)  # the sequence is sound
    base = base_dir(port, table)
    assert hudi_rs(base, COLS) == model
    _stray_copy(base)
    return {"table": table, "base": base, "model": model, "history": history, "last_write": last_write}


def _stray_copy(base: str) -> None:
    """The server wrote the metadata table; a copy of a live data file under a file id nobody
    committed is put beside it (a reader listing storage would read its rows twice)."""
    props = read_properties(open(os.path.join(base, ".hoodie", "hoodie.properties")).read())
    assert props.get(METADATA_PARTITIONS) == "column_stats,files", props
    assert os.path.exists(os.path.join(base, ".hoodie", "metadata", ".hoodie", f"{INIT_INSTANT}.deltacommit"))
    for root, dirs, names in os.walk(base):
        dirs[:] = [d for d in dirs if d != ".hoodie"]
        live = sorted(n for n in names if n.endswith(".parquet"))
        if live:
            shutil.copy(os.path.join(root, live[-1]), os.path.join(root, "99999999-" + live[-1][9:]))
            return


def _predicates(model: dict) -> dict[str, tuple[list[str], object]]:
    """Spark SQL (also the server's grammar) -> (data skipping on/off to read it with, the rows'
    test) of predicates on `id`: one that keeps some files, one no file can match."""
    top = max(int(k) for k in model)
    some = sorted(int(k) for k in model)[len(model) // 2]
    return {f"id <= {some}": (["true"], lambda r: r[0] <= some),
            f"id > {top}": (["true", "false"], lambda r: r[0] > top)}


def _as_rows(by_key: dict) -> list:
    return sorted(list(v) for v in by_key.values())


def test_hudi_spark_reader_reads_random_pipeline_sequences(spark, our_server, backend_url, tmp_path):
    rng = random.Random(20261127)
    skipping = backend_url.startswith("sqlite")
    written = {layout: _sequence(spark, our_server, layout, rng) for layout in sorted(LAYOUTS)}
    read = {layout: {"base": w["base"], "instants": [i for i, _ in w["history"]], "columns": COLS,
                     "options": {METADATA_ENABLE: "true"},
                     # data skipping (on one backend: what storage holds does not depend on it)
                     "where": {p: on for p, (on, _) in _predicates(w["model"]).items()} if skipping else {}}
            for layout, w in written.items()}
    mor = mor_sequence(spark, our_server) if backend_url.startswith("sqlite") else None
    if mor is not None:
        read["mor"] = {"base": mor["base"], "instants": [i for i, _ in mor["history"]], "columns": MOR_COLS,
                       "read_optimized": True}
    out = run_spark_script(SCRIPT, our_server, tmp_path / "hudi-wh", tmp_path / "hudi-read.json", timeout=1200,
                           python=hudi_spark_python(), env=hudi_spark_env(),
                           extra_args=["--read-only", "--read", json.dumps(read)])
    for layout, w in written.items():
        got = out["read"][layout]
        assert "error" not in got, (layout, got)
        final = w["model"]
        assert got["snapshot"] == _as_rows(final), layout
        for instant, then in w["history"]:
            assert got["as_of"][instant] == _as_rows(then), (layout, instant)
            later = {k: v for k, v in final.items() if w["last_write"].get(k, "") > instant}
            assert got["incremental"][instant] == _as_rows(later), (layout, instant)
        if not skipping:
            continue
        # data skipping by our column_stats: the files the server's pruning keeps, the same rows
        db, name = w["table"].split(".")
        with HudiCatalog(uri(our_server)) as catalog:
            for predicate, (_on, keep) in _predicates(final).items():
                rows_on, files_on = got["where"][predicate]["true"]
                assert rows_on == [r for r in _as_rows(final) if keep(r)], (layout, predicate)
                kept = len(catalog.prune_file_slices(db, name, predicate).slices)
                assert files_on == kept, (layout, predicate, files_on, kept)
        nothing = got["where"][f"id > {max(int(k) for k in final)}"]
        assert nothing["true"] == [[], 0] and nothing["false"][0] == [] and nothing["false"][1] > 0, (layout, nothing)
    if mor is not None:
        got = out["read"]["mor"]
        assert "error" not in got, got
        assert got["snapshot"] == _as_rows(mor["model"])
        assert got["read_optimized"] == mor["read_optimized"]
        for instant, then in mor["history"]:
            assert got["as_of"][instant] == _as_rows(then), instant
            later = {k: v for k, v in mor["model"].items() if mor["last_write"].get(k, "") > instant}
            assert got["incremental"][instant] == _as_rows(later), instant
        compact_and_check(spark, our_server, mor)
