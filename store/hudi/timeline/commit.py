"""Completing an instant (RFC-36 commit): one database transaction in which the instant becomes
COMPLETED with its metadata, the file listing takes the instant's changes (after the optimistic
concurrency check of write instants), the table's HMS partitions follow, and the table gets a new
version. Either all of it happens or none. Post-commit hooks (the storage mirror) run afterwards
and never undo a commit.
"""

from __future__ import annotations

import gc
import logging
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass

from sqlalchemy import Connection, Row, delete, or_, select, update

from hudi_format.commit_metadata import (
    WRITE_ACTIONS,
    CommitMetadata,
    parse_clean,
    parse_commit,
    parse_rollback,
)
from hudi_format.instant import COMPLETED, COMPLETED_AS, INFLIGHT, STATE_NAMES, Instant
from store.db import schema as S
from store.db.database import Store
from store.errors import CommitConflict, InvalidOperation
from store.hudi.column_stats import ColumnStats, FileColumnStats, Seen, plain_change
from store.hudi.file_listing import FileListing, add_version, written_files
from store.hudi.hive_table_statistics import HiveTableStatistics
from store.hudi.record_index import FileGroupKeys, RecordIndex
from store.hudi.table_files import TableFiles
from store.hudi.tables import HudiTableRef, HudiTables
from store.hudi.timeline import clustering_schedule, compaction_schedule, log_compaction_schedule
from store.hudi.timeline.instant_times import InstantTimes
from store.hudi.timeline.instants import Instants, put_meta
from store.hudi.timeline.partition_sync import PartitionSync
from store.hudi.timeline.savepoints import (
    RESTORE,
    SAVEPOINT,
    SavepointsAndRestores,
    check_not_held,
    restore_target_of,
)
from store.hudi.timeline.service_plans import Group, ServicePlans

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Completed:
    """What a completion has just stored, so that post-commit work need not read it back."""
    ts: str
    action: str  # as completed (commit, deltacommit, ...)
    metadata: bytes
    partitions: frozenset[str] | None  # the partitions a write action wrote or replaced in
    table: HudiTableRef | None = None  # the table as the completion read it (its config)


# a plain write's change of its groups' latest files: (the table's version before it, group -> rows)
Kept = tuple[int, dict[tuple[str, str], tuple]]

# (db, table, the completed instant or None) after an instant completed or a rollback
PostCommitHook = Callable[[str, str, "Completed | None"], None]


def run_post_commit_hooks(hooks: list[PostCommitHook], db: str, tbl: str, done: Completed | None = None) -> None:
    for hook in hooks:
        try:
            hook(db, tbl, done)
        except Exception:  # a hook's failure (the mirror retries later) never undoes a commit
            log.exception("post-commit hook failed for %s.%s", db, tbl)


