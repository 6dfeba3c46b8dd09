"""The attacks of issue 41 against a metastore with password log-ins and authorization on: an admin
and two normal users, Alice (the victim) and Bob (the attacker).

    python -m bench.security [--quick]
        starts its own server (SQLite in a temporary directory, --auth password,
        --authorization on, --admin-users admin) and stops it at the end
    python -m bench.security --metastore thrift://host:9083 --admin admin:PW --alice alice:PW
                             --bob bob:PW [--warehouse DIR] [--server-pid PID] [--quick]
        a running server on this machine (the warehouse is read and written directly to plant and
        check the victims' files; default: the server's hive.metastore.warehouse.dir).
        --server-pid: its worker, whose resident memory the huge filter reports

Prints a table: each attack, what a storage-aware metastore does (expected), what this server did
(outcome: each step allowed or refused, with the answer), and whether every file of the victims'
folders is still there (listed before and after; "-" when no files are at stake). The bench
reports what happens; it assumes nothing. Attacks whose refusal belongs to storage ownership
(docs/security.md) show "allowed" on a server without it. The repeated wrong passwords run last
(they make this machine's address wait). Exit code 0 whatever the outcomes; 2 on a setup failure.
"""

from __future__ import annotations

import argparse
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlparse

from thrift.protocol.TBinaryProtocol import TBinaryProtocolAccelerated
from thrift.transport import TSocket, TTransport

from bench.procs import REPO_ROOT, free_port, log_tail, port_open, stop_pid
from thrift_idl.hive_metastore.ttypes import (
    Database,
    FieldSchema,
    HiveObjectPrivilege,
    HiveObjectRef,
    HiveObjectType,
    Partition,
    PrincipalType,
    PrivilegeBag,
    PrivilegeGrantInfo,
    SerDeInfo,
    StorageDescriptor,
    Table,
)
from thrift_idl.hudi_metastore import HudiMetastore
from thrift_idl.hudi_metastore.ttypes import HudiTableConfig, HudiTableType

PASSWORDS = {"admin": "admin-secret", "alice": "alice-secret", "bob": "bob-secret"}
HEADER = ("attack", "expected", "outcome", "victim files intact")


# --------------------------------------------------------------------------- clients


class Session:
    """One user's password log-in (SASL PLAIN) and a client of every method, the Hudi extension's
    too. `source`: the local address to connect from (another client address)."""

    def __init__(self, host: str, port: int, user: str, password: str, source: str | None = None,
                 timeout_s: float = 600):
        raw = socket.socket(socket.AF_INET6 if ":" in host else socket.AF_INET)
        if source:
            raw.bind((source, 0))
        raw.settimeout(timeout_s)
        raw.connect((host, port))
        sock = TSocket.TSocket(host, port)
        sock.handle = raw
        self.transport = TTransport.TSaslClientTransport(sock, host, "hive", mechanism="PLAIN",
                                                         username=user, password=password)
        self.transport.open()
        self.client = HudiMetastore.Client(TBinaryProtocolAccelerated(self.transport))
        self.user = user

    def __getattr__(self, name):
        return getattr(self.client, name)

    def close(self) -> None:
        try:
            self.transport.close()
        except Exception:  # noqa: BLE001 - closing what may be broken
            pass


def _answer(exc: BaseException) -> str:
    text = getattr(exc, "message", None) or str(exc)
    text = " ".join(str(text).split())
    return f"{type(exc).__name__}: {text[:110]}{'...' if len(text) > 110 else ''}"


@dataclass
class Steps:
    """The steps of one attack, each allowed or refused, as one outcome text."""

    parts: list[str]

    def run(self, label: str, fn: Callable[[], object]) -> tuple[bool, object]:
        try:
            value = fn()
        except Exception as exc:  # noqa: BLE001 - a refusal is an outcome
            self.parts.append(f"{label}: refused ({_answer(exc)})")
            return False, None
        self.parts.append(f"{label}: allowed")
        return True, value

    def note(self, text: str) -> None:
        self.parts.append(text)

    def text(self) -> str:
        return "; ".join(self.parts)


# --------------------------------------------------------------------------- files


def _local(uri: str) -> Path:
    parsed = urlparse(uri)
    return Path(parsed.path if parsed.scheme in ("file", "") else uri)


