"""Hudi extension calls (thrift_idl/hudi_metastore.thrift): the RFC-36 timeline and snapshot services.

Converts between the Thrift structs and the store's dataclasses; the store's errors become Thrift
exceptions in `adapter/errors.py`, as for every other call.

Metrics recorded here: ``hudi_commits`` and ``hudi_commit_seconds`` (complete_instant). The snapshot
service counts its own lookups; the storage mirror records ``hudi_snapshot_sync_seconds`` and the lag.
"""

from __future__ import annotations

import logging
import time
from contextlib import nullcontext

from adapter import identity
from adapter.handlers.column_stats_thrift import file_column_stats
from client import (
    config_from_thrift,
    config_to_thrift,
    file_from_thrift,
    file_to_thrift,
    instant_to_thrift,
    slice_to_thrift,
)
from client import optional as _opt
from hudi_format.record_key_codec import decode_keys
from store import metrics
from store.hms.txn import LockManager
from store.hudi.data_skipping import ColumnPruning
from store.hudi.record_index import FileGroupKeys as IndexKeys
from store.hudi.rfc15_table_view import table_stats
from store.hudi.snapshot import SnapshotService
from store.hudi.storage_mirror import StorageMirror
from store.hudi.timeline import (
    DEFAULT_HEARTBEAT_TIMEOUT_S,
    StoredInstant,
    Target,
    TimelineCatchUp,
    TimelineImport,
    TimelineService,
)
from thrift_idl.hive_metastore.ttypes import (
    InvalidObjectException,
    InvalidOperationException,
)
from thrift_idl.hudi_metastore.ttypes import (
    BaseFileColumns,
    CommitResult,
    HudiTableStats,
    ImportResult,
    InstantState,
    PrunedFileSlices,
    RecordKeyLocations,
    RollbackResult,
)

log = logging.getLogger(__name__)

COMMIT_LOCK_WAIT_S = 30.0  # how long a tracked table's commit waits for Hudi's writers' table lock

# --------------------------------------------------------------------------- conversions


def _state_name(state) -> str:
    name = InstantState._VALUES_TO_NAMES.get(state)
    if name is None:
        raise InvalidObjectException(f"Unknown instant state {state!r} (1 REQUESTED, 2 INFLIGHT, 3 COMPLETED)")
    return name


def _index_keys(groups) -> list[IndexKeys]:
    """FileGroupKeys structs with their key blocks decoded (before any transaction begins)."""
    out = []
    for g in groups:
        if g is None or g.partitionPath is None or not g.fileId:
            raise InvalidObjectException("FileGroupKeys needs a partitionPath and a fileId")
        out.append(IndexKeys(partition_path=g.partitionPath, file_id=g.fileId, inserted=decode_keys(g.inserted),
                             updated=decode_keys(g.updated), deleted=decode_keys(g.deleted),
                             instant=_opt(g.instant)))
    return out


# --------------------------------------------------------------------------- handler


