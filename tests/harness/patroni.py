"""PostgreSQL with streaming replication and automatic failover on loopback: one etcd (Debian's
`etcd-server`) and three Patroni nodes (Debian's `patroni`, PostgreSQL of `postgresql`), each on its
own ports. Patroni runs in synchronous mode (a commit returns once a standby has it, and only that
standby may be promoted), so a failover loses no acknowledged commit.

The primary is bootstrapped from a cached copy of an initialized data directory holding the
`test` database with the store's schema at head (`_datadir_template`); the standbys are made by
`pg_basebackup`. Clients find the primary themselves: `url()` lists the three nodes with
`target_session_attrs=read-write` (libpq tries them in order and keeps the one that accepts writes).
Faults: `kill(i)` kills node i's Patroni and its PostgreSQL with SIGKILL (the node dies; after
Patroni's leader key expires, `ttl` seconds, the synchronous standby is promoted).

    cluster = PatroniCluster(); cluster.start()
    cluster.url()  # postgresql+psycopg://postgres@/test?host=127.0.0.1:p1&host=...&target_session_attrs=read-write
"""

from __future__ import annotations

import hashlib
import json
import os
import pwd
import shutil
import signal
import subprocess
import tempfile
import time
import urllib.error
import urllib.request
from pathlib import Path

from .procs import free_ports, log_tail, port_open

PG_BIN = Path(sorted(Path("/usr/lib/postgresql").glob("*/bin"))[-1]) if Path("/usr/lib/postgresql").is_dir() \
    else Path("/usr/lib/postgresql/bin")
TTL = 8  # seconds before a dead leader's key expires (Patroni's default: 30)


def available() -> str | None:
    for what in ("patroni", "etcd"):
        if shutil.which(what) is None:
            return f"{what} is missing (.ci/services.sh installs patroni and etcd-server)"
    if not (PG_BIN / "postgres").exists():
        return f"{PG_BIN / 'postgres'} is missing"
    return None


def _user() -> tuple[int, int] | None:
    """(uid, gid) to run PostgreSQL as when we are root (it refuses to run as root), else None."""
    if os.geteuid() != 0:
        return None
    pw = pwd.getpwnam("postgres")
    return pw.pw_uid, pw.pw_gid


def _chown_tree(path: Path) -> None:
    ids = _user()
    if ids is None:
        return
    for root, dirs, files in os.walk(path):
        for name in (root, *(os.path.join(root, n) for n in dirs + files)):
            os.chown(name, *ids)


def _popen(args: list[str], log: Path, env: dict | None = None) -> subprocess.Popen:
    ids = _user()
    with open(log, "ab") as out:
        return subprocess.Popen(args, stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                start_new_session=True, env=env,
                                user=ids[0] if ids else None, group=ids[1] if ids else None)


