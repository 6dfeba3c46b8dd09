"""Trino 476's Hive connector against our server and the reference Hive Metastore 2.3.

One workload (DDL, inserts into many partitions of an ORC and a Parquet table, pruned queries,
the ``$partitions`` table, statistics, ``sync_partition_metadata``, ALTER, views, partition deletes,
drops) runs through the catalog ``hive`` (our server, per backend) and ``hive_ref`` (reference);
every step's result -- rows, EXPLAIN text, error -- must be the same. The tests below compare the
steps by topic, so one difference names its topic.
"""

from __future__ import annotations

import json
import shutil
import time
from pathlib import Path

import pytest

from tests.harness import REFERENCE_START, REPO_ROOT, recorded
from tests.harness.trino import ON_OUR_BACKENDS, error_text

pytestmark = [
    pytest.mark.slow,
]

SCHEMA = "trino_hive"
REGIONS = ("eu", "us", "ap", "sa")
DAYS = 7  # sales: 4 regions x 7 days = 28 partitions
KINDS = ("a", "b", "c")
BUCKETS = 5  # events: 3 kinds x 5 buckets = 15 partitions


def _ordered_plan(text: str) -> str:
    """An EXPLAIN in one order where Trino's varies from one JVM to the next: a scan's column
    assignments (text: `x := x:type:REGULAR` lines) and partition keys' constraints (text: each
    key's lines; JSON of TYPE IO: `columnConstraints`), each sorted by name."""
    if text.lstrip().startswith("{"):
        def order(node):
            if isinstance(node, dict):
                out = {k: order(v) for k, v in node.items()}
                if isinstance(out.get("columnConstraints"), list):
                    out["columnConstraints"] = sorted(out["columnConstraints"], key=lambda c: str(c.get("columnName")))
                return out
            return [order(v) for v in node] if isinstance(node, list) else node
        return json.dumps(order(json.loads(text)), indent=2)
    out: list[str] = []
    run: list[list[str]] = []  # blocks of one kind, sorted when the run ends
    kind = None
    for line in text.split("\n"):
        this = "key" if line.endswith(":PARTITION_KEY") else \
            "column" if line.endswith(":REGULAR") and " := " in line else None
        if this is not None and this == kind:
            run.append([line])
        elif this is None and kind == "key" and run and line.lstrip().startswith("::"):
            run[-1].append(line)
        else:
            out.extend(x for block in sorted(run) for x in block)
            run, kind = ([[line]], this) if this else ([], None)
            if this is None:
                out.append(line)
    out.extend(x for block in sorted(run) for x in block)
    return "\n".join(out)


