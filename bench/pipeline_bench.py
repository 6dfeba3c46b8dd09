"""Benchmark of the PySpark pipeline (pipeline/) against plain Parquet, and of read planning.

    python -m bench.pipeline_bench [--rows 10000000] [--partitions 1000] [--upsert-fraction 0.01]
                                   [--plan-partitions 10000] [--plan-iterations 20] [--db-url URL]
                                   [--master local[2]] [--json out.json]
    python -m bench.pipeline_bench --table-types [--rounds 3] [--rows ...] [--partitions ...] [--payload-bytes N]

It starts our server itself (``python -m adapter.cli serve`` on a free port; SQLite file database in
a temp dir unless ``--db-url``) and one Spark session (``--master``, default local[2]), then:

1. plain Parquet: ``df.write.partitionBy("dt").parquet(...)`` of ``--rows`` generated rows over
   ``--partitions`` partitions (the same DataFrame definition as 2.; every task writes a file per
   partition), and the same after ``repartition("dt")`` (one file per partition, as the pipeline);
2. ``pipeline.write(..., operation="insert")`` of the same rows into a new Hudi table;
3. ``pipeline.write(..., operation="upsert")`` of ``--upsert-fraction`` of the keys (new values);
4. read planning of one partition of a ``--plan-partitions``-partition table (written with the
   pipeline, one row per partition): ours (``pipeline.reader.plan``: the server prunes the partition
   and names its file slices) vs hudi-rs (``HudiTable(base)`` + ``get_file_slices`` with the same
   partition filter, which lists storage), median of ``--plan-iterations`` random partitions.

Results are checked (row counts after insert and upsert, one file slice planned by both); a wrong
answer is an error. Times are wall-clock seconds, single runs for 1-3.

With ``--table-types`` (issue 38) it compares the table types instead of 1-4: the same rows inserted
into a copy-on-write and a merge-on-read table, then ``--rounds`` upserts of ``--upsert-fraction``
of the keys (every n-th id, n coprime with ``--partitions``: keys of every partition) into each
(the two tables in turn; copy-on-write rewrites every file group an upsert touches, merge-on-read
appends a log file to it), the merge-on-read table's compaction (scheduled by
the server after the last upsert, run by ``pipeline.compact``), and full reads (``count`` and
``sum(amount)``, ``--rounds`` each) of copy-on-write, merge-on-read before and after its
compaction. It prints the medians and the ratios; the tables must read the same.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import platform
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from hudi_format.config_keys import HIVE_STYLE_PARTITIONING

REPO_ROOT = Path(__file__).resolve().parents[1]
PYTHON = os.environ.get("HMS_BENCH_PYTHON") or sys.executable


def log(msg: str) -> None:
    print(f"[{time.strftime('%H:%M:%S')}] {msg}", file=sys.stderr, flush=True)


def _free_port() -> int:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start_server(tmp: Path, db_url: str | None, extra: tuple[str, ...] = ()):
    import socket

    port = _free_port()
    url = db_url or f"sqlite:///{tmp / 'metastore.db'}"
    logf = open(tmp / "server.log", "wb")
    proc = subprocess.Popen([PYTHON, "-m", "adapter.cli", "serve", "--host", "127.0.0.1", "--port", str(port),
                             "--db-url", url, "--warehouse", str(tmp / "warehouse"), *extra],
                            cwd=str(REPO_ROOT), stdout=logf, stderr=subprocess.STDOUT)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"server exited: {(tmp / 'server.log').read_text()[-2000:]}")
        with socket.socket() as s:
            if s.connect_ex(("127.0.0.1", port)) == 0:
                return port, proc
        time.sleep(0.2)
    proc.kill()
    raise RuntimeError("server did not start")


def build_spark(master: str, tmp: Path):
    os.environ.setdefault("PYSPARK_PYTHON", PYTHON)
    os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
    from pyspark.sql import SparkSession

    spark = (SparkSession.builder.master(master).appName("pipeline-bench")
             .config("spark.ui.enabled", "false").config("spark.ui.showConsoleProgress", "false")
             .config("spark.sql.session.timeZone", "UTC").config("spark.driver.memory", "4g")
             .config("spark.sql.warehouse.dir", str(tmp / "spark-wh")).getOrCreate())
    spark.sparkContext.setLogLevel("ERROR")
    return spark


def source(spark, rows: int, partitions: int, start: int = 0, step: int = 1, version: int = 0,
           payload_bytes: int = 0):
    """Generated rows: id, ts (= version), name, amount, qty, dt (the partition); with
    `payload_bytes` also `payload`, that many hex characters of SHA-256 hashes of the id and
    version (a wider row; compresses about 2:1 as hex does)."""
    from pyspark.sql import functions as F

    df = (spark.range(start, rows, step)
          .withColumn("ts", F.lit(version).cast("long"))
          .withColumn("name", F.concat(F.lit("name-"), F.col("id").cast("string")))
          .withColumn("amount", (F.col("id") % 1000).cast("double") / 10 + version)
          .withColumn("qty", (F.col("id") % 97).cast("int"))
          .withColumn("dt", F.format_string("p%05d", F.col("id") % partitions)))
    if payload_bytes > 0:
        seed = F.concat_ws(":", F.col("id").cast("string"), F.lit(str(version)))
        hashes = [F.sha2(F.concat(seed, F.lit(f":{i}")), 256) for i in range(-(-payload_bytes // 64))]
        df = df.withColumn("payload", F.substring(F.concat(*hashes), 1, payload_bytes))
    return df


def timed(fn):
    t0 = time.perf_counter()
    out = fn()
    return time.perf_counter() - t0, out


OPTIONS = {HIVE_STYLE_PARTITIONING: "true"}


def run(args) -> dict:
    tmp = Path(tempfile.mkdtemp(prefix="pipeline-bench-"))
    port, server = start_server(tmp, args.db_url)
    uri = f"thrift://127.0.0.1:{port}"
    results: dict = {"rows": args.rows, "partitions": args.partitions, "master": args.master,
                     "payload_bytes": args.payload_bytes,
                     "upsert_rows": 0, "platform": platform.platform(), "python": sys.version.split()[0]}
    try:
        spark = build_spark(args.master, tmp)
        import pyspark

        results["pyspark"] = pyspark.__version__
        if args.table_types:
            bench_table_types(spark, args, uri, results)
        else:
            if args.rows > 0:  # --rows 0: planning only
                bench_writes(spark, args, uri, tmp, results)
            bench_planning(spark, args, uri, results)
        spark.stop()
    finally:
        server.terminate()
        try:
            server.wait(timeout=30)
        except subprocess.TimeoutExpired:
            server.kill()
        if not args.keep:
            shutil.rmtree(tmp, ignore_errors=True)
    return results


def bench_writes(spark, args, uri: str, tmp: Path, results: dict) -> None:
    """Plain Parquet writes, then a pipeline insert and upsert of the same rows; read back and checked."""
    from pipeline import read, write

    df = source(spark, args.rows, args.partitions)
    spark.range(1).count()  # JVM warm
    log(f"plain parquet: {args.rows} rows, {args.partitions} partitions")
    results["plain_parquet_s"], _ = timed(
        lambda: df.write.partitionBy("dt").mode("overwrite").parquet(str(tmp / "plain")))
    log(f"  {results['plain_parquet_s']:.1f} s; plain parquet shuffled by partition (one file each)")
    results["plain_parquet_shuffled_s"], _ = timed(
        lambda: df.repartition("dt").write.partitionBy("dt").mode("overwrite").parquet(str(tmp / "plain2")))
    log(f"  {results['plain_parquet_shuffled_s']:.1f} s; pipeline insert")
    results["insert_s"], _ = timed(lambda: write(
        df, "bench.events", "insert", record_key="id", precombine_field="ts", partition_by="dt",
        metastore=uri, options=OPTIONS))
    log(f"  {results['insert_s']:.1f} s; upsert")
    step = max(1, round(1 / args.upsert_fraction))
    upd = source(spark, args.rows, args.partitions, step=step, version=1)
    results["upsert_rows"] = len(range(0, args.rows, step))
    results["upsert_s"], _ = timed(lambda: write(upd, "bench.events", "upsert", metastore=uri))
    log(f"  {results['upsert_s']:.1f} s; checking")
    t = read(spark, "bench.events", metastore=uri)
    n, updated = t.count(), t.where("ts = 1").count()
    if n != args.rows or updated != results["upsert_rows"]:
        raise AssertionError(f"read back {n} rows ({updated} updated), expected {args.rows} "
                             f"({results['upsert_rows']})")
    results["insert_vs_parquet"] = results["insert_s"] / results["plain_parquet_s"]
    results["insert_vs_parquet_shuffled"] = results["insert_s"] / results["plain_parquet_shuffled_s"]


def bench_table_types(spark, args, uri: str, results: dict) -> None:
    """Upserts into copy-on-write and merge-on-read tables of the same rows; the merge-on-read
    table's compaction; full reads of both."""
    from pyspark.sql import functions as F

    from hudi_format.config_keys import COMPACT_MAX_DELTA_COMMITS
    from pipeline import compact, read, write

    tables = {"COPY_ON_WRITE": f"{args.db}.cow", "MERGE_ON_READ": f"{args.db}.mor"}
    df = source(spark, args.rows, args.partitions, payload_bytes=args.payload_bytes)
    spark.range(1).count()  # JVM warm
    # the insert and the rounds' upserts are delta commits: the compaction is due after the last one
    options = {**OPTIONS, COMPACT_MAX_DELTA_COMMITS: str(args.rounds + 1)}
    for ttype, table in tables.items():
        log(f"insert {args.rows} rows into {ttype}")
        results[f"insert_{ttype}_s"], _ = timed(lambda table=table, ttype=ttype: write(
            df, table, "insert", record_key="id", precombine_field="ts", partition_by="dt", metastore=uri,
            table_type=ttype, options=options))
    step = max(1, round(1 / args.upsert_fraction))
    while math.gcd(step, args.partitions) != 1:  # keys of every partition (dt = id % partitions)
        step += 1
    results["upsert_rows"] = len(range(0, args.rows, step))
    upserts: dict[str, list[float]] = {t: [] for t in tables}
    for r in range(args.rounds):
        upd = source(spark, args.rows, args.partitions, start=r, step=step, version=r + 1,
                     payload_bytes=args.payload_bytes)
        for ttype in (tables if r % 2 == 0 else list(tables)[::-1]):
            s, _ = timed(lambda upd=upd, table=tables[ttype]: write(upd, table, "upsert", metastore=uri))
            upserts[ttype].append(s)
            log(f"  upsert round {r} {ttype}: {s:.2f} s")

    def full_read(table: str):
        row = read(spark, table, metastore=uri).agg(F.count("*"), F.sum("amount")).collect()[0]
        return int(row[0]), round(float(row[1]), 3)

    reads: dict[str, list[float]] = {"COPY_ON_WRITE": [], "MERGE_ON_READ_logs": [], "MERGE_ON_READ_compacted": []}
    answers = {}
    for _ in range(args.rounds):
        for key, table in (("COPY_ON_WRITE", tables["COPY_ON_WRITE"]), ("MERGE_ON_READ_logs", tables["MERGE_ON_READ"])):
            s, answers[key] = timed(lambda table=table: full_read(table))
            reads[key].append(s)
            log(f"  full read {key}: {s:.2f} s")
    results["compaction_s"], done = timed(lambda: compact(spark, tables["MERGE_ON_READ"], metastore=uri))
    if len(done) != 1:
        raise AssertionError(f"expected one compaction scheduled after the last upsert, ran {done}")
    log(f"compaction {results['compaction_s']:.1f} s")
    for _ in range(args.rounds):
        for key, table in (("COPY_ON_WRITE", tables["COPY_ON_WRITE"]),
                           ("MERGE_ON_READ_compacted", tables["MERGE_ON_READ"])):
            s, answers[key] = timed(lambda table=table: full_read(table))
            reads[key].append(s)
            log(f"  full read {key}: {s:.2f} s")
    # the same rows: counts equal, sums equal up to the order Spark added the doubles in
    count, total = answers["COPY_ON_WRITE"]
    if count != args.rows or any(n != count or not math.isclose(t, total, rel_tol=1e-9)
                                 for n, t in answers.values()):
        raise AssertionError(f"the tables read differently: {answers}")
    results["table_types"] = {
        "rounds": args.rounds,
        "upsert_s": {t: v for t, v in upserts.items()},
        "upsert_median_s": {t: statistics.median(v) for t, v in upserts.items()},
        "read_s": reads, "read_median_s": {k: statistics.median(v) for k, v in reads.items()},
    }
    m = results["table_types"]
    m["upsert_cow_over_mor"] = m["upsert_median_s"]["COPY_ON_WRITE"] / m["upsert_median_s"]["MERGE_ON_READ"]
    m["read_compacted_over_cow"] = m["read_median_s"]["MERGE_ON_READ_compacted"] / m["read_median_s"]["COPY_ON_WRITE"]


