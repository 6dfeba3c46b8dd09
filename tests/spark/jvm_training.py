"""The job whose loaded classes make a Spark kind's class-data-sharing archive (tests/harness/jvm.py).

spark4: Spark 4 with a Hive catalog on our server (DDL, partitioned writes, pruned reads) and the
project's pipeline writing and reading a Hudi table. spark35: Hudi's Spark 3.5 bundle writing a
copy-on-write and a merge-on-read table with hive sync to our server, and reading them back.
Nothing is checked: a step that fails only loads fewer classes.
"""

from __future__ import annotations

import argparse
import os
import sys
import traceback


def _step(fn) -> None:
    try:
        fn()
    except Exception:  # training only: keep going
        traceback.print_exc()


def spark4(uri: str, warehouse: str) -> None:
    from acceptance import build_spark

    spark = build_spark(uri, warehouse)
    spark.sparkContext.setLogLevel("ERROR")

    def hive() -> None:
        spark.sql("CREATE DATABASE IF NOT EXISTS training")
        spark.sql("CREATE TABLE training.t (id INT, v STRING, p STRING) USING parquet PARTITIONED BY (p)")
        spark.sql("INSERT INTO training.t VALUES (1, 'a', 'x'), (2, 'b', 'y')")
        spark.sql("SELECT p, count(*) FROM training.t WHERE p = 'x' GROUP BY p").collect()
        spark.sql("SHOW PARTITIONS training.t").collect()
        spark.sql("ALTER TABLE training.t ADD PARTITION (p='z')")
        spark.sql("CREATE TABLE training.h (id INT, v STRING) STORED AS PARQUET")
        spark.sql("INSERT INTO training.h SELECT id, v FROM training.t")
        spark.sql("ANALYZE TABLE training.h COMPUTE STATISTICS FOR ALL COLUMNS")
        spark.sql("DESCRIBE EXTENDED training.h").collect()
        spark.sql("DROP TABLE training.h")

    def pipeline() -> None:
        from pipeline import read, write

        df = spark.createDataFrame([(i, float(i), i, "sf" if i % 2 else "nyc") for i in range(20)],
                                   "id long, fare double, ts long, city string")
        write(df, "training.hudi", "insert", record_key="id", precombine_field="ts", partition_by=["city"],
              metastore=uri)
        write(df.limit(5), "training.hudi", "upsert", metastore=uri)
        read(spark, "training.hudi", metastore=uri).collect()

    _step(hive)
    _step(pipeline)
    _stop_jvm(spark)


def spark35(uri: str, warehouse: str) -> None:
    from hudi_spark_jobs import hudi_write, session

    spark = session(uri, warehouse)
    spark.sparkContext.setLogLevel("ERROR")
    df = spark.createDataFrame([(i, float(i), i, "sf" if i % 2 else "nyc") for i in range(20)],
                               "id long, fare double, ts long, city string")
    for name, ttype in (("cow", "COPY_ON_WRITE"), ("mor", "MERGE_ON_READ")):
        base = os.path.join(warehouse, name)

        def write_read(name=name, ttype=ttype, base=base) -> None:
            hudi_write(df, "training", name, ttype, "city", "insert", base, uri)
            hudi_write(df.limit(5), "training", name, ttype, "city", "upsert", base, uri)
            spark.read.format("hudi").load(base).collect()

        _step(write_read)
    _step(lambda: spark.sql("SELECT count(*) FROM training.cow").collect())
    _stop_jvm(spark)


def _stop_jvm(spark, timeout: float = 300) -> None:
    """Stop Spark and wait for its JVM to exit: the archive is written as it exits."""
    from pyspark import SparkContext

    gateway = SparkContext._gateway
    spark.stop()
    proc = getattr(gateway, "proc", None)
    if gateway is not None:
        gateway.shutdown()
    if proc is not None:
        proc.stdin.close()  # the gateway server exits on EOF
        proc.wait(timeout=timeout)


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--kind", choices=["spark4", "spark35"], required=True)
    parser.add_argument("--metastore-uri", required=True)
    parser.add_argument("--warehouse", required=True)
    args = parser.parse_args()
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    os.makedirs(args.warehouse, exist_ok=True)
    (spark4 if args.kind == "spark4" else spark35)(args.metastore_uri, os.path.abspath(args.warehouse))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
