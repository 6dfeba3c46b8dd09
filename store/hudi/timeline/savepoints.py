"""Savepoints and restores (Hudi's savepoint and restore actions), applied in the transaction that
completes the instant. docs/hudi.md, "Savepoints and restore".

* A savepoint is requested at the instant time of a completed commit (Hudi's savepoint shares its
  commit's time) that no clean has passed (its earliest commit retained). Completing it records the
  files of the table's latest file slices as of that commit, per partition (HoodieSavepointMetadata;
  the server lists them when the client sends no metadata). Cleans keep every file slice a
  savepoint holds (clean_service); deleting the savepoint releases them.
* A restore names the savepoint T it restores to in its plan (HoodieRestorePlan's
  savepointToRestoreTimestamp). Completing it rolls back every instant of the write timeline after
  T (requested time after T in table version 6; completed after T, or pending, in 8+, as Hudi's
  RestorePlanActionExecutor): their files leave the listing (and storage, after the transaction),
  their instants leave the timeline, file groups they replaced come back, partitions follow their
  files, column statistics, Hive statistics and the record index follow, and INSERT events are
  logged for the partitions touched. A target that is no completed commit, no savepoint, or has a
  later savepoint (Hudi: "delete savepoint first") is refused and nothing changes.

`apply_savepoint` and `apply_restore` take an open transaction and a table reference, so a path
that follows a timeline written elsewhere (instants read from storage) applies the same changes.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from sqlalchemy import Connection, Row, delete, or_, select

from hudi_format.commit_metadata import (
    WRITE_ACTIONS,
    clean_retained_from,
    parse_savepoint,
    restore_metadata,
    restore_target,
    restored_instants,
    savepoint_metadata,
)
from hudi_format.config_keys import STORAGE_STRATEGY_CLASS
from hudi_format.errors import InvalidMetadata
from hudi_format.instant import COMPLETED, INFLIGHT, REQUESTED
from hudi_format.storage_strategy import HIVE, strategy_name
from store.db import schema as S
from store.errors import AlreadyExists, InvalidObject, InvalidOperation, NoSuchObject
from store.hudi.column_stats import ColumnStats
from store.hudi.file_listing import FileListing, add_version
from store.hudi.hive_table_statistics import HiveTableStatistics
from store.hudi.record_index import FileGroupKeys, RecordIndex, has_record_index
from store.hudi.tables import HudiTableRef
from store.hudi.timeline.partition_sync import PartitionSync

SAVEPOINT = "savepoint"
RESTORE = "restore"
# Hudi's write timeline: what a restore rolls back (as requested; completed compaction and
# clustering instants carry commit / replacecommit)
WRITE_TIMELINE = ("commit", "deltacommit", "replacecommit", "compaction", "logcompaction", "clustering")
BATCH = 500


@dataclass
class RestoreOutcome:
    metadata: bytes  # the restore's completed metadata (as given, or the server's)
    rolled: list[tuple[str, str]] = field(default_factory=list)  # (time, action) rolled back, newest first
    paths: list[str] = field(default_factory=list)  # their files, relative to the base path, to delete
    partitions: list[str] = field(default_factory=list)  # partitions whose files changed
    groups: list[tuple[str, str]] = field(default_factory=list)  # (partition, file id) of the groups changed


def commit_row(conn: Connection, tbl_id: int, ts: str) -> Row | None:
    """The completed write instant (commit, deltacommit, replacecommit) at `ts`, if any."""
    i = S.instant
    return conn.execute(select(i).where(i.c.tbl_id == tbl_id, i.c.ts == ts, i.c.state == COMPLETED,
                                        i.c.action.in_(WRITE_ACTIONS))).first()


def savepoint_row(conn: Connection, tbl_id: int, ts: str, completed: bool = True) -> Row | None:
    i = S.instant
    q = select(i).where(i.c.tbl_id == tbl_id, i.c.ts == ts, i.c.action == SAVEPOINT)
    if completed:
        q = q.where(i.c.state == COMPLETED)
    return conn.execute(q).first()


def clean_retains_from(conn: Connection, tbl_id: int) -> str | None:
    """The earliest commit the last completed clean retained (savepoints before it are refused)."""
    i, m = S.instant, S.instant_meta
    last = conn.execute(select(i.c.ts).where(i.c.tbl_id == tbl_id, i.c.action == "clean", i.c.state == COMPLETED)
                        .order_by(i.c.ts.desc()).limit(1)).scalar()
    if last is None:
        return None
    data = conn.execute(select(m.c.data).where(m.c.tbl_id == tbl_id, m.c.ts == last, m.c.action == "clean",
                                               m.c.state == COMPLETED)).scalar()
    try:
        return clean_retained_from(bytes(data or b""))
    except InvalidMetadata:
        return None


def check_request(conn: Connection, ref: HudiTableRef, ts: str, action: str, plan: bytes | None) -> None:
    """What create_instant checks of a savepoint or restore before it is requested."""
    if action == SAVEPOINT:
        if commit_row(conn, ref.tbl_id, ts) is None:
            raise InvalidOperation(f"Cannot savepoint {ts} on {ref.db_name}.{ref.name}: it is no completed "
                                   "commit on the timeline (a savepoint is requested at its commit's instant time)")
        if savepoint_row(conn, ref.tbl_id, ts, completed=False) is not None:
            raise AlreadyExists(f"Instant {ts} of {ref.db_name}.{ref.name} has a savepoint already")
        retained = clean_retains_from(conn, ref.tbl_id)
        if retained and ts < retained:
            raise InvalidOperation(f"Cannot savepoint {ts} on {ref.db_name}.{ref.name}: a clean retained only "
                                   f"the commits from {retained} (its older file slices may be gone)")
    elif action == RESTORE:
        restore_point(conn, ref, _target_of_plan(plan))


def _target_of_plan(plan: bytes | None) -> str:
    try:
        target = restore_target(plan)
    except InvalidMetadata as exc:
        raise InvalidObject(f"Restore plan: {exc.message}") from None
    if not target:
        raise InvalidObject("A restore names the savepoint it restores to (its plan's savepointToRestoreTimestamp)")
    return target


def restore_point(conn: Connection, ref: HudiTableRef, target: str) -> Row:
    """The commit a restore to `target` goes back to; InvalidOperation when `target` is no completed
    commit, no savepoint, or a later savepoint would lose its commit."""
    commit = commit_row(conn, ref.tbl_id, target)
    if commit is None:
        raise InvalidOperation(f"Cannot restore {ref.db_name}.{ref.name} to {target}: it is no completed commit "
                               "on the table's timeline")
    if savepoint_row(conn, ref.tbl_id, target) is None:
        raise InvalidOperation(f"Cannot restore {ref.db_name}.{ref.name} to {target}: it is no savepoint "
                               "(create a savepoint of that commit first)")
    i = S.instant
    later = conn.execute(select(i.c.ts).where(i.c.tbl_id == ref.tbl_id, i.c.action == SAVEPOINT,
                                              i.c.ts > target).order_by(i.c.ts)).scalars().all()
    if later:
        raise InvalidOperation(f"Cannot restore {ref.db_name}.{ref.name} to {target}: savepoint(s) "
                               f"{', '.join(later)} after it would lose their commits (delete them first)")
    return commit


def files_as_of(conn: Connection, tbl_id: int, ts: str) -> dict[str, list[str]]:
    """Partition -> names of the files of the latest file slices as of `ts` (the snapshot's view as
    of an instant: slices begun by then, files not deleted by then, groups not replaced by then)."""
    f, rg = S.files, S.replaced_file_groups
    replaced = {(r.partition_path, r.file_id) for r in conn.execute(
        select(rg.c.partition_path, rg.c.file_id).where(rg.c.tbl_id == tbl_id, rg.c.replace_ts <= ts))}
    slices: dict[tuple[str, str], tuple[str, list[str]]] = {}
    for r in conn.execute(select(f.c.partition_path, f.c.file_id, f.c.base_instant, f.c.name).where(
            f.c.tbl_id == tbl_id, f.c.base_instant <= ts, or_(f.c.deleted_ts.is_(None), f.c.deleted_ts > ts))):
        key = (r.partition_path, r.file_id)
        if key in replaced:
            continue
        have = slices.get(key)
        if have is None or r.base_instant > have[0]:
            slices[key] = (r.base_instant, [r.name])
        elif r.base_instant == have[0]:
            have[1].append(r.name)
    out: dict[str, list[str]] = {}
    for (partition, _), (_, names) in sorted(slices.items()):
        out.setdefault(partition, []).extend(names)
    return out


def held_files(conn: Connection, tbl_id: int) -> set[tuple[str, str]]:
    """(partition, name) of every file a completed savepoint of the table holds."""
    i, m = S.instant, S.instant_meta
    out: set[tuple[str, str]] = set()
    for data in conn.execute(select(m.c.data).select_from(m.join(i, (i.c.tbl_id == m.c.tbl_id) & (
            i.c.ts == m.c.ts) & (i.c.action == m.c.action))).where(
            m.c.tbl_id == tbl_id, m.c.action == SAVEPOINT, m.c.state == COMPLETED, i.c.state == COMPLETED)).scalars():
        for partition, names in parse_savepoint(bytes(data or b"")).items():
            out.update((partition, n) for n in names)
    return out


def check_not_held(conn: Connection, ref: HudiTableRef, clean_ts: str, cleaned: dict[str, list[str]]) -> None:
    """InvalidOperation when a clean would delete a file a completed savepoint holds."""
    held = held_files(conn, ref.tbl_id) if cleaned else set()
    hit = sorted((p, n) for p, names in cleaned.items() for n in names if (p, n) in held)
    if hit:
        raise InvalidOperation(f"Clean {clean_ts} of {ref.db_name}.{ref.name} would delete {len(hit)} file(s) a "
                               f"savepoint holds (e.g. {hit[0][0]}/{hit[0][1]}); plan the clean again")


def restore_target_of(conn: Connection, tbl_id: int, ts: str) -> str:
    """The savepoint restore instant `ts` restores to, from its plan (requested, else inflight)."""
    m = S.instant_meta
    for state in (REQUESTED, INFLIGHT):
        data = conn.execute(select(m.c.data).where(m.c.tbl_id == tbl_id, m.c.ts == ts, m.c.action == RESTORE,
                                                   m.c.state == state)).scalar()
        if data:
            return _target_of_plan(bytes(data))
    return _target_of_plan(None)


def delete_savepoint(conn: Connection, ref: HudiTableRef, ts: str, now: int, mirrored: bool = False) -> Row:
    """Remove savepoint `ts` (any state) from the timeline, as Hudi's deleteSavepoint removes its
    instant files: the file slices it held may be cleaned again. A new table version lets the
    storage mirror remove its files (`mirrored`: they are gone from storage already). Returns the
    removed instant's row."""
    row = savepoint_row(conn, ref.tbl_id, ts, completed=False)
    if row is None:
        raise NoSuchObject(f"No savepoint {ts} on {ref.db_name}.{ref.name}")
    i, m = S.instant, S.instant_meta
    conn.execute(delete(m).where(m.c.tbl_id == ref.tbl_id, m.c.ts == ts, m.c.action == SAVEPOINT))
    conn.execute(delete(i).where(i.c.instant_id == row.instant_id))
    add_version(conn, ref.tbl_id, 0, now, mirrored=mirrored)
    return row