def _plant(folder: Path, tag: str) -> None:
    (folder / "sub").mkdir(parents=True, exist_ok=True)
    (folder / f"part-0-{tag}.parquet").write_text(f"{tag} data 0\n")
    (folder / f"part-1-{tag}.parquet").write_text(f"{tag} data 1\n" * 10)
    (folder / "sub" / f"part-2-{tag}.parquet").write_text(f"{tag} data 2\n" * 100)


def _listing(folder: Path) -> dict[str, int]:
    out: dict[str, int] = {}
    for root, _dirs, files in os.walk(folder):
        for name in files:
            full = Path(root) / name
            try:
                out[str(full.relative_to(folder))] = full.lstat().st_size
            except OSError:
                pass
    return out


class Victims:
    """The victims' folders, planted afresh before each attack and listed before and after it."""

    def __init__(self, folders: dict[str, Path]):
        self.folders = folders
        self.before: dict[str, dict[str, int]] = {}
        self.reset()

    def reset(self) -> None:
        for who, folder in self.folders.items():
            shutil.rmtree(folder, ignore_errors=True)
            _plant(folder, who.lower())
        self.before = {who: _listing(f) for who, f in self.folders.items()}

    def intact(self, *who: str) -> str:
        lost, added = [], []
        for w in who:
            now = _listing(self.folders[w])
            gone = [p for p, size in self.before[w].items() if now.get(p) != size]
            if gone:
                lost.append(f"{w}: {len(gone)} of {len(self.before[w])} files gone or changed")
            new = sorted(p for p in now if p not in self.before[w])
            if new:
                added.append(f"{w}: {len(new)} files written into it ({', '.join(new[:2])})")
        if lost:
            return "NO (" + "; ".join(lost + added) + ")"
        return "yes" + (" (" + "; ".join(added) + ")" if added else "")


# --------------------------------------------------------------------------- objects


def _sd(location: str | None = None) -> StorageDescriptor:
    return StorageDescriptor(cols=[FieldSchema("id", "bigint", None)], location=location,
                             inputFormat="org.apache.hadoop.mapred.TextInputFormat",
                             outputFormat="org.apache.hadoop.hive.ql.io.HiveIgnoreKeyTextOutputFormat",
                             serdeInfo=SerDeInfo(serializationLib="org.apache.hadoop.hive.serde2.lazy.LazySimpleSerDe",
                                                 parameters={}), parameters={})


def _table(name: str, location: str | None = None, external: bool = False, keys=(), db: str = "default") -> Table:
    return Table(tableName=name, dbName=db, sd=_sd(location),
                 partitionKeys=[FieldSchema(k, "string", None) for k in keys],
                 parameters={"EXTERNAL": "TRUE"} if external else {},
                 tableType="EXTERNAL_TABLE" if external else "MANAGED_TABLE")


# --------------------------------------------------------------------------- the attacks


