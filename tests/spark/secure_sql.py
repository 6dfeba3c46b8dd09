"""Spark's own Hive client (Hive 2.3 inside pyspark) against a secured metastore, configured as a
deployment does it. Kerberos (--principal): core-site.xml with hadoop.security.authentication=
kerberos (the caller's HADOOP_CONF_DIR), hive.metastore.sasl.enabled and the service principal, the
user's keytab (--user-principal/--keytab: spark.kerberos.principal/keytab, as spark-submit
--principal/--keytab) or ticket cache (KRB5CCNAME), and -Djava.security.krb5.conf (the caller's JDK_JAVA_OPTIONS).
TLS (--truststore): hive.metastore.use.SSL with a JKS truststore. Hive 2.3's client does not combine
the two (with SASL it opens a plain socket).

    python tests/spark/secure_sql.py --metastore-uri thrift://localhost:P --warehouse W --out O \
        [--principal hive/_HOST@REALM [--user-principal U@REALM --keytab K]] [--truststore T.jks]

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
    p.add_argument("--principal", help="the service principal: log in with Kerberos (SASL GSSAPI)")
    p.add_argument("--user-principal", help="with --keytab: Spark logs in from the keytab (spark.kerberos.*); "
                                            "else from the ticket cache")
    p.add_argument("--keytab")
    p.add_argument("--truststore", help="a JKS truststore: connect over TLS (hive.metastore.use.SSL)")
    p.add_argument("--truststore-password", default="changeit")
    args = p.parse_args()
    from pyspark.sql import SparkSession

    builder = SparkSession.builder
    if args.truststore:
        builder = (builder.config("spark.hadoop.hive.metastore.use.SSL", "true")
                   .config("spark.hadoop.hive.metastore.truststore.path", args.truststore)
                   .config("spark.hadoop.hive.metastore.truststore.password", args.truststore_password))
    if args.principal:
        builder = (builder.config("spark.hadoop.hive.metastore.sasl.enabled", "true")
                   .config("spark.hadoop.hive.metastore.kerberos.principal", args.principal))
    if args.keytab:
        builder = (builder.config("spark.kerberos.principal", args.user_principal)
                   .config("spark.kerberos.keytab", args.keytab))
    spark = (builder.master("local[1]").appName("hms-secure")
             .config("spark.sql.catalogImplementation", "hive")
             .config("spark.hadoop.hive.metastore.uris", args.metastore_uri)
             .config("spark.hadoop.hive.metastore.connect.retries", "1")
             .config("spark.sql.warehouse.dir", args.warehouse)
             .config("spark.ui.enabled", "false")
             .config("spark.sql.shuffle.partitions", "1")
             .getOrCreate())
    spark.sparkContext.setLogLevel("ERROR")
    out: dict = {}
    try:
        spark.sql("CREATE TABLE default.secured (id INT, name STRING) STORED AS PARQUET")
        spark.sql("INSERT INTO default.secured VALUES (1, 'a'), (2, 'b')")
        out["tables"] = sorted(r[1] for r in spark.sql("SHOW TABLES IN default").collect())
        out["owner"] = [r[1] for r in spark.sql("DESCRIBE FORMATTED default.secured").collect()
                        if r[0].strip() == "Owner"][0]
        out["rows"] = [list(r) for r in spark.sql("SELECT id, name FROM default.secured ORDER BY id").collect()]
    except Exception as exc:  # noqa: BLE001 - the error is the result
        out["error"] = str(exc)[:2000]
    spark.stop()
    with open(args.out, "w") as f:
        json.dump(out, f)
    return 0


if __name__ == "__main__":
    sys.exit(main())
