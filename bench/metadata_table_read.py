"""Hudi 1.2's Spark reader on a table of many files: a query with a ~1% predicate, planned with the
metadata table the storage mirror writes (issue 45) against listing storage, side by side.

    python -m bench.metadata_table_read [--files 10000] [--partitions 100] [--rows-per-file 100]
        [--commit-files 1000] [--version 9] [--rounds 5] [--modes mdt,listing] [--db-url URL] [--json out.json]

The table: registered through our server (started here, SQLite unless --db-url; storage mirror on)
as a copy-on-write table of `--version` with `hoodie.metadata.enable=true`, partitioned by `p`
(`--partitions` partitions), then `--files` real Parquet base files (Hudi's meta columns; `id` = `v`,
`payload`, `ts`, `p`; file k in partition k mod `--partitions` holds v in [k*R, k*R + R - 1])
committed through the server's commit API in commits of `--commit-files`, each with the files'
footer statistics, as the pipeline sends them (bench/column_stats_read.py). The mirror writes the
metadata table from the server's rows at each commit: `files`, `column_stats` and (versions 8, 9)
`partition_stats`. The predicate `v >= a AND v < b` keeps 1% of the rows, in 1% of the files,
spread over every partition (partition pruning and partition_stats cannot help; column_stats can).

Then one Spark 3.5 job with Hudi 1.2's bundle (tests/harness/hudi_spark.py's env,
bench/spark/metadata_table_read_job.py) runs the same query (`spark.read.format("hudi").load(base)
.where(predicate)`, rows collected; timed from `load` to the last row, planning included) in
rounds, the modes alternated within each round after one untimed warm-up query per mode:

- `mdt`: `hoodie.metadata.enable=true`, `hoodie.enable.data.skipping=true` (files from our `files`
  partition, skipped by our `column_stats`);
- `listing`: `hoodie.metadata.enable=false`, `hoodie.enable.data.skipping=false` (storage listed,
  every file opened, Parquet's footers skip row groups);
- `mdt-noskip` (not by default): the metadata table for the listing, no data skipping.

Prints per mode the median and range of the rounds, the files each scan read (the scan's
`numFiles` metric) and the rows; every mode must return the same rows (checked).
"""

from __future__ import annotations

import argparse
import json
import statistics
import tempfile
import time
from pathlib import Path

from bench.column_stats_read import _add_files
from bench.pipeline_bench import log, start_server
from client import HudiCatalog, HudiMetastoreClient
from hudi_format.config_keys import (
    AVRO_NAMESPACE_PREFIX,
    DATA_SKIPPING,
    INDEX_TYPE,
    METADATA_ENABLE,
    METADATA_PARTITIONS,
    PROPERTIES_FILE,
)
from hudi_format.table_config import COW, HudiTableConfig, read_properties

# in a folder of its own: bench/profile.py would shadow the stdlib module pyspark imports
JOB = Path(__file__).parent / "spark" / "metadata_table_read_job.py"
TABLE = "mdt_read"
MODES = {"mdt": {METADATA_ENABLE: "true", DATA_SKIPPING: "true"},
         "listing": {METADATA_ENABLE: "false", DATA_SKIPPING: "false"},
         "mdt-noskip": {METADATA_ENABLE: "true", DATA_SKIPPING: "false"}}


def _avro_schema(table: str) -> str:
    fields = [("id", "long"), ("v", "long"), ("payload", "string"), ("ts", "long"), ("p", "string")]
    return json.dumps({"type": "record", "name": f"{table}_record", "namespace": f"{AVRO_NAMESPACE_PREFIX}{table}",
                       "fields": [{"name": n, "type": ["null", t], "default": None} for n, t in fields]})


