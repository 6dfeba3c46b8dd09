"""Benchmark of one-row `pipeline.write`s by the DataFrame's source: `spark.createDataFrame`,
`spark.range` and `spark.sql`, in a session with Spark's defaults (200 shuffle partitions, adaptive
execution on) unless told otherwise.

    python -m bench.small_write_bench [--rounds 5] [--master local[2]] [--operation upsert]
                                      [--shuffle-partitions 200] [--json out.json]

It starts our server (SQLite in a temp dir) and one Spark session, writes one row into a table of
its own per source once (the table's creation, not counted), then `--rounds` more one-row writes
per source, interleaved. Reported per source: the median wall-clock seconds of a write, and the
Spark tasks and stages it ran (from Spark's status tracker, by job group). Each write is checked:
the table holds every row written.
"""

from __future__ import annotations

import argparse
import json
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from bench.pipeline_bench import build_spark, log, start_server

SOURCES = ("createDataFrame", "range", "sql")


def one_row(spark, kind: str, i: int):
    """A one-row DataFrame (id, name, ts, dt) made the `kind` way."""
    from pyspark.sql import functions as F

    if kind == "createDataFrame":
        return spark.createDataFrame([(i, f"n{i}", 1, "d0")], "id long, name string, ts long, dt string")
    if kind == "range":
        return (spark.range(i, i + 1).withColumn("name", F.concat(F.lit("n"), F.col("id").cast("string")))
                .withColumn("ts", F.lit(1).cast("long")).withColumn("dt", F.lit("d0")))
    return spark.sql(f"SELECT CAST({i} AS BIGINT) AS id, 'n{i}' AS name, CAST(1 AS BIGINT) AS ts, 'd0' AS dt")


def tasks_of(spark, group: str) -> tuple[int, int]:
    """(tasks, stages) of the jobs of a job group, skipped stages left out."""
    tracker = spark.sparkContext.statusTracker()
    tasks = stages = 0
    for job in tracker.getJobIdsForGroup(group):
        info = tracker.getJobInfo(job)
        for sid in info.stageIds if info else ():
            stage = tracker.getStageInfo(sid)
            if stage is not None and stage.numCompletedTasks + stage.numActiveTasks + stage.numFailedTasks > 0:
                tasks += stage.numTasks
                stages += 1
    return tasks, stages


def run(args) -> dict:
    from pipeline import read, write

    tmp = Path(tempfile.mkdtemp(prefix="small-write-bench-"))
    port, server = start_server(tmp, None)
    uri = f"thrift://127.0.0.1:{port}"
    results: dict = {"rounds": args.rounds, "master": args.master, "operation": args.operation,
                     "shuffle_partitions": args.shuffle_partitions, "platform": platform.platform(),
                     "python": sys.version.split()[0], "sources": {}}
    try:
        spark = build_spark(args.master, tmp)
        spark.conf.set("spark.sql.shuffle.partitions", str(args.shuffle_partitions))
        import pyspark

        results["pyspark"] = pyspark.__version__
        tables = {k: f"small.w_{k.lower()}" for k in SOURCES}
        times: dict[str, list[float]] = {k: [] for k in SOURCES}
        tasks: dict[str, list[tuple[int, int]]] = {k: [] for k in SOURCES}
        for k in SOURCES:  # the tables' first writes (creation)
            write(one_row(spark, k, 0), tables[k], "insert", record_key="id", precombine_field="ts",
                  partition_by="dt", metastore=uri)
        for r in range(1, args.rounds + 1):
            for k in SOURCES:
                group = f"small-{k}-{r}"
                spark.sparkContext.setJobGroup(group, group)
                t0 = time.perf_counter()
                write(one_row(spark, k, r), tables[k], args.operation, metastore=uri)
                times[k].append(time.perf_counter() - t0)
                spark.sparkContext.setJobGroup("check", "check")
                tasks[k].append(tasks_of(spark, group))
                log(f"{k} round {r}: {times[k][-1]:.2f} s, {tasks[k][-1][0]} tasks in {tasks[k][-1][1]} stages")
        for k in SOURCES:
            n = read(spark, tables[k], metastore=uri).count()
            if n != args.rounds + 1:
                raise AssertionError(f"{tables[k]} holds {n} rows, expected {args.rounds + 1}")
            results["sources"][k] = {"median_s": statistics.median(times[k]), "times_s": times[k],
                                     "tasks": statistics.median(t for t, _ in tasks[k]),
                                     "stages": statistics.median(s for _, s in tasks[k])}
        spark.stop()
    finally:
        server.terminate()
        try:
            server.wait(timeout=30)
        except subprocess.TimeoutExpired:
            server.kill()
        shutil.rmtree(tmp, ignore_errors=True)
    return results


def report(r: dict) -> str:
    lines = [f"one-row pipeline.write ({r['operation']}), {r['rounds']} rounds, {r['master']}, "
             f"spark.sql.shuffle.partitions={r['shuffle_partitions']}:"]
    for k, v in r["sources"].items():
        lines.append(f"  {k:16s} median {v['median_s']:.2f} s, {v['tasks']:g} tasks in {v['stages']:g} stages")
    return "\n".join(lines)


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--rounds", type=int, default=5)
    p.add_argument("--master", default="local[2]")
    p.add_argument("--operation", default="upsert", choices=["upsert", "insert", "bulk_insert"])
    p.add_argument("--shuffle-partitions", type=int, default=200)
    p.add_argument("--json")
    args = p.parse_args(argv)
    r = run(args)
    print(report(r))
    if args.json:
        Path(args.json).write_text(json.dumps(r, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
