"""`hudi-metastore migrate` from the reference Hive Metastore 2.3 into our server (one backend per run,
drawn by the run; each backend under HYPOTHESIS_PROFILE=thorough).

The source is populated once per session by a real Spark session (``tests/spark/migrate_source.py``):
three databases, partitioned parquet and Hive-serde tables, a view, a table with 2000 partitions
(3000 in the thorough run; added through Thrift, each with a real directory), table and partition
statistics, and three Hudi fixture tables registered as Hudi's hive-sync registers them. Its
databases carry a per-session suffix: the reference metastore is shared with other tests.

On that backend the migration is run as the CLI: a dry run (writes nothing), a run killed with SIGKILL
in the middle of the big partitioned table (the test watches its progress output and kills it
there), the resumed run (zero differences in the verification report), a repeated run (writes
nothing). The source is unchanged, the Hudi fixtures' storage too,
and the same Spark queries give the same results through our server as through the reference.
"""

from __future__ import annotations

import os
import re
import secrets
import subprocess
import zipfile
from pathlib import Path

import pytest

from client import HudiMetastoreClient
from tests.harness import REPO_ROOT, VENV_PYTHON, free_port, run_killed_at, run_spark_script
from tests.harness.properties import thorough
from tests.harness.thrift import thrift_client

SCRIPT = Path(__file__).resolve().parent / "spark" / "migrate_source.py"
FIXTURES = Path(__file__).resolve().parent / "fixtures" / "hudi-tables"
HUDI_ZIPS = ("cow_v6_complexkeygen_hivestyle", "mor_v6_simplekeygen_nonhivestyle", "cow_v8_nonpartitioned")
BIG = 3000 if thorough() else 2000

pytestmark = [pytest.mark.slow, pytest.mark.spark, pytest.mark.xdist_group("migrate")]  # one `source` per run


@pytest.fixture(scope="session")
def source(reference_hms, tmp_path_factory):
    """The populated reference metastore: port, database suffix, Spark results, fixture folder.
    Session-scoped: the backends' runs of the migration only read it (checked)."""
    d = tmp_path_factory.mktemp("migrate-source")
    fixtures = d / "hudi"
    for name in HUDI_ZIPS:
        with zipfile.ZipFile(FIXTURES / f"{name}.zip") as z:
            z.extractall(fixtures / name)
    suffix = "_" + secrets.token_hex(3)
    result = run_spark_script(SCRIPT, reference_hms, d / "warehouse", d / "reference.json",
                              ["--populate", "--fixtures-dir", str(fixtures), "--suffix", suffix,
                               "--big-partitions", str(BIG)])
    assert result["meta"]["returncode"] == 0, result["meta"]
    return {"port": reference_hms, "suffix": suffix, "steps": result["steps"], "fixtures": fixtures}


def migrate_command(*args) -> list[str]:
    return [VENV_PYTHON, "-m", "adapter.cli", "--log-level", "WARNING", "migrate", *args]


def migrate_cli(*args, timeout=600):
    return subprocess.run(migrate_command(*args), cwd=str(REPO_ROOT), capture_output=True, text=True,
                          timeout=timeout, env=dict(os.environ, PYTHONPATH=str(REPO_ROOT)))


def migrate_cli_killed_at(table: str, partitions: int, *args):
    """The CLI, SIGKILLed once its progress output says `partitions` partitions of `table` were written."""
    progress = re.compile(rf"{re.escape(table)}: partitions (\d+)/")

    def reached(line: str) -> bool:
        m = progress.search(line)
        return m is not None and int(m.group(1)) >= partitions

    return run_killed_at(migrate_command(*args), reached, cwd=str(REPO_ROOT),
                         env=dict(os.environ, PYTHONPATH=str(REPO_ROOT)))


def databases(port: int, suffix: str) -> list[str]:
    with thrift_client(port) as c:
        return sorted(c.get_databases(f"mig_*{suffix}"))


