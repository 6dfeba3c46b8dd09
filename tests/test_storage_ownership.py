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
import re
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
        assert time.monotonic() < deadline, "no such line in the audit log:\n" + "\n".join(
            ln for ln in audit.read_text().splitlines() if "call=drop_table" in ln)
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


# --------------------------------------------------------------------------- in-process: the rules


def test_location_keys():
    from store.storage.ownership import ancestors, leaves_its_parent, location_key

    same = ["file:/w/a/t", "file:///w/a/t", "/w/a/t", "/w/a/t/", "file://localhost/w/a/t", "/w//a///t",
            "/w/b/../a/t", "/w/./a/t", "file:/w/%61/t", "FILE:/w/a/t"]
    assert {location_key(u, resolve=False) for u in same} == {"file:/w/a/t/"}
    assert location_key("/w/a%2Ft", resolve=False) == "file:/w/a%2Ft/"  # a name with an escaped slash
    assert location_key("/w/%2E%2E/t", resolve=False) == "file:/w/%2E%2E/t/"  # ... or dots: a name
    assert {location_key(u) for u in ("s3://b/x/y", "s3a://b/x//y/", "S3N://B/x/z/../y")} == {"s3a://b/x/y/"}
    assert location_key("hdfs://NN:8020/a/./b") == "hdfs://nn:8020/a/b/"
    assert location_key("/w/A/T", resolve=False) != location_key("/w/a/t", resolve=False)  # case is the path's
    assert ancestors("file:/w/a/") == ["file:/w/a/", "file:/w/", "file:/"]
    assert ancestors("s3a://b/x/") == ["s3a://b/x/", "s3a://b/"]
    assert [n for n in ("a/../../b.db", "../x.db", "a//b.db", "./x.db", "ok.db", "a/b.db", "...db")
            if leaves_its_parent(n)] == ["a/../../b.db", "../x.db", "a//b.db", "./x.db"]


def test_symbolic_links_resolve(tmp_path):
    from store.storage.ownership import location_key

    (tmp_path / "real").mkdir()
    (tmp_path / "link").symlink_to(tmp_path / "real")
    assert location_key(f"file:{tmp_path}/link/t") == location_key(f"{tmp_path}/real/t")
    assert location_key(f"{tmp_path}/link/t", resolve=False) != location_key(f"{tmp_path}/real/t")


@pytest.fixture
def services(tmp_path):
    from store.db.database import Store
    from store.db.migrations import upgrade
    from store.services import build_services
    from store.storage import ownership

    wh = tmp_path / "wh"
    wh.mkdir()
    store = Store(f"sqlite:///{tmp_path}/store.db", str(wh))
    upgrade(store.engine)
    s = build_services(store, external_locations=[f"file:{tmp_path}/ext"])
    s.tables.ensure_default_database()
    yield s, wh, tmp_path
    ownership.set_claimant(None)
    s.close()


def _as(user: str | None, admin: bool = False) -> None:
    from store.storage import ownership

    ownership.set_claimant(None if user is None else ownership.Claimant(user, admin, lambda n, k: n == user))


def _owned_table(db: str, name: str, owner: str, location: str | None = None, external: bool = False, keys=()):
    t = _table(db, name, location, external, keys)
    t.owner, t.ownerType = owner, PrincipalType.USER
    return t


def test_claims_in_process(services):
    from store.errors import InvalidObject, OwnershipConflict

    s, wh, tmp = services
    _as("alice")
    s.tables.create_database(Database(name="a", ownerName="alice", ownerType=PrincipalType.USER, parameters={}))
    s.tables.create_table(_owned_table("a", "t", "alice"))
    s.tables.create_table(_owned_table("a", "x", "alice", f"file:{tmp}/ext/alice/x", external=True))
    s.tables.create_table(_owned_table("a", "inner", "alice", f"file:{wh}/a.db/t/inner"))  # inside her own
    _as("bob")
    s.tables.create_database(Database(name="b", ownerName="bob", ownerType=PrincipalType.USER, parameters={}))
    refusals = {
        f"file:{wh}/a.db/t": "it is the location of table a.t (owner alice)",
        f"{wh}/a.db/t/deeper": "it lies inside the location of table a.t (owner alice)",
        f"file:{wh}/a.db": "it is the location of database a: a database's location is never",
        f"file:{wh}": "it is the warehouse", f"file:{wh}/..": "it contains the warehouse",
        f"file:{tmp}/ext/alice": "it contains the location of table a.x (owner alice)",
        f"file:{tmp}/elsewhere": "outside the warehouse and the external locations",
    }
    for loc, why in refusals.items():
        with pytest.raises(OwnershipConflict, match=re.escape(f"Location {loc} of table b.y is refused") + ".*"
                           + re.escape(why)):
            s.tables.create_table(_owned_table("b", "y", "bob", loc))
    s.tables.create_table(_owned_table("b", "y", "bob", f"file:{tmp}/ext/bob/y"))  # his, under the external root
    _as("root", admin=True)  # an admin may use any location but the warehouse's and databases' own
    s.tables.create_table(_owned_table("b", "z", "bob", f"file:{wh}/a.db/t/z"))
    s.tables.create_table(_owned_table("b", "far", "bob", f"file:{tmp}/far"))
    with pytest.raises(OwnershipConflict, match="it is the location of database a"):
        s.tables.create_table(_owned_table("b", "w", "bob", f"file:{wh}/a.db/"))
    _as("bob")
    for bad in ("a/../../b", "../evil", "x//y"):
        with pytest.raises(InvalidObject, match="is not a valid database name"):
            s.tables.create_database(Database(name=bad, parameters={}))
    with pytest.raises(OwnershipConflict, match="it lies inside the location of table a.t"):
        s.tables.create_database(Database(name="c", locationUri=f"file:{wh}/a.db/t/c", parameters={}))
    _as(None)  # authorization off: today's behaviour (Hive's), the deletions below still follow ownership
    s.tables.create_table(_owned_table("b", "anywhere", "bob", f"file:{wh}/a.db/t"))


