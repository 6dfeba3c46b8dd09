"""Spark side of the migration test: populate a Hive Metastore, and query it.

    python tests/spark/migrate_source.py --metastore-uri thrift://127.0.0.1:P --warehouse W --out O \
        [--populate --fixtures-dir D --big-partitions N]

With ``--populate`` (run against the reference Hive Metastore) Spark SQL creates several databases,
partitioned parquet (data source) and Hive-serde tables, table and partition statistics and a view;
then Thrift calls add what Spark would be slow at: thousands of partitions (with real, empty data
directories), HMS column statistics at table and partition level, and Hudi tables from the fixtures
in ``D`` registered as Hudi's hive-sync registers them. Either way the script then runs the queries
whose results the test compares between metastores and writes ``{"steps": {...}}`` to O.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import sys

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", ".."))

from tests.spark.acceptance import build_spark, quiet_python_loggers

BASE_DATABASES = ("mig_sales", "mig_ops", "mig_hudi")
SUFFIX = ""  # --suffix: appended to every database name (the reference metastore is shared)


def n(text: str) -> str:
    """`text` with every database name suffixed."""
    return re.sub(r"\bmig_(sales|ops|hudi)\b", lambda m: m.group(0) + SUFFIX, text)
# Hudi fixtures: (zip name, table, sync_as_datasource). Spark (no Hudi bundle) queries the ones
# registered as Hive tables (sync_as_datasource=false).
HUDI_TABLES = (("cow_v6_complexkeygen_hivestyle", "trips_cow", False),
               ("mor_v6_simplekeygen_nonhivestyle", "trips_mor", False),
               ("cow_v8_nonpartitioned", "events_v8", True))
QUERIED_HUDI = ("trips_cow", "trips_mor")


def populate_sql(spark) -> None:
    def sql(text):
        return spark.sql(n(text))
    sql("CREATE DATABASE mig_sales COMMENT 'sales data' WITH DBPROPERTIES ('team'='sales', 'tier'='gold')")
    sql("CREATE DATABASE mig_ops")
    sql("CREATE DATABASE mig_hudi COMMENT 'hudi tables synced by hive-sync'")
    # partitioned parquet data source table with partition statistics
    sql("CREATE TABLE mig_sales.orders (id BIGINT, amount DECIMAL(10,2), note STRING, dt STRING, region STRING) "
        "USING parquet PARTITIONED BY (dt, region) TBLPROPERTIES ('owner.team'='sales')")
    rows = ", ".join(f"({i}, {i * 3}.25, 'n{i}', '2024-01-0{1 + i % 3}', '{['eu', 'us'][i % 2]}')"
                     for i in range(24))
    sql(f"INSERT INTO mig_sales.orders VALUES {rows}")
    sql("ANALYZE TABLE mig_sales.orders PARTITION (dt, region) COMPUTE STATISTICS")
    sql("ANALYZE TABLE mig_sales.orders COMPUTE STATISTICS FOR COLUMNS id, amount")
    # unpartitioned Hive-serde table (ORC)
    sql("CREATE TABLE mig_sales.customers (id BIGINT, name STRING, tier STRING) STORED AS ORC "
        "TBLPROPERTIES ('orc.compress'='ZLIB')")
    sql("INSERT INTO mig_sales.customers VALUES (1, 'ann', 'gold'), (2, 'bob', 'silver'), (3, 'cy', NULL)")
    # view
    sql("CREATE VIEW mig_sales.v_region AS SELECT region, count(*) AS n, sum(amount) AS total "
        "FROM mig_sales.orders GROUP BY region")
    # partitioned Hive-serde text table
    sql("CREATE TABLE mig_ops.logs (msg STRING, level STRING) PARTITIONED BY (day INT) "
        "ROW FORMAT DELIMITED FIELDS TERMINATED BY ',' STORED AS TEXTFILE")
    sql("INSERT INTO mig_ops.logs PARTITION (day) VALUES ('boot', 'INFO', 1), ('disk full', 'ERROR', 1), "
        "('ok', 'INFO', 2), ('slow', 'WARN', 3)")
    # the table that gets thousands of partitions (Hive parquet)
    sql("CREATE TABLE mig_ops.metrics (v BIGINT, name STRING) PARTITIONED BY (host STRING, p INT) STORED AS PARQUET")
    sql("INSERT INTO mig_ops.metrics PARTITION (host, p) VALUES (1, 'a', 'h0', 0), (2, 'b', 'h0', 1), "
        "(3, 'c', 'h1', 2), (4, 'd', 'h1', 3)")


def populate_thrift(uri: str, fixtures_dir: str, big: int) -> None:
    from tests.harness.thrift import thrift_client
    from thrift_idl.hive_metastore.ttypes import (
        ColumnStatistics,
        ColumnStatisticsData,
        ColumnStatisticsDesc,
        ColumnStatisticsObj,
        LongColumnStatsData,
        StringColumnStatsData,
    )

    port = int(uri.rsplit(":", 1)[1])
    with thrift_client(port, timeout=300) as c:
        # thousands of partitions, each with a real (empty) directory
        t = c.get_table(n("mig_ops"), "metrics")
        parts = []
        for i in range(4, big):
            host, p = f"h{i % 10}", i
            loc = f"{t.sd.location}/host={host}/p={p}"
            os.makedirs(loc.replace("file:", "", 1), exist_ok=True)
            sd = _copy(t.sd)
            sd.location = loc
            from thrift_idl.hive_metastore.ttypes import Partition

            parts.append(Partition(values=[host, str(p)], dbName=n("mig_ops"), tableName="metrics", sd=sd,
                                   parameters={"source": "bulk"} if i % 7 == 0 else {}))
        for i in range(0, len(parts), 1000):
            c.add_partitions(parts[i:i + 1000])
        # HMS column statistics: table level and partition level
        long_stats = ColumnStatisticsObj("id", "bigint", ColumnStatisticsData(
            longStats=LongColumnStatsData(lowValue=1, highValue=3, numNulls=0, numDVs=3)))
        str_stats = ColumnStatisticsObj("name", "string", ColumnStatisticsData(
            stringStats=StringColumnStatsData(maxColLen=3, avgColLen=2.33, numNulls=0, numDVs=3)))
        c.update_table_column_statistics(ColumnStatistics(
            ColumnStatisticsDesc(True, n("mig_sales"), "customers"), [long_stats, str_stats]))
        for day, ndv in ((1, 2), (2, 1), (3, 1)):
            c.update_partition_column_statistics(ColumnStatistics(
                ColumnStatisticsDesc(False, n("mig_ops"), "logs", partName=f"day={day}"),
                [ColumnStatisticsObj("msg", "string", ColumnStatisticsData(
                    stringStats=StringColumnStatsData(maxColLen=9, avgColLen=4.0 + day, numNulls=0, numDVs=ndv)))]))
        for i in range(0, 40, 10):  # a few of the thousands, too
            c.update_partition_column_statistics(ColumnStatistics(
                ColumnStatisticsDesc(False, n("mig_ops"), "metrics", partName=f"host=h{i % 10}/p={i}"),
                [ColumnStatisticsObj("v", "bigint", ColumnStatisticsData(
                    longStats=LongColumnStatsData(lowValue=i, highValue=i + 1, numNulls=0, numDVs=2)))]))
        for zip_name, table, as_datasource in HUDI_TABLES:
            register_hudi_as_hive_sync(c, hudi_base(fixtures_dir, zip_name), n("mig_hudi"), table, as_datasource)


def hudi_base(fixtures_dir: str, zip_name: str) -> str:
    """The folder holding `.hoodie` in the fixture unzipped to fixtures_dir/zip_name."""
    for root, dirs, _ in os.walk(os.path.join(fixtures_dir, zip_name)):
        if ".hoodie" in dirs and "__MACOSX" not in root:
            return root
    raise FileNotFoundError(f"no Hudi table under {fixtures_dir}/{zip_name}")


def _copy(obj):
    import copy

    return copy.deepcopy(obj)


def register_hudi_as_hive_sync(client, base: str, db: str, table: str, as_datasource: bool) -> None:
    """Create the HMS table and partitions Hudi's hive-sync (HMS mode) would create for the table at base."""
    import hudi

    from hudi_format.table_config import (
        INPUT_FORMAT,
        META_COLUMNS,
        OUTPUT_FORMAT,
        SERDE,
        HudiTableConfig,
        avro_to_hive_type,
        read_properties,
        spark_schema_properties,
    )
    from thrift_idl.hive_metastore.ttypes import (
        FieldSchema,
        Partition,
        SerDeInfo,
        StorageDescriptor,
        Table,
    )

    with open(os.path.join(base, ".hoodie", "hoodie.properties")) as f:
        props = read_properties(f.read())
    cfg = HudiTableConfig.from_properties(db, table, props, base)
    fields = json.loads(props["hoodie.table.create.schema"])["fields"]
    part_fields = [p.lower() for p in cfg.partition_fields]
    cols = [FieldSchema(m, "string", "") for m in META_COLUMNS] + [
        FieldSchema(f["name"].lower(), avro_to_hive_type(f["type"]), "") for f in fields
        if f["name"].lower() not in part_fields]
    types = {f["name"].lower(): avro_to_hive_type(f["type"]) for f in fields}
    keys = [FieldSchema(p, types.get(p, "string"), "") for p in part_fields]
    latest = hudi.HudiTable(base).get_timeline().get_latest_commit_timestamp()
    params = {"EXTERNAL": "TRUE", "last_commit_time_sync": latest}
    if as_datasource:
        params.update(spark_schema_properties(cols, keys))
    serde = SerDeInfo(serializationLib=SERDE, parameters={
        "serialization.format": "1", "path": "file:" + base, "hoodie.query.as.ro.table": "false"})
    sd = StorageDescriptor(cols=cols, location="file:" + base, inputFormat=INPUT_FORMAT[cfg.table_type],
                           outputFormat=OUTPUT_FORMAT, compressed=False, numBuckets=-1, serdeInfo=serde,
                           bucketCols=[], sortCols=[], parameters={})
    client.create_table(Table(tableName=table, dbName=db, owner="hudi", sd=sd, partitionKeys=keys,
                              parameters=params, tableType="EXTERNAL_TABLE"))
    paths = sorted({s.partition_path for s in hudi.HudiTable(base).get_file_slices()} - {""})
    parts = []
    for path in paths:
        psd = _copy(sd)
        psd.location = f"file:{base}/{path}"
        parts.append(Partition(values=cfg.values_of(path), dbName=db, tableName=table, sd=psd, parameters={}))
    if parts:
        client.add_partitions(parts)