def snapshot(port: int, suffix: str) -> dict:
    """Names, table parameters and partition names of the migrated databases, as plain data."""
    out = {}
    with thrift_client(port, timeout=120) as c:
        for db in sorted(c.get_databases(f"mig_*{suffix}")):
            for name in sorted(c.get_all_tables(db)):
                t = c.get_table(db, name)
                params = {k: v for k, v in (t.parameters or {}).items() if k != "transient_lastDdlTime"}
                parts = sorted(c.get_partition_names(db, name, -1)) if t.partitionKeys else []
                out[f"{db}.{name}"] = {"type": t.tableType, "params": params, "partitions": parts,
                                       "location": t.sd.location if t.sd else None,
                                       "cols": [(f.name, f.type) for f in (t.sd.cols if t.sd else [])]}
    return out


def storage_listing(root: Path) -> dict:
    return {str(p.relative_to(root)): p.stat().st_size for p in sorted(root.rglob("*")) if p.is_file()}


# on one backend per run, drawn by the run (all three under thorough): the migration writes through the
# server's calls, which test_conformance compares with the reference on every backend
@pytest.mark.backends_by_run()
def test_migrate_from_reference_hms(source, our_server, tmp_path):
    ref, sfx = source["port"], source["suffix"]
    src_uri, dst_uri = f"thrift://127.0.0.1:{ref}", f"thrift://127.0.0.1:{our_server}"
    pattern = f"mig_*{sfx}"
    common = ["--from", src_uri, "--to", dst_uri, "--databases", pattern]
    steps = source["steps"]
    for key in ("orders.all", "metrics.partitions", "view.all", "hudi.trips_cow.rows", "hudi.trips_mor.rows"):
        assert isinstance(steps[key], list) and steps[key], f"reference query {key} gave {steps[key]}"
    assert len(steps["metrics.partitions"]) == BIG
    before_source = snapshot(ref, sfx)
    before_storage = storage_listing(source["fixtures"])
    assert databases(our_server, sfx) == []

    # dry run: reports what would be copied, writes nothing
    dry = migrate_cli(*common, "--dry-run")
    assert dry.returncode == 1, dry.stdout + dry.stderr
    assert "tables created 8" in dry.stdout and f"partitions added {BIG + 9}" in dry.stdout, dry.stdout
    assert databases(our_server, sfx) == []

    # killed in the middle of the big partitioned table, once it reports 4 partition batches of 200
    # written (its progress says so at every 10 %: the kill comes at the first report of 800 or more)
    killed = migrate_cli_killed_at(f"mig_ops{sfx}.metrics", 4 * 200, *common, "--parallel", "2",
                                   "--batch-size", "200")
    assert killed.returncode == -9, killed.stdout + killed.stderr
    partial = snapshot(our_server, sfx)
    metrics = partial[f"mig_ops{sfx}.metrics"]["partitions"]
    assert 0 < len(metrics) < BIG
    assert f"mig_sales{sfx}.orders" not in partial  # databases go in name order: not reached yet

    # resumed: finishes, verification has zero differences
    resumed = migrate_cli(*common, "--parallel", "3", "--batch-size", "500")
    assert resumed.returncode == 0, resumed.stdout + resumed.stderr
    assert "differences: none" in resumed.stdout
    # what the killed run left: the partitions seen right after the kill, plus at most one batch per
    # thread that the server had received in full and committed after the client died
    added = int(re.search(r"partitions added (\d+)", resumed.stdout).group(1))
    left = BIG + 9 - 3 - len(metrics)  # 3: logs
    assert left - 2 * 200 <= added <= left, resumed.stdout
    assert re.search(rf"metrics +MANAGED_TABLE +partitions {BIG}/{BIG}  ok", resumed.stdout), resumed.stdout
    for t in ("trips_cow", "trips_mor", "events_v8"):
        assert f"hudi: mig_hudi{sfx}.{t} from" in resumed.stdout
    assert f"mig_ops{sfx}.metrics: partitions" in resumed.stderr  # progress on stderr

    # a repeated run writes nothing and still agrees
    again = migrate_cli(*common)
    assert again.returncode == 0, again.stdout + again.stderr
    for line in ("databases created 0, updated 0", "tables created 0, updated 0", "partitions added 0, updated 0",
                 "column statistics written: 0 table(s), 0 partition(s)", "differences: none"):
        assert line in again.stdout, again.stdout

    # same end state as the source; the source and the Hudi tables' storage untouched
    after_source = snapshot(ref, sfx)
    assert after_source == before_source
    migrated = snapshot(our_server, sfx)
    assert sorted(migrated) == sorted(before_source)
    for name, want in before_source.items():
        assert migrated[name]["partitions"] == want["partitions"], name
        assert migrated[name]["cols"] == want["cols"], name
        if name.startswith(f"mig_hudi{sfx}."):  # statistics: the server's own, of the latest slices
            assert _without_kept_stats(migrated[name]["params"]) == _without_kept_stats(want["params"]), name
        else:
            assert migrated[name]["params"] == want["params"], name
    assert storage_listing(source["fixtures"]) == before_storage
    with HudiMetastoreClient(f"thrift://127.0.0.1:{our_server}") as hc:
        for t in ("trips_cow", "trips_mor", "events_v8"):
            assert hc.list_instants(f"mig_hudi{sfx}", t), t
            latest = [f for s in hc.get_latest_file_slices(f"mig_hudi{sfx}", t)
                      for f in ([s.baseFile] if s.baseFile else []) + list(s.logFiles or [])]
            table = hc.get_table(f"mig_hudi{sfx}", t)
            if table.partitionKeys and table.parameters.get("spark.sql.sources.provider") != "hudi":
                # a plain Hive registration keeps its statistics on the partitions only
                assert "numFiles" not in table.parameters, t
                parts = [p.parameters for p in hc.get_partitions(f"mig_hudi{sfx}", t, -1)]
                got = (sum(int(p["numFiles"]) for p in parts), sum(int(p["totalSize"]) for p in parts))
            else:
                got = (int(table.parameters["numFiles"]), int(table.parameters["totalSize"]))
            assert got == (len(latest), sum(f.size for f in latest)), t
        assert hc.get_hudi_table(f"mig_hudi{sfx}", "events_v8").tableVersion == 8

    # the same Spark queries give the same results through our server
    ours = run_spark_script(SCRIPT, our_server, tmp_path / "wh", tmp_path / "ours.json", ["--suffix", sfx])
    differing = sorted(k for k in steps if steps[k] != ours["steps"].get(k))
    assert not differing, {k: (steps[k], ours["steps"].get(k)) for k in differing[:5]}


