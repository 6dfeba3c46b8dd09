"""A metadata table the mirror took over, then written by Apache Hudi's own Spark writer (issue 45):
our pipeline writes a table with `hoodie.metadata.enable=true` through the server (the mirror writes
its metadata table), `import-hudi` marks it tracked, Hudi 1.2's Spark writer (its Spark 3.5 bundle,
tests/harness/hudi_spark.py) upserts into it with the metadata table on and hive sync to the server
(whose catch-up imports the instant; the mirror's next step follows), then the pipeline writes again.
Then enough pipeline writes for the mirror's own compaction of the metadata table, Hudi's writer
again, the pipeline again. After each step Hudi 1.2's reader with `hoodie.metadata.enable=true`
reads the model's rows, its metadata-table listing equals its storage listing and its column
statistics the files' footers (`files_check`, tests/spark/hudi_spark_jobs.py). Hudi's writer
compacts the metadata table after each of its deltacommits in all but one case (versions 6, 8, 9;
copy-on-write, and merge-on-read at 9)."""

from __future__ import annotations

import json
import os
import shutil
import uuid

import pytest

from adapter.commands.import_hudi import import_hudi_table
from client import HudiMetastoreClient
from hudi_format.config_keys import METADATA_ENABLE, TABLE_VERSION
from pipeline import write
from store.hudi.metadata_table import COMPACT_AFTER
from tests.harness.hudi_spark import hudi_spark_env, hudi_spark_python
from tests.harness.properties import rotating
from tests.harness.spark import run_spark_script
from tests.pipeline_helpers import base_dir, ours, uri
from tests.test_pipeline_services_property import _footer_stats

pytestmark = [pytest.mark.spark, pytest.mark.slow, pytest.mark.backends("postgresql")]

SCRIPT = os.path.join(os.path.dirname(__file__), "spark", "hudi_mdt_steps.py")
SCHEMA = "id long, name string, ts long, dt string"
COLS = ["id", "name", "ts", "dt"]


def _hudi_options(db: str, port: int, version: int, compact: bool, table_type: str) -> dict[str, str]:
    """Hudi's datasource writing the pipeline's table (its keys and partitioning), metadata table on,
    hive sync in `hms` mode to our server (the catch-up)."""
    return {"hoodie.table.name": "t", "hoodie.datasource.write.table.type": table_type,
            "hoodie.datasource.write.operation": "upsert", "hoodie.datasource.write.recordkey.field": "id",
            "hoodie.datasource.write.precombine.field": "ts", "hoodie.datasource.write.partitionpath.field": "dt",
            "hoodie.datasource.write.keygenerator.class": "org.apache.hudi.keygen.SimpleKeyGenerator",
            "hoodie.datasource.write.hive_style_partitioning": "true",
            "hoodie.datasource.hive_sync.enable": "true", "hoodie.datasource.hive_sync.mode": "hms",
            "hoodie.datasource.hive_sync.metastore.uris": uri(port), "hoodie.datasource.hive_sync.database": db,
            "hoodie.datasource.hive_sync.table": "t", "hoodie.datasource.hive_sync.partition_fields": "dt",
            "hoodie.datasource.hive_sync.partition_extractor_class":
                "org.apache.hudi.hive.MultiPartKeysValueExtractor",
            "hoodie.metadata.enable": "true", "hoodie.write.table.version": str(version),
            "hoodie.write.auto.upgrade": "false",
            # `compact`: Hudi's writer compacts the metadata table after its deltacommit
            "hoodie.metadata.compact.max.delta.commits": "1" if compact else "10"}


def _pipeline(spark, port: int, table: str, rows: list, version: int, model: dict,
              table_type: str = "COPY_ON_WRITE") -> None:
    write(spark.createDataFrame(rows, SCHEMA), table, "upsert", record_key="id", precombine_field="ts",
          partition_by="dt", metastore=uri(port), table_type=table_type,
          options={"hoodie.datasource.write.hive_style_partitioning": "true", METADATA_ENABLE: "true",
                   TABLE_VERSION: str(version)})
    model.update({r[0]: list(r) for r in rows})
    _settle(port, table)


