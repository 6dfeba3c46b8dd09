"""The composition root: every service of the store built from one database URL. `serve`, the CLI
commands that work on the database and the tests build their services here and nowhere else."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from store.db.database import Store, now_ms
from store.db.statement_timeout import DEFAULT_STATEMENT_TIMEOUT_S
from store.hms.access import AccessFacts, DelegationTokens, PrivilegeService, RoleService
from store.hms.catalog import TableNamesByFilter, TableService
from store.hms.common import MetastoreInfo, column_widths
from store.hms.constraints import ConstraintService
from store.hms.functions import FunctionService
from store.hms.notification_log import DEFAULT_TTL_S, ClientEvents, NotificationLog
from store.hms.partitions import PartitionEvents, PartitionService
from store.hms.stats import AggregateStats, StatisticsService
from store.hms.txn import Compactions, LockManager, OpenTxnList, WriteIds
from store.hudi.data_skipping import ColumnPruning
from store.hudi.snapshot import CleanService, HudiPartitionRules, SnapshotService, locate_slices
from store.hudi.storage_mirror import StorageMirror
from store.hudi.timeline import SyncWatcher, TimelineCatchUp, TimelineService
from store.storage import warehouse
from store.storage.boundary import StorageBoundary

DEFAULT_LOCK_TIMEOUT_MS = 300_000


@dataclass
class Services:
    """The RFC-36 services over one store (Hive Metastore and Hudi), wired to each other."""

    store: Store
    info: MetastoreInfo
    tables: TableService
    partitions: PartitionService
    statistics: StatisticsService
    locks: LockManager
    functions: FunctionService
    timeline: TimelineService
    snapshot: SnapshotService
    clean: CleanService
    pruning: ColumnPruning
    hudi_partitions: HudiPartitionRules
    notifications: NotificationLog
    client_events: ClientEvents
    constraints: ConstraintService
    table_filter: TableNamesByFilter
    privileges: PrivilegeService
    roles: RoleService
    delegation_tokens: DelegationTokens
    access: AccessFacts
    partition_events: PartitionEvents
    aggregate_stats: AggregateStats
    open_txns: OpenTxnList
    write_ids: WriteIds
    compactions: Compactions
    hudi_sync: TimelineCatchUp | None = None
    mirror: StorageMirror | None = None
    watcher: SyncWatcher | None = None

    def close(self) -> None:
        """Stop the background threads (mirror, watcher, notification log cleaner) and release the
        database connections."""
        if self.mirror is not None:
            self.mirror.stop()
        if self.watcher is not None:
            self.watcher.stop()
        if self.hudi_sync is not None:
            self.hudi_sync.stop()
        self.notifications.stop()
        self.store.dispose()


def build_services(store: Store, lock_timeout_ms: int = DEFAULT_LOCK_TIMEOUT_MS, mirror: bool = False,
                   mirror_interval_s: float | None = None, clock_ms: Callable[[], int] = now_ms,
                   notification_ttl_s: int = DEFAULT_TTL_S,
                   notification_clean_interval_s: float | None = None,
                   storage_roots: Sequence[str] | None = (), external_locations: Sequence[str] = (),
                   watch_interval_s: float | None = None) -> Services:
    """Services over `store`. With `mirror`, each completed Hudi instant is mirrored to storage right
    away, and with `mirror_interval_s` failed mirrors are retried in the background. `clock_ms` is
    the timeline's clock (instant times, heartbeats). Notification events older than
    `notification_ttl_s` are deleted every `notification_clean_interval_s` seconds in the background
    (None: by nobody; `serve` sets it). The server deletes and moves directories only under the
    warehouse, `storage_roots` and the directories it made (store/storage/boundary.py); None (an
    admin's command run with the admin's own access to storage) confines Hudi table files to nothing.
    With authorization on, callers who are no admin may name locations outside the warehouse only
    under `external_locations` (store/storage/owner_index.py). With `watch_interval_s`, Hudi tables
    tracked from storage (store/hudi/timeline/catch_up.py) are caught up in the background."""
    column_widths.enforce(store.engine)
    warehouse.allow_scheme(store.warehouse)
    notifications = NotificationLog(store, ttl_s=notification_ttl_s)
    boundary = StorageBoundary(store, storage_roots or (), confined=storage_roots is not None,
                               external_locations=external_locations)
    tables = TableService(store, notifications, boundary)
    partitions = PartitionService(store, tables)
    timeline = TimelineService(store, tables, partitions, boundary, clock_ms=clock_ms)
    snapshot = SnapshotService(store, timeline, partitions)
    clean = CleanService(store, timeline, snapshot, boundary)
    locks = LockManager(store, timeout_ms=lock_timeout_ms)
    open_txns = OpenTxnList(store, lock_timeout_ms)
    services = Services(
        store=store, info=MetastoreInfo(store), tables=tables, partitions=partitions,
        statistics=StatisticsService(store, partitions, derived=timeline.statistics),
        locks=locks,
        functions=FunctionService(store, tables), timeline=timeline, snapshot=snapshot, clean=clean,
        pruning=ColumnPruning(store, timeline, snapshot),
        hudi_partitions=HudiPartitionRules(partitions, clean), notifications=notifications,
        client_events=ClientEvents(notifications, tables, partitions),
        constraints=ConstraintService(store, tables), table_filter=TableNamesByFilter(store),
        privileges=PrivilegeService(store), roles=RoleService(store), access=AccessFacts(store),
        delegation_tokens=DelegationTokens(store),
        partition_events=PartitionEvents(store),
        aggregate_stats=AggregateStats(store, derived=timeline.statistics),
        open_txns=open_txns, write_ids=WriteIds(locks, open_txns), compactions=Compactions(locks),
        hudi_sync=TimelineCatchUp(timeline, latest_slices=lambda conn, ref, parts: _located(
            snapshot.latest_in(conn, ref.tbl_id, parts), ref)))
    if notification_clean_interval_s:
        notifications.start_cleaner(notification_clean_interval_s)
    if watch_interval_s:
        assert services.hudi_sync is not None
        services.watcher = SyncWatcher(services.hudi_sync)
        services.watcher.start(watch_interval_s)
    if mirror:
        services.mirror = StorageMirror(store, timeline, boundary=boundary, table_lock=locks.table_held)
        timeline.on_commit.append(services.mirror.hook)
        if mirror_interval_s:
            services.mirror.start_background(mirror_interval_s)
    # the server's own cleaning, after the mirror wrote the commit: a reader of storage never finds
    # the table's latest slices there gone
    timeline.on_commit.append(clean.after_commit)
    return services


def _located(slices, ref):
    """Slices with their files' paths (the table's storage strategy)."""
    locate_slices(ref, slices)
    return slices


def open_services(db_url: str, warehouse: str = "./warehouse",
                  statement_timeout_s: float | None = DEFAULT_STATEMENT_TIMEOUT_S, **options) -> Services:
    """`build_services` over a new store on `db_url` (see `build_services` for the options) whose
    statements may run at most `statement_timeout_s` seconds each (None or 0: no limit)."""
    return build_services(Store(db_url, warehouse, statement_timeout_s=statement_timeout_s), **options)
