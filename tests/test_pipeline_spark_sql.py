"""Spark SQL (Hive catalog on our server, no Hudi jars) reflects each commit of pipeline.write:
SHOW TABLES, SHOW PARTITIONS (new partitions at once, dropped by delete_partition) and DESCRIBE
(meta columns first, added columns after a schema evolution)."""

from __future__ import annotations

import os

import pytest

from tests.harness.spark import run_spark_script

pytestmark = [pytest.mark.spark, pytest.mark.slow]
SCRIPT = os.path.join(os.path.dirname(__file__), "spark", "pipeline_sql.py")
META = ["_hoodie_commit_time", "_hoodie_commit_seqno", "_hoodie_record_key", "_hoodie_partition_path",
        "_hoodie_file_name"]


def test_spark_sql_reflects_each_pipeline_commit(our_server, tmp_path):
    out = run_spark_script(SCRIPT, our_server, tmp_path / "wh", tmp_path / "out.json")
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
