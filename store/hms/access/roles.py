"""Roles (Hive's ROLES and ROLE_MAP): create_role, drop_role, grant_role, revoke_role and their
listings. `admin` and `public` are built in: they always exist and cannot be created or dropped;
every user is in `public`; the members of `admin` are metastore administrators. A role's member is a
user, a group or another role (no cycles); a member with the grant option may grant the role on.
"""

from __future__ import annotations

from sqlalchemy import Connection, delete, or_, select, update

from store.db import schema as S
from store.db.database import Store, now_s
from store.errors import MetaError
from thrift_idl.hive_metastore.ttypes import PrincipalType, Role, RolePrincipalGrant

ADMIN, PUBLIC = "admin", "public"
BUILT_IN = (ADMIN, PUBLIC)
_R, _M = S.roles, S.role_members
_NAME_MAX = 128


class RoleService:
    def __init__(self, store: Store):
        self.store = store

    # --- roles ----------------------------------------------------------------------------------

    def create(self, role: Role | None) -> bool:
        name = _name(role.roleName if role is not None else None)
        if name in BUILT_IN:
            raise MetaError(f"Role {name} already exists.")
        self.store.run_write(self._create, name, role.ownerName if role is not None else None)
        return True

    def _create(self, conn: Connection, name: str, owner: str | None) -> None:
        if exists(conn, name):
            raise MetaError(f"Role {name} already exists.")
        conn.execute(_R.insert().values(role_name=name, owner_name=owner, create_time=now_s()))

    def drop(self, name: str | None) -> bool:
        name = _name(name)
        if name in BUILT_IN:
            raise MetaError(f"Role {name} is built in and cannot be dropped")
        self.store.run_write(self._drop, name)
        return True

    def _drop(self, conn: Connection, name: str) -> None:
        if conn.execute(delete(_R).where(_R.c.role_name == name)).rowcount == 0:
            return  # as Hive's ObjectStore.removeRole: dropping a missing role succeeds
        conn.execute(delete(_M).where(_M.c.role_name == name))
        conn.execute(delete(_M).where(_M.c.principal_name == name, _M.c.principal_type == PrincipalType.ROLE))
        conn.execute(delete(S.privileges).where(S.privileges.c.principal_name == name,
                                                S.privileges.c.principal_type == PrincipalType.ROLE))

    def names(self) -> list[str]:
        with self.store.read() as conn:
            return [*BUILT_IN, *conn.execute(select(_R.c.role_name).order_by(_R.c.role_name)).scalars()]

    # --- membership -----------------------------------------------------------------------------

    def grant(self, role: str | None, principal: str | None, kind: int | None, grantor: str | None,
              grantor_type: int | None, grant_option: bool) -> bool:
        role, principal = _name(role), _principal(principal, kind)
        if role == PUBLIC:
            raise MetaError("No user can be added to public. Since all users implicitly belong to public role.")
        self.store.run_write(self._grant, role, principal, kind, grantor, grantor_type, bool(grant_option))
        return True

    def _grant(self, conn: Connection, role: str, principal: str, kind: int, grantor: str | None,
               grantor_type: int | None, grant_option: bool) -> None:
        if not exists(conn, role):
            raise MetaError(f"Role {role} does not exist")
        if kind == PrincipalType.ROLE:
            if not exists(conn, principal):
                raise MetaError(f"Role {principal} does not exist")
            if principal == role or principal in roles_above(conn, [(role, PrincipalType.ROLE)]):
                raise MetaError(f"Cannot grant role {role} to role {principal}: it would make a cycle")
        if _membership(conn, role, principal, kind) is not None:
            raise MetaError(f"{_kind(kind)} {principal} already has the role {role}")
        conn.execute(_M.insert().values(role_name=role, principal_name=principal, principal_type=kind,
                                        grant_option=grant_option, grantor=grantor, grantor_type=grantor_type,
                                        add_time=now_s()))

    def revoke(self, role: str | None, principal: str | None, kind: int | None,
               grant_option_only: bool = False) -> bool:
        role, principal = _name(role), _principal(principal, kind)
        self.store.run_write(self._revoke, role, principal, kind, grant_option_only)
        return True

    def _revoke(self, conn: Connection, role: str, principal: str, kind: int, grant_option_only: bool) -> None:
        """A principal that does not have the role: nothing to revoke, done (as Hive 4), but for
        revoking only the grant option, which the principal must hold the role for."""
        where = (_M.c.role_name == role, _M.c.principal_name == principal, _M.c.principal_type == kind)
        if not exists(conn, role):
            raise MetaError(f"Role {role} does not exist")
        if _membership(conn, role, principal, kind) is None:
            if not grant_option_only:
                return
            raise MetaError(f"{_kind(kind)} {principal} does not have the role {role}")
        if grant_option_only:
            conn.execute(update(_M).where(*where).values(grant_option=False))
        else:
            conn.execute(delete(_M).where(*where))

    # --- listings -------------------------------------------------------------------------------

    def roles_of_principal(self, principal: str | None, kind: int | None) -> list[Role]:
        """list_roles: the roles granted to the principal directly (and `public` to every user)."""
        with self.store.read() as conn:
            rows = conn.execute(select(_R.c.owner_name, _R.c.create_time, _M.c.role_name.label("member_of"))
                                .select_from(_M.outerjoin(_R, _R.c.role_name == _M.c.role_name))
                                .where(_M.c.principal_name == principal, _M.c.principal_type == kind)
                                .order_by(_M.c.role_name)).all()
        out = [Role(roleName=r.member_of, createTime=r.create_time or 0, ownerName=r.owner_name) for r in rows]
        if kind == PrincipalType.USER:
            out.append(Role(roleName=PUBLIC, createTime=0, ownerName=PUBLIC))
        return out

    def principals_in(self, role: str | None) -> list[RolePrincipalGrant]:
        with self.store.read() as conn:
            rows = conn.execute(select(_M).where(_M.c.role_name == role)
                                .order_by(_M.c.principal_type, _M.c.principal_name)).all()
        return [_grant_of(r) for r in rows]

    def grants_of_principal(self, principal: str | None, kind: int | None) -> list[RolePrincipalGrant]:
        with self.store.read() as conn:
            rows = conn.execute(select(_M).where(_M.c.principal_name == principal, _M.c.principal_type == kind)
                                .order_by(_M.c.role_name)).all()
        out = [_grant_of(r) for r in rows]
        if kind == PrincipalType.USER:  # as Hive: every user holds `public`, granted by no one
            out.append(RolePrincipalGrant(roleName=PUBLIC, principalName=principal, principalType=kind,
                                          grantOption=False, grantTime=0))
        return out


