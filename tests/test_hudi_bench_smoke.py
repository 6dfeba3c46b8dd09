"""The Hudi benchmark (bench/hudi_bench.py) keeps working: at tiny sizes on SQLite every
measurement produces a number, passes its result check and is printed.  No assertion on timings."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[1]

TINY = ["--backend", "sqlite", "--files", "200", "--partitions", "5,50", "--iterations", "2",
        "--read-iterations", "3", "--read-warmup", "1", "--load-batch", "60"]

LABELS = [
    "complete_instant (200 files, 100 partitions)",
    "get_latest_file_slices 1 of 5 partitions",
    "get_latest_file_slices 1 of 50 partitions",
    'get_hudi_partitions dt = "..." on 5 partitions',
    'get_hudi_partitions dt = "..." on 50 partitions',
]


def test_hudi_bench_tiny(tmp_path):
    out = tmp_path / "hudi_bench.json"
    res = subprocess.run([sys.executable, "-m", "bench.hudi_bench", *TINY, "--json", str(out)],
                         cwd=str(REPO_ROOT), capture_output=True, text=True, timeout=600)
    assert res.returncode == 0, res.stdout + res.stderr
    printed = res.stdout
    assert "== backend: sqlite ==" in printed
    for label in LABELS:
        line = next((ln for ln in printed.splitlines() if ln.startswith(label)), None)
        assert line is not None, (label, printed)
        assert line.rstrip().endswith("ok"), line
    assert "ratio of medians, get_latest_file_slices 50/5 partitions:" in printed
    assert "ratio of medians, get_hudi_partitions 50/5 partitions:" in printed
    assert "complete_instant samples in order" in printed

    data = json.loads(out.read_text())
    assert data["machine"]["python"] and data["machine"]["nproc"]
    backend = data["backends"]["sqlite"]
    assert "error" not in backend["info"], backend["info"]
    rows = {r["label"]: r for r in backend["rows"]}
    assert sorted(rows) == sorted(LABELS)
    for r in rows.values():
        assert r["check"] == "ok", r
        assert r["median_ms"] > 0 and r["p90_ms"] >= r["median_ms"] and r["max_ms"] >= r["p90_ms"], r
    assert rows[LABELS[0]]["iterations"] == 2
    assert all(rows[label]["iterations"] == 3 for label in LABELS[1:])
    loads = backend["info"]["loads"]
    # 50 partitions x 3 file groups x 2 versions, in commits of about 60 files
    assert loads["slices_50"] == {**loads["slices_50"], "partitions": 50, "files": 300, "commits": 6}
    for ratio in backend["info"]["ratios"].values():
        assert ratio > 0
