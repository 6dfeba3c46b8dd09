"""Authorization and the audit log (docs/security.md): a server with `--authorization on` (set_ugi
names the caller: authentication off), admins from `--admin-users`/`--admin-groups`, checked with a
third-party client (hmsclient, Hive 2.x bindings) for the Hive calls and our client for the Hudi
extension, on every backend. The matrix: admin, owner, grantee (directly, or through a role granted
to a group) and stranger, each trying to create, alter, drop, commit and grant."""

from __future__ import annotations

import inspect
import re
import uuid

import pytest

from adapter.authorization import AUDITED_ONLY, RULES
from client import HudiMetastoreClient
from tests.harness import start_our_server, stop_process
from thrift_idl.hive_metastore.ttypes import FieldSchema as OurFieldSchema
from thrift_idl.hive_metastore.ttypes import MetaException as OurMetaException
from thrift_idl.hudi_metastore.ttypes import HudiTableConfig, HudiTableType

hmsclient = pytest.importorskip("hmsclient.hmsclient")
from hmsclient.genthrift.hive_metastore.ttypes import (  # noqa: E402
    Database,
    FieldSchema,
    GetPrincipalsInRoleRequest,
    GetRoleGrantsForPrincipalRequest,
    GrantRevokeRoleRequest,
    GrantRevokeType,
    HiveObjectPrivilege,
    HiveObjectRef,
    HiveObjectType,
    MetaException,
    PrincipalType,
    PrivilegeBag,
    PrivilegeGrantInfo,
    Role,
    SerDeInfo,
    StorageDescriptor,
    Table,
)

USER, GROUP, ROLE = PrincipalType.USER, PrincipalType.GROUP, PrincipalType.ROLE
_READS = re.compile(r"^(get|list|fetch|show|is|partition_name|alive|set_ugi|shutdown|reinitialize|setOption|"
                    r"setMetaConf|lookup_record_keys|prune_file_slices|getMetaConf|getC|getN|getO|getS|getV)")


def test_every_served_method_is_a_read_or_has_a_rule():
    """A new write method cannot slip past authorization and the audit log unnoticed."""
    import adapter.app as app

    handlers = [v for k, v in vars(app).items() if k.endswith("Handler") and inspect.isclass(v)]
    served = {n for h in handlers for n in dir(h) if not n.startswith("_") and callable(getattr(h, n))}
    assert set(RULES) <= served, set(RULES) - served
    unclassified = {n for n in served - set(RULES) - AUDITED_ONLY if not _READS.match(n)}
    assert unclassified == set(), unclassified


# --------------------------------------------------------------------------- the server and its callers


@pytest.fixture
def secured(own_backend_url, tmp_path):
    audit = tmp_path / "audit.log"
    port, proc = start_our_server(own_backend_url, tmp_path, extra_args=[
        "--authorization", "on", "--admin-users", "root", "--admin-groups", "wheel", "--audit-log", str(audit)])
    try:
        yield port, audit
    finally:
        stop_process(proc)


class Callers:
    """One connection per user, each named by set_ugi (what `--authorization on` trusts)."""

    def __init__(self, port: int):
        self.port, self.open = port, []

    def hms(self, user: str, groups=()):
        c = hmsclient.HMSClient(host="127.0.0.1", port=self.port)
        c.open()
        c.set_ugi(user, list(groups))
        self.open.append(c)
        return c

    def hudi(self, user: str, groups=()) -> HudiMetastoreClient:
        c = HudiMetastoreClient(f"thrift://127.0.0.1:{self.port}", retries=0)
        c.set_ugi(user, list(groups))
        self.open.append(c)
        return c

    def close(self):
        for c in self.open:
            c.close()


def _table(db: str, name: str, owner: str = "someone_else") -> Table:
    sd = StorageDescriptor(cols=[FieldSchema("id", "bigint", None)], inputFormat="x", outputFormat="y",
                           serdeInfo=SerDeInfo(serializationLib="z", parameters={}), parameters={})
    return Table(tableName=name, dbName=db, owner=owner, sd=sd, partitionKeys=[], parameters={},
                 tableType="EXTERNAL_TABLE")


def _grant(db, table, principal, kind, privilege, option=False, grantor="whoever"):
    ref = HiveObjectRef(objectType=HiveObjectType.TABLE if table else HiveObjectType.DATABASE, dbName=db,
                        objectName=table)
    return PrivilegeBag(privileges=[HiveObjectPrivilege(
        hiveObject=ref, principalName=principal, principalType=kind,
        grantInfo=PrivilegeGrantInfo(privilege=privilege, createTime=0, grantor=grantor, grantorType=USER,
                                     grantOption=option))])


