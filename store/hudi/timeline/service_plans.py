"""Plans of the table services the server schedules (compaction, log compaction, clustering) while
they wait for an executor (REQUESTED). A waiting plan is not a failed write: it never expires (no
heartbeat applies to it; `get_failed_instants` never lists it, `rollback_instant` refuses it), and
any executor may claim it at any age.

A plan that can no longer run as planned is rolled back by the server, in the transaction that
finds it so, under the table's row lock (so of two executors only one acts): a write completed
since it was requested touched a file group it names (a file in the planned slice or a newer one
that the plan does not name, or the group replaced). Its executor would only lose the commit
conflict check at the end. It is looked for when a commit completes (for the plans naming a file
group the commit touched) and when an executor claims a plan (`claim`: the claim is then refused
with InvalidOperation); either way the plan leaves the timeline through a completed rollback
instant (it wrote no files) and a new one is scheduled when due.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass

from sqlalchemy import Connection, Row, select

from hudi_format.commit_metadata import (
    parse_clustering_plan,
    parse_compaction_plan,
    rollback_metadata,
    rollback_plan,
)
from hudi_format.config_keys import CLUSTERING_SORT_COLUMNS
from hudi_format.errors import InvalidMetadata
from hudi_format.file_slice import parse_file_name
from hudi_format.instant import COMPLETED, INFLIGHT, REQUESTED, Instant
from store.db import schema as S
from store.db.database import Store
from store.db.dialect import pair_chunks, pairs_in
from store.errors import InvalidOperation
from store.hudi.file_listing import FileListing, add_version
from store.hudi.tables import HudiTableRef, HudiTables
from store.hudi.timeline import clustering_schedule, compaction_schedule, log_compaction_schedule
from store.hudi.timeline.instant_times import InstantTimes
from store.hudi.timeline.instants import SERVICES, Instants, insert_instant, put_meta

Group = tuple[str, str]  # (partition path, file id)
CHUNK = 500


class PlanRolledBack(InvalidOperation):
    """A claim refused because the plan could no longer run: the server rolled it back."""


@dataclass(frozen=True)
class Planned:
    """What a plan names of one file group: its slice's base instant and file names."""
    base_instant: str
    names: frozenset[str]


def planned_groups(action: str, data: bytes | None) -> dict[Group, Planned] | None:
    """The file groups a compaction's, log compaction's or clustering's plan names; None for a plan
    that does not parse (nothing is judged of it)."""
    out: dict[Group, Planned] = {}
    try:
        if action in (compaction_schedule.COMPACTION, log_compaction_schedule.LOG_COMPACTION):
            for o in parse_compaction_plan(data):
                names = frozenset(([o.base_file] if o.base_file else []) + list(o.log_files))
                out[(o.partition_path, o.file_id)] = Planned(o.base_instant, names)
            return out
        for g in parse_clustering_plan(data, CLUSTERING_SORT_COLUMNS).groups:
            for s in g.slices:
                files = ([s.base_file] if s.base_file else []) + list(s.log_files)
                try:
                    base = parse_file_name(os.path.basename(files[0]))[1] if files else None
                except ValueError:
                    base = None
                if base is not None:  # (a slice naming no readable file is not judged)
                    out[(s.partition_path, s.file_id)] = Planned(base, frozenset(os.path.basename(n) for n in files))
        return out
    except (InvalidMetadata, KeyError, TypeError, ValueError):
        return None


def stale_reason(conn: Connection, tbl_id: int, row: Row, groups: dict[Group, Planned]) -> str | None:
    """Why plan `row` can no longer run as planned (None: it can)."""
    if not groups:
        return None
    partitions = sorted({p for p, _ in groups})
    rg, f = S.replaced_file_groups, S.files
    for start in range(0, len(partitions), CHUNK):
        part = partitions[start:start + CHUNK]
        for p, fid, by in conn.execute(select(rg.c.partition_path, rg.c.file_id, rg.c.replace_ts).where(
                rg.c.tbl_id == tbl_id, rg.c.partition_path.in_(part))):
            if (p, fid) in groups:
                return f"file group {fid} in {p!r} was replaced by {by}"
    for chunk in pair_chunks(groups):  # the planned groups' live files only (ix_files_live)
        for r in conn.execute(select(f.c.partition_path, f.c.file_id, f.c.name, f.c.base_instant, f.c.is_log,
                                     f.c.created_ts).where(
                f.c.tbl_id == tbl_id, pairs_in(conn.dialect.name, f.c.partition_path, f.c.file_id, chunk),
                f.c.is_deleted.is_(False))):
            planned = groups.get((r.partition_path, r.file_id))
            if planned is None or r.name in planned.names or r.base_instant < planned.base_instant:
                continue
            if row.action == compaction_schedule.COMPACTION and r.is_log and r.base_instant == row.ts:
                continue  # written on the compaction's own slice: it joins (commit.py check_conflicts)
            return (f"{r.created_ts} wrote {r.name} to file group {r.file_id} in {r.partition_path!r} "
                    "after the plan was made")
    return None


