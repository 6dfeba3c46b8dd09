"""Starting and stopping the two metastores and their databases, for the benchmark.

Self-contained on purpose: the benchmark runs from a fresh clone without the tests. The test
harness (tests/harness/procs.py) takes its generic process helpers from here.
"""

from __future__ import annotations

import os
import re
import secrets
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[1]
PYTHON = os.environ.get("HMS_BENCH_PYTHON") or sys.executable
REFERENCE_START = Path(os.environ.get("HMS_REFERENCE_START", REPO_ROOT / "tools" / "reference-hms.sh"))
PG_ADMIN_URL = os.environ.get("HMS_BENCH_POSTGRES_URL", "postgresql+psycopg://postgres@127.0.0.1:5432/postgres")


class StartError(RuntimeError):
    pass


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


# Consecutive ports come from below the kernel's ephemeral range (32768-60999 by default), which
# it never hands to a connecting socket: a Galera node's ports, chosen then bound seconds later
# (after mariadb-install-db), were once taken meanwhile by one of a test run's thousands of
# outgoing connections ("Address already in use").
_FIXED_PORTS = (15000, 32000)


def free_ports(n: int, attempts: int = 200) -> int:
    """The first of `n` consecutive ports free now (e.g. --metrics-port with --workers n), below
    the ephemeral range."""
    rng = secrets.SystemRandom()
    for _ in range(attempts):
        first = rng.randrange(_FIXED_PORTS[0], _FIXED_PORTS[1] - n)
        socks = []
        try:
            for p in range(first, first + n):
                s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
                socks.append(s)
                s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
                s.bind(("127.0.0.1", p))
            return first
        except OSError:
            continue
        finally:
            for s in socks:
                s.close()
    raise RuntimeError(f"no {n} consecutive free ports")


def port_open(port: int, host: str = "127.0.0.1", timeout: float = 0.5) -> bool:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.settimeout(timeout)
        return s.connect_ex((host, port)) == 0


def log_tail(path: Path | str, lines: int = 40) -> str:
    try:
        with open(path, "rb") as f:
            f.seek(0, os.SEEK_END)
            f.seek(max(0, f.tell() - 64 * 1024))
            text = f.read().decode("utf-8", "replace")
    except OSError as e:
        return f"<no log at {path}: {e}>"
    return "\n".join(text.splitlines()[-lines:])