# --- queries other services use -----------------------------------------------------------------


def exists(conn: Connection, role: str) -> bool:
    return role in BUILT_IN or conn.execute(select(_R.c.role_name).where(_R.c.role_name == role)).first() is not None


def roles_above(conn: Connection, members: list[tuple[str, int]]) -> set[str]:
    """Every role the members are in, directly or through other roles (not `public`)."""
    found: set[str] = set()
    frontier = list(members)
    while frontier:
        conds = [(_M.c.principal_name == n) & (_M.c.principal_type == k) for n, k in frontier]
        new = set(conn.execute(select(_M.c.role_name).where(or_(*conds))).scalars()) - found
        found |= new
        frontier = [(r, PrincipalType.ROLE) for r in new]
    return found


def may_grant(conn: Connection, role: str, members: list[tuple[str, int]]) -> bool:
    """Whether one of the members holds `role` with the grant option."""
    conds = [(_M.c.principal_name == n) & (_M.c.principal_type == k) for n, k in members]
    return bool(conds) and conn.execute(select(_M.c.role_name).where(
        _M.c.role_name == role, _M.c.grant_option.is_(True), or_(*conds)).limit(1)).first() is not None


def _membership(conn: Connection, role: str, principal: str, kind: int):
    return conn.execute(select(_M.c.role_name).where(
        _M.c.role_name == role, _M.c.principal_name == principal, _M.c.principal_type == kind)).first()


def _name(name: str | None) -> str:
    name = (name or "").strip()
    if not name:
        raise MetaError("A role needs a name")
    if len(name) > _NAME_MAX:
        raise MetaError(f"Role name {name[:40]}... is longer than {_NAME_MAX} characters")
    return name


def _principal(name: str | None, kind: int | None) -> str:
    if not name or kind not in (PrincipalType.USER, PrincipalType.GROUP, PrincipalType.ROLE):
        raise MetaError("A role grant needs a principal name and type (USER, GROUP or ROLE)")
    if len(name) > _NAME_MAX:
        raise MetaError(f"Principal name {name[:40]}... is longer than {_NAME_MAX} characters")
    return name


def _kind(kind: int) -> str:
    return PrincipalType._VALUES_TO_NAMES.get(kind, str(kind)).capitalize()


def _grant_of(r) -> RolePrincipalGrant:
    return RolePrincipalGrant(roleName=r.role_name, principalName=r.principal_name, principalType=r.principal_type,
                              grantOption=bool(r.grant_option), grantTime=r.add_time, grantorName=r.grantor,
                              grantorPrincipalType=r.grantor_type)
