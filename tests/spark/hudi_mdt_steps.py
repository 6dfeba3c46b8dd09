"""Steps of Apache Hudi's own Spark writer and reader (Hudi's Spark 3.5 bundle, tests/harness/hudi_spark.py)
on tables given by the test, in one Spark session, in order (tests/test_hudi_mdt_mix_spark.py):

* {"write": name, "base", "rows", "schema", "options"}: Hudi's datasource writes the rows (append mode,
  the options as given: hive sync, metadata table, ...); a failed write stops the steps.
* {"read": name, "base", "columns"}: Hudi's reader with `hoodie.metadata.enable=true` (snapshot rows) and
  `files_check` (its metadata-table listing against its storage listing; not with "files_check": false).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import traceback

sys.path.insert(0, os.path.dirname(__file__))
from hudi_spark_jobs import files_check, rows, session  # noqa: E402


def main() -> int:
    p = argparse.ArgumentParser()
    p.add_argument("--metastore-uri", required=True)
    p.add_argument("--warehouse", required=True)
    p.add_argument("--out", required=True)
    p.add_argument("--steps", required=True, help="JSON list of steps (module docstring)")
    args = p.parse_args()
    spark = session(args.metastore_uri, args.warehouse)
    out: dict = {}
    for step in json.loads(args.steps):
        try:
            if "write" in step:
                df = spark.createDataFrame([tuple(r) for r in step["rows"]], step["schema"])
                df.write.format("hudi").options(**step["options"]).mode("append").save(step["base"])
                out[step["write"]] = {"written": True}
            else:
                df = spark.read.format("hudi").option("hoodie.metadata.enable", "true").load(step["base"])
                out[step["read"]] = {"snapshot": rows(df, step["columns"])}
                if step.get("files_check", True):
                    out[step["read"]]["files_check"] = files_check(spark, step["base"])
        except Exception as e:  # noqa: BLE001 - reported, the test fails on it
            out[step.get("write") or step["read"]] = {"error": f"{type(e).__name__}: {e}"[:3000],
                                                      "trace": traceback.format_exc()[-3000:]}
            if "write" in step:
                break
    spark.stop()
    with open(args.out, "w") as f:
        json.dump(out, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
