"""Apache Hudi's own Spark writer and reader (Hudi's Spark 3.5 bundle in a pyspark 3.5 interpreter,
tests/harness/hudi_spark.py) against our server, in ONE Spark subprocess (tests/spark/hudi_spark_jobs.py):

* Hudi's datasource writes COW and MOR tables, partitioned and not (insert, upsert, delete) with
  hive sync in `hms` mode to our server: the database, the tables (MOR: also `_ro` and `_rt`) and the
  partitions appear as hive-sync makes them; each table is a tracked Hudi table from its first sync
  (store/hudi/timeline/catch_up.py), so `import-hudi` finds nothing to import, and `validate` agrees
  with storage; the server's file slices are hudi-rs's.
* Hudi's reader reads a table OUR pipeline wrote: snapshot (by path, and through the catalog:
  spark.table and SQL on our server's registration) and time travel (`as.of.instant`) give the rows
  of pipeline.read / hudi-rs; incremental reads give the rows committed after an instant.
* a write with `hoodie.metaserver.enabled=true` fails inside Hudi 1.2 itself (recorded below).
"""

from __future__ import annotations

import json
import os
import re
import uuid

import pytest

from adapter.commands.import_hudi import import_hudi_table
from adapter.commands.validate_repair import compare
from client import HudiCatalog, HudiMetastoreClient
from tests.harness.hudi_spark import hudi_spark_env, hudi_spark_python
from tests.harness.spark import run_spark_script
from tests.pipeline_helpers import base_dir, hudi_rs, hudi_rs_slices, instants, ours, server_slices, uri

# SQLite only since 2026-12-03 (CI time): Hudi's writer on PostgreSQL is tests/test_hudi_sync_spark.py's
pytestmark = [pytest.mark.spark, pytest.mark.slow, pytest.mark.backends("sqlite")]
SCRIPT = os.path.join(os.path.dirname(__file__), "spark", "hudi_spark_jobs.py")
SCHEMA = "id long, fare double, ts long, city string"
# what every table ends with: insert 0..5, upsert 1 and 7, delete 2 (as the job writes them)
EXPECTED = sorted([[i, float(i), "sf" if i % 2 else "nyc"] for i in (0, 3, 4, 5)] + [[1, 10.0, "sf"], [7, 7.0, "la"]])


def _pipeline_table(spark, port: int, table: str) -> list[str]:
    """Our pipeline writes the job's three commits; their instants."""
    from pipeline import write

    df = lambda data: spark.createDataFrame(data, SCHEMA)  # noqa: E731
    write(df([(i, float(i), 1, "sf" if i % 2 else "nyc") for i in range(6)]), table, "insert", record_key="id",
          precombine_field="ts", partition_by=["city"], metastore=uri(port),
          options={"hoodie.datasource.write.hive_style_partitioning": "true"})
    write(df([(1, 10.0, 2, "sf"), (7, 7.0, 2, "la")]), table, "upsert", metastore=uri(port))
    write(df([(2, 0.0, 3, "nyc")]), table, "delete", metastore=uri(port))
    return [i.timestamp for i in instants(port, table)]


def _spark_bytes(plan: str) -> float:
    """sizeInBytes of the table's Statistics (the plan's last) in an EXPLAIN COST (e.g. `9.3 KiB`)."""
    found = re.findall(r"sizeInBytes=([0-9.]+) ?([KMGT]?i?B)", plan)
    assert found, plan
    m = found[-1]
    units = {"B": 1, "KiB": 1024, "MiB": 1024 ** 2, "GiB": 1024 ** 3, "TiB": 1024 ** 4}
    return float(m[0]) * units[m[1]]


def _rows(by_key: dict) -> list:
    return sorted([int(k), v[0], v[1]] for k, v in by_key.items())


