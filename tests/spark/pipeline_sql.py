"""Spark SQL through our server sees each commit of pipeline.write (one Spark session with the Hive
catalog on the server; the pipeline writes through the same session).

    python tests/spark/pipeline_sql.py --metastore-uri thrift://127.0.0.1:9083 --warehouse W --out O

After each commit SHOW TABLES, SHOW PARTITIONS and DESCRIBE are recorded into O as JSON. With
`--datasource`, `pipeline.register(spark)` is called last and plain Spark SQL over tables registered
as hive-sync does (provider `hudi`) is recorded next to `pipeline.read` (see `datasource_steps`).
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import sys
import time
from decimal import Decimal

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


def _rows(df) -> dict:
    """record key -> the row's columns (JSON values)."""
    out = {}
    for r in df.collect():
        d = {k: (v if v is None or isinstance(v, (int, float, str, bool)) else str(v)) for k, v in r.asDict().items()}
        out[d["_hoodie_record_key"]] = d
    return out


def c_params(uri: str, db: str, table: str) -> dict:
    from client import HudiCatalog

    with HudiCatalog(uri) as c:
        return dict(c.get_table(db, table).parameters)


def unnamed_table(spark, uri: str, name: str) -> dict:
    """The table Spark refused before register() is read; then, as a table registered before the
    server named it in its Spark schema: refused naming the option, read with the option, read
    after pipeline.datasource.name_table."""
    from client import HudiCatalog
    from hudi_format.table_config import SPARK_TABLE_METADATA, SPARK_TABLE_PATH_METADATA
    from pipeline.datasource import name_table

    got: dict = {"table": spark.table(name).count()}
    db, table = name.split(".")

    def schema_names(metadata: dict) -> None:
        with HudiCatalog(uri) as c:
            t = c.get_table(db, table)
            params = dict(t.parameters)
            schema = json.loads(params["spark.sql.sources.schema.part.0"])
            schema["fields"][0]["metadata"] = metadata
            params["spark.sql.sources.schema.part.0"] = json.dumps(schema)
            c.alter_table_columns(db, table, t.columns, params)

    def count_or_error():
        try:
            return spark.sql(f"SELECT count(*) FROM {name}").collect()[0][0]
        except Exception as e:  # noqa: BLE001 - the error is the result
            msg = f"{type(e).__name__}: {e}"
            return next((line for line in msg.splitlines() if line.startswith("ValueError")), msg[:600])

    got["metadata"] = json.loads(c_params(uri, db, table)["spark.sql.sources.schema.part.0"])["fields"][0]["metadata"]
    schema_names({SPARK_TABLE_METADATA: name, SPARK_TABLE_PATH_METADATA: "/another/table"})  # as if renamed
    got["other_path"] = count_or_error()
    schema_names({})
    got["unnamed"] = count_or_error()
    got["with_option"] = spark.sql(f"SELECT count(*) FROM {name} WITH ('table' = '{name}')").collect()[0][0]
    got["renamed"] = name_table(name, uri)
    got["sql"] = spark.sql(f"SELECT count(*) FROM {name}").collect()[0][0]
    return got


