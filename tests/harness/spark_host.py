"""One Python process, and so one Spark 4 JVM, that runs the suite's Spark 4 scripts one after another.

A script run by ``run_spark_script`` with the project's interpreter and no environment of its own
(tests/spark/acceptance.py, migrate_source.py, pipeline_sql.py, hudi_partitions.py, trino_cross.py)
runs here instead of in a process of its own: the JVM and pyspark start once per test process, not
once per script. A script gets what it got as a process: ``sys.argv``, its working directory, the
environment, fresh imports of the project's modules, its stdout and stderr in its own files (the
JVM's own output goes to the host's log), and its own Spark session and Hive client (the host stops
every session a script left). The JVM starts with no options of a script; a script's builder
options are the JVM's system properties while it runs (as spark-submit makes them in a process of
its own) and are put back after it, so no script's settings reach the next.

A script that fails, times out or kills the interpreter ends the host; the next script gets a new
one. A host started before the class-data-sharing archive existed (tests/harness/jvm.py) is
replaced once it does. ``HMS_TEST_SPARK_HOST=0``: every script in a process of its own again.

``main``: the host's loop (one JSON request a line on stdin, one
JSON answer a line on stdout).
"""

from __future__ import annotations

import atexit
import json
import os
import runpy
import select
import signal
import subprocess
import sys
import time
import traceback
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[2]


#: the environment a script may bring of its own and still run in a host (that of hudi_spark_env())
ENV_KEYS = frozenset({"HUDI_BUNDLE_JAR", "HADOOP_AWS_JARS", "SPARK_SUBMIT_OPTS", "JAVA_HOME"})


def enabled(spark4: bool = True) -> bool:
    """``HMS_TEST_SPARK_HOST``: ``1`` (the default) Spark 4 scripts in a host; ``all`` Hudi's Spark 3.5
    scripts too (about 2 s of CPU less a script, and hudi_sync_jobs.py's SQL hive sync differs there,
    so not by default); ``0`` none."""
    mode = os.environ.get("HMS_TEST_SPARK_HOST", "1")
    return mode == "all" or (mode != "0" and spark4)


class HostDied(RuntimeError):
    """The host ended or did not answer in time; the message has its log's tail."""


