"""Authorization: which calls change what, and whether the caller (adapter/identity.py) may.

One table, `RULES`, says for every method that changes something what it needs: a Hive privilege
(CREATE, ALTER, DROP, INSERT, DELETE, UPDATE; ALL stands for each) on a database or a table, or
administration. The router asks `Authorizer.admit` before every call (adapter/router.py); reads are
not checked. A caller may do what it needs when it is an admin (a configured user or group, or a
member of the role `admin`), owns the object (its owner is the user, one of its groups, or one of
its roles), or holds the privilege on the object, its database or globally (store/hms/access/access_facts.py).
Changing an owner needs ownership or admin; granting needs ownership, admin, or the grant option.

With authorization on, what a client claims as owner or grantor is replaced by the caller, and the
locations a call names are checked as the caller's (store/storage/owner_index.py). Denials are
`AccessDenied` (MetaException on the wire) saying who lacked what on which object.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from adapter import identity
from adapter.call_names import names_of
from adapter.naming import db_name
from store.errors import AccessDenied
from store.hms.access import PUBLIC, AccessFacts, Principals, Target
from store.storage import ownership
from thrift_idl.hive_metastore.ttypes import (
    CreateDatabaseRequest,
    Database,
    Function,
    HiveObjectType,
    PrincipalType,
    Table,
)

ADMIN = "ADMIN"  # needs administration, no privilege does


@dataclass(frozen=True)
class Need:
    privilege: str
    on: str  # "database" | "table" | "global" | "grants" | "role" | "hudi-table"


def _rules() -> dict[str, Need]:
    rules: dict[str, Need] = {}

    def add(privilege: str, on: str, *methods: str) -> None:
        rules.update((m, Need(privilege, on)) for m in methods)

    add(ADMIN, "global", "create_catalog", "alter_catalog", "drop_catalog", "create_role", "drop_role")
    add("CREATE", "global", "create_database", "create_database_req")
    add("ALTER", "database", "alter_database", "alter_database_req", "alter_function")
    add("DROP", "database", "drop_database", "drop_database_req", "drop_function")
    add("CREATE", "database", "create_table", "create_table_with_environment_context", "create_table_req",
        "create_table_with_constraints", "create_function")
    add("ALTER", "table", "alter_table", "alter_table_with_environment_context", "alter_table_with_cascade",
        "alter_table_req", "alter_partition", "alter_partition_with_environment_context", "alter_partitions",
        "alter_partitions_req", "alter_partitions_with_environment_context", "rename_partition",
        "rename_partition_req", "add_primary_key", "add_foreign_key", "add_unique_constraint",
        "add_not_null_constraint", "add_default_constraint", "add_check_constraint", "drop_constraint",
        "markPartitionForEvent")
    add("DROP", "table", "drop_table", "drop_table_with_environment_context", "drop_table_req")
    add("DELETE", "table", "truncate_table", "truncate_table_req", "drop_partition", "drop_partition_by_name",
        "drop_partition_with_environment_context", "drop_partition_by_name_with_environment_context",
        "drop_partitions_req", "drop_partition_req")
    add("INSERT", "table", "add_partition", "add_partition_with_environment_context", "add_partitions",
        "add_partitions_req", "append_partition", "append_partition_with_environment_context",
        "append_partition_by_name", "append_partition_by_name_with_environment_context", "append_partition_req",
        "add_partitions_pspec", "fire_listener_event")
    add("UPDATE", "table", "update_table_column_statistics", "update_partition_column_statistics",
        "update_table_column_statistics_req", "update_partition_column_statistics_req",
        "delete_table_column_statistics", "delete_partition_column_statistics", "set_aggr_stats_for",
        # the Hudi extension: every step of a commit, rollback, clean, import, index load, sync
        "new_instant_time", "create_instant", "transition_to_inflight", "complete_instant", "heartbeat_instant",
        "add_markers", "rollback_instant", "delete_savepoint", "import_hudi_instants", "load_record_index",
        "load_column_stats", "sync_storage")
    add("CREATE", "hudi-table", "register_hudi_table")
    # DELETE on the source table, INSERT on the destination (as Hive's SQL-standard authorization)
    add("DELETE", "exchange", "exchange_partition", "exchange_partitions")
    # Hudi's metaserver protocol (adapter/handlers/metaserver.py): the same needs as the calls above
    add("CREATE", "global", "createDatabase")
    add("CREATE", "hudi-table", "createTable")
    add("UPDATE", "table", "createNewInstantTime", "createNewInstantWithTime", "transitionInstantState",
        "deleteInstant")
    add("GRANT", "grants", "grant_privileges", "revoke_privileges", "grant_revoke_privileges")
    add(ADMIN, "global", "refresh_privileges")  # HiveServer2's privilege synchronizer: replaces others' grants
    add("GRANT", "role", "grant_role", "revoke_role", "grant_revoke_role")
    return rules


RULES = _rules()
# Calls that change something but need no privilege (a session's locks and transactions): audited only.
AUDITED_ONLY = frozenset({"open_txns", "abort_txn", "abort_txns", "commit_txn", "lock", "unlock", "check_lock",
                          "heartbeat", "heartbeat_txn_range", "flushCache", "allocate_table_write_ids",
                          "add_dynamic_partitions", "compact", "compact2",
                          # delegation tokens: the token service checks who may (adapter/handlers/delegation_tokens.py)
                          "get_delegation_token", "renew_delegation_token", "cancel_delegation_token"})


def changes_something(method: str) -> bool:
    """Whether the audit log records the call."""
    return method in RULES or method in AUDITED_ONLY


def enabled(setting: str, auth: str | None) -> bool:
    """`--authorization auto|on|off`; auto is on exactly when authentication (`--auth`) is on."""
    if setting == "auto":
        return (auth or "none") != "none"
    return setting == "on"


@dataclass
class Authorizer:
    facts: AccessFacts
    admin_users: frozenset[str] = frozenset()
    admin_groups: frozenset[str] = frozenset()
    _checks: dict[str, Callable] = field(default_factory=dict, init=False)

    def __post_init__(self) -> None:
        self._checks.update({"global": self._global, "database": self._database, "table": self._table,
                             "exchange": self._exchange,
                             "hudi-table": self._hudi_table, "grants": self._grants, "role": self._role})

    def admit(self, method: str, args: tuple) -> tuple:
        """The call's arguments (owners and grantors made the caller's) if the caller may make it;
        raises AccessDenied if not."""
        ownership.set_claimant(None)
        need = RULES.get(method)
        if need is None:
            return args
        who = self._who()
        admin = self._is_admin(who)
        if not admin:
            self._checks[need.on](who, method, need, args)
        # the locations the call names are checked as this caller's (store/storage/owner_index.py)
        ownership.set_claimant(ownership.Claimant(who.user, admin, lambda name, kind: _owns_location(who, name, kind)))
        return _stamped(method, args, who.user)

    # --- who --------------------------------------------------------------------------------------

    def _who(self) -> Principals:
        caller = identity.current()
        if caller.user is None:
            raise AccessDenied("Permission denied: the caller is anonymous (authorization is on: authenticate, "
                               "or name a user with set_ugi where the server trusts it)")
        return self.facts.principals(caller.user, caller.groups)

    def _is_admin(self, who: Principals) -> bool:
        return who.user in self.admin_users or bool(self.admin_groups.intersection(who.groups)) \
            or self.facts.in_admin_role(who)

    # --- per kind of object -----------------------------------------------------------------------

    def _global(self, who: Principals, method: str, need: Need, args: tuple) -> None:
        if need.privilege == ADMIN or not self.facts.holds(who, need.privilege, Target("", None, False)):
            what = "administration" if need.privilege == ADMIN else f"{need.privilege} (globally) or administration"
            raise _denied(who, method, what, "the metastore")

    def _database(self, who: Principals, method: str, need: Need, args: tuple) -> None:
        db, _table = _names(method, args)
        target = self.facts.target(db)
        self._require(who, method, need.privilege, target)
        if method == "alter_database":
            new = next((a for a in args if isinstance(a, Database)), None)
            if new is not None and new.ownerName is not None and \
                    (new.ownerName, new.ownerType or PrincipalType.USER) != \
                    (target.owner, target.owner_type or PrincipalType.USER):
                self._require_owner(who, method, target, "change the owner of")

    def _table(self, who: Principals, method: str, need: Need, args: tuple) -> None:
        db, table = _names(method, args)
        if table is None:
            raise _denied(who, method, need.privilege, f"database {db}", "(the call names no table)")
        target = self.facts.target(db, table)
        self._require(who, method, need.privilege, target)
        new = next((a for a in args if isinstance(a, Table)), None) or \
            next((getattr(a, "table", None) for a in args if isinstance(getattr(a, "table", None), Table)), None)
        if new is None or not method.startswith("alter_table"):
            return
        if (new.owner, new.ownerType or PrincipalType.USER) != \
                (target.owner, target.owner_type or PrincipalType.USER):
            self._require_owner(who, method, target, "change the owner of")
        if new.dbName and db_name(new.dbName) != target.db:
            self._require(who, method, "CREATE", self.facts.target(db_name(new.dbName)))

    def _exchange(self, who: Principals, method: str, need: Need, args: tuple) -> None:
        """exchange_partition(s)(spec, source db, source table, destination db, destination table)."""
        names = [a if isinstance(a, str) else "" for a in (list(args) + [None] * 5)[1:5]]
        self._require(who, method, "DELETE", self.facts.target(db_name(names[0]), names[1].lower()))
        self._require(who, method, "INSERT", self.facts.target(db_name(names[2]), names[3].lower()))

    def _hudi_table(self, who: Principals, method: str, need: Need, args: tuple) -> None:
        db, table = _names(method, args)
        target = self.facts.target(db, table)
        if target.exists:
            self._require(who, method, "ALTER", target)
        else:
            self._require(who, method, "CREATE", self.facts.target(db))

    def _grants(self, who: Principals, method: str, need: Need, args: tuple) -> None:
        request = args[0] if args else None
        bag = getattr(request, "privileges", None)
        bag = bag if isinstance(getattr(bag, "privileges", None), list) else request
        for grant in getattr(bag, "privileges", None) or []:
            ref = grant.hiveObject
            if ref is None or ref.objectType in (None, HiveObjectType.GLOBAL):
                raise _denied(who, method, "administration", "the global scope (grants on it)")
            table = ref.objectName if ref.objectType != HiveObjectType.DATABASE else None
            target = self.facts.target(db_name(ref.dbName), table.lower() if table else None)
            if self._owns(who, target):
                continue
            for privilege in ((grant.grantInfo.privilege if grant.grantInfo else None) or "").split(","):
                if not self.facts.holds(who, privilege.strip().upper(), target, grant_option=True):
                    raise _denied(who, method, f"{privilege} with the grant option", _label(target),
                                  "(granting needs ownership, admin, or the grant option)")

    def _role(self, who: Principals, method: str, need: Need, args: tuple) -> None:
        role = getattr(args[0], "roleName", None) if args and not isinstance(args[0], str) else \
            (args[0] if args else None)
        if not role or not self.facts.may_grant_role(who, role):
            raise _denied(who, method, "the role with its grant option, or administration", f"role {role}")

    # --- the decision -----------------------------------------------------------------------------

    @staticmethod
    def _owns(who: Principals, target: Target, creating: bool = False) -> bool:
        """Owning the object; an object owned by the role `public` (Hive's `default` database) is
        everyone's to create in, but no one's to alter, drop or give away."""
        if not target.exists or not who.is_(target.owner, target.owner_type):
            return False
        return creating or (target.owner, target.owner_type) != (PUBLIC, PrincipalType.ROLE)

    def _require(self, who: Principals, method: str, privilege: str, target: Target) -> None:
        if self._owns(who, target, creating=privilege == "CREATE") or self.facts.holds(who, privilege, target):
            return
        raise _denied(who, method, privilege, _label(target))

    def _require_owner(self, who: Principals, method: str, target: Target, doing: str) -> None:
        if not self._owns(who, target):
            raise AccessDenied(f"Permission denied: {_who_text(who)} may not {doing} {_label(target)} "
                               f"({method}): that needs ownership or admin; its owner is {target.owner}")


def _owns_location(who: Principals, name: str | None, kind: int | None) -> bool:
    """Is the owner of an object whose location a call names the caller's? (Objects of the role
    `public`, as Hive's `default` database, are no one's.)"""
    return who.is_(name, kind) and (name, kind) != (PUBLIC, PrincipalType.ROLE)


def _names(method: str, args: tuple) -> tuple[str, str | None]:
    db, table = names_of(method, args)
    catalog = next((getattr(a, attr) for a in args for attr in ("catName", "catalogName")
                    if isinstance(getattr(a, attr, None), str)), None)
    return db_name(db, catalog), (table.lower() if table else None)


def _label(target: Target) -> str:
    if target.table is None:
        return f"database {target.db}" if target.db else "the metastore"
    return f"table {target.db}.{target.table}"


def _who_text(who: Principals) -> str:
    groups = f" (groups {', '.join(who.groups)})" if who.groups else ""
    return f"user {who.user}{groups}"


def _denied(who: Principals, method: str, what: str, on: str, why: str = "") -> AccessDenied:
    detail = why or "(needs ownership, admin, or a grant)"
    return AccessDenied(f"Permission denied: {_who_text(who)} does not have {what} on {on} for {method} {detail}")


def _stamped(method: str, args: tuple, user: str) -> tuple:
    """With authorization on, the caller owns what it creates and grants as itself."""
    for a in args:
        for obj in (a, getattr(a, "table", None)):
            if isinstance(obj, Table) and method.startswith("create_table"):
                obj.owner, obj.ownerType = user, PrincipalType.USER
            elif isinstance(obj, (Database, Function, CreateDatabaseRequest)) and method.startswith("create_"):
                obj.ownerName, obj.ownerType = user, PrincipalType.USER
        bag = getattr(a, "privileges", None)
        for grant in getattr(bag, "privileges", None) or (bag if isinstance(bag, list) else []):
            if getattr(grant, "grantInfo", None) is not None:
                grant.grantInfo.grantor, grant.grantInfo.grantorType = user, PrincipalType.USER
        if method == "grant_revoke_role" and a is not None:
            a.grantor, a.grantorType = user, PrincipalType.USER
    if method == "grant_role" and len(args) >= 6:
        args = (*args[:3], user, PrincipalType.USER, *args[5:])
    return args


@dataclass(frozen=True)
class AuthorizationSettings:
    """`serve`'s settings: --authorization, --admin-users, --admin-groups (and part of --auth)."""

    mode: str = "auto"
    auth: str | None = None
    admin_users: tuple[str, ...] = ()
    admin_groups: tuple[str, ...] = ()

    @classmethod
    def from_args(cls, args) -> AuthorizationSettings:
        return cls(getattr(args, "authorization", "auto") or "auto", getattr(args, "auth", None),
                   _names_list(getattr(args, "admin_users", None)), _names_list(getattr(args, "admin_groups", None)))

    @property
    def on(self) -> bool:
        return enabled(self.mode, self.auth)

    def authorizer(self, facts: AccessFacts) -> Authorizer | None:
        if not self.on:
            return None
        return Authorizer(facts, frozenset(self.admin_users), frozenset(self.admin_groups))


def _names_list(text: str | None) -> tuple[str, ...]:
    return tuple(n.strip() for n in (text or "").split(",") if n.strip())
