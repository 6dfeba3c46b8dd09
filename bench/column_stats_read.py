"""End-to-end benchmark of data skipping (RFC-27): a read of ~1% of the rows of a table of many
small files, three ways, all returning the same rows.

    python -m bench.column_stats_read [--files 10000] [--partitions 100] [--rows-per-file 100] [--json out.json]

The table: `pipeline.write` creates it (one commit, one file per partition), then --files Parquet
base files are added through the extension with their footers' statistics, as the pipeline sends
them (column `v` clustered within files: file k holds v in [k*R, k*R + R - 1]), 2,000 per commit.

1. `pipeline.read(..., filters="v >= a AND v < b")`: the server's data skipping plans the read,
   Spark reads only the kept files.
2. The same read without skipping: `pipeline.read(...)` then the filter in Spark (every file read).
3. What a user does without a metastore: a pyarrow dataset over the table's folder, filtered
   (`to_table(filter=...)`: the folder is listed and every file's footer read to prune by its
   statistics).

Each is timed (median of --repeat runs) and the rows compared.
"""

from __future__ import annotations

import argparse
import json
import statistics
import tempfile
import time
from pathlib import Path

import pyarrow as pa
import pyarrow.dataset as ds
import pyarrow.parquet as pq

from bench.pipeline_bench import build_spark, log, start_server
from client import HudiMetastoreClient
from client import column_stats_struct as to_thrift
from hudi_format.config_keys import INDEX_TYPE
from pipeline.column_stats import encode, footer_stats, uncompressed_size

BATCH = 2000
META = ["_hoodie_commit_time", "_hoodie_commit_seqno", "_hoodie_record_key", "_hoodie_partition_path",
        "_hoodie_file_name"]


def _median_s(fn, repeat: int) -> tuple[float, object]:
    times, out = [], None
    for _ in range(repeat):
        t0 = time.perf_counter()
        out = fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times), out


def _add_files(c: HudiMetastoreClient, base: Path, table: str, first: int, n: int, args, schema_json: str) -> None:
    ts = c.new_instant_time("default", table)
    c.create_instant("default", table, ts, "commit")
    c.transition_to_inflight("default", table, ts, "commit", None)
    stats, write_stats = [], {}
    r = args.rows_per_file
    for k in range(first, first + n):
        part = f"p{k % args.partitions:03d}"
        fid = f"{k:08d}-0000-4000-8000-000000000000-0"
        name = f"{fid}_0-1-1_{ts}.parquet"
        v = pa.array(range(k * r, k * r + r), pa.int64())
        cols = {"_hoodie_commit_time": pa.array([ts] * r), "_hoodie_commit_seqno": pa.array([f"{ts}_{k}_{i}"
                                                                                            for i in range(r)]),
                "_hoodie_record_key": pa.array([str(x) for x in v.to_pylist()]),
                "_hoodie_partition_path": pa.array([part] * r), "_hoodie_file_name": pa.array([name] * r),
                "id": v, "v": v, "payload": pa.array([f"payload-{x}" for x in v.to_pylist()]),
                "ts": pa.array([1] * r, pa.int64()), "p": pa.array([part] * r)}
        t = pa.table(cols)
        path = base / part / name
        path.parent.mkdir(parents=True, exist_ok=True)
        pq.write_table(t, path, compression="snappy")
        meta = pq.read_metadata(path)
        size = path.stat().st_size
        stats.append(to_thrift(part, f"{part}/{name}", size, uncompressed_size(meta),
                               encode(footer_stats(meta, t, ["id", "v", "payload", "ts"]))))
        write_stats.setdefault(part, []).append({"fileId": fid, "path": f"{part}/{name}", "partitionPath": part,
                                                 "fileSizeInBytes": size, "numWrites": r, "prevCommit": "null"})
    c.complete_instant("default", table, ts, "commit", {
        "partitionToWriteStats": write_stats, "compacted": False, "extraMetadata": {"schema": schema_json},
        "operationType": "BULK_INSERT"}, None, stats)