class SparkHost:
    """The harness's side: a host process started on first use, replaced after a failure. ``python``
    runs it (Spark 4 of the project's interpreter, or Hudi's Spark 3.5); ``jars`` go on the driver's
    class path as the JVM starts (what a script's ``spark.jars`` does in a process of its own)."""

    def __init__(self, python: str, jars: str = "") -> None:
        from .procs import VENV_PYTHON

        self.python, self.jars = python, jars
        self.kind = "spark4" if python == VENV_PYTHON else "spark35"
        self._proc: subprocess.Popen | None = None
        self._with_archive = False
        self._log: Path | None = None
        self.started = 0  # hosts started (one, unless a script failed or the archive came later)

    def _start(self, env: dict[str, str]) -> None:
        import tempfile

        from . import jvm

        self._log = Path(tempfile.mkdtemp(prefix="spark-host-")) / "host.log"
        env = dict(env)
        env["SPARK_SUBMIT_OPTS"] = jvm.spark_submit_opts(self.kind)
        self._with_archive = "SharedArchiveFile" in env["SPARK_SUBMIT_OPTS"]
        with open(self._log, "wb") as log:
            # the JVM's own working directory (Spark's and Derby's litter) is the log's, not the clone
            self._proc = subprocess.Popen([self.python, "-c", _ENTRY, self.jars], cwd=str(self._log.parent),
                                          stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=log, env=env,
                                          start_new_session=True)
        self.started += 1

    def _archive_came(self) -> bool:
        from . import jvm

        archive = jvm.archive_path(self.kind) if jvm.cds_enabled() else None
        return not self._with_archive and archive is not None and archive.exists()

    def close(self) -> None:
        proc, self._proc = self._proc, None
        if proc is None:
            return
        try:
            assert proc.stdin is not None
            proc.stdin.close()  # the loop ends; the JVM ends with its parent's pipe
            proc.wait(timeout=30)
        except (OSError, subprocess.TimeoutExpired):
            kill_group(proc)

    def run(self, script: str, argv: list[str], cwd: str, stdout: str, stderr: str, env: dict[str, str],
            timeout: float) -> int:
        """The script's exit code. HostDied (and a new host next time) when it did not end normally."""
        if self._proc is not None and (self._proc.poll() is not None or self._archive_came()):
            self.close()
        if self._proc is None:
            self._start(env)
        proc = self._proc
        assert proc is not None and proc.stdin is not None and proc.stdout is not None
        request = {"script": script, "argv": argv, "cwd": cwd, "stdout": stdout, "stderr": stderr, "env": env}
        try:
            proc.stdin.write((json.dumps(request) + "\n").encode())
            proc.stdin.flush()
        except OSError:
            pass  # it died: the read below says so
        deadline = time.monotonic() + timeout
        line = b""
        while time.monotonic() < deadline:
            ready, _, _ = select.select([proc.stdout], [], [], min(5.0, max(0.0, deadline - time.monotonic())))
            if ready:
                line = proc.stdout.readline()
                break
        if not line:
            timed_out = proc.poll() is None
            self._proc = None
            kill_group(proc)
            what = f"timed out after {timeout:.0f} s" if timed_out else f"ended with {proc.returncode}"
            raise HostDied(f"the Spark host {what} running {script}\n--- host log tail ({self._log}) ---\n"
                           f"{_tail(self._log)}")
        rc = int(json.loads(line)["rc"])
        if rc != 0:  # whatever the script left behind is not the next script's problem
            self.close()
        return rc

    def log_path(self) -> Path | None:
        return self._log


# the loop, imported (`-m` would run a second copy of this module, which tests.harness imports)
_ENTRY = "import sys; from tests.harness.spark_host import main; sys.exit(main(sys.argv[1:]))"
_HOSTS: dict[tuple[str, str], SparkHost] = {}


def host(python: str, env: dict[str, str]) -> SparkHost:
    """The host of the interpreter and the jars of a script's environment (the Hudi bundle of
    ``HUDI_BUNDLE_JAR``, Hadoop's S3A jars of ``HADOOP_AWS_JARS``)."""
    jars = ",".join(j for j in [env.get("HUDI_BUNDLE_JAR", ""), *env.get("HADOOP_AWS_JARS", "").split(",")] if j)
    key = (python, jars)
    if key not in _HOSTS:
        _HOSTS[key] = SparkHost(python, jars)
        atexit.register(_HOSTS[key].close)
    return _HOSTS[key]


def _tail(path: Path | None) -> str:
    from .procs import log_tail

    return log_tail(path) if path else ""


def kill_group(proc: subprocess.Popen) -> None:
    """Kill a process and what it spawned (they share its new session/process group)."""
    for sig, wait in ((signal.SIGTERM, 10), (signal.SIGKILL, 5)):
        try:
            os.killpg(proc.pid, sig)
        except ProcessLookupError:
            return
        try:
            proc.wait(timeout=wait)
            return
        except subprocess.TimeoutExpired:
            continue


# --------------------------------------------------------------------------- the host's side


def _stop_sessions() -> None:
    from pyspark import SparkContext
    from pyspark.sql import SparkSession

    session = SparkSession.getActiveSession()
    if session is not None:
        session.stop()
    if SparkContext._active_spark_context is not None:
        SparkContext._active_spark_context.stop()


#: the JVM's system properties a script's builder set, with what they were before (None: unset)
_PROPERTIES: dict[str, str | None] = {}