class HudiHandler:
    """`mirror`: None when the server has no storage mirror (sync_storage is refused)."""

    def __init__(self, timeline: TimelineService, snapshot: SnapshotService, mirror: StorageMirror | None,
                 pruning: ColumnPruning, hudi_sync: TimelineCatchUp | None = None,
                 locks: LockManager | None = None):
        self._timeline = timeline
        self._snapshot = snapshot
        self._mirror = mirror
        self._pruning = pruning
        self._sync = hudi_sync  # tracked tables: statistics and keys of caught-up files read after the call
        self._locks = locks  # tracked tables: commits take Hudi's lock provider's table lock

    def _settled(self, db: str, tbl: str) -> None:
        """A read of the column statistics or the record index sees every caught-up file's."""
        if self._sync is not None:
            self._sync.settle(db, tbl)

    def _tracked(self, db: str, tbl: str) -> Target | None:
        """db.tbl when Hudi's writers write it (tracked), else None."""
        target = self._sync.target(db, tbl) if self._sync is not None else None
        return target if target is not None and target.own else None

    def _caught_up(self, target: Target | None) -> None:
        """Before a write through the server on a table Hudi's writers write (tracked): the instants
        they completed on storage that no sync told the server of (hive sync off or failed), so
        that the write starts from them and its commit is checked against them, never written over
        them."""
        if target is not None and self._sync is not None:
            self._sync.catch_up(target.db, target.tbl)

    # --- tables -----------------------------------------------------------------------------------

    def register_hudi_table(self, config, columns):
        # the HMS table it creates is the caller's (adapter/identity.py), as every created object
        self._timeline.register_table(config_from_thrift(config), list(columns) if columns else None,
                                      owner=identity.current().user)

    def get_hudi_table(self, dbName, tableName):
        return config_to_thrift(self._timeline.get_table_config(dbName, tableName))

    # --- timeline ---------------------------------------------------------------------------------

    def new_instant_time(self, dbName, tableName):
        return self._timeline.new_instant_time(dbName, tableName)

    def create_instant(self, dbName, tableName, timestamp, action, plan, heartbeatTimeoutSec):
        timeout = heartbeatTimeoutSec if heartbeatTimeoutSec and heartbeatTimeoutSec > 0 \
            else DEFAULT_HEARTBEAT_TIMEOUT_S
        self._caught_up(self._tracked(dbName, tableName))
        return instant_to_thrift(self._timeline.create_instant(
            dbName, tableName, _opt(timestamp), action, plan or None, timeout))

    def transition_to_inflight(self, dbName, tableName, timestamp, action, workloadProfile):
        return instant_to_thrift(self._timeline.transition_to_inflight(
            dbName, tableName, timestamp, action, workloadProfile or None))

    def complete_instant(self, dbName, tableName, timestamp, action, commitMetadata, recordKeys=None,
                         columnStats=None):
        start = time.perf_counter()
        keys = _index_keys(recordKeys) if recordKeys is not None else None
        stats = file_column_stats(columnStats) if columnStats else None
        target = self._tracked(dbName, tableName)
        # a tracked table's commit holds the EXCLUSIVE table lock Hudi's lock provider takes for its
        # own (HiveMetastoreBasedLockProvider): Hudi's commits and this one, its storage mirror
        # included, never interleave, and each sees the other's instant
        with self._locks.table_held(target.db, target.tbl, COMMIT_LOCK_WAIT_S) if target is not None and \
                self._locks is not None else nullcontext():
            self._caught_up(target)
            instant, version = self._timeline.complete_instant(dbName, tableName, timestamp, action,
                                                               commitMetadata or b"", record_keys=keys,
                                                               column_stats=stats)
        metrics.observe("hudi_commit_seconds", time.perf_counter() - start)
        metrics.incr("hudi_commits")
        return CommitResult(instant=instant_to_thrift(instant), tableVersion=version)

    def heartbeat_instant(self, dbName, tableName, timestamp):
        self._timeline.heartbeat(dbName, tableName, timestamp)

    def add_markers(self, dbName, tableName, timestamp, paths):
        self._timeline.add_markers(dbName, tableName, timestamp, list(paths or []))

    def list_instants(self, dbName, tableName, filter):
        f = filter
        states = [_state_name(s) for s in f.states] if f is not None and f.states else None
        instants = self._timeline.list_instants(
            dbName, tableName, states=states,
            actions=list(f.actions) if f is not None and f.actions else None,
            min_ts=_opt(f.minTimestamp) if f is not None else None,
            max_ts=_opt(f.maxTimestamp) if f is not None else None)
        return [instant_to_thrift(i) for i in instants]

    def get_instant_metadata(self, dbName, tableName, timestamp, action, state):
        return bytes(self._timeline.instant_metadata(dbName, tableName, timestamp, action, _state_name(state)))

    def get_failed_instants(self, dbName, tableName):
        return [instant_to_thrift(i) for i in self._timeline.failed_instants(dbName, tableName)]

    def rollback_instant(self, dbName, tableName, timestamp):
        instant, deleted = self._timeline.rollback(dbName, tableName, timestamp)
        return RollbackResult(rollbackInstant=instant_to_thrift(instant), deletedPaths=list(deleted))

    def delete_savepoint(self, dbName, tableName, timestamp):
        return instant_to_thrift(self._timeline.delete_savepoint(dbName, tableName, timestamp))

    # --- snapshot ---------------------------------------------------------------------------------

    def get_hudi_partitions(self, dbName, tableName, filter):
        return list(self._snapshot.partitions(dbName, tableName, _opt(filter)))

    def get_latest_file_slices(self, dbName, tableName, partitions, asOfInstant):
        slices = self._snapshot.latest_file_slices(dbName, tableName, list(partitions) if partitions else None,
                                                   _opt(asOfInstant))
        return [slice_to_thrift(s) for s in slices]

    def prune_file_slices(self, dbName, tableName, predicate, compact=None):
        self._settled(dbName, tableName)
        r = self._pruning.prune(dbName, tableName, predicate or "", compact=bool(compact))
        b = r.base_files
        return PrunedFileSlices(slices=[slice_to_thrift(s) for s in r.slices], filesSkipped=r.files_skipped,
                                partitionsSkipped=r.partitions_skipped, filesConsidered=r.files_considered,
                                baseFiles=None if b is None else BaseFileColumns(
                                    b.partition_paths, b.file_ids, b.base_instants, b.names, b.sizes,
                                    b.commit_times, b.paths))

    def get_files_changed(self, dbName, tableName, since, until):
        return [file_to_thrift(f) for f in self._snapshot.files_changed(dbName, tableName, _opt(since), _opt(until))]

    def get_all_files(self, dbName, tableName, partition):
        return [file_to_thrift(f) for f in self._snapshot.all_files(dbName, tableName, partition or "")]

    def import_hudi_instants(self, dbName, tableName, instants, listedFiles, missingFiles, config):
        stored = []
        for i in instants or []:
            if i is None or not i.timestamp or not i.action:
                raise InvalidObjectException("An imported instant needs a timestamp and an action")
            stored.append(StoredInstant(
                ts=i.timestamp, action=i.action, state=InstantState._NAMES_TO_VALUES[_state_name(i.state)],
                completion_ts=_opt(i.completionTime), requested=i.requestedMetadata,
                inflight=i.inflightMetadata, completed=i.completedMetadata))
        out = TimelineImport(self._timeline).import_instants(
            dbName, tableName, stored, [file_from_thrift(f) for f in listedFiles or []],
            [file_from_thrift(f) for f in missingFiles or []], config_from_thrift(config) if config else None)
        return ImportResult(imported=[instant_to_thrift(i) for i in out.imported], unchanged=out.unchanged,
                            filesAdded=out.files_added, filesRemoved=out.files_removed, tableVersion=out.version,
                            filesResized=out.files_resized)

    # --- record-level index -----------------------------------------------------------------------

    def lookup_record_keys(self, dbName, tableName, keys):
        found = self._timeline.record_index.lookup(dbName, tableName, decode_keys(keys))
        metrics.incr("hudi_record_key_lookups", len(found.instants))
        return RecordKeyLocations(partitionPaths=[p for p, _ in found.groups], fileIds=[f for _, f in found.groups],
                                  fileGroupOfKey=found.group_of_key, instantOfKey=found.instants)

    def load_record_index(self, dbName, tableName, fileGroups, reset, enableIndex):
        self._settled(dbName, tableName)
        n = self._timeline.record_index.load(dbName, tableName, _index_keys(fileGroups or []), bool(reset),
                                             None if enableIndex is None else bool(enableIndex))
        if self._mirror is not None and self._timeline.mirrors_record_index(dbName, tableName):
            try:  # the metadata table's record_index written again from the rows
                self._mirror.sync(dbName, tableName)
            except Exception as exc:  # the load stands; the next commit's mirror step rewrites it
                log.warning("storage mirror of %s.%s after a record index load failed: %s", dbName, tableName, exc)
        return n

    def list_files_without_column_stats(self, dbName, tableName, limit, logFiles=None):
        self._settled(dbName, tableName)
        return self._timeline.files_without_column_stats(dbName, tableName, max(int(limit or 0), 0), bool(logFiles))

    def load_column_stats(self, dbName, tableName, stats):
        return self._timeline.load_column_stats(dbName, tableName, file_column_stats(stats or []))

    def get_hudi_table_stats(self, dbName, tableName):
        self._settled(dbName, tableName)
        st = table_stats(self._timeline, dbName, tableName)
        return HudiTableStats(partitionCount=st.partition_count, fileCount=st.file_count,
                              totalSizeBytes=st.total_size,
                              lastInstant=instant_to_thrift(st.last_instant) if st.last_instant else None,
                              mirrored=st.mirrored, mirrorLagVersions=st.mirror_lag, tableVersion=st.version,
                              recordIndexKeys=st.index_keys)

    def sync_storage(self, dbName, tableName):
        if self._mirror is None:
            raise InvalidOperationException("This server has no storage mirror configured")
        return int(self._mirror.sync(dbName, tableName) or 0)  # the mirror records hudi_snapshot_sync_seconds
