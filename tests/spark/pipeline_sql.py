"""Spark SQL through our server sees each commit of pipeline.write (one Spark session with the Hive
catalog on the server; the pipeline writes through the same session).

    python tests/spark/pipeline_sql.py --metastore-uri thrift://127.0.0.1:9083 --warehouse W --out O

After each commit SHOW TABLES, SHOW PARTITIONS and DESCRIBE are recorded into O as JSON.
"""

from __future__ import annotations

import argparse
import json
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", ".."))

from tests.spark.acceptance import build_spark

DB, TABLE = "pipe_sql", "trips"
SCHEMA = "id long, fare double, ts long, city string, day int"


def stale_read(spark, uri: str) -> dict:
    """A 4-row table whose folder holds 9 rows (old file versions, a deleted row), registered by
    default (as hive-sync does: Spark data source properties, provider hudi): Spark without the Hudi
    bundle must refuse to read it rather than read every file of the folder."""
    from pipeline import read, write

    name, schema = f"{DB}.stale", "id long, v string"
    write(spark.createDataFrame([(i, "a") for i in range(5)], schema), name, "insert", record_key="id",
          metastore=uri)
    write(spark.createDataFrame([(i, "b") for i in range(3)], schema), name, "upsert", metastore=uri)
    write(spark.createDataFrame([(4, "b")], schema), name, "delete", metastore=uri)
    got: dict = {"pipeline_rows": read(spark, name, metastore=uri).count()}
    for how, query in (("table", lambda: spark.table(name).count()),
                       ("sql", lambda: spark.sql(f"SELECT count(*) FROM {name}").collect()[0][0])):
        try:
            got[how] = {"rows": query()}
        except Exception as e:  # noqa: BLE001 - the error is the result
            got[how] = {"error": f"{type(e).__name__}: {e}"[:600]}
    from client import HudiMetastoreClient

    with HudiMetastoreClient(uri) as c:
        params = c.get_table(DB, "stale").parameters
    got["properties"] = {k: v for k, v in params.items() if k == "spark.sql.sources.provider"}
    return got


def main() -> int:
    p = argparse.ArgumentParser()
    p.add_argument("--metastore-uri", required=True)
    p.add_argument("--warehouse", required=True)
    p.add_argument("--out", required=True)
    args = p.parse_args()
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    from pipeline import read, write

    spark = build_spark(args.metastore_uri, args.warehouse)
    spark.sparkContext.setLogLevel("ERROR")
    name = f"{DB}.{TABLE}"
    steps = {}

    def record(step):
        steps[step] = {
            "tables": sorted(r[1] for r in spark.sql(f"SHOW TABLES IN {DB}").collect()),
            "partitions": sorted(r[0] for r in spark.sql(f"SHOW PARTITIONS {name}").collect()),
            "describe": [[r[0], r[1]] for r in spark.sql(f"DESCRIBE {name}").collect()
                         if r[0] and not r[0].startswith("#")],
            "rows": read(spark, name, metastore=args.metastore_uri).count(),
        }

    # registered as a Hive table (no Spark data source properties): this Spark has no Hudi bundle,
    # and Spark 4 resolves a data source table's provider even for SHOW PARTITIONS and DESCRIBE
    opts = {"hoodie.datasource.write.hive_style_partitioning": "true",
            "hoodie.datasource.hive_sync.sync_as_datasource": "false"}
    write(spark.createDataFrame([(1, 1.0, 1, "sf", 1), (2, 2.0, 1, "nyc", 1)], SCHEMA), name, "insert",
          record_key="id", precombine_field="ts", partition_by=["city", "day"], metastore=args.metastore_uri,
          options=opts)
    record("1.insert")
    write(spark.createDataFrame([(1, 1.5, 2, "sf", 1, "x"), (3, 3.0, 2, "sf", 2, "y")], SCHEMA + ", note string"),
          name, "upsert", metastore=args.metastore_uri)
    record("2.upsert_new_partition_and_column")
    write(spark.createDataFrame([(0, 0.0, 0, "nyc", 1)], SCHEMA), name, "delete_partition",
          metastore=args.metastore_uri)
    record("3.delete_partition")
    write(spark.createDataFrame([(4, 4.0, 3, "la", 7)], SCHEMA), name, "insert_overwrite",
          metastore=args.metastore_uri)
    record("4.insert_overwrite_new_partition")
    stale = stale_read(spark, args.metastore_uri)
    spark.stop()
    with open(args.out, "w") as f:
        json.dump({"steps": steps, "stale_read": stale}, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
