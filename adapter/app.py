"""Wiring: the Thrift handlers over the store's services (built by `store.services`), behind one router."""

from __future__ import annotations

from adapter.handlers.databases import DatabaseHandler
from adapter.handlers.functions import FunctionHandler
from adapter.handlers.hudi import HudiHandler
from adapter.handlers.locks import LockHandler
from adapter.handlers.notifications import NotificationHandler
from adapter.handlers.partitions import PartitionHandler
from adapter.handlers.service import ServiceHandler
from adapter.handlers.statistics import StatisticsHandler
from adapter.handlers.tables import TableHandler
from adapter.router import HandlerRouter
from store.services import Services


def build_router(services: Services) -> HandlerRouter:
    s = services
    return HandlerRouter(
        NotificationHandler(s.notifications, s.client_events),
        ServiceHandler(s.info, s.tables.warehouse_uri),
        DatabaseHandler(s.tables),
        TableHandler(s.tables, s.partitions, s.timeline),
        PartitionHandler(s.partitions, s.hudi_partitions),
        StatisticsHandler(s.statistics),
        LockHandler(s.locks),
        FunctionHandler(s.functions),
        HudiHandler(s.timeline, s.snapshot, s.mirror),
    )