def _norm(v):
    if isinstance(v, (list, tuple)):
        return [_norm(x) for x in v]
    if isinstance(v, dict):
        return {str(k): _norm(x) for k, x in sorted(v.items(), key=lambda kv: str(kv[0]))}
    if v is None or isinstance(v, (bool, int, float, str)):
        return v
    if isinstance(v, (bytes, bytearray)):
        return v.hex()
    if hasattr(v, "asDict"):
        return [_norm(x) for x in v]
    return str(v)


def run_queries(spark) -> dict:
    steps = {}

    def q(step, text, ordered=False):
        try:
            rows = [_norm(r) for r in spark.sql(n(text)).collect()]
            steps[step] = rows if ordered else sorted(rows, key=lambda r: json.dumps(r, sort_keys=True))
        except Exception as e:  # an error is a result too
            steps[step] = {"error": f"{type(e).__name__}: {str(e).splitlines()[0][:300]}"}

    q("databases", f"SHOW DATABASES LIKE 'mig_*{SUFFIX}'")
    for db in BASE_DATABASES:
        q(f"tables.{db}", f"SHOW TABLES IN {db}")
    q("orders.all", "SELECT * FROM mig_sales.orders")
    q("orders.pruned", "SELECT id, amount FROM mig_sales.orders WHERE dt = '2024-01-02' AND region = 'us'")
    q("orders.partitions", "SHOW PARTITIONS mig_sales.orders")
    q("orders.describe", "DESCRIBE mig_sales.orders", ordered=True)
    q("orders.props", "SHOW TBLPROPERTIES mig_sales.orders('owner.team')")
    q("orders.stats", "DESCRIBE EXTENDED mig_sales.orders id")
    q("orders.partition_stats", "DESCRIBE EXTENDED mig_sales.orders PARTITION (dt='2024-01-01', region='eu')")
    if isinstance(steps["orders.partition_stats"], list):  # keep the statistics, not the times
        steps["orders.partition_stats"] = [r for r in steps["orders.partition_stats"]
                                           if r[0] in ("Partition Statistics", "Partition Parameters")]
    q("customers.all", "SELECT * FROM mig_sales.customers")
    q("customers.props", "SHOW TBLPROPERTIES mig_sales.customers('orc.compress')")
    q("view.all", "SELECT * FROM mig_sales.v_region")
    q("view.text", "SHOW CREATE TABLE mig_sales.v_region")
    q("logs.all", "SELECT * FROM mig_ops.logs")
    q("logs.day2", "SELECT msg FROM mig_ops.logs WHERE day = 2")
    q("metrics.partitions", "SHOW PARTITIONS mig_ops.metrics")
    q("metrics.count", "SELECT count(*), sum(v) FROM mig_ops.metrics")
    q("metrics.pruned", "SELECT host, p, v FROM mig_ops.metrics WHERE host = 'h1' AND p < 20")
    for t in QUERIED_HUDI:
        q(f"hudi.{t}.partitions", f"SHOW PARTITIONS mig_hudi.{t}")
        q(f"hudi.{t}.rows", f"SELECT _hoodie_commit_time, _hoodie_record_key, _hoodie_partition_path, id, name, "
                            f"longfield FROM mig_hudi.{t}")
        q(f"hudi.{t}.describe", f"DESCRIBE mig_hudi.{t}", ordered=True)
    return steps


def main() -> int:
    p = argparse.ArgumentParser()
    p.add_argument("--metastore-uri", required=True)
    p.add_argument("--warehouse", required=True)
    p.add_argument("--out", required=True)
    p.add_argument("--populate", action="store_true")
    p.add_argument("--fixtures-dir", default="")
    p.add_argument("--big-partitions", type=int, default=3000)
    p.add_argument("--suffix", default="")
    args = p.parse_args()
    global SUFFIX
    SUFFIX = args.suffix
    spark = build_spark(args.metastore_uri, os.path.abspath(args.warehouse))
    spark.sparkContext.setLogLevel("ERROR")
    quiet_python_loggers()
    if args.populate:
        populate_sql(spark)
        populate_thrift(args.metastore_uri, args.fixtures_dir, args.big_partitions)
    steps = run_queries(spark)
    spark.stop()
    with open(args.out, "w") as f:
        json.dump({"steps": steps}, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