def _files(d: Path) -> list[str]:
    return sorted(str(p.relative_to(d)) for p in d.rglob("*"))


def test_deletions_follow_ownership_without_authorization(services):
    from store.errors import MetaError, OwnershipConflict

    s, wh, tmp = services
    _as(None)
    s.tables.create_database(Database(name="a", parameters={}))
    s.tables.create_database(Database(name="b", parameters={}))
    s.tables.create_table(_owned_table("a", "t", "alice", keys=["p"]))
    s.partitions.add_partitions("a", "t", [Partition(values=["1"], dbName="a", tableName="t", sd=_sd(None),
                                                     parameters={})])
    t_dir = wh / "a.db" / "t"
    _fill(t_dir / "p=1")
    _fill(t_dir, "top.txt")
    hers = _files(wh / "a.db")
    # the warehouse, a database's root, her table, her partition: as locations of his tables, dropped
    for i, loc in enumerate([f"file:{wh}", f"{wh}/", f"file:{wh}/a.db", f"file:{t_dir}", f"file:{t_dir}/p=1",
                             f"file:{wh}/b.db/../a.db/t/"]):
        s.tables.create_table(_owned_table("b", f"x{i}", "bob", loc))
        s.tables.drop_table("b", f"x{i}", True)
        assert _files(wh / "a.db") == hers, loc
    # his table around hers: dropped around it
    s.tables.create_table(_owned_table("default", "around", "bob", f"file:{wh}/lake"))
    s.tables.create_table(_owned_table("a", "in_lake", "alice", f"file:{wh}/lake/hers"))
    _fill(wh / "lake" / "hers")
    _fill(wh / "lake" / "his")
    s.tables.drop_table("default", "around", True)
    assert _files(wh / "lake") == ["hers", "hers/precious.txt", "hers/sub", "hers/sub/data.parquet"]
    # his partition on her partition's folder, dropped with its data
    s.tables.create_table(_owned_table("b", "bp", "bob", keys=["p"]))
    s.partitions.add_partitions("b", "bp", [Partition(values=["1"], dbName="b", tableName="bp",
                                                      sd=_sd(f"file:{t_dir}/p=1"), parameters={})])
    s.partitions.drop_partitions("b", "bp", values_list=[["1"]], delete_data=True)
    assert _files(wh / "a.db") == hers
    # many partitions dropped at once (one look for the directory they share): hers inside his are kept
    s.tables.create_table(_owned_table("b", "many", "bob", keys=["p"]))
    s.partitions.add_partitions("b", "many", [Partition(values=[str(i)], dbName="b", tableName="many", sd=_sd(None),
                                                        parameters={}) for i in range(20)])
    many = wh / "b.db" / "many"
    for i in range(20):
        _fill(many / f"p={i}", "his.txt")
    s.tables.create_table(_owned_table("a", "in_his", "alice", f"file:{many}/p=3/hers"))
    s.tables.create_table(_owned_table("a", "at_his", "alice", f"file:{many}/p=5"))
    _fill(many / "p=3" / "hers")
    s.partitions.drop_partitions("b", "many", values_list=[[str(i)] for i in range(20)], delete_data=True)
    assert _files(many) == ["p=3", "p=3/hers", "p=3/hers/precious.txt", "p=3/hers/sub", "p=3/hers/sub/data.parquet",
                            "p=5", "p=5/his.txt"]
    # truncate and rename refuse before anything moves
    s.tables.create_table(_owned_table("b", "over", "bob", f"file:{t_dir}"))
    with pytest.raises(OwnershipConflict, match="covered by table a.t"):
        s.partitions.truncate("b", "over", None)
    renamed = s.tables.get_table("b", "over")
    renamed.tableName = "over2"
    with pytest.raises(OwnershipConflict, match="Unable to move table b.over .* covered by table a.t"):
        s.tables.alter_table("b", "over", renamed)
    assert _files(wh / "a.db") == hers
    # an external table keeps its files unless external.table.purge
    s.tables.create_table(_owned_table("b", "ext", "bob", f"file:{tmp}/ext/bob/e", external=True))
    _fill(tmp / "ext" / "bob" / "e")
    with pytest.raises(MetaError, match="Cannot truncate non-managed table b.ext"):
        s.partitions.truncate("b", "ext", None)
    s.tables.drop_table("b", "ext", True)
    assert (tmp / "ext" / "bob" / "e" / "precious.txt").exists()
    # her own drop deletes her files (not what another object keeps inside)
    s.tables.drop_table("b", "over", False)
    s.tables.drop_table("a", "t", True)
    assert not t_dir.exists()