class SavepointsAndRestores:
    def __init__(self, listing: FileListing, partition_sync: PartitionSync, record_index: RecordIndex,
                 column_stats: ColumnStats, statistics: HiveTableStatistics, clock_ms: Callable[[], int]):
        self.listing = listing
        self.partition_sync = partition_sync
        self.record_index = record_index
        self.column_stats = column_stats
        self.statistics = statistics
        self.clock_ms = clock_ms

    # --- savepoints -------------------------------------------------------------------------------

    def apply_savepoint(self, conn: Connection, ref: HudiTableRef, ts: str, metadata: bytes,
                        by: str = "hudi-metastore", check: bool = True) -> bytes:
        """Complete savepoint `ts`: its metadata as given (readable), or the server's listing of the
        files it holds when none is given. `check` False: a fact read from storage (its commit is
        not required on the server's timeline)."""
        if check and commit_row(conn, ref.tbl_id, ts) is None:
            raise InvalidOperation(f"Cannot complete savepoint {ts} of {ref.db_name}.{ref.name}: its commit "
                                   "is no longer on the timeline")
        if metadata:
            try:
                parse_savepoint(metadata)
            except InvalidMetadata as exc:
                raise InvalidObject(exc.message) from None
            return metadata
        return savepoint_metadata(files_as_of(conn, ref.tbl_id, ts), by, self.clock_ms())

    # --- restores ---------------------------------------------------------------------------------

    def instants_after(self, conn: Connection, ref: HudiTableRef, commit: Row) -> list[Row]:
        """The write-timeline instants a restore to `commit` rolls back, newest first."""
        i = S.instant
        rows = conn.execute(select(i).where(i.c.tbl_id == ref.tbl_id, i.c.action.in_(WRITE_TIMELINE))).all()
        if ref.config.table_version >= 8:  # by completion time; pending ones go too
            out = [r for r in rows if r.state != COMPLETED or (r.completion_ts or r.ts) > (commit.completion_ts
                                                                                           or commit.ts)]
        else:
            out = [r for r in rows if r.ts > commit.ts]
        return sorted(out, key=lambda r: (r.completion_ts or "9" * 17, r.ts), reverse=True)

    def apply_restore(self, conn: Connection, ref: HudiTableRef, restore_ts: str, target: str, metadata: bytes,
                      record_keys: list[FileGroupKeys] | None = None,
                      rolled: list[str] | None = None, reindex: bool = False) -> RestoreOutcome:
        """Roll the table back to savepoint `target` (restore instant `restore_ts`), in the caller's
        transaction. `rolled`: the instants to roll back as the restore's metadata names them (a
        timeline read from storage: a fact, so `target` is not checked); by default those after
        `target` on the server's timeline, which given metadata must name, `target` being a
        savepoint with none after it. `record_keys`: for a table keeping a record index, the keys each
        file group the restore changes holds as of `target` (FileGroupKeys.inserted with the
        instant that wrote them). `reindex`: the caller reloads the keys of the groups changed
        (RestoreOutcome.groups) itself, from storage: they only leave the index here."""
        i = S.instant
        if rolled is None:
            rows = self.instants_after(conn, ref, restore_point(conn, ref, target))
        else:
            rows = list(conn.execute(select(i).where(i.c.tbl_id == ref.tbl_id, i.c.ts.in_(rolled),
                                                     i.c.action.in_(WRITE_TIMELINE))).all())
        instants = [(r.ts, r.action) for r in rows]
        tss = [t for t, _ in instants]
        if metadata and rolled is None:
            try:
                named = restored_instants(metadata)
            except InvalidMetadata as exc:
                raise InvalidObject(exc.message) from None
            if set(named) != set(tss):
                raise InvalidOperation(
                    f"Restore {restore_ts} of {ref.db_name}.{ref.name} to {target}: its metadata rolls back "
                    f"{sorted(named)}, the table's timeline has {sorted(tss)} after {target}")
        f = S.files
        created: dict[str, dict[str, list[str]]] = {}
        for k in range(0, len(tss), BATCH):
            for r in conn.execute(select(f.c.created_ts, f.c.partition_path, f.c.name).where(
                    f.c.tbl_id == ref.tbl_id, f.c.created_ts.in_(tss[k:k + BATCH]), f.c.is_deleted.is_(False))):
                created.setdefault(r.created_ts, {}).setdefault(r.partition_path, []).append(r.name)
        markers = [] if not tss else list(conn.execute(select(S.instant_markers.c.path).where(
            S.instant_markers.c.tbl_id == ref.tbl_id, S.instant_markers.c.ts.in_(tss))).scalars())
        rg = S.replaced_file_groups
        groups = self.column_stats.groups_of_instants(conn, ref, tss) | {
            (r.partition_path, r.file_id) for r in conn.execute(select(rg.c.partition_path, rg.c.file_id).where(
                rg.c.tbl_id == ref.tbl_id, rg.c.replace_ts.in_(tss)))} if tss else set()
        touched = sorted({p for p, _ in groups})
        before = self.column_stats.slices_of(conn, ref, groups)
        self.listing.forget_instants(conn, ref, tss)
        self.column_stats.forget_removed(conn, ref, touched, groups, before)
        live_groups = self._live_groups(conn, ref, touched)  # of the partitions touched, afterwards
        live = {p for p, _ in live_groups}
        if reindex:
            if has_record_index(ref.config.properties):
                self.record_index.drop_file_groups(conn, ref.tbl_id, sorted(groups))
        else:
            self.record_index.restore_file_groups(conn, ref, sorted(groups), live_groups & groups, record_keys)
        self.partition_sync.drop_partitions(conn, ref, [p for p in touched if p not in live and p])
        self.partition_sync.ensure_partitions(conn, ref, [p for p in touched if p in live and p])
        self.partition_sync.record_restore(conn, ref, [p for p in touched if p in live])
        self.statistics.publish(conn, ref, touched)
        if not metadata:
            metadata = restore_metadata(restore_ts, instants, created, ref.base_path)
        paths = markers + [f"{p}/{n}" if p else n for files in created.values() for p, ns in files.items() for n in ns]
        if strategy_name((ref.config.properties or {}).get(STORAGE_STRATEGY_CLASS)).lower() != HIVE:
            paths = []  # files placed by another storage strategy are not under the base path: left
        return RestoreOutcome(metadata, instants, sorted(set(paths)), touched, sorted(groups))

    @staticmethod
    def _live_groups(conn: Connection, ref: HudiTableRef, partitions: list[str]) -> set[tuple[str, str]]:
        """The file groups of these partitions in the latest view: live files, not replaced."""
        f, rg = S.files, S.replaced_file_groups
        out: set[tuple[str, str]] = set()
        for k in range(0, len(partitions), BATCH):
            chunk = partitions[k:k + BATCH]
            out.update((r.partition_path, r.file_id) for r in conn.execute(
                select(f.c.partition_path, f.c.file_id).distinct().where(
                    f.c.tbl_id == ref.tbl_id, f.c.partition_path.in_(chunk), f.c.is_deleted.is_(False))))
            out.difference_update((r.partition_path, r.file_id) for r in conn.execute(
                select(rg.c.partition_path, rg.c.file_id).where(rg.c.tbl_id == ref.tbl_id,
                                                                rg.c.partition_path.in_(chunk))))
        return out
