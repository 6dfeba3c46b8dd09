"""Privilege and role calls: grant_privileges, revoke_privileges, grant_revoke_privileges,
list_privileges, get_privilege_set; create_role, drop_role, grant_role, revoke_role,
grant_revoke_role, get_role_names, list_roles, get_principals_in_role, get_role_grants_for_principal."""

from __future__ import annotations

from adapter.naming import check_catalog, db_name
from store.errors import MetaError
from store.hms.access import PrivilegeService, RoleService
from thrift_idl.hive_metastore.ttypes import (
    GetPrincipalsInRoleResponse,
    GetRoleGrantsForPrincipalResponse,
    GrantRevokePrivilegeResponse,
    GrantRevokeRoleResponse,
    GrantRevokeType,
    HiveObjectRef,
)


def _ref(ref: HiveObjectRef | None) -> HiveObjectRef | None:
    if ref is not None:
        check_catalog(ref.catName)
        if ref.dbName:
            ref.dbName = db_name(ref.dbName)
    return ref


def _refs(bag) -> None:
    for p in (bag.privileges if bag else None) or []:
        _ref(p.hiveObject)


def _kind(request_type) -> int:
    if request_type not in (GrantRevokeType.GRANT, GrantRevokeType.REVOKE):
        raise MetaError(f"Unknown request type {request_type!r} (1 GRANT, 2 REVOKE)")
    return request_type


class PrivilegeHandler:
    def __init__(self, privileges: PrivilegeService, roles: RoleService):
        self.privileges = privileges
        self.roles = roles

    # --- privileges -----------------------------------------------------------------------------

    def grant_privileges(self, privileges):
        _refs(privileges)
        return self.privileges.grant(privileges)

    def revoke_privileges(self, privileges):
        _refs(privileges)
        return self.privileges.revoke(privileges)

    def refresh_privileges(self, objToRefresh, authorizer, grantRequest):
        _ref(objToRefresh)
        _refs(grantRequest.privileges if grantRequest is not None else None)
        return GrantRevokePrivilegeResponse(success=self.privileges.refresh(
            objToRefresh, authorizer, grantRequest.privileges if grantRequest is not None else None))

    def grant_revoke_privileges(self, request):
        kind = _kind(getattr(request, "requestType", None))
        _refs(request.privileges)
        if kind == GrantRevokeType.GRANT:
            done = self.privileges.grant(request.privileges)
        else:
            done = self.privileges.revoke(request.privileges, grant_option_only=bool(request.revokeGrantOption))
        return GrantRevokePrivilegeResponse(success=done)

    def list_privileges(self, principal_name, principal_type, hiveObject):
        return self.privileges.list_grants(principal_name, principal_type, _ref(hiveObject))

    def get_privilege_set(self, hiveObject, user_name, group_names):
        return self.privileges.privilege_set(_ref(hiveObject) or HiveObjectRef(), user_name, group_names)

    # --- roles ----------------------------------------------------------------------------------

    def create_role(self, role):
        return self.roles.create(role)

    def drop_role(self, role_name):
        return self.roles.drop(role_name)

    def get_role_names(self):
        return self.roles.names()

    def grant_role(self, role_name, principal_name, principal_type, grantor, grantorType, grant_option):
        return self.roles.grant(role_name, principal_name, principal_type, grantor, grantorType, grant_option)

    def revoke_role(self, role_name, principal_name, principal_type):
        return self.roles.revoke(role_name, principal_name, principal_type)

    def grant_revoke_role(self, request):
        r = request
        if _kind(getattr(r, "requestType", None)) == GrantRevokeType.GRANT:
            done = self.roles.grant(r.roleName, r.principalName, r.principalType, r.grantor, r.grantorType,
                                    bool(r.grantOption))
        else:
            done = self.roles.revoke(r.roleName, r.principalName, r.principalType, bool(r.grantOption))
        return GrantRevokeRoleResponse(success=done)

    def list_roles(self, principal_name, principal_type):
        return self.roles.roles_of_principal(principal_name, principal_type)

    def get_principals_in_role(self, request):
        return GetPrincipalsInRoleResponse(principalGrants=self.roles.principals_in(request.roleName))

    def get_role_grants_for_principal(self, request):
        return GetRoleGrantsForPrincipalResponse(
            principalGrants=self.roles.grants_of_principal(request.principal_name, request.principal_type))