def test_hudi_spark_writes_and_reads_through_our_server(spark, our_server, tmp_path):
    ours_table = f"pipe_{uuid.uuid4().hex[:6]}.trips"
    stamps = _pipeline_table(spark, our_server, ours_table)
    base = base_dir(our_server, ours_table)
    db = f"hudi_spark_{uuid.uuid4().hex[:6]}"
    out = run_spark_script(SCRIPT, our_server, tmp_path / "wh", tmp_path / "out.json", timeout=1500,
                           python=hudi_spark_python(), env=hudi_spark_env(),
                           extra_args=["--db", db, "--read", json.dumps({"ours": {"base": base, "instants": stamps,
                                                                             "table": ours_table}})])

    # Hudi's writer, hive sync in hms mode
    written = out["written"]
    for name, t in written.items():
        assert "error" not in t, t
        assert t["rows"] == t["catalog_rows"] == EXPECTED, name
    with HudiMetastoreClient(uri(our_server)) as c:
        # MOR: the snapshot table, read-optimized `_ro` and real-time `_rt` (Hudi 1.x's hive sync)
        assert sorted(c.get_all_tables(db)) == ["cow_flat", "cow_part", "mor_flat", "mor_flat_ro", "mor_flat_rt",
                                                "mor_part", "mor_part_ro", "mor_part_rt"]
        for name in ("cow_part", "mor_part_ro", "mor_part_rt"):
            assert c.get_partition_names(db, name, -1) == ["city=la", "city=nyc", "city=sf"], name
        assert c.get_database(db).name == db
        synced = c.get_table(db, "cow_part")
        assert synced.parameters["spark.sql.sources.provider"] == "hudi"
        for name, t in written.items():  # tracked from hive sync's create: import-hudi has nothing to do
            assert c.get_hudi_table(db, name).properties["hoodie.metastore.timeline.source"] == "storage"
            assert import_hudi_table(uri(our_server), t["base"], db, name).instants_imported == []
            cfg = c.get_hudi_table(db, name)
            _, diffs = compare(HudiCatalog(uri(our_server)), db, name)
            assert diffs == [], (name, diffs)
            assert server_slices(our_server, f"{db}.{name}") == {k: (v[0], v[1], ()) for k, v in
                                                                  hudi_rs_slices(t["base"]).items()}, name
            assert _rows(hudi_rs(t["base"], ["fare", "city"])) == EXPECTED, name
            assert cfg.tableType is not None

    # Hudi's reader on our pipeline's table
    got = out["read"]["ours"]
    assert "error" not in got, got
    cols = ["fare", "city"]
    assert got["snapshot"] == _rows(ours(spark, our_server, ours_table, cols)) == _rows(hudi_rs(base, cols)) == EXPECTED
    assert got["catalog"] == got["sql"] == EXPECTED  # Hudi's catalog resolves our server's registration
    # Spark's optimizer sees the true row count, size, nulls, min and max right after the commits
    with HudiMetastoreClient(uri(our_server)) as c:
        size = int(c.get_table(*ours_table.split(".")).parameters["totalSize"])
        assert size == sum(s.baseFile.size for s in c.get_latest_file_slices(*ours_table.split(".")))
    assert re.search(r"Statistics\(sizeInBytes=[^,]+, rowCount=6\)", got["explain_cost"]), got["explain_cost"]
    assert _spark_bytes(got["explain_cost_size"]) == pytest.approx(size, rel=0.06), (size, got["explain_cost_size"])
    fare = got["describe_fare"]
    assert (fare["min"], fare["max"], fare["num_nulls"]) == ("0.0", "10.0", "0"), fare
    for ts in stamps:
        assert got["as_of"][ts] == _rows(hudi_rs(base, cols, as_of=ts)), ts
    assert got["incremental"][stamps[0]] == [[1, 10.0, "sf"], [7, 7.0, "la"]]
    assert got["incremental"][stamps[-1]] == []

    # Hudi 1.2's own metaserver client cannot start: its meta client factory looks for a
    # HoodieTableMetaserverClient constructor the release does not have, so no call reaches a server
    # (Hudi 0.15's client does write through our server: tests/test_hudi_metaserver_client.py). When
    # a release fixes it, this fails: then move that test to the release.
    ms = out["metaserver"]
    assert "error" in ms and any("NoSuchMethodException" in c and "HoodieTableMetaserverClient.<init>" in c
                                 for c in ms["causes"]), ms
