"""A MariaDB Galera Cluster on loopback (Debian's `mariadb-server` and `galera-4`): three nodes,
synchronous multi-primary, each on its own ports.

Every node starts from a copy of one data directory (cached, `_datadir_template`: the `test`
database with the store's schema at head, a `root@127.0.0.1` user without password) at one cluster
position: the first bootstraps the cluster, the others join it by incremental state transfer.
Failure detection is tuned for loopback (a node that stops answering is out of the cluster within
about 2 s). Faults: `kill(i)` (SIGKILL), `restart(i)` (joins again), `isolate(i)` (Galera's own
`gmcast.isolate`: the node drops every cluster connection, a network partition as the group sees
it; `isolate(i, False)` heals it).

    cluster = GaleraCluster(); cluster.start()
    cluster.url(0)  # mysql+pymysql://root@127.0.0.1:<port>/test
"""

from __future__ import annotations

import hashlib
import os
import pwd
import re
import shutil
import signal
import subprocess
import tempfile
import time
from pathlib import Path

from .procs import free_ports, log_tail, port_open

MARIADBD = "/usr/sbin/mariadbd"
PROVIDER = "/usr/lib/galera/libgalera_smm.so"
# loopback timings: suspect a silent peer after 1.5 s, drop it after 3 s (defaults 5 s and 15 s)
_EVS = ("evs.keepalive_period=PT0.3S;evs.inactive_check_period=PT0.5S;evs.suspect_timeout=PT1.5S;"
        "evs.inactive_timeout=PT3S;evs.install_timeout=PT3S;evs.join_retrans_period=PT0.3S;"
        "pc.announce_timeout=PT1S")


def available() -> str | None:
    """None when a cluster can be started here, else why not."""
    for path in (MARIADBD, PROVIDER, "/usr/bin/wsrep_sst_rsync", "/usr/bin/mariadb-install-db"):
        if not os.path.exists(path):
            return f"{path} is missing (.ci/services.sh installs mariadb-server, galera-4 and rsync)"
    if shutil.which("rsync") is None:
        return "rsync is missing"
    return None


class GaleraNode:
    def __init__(self, index: int, base: Path, ports: list[int]):
        self.index = index
        self.port, self.gcomm_port, self.ist_port, self.sst_port = ports
        self.dir = base / f"node{index}"
        self.datadir = self.dir / "data"
        self.socket = self.dir / "mysqld.sock"
        self.log = self.dir / "error.log"
        self.conf = self.dir / "my.cnf"
        self.proc: subprocess.Popen | None = None

    def write_config(self, cluster_address: str, user: str) -> None:
        self.dir.mkdir(parents=True, exist_ok=True)
        (self.dir / "tmp").mkdir(exist_ok=True)
        os.chmod(self.dir / "tmp", 0o1777)
        # tmpdir: its own (MariaDB's default /tmp holds the test server's temporary tables' files)
        self.conf.write_text(f"""[mysqld]
user = {user}
datadir = {self.datadir}
tmpdir = {self.dir / 'tmp'}
socket = {self.socket}
pid-file = {self.dir / 'mysqld.pid'}
log-error = {self.log}
port = {self.port}
bind-address = 127.0.0.1
skip-name-resolve
character-set-server = utf8mb4
collation-server = utf8mb4_general_ci
max_connections = 300
innodb_buffer_pool_size = 64M
innodb_log_file_size = 16M
innodb_flush_log_at_trx_commit = 0
innodb_autoinc_lock_mode = 2
binlog_format = ROW
default_storage_engine = InnoDB
wsrep_on = ON
wsrep_provider = {PROVIDER}
wsrep_cluster_name = hudi_metastore_test
wsrep_cluster_address = {cluster_address}
wsrep_node_name = node{self.index}
wsrep_node_address = 127.0.0.1:{self.gcomm_port}
wsrep_node_incoming_address = 127.0.0.1:{self.port}
wsrep_sst_method = rsync
wsrep_sst_receive_address = 127.0.0.1:{self.sst_port}
wsrep_slave_threads = 2
wsrep_provider_options = "gmcast.listen_addr=tcp://127.0.0.1:{self.gcomm_port};ist.recv_addr=127.0.0.1:{self.ist_port};gcache.size=64M;{_EVS}"
""")

    def start(self, bootstrap: bool = False) -> None:
        args = [MARIADBD, f"--defaults-file={self.conf}"]
        if bootstrap:
            args.append("--wsrep-new-cluster")
        with open(self.dir / "stdout.log", "ab") as out:
            self.proc = subprocess.Popen(args, stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                         start_new_session=True)

    def alive(self) -> bool:
        return self.proc is not None and self.proc.poll() is None

    def sql(self, statement: str) -> str:
        """One statement through the node's socket (root by unix_socket); its output, tab separated."""
        res = subprocess.run(["mariadb", f"--socket={self.socket}", "-uroot", "-N", "-B", "-e", statement],
                             capture_output=True, text=True, timeout=30)
        if res.returncode != 0:
            raise RuntimeError(f"node{self.index}: {statement}: {res.stderr.strip()}")
        return res.stdout.strip()

    def status(self, name: str) -> str | None:
        try:
            out = self.sql(f"SHOW GLOBAL STATUS LIKE '{name}'")
        except (RuntimeError, subprocess.TimeoutExpired):
            return None
        return out.split("\t", 1)[1] if "\t" in out else None

    def synced(self) -> bool:
        """Synced in a primary component and accepting queries (`wsrep_ready`: a node that has
        just synced may still answer 1047, "WSREP has not yet prepared node for application use")."""
        return (self.alive() and port_open(self.port)
                and self.status("wsrep_local_state_comment") == "Synced"
                and self.status("wsrep_cluster_status") == "Primary"
                and self.status("wsrep_ready") == "ON")