def _datadir_template() -> Path:
    """An initdb'd data directory with the `test` database at the store's schema head (loopback
    trust), made once per PostgreSQL version and state of the migrations, in the user's cache."""
    from .backends import _migrations_key

    version = subprocess.run([str(PG_BIN / "postgres"), "--version"], capture_output=True, text=True,
                             check=True).stdout
    digest = hashlib.sha256((version + "1" + _migrations_key()).encode()).hexdigest()[:12]
    cache = Path(os.environ.get("HMS_CACHE_DIR", Path.home() / ".cache" / "hudi-metastore"))
    template = cache / f"patroni-datadir-{digest}"
    if template.is_dir():
        return template
    cache.mkdir(parents=True, exist_ok=True)
    work = Path(tempfile.mkdtemp(prefix="hms-patroni-template-"))
    os.chmod(work, 0o755)
    data = work / "data"
    _chown_tree(work)
    ids = _user()
    run_as = {"user": ids[0], "group": ids[1]} if ids else {}
    subprocess.run([str(PG_BIN / "initdb"), "-D", str(data), "-U", "postgres", "-A", "trust", "-E", "UTF8",
                    "--no-sync"], check=True, capture_output=True, timeout=300, **run_as)  # type: ignore[arg-type]
    port = free_ports(1)
    proc = subprocess.Popen([str(PG_BIN / "postgres"), "-D", str(data), "-p", str(port), "-c",
                             "listen_addresses=127.0.0.1", "-c", f"unix_socket_directories={work}", "-c", "fsync=off"],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, **run_as)  # type: ignore[arg-type]
    try:
        deadline = time.monotonic() + 60
        while not port_open(port):
            assert time.monotonic() < deadline and proc.poll() is None, "PostgreSQL for the template did not start"
            time.sleep(0.1)
        from sqlalchemy import create_engine, text
        from sqlalchemy.pool import NullPool

        from store.db.migrations import upgrade

        admin = create_engine(f"postgresql+psycopg://postgres@127.0.0.1:{port}/postgres",
                              isolation_level="AUTOCOMMIT", poolclass=NullPool)
        with admin.connect() as conn:
            conn.execute(text("CREATE DATABASE test"))
        admin.dispose()
        engine = create_engine(f"postgresql+psycopg://postgres@127.0.0.1:{port}/test", poolclass=NullPool)
        try:
            upgrade(engine)
        finally:
            engine.dispose()
    finally:
        proc.terminate()  # a clean shutdown: the copy starts without recovery
        proc.wait(timeout=60)
    staged = Path(tempfile.mkdtemp(prefix=template.name + ".", dir=cache))
    shutil.copytree(data, staged / "data", symlinks=True)
    shutil.rmtree(work, ignore_errors=True)
    try:
        os.rename(staged, template)
    except OSError:
        shutil.rmtree(staged, ignore_errors=True)
    return template


class PatroniNode:
    def __init__(self, index: int, base: Path, pg_port: int, api_port: int):
        self.index = index
        self.name = f"pg{index}"
        self.pg_port = pg_port
        self.api_port = api_port
        self.dir = base / self.name
        self.data = self.dir / "data"
        self.log = self.dir / "patroni.log"
        self.conf = self.dir / "patroni.yml"
        self.proc: subprocess.Popen | None = None

    def role(self) -> str | None:
        """'primary', 'replica', ... from Patroni's REST API; None when it does not answer."""
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{self.api_port}/patroni", timeout=2) as r:
                body = json.loads(r.read())
        except (OSError, urllib.error.URLError, ValueError):
            return None
        if body.get("state") != "running":
            return None
        return "primary" if body.get("role") in ("master", "primary") else body.get("role")