class Workload:
    """Runs the steps on one engine's Hive catalog and records each result by name."""

    def __init__(self, engine, tmpdir: Path):
        self.engine, self.tmpdir = engine, tmpdir
        self.cat = engine.hive
        self.results: dict[str, object] = {}
        self.calls: dict[str, list[str]] = {}  # our server's failed calls during each step
        self.timings: dict[str, float] = {}

    def norm(self, value):
        """Catalog names and this run's directories replaced, so both engines' texts compare."""
        if isinstance(value, list):
            return [self.norm(v) for v in value]
        if isinstance(value, str):
            c = self.cat
            for a, b in ((f"{c}:{SCHEMA}:", "CATALOG:SCHEMA:"), (f"{c}.{SCHEMA}.", "CATALOG.SCHEMA."),
                         (f'"catalog" : "{c}"', '"catalog" : "CATALOG"'), (f"'{c}'", "'CATALOG'"),
                         (f"{c}.", "CATALOG."), (str(self.tmpdir), "TMP")):
                value = value.replace(a, b)
        return value

    def step(self, name: str, sql: str, columns: bool = False, session: dict | None = None) -> object:
        """Run ``sql`` (``{cat}``, ``{s}``, ``{tmp}`` filled in); ``columns``: the first row is
        the column names."""
        t = sql.replace("{cat}", self.cat).replace("{s}", SCHEMA).replace("{tmp}", str(self.tmpdir))
        offset = self.engine.log_offset()
        t0 = time.monotonic()
        session = {k.replace("{cat}", self.cat): v for k, v in (session or {}).items()}
        result = self.norm(self.engine.try_sql(t, columns=columns, session=session))
        if name.endswith((".explain", ".io")) and isinstance(result, list) and result and result[0]:
            result = [[_ordered_plan(result[0][0])]] + result[1:]
        self.timings[name] = time.monotonic() - t0
        self.results[name] = result
        calls = self.engine.failed_calls(offset)
        if calls:
            self.calls[name] = calls
        return result

    def slowest(self, n: int = 4) -> str:
        top = sorted(self.timings.items(), key=lambda kv: -kv[1])[:n]
        return ", ".join(f"{k} {v:.1f} s" for k, v in top)

    def explain(self, name: str, where: str, table: str = "sales") -> None:
        """Rows, EXPLAIN and the number of partitions matching ``where``."""
        cols = "count(*), sum(amount), min(id), max(id)" if table == "sales" else \
            "count(*), sum(score), min(id), max(id)"
        self.step(f"{name}.rows", f"SELECT {cols} FROM {{cat}}.{{s}}.{table} WHERE {where}")
        self.step(f"{name}.explain", f"EXPLAIN SELECT {cols} FROM {{cat}}.{{s}}.{table} WHERE {where}")
        self.step(f"{name}.io", f"EXPLAIN (TYPE IO, FORMAT JSON) SELECT {cols} FROM {{cat}}.{{s}}.{table} "
                                f"WHERE {where}")
        self.step(f"{name}.partitions",
                  f'SELECT count(*) FROM {{cat}}.{{s}}."{table}$partitions" WHERE {where}')

    def run(self) -> Workload:
        s = self.step
        t0 = time.monotonic()
        # ------------------------------------------------------------------ ddl: schema, tables
        s("ddl.create_schema", "CREATE SCHEMA {cat}.{s}")
        s("ddl.show_schemas", "SHOW SCHEMAS FROM {cat} LIKE '{s}'")
        s("ddl.create_orc", "CREATE TABLE {cat}.{s}.sales (id bigint, name varchar, amount double, "
                            "region varchar, day date) "
                            "WITH (format = 'ORC', partitioned_by = ARRAY['region', 'day'])")
        s("ddl.create_parquet", "CREATE TABLE {cat}.{s}.events (id bigint, payload varchar, score real, "
                                "kind varchar, bucket integer) "
                                "WITH (format = 'PARQUET', partitioned_by = ARRAY['kind', 'bucket'])")
        s("ddl.create_plain", "CREATE TABLE {cat}.{s}.plain (id bigint, v varchar) WITH (format = 'PARQUET')")
        s("ddl.create_existing", "CREATE TABLE {cat}.{s}.plain (id bigint)")
        regions = ", ".join(f"'{r}'" for r in REGIONS)
        s("write.insert_orc",
          f"INSERT INTO {{cat}}.{{s}}.sales SELECT i, 'n' || CAST(i AS varchar), i * 1.5, "
          f"element_at(ARRAY[{regions}], 1 + i % 4), date_add('day', i % {DAYS}, DATE '2024-01-01') "
          f"FROM UNNEST(sequence(1, 280)) AS t(i)")
        s("write.insert_orc_more",  # appends to existing partitions and adds one
          "INSERT INTO {cat}.{s}.sales VALUES (1001, 'x', 1.0, 'eu', DATE '2024-01-01'), "
          "(1002, 'y', 2.0, 'eu', DATE '2024-02-01')")
        s("write.insert_parquet",
          f"INSERT INTO {{cat}}.{{s}}.events SELECT i, 'p' || CAST(i AS varchar), CAST(i AS real) / 4, "
          f"element_at(ARRAY['a', 'b', 'c'], 1 + i % 3), i % {BUCKETS} FROM UNNEST(sequence(1, 150)) AS t(i)")
        s("write.insert_plain", "INSERT INTO {cat}.{s}.plain VALUES (1, 'one'), (2, 'two'), (3, NULL)")
        s("write.ctas", "CREATE TABLE {cat}.{s}.by_region WITH (format = 'PARQUET', "
                        "partitioned_by = ARRAY['region']) AS "
                        "SELECT count(*) AS n, sum(amount) AS total, region FROM {cat}.{s}.sales GROUP BY region")
        s("write.overwrite", "INSERT INTO {cat}.{s}.events VALUES (9001, 'ow', 1.5, 'a', 1), (9002, 'ow', 2.5, 'a', 1)",
          session={"{cat}.insert_existing_partitions_behavior": "OVERWRITE"})
        s("write.after_overwrite", "SELECT kind, bucket, count(*), min(id) FROM {cat}.{s}.events "
                                   "GROUP BY kind, bucket ORDER BY kind, bucket")
        s("write.select_ctas", "SELECT * FROM {cat}.{s}.by_region ORDER BY region")
        s("write.select_plain", "SELECT * FROM {cat}.{s}.plain ORDER BY id")
        s("write.select_sales", "SELECT id, name, amount, region, day FROM {cat}.{s}.sales "
                                "WHERE id % 37 = 0 OR id > 1000 ORDER BY id")
        s("write.select_events", "SELECT * FROM {cat}.{s}.events WHERE id % 29 = 0 ORDER BY id")
        s("ddl.show_tables", "SHOW TABLES FROM {cat}.{s}")
        s("ddl.show_create_orc", "SHOW CREATE TABLE {cat}.{s}.sales")
        s("ddl.show_create_parquet", "SHOW CREATE TABLE {cat}.{s}.events")
        s("ddl.show_columns", "SHOW COLUMNS FROM {cat}.{s}.events")
        s("ddl.information_schema",
          "SELECT table_name, column_name, ordinal_position, data_type FROM {cat}.information_schema.columns "
          "WHERE table_schema = '{s}' ORDER BY table_name, ordinal_position")
        # the property keys (values hold times and query ids)
        s("ddl.table_properties", 'SELECT * FROM {cat}.{s}."events$properties" LIMIT 0', columns=True)
        # ------------------------------------------------------------------ pruning
        self.explain("prune.varchar_eq", "region = 'eu'")
        self.explain("prune.varchar_in", "region IN ('us', 'ap')")
        self.explain("prune.varchar_range", "region > 'eu' AND region <= 'us'")
        self.explain("prune.date_eq", "day = DATE '2024-01-03'")
        self.explain("prune.date_in", "day IN (DATE '2024-01-02', DATE '2024-01-05', DATE '2024-03-01')")
        self.explain("prune.date_range", "day BETWEEN DATE '2024-01-02' AND DATE '2024-01-04'")
        self.explain("prune.both", "region IN ('eu', 'sa') AND day >= DATE '2024-01-06'")
        self.explain("prune.none", "region = 'nowhere'")
        self.explain("prune.int_eq", "bucket = 2", "events")
        self.explain("prune.int_in", "bucket IN (0, 3, 9)", "events")
        self.explain("prune.int_range", "bucket BETWEEN 1 AND 3 AND kind <> 'b'", "events")
        # ------------------------------------------------------------------ $partitions
        s("partitions.sales", 'SELECT * FROM {cat}.{s}."sales$partitions" ORDER BY region, day')
        s("partitions.events", 'SELECT * FROM {cat}.{s}."events$partitions" ORDER BY kind, bucket')
        s("partitions.by_region", 'SELECT * FROM {cat}.{s}."by_region$partitions" ORDER BY region')
        # ------------------------------------------------------------------ statistics
        s("stats.after_insert", "SHOW STATS FOR {cat}.{s}.sales")
        s("stats.drop", "CALL {cat}.system.drop_stats('{s}', 'sales')")
        s("stats.dropped", "SHOW STATS FOR {cat}.{s}.sales")
        s("stats.analyze", "ANALYZE {cat}.{s}.sales")
        s("stats.table", "SHOW STATS FOR {cat}.{s}.sales")
        s("stats.filtered", "SHOW STATS FOR (SELECT * FROM {cat}.{s}.sales WHERE region = 'eu')")
        s("stats.drop_events", "CALL {cat}.system.drop_stats('{s}', 'events')")
        s("stats.analyze_some", "ANALYZE {cat}.{s}.events WITH (partitions = "
                                "ARRAY[ARRAY['a', '1'], ARRAY['b', '2'], ARRAY['c', '0']])")
        s("stats.events_some", "SHOW STATS FOR {cat}.{s}.events")
        s("stats.events_one", "SHOW STATS FOR (SELECT * FROM {cat}.{s}.events WHERE kind = 'b' AND bucket = 2)")
        s("stats.analyze_plain", "ANALYZE {cat}.{s}.plain")
        s("stats.plain", "SHOW STATS FOR {cat}.{s}.plain")
        # ------------------------------------------------------------------ sync_partition_metadata
        ext = self.tmpdir / "ext"
        ext.mkdir(parents=True, exist_ok=True)
        s("sync.create_writer", "CREATE TABLE {cat}.{s}.ext_writer (id bigint, v varchar, p varchar) "
                                "WITH (external_location = 'file:{tmp}/ext', format = 'PARQUET', "
                                "partitioned_by = ARRAY['p'])")
        s("sync.fill", "INSERT INTO {cat}.{s}.ext_writer VALUES (1, 'a', 'x'), (2, 'b', 'y'), (3, 'c', 'z')")
        s("sync.create_reader", "CREATE TABLE {cat}.{s}.ext_reader (id bigint, v varchar, p varchar) "
                                "WITH (external_location = 'file:{tmp}/ext', format = 'PARQUET', "
                                "partitioned_by = ARRAY['p'])")
        s("sync.before", "SELECT * FROM {cat}.{s}.ext_reader ORDER BY id")
        s("sync.add", "CALL {cat}.system.sync_partition_metadata('{s}', 'ext_reader', 'ADD')")
        s("sync.after_add", "SELECT * FROM {cat}.{s}.ext_reader ORDER BY id")
        s("sync.partitions_after_add", 'SELECT * FROM {cat}.{s}."ext_reader$partitions" ORDER BY p')
        if (ext / "p=y").is_dir():  # storage changes behind the metastore's back
            shutil.rmtree(ext / "p=y")
            shutil.copytree(ext / "p=x", ext / "p=w")
        s("sync.full", "CALL {cat}.system.sync_partition_metadata('{s}', 'ext_reader', 'FULL')")
        s("sync.after_full", "SELECT * FROM {cat}.{s}.ext_reader ORDER BY p, id")
        s("sync.partitions_after_full", 'SELECT * FROM {cat}.{s}."ext_reader$partitions" ORDER BY p')
        s("sync.register", "CALL {cat}.system.register_partition('{s}', 'ext_writer', ARRAY['p'], ARRAY['w'])")
        s("sync.unregister", "CALL {cat}.system.unregister_partition('{s}', 'ext_writer', ARRAY['p'], ARRAY['z'])")
        s("sync.create_empty", "CALL {cat}.system.create_empty_partition('{s}', 'ext_writer', ARRAY['p'], "
                               "ARRAY['empty'])")
        s("sync.writer_partitions", 'SELECT * FROM {cat}.{s}."ext_writer$partitions" ORDER BY p')
        # ------------------------------------------------------------------ alter
        s("alter.add_column", "ALTER TABLE {cat}.{s}.sales ADD COLUMN note varchar")
        s("alter.insert_note", "INSERT INTO {cat}.{s}.sales VALUES (2001, 'z', 3.0, 'noted', 'us', DATE '2024-01-02')")
        s("alter.select_note", "SELECT id, note FROM {cat}.{s}.sales WHERE id IN (4, 2001) ORDER BY id")
        s("alter.rename_column", "ALTER TABLE {cat}.{s}.events RENAME COLUMN payload TO body")
        s("alter.select_renamed_column", "SELECT id, body FROM {cat}.{s}.events WHERE id < 4 ORDER BY id")
        s("alter.drop_column", "ALTER TABLE {cat}.{s}.plain DROP COLUMN v")
        s("alter.after_drop_column", "SELECT * FROM {cat}.{s}.plain ORDER BY id")
        s("alter.comment_table", "COMMENT ON TABLE {cat}.{s}.events IS 'events table'")
        s("alter.comment_column", "COMMENT ON COLUMN {cat}.{s}.events.score IS 'a score'")
        s("alter.comments", "SELECT table_name, comment FROM system.metadata.table_comments "
                            "WHERE catalog_name = '{cat}' AND schema_name = '{s}' ORDER BY table_name")
        s("alter.describe", "DESCRIBE {cat}.{s}.events")
        s("alter.rename_table", "ALTER TABLE {cat}.{s}.sales RENAME TO {cat}.{s}.sales2")
        s("alter.old_name", "SELECT count(*) FROM {cat}.{s}.sales")
        s("alter.new_name", "SELECT count(*), count(note) FROM {cat}.{s}.sales2")
        s("alter.new_name_partitions", 'SELECT count(*) FROM {cat}.{s}."sales2$partitions"')
        s("alter.pruned_after_rename", "SELECT count(*) FROM {cat}.{s}.sales2 WHERE region = 'us' "
                                       "AND day = DATE '2024-01-02'")
        s("alter.show_tables", "SHOW TABLES FROM {cat}.{s}")
        # ------------------------------------------------------------------ views
        s("view.create", "CREATE VIEW {cat}.{s}.per_region AS SELECT region, count(*) AS n, "
                         "sum(amount) AS total FROM {cat}.{s}.sales2 GROUP BY region")
        s("view.select", "SELECT * FROM {cat}.{s}.per_region ORDER BY region")
        s("view.filtered", "SELECT n FROM {cat}.{s}.per_region WHERE region = 'sa'")
        s("view.show_create", "SHOW CREATE VIEW {cat}.{s}.per_region")
        s("view.information_schema", "SELECT table_name, table_type FROM {cat}.information_schema.tables "
                                     "WHERE table_schema = '{s}' ORDER BY table_name")
        s("view.replace", "CREATE OR REPLACE VIEW {cat}.{s}.per_region AS SELECT region, count(*) AS n "
                          "FROM {cat}.{s}.sales2 WHERE day < DATE '2024-01-04' GROUP BY region")
        s("view.select_replaced", "SELECT * FROM {cat}.{s}.per_region ORDER BY region")
        s("view.rename", "ALTER VIEW {cat}.{s}.per_region RENAME TO {cat}.{s}.per_region2")
        s("view.select_renamed", "SELECT * FROM {cat}.{s}.per_region2 ORDER BY region")
        # ------------------------------------------------------------------ deletes
        s("delete.partition", "DELETE FROM {cat}.{s}.sales2 WHERE region = 'eu'")
        s("delete.partitions_range", "DELETE FROM {cat}.{s}.events WHERE bucket >= 3")
        s("delete.non_partition_column", "DELETE FROM {cat}.{s}.events WHERE id = 5")
        s("delete.after_sales", "SELECT region, count(*) FROM {cat}.{s}.sales2 GROUP BY region ORDER BY region")
        s("delete.after_events", "SELECT kind, bucket, count(*) FROM {cat}.{s}.events "
                                 "GROUP BY kind, bucket ORDER BY kind, bucket")
        s("delete.partitions_sales", 'SELECT * FROM {cat}.{s}."sales2$partitions" ORDER BY region, day')
        s("delete.partitions_events", 'SELECT * FROM {cat}.{s}."events$partitions" ORDER BY kind, bucket')
        s("delete.view_after", "SELECT * FROM {cat}.{s}.per_region2 ORDER BY region")
        s("delete.truncate", "TRUNCATE TABLE {cat}.{s}.plain")
        s("delete.after_truncate", "SELECT count(*) FROM {cat}.{s}.plain")
        # ------------------------------------------------------------------ drops
        s("drop.schema_not_empty", "DROP SCHEMA {cat}.{s}")
        s("drop.view", "DROP VIEW {cat}.{s}.per_region2")
        for t in ("sales2", "events", "plain", "by_region", "ext_writer", "ext_reader"):
            s(f"drop.table_{t}", f"DROP TABLE {{cat}}.{{s}}.{t}")
        s("drop.tables_left", "SHOW TABLES FROM {cat}.{s}")
        self.results["drop.external_data_kept"] = sorted(p.name for p in ext.iterdir() if p.is_dir())
        s("drop.schema", "DROP SCHEMA {cat}.{s}")
        s("drop.schemas_left", "SHOW SCHEMAS FROM {cat} LIKE '{s}'")
        self.seconds = round(time.monotonic() - t0, 1)
        return self