def _denied(call, *args, who: str, what: str):
    with pytest.raises(MetaException) as info:
        call(*args)
    text = info.value.message
    assert "Permission denied" in text and who in text and what in text, text
    return text


def _register(c: HudiMetastoreClient, db: str, table: str) -> None:
    c.register_hudi_table(
        HudiTableConfig(dbName=db, tableName=table, tableType=HudiTableType.COPY_ON_WRITE, recordKeyFields=["id"],
                        partitionFields=[], precombineField="ts", properties={}),
        [OurFieldSchema("id", "string", None), OurFieldSchema("ts", "bigint", None)])


def _commit(c: HudiMetastoreClient, db: str, table: str) -> str:
    ts = c.new_instant_time(db, table)
    c.create_instant(db, table, ts, "commit", plan=b"", heartbeat_timeout_s=60)
    c.transition_to_inflight(db, table, ts, "commit", {"partitionToWriteStats": {}})
    c.complete_instant(db, table, ts, "commit", {
        "partitionToWriteStats": {"": [{"fileId": f"f-{ts}", "path": f"f-{ts}_0-1-1_{ts}.parquet",
                                        "partitionPath": "", "fileSizeInBytes": 10, "prevCommit": "null"}]},
        "compacted": False, "extraMetadata": {}, "operationType": "INSERT"})
    return ts


# --------------------------------------------------------------------------- the matrix


def test_authorization_matrix_and_audit_log(secured):
    port, audit = secured
    db = f"auth_{uuid.uuid4().hex[:8]}"
    callers = Callers(port)
    try:
        _matrix(callers, db)
        _roles_api(callers, db)
    finally:
        callers.close()
    _audit_lines(audit, db)


