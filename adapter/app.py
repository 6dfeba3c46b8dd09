"""Wiring: a store, the RFC-36 services over it, and the Thrift handlers over those."""

from __future__ import annotations

from adapter.handlers.databases import DatabaseHandler
from adapter.handlers.functions import FunctionHandler
from adapter.handlers.locks import LockHandler
from adapter.handlers.partitions import PartitionHandler
from adapter.handlers.service import ServiceHandler
from adapter.handlers.statistics import StatisticsHandler
from adapter.handlers.tables import TableHandler
from adapter.router import HandlerRouter
from store.functions import FunctionService
from store.locks import LockManager
from store.partition_service import PartitionService
from store.statistics import StatisticsService
from store.store import Store
from store.table_service import TableService


def build_router(store: Store, lock_timeout_ms: int = 300_000) -> HandlerRouter:
    tables = TableService(store)
    partitions = PartitionService(store, tables)
    return HandlerRouter(
        ServiceHandler(store, tables.warehouse_uri),
        DatabaseHandler(tables),
        TableHandler(tables, partitions),
        PartitionHandler(partitions),
        StatisticsHandler(StatisticsService(store, partitions)),
        LockHandler(LockManager(store, timeout_ms=lock_timeout_ms)),
        FunctionHandler(FunctionService(store, tables)),
    )
