"""Starting and stopping metastore processes (the reference Hive Metastore and our server)."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Sequence
from pathlib import Path

# generic process helpers are the benchmark's (bench/ runs without the tests, not the reverse)
from bench.procs import free_port, free_ports, port_open  # noqa: F401  (re-exported by tests.harness)
from bench.procs import log_tail as _log_tail
from bench.procs import stop_pid as _stop_pid

REPO_ROOT = Path(__file__).resolve().parents[2]
# The interpreter that runs the tests is the one with pyspark / the project installed (the venv).
VENV_PYTHON = os.environ.get("HMS_TEST_PYTHON") or sys.executable
# the project's launcher of a reference Hive Metastore (2.3 from pyspark's jars, or 4.x); see its header
REFERENCE_START = Path(os.environ.get("HMS_REFERENCE_START", REPO_ROOT / "tools" / "reference-hms.sh"))
#: reference Hive versions the launcher serves (``--hive``)
REFERENCE_VERSIONS = ("2.3", "4")
SERVER_START_TIMEOUT = float(os.environ.get("HMS_TEST_SERVER_START_TIMEOUT", "60"))


class ServerStartError(RuntimeError):
    """A metastore process did not come up; the message carries the tail of its log."""


def wait_for_port(
    port: int,
    timeout: float = SERVER_START_TIMEOUT,
    alive: Callable[[], bool] | None = None,
    host: str = "127.0.0.1",
) -> bool:
    """Poll until ``host:port`` accepts connections; False on timeout or when ``alive()`` is False."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if port_open(port, host):
            return True
        if alive is not None and not alive():
            return False
        time.sleep(0.05)
    return False


def log_tail(path: Path | str, lines: int = 60) -> str:
    return _log_tail(path, lines)


def stop_pid(pid: int, grace: float = 15.0) -> None:
    _stop_pid(pid, grace)


def stop_process(proc: subprocess.Popen, grace: float = 15.0) -> int | None:
    """Clean stop of a child we started: SIGTERM, wait, then SIGKILL. Returns the exit code."""
    if proc.poll() is None:
        try:
            proc.send_signal(signal.SIGTERM)
            proc.wait(timeout=grace)
        except subprocess.TimeoutExpired:
            proc.kill()
            try:
                proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                pass
    for stream in (proc.stdout, proc.stderr, proc.stdin):
        if stream is not None:
            try:
                stream.close()
            except OSError:
                pass
    return proc.returncode


def run_killed_at(cmd: Sequence[str], at: Callable[[str], bool], cwd: Path | str | None = None,
                  env: dict | None = None, timeout: float = 600) -> subprocess.CompletedProcess:
    """Fault injection from outside: run `cmd`, read its stderr line by line and SIGKILL it at the
    first line for which `at(line)` is true. The result holds the output up to the kill (returncode
    -9 when it was killed, the process's own exit code when it ended before that point)."""
    proc = subprocess.Popen(list(cmd), cwd=cwd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            stdin=subprocess.DEVNULL, text=True)
    stdout, stderr = proc.stdout, proc.stderr
    assert stdout is not None and stderr is not None
    out: list[str] = []
    reader = threading.Thread(target=lambda: out.append(stdout.read()), daemon=True)  # no pipe may fill up
    reader.start()
    timer = threading.Timer(timeout, proc.kill)
    timer.start()
    err = []
    try:
        for line in stderr:
            err.append(line)
            if at(line):
                proc.send_signal(signal.SIGKILL)
                break
        proc.wait()
    finally:
        timer.cancel()
    reader.join(timeout=30)
    err.append(stderr.read())
    stop_process(proc)
    return subprocess.CompletedProcess(list(cmd), proc.returncode, "".join(out), "".join(err))


# --------------------------------------------------------------------------- reference HMS


def reference_env() -> dict[str, str]:
    """The launcher's environment: the suite's JVM options (tests/harness/jvm.py) and short pauses
    between the reference's retries of a failed store call, unless set already."""
    from .jvm import java_flags

    env = dict(os.environ)
    env.setdefault("HMS_REFERENCE_JAVA_OPTS", " ".join(java_flags()))
    env.setdefault("HMS_REFERENCE_RETRY_INTERVAL", "10ms")  # a failed store call answers in ms, not ~20 s
    return env


