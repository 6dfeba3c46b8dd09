"""Benchmark of data skipping by column statistics (RFC-27): planning through the server.

    python -m bench.column_stats [--files 10000 100000] [--partitions 100] [--repeats 31] [--db-url URL]
                                 [--json out.json]

For each size it starts our server (SQLite in a temp dir unless --db-url) and registers a table of
--files base files over --partitions partitions through the extension, with synthetic statistics
(no Parquet written): column `v` is clustered within files (file k holds v in [100k, 100k + 99]),
column `s` is a string of the same order. Commits carry 5,000 files each. Then a predicate selecting
~1% of the rows (`v >= a AND v < b`) is planned with `prune_file_slices` as `pipeline.read` asks
(compact: slices of a base file only as columns; one untimed call, then the median of --repeats;
also as structs, one per slice), against listing every latest slice (`get_latest_file_slices`, median of
5), and the fraction of files skipped is checked;
so are predicates whose answer is 100 files at every size (on `v`, and on the string `s`).

Not measured here (see docs/performance.md): the end-to-end `pipeline.read` comparison.
"""

from __future__ import annotations

import argparse
import json
import statistics
import tempfile
import time
from pathlib import Path

from bench.pipeline_bench import log, start_server
from client import HudiMetastoreClient, slices_of
from hudi_format.table_config import HudiTableConfig
from thrift_idl.hudi_metastore.ttypes import ColumnRange, ColumnValue, FileColumnStats

BATCH = 5000
ROWS_PER_FILE = 100


def _commit(c: HudiMetastoreClient, table: str, first: int, n: int, partitions: int) -> None:
    ts = c.create_instant("default", table, None, "commit", b"", 600).timestamp
    c.transition_to_inflight("default", table, ts, "commit")
    write_stats: dict = {}
    stats = []
    for k in range(first, first + n):
        p = f"p={k % partitions:03d}"
        name = f"f{k:07d}-0_0-1-1_{ts}.parquet"
        write_stats.setdefault(p, []).append({"fileId": f"f{k:07d}-0", "path": f"{p}/{name}", "partitionPath": p,
                                              "fileSizeInBytes": 100_000, "prevCommit": "null"})
        lo, hi = k * ROWS_PER_FILE, k * ROWS_PER_FILE + ROWS_PER_FILE - 1
        stats.append(FileColumnStats(p, name, 100_000, 400_000, [
            ColumnRange("v", ColumnValue(intValue=lo), ColumnValue(intValue=hi), 0, ROWS_PER_FILE),
            ColumnRange("s", ColumnValue(stringValue=f"s{lo:012d}"), ColumnValue(stringValue=f"s{hi:012d}"), 0,
                        ROWS_PER_FILE)]))
    meta = {"partitionToWriteStats": write_stats, "compacted": False, "extraMetadata": {}, "operationType": "INSERT"}
    c.complete_instant("default", table, ts, "commit", json.dumps(meta), None, stats)


def _median_ms(fn, n: int) -> tuple[float, object]:
    out = fn()  # untimed: the first call of a statement shape
    times = []
    for _ in range(n):
        t0 = time.perf_counter()
        out = fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times) * 1000, out


def run_size(files: int, partitions: int, db_url: str | None, repeats: int = 31) -> dict:
    tmp = Path(tempfile.mkdtemp(prefix="column-stats-bench-"))
    port, server = start_server(tmp, db_url)
    try:
        with HudiMetastoreClient(f"thrift://127.0.0.1:{port}", timeout_s=600) as c:
            table = f"cs{files}"
            c.register_hudi_table(HudiTableConfig(
                db_name="default", table_name=table, table_type="COPY_ON_WRITE", record_key_fields=["v"],
                partition_fields=["p"], base_path=str(tmp / table)),
                [("v", "bigint"), ("s", "string"), ("p", "string")])
            t0 = time.perf_counter()
            for first in range(0, files, BATCH):
                _commit(c, table, first, min(BATCH, files - first), partitions)
            load_s = time.perf_counter() - t0
            rows = files * ROWS_PER_FILE
            a = rows // 2
            predicate = f"v >= {a} AND v < {a + rows // 100}"
            # as pipeline.read plans: the compact answer (base-file-only slices as columns)
            plan_ms, pruned = _median_ms(lambda: c.prune_file_slices("default", table, predicate, compact=True),
                                         repeats)
            structs_ms, _ = _median_ms(lambda: c.prune_file_slices("default", table, predicate), repeats)
            fixed = f"v >= {a} AND v < {a + 100 * ROWS_PER_FILE}"  # 100 files at every size
            fixed_ms, fixed_pruned = _median_ms(
                lambda: c.prune_file_slices("default", table, fixed, compact=True), repeats)
            text = f"s >= 's{a:012d}' AND s < 's{a + 100 * ROWS_PER_FILE:012d}'"
            text_ms, _ = _median_ms(lambda: c.prune_file_slices("default", table, text, compact=True), repeats)
            list_ms, all_slices = _median_ms(lambda: c.get_latest_file_slices("default", table), min(repeats, 5))
            kept = len(slices_of(pruned))  # type: ignore[arg-type]
            out = {"files": files, "partitions": partitions, "load_s": round(load_s, 1), "predicate": predicate,
                   "plan_ms": round(plan_ms, 1), "plan_structs_ms": round(structs_ms, 1),
                   "plan_100_files_ms": round(fixed_ms, 1),
                   "plan_100_files_string_ms": round(text_ms, 1),
                   "kept_100": len(slices_of(fixed_pruned)),  # type: ignore[arg-type]
                   "list_all_ms": round(list_ms, 1), "files_kept": kept,
                   "skipped_fraction": round(1 - kept / len(all_slices), 4)}  # type: ignore[arg-type]
            log(json.dumps(out))
            return out
    finally:
        server.terminate()
        server.wait(timeout=30)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--files", type=int, nargs="+", default=[10_000, 100_000])
    ap.add_argument("--partitions", type=int, default=100)
    ap.add_argument("--db-url", default=None)
    ap.add_argument("--repeats", type=int, default=31, help="timed calls per predicate (the median is reported)")
    ap.add_argument("--json", default=None)
    args = ap.parse_args()
    results = [run_size(n, args.partitions, args.db_url, max(args.repeats, 1)) for n in args.files]
    base = results[0]["plan_ms"]
    for r in results:
        print(f"{r['files']:>7} files: plan 1% {r['plan_ms']} ms (x{r['plan_ms'] / base:.2f} of the smallest; "
              f"{r['plan_structs_ms']} ms as structs), "
              f"100 files {r['plan_100_files_ms']} ms (string column {r['plan_100_files_string_ms']} ms), "
              f"list all {r['list_all_ms']} ms, skipped {r['skipped_fraction'] * 100:.1f}%")
    if args.json:
        Path(args.json).write_text(json.dumps(results, indent=2))


if __name__ == "__main__":
    main()