def bench_planning(spark, args, uri: str, results: dict) -> None:
    """Planning of a one-partition read on a --plan-partitions table: ours against hudi-rs's."""
    import hudi

    from client import HudiCatalog
    from pipeline import write
    from pipeline.reader import plan
    from store.storage.warehouse import local_path

    log(f"planning table: {args.plan_partitions} partitions")
    wide = source(spark, args.plan_partitions, args.plan_partitions)
    results["plan_table_write_s"], _ = timed(lambda: write(
        wide, "bench.wide", "insert", record_key="id", precombine_field="ts", partition_by="dt",
        metastore=uri, options=OPTIONS))
    with HudiCatalog(uri) as c:
        base = local_path(c.get_hudi_table("bench", "wide").base_path)
        rnd = random.Random(7)
        ours, theirs = [], []
        for _ in range(args.plan_iterations):
            part = f"p{rnd.randrange(args.plan_partitions):05d}"
            s, p = timed(lambda part=part: plan(c, "bench.wide", filters=[("dt", "=", part)]))
            if len(p.files) != 1 or not p.files[0].startswith(f"dt={part}/"):
                raise AssertionError(f"ours planned {p.files} for {part}")
            ours.append(s)

            def hudi_rs(part=part):
                table = hudi.HudiTable(base)
                return table.get_file_slices(options=hudi.HudiReadOptions().with_filters([("dt", "=", part)]))

            s, slices = timed(hudi_rs)
            if len(slices) != 1 or slices[0].partition_path != f"dt={part}":
                raise AssertionError(f"hudi-rs planned {[x.partition_path for x in slices]} for {part}")
            theirs.append(s)
    results["plan_partitions"] = args.plan_partitions
    results["plan_ours_median_s"] = statistics.median(ours)
    results["plan_hudi_rs_median_s"] = statistics.median(theirs)