def _run_as() -> tuple[str, int, int]:
    """The user the nodes run as: `mysql` when we are root (rsync's daemon, which receives a state
    transfer, would otherwise switch to `nobody`), else ourselves."""
    if os.geteuid() == 0:
        try:
            pw = pwd.getpwnam("mysql")
            return "mysql", pw.pw_uid, pw.pw_gid
        except KeyError:
            pass
    pw = pwd.getpwuid(os.geteuid())
    return pw.pw_name, pw.pw_uid, pw.pw_gid


def _chown_tree(path: Path, uid: int, gid: int) -> None:
    if os.geteuid() == 0:
        for root, dirs, files in os.walk(path):
            for name in (root, *(os.path.join(root, n) for n in dirs + files)):
                os.chown(name, uid, gid)


def _wait(node: GaleraNode, timeout: float) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if not node.alive():
            raise RuntimeError(f"Galera node{node.index} exited\n{log_tail(node.log)}")
        if node.synced():
            return
        time.sleep(0.1)
    raise RuntimeError(f"Galera node{node.index} not synced after {timeout} s\n{log_tail(node.log)}")


def _terminate(node: GaleraNode, grace: float = 20) -> None:
    if node.proc is None or node.proc.poll() is not None:
        return
    node.proc.terminate()
    try:
        node.proc.wait(timeout=grace)
    except subprocess.TimeoutExpired:
        node.proc.kill()
        node.proc.wait(timeout=10)


def _migrate(url: str) -> None:
    from sqlalchemy import create_engine
    from sqlalchemy.pool import NullPool

    from store.db.migrations import upgrade

    engine = create_engine(url, poolclass=NullPool)
    try:
        upgrade(engine)
    finally:
        engine.dispose()


_TEMPLATE_FORM = "3: utf8mb4, migrated"  # change to make the cached template again


def _datadir_template() -> Path:
    """A data directory made by `mariadb-install-db` (system tables, `root@127.0.0.1` without
    password, the `test` database holding the store's schema at head), made once per MariaDB
    version and state of the migrations and kept in the user's cache: every DDL statement on a
    cluster is a cluster-wide operation, and the migrations' hundreds of them took half a minute on
    three nodes."""
    from .backends import _migrations_key

    version = subprocess.run([MARIADBD, "--version"], capture_output=True, text=True, check=True).stdout
    digest = hashlib.sha256((version + _TEMPLATE_FORM + _migrations_key()).encode()).hexdigest()[:12]
    cache = Path(os.environ.get("HMS_CACHE_DIR", Path.home() / ".cache" / "hudi-metastore"))
    template = cache / f"galera-datadir-{digest}"
    if template.is_dir():
        return template
    cache.mkdir(parents=True, exist_ok=True)
    work = Path(tempfile.mkdtemp(prefix="hms-galera-template-"))  # reachable by the node's user
    extra = work / "init.sql"
    # (grant tables are off while installing: the user is a row, every privilege bit set)
    extra.write_text("INSERT INTO mysql.global_priv VALUES ('127.0.0.1', 'root', "
                     "'{\"access\":18446744073709551615,\"plugin\":\"mysql_native_password\","
                     "\"authentication_string\":\"\"}');\n"
                     "CREATE DATABASE IF NOT EXISTS test;\n")
    user, uid, gid = _run_as()
    os.chmod(work, 0o755)
    first = free_ports(4)
    node = GaleraNode(0, work, list(range(first, first + 4)))
    node.write_config(f"gcomm://127.0.0.1:{node.gcomm_port}", user)
    subprocess.run(["mariadb-install-db", f"--defaults-file={node.conf}", f"--user={user}",
                    "--skip-test-db", "--auth-root-authentication-method=socket", f"--extra-file={extra}"],
                   check=True, capture_output=True, timeout=300)
    _chown_tree(work, uid, gid)
    # one bootstrap and a clean shutdown: InnoDB and grastate.dat then hold one cluster position,
    # so nodes copied from here join each other without a state transfer
    node.start(bootstrap=True)
    try:
        _wait(node, 120)
        _migrate(f"mysql+pymysql://root@127.0.0.1:{node.port}/test")
    finally:
        _terminate(node)
    staged = Path(tempfile.mkdtemp(prefix=template.name + ".", dir=cache))
    shutil.copytree(node.datadir, staged / "data", ignore=shutil.ignore_patterns("*.sock", "*.pid"))
    shutil.rmtree(work, ignore_errors=True)
    try:
        os.rename(staged, template)  # atomic: another process may have made it meanwhile
    except OSError:
        shutil.rmtree(staged, ignore_errors=True)
    return template


