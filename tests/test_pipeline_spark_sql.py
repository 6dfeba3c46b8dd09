"""Spark SQL (Hive catalog on our server, no Hudi jars) reflects each commit of pipeline.write:
SHOW TABLES, SHOW PARTITIONS (new partitions at once, dropped by delete_partition) and DESCRIBE
(meta columns first, added columns after a schema evolution). On sqlite the same
Spark 4 session then calls `pipeline.register(spark)` and queries tables registered as hive-sync
does (provider `hudi`) in plain SQL: the rows equal `pipeline.read`'s and hudi-rs's, the data source
opens only the files the server's pruning leaves, and DESCRIBE / SHOW PARTITIONS answer."""

from __future__ import annotations

import os

import pytest

from tests.harness.spark import run_spark_script
from tests.pipeline_helpers import base_dir, hudi_rs

# one worker runs the file: each backend's script (the module fixture `sql_run`) runs once, not once per worker
# Spark SQL's view of the server on SQLite, where the data source runs too (every backend in the
# thorough run; the catalog answers Spark reads are conformance-tested on all three)
pytestmark = [pytest.mark.spark, pytest.mark.slow, pytest.mark.xdist_group("pipeline-spark-sql"),
              pytest.mark.backends_in_turn("sqlite")]
SCRIPT = os.path.join(os.path.dirname(__file__), "spark", "pipeline_sql.py")
META = ["_hoodie_commit_time", "_hoodie_commit_seqno", "_hoodie_record_key", "_hoodie_partition_path",
        "_hoodie_file_name"]
# the data source's own code does not depend on the store; the server's pruning is checked on every
# backend by test_pipeline_read_filters
DATASOURCE_BACKENDS = ("sqlite",)
PART, FLAT = "pipe_sql.ds_part", "pipe_sql.ds_flat"


@pytest.fixture(scope="module")
def sql_run(our_server_info, tmp_path_factory):
    """One Spark script per backend: every step, observations as JSON."""
    tmp = tmp_path_factory.mktemp("pipeline-sql")
    backend = our_server_info.db_url.split(":", 1)[0].split("+", 1)[0]
    extra = ["--datasource"] if backend in DATASOURCE_BACKENDS else []
    return run_spark_script(SCRIPT, our_server_info.port, tmp / "wh", tmp / "out.json", extra_args=extra)


def test_spark_sql_reflects_each_pipeline_commit(sql_run):
    out = sql_run
    s = out["steps"]
    assert all(step["tables"] == ["trips"] for step in s.values())
    assert s["1.insert"]["partitions"] == ["city=nyc/day=1", "city=sf/day=1"]
    assert s["2.upsert_new_partition_and_column"]["partitions"] == ["city=nyc/day=1", "city=sf/day=1", "city=sf/day=2"]
    assert s["3.delete_partition"]["partitions"] == ["city=sf/day=1", "city=sf/day=2"]
    assert s["4.insert_overwrite_new_partition"]["partitions"] == ["city=la/day=7", "city=sf/day=1", "city=sf/day=2"]
    d1 = s["1.insert"]["describe"]
    assert [c for c, _ in d1][:5] == META
    assert ["fare", "double"] in d1 and ["day", "int"] in d1 and "note" not in [c for c, _ in d1]
    assert ["note", "string"] in s["2.upsert_new_partition_and_column"]["describe"]
    assert [x["rows"] for x in s.values()] == [2, 3, 2, 3]
    # registered as hive-sync does by default: Spark without the Hudi bundle refuses the table
    # (its folder holds 9 rows in old file versions for 4 live ones) instead of reading every file
    stale = out["stale_read"]
    assert stale["pipeline_rows"] == 4 and stale["properties"] == {"spark.sql.sources.provider": "hudi"}
    for how in ("table", "sql"):
        assert "error" in stale[how], stale[how]
        assert "hudi" in stale[how]["error"].lower() and "data source" in stale[how]["error"].lower(), stale[how]


# --- pipeline.register(spark): the `hudi` data source ---------------------------------------------


@pytest.fixture(scope="module")
def ds(sql_run):
    return sql_run["datasource"]