class InstantCompletion:
    def __init__(self, store: Store, tables: HudiTables, instants: Instants, times: InstantTimes,
                 listing: FileListing, partition_sync: PartitionSync, record_index: RecordIndex,
                 hooks: list[PostCommitHook], statistics: HiveTableStatistics,
                 column_stats: ColumnStats | None = None, files: TableFiles | None = None,
                 plans: ServicePlans | None = None):
        """`files`: the storage boundary (a restore deletes the files of the instants it rolls back);
        `plans`: waiting service plans a commit makes stale are rolled back in its transaction."""
        self.store = store
        self.tables = tables
        self.instants = instants
        self.times = times
        self.clock_ms = times.clock_ms
        self.listing = listing
        self.partition_sync = partition_sync
        self.record_index = record_index
        self.hooks = hooks
        self.column_stats = column_stats or ColumnStats()
        self.statistics = statistics
        self.files = files
        self.plans = plans
        self.savepoints = SavepointsAndRestores(listing, partition_sync, record_index, self.column_stats,
                                                statistics, self.clock_ms)

    def complete_instant(self, db: str, tbl: str, ts: str, action: str, metadata: bytes,
                         drop_partitions: list[str] | None = None,
                         record_keys: list[FileGroupKeys] | None = None,
                         column_stats: list[FileColumnStats] | None = None) -> tuple[Instant, int]:
        """Complete an inflight instant: (the instant, the table's new version). `drop_partitions`
        (partition paths) also removes those HMS partitions in the same transaction (a partition
        drop's replacecommit); `record_keys` are the record index changes of a write commit,
        `column_stats` the statistics of the base files it wrote. An
        instant that loses a conflict is expired (to be rolled back)."""
        try:
            with _collector_paused():
                instant, version, partitions, metadata, gone, ref, kept = self.store.run_write(
                    self._complete_in, db, tbl, ts, action, metadata, drop_partitions, record_keys,
                    column_stats or [])
        except CommitConflict:
            self.instants.expire(db, tbl, ts)
            raise
        if kept is not None:  # committed: the groups' latest files as of the new version
            self.column_stats.latest.advance(ref.tbl_id, kept[0], version, kept[1])
        else:
            self.column_stats.latest.forget(ref.tbl_id)
        self.store.note_changes(len(column_stats or []))  # bulk statistics rows: keep plans current
        self.store.note_changes(sum(len(k.inserted or ()) + len(k.deleted or ()) for k in record_keys or ()),
                                "record_index")
        if gone is not None and gone[1] and self.files is not None:  # a restore's rolled-back files
            self.files.delete_files(gone[0], gone[1], "delete restored-away files under", gone[2])
        run_post_commit_hooks(self.hooks, db, tbl, Completed(ts, instant.action, metadata, partitions, ref))
        return instant, version

    def _complete_in(self, conn: Connection, db: str, tbl: str, ts: str, action: str, metadata: bytes,
                     drop_partitions: list[str] | None,
                     record_keys: list[FileGroupKeys] | None,
                     column_stats: list[FileColumnStats]
                     ) -> tuple[Instant, int, frozenset[str] | None, bytes, tuple[str, list[str], int] | None,
                                HudiTableRef, Kept | None]:
        """(instant, table version, partitions written, metadata stored, for a restore (base path,
        files to delete, table id), the table, a plain write's change of its groups' latest files
        (the version before it, the groups' new rows: column_stats/latest_files.py))."""
        ref = self.tables.table_ref(conn, db, tbl, lock=True)  # completions of one table are serialized
        row = self.instants.row(conn, ref.tbl_id, ts, action, lock=True)
        if row.state != INFLIGHT:
            raise InvalidOperation(
                f"Cannot complete instant {ts}.{row.action}: it is {STATE_NAMES[row.state]}, not INFLIGHT")
        done_action = COMPLETED_AS.get(row.action, row.action)
        completion_ts = self.times.advance(conn, ref.tbl_id)
        gone = None
        kept: Kept | None = None
        touched: set[Group] | None = set()  # file groups changed (None: any may have)
        if done_action == SAVEPOINT:
            partitions, metadata = None, self.savepoints.apply_savepoint(conn, ref, ts, metadata)
        elif done_action == RESTORE:
            outcome = self.savepoints.apply_restore(conn, ref, ts, restore_target_of(conn, ref.tbl_id, ts), metadata,
                                                    record_keys)
            partitions, metadata, touched = None, outcome.metadata, None
            gone = (ref.base_path, outcome.paths, ref.tbl_id)
        else:
            partitions, touched, kept = self._apply(conn, ref, row, done_action, metadata, record_keys,
                                                    column_stats)
        drops = drop_partitions if drop_partitions is not None else _dropped_partitions(done_action, metadata)
        if drops:
            self.partition_sync.drop_partitions(conn, ref, drops)
        conn.execute(update(S.instant).where(S.instant.c.instant_id == row.instant_id).values(
            state=COMPLETED, action=done_action, completion_ts=completion_ts, start_ts=self.clock_ms()))
        put_meta(conn, ref.tbl_id, ts, done_action, COMPLETED, metadata)
        conn.execute(delete(S.instant_markers).where(
            S.instant_markers.c.tbl_id == ref.tbl_id, S.instant_markers.c.ts == ts))
        version = add_version(conn, ref.tbl_id, row.instant_id, self.clock_ms())
        if kept is not None and version != kept[0] + 1:  # another version came in between
            kept = None
        # plans waiting for an executor that this commit made stale go (service_plans.py)
        retired = self.plans.retire_stale(conn, ref, touched) if self.plans is not None else set()
        if done_action == "deltacommit" or compaction_schedule.COMPACTION in retired:  # a compaction may be due now
            compaction_schedule.schedule_if_due(conn, ref, self.times, self.clock_ms())
        # then a log compaction of the slices no pending service plans (Hudi's inline order); not
        # after a log compaction's own completion (Hudi plans them after writes: with a threshold of
        # 2 or less, its own blocks would make the slice it just compacted due again at once)
        lc = log_compaction_schedule.LOG_COMPACTION
        if (done_action == "deltacommit" and row.action != lc) or lc in retired:
            log_compaction_schedule.schedule_if_due(conn, ref, self.times, self.clock_ms())
        if done_action in clustering_schedule.WRITE_COMMITS or compaction_schedule.CLUSTERING in retired:
            clustering_schedule.schedule_if_due(conn, ref, self.times, self.clock_ms())
        instant = Instant(ts, done_action, "COMPLETED", completion_ts, row.requested_ms, self.clock_ms(),
                          row.duration)
        return instant, version, partitions, metadata, gone, ref, kept

    def _apply(self, conn: Connection, ref: HudiTableRef, row: Row, action: str, metadata: bytes,
               record_keys: list[FileGroupKeys] | None, column_stats: list[FileColumnStats]
               ) -> tuple[frozenset[str] | None, set[Group] | None, Kept | None]:
        """File listing, column statistics, record index and partition changes of a completed
        instant: (the partitions a write action wrote or replaced in (None for other actions), the
        file groups it wrote or replaced (None: any may have changed), a plain write's change of
        its groups' latest files)."""
        ts = row.ts
        if action in WRITE_ACTIONS:
            meta = parse_commit(metadata)
            check_conflicts(conn, ref, row, action, meta)
            files_written = written_files(meta)
            replaced_now = {(p, fid) for p, ids in meta.replaced.items() for fid in ids}
            groups = {(p, entry[0]) for (p, _), entry in files_written.items()}
            groups |= replaced_now
            seen = Seen() if conn.dialect.name == "postgresql" else None
            live, replaced = self.column_stats.rows_before(conn, ref, groups, seen=seen)
            logs = any(entry[2] for entry in files_written.values())
            before = None
            if logs:  # the statistics of log files appended to again go first (before: see forget_appended)
                before = self.column_stats.unread_slices_of(live)
                self.column_stats.forget_appended(conn, ref, files_written, before)
            # ids drawn only for what can be a plain change (no log files): latest_files.plain_change
            plain = seen is not None and not logs
            ids: dict[tuple[str, str], int] | None = {} if plain else None
            written_in = {s.partition_path for s in meta.write_stats}
            self.partition_sync.ensure_partitions(conn, ref, sorted(p for p in written_in if p))
            event_source = self.partition_sync.commit_events(conn, ref, meta)
            adding = self.listing.start_adding_files(conn, ref, ts, meta, files_written, ids)
            with adding.alongside():  # what needs no statement runs while PostgreSQL inserts the rows
                if before is None:
                    before = self.column_stats.unread_slices_of(live)
                change = None
                if seen is not None and ids is not None:
                    change = plain_change(ts, seen.rows, files_written, ids, replaced | replaced_now)
                events = event_source.build(action)
                recorded = self.column_stats.record(conn, ref, ts, column_stats)
                after = self.column_stats.slices_after_write(conn, ref, ts, groups, before, replaced | replaced_now,
                                                             files_written, recorded)
            touched = self.column_stats.update_groups(conn, ref, before, after)
            self.record_index.apply_commit(conn, ref, ts, meta, record_keys)
            self.partition_sync.record_events(conn, events)
            self.statistics.publish(conn, ref, touched)
            kept = None if seen is None or change is None else (seen.version, change)
            return frozenset(written_in.union(meta.replaced)), groups, kept  # meta.partitions
        if action == "clean":
            cleaned = parse_clean(metadata)
            check_not_held(conn, ref, row.ts, cleaned)  # a savepoint completed since the clean was planned
            groups = self.column_stats.groups_of(conn, ref, cleaned)
            before = self.column_stats.slices_of(conn, ref, groups)
            self.listing.mark_deleted(conn, ref, ts, cleaned)
            self.column_stats.forget_removed(conn, ref, cleaned, groups, before)
            self.statistics.publish(conn, ref, sorted(cleaned))
        elif action == "rollback":
            rolled, deleted, written = parse_rollback(metadata)
            groups = (self.column_stats.groups_of(conn, ref, deleted)
                      | self.column_stats.groups_of_instants(conn, ref, rolled)
                      | self.column_stats.groups_of_stats(written.write_stats))
            touched_set = set(deleted) | {p for p, _ in groups}
            before = self.column_stats.slices_of(conn, ref, groups)
            self.listing.mark_deleted(conn, ref, ts, deleted)
            self.listing.forget_instants(conn, ref, rolled)
            appended = written_files(written)
            self.column_stats.forget_appended(conn, ref, appended, before)
            self.listing.add_files(conn, ref, ts, written, appended)
            self.column_stats.forget_removed(conn, ref, touched_set, groups, before)
            self.statistics.publish(conn, ref, sorted(touched_set))
            return None, None, None
        return None, set(), None