def _matrix(callers: Callers, db: str) -> None:
    root, alice = callers.hms("root"), callers.hms("alice")
    bob, carol = callers.hms("bob", ["etl"]), callers.hms("carol")
    mallory, wheel = callers.hms("mallory"), callers.hms("walter", ["wheel"])

    # create a database: needs a global CREATE grant or admin; the caller owns it, whatever it claims
    _denied(alice.create_database, Database(name=db, parameters={}), who="user alice", what="CREATE")
    root.grant_privileges(PrivilegeBag(privileges=[HiveObjectPrivilege(
        hiveObject=HiveObjectRef(objectType=HiveObjectType.GLOBAL), principalName="alice", principalType=USER,
        grantInfo=PrivilegeGrantInfo(privilege="CREATE", createTime=0, grantor="root", grantorType=USER))]))
    alice.create_database(Database(name=db, parameters={}, ownerName="mallory", ownerType=USER))
    assert (alice.get_database(db).ownerName, alice.get_database(db).ownerType) == ("alice", USER)

    # grants: alice owns the database; carol may create in it, role `writers` (group etl) may alter/commit
    root.create_role(Role(roleName="writers", ownerName="root"))
    root.grant_role("writers", "etl", GROUP, "root", USER, False)
    alice.grant_privileges(_grant(db, None, "carol", USER, "CREATE"))

    # create: admin, owner, grantee yes; stranger no
    for who, c in (("root", root), ("alice", alice), ("carol", carol), ("walter", wheel)):
        c.create_table(_table(db, f"t_{who}"))
        assert c.get_table(db, f"t_{who}").owner == who  # recorded from the caller, not the client's claim
    alice.create_table(_table(db, "t_alice_b"))
    _denied(mallory.create_table, _table(db, "t_mallory"), who="user mallory", what=f"CREATE on database {db}")
    _denied(bob.create_table, _table(db, "t_bob"), who="user bob (groups etl)", what="CREATE")

    alice.grant_privileges(_grant(db, "t_alice", "writers", ROLE, "ALTER"))
    alice.grant_privileges(_grant(db, "t_alice", "carol", USER, "DROP"))
    alice.grant_privileges(_grant(db, "t_alice", "dave", USER, "SELECT", option=True))
    granted = alice.list_privileges("carol", USER, HiveObjectRef(objectType=HiveObjectType.TABLE, dbName=db,
                                                                   objectName="t_alice"))
    assert [(p.grantInfo.privilege, p.grantInfo.grantor) for p in granted] == [("DROP", "alice")]  # the caller
    pset = bob.get_privilege_set(HiveObjectRef(objectType=HiveObjectType.TABLE, dbName=db, objectName="t_alice"),
                                 "bob", ["etl"])
    assert [i.privilege for i in pset.rolePrivileges["writers"]] == ["ALTER"]

    # alter: admin, owner, grantee (role through group) yes; stranger no; the owner only by owner/admin
    for c in (root, alice, bob):
        t = c.get_table(db, "t_alice")
        t.parameters["touched"] = "yes"
        c.alter_table(db, "t_alice", t)
    t = mallory.get_table(db, "t_alice")
    t.parameters["touched"] = "mallory"
    _denied(mallory.alter_table, db, "t_alice", t, who="user mallory", what=f"ALTER on table {db}.t_alice")
    t = bob.get_table(db, "t_alice")
    t.owner = "bob"
    _denied(bob.alter_table, db, "t_alice", t, who="user bob", what="change the owner of")

    # exchange_partitions: DELETE on the source, INSERT on the destination (alice owns both; the
    # tables have no partition keys, so the call itself then fails)
    _denied(mallory.exchange_partitions, {"p": "x"}, db, "t_alice", db, "t_alice_b", who="user mallory",
            what=f"DELETE on table {db}.t_alice")
    _denied(carol.exchange_partitions, {"p": "x"}, db, "t_alice", db, "t_carol", who="user carol",
            what=f"DELETE on table {db}.t_alice")
    with pytest.raises(MetaException) as refused:
        alice.exchange_partitions({"p": "x"}, db, "t_alice", db, "t_alice_b")
    assert "Permission denied" not in refused.value.message, refused.value.message

    # the adversarial sequence of issue 17: set_ugi('mallory'), take alice's table, drop it
    t = mallory.get_table(db, "t_alice")
    t.owner = "mallory"
    _denied(mallory.alter_table, db, "t_alice", t, who="user mallory", what=f"table {db}.t_alice")
    _denied(mallory.drop_table, db, "t_alice", True, who="user mallory", what=f"DROP on table {db}.t_alice")
    assert alice.get_table(db, "t_alice").owner == "alice"

    # grant: admin, owner, grantee with the grant option yes; grantee without it and stranger no
    root.grant_privileges(_grant(db, "t_alice", "erin", USER, "SELECT"))
    alice.grant_privileges(_grant(db, "t_alice", "frank", USER, "SELECT"))
    dave = callers.hms("dave")
    dave.grant_privileges(_grant(db, "t_alice", "gina", USER, "SELECT"))
    _denied(bob.grant_privileges, _grant(db, "t_alice", "mallory", USER, "ALTER"), who="user bob",
            what="ALTER with the grant option")
    _denied(mallory.grant_privileges, _grant(db, "t_alice", "mallory", USER, "ALL"), who="user mallory",
            what="ALL with the grant option")
    _denied(mallory.create_role, Role(roleName="mine"), who="user mallory", what="administration")
    _denied(mallory.grant_role, "writers", "mallory", USER, "mallory", USER, True, who="user mallory",
            what="role writers")
    _denied(alice.grant_privileges, PrivilegeBag(privileges=[HiveObjectPrivilege(
        hiveObject=HiveObjectRef(objectType=HiveObjectType.GLOBAL), principalName="alice", principalType=USER,
        grantInfo=PrivilegeGrantInfo(privilege="ALL", createTime=0, grantor="alice", grantorType=USER))]),
        who="user alice", what="administration")

    # drop: admin, owner, grantee yes; stranger no
    _denied(mallory.drop_table, db, "t_carol", True, who="user mallory", what="DROP")
    root.drop_table(db, "t_root", True)
    alice.drop_table(db, "t_alice_b", True)
    _denied(alice.drop_table, db, "t_walter", True, who="user alice", what="DROP")  # owning the database is not enough
    wheel.drop_table(db, "t_walter", True)
    carol.drop_table(db, "t_alice", True)  # DROP granted
    _denied(mallory.drop_database, db, True, True, who="user mallory", what=f"DROP on database {db}")

    _commits(callers, db)


def _commits(callers: Callers, db: str) -> None:
    """commit (the Hudi extension): admin, owner, grantee (UPDATE through a role) yes; stranger no."""
    root, alice, bob = callers.hudi("root"), callers.hudi("alice"), callers.hudi("bob", ["etl"])
    mallory = callers.hudi("mallory")
    _register(alice, db, "h")
    assert alice.get_table(db, "h").owner == "alice"
    with pytest.raises(OurMetaException, match="Permission denied: user mallory"):
        _register(mallory, db, "h_mallory")
    callers.hms("alice").grant_privileges(_grant(db, "h", "writers", ROLE, "UPDATE"))
    for c in (root, alice, bob):
        _commit(c, db, "h")
    with pytest.raises(OurMetaException, match=f"user mallory does not have UPDATE on table {db}.h"):
        mallory.create_instant(db, "h", None, "commit", plan=b"", heartbeat_timeout_s=60)
    with pytest.raises(OurMetaException, match="Permission denied: user mallory"):
        mallory.rollback_instant(db, "h", "20250101000000000")
    assert len(alice.list_instants(db, "h", states=["COMPLETED"])) == 3


