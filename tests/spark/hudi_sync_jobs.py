"""Apache Hudi's own writers with hive sync (`hms` mode) into our server, no import command: one
Spark session (Hudi's Spark 3.5 bundle, run by tests/test_hudi_sync_spark.py) does every step.

Tables: `cow_ds` and `mor_ds` written by the datasource (insert, upsert, delete, delete_partition,
insert_overwrite; cleaning keeps one commit; the MOR table compacts inline every 2 delta commits),
`cow_sql` and `mor_sql` by Spark SQL (CREATE TABLE ... USING hudi, INSERT, MERGE INTO, UPDATE, DELETE,
then Hudi's table service procedures, each followed by an INSERT whose sync catches both up:
`run_clustering`, `run_compaction` (merge-on-read), `run_clean`, `create_savepoint` (then writes),
`rollback_to_savepoint`, `delete_savepoint`; Hudi's metadata table on, as by default). After every
step the script records what the test compares:
a copy of the table's storage (for hudi-rs's file-system view), the server's `list-files --json`
and `validate` (our CLI, run with --cli-python, in one interpreter for all steps), `lookup-keys --json`
of every key Hudi's reader reads, and those rows.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import time
import traceback

sys.path.insert(0, os.path.dirname(__file__))
from hudi_spark_jobs import rows, session  # noqa: E402

SCHEMA = "id long, fare double, ts long, city string"
#: the keys every step looks up: each id the script writes (0 to 12), and one no table has
KEYS = [str(i) for i in range(13)] + ["no-such-key"]


class Recorder:
    def __init__(self, spark, args):
        self.spark, self.args = spark, args
        self.steps: list[dict] = []
        self.snapshots = os.path.join(os.path.dirname(os.path.abspath(args.out)), "snapshots")
        self._loop: subprocess.Popen | None = None

    def cli(self, *argv: str) -> tuple[int, str, str]:
        """`python -m adapter.cli ARGV --metastore URI`, run in one interpreter kept for every step
        (tests/harness/cli_loop.py); a process of its own if that one does not answer."""
        args = [*argv, "--metastore", self.args.metastore_uri]
        try:
            if self._loop is None or self._loop.poll() is not None:
                self._loop = subprocess.Popen([self.args.cli_python, "-m", "tests.harness.cli_loop"], text=True,
                                              stdin=subprocess.PIPE, stdout=subprocess.PIPE)
            assert self._loop.stdin is not None and self._loop.stdout is not None
            self._loop.stdin.write(json.dumps(args) + "\n")
            self._loop.stdin.flush()
            answer = json.loads(self._loop.stdout.readline())
            return answer["rc"], answer["out"], answer["err"]
        except (OSError, ValueError, AssertionError):
            self.close()
        r = subprocess.run([self.args.cli_python, "-m", "adapter.cli", *args],
                           capture_output=True, text=True, timeout=300, stdin=subprocess.DEVNULL)
        return r.returncode, r.stdout, r.stderr

    def close(self) -> None:
        loop, self._loop = self._loop, None
        if loop is not None:
            if loop.stdin is not None:
                loop.stdin.close()
            try:
                loop.wait(timeout=30)
            except subprocess.TimeoutExpired:
                loop.kill()

    def server_instants(self, db_table: str) -> list | None:
        """The server's timeline of db.table: [time, action, state] (our client, run with --cli-python)."""
        db, table = db_table.split(".")
        code = ("import json, sys; from client import HudiCatalog\n"
                "with HudiCatalog(sys.argv[1]) as c:\n"
                "    print(json.dumps([[i.ts, i.action, i.state] for i in c.list_instants(sys.argv[2], sys.argv[3])]))")
        r = subprocess.run([self.args.cli_python, "-c", code, self.args.metastore_uri, db, table],
                           capture_output=True, text=True, timeout=300, stdin=subprocess.DEVNULL)
        return json.loads(r.stdout) if r.returncode == 0 else None

    def step(self, table: str, name: str, base: str, run, read_rows: bool = False, **facts) -> None:
        """Runs a step and its checks: the server's file listing, `validate`, `lookup-keys` of every
        key the script ever writes; with `read_rows` Hudi's reader reads the table (the last step of
        each table and the savepoint steps: the test compares those rows)."""
        rec: dict = {"table": table, "step": name}
        start = time.monotonic()
        try:
            rec.update(run() or {})
        except Exception as e:  # noqa: BLE001 - reported, the test fails on it
            rec["error"] = f"{type(e).__name__}: {e}"[:3000]
            rec["trace"] = traceback.format_exc()[-3000:]
        snap = os.path.join(self.snapshots, table, f"{len(self.steps):02d}_{name}")
        shutil.copytree(base, snap, ignore=shutil.ignore_patterns("*.crc"))
        rec["snapshot"] = snap
        db_table = f"{self.args.db}.{table}"
        rc, out, err = self.cli("list-files", db_table, "--json")
        rec["list_files"] = json.loads(out) if rc == 0 else None
        rec["list_files_error"] = err[-2000:] if rc else None
        rec["validate_rc"], vout, verr = self.cli("validate", db_table)
        rec["validate_out"] = (vout + verr)[-3000:]
        if read_rows:
            try:
                rec["rows"] = rows(self.spark.read.format("hudi").load(base))
            except Exception as e:  # noqa: BLE001
                rec["rows_error"] = f"{type(e).__name__}: {e}"[:2000]
        rec["asked"] = KEYS
        rc, out, err = self.cli("lookup-keys", db_table, *KEYS, "--json")
        rec["lookup"] = json.loads(out) if rc == 0 else None
        rec["lookup_error"] = err[-2000:] if rc else None
        if facts.get("instants"):
            rec["instants"] = self.server_instants(db_table)
        rec["seconds"] = round(time.monotonic() - start, 1)  # the step and its checks
        self.steps.append(rec)


