"""pipeline.datasource without Spark: the filters Spark pushes to the `hudi` data source become the
same server filter `pipeline.read` sends for the equivalent Spark SQL, and which statements
`spark.sql` runs with Python data sources on Spark's v1 list (the end-to-end check is
tests/test_pipeline_spark_sql.py)."""

from __future__ import annotations

import datetime as dt
from decimal import Decimal

import pytest
from pyspark.sql import datasource as D

from hudi_format.table_config import SPARK_TABLE_METADATA, SPARK_TABLE_PATH_METADATA, spark_schema_properties
from pipeline.datasource import is_catalog_command, source_filter_node
from pipeline.predicate import Bool, server_filter

COLUMNS = {"id": "bigint", "name": "string", "score": "double", "price": "decimal(10,2)", "day": "date",
           "at": "timestamp", "dt": "string"}


def _server(filters) -> str | None:
    nodes = [n for n in (source_filter_node(f) for f in filters) if n is not None]
    tree = nodes[0] if len(nodes) == 1 else Bool("and", tuple(nodes))
    return server_filter(tree, COLUMNS, {"dt"})


@pytest.mark.parametrize("pushed, sql", [
    ([D.EqualTo(("dt",), "d1")], "dt = 'd1'"),
    ([D.IsNotNull(("id",)), D.GreaterThanOrEqual(("id",), 100)], "id IS NOT NULL AND id >= 100"),
    ([D.In(("dt",), ("d0", "d3")), D.GreaterThan(("score",), 10.0)], "dt IN ('d0', 'd3') AND score > 10.0"),
    ([D.Not(D.EqualTo(("dt",), "d2"))], "dt <> 'd2'"),
    ([D.StringStartsWith(("name",), "n1")], "name LIKE 'n1%'"),
    ([D.StringEndsWith(("name",), "a_b%")], r"name LIKE '%a\\_b\\%'"),
    ([D.StringContains(("name",), "x")], "name LIKE '%x%'"),
    ([D.LessThan(("price",), Decimal("9.50"))], "price < 9.50BD"),
    ([D.EqualTo(("day",), dt.date(2024, 1, 2))], "day = DATE'2024-01-02'"),
    ([D.IsNull(("name",))], "name IS NULL"),
])
def test_pushed_filters_prune_as_the_same_sql(pushed, sql):
    assert _server(pushed) == server_filter(sql, COLUMNS, {"dt"})
    assert _server(pushed)


def test_what_is_never_pruned_by():
    # a nested field, a null-safe comparison, a timestamp without time zone: TRUE for the server
    assert source_filter_node(D.EqualTo(("s", "a"), 1)) is None
    assert _server([D.EqualNullSafe(("id",), 1)]) is None
    assert _server([D.EqualTo(("at",), dt.datetime(2024, 1, 1))]) is None
    # ... and an AND keeps the other conjuncts
    assert _server([D.EqualNullSafe(("id",), 1), D.EqualTo(("dt",), "d1")]) == server_filter("dt = 'd1'", COLUMNS,
                                                                                             {"dt"})


def test_an_aware_timestamp_is_an_instant():
    at = dt.datetime(2024, 1, 1, 12, tzinfo=dt.timezone.utc)
    assert _server([D.GreaterThan(("at",), at)]) == server_filter("at > TIMESTAMP'2024-01-01 12:00:00'", COLUMNS,
                                                                  {"dt"}, time_zone="UTC")


@pytest.mark.parametrize("text, routed", [
    ("SHOW PARTITIONS db.t", True), ("show partitions t PARTITION (dt='d1')", True),
    ("DESCRIBE db.t", True), ("desc t", True), ("DESCRIBE TABLE EXTENDED `db`.`t`", True),
    ("DESCRIBE FORMATTED db.t dt", True), ("  describe table t", True),
    ("DESCRIBE QUERY SELECT * FROM t", False), ("DESCRIBE FUNCTION upper", False),
    ("DESCRIBE DATABASE db", False), ("DESC SELECT 1", False), ("SELECT * FROM t", False),
    ("SHOW TABLES", False), ("SHOW PARTITIONSX", False),
])
def test_which_statements_run_the_v1_way(text, routed):
    assert is_catalog_command(text) is routed


def test_schema_properties_name_the_table():
    import json

    from client import Column

    props = spark_schema_properties([Column("a", "int", None)], [Column("dt", "string", None)], table="db.t")
    fields = json.loads(props["spark.sql.sources.schema.part.0"])["fields"]
    assert fields[0]["metadata"] == {SPARK_TABLE_METADATA: "db.t"} and fields[1]["metadata"] == {}
    at = spark_schema_properties([Column("a", "int", None)], [], table="db.t", base_path="/w/t")
    assert json.loads(at["spark.sql.sources.schema.part.0"])["fields"][0]["metadata"] == {
        SPARK_TABLE_METADATA: "db.t", SPARK_TABLE_PATH_METADATA: "/w/t"}
    plain = spark_schema_properties([Column("a", "int", None)], [])
    assert json.loads(plain["spark.sql.sources.schema.part.0"])["fields"][0]["metadata"] == {}


def test_naming_an_older_tables_schema():
    import json

    from client import Column
    from pipeline.datasource import named_schema_properties

    cols = [Column(f"c{i}", "string", None) for i in range(300)]  # a schema of several 4000-character parts
    old = spark_schema_properties(cols, [Column("dt", "string", None)])
    old["EXTERNAL"] = "TRUE"
    new = named_schema_properties(old, "db.t")
    assert new is not None and new["EXTERNAL"] == "TRUE" and int(new["spark.sql.sources.schema.numParts"]) > 1
    n = int(new["spark.sql.sources.schema.numParts"])
    text = "".join(new[f"spark.sql.sources.schema.part.{i}"] for i in range(n))
    fields = json.loads(text)["fields"]
    assert fields[0]["metadata"] == {SPARK_TABLE_METADATA: "db.t"} and [f["name"] for f in fields][-1] == "dt"
    assert all(len(new[k]) <= 4000 for k in new if k.startswith("spark.sql.sources.schema.part."))
    assert named_schema_properties(new, "db.t") is None  # named already
    assert named_schema_properties({"EXTERNAL": "TRUE"}, "db.t") is None  # no Spark schema
    renamed = named_schema_properties(new, "db.u")
    assert renamed is not None and SPARK_TABLE_METADATA in renamed["spark.sql.sources.schema.part.0"]
    assert '"db.u"' in renamed["spark.sql.sources.schema.part.0"]
    at = named_schema_properties(new, "db.t", "/w/t")  # the base path is added to a named schema
    assert at is not None
    n = int(at["spark.sql.sources.schema.numParts"])
    text = "".join(at[f"spark.sql.sources.schema.part.{i}"] for i in range(n))
    want = {SPARK_TABLE_METADATA: "db.t", SPARK_TABLE_PATH_METADATA: "/w/t"}
    assert json.loads(text)["fields"][0]["metadata"] == want
    assert named_schema_properties(at, "db.t", "/w/t") is None