def _without_kept_stats(params: dict) -> dict:
    kept = ("numFiles", "totalSize", "numRows", "rawDataSize", "COLUMN_STATS_ACCURATE")
    return {k: v for k, v in params.items() if k not in kept and not k.startswith("spark.sql.statistics.")}


def test_migrate_unreachable_source_writes_nothing(our_server):
    with thrift_client(our_server) as c:
        before = sorted(c.get_all_databases())
    port = free_port()  # nothing listens there
    res = migrate_cli("--from", f"thrift://127.0.0.1:{port}", "--to", f"thrift://127.0.0.1:{our_server}")
    assert res.returncode == 2
    assert f"cannot connect to the source metastore thrift://127.0.0.1:{port}" in res.stderr
    assert "Traceback" not in res.stderr
    with thrift_client(our_server) as c:
        assert sorted(c.get_all_databases()) == before


def test_source_client_refuses_writes(reference_hms):
    from adapter.commands.migration.source import ReadOnlySource
    from thrift_idl.hive_metastore.ttypes import Database

    src = ReadOnlySource(f"thrift://127.0.0.1:{reference_hms}")
    try:
        assert "default" in src.get_all_databases()
        for call in ("create_database", "drop_table", "add_partitions", "alter_table",
                     "update_table_column_statistics"):
            with pytest.raises(PermissionError):
                getattr(src, call)
        with pytest.raises(PermissionError):
            src.create_database(Database(name="must_not_exist"))
        assert "must_not_exist" not in src.get_all_databases()
    finally:
        src.close()
