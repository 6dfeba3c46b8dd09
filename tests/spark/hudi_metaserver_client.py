"""Apache Hudi's own metaserver client (RFC-36: `hoodie.metaserver.enabled=true`) against our
server, in Hudi 0.15's Spark 3.5 bundle (the newest release whose client starts; run in the pyspark
3.5 venv of tests/harness/hudi_spark.py): the datasource writes a table in three commits (insert,
upsert, delete) whose timeline Hudi keeps in the server, then reads it back through the metaserver
and by path (the timeline the server mirrored to storage). The JSON: {"base", "writes": {op: ok or
error}, "rows": {"metaserver", "path"}}.
"""

from __future__ import annotations

import argparse
import json
import os
import sys

SCHEMA = "id long, fare double, ts long, city string"
STEPS = (("insert", [(i, float(i), 1, "sf" if i % 2 else "nyc") for i in range(6)]),
         ("upsert", [(1, 10.0, 2, "sf"), (7, 7.0, 2, "la")]),
         ("delete", [(2, 0.0, 3, "nyc")]))


def session():
    from pyspark.sql import SparkSession

    return (SparkSession.builder.master("local[1]").appName("hudi-metaserver-client")
            .config("spark.jars", os.environ["HUDI_BUNDLE_JAR"])
            .config("spark.serializer", "org.apache.spark.serializer.KryoSerializer")
            .config("spark.sql.extensions", "org.apache.spark.sql.hudi.HoodieSparkSessionExtension")
            .config("spark.sql.catalog.spark_catalog", "org.apache.spark.sql.hudi.catalog.HoodieCatalog")
            .config("spark.sql.shuffle.partitions", "1").config("spark.ui.enabled", "false").getOrCreate())


def metaserver_options(uri: str, db: str, table: str) -> dict:
    return {"hoodie.metaserver.enabled": "true", "hoodie.metaserver.uris": uri,
            "hoodie.database.name": db, "hoodie.table.name": table}


def rows(df) -> list:
    return sorted([r["id"], r["fare"], r["city"]] for r in df.select("id", "fare", "city").collect())


def main() -> int:
    p = argparse.ArgumentParser()
    p.add_argument("--metastore-uri", required=True)
    p.add_argument("--warehouse", required=True)
    p.add_argument("--out", required=True)
    p.add_argument("--db", required=True)
    p.add_argument("--table", default="trips")
    args = p.parse_args()
    uri, db, table = args.metastore_uri, args.db, args.table
    base = os.path.join(args.warehouse, db, table)
    spark = session()
    spark.sparkContext.setLogLevel("ERROR")
    result: dict = {"base": base, "writes": {}, "rows": {}}
    for op, data in STEPS:
        try:
            (spark.createDataFrame(data, SCHEMA).write.format("hudi")
             .options(**metaserver_options(uri, db, table))
             .option("hoodie.datasource.write.operation", op)
             .option("hoodie.datasource.write.recordkey.field", "id")
             .option("hoodie.datasource.write.precombine.field", "ts")
             .option("hoodie.datasource.write.partitionpath.field", "city")
             .option("hoodie.metadata.enable", "false").mode("append").save(base))
            result["writes"][op] = "ok"
        except Exception as e:  # noqa: BLE001 - the error is the result
            lines = str(e).splitlines()
            first = lines[1] if len(lines) > 1 else str(e)  # py4j's second line: the Java exception
            causes = [ln.strip()[:300] for ln in lines if ln.startswith("Caused by")][:5]
            result["writes"][op] = "\n".join([f"{type(e).__name__}: {first}"[:500], *causes])
            break
    for how, reader in (("metaserver", spark.read.format("hudi").options(**metaserver_options(uri, db, table))),
                        ("path", spark.read.format("hudi"))):
        try:
            result["rows"][how] = rows(reader.load(base))
        except Exception as e:  # noqa: BLE001
            result["rows"][how] = f"{type(e).__name__}: {e}"[:800]
    spark.stop()
    with open(args.out, "w") as f:
        json.dump(result, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
