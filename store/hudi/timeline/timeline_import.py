"""Adopting a Hudi table's history from storage (RFC-15 "first time initialization" of an existing
dataset; import-hudi and repair): instants that already happened keep their own times, states and
metadata, and files a listing of storage found are recorded.

Unlike the writer path (instants.create_instant, commit.complete_instant) nothing here hands out
instant times or checks for conflicts: the instants are facts on storage. One call is one database
transaction: all of it or nothing. Imported table versions are marked mirrored (the timeline is on
storage already), so the storage mirror never rewrites an imported table's instant files; but those
of instants that change the file listing of a table whose metadata table the mirror has taken over
(metadata_table.taken_over) are left to the mirror, whose next step writes their deltacommits into
it, as a commit's (the instant files it finds on storage, of the same names and sizes, it leaves as
they are). A table whose metadata table is Hudi's writers' (or none) is not taken over by an import.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from typing import Any

from sqlalchemy import Connection, Row, select, text, update

from hudi_format.commit_metadata import (
    WRITE_ACTIONS,
    CommitMetadata,
    WriteStat,
    parse_clean,
    parse_commit,
    parse_restore,
    parse_rollback,
    parse_savepoint,
    restore_target,
    restored_instants,
)
from hudi_format.errors import InvalidMetadata
from hudi_format.file_slice import FileInfo, parse_file_name, split_path
from hudi_format.instant import (
    ACTIONS,
    COMPLETED,
    COMPLETED_AS,
    INFLIGHT,
    REQUESTED,
    SAVEPOINT,
    STATE_NAMES,
    Instant,
    InstantKey,
    instant_key,
)
from hudi_format.table_config import MOR, HudiTableConfig
from store.db import schema as S
from store.db.dialect import pair_chunks, pg_joined_list, plan_with_values
from store.errors import InvalidObject, InvalidOperation
from store.hudi.column_stats import FileColumnStats
from store.hudi.file_listing import NEVER, add_version, latest_version, names_in, written_files
from store.hudi.metadata_table import mark_metadata_table_rewrite, taken_over
from store.hudi.tables import HudiTableRef
from store.hudi.timeline.instant_times import check_instant_time
from store.hudi.timeline.instants import DEFAULT_HEARTBEAT_TIMEOUT_S, insert_instant, put_meta
from store.hudi.timeline.timeline_service import TimelineService

BATCH = 500
LISTED = (*WRITE_ACTIONS, "clean", "rollback", "restore")  # completed actions that change the file listing

# PostgreSQL: which of these (partition, name) pairs the table's files hold, the pairs as two
# delimited texts (store/db/dialect.py pg_joined_list)
_RECORDED_PG = text("""
SELECT f.partition_path, f.name
FROM unnest((string_to_array(:parts, chr(31)))[2:], (string_to_array(:fids, chr(31)))[2:],
            (string_to_array(:names, chr(31)))[2:]) AS g(p, fid, n)