_running = [0, False]  # commits running, whether the collector was on before the first
_running_lock = threading.Lock()
_after = [0]  # commits' post-commit steps running (after_commit_step)


def commits_running() -> int:
    """Commits of this process inside their transaction or a post-commit step now (background
    work waits for them: store/hudi/storage_mirror.py)."""
    return _running[0] + _after[0]


@contextmanager
def after_commit_step() -> Iterator[None]:
    """A commit's post-commit step that its reply waits for (the storage mirror's hook) counts as
    the commit running: the background archive, seconds of CPU, gave way to a commit's transaction
    but not to its hook, whose statements then waited for the interpreter and took 70-120 ms
    instead of 15-20. Not for waiting on another's lease: the archive goes on then."""
    with _running_lock:
        _after[0] += 1
    try:
        yield
    finally:
        with _running_lock:
            _after[0] -= 1


@contextmanager
def _collector_paused() -> Iterator[None]:
    """No cyclic garbage collection while a commit runs (the last of concurrent ones turns it back
    on, if it was): a commit of 10,000 files makes hundreds of thousands of short-lived objects,
    which reference counting frees; the collections they set off cost it about 25 ms."""
    with _running_lock:
        if not _running[0]:
            _running[1] = gc.isenabled()
        _running[0] += 1
        gc.disable()
    try:
        yield
    finally:
        with _running_lock:
            _running[0] -= 1
            if not _running[0] and _running[1]:
                gc.enable()


