"""Storage ownership (issue 41, docs/security.md "Storage ownership"): a user can touch only the storage
that is theirs.

The adversarial suite runs a server with `--auth password`, `--authorization on`, an admin and two
users, Alice and Bob, who log in with SASL PLAIN, on every backend. Alice keeps data in her tables
(managed, partitioned, external under `--external-locations`, Hudi); Bob tries every way of reaching
it (his table, partition, database or Hudi base path at, inside or around her folders, spelled with
`..`, trailing and doubled slashes, `file:` forms, %-escapes, other schemes and case, through a
symbolic link; renames onto her folders; database names that leave the warehouse) and each attempt
fails with the exception the method declares, naming her object, while every file of hers (and the
admin's) is still there: the victim folders are listed before and after. Objects an admin placed
over her folders are then dropped, truncated, renamed and rolled back: nothing of hers goes.

The fast tests check the location rules in-process (normalization, the claims, deletions around
other objects' locations with authorization off).
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pytest
from thrift.protocol import TBinaryProtocol
from thrift.transport import TSocket, TTransport

from tests.harness import start_our_server, stop_process
from thrift_idl.hive_metastore.ttypes import (
    Database,
    FieldSchema,
    HiveObjectPrivilege,
    HiveObjectRef,
    HiveObjectType,
    InvalidObjectException,
    InvalidOperationException,
    MetaException,
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

PASSWORDS = {"admin": "admin secret", "alice": "correct horse", "bob": "battery staple"}


# --------------------------------------------------------------------------- helpers


def _tree(root: Path) -> list[tuple[str, str]]:
    """Every directory and file under `root` (files with their contents): a victim folder's listing."""
    out = []
    for dirpath, dirs, files in os.walk(root):
        rel = os.path.relpath(dirpath, root)
        out.extend((os.path.join(rel, d) + "/", "") for d in dirs)
        out.extend((os.path.join(rel, f), Path(dirpath, f).read_text()) for f in files)
    return sorted(out)


def _fill(d: Path, *names: str) -> Path:
    for n in names or ("precious.txt", "sub/data.parquet"):
        (d / n).parent.mkdir(parents=True, exist_ok=True)
        (d / n).write_text(f"keep {n}")
    return d


def _sd(location: str | None) -> StorageDescriptor:
    return StorageDescriptor(cols=[FieldSchema("id", "bigint", None)], location=location, inputFormat="x",
                             outputFormat="y", serdeInfo=SerDeInfo(serializationLib="z", parameters={}), parameters={})


def _table(db: str, name: str, location: str | None = None, external: bool = False, keys=()) -> Table:
    return Table(tableName=name, dbName=db, owner="ignored", sd=_sd(location),
                 partitionKeys=[FieldSchema(k, "string", None) for k in keys],
                 parameters={"EXTERNAL": "TRUE"} if external else {},
                 tableType="EXTERNAL_TABLE" if external else "MANAGED_TABLE")


def _hudi_config(db: str, name: str, base: str | None) -> HudiTableConfig:
    return HudiTableConfig(dbName=db, tableName=name, tableType=HudiTableType.COPY_ON_WRITE, recordKeyFields=["id"],
                           partitionFields=[], precombineField="ts", properties={}, basePath=base)


def _add_user(passwords: Path, user: str, password: str) -> None:
    subprocess.run([sys.executable, "-m", "adapter.cli", "users", "add", "--file", str(passwords), user],
                   input=password + "\n", text=True, capture_output=True, check=True)


class Login:
    """A user's connection: SASL PLAIN (no TLS: a test), the Hive and Hudi calls on one client."""

    def __init__(self, port: int, user: str):
        sock = TSocket.TSocket("127.0.0.1", port)
        sock.setTimeout(60_000)
        self.transport = TTransport.TSaslClientTransport(sock, "127.0.0.1", "hive", mechanism="PLAIN",
                                                         username=user, password=PASSWORDS[user])
        self.client = HudiMetastore.Client(TBinaryProtocol.TBinaryProtocol(self.transport))
        self.transport.open()

    def __getattr__(self, name):
        return getattr(self.client, name)

    def close(self) -> None:
        self.transport.close()