def ds_write(df, args, name: str, ttype: str, op: str, base: str, extra: dict | None = None) -> None:
    opts = {"hoodie.table.name": name, "hoodie.datasource.write.table.type": ttype,
            "hoodie.datasource.write.operation": op, "hoodie.datasource.write.recordkey.field": "id",
            "hoodie.datasource.write.precombine.field": "ts", "hoodie.datasource.write.partitionpath.field": "city",
            "hoodie.datasource.write.keygenerator.class": "org.apache.hudi.keygen.SimpleKeyGenerator",
            "hoodie.datasource.write.hive_style_partitioning": "true",
            "hoodie.datasource.hive_sync.enable": "true", "hoodie.datasource.hive_sync.mode": "hms",
            "hoodie.datasource.hive_sync.metastore.uris": args.metastore_uri,
            "hoodie.datasource.hive_sync.database": args.db, "hoodie.datasource.hive_sync.table": name,
            "hoodie.datasource.hive_sync.partition_fields": "city",
            "hoodie.datasource.hive_sync.partition_extractor_class": "org.apache.hudi.hive.MultiPartKeysValueExtractor",
            "hoodie.metadata.enable": "false", "hoodie.parquet.small.file.limit": "0",
            "hoodie.clean.commits.retained": "1", "hoodie.cleaner.commits.retained": "1",
            "hoodie.keep.min.commits": "3", "hoodie.keep.max.commits": "4", **(extra or {})}
    if ttype == "MERGE_ON_READ":  # (inline compaction fails a copy-on-write table's post-commit, and its sync)
        opts.update({"hoodie.compact.inline": "true", "hoodie.compact.inline.max.delta.commits": "2"})
    df.write.format("hudi").options(**opts).mode("append").save(base)


def datasource_tables(spark, args, rec: Recorder) -> None:
    for name, ttype in (("cow_ds", "COPY_ON_WRITE"), ("mor_ds", "MERGE_ON_READ")):
        datasource_table(spark, args, rec, name, ttype)


