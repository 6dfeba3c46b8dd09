"""The pipeline benchmark (bench/pipeline_bench.py) keeps working: at a tiny size every measurement
produces a number and passes its result checks. No assertion on timings."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import uuid
from pathlib import Path

import pytest

from tests.harness import properties

REPO_ROOT = Path(__file__).resolve().parents[1]

pytestmark = [pytest.mark.spark, pytest.mark.slow]
SMALL_SHUFFLES = "--conf spark.sql.shuffle.partitions=2 pyspark-shell"


def test_pipeline_bench_tiny(tmp_path):
    out = tmp_path / "bench.json"
    rows, partitions, plan = (100_000, 50, 500) if properties.thorough() else (3000, 10, 20)
    res = subprocess.run([sys.executable, "-m", "bench.pipeline_bench", "--rows", str(rows), "--partitions",
                          str(partitions), "--plan-partitions", str(plan), "--plan-iterations", "3",
                          "--json", str(out)],
                         cwd=str(REPO_ROOT), capture_output=True, text=True, timeout=900,
                         # 2 shuffle partitions as the other Spark tests (the bench's plain Parquet
                         # writes would shuffle into Spark's 200)
                         env={**os.environ, "PYSPARK_SUBMIT_ARGS": SMALL_SHUFFLES})
    assert res.returncode == 0, res.stdout + res.stderr[-5000:]
    r = json.loads(out.read_text())
    assert r["rows"] == rows and r["upsert_rows"] == rows // 100
    for key in ("plain_parquet_s", "insert_s", "upsert_s", "plan_ours_median_s", "plan_hudi_rs_median_s"):
        assert r[key] > 0, key
    assert "x plain parquet" in res.stdout and f"plan 1 of {plan} partitions" in res.stdout


def test_small_write_bench_tiny(tmp_path):
    """bench/small_write_bench.py: one round per source; a one-row write runs a few tasks whatever
    its DataFrame's source (Spark's default of 200 shuffle partitions in the session)."""
    out = tmp_path / "small.json"
    rounds = 3 if properties.thorough() else 1
    res = subprocess.run([sys.executable, "-m", "bench.small_write_bench", "--rounds", str(rounds), "--json", str(out)],
                         cwd=str(REPO_ROOT), capture_output=True, text=True, timeout=900)
    assert res.returncode == 0, res.stdout + res.stderr[-5000:]
    r = json.loads(out.read_text())
    assert r["shuffle_partitions"] == 200 and set(r["sources"]) == {"createDataFrame", "range", "sql"}
    for source, v in r["sources"].items():
        assert v["median_s"] > 0 and len(v["times_s"]) == rounds, source
        assert 0 < v["tasks"] <= 40, (source, v)  # 1,210 tasks from spark.sql before
    assert "one-row pipeline.write" in res.stdout


@pytest.mark.backends("sqlite")
def test_table_types_bench_tiny(spark, our_server):
    """bench/pipeline_bench.py --table-types at a tiny size, in the suite's Spark session: both
    tables read the same after the upserts and the merge-on-read table's compaction, every
    measurement has a number."""
    import argparse

    from bench.pipeline_bench import bench_table_types, report

    rounds = 3 if properties.thorough() else 1
    args = argparse.Namespace(rows=400, partitions=4, upsert_fraction=0.05, rounds=rounds,
                              db=f"tt_{uuid.uuid4().hex[:8]}", payload_bytes=100)
    results = {"rows": 400, "partitions": 4, "master": "local[2]", "payload_bytes": 100}
    bench_table_types(spark, args, f"thrift://127.0.0.1:{our_server}", results)
    m = results["table_types"]
    assert results["upsert_rows"] == 20  # every 21st id (20 and 4 partitions share a factor)
    assert all(len(v) == rounds and min(v) > 0 for v in m["upsert_s"].values())
    assert all(len(v) == rounds and min(v) > 0 for k, v in m["read_s"].items() if k != "COPY_ON_WRITE")
    assert len(m["read_s"]["COPY_ON_WRITE"]) == 2 * rounds and results["compaction_s"] > 0
    assert "merge-on-read" in report(results) and "x faster" in report(results)
    assert "payload 100 bytes" in report(results)
    from bench.pipeline_bench import source

    row, again = (source(spark, 3, 2, payload_bytes=100, version=v).collect()[2] for v in (0, 1))
    assert len(row["payload"]) == 100 and row["payload"] != again["payload"]