def _settle(port: int, table: str) -> None:
    """The mirror's step for everything the server has (its metadata table's deltacommits)."""
    with HudiMetastoreClient(uri(port)) as c:
        c.sync_storage(*table.split("."))
        assert c.get_hudi_table_stats(*table.split(".")).mirrorLagVersions == 0


def _expected(model: dict) -> list:
    return sorted(model.values())


# (version, whether Hudi's writer compacts the metadata table, table type); about 100 s each, so
# one per CI run, drawn by the run (properties.rotating), all five in the thorough run
# (HYPOTHESIS_PROFILE=thorough)
CASES = [(9, True, "MERGE_ON_READ"), (6, True, "COPY_ON_WRITE"), (9, True, "COPY_ON_WRITE"),
         (8, True, "COPY_ON_WRITE"), (9, False, "COPY_ON_WRITE")]


@pytest.mark.parametrize(("version", "compact", "table_type"), rotating(CASES, 1))
def test_hudi_writer_into_a_metadata_table_the_mirror_took_over(spark, our_server, tmp_path, version, compact,
                                                                 table_type):
    port = our_server
    db = f"mix_{uuid.uuid4().hex[:8]}"
    table = f"{db}.t"
    model: dict = {}
    _pipeline(spark, port, table, [(k, f"a{k}", 1, f"p{k % 2}") for k in range(4)], version, model, table_type)
    _pipeline(spark, port, table, [(1, "b1", 2, "p1"), (4, "b4", 2, "p0")], version, model, table_type)
    base = base_dir(port, table)
    mdt_props = os.path.join(base, ".hoodie", "metadata", ".hoodie", "hoodie.properties")
    assert open(mdt_props).readline().startswith("#Metadata table written by hudi-metastore")
    with HudiMetastoreClient(uri(port)) as c:
        written = {i.timestamp for i in c.list_instants(db, "t")}
    report = import_hudi_table(uri(port), base, db, "t")  # tracked from now on: Hudi's syncs catch it up
    assert not report.registered
    with HudiMetastoreClient(uri(port)) as c:
        assert c.get_hudi_table(db, "t").properties.get("hoodie.metastore.timeline.source") == "storage"
    _settle(port, table)

    expected: dict[str, list] = {"pipeline": _expected(model)}
    hudi_rows = [(2, "h2", 3, "p0"), (5, "h5", 3, "p1")]
    before = tmp_path / "pipeline"
    shutil.copytree(base, before)
    steps = [{"read": "pipeline", "base": str(before), "columns": COLS},
             {"write": "hudi_write", "base": base, "rows": hudi_rows, "schema": SCHEMA,
              "options": _hudi_options(db, port, version, compact, table_type)},
             {"read": "hudi", "base": base, "columns": COLS}]
    model.update({r[0]: list(r) for r in hudi_rows})
    expected["hudi"] = _expected(model)
    out = run_spark_script(SCRIPT, port, tmp_path / "wh1", tmp_path / "out1.json", timeout=1200,
                           python=hudi_spark_python(), env=hudi_spark_env(), own_process=True,
                           extra_args=["--steps", json.dumps(steps)])
    assert out["hudi_write"] == {"written": True}, out["hudi_write"]

    with HudiMetastoreClient(uri(port)) as c:  # the sync caught the server up
        instants = {i.timestamp for i in c.list_instants(db, "t")}
    hudis = instants - written
    assert len(hudis) == 1, (instants, written)
    props = open(os.path.join(base, ".hoodie", "hoodie.properties")).read()
    assert f"hoodie.table.version={version}\n" in props  # Hudi wrote the table's version
    # Hudi's writer wrote its deltacommit into our metadata table (and compacted it when asked)
    mdt_timeline = os.listdir(os.path.join(base, ".hoodie", "metadata", ".hoodie",
                                           "timeline" if version >= 8 else ""))
    assert any(n.startswith(f"{min(hudis)}") and n.endswith(".deltacommit") for n in mdt_timeline), mdt_timeline
    assert any(n.endswith(".commit") for n in mdt_timeline) == compact, mdt_timeline
    _settle(port, table)
    assert ours(spark, port, table, COLS) == {str(k): tuple(v) for k, v in model.items()}, instants
    caught_up = tmp_path / "caught_up"
    shutil.copytree(base, caught_up)
    expected["caught_up"] = _expected(model)

    _pipeline(spark, port, table, [(2, "c2", 4, "p0"), (6, "c6", 4, "p0")], version, model, table_type)
    expected["pipeline_again"] = _expected(model)
    again = tmp_path / "pipeline_again"
    shutil.copytree(base, again)
    # enough instants for the mirror's own compaction of every partition of the metadata table
    # (COMPACT_AFTER log files in the current slice: after Hudi's compaction, its base file's)
    for n in range(COMPACT_AFTER + 1):
        _pipeline(spark, port, table, [(n % 8, f"d{n}", 5 + n, f"p{n % 8 % 2}")], version, model, table_type)
    expected["compacted"] = _expected(model)
    files = os.listdir(os.path.join(base, ".hoodie", "metadata", "files"))
    ours_after = [n for n in files if n.endswith(".hfile") and n.split("_")[1] == "0-0-0" and
                  n[:-len(".hfile")].split("_")[-1] > "00000000000000010"]
    assert ours_after, files  # the mirror compacted the files partition
    compacted = tmp_path / "compacted"
    shutil.copytree(base, compacted)
    # Hudi's writer again, into the metadata table the mirror compacted (its cleaning and archival
    # of the metadata table may run now), then the pipeline again
    hudi_rows = [(3, "h3", 40, "p1"), (7, "h7", 40, "p1")]
    steps = [{"read": "caught_up", "base": str(caught_up), "columns": COLS},
             {"read": "pipeline_again", "base": str(again), "columns": COLS},
             {"read": "compacted", "base": str(compacted), "columns": COLS},
             {"write": "hudi_write_again", "base": base, "rows": hudi_rows, "schema": SCHEMA,
              "options": _hudi_options(db, port, version, compact, table_type)},
             {"read": "hudi_again", "base": base, "columns": COLS}]
    model.update({r[0]: list(r) for r in hudi_rows})
    expected["hudi_again"] = _expected(model)
    out.update(run_spark_script(SCRIPT, port, tmp_path / "wh2", tmp_path / "out2.json", timeout=1200,
                                python=hudi_spark_python(), env=hudi_spark_env(), own_process=True,
                                extra_args=["--steps", json.dumps(steps)]))
    assert out["hudi_write_again"] == {"written": True}, out["hudi_write_again"]
    _settle(port, table)
    hudi_again = tmp_path / "hudi_again"
    shutil.copytree(base, hudi_again)
    _pipeline(spark, port, table, [(3, "e3", 50, "p1"), (8, "e8", 50, "p0")], version, model, table_type)
    expected["last"] = _expected(model)
    out.update(run_spark_script(SCRIPT, port, tmp_path / "wh3", tmp_path / "out3.json", timeout=1200,
                                python=hudi_spark_python(), env=hudi_spark_env(), own_process=True,
                                extra_args=["--steps", json.dumps([{"read": "last", "base": base, "columns": COLS}])]))
    # (Hudi's write and the catch-up change no data file: the copy after them has the files Hudi read)
    bases = {"pipeline": str(before), "hudi": str(caught_up), "caught_up": str(caught_up),
             "pipeline_again": str(again), "compacted": str(compacted), "hudi_again": str(hudi_again),
             "last": base}
    for step, rows in expected.items():
        got = out[step]
        assert "error" not in got, (step, got)
        assert got["snapshot"] == rows, step
        check = got["files_check"]
        assert check["partitions_md"] == check["partitions_fs"] and check["files"] > 0, (step, check)
        assert check["mismatches"] == [], (step, check)
        # column statistics of every file the metadata table lists (copy-on-write: base files), as
        # their footers give them (the validator's column-stats check)
        if table_type == "COPY_ON_WRITE":  # (merge-on-read: log files too, whose statistics are not asked)
            assert len({(r[0], r[1]) for r in check["column_stats"] if r[2] == "id"}) == check["files"], \
                (step, check)
        assert check["column_stats"] == _footer_stats(bases[step], check["column_stats"]), step
