"""The pipeline on a Spark standalone cluster (issue 40): a master and two workers started from
pyspark's own `spark-class`; writes (insert, upsert, delete) with the cluster's master commit through
our server, the cluster's tasks run in the workers' executors, and it reads back the model's rows
(the same writes in `local` mode are what every other pipeline test runs). docs/deployment.md, "The
pipeline on a Spark cluster"."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from tests.harness import jvm, run_spark_script
from tests.harness.procs import free_port, log_tail, stop_process, wait_for_port

SCRIPT = Path(__file__).resolve().parent / "spark" / "cluster_pipeline.py"

pytestmark = [pytest.mark.slow, pytest.mark.spark, pytest.mark.xdist_group("spark")]


def _spark_class() -> str:
    import pyspark

    return str(Path(pyspark.__file__).resolve().parent / "bin" / "spark-class")


def _start(args: list[str], log: Path, env: dict) -> subprocess.Popen:
    with open(log, "wb") as fh:
        return subprocess.Popen([_spark_class(), *args], stdout=fh, stderr=subprocess.STDOUT,
                                stdin=subprocess.DEVNULL, env=env, start_new_session=True)


@pytest.mark.backends("sqlite")
def test_pipeline_on_a_standalone_cluster(our_server, tmp_path):
    # the master's, workers' and executors' JVMs get the suite's options (C1 only, serial GC) as its drivers
    flags = " ".join(jvm.java_flags())
    env = {**os.environ, "SPARK_LOCAL_IP": "127.0.0.1", "SPARK_NO_DAEMONIZE": "1", "SPARK_DAEMON_JAVA_OPTS": flags,
           "SPARK_DAEMON_MEMORY": "256m", "SPARK_WORKER_OPTS": "-Dspark.worker.cleanup.enabled=false"}
    port = free_port()
    procs = [_start(["org.apache.spark.deploy.master.Master", "--host", "127.0.0.1", "--port", str(port),
                     "--webui-port", str(free_port())], tmp_path / "master.log", env)]
    try:
        assert wait_for_port(port, timeout=60, alive=lambda: procs[0].poll() is None), \
            log_tail(tmp_path / "master.log")
        for i in range(2):
            (tmp_path / f"work{i}").mkdir()
            procs.append(_start(["org.apache.spark.deploy.worker.Worker", f"spark://127.0.0.1:{port}",
                                 "--host", "127.0.0.1", "--cores", "1", "--memory", "768m",
                                 "--webui-port", str(free_port()), "--work-dir", str(tmp_path / f"work{i}")],
                                tmp_path / f"worker{i}.log", env))
        result = run_spark_script(SCRIPT, our_server, tmp_path / "warehouse", tmp_path / "out.json",
                                  ["--master", f"spark://127.0.0.1:{port}", f"--executor-java-opts={flags}"],
                                  own_process=True)
        assert "error" not in result, result.get("error", "") + "\n" + log_tail(tmp_path / "worker0.log")
        cluster = result["cluster"]
        model = {i: [i, f"c{i % 3}", float(i)] for i in range(60)}
        model.update({i: [i, f"c{i % 3}", i + 0.5] for i in range(0, 60, 7)})
        del model[5]
        assert cluster["master"] == f"spark://127.0.0.1:{port}"
        assert cluster["rows"] == [model[i] for i in sorted(model)]
        assert len(cluster["executors"]) == 3  # the driver and one executor on each worker
        assert cluster["task_dirs"] and all(d.startswith(str(tmp_path / "work")) for d in cluster["task_dirs"])
        assert {d.split("/work")[1][0] for d in cluster["task_dirs"]} <= {"0", "1"}
    finally:
        for p in reversed(procs):
            stop_process(p, grace=5)
