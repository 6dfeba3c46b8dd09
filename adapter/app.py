"""Wiring: the Thrift handlers over the store's services (built by `store.services`), behind one router."""

from __future__ import annotations

from adapter.authorization import AuthorizationSettings
from adapter.handlers.constraints import ConstraintHandler
from adapter.handlers.databases import DatabaseHandler
from adapter.handlers.delegation_tokens import DelegationTokenHandler
from adapter.handlers.functions import FunctionHandler
from adapter.handlers.hudi import HudiHandler
from adapter.handlers.locks import LockHandler
from adapter.handlers.metaserver import MetaserverHandler
from adapter.handlers.notifications import NotificationHandler
from adapter.handlers.partition_events import PartitionEventHandler
from adapter.handlers.partitions import PartitionHandler
from adapter.handlers.privileges import PrivilegeHandler
from adapter.handlers.service import ServiceHandler
from adapter.handlers.statistics import StatisticsHandler
from adapter.handlers.tables import TableHandler
from adapter.readiness import Readiness
from adapter.router import HandlerRouter
from store.services import Services


def build_router(services: Services, readiness: Readiness | None = None,
                 authorization: AuthorizationSettings | None = None) -> HandlerRouter:
    """`authorization`: None or disabled settings serve every caller (adapter/authorization.py)."""
    s = services
    authorizer = authorization.authorizer(s.access) if authorization is not None else None
    router = HandlerRouter(
        NotificationHandler(s.notifications, s.client_events),
        ServiceHandler(s.info, s.tables.warehouse_uri, readiness or Readiness(s.store)),
        DatabaseHandler(s.tables),
        TableHandler(s.tables, s.partitions, s.timeline, constraints=s.constraints, table_filter=s.table_filter,
                     hudi_sync=s.hudi_sync),
        PartitionHandler(s.partitions, s.tables, s.hudi_partitions, hudi_sync=s.hudi_sync),
        StatisticsHandler(s.statistics, aggregates=s.aggregate_stats),
        LockHandler(s.locks, open_txn_list=s.open_txns, write_ids=s.write_ids, compactions=s.compactions),
        FunctionHandler(s.functions),
        HudiHandler(s.timeline, s.snapshot, s.mirror, s.pruning, s.hudi_sync, s.locks),
        MetaserverHandler(s.tables, s.timeline),
        ConstraintHandler(s.constraints),
        PrivilegeHandler(s.privileges, s.roles),
        PartitionEventHandler(s.partition_events),
        DelegationTokenHandler(s.delegation_tokens),
        authorizer=authorizer,
    )
    router.delegation_tokens = s.delegation_tokens  # the transport checks DIGEST-MD5 logins against it
    return router