def test_hudi_files_deleted_only_when_the_tables_own(services):
    s, wh, tmp = services
    _as(None)
    boundary = s.tables.boundary
    s.tables.create_database(Database(name="a", parameters={}))
    s.tables.create_table(_owned_table("a", "t", "alice"))
    _fill(wh / "a.db" / "t")
    base = wh / "hb"
    (base / "q").mkdir(parents=True)
    (base / "link").symlink_to(wh / "a.db" / "t")
    s.tables.create_table(_owned_table("default", "hb", "bob", f"file:{base}", external=True))
    tbl_id = s.tables.get_table("default", "hb").id
    assert boundary.deletable_files(f"file:{base}", ["q/f.parquet", "link/precious.txt", "../x"], tbl_id) == \
        ["q/f.parquet"]
    s.tables.create_table(_owned_table("default", "on_hers", "bob", f"file:{wh}/a.db/t", external=True))
    on_hers = s.tables.get_table("default", "on_hers").id
    assert boundary.deletable_files(f"file:{wh}/a.db/t", ["precious.txt"], on_hers) == []
    assert not boundary.writable(f"file:{wh}/a.db/t", "write", on_hers)


@pytest.fixture
def backend_services(own_backend_url, tmp_path):
    """As `services`, on each backend (the views' statement builds names in SQL)."""
    from store.db.database import Store
    from store.db.migrations import upgrade
    from store.services import build_services

    wh = tmp_path / "wh"
    wh.mkdir()
    store = Store(own_backend_url, str(wh))
    upgrade(store.engine)
    s = build_services(store)
    s.tables.ensure_default_database()
    yield s, wh
    s.close()


def test_merge_on_read_views_are_the_tables_own_for_its_files(backend_services):
    """Hive sync's `<t>_ro` and `<t>_rt` over a table's base path leave the server writing and
    cleaning its files there (the storage mirror), but still keep the directory when the table is
    dropped; another table there, or a `t_ro` of another database, still covers it."""
    s, wh = backend_services
    _as(None)
    boundary = s.tables.boundary
    for db in ("a", "b"):
        s.tables.create_database(Database(name=db, parameters={}))
    s.tables.create_table(_owned_table("a", "t", "alice"))
    loc = f"file:{wh}/a.db/t"
    t_id = s.tables.get_table("a", "t").id
    for view in ("t_ro", "t_rt"):
        s.tables.create_table(_owned_table("a", view, "alice", loc, external=True))
    assert boundary.writable(loc, "write", t_id)
    assert boundary.deletable_files(loc, ["p=1/f.parquet"], t_id) == ["p=1/f.parquet"]
    assert boundary.owners.plan([loc], t_id)[0].covered == "table a.t_ro (owner alice)"  # a drop keeps it
    s.tables.create_table(_owned_table("b", "t_ro", "alice", loc, external=True))
    assert not boundary.writable(loc, "write", t_id)
    s.tables.drop_table("b", "t_ro", False)
    assert boundary.writable(loc, "write", t_id)
    s.tables.create_table(_owned_table("a", "t_other", "alice", loc, external=True))
    assert not boundary.writable(loc, "write", t_id)
    assert boundary.deletable_files(loc, ["p=1/f.parquet"], t_id) == []


def test_the_migration_fills_the_index(services):
    """Migration 0017 indexes what a store holds: databases, tables, partitions outside their table."""
    import importlib.util

    from sqlalchemy import delete, select

    from store.db import schema as S

    s, wh, tmp = services
    _as(None)
    s.tables.create_database(Database(name="a", parameters={}))
    s.tables.create_table(_owned_table("a", "t", "alice", keys=["p"]))
    s.partitions.add_partitions("a", "t", [
        Partition(values=["in"], dbName="a", tableName="t", sd=_sd(None), parameters={}),
        Partition(values=["out"], dbName="a", tableName="t", sd=_sd(f"file:{tmp}/out"), parameters={})])
    s.tables.create_table(_owned_table("a", "v", "alice"))
    rows = "loc_key", "kind", "db_id", "tbl_id", "part_id"
    with s.store.write() as conn:
        before = sorted(conn.execute(select(*[S.location_owners.c[c] for c in rows])).all())
        conn.execute(delete(S.location_owners))
    path = Path(__file__).parents[1] / "store/db/migrations/versions/0017_location_owners.py"
    spec = importlib.util.spec_from_file_location("m0017", path)
    migration = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(migration)
    with s.store.write() as conn:
        migration._fill(conn)
        after = sorted(conn.execute(select(*[S.location_owners.c[c] for c in rows])).all())
    assert after == before
    assert [r.kind for r in after].count("part") == 1