JOIN files f ON f.tbl_id = :tbl AND f.partition_path = g.p AND f.is_deleted IN (false, true) AND f.file_id = g.fid
 AND f.name = g.n""")
_RECORDED_PG_ARRAYS = text(_RECORDED_PG.text.replace(
    "(string_to_array(:parts, chr(31)))[2:], (string_to_array(:fids, chr(31)))[2:],\n"
    "            (string_to_array(:names, chr(31)))[2:]",
    "CAST(:parts AS text[]), CAST(:fids AS text[]), CAST(:names AS text[])"))


@dataclass
class StoredInstant:
    """One instant as found on storage."""

    ts: str
    action: str  # as requested (compaction, clustering, ... stay so)
    state: int  # REQUESTED | INFLIGHT | COMPLETED
    completion_ts: str | None = None
    requested: bytes | None = None
    inflight: bytes | None = None
    completed: bytes | None = None

    @property
    def done_action(self) -> str:
        return COMPLETED_AS.get(self.action, self.action)

    @property
    def key(self) -> InstantKey:
        return instant_key(self.ts, self.action)


@dataclass
class ImportOutcome:
    imported: list[Instant] = field(default_factory=list)
    unchanged: int = 0
    files_added: int = 0
    files_removed: int = 0
    files_resized: int = 0
    version: int = 0
    restored_groups: set[tuple[str, str]] = field(default_factory=set)  # (partition, file id) restores changed
    stats_recorded: set[tuple[str, str]] = field(default_factory=set)  # (partition, name) whose statistics it stored


class _CallState(threading.local):
    """What one import call carries from instant to instant (one TimelineImport serves every thread)."""

    events = False
    restored: set[tuple[str, str]]
    stats: dict[tuple[str, str], FileColumnStats] | None = None  # column statistics by (partition, name)
    recorded: set[tuple[str, str]]
    touched: set[str]  # partitions whose aggregates the instants brought up to date one by one
    recount = False  # an instant changed the files in a way only a recount of the partitions follows
    taken: bool | None = None  # the mirror took the table's metadata table over (read once per call)


def _check(instants: list[StoredInstant]) -> None:
    """Bad input is refused before anything is written."""
    seen: set[InstantKey] = set()
    for i in instants:
        check_instant_time(i.ts)
        if i.action not in ACTIONS:
            raise InvalidObject(f"Unknown Hudi action {i.action!r} of instant {i.ts}")
        if i.state not in STATE_NAMES:
            raise InvalidObject(f"Unknown state {i.state!r} of instant {i.ts}")
        if i.completion_ts:
            check_instant_time(i.completion_ts)
            if i.completion_ts < i.ts:
                raise InvalidObject(f"Instant {i.ts} completed before it was requested ({i.completion_ts})")
        if i.key in seen:
            raise InvalidObject(f"Instant {i.ts}{' (savepoint)' if i.key[1] else ''} given twice")
        seen.add(i.key)
        if i.state == COMPLETED:  # parse now: a corrupt file fails the call, not half of it
            data = i.completed
            if i.done_action in WRITE_ACTIONS:
                parse_commit(data)
            elif i.done_action == "clean":
                parse_clean(data)
            elif i.done_action == "rollback":
                parse_rollback(data)
            elif i.done_action == "restore":
                parse_restore(data)
            elif i.done_action == SAVEPOINT:
                try:
                    parse_savepoint(data)
                except InvalidMetadata as exc:
                    raise InvalidObject(f"Savepoint {i.ts}: {exc.message}") from None


def _group(stat: WriteStat) -> tuple[str, str]:
    """(partition, file id) of a write stat's file."""
    partition, name = split_path(stat.path)
    return (stat.partition_path if stat.partition_path is not None else partition), parse_file_name(name)[0]


def _file_key(f: FileInfo) -> tuple[str, str]:
    return (f.partition_path or "", f.name)


Rolled = tuple[list[str], dict[str, list[str]], CommitMetadata]  # as parse_rollback gives it


