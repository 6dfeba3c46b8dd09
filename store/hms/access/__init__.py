"""Who may do what: privileges (`PrivilegeService`, privileges.py), roles (`RoleService`,
roles.py; `ADMIN` and `PUBLIC` are built in), what an authorization decision needs to know
(`AccessFacts`, `Principals`, `Target`: access_facts.py; adapter/authorization.py decides) and
Hive delegation tokens in Hadoop's wire form (`DelegationTokens`, delegation_tokens.py).

The door of store/hms/access: other packages import these names from here, never its modules.
Imports store/hms's `common`, `catalog` and `partitions`.
"""

from store.hms.access.access_facts import AccessFacts, Principals, Target
from store.hms.access.delegation_tokens import (
    DelegationTokens,
    TokenIdentifier,
    TokenRefused,
    decode_token,
    encode_token,
)
from store.hms.access.privileges import PrivilegeService
from store.hms.access.roles import ADMIN, PUBLIC, RoleService

__all__ = ["ADMIN", "PUBLIC", "AccessFacts", "DelegationTokens", "Principals", "PrivilegeService", "RoleService",
           "Target", "TokenIdentifier", "TokenRefused", "decode_token", "encode_token"]