def start_reference_hms(
    tmpdir: Path | str,
    port: int | None = None,
    python: str = VENV_PYTHON,
    extra_args: Sequence[str] = (),
    attempts: int = 3,
    hive: str = "2.3",
) -> tuple[int, Callable[[], None]]:
    """Start the reference Hive Metastore ``hive`` (2.3 or 4; embedded Derby) in ``tmpdir``.

    Returns ``(port, stop)``; ``stop()`` terminates the JVM (SIGTERM, then SIGKILL) and may be
    called more than once.  The metastore's log is ``tmpdir/hms.log``.  Hive 4 needs
    ``python -m tools.java_artifacts fetch hive4-metastore`` first (FileNotFoundError otherwise).
    """
    if not REFERENCE_START.exists():
        raise FileNotFoundError(f"reference HMS launcher not found: {REFERENCE_START}")
    if hive not in REFERENCE_VERSIONS:
        raise ValueError(f"unknown reference Hive version {hive!r} (one of {', '.join(REFERENCE_VERSIONS)})")
    if hive == "4":
        from tools.java_artifacts import cached, fetch_command

        if cached("hive4-metastore") is None:
            raise FileNotFoundError(f"the Hive 4 metastore is not fetched: run {fetch_command('hive4-metastore')}")
    tmpdir = Path(tmpdir)
    tmpdir.mkdir(parents=True, exist_ok=True)
    last_error = ""
    for attempt in range(attempts):
        p = port or free_port()
        cmd = ["bash", str(REFERENCE_START), "--port", str(p), "--dir", str(tmpdir),
               "--python", python, *(["--hive", hive] if hive != "2.3" else []), *extra_args]
        res = subprocess.run(cmd, capture_output=True, text=True, timeout=300, env=reference_env())
        m = re.search(r"pid=(\d+) port=(\d+)", res.stdout)
        if res.returncode == 0 and m:
            pid = int(m.group(1))
            stopped = []

            def stop(pid=pid, stopped=stopped):
                if not stopped:
                    stopped.append(True)
                    stop_pid(pid)

            return int(m.group(2)), stop
        last_error = (
            f"attempt {attempt + 1}: {' '.join(cmd)} exited {res.returncode}\n"
            f"stdout: {res.stdout.strip()}\nstderr: {res.stderr.strip()}\n"
            f"--- hms.log tail ---\n{log_tail(tmpdir / 'hms.log')}"
        )
        pidfile = tmpdir / "hms.pid"
        if pidfile.exists():  # a JVM that lost the port race may still be up
            try:
                stop_pid(int(pidfile.read_text().strip()), grace=5)
            except ValueError:
                pass
        if port:  # an explicit port will not get better by retrying
            break
    raise ServerStartError(f"reference HMS did not start\n{last_error}")


# --------------------------------------------------------------------------- our server


def server_command(db_url: str, port: int, warehouse: Path | str, python: str = VENV_PYTHON,
                   extra_args: Sequence[str] = ()) -> list[str]:
    return [python, "-m", "adapter.cli", "serve", "--host", "127.0.0.1", "--port", str(port),
            "--db-url", db_url, "--warehouse", str(warehouse), *extra_args]


def start_our_server(
    db_url: str,
    tmpdir: Path | str,
    extra_args: Sequence[str] = (),
    port: int | None = None,
    warehouse: Path | str | None = None,
    timeout: float = SERVER_START_TIMEOUT,
    env: dict | None = None,
) -> tuple[int, subprocess.Popen]:
    """Start ``python -m adapter.cli serve`` on ``db_url`` and wait until its port accepts.

    Returns ``(port, proc)``; stop it with :func:`stop_process`.  stdout+stderr go to
    ``tmpdir/server.log`` (``proc.log_path``); on failure the log tail is in the exception. A port
    this function chose that another process took meanwhile is chosen again (twice at most).
    """
    for attempt in range(3):
        try:
            return _start_our_server(db_url, tmpdir, extra_args, port, warehouse, timeout, env)
        except ServerStartError as exc:
            if port is not None or attempt == 2 or "Address already in use" not in str(exc):
                raise
    raise AssertionError("unreachable")


