"""Apache Hudi's own Spark writer and reader against our server (run in the pyspark 3.5 venv of
tests/harness/hudi_spark.py with Hudi's bundle): one Spark session does every step.

write: Hudi's datasource writes a COW and a MOR table (partitioned and not) in several commits
(insert, upsert, delete) with hive sync in `hms` mode to our server; the rows Hudi reads back after
each table's last commit go to the JSON. read: Hudi's reader reads tables given by --read (written by
our pipeline): snapshot, time travel at each instant, incremental from each instant.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import traceback

TABLES = (("cow_part", "COPY_ON_WRITE", "city"), ("mor_part", "MERGE_ON_READ", "city"),
          ("cow_flat", "COPY_ON_WRITE", ""), ("mor_flat", "MERGE_ON_READ", ""))
SCHEMA = "id long, fare double, ts long, city string"


def session(uri: str, warehouse: str):
    from pyspark.sql import SparkSession

    jars = [os.environ["HUDI_BUNDLE_JAR"]] + [j for j in os.environ.get("HADOOP_AWS_JARS", "").split(",") if j]
    builder = SparkSession.builder
    if os.environ.get("HADOOP_AWS_JARS") and os.environ.get("AWS_ENDPOINT_URL"):
        # S3A on the S3-compatible store the AWS environment names (credentials from the environment)
        for k, v in {"endpoint": os.environ["AWS_ENDPOINT_URL"], "path.style.access": "true",
                     "connection.ssl.enabled": "false", "endpoint.region": os.environ.get("AWS_REGION", "us-east-1"),
                     "aws.credentials.provider": "com.amazonaws.auth.EnvironmentVariableCredentialsProvider"}.items():
            builder = builder.config(f"spark.hadoop.fs.s3a.{k}", v)
        builder = builder.config("spark.hadoop.fs.s3.impl", "org.apache.hadoop.fs.s3a.S3AFileSystem")  # s3:// too
    return (builder.master("local[1]").appName("hudi-spark-jobs")
            .config("spark.jars", ",".join(jars))
            .config("spark.serializer", "org.apache.spark.serializer.KryoSerializer")
            .config("spark.sql.extensions", "org.apache.spark.sql.hudi.HoodieSparkSessionExtension")
            .config("spark.sql.catalog.spark_catalog", "org.apache.spark.sql.hudi.catalog.HoodieCatalog")
            .config("spark.sql.shuffle.partitions", "2").config("spark.ui.enabled", "false")
            .config("spark.hadoop.hive.metastore.uris", uri).config("spark.sql.warehouse.dir", warehouse)
            .enableHiveSupport().getOrCreate())


def hudi_write(df, db: str, name: str, ttype: str, part: str, op: str, base: str, uri: str) -> None:
    opts = {"hoodie.table.name": name, "hoodie.datasource.write.table.type": ttype,
            "hoodie.datasource.write.operation": op, "hoodie.datasource.write.recordkey.field": "id",
            "hoodie.datasource.write.precombine.field": "ts",
            "hoodie.datasource.write.partitionpath.field": part,
            "hoodie.datasource.write.keygenerator.class":
                "org.apache.hudi.keygen.SimpleKeyGenerator" if part else
                "org.apache.hudi.keygen.NonpartitionedKeyGenerator",
            "hoodie.datasource.write.hive_style_partitioning": "true",
            "hoodie.datasource.hive_sync.enable": "true", "hoodie.datasource.hive_sync.mode": "hms",
            "hoodie.datasource.hive_sync.metastore.uris": uri, "hoodie.datasource.hive_sync.database": db,
            "hoodie.datasource.hive_sync.table": name,
            "hoodie.datasource.hive_sync.partition_fields": part,
            "hoodie.datasource.hive_sync.partition_extractor_class":
                "org.apache.hudi.hive.MultiPartKeysValueExtractor" if part else
                "org.apache.hudi.hive.NonPartitionedExtractor",
            "hoodie.metadata.enable": "false", "hoodie.parquet.small.file.limit": "0",
            "hoodie.compact.inline": "false"}
    df.write.format("hudi").options(**opts).mode("append").save(base)


def rows(df, columns=("id", "fare", "city"), typed: bool = False) -> list:
    if typed:
        return sorted(([plain(r[c]) for c in columns] for r in df.select(*columns).collect()), key=json.dumps)
    return sorted([r[c] for c in columns] for r in df.select(*columns).collect())


def plain(v):
    """A value of any Spark type as JSON: timestamps and dates in ISO form (timestamps as the
    session's wall time), decimals as text, binary as hex, structs and arrays as lists, maps as
    sorted [key, value] pairs."""
    import datetime
    from decimal import Decimal

    if isinstance(v, (datetime.datetime, datetime.date)):
        return v.isoformat()
    if isinstance(v, Decimal):
        return str(v)
    if isinstance(v, (bytes, bytearray)):
        return bytes(v).hex()
    if isinstance(v, dict):
        return sorted([k, plain(x)] for k, x in v.items())
    if isinstance(v, (list, tuple)):  # pyspark's Row is a tuple
        return [plain(x) for x in v]
    return v


def write_tables(spark, uri: str, warehouse: str, db: str) -> dict:
    out: dict = {}  # (the database too is hive-sync's: auto_create_database)
    for name, ttype, part in TABLES:
        base = os.path.join(warehouse, db, name)
        df = lambda data: spark.createDataFrame(data, SCHEMA)  # noqa: E731
        try:
            hudi_write(df([(i, float(i), 1, "sf" if i % 2 else "nyc") for i in range(6)]),
                       db, name, ttype, part, "insert", base, uri)
            hudi_write(df([(1, 10.0, 2, "sf"), (7, 7.0, 2, "la")]), db, name, ttype, part, "upsert", base, uri)
            hudi_write(df([(2, 0.0, 3, "nyc")]), db, name, ttype, part, "delete", base, uri)
            out[name] = {"base": base, "rows": rows(spark.read.format("hudi").load(base)),
                         "catalog_rows": rows(spark.table(f"{db}.{name}"))}  # the table hive-sync registered
        except Exception as e:  # noqa: BLE001 - reported, the test fails on it
            out[name] = {"error": f"{type(e).__name__}: {e}"[:2000], "trace": traceback.format_exc()[-3000:]}
    return out


def metaserver_write(spark, uri: str, warehouse: str) -> dict:
    """A write with `hoodie.metaserver.enabled=true` (Hudi's metaserver client to our server's
    ThriftHoodieMetaserver): what Hudi answers; the Java causes of a failure."""
    df = spark.createDataFrame([(1, 1.0, 1, "sf")], SCHEMA)
    try:
        (df.write.format("hudi").option("hoodie.table.name", "ms_t").option("hoodie.database.name", "ms_db")
         .option("hoodie.datasource.write.recordkey.field", "id")
         .option("hoodie.datasource.write.precombine.field", "ts")
         .option("hoodie.datasource.write.partitionpath.field", "city").option("hoodie.metadata.enable", "false")
         .option("hoodie.metaserver.enabled", "true").option("hoodie.metaserver.uris", uri)
         .mode("append").save(os.path.join(warehouse, "ms_db", "ms_t")))
        return {"written": True}
    except Exception as e:  # noqa: BLE001 - the error is the result
        return {"error": f"{type(e).__name__}: {e}"[:400],
                "causes": [line.strip() for line in str(e).splitlines() if line.startswith("Caused by")]}


def scanned(spark, df, columns) -> tuple[list, int]:
    """The rows of `df` and the number of files its scans read (the scan's `numFiles` metric:
    after partition pruning and the file index's data skipping)."""
    spark.conf.set("spark.sql.adaptive.enabled", "false")  # the executed plan's leaves are the scans
    df = df.select(*columns)
    got = sorted([r[c] for c in columns] for r in df.collect())
    leaves = df._jdf.queryExecution().executedPlan().collectLeaves()
    files = 0
    for i in range(leaves.length()):
        metrics = leaves.apply(i).metrics()
        if metrics.contains("numFiles"):
            files += metrics.apply("numFiles").value()
    return got, files


def archived_instants(spark, base: str) -> list[list[str]]:
    """[instant time, action, state] of the table's archived timeline as Hudi's own reader loads it
    (HoodieTableMetaClient.getArchivedTimeline: the LSM timeline of version 8+, the archive log of 6)."""
    jvm = spark._jvm
    conf = jvm.org.apache.hudi.storage.hadoop.HadoopStorageConfiguration(spark._jsc.hadoopConfiguration())
    client = jvm.org.apache.hudi.common.table.HoodieTableMetaClient.builder().setConf(conf).setBasePath(base).build()
    archived = client.getArchivedTimeline()
    archived.loadCompletedInstantDetailsInMemory()
    out = []
    for inst in archived.getInstants():
        details = archived.getInstantDetails(inst) if inst.isCompleted() else None
        if details is not None and not details.isPresent():
            raise AssertionError(f"archived {inst} has no details")
        out.append([str(inst.requestedTime()), str(inst.getAction()), str(inst.getState())])
    return out


def files_check(spark, base: str) -> dict:
    """Hudi's own metadata-table reader against its storage listing (FileSystemBackedTableMetadata),
    as Hudi's `validate_metadata_table_files` procedure compares them (it needs a catalog table):
    partitions of each, and per file that differs its name, whether each has it and the sizes each
    gives; with a record_index partition, also `record_index_check`."""
    jvm = spark._jvm
    hudi = jvm.org.apache.hudi
    conf = hudi.storage.hadoop.HadoopStorageConfiguration(spark._jsc.hadoopConfiguration())
    client = hudi.common.table.HoodieTableMetaClient.builder().setConf(conf).setBasePath(base).build()
    context = hudi.common.engine.HoodieLocalEngineContext(client.getStorageConf())

    config = hudi.common.config.HoodieMetadataConfig.newBuilder().enable(True).build()
    md = hudi.metadata.HoodieBackedTableMetadata(context, client.getStorage(), config, base)
    fs = hudi.metadata.FileSystemBackedTableMetadata(context, client.getTableConfig(), client.getStorage(), base)
    out: dict = {"partitions_md": sorted(md.getAllPartitionPaths()), "partitions_fs": sorted(fs.getAllPartitionPaths()),
                 "mismatches": [], "files": 0}
    indexes = str(client.getTableConfig().getMetadataPartitions())
    if "record_index" in indexes:
        out["record_index"] = record_index_check(spark, base, md)
    if "column_stats" in indexes:
        out["column_stats"] = column_stats_of(spark, md, base, out["partitions_md"])
    for part in sorted(set(out["partitions_md"]) | set(out["partitions_fs"])):
        path = hudi.storage.StoragePath(base, part) if part else hudi.storage.StoragePath(base)
        mine = {i.getPath().getName(): i.getLength() for i in md.getAllFilesInPartition(path)}
        theirs = {i.getPath().getName(): i.getLength() for i in fs.getAllFilesInPartition(path)}
        out["files"] += len(mine)
        for name in sorted(set(mine) | set(theirs)):
            if mine.get(name) != theirs.get(name):
                out["mismatches"].append([part, name, name in theirs, name in mine, theirs.get(name), mine.get(name)])
    return out


STATS_COLUMNS = ("id", "name", "ts")


def column_stats_of(spark, md, base: str, partitions: list[str]) -> list[list]:
    """The `column_stats` records Hudi's own reader gives (`getColumnStats`) for every base file its
    metadata table lists and the columns STATS_COLUMNS: [partition, file, column, min, max, null
    count, value count] (min and max unwrapped; a column without a record is left out)."""
    jvm = spark._jvm
    pairs = jvm.java.util.ArrayList()
    for part in partitions:
        storage_path = jvm.org.apache.hudi.storage.StoragePath
        path = storage_path(base, part) if part else storage_path(base)
        for info in md.getAllFilesInPartition(path):
            if info.getPath().getName().endswith(".parquet"):
                pairs.add(jvm.org.apache.hudi.common.util.collection.Pair.of(part, info.getPath().getName()))
    columns = jvm.java.util.ArrayList()
    for c in STATS_COLUMNS:
        columns.add(c)
    out = []

    def value(wrapped):
        return None if wrapped is None else wrapped.get(0)

    for entry in md.getColumnStats(pairs, columns).entrySet():
        for st in entry.getValue():
            out.append([entry.getKey().getLeft(), st.getFileName(), st.getColumnName(), value(st.getMinValue()),
                        value(st.getMaxValue()), st.getNullCount(), st.getValueCount()])
    return sorted(out, key=lambda r: (r[0], r[1], r[2]))


def record_index_check(spark, base: str, md) -> dict:
    """The record-level index as Hudi's own reader answers it (`readRecordIndexLocationsWithKeys`)
    for every key Hudi's snapshot read finds (with the file group it reads it from) and one more
    key no record has: {"storage": key -> [partition, file id], "index": key -> [partition, file id]}."""
    found = (spark.read.format("hudi").option("hoodie.metadata.enable", "false").load(base)
             .select("_hoodie_record_key", "_hoodie_partition_path", "_hoodie_file_name").collect())
    storage = {k: [p, f.lstrip(".").split("_")[0]] for k, p, f in found}
    keys = spark._jvm.java.util.ArrayList()
    for k in [*sorted(storage), "no such key"]:
        keys.add(k)
    eager = spark._jvm.org.apache.hudi.common.data.HoodieListData.eager(keys)
    index = {}
    for pair in md.readRecordIndexLocationsWithKeys(eager).collectAsList():
        where = pair.getRight()
        index[pair.getLeft()] = [where.getPartitionPath(), where.getFileId()]
    return {"storage": storage, "index": index}


def read_table(spark, base: str, instants: list[str], table: str = "", columns=("id", "fare", "city"),
               typed: bool = False, options: dict | None = None, read_optimized: bool = False,
               where: dict[str, list[str]] | None = None, archived: bool = False,
               validate_files: bool = False) -> dict:
    def hudi_reader():  # `options`: the reader's (e.g. hoodie.metadata.enable)
        return spark.read.format("hudi").options(**(options or {}))

    if typed:  # timestamps collected as UTC wall time
        spark.conf.set("spark.sql.session.timeZone", "UTC")
        got = {"ancient_dates_by_default": None}
        try:  # Spark 3.5's default for Parquet files with no Spark version: refuse dates before 1582
            rows(hudi_reader().load(base), columns, typed=True)
        except Exception as e:  # noqa: BLE001 - the error is the result
            got["ancient_dates_by_default"] = f"{type(e).__name__}: {e}"[:300]
            spark.conf.set("spark.sql.parquet.datetimeRebaseModeInRead", "CORRECTED")  # proleptic, as written
        got["snapshot"] = rows(hudi_reader().load(base), columns, typed=True)
        return got
    got: dict = {"snapshot": rows(hudi_reader().load(base), columns), "as_of": {}, "incremental": {}}
    if read_optimized:  # merge-on-read: the base files alone
        got["read_optimized"] = rows(hudi_reader().option("hoodie.datasource.query.type", "read_optimized")
                                     .load(base), columns)
    for predicate, skips in (where or {}).items():  # with data skipping on and/or off: rows and files read
        got.setdefault("where", {})[predicate] = {
            skip: scanned(spark, hudi_reader().option("hoodie.enable.data.skipping", skip).load(base)
                          .where(predicate), columns) for skip in skips}
    if archived:
        got["archived"] = archived_instants(spark, base)
    if validate_files:
        got["files_check"] = files_check(spark, base)
    if table:  # through the catalog: our server's registration (Spark data source, provider hudi)
        got["catalog"] = rows(spark.table(table))
        got["sql"] = rows(spark.sql(f"SELECT id, fare, city FROM {table}"))
        # the optimizer's statistics: the server's, kept with the commits (no ANALYZE ran)
        got["explain_cost_size"] = spark.sql(f"EXPLAIN COST SELECT * FROM {table}").collect()[0][0]
        spark.conf.set("spark.sql.cbo.enabled", "true")  # rows (sizes are then estimated from them)
        got["explain_cost"] = spark.sql(f"EXPLAIN COST SELECT * FROM {table}").collect()[0][0]
        got["describe_fare"] = {r[0]: r[1] for r in spark.sql(f"DESCRIBE EXTENDED {table} fare").collect()}
        spark.conf.set("spark.sql.cbo.enabled", "false")
    for ts in instants:
        got["as_of"][ts] = rows(hudi_reader().option("as.of.instant", ts).load(base), columns)
        got["incremental"][ts] = rows(hudi_reader()
                                      .option("hoodie.datasource.query.type", "incremental")
                                      .option("hoodie.datasource.read.begin.instanttime", ts).load(base), columns)
    return got


def main() -> int:
    p = argparse.ArgumentParser()
    p.add_argument("--metastore-uri", required=True)
    p.add_argument("--warehouse", required=True)
    p.add_argument("--out", required=True)
    p.add_argument("--db", default="hudi_spark")
    p.add_argument("--read", default="{}",
                   help="JSON {name: {base, instants, table, columns, typed, options, read_optimized, where, "
                        "archived}} to read with Hudi's reader (typed: any Spark type, snapshot only; options: the "
                        "reader's; read_optimized: also that query; where: {Spark SQL predicate: "
                        "[hoodie.enable.data.skipping values to read it with]}; archived: also its archived timeline; "
                        "validate_files: Hudi's metadata-table listing against storage's)")
    p.add_argument("--read-only", action="store_true", help="only read the --read tables (no writes)")
    args = p.parse_args()
    spark = session(args.metastore_uri, args.warehouse)
    result: dict = {"read": {}}
    if not args.read_only:
        result["written"] = write_tables(spark, args.metastore_uri, args.warehouse, args.db)
        result["metaserver"] = metaserver_write(spark, args.metastore_uri, args.warehouse)
    for name, t in json.loads(args.read).items():
        try:
            result["read"][name] = read_table(spark, t["base"], t.get("instants", []), t.get("table", ""),
                                              t.get("columns") or ("id", "fare", "city"), bool(t.get("typed")),
                                              t.get("options"), bool(t.get("read_optimized")), t.get("where"),
                                              bool(t.get("archived")), bool(t.get("validate_files")))
        except Exception as e:  # noqa: BLE001
            result["read"][name] = {"error": f"{type(e).__name__}: {e}"[:2000]}
    spark.stop()
    with open(args.out, "w") as f:
        json.dump(result, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
