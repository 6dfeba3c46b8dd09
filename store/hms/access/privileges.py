"""Privileges granted on the global scope, databases, tables, partitions and columns (Hive's
*_PRIVS tables in one, `privileges`): grant_privileges, revoke_privileges, list_privileges and
get_privilege_set, answered as Hive 4's metastore does. Roles are store/hms/access/roles.py's; every user is
implicitly in `public`.

Grants on a table, partition or column that does not exist are ignored and a database that does
not exist is an error, as in Hive; grants go with their object when it is dropped. Errors are
MetaError with the text Hive's MetaException carries ("Got exception: <class> <message>").
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from sqlalchemy import Connection, delete, select, update

from store.db import schema as S
from store.db.database import Store, now_s
from store.errors import MetaError, NoSuchObject
from store.hms.access.roles import PUBLIC, exists, roles_above
from store.hms.catalog import database_is
from store.hms.common import DEFAULT_CATALOG
from store.hms.partitions import TableContexts, make_name, split_name
from thrift_idl.hive_metastore.ttypes import (
    HiveObjectPrivilege,
    HiveObjectRef,
    HiveObjectType,
    PrincipalPrivilegeSet,
    PrincipalType,
    PrivilegeBag,
    PrivilegeGrantInfo,
)

_P = S.privileges
_EXC = "Got exception: org.apache.hadoop.hive.metastore.api."


@dataclass(frozen=True)
class ObjectIds:
    """Where a HiveObjectRef points: its type and the ids of its database, table, partition."""

    object_type: int
    db_id: int | None = None
    tbl_id: int | None = None
    part_id: int | None = None
    column: str | None = None
    label: str = ""  # how Hive's messages name the object

    def where(self) -> list[Any]:
        return [_P.c.object_type == self.object_type,
                _P.c.db_id == self.db_id if self.db_id is not None else _P.c.db_id.is_(None),
                _P.c.tbl_id == self.tbl_id if self.tbl_id is not None else _P.c.tbl_id.is_(None),
                _P.c.part_id == self.part_id if self.part_id is not None else _P.c.part_id.is_(None),
                _P.c.column_name == self.column if self.column is not None else _P.c.column_name.is_(None)]


class PrivilegeService:
    def __init__(self, store: Store):
        self.store = store
        self.contexts = TableContexts(store.backend)

    # --- grant and revoke -----------------------------------------------------------------------

    def grant(self, bag: PrivilegeBag) -> bool:
        self.store.run_write(self._grant, list(bag.privileges or []) if bag else [])
        return True

    def _grant(self, conn: Connection, grants: Sequence[HiveObjectPrivilege]) -> None:
        now = now_s()
        for grant in grants:
            info = _grant_info(grant)
            _check_principal(conn, grant)
            obj = self.resolve(conn, grant.hiveObject, writing=True)
            if obj is None:
                continue  # Hive ignores grants on tables, partitions and columns that do not exist
            for privilege in (info.privilege or "").split(","):
                taken = conn.execute(select(_P.c.grant_id).where(
                    *obj.where(), *_principal(grant), _P.c.privilege == privilege,
                    _P.c.grantor == info.grantor).limit(1)).first()
                if taken is not None:
                    raise MetaError(f"{_EXC}InvalidObjectException {privilege} is already granted on "
                                    f"{obj.label} by {info.grantor}")
                conn.execute(_P.insert().values(
                    object_type=obj.object_type, db_id=obj.db_id, tbl_id=obj.tbl_id, part_id=obj.part_id,
                    column_name=obj.column, principal_name=grant.principalName, principal_type=grant.principalType,
                    privilege=privilege, grantor=info.grantor, grantor_type=info.grantorType,
                    grant_option=bool(info.grantOption), authorizer=grant.authorizer, create_time=now))

    def revoke(self, bag: PrivilegeBag, grant_option_only: bool = False) -> bool:
        self.store.run_write(self._revoke, list(bag.privileges or []) if bag else [], grant_option_only)
        return True

    def _revoke(self, conn: Connection, grants: Sequence[HiveObjectPrivilege], grant_option_only: bool) -> None:
        """Each revoked privilege removes one grant of it to the principal, whoever granted it (or,
        `grant_option_only`, takes the grant option from it)."""
        for grant in grants:
            info = _grant_info(grant)
            obj = self.resolve(conn, grant.hiveObject, writing=True)
            if obj is None:
                continue
            for privilege in (info.privilege or "").split(","):
                found = conn.execute(select(_P.c.grant_id).where(
                    *obj.where(), *_principal(grant), _P.c.privilege == privilege)
                    .order_by(_P.c.grant_id).limit(1)).scalar()
                if found is None:
                    raise MetaError(f"{_EXC}InvalidObjectException No grant ({privilege}) found  on {obj.label}")
                if grant_option_only:
                    conn.execute(update(_P).where(_P.c.grant_id == found).values(grant_option=False))
                else:
                    conn.execute(delete(_P).where(_P.c.grant_id == found))

    def refresh(self, ref: HiveObjectRef | None, authorizer: str | None, bag: PrivilegeBag | None) -> bool:
        """refresh_privileges (HiveServer2's privilege synchronizer): the grants `authorizer` made on a
        database, a table, or (a COLUMN reference without a column) all of a table's columns are
        replaced by `bag`'s, in one transaction, as Hive's store does."""
        self.store.run_write(self._refresh, ref, authorizer, list(bag.privileges or []) if bag else [])
        return True

    def _refresh(self, conn: Connection, ref: HiveObjectRef | None, authorizer: str | None,
                 grants: Sequence[HiveObjectPrivilege]) -> None:
        kind = ref.objectType if ref is not None else None
        if kind not in (HiveObjectType.DATABASE, HiveObjectType.TABLE, HiveObjectType.COLUMN):
            raise MetaError(f"Unexpected object type {kind}")
        if kind == HiveObjectType.COLUMN and ref is not None and ref.columnName is not None:
            raise MetaError("columnName must be null")
        obj = self.resolve(conn, HiveObjectRef(objectType=HiveObjectType.TABLE if kind == HiveObjectType.COLUMN
                                               else kind, dbName=ref.dbName, objectName=ref.objectName)
                           if ref is not None else None, writing=True)
        if obj is not None:
            where = [_P.c.object_type == kind, _P.c.db_id == obj.db_id,
                     _P.c.authorizer == authorizer if authorizer is not None else _P.c.authorizer.is_(None)]
            if kind != HiveObjectType.DATABASE:
                where += [_P.c.tbl_id == obj.tbl_id, _P.c.part_id.is_(None)]
            conn.execute(delete(_P).where(*where))
        self._grant(conn, grants)

    # --- read -----------------------------------------------------------------------------------

    def list_grants(self, principal_name: str | None, principal_type: int | None,
             ref: HiveObjectRef | None) -> list[HiveObjectPrivilege]:
        """The grants on the object (all objects when it has no type), to the principal (to anyone
        when no principal is named)."""
        with self.store.read() as conn:
            conds: list[Any] = []
            if ref is not None and ref.objectType is not None:
                obj = self.resolve(conn, ref)
                if obj is None:
                    return []
                conds.extend(obj.where())
            if principal_name is not None:
                conds.append(_P.c.principal_name == principal_name)
                if principal_type is not None:
                    conds.append(_P.c.principal_type == principal_type)
            return self._objects(conn, conds)

    def privilege_set(self, ref: HiveObjectRef, user: str | None,
                      groups: Sequence[str] | None) -> PrincipalPrivilegeSet:
        """get_privilege_set: the user's, the groups' and (but globally) their roles' grants on the object."""
        groups = list(groups or [])
        out = PrincipalPrivilegeSet()
        with self.store.read() as conn:
            obj = self.resolve(conn, ref)
            if ref.objectType == HiveObjectType.GLOBAL:
                if user is not None:
                    mine = self._infos(conn, obj, user, PrincipalType.USER)
                    if mine:
                        out.userPrivileges = {user: mine}
                if groups:
                    found = {g: self._infos(conn, obj, g, PrincipalType.GROUP) for g in groups}
                    out.groupPrivileges = {g: infos for g, infos in found.items() if infos}
                return out
            if user is not None:
                out.userPrivileges = {user: self._infos(conn, obj, user, PrincipalType.USER)}
            if groups:
                out.groupPrivileges = {g: self._infos(conn, obj, g, PrincipalType.GROUP) for g in groups}
            if user is not None:  # every user is in `public`, and in the roles granted to them
                members = [(user, PrincipalType.USER)] + [(g, PrincipalType.GROUP) for g in groups]
                roles = [PUBLIC, *sorted(roles_above(conn, members))]
                out.rolePrivileges = {r: self._infos(conn, obj, r, PrincipalType.ROLE) for r in roles}
        return out

    def _infos(self, conn: Connection, obj: ObjectIds | None, name: str, kind: int) -> list[PrivilegeGrantInfo]:
        if obj is None:
            return []
        rows = conn.execute(select(_P).where(*obj.where(), _P.c.principal_name == name, _P.c.principal_type == kind)
                            .order_by(_P.c.grant_id))
        return [_info(r) for r in rows]

    def _objects(self, conn: Connection, conds: list[Any]) -> list[HiveObjectPrivilege]:
        p, t, d = S.partitions, S.tbl, S.db
        q = (select(_P, d.c.name.label("db_name"), t.c.name.label("tbl_name"), p.c.part_name)
             .select_from(_P.outerjoin(d, d.c.db_id == _P.c.db_id).outerjoin(t, t.c.tbl_id == _P.c.tbl_id)
                          .outerjoin(p, p.c.part_id == _P.c.part_id))
             .where(*conds).order_by(_P.c.grant_id))
        out = []
        for r in conn.execute(q):
            ref = HiveObjectRef(objectType=r.object_type, dbName=r.db_name, objectName=r.tbl_name,
                                partValues=[v for _, v in split_name(r.part_name)] if r.part_name else None,
                                columnName=r.column_name,
                                catName=DEFAULT_CATALOG if r.object_type != HiveObjectType.GLOBAL else None)
            out.append(HiveObjectPrivilege(hiveObject=ref, principalName=r.principal_name,
                                           principalType=r.principal_type, grantInfo=_info(r),
                                           authorizer=r.authorizer))
        return out

    # --- objects --------------------------------------------------------------------------------

    def resolve(self, conn: Connection, ref: HiveObjectRef | None, writing: bool = False) -> ObjectIds | None:
        """The ids of the object a reference names; None for a missing table or partition (and, but
        for grants and revokes, a missing database)."""
        if ref is None or ref.objectType is None:
            raise MetaError("HiveObjectRef with an object type is required")
        kind = ref.objectType
        if kind == HiveObjectType.GLOBAL:
            return ObjectIds(kind, label="global scope")
        db = (ref.dbName or "").lower()
        db_id = conn.execute(select(S.db.c.db_id).where(database_is(db))).scalar()
        if db_id is None:
            if not writing:
                return None
            raise MetaError(f"{_EXC}NoSuchObjectException There is no database {DEFAULT_CATALOG}.{db}")
        if kind == HiveObjectType.DATABASE:
            return ObjectIds(kind, db_id, label=f"database {db}")
        try:
            ctx = self.contexts.read(conn, db, ref.objectName or "")
        except NoSuchObject:
            return None
        column = ref.columnName.lower() if kind == HiveObjectType.COLUMN and ref.columnName else None
        label = f"column {column} " if column else ""
        if kind == HiveObjectType.TABLE or (kind == HiveObjectType.COLUMN and not ref.partValues):
            label += f"[{ctx.db_name},{ctx.name}]" if column else f"table [{ctx.db_name},{ctx.name}]"
            return ObjectIds(kind, db_id, ctx.tbl_id, None, column, label=label)
        if kind not in (HiveObjectType.PARTITION, HiveObjectType.COLUMN):
            raise MetaError(f"Unsupported object type {kind}")
        values = list(ref.partValues or [])
        if len(values) != len(ctx.keys):
            return None
        name = make_name(ctx.key_names, values)
        part_id = conn.execute(select(S.partitions.c.part_id).where(
            S.partitions.c.tbl_id == ctx.tbl_id, S.partitions.c.part_name == name)).scalar()
        if part_id is None:
            return None
        label += f"[{ctx.db_name},{ctx.name},{name}]" if column else f"partition [{ctx.db_name},{ctx.name},{name}]"
        return ObjectIds(kind, db_id, ctx.tbl_id, part_id, column, label=label)


def _grant_info(grant: HiveObjectPrivilege) -> PrivilegeGrantInfo:
    if grant is None or grant.grantInfo is None or not grant.principalName or grant.principalType is None:
        raise MetaError("A privilege needs a principal and grant info")
    return grant.grantInfo


def _check_principal(conn: Connection, grant: HiveObjectPrivilege) -> None:
    if grant.principalType == PrincipalType.ROLE and not exists(conn, grant.principalName):
        raise MetaError(f"{_EXC}NoSuchObjectException Role {grant.principalName} does not exist")


def _principal(grant: HiveObjectPrivilege) -> list[Any]:
    return [_P.c.principal_name == grant.principalName, _P.c.principal_type == grant.principalType]


def _info(r: Any) -> PrivilegeGrantInfo:
    return PrivilegeGrantInfo(privilege=r.privilege, createTime=r.create_time, grantor=r.grantor,
                              grantorType=r.grantor_type, grantOption=bool(r.grant_option))
