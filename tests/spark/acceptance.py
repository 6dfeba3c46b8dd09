"""Spark acceptance script: drives a Hive metastore through Spark SQL and records every result.

Run it in its own process (one JVM per metastore target):

    python tests/spark/acceptance.py --metastore-uri thrift://127.0.0.1:9083 \
        --warehouse /tmp/wh --out /tmp/result.json

The output JSON is ``{"steps": {step_name: result, ...}, "meta": {...}}``.  ``steps`` is meant to be
compared step by step between the reference Hive Metastore and our server; ``meta`` (timings,
versions) is informational only.

Conventions for ``steps`` values:

* query results are lists of rows (each row a list), sorted; DESCRIBE / SHOW CREATE TABLE output
  keeps Spark's order (column order is meaningful) minus volatile rows;
* every string has the warehouse prefix (with or without ``file:``) replaced by ``<WH>``;
* a statement that raises is recorded as ``{"error": "<ExceptionClass>: <first line>"}`` and the
  script carries on;
* ``filter.*`` steps run a query whose partition predicate Spark pushes down to the metastore
  (``get_partitions_by_filter``) and record ``{"rows": ..., "parts": ...}`` (``parts`` = the
  partition directories Spark actually scans); the matching ``oracle.filter.*`` step runs the same
  query with ``spark.sql.hive.metastorePartitionPruning=false`` (all partitions listed, filtered by
  Spark), i.e. the correct answer computed without the metastore's filter support.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import sys
import time
from collections import OrderedDict
from datetime import date, datetime
from decimal import Decimal

DB = "acc_db"

# DESCRIBE rows whose value changes from run to run.
VOLATILE_DESCRIBE_KEYS = {"Created Time", "Last Access", "transient_lastDdlTime"}
# Table-property keys kept by SHOW TBLPROPERTIES (the rest are Spark/Hive bookkeeping).
USER_PROP_PREFIX = "acc."


def parse_args(argv=None):
    p = argparse.ArgumentParser()
    p.add_argument("--metastore-uri", required=True)
    p.add_argument("--warehouse", required=True)
    p.add_argument("--out", required=True)
    p.add_argument("--only", default="", help="comma-separated step-name prefixes to run (debug)")
    return p.parse_args(argv)


class Recorder:
    def __init__(self, spark, warehouse: str, only: str = ""):
        self.spark = spark
        self.warehouse = warehouse.rstrip("/")
        self.steps: OrderedDict[str, object] = OrderedDict()
        self.timings: OrderedDict[str, float] = OrderedDict()
        self.only = [p for p in only.split(",") if p]
        prefixes = {self.warehouse, os.path.realpath(self.warehouse)}
        alts = []
        for p in prefixes:
            alts += ["file://" + p, "file:" + p, p]
        alts.sort(key=len, reverse=True)
        self._wh_re = re.compile("|".join(re.escape(a) for a in alts))

    # ---------------------------------------------------------------- normalisation
    def norm_str(self, s: str) -> str:
        s = self._wh_re.sub("<WH>", s)
        s = re.sub(r"transient_lastDdlTime=\d+,?\s*", "", s)
        s = re.sub(r",\s*([\]}])", r"\1", s)  # dangling comma left by the removal above
        s = re.sub(r"\bo\d+\.(\w+)", r"oN.\1", s)  # py4j object ids in messages
        return s

    def norm(self, v):
        if v is None or isinstance(v, (bool, int)):
            return v
        if isinstance(v, float):
            return v
        if isinstance(v, str):
            return self.norm_str(v)
        if isinstance(v, (Decimal, date, datetime)):
            return str(v)
        if isinstance(v, (bytes, bytearray)):
            return v.hex()
        if isinstance(v, dict):
            return {str(k): self.norm(x) for k, x in sorted(v.items(), key=lambda kv: str(kv[0]))}
        if hasattr(v, "asDict") and isinstance(v, tuple):  # pyspark Row
            return [self.norm(x) for x in v]
        if isinstance(v, (list, tuple, set)):
            return [self.norm(x) for x in v]
        return self.norm_str(str(v))

    @staticmethod
    def sort_rows(rows):
        return sorted(rows, key=lambda r: json.dumps(r, sort_keys=True, default=str))

    def rows(self, df, ordered=False):
        rows = [self.norm(r) for r in df.collect()]
        return rows if ordered else self.sort_rows(rows)

    def describe_rows(self, df):
        out = []
        for r in df.collect():
            vals = [self.norm(x) for x in r]
            if vals and isinstance(vals[0], str) and vals[0].strip() in VOLATILE_DESCRIBE_KEYS:
                continue
            out.append(vals)
        return out

    def error(self, e: BaseException) -> dict:
        cls = type(e).__name__
        desc = getattr(e, "_desc", None)
        origin = getattr(e, "_origin", None)
        if desc is None:
            java_exc = getattr(e, "java_exception", None)  # raw Py4JJavaError
            desc = str(java_exc) if java_exc is not None else str(e)
        if cls == "UnknownException" and origin is not None:
            try:
                cls = origin.getClass().getSimpleName()
            except Exception:
                pass
        first = desc.strip().splitlines()[0] if desc.strip() else ""
        return {"error": self.norm_str(f"{cls}: {first}")}

    # ---------------------------------------------------------------- step runners
    def wanted(self, name):
        return not self.only or any(name.startswith(p) for p in self.only)

    def step(self, name, fn):
        assert name not in self.steps, f"duplicate step {name}"
        if not self.wanted(name):
            return None
        t0 = time.monotonic()
        try:
            result = fn()
        except Exception as e:  # every failure is a recorded result
            result = self.error(e)
        self.timings[name] = round(time.monotonic() - t0, 3)
        self.steps[name] = result
        return result

    def sql(self, name, statement):
        """Run a statement; record "ok" (or its rows if it returns any) or the error."""

        def run():
            df = self.spark.sql(statement)
            rows = self.rows(df)
            return rows if rows else "ok"

        return self.step(name, run)

    def query(self, name, statement, ordered=False):
        return self.step(name, lambda: self.rows(self.spark.sql(statement), ordered=ordered))

    def describe(self, name, statement):
        return self.step(name, lambda: self.describe_rows(self.spark.sql(statement)))

    def tblprops(self, name, table):
        def run():
            rows = self.rows(self.spark.sql(f"SHOW TBLPROPERTIES {table}"))
            return [r for r in rows if r[0].startswith(USER_PROP_PREFIX) or r[0] == "comment"]

        return self.step(name, run)

    def show_create(self, table):
        text = self.spark.sql(f"SHOW CREATE TABLE {table}").collect()[0][0]
        # Drop the volatile property wherever it sits in the TBLPROPERTIES list.
        text = re.sub(r",\s*'transient_lastDdlTime' = '\d+'", "", text)
        text = re.sub(r"'transient_lastDdlTime' = '\d+',\s*", "", text)
        text = re.sub(r"\s*TBLPROPERTIES \(\s*'transient_lastDdlTime' = '\d+'\)", "", text)
        return [self.norm_str(line) for line in text.splitlines()]

    def exists(self, name, *relpath):
        return self.step(name, lambda: os.path.exists(os.path.join(self.warehouse, *relpath)))

    def scanned_partitions(self, df):
        parts = set()
        for f in df.inputFiles():
            segs = [s for s in f.split("/")[:-1] if "=" in s]
            parts.add("/".join(segs))
        return sorted(parts)

    def filtered(self, name, statement):
        def run(pruning: bool):
            def inner():
                self.spark.conf.set("spark.sql.hive.metastorePartitionPruning", str(pruning).lower())
                try:
                    df = self.spark.sql(statement)
                    return {"rows": self.rows(df), "parts": self.scanned_partitions(df)}
                finally:
                    self.spark.conf.set("spark.sql.hive.metastorePartitionPruning", "true")

            return inner

        self.step(name, run(True))
        self.step("oracle." + name, run(False))


# Partition predicates pushed to the metastore.  region is a STRING partition key, day an INT one.
FILTERS = [
    ("str_eq", "region = 'us-east'"),
    ("str_ne", "region != 'us-east'"),
    ("str_lt", "region < 'eu-west'"),
    ("str_ge", "region >= 'us-east'"),
    ("str_in", "region IN ('us-east', 'eu-west', 'nowhere')"),
    ("str_not_in", "region NOT IN ('us-east', 'us-west')"),
    ("int_eq", "day = 2"),
    ("int_ne", "day <> 2"),
    ("int_lt", "day < 10"),  # numeric, not lexicographic: '10' < '2' as strings
    ("int_ge", "day >= 2"),
    ("int_gt", "day > 2"),
    ("int_le", "day <= 1"),
    ("int_between", "day BETWEEN 2 AND 10"),
    ("int_in", "day IN (1, 10)"),
    ("int_not_in", "day NOT IN (2, 10)"),
    ("int_eq_strlit", "day = '10'"),
    ("and", "region = 'us-east' AND day >= 2"),
    ("or", "region = 'eu-west' OR day = 10"),
    ("and_or", "(region = 'us-west' OR region = 'ap-south') AND day < 10"),
    ("or_and", "(region = 'us-east' AND day = 1) OR (region = 'eu-west' AND day > 2)"),
    ("lit_left", "10 > day AND 'us-east' = region"),
    ("no_match", "region = 'nowhere'"),
    # StartsWith / EndsWith / Contains are pushed as Hive "like" filters.
    ("like_prefix", "region LIKE 'us%'"),
    ("startswith", "startswith(region, 'us_')"),
    ("like_suffix", "region LIKE '%west'"),
    ("like_contains", "region LIKE '%s-%'"),
    ("like_and_int", "region LIKE 'us%' AND day = 2"),
    ("like_or_int", "region LIKE 'eu%' OR day = 3"),
    ("str_quote", "region = 'q\"uote'"),
]
LIKE_FILTERS = [name for name, _ in FILTERS if name.startswith(("like", "startswith"))]

EVENT_ROWS = [
    (1, "a", 1.5, "us-east", 1),
    (2, "b", 2.5, "us-east", 2),
    (3, "c", 3.5, "us-west", 1),
    (4, "d", 4.5, "us-west", 10),
    (5, "e", 5.5, "eu-west", 2),
    (6, "f", 6.5, "eu-west", 10),
    (8, "h", 8.5, "us_central", 2),
    (9, "i", 9.5, "usXcentral", 3),
    (10, "j", 10.5, None, 4),  # region=__HIVE_DEFAULT_PARTITION__
    (11, "k", 11.5, "eu-west", None),  # day=__HIVE_DEFAULT_PARTITION__ (INT key!)
    (12, "l", 12.5, 'q"uote', 5),  # escaped in the partition name: region=q%22uote
]


def values_sql(rows):
    def lit(v):
        if v is None:
            return "NULL"
        if isinstance(v, str):
            return "'" + v.replace("'", "\\'") + "'"
        return repr(v)

    return ", ".join("(" + ", ".join(lit(v) for v in r) + ")" for r in rows)


def run_steps(r: Recorder, spark, wh: str):
    T = f"{DB}.events"  # datasource table (USING parquet)
    H = f"{DB}.hevents"  # Hive serde table (STORED AS PARQUET)

    # ------------------------------------------------------------------ databases
    r.query("db.show_initial", "SHOW DATABASES LIKE 'acc*'")
    r.sql("db.create", f"CREATE DATABASE {DB} COMMENT 'acceptance db' WITH DBPROPERTIES ('acc.k1'='v1')")
    r.sql("err.db.create_existing", f"CREATE DATABASE {DB}")
    r.sql("db.create_if_not_exists", f"CREATE DATABASE IF NOT EXISTS {DB}")
    r.describe("db.describe", f"DESCRIBE DATABASE EXTENDED {DB}")
    r.sql("db.alter_props", f"ALTER DATABASE {DB} SET DBPROPERTIES ('acc.k2'='v2')")
    r.describe("db.describe_after_alter", f"DESCRIBE DATABASE EXTENDED {DB}")
    r.query("db.show", "SHOW DATABASES LIKE 'acc*|default'")
    r.sql("err.db.describe_missing", "DESCRIBE DATABASE acc_nope")
    r.exists("fs.db_dir_created", f"{DB}.db")

    # ------------------------------------------------------------------ create tables
    r.sql(
        "ds.create",
        f"CREATE TABLE {T} (id INT, name STRING, score DOUBLE, region STRING, day INT) "
        f"USING parquet PARTITIONED BY (region, day) COMMENT 'events table' "
        f"TBLPROPERTIES ('acc.created'='yes')",
    )
    r.sql("err.ds.create_existing", f"CREATE TABLE {T} (id INT) USING parquet")
    r.sql("ds.create_if_not_exists", f"CREATE TABLE IF NOT EXISTS {T} (id INT) USING parquet")
    r.sql(
        "hive.create",
        f"CREATE TABLE {H} (id INT COMMENT 'identifier', name STRING, score DOUBLE) "
        f"COMMENT 'hive events' PARTITIONED BY (region STRING, day INT) STORED AS PARQUET "
        f"TBLPROPERTIES ('acc.created'='yes')",
    )
    r.sql("err.hive.create_existing", f"CREATE TABLE {H} (id INT) STORED AS PARQUET")
    r.query("tables.show_after_create", f"SHOW TABLES IN {DB}")
    r.exists("fs.ds_table_dir_created", f"{DB}.db", "events")
    r.exists("fs.hive_table_dir_created", f"{DB}.db", "hevents")

    # ------------------------------------------------------------------ inserts
    r.sql("setup.dynamic_partition_mode", "SET hive.exec.dynamic.partition.mode=nonstrict")
    r.sql("ds.insert_dynamic", f"INSERT INTO {T} VALUES {values_sql(EVENT_ROWS)}")
    r.sql("ds.insert_static", f"INSERT INTO {T} PARTITION (region='ap-south', day=1) VALUES (7, 'g', 7.5)")
    r.sql("ds.insert_overwrite", f"INSERT OVERWRITE TABLE {T} PARTITION (region='us-east', day=1) "
                                 f"VALUES (100, 'a2', 100.5), (101, 'a3', 101.5)")
    r.sql("ds.insert_append_existing", f"INSERT INTO {T} PARTITION (region='us-west', day=10) VALUES (40, 'd2', 40.5)")
    r.sql("hive.insert_dynamic", f"INSERT INTO {H} PARTITION (region, day) VALUES {values_sql(EVENT_ROWS)}")
    r.sql("hive.insert_static", f"INSERT INTO {H} PARTITION (region='ap-south', day=1) VALUES (7, 'g', 7.5)")
    r.sql("hive.insert_overwrite", f"INSERT OVERWRITE TABLE {H} PARTITION (region='us-east', day=1) "
                                   f"VALUES (100, 'a2', 100.5), (101, 'a3', 101.5)")
    r.sql("hive.insert_append_existing",
          f"INSERT INTO {H} PARTITION (region='us-west', day=10) VALUES (40, 'd2', 40.5)")

    for tag, tbl in (("ds", T), ("hive", H)):
        r.query(f"{tag}.show_partitions", f"SHOW PARTITIONS {tbl}")
        r.query(f"{tag}.show_partitions_partial", f"SHOW PARTITIONS {tbl} PARTITION (region='us-west')")
        r.query(f"{tag}.show_partitions_full_spec", f"SHOW PARTITIONS {tbl} PARTITION (region='eu-west', day=2)")
        r.query(f"{tag}.select_all", f"SELECT * FROM {tbl}")
        r.query(f"{tag}.count", f"SELECT count(*) FROM {tbl}")

    # ------------------------------------------------------------------ partition pruning
    for tag, tbl in (("ds", T), ("hive", H)):
        for fname, pred in FILTERS:
            r.filtered(f"filter.{tag}.{fname}", f"SELECT id, name, region, day FROM {tbl} WHERE {pred}")

    # ------------------------------------------------------------------ describe
    for tag, tbl in (("ds", T), ("hive", H)):
        r.describe(f"{tag}.describe", f"DESCRIBE {tbl}")
        r.describe(f"{tag}.describe_extended", f"DESCRIBE EXTENDED {tbl}")
        r.describe(f"{tag}.describe_formatted", f"DESCRIBE FORMATTED {tbl}")
        r.describe(f"{tag}.describe_partition",
                   f"DESCRIBE EXTENDED {tbl} PARTITION (region='eu-west', day=2)")
        r.describe(f"{tag}.describe_column", f"DESCRIBE {tbl} id")
        r.step(f"{tag}.show_create", lambda tbl=tbl: r.show_create(tbl))
        r.tblprops(f"{tag}.tblprops_initial", tbl)
    r.sql("err.describe_partition_missing", f"DESCRIBE EXTENDED {T} PARTITION (region='nowhere', day=1)")

    # ------------------------------------------------------------------ views
    r.sql("view.create", f"CREATE VIEW {DB}.v_us (id, region) COMMENT 'us only' AS "
                         f"SELECT id, region FROM {T} WHERE region LIKE 'us%'")
    r.query("view.select", f"SELECT * FROM {DB}.v_us")
    r.describe("view.describe_extended", f"DESCRIBE EXTENDED {DB}.v_us")
    r.query("view.show_views", f"SHOW VIEWS IN {DB}")
    r.sql("view.alter_as", f"ALTER VIEW {DB}.v_us AS SELECT id, region FROM {T} WHERE day = 10")
    r.query("view.select_after_alter", f"SELECT * FROM {DB}.v_us")
    r.sql("err.view.insert", f"INSERT INTO {DB}.v_us VALUES (1, 'x')")
    r.sql("view.drop", f"DROP VIEW {DB}.v_us")
    r.sql("err.view.drop_missing", f"DROP VIEW {DB}.v_us")

    # ------------------------------------------------------------------ alter table
    for tag, tbl in (("ds", T), ("hive", H)):
        r.sql(f"{tag}.add_columns", f"ALTER TABLE {tbl} ADD COLUMNS (note STRING COMMENT 'added later')")
        r.sql(f"{tag}.alter_column_comment", f"ALTER TABLE {tbl} ALTER COLUMN name COMMENT 'the name'")
        r.describe(f"{tag}.describe_after_add_columns", f"DESCRIBE {tbl}")
        r.sql(f"{tag}.insert_with_new_column",
              f"INSERT INTO {tbl} PARTITION (region='eu-west', day=2) VALUES (50, 'e2', 50.5, 'hello')")
        r.query(f"{tag}.select_new_column", f"SELECT id, note, region, day FROM {tbl} WHERE region = 'eu-west'")
        r.sql(f"{tag}.set_tblprops",
              f"ALTER TABLE {tbl} SET TBLPROPERTIES ('acc.owner'='team-a', 'acc.level'='3', 'comment'='new comment')")
        r.tblprops(f"{tag}.tblprops_after_set", tbl)
        r.sql(f"{tag}.unset_tblprops", f"ALTER TABLE {tbl} UNSET TBLPROPERTIES ('acc.level')")
        r.tblprops(f"{tag}.tblprops_after_unset", tbl)
        r.sql(f"{tag}.unset_missing_prop", f"ALTER TABLE {tbl} UNSET TBLPROPERTIES ('acc.nope')")
        r.sql(f"{tag}.analyze", f"ANALYZE TABLE {tbl} COMPUTE STATISTICS")
        r.describe(f"{tag}.describe_after_alter", f"DESCRIBE EXTENDED {tbl}")

    # ------------------------------------------------------------------ rename
    r.sql("err.ds.rename_to_existing", f"ALTER TABLE {T} RENAME TO {H}")
    r.sql("ds.rename", f"ALTER TABLE {T} RENAME TO {DB}.events_r")
    r.sql("hive.rename", f"ALTER TABLE {H} RENAME TO {DB}.hevents_r")
    T, H = f"{DB}.events_r", f"{DB}.hevents_r"
    r.query("tables.show_after_rename", f"SHOW TABLES IN {DB}")
    r.query("tables.show_pattern", f"SHOW TABLES IN {DB} LIKE '*events_r|nothing'")
    r.sql("err.select_old_name", f"SELECT * FROM {DB}.events")
    r.exists("fs.ds_old_dir_after_rename", f"{DB}.db", "events")
    r.exists("fs.ds_new_dir_after_rename", f"{DB}.db", "events_r")
    r.exists("fs.hive_old_dir_after_rename", f"{DB}.db", "hevents")
    r.exists("fs.hive_new_dir_after_rename", f"{DB}.db", "hevents_r")
    for tag, tbl in (("ds", T), ("hive", H)):
        r.query(f"{tag}.select_after_rename", f"SELECT * FROM {tbl}")
        r.filtered(f"filter.{tag}.after_rename", f"SELECT id, region, day FROM {tbl} WHERE day = 10")
        r.describe(f"{tag}.describe_after_rename", f"DESCRIBE EXTENDED {tbl}")

    # ------------------------------------------------------------------ partitions DDL
    ext_part = os.path.join(wh, "ext_part_data")
    r.step("setup.ext_part_data", lambda: spark.createDataFrame(
        [(70, "x", 70.5, "ext")], "id INT, name STRING, score DOUBLE, note STRING"
    ).coalesce(1).write.mode("overwrite").parquet(ext_part) or "ok")
    dirs = {"ds": "events_r", "hive": "hevents_r"}
    for tag, tbl in (("ds", T), ("hive", H)):
        d = dirs[tag]
        r.sql(f"{tag}.drop_partition", f"ALTER TABLE {tbl} DROP PARTITION (region='ap-south', day=1)")
        r.exists(f"fs.{tag}.dropped_partition_dir", f"{DB}.db", d, "region=ap-south", "day=1")
        r.sql(f"err.{tag}.drop_partition_missing", f"ALTER TABLE {tbl} DROP PARTITION (region='ap-south', day=1)")
        r.sql(f"{tag}.drop_partition_if_exists",
              f"ALTER TABLE {tbl} DROP IF EXISTS PARTITION (region='ap-south', day=1)")
        r.sql(f"{tag}.drop_partition_partial", f"ALTER TABLE {tbl} DROP PARTITION (region='us-west')")
        r.query(f"{tag}.show_partitions_after_drop", f"SHOW PARTITIONS {tbl}")
        r.sql(f"{tag}.add_partition", f"ALTER TABLE {tbl} ADD PARTITION (region='new', day=5)")
        r.exists(f"fs.{tag}.added_partition_dir", f"{DB}.db", d, "region=new", "day=5")
        r.sql(f"err.{tag}.add_partition_existing", f"ALTER TABLE {tbl} ADD PARTITION (region='new', day=5)")
        r.sql(f"{tag}.add_partition_if_not_exists",
              f"ALTER TABLE {tbl} ADD IF NOT EXISTS PARTITION (region='new', day=5)")
        r.sql(f"{tag}.add_partitions_multi",
              f"ALTER TABLE {tbl} ADD PARTITION (region='ap-south', day=1) PARTITION (region='multi', day=6)")
        r.query(f"{tag}.select_readded_partition", f"SELECT * FROM {tbl} WHERE region = 'ap-south'")
        r.sql(f"{tag}.add_partition_location",
              f"ALTER TABLE {tbl} ADD PARTITION (region='ext', day=7) LOCATION '{ext_part}'")
        r.query(f"{tag}.select_location_partition",
                f"SELECT id, name, note, region, day FROM {tbl} WHERE region = 'ext'")
        r.describe(f"{tag}.describe_location_partition", f"DESCRIBE EXTENDED {tbl} PARTITION (region='ext', day=7)")
        r.sql(f"{tag}.rename_partition",
              f"ALTER TABLE {tbl} PARTITION (region='new', day=5) RENAME TO PARTITION (region='renamed', day=8)")
        r.exists(f"fs.{tag}.renamed_partition_old_dir", f"{DB}.db", d, "region=new", "day=5")
        r.exists(f"fs.{tag}.renamed_partition_new_dir", f"{DB}.db", d, "region=renamed", "day=8")
        r.sql(f"err.{tag}.rename_partition_missing",
              f"ALTER TABLE {tbl} PARTITION (region='nowhere', day=5) RENAME TO PARTITION (region='x', day=1)")
        r.query(f"{tag}.show_partitions_after_ddl", f"SHOW PARTITIONS {tbl}")
        r.filtered(f"filter.{tag}.after_ddl",
                   f"SELECT id, region, day FROM {tbl} WHERE day >= 5 OR region = 'ap-south'")

    # MSCK REPAIR: a partition directory created behind the metastore's back.
    r.step("setup.msck_dir", lambda: spark.createDataFrame(
        [(90, "z", 90.5, None)], "id INT, name STRING, score DOUBLE, note STRING"
    ).coalesce(1).write.mode("overwrite").parquet(
        os.path.join(wh, f"{DB}.db", "events_r", "region=found", "day=9")) or "ok")
    r.sql("ds.msck_repair", f"MSCK REPAIR TABLE {T}")
    r.query("ds.show_partitions_after_msck", f"SHOW PARTITIONS {T}")
    r.query("ds.select_after_msck", f"SELECT id, region, day FROM {T} WHERE region = 'found'")

    # ------------------------------------------------------------------ external + CTAS
    ext_tbl = os.path.join(wh, "ext_table_data")
    r.step("setup.ext_table_data", lambda: spark.createDataFrame(
        [(1, "one"), (2, "two")], "id INT, name STRING").coalesce(1).write.mode("overwrite").parquet(ext_tbl) or "ok")
    r.sql("ext.create_ds", f"CREATE TABLE {DB}.ext_ds (id INT, name STRING) USING parquet LOCATION '{ext_tbl}'")
    r.sql("ext.create_hive",
          f"CREATE EXTERNAL TABLE {DB}.ext_hive (id INT, name STRING) STORED AS PARQUET LOCATION '{ext_tbl}'")
    r.query("ext.select_ds", f"SELECT * FROM {DB}.ext_ds")
    r.query("ext.select_hive", f"SELECT * FROM {DB}.ext_hive")
    r.describe("ext.describe_hive", f"DESCRIBE EXTENDED {DB}.ext_hive")
    r.sql("ext.drop_ds", f"DROP TABLE {DB}.ext_ds")
    r.exists("fs.ext_data_after_drop_ds", "ext_table_data")
    r.sql("ctas.create", f"CREATE TABLE {DB}.ctas USING parquet AS SELECT id, name FROM {DB}.ext_hive WHERE id > 1")
    r.query("ctas.select", f"SELECT * FROM {DB}.ctas")
    r.sql("ctas.create_hive", f"CREATE TABLE {DB}.ctas_hive STORED AS PARQUET AS SELECT id, name FROM {DB}.ext_hive")
    r.query("ctas.select_hive", f"SELECT * FROM {DB}.ctas_hive")

    # ------------------------------------------------------------------ USE / unqualified names
    r.sql("use.db", f"USE {DB}")
    r.query("use.show_tables", "SHOW TABLES")
    r.query("use.select_unqualified", "SELECT count(*) FROM hevents_r")
    r.sql("use.default", "USE default")

    # ------------------------------------------------------------------ drops
    r.sql("err.drop_table_missing", f"DROP TABLE {DB}.nope")
    r.sql("drop_table_if_exists_missing", f"DROP TABLE IF EXISTS {DB}.nope")
    r.sql("err.select_missing_table", f"SELECT * FROM {DB}.nope")
    r.sql("err.drop_db_not_empty", f"DROP DATABASE {DB}")
    r.sql("ds.drop", f"DROP TABLE {T}")
    r.exists("fs.ds_dir_after_drop", f"{DB}.db", "events_r")
    r.sql("ds.recreate_same_name",
          f"CREATE TABLE {T} (id INT, region STRING) USING parquet PARTITIONED BY (region)")
    r.query("ds.select_recreated", f"SELECT * FROM {T}")
    r.query("ds.show_partitions_recreated", f"SHOW PARTITIONS {T}")
    r.sql("hive.drop", f"DROP TABLE {H}")
    r.exists("fs.hive_dir_after_drop", f"{DB}.db", "hevents_r")
    r.query("tables.show_after_drop", f"SHOW TABLES IN {DB}")
    r.sql("db.drop_cascade", f"DROP DATABASE {DB} CASCADE")
    r.exists("fs.db_dir_after_drop", f"{DB}.db")
    r.exists("fs.ext_data_after_drop_db", "ext_table_data")
    r.query("db.show_after_drop", "SHOW DATABASES LIKE 'acc*'")
    r.sql("err.drop_db_missing", f"DROP DATABASE {DB}")
    r.sql("drop_db_if_exists_missing", f"DROP DATABASE IF EXISTS {DB}")
    r.sql("err.create_table_missing_db", f"CREATE TABLE {DB}.t (id INT) USING parquet")


def build_spark(metastore_uri: str, warehouse: str):
    from pyspark.sql import SparkSession

    return (
        SparkSession.builder.master("local[2]")
        .appName("hms-acceptance")
        .config("spark.sql.catalogImplementation", "hive")
        .config("spark.hadoop.hive.metastore.uris", metastore_uri)
        .config("hive.metastore.uris", metastore_uri)
        .config("spark.sql.warehouse.dir", warehouse)
        .config("spark.sql.shuffle.partitions", "2")
        .config("spark.default.parallelism", "2")
        .config("spark.ui.enabled", "false")
        .config("spark.ui.showConsoleProgress", "false")
        .config("spark.sql.hive.metastorePartitionPruning", "true")
        .config("spark.sql.session.timeZone", "UTC")
        .config("spark.sql.sources.parallelPartitionDiscovery.threshold", "1000")
        .config("spark.hadoop.hive.metastore.client.socket.timeout", "120s")
        .config("spark.hadoop.hive.metastore.connect.retries", "2")
        .config("spark.hadoop.hive.exec.dynamic.partition.mode", "nonstrict")
        .config("spark.driver.memory", "1g")
        .getOrCreate()
    )


def quiet_python_loggers():
    """PySpark logs every captured SQL exception with its JVM stack; errors are results here."""
    try:
        from pyspark.logger import PySparkLogger

        for name in ("SQLQueryContextLogger", "DataFrameQueryContextLogger"):
            PySparkLogger.getLogger(name).disabled = True
    except Exception:  # cosmetic only
        pass


def main(argv=None) -> int:
    args = parse_args(argv)
    wh = os.path.abspath(args.warehouse)
    os.makedirs(wh, exist_ok=True)
    t0 = time.monotonic()
    spark = build_spark(args.metastore_uri, wh)
    spark.sparkContext.setLogLevel("ERROR")
    quiet_python_loggers()
    t_session = time.monotonic() - t0
    rec = Recorder(spark, wh, args.only)
    fatal = None
    try:
        run_steps(rec, spark, wh)
    except Exception as e:
        fatal = rec.error(e)["error"]
    out = {
        "steps": rec.steps,
        "meta": {
            "spark_version": spark.version,
            "metastore_uri": args.metastore_uri,
            "session_start_s": round(t_session, 2),
            "total_s": round(time.monotonic() - t0, 2),
            "timings": rec.timings,
            "like_filters": LIKE_FILTERS,
            "fatal": fatal,
        },
    }
    spark.stop()
    tmp = args.out + ".tmp"
    with open(tmp, "w") as f:
        json.dump(out, f, indent=1, sort_keys=False)
    shutil.move(tmp, args.out)
    return 1 if fatal else 0


if __name__ == "__main__":
    sys.exit(main())