class Attacks:
    def __init__(self, host: str, port: int, logins: dict[str, tuple[str, str]], warehouse: Path, work: Path,
                 server_pid: int | None, quick: bool):
        """`logins`: role (admin, alice, bob) -> (user, password)."""
        self.host, self.port, self.logins = host, port, logins
        self.warehouse, self.work, self.server_pid, self.quick = warehouse, work, server_pid, quick
        self.run_id = uuid.uuid4().hex[:6]
        self.rows: list[tuple[str, str, str, str]] = []
        self.sessions: list[Session] = []

    def session(self, role: str, source: str | None = None) -> Session:
        user, password = self.logins[role]
        s = Session(self.host, self.port, user, password, source)
        self.sessions.append(s)
        return s

    def name(self, what: str) -> str:
        return f"sec_{what}_{self.run_id}"

    def row(self, attack: str, expected: str, outcome: str, intact: str) -> None:
        self.rows.append((attack, expected, outcome, intact))
        print(f"  {attack}: {outcome} | intact: {intact}", file=sys.stderr, flush=True)

    # --- setup ---------------------------------------------------------------------------------

    def setup(self) -> None:
        self.admin, self.alice, self.bob = self.session("admin"), self.session("alice"), self.session("bob")
        # every user may create databases (docs/security.md: CREATE granted globally to public)
        grant = HiveObjectPrivilege(
            hiveObject=HiveObjectRef(objectType=HiveObjectType.GLOBAL), principalName="public",
            principalType=PrincipalType.ROLE,
            grantInfo=PrivilegeGrantInfo(privilege="CREATE", grantor=self.admin.user, grantorType=PrincipalType.USER,
                                         grantOption=False))
        try:
            self.admin.grant_privileges(PrivilegeBag(privileges=[grant]))
        except Exception as exc:  # noqa: BLE001 - granted already
            print(f"grant CREATE to public: {_answer(exc)}", file=sys.stderr)
        self.admin_table, self.alice_table = self.name("admin_t"), self.name("alice_t")
        self.admin.create_table(_table(self.admin_table))
        self.alice.create_table(_table(self.alice_table))
        self.alice_uri = self.alice.get_table("default", self.alice_table).sd.location
        admin_uri = self.admin.get_table("default", self.admin_table).sd.location
        self.alice_dir, admin_dir = _local(self.alice_uri), _local(admin_uri)
        self.victim_dir = self.work / "victim" / "evildb.db"  # outside the warehouse
        self.victims = Victims({"Alice": self.alice_dir, "admin": admin_dir, "outside": self.victim_dir})

    # --- storage: tables and partitions on Alice's folder ------------------------------------------

    def table_on_alice(self) -> None:
        s, t = Steps([]), self.name("bob_a")
        ok, _ = s.run("create on her folder", lambda: self.bob.create_table(_table(t, self.alice_uri)))
        if ok:
            s.run("drop with deleteData", lambda: self.bob.drop_table("default", t, True))
        self.row("Bob's table on Alice's table folder, dropped with deleteData",
                 "create refused (the folder is Alice's table's)", s.text(), self.victims.intact("Alice"))

    def partition_on_alice(self) -> None:
        s, t = Steps([]), self.name("bob_p")
        self.bob.create_table(_table(t, keys=("p",)))
        part = Partition(values=["x"], dbName="default", tableName=t, sd=_sd(self.alice_uri), parameters={})
        ok, _ = s.run("add partition on her folder", lambda: self.bob.add_partition(part))
        if ok:
            s.run("drop partition with deleteData", lambda: self.bob.drop_partition("default", t, ["x"], True))
        self.row("Bob's partition on Alice's table folder, dropped with deleteData",
                 "add refused (the folder is Alice's table's)", s.text(), self.victims.intact("Alice"))

    def truncate_on_alice(self) -> None:
        s, t = Steps([]), self.name("bob_tr")
        ok, _ = s.run("create on her folder", lambda: self.bob.create_table(_table(t, self.alice_uri)))
        if ok:
            s.run("truncate", lambda: self.bob.truncate_table("default", t, None))
        self.row("Bob's table on Alice's table folder, truncated", "create refused", s.text(),
                 self.victims.intact("Alice"))

    def rename_onto(self) -> None:
        s, t = Steps([]), self.name("bob_rn")
        ok, _ = s.run("create on her folder", lambda: self.bob.create_table(_table(t, self.alice_uri)))
        if ok:
            def rename():
                table = self.bob.get_table("default", t)
                table.tableName = self.name("bob_rn2")
                self.bob.alter_table("default", t, table)
            s.run("rename (moves the folder)", rename)
        own, target = self.name("bob_own"), self.name("bob_onto")
        self.bob.create_table(_table(own))

        def onto():  # his own table renamed with its folder moved onto Alice's
            table = self.bob.get_table("default", own)
            table.tableName, table.sd.location = target, self.alice_uri
            self.bob.alter_table("default", own, table)
        s.run("rename his table with Alice's folder as its location", onto)
        self.row("rename a table on, or onto, Alice's table folder", "refused", s.text(),
                 self.victims.intact("Alice"))

    def warehouse_root(self) -> None:
        s, t = Steps([]), self.name("bob_root")
        root = "file:" + str(self.warehouse)
        ok, _ = s.run("create at the warehouse root", lambda: self.bob.create_table(_table(t, root)))
        if ok:
            s.run("drop with deleteData", lambda: self.bob.drop_table("default", t, True))
        self.row("Bob's table at the warehouse root, dropped with deleteData",
                 "create refused (the warehouse root is no table's location)", s.text(),
                 self.victims.intact("Alice", "admin"))

    def hudi_rollback(self) -> None:
        s, t = Steps([]), self.name("bob_h")
        config = HudiTableConfig(dbName="default", tableName=t, tableType=HudiTableType.COPY_ON_WRITE,
                                 recordKeyFields=["id"], partitionFields=[], precombineField="ts",
                                 basePath=self.alice_uri, properties={})
        cols = [FieldSchema("id", "string", None), FieldSchema("ts", "bigint", None)]
        ok, _ = s.run("register a Hudi table on her folder", lambda: self.bob.register_hudi_table(config, cols))
        if ok:
            ok, ts = s.run("new instant", lambda: self.bob.new_instant_time("default", t))
        if ok:
            ok, _ = s.run("start a commit", lambda: (
                self.bob.create_instant("default", t, ts, "commit", b"", 1),
                self.bob.transition_to_inflight("default", t, ts, "commit", b"")))
        if ok:
            ok, _ = s.run("marker naming her file", lambda: self.bob.add_markers(
                "default", t, ts, ["part-0-alice.parquet", "sub/part-2-alice.parquet"]))
        if ok:
            deadline = time.monotonic() + 30
            while not self.bob.get_failed_instants("default", t) and time.monotonic() < deadline:
                time.sleep(0.2)
            s.run("rollback", lambda: self.bob.rollback_instant("default", t, ts))
        self.row("Bob's Hudi table on Alice's folder, a marker naming her file, rollback",
                 "register refused (the folder is Alice's table's)", s.text(), self.victims.intact("Alice"))

    # --- names ---------------------------------------------------------------------------------

    def dotdot_database(self) -> None:
        s = Steps([])
        up = os.path.relpath(self.victim_dir.parent, self.warehouse)
        name = f"{up}/evildb"  # its folder, <warehouse>/<name>.db, is the victim folder
        ok, _ = s.run(f"create database {name!r}", lambda: self.bob.create_database(Database(name=name, parameters={})))
        if ok:
            s.run("drop it with deleteData", lambda: self.bob.drop_database(name, True, True))
        escape = self.name("a") + "/../../" + self.name("b")
        made = (self.warehouse / f"{escape}.db").resolve()
        ok, _ = s.run(f"create database {escape!r}", lambda: self.bob.create_database(Database(name=escape,
                                                                                              parameters={})))
        if made.exists():
            s.note(f"folder made outside the warehouse: {made}")
            shutil.rmtree(made, ignore_errors=True)
        if ok:
            s.run("drop it", lambda: self.bob.drop_database(escape, True, True))
        self.row("database names with '..' (a folder outside the warehouse, then dropped)",
                 "InvalidObjectException (not a valid name)", s.text(), self.victims.intact("outside"))

    def odd_names(self) -> None:
        s = Steps([])
        db = f'sec db "{self.run_id}"'
        ok, _ = s.run(f"create database {db!r}", lambda: self.bob.create_database(Database(name=db, parameters={})))
        if ok:
            s.run("drop it", lambda: self.bob.drop_database(db, True, True))
        t = f"t 'x' {self.run_id}"
        ok, _ = s.run(f"create table {t!r}", lambda: self.bob.create_table(_table(t)))
        if ok:
            s.run("drop it", lambda: self.bob.drop_table("default", t, True))
        self.row("names with quotes and spaces",
                 "as Hive 4 (metastore.support.special.characters.tablename, on by default: printable ASCII "
                 "but '\\'; docs/security.md, Names); a database whose folder would leave the warehouse: "
                 "InvalidObjectException", s.text(), "-")

    # --- bounded work, text, memory, log-ins --------------------------------------------------------

    def big_folders(self) -> None:
        """A table on a folder of more files than the bound, one inside the warehouse and one outside."""
        count = 10_050 if self.quick else 20_000
        s = Steps([])
        for where, folder in (("outside the warehouse", self.work / "big"),
                              ("in the warehouse", self.warehouse / self.name("big"))):
            folder.mkdir(parents=True, exist_ok=True)
            for i in range(count):
                (folder / f"f{i:05d}").write_bytes(b"x" * 100)
            (folder / "broken-link").symlink_to(folder / "no-such-file")
            t = self.name("bob_big" + ("_in" if "in the" in where else "_out"))
            t0 = time.monotonic()
            ok, _ = s.run(f"create on {count:,} files {where}",
                          lambda t=t, folder=folder: self.bob.create_table(
                              _table(t, "file:" + str(folder), external=True)))
            took = time.monotonic() - t0
            if ok:
                params = self.bob.get_table("default", t).parameters
                stats = f"numFiles={params['numFiles']}" if "numFiles" in params else "no statistics"
                s.note(f"{stats}, {took:.2f} s")
        self.row(f"a table on a big folder ({count:,} files and a broken symbolic link)",
                 "no failure; at most 10,000 entries / 2 s counted; nothing listed outside the allowed roots",
                 s.text(), "-")

    def nul_reads(self) -> None:
        s = Steps([])
        s.run("get_table", lambda: self.bob.get_table("default", "x\x00y"))
        s.run("get_database", lambda: self.bob.get_database("default\x00"))
        s.run("get_partitions_by_filter",
              lambda: self.bob.get_partitions_by_filter("default", self.alice_table, "p = 'a\x00'", -1))
        s.run("create_table with a NUL serde parameter", lambda: self.bob.create_table(
            Table(tableName=self.name("bob_nul"), dbName="default",
                  sd=StorageDescriptor(cols=[FieldSchema("a", "string", None)],
                                       serdeInfo=SerDeInfo(parameters={"field.delim": "\x00"}), parameters={}),
                  partitionKeys=[], parameters={})))
        self.row("NUL characters in requests", "MetaException naming the argument; no database error, no traceback",
                 s.text(), "-")

    def huge_filter(self) -> None:
        terms = 5_000 if self.quick else 50_000
        t = self.name("alice_f")
        self.alice.create_table(_table(t, keys=("p",)))
        self.alice.add_partitions([Partition(values=[f"v{i}"], dbName="default", tableName=t, sd=_sd(), parameters={})
                                   for i in range(100)])
        self.bob.get_partitions_by_filter("default", t, "p = 'v1'", -1)
        before = _rss_mb(self.server_pid)
        huge = " or ".join(f"p = 'v{i}'" for i in range(terms))
        s = Steps([])
        t0 = time.monotonic()
        ok, parts = s.run(f"{terms:,}-term filter", lambda: self.bob.get_partitions_by_filter("default", t, huge, -1))
        took = time.monotonic() - t0
        self.bob.get_partitions_by_filter("default", t, "p = 'v1'", -1)  # the worker has finished with it
        after = _rss_mb(self.server_pid)
        if ok:
            s.note(f"{len(parts)} partitions in {took:.1f} s")
        if before is not None and after is not None:
            s.note(f"worker memory {before:.0f} -> {after:.0f} MB")
        self.row("a huge partition filter", "answered; the worker's memory back near where it was", s.text(), "-")

    def wrong_passwords(self) -> None:
        s, told = Steps([]), []
        alice, password = self.logins["alice"]
        for _ in range(8):
            try:
                Session(self.host, self.port, alice, "wrong guess").close()
                told.append("accepted!")
            except Exception as exc:  # noqa: BLE001 - a refusal is what is measured
                text = str(exc)
                told.append("wait" if "too many failed log-ins" in text else
                            "wrong" if "wrong user name or password" in text else _answer(exc))
        s.note("8 wrong passwords: " + ", ".join(told))
        try:
            Session(self.host, self.port, alice, password).close()
            s.note("then the right one from the same address: accepted")
        except Exception as exc:  # noqa: BLE001
            s.note("then the right one from the same address: refused" +
                   (" (waiting)" if "too many failed log-ins" in str(exc) else f" ({_answer(exc)})"))
        if self.host in ("127.0.0.1", "localhost"):
            try:
                Session(self.host, self.port, alice, password, source="127.0.0.2").close()
                s.note("from another address: accepted")
            except Exception as exc:  # noqa: BLE001
                s.note(f"from another address: refused ({_answer(exc)})")
        self.row("repeated wrong passwords from one address",
                 "after a few failures that address waits (growing); other addresses are not slowed down",
                 s.text(), "-")

    def run_all(self) -> None:
        self.setup()
        for attack in (self.table_on_alice, self.partition_on_alice, self.truncate_on_alice, self.rename_onto,
                       self.warehouse_root, self.hudi_rollback, self.dotdot_database, self.odd_names,
                       self.big_folders, self.nul_reads, self.huge_filter, self.wrong_passwords):
            try:
                self.victims.reset()
                attack()
            except Exception as exc:  # noqa: BLE001 - one broken attack does not end the run
                self.row(attack.__name__, "-", f"the bench failed: {_answer(exc)}", "?")

    def close(self) -> None:
        for s in self.sessions:
            s.close()


