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


def _run_in_two_workers(tmp_path, suite: str, env: dict | None = None) -> subprocess.CompletedProcess:
    (tmp_path / "test_suite.py").write_text(suite)
    return subprocess.run([sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-n", "2", "--dist", "loadgroup",
                           "-v", "-s", "-o", "addopts=", "-c", os.devnull, "--rootdir", str(tmp_path),
                           str(tmp_path / "test_suite.py")], capture_output=True, text=True, timeout=300,
                          cwd=tmp_path, env=env)


def test_a_group_runs_in_one_worker(tmp_path):
    done = _run_in_two_workers(tmp_path, SUITE)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    grouped = [line for line in done.stdout.splitlines() if "test_grouped[" in line and "PASSED" in line]
    assert len(grouped) == 8, done.stdout[-3000:]
    workers = {line.split("]")[0].lstrip("[") for line in grouped}
    assert len(workers) == 1, f"the group ran in {sorted(workers)}:\n" + "\n".join(grouped)


# The groups tests/conftest.py's own hook gives, in real workers (the hook once had a name pytest does
# not register, and the runs up to 2026-12-03 started Trino, the Hive 4 reference and each backend's
# pipeline Spark in both workers while this file's first test passed).
CONFTEST = '''
import pytest
from tests.conftest import pytest_collection_modifyitems  # noqa: F401 - the hook under test

@pytest.fixture
def trino_server():
    return None

@pytest.fixture
def spark():
    return None
'''

PROJECT_SUITE = '''
import os
import pytest
from tests.harness.properties import rotating

@pytest.mark.parametrize("i", range(6))
def test_on_trino(trino_server, i):
    print("WORKER", os.environ["PYTEST_XDIST_WORKER"])

@pytest.mark.parametrize("i", range(4))
@pytest.mark.parametrize("backend_url", ["sqlite", "postgresql"])
def test_on_spark(spark, backend_url, i):
    print("WORKER", os.environ["PYTEST_XDIST_WORKER"])

@pytest.mark.parametrize("i", range(8))
def test_free(i):
    pass

@pytest.mark.backends_in_turn("postgresql", "sqlite")
@pytest.mark.parametrize("layout", ["a", "b", "c"])
@pytest.mark.parametrize("backend_url", ["sqlite", "postgresql"])
def test_in_turn(backend_url, layout):
    pass

@pytest.mark.backends_in_turn("postgresql", "sqlite")
@pytest.mark.parametrize("backend_url", ["sqlite", "postgresql"])
def test_in_turn_next(backend_url):
    pass

@pytest.mark.backends_in_turn("postgresql", "sqlite")
@pytest.mark.backends("sqlite")
@pytest.mark.parametrize("backend_url", ["sqlite", "postgresql"])
def test_in_turn_narrowed(backend_url):
    pass

@pytest.mark.parametrize("case", rotating(list(range(7)), 2))
def test_rotating(case):
    pass

@pytest.mark.backends_by_run("postgresql", "sqlite")
@pytest.mark.parametrize("layout", ["a", "b"])
@pytest.mark.parametrize("backend_url", ["sqlite", "postgresql"])
def test_by_run(backend_url, layout):
    pass
'''


def test_the_project_groups_hold_in_workers(tmp_path):
    (tmp_path / "conftest.py").write_text(CONFTEST)
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [root, os.environ.get("PYTHONPATH")]))}
    done = _run_in_two_workers(tmp_path, PROJECT_SUITE, env)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    passed = [line for line in done.stdout.splitlines() if "PASSED" in line and line.startswith("[gw")]
    for kind, count in (("test_on_trino[", 6), ("test_on_spark[sqlite", 4), ("test_on_spark[postgresql", 4)):
        lines = [line for line in passed if kind in line]
        assert len(lines) == count, done.stdout[-3000:]
        workers = {line.split("]")[0].lstrip("[") for line in lines}
        assert len(workers) == 1, f"{kind} ran in {sorted(workers)}:\n" + "\n".join(lines)
    groups = {line.split("@", 1)[1].split()[0] for line in passed if "@" in line}
    assert groups == {"trino", "spark-sqlite", "spark-postgresql"}, groups
    # backends_in_turn: each layout once, on the marker's backends in turn
    in_turn = sorted(line.split("test_in_turn[", 1)[1].split("]")[0] for line in passed if "test_in_turn[" in line)
    assert in_turn == ["postgresql-a", "postgresql-c", "sqlite-b"], in_turn
    # ... the turn goes on through the module (the fourth case: sqlite), among the backends a test
    # runs on at all
    assert sum("test_in_turn_next[sqlite]" in line for line in passed) == 1, passed
    assert sum("test_in_turn_next[" in line for line in passed) == 1, passed
    assert sum("test_in_turn_narrowed[sqlite]" in line for line in passed) == 1, passed
    assert sum("test_in_turn_narrowed[" in line for line in passed) == 1, passed
    # rotating: two cases in a row, the same in both workers (else xdist refuses the collection)
    rotated = sorted(int(line.split("test_rotating[", 1)[1].split("]")[0]) for line in passed
                     if "test_rotating[" in line)
    assert len(rotated) == 2 and (rotated[0] + 1 == rotated[1] or rotated == [0, 6]), rotated
    # backends_by_run: each layout once, on one of the marker's backends
    by_run = sorted(line.split("test_by_run[", 1)[1].split("]")[0] for line in passed if "test_by_run[" in line)
    assert sorted(case.split("-")[1] for case in by_run) == ["a", "b"], by_run
