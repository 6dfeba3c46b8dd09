"""What the store knows for an authorization decision (adapter/authorization.py decides): who a
caller is as principals (the user, their groups, the roles those are in, `public`), who owns a
database or table, and whether one of the principals holds a privilege on it.

A privilege is held when it, or ALL, is granted to one of the principals on the object, on its
database (for a table), or globally; with `grant_option`, only grants with the grant option count.
"""

from __future__ import annotations

from dataclasses import dataclass

from sqlalchemy import or_, select

from store.db import schema as S
from store.db.database import Store
from store.hms.access.roles import ADMIN, PUBLIC, may_grant, roles_above
from store.hms.catalog import database_is
from thrift_idl.hive_metastore.ttypes import HiveObjectType, PrincipalType

_P = S.privileges


@dataclass(frozen=True)
class Principals:
    """A caller as the store's principals."""

    user: str
    groups: tuple[str, ...]
    roles: frozenset[str]

    def pairs(self) -> list[tuple[str, int]]:
        return ([(self.user, PrincipalType.USER)] + [(g, PrincipalType.GROUP) for g in self.groups]
                + [(r, PrincipalType.ROLE) for r in sorted(self.roles)])

    def is_(self, name: str | None, kind: int | None) -> bool:
        """Whether an owner (name, type) is one of these principals (an owner without a type is a user)."""
        return name is not None and (name, PrincipalType.USER if kind is None else kind) in self.pairs()


@dataclass(frozen=True)
class Target:
    """A database or table as authorization sees it; `exists` False when it is not there (yet)."""

    db: str
    table: str | None
    exists: bool
    db_id: int | None = None
    tbl_id: int | None = None
    owner: str | None = None
    owner_type: int | None = None


class AccessFacts:
    def __init__(self, store: Store):
        self.store = store

    def principals(self, user: str, groups: tuple[str, ...]) -> Principals:
        members = [(user, PrincipalType.USER)] + [(g, PrincipalType.GROUP) for g in groups]
        with self.store.read() as conn:
            roles = roles_above(conn, members)
        return Principals(user, groups, frozenset(roles | {PUBLIC}))

    @staticmethod
    def in_admin_role(who: Principals) -> bool:
        return ADMIN in who.roles

    def target(self, db: str, table: str | None = None) -> Target:
        d, t = S.db, S.tbl
        with self.store.read() as conn:
            row = conn.execute(select(d.c.db_id, d.c.owner_name, d.c.owner_type).where(database_is(db))).first()
            if row is None:
                return Target(db, table, False)
            if table is None:
                return Target(db, None, True, row.db_id, None, row.owner_name, row.owner_type)
            trow = conn.execute(select(t.c.tbl_id, t.c.owner, t.c.owner_type)
                                .where(t.c.db_id == row.db_id, t.c.name == table)).first()
        if trow is None:
            return Target(db, table, False, row.db_id)
        return Target(db, table, True, row.db_id, trow.tbl_id, trow.owner, trow.owner_type)

    def holds(self, who: Principals, privilege: str, target: Target, grant_option: bool = False) -> bool:
        """Whether `who` holds `privilege` (or ALL) on the target, its database, or globally."""
        scopes = [(_P.c.object_type == HiveObjectType.GLOBAL)]
        if target.db_id is not None:
            scopes.append((_P.c.object_type == HiveObjectType.DATABASE) & (_P.c.db_id == target.db_id))
        if target.tbl_id is not None:
            scopes.append((_P.c.object_type == HiveObjectType.TABLE) & (_P.c.tbl_id == target.tbl_id))
        principals = [(_P.c.principal_name == n) & (_P.c.principal_type == k) for n, k in who.pairs()]
        conds = [or_(*scopes), or_(*principals), _P.c.privilege.in_([privilege, "ALL"])]
        if grant_option:
            conds.append(_P.c.grant_option.is_(True))
        with self.store.read() as conn:
            return conn.execute(select(_P.c.grant_id).where(*conds).limit(1)).first() is not None

    def may_grant_role(self, who: Principals, role: str) -> bool:
        with self.store.read() as conn:
            return may_grant(conn, role, who.pairs())
