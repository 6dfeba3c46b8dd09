"""The xdist groups of tests/conftest.py hold: tests of one group run in one worker.

pytest-xdist's `--dist loadgroup` silently spreads a group over the workers when pytest changes how
an item's id is stored (pytest 9.2 with pytest-xdist 3.8: every Spark, Trino and Hive 4 group then
started its JVM in each worker). This runs a small suite in two workers and checks the grouping.
"""

from __future__ import annotations

import os
import subprocess
import sys

SUITE = '''
import os
import pytest

@pytest.mark.xdist_group("one_jvm")
@pytest.mark.parametrize("i", range(8))
def test_grouped(i):
    print("WORKER", os.environ["PYTEST_XDIST_WORKER"])

@pytest.mark.parametrize("i", range(8))
def test_free(i):
    pass
'''


def test_a_group_runs_in_one_worker(tmp_path):
    (tmp_path / "test_suite.py").write_text(SUITE)
    done = subprocess.run([sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-n", "2", "--dist", "loadgroup",
                           "-v", "-s", "-o", "addopts=", "-c", os.devnull, "--rootdir", str(tmp_path),
                           str(tmp_path / "test_suite.py")], capture_output=True, text=True, timeout=300,
                          cwd=tmp_path)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    grouped = [line for line in done.stdout.splitlines() if "test_grouped[" in line and "PASSED" in line]
    assert len(grouped) == 8, done.stdout[-3000:]
    workers = {line.split("]")[0].lstrip("[") for line in grouped}
    assert len(workers) == 1, f"the group ran in {sorted(workers)}:\n" + "\n".join(grouped)