def report(r: dict) -> str:
    lines = [f"rows {r['rows']}, partitions {r['partitions']}, master {r['master']}"
             + (f", payload {r['payload_bytes']} bytes per row" if r.get("payload_bytes") else "")]
    if "table_types" in r:
        m = r["table_types"]
        med, rd = m["upsert_median_s"], m["read_median_s"]
        return "\n".join(lines + [
            f"insert: copy-on-write {r['insert_COPY_ON_WRITE_s']:.2f} s, "
            f"merge-on-read {r['insert_MERGE_ON_READ_s']:.2f} s",
            f"upsert of {r['upsert_rows']} rows, median of {m['rounds']}: copy-on-write {med['COPY_ON_WRITE']:.2f} s, "
            f"merge-on-read {med['MERGE_ON_READ']:.2f} s: merge-on-read {m['upsert_cow_over_mor']:.2f}x faster",
            f"compaction of the merge-on-read table {r['compaction_s']:.2f} s",
            f"full read, medians: copy-on-write {rd['COPY_ON_WRITE']:.2f} s, merge-on-read with logs "
            f"{rd['MERGE_ON_READ_logs']:.2f} s, compacted {rd['MERGE_ON_READ_compacted']:.2f} s "
            f"({m['read_compacted_over_cow']:.2f}x copy-on-write's time)"])
    if r["rows"] > 0:
        lines += [
            f"plain parquet write            {r['plain_parquet_s']:8.2f} s",
            f"plain parquet, shuffled by dt  {r['plain_parquet_shuffled_s']:8.2f} s",
            f"pipeline insert                {r['insert_s']:8.2f} s   ({r['insert_vs_parquet']:.2f}x plain parquet, "
            f"{r['insert_vs_parquet_shuffled']:.2f}x shuffled)",
            f"pipeline upsert {r['upsert_rows']:>9} rows   {r['upsert_s']:8.2f} s",
        ]
    lines += [
        f"plan 1 of {r['plan_partitions']} partitions: ours {r['plan_ours_median_s'] * 1000:.1f} ms, "
        f"hudi-rs listing {r['plan_hudi_rs_median_s'] * 1000:.1f} ms (medians)",
    ]
    return "\n".join(lines)


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--rows", type=int, default=10_000_000)
    p.add_argument("--partitions", type=int, default=1000)
    p.add_argument("--upsert-fraction", type=float, default=0.01)
    p.add_argument("--plan-partitions", type=int, default=10_000)
    p.add_argument("--plan-iterations", type=int, default=20)
    p.add_argument("--db-url")
    p.add_argument("--master", default="local[2]")
    p.add_argument("--json")
    p.add_argument("--keep", action="store_true", help="keep the temp dir (tables, server log)")
    p.add_argument("--table-types", action="store_true",
                   help="copy-on-write against merge-on-read: upserts, compaction, reads (instead of the rest)")
    p.add_argument("--payload-bytes", type=int, default=0,
                   help="with --table-types: a payload column of that many bytes per row (wider rows)")
    p.add_argument("--rounds", type=int, default=3, help="with --table-types: upserts and reads per table")
    p.add_argument("--db", default="bench", help="with --table-types: the database of the two tables")
    args = p.parse_args(argv)
    r = run(args)
    print(report(r))
    if args.json:
        Path(args.json).write_text(json.dumps(r, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
