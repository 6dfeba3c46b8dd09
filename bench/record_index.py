"""Benchmark of the record-level index (RFC-08) against SIMPLE tagging.

    python -m bench.record_index [--keys 10000000] [--partitions 1000] [--upsert-fraction 0.01]
                                 [--lookup-keys 100000] [--commit-keys 1000000] [--backend sqlite|postgresql]
                                 [--pg-admin-url URL] [--storage local|s3] [--latency-ms 0] [--repeats 3]
                                 [--warmup-s 10]
                                 [--master local[2]] [--json out.json]

For each backend it starts our server (SQLite file in a temp dir; PostgreSQL: a fresh database made
on --pg-admin-url, dropped afterwards) and builds a copy-on-write table of --keys keys over
--partitions partitions, one file group per partition: the base files (only the `_hoodie_*` meta
columns: what tagging reads) are written with pyarrow, and the commits that name them carry the
key blocks, 1,000,000 keys per commit (the index loads inside each commit's transaction). The base
files are on the local disk, or with `--storage s3` in an S3-compatible object store: moto's server
on loopback (bench.object_store_throttle's child process, never throttling), which executors reach
through s3fs as they would reach S3; `--latency-ms` makes it wait that long before answering each
request, as S3's first-byte latency (AWS's performance guidelines give 100-200 ms for small
objects; 0 by default). Then:

1. tagging of an upsert of --upsert-fraction of the keys spread over every partition: with the
   index (`pipeline.index_tagging.tag`: executors look the keys up in the metastore) against SIMPLE
   (`pipeline.tagging`: executors read `_hoodie_record_key` of every latest base file of the
   affected partitions, joined with the batch); both include listing the file slices, both counted
   to the end (Spark action), results checked equal; each path runs untimed until --warmup-s (10)
   seconds have passed, at least once (Python workers, connections, the JVM's compiled code: a
   SIMPLE run takes seconds and warms itself, a tagging with the index takes less than one, and
   its first runs after Spark starts take longer), then median of --repeats (3);
2. lookup of --lookup-keys random keys in one `lookup_record_keys` call (median of 5);
3. the extra commit time of --commit-keys new keys: completing a commit of that many new keys in
   new file groups with the key blocks, against the same commit on a table without the index
   (median of 3 each);
4. bytes per key the index takes in the database (tables and indexes, incl. the file group rows).

Times are wall-clock seconds.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import random
import shutil
import statistics
import sys
import tempfile
import time
import uuid
from pathlib import Path

from bench.pipeline_bench import build_spark, log, start_server, timed

COMMIT_BATCH = 1_000_000


def _key(i: int) -> str:
    return f"key-{i:010d}"


def _partition(i: int, partitions: int) -> str:
    return f"dt=p{i % partitions:05d}"


def _commit_json(ts: str, groups: list[tuple[str, str, int]]) -> str:
    stats: dict = {}
    for p, fid, n in groups:
        stats.setdefault(p, []).append({"fileId": fid, "path": f"{p}/{fid}_0-1-1_{ts}.parquet", "partitionPath": p,
                                        "fileSizeInBytes": 1000 + n * 20, "prevCommit": "null", "numWrites": n,
                                        "numInserts": n})
    return json.dumps({"partitionToWriteStats": stats, "compacted": False, "extraMetadata": {},
                       "operationType": "INSERT"})


class Table:
    def __init__(self, client, db: str, name: str, base: str, index: bool):
        from hudi_format.config_keys import INDEX_TYPE
        from hudi_format.table_config import HudiTableConfig

        self.c, self.db, self.name, self.base, self.index = client, db, name, base, index
        props = {INDEX_TYPE: "RECORD_INDEX" if index else "SIMPLE"}
        client.register_hudi_table(HudiTableConfig(
            db_name=db, table_name=name, table_type="COPY_ON_WRITE", record_key_fields=["id"],
            partition_fields=["dt"], hive_style_partitioning=True, base_path=base, properties=props),
            [("id", "string"), ("dt", "string")])

    def commit(self, groups: list[tuple[str, str, list[str]]], write_files: bool) -> float:
        """One commit inserting `groups` (partition, file id, keys); its complete_instant seconds."""
        from client import file_group_keys

        ts = self.c.create_instant(self.db, self.name, None, "commit", b"", 600).timestamp
        self.c.transition_to_inflight(self.db, self.name, ts, "commit")
        if write_files:
            _write_base_files(self.base, ts, groups)
        meta = _commit_json(ts, [(p, f, len(k)) for p, f, k in groups])
        keys = [file_group_keys(p, f, inserted=k) for p, f, k in groups] if self.index else None
        t0 = time.perf_counter()
        self.c.complete_instant(self.db, self.name, ts, "commit", meta, keys)
        return time.perf_counter() - t0


def _write_base_files(base: str, ts: str, groups) -> None:
    from concurrent.futures import ThreadPoolExecutor

    import pyarrow as pa
    import pyarrow.parquet as pq

    from pipeline.storage import join, locate

    def write(group) -> None:
        p, fid, keys = group
        name = f"{fid}_0-1-1_{ts}.parquet"
        n = len(keys)
        t = pa.table({"_hoodie_commit_time": pa.array([ts] * n), "_hoodie_commit_seqno": pa.array([""] * n),
                      "_hoodie_record_key": pa.array(keys), "_hoodie_partition_path": pa.array([p] * n),
                      "_hoodie_file_name": pa.array([name] * n)})
        fs, path = locate(join(base, p, name))
        if "://" not in base:
            os.makedirs(os.path.join(base, p), exist_ok=True)
        pq.write_table(t, path, filesystem=fs)

    with ThreadPoolExecutor(max_workers=8) as pool:
        list(pool.map(write, groups))


def build_table(client, db: str, base: str, args) -> tuple[Table, float]:
    """The table of --keys keys (index kept), in commits of COMMIT_BATCH keys; seconds it took."""
    t = Table(client, db, "t", base, index=True)
    fids = {p: f"{uuid.uuid4()}-0" for p in (_partition(i, args.partitions) for i in range(args.partitions))}
    started = time.perf_counter()
    for start in range(0, args.keys, COMMIT_BATCH):
        by_part: dict[str, list[str]] = {}
        for i in range(start, min(args.keys, start + COMMIT_BATCH)):
            by_part.setdefault(_partition(i, args.partitions), []).append(_key(i))
        # one file group per partition: a batch of keys that reaches a partition again gets its own group
        groups = [(p, fids[p] if start == 0 else f"{uuid.uuid4()}-0", keys) for p, keys in by_part.items()]
        t.commit(groups, write_files=True)
        log(f"  loaded {min(args.keys, start + COMMIT_BATCH)} keys")
    return t, time.perf_counter() - started


def bench_tagging(spark, uri: str, t: Table, args, results: dict) -> None:
    from pyspark.sql import functions as F

    from client import HudiCatalog
    from pipeline import index_tagging, tagging
    from pipeline.table import TableInfo

    n = max(1, int(args.keys * args.upsert_fraction))
    step = max(1, args.keys // n)
    # the j-th key is drawn from [j * step, (j + 1) * step) by a hash of j: every key of an even
    # stride would fall in the same few partitions (key i is in partition i % --partitions)
    key = F.col("id") * step + F.pmod(F.xxhash64(F.col("id")), F.lit(step))
    batch = (spark.range(0, n).select(key.alias("id")).select(
        F.format_string("key-%010d", F.col("id")).alias("_hoodie_record_key"),
        F.format_string("dt=p%05d", F.col("id") % args.partitions).alias("_hoodie_partition_path"),
        F.col("id").alias("v"))).persist()
    batch.count()
    results["upsert_partitions"] = batch.select("_hoodie_partition_path").distinct().count()
    log(f"upsert of {n} keys over {results['upsert_partitions']} partitions")

    catalog = HudiCatalog(uri)
    layout = TableInfo.of(catalog.get_hudi_table(t.db, t.name)).layout()

    def with_index():
        return index_tagging.tag(batch, uri, t.db, t.name).where(F.col("_fg").isNotNull()).count()

    def simple():
        parts = sorted(r[0] for r in batch.select("_hoodie_partition_path").distinct().collect())
        slices = catalog.get_latest_file_slices(t.db, t.name, parts)
        keys = tagging.existing_keys(spark, layout, slices)
        return tagging.tag(batch, keys).where(F.col("_fg").isNotNull()).count()

    def median_of_runs(fn) -> tuple[float, int]:
        warm_until = time.perf_counter() + args.warmup_s
        fn()  # untimed, at least once and for --warmup-s seconds
        while time.perf_counter() < warm_until:
            fn()
        runs = [timed(fn) for _ in range(args.repeats)]
        return statistics.median(s for s, _ in runs), runs[-1][1]

    idx_s, idx_n = median_of_runs(with_index)
    simple_s, simple_n = median_of_runs(simple)
    if idx_n != batch.count() or simple_n != idx_n:
        raise RuntimeError(f"tagging found {idx_n} (index) / {simple_n} (SIMPLE) of {batch.count()} keys")
    results["upsert_keys"] = idx_n
    results["tag_index_s"] = round(idx_s, 3)
    results["tag_simple_s"] = round(simple_s, 3)
    results["tag_speedup"] = round(simple_s / idx_s, 1)
    batch.unpersist()
    catalog.close()


def bench_lookup(t: Table, args, results: dict) -> None:
    rng = random.Random(7)
    keys = [_key(rng.randrange(args.keys)) for _ in range(args.lookup_keys)]
    times = []
    for _ in range(5):
        s, found = timed(lambda: t.c.lookup_record_keys(t.db, t.name, keys))
        if any(f is None for f in found):
            raise RuntimeError("lookup missed a key")
        times.append(s)
    results["lookup_keys"] = args.lookup_keys
    results["lookup_s"] = round(statistics.median(times), 3)


def bench_commit(client, db: str, tmp: Path, args, results: dict) -> None:
    """complete_instant of --commit-keys new keys, with and without the index (median of 3)."""
    per = max(1, args.commit_keys // args.partitions)
    out = {}
    for index in (True, False):
        t = Table(client, db, f"c_{'index' if index else 'simple'}", str(tmp / f"c{int(index)}"), index)
        times = []
        for r in range(3):
            groups = [(_partition(p, args.partitions), f"{uuid.uuid4()}-0",
                       [f"c{r}-{p}-{j}" for j in range(per)]) for p in range(args.partitions)]
            times.append(t.commit(groups, write_files=False))
        out[index] = statistics.median(times)
    results["commit_keys"] = per * args.partitions
    results["commit_with_index_s"] = round(out[True], 3)
    results["commit_without_index_s"] = round(out[False], 3)
    results["commit_extra_s"] = round(out[True] - out[False], 3)


def index_bytes(db_url: str) -> int:
    """Bytes of the index's tables and indexes in the database."""
    from sqlalchemy import create_engine

    engine = create_engine(db_url)
    with engine.connect() as conn:
        if engine.dialect.name == "postgresql":
            return int(conn.exec_driver_sql(
                "SELECT sum(pg_total_relation_size(oid)) FROM pg_class WHERE oid IN "
                "(SELECT inhrelid FROM pg_inherits WHERE inhparent = 'record_index'::regclass) "
                "OR relname = 'record_index_file_group'").scalar())
        conn.exec_driver_sql("PRAGMA wal_checkpoint(TRUNCATE)")
        return int(conn.exec_driver_sql(
            "SELECT sum(pgsize) FROM dbstat WHERE name IN ('record_index', 'ix_record_index_fg', "
            "'record_index_file_group', 'uq_record_index_fg', 'sqlite_autoindex_record_index_1')").scalar())