class Recorded:
    """The reference's answers to the workload (`Workload.results`), as recorded."""

    def __init__(self, results: dict[str, object]):
        self.results = results


# what the reference's answers depend on: the workload, the engine's harness, Trino, the reference
_SOURCES = [Path(__file__), REPO_ROOT / "tests" / "harness" / "trino.py", REPO_ROOT / "tools" / "trino.py",
            REFERENCE_START]


@pytest.fixture(scope="session")  # once per run, whichever backend comes first
def ref_workload(request, tmp_path_factory):
    """The workload's answers on the reference HMS: recorded in tests/fixtures (tests/harness/
    recorded.py; about 60 s of Trino against the reference when run)."""
    def live() -> dict[str, object]:
        w = Workload(request.getfixturevalue("trino_ref"), tmp_path_factory.mktemp("trino-hive-ref")).run()
        print(f"\nhive workload on the reference: {w.seconds} s; slowest: {w.slowest()}")
        return w.results

    return Recorded(recorded.reference(
        "trino_hive_reference", recorded.digest(_SOURCES), live,
        differing=lambda a, b: sorted(k for k in set(a) | set(b) if a.get(k) != b.get(k))))


@pytest.fixture(scope="module")
def our_workload(trino_ours, tmp_path_factory):
    w = Workload(trino_ours, tmp_path_factory.mktemp("trino-hive-ours")).run()
    print(f"\nhive workload on {trino_ours.name}: {w.seconds} s; slowest: {w.slowest()}")
    return w


