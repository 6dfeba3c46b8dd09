"""Wiring: a store, the RFC-36 services over it, and the Thrift handlers over those."""

from __future__ import annotations

import logging

from adapter.handlers.databases import DatabaseHandler
from adapter.handlers.functions import FunctionHandler
from adapter.handlers.locks import LockHandler
from adapter.handlers.partitions import PartitionHandler
from adapter.handlers.service import ServiceHandler
from adapter.handlers.statistics import StatisticsHandler
from adapter.handlers.tables import TableHandler
from adapter.router import HandlerRouter
from store.db.database import Store
from store.hms.functions import FunctionService
from store.hms.locks import LockManager
from store.hms.partition_service import PartitionService
from store.hms.statistics import StatisticsService
from store.hms.table_service import TableService

log = logging.getLogger("hudi_metastore.app")
_HUDI_STORE_MODULES = ("store.hudi.timeline_service", "store.hudi.snapshot_service", "hudi_format.table_config",
                       "hudi_format.file_slice", "hudi_format.commit_metadata")


def build_router(store: Store, lock_timeout_ms: int = 300_000, mirror_factory=None) -> HandlerRouter:
    """`mirror_factory(store, timeline)` (optional) makes the storage mirror behind `sync_storage`;
    its `hook(db, tbl)`, if it has one, runs after every completed instant."""
    tables = TableService(store)
    partitions = PartitionService(store, tables)
    hudi, rules = _hudi_handler(store, tables, partitions, mirror_factory)
    timeline = rules.timeline if rules is not None else None
    return HandlerRouter(
        ServiceHandler(store, tables.warehouse_uri),
        DatabaseHandler(tables),
        TableHandler(tables, partitions, timeline),
        PartitionHandler(partitions, rules),
        StatisticsHandler(StatisticsService(store, partitions)),
        LockHandler(LockManager(store, timeout_ms=lock_timeout_ms)),
        FunctionHandler(FunctionService(store, tables)),
        *([hudi] if hudi is not None else []),
    )


def _hudi_handler(store: Store, tables: TableService, partitions: PartitionService, mirror_factory=None):
    """The Hudi extension (timeline and snapshot services); without those store modules the server
    serves the HMS API alone and the extension calls answer "Invalid method name"."""
    try:
        from store.hudi.snapshot_service import SnapshotService
        from store.hudi.timeline_service import TimelineService
    except ModuleNotFoundError as exc:
        if exc.name not in _HUDI_STORE_MODULES:
            raise
        log.warning("Hudi extension disabled: %s", exc)
        return None, None
    from adapter.handlers.hudi import HudiHandler

    timeline = TimelineService(store, tables, partitions)
    mirror = mirror_factory(store, timeline) if mirror_factory is not None else None
    if mirror is not None and hasattr(mirror, "hook"):
        timeline.on_commit.append(mirror.hook)
    from store.hudi.clean_service import CleanService
    from store.hudi.partition_rules import HudiPartitionRules

    snapshot = SnapshotService(store, timeline, partitions)
    rules = HudiPartitionRules(partitions, CleanService(store, timeline, snapshot))
    return HudiHandler(timeline, snapshot, mirror), rules