class Victims:
    """Alice's (and the admin's) folders, listed when the scene is set; `intact` compares."""

    def __init__(self, *roots: Path):
        self.roots = roots
        self.before = {r: _tree(r) for r in roots}
        assert all(self.before.values())

    def intact(self, attack: str) -> None:
        for r in self.roots:
            assert _tree(r) == self.before[r], f"{attack}: {r} changed"


def _refused(exc_type, call, *args, names: str | None = None, attack: str = "", victims: Victims | None = None):
    with pytest.raises(exc_type) as info:
        call(*args)
    text = getattr(info.value, "message", None) or str(info.value)
    if names is not None:
        assert names in text, f"{attack}: {text}"
    if victims is not None:
        victims.intact(attack)
    return text


# --------------------------------------------------------------------------- the server and its users


@pytest.fixture
def scene(own_backend_url, tmp_path):
    pytest.importorskip("puresasl")
    passwords = tmp_path / "passwords"
    for user, password in PASSWORDS.items():
        _add_user(passwords, user, password)
    ext = tmp_path / "ext"
    (ext / "alice").mkdir(parents=True)
    (ext / "bob").mkdir(parents=True)
    audit = tmp_path / "audit.log"
    port, proc = start_our_server(own_backend_url, tmp_path / "server", extra_args=[
        "--auth", "password", "--auth-password-file", str(passwords), "--authorization", "on",
        "--admin-users", "admin", "--external-locations", f"file:{ext}", "--storage-roots", f"file:{ext}",
        "--audit-log", str(audit)])
    logins: list[Login] = []

    def login(user: str) -> Login:
        c = Login(port, user)
        logins.append(c)
        return c

    try:
        yield login, tmp_path / "server" / "warehouse", ext, audit, tmp_path
    finally:
        for c in logins:
            c.close()
        stop_process(proc)


