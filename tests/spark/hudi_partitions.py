"""Spark SQL sees a Hudi table's partitions right after each commit made through our server.

    python tests/spark/hudi_partitions.py --metastore-uri thrift://127.0.0.1:9083 --warehouse W --out O

Commits go through the Hudi extension (HudiMetastoreClient); after each, Spark's SHOW PARTITIONS,
DESCRIBE and SHOW TABLES (Hive client, no Hudi jars) are recorded into O as JSON.
"""

from __future__ import annotations

import argparse
import json
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", ".."))

from client import HudiMetastoreClient
from hudi_format.table_config import HudiTableConfig
from tests.spark.acceptance import build_spark
from thrift_idl.hive_metastore.ttypes import Database

DB = "hudi_sql"


def commit(client, files):
    inst = client.create_instant(DB, "trips", None, "commit")
    client.transition_to_inflight(DB, "trips", inst.timestamp, "commit")
    stats = {}
    for part, fid in files:
        stats.setdefault(part, []).append({"fileId": fid, "path": f"{part}/{fid}_0-1-1_{inst.timestamp}.parquet",
                                           "partitionPath": part, "fileSizeInBytes": 10, "prevCommit": "null"})
    client.complete_instant(DB, "trips", inst.timestamp, "commit",
                            {"partitionToWriteStats": stats, "operationType": "UPSERT", "extraMetadata": {}})


def main() -> int:
    p = argparse.ArgumentParser()
    p.add_argument("--metastore-uri", required=True)
    p.add_argument("--warehouse", required=True)
    p.add_argument("--out", required=True)
    args = p.parse_args()
    client = HudiMetastoreClient(args.metastore_uri)
    client.create_database(Database(name=DB, locationUri="file:" + os.path.join(args.warehouse, DB + ".db")))
    client.register_hudi_table(HudiTableConfig(
        db_name=DB, table_name="trips", table_type="COPY_ON_WRITE", record_key_fields=["id"],
        partition_fields=["city", "day"], hive_style_partitioning=True,
        base_path=os.path.join(args.warehouse, DB + ".db", "trips"),
        # no Hudi Spark bundle here: register as hive-sync does for engines without it
        properties={"hoodie.datasource.hive_sync.sync_as_datasource": "false"}),
        [("id", "bigint"), ("fare", "double"), ("tags", "array<string>"), ("city", "string"), ("day", "int")])
    spark = build_spark(args.metastore_uri, args.warehouse)
    spark.sparkContext.setLogLevel("ERROR")
    steps = {}

    def show(step):
        steps[step] = sorted(r[0] for r in spark.sql(f"SHOW PARTITIONS {DB}.trips").collect())

    show("0.empty")
    commit(client, [("city=sf/day=1", "a-0"), ("city=nyc/day=1", "b-0")])
    show("1.first_commit")
    commit(client, [("city=sf/day=2", "c-0"), ("city=sf/day=1", "a-0")])
    show("2.second_commit")
    steps["describe"] = [[r[0], r[1]] for r in spark.sql(f"DESCRIBE {DB}.trips").collect()]
    steps["tables"] = sorted(r[1] for r in spark.sql(f"SHOW TABLES IN {DB}").collect())
    steps["partition_filter"] = sorted(r[0] for r in spark.sql(
        f"SHOW PARTITIONS {DB}.trips PARTITION (city='sf')").collect())
    spark.sql(f"ALTER TABLE {DB}.trips DROP PARTITION (city='nyc', day=1)")
    show("3.after_drop")
    steps["timeline"] = [i.action for i in client.list_instants(DB, "trips")]
    spark.stop()
    with open(args.out, "w") as f:
        json.dump({"steps": steps}, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
