"""The suite's pyspark daemon (tests/spark/pyspark_daemon.py), started as Spark starts a daemon: with
pyspark.zip and py4j's zip first on its path. It imports pyspark from the installed packages, and
what it imports before forking its workers starts no thread (a fork copies only the forking one)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import zipfile
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


def test_a_zip_of_another_version_stays(tmp_path):
    """A Spark 3.5 driver may run this interpreter's workers: its pyspark.zip (3.5) stays first then."""
    from tests.spark import pyspark_daemon

    installed = (Path(pyspark.__file__).parent / "version.py").read_bytes()
    same, other = tmp_path / "same" / "pyspark.zip", tmp_path / "other" / "pyspark.zip"
    for path, text in ((same, installed), (other, b'__version__: str = "3.5.9"\n')):
        path.parent.mkdir()
        with zipfile.ZipFile(path, "w") as z:
            z.writestr("pyspark/version.py", text)
    assert pyspark_daemon._package_of(str(same)) == "pyspark"
    assert pyspark_daemon._package_of(str(tmp_path / "py4j-0.10.9.9-src.zip")) == "py4j"
    assert pyspark_daemon._package_of(str(tmp_path / "other.zip")) is None
    assert pyspark_daemon._same_installed(str(same), "pyspark")
    assert not pyspark_daemon._same_installed(str(other), "pyspark")
