"""Rolling back a failed instant (RFC-36 / Hudi rollback): a pending instant whose writer stopped
heartbeating is replaced by a completed rollback instant that records the files its writer announced
as markers; the failed instant leaves the timeline, then those files are deleted from storage.

A table service the server scheduled (a compaction or clustering) whose executor's claim expired
is rolled back as Hudi rolls back a failed inflight compaction or clustering: the rollback instant
records the files the attempt wrote, and the instant goes back to REQUESTED with its plan, for the
next executor to run again. One that lost a commit conflict (expired at once) can never complete:
it leaves the timeline like a failed write. A plan waiting for an executor (REQUESTED) is no failed
write and is refused here (service_plans.py rolls back one that can no longer run).
"""

from __future__ import annotations

from sqlalchemy import Connection, Row, delete, select, update

from hudi_format.file_slice import split_path
from hudi_format.instant import COMPLETED, INFLIGHT, REQUESTED, Instant
from store.db import schema as S
from store.db.database import Store
from store.errors import InvalidOperation
from store.hudi.file_listing import FileListing, add_version
from store.hudi.table_files import TableFiles
from store.hudi.tables import HudiTableRef, HudiTables
from store.hudi.timeline.commit import PostCommitHook, run_post_commit_hooks
from store.hudi.timeline.instant_times import InstantTimes
from store.hudi.timeline.instants import PLAN_WAITS, SERVICES, Instants, instant_from_row, waiting_plan
from store.hudi.timeline.savepoints import SAVEPOINT, delete_savepoint
from store.hudi.timeline.service_plans import add_rollback_instant


class Rollbacks:
    def __init__(self, store: Store, tables: HudiTables, instants: Instants, times: InstantTimes,
                 listing: FileListing, hooks: list[PostCommitHook], files: TableFiles):
        self.store = store
        self.tables = tables
        self.instants = instants
        self.times = times
        self.clock_ms = times.clock_ms
        self.listing = listing
        self.hooks = hooks
        self.files = files

    def rollback(self, db: str, tbl: str, ts: str, force: bool = False) -> tuple[Instant, list[str]]:
        """Roll back pending instant `ts` once its heartbeat expired (at once with `force`):
        (the rollback instant, the deleted paths, relative to the table's base path: none when the
        base path is outside the server's storage boundary)."""
        instant, paths, base_path, tbl_id = self.store.run_write(self._rollback_in, db, tbl, ts, force)
        # recorded either way; the files stay where the server may not delete
        paths = self.files.delete_files(base_path, paths, "delete rolled-back files under", tbl_id) if paths else []
        run_post_commit_hooks(self.hooks, db, tbl)
        return instant, paths

    def _rollback_in(self, conn: Connection, db: str, tbl: str, ts: str,
                     force: bool) -> tuple[Instant, list[str], str, int]:
        """(rollback instant, marker paths, base path, table id) after the rollback is recorded."""
        ref = self.tables.table_ref(conn, db, tbl, lock=True)
        row = self.instants.row(conn, ref.tbl_id, ts, lock=True)
        self._check_failed(row, force)
        if row.action == SAVEPOINT:  # a savepoint that never completed: removed, as Hudi deletes its files
            delete_savepoint(conn, ref, ts, self.clock_ms())
            return instant_from_row(row), [], ref.base_path, ref.tbl_id
        markers = list(conn.execute(select(S.instant_markers.c.path).where(
            S.instant_markers.c.tbl_id == ref.tbl_id, S.instant_markers.c.ts == ts)).scalars())
        deleted: dict[str, list[str]] = {}
        for path in markers:
            partition, name = split_path(path)
            deleted.setdefault(partition, []).append(name)
        rb_ts, rb_id = add_rollback_instant(conn, ref, row, deleted, self.times, self.clock_ms)
        if row.action in SERVICES and row.state == INFLIGHT and row.start_ts != 0:
            self._back_to_requested(conn, ref, row)
        else:
            self.listing.forget_instants(conn, ref, [ts])
        add_version(conn, ref.tbl_id, rb_id, self.clock_ms())
        rb = self.instants.row(conn, ref.tbl_id, rb_ts, "rollback")
        return instant_from_row(rb), markers, ref.base_path, ref.tbl_id

    def _back_to_requested(self, conn: Connection, ref: HudiTableRef, row: Row) -> None:
        """A failed attempt of a scheduled service: its markers and inflight state go, its plan stays
        (Hudi's revertInstantFromInflightToRequested), waiting for an executor again."""
        m, mk = S.instant_meta, S.instant_markers
        conn.execute(delete(m).where(m.c.tbl_id == ref.tbl_id, m.c.ts == row.ts, m.c.action == row.action,
                                     m.c.state == INFLIGHT))
        conn.execute(delete(mk).where(mk.c.tbl_id == ref.tbl_id, mk.c.ts == row.ts))
        conn.execute(update(S.instant).where(S.instant.c.instant_id == row.instant_id).values(
            state=REQUESTED, start_ts=self.clock_ms(), duration=PLAN_WAITS))

    def _check_failed(self, row: Row, force: bool) -> None:
        if row.state == COMPLETED:
            raise InvalidOperation(f"Instant {row.ts}.{row.action} is completed; only failed "
                                   "(pending) instants are rolled back")
        if not force and waiting_plan(row.action, row.state):
            raise InvalidOperation(
                f"Instant {row.ts}.{row.action} is a plan waiting for an executor, not a failed write: any "
                "executor runs it (table-services run); the server rolls it back itself once it can no longer run")
        if not force and row.start_ts + row.duration * 1000 >= self.clock_ms():
            raise InvalidOperation(
                f"Instant {row.ts}.{row.action} is still heartbeating; it is rolled back only after "
                f"its heartbeat expires ({row.duration} s)")