def run(args) -> dict:
    from pyspark.sql import functions as F

    from pipeline import read, write

    tmp = Path(tempfile.mkdtemp(prefix="column-stats-read-"))
    port, server = start_server(tmp, args.db_url)
    uri = f"thrift://127.0.0.1:{port}"
    spark = build_spark("local[2]", tmp)
    table = "default.skip_e2e"
    try:
        seed = spark.createDataFrame([(-1 - i, -1 - i, "seed", 1, f"p{i:03d}") for i in range(args.partitions)],
                                     "id long, v long, payload string, ts long, p string")
        write(seed, table, "insert", record_key="id", precombine_field="ts", partition_by="p", metastore=uri,
              options={INDEX_TYPE: "SIMPLE"})  # the files added below carry no record keys
        with HudiMetastoreClient(uri, timeout_s=600) as c:
            first = c.list_instants("default", "skip_e2e", states=["COMPLETED"])[0]
            schema_json = json.loads(c.get_instant_metadata("default", "skip_e2e", first.timestamp, first.action,
                                                            "COMPLETED"))["extraMetadata"]["schema"]
            base = Path(c.get_hudi_table("default", "skip_e2e").basePath.removeprefix("file:"))
            t0 = time.perf_counter()
            for start in range(0, args.files, BATCH):
                _add_files(c, base, "skip_e2e", start, min(BATCH, args.files - start), args, schema_json)
            load_s = time.perf_counter() - t0
        rows = args.files * args.rows_per_file
        a, b = rows // 2, rows // 2 + rows // 100
        predicate = f"v >= {a} AND v < {b}"
        log(f"table of {args.files} files loaded in {load_s:.1f} s; reading {predicate}")

        skip_s, skip_n = _median_s(lambda: read(spark, table, metastore=uri, filters=predicate).count(), args.repeat)
        full_s, full_n = _median_s(lambda: read(spark, table, metastore=uri).where(
            (F.col("v") >= a) & (F.col("v") < b)).count(), args.full_repeat)
        dataset = lambda: ds.dataset(str(base), format="parquet", ignore_prefixes=[".hoodie", "."])  # noqa: E731
        flt = (ds.field("v") >= a) & (ds.field("v") < b)
        footer_s, footer_n = _median_s(lambda: dataset().to_table(filter=flt).num_rows, args.repeat)
        assert skip_n == full_n == footer_n == b - a, (skip_n, full_n, footer_n)
        out = {"files": args.files, "partitions": args.partitions, "rows_per_file": args.rows_per_file,
               "predicate": predicate, "rows": skip_n, "load_s": round(load_s, 1),
               "pipeline_read_skipping_s": round(skip_s, 2), "pipeline_read_no_skipping_s": round(full_s, 2),
               "pyarrow_dataset_footers_s": round(footer_s, 2)}
        log(json.dumps(out))
        return out
    finally:
        spark.stop()
        server.terminate()
        server.wait(timeout=30)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--files", type=int, default=10_000)
    ap.add_argument("--partitions", type=int, default=100)
    ap.add_argument("--rows-per-file", type=int, default=100)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--full-repeat", type=int, default=1, help="runs of the read without skipping (slow)")
    ap.add_argument("--db-url", default=None)
    ap.add_argument("--json", default=None)
    args = ap.parse_args()
    r = run(args)
    print(f"{r['files']} files, {r['rows']} rows read: with skipping {r['pipeline_read_skipping_s']} s, "
          f"without {r['pipeline_read_no_skipping_s']} s "
          f"(x{r['pipeline_read_no_skipping_s'] / r['pipeline_read_skipping_s']:.1f}), "
          f"pyarrow dataset over every footer {r['pyarrow_dataset_footers_s']} s "
          f"(x{r['pyarrow_dataset_footers_s'] / r['pipeline_read_skipping_s']:.1f})")
    if args.json:
        Path(args.json).write_text(json.dumps(r, indent=2))


if __name__ == "__main__":
    main()