@pytest.mark.backends(*DATASOURCE_BACKENDS)
def test_sql_equals_pipeline_read(ds):
    for query, got in ds["queries"].items():
        assert got["sql"] == got["read"], query
    # several commits with deletes: id 1 updated, 3 and 4 deleted, 20 added in a new partition
    part = ds["queries"][f"{PART} spark.table"]["sql"]
    assert sorted(int(k) for k in part) == [0, 1, 2, 5, 6, 7, 8, 9, 10, 11, 20]
    assert part["1"]["name"] == "u1" and part["20"]["dt"] == "d3"
    flat = ds["queries"][f"{FLAT} spark.table"]["sql"]
    assert sorted(int(k) for k in flat) == [i for i in range(10) if i != 5] + [i for i in range(100, 110) if i != 101]
    assert sorted(ds["queries"][f"{PART} dt = 'd1'"]["sql"]) == ["1", "10", "7"]
    assert sorted(ds["queries"][f"{PART} dt <> 'd2' AND name LIKE 'n1%'"]["sql"]) == ["10"]  # 1 is u1, 11 in d2
    assert sorted(int(k) for k in ds["queries"][f"{FLAT} id >= 100"]["sql"]) == [100] + list(range(102, 110))
    assert ds["as_of"]["format"] == ds["as_of"]["read"] and len(ds["as_of"]["read"]) == 10
    types = "pipe_sql.ds_types"
    assert sorted(ds["queries"][f"{types} spark.table"]["sql"]) == ["1", "2"]
    assert sorted(ds["queries"][f"{types} day = DATE'2024-01-02' AND at > TIMESTAMP'2024-01-01 00:00:00' "
                                "AND d > 1.0 AND ok"]["sql"]) == ["1"]
    # after the first commit: the second insert's rows that are still there (the delete rewrote the
    # first file group, whose untouched rows keep their commit time)
    assert ds["incremental"]["format"] == ds["incremental"]["read"]
    assert sorted(int(k) for k in ds["incremental"]["read"]) == [100] + list(range(102, 110))


@pytest.mark.backends(*DATASOURCE_BACKENDS)
def test_sql_reads_only_the_files_the_server_leaves(ds):
    q = ds["queries"]
    whole = q[f"{PART} spark.table"]["plan"]
    assert whole["files_skipped"] == 0 and whole["partitions_skipped"] == 0 and len(whole["files"]) == 4
    one_day = q[f"{PART} dt = 'd1'"]["plan"]
    assert [f.split("/")[0] for f in one_day["files"]] == ["dt=d1"] and one_day["partitions_skipped"] == 3
    two_days = q[f"{PART} dt IN ('d0', 'd3') AND score > 10"]["plan"]
    assert sorted(f.split("/")[0] for f in two_days["files"]) == ["dt=d0", "dt=d3"]
    other_days = q[f"{PART} dt <> 'd2' AND name LIKE 'n1%'"]["plan"]
    assert "dt=d2" not in {f.split("/")[0] for f in other_days["files"]} and other_days["partitions_skipped"] >= 1
    assert any(p.startswith("Like(col='name'") for p in other_days["pushed"])
    # column statistics: of the two base files, the one with ids 0-9 is skipped
    assert len(q[f"{FLAT} spark.table"]["plan"]["files"]) == 2
    high = q[f"{FLAT} id >= 100"]["plan"]
    assert len(high["files"]) == 1 and high["files_skipped"] == 1
    assert any("Cmp(col='id', op='>='" in p for p in high["pushed"])


@pytest.mark.backends(*DATASOURCE_BACKENDS)
def test_describe_and_show_partitions(ds):
    part = ds["describe"][PART]
    assert [c for c, _ in part][:9] == META + ["id", "name", "score", "dt"]
    assert ["id", "bigint"] in part and ["score", "double"] in part
    i = [c for c, _ in part].index("# Partition Information")
    assert part[i + 2] == ["dt", "string"]
    assert "# Partition Information" not in [c for c, _ in ds["describe"][FLAT]]
    assert ds["partitions"][PART] == ["dt=d0", "dt=d1", "dt=d2", "dt=d3"]
    # spark.sql ran them with the Python source on the v1 list, then put the list back
    assert "pythondatasourcev2" not in ds["v1_sources_after"]


@pytest.mark.backends(*DATASOURCE_BACKENDS)
def test_sql_equals_hudi_rs(ds, our_server):
    for table, cols in ((PART, ["id", "name", "score", "dt"]), (FLAT, ["id", "name", "score"])):
        sql = {k: tuple(r[c] for c in cols) for k, r in ds["queries"][f"{table} spark.table"]["sql"].items()}
        assert sql == hudi_rs(base_dir(our_server, table), cols), table


@pytest.mark.backends(*DATASOURCE_BACKENDS)
def test_refused_table_reads_its_live_rows(ds):
    # the table Spark refused before register(): 4 live rows, not the folder's 9
    stale = ds["stale"]
    assert stale["table"] == 4 and stale["metadata"]["hudi.metastore.table"] == "pipe_sql.stale"
    assert stale["metadata"]["hudi.metastore.base_path"].endswith("/stale")
    # a schema naming the table at another base path (renamed since, a new table of the old name)
    assert "renamed since?" in stale["other_path"], stale["other_path"]
    # without its name in the Spark schema (registered by an older server): the error names the
    # option, which reads it; name_table writes the name
    assert "option 'table'" in stale["unnamed"], stale["unnamed"]
    assert stale["with_option"] == 4 and stale["renamed"] is True and stale["sql"] == 4