def _roles_api(callers: Callers, db: str) -> None:
    root, alice = callers.hms("root"), callers.hms("alice")
    assert {"admin", "public", "writers"} <= set(root.get_role_names())
    assert [r.roleName for r in root.list_roles("etl", GROUP)] == ["writers"]
    members = root.get_principals_in_role(GetPrincipalsInRoleRequest(roleName="writers")).principalGrants
    assert [(m.principalName, m.principalType, m.grantorName) for m in members] == [("etl", GROUP, "root")]
    # an admin by role: alice joins `admin`, then may create roles, until the role is revoked
    _denied(alice.create_role, Role(roleName="readers"), who="user alice", what="administration")
    root.grant_revoke_role(GrantRevokeRoleRequest(requestType=GrantRevokeType.GRANT, roleName="admin",
                                                  principalName="alice", principalType=USER, grantOption=False))
    grants = root.get_role_grants_for_principal(GetRoleGrantsForPrincipalRequest("alice", USER)).principalGrants
    assert [(g.roleName, g.grantorName) for g in grants] == [("admin", "root"), ("public", None)]
    alice.create_role(Role(roleName="readers"))
    root.revoke_role("admin", "alice", USER)
    _denied(alice.drop_role, "readers", who="user alice", what="administration")
    root.drop_role("readers")
    root.drop_role("writers")
    assert "writers" not in root.get_role_names()
    alice.drop_database(db, True, True)


def _audit_lines(audit, db: str) -> None:
    lines = audit.read_text().splitlines()
    mine = [ln for ln in lines if f"object={db}" in ln or "object=role:" in ln]
    assert mine and all(re.match(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z principal=\S+ auth=set_ugi "
                                 r"client=127\.0\.0\.1:\d+ call=\w+ ", ln) for ln in mine), mine[:3]
    assert any("principal=mallory auth=set_ugi" in ln and f"call=drop_table object={db}.t_alice outcome=denied"
               in ln for ln in lines)
    assert any("principal=alice auth=set_ugi" in ln and f"call=create_database object={db} outcome=ok" in ln
               for ln in lines)
    assert any(f"call=complete_instant object={db}.h outcome=ok" in ln for ln in lines)
    assert any("call=grant_revoke_role object=role:admin outcome=ok" in ln for ln in lines)
    assert any("principal=root auth=set_ugi" in ln and f"call=grant_privileges object={db}.t_alice outcome=ok"
               in ln for ln in lines)
    assert not any("call=get_table " in ln or "call=list_instants" in ln for ln in lines)  # reads: not audited


def test_settings_from_file_environment_and_flags(tmp_path):
    """--authorization (auto: on exactly when authentication is), the admins and --audit-log come
    through adapter/config.py like every option; a value that is no choice is refused in one line."""
    from adapter.authorization import AuthorizationSettings, enabled
    from tests.cli_helpers import assert_one_line_error, run_cli
    from tests.test_cli_config import shown

    assert [enabled("auto", a) for a in (None, "none", "kerberos", "password")] == [False, False, True, True]
    assert [enabled(m, "kerberos") for m in ("on", "off")] == [True, False]
    assert enabled("on", None) is True
    settings = AuthorizationSettings.from_args(type("Args", (), {"authorization": "on", "admin_users": " root, ops ",
                                                                  "admin_groups": ""})())
    assert (settings.on, settings.admin_users, settings.admin_groups) == (True, ("root", "ops"), ())

    cfg = tmp_path / "metastore.toml"
    cfg.write_text(f'[serve]\nauthorization = "on"\nadmin_users = "root"\naudit_log = "{tmp_path / "a.log"}"\n')
    r = run_cli("--config", str(cfg), "config", "show", "--admin-groups", "wheel",
                env={"HUDI_METASTORE_ADMIN_USERS": "root,ops"})
    lines = shown(r.stdout)
    assert lines["authorization"] == ('"on"', "file")
    assert lines["admin_users"] == ('"root,ops"', "env HUDI_METASTORE_ADMIN_USERS")
    assert lines["admin_groups"] == ('"wheel"', "flag")
    assert lines["audit_log"] == (f'"{tmp_path / "a.log"}"', "file")
    assert_one_line_error(run_cli("config", "show", env={"HUDI_METASTORE_AUTHORIZATION": "maybe"}),
                          "HUDI_METASTORE_AUTHORIZATION", "maybe")
