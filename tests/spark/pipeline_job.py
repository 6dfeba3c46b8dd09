"""A pipeline write job in its own process, for the failure tests: it can stop at a commit stage.

    python tests/spark/pipeline_job.py --metastore-uri U --table db.t --operation upsert --rows ROWS.json
        [--schema DDL] [--options JSON] [--hold-at written --signal FILE]

With --hold-at written, the job writes FILE (the instant time) once its base files are written,
before completing, and then waits forever: the test kills it there. The hold is patched into this
process (`WriteTransaction.complete`); the pipeline itself has no test hooks.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", ".."))


def main() -> int:
    p = argparse.ArgumentParser()
    p.add_argument("--metastore-uri", required=True)
    p.add_argument("--table", required=True)
    p.add_argument("--operation", default="upsert")
    p.add_argument("--rows", required=True)
    p.add_argument("--schema", required=True)
    p.add_argument("--options", default="{}")
    p.add_argument("--hold-at", choices=["written"])
    p.add_argument("--signal")
    args = p.parse_args()
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    from pyspark.sql import SparkSession

    from pipeline import write
    from pipeline.commit import WriteTransaction

    spark = (SparkSession.builder.master("local[2]").appName("pipeline-job")
             .config("spark.sql.shuffle.partitions", "2").config("spark.ui.enabled", "false")
             .config("spark.driver.memory", "512m").getOrCreate())
    spark.sparkContext.setLogLevel("ERROR")
    if args.hold_at == "written":
        def hold(txn, metadata, *record_keys):
            with open(args.signal + ".tmp", "w") as f:
                f.write(txn.instant)
            os.replace(args.signal + ".tmp", args.signal)
            while True:
                time.sleep(1)

        WriteTransaction.complete = hold
    with open(args.rows) as f:
        rows = [tuple(r) for r in json.load(f)]
    ts = write(spark.createDataFrame(rows, args.schema), args.table, args.operation, record_key="id",
               precombine_field="ts", partition_by="dt", metastore=args.metastore_uri,
               options=json.loads(args.options))
    print(ts)
    return 0


if __name__ == "__main__":
    sys.exit(main())
