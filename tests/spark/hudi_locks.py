"""Two Hudi writers with optimistic concurrency control on one table, locking through our server's
Hive Metastore locks (Hudi's HiveMetastoreBasedLockProvider), in one Spark session (run in the
pyspark 3.5 venv of tests/harness/hudi_spark.py with Hudi's bundle).

Each writer is a Python thread (pyspark pins it to its own JVM thread, so each write has its own
write client, lock provider and metastore client): two lock holders in one JVM. Steps:

1. `init`: one writer inserts ids 0..9 (partitions sf, nyc).
2. `disjoint`: A inserts 100..104 into partition `a` while B inserts 200..204 into `b`: new file
   groups on both sides, so both commit.
3. `same` rounds: A and B upsert ids 0..9 at once (the same file groups), A with fare 1000+r and
   ts 10+2r, B with fare 2000+r and ts 11+2r; repeated until a round has a conflict (at most
   MAX_ROUNDS). A write either commits or fails; each outcome goes to the JSON.

Then Hudi's reader reads the table back. The JSON: {"base", "writes": [{step, round, writer, ok,
error, conflict}], "rows": [[id, fare, city]], "commits": [completed instants]}.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import threading
import traceback

SCHEMA = "id long, fare double, ts long, city string"
MAX_ROUNDS = 4


def session(uri: str, warehouse: str):
    from pyspark.sql import SparkSession

    return (SparkSession.builder.master("local[2]").appName("hudi-locks")
            .config("spark.jars", os.environ["HUDI_BUNDLE_JAR"])
            .config("spark.serializer", "org.apache.spark.serializer.KryoSerializer")
            .config("spark.sql.extensions", "org.apache.spark.sql.hudi.HoodieSparkSessionExtension")
            .config("spark.sql.catalog.spark_catalog", "org.apache.spark.sql.hudi.catalog.HoodieCatalog")
            .config("spark.sql.shuffle.partitions", "2").config("spark.default.parallelism", "2")
            .config("spark.ui.enabled", "false").config("spark.scheduler.mode", "FAIR")
            .config("spark.hadoop.hive.metastore.uris", uri).config("spark.sql.warehouse.dir", warehouse)
            .getOrCreate())


def options(db: str, table: str, uri: str, op: str) -> dict:
    return {"hoodie.table.name": table, "hoodie.database.name": db,
            "hoodie.datasource.write.table.type": "COPY_ON_WRITE",
            "hoodie.datasource.write.operation": op, "hoodie.datasource.write.recordkey.field": "id",
            "hoodie.datasource.write.precombine.field": "ts",
            "hoodie.datasource.write.partitionpath.field": "city",
            "hoodie.datasource.write.hive_style_partitioning": "true",
            "hoodie.metadata.enable": "false", "hoodie.parquet.small.file.limit": "0",
            # optimistic concurrency control, locks on our server
            "hoodie.write.concurrency.mode": "optimistic_concurrency_control",
            "hoodie.cleaner.policy.failed.writes": "LAZY",
            "hoodie.write.lock.provider": "org.apache.hudi.hive.transaction.lock.HiveMetastoreBasedLockProvider",
            "hoodie.write.lock.hivemetastore.database": db, "hoodie.write.lock.hivemetastore.table": table,
            "hoodie.write.lock.hivemetastore.uris": uri,
            # a lock held longer than this is heartbeaten (every interval, the first after half)
            "hoodie.write.lock.heartbeat_interval_ms": "200",
            # a WAITING lock is released and asked for again after this
            "hoodie.write.lock.wait_time_ms_between_retry": "200",
            "hoodie.write.lock.client.wait_time_ms_between_retry": "200",
            "hoodie.write.lock.num_retries": "100", "hoodie.write.lock.client.num_retries": "100"}


def write(spark, base: str, db: str, table: str, uri: str, data: list, op: str) -> None:
    (spark.createDataFrame(data, SCHEMA).write.format("hudi").options(**options(db, table, uri, op))
     .mode("append").save(base))


def outcome(step: str, rnd: int, writer: str, fn) -> dict:
    got: dict = {"step": step, "round": rnd, "writer": writer}
    try:
        fn()
        got["ok"] = True
    except Exception as e:  # noqa: BLE001 - the error is the result
        text = str(e)
        got.update(ok=False, error=f"{type(e).__name__}: {text}"[:1500],
                   conflict="HoodieWriteConflictException" in text,
                   causes=[ln.strip() for ln in text.splitlines() if ln.startswith("Caused by")][:8])
        got["trace"] = traceback.format_exc()[-1500:]
    return got


def concurrently(spark, step: str, rnd: int, jobs: dict) -> list[dict]:
    """Run each writer's job in its own thread, started together; their outcomes."""
    barrier = threading.Barrier(len(jobs))
    results: dict = {}

    def run(name, fn):
        barrier.wait()
        results[name] = outcome(step, rnd, name, fn)

    threads = [threading.Thread(target=run, args=(n, fn)) for n, fn in jobs.items()]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return [results[n] for n in jobs]


def completed_commits(base: str) -> list[str]:
    timeline = os.path.join(base, ".hoodie", "timeline")  # table version 8+
    names = os.listdir(timeline if os.path.isdir(timeline) else os.path.join(base, ".hoodie"))
    return sorted(n.split(".")[0].split("_")[0] for n in names if n.endswith(".commit"))


def main() -> int:
    p = argparse.ArgumentParser()
    p.add_argument("--metastore-uri", required=True)
    p.add_argument("--warehouse", required=True)
    p.add_argument("--out", required=True)
    p.add_argument("--db", default="hudi_locks")
    p.add_argument("--table", default="trips")
    args = p.parse_args()
    uri, db, table = args.metastore_uri, args.db, args.table
    base = os.path.join(args.warehouse, db, table)
    spark = session(uri, args.warehouse)
    spark.sparkContext.setLogLevel("WARN")
    w = lambda data, op: (lambda: write(spark, base, db, table, uri, data, op))  # noqa: E731
    writes = [outcome("init", 0, "A", w([(i, float(i), 1, "sf" if i % 2 else "nyc") for i in range(10)], "insert"))]
    writes += concurrently(spark, "disjoint", 0, {
        "A": w([(i, float(i), 2, "a") for i in range(100, 105)], "insert"),
        "B": w([(i, float(i), 2, "b") for i in range(200, 205)], "insert")})
    for r in range(1, MAX_ROUNDS + 1):
        got = concurrently(spark, "same", r, {
            "A": w([(i, 1000.0 + r, 10 + 2 * r, "sf" if i % 2 else "nyc") for i in range(10)], "upsert"),
            "B": w([(i, 2000.0 + r, 11 + 2 * r, "sf" if i % 2 else "nyc") for i in range(10)], "upsert")})
        writes += got
        if any(not g["ok"] for g in got):
            break
    result = {"base": base, "writes": writes, "commits": completed_commits(base)}
    try:
        result["rows"] = sorted([r["id"], r["fare"], r["city"]]
                                for r in spark.read.format("hudi").load(base).select("id", "fare", "city").collect())
    except Exception as e:  # noqa: BLE001
        result["read_error"] = f"{type(e).__name__}: {e}"[:1500]
    spark.stop()
    with open(args.out, "w") as f:
        json.dump(result, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