def datasource_steps(spark, uri: str, plan_log: str) -> dict:
    """Tables registered as hive-sync does (provider `hudi`), several commits with deletes, read by
    plain Spark SQL after `pipeline.register(spark)`: each query's rows, `pipeline.read`'s with the
    same filter, and the data source's plan (the files it opened, those the server skipped)."""
    from pipeline import read, register, write

    t0 = time.monotonic()
    many_files = {"hoodie.parquet.small.file.limit": "0"}  # every insert makes new file groups
    part, flat = f"{DB}.ds_part", f"{DB}.ds_flat"
    schema = "id long, name string, score double, dt string"
    write(spark.createDataFrame([(i, f"n{i}", i * 1.5, f"d{i % 3}") for i in range(12)], schema), part, "insert",
          record_key="id", precombine_field="score", partition_by="dt", metastore=uri,
          options={"hoodie.datasource.write.hive_style_partitioning": "true"})
    write(spark.createDataFrame([(1, "u1", 100.0, "d1"), (20, "n20", 30.0, "d3")], schema), part, "upsert",
          metastore=uri)
    write(spark.createDataFrame([(3, None, 50.0, "d0"), (4, None, 50.0, "d1")], schema), part, "delete", metastore=uri)
    flat_schema = "id long, name string, score double"
    as_of = write(spark.createDataFrame([(i, f"n{i}", float(i)) for i in range(10)], flat_schema), flat, "insert",
                  record_key="id", precombine_field="score", metastore=uri)
    write(spark.createDataFrame([(i, f"n{i}", float(i)) for i in range(100, 110)], flat_schema), flat, "insert",
          metastore=uri, options=many_files)
    write(spark.createDataFrame([(5, None, 50.0), (101, None, 50.0)], flat_schema), flat, "delete", metastore=uri)

    types = f"{DB}.ds_types"  # every Spark type the HMS has (timestamp_ntz is timestamp there)
    typed = ("id long, i int, s smallint, b tinyint, f float, d decimal(10,2), day date, at timestamp, ok boolean, "
             "raw binary, st struct<a:int,bName:string>, arr array<int>, m map<string,int>, dt string")
    at = dt.datetime(2024, 1, 2, 3, 4, 5, tzinfo=dt.timezone.utc)
    write(spark.createDataFrame([(1, 1, 2, 3, 1.5, Decimal("1.25"), dt.date(2024, 1, 2), at, True, b"x", (1, "a"),
                                  [1, 2], {"k": 1}, "p1"), (2,) + (None,) * 12 + ("p2",)], typed),
          types, "insert", record_key="id", partition_by="dt", metastore=uri)
    register(spark, plan_log=plan_log)

    def last_plan() -> dict:
        with open(plan_log) as f:
            return json.loads(f.read().splitlines()[-1])

    out: dict = {"queries": {}, "describe": {}, "partitions": {}, "write_seconds": round(time.monotonic() - t0, 1)}
    queries = [(part, "dt = 'd1'"), (part, "dt IN ('d0', 'd3') AND score > 10"),
               (part, "dt <> 'd2' AND name LIKE 'n1%'"), (flat, "id >= 100"),
               (types, "day = DATE'2024-01-02' AND at > TIMESTAMP'2024-01-01 00:00:00' AND d > 1.0 AND ok")]
    for table, where in queries:
        sql = f"SELECT * FROM {table} WHERE {where}"
        out["queries"][f"{table} {where}"] = {
            "sql": _rows(spark.sql(sql)), "plan": last_plan(),
            "read": _rows(read(spark, table, metastore=uri, filters=where))}
    out["queries"][f"{types} spark.table"] = {"sql": _rows(spark.table(types)), "plan": last_plan(),
                                              "read": _rows(read(spark, types, metastore=uri))}
    for table in (part, flat):
        out["queries"][f"{table} spark.table"] = {"sql": _rows(spark.table(table)), "plan": last_plan(),
                                                  "read": _rows(read(spark, table, metastore=uri))}
        out["describe"][table] = [[r[0], r[1]] for r in spark.sql(f"DESCRIBE {table}").collect()]
        out["partitions"][table] = sorted(r[0] for r in spark.sql(f"SHOW PARTITIONS {table}").collect()) \
            if table == part else None
    by_format = spark.read.format("hudi").option("table", flat).option("as.of.instant", as_of).load()
    out["as_of"] = {"format": _rows(by_format),
                    "read": _rows(read(spark, flat, metastore=uri, as_of=as_of))}
    since = spark.read.format("hudi").option("table", flat).option("hoodie.datasource.query.type", "incremental") \
        .option("hoodie.datasource.read.begin.instanttime", as_of).load()
    out["incremental"] = {"format": _rows(since), "read": _rows(read(spark, flat, metastore=uri, since=as_of))}
    out["stale"] = unnamed_table(spark, uri, f"{DB}.stale")
    out["v1_sources_after"] = spark.conf.get("spark.sql.sources.useV1SourceList")
    return out


def main() -> int:
    p = argparse.ArgumentParser()
    p.add_argument("--metastore-uri", required=True)
    p.add_argument("--warehouse", required=True)
    p.add_argument("--out", required=True)
    p.add_argument("--datasource", action="store_true", help="also pipeline.register(spark) and query with SQL")
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
    result = {"steps": steps, "stale_read": stale}
    if args.datasource:
        t0 = time.monotonic()
        result["datasource"] = datasource_steps(spark, args.metastore_uri, args.out + ".plans.jsonl")
        result["datasource"]["seconds"] = round(time.monotonic() - t0, 1)
    spark.stop()
    with open(args.out, "w") as f:
        json.dump(result, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