class TimelineImport:
    def __init__(self, timeline: TimelineService):
        self.timeline = timeline
        self.store = timeline.store
        self.clock_ms = timeline.clock_ms
        self.tables = timeline.hudi_tables
        self.times = timeline.times
        self.listing = timeline.listing
        self.partition_sync = timeline.partition_sync
        self.column_stats = timeline.completion.column_stats
        self.statistics = timeline.statistics
        self._call = _CallState()

    def import_instants(self, db: str, tbl: str, instants: list[StoredInstant],
                        listed: list[FileInfo] | None = None, missing: list[FileInfo] | None = None,
                        config: HudiTableConfig | None = None) -> ImportOutcome:
        """`config`: hoodie.properties as on storage now, taken over (the base path stays)."""
        return self.store.run_write(self.import_in, db, tbl, instants, listed, missing, config)

    def import_in(self, conn: Connection, db: str, tbl: str, instants: list[StoredInstant],
                  listed: list[FileInfo] | None = None, missing: list[FileInfo] | None = None,
                  config: HudiTableConfig | None = None, events: bool = False,
                  column_stats: dict[tuple[str, str], FileColumnStats] | None = None) -> ImportOutcome:
        """import_instants inside the caller's transaction (the catch-up of a tracked table joins
        the call that caused it: catch_up.py); with `events`, each completed write records its
        notification events as a commit through the server does. `column_stats` (of a copy-on-write
        table), by (partition, file name): each completed write stores those of the base files it
        wrote and brings its partitions' aggregates up to date as a commit through the server does
        (column_stats.update_groups), instead of a recount of every partition at the end; the
        files whose statistics were stored are in the outcome's `stats_recorded`."""
        instants = sorted(instants, key=lambda i: i.key)  # a savepoint after the commit it saves
        _check(instants)
        if config is not None:
            config.validate()
        listed, missing = list(listed or []), list(missing or [])
        for f in listed + missing:
            try:
                parse_file_name(f.name)
            except ValueError as exc:
                raise InvalidObject(str(exc)) from exc
        plan_with_values(conn)  # tables filled and read back by long lists in one transaction
        call = self._call
        call.events, call.restored, call.stats = events, set(), column_stats
        call.recorded, call.touched, call.recount, call.taken = set(), set(), False, None
        try:
            out = self._import_in(conn, db, tbl, instants, listed, missing, config)
            out.restored_groups, out.stats_recorded = call.restored, call.recorded
        finally:
            call.stats = None
        return out

    def _import_in(self, conn: Connection, db: str, tbl: str, instants: list[StoredInstant],
                   listed: list[FileInfo], missing: list[FileInfo], config: HudiTableConfig | None) -> ImportOutcome:
        ref = self.tables.table_ref(conn, db, tbl, lock=True)
        if config is not None:
            ref = self._take_config(conn, ref, config)
        if ref.config.table_type == MOR:
            self._call.stats = None  # log files re-slice: the aggregates are recounted
        out = ImportOutcome()
        rows = self._existing(conn, ref.tbl_id, [i.ts for i in instants])
        top = max([i.ts for i in instants] + [i.completion_ts for i in instants if i.completion_ts], default=None)
        for inst in instants:
            row = rows.get(inst.key)
            if row is not None and row.state >= inst.state:
                out.unchanged += 1
                continue
            if row is not None and row.action not in (inst.action, inst.done_action):
                raise InvalidObject(
                    f"Instant {inst.ts} is a {row.action} on the server but a {inst.action} on storage")
            out.imported.append(self._import_one(conn, ref, inst, row))
        if listed:
            out.files_added, out.files_resized = self._add_listed(conn, ref, listed)
        if missing:
            out.files_removed = self._remove_missing(conn, ref, missing)
        if out.files_added or out.files_removed or out.files_resized:
            add_version(conn, ref.tbl_id, 0, self.clock_ms(), mirrored=True)
            mark_metadata_table_rewrite(conn, ref, self.clock_ms())  # no instant tells the mirror's metadata table
        call = self._call
        if out.files_added or out.files_removed or out.files_resized or (
                out.imported and (call.stats is None or call.recount)):
            parts = list(conn.execute(select(S.files.c.partition_path).distinct().where(
                S.files.c.tbl_id == ref.tbl_id)).scalars())
            self.column_stats.forget_removed(conn, ref, parts)  # and the partitions' aggregates
            self.statistics.publish(conn, ref, parts)
        elif call.touched:  # every instant kept the aggregates itself
            self.statistics.publish(conn, ref, sorted(call.touched))
        if top:
            self.times.bump_to(conn, ref.tbl_id, top)
        out.version = latest_version(conn, ref.tbl_id)
        return out

    def _take_config(self, conn: Connection, ref: HudiTableRef, config: HudiTableConfig) -> HudiTableRef:
        if config.table_type != ref.config.table_type and conn.execute(select(S.instant.c.instant_id).where(
                S.instant.c.tbl_id == ref.tbl_id).limit(1)).first() is not None:
            raise InvalidOperation(f"{ref.db_name}.{ref.name} is {ref.config.table_type} with instants; "
                                   f"it cannot become {config.table_type}")
        config.db_name, config.table_name, config.base_path = ref.db_name, ref.name, ref.base_path
        conn.execute(update(S.hudi_table).where(S.hudi_table.c.tbl_id == ref.tbl_id).values(
            table_type=config.table_type, table_version=config.table_version, properties=config.to_json()))
        return self.tables.table_ref(conn, ref.db_name, ref.name)

    # --- instants -----------------------------------------------------------------------------

    @staticmethod
    def _existing(conn: Connection, tbl_id: int, stamps: list[str]) -> dict[InstantKey, Row]:
        i = S.instant
        out = {}
        stamps = sorted(set(stamps))
        for k in range(0, len(stamps), BATCH):
            for r in conn.execute(select(i).where(i.c.tbl_id == tbl_id, i.c.ts.in_(stamps[k:k + BATCH]))):
                out[instant_key(r.ts, r.action)] = r
        return out

    def _taken_over(self, ref: HudiTableRef) -> bool:
        call = self._call
        if call.taken is None:
            call.taken = taken_over(ref)
        return call.taken

    def _import_one(self, conn: Connection, ref: HudiTableRef, inst: StoredInstant, row: Row | None) -> Instant:
        now = self.clock_ms()
        completed = inst.state == COMPLETED
        action = inst.done_action if completed else inst.action
        completion = (inst.completion_ts or inst.ts) if completed else None
        i = S.instant
        if row is None:
            instant_id = insert_instant(
                conn, tbl_id=ref.tbl_id, ts=inst.ts, action=action, state=inst.state, requested_ms=now,
                requested_ts=inst.ts, completion_ts=completion, duration=DEFAULT_HEARTBEAT_TIMEOUT_S, start_ts=now)
            from_state = 0
        else:
            instant_id = row.instant_id
            from_state = row.state
            conn.execute(update(i).where(i.c.instant_id == instant_id).values(
                state=inst.state, action=action, completion_ts=completion, start_ts=now))
        done = inst.completed
        if completed and action == SAVEPOINT:  # what it holds: cleans keep those files (the server's listing if empty)
            done = self.timeline.apply_savepoint(conn, ref, inst.ts, inst.completed or b"")
        for state, data in ((REQUESTED, inst.requested), (INFLIGHT, inst.inflight), (COMPLETED, done)):
            if from_state < state <= inst.state and (data is not None or state == COMPLETED):
                put_meta(conn, ref.tbl_id, inst.ts, action if state == COMPLETED else inst.action, state, data)
        if completed:
            self._apply(conn, ref, inst)
            conn.execute(S.instant_markers.delete().where(
                S.instant_markers.c.tbl_id == ref.tbl_id, S.instant_markers.c.ts == inst.ts))
            # the mirror's metadata table takes the instant's files (issue 45): its step is pending
            # (only when it has one: an import alone never makes the mirror take a table over)
            to_metadata_table = action in LISTED and self._taken_over(ref)
            add_version(conn, ref.tbl_id, instant_id, self.clock_ms(), mirrored=not to_metadata_table)
        return Instant(inst.ts, action, STATE_NAMES[inst.state], completion, now, now, DEFAULT_HEARTBEAT_TIMEOUT_S)

    def _apply(self, conn: Connection, ref: HudiTableRef, inst: StoredInstant) -> None:
        """The file listing changes of a completed instant, as commit.py applies a commit's."""
        action = inst.done_action
        call = self._call
        if action not in WRITE_ACTIONS and action != SAVEPOINT:
            call.recount = True  # files deleted or rolled back: their statistics go, recounted
        if action in WRITE_ACTIONS:
            meta = parse_commit(inst.completed)
            self._drop_recorded_base_files(conn, ref, meta)
            if call.stats is not None:
                self._add_with_stats(conn, ref, inst.ts, meta, call.stats)
            else:
                written_now = written_files(meta)
                self.column_stats.forget_appended(conn, ref, written_now)  # log files appended to again
                self.listing.add_files(conn, ref, inst.ts, meta, written_now)
            self._reslice_logs(conn, ref, {_group(s) for s in meta.write_stats})
            written = sorted({s.partition_path for s in meta.write_stats if s.partition_path})
            self.partition_sync.ensure_partitions(conn, ref, written)
            if action == "replacecommit" and (meta.operation_type or "").upper() == "DELETE_PARTITION":
                self.partition_sync.drop_partitions(conn, ref, sorted(set(meta.replaced) - set(written)))
            if call.events:
                self.partition_sync.record_commit(conn, ref, action, meta)
        elif action == "clean":
            self.listing.mark_deleted(conn, ref, inst.ts, parse_clean(inst.completed))
        elif action == "rollback":
            self._rollback(conn, ref, inst.ts, parse_rollback(inst.completed))
        elif action == "restore":
            self._restore(conn, ref, inst)

    def _add_with_stats(self, conn: Connection, ref: HudiTableRef, ts: str, meta: CommitMetadata,
                        stats: dict[tuple[str, str], FileColumnStats]) -> None:
        """A write's files with the statistics of the base files it wrote, and its partitions'
        aggregates brought up to date from its file groups' change (as commit.py completes a commit
        through the server: the cost follows the commit, not the table)."""
        cs = self.column_stats
        written = written_files(meta)
        replaced_now = {(p, fid) for p, ids in meta.replaced.items() for fid in ids}
        groups = {(p, entry[0]) for (p, _), entry in written.items()} | replaced_now
        before, replaced = cs.slices_before(conn, ref, groups, defer=True)
        self.listing.add_files(conn, ref, ts, meta, written)
        mine = [stats[k] for k, (_, base_instant, is_log, _, _) in written.items()
                if not is_log and base_instant == ts and k in stats]
        recorded = cs.record(conn, ref, ts, mine)
        after = cs.slices_after_write(conn, ref, ts, groups, before, replaced | replaced_now, written, recorded)
        self._call.touched.update(cs.update_groups(conn, ref, before, after))
        self._call.recorded.update(recorded)

    def _restore(self, conn: Connection, ref: HudiTableRef, inst: StoredInstant) -> None:
        """A restore's rollbacks, through the server's own restore (savepoints.py: the instants it
        rolled back leave the timeline, file groups they replaced come back, partitions, column and
        Hive statistics and notification events follow); the record index's keys of the groups it
        changed are the caller's to reload (ImportOutcome.restored_groups). Files its rollbacks
        deleted or wrote (rollback blocks of table version 6) follow as a rollback's do."""
        try:
            target = restore_target(inst.requested) or ""
        except InvalidMetadata:
            target = ""  # named in messages only: the restore's metadata says what it rolled back
        done = self.timeline.apply_restore(conn, ref, inst.ts, target, inst.completed or b"",
                                           rolled=restored_instants(inst.completed), reindex=True)
        self._call.restored.update(done.groups)
        for _, deleted, written in parse_restore(inst.completed):
            self.listing.mark_deleted(conn, ref, inst.ts, deleted)
            appended = written_files(written)  # rollback blocks: the log files' statistics go
            self.column_stats.forget_appended(conn, ref, appended)
            self.listing.add_files(conn, ref, inst.ts, written, appended)

    def _rollback(self, conn: Connection, ref: HudiTableRef, ts: str, parsed: Rolled) -> None:
        rolled, deleted, written = parsed
        self.listing.mark_deleted(conn, ref, ts, deleted)
        self.listing.forget_instants(conn, ref, rolled)
        appended = written_files(written)  # rollback blocks: the log files' statistics go
        self.column_stats.forget_appended(conn, ref, appended)
        self.listing.add_files(conn, ref, ts, written, appended)

    @staticmethod
    def _drop_recorded_base_files(conn: Connection, ref: HudiTableRef, meta: CommitMetadata) -> None:
        """Base files a listing recorded already (repair) are not inserted twice."""
        f = S.files
        written: list[tuple[str, str]] = []
        for s in meta.write_stats:
            partition, name = split_path(s.path)
            if not name.startswith("."):
                written.append((s.partition_path if s.partition_path is not None else partition, name))
        have: set[tuple[str, str]] = set()
        if conn.dialect.name == "postgresql" and written:  # one statement: a probe of uq_files_live per file
            keys = []
            for p, n in sorted(set(written)):
                try:
                    keys.append((p, parse_file_name(n)[0], n))
                except ValueError:  # no Hudi file name: in no row
                    continue
            cols = [[k[j] for k in keys] for j in range(3)]
            joined = [pg_joined_list(c) for c in cols]
            params: dict[str, Any]
            if None not in joined:
                stmt, params = _RECORDED_PG, dict(zip(("parts", "fids", "names"), joined))
            else:  # a name holding the separator: array parameters
                stmt, params = _RECORDED_PG_ARRAYS, dict(zip(("parts", "fids", "names"), cols))
            if keys:
                have.update((r[0], r[1]) for r in conn.execute(stmt, {"tbl": ref.tbl_id, **params}))
            written = []
        for chunk in pair_chunks(written):
            wanted = set(chunk)
            have.update((r[0], r[1]) for r in conn.execute(select(f.c.partition_path, f.c.name).where(
                f.c.tbl_id == ref.tbl_id, names_in(conn.dialect.name, chunk))) if (r[0], r[1]) in wanted)
        if have:
            meta.write_stats = [s for s in meta.write_stats if (
                s.partition_path if s.partition_path is not None else split_path(s.path)[0],
                split_path(s.path)[1]) not in have]

    @staticmethod
    def _reslice_logs(conn: Connection, ref: HudiTableRef, groups: set[tuple[str, str]]) -> None:
        """Table version 8+ merge-on-read: a log file is named after the deltacommit that wrote it and
        belongs to the slice of the latest base file of its group whose instant is at or before that
        commit's completion (Hudi 1.x); recomputed for the groups an import touched."""
        if ref.config.table_version < 8 or ref.config.table_type != MOR:
            return
        f, i = S.files, S.instant
        for partition, file_id in sorted(groups):
            rows = conn.execute(select(f.c.id, f.c.name, f.c.is_log, f.c.base_instant, f.c.created_ts,
                                       f.c.deleted_ts, i.c.completion_ts).select_from(
                f.outerjoin(i, (i.c.tbl_id == f.c.tbl_id) & (i.c.ts == f.c.created_ts))).where(
                f.c.tbl_id == ref.tbl_id, f.c.partition_path == partition,
                f.c.is_deleted.in_((False, True)), f.c.file_id == file_id)).all()  # ix_files_live
            bases = [r.base_instant for r in rows if not r.is_log and r.deleted_ts != NEVER]
            for r in rows:
                if not r.is_log:
                    continue
                own = parse_file_name(r.name)[1]
                done = r.completion_ts or own
                slice_base = max((b for b in bases if b <= done), default=own)
                if slice_base != r.base_instant:
                    conn.execute(update(f).where(f.c.id == r.id).values(base_instant=slice_base))

    # --- listing --------------------------------------------------------------------------------

    def _add_listed(self, conn: Connection, ref: HudiTableRef, listed: list[FileInfo]) -> tuple[int, int]:
        """Record listed files the table has no row for (in any state), created by their own instant;
        a live file's size is the listing's. (files added, files resized)"""
        f = S.files
        by_partition: dict[str, list[FileInfo]] = {}
        for x in {_file_key(x): x for x in listed}.values():
            by_partition.setdefault(x.partition_path or "", []).append(x)
        version = latest_version(conn, ref.tbl_id) + 1
        now = self.clock_ms()
        rows: list[dict[str, Any]] = []
        resized = 0
        for partition, files in by_partition.items():
            names = [x.name for x in files]
            have: dict[str, Row] = {}
            for k in range(0, len(names), BATCH):
                chunk = [(partition, name) for name in names[k:k + BATCH]]
                have.update((r.name, r) for r in conn.execute(select(f.c.id, f.c.name, f.c.size, f.c.is_deleted).where(
                    f.c.tbl_id == ref.tbl_id, names_in(conn.dialect.name, chunk))))
            for x in files:
                if x.name in have:
                    r = have[x.name]
                    if not r.is_deleted and r.size != int(x.size or 0):
                        conn.execute(update(f).where(f.c.id == r.id).values(size=int(x.size or 0), update_time=now))
                        # a log file grown on storage: its statistics no longer cover it
                        self.column_stats.forget_appended(conn, ref, {(partition, x.name): ("", "", True, None, 0)})
                        resized += 1
                    continue
                file_id, base, is_log, log_version = parse_file_name(x.name)
                rows.append({"tbl_id": ref.tbl_id, "partition_path": partition, "name": x.name, "file_id": file_id,
                             "base_instant": x.base_instant or base, "is_log": is_log, "log_version": log_version,
                             "size": int(x.size or 0), "version": version, "created_ts": x.commit_ts or base,
                             "deleted_ts": None, "is_deleted": False, "create_time": now, "update_time": now})
        for k in range(0, len(rows), 1000):
            conn.execute(f.insert(), rows[k:k + 1000])
        self._reslice_logs(conn, ref, {(r["partition_path"], r["file_id"]) for r in rows})
        self.partition_sync.ensure_partitions(
            conn, ref, sorted({r["partition_path"] for r in rows if r["partition_path"]}))
        return len(rows), resized

    def _remove_missing(self, conn: Connection, ref: HudiTableRef, missing: list[FileInfo]) -> int:
        """Live files storage no longer has: never part of the table as readers see it. A partition
        left without live files loses its HMS partition."""
        f = S.files
        by_partition: dict[str, list[str]] = {}
        for x in missing:
            by_partition.setdefault(x.partition_path or "", []).append(x.name)
        n = 0
        now = self.clock_ms()
        emptied = []
        for partition, names in by_partition.items():
            for k in range(0, len(names), BATCH):
                chunk = [(partition, name) for name in names[k:k + BATCH]]
                n += conn.execute(update(f).where(
                    f.c.tbl_id == ref.tbl_id, names_in(conn.dialect.name, chunk, live=True)
                ).values(is_deleted=True, deleted_ts=NEVER, update_time=now)).rowcount
            left = conn.execute(select(f.c.id).where(f.c.tbl_id == ref.tbl_id, f.c.partition_path == partition,
                                                     f.c.is_deleted.is_(False)).limit(1)).first()
            if left is None and partition:
                emptied.append(partition)
        self.partition_sync.drop_partitions(conn, ref, emptied)
        return n
