"""Spark with three metastore URIs (`hive.metastore.uris`) goes on through the next server when the
one it uses is killed (issue 40): three servers over one PostgreSQL database; the script
(tests/spark/failover.py) writes and reads through the first, kills it with SIGKILL and writes and
reads again. docs/deployment.md, "Clients with several URIs"."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.harness import run_spark_script
from tests.harness.procs import start_our_server, stop_process

SCRIPT = Path(__file__).resolve().parent / "spark" / "failover.py"

pytestmark = [pytest.mark.slow, pytest.mark.spark, pytest.mark.xdist_group("spark")]


@pytest.mark.backends("postgresql")
def test_spark_fails_over_to_the_next_uri(own_backend_url, tmp_path):
    warehouse = tmp_path / "warehouse"
    servers = [start_our_server(own_backend_url, tmp_path / f"s{i}", warehouse=warehouse) for i in range(3)]
    try:
        uris = ",".join(f"thrift://127.0.0.1:{port}" for port, _ in servers)
        result = run_spark_script(SCRIPT, uris, warehouse, tmp_path / "out.json",
                                  ["--kill-pid", str(servers[0][1].pid)])
        assert "error" not in result, result.get("error")
        assert servers[0][1].wait(timeout=10) is not None  # the first server is gone
        assert result["before"] == {"partitions": [["p=a"]], "rows": [[1, "x", "a"], [2, "y", "a"]]}
        assert result["after"] == {"partitions": [["p=a"], ["p=b"]],
                                   "rows": [[1, "x", "a"], [2, "y", "a"], [3, "z", "b"]], "tables": ["t", "u"]}
        assert all(p.poll() is None for _, p in servers[1:])
    finally:
        for _, proc in servers:
            stop_process(proc)