class GaleraCluster:
    def __init__(self, base: Path | str | None = None, nodes: int = 3):
        """`base`: a directory for the nodes (default: a new one under /tmp, which the node's user
        can reach; pytest's own temporary directories are private to root)."""
        self.user, self._uid, self._gid = _run_as()
        self.base = Path(base) if base is not None else Path(tempfile.mkdtemp(prefix="hms-galera-"))
        self.base.mkdir(parents=True, exist_ok=True)
        os.chmod(self.base, 0o755)
        first = free_ports(4 * nodes)
        self.nodes = [GaleraNode(i, self.base, list(range(first + 4 * i, first + 4 * i + 4))) for i in range(nodes)]
        self.address = "gcomm://" + ",".join(f"127.0.0.1:{n.gcomm_port}" for n in self.nodes)

    def url(self, i: int, database: str = "test") -> str:
        return f"mysql+pymysql://root@127.0.0.1:{self.nodes[i].port}/{database}"

    def start(self, timeout: float = 90) -> None:
        self.bootstrap(timeout)
        self.join(timeout)

    def bootstrap(self, timeout: float = 90) -> None:
        """Every node's data directory, a copy of the template's, all at one cluster position; the
        first node bootstraps the cluster (usable when this returns)."""
        template = _datadir_template() / "data"
        state = (template / "grastate.dat").read_text()
        for node in self.nodes:
            node.write_config(self.address, self.user)
            shutil.copytree(template, node.datadir, ignore=shutil.ignore_patterns("*.pid", "*.sock", "gvwstate.dat"))
            safe = 1 if node is self.nodes[0] else 0
            (node.datadir / "grastate.dat").write_text(
                re.sub(r"safe_to_bootstrap: *\d", f"safe_to_bootstrap: {safe}", state))
        self._own(self.base)
        self.nodes[0].start(bootstrap=True)
        self.wait_synced(0, timeout)

    def join(self, timeout: float = 90) -> None:
        """The other nodes join (an incremental state transfer of the little the first did since)."""
        for node in self.nodes[1:]:
            node.start()
        for node in self.nodes[1:]:
            self.wait_synced(node.index, timeout)

    def _own(self, path: Path) -> None:
        _chown_tree(path, self._uid, self._gid)

    def wait_synced(self, i: int, timeout: float = 60) -> None:
        _wait(self.nodes[i], timeout)

    def cluster_size(self, i: int) -> int:
        return int(self.nodes[i].status("wsrep_cluster_size") or 0)

    def wait_size(self, i: int, size: int, timeout: float = 30) -> float:
        """Seconds until node i sees a primary component of `size` nodes."""
        start = time.monotonic()
        while time.monotonic() - start < timeout:
            node = self.nodes[i]
            if node.status("wsrep_cluster_status") == "Primary" and self.cluster_size(i) == size:
                return time.monotonic() - start
            time.sleep(0.1)
        raise RuntimeError(f"Galera node{i} does not see {size} nodes after {timeout} s")

    def kill(self, i: int) -> None:
        node = self.nodes[i]
        if node.proc is not None and node.proc.poll() is None:
            os.killpg(node.proc.pid, signal.SIGKILL)  # with a state transfer's scripts, if any
            node.proc.wait(timeout=30)

    def restart(self, i: int, timeout: float = 60) -> None:
        """Start a killed node again; it rejoins (incremental transfer from the gcache, or rsync)."""
        node = self.nodes[i]
        node.start()
        self.wait_synced(i, timeout)

    def isolate(self, i: int, on: bool = True) -> None:
        """Cut node i off the cluster's network (`gmcast.isolate`), or heal it."""
        self.nodes[i].sql(f"SET GLOBAL wsrep_provider_options = 'gmcast.isolate={1 if on else 0}'")

    def stop(self) -> None:
        """Kill every node (the data is thrown away: no clean shutdown needed) and remove it all."""
        for node in self.nodes:
            self.kill(node.index)
        shutil.rmtree(self.base, ignore_errors=True)


def node_rows(port: int) -> tuple[set[str], set[str]]:
    """(partition names, completed instant times) in one node's `test` database, read directly."""
    import pymysql

    conn = pymysql.connect(host="127.0.0.1", port=port, user="root", database="test")
    try:
        with conn.cursor() as cur:
            cur.execute("SET SESSION wsrep_sync_wait = 1")
            cur.execute("SELECT part_name FROM partitions")
            parts = {r[0] for r in cur.fetchall()}
            cur.execute("SELECT ts FROM instant WHERE state = 3")
            done = {r[0] for r in cur.fetchall()}
    finally:
        conn.close()
    return parts, done