def _database(args, tmp: Path) -> tuple[str, object]:
    """(URL, drop function) of a fresh database of the backend."""
    if args.backend == "sqlite":
        return f"sqlite:///{tmp / 'metastore.db'}", lambda: None
    from sqlalchemy import create_engine

    name = f"rli_bench_{uuid.uuid4().hex[:8]}"
    admin = create_engine(args.pg_admin_url, isolation_level="AUTOCOMMIT")
    with admin.connect() as conn:
        conn.exec_driver_sql(f"CREATE DATABASE {name}")

    def drop():
        with admin.connect() as conn:
            conn.exec_driver_sql(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")

    return args.pg_admin_url.rsplit("/", 1)[0] + "/" + name, drop


def _object_store(latency_ms: float):
    """moto's S3 server on a free loopback port, in a child process (bench.object_store_throttle's
    store, with no write ever throttled; each request answered after `latency_ms`), the AWS
    environment pointed at it (the server and Spark's Python workers inherit it) and a bucket;
    (base URL, stop)."""
    import s3fs

    from bench.object_store_throttle import launch
    from bench.procs import free_port

    port = free_port()
    proc = launch(port, rate=1e9, latency_ms=latency_ms)
    os.environ.update({"AWS_ENDPOINT_URL": f"http://127.0.0.1:{port}", "AWS_ACCESS_KEY_ID": "bench",
                       "AWS_SECRET_ACCESS_KEY": "bench", "AWS_DEFAULT_REGION": "us-east-1",
                       "AWS_REGION": "us-east-1"})
    s3fs.S3FileSystem(skip_instance_cache=True).mkdir("rli-bench")

    def stop() -> None:
        proc.terminate()
        proc.wait(timeout=30)

    return "s3://rli-bench", stop


def run(args) -> dict:
    from client import HudiMetastoreClient
    from thrift_idl.hive_metastore.ttypes import Database

    tmp = Path(tempfile.mkdtemp(prefix="rli-bench-"))
    db_url, drop = _database(args, tmp)
    stop_store = None
    base = str(tmp)
    if args.storage == "s3":
        base, stop_store = _object_store(args.latency_ms)
    port, server = start_server(tmp, db_url, ("--storage-roots", base) if args.storage == "s3" else ())
    uri = f"thrift://127.0.0.1:{port}"
    results: dict = {"backend": args.backend, "storage": args.storage, "latency_ms": args.latency_ms,
                     "repeats": args.repeats, "warmup_s": args.warmup_s, "keys": args.keys,
                     "partitions": args.partitions, "platform": platform.platform(),
                     "python": sys.version.split()[0]}
    try:
        with HudiMetastoreClient(uri, timeout_s=3600) as c:
            c.create_database(Database(name="rli", description="", locationUri=None, parameters={}))
            log(f"{args.backend}: building {args.keys} keys over {args.partitions} partitions ({args.storage})")
            t, results["load_s"] = build_table(c, "rli", f"{base}/t", args)
            results["index_bytes"] = index_bytes(db_url)
            results["bytes_per_key"] = round(results["index_bytes"] / args.keys, 1)
            log("lookup")
            bench_lookup(t, args, results)
            log("commit")
            bench_commit(c, "rli", tmp, args, results)
            log("tagging")
            spark = build_spark(args.master, tmp)
            try:
                bench_tagging(spark, uri, t, args, results)
            finally:
                spark.stop()
    finally:
        server.terminate()
        server.wait(timeout=60)
        drop()
        if stop_store is not None:
            stop_store()
        shutil.rmtree(tmp, ignore_errors=True)
    return results


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--keys", type=int, default=10_000_000)
    p.add_argument("--partitions", type=int, default=1000)
    p.add_argument("--upsert-fraction", type=float, default=0.01)
    p.add_argument("--lookup-keys", type=int, default=100_000)
    p.add_argument("--commit-keys", type=int, default=1_000_000)
    p.add_argument("--backend", choices=["sqlite", "postgresql"], default="sqlite")
    p.add_argument("--pg-admin-url", default=os.environ.get("HMS_TEST_POSTGRES_URL"),
                   help="PostgreSQL URL on which a fresh database is created (default: $HMS_TEST_POSTGRES_URL)")
    p.add_argument("--storage", choices=["local", "s3"], default="local",
                   help="where the base files are: the local disk, or moto's S3 server on loopback")
    p.add_argument("--latency-ms", type=float, default=0.0,
                   help="with --storage s3: the store answers each request after this many milliseconds")
    p.add_argument("--repeats", type=int, default=3, help="timed runs of each tagging (the median is kept)")
    p.add_argument("--warmup-s", type=float, default=10.0,
                   help="untimed runs of each tagging for at least this many seconds (at least one run)")
    p.add_argument("--master", default="local[2]")
    p.add_argument("--json", metavar="FILE")
    args = p.parse_args(argv)
    if args.backend == "postgresql" and not args.pg_admin_url:
        p.error("--backend postgresql needs --pg-admin-url")
    if args.latency_ms and args.storage != "s3":
        p.error("--latency-ms needs --storage s3")
    if args.repeats < 1:
        p.error("--repeats must be at least 1")
    results = run(args)
    print(json.dumps(results, indent=2))
    if args.json:
        Path(args.json).write_text(json.dumps(results, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