def compare(ours: Workload, ref: Recorded, prefix: str) -> None:
    keys = [k for k in ref.results if k.startswith(prefix + ".")]
    assert keys, f"no steps named {prefix}.*"
    diffs = []
    for k in keys:
        if recorded.canonical(ours.results.get(k)) != ref.results[k]:
            calls = "; ".join(ours.calls.get(k, [])) or "none"
            diffs.append(f"step {k}:\n  ours: {ours.results.get(k)!r}\n  ref:  {ref.results[k]!r}\n"
                         f"  our server's failed calls: {calls}")
    assert not diffs, f"{len(diffs)} of {len(keys)} {prefix} steps differ from the reference:\n" + \
        "\n".join(diffs)


# Statements that fail on the reference too (the comparison checks ours fails the same way).
EXPECTED_ERRORS = {
    "ddl.create_existing": "TABLE_ALREADY_EXISTS",
    "alter.old_name": "TABLE_NOT_FOUND",
    "delete.non_partition_column": "NOT_SUPPORTED",  # row-level delete: transactional tables only
    "delete.truncate": "NOT_SUPPORTED",  # the Hive connector does not truncate
    "drop.schema_not_empty": "SCHEMA_NOT_EMPTY",
}


def test_ordered_plan_sorts_what_varies_between_jvms():
    """Two JVMs' orders of a scan's column assignments and key constraints give one text."""
    scan = ["    └─ TableScan[table = CATALOG:SCHEMA:sales]", "           Layout: [id:bigint, amount:double]"]
    cols = ["           id := id:bigint:REGULAR", "           amount := amount:double:REGULAR"]
    keys = [["           region:string:PARTITION_KEY", "               :: [[eu], [sa]]"],
            ["           day:date:PARTITION_KEY", "               :: [[2024-01-06]]"]]
    one = "\n".join(scan + cols + keys[0] + keys[1] + ["", "Fragment 2"])
    other = "\n".join(scan + cols[::-1] + keys[1] + keys[0] + ["", "Fragment 2"])
    assert _ordered_plan(one) == _ordered_plan(other) == other
    assert _ordered_plan(scan[0]) == scan[0]