def _alive(pid: int) -> bool:
    """Is `pid` running? A zombie child still answers kill(0); reap it if it is ours."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    try:
        done, _ = os.waitpid(pid, os.WNOHANG)
        return done == 0
    except ChildProcessError:
        return True


def stop_pid(pid: int, grace: float = 20.0) -> None:
    """SIGTERM one process we started, wait up to `grace` seconds, then SIGKILL it."""
    try:
        os.kill(pid, signal.SIGTERM)
    except ProcessLookupError:
        return
    deadline = time.monotonic() + grace
    while time.monotonic() < deadline:
        if not _alive(pid):
            return
        time.sleep(0.1)
    try:
        os.kill(pid, signal.SIGKILL)
    except ProcessLookupError:
        return
    for _ in range(50):
        if not _alive(pid):
            return
        time.sleep(0.1)


@dataclass
class Server:
    """A running metastore: ``name`` is "reference" or "ours"."""

    name: str
    port: int
    pid: int
    log_path: Path
    description: str
    start_seconds: float
    _stopped: bool = field(default=False, repr=False)

    def stop(self) -> None:
        if not self._stopped:
            self._stopped = True
            stop_pid(self.pid)


# --------------------------------------------------------------------------- PostgreSQL databases


def _pg_admin():
    import psycopg
    from sqlalchemy.engine import make_url

    u = make_url(PG_ADMIN_URL)
    return psycopg.connect(host=u.host or "127.0.0.1", port=u.port or 5432, user=u.username or "postgres",
                           password=u.password, dbname=u.database or "postgres", autocommit=True)


def pg_url(dbname: str, driver: str = "sqlalchemy") -> str:
    from sqlalchemy.engine import make_url

    u = make_url(PG_ADMIN_URL)
    host, port = u.host or "127.0.0.1", u.port or 5432
    if driver == "jdbc":
        return f"jdbc:postgresql://{host}:{port}/{dbname}"
    return u.set(database=dbname).render_as_string(hide_password=False)


def pg_user() -> str:
    from sqlalchemy.engine import make_url

    return make_url(PG_ADMIN_URL).username or "postgres"


def create_pg_database(prefix: str) -> str:
    name = f"{prefix}_{secrets.token_hex(4)}"
    with _pg_admin() as conn:
        conn.execute(f'CREATE DATABASE "{name}"')
    return name


def drop_pg_database(name: str) -> None:
    with _pg_admin() as conn:
        conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


def analyze_pg_database(name: str) -> float:
    """ANALYZE every table of one database (what autovacuum would do after a bulk load; this
    machine's PostgreSQL runs with autovacuum=off).  Returns the seconds it took."""
    import psycopg
    from sqlalchemy.engine import make_url

    u = make_url(PG_ADMIN_URL)
    t0 = time.monotonic()
    with psycopg.connect(host=u.host or "127.0.0.1", port=u.port or 5432, user=u.username or "postgres",
                         password=u.password, dbname=name, autocommit=True) as conn:
        conn.execute("ANALYZE")
    return time.monotonic() - t0


def pg_setting(name: str) -> str:
    try:
        with _pg_admin() as conn:
            return conn.execute("SELECT setting FROM pg_settings WHERE name = %s", (name,)).fetchone()[0]
    except Exception:
        return "?"


def pg_available() -> tuple[bool, str]:
    try:
        with _pg_admin() as conn:
            conn.execute("SELECT 1")
        return True, ""
    except Exception as e:
        return False, f"{type(e).__name__}: {str(e).strip()[:200]}"


def pg_version() -> str:
    try:
        with _pg_admin() as conn:
            return conn.execute("SHOW server_version").fetchone()[0]
    except Exception:
        return "?"


# --------------------------------------------------------------------------- servers


def start_reference(workdir: Path, jdbc_url: str | None = None, jdbc_user: str | None = None,
                    heap: str = "2g", attempts: int = 3, system_props: dict | None = None) -> Server:
    """The reference Hive Metastore 2.3.10 via tools/reference-hms.sh (embedded Derby unless ``jdbc_url``).

    ``system_props`` become ``-D`` options through JAVA_TOOL_OPTIONS (HiveConf reads HiveConf
    variables from system properties), since the script writes its own hive-site.xml."""
    env = dict(os.environ)
    if system_props:
        opts = " ".join(f"-D{k}={v}" for k, v in system_props.items())
        env["JAVA_TOOL_OPTIONS"] = (env.get("JAVA_TOOL_OPTIONS", "") + " " + opts).strip()
    if not REFERENCE_START.exists():
        raise StartError(f"reference HMS launcher not found: {REFERENCE_START}")
    workdir.mkdir(parents=True, exist_ok=True)
    last = ""
    for attempt in range(attempts):
        port = free_port()
        cmd = ["bash", str(REFERENCE_START), "--port", str(port), "--dir", str(workdir),
               "--python", PYTHON, "--heap", heap]
        if jdbc_url:
            cmd += ["--jdbc-url", jdbc_url, "--jdbc-user", jdbc_user or "postgres"]
        t0 = time.monotonic()
        res = subprocess.run(cmd, capture_output=True, text=True, timeout=300, env=env)
        m = re.search(r"pid=(\d+) port=(\d+)", res.stdout)
        if res.returncode == 0 and m:
            backend = "PostgreSQL (DataNucleus/JDBC)" if jdbc_url else "embedded Derby"
            return Server("reference", int(m.group(2)), int(m.group(1)), workdir / "hms.log",
                          f"Hive Metastore 2.3.10 on {backend}", round(time.monotonic() - t0, 1))
        last = (f"attempt {attempt + 1}: exit {res.returncode}\n{res.stdout}\n{res.stderr}\n"
                f"{log_tail(workdir / 'hms.log')}")
        pidfile = workdir / "hms.pid"
        if pidfile.exists():
            try:
                stop_pid(int(pidfile.read_text().strip()), grace=5)
            except ValueError:
                pass
    raise StartError(f"reference HMS did not start\n{last}")


def start_ours(db_url: str, workdir: Path, workers: int = 1, log_level: str = "INFO",
               timeout: float = 90.0) -> Server:
    """``hudi-metastore serve`` (as ``python -m adapter.cli``) on ``db_url``."""
    workdir.mkdir(parents=True, exist_ok=True)
    warehouse = workdir / "warehouse"
    warehouse.mkdir(exist_ok=True)
    log_path = workdir / "server.log"
    port = free_port()
    cmd = [PYTHON, "-m", "adapter.cli", "--log-level", log_level, "serve", "--host", "127.0.0.1",
           "--port", str(port), "--db-url", db_url, "--warehouse", str(warehouse), "--workers", str(workers)]
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(REPO_ROOT)] + ([env["PYTHONPATH"]] if env.get("PYTHONPATH") else []))
    env.setdefault("PYTHONUNBUFFERED", "1")
    t0 = time.monotonic()
    with open(log_path, "ab") as log:
        proc = subprocess.Popen(cmd, cwd=str(REPO_ROOT), stdout=log, stderr=subprocess.STDOUT,
                                stdin=subprocess.DEVNULL, env=env)
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if port_open(port):
            break
        if proc.poll() is not None:
            raise StartError(f"our server exited with {proc.returncode}\n{' '.join(cmd)}\n{log_tail(log_path)}")
        time.sleep(0.2)
    else:
        stop_pid(proc.pid)
        raise StartError(f"our server did not open port {port} in {timeout:.0f} s\n{log_tail(log_path)}")
    backend = db_url.split(":", 1)[0]
    return Server("ours", port, proc.pid, log_path,
                  f"hudi-metastore ({backend}, --workers {workers})", round(time.monotonic() - t0, 1))


def cleanup_all(actions: list[Callable[[], None]]) -> None:
    """Run cleanup actions in reverse order; report but do not raise failures."""
    for act in reversed(actions):
        try:
            act()
        except Exception as e:
            print(f"cleanup: {type(e).__name__}: {e}", file=sys.stderr)


def thrift_client(port: int):
    """A Hive Metastore Thrift client on 127.0.0.1:port (binary protocol, 1 MiB buffer, an hour's read
    timeout); returns (client, transport)."""
    from thrift.protocol.TBinaryProtocol import TBinaryProtocolAccelerated
    from thrift.transport.TSocket import TSocket
    from thrift.transport.TTransport import TBufferedTransport

    from thrift_idl.hive_metastore import ThriftHiveMetastore

    sock = TSocket("127.0.0.1", port)
    sock.setTimeout(3_600_000)
    transport = TBufferedTransport(sock, 1 << 20)
    transport.open()
    return ThriftHiveMetastore.Client(TBinaryProtocolAccelerated(transport)), transport
