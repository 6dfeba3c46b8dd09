"""Spark side of the Spark <-> Trino cross-engine test (tests/test_trino_cross_engine.py).

    python tests/spark/trino_cross.py --metastore-uri thrift://127.0.0.1:9083 --warehouse W --out O \
        --db DB

In database DB (created by Trino beforehand, with Trino's tables ``trino_orc`` and ``trino_parquet``
filled) it creates and fills two tables -- ``spark_hive_orc`` (Hive format, ORC, partitioned by
``dt``) and ``spark_ds_parquet`` (data source table, Parquet, partitioned by ``region``) -- then
reads back all four tables. Output: ``{"spark_reads": {table: sorted rows}, "errors": {...}}`` with
every value as a string (None stays None).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
import traceback

COLUMNS = "id, name, amount, flag, d, price, region, dt"


def value(v):
    if v is None:
        return None
    if isinstance(v, float):
        return repr(v)
    return str(v)


def main(argv=None) -> int:
    p = argparse.ArgumentParser()
    p.add_argument("--metastore-uri", required=True)
    p.add_argument("--warehouse", required=True)
    p.add_argument("--out", required=True)
    p.add_argument("--db", required=True)
    args = p.parse_args(argv)
    from pyspark.sql import SparkSession

    t0 = time.monotonic()
    spark = (
        SparkSession.builder.master("local[2]").appName("trino-cross")
        .config("spark.sql.catalogImplementation", "hive")
        .config("spark.hadoop.hive.metastore.uris", args.metastore_uri)
        .config("spark.sql.warehouse.dir", args.warehouse)
        .config("spark.sql.shuffle.partitions", "2")
        .config("spark.default.parallelism", "2")
        .config("spark.ui.enabled", "false")
        .config("spark.ui.showConsoleProgress", "false")
        .config("spark.sql.session.timeZone", "UTC")
        .config("spark.hadoop.hive.exec.dynamic.partition.mode", "nonstrict")
        .config("spark.driver.memory", "1g")
        .enableHiveSupport()
        .getOrCreate()
    )
    spark.sparkContext.setLogLevel("ERROR")
    db = args.db
    out = {"spark_reads": {}, "errors": {}}

    def run(name, sql):
        try:
            return spark.sql(sql).collect()
        except Exception as e:  # noqa: BLE001 - recorded, the test reports it
            out["errors"][name] = f"{type(e).__name__}: {str(e).splitlines()[0][:500]}"
            traceback.print_exc()
            return None

    run("create_orc", f"CREATE TABLE {db}.spark_hive_orc (id int, name string, amount double, flag boolean, "
                      f"d date, price decimal(10,2), region string) PARTITIONED BY (dt string) STORED AS ORC")
    run("insert_orc", f"INSERT INTO {db}.spark_hive_orc PARTITION (dt) "
                      f"SELECT CAST(id AS int), concat('s', id), id * 0.25, id % 2 = 0, "
                      f"date_add(DATE'2024-03-01', CAST(id % 5 AS int)), CAST(id * 1.1 AS decimal(10,2)), "
                      f"element_at(array('eu', 'us'), CAST(id % 2 AS int) + 1), "
                      f"concat('2024-03-0', CAST(id % 3 + 1 AS string)) FROM range(1, 31)")
    run("create_ds", f"CREATE TABLE {db}.spark_ds_parquet (id int, name string, amount double, flag boolean, "
                     f"d date, price decimal(10,2), dt string, region string) USING parquet PARTITIONED BY (region)")
    run("insert_ds", f"INSERT INTO {db}.spark_ds_parquet "
                     f"SELECT CAST(id AS int), concat('p', id), id * 0.5, id % 3 = 0, "
                     f"date_add(DATE'2024-04-01', CAST(id % 4 AS int)), CAST(id * 2.2 AS decimal(10,2)), "
                     f"'x', element_at(array('eu', 'us', 'ap'), CAST(id % 3 AS int) + 1) FROM range(1, 25)")
    for t in ("spark_hive_orc", "spark_ds_parquet", "trino_orc", "trino_parquet"):
        rows = run(f"read_{t}", f"SELECT {COLUMNS} FROM {db}.{t}")
        if rows is not None:
            out["spark_reads"][t] = sorted(([value(v) for v in r] for r in rows),
                                           key=lambda r: [x or "" for x in r])
        parts = run(f"partitions_{t}", f"SHOW PARTITIONS {db}.{t}")
        if parts is not None:
            out["spark_reads"][f"{t}.partitions"] = sorted(r[0] for r in parts)
    out["seconds"] = round(time.monotonic() - t0, 1)
    spark.stop()
    with open(args.out, "w") as f:
        json.dump(out, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