@ON_OUR_BACKENDS  # (not used here: keeps the test among the other Trino tests of a run)
def test_hive_reference_workload_sane(ref_workload, backend_url):
    """Every step that fails on the reference is meant to (so equal errors hide no test bug)."""
    errors = {k: v for k, v in ref_workload.results.items() if isinstance(v, str) and v.startswith("ERROR")}
    assert {k: v.split()[1].rstrip(":") for k, v in errors.items()} == EXPECTED_ERRORS, errors


@ON_OUR_BACKENDS
def test_hive_ddl_and_writes(our_workload, ref_workload):
    compare(our_workload, ref_workload, "ddl")
    compare(our_workload, ref_workload, "write")
    assert ref_workload.results["write.insert_orc"] == [[280]]
    assert not str(ref_workload.results["ddl.create_orc"]).startswith("ERROR")


@ON_OUR_BACKENDS
def test_hive_partition_pruning(our_workload, ref_workload):
    compare(our_workload, ref_workload, "prune")
    r = our_workload.results
    # the scan carries the partition-key constraint and only the matching partitions are counted
    assert "region:string:PARTITION_KEY\n               :: [[eu]]" in r["prune.varchar_eq.explain"][0][0]
    assert ":: [[2024-01-02], [2024-01-03], [2024-01-04]]" in r["prune.date_range.explain"][0][0]
    assert "bucket:int:PARTITION_KEY\n               :: [[0], [3]]" in r["prune.int_in.explain"][0][0]
    expected = {"varchar_eq": DAYS + 1, "varchar_in": 2 * DAYS, "date_eq": 4, "date_range": 12,
                "both": 5, "none": 0, "int_eq": 3, "int_in": 6, "int_range": 6}
    for name, n in expected.items():
        assert r[f"prune.{name}.partitions"] == [[n]], name