def datasource_table(spark, args, rec: Recorder, name: str, ttype: str) -> None:
    df = lambda data: spark.createDataFrame(data, SCHEMA)  # noqa: E731
    base = os.path.join(args.warehouse, "ext", name)
    rec.step(name, "insert", base, lambda: ds_write(
        df([(i, float(i), 1, ("sf", "nyc", "la")[i % 3]) for i in range(9)]), args, name, ttype, "insert", base))
    rec.step(name, "upsert", base, lambda: ds_write(
        df([(1, 10.0, 2, "nyc"), (9, 9.0, 2, "sea")]), args, name, ttype, "upsert", base))
    rec.step(name, "upsert2", base, lambda: ds_write(
        df([(3, 30.0, 3, "sf"), (4, 40.0, 3, "nyc")]), args, name, ttype, "upsert", base))
    rec.step(name, "delete", base, lambda: ds_write(df([(2, 0.0, 4, "la")]), args, name, ttype, "delete", base))
    rec.step(name, "delete_partition", base, lambda: ds_write(
        df([(0, 0.0, 5, "sea")]), args, name, ttype, "delete_partition", base,
        {"hoodie.datasource.write.partitions.to.delete": "city=sea"}))
    rec.step(name, "insert_overwrite", base, lambda: ds_write(
        df([(11, 110.0, 6, "la"), (12, 120.0, 6, "la")]), args, name, ttype, "insert_overwrite", base))
    rec.step(name, "upsert3", base, lambda: ds_write(
        df([(5, 50.0, 7, "la"), (6, 60.0, 7, "sf")]), args, name, ttype, "upsert", base), read_rows=True)


def sql_tables(spark, args, rec: Recorder) -> None:
    db = args.db
    spark.sql(f"CREATE DATABASE IF NOT EXISTS {db}")
    for name, kind in (("cow_sql", "cow"), ("mor_sql", "mor")):
        sql_table(spark, args, rec, name, kind)


def sql_table(spark, args, rec: Recorder, name: str, kind: str) -> None:
    base = os.path.join(args.warehouse, "ext", name)
    t = f"{args.db}.{name}"
    rec.step(name, "create", base, lambda: spark.sql(
        f"CREATE TABLE {t} (id bigint, fare double, ts bigint, city string) USING hudi "
        f"PARTITIONED BY (city) LOCATION '{base}' "
        f"TBLPROPERTIES (type = '{kind}', primaryKey = 'id', preCombineField = 'ts')"))
    rec.step(name, "insert", base, lambda: spark.sql(
        f"INSERT INTO {t} VALUES (1, 1.0, 1, 'sf'), (2, 2.0, 1, 'nyc'), (3, 3.0, 1, 'la'), (4, 4.0, 1, 'sf')"))
    rec.step(name, "merge", base, lambda: spark.sql(
        f"MERGE INTO {t} AS d USING (SELECT CAST(2 AS BIGINT) AS id, CAST(20.0 AS DOUBLE) AS fare, "
        "CAST(2 AS BIGINT) AS ts, 'nyc' AS city UNION ALL "
        "SELECT CAST(5 AS BIGINT), CAST(5.0 AS DOUBLE), CAST(2 AS BIGINT), 'sea') AS s ON d.id = s.id "
        "WHEN MATCHED THEN UPDATE SET * WHEN NOT MATCHED THEN INSERT *"))
    rec.step(name, "update", base, lambda: spark.sql(f"UPDATE {t} SET fare = fare * 10, ts = 3 WHERE id = 1"))
    rec.step(name, "delete", base, lambda: spark.sql(f"DELETE FROM {t} WHERE id = 3"))
    rec.step(name, "insert2", base, lambda: spark.sql(f"INSERT INTO {t} VALUES (6, 6.0, 4, 'la')"))

    def cluster_then_insert():  # a table service run by Hudi's procedure syncs nothing: the next write's sync does
        spark.sql(f"CALL run_clustering(table => '{t}')").collect()
        spark.sql(f"INSERT INTO {t} VALUES (7, 7.0, 5, 'sf')")

    rec.step(name, "cluster_insert", base, cluster_then_insert)
    table_services(spark, rec, name, kind, t, base)


