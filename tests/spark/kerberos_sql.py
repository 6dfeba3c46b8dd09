"""Spark's own Hive client (Hive 2.3 inside pyspark) against a Kerberized metastore, configured as a
Kerberized deployment does it: core-site.xml with hadoop.security.authentication=kerberos (the
caller's HADOOP_CONF_DIR), hive.metastore.sasl.enabled and the service principal, the user's ticket
cache (KRB5CCNAME) and -Djava.security.krb5.conf (the caller's JDK_JAVA_OPTIONS).

    python tests/spark/kerberos_sql.py --metastore-uri thrift://localhost:P --warehouse W --out O \
        --principal hive/_HOST@REALM

Writes {"tables": [...], "owner": ..., "rows": [...]} or {"error": ...} to O.
"""

from __future__ import annotations

import argparse
import json
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", ".."))


def main() -> int:
    p = argparse.ArgumentParser()
    p.add_argument("--metastore-uri", required=True)
    p.add_argument("--warehouse", required=True)
    p.add_argument("--out", required=True)
    p.add_argument("--principal", required=True)
    args = p.parse_args()
    from pyspark.sql import SparkSession

    spark = (SparkSession.builder.master("local[1]").appName("hms-kerberos")
             .config("spark.sql.catalogImplementation", "hive")
             .config("spark.hadoop.hive.metastore.uris", args.metastore_uri)
             .config("spark.hadoop.hive.metastore.sasl.enabled", "true")
             .config("spark.hadoop.hive.metastore.kerberos.principal", args.principal)
             .config("spark.hadoop.hive.metastore.connect.retries", "1")
             .config("spark.sql.warehouse.dir", args.warehouse)
             .config("spark.ui.enabled", "false")
             .config("spark.sql.shuffle.partitions", "1")
             .getOrCreate())
    spark.sparkContext.setLogLevel("ERROR")
    out: dict = {}
    try:
        spark.sql("CREATE TABLE default.kerberized (id INT, name STRING) STORED AS PARQUET")
        spark.sql("INSERT INTO default.kerberized VALUES (1, 'a'), (2, 'b')")
        out["tables"] = sorted(r[1] for r in spark.sql("SHOW TABLES IN default").collect())
        out["owner"] = [r[1] for r in spark.sql("DESCRIBE FORMATTED default.kerberized").collect()
                        if r[0].strip() == "Owner"][0]
        out["rows"] = [list(r) for r in spark.sql("SELECT id, name FROM default.kerberized ORDER BY id").collect()]
    except Exception as exc:  # noqa: BLE001 - the error is the result
        out["error"] = str(exc)[:2000]
    spark.stop()
    with open(args.out, "w") as f:
        json.dump(out, f)
    return 0


if __name__ == "__main__":
    sys.exit(main())
