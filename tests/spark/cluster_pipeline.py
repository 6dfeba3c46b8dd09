"""The pipeline on a Spark standalone cluster (issue 40): writes (insert, upsert, delete) with a
`spark://` master (a master and two workers started by the test from pyspark's own `spark-class`)
into a table through the metastore; O records the rows read back and where the cluster's tasks ran.

    python tests/spark/cluster_pipeline.py --metastore-uri U --warehouse W --out O --master spark://h:p
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", ".."))

SCHEMA = "id long, city string, fare double, ts long"


def run(master: str, table: str, uri: str, warehouse: str, executor_java_opts: str = "") -> dict:
    from pyspark.sql import SparkSession

    from pipeline import read, write

    builder = (SparkSession.builder.master(master).appName(f"pipeline-{table}")
               .config("spark.sql.shuffle.partitions", "2").config("spark.default.parallelism", "2")
               .config("spark.ui.enabled", "false").config("spark.ui.showConsoleProgress", "false")
               .config("spark.sql.warehouse.dir", warehouse).config("spark.driver.memory", "512m"))
    if master.startswith("spark://"):
        builder = (builder.config("spark.executor.cores", "1").config("spark.executor.memory", "512m")
                   .config("spark.cores.max", "2").config("spark.executorEnv.PYSPARK_PYTHON", sys.executable)
                   .config("spark.executorEnv.PYTHONPATH", os.pathsep.join(sys.path)))
        if executor_java_opts:
            builder = builder.config("spark.executor.extraJavaOptions", executor_java_opts)
    t0 = time.monotonic()
    spark = builder.getOrCreate()
    timings = {"session_s": round(time.monotonic() - t0, 1)}
    try:
        sc = spark.sparkContext
        deadline = time.monotonic() + 60
        while master.startswith("spark://") and len(sc.statusTracker().getExecutorInfos()) < 3:  # driver + 2
            if time.monotonic() > deadline:
                raise RuntimeError("the workers' executors did not register in 60 s")
            time.sleep(0.2)
        timings["executors_s"] = round(time.monotonic() - t0, 1)
        rows = [(i, f"c{i % 3}", float(i), 1) for i in range(60)]
        write(spark.createDataFrame(rows, SCHEMA), table, "insert", record_key="id", precombine_field="ts",
              partition_by="city", metastore=uri)
        write(spark.createDataFrame([(i, f"c{i % 3}", i + 0.5, 2) for i in range(0, 60, 7)], SCHEMA), table,
              "upsert", metastore=uri)
        write(spark.createDataFrame([(5, "c2", 0.0, 3)], SCHEMA), table, "delete", metastore=uri)
        got = read(spark, table, metastore=uri).select("id", "city", "fare").orderBy("id")
        # where tasks run: an executor's Python workers start in its work directory under the worker's
        cwds = sorted(set(sc.parallelize(range(8), 4).map(lambda _: os.getcwd()).collect()))
        return {"master": sc.master, "rows": [list(r) for r in got.collect()],
                "executors": sorted(e.host for e in sc.statusTracker().getExecutorInfos()),
                "task_dirs": cwds, "timings": {**timings, "done_s": round(time.monotonic() - t0, 1)}}
    finally:
        spark.stop()


def main() -> int:
    p = argparse.ArgumentParser()
    p.add_argument("--metastore-uri", required=True)
    p.add_argument("--warehouse", required=True)
    p.add_argument("--out", required=True)
    p.add_argument("--master", required=True)
    p.add_argument("--executor-java-opts", default="", help="the executors' JVM options (the test's: C1 only)")
    args = p.parse_args()
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    out = {}
    try:
        out["cluster"] = run(args.master, "clu.on_cluster", args.metastore_uri, args.warehouse,
                             args.executor_java_opts)
    except Exception as exc:  # noqa: BLE001 - the test reads the error from the result
        out["error"] = f"{type(exc).__name__}: {str(exc)[:2000]}"
    with open(args.out, "w") as fh:
        json.dump(out, fh)
    return 0


if __name__ == "__main__":
    sys.exit(main())
