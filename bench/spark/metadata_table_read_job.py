"""The Spark side of bench/metadata_table_read.py, run there in the pyspark 3.5 interpreter with Hudi's
bundle (HUDI_BUNDLE_JAR): one session, one query per mode and round, modes alternated."""

from __future__ import annotations

import argparse
import json
import os
import time


def session(warehouse: str):
    from pyspark.sql import SparkSession

    return (SparkSession.builder.master("local[2]").appName("mdt-read-bench")
            .config("spark.jars", os.environ["HUDI_BUNDLE_JAR"])
            .config("spark.serializer", "org.apache.spark.serializer.KryoSerializer")
            .config("spark.sql.extensions", "org.apache.spark.sql.hudi.HoodieSparkSessionExtension")
            .config("spark.sql.catalog.spark_catalog", "org.apache.spark.sql.hudi.catalog.HoodieCatalog")
            .config("spark.driver.memory", "3g").config("spark.ui.enabled", "false")
            .config("spark.ui.showConsoleProgress", "false")
            .config("spark.sql.adaptive.enabled", "false")  # the executed plan's leaves are the scans
            .config("spark.sql.warehouse.dir", warehouse).getOrCreate())


def query(spark, base: str, predicate: str, options: dict) -> tuple[float, list, int]:
    """(seconds from load to the last row, the rows, files the scans read: their `numFiles` metric)."""
    t0 = time.perf_counter()
    df = spark.read.format("hudi").options(**options).load(base).where(predicate).select("id", "v", "payload", "p")
    got = df.collect()
    took = time.perf_counter() - t0
    leaves = df._jdf.queryExecution().executedPlan().collectLeaves()
    files = 0
    for i in range(leaves.length()):
        metrics = leaves.apply(i).metrics()
        if metrics.contains("numFiles"):
            files += metrics.apply("numFiles").value()
    return took, sorted([r[0], r[1], r[2], r[3]] for r in got), files


def main() -> int:
    p = argparse.ArgumentParser()
    p.add_argument("--metastore-uri", required=True)  # tests/harness/spark.py passes it; unused
    p.add_argument("--warehouse", required=True)
    p.add_argument("--out", required=True)
    p.add_argument("--base", required=True)
    p.add_argument("--predicate", required=True)
    p.add_argument("--rounds", type=int, default=5)
    p.add_argument("--modes", required=True, help="JSON {mode: reader options}")
    a = p.parse_args()
    modes = json.loads(a.modes)
    spark = session(a.warehouse)
    spark.sparkContext.setLogLevel("ERROR")
    out: dict = {}
    for m, opts in modes.items():  # warm-up (JIT, classes, page cache), untimed in the medians
        took, rows, files = query(spark, a.base, a.predicate, opts)
        out[m] = {"warmup": took, "times": [], "rows": rows, "files": files}
        print(f"warm-up {m}: {took:.2f} s, {files} files", flush=True)
    for r in range(a.rounds):
        order = list(modes) if r % 2 == 0 else list(reversed(modes))
        for m in order:
            took, rows, files = query(spark, a.base, a.predicate, modes[m])
            assert rows == out[m]["rows"] and files == out[m]["files"], (m, r, files)
            out[m]["times"].append(took)
            print(f"round {r + 1} {m}: {took:.2f} s, {files} files", flush=True)
    spark.stop()
    with open(a.out, "w") as f:
        json.dump({"modes": out}, f)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
