"""Spark SQL through our server shows a Hudi table's partitions right after each commit (RFC-36:
partitions follow commits), and its DROP PARTITION becomes a replacecommit + clean."""

from __future__ import annotations

import os

from tests.harness.spark import run_spark_script

SCRIPT = os.path.join(os.path.dirname(__file__), "spark", "hudi_partitions.py")


def test_spark_sees_hudi_partitions_after_each_commit(our_server, tmp_path):
    out = run_spark_script(SCRIPT, our_server, tmp_path / "wh", tmp_path / "out.json")
    steps = out["steps"]
    assert steps["0.empty"] == []
    assert steps["1.first_commit"] == ["city=nyc/day=1", "city=sf/day=1"]
    assert steps["2.second_commit"] == ["city=nyc/day=1", "city=sf/day=1", "city=sf/day=2"]
    assert steps["partition_filter"] == ["city=sf/day=1", "city=sf/day=2"]
    assert steps["3.after_drop"] == ["city=sf/day=1", "city=sf/day=2"]
    assert steps["tables"] == ["trips"]
    cols = [c for c, _ in steps["describe"]]
    assert cols[:5] == ["_hoodie_commit_time", "_hoodie_commit_seqno", "_hoodie_record_key",
                        "_hoodie_partition_path", "_hoodie_file_name"]
    assert ["day", "int"] in steps["describe"] and ["tags", "array<string>"] in steps["describe"]
    assert steps["timeline"] == ["commit", "commit", "replacecommit", "clean"]
