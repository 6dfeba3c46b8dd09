"""RFC-36 timeline service: the one entry point to a Hudi table's timeline for the handlers, the
table services and the storage mirror. Each call is answered by the part that implements it:

* ../tables.py        registration of Hudi tables, adoption of HMS tables with Hudi properties
* instant_times.py    instant times (`tbl_timestamp`, compare-and-set)
* instants.py         REQUESTED -> INFLIGHT, heartbeats, markers, each state's metadata
* service_plans.py    compaction and clustering plans waiting for an executor: claims, and the
                      rollback of those that can no longer run
* commit.py           completing an instant: one transaction (conflict check, file listing, HMS
                      partitions, table version), then the post-commit hooks
* rollback.py         rolling back a failed instant
* savepoints.py       savepoints (what they hold) and restores to them
* ../file_listing.py  the `files` table and table versions, as instants change them
* partition_sync.py   HMS partitions following commits
* ../record_index/    the record-level index (RFC-08), changed by commits in their transaction
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

from sqlalchemy import Connection

from hudi_format.instant import Instant
from hudi_format.table_config import HudiTableConfig
from store.db.database import Store, now_ms
from store.hms.catalog import TableService
from store.hms.partitions import PartitionService
from store.hudi.column_stats import FileColumnStats
from store.hudi.file_listing import FileListing
from store.hudi.hive_table_statistics import HiveTableStatistics
from store.hudi.metadata_table import mark_column_stats_rebuild
from store.hudi.record_index import FileGroupKeys, RecordIndex, mirrors_record_index
from store.hudi.table_files import TableFiles
from store.hudi.tables import HudiTableRef, HudiTables
from store.hudi.timeline.commit import InstantCompletion, PostCommitHook, run_post_commit_hooks
from store.hudi.timeline.instant_times import InstantTimes
from store.hudi.timeline.instants import SERVICES, Instants, instant_from_row
from store.hudi.timeline.partition_sync import PartitionSync
from store.hudi.timeline.rollback import Rollbacks
from store.hudi.timeline.savepoints import RestoreOutcome, delete_savepoint
from store.hudi.timeline.service_plans import PlanRolledBack, ServicePlans
from thrift_idl.hive_metastore.ttypes import FieldSchema, Table


class TimelineService:
    def __init__(self, store: Store, tables: TableService, partitions: PartitionService, files: TableFiles,
                 clock_ms: Callable[[], int] = now_ms):
        """`files`: what the server may do to table files on storage (its storage boundary)."""
        self.store = store
        self.clock_ms = clock_ms
        self._hooks: list[PostCommitHook] = []
        self.hudi_tables = HudiTables(store, tables)
        self.times = InstantTimes(clock_ms)
        self.instants = Instants(store, self.hudi_tables, self.times, clock_ms)
        self.listing = FileListing(clock_ms)
        self.partition_sync = PartitionSync(tables, partitions)
        self.record_index = RecordIndex(store, self.hudi_tables)
        self.statistics = HiveTableStatistics(self.hudi_tables, tables, partitions)
        self.plans = ServicePlans(store, self.hudi_tables, self.instants, self.times, self.listing)
        self.completion = InstantCompletion(store, self.hudi_tables, self.instants, self.times, self.listing,
                                            self.partition_sync, self.record_index, self._hooks,
                                            self.statistics, files=files, plans=self.plans)
        self.rollbacks = Rollbacks(store, self.hudi_tables, self.instants, self.times, self.listing,
                                   self._hooks, files)

    @property
    def on_commit(self) -> list[PostCommitHook]:
        """Called with (db, tbl) after an instant completed or was rolled back (the storage mirror)."""
        return self._hooks

    # --- tables -------------------------------------------------------------------------------------

    def table_ref(self, conn: Connection, db: str, tbl: str, lock: bool = False) -> HudiTableRef:
        return self.hudi_tables.table_ref(conn, db, tbl, lock)

    def mirrors_record_index(self, db: str, tbl: str) -> bool:
        """The storage mirror writes the table's record index into its metadata table."""
        with self.store.read() as conn:
            return mirrors_record_index(self.table_ref(conn, db, tbl))

    def get_table_config(self, db: str, tbl: str) -> HudiTableConfig:
        return self.hudi_tables.get_table_config(db, tbl)

    def register_table(self, cfg: HudiTableConfig, columns: list[FieldSchema] | None = None,
                       owner: str | None = None) -> None:
        self.hudi_tables.register_table(cfg, columns, owner)

    def adopt_hms_table(self, table: Table) -> bool:
        return self.hudi_tables.adopt_hms_table(table)

    # --- instants -----------------------------------------------------------------------------------

    def new_instant_time(self, db: str, tbl: str) -> str:
        return self.instants.new_instant_time(db, tbl)

    def create_instant(self, db: str, tbl: str, ts: str | None, action: str, plan: bytes | None,
                       heartbeat_timeout_s: int = 0) -> Instant:
        return self.instants.create_instant(db, tbl, ts, action, plan, heartbeat_timeout_s)

    def transition_to_inflight(self, db: str, tbl: str, ts: str, action: str, profile: bytes | None) -> Instant:
        if action not in SERVICES:
            return self.instants.transition_to_inflight(db, tbl, ts, action, profile)
        try:  # an executor's claim of a compaction or clustering
            return self.plans.claim(db, tbl, ts, action, profile)
        except PlanRolledBack:  # its plan could no longer run: rolled back (the mirror follows)
            run_post_commit_hooks(self._hooks, db, tbl)
            raise

    def heartbeat(self, db: str, tbl: str, ts: str) -> None:
        self.instants.heartbeat(db, tbl, ts)

    def add_markers(self, db: str, tbl: str, ts: str, paths: list[str]) -> None:
        self.instants.add_markers(db, tbl, ts, paths)

    def list_instants(self, db: str, tbl: str, states: Iterable[str | int] | None = None,
                      actions: Iterable[str] | None = None, min_ts: str | None = None,
                      max_ts: str | None = None) -> list[Instant]:
        return self.instants.list_instants(db, tbl, states, actions, min_ts, max_ts)

    def instant_metadata(self, db: str, tbl: str, ts: str, action: str, state: str | int) -> bytes:
        return self.instants.instant_metadata(db, tbl, ts, action, state)

    def failed_instants(self, db: str, tbl: str) -> list[Instant]:
        return self.instants.failed_instants(db, tbl)

    # --- completion and rollback ----------------------------------------------------------------

    def complete_instant(self, db: str, tbl: str, ts: str, action: str, metadata: bytes,
                         drop_partitions: list[str] | None = None,
                         record_keys: list[FileGroupKeys] | None = None,
                         column_stats: list[FileColumnStats] | None = None) -> tuple[Instant, int]:
        return self.completion.complete_instant(db, tbl, ts, action, metadata, drop_partitions, record_keys,
                                                column_stats)

    def rollback(self, db: str, tbl: str, ts: str, force: bool = False) -> tuple[Instant, list[str]]:
        return self.rollbacks.rollback(db, tbl, ts, force)

    # --- savepoints and restores (savepoints.py; restores complete through complete_instant) --------

    def delete_savepoint(self, db: str, tbl: str, ts: str) -> Instant:
        """Remove savepoint `ts` (Hudi's deleteSavepoint): the file slices it held may be cleaned."""
        def tx(conn: Connection) -> Instant:
            ref = self.table_ref(conn, db, tbl, lock=True)
            return instant_from_row(delete_savepoint(conn, ref, ts, self.clock_ms()))

        instant = self.store.run_write(tx)
        run_post_commit_hooks(self._hooks, db, tbl)
        return instant

    def apply_savepoint(self, conn: Connection, ref: HudiTableRef, ts: str, metadata: bytes) -> bytes:
        """A savepoint instant completed elsewhere (read from storage), in the caller's transaction:
        its metadata (the server's listing when empty; readable, else InvalidObject). The caller
        stores the instant; cleans then keep what the metadata lists."""
        return self.completion.savepoints.apply_savepoint(conn, ref, ts, metadata, check=False)

    def apply_restore(self, conn: Connection, ref: HudiTableRef, ts: str, target: str, metadata: bytes,
                      rolled: list[str] | None = None,
                      record_keys: list[FileGroupKeys] | None = None, reindex: bool = False) -> RestoreOutcome:
        """A restore instant `ts` to savepoint `target` completed elsewhere (read from storage), in the
        caller's transaction: the instants it rolled back (`rolled`, as its metadata names them)
        leave the listing and the timeline, partitions, statistics, record index and events follow
        (never refused for its target: a fact). The caller stores the restore instant and deletes no
        files (its writer did); `target`: the plan's `hudi_format.commit_metadata.restore_target`.
        `reindex`: the record index's keys of the groups changed (RestoreOutcome.groups) are the
        caller's to reload (from storage), instead of `record_keys`."""
        return self.completion.savepoints.apply_restore(conn, ref, ts, target, metadata, record_keys, rolled,
                                                        reindex)

    # --- column statistics adoption (import-hudi) ------------------------------------------------------

    def files_without_column_stats(self, db: str, tbl: str, limit: int = 0, logs: bool = False) -> list[str]:
        with self.store.read() as conn:
            return self.completion.column_stats.files_without_stats(conn, self.table_ref(conn, db, tbl), limit, logs)

    def load_column_stats(self, db: str, tbl: str, stats: list[FileColumnStats]) -> int:
        """Statistics of live files (adoption), with the aggregates and Hive statistics, in one
        transaction; the number of files stored."""
        def tx(conn: Connection) -> int:
            ref = self.table_ref(conn, db, tbl, lock=True)
            stored: list[int] = []
            n = self.completion.column_stats.record_existing(conn, ref, stats, stored)
            self.statistics.publish(conn, ref, sorted({s.partition_path for s in stats}))
            mark_column_stats_rebuild(conn, ref, self.clock_ms(), stored)  # for the mirrored metadata table
            return n

        return self.store.run_write(tx)