def add_rollback_instant(conn: Connection, ref: HudiTableRef, row: Row, deleted: dict[str, list[str]],
                         times: InstantTimes, clock_ms: Callable[[], int]) -> tuple[str, int]:
    """A completed rollback instant of `row` with its plan and metadata: (its time, its id)."""
    rb_ts = times.advance(conn, ref.tbl_id)
    now = clock_ms()
    rb_id = insert_instant(
        conn, tbl_id=ref.tbl_id, ts=rb_ts, action="rollback", state=COMPLETED, requested_ms=now,
        requested_ts=rb_ts, completion_ts=times.advance(conn, ref.tbl_id), duration=row.duration,
        start_ts=now)
    # Avro, as Hudi writes them, so Java readers of the mirrored timeline parse them
    meta = rollback_metadata(rb_ts, row.ts, row.action, deleted, ref.base_path)
    plan = rollback_plan(row.ts, row.action, deleted, ref.base_path)
    put_meta(conn, ref.tbl_id, rb_ts, "rollback", REQUESTED, plan)
    put_meta(conn, ref.tbl_id, rb_ts, "rollback", INFLIGHT, b"")
    put_meta(conn, ref.tbl_id, rb_ts, "rollback", COMPLETED, meta)
    return rb_ts, rb_id


class ServicePlans:
    """Stale plans rolled back (in a commit's transaction: `retire_stale`; at a claim: `claim`)."""

    def __init__(self, store: Store, tables: HudiTables, instants: Instants, times: InstantTimes,
                 listing: FileListing):
        self.store = store
        self.tables = tables
        self.instants = instants
        self.times = times
        self.clock_ms = times.clock_ms
        self.listing = listing

    def _retire(self, conn: Connection, ref: HudiTableRef, row: Row) -> str:
        """Roll back waiting plan `row` (it wrote nothing): the rollback instant's time."""
        rb_ts, rb_id = add_rollback_instant(conn, ref, row, {}, self.times, self.clock_ms)
        self.listing.forget_instants(conn, ref, [row.ts])
        add_version(conn, ref.tbl_id, rb_id, self.clock_ms())
        return rb_ts

    def _schedule_again(self, conn: Connection, ref: HudiTableRef, action: str) -> str | None:
        schedule = {compaction_schedule.COMPACTION: compaction_schedule,
                    log_compaction_schedule.LOG_COMPACTION: log_compaction_schedule}.get(action, clustering_schedule)
        return schedule.schedule_if_due(conn, ref, self.times, self.clock_ms())

    def retire_stale(self, conn: Connection, ref: HudiTableRef, touched: set[Group] | None) -> set[str]:
        """In a commit's transaction (the table's row locked): roll back the waiting plans naming a
        file group in `touched` (None: any) that can no longer run; the services rolled back."""
        if touched is not None and not touched:
            return set()
        i, m = S.instant, S.instant_meta
        waiting = conn.execute(select(i).where(i.c.tbl_id == ref.tbl_id, i.c.state == REQUESTED,
                                               i.c.action.in_(SERVICES)).order_by(i.c.ts)).all()
        retired = set()
        for row in waiting:
            data = conn.execute(select(m.c.data).where(m.c.tbl_id == ref.tbl_id, m.c.ts == row.ts,
                                                       m.c.action == row.action, m.c.state == REQUESTED)).scalar()
            groups = planned_groups(row.action, data)
            if not groups or (touched is not None and not touched & groups.keys()):
                continue
            if stale_reason(conn, ref.tbl_id, row, groups) is not None:
                self._retire(conn, ref, row)
                retired.add(row.action)
        return retired

    def claim(self, db: str, tbl: str, ts: str, action: str, profile: bytes | None) -> Instant:
        """REQUESTED -> INFLIGHT of a service instant; a plan that can no longer run is rolled back
        instead (a new one scheduled when due) and the claim refused (PlanRolledBack, after the
        transaction; the caller runs the post-commit hooks then)."""
        outcome = self.store.run_write(self._claim_in, db, tbl, ts, action, profile)
        if isinstance(outcome, str):
            raise PlanRolledBack(outcome)
        return outcome

    def _claim_in(self, conn: Connection, db: str, tbl: str, ts: str, action: str,
                  profile: bytes | None) -> Instant | str:
        ref = self.tables.table_ref(conn, db, tbl, lock=True)  # as commits: one of two claims acts
        row = self.instants.row(conn, ref.tbl_id, ts, action, lock=True)
        if row.state == REQUESTED and row.action in SERVICES:
            m = S.instant_meta
            data = conn.execute(select(m.c.data).where(m.c.tbl_id == ref.tbl_id, m.c.ts == ts,
                                                       m.c.action == row.action, m.c.state == REQUESTED)).scalar()
            reason = stale_reason(conn, ref.tbl_id, row, planned_groups(row.action, data) or {})
            if reason is not None:
                rb_ts = self._retire(conn, ref, row)
                again = self._schedule_again(conn, ref, row.action)
                return (f"{row.action} {ts} of {ref.db_name}.{ref.name} can no longer run as planned ({reason}); "
                        f"the server rolled it back (rollback {rb_ts})"
                        + (f" and scheduled {row.action} {again} instead" if again else ""))
        return self.instants.inflight_in(conn, ref, row, profile)
