"""Running PySpark scripts: Spark 4 scripts one after another in one shared process and JVM per test
process (tests/harness/spark_host.py), Spark 3.5 + Hudi scripts in a subprocess each."""

from __future__ import annotations

import json
import os
import subprocess
import time
from collections.abc import Sequence
from pathlib import Path

from . import jvm, spark_host
from .procs import REPO_ROOT, VENV_PYTHON, log_tail

SPARK_SCRIPT_TIMEOUT = float(os.environ.get("HMS_TEST_SPARK_TIMEOUT", "900"))


class SparkScriptError(RuntimeError):
    """The Spark script failed or produced no result; the message has the stderr tail."""


def metastore_uri_for(target: int | str) -> str:
    """``9083`` -> ``thrift://127.0.0.1:9083``; URIs are returned unchanged."""
    if isinstance(target, int) or str(target).isdigit():
        return f"thrift://127.0.0.1:{int(target)}"
    return str(target)


def run_spark_script(
    script: Path | str,
    metastore_uri: int | str,
    warehouse_dir: Path | str,
    out_json: Path | str,
    extra_args: Sequence[str] = (),
    timeout: float = SPARK_SCRIPT_TIMEOUT,
    python: str = VENV_PYTHON,
    env: dict | None = None,
    own_process: bool = False,
) -> dict:
    """Run ``script --metastore-uri U --warehouse W --out O [extra_args]`` and return the JSON.

    The script runs in its own interpreter (and thus its own JVM and Spark session, alive for the
    whole script), or, with this interpreter and no ``env`` of its own, in the shared Spark host
    (its own Spark session and Hive client there; tests/harness/spark_host.py).  Its stdout/stderr
    go to ``<out_json>.stdout.log`` / ``<out_json>.stderr.log`` and its working directory is the
    folder of ``out_json`` (Spark litter such as derby.log lands there). ``own_process``: never in a
    host.
    ``result["meta"]["wall_s"]`` is the measured wall time (with JVM start-up in a process of its own).
    """
    out_json = Path(out_json).resolve()
    out_json.parent.mkdir(parents=True, exist_ok=True)
    warehouse_dir = Path(warehouse_dir).resolve()
    warehouse_dir.mkdir(parents=True, exist_ok=True)
    if out_json.exists():
        out_json.unlink()
    stdout_log = out_json.with_name(out_json.name + ".stdout.log")
    stderr_log = out_json.with_name(out_json.name + ".stderr.log")
    cmd = [python, str(script), "--metastore-uri", metastore_uri_for(metastore_uri),
           "--warehouse", str(warehouse_dir), "--out", str(out_json), *extra_args]
    child_env = dict(os.environ)
    child_env["PYTHONPATH"] = os.pathsep.join(
        [str(REPO_ROOT)] + ([child_env["PYTHONPATH"]] if child_env.get("PYTHONPATH") else []))
    child_env.setdefault("PYSPARK_PYTHON", python)
    child_env.setdefault("PYSPARK_DRIVER_PYTHON", python)
    child_env.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
    child_env.setdefault("PYTHONUNBUFFERED", "1")
    # the driver's JVM options (tests/harness/jvm.py): Spark 4 of this interpreter, else Hudi's Spark 3.5
    child_env["SPARK_SUBMIT_OPTS"] = jvm.spark_submit_opts("spark4" if python == VENV_PYTHON else "spark35")
    if env:
        child_env.update(env)
    t0 = time.monotonic()
    # the shared JVM of this interpreter and these jars
    if spark_host.enabled(python == VENV_PYTHON) and not own_process and set(env or ()) <= spark_host.ENV_KEYS:
        for log in (stdout_log, stderr_log):
            log.write_bytes(b"")
        host = spark_host.host(python, child_env)
        try:
            rc = host.run(str(script), [str(a) for a in cmd[2:]], str(out_json.parent),
                                       str(stdout_log), str(stderr_log), child_env, timeout)
        except spark_host.HostDied as e:
            raise SparkScriptError(f"{script} against {metastore_uri_for(metastore_uri)}: {e}\n"
                                   f"--- stderr tail ---\n{log_tail(stderr_log)}") from None
        return _result(script, out_json, stderr_log, rc, t0, host.log_path())
    with open(stdout_log, "wb") as so, open(stderr_log, "wb") as se:
        proc = subprocess.Popen(cmd, cwd=str(out_json.parent), stdout=so, stderr=se,
                                stdin=subprocess.DEVNULL, env=child_env, start_new_session=True)
        try:
            rc = proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            spark_host.kill_group(proc)
            raise SparkScriptError(
                f"{script} timed out after {timeout:.0f} s against {metastore_uri_for(metastore_uri)}\n"
                f"--- stderr tail ---\n{log_tail(stderr_log)}") from None
    return _result(script, out_json, stderr_log, rc, t0)


def _result(script: Path | str, out_json: Path, stderr_log: Path, rc: int, t0: float,
            host_log: Path | None = None) -> dict:
    wall = round(time.monotonic() - t0, 2)
    if not out_json.exists():
        raise SparkScriptError(
            f"{script} exited {rc} without writing {out_json}\n"
            f"--- stderr tail ({stderr_log}) ---\n{log_tail(stderr_log)}"
            + (f"\n--- Spark host log tail ({host_log}) ---\n{log_tail(host_log)}" if host_log else ""))
    with open(out_json) as f:
        result = json.load(f)
    result.setdefault("meta", {})
    result["meta"]["wall_s"] = wall
    result["meta"]["returncode"] = rc
    result["meta"]["stderr_log"] = str(stderr_log)
    return result
