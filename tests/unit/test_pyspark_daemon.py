"""The suite's pyspark daemon (tests/spark/pyspark_daemon.py), started as Spark starts a daemon: with
pyspark.zip and py4j's zip first on its path. It imports pyspark from the installed packages, and
what it imports before forking its workers starts no thread (a fork copies only the forking one)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pyspark

REPO_ROOT = Path(__file__).resolve().parents[2]
PROBE = """
import json, os, sys
import tests.spark.pyspark_daemon as d
print(json.dumps({"threads": len(os.listdir("/proc/self/task")), "pyspark": sys.modules["pyspark"].__file__,
                  "preloaded": [m for m in d.PRELOADED if m in sys.modules],
                  "heavy": [m for m in ("pyarrow", "pandas", "numpy") if m in sys.modules]}))
"""


def test_the_daemon_imports_installed_pyspark_and_starts_no_thread():
    lib = Path(pyspark.__file__).parent / "python" / "lib"
    zips = sorted(str(z) for z in lib.glob("*.zip"))
    assert any(z.endswith("pyspark.zip") for z in zips), zips  # what Spark puts first on a worker's path
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([*zips, str(REPO_ROOT)])}
    out = subprocess.run([sys.executable, "-c", PROBE], env=env, capture_output=True, text=True, timeout=120,
                         cwd=str(REPO_ROOT))
    assert out.returncode == 0, out.stderr[-3000:]
    seen = json.loads(out.stdout.strip().splitlines()[-1])
    assert ".zip" not in seen["pyspark"], seen
    assert seen["preloaded"] == ["pyspark.worker", "client"], seen
    assert seen["threads"] == 1 and seen["heavy"] == [], seen
