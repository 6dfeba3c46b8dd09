"""The benchmark of Hudi's own writers against the server (bench/hudi_sync_bench.py) keeps working: at
tiny sizes on SQLite, our side only (as test_bench_smoke's ours-only run; no JVM), the catch-up and
the replayed hive sync produce numbers and pass their checks.  No assertion on timings."""

from __future__ import annotations

import json

from bench import hudi_sync_bench
from tests.harness import properties

TINY = ["--backend", "sqlite", "--files", "12", "--commit-partitions", "4", "--rows-per-file", "3",
        "--rounds", "2", "--warmup", "1", "--partitions", "25", "--batch", "10", "--sync-rounds", "2"]
if properties.thorough():  # the same steps at larger sizes, more rounds (docs/testing.md)
    TINY = ["--backend", "sqlite", "--files", "200", "--commit-partitions", "20", "--rows-per-file", "10",
            "--rounds", "5", "--warmup", "1", "--partitions", "500", "--batch", "100", "--sync-rounds", "3"]


def test_hudi_sync_bench_tiny(tmp_path, capsys):
    out = tmp_path / "hudi_sync.json"
    rc = hudi_sync_bench.main([*TINY, "--json", str(out)])
    printed = capsys.readouterr().out
    assert rc == 0, printed
    assert "== catch-up: sqlite ==" in printed
    assert "== hive sync:" in printed
    data = json.loads(out.read_text())
    (cu,) = data["catch_up"]
    assert "error" not in cu, cu
    assert cu["check"] == "ok"
    rounds = int(TINY[TINY.index("--rounds") + 1])
    assert cu["catch_up"]["iterations"] == rounds and cu["catch_up"]["median_ms"] > 0
    assert cu["idle_call"]["median_ms"] > 0 and cu["register_ms"] > 0
    sync = data["hive_sync"]
    assert list(sync["sides"]) == ["ours"]  # SQLite: our side alone
    ours = sync["sides"]["ours"]
    assert ours["check"] == "ok", ours
    assert ours["first_sync"]["iterations"] == int(TINY[TINY.index("--sync-rounds") + 1])
    assert ours["first_sync"]["median_ms"] > 0 and ours["resync"]["median_ms"] > 0
    # the table is tracked from its create_table: the commits made its partitions, sync adds none
    assert all(r["existing_before_add"] == sync["partitions"] for r in ours["rounds"])
    assert {"create_table", "get_partitions", "alter_table", "resync_get_partitions"} <= set(ours["steps_median_ms"])