def test_a_user_can_touch_only_the_storage_that_is_theirs(scene):
    login, wh, ext, audit, tmp = scene
    admin, alice, bob = login("admin"), login("alice"), login("bob")
    tok = uuid.uuid4().hex[:6]
    adb, bdb, rdb = f"alice_{tok}", f"bob_{tok}", f"root_{tok}"

    # --- the scene: Alice's data, the admin's, Bob's own database -----------------------------------
    for db, owner in ((adb, "alice"), (bdb, "bob")):  # the admin makes their databases
        admin.create_database(Database(name=db, parameters={}))
        admin.alter_database(db, Database(name=db, ownerName=owner, ownerType=PrincipalType.USER, parameters={}))
    alice.create_table(_table(adb, "t"))
    alice.create_table(_table(adb, "pt", keys=["p"]))
    pt = alice.get_table(adb, "pt")
    alice.add_partition(Partition(values=["1"], dbName=adb, tableName="pt", sd=_sd(None), parameters={}))
    alice.create_table(_table(adb, "ext", f"file:{ext}/alice/ext", external=True))
    alice.register_hudi_table(_hudi_config(adb, "h", None), [FieldSchema("id", "string", None),
                                                              FieldSchema("ts", "bigint", None)])
    admin.create_database(Database(name=rdb, parameters={}))
    admin.create_table(_table(rdb, "t"))
    t_dir, pt_dir, h_dir = wh / f"{adb}.db" / "t", Path(pt.sd.location[len("file:"):]), wh / f"{adb}.db" / "h"
    ext_dir, root_dir = ext / "alice" / "ext", wh / f"{rdb}.db" / "t"
    for d in (t_dir, pt_dir / "p=1", ext_dir, h_dir, root_dir):
        _fill(d)
    (tmp / "victim" / "evildb").mkdir(parents=True)
    _fill(tmp / "victim")
    victims = Victims(wh / f"{adb}.db", ext / "alice", root_dir, tmp / "victim")
    t_loc, t_name = f"file:{t_dir}", f"table {adb}.t"

    # --- Bob's table on Alice's folder, however it is spelled: MetaException naming her table ---------
    spellings = {
        "same": t_loc, "trailing slash": t_loc + "/", "plain path": str(t_dir), "file:///": f"file://{t_dir}",
        "file://host": f"file://localhost{t_dir}", "doubled slashes": t_loc.replace(f"/{adb}.db/", f"//{adb}.db//"),
        "dot-dot": f"file:{wh}/{bdb}.db/../{adb}.db/t", "dot": f"file:{wh}/./{adb}.db/./t",
        "%-escapes": f"file:{wh}/{adb}%2Edb/%74", "scheme case": f"FILE:{t_dir}", "nested": f"{t_loc}/sub",
        "nested deeper": f"{t_loc}/sub/x/y", "partition of another table": f"file:{pt_dir}/p=1",
        "Hudi folder": f"file:{h_dir}", "external folder": f"file:{ext_dir}",
        "inside the external one": f"file:{ext_dir}/sub",
    }
    for attack, loc in spellings.items():
        for external in (False, True):
            _refused(MetaException, bob.create_table, _table(bdb, f"x_{len(attack)}", loc, external=external),
                     names="(owner alice)", attack=f"create_table {attack}", victims=victims)
    # ... around it: containing her table, her database, the warehouse
    for attack, loc, names in (
            ("her database's folder", f"file:{wh}/{adb}.db", f"database {adb}"),
            ("her database's folder, trailing slash", f"file:{wh}/{adb}.db/", f"database {adb}"),
            ("the warehouse", f"file:{wh}", "the warehouse"), ("the warehouse, slash", f"{wh}/", "the warehouse"),
            ("above the warehouse", f"file:{wh}/..", "the warehouse"),
            ("the file system's root", "file:/", "the warehouse"),
            ("her external root", f"file:{ext}/alice", f"table {adb}.ext"),
            ("outside every root", f"file:{tmp}/victim", "outside the warehouse"),
            ("another scheme", "hdfs://namenode:8020/warehouse", "outside the warehouse"),
            ("s3", f"s3://bucket{t_dir}", "outside the warehouse")):
        _refused(MetaException, bob.create_table, _table(bdb, "around", loc), names=names,
                 attack=f"create_table {attack}", victims=victims)
    # a symbolic link in Bob's external folder to her folders
    (ext / "bob" / "link").symlink_to(t_dir)
    (ext / "bob" / "extlink").symlink_to(ext_dir)
    for link in ("link", "extlink", "link/sub"):
        _refused(MetaException, bob.create_table, _table(bdb, "linked", f"file:{ext}/bob/{link}", external=True),
                 names="(owner alice)", attack=f"create_table through the link {link}", victims=victims)
    # the case of a path is the path's (a case-sensitive file system): another folder, his to use
    bob.create_table(_table(bdb, "cased", f"file:{ext}/bob/../bob/ALICE/EXT", external=True))
    bob.drop_table(bdb, "cased", True)
    victims.intact("case difference")

    # --- partitions: of his table, on her folders ----------------------------------------------------
    bob.create_table(_table(bdb, "bp", keys=["p"]))
    for attack, loc in (("her table", t_loc), ("her partition", f"file:{pt_dir}/p=1"),
                        ("nested in her table", f"{t_loc}/sub"), ("her external table", f"file:{ext_dir}/"),
                        ("through a link", f"file:{ext}/bob/link")):
        _refused(MetaException, bob.add_partition,
                 Partition(values=[attack[:3]], dbName=bdb, tableName="bp", sd=_sd(loc), parameters={}),
                 names="(owner alice)", attack=f"add_partition {attack}", victims=victims)
    bob.add_partition(Partition(values=["mine"], dbName=bdb, tableName="bp", sd=_sd(None), parameters={}))
    mine = bob.get_partition(bdb, "bp", ["mine"])
    mine.sd.location = t_loc
    _refused(InvalidOperationException, bob.alter_partition, bdb, "bp", mine, names=t_name,
             attack="alter_partition onto her table", victims=victims)

    # --- rename onto, alter onto -------------------------------------------------------------------
    bob.create_table(_table(bdb, "mine"))
    moved = bob.get_table(bdb, "mine")
    moved.sd.location = t_loc
    _refused(InvalidOperationException, bob.alter_table, bdb, "mine", moved, names=t_name,
             attack="alter_table onto her table", victims=victims)
    moved = bob.get_table(bdb, "mine")
    moved.tableName, moved.sd.location = "renamed", f"{t_loc}/renamed"
    _refused(InvalidOperationException, bob.alter_table, bdb, "mine", moved, names=t_name,
             attack="rename onto her table", victims=victims)
    moved = bob.get_table(bdb, "mine")
    moved.dbName = adb  # into her database: authorization's own refusal
    _refused(MetaException, bob.alter_table, bdb, "mine", moved, names="Permission denied",
             attack="rename into her database", victims=victims)

    # --- databases: Bob may create them (CREATE globally) ----------------------------------------------
    grant = PrivilegeGrantInfo(privilege="CREATE", createTime=0, grantor="admin", grantorType=PrincipalType.USER)
    admin.grant_privileges(PrivilegeBag(privileges=[HiveObjectPrivilege(
        hiveObject=HiveObjectRef(objectType=HiveObjectType.GLOBAL), principalName="bob",
        principalType=PrincipalType.USER, grantInfo=grant)]))
    for attack, loc, names in (("her database", f"file:{wh}/{adb}.db", f"database {adb}"),
                               ("inside her table", f"{t_loc}/db", t_name),
                               ("the warehouse", f"file:{wh}", "the warehouse"),
                               ("her external folder", f"file:{ext}/alice", f"table {adb}.ext"),
                               ("outside", f"file:{tmp}/victim/evildb", "outside the warehouse")):
        _refused(MetaException, bob.create_database, Database(name=f"d_{len(attack)}", locationUri=loc, parameters={}),
                 names=names, attack=f"create_database {attack}", victims=victims)
        _refused(MetaException, bob.alter_database, bdb,
                 Database(name=bdb, locationUri=loc, parameters={}), names=names,
                 attack=f"alter_database {attack}", victims=victims)
    for name in ("a/../../b", "../../../victim/evildb", f"x/../../{adb}.db/t/y", "a//b", "./x"):
        _refused(InvalidObjectException, bob.create_database, Database(name=name, parameters={}),
                 names="is not a valid database name", attack=f"database named {name}", victims=victims)
    assert not (wh.parent / "b.db").exists()

    # --- the Hudi extension --------------------------------------------------------------------------
    cols = [FieldSchema("id", "string", None), FieldSchema("ts", "bigint", None)]
    for attack, base in (("her table", t_loc), ("her Hudi table", f"file:{h_dir}"), ("inside it", f"file:{h_dir}/x"),
                         ("her external folder", f"file:{ext_dir}"), ("through a link", f"file:{ext}/bob/link")):
        _refused(MetaException, bob.register_hudi_table, _hudi_config(bdb, "hb", base), cols, names="(owner alice)",
                 attack=f"register_hudi_table on {attack}", victims=victims)
    # his own Hudi table whose folder holds a link to hers: a rollback deletes only his files
    (ext / "bob" / "hb").mkdir()
    (ext / "bob" / "hb" / "p").symlink_to(ext_dir)
    _fill(ext / "bob" / "hb", "q/own_0-1-1_1.parquet")
    bob.register_hudi_table(_hudi_config(bdb, "hb", f"file:{ext}/bob/hb"), cols)
    _rolled_back(bob, bdb, "hb", ["p/precious.txt", "q/own_0-1-1_1.parquet"])
    victims.intact("rollback through a link")
    assert not (ext / "bob" / "hb" / "q" / "own_0-1-1_1.parquet").exists()  # his own file went

    # --- what an admin placed over her folders is dropped, truncated, renamed, rolled back: nothing of
    # hers goes (deletion follows ownership, whoever asks) ---------------------------------------------
    admin.create_table(_table(bdb, "over", t_loc))
    admin.create_table(_table(bdb, "inside", f"{t_loc}/sub"))
    _refused(MetaException, admin.create_table, _table(bdb, "bigger", f"file:{wh}/{adb}.db/../{adb}.db"),
             names=f"database {adb}", attack="a database's folder: no one's table", victims=victims)
    _refused(MetaException, admin.truncate_table, bdb, "over", None, names=t_name, attack="truncate",
             victims=victims)
    renamed = admin.get_table(bdb, "inside")
    renamed.tableName = "inside2"
    _refused(InvalidOperationException, admin.alter_table, bdb, "inside", renamed, names=t_name,
             attack="rename moving her files", victims=victims)
    admin.register_hudi_table(_hudi_config(bdb, "hover", t_loc), cols)
    _rolled_back(admin, bdb, "hover", ["precious.txt", "sub/data.parquet"])
    victims.intact("rollback of a Hudi table on her folder")
    for name in ("over", "inside", "hover"):
        admin.drop_table(bdb, name, True)
        victims.intact(f"drop_table {name}")
    admin.create_table(_table(bdb, "again", t_loc))
    bob.add_partition(Partition(values=["x"], dbName=bdb, tableName="bp", sd=_sd(None), parameters={}))
    admin.add_partition(Partition(values=["hers"], dbName=bdb, tableName="bp", sd=_sd(f"file:{pt_dir}/p=1"),
                                  parameters={}))
    bob.drop_partition(bdb, "bp", ["hers"], True)
    victims.intact("drop_partition on her partition")
    bob.drop_database(bdb, True, True)
    victims.intact("drop_database cascade")
    assert not (wh / f"{bdb}.db").exists()

    # --- what is theirs, they still may ------------------------------------------------------------
    alice.create_table(_table(adb, "inner", f"{t_loc}/inner"))  # inside her own table
    alice.create_table(_table(adb, "ext2", f"file:{ext}/alice/two", external=True))
    admin.create_table(_table(rdb, "anywhere", f"file:{tmp}/admins", external=True))
    alice.drop_table(adb, "t", True)  # her own: gone, but the table inside it is kept
    assert not (t_dir / "precious.txt").exists() and (t_dir / "inner").is_dir()

    # the audit log: the refusals and the deletions with their paths (written as each call ends)
    _logged(audit, lambda ln: "principal=bob auth=password" in ln and "storage=claim" in ln
            and "outcome=denied" in ln and str(t_dir) in ln)
    _logged(audit, lambda ln: "call=drop_table" in ln and "storage=delete" in ln and "outcome=skipped" in ln
            and str(t_dir) in ln and f"table {adb}.t" in ln)
    _logged(audit, lambda ln: "call=rollback_instant" in ln and "outcome=skipped" in ln and "precious.txt" in ln)
    _logged(audit, lambda ln: "principal=alice" in ln and "call=drop_table" in ln and "storage=delete" in ln
            and f"path=file:{t_dir}" in ln and "outcome=ok" in ln)


def _logged(audit: Path, wanted) -> None:
    deadline = time.monotonic() + 10
    while not any(wanted(ln) for ln in audit.read_text().splitlines()):
        assert time.monotonic() < deadline, "no such line in the audit log"
        time.sleep(0.1)


def _rolled_back(c: Login, db: str, table: str, markers: list[str]) -> None:
    ts = c.new_instant_time(db, table)
    c.create_instant(db, table, ts, "commit", b"", 1)
    c.transition_to_inflight(db, table, ts, "commit", b"")
    c.add_markers(db, table, ts, markers)
    deadline = time.monotonic() + 30
    while not c.get_failed_instants(db, table):  # its heartbeat (1 s) expires
        assert time.monotonic() < deadline, "the instant's heartbeat never expired"
        time.sleep(0.2)
    c.rollback_instant(db, table, ts)