class PatroniCluster:
    def __init__(self, nodes: int = 3):
        self.base = Path(tempfile.mkdtemp(prefix="hms-patroni-"))
        os.chmod(self.base, 0o755)
        first = free_ports(2 * nodes + 2)
        self.etcd_client, self.etcd_peer = first, first + 1
        self.nodes = [PatroniNode(i, self.base, first + 2 + 2 * i, first + 3 + 2 * i) for i in range(nodes)]
        self.etcd: subprocess.Popen | None = None
        self.scope = f"hms{first}"

    def url(self, database: str = "test") -> str:
        hosts = "&".join(f"host=127.0.0.1:{n.pg_port}" for n in self.nodes)
        return f"postgresql+psycopg://postgres@/{database}?{hosts}&target_session_attrs=read-write"

    def start(self, timeout: float = 120) -> None:
        template = _datadir_template() / "data"
        edir = self.base / "etcd"
        edir.mkdir()
        peer = f"http://127.0.0.1:{self.etcd_peer}"
        with open(edir / "etcd.log", "ab") as out:
            self.etcd = subprocess.Popen(
                ["etcd", "--name", "e0", "--data-dir", str(edir / "data"), "--enable-v2=true",
                 "--listen-client-urls", f"http://127.0.0.1:{self.etcd_client}",
                 "--advertise-client-urls", f"http://127.0.0.1:{self.etcd_client}",
                 "--listen-peer-urls", peer, "--initial-advertise-peer-urls", peer,
                 "--initial-cluster", f"e0={peer}", "--unsafe-no-fsync"],
                stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, start_new_session=True)
        deadline = time.monotonic() + 30
        while not port_open(self.etcd_client):
            assert time.monotonic() < deadline and self.etcd.poll() is None, \
                f"etcd did not start\n{log_tail(edir / 'etcd.log')}"
            time.sleep(0.05)
        for node in self.nodes:
            node.dir.mkdir()
            self._write_config(node)
        shutil.copytree(template, self.nodes[0].dir / "template", symlinks=True)  # where postgres can read it
        _chown_tree(self.base)
        self._start(self.nodes[0])
        self.wait_role(0, "primary", timeout)
        for node in self.nodes[1:]:
            self._start(node)
        for node in self.nodes[1:]:
            self.wait_role(node.index, "replica", timeout)
        self.wait_sync_standby(timeout)

    def _write_config(self, node: PatroniNode) -> None:
        # JSON is YAML: no YAML writer needed
        conf = {
            "scope": self.scope, "name": node.name,
            "restapi": {"listen": f"127.0.0.1:{node.api_port}", "connect_address": f"127.0.0.1:{node.api_port}"},
            "etcd": {"host": f"127.0.0.1:{self.etcd_client}"},
            "bootstrap": {
                "dcs": {"ttl": TTL, "loop_wait": 1, "retry_timeout": 3, "maximum_lag_on_failover": 0,
                        "synchronous_mode": True,
                        "postgresql": {"use_pg_rewind": False, "parameters": {
                            "fsync": "off", "full_page_writes": "off", "max_connections": 300,
                            "wal_level": "replica", "hot_standby": "on", "max_wal_senders": 10,
                            "max_replication_slots": 10, "wal_keep_size": "64MB"}}},
                # the first node starts from the cached template instead of running initdb
                "method": "copy_template",
                "copy_template": {"command": f"sh -c 'cp -a {node.dir / 'template'}/. \"$0\"' {node.data}",
                                  "no_params": True, "keep_existing_recovery_conf": True},
            },
            "postgresql": {
                "listen": f"127.0.0.1:{node.pg_port}", "connect_address": f"127.0.0.1:{node.pg_port}",
                "data_dir": str(node.data), "bin_dir": str(PG_BIN), "pgpass": str(node.dir / "pgpass"),
                "authentication": {"superuser": {"username": "postgres"},
                                   "replication": {"username": "postgres"}},
                "parameters": {"unix_socket_directories": str(node.dir)},
                "pg_hba": ["local all all trust", "host all all 127.0.0.1/32 trust",
                           "host replication all 127.0.0.1/32 trust"],
                "basebackup": [{"checkpoint": "fast"}],
            },
            "tags": {"nofailover": False, "noloadbalance": False, "clonefrom": False, "nosync": False},
        }
        node.conf.write_text(json.dumps(conf, indent=1))

    def _start(self, node: PatroniNode) -> None:
        env = dict(os.environ, PATRONI_LOG_LEVEL="WARNING", HOME=str(node.dir))
        node.proc = _popen(["patroni", str(node.conf)], node.log, env)

    def wait_role(self, i: int, role: str, timeout: float = 60) -> float:
        start = time.monotonic()
        node = self.nodes[i]
        while node.role() != role:
            if node.proc is not None and node.proc.poll() is not None:
                raise RuntimeError(f"Patroni {node.name} exited\n{log_tail(node.log)}")
            if time.monotonic() - start > timeout:
                raise RuntimeError(f"Patroni {node.name} not {role} after {timeout} s\n{log_tail(node.log)}")
            time.sleep(0.1)
        return time.monotonic() - start

    def cluster_state(self) -> dict:
        for node in self.nodes:
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{node.api_port}/cluster", timeout=2) as r:
                    return json.loads(r.read())
            except (OSError, urllib.error.URLError, ValueError):
                continue
        return {}

    def wait_sync_standby(self, timeout: float = 60) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            members = self.cluster_state().get("members", [])
            if any(m.get("role") == "sync_standby" for m in members):
                return
            time.sleep(0.1)
        raise RuntimeError(f"no synchronous standby after {timeout} s: {self.cluster_state()}")

    def primary(self) -> int | None:
        for node in self.nodes:
            if node.role() == "primary":
                return node.index
        return None

    def kill(self, i: int) -> None:
        """SIGKILL node i's Patroni and PostgreSQL: the machine died."""
        node = self.nodes[i]
        pids = []
        pidfile = node.data / "postmaster.pid"
        if pidfile.exists():
            try:
                pids.append(int(pidfile.read_text().split()[0]))
            except (ValueError, IndexError):
                pass
        if node.proc is not None and node.proc.poll() is None:
            os.killpg(node.proc.pid, signal.SIGKILL)
            node.proc.wait(timeout=30)
        for pid in pids:  # Patroni starts the postmaster in a session of its own
            for kill in (os.killpg, os.kill):
                try:
                    kill(pid, signal.SIGKILL)
                except OSError:
                    pass
        # its backends die with the postmaster's group; wait for the port to close
        deadline = time.monotonic() + 10
        while port_open(node.pg_port) and time.monotonic() < deadline:
            time.sleep(0.05)

    def stop(self) -> None:
        for node in self.nodes:
            self.kill(node.index)
        if self.etcd is not None and self.etcd.poll() is None:
            self.etcd.kill()
            self.etcd.wait(timeout=10)
        shutil.rmtree(self.base, ignore_errors=True)


