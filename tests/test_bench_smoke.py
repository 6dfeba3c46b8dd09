"""The benchmark harness (bench/) keeps working: every operation produces a number and the table
prints.  Tiny sizes; no assertion on timings."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from bench import procs, report
from bench import run as bench_run
from tests.harness import jvm, properties

REPO_ROOT = Path(__file__).resolve().parents[1]

TINY = ["--quick", "--n", "20", "--iterations", "2", "--warmup", "1", "--write-iterations", "1",
        "--concurrency-seconds", "1", "--big-n", "1000", "--threads", "4"]
if properties.thorough():  # the same tables, timed many more times (docs/testing.md)
    TINY = ["--quick", "--n", "20", "--iterations", "30", "--warmup", "5", "--write-iterations", "5",
            "--concurrency-seconds", "5", "--big-n", "1000", "--threads", "4"]

EXPECTED_ROWS = {
    "getTable", "listDatabases", "getTable x4 threads (calls/s)", "listTables.20", "getPartitionNames.20",
    "getPartitions.20", "getPartitionsByNames.20", "getPartitionsByFilter.20 (p_a = 'a0')",
    "getPartitionsByFilter.20 (6-term OR)", "addPartitions.20 (1 call)", "addPartitions.20 (batches of 100)",
    "alterPartitions.20", "dropPartitions.20", "dropTableWithPartitions.20", "getPartitionsByFilter 24 of 1000",
}


def _has_number(side: dict) -> bool:
    if "error" in side or side.get("skipped"):
        return False
    value = side.get("throughput", side.get("median_ms"))
    return isinstance(value, (int, float)) and value > 0


def _check(out_json: Path, printed: str, sides: tuple[str, ...]) -> None:
    data = json.loads(out_json.read_text())
    rows = data["pairings"]["embedded"]["rows"]
    labels = {report.row_label(r) for r in rows}
    assert labels == EXPECTED_ROWS, labels ^ EXPECTED_ROWS
    for r in rows:
        for side in sides:
            if r["family"] == "bigFilter" and side == "reference":
                continue  # the reference is not loaded with the big table by default
            assert _has_number(r[side]), (report.row_label(r), side, r[side])
            if "expected" in r[side] and "result_size" in r[side]:
                assert r[side]["result_size"] == r[side]["expected"], (report.row_label(r), side, r[side])
    assert "== pairing: embedded ==" in printed
    for label in EXPECTED_ROWS:
        assert label in printed, label
    for header in report.HEADER:
        assert header in printed


def test_bench_ours_only(tmp_path, capsys):
    out = tmp_path / "bench.json"
    rc = bench_run.main(["--pairing", "embedded", "--ours-only", "--json", str(out), *TINY])
    printed = capsys.readouterr().out
    assert rc == 0, printed
    _check(out, printed, ("ours",))
    data = json.loads(out.read_text())
    for r in data["pairings"]["embedded"]["rows"]:
        assert r["reference"].get("skipped")
    # targets are evaluated (PASS or FAIL, whatever the timing) where they can be
    statuses = {report.row_label(r): r.get("status") for r in data["pairings"]["embedded"]["rows"]}
    assert statuses["getPartitionsByFilter 24 of 1000"] in ("PASS", "FAIL")


@pytest.mark.slow
def test_bench_against_reference_on_derby(tmp_path, capsys):
    if not procs.REFERENCE_START.exists() or shutil.which("java") is None:
        pytest.skip("reference HMS launcher or java not available")
    out = tmp_path / "bench.json"
    rc = bench_run.main(["--pairing", "embedded", "--json", str(out), *TINY])
    printed = capsys.readouterr().out
    assert rc == 0, printed
    _check(out, printed, ("reference", "ours"))
    rows = json.loads(out.read_text())["pairings"]["embedded"]["rows"]
    assert all(r.get("status") in ("PASS", "FAIL", "PASS*", "FAIL*") for r in rows if r.get("target")
               and r["family"] != "bigFilter")


@pytest.mark.backends("sqlite")
def test_java_driver_against_our_server(our_server, tmp_path, monkeypatch):
    """bench/java_client.py's driver (Hive's own HiveMetaStoreClient) runs every operation and
    answers the sizes the workload implies."""
    from bench import java_client

    monkeypatch.setenv("HUDI_METASTORE_CACHE", str(tmp_path / "cache"))
    # the suite's JVM options (C1 only, serial GC: about 7 s less CPU for its javac and six JVMs; the
    # driver reads only stdout, where the JVM's "Picked up JAVA_TOOL_OPTIONS" line does not go)
    monkeypatch.setenv("JAVA_TOOL_OPTIONS", " ".join(jvm.java_flags()))
    driver = java_client.Driver(java_client.compile_driver())
    driver(our_server, "load", "jsmoke", "t_20", 20)
    got = {r["op"]: r for r in driver(our_server, "reads", "jsmoke", "t_20", 20, 1, 2, 1.0, 10)}
    sizes = {op: r["size"] for op, r in got.items()}
    assert sizes == {"getTable": 3, "getConfigValue": 4, "getPartitionNames": 20, "getPartitions": 20,
                     "getPartitionsByNames": 20, "getPartitionsByFilter": 1, "bigFilter.or6": 2}, sizes
    assert all(r["median_ms"] > 0 and r["samples"] >= 2 for r in got.values()), got
    (conc,) = driver(our_server, "concurrent", "jsmoke", "t_20", 2, 0.5, 10)
    assert conc["throughput"] > 0 and conc["size"] > 0, conc
    assert [r["size"] for r in driver(our_server, "add", "jsmoke", "a", 30)] == [30]
    assert [r["size"] for r in driver(our_server, "drop", "jsmoke", "d", 20)] == [20]
    assert [r["size"] for r in driver(our_server, "alter", "jsmoke", "al", 20)] == [20]
    # the ceiling: the same reads through bench/instant_server.py, every one answered from its recording
    # (ceiling() raises when a read reached the server while replaying)
    ceil = java_client.ceiling(driver, our_server, [20], 1, 1, 2, 1.0, 10, db="jsmoke")
    assert set(ceil) == {(op, r["n"]) for op, r in got.items()}, ceil
    assert all(len(ms) == 1 and ms[0] > 0 for ms in ceil.values()), ceil


def test_object_store_throttle_bench(tmp_path, capsys):
    """bench/object_store_throttle.py at a tiny size: both layouts write every file through the
    throttled store; its own counters (the store's side) show `hive` throttled on one prefix and
    `object-store` spread over one prefix per file group. No assertion on timings."""
    from bench import object_store_throttle

    out = tmp_path / "throttle.json"
    assert object_store_throttle.main(["--files", "30", "--writers", "4", "--rate", "5", "--rows", "10",
                                       "--json", str(out)]) == 0
    data = json.loads(out.read_text())
    hive, spread = data["results"]["hive"], data["results"]["object-store"]
    assert hive["writes"] == spread["writes"] == 30
    assert hive["prefixes"] == 1 and hive["throttled"] > 0
    assert spread["prefixes"] == 30 and spread["busiest_prefix_writes"] == 1
    assert "object-store / hive write throughput" in capsys.readouterr().out


def test_record_index_bench(tmp_path):
    """bench/record_index.py at a tiny size on SQLite, in its own process (its own Spark): both
    taggings find every key of the upsert, which touches every partition, the lookup finds every key,
    both commits complete."""
    import subprocess
    import sys

    out = tmp_path / "ri.json"
    res = subprocess.run([sys.executable, "-m", "bench.record_index", "--keys", "3000", "--partitions", "10",
                          "--lookup-keys", "500", "--commit-keys", "200", "--master", "local[1]", "--warmup-s", "0",
                          "--json", str(out)], cwd=REPO_ROOT, capture_output=True, text=True, timeout=900)
    assert res.returncode == 0, res.stdout[-3000:] + res.stderr[-3000:]
    data = json.loads(out.read_text())
    assert data["upsert_keys"] == 30 and data["lookup_keys"] == 500 and data["commit_keys"] == 200, data
    assert data["upsert_partitions"] == 10, data  # the batch reaches every partition (not an even stride's few)
    assert data["tag_index_s"] > 0 and data["tag_simple_s"] > 0 and data["lookup_s"] > 0, data
    assert data["bytes_per_key"] > 0, data


def test_scale_targets_step(backend_specs, monkeypatch):
    """bench/scale_targets.py, the last step of `bench.java_client`, at a tiny size on PostgreSQL (ours
    only: the reference's part is the same code): every step answers the sizes it asked for, and the
    table states each target's verdict."""
    from bench import partition_scale, procs, scale_targets
    from tests.harness import ci_mode

    spec = backend_specs["postgresql"]
    if not spec.available:
        (pytest.fail if ci_mode() else pytest.skip)(f"postgresql backend unavailable: {spec.reason}")
    monkeypatch.setattr(procs, "PG_ADMIN_URL", spec.admin_url)
    scale = partition_scale.run(480, 120, 0, ["ours"])
    ours = scale["ours"]
    assert not [k for k in ours if k.endswith("_failed")], ours
    assert ours["partitions"] == 480 and ours["complete"] and ours["filter_24_rows"] == 24, ours
    assert ours["names_rows"] == 480 and ours["get_100k_rows"] == 480 and ours["after_drop"] == 0, ours
    commits = scale_targets.complete_instant(2, 60)
    assert commits["check"] == "ok" and commits["iterations"] == 2 and commits["table_files_before"] == [60, 120]
    table = scale_targets.render({"scale": scale, "commits": commits})
    rows = {line.split(" | ")[0].lstrip("| "): line for line in table.splitlines()[2:]}
    # (a verdict on time: either, as the machine's load decides; tests never assert on wall-clock time)
    assert rows["filter selecting 24 partitions (median of 11)"].endswith(("| PASS |", "| FAIL |")), table
    assert "not run" in rows["filter selecting 24 partitions (median of 11)"], table  # the reference's cell
    assert rows["server memory answering ~100,000 partitions (`get_partitions_by_filter`)"].endswith(
        "| PASS |"), table
    commit_row = next(line for key, line in rows.items() if key.startswith("`complete_instant` of 60 files"))
    assert "check ok" in commit_row and commit_row.endswith(("| PASS |", "| FAIL |")), table


def test_column_stats_bench(tmp_path):
    """bench/column_stats.py at a tiny size on SQLite: the 1% predicate keeps the one file that holds
    its rows and skips the others, the 100-file predicate keeps the files it spans."""
    import subprocess
    import sys

    out = tmp_path / "cs.json"
    res = subprocess.run([sys.executable, "-m", "bench.column_stats", "--files", "20", "--partitions", "2",
                          "--repeats", "1", "--json", str(out)], cwd=REPO_ROOT, capture_output=True, text=True,
                         timeout=600)
    assert res.returncode == 0, res.stdout[-3000:] + res.stderr[-3000:]
    (data,) = json.loads(out.read_text())
    assert data["files"] == 20 and data["files_kept"] == 1 and data["skipped_fraction"] == 0.95, data
    assert data["kept_100"] == 10, data  # files 10..19: the predicate's range runs past the last file
    assert data["plan_ms"] > 0 and data["plan_structs_ms"] > 0 and data["list_all_ms"] > 0, data


def test_scale_out_bench_single(backend_specs, tmp_path, monkeypatch):
    """bench/scale_out.py's workload, tiny, on one PostgreSQL with two servers (the Galera and
    Patroni topologies start the clusters tests/test_galera.py and tests/test_patroni.py test): every
    client calls, reads and writes, without errors."""
    from bench import scale_out
    from tests.harness import ci_mode

    if not backend_specs["postgresql"].available:
        (pytest.fail if ci_mode() else pytest.skip)("postgresql backend unavailable")
    args = scale_out.build_parser().parse_args(["--seconds", "0.5", "--clients", "2"])
    (row,) = scale_out.run_topology("single", [2], args, tmp_path)
    assert row["servers"] == 2 and row["reads"] > 0 and row["writes"] > 0 and row["errors"] == 0, row


@pytest.mark.backends("sqlite")  # what storage holds does not depend on the backend
def test_metadata_table_read_bench_table(our_server):
    """bench/metadata_table_read.py's table, tiny (its Spark half needs a JVM with Hudi's bundle and
    runs only as the benchmark): 20 files committed through the server in commits of 8, each with
    its footer statistics; the mirror wrote the metadata table with `column_stats` listed, and that
    partition names every file."""
    import argparse

    from bench.metadata_table_read import build_table
    from hudi_format.config_keys import METADATA_PARTITIONS, PROPERTIES_FILE
    from hudi_format.table_config import read_properties

    args = argparse.Namespace(files=20, partitions=2, rows_per_file=3, commit_files=8, version=9)
    base, _ = build_table(f"thrift://127.0.0.1:{our_server}", args, table="mdt_read_smoke")
    props = read_properties((Path(base) / ".hoodie" / PROPERTIES_FILE).read_text())
    assert props[METADATA_PARTITIONS] == "column_stats,files,partition_stats", props
    data = sorted(p.name for p in Path(base).glob("p*/*.parquet"))
    assert len(data) == 20 and {p.name for p in Path(base).iterdir() if not p.name.startswith(".")} == {"p000", "p001"}
    stats = list((Path(base) / ".hoodie" / "metadata" / "column_stats").iterdir())
    assert stats, "no column_stats file"
