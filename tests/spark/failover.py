"""Spark with several metastore URIs goes on through the next server when the one it uses dies
(issue 40).

    python tests/spark/failover.py --metastore-uri thrift://h:1,thrift://h:2,thrift://h:3 \
        --warehouse W --out O --kill-pid PID

Spark's Hive client (Hive 2.3) connects to the first URI that answers; the script writes and reads a
partitioned table through it, kills the server process PID (the first URI's) with SIGKILL, then
writes and reads again: Hive's RetryingMetaStoreClient reconnects to the next URI. O records each
step's result and how long the first call after the kill took.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", ".."))

from tests.spark.acceptance import build_spark


def main() -> int:
    p = argparse.ArgumentParser()
    p.add_argument("--metastore-uri", required=True)
    p.add_argument("--warehouse", required=True)
    p.add_argument("--out", required=True)
    p.add_argument("--kill-pid", type=int, required=True)
    args = p.parse_args()
    spark = build_spark(args.metastore_uri, args.warehouse)
    out: dict = {}

    def rows(sql: str) -> list:
        return [list(r) for r in spark.sql(sql).collect()]

    try:
        spark.sql("CREATE DATABASE IF NOT EXISTS failover")
        spark.sql("CREATE TABLE failover.t (id INT, v STRING) PARTITIONED BY (p STRING) STORED AS PARQUET")
        spark.sql("INSERT INTO failover.t PARTITION (p='a') VALUES (1, 'x'), (2, 'y')")
        out["before"] = {"partitions": rows("SHOW PARTITIONS failover.t"),
                         "rows": rows("SELECT id, v, p FROM failover.t ORDER BY id")}
        os.kill(args.kill_pid, signal.SIGKILL)  # its sockets close with it (a zombie holds none)
        t0 = time.monotonic()
        spark.sql("INSERT INTO failover.t PARTITION (p='b') VALUES (3, 'z')")
        out["first_call_after_kill_s"] = round(time.monotonic() - t0, 2)
        spark.sql("CREATE TABLE failover.u (id INT) STORED AS PARQUET")
        out["after"] = {"partitions": rows("SHOW PARTITIONS failover.t"),
                        "rows": rows("SELECT id, v, p FROM failover.t ORDER BY id"),
                        "tables": sorted(r[1] for r in rows("SHOW TABLES IN failover"))}
    except Exception as exc:  # noqa: BLE001 - the test reads the error from the result
        out["error"] = f"{type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''}"
    finally:
        spark.stop()
    with open(args.out, "w") as fh:
        json.dump(out, fh)
    return 0


if __name__ == "__main__":
    sys.exit(main())