@ON_OUR_BACKENDS
def test_hive_partitions_table(our_workload, ref_workload):
    compare(our_workload, ref_workload, "partitions")
    assert len(our_workload.results["partitions.sales"]) == len(REGIONS) * DAYS + 1
    assert len(our_workload.results["partitions.events"]) == len(KINDS) * BUCKETS


@ON_OUR_BACKENDS
def test_hive_statistics(our_workload, ref_workload):
    compare(our_workload, ref_workload, "stats")
    rows = our_workload.results["stats.table"]
    assert rows[-1][4] == 282.0, rows  # row count after ANALYZE


@ON_OUR_BACKENDS
def test_hive_sync_partition_metadata(our_workload, ref_workload):
    compare(our_workload, ref_workload, "sync")
    assert [p[0] for p in our_workload.results["sync.partitions_after_full"]] == ["w", "x", "z"]


@ON_OUR_BACKENDS
def test_hive_alter(our_workload, ref_workload):
    compare(our_workload, ref_workload, "alter")


@ON_OUR_BACKENDS
def test_hive_views(our_workload, ref_workload):
    compare(our_workload, ref_workload, "view")


@ON_OUR_BACKENDS
def test_hive_delete_partitions(our_workload, ref_workload):
    compare(our_workload, ref_workload, "delete")
    assert [r[0] for r in our_workload.results["delete.after_sales"]] == ["ap", "sa", "us"]