def node_rows(pg_port: int) -> tuple[set[str], set[str]]:
    """(partition names, completed instant times) in one node's `test` database, read directly (a
    standby answers read-only queries)."""
    from sqlalchemy import create_engine, text
    from sqlalchemy.pool import NullPool

    engine = create_engine(f"postgresql+psycopg://postgres@127.0.0.1:{pg_port}/test", poolclass=NullPool)
    try:
        with engine.connect() as conn:
            parts = {r[0] for r in conn.execute(text("SELECT part_name FROM partitions"))}
            done = {r[0] for r in conn.execute(text("SELECT ts FROM instant WHERE state = 3"))}
    finally:
        engine.dispose()
    return parts, done


class HAProxy:
    """haproxy (Debian's) in front of metastore servers: TCP, round robin, each server checked on
    `GET /readyz` of its HTTP port every 0.3 s (out after 2 failures, back after 1 success)."""

    def __init__(self, servers: list[tuple[int, int]], base: Path):
        """`servers`: (thrift port, metrics port) of each."""
        self.port = free_ports(1)
        self.conf = base / "haproxy.cfg"
        self.log = base / "haproxy.log"
        lines = ["global", "  maxconn 2000", "defaults", "  mode tcp", "  timeout connect 2s",
                 "  timeout client 120s", "  timeout server 120s", "  option redispatch", "  retries 3",
                 "frontend metastore", f"  bind 127.0.0.1:{self.port}", "  default_backend servers",
                 "backend servers", "  balance roundrobin", "  option httpchk GET /readyz"]
        lines += [f"  server s{i} 127.0.0.1:{thrift} check port {metrics} inter 300ms fall 2 rise 1"
                  for i, (thrift, metrics) in enumerate(servers)]
        self.conf.write_text("\n".join(lines) + "\n")
        with open(self.log, "ab") as out:
            self.proc = subprocess.Popen(["haproxy", "-db", "-f", str(self.conf)], stdout=out,
                                         stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
        deadline = time.monotonic() + 20
        while not port_open(self.port):
            assert time.monotonic() < deadline and self.proc.poll() is None, \
                f"haproxy did not start\n{log_tail(self.log)}"
            time.sleep(0.05)

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait(timeout=10)
