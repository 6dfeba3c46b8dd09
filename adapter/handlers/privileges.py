"""Privilege and role calls: grant_privileges, revoke_privileges, list_privileges,
get_privilege_set, get_principals_in_role (the role listings are service.py's)."""

from __future__ import annotations

from adapter.naming import check_catalog, db_name
from store.hms.privileges import PrivilegeService
from thrift_idl.hive_metastore.ttypes import GetPrincipalsInRoleResponse, HiveObjectRef


def _ref(ref: HiveObjectRef | None) -> HiveObjectRef | None:
    if ref is not None:
        check_catalog(ref.catName)
        if ref.dbName:
            ref.dbName = db_name(ref.dbName)
    return ref


class PrivilegeHandler:
    def __init__(self, privileges: PrivilegeService):
        self.privileges = privileges

    def grant_privileges(self, privileges):
        for p in (privileges.privileges if privileges else None) or []:
            _ref(p.hiveObject)
        return self.privileges.grant(privileges)

    def revoke_privileges(self, privileges):
        for p in (privileges.privileges if privileges else None) or []:
            _ref(p.hiveObject)
        return self.privileges.revoke(privileges)

    def list_privileges(self, principal_name, principal_type, hiveObject):
        return self.privileges.list_grants(principal_name, principal_type, _ref(hiveObject))

    def get_privilege_set(self, hiveObject, user_name, group_names):
        return self.privileges.privilege_set(_ref(hiveObject) or HiveObjectRef(), user_name, group_names)

    def get_principals_in_role(self, request):
        # The built-in roles `admin` and `public` have no members (every user is implicitly in
        # `public`); Hive answers the same for a role that does not exist.
        return GetPrincipalsInRoleResponse(principalGrants=[])