@ON_OUR_BACKENDS
def test_hive_drop(our_workload, ref_workload):
    compare(our_workload, ref_workload, "drop")
    assert our_workload.results["drop.schemas_left"] == []


# --------------------------------------------------------------------------- SQL-standard security

SQLSTD_ROLE = "sqlstd_readers"  # roles are global in a metastore: the shared reference keeps none after the test


def _sql_standard_steps(engine, client, tmp: Path, schema: str) -> dict[str, object]:
    """Trino's `hive.security=sql-standard` over one metastore: an owner creates, inserts, grants and
    revokes; a grantee reads and writes as granted, directly and through a role an admin made; each
    step's rows or error (the privileges Trino checks are the metastore's)."""
    from thrift_idl.hive_metastore.ttypes import Database, PrincipalType
    from tools.trino import catalog_properties

    cat = f"hive_sqlstd{engine.suffix}"
    engine.server.create_catalogs({cat: {**catalog_properties("hive", f"thrift://127.0.0.1:{engine.metastore_port}"),
                                         "hive.security": "sql-standard"}})
    client.create_database(Database(name=schema, locationUri=f"file:{tmp}/{schema}.db", parameters={},
                                    ownerName="alice", ownerType=PrincipalType.USER))
    client.grant_role("admin", "hms_admin", PrincipalType.USER, "hms_admin", PrincipalType.USER, False)
    results: dict[str, object] = {}

    def step(name: str, user: str, sql: str, admin: bool = False, post=None) -> None:
        conn = engine.server.connect(user=user, **({"roles": {cat: "admin"}} if admin else {}))
        try:
            cur = conn.cursor()
            cur.execute(sql.replace("{cat}", cat).replace("{s}", schema))
            rows = [[v.replace(cat, "CATALOG") if isinstance(v, str) else v for v in r] for r in cur.fetchall()]
            results[name] = post(rows) if post else rows
        except Exception as e:  # noqa: BLE001 - recorded as the step's result
            results[name] = error_text(e).split(":")[0]
        finally:
            conn.close()

    t = "{cat}.{s}.t"
    try:
        step("create", "alice", f"CREATE TABLE {t} (a integer, p varchar) WITH (partitioned_by = ARRAY['p'])")
        step("owner_insert", "alice", f"INSERT INTO {t} VALUES (1, 'x'), (2, 'y')")
        step("owner_select", "alice", f"SELECT * FROM {t} ORDER BY a")
        step("owner_grants", "alice", f"SHOW GRANTS ON TABLE {t}", post=sorted)
        step("grantee_denied", "bob", f"SELECT count(*) FROM {t}")
        step("grant_select", "alice", f"GRANT SELECT ON {t} TO USER bob")
        step("grantee_select", "bob", f"SELECT count(*) FROM {t}")
        step("grantee_insert_denied", "bob", f"INSERT INTO {t} VALUES (3, 'z')")
        step("grant_insert", "alice", f"GRANT INSERT ON {t} TO USER bob WITH GRANT OPTION")
        step("grantee_insert", "bob", f"INSERT INTO {t} VALUES (3, 'z')")
        step("table_privileges", "alice", "SELECT grantor, grantee, table_name, privilege_type, is_grantable "
                                          "FROM {cat}.information_schema.table_privileges WHERE table_schema = '{s}'",
             post=sorted)
        step("revoke_select", "alice", f"REVOKE SELECT ON {t} FROM USER bob")
        step("grantee_revoked", "bob", f"SELECT count(*) FROM {t}")
        step("role_grants", "bob", "SHOW ROLE GRANTS FROM {cat}", post=sorted)
        step("current_roles", "bob", "SHOW CURRENT ROLES FROM {cat}", post=sorted)
        step("create_role_denied", "bob", f"CREATE ROLE {SQLSTD_ROLE} IN {{cat}}")
        step("create_role", "hms_admin", f"CREATE ROLE {SQLSTD_ROLE} IN {{cat}}", admin=True)
        step("grant_role", "hms_admin", f"GRANT {SQLSTD_ROLE} TO USER bob IN {{cat}}", admin=True)
        step("grant_to_role", "alice", f"GRANT SELECT ON {t} TO ROLE {SQLSTD_ROLE}")
        step("select_by_role", "bob", f"SELECT count(*) FROM {t}")
        step("role_grants_after", "bob", "SHOW ROLE GRANTS FROM {cat}", post=sorted)
        step("roles", "hms_admin", "SHOW ROLES FROM {cat}", admin=True,
             post=lambda rows: sorted(r for r in rows if r[0] in ("admin", "public", SQLSTD_ROLE)))
        step("drop_role", "hms_admin", f"DROP ROLE {SQLSTD_ROLE} IN {{cat}}", admin=True)
        step("drop_table", "alice", f"DROP TABLE {t}")
    finally:
        for cleanup in (lambda: client.drop_role(SQLSTD_ROLE), lambda: client.drop_database(schema, True, True),
                        lambda: client.revoke_role("admin", "hms_admin", PrincipalType.USER)):
            try:
                cleanup()
            except Exception:  # noqa: BLE001 - already gone
                pass
        engine.server.drop_catalogs([cat])
    return results


@ON_OUR_BACKENDS
@pytest.mark.backends("sqlite")  # the privileges are the store's, the same on every backend
def test_hive_sql_standard_security(trino_ours, trino_ref, thrift_client, tmp_path):
    """Trino with hive.security=sql-standard answers on our server as on the reference, step by step:
    the owner's grants from create_table (Hive stores them), `public` among a user's roles."""
    ref = _sql_standard_steps(trino_ref, thrift_client(trino_ref.metastore_port), tmp_path / "ref", "sqlstd")
    ours = _sql_standard_steps(trino_ours, thrift_client(trino_ours.metastore_port), tmp_path / "ours", "sqlstd")
    # the workload means something on the reference: the owner inserts, the grantee is refused, then not
    assert ref["owner_insert"] == [[2]] and ref["grantee_denied"] == "ERROR PERMISSION_DENIED", ref
    assert ref["grantee_select"] == [[2]] and ref["select_by_role"] == [[3]], ref
    diffs = {k: (ours.get(k), v) for k, v in ref.items() if ours.get(k) != v}
    assert not diffs, "steps differing from the reference (ours, reference):\n" + \
        "\n".join(f"  {k}: {o!r} / {r!r}" for k, (o, r) in diffs.items())