def _emulate_submit_properties() -> None:
    """A script's builder options become the JVM's system properties before its session starts, as
    spark-submit makes them of the options of a process's first session: code that reads Spark's
    defaults there (a ``new SparkConf()``; Hudi's SQL writers' hive sync finds the metastore so)
    sees what it saw in a process of its own. They are put back after the script."""
    from pyspark import SparkContext
    from pyspark.sql import SparkSession

    original = SparkSession.Builder.getOrCreate

    def get_or_create(self):  # type: ignore[no-untyped-def]
        system = SparkContext._jvm.java.lang.System  # type: ignore[union-attr]
        for key, value in self._options.items():
            if key.startswith("spark."):
                _PROPERTIES.setdefault(key, system.getProperty(key))
                system.setProperty(key, str(value))
        return original(self)

    SparkSession.Builder.getOrCreate = get_or_create  # type: ignore[method-assign]


def _restore_properties() -> None:
    from pyspark import SparkContext

    system = SparkContext._jvm.java.lang.System  # type: ignore[union-attr]
    for key, before in _PROPERTIES.items():
        if before is None:
            system.clearProperty(key)
        else:
            system.setProperty(key, before)
    _PROPERTIES.clear()


def _run_one(req: dict) -> int:
    env, path, cwd, modules = dict(os.environ), list(sys.path), os.getcwd(), set(sys.modules)
    sys.stdout.flush()
    sys.stderr.flush()
    saved = os.dup(1), os.dup(2)
    with open(req["stdout"], "ab") as out, open(req["stderr"], "ab") as err:
        os.dup2(out.fileno(), 1)
        os.dup2(err.fileno(), 2)
        try:
            os.environ.clear()
            os.environ.update(req["env"])
            os.chdir(req["cwd"])
            sys.argv = [req["script"], *req["argv"]]
            sys.path.insert(0, os.path.dirname(os.path.abspath(req["script"])))  # as `python script` does
            try:
                runpy.run_path(req["script"], run_name="__main__")
                rc = 0
            except SystemExit as e:
                rc = e.code if isinstance(e.code, int) else (0 if e.code is None else 1)
            except BaseException:  # noqa: BLE001 - reported as a process would report it
                traceback.print_exc()
                rc = 1
            try:
                _stop_sessions()
                _restore_properties()
            except Exception:  # noqa: BLE001
                traceback.print_exc()
                rc = rc or 1
        finally:
            sys.stdout.flush()
            sys.stderr.flush()
            os.dup2(saved[0], 1)
            os.dup2(saved[1], 2)
            for fd in saved:
                os.close(fd)
            os.environ.clear()
            os.environ.update(env)
            os.chdir(cwd)
            sys.path[:] = path
            repo, venv = str(REPO_ROOT), os.path.realpath(sys.prefix) + os.sep
            for name in set(sys.modules) - modules:  # the project's modules import afresh, as in a new process
                origin = getattr(sys.modules[name], "__file__", None) or ""
                # never a package of the virtualenv, which CI makes inside the clone (numpy, an
                # extension module, cannot be imported twice in one process)
                if origin.startswith(repo) and not os.path.realpath(origin).startswith(venv) \
                        and "site-packages" not in origin:
                    del sys.modules[name]
    return rc


def main(argv: list[str]) -> int:
    answers = os.fdopen(os.dup(1), "w")
    os.dup2(2, 1)  # prints outside a script go to the host's log, never into the answers
    sys.stdout = os.fdopen(1, "w", buffering=1)
    from pyspark import SparkConf, SparkContext

    # the JVM starts with the driver's memory, the kind's jars and nothing of any script's settings
    conf = SparkConf(loadDefaults=False).set("spark.driver.memory", "1g")
    if argv and argv[0]:
        conf.set("spark.jars", argv[0])
    SparkContext._ensure_initialized(conf=conf)
    _emulate_submit_properties()
    for line in sys.stdin:
        if not line.strip():
            continue
        rc = _run_one(json.loads(line))
        answers.write(json.dumps({"rc": rc}) + "\n")
        answers.flush()
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