def _dropped_partitions(action: str, metadata: bytes) -> list[str] | None:
    """The partitions a DELETE_PARTITION replacecommit drops (as hive-sync drops them)."""
    if action != "replacecommit":
        return None
    meta = parse_commit(metadata)
    if (meta.operation_type or "").upper() != "DELETE_PARTITION":
        return None
    return sorted(set(meta.replaced) - {s.partition_path for s in meta.write_stats})


def check_conflicts(conn: Connection, ref: HudiTableRef, row: Row, action: str, meta: CommitMetadata) -> None:
    """Optimistic concurrency: a write instant that completed after this one was requested must
    not have touched the same file groups (for replace actions: the same partitions)."""
    i = S.instant
    others = conn.execute(select(i.c.ts, i.c.action).where(
        i.c.tbl_id == ref.tbl_id, i.c.state == COMPLETED, i.c.completion_ts > row.requested_ts,
        i.c.ts != row.ts, i.c.action.in_(WRITE_ACTIONS))).all()
    if not others:
        return
    # a compaction joins the log files written on its own base instant while it was pending (as
    # Hudi's writers do for file groups under pending compaction): those are not a conflict
    touched = _touched_file_groups(conn, ref.tbl_id, [o.ts for o in others],
                                   row.ts if row.action == "compaction" else None)
    mine = {(s.partition_path, s.file_id) for s in meta.write_stats}
    mine |= {(p, fid) for p, ids in meta.replaced.items() for fid in ids}
    my_parts = {p for p, _ in mine}
    # a clustering replaces the file groups its plan names, no partition: file groups decide
    clustered = set(clustering_schedule.clusterings(conn, ref.tbl_id)) & ({o.ts for o in others} | {row.ts})
    conflicts, by_partition = [], False
    for o in others:
        theirs = touched[o.ts]
        whole = {a for a, t in ((action, row.ts), (o.action, o.ts)) if a == "replacecommit" and t not in clustered}
        hit = my_parts & {p for p, _ in theirs} if whole else mine & theirs
        if hit:
            conflicts.append(o.ts)
            by_partition = by_partition or bool(whole)
    if conflicts:
        raise CommitConflict(
            f"Instant {row.ts}.{action} of {ref.db_name}.{ref.name} conflicts with instant(s) "
            f"{', '.join(sorted(conflicts))} that completed after it started and wrote the same "
            f"{'partitions' if by_partition else 'file groups'}", sorted(conflicts))


def _touched_file_groups(conn: Connection, tbl_id: int, instants: list[str],
                         logs_on: str | None = None) -> dict[str, set[tuple[str, str]]]:
    """instant -> (partition, file id) of the file groups it wrote or replaced (`logs_on`: leave
    out log files written on this base instant)."""
    touched: dict[str, set[tuple[str, str]]] = {t: set() for t in instants}
    f = S.files
    q = select(f.c.created_ts, f.c.partition_path, f.c.file_id).where(
        f.c.tbl_id == tbl_id, f.c.created_ts.in_(instants))
    if logs_on is not None:
        q = q.where(or_(f.c.is_log.is_(False), f.c.base_instant != logs_on))
    for r in conn.execute(q):
        touched[r.created_ts].add((r.partition_path, r.file_id))
    rg = S.replaced_file_groups
    for r in conn.execute(select(rg.c.replace_ts, rg.c.partition_path, rg.c.file_id).where(
            rg.c.tbl_id == tbl_id, rg.c.replace_ts.in_(instants))):
        touched[r.replace_ts].add((r.partition_path, r.file_id))
    return touched