def table_services(spark, rec: Recorder, name: str, kind: str, t: str, base: str) -> None:
    """Hudi's compaction, clean, savepoint, restore and savepoint deletion procedures on a Spark SQL
    table, each followed by an INSERT (its hive sync makes the server catch up). A step's `saved` is
    the savepoint's instant time, `instants` the server's timeline after it."""
    saved: dict = {}

    def latest_commit() -> str:  # the newest completed commit or deltacommit on the timeline (layout 2)
        tdir = os.path.join(base, ".hoodie", "timeline")
        return max(n.split("_")[0] for n in os.listdir(tdir) if "_" in n and n.endswith((".commit", ".deltacommit")))

    if kind == "mor":
        def compact_then_insert():
            spark.sql(f"CALL run_compaction(op => 'schedule', table => '{t}')").collect()
            spark.sql(f"CALL run_compaction(op => 'run', table => '{t}')").collect()
            spark.sql(f"INSERT INTO {t} VALUES (8, 8.0, 6, 'nyc')")

        rec.step(name, "compact_insert", base, compact_then_insert)

    def clean_then_insert():
        spark.sql(f"CALL run_clean(table => '{t}', retain_commits => 1)").collect()
        spark.sql(f"INSERT INTO {t} VALUES (9, 9.0, 7, 'la')")

    rec.step(name, "clean_insert", base, clean_then_insert)

    def savepoint_then_writes():  # the writes after the savepoint: an insert and an update
        saved["ts"] = latest_commit()
        spark.sql(f"CALL create_savepoint(table => '{t}', commit_time => '{saved['ts']}')").collect()
        spark.sql(f"INSERT INTO {t} VALUES (10, 10.0, 8, 'sf')")
        spark.sql(f"UPDATE {t} SET fare = fare + 1, ts = 9 WHERE id = 9")
        return {"saved": saved["ts"]}

    rec.step(name, "savepoint_writes", base, savepoint_then_writes, read_rows=True, instants=True)

    def restore_then_insert():
        spark.sql(f"CALL rollback_to_savepoint(table => '{t}', instant_time => '{saved['ts']}')").collect()
        spark.sql(f"INSERT INTO {t} VALUES (11, 11.0, 10, 'la')")
        return {"saved": saved["ts"]}

    rec.step(name, "restore_insert", base, restore_then_insert, read_rows=True, instants=True)

    def delete_savepoint_then_insert():
        spark.sql(f"CALL delete_savepoint(table => '{t}', instant_time => '{saved['ts']}')").collect()
        spark.sql(f"INSERT INTO {t} VALUES (12, 12.0, 11, 'nyc')")
        return {"saved": saved["ts"]}

    rec.step(name, "delete_savepoint_insert", base, delete_savepoint_then_insert, read_rows=True, instants=True)


def main() -> int:
    p = argparse.ArgumentParser()
    p.add_argument("--metastore-uri", required=True)
    p.add_argument("--warehouse", required=True)
    p.add_argument("--out", required=True)
    p.add_argument("--db", default="hudi_sync")
    p.add_argument("--cli-python", required=True, help="the interpreter that runs our CLI (adapter.cli)")
    args = p.parse_args()
    spark = session(args.metastore_uri, args.warehouse)
    rec = Recorder(spark, args)
    result: dict = {}
    for part in (datasource_tables, sql_tables):
        try:
            part(spark, args, rec)
        except Exception as e:  # noqa: BLE001
            result.setdefault("errors", []).append(f"{part.__name__}: {type(e).__name__}: {e}"[:3000])
    result["steps"] = rec.steps
    rec.close()
    spark.stop()
    with open(args.out, "w") as f:
        json.dump(result, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