def _start_our_server(db_url: str, tmpdir: Path | str, extra_args: Sequence[str], port: int | None,
                      warehouse: Path | str | None, timeout: float, env: dict | None
                      ) -> tuple[int, subprocess.Popen]:
    tmpdir = Path(tmpdir)
    tmpdir.mkdir(parents=True, exist_ok=True)
    warehouse = Path(warehouse) if warehouse else tmpdir / "warehouse"
    warehouse.mkdir(parents=True, exist_ok=True)
    port = port or free_port()
    log_path = tmpdir / "server.log"
    cmd = server_command(db_url, port, warehouse, extra_args=extra_args)
    child_env = dict(os.environ)
    child_env["PYTHONPATH"] = os.pathsep.join(
        [str(REPO_ROOT)] + ([child_env["PYTHONPATH"]] if child_env.get("PYTHONPATH") else []))
    child_env.setdefault("PYTHONUNBUFFERED", "1")
    if env:
        child_env.update(env)
    log = open(log_path, "ab")
    try:
        proc = subprocess.Popen(cmd, cwd=str(REPO_ROOT), stdout=log, stderr=subprocess.STDOUT,
                                stdin=subprocess.DEVNULL, env=child_env)
    finally:
        log.close()
    proc.log_path = log_path  # type: ignore[attr-defined]
    proc.port = port  # type: ignore[attr-defined]
    proc.warehouse = warehouse  # type: ignore[attr-defined]
    t0 = time.monotonic()
    if not wait_for_port(port, timeout=timeout, alive=lambda: proc.poll() is None):
        exited = proc.poll()
        stop_process(proc)
        what = (f"exited with code {exited}" if exited is not None
                else f"did not accept connections on port {port} within {timeout:.0f} s")
        raise ServerStartError(
            f"our server {what}\ncommand: {' '.join(cmd)}\n"
            f"--- {log_path} (tail) ---\n{log_tail(log_path)}"
        )
    proc.start_seconds = round(time.monotonic() - t0, 2)  # type: ignore[attr-defined]
    return port, proc


class CheckedServer:
    """Our server process (from `start_our_server`) with a health check for tests that feed it bad input."""

    def __init__(self, port: int, proc: subprocess.Popen, db_url: str):
        self.port, self.proc, self.db_url = port, proc, db_url
        self.warehouse = Path(proc.warehouse)  # type: ignore[attr-defined]
        self.log_path = Path(proc.log_path)  # type: ignore[attr-defined]

    def log(self) -> str:
        return log_tail(self.log_path, 80)

    def assert_healthy(self) -> None:
        """The process is alive and a NEW connection answers."""
        from thrift_idl.hive_metastore.ttypes import NoSuchObjectException

        from .thrift import open_thrift_client

        assert self.proc.poll() is None, f"server exited with {self.proc.returncode}\n{self.log()}"
        client, transport = open_thrift_client(self.port, timeout=20)
        try:
            assert isinstance(client.get_all_databases(), list)
            try:
                client.get_database(f"missing_{os.urandom(3).hex()}")
            except NoSuchObjectException:
                pass
            else:
                raise AssertionError("get_database of a missing database did not raise NoSuchObjectException")
        finally:
            transport.close()

    def stop(self) -> None:
        stop_process(self.proc)


def start_checked_server(tmpdir: Path, db_url: str | None = None, extra_args: Sequence[str] = ()) -> CheckedServer:
    """Our server on `db_url` (default: a SQLite file in `tmpdir`); ServerStartError if it does not come up."""
    url = db_url or f"sqlite:///{Path(tmpdir) / 'metastore.db'}"
    port, proc = start_our_server(url, tmpdir, extra_args=extra_args)
    return CheckedServer(port, proc, url)