def _rss_mb(pid: int | None) -> float | None:
    if pid is None:
        return None
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1]) / 1024
    except OSError:
        return None
    return None


def table(rows: list[tuple[str, str, str, str]]) -> str:
    def cell(text: str) -> str:
        return text.replace("|", "/").replace("\n", " ")
    lines = ["| " + " | ".join(HEADER) + " |", "|" + "---|" * len(HEADER)]
    lines += ["| " + " | ".join(cell(c) for c in row) + " |" for row in rows]
    return "\n".join(lines)


# --------------------------------------------------------------------------- own server


class OwnServer:
    def __init__(self, work: Path):
        from adapter.security.password_file import set_password

        self.work = work
        self.warehouse = work / "warehouse"
        self.warehouse.mkdir(parents=True)
        passwords = work / "passwords"
        for user, password in PASSWORDS.items():
            set_password(str(passwords), user, password)
        self.port = free_port()
        self.log = work / "server.log"
        cmd = [sys.executable, "-m", "adapter.cli", "serve", "--host", "127.0.0.1", "--port", str(self.port),
               "--db-url", f"sqlite:///{work / 'metastore.db'}", "--warehouse", str(self.warehouse),
               "--auth", "password", "--auth-password-file", str(passwords), "--authorization", "on",
               "--admin-users", "admin"]
        env = dict(os.environ)
        env["PYTHONPATH"] = os.pathsep.join([str(REPO_ROOT)] + ([env["PYTHONPATH"]] if env.get("PYTHONPATH") else []))
        with open(self.log, "ab") as log:
            self.proc = subprocess.Popen(cmd, cwd=str(REPO_ROOT), stdout=log, stderr=subprocess.STDOUT,
                                         stdin=subprocess.DEVNULL, env=env)
        deadline = time.monotonic() + 90
        while not port_open(self.port):
            if self.proc.poll() is not None or time.monotonic() > deadline:
                self.stop()
                raise RuntimeError(f"the server did not start:\n{log_tail(self.log)}")
            time.sleep(0.2)

    def stop(self) -> None:
        stop_pid(self.proc.pid)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.security", description=__doc__.split("\n\n")[0])
    parser.add_argument("--metastore", help="thrift://host:port of a running server (default: start one)")
    parser.add_argument("--admin", help="USER:PASSWORD of an admin (--admin-users)")
    parser.add_argument("--alice", help="USER:PASSWORD of the victim, a normal user")
    parser.add_argument("--bob", help="USER:PASSWORD of the attacker, a normal user")
    parser.add_argument("--warehouse", help="the server's warehouse folder (default: its hive.metastore.warehouse.dir)")
    parser.add_argument("--server-pid", type=int, help="the server's worker process (its memory is reported)")
    parser.add_argument("--quick", action="store_true", help="smaller folders and filter")
    args = parser.parse_args(argv)
    work = Path(tempfile.mkdtemp(prefix="hms-security-"))
    server = None
    try:
        if args.metastore:
            parsed = urlparse(args.metastore)
            host, port = parsed.hostname or "127.0.0.1", parsed.port or 9083
            logins = {}
            for role in ("admin", "alice", "bob"):
                given = getattr(args, role)
                if not given or ":" not in given:
                    parser.error(f"--{role} USER:PASSWORD is needed with --metastore")
                user, password = given.split(":", 1)
                logins[role] = (user, password)
            pid = args.server_pid
        else:
            server = OwnServer(work)
            host, port, pid = "127.0.0.1", server.port, server.proc.pid
            logins = {role: (role, password) for role, password in PASSWORDS.items()}
        attacks = Attacks(host, port, logins, Path(args.warehouse) if args.warehouse else Path(), work, pid,
                          args.quick)
        try:
            if not args.warehouse:
                probe = attacks.session("admin")
                attacks.warehouse = _local(probe.get_config_value("hive.metastore.warehouse.dir", "")
                                           or (server.warehouse.as_uri() if server else ""))
            attacks.warehouse = attacks.warehouse.resolve()
            attacks.run_all()
        finally:
            attacks.close()
        print(table(attacks.rows))
        return 0
    except Exception as exc:  # noqa: BLE001 - a setup failure
        print(f"bench.security: {_answer(exc)}", file=sys.stderr)
        return 2
    finally:
        if server is not None:
            server.stop()
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