def build_table(uri: str, args, table: str = TABLE) -> tuple[str, float]:
    """The table of `args.files` files, registered and committed through the server (in database
    `default`); (its base path, the seconds its commits took)."""
    schema = _avro_schema(table)
    with HudiCatalog(uri) as cat:
        base = (cat.get_database("default").location or "").removeprefix("file:").rstrip("/") + "/" + table
        cat.register_hudi_table(HudiTableConfig(
            db_name="default", table_name=table, table_type=COW, record_key_fields=["id"], partition_fields=["p"],
            precombine_field="ts", key_generator="org.apache.hudi.keygen.SimpleKeyGenerator",
            table_version=args.version, base_path=base, avro_schema=schema,
            properties={METADATA_ENABLE: "true", INDEX_TYPE: "SIMPLE"}))
    t0 = time.perf_counter()
    with HudiMetastoreClient(uri, timeout_s=600) as c:
        for start in range(0, args.files, args.commit_files):
            _add_files(c, Path(base), table, start, min(args.commit_files, args.files - start), args, schema)
    took = time.perf_counter() - t0
    with HudiCatalog(uri) as cat:
        lag = cat.get_hudi_table_stats("default", table).mirror_lag_versions
    props = read_properties((Path(base) / ".hoodie" / PROPERTIES_FILE).read_text())
    assert lag == 0 and "column_stats" in props.get(METADATA_PARTITIONS, ""), (lag, props.get(METADATA_PARTITIONS))
    return base, took


def run(args) -> dict:
    from tests.harness.hudi_spark import hudi_spark_env, hudi_spark_python
    from tests.harness.spark import run_spark_script

    tmp = Path(tempfile.mkdtemp(prefix="mdt-read-"))
    port, server = start_server(tmp, args.db_url)
    uri = f"thrift://127.0.0.1:{port}"
    try:
        base, load_s = build_table(uri, args)
        rows = args.files * args.rows_per_file
        a = rows // 2
        predicate = f"v >= {a} AND v < {a + rows // 100}"
        log(f"{args.files} files committed in {load_s:.1f} s; Hudi's Spark reader: {predicate}")
        modes = {m: MODES[m] for m in args.modes.split(",")}
        out = run_spark_script(JOB, port, tmp / "spark-wh", tmp / "read.json", timeout=3600,
                               python=hudi_spark_python(), env=hudi_spark_env(), own_process=True,
                               extra_args=["--base", base, "--predicate", predicate, "--rounds", str(args.rounds),
                                           "--modes", json.dumps(modes)])
        got = out["modes"]
        answers = {m: r["rows"] for m, r in got.items()}
        first = next(iter(answers.values()))
        assert all(a == first for a in answers.values()), {m: len(a) for m, a in answers.items()}
        assert len(first) == rows // 100 and all(a <= r[1] < a + rows // 100 for r in first), len(first)
        result = {"files": args.files, "partitions": args.partitions, "rows_per_file": args.rows_per_file,
                  "commit_files": args.commit_files, "version": args.version, "predicate": predicate,
                  "load_s": round(load_s, 1), "rows": len(first), "modes": {}}
        for m, r in got.items():
            result["modes"][m] = {"median_s": round(statistics.median(r["times"]), 2),
                                  "min_s": round(min(r["times"]), 2), "max_s": round(max(r["times"]), 2),
                                  "warmup_s": round(r["warmup"], 2), "files_scanned": r["files"],
                                  "options": modes[m]}
        log(json.dumps(result))
        return result
    finally:
        server.terminate()
        server.wait(timeout=30)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--files", type=int, default=10_000)
    ap.add_argument("--partitions", type=int, default=100)
    ap.add_argument("--rows-per-file", type=int, default=100)
    ap.add_argument("--commit-files", type=int, default=1000)
    ap.add_argument("--version", type=int, default=9, choices=(6, 8, 9))
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--modes", default="mdt,listing", help=f"comma-separated, of {', '.join(MODES)}")
    ap.add_argument("--db-url", default=None)
    ap.add_argument("--json", default=None)
    args = ap.parse_args(argv)
    r = run(args)
    print(f"{r['files']} files, {r['rows']} rows of {r['predicate']}:")
    for m, x in r["modes"].items():
        print(f"  {m:11s} median {x['median_s']} s (range {x['min_s']}-{x['max_s']}, warm-up {x['warmup_s']} s), "
              f"{x['files_scanned']} files scanned")
    if args.json:
        Path(args.json).write_text(json.dumps(r, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
