"""Compaction of merge-on-read tables, scheduled by the server (issue 38): on a table whose config
says `hoodie.compact.inline=true` (the pipeline's merge-on-read tables; a table Hudi's own writers
write, with nobody to run the plans, gets none), when a deltacommit completes, none is pending and
the table's trigger says so (Hudi's names and defaults): `hoodie.compact.inline.trigger.strategy`
NUM_COMMITS (the default; NUM_COMMITS_AFTER_LAST_REQUEST counts the same here, as no compaction is
pending) once `hoodie.compact.inline.max.delta.commits` (5) deltacommits completed since the last
compaction (by instant time), TIME_ELAPSED once `hoodie.compact.inline.max.delta.seconds` (3600)
passed since the last compaction (or the first deltacommit), NUM_AND_TIME both, NUM_OR_TIME either.
The same transaction then requests a compaction instant whose plan (a HoodieCompactionPlan, as
Hudi's scheduler writes it) names every latest file slice whose log files hold at least
`hoodie.compaction.logfile.size.threshold` bytes (0: every slice with logs; Hudi's
LogFileSizeBasedCompactionStrategy). The storage mirror writes `<ts>.compaction.requested`; whoever
runs it (the pipeline, inline before its next write) completes it as a `commit`.

A scheduled plan is no write: it waits for an executor however long (PLAN_WAITS), and one that can
no longer run is rolled back by the server (service_plans.py). Its executor's claim lives by
heartbeats (instants.py); a failed attempt is rolled back to REQUESTED and its plan run again
(rollback.py).
"""

from __future__ import annotations

from sqlalchemy import Connection, func, select

from hudi_format.commit_metadata import CompactionOperation, compaction_plan, parse_clustering_plan
from hudi_format.config_keys import (
    CLUSTERING_SORT_COLUMNS,
    COMPACT_INLINE,
    COMPACT_LOGFILE_SIZE_THRESHOLD,
    COMPACT_MAX_DELTA_COMMITS,
    COMPACT_MAX_DELTA_SECONDS,
    COMPACT_TRIGGER_STRATEGY,
    COMPACTION_TRIGGERS,
    default_of,
)
from hudi_format.file_slice import FileInfo, build_slices
from hudi_format.instant import COMPLETED, REQUESTED, parse_instant
from hudi_format.table_config import MOR
from store.db import schema as S
from store.hudi.tables import HudiTableRef
from store.hudi.timeline.instant_times import InstantTimes
from store.hudi.timeline.instants import request_plan

COMPACTION = "compaction"
CLUSTERING = "clustering"


def _setting(ref: HudiTableRef, key: str, least: int) -> int:
    """A whole-number setting of the table (its default when missing or not a number)."""
    raw = (ref.config.properties or {}).get(key) or default_of(key)
    try:
        return max(least, int(raw))
    except ValueError:
        return int(default_of(key))


def max_delta_commits(ref: HudiTableRef) -> int:
    return _setting(ref, COMPACT_MAX_DELTA_COMMITS, 1)


def trigger_strategy(ref: HudiTableRef) -> str:
    raw = ((ref.config.properties or {}).get(COMPACT_TRIGGER_STRATEGY) or "").strip().upper()
    return raw if raw in COMPACTION_TRIGGERS else default_of(COMPACT_TRIGGER_STRATEGY)


def due(conn: Connection, ref: HudiTableRef, now_ms: int) -> bool:
    """A merge-on-read table compacted inline, with no pending compaction, whose trigger is met."""
    props = ref.config.properties or {}
    if ref.config.table_type != MOR or (props.get(COMPACT_INLINE) or "").strip().lower() != "true":
        return False
    i = S.instant
    pending = conn.execute(select(i.c.ts).where(
        i.c.tbl_id == ref.tbl_id, i.c.action == COMPACTION, i.c.state != COMPLETED).limit(1)).first()
    if pending is not None:
        return False
    last = conn.execute(select(func.max(i.c.ts)).where(
        i.c.tbl_id == ref.tbl_id, i.c.action == "commit", i.c.state == COMPLETED)).scalar()
    q = select(func.count(), func.min(i.c.ts)).select_from(i).where(
        i.c.tbl_id == ref.tbl_id, i.c.action == "deltacommit", i.c.state == COMPLETED)
    if last is not None:
        q = q.where(i.c.ts > last)
    count, first = conn.execute(q).one()
    by_count = int(count or 0) >= max_delta_commits(ref)
    since = last or first
    by_time = since is not None and \
        now_ms - parse_instant(since) >= 1000 * _setting(ref, COMPACT_MAX_DELTA_SECONDS, 0)
    strategy = trigger_strategy(ref)
    if strategy == "TIME_ELAPSED":
        return by_time
    if strategy == "NUM_AND_TIME":
        return by_count and by_time
    if strategy == "NUM_OR_TIME":
        return by_count or by_time
    return by_count


def _under_clustering(conn: Connection, tbl_id: int) -> set[tuple[str, str]]:
    """File groups a pending clustering's plan replaces (clustering_schedule.py)."""
    i, m = S.instant, S.instant_meta
    plans = conn.execute(select(m.c.data).join(i, (i.c.tbl_id == m.c.tbl_id) & (i.c.ts == m.c.ts)).where(
        m.c.tbl_id == tbl_id, m.c.action == CLUSTERING, m.c.state == REQUESTED, i.c.action == CLUSTERING,
        i.c.state != COMPLETED)).scalars()
    return {(s.partition_path, s.file_id) for data in plans
            for g in parse_clustering_plan(data, CLUSTERING_SORT_COLUMNS).groups for s in g.slices}


def live_files(conn: Connection, tbl_id: int, skip: set[tuple[str, str]]) -> list[FileInfo]:
    """The table's live files, but those of replaced file groups and of the groups in `skip`."""
    f, rg = S.files, S.replaced_file_groups
    skip = skip | {(r.partition_path, r.file_id) for r in conn.execute(
        select(rg.c.partition_path, rg.c.file_id).where(rg.c.tbl_id == tbl_id))}
    return [FileInfo(r.partition_path, r.file_id, r.name, r.size, r.base_instant, bool(r.is_log), r.log_version,
                     r.created_ts)
            for r in conn.execute(select(f.c.partition_path, f.c.file_id, f.c.name, f.c.size, f.c.base_instant,
                                         f.c.is_log, f.c.log_version, f.c.created_ts).where(
                f.c.tbl_id == tbl_id, f.c.is_deleted.is_(False)))
            if (r.partition_path, r.file_id) not in skip]


def operations(conn: Connection, ref: HudiTableRef) -> list[CompactionOperation]:
    """The latest file slices with log files (replaced file groups and those a pending clustering
    replaces left out)."""
    files = live_files(conn, ref.tbl_id, _under_clustering(conn, ref.tbl_id))
    threshold = _setting(ref, COMPACT_LOGFILE_SIZE_THRESHOLD, 0)
    return [CompactionOperation(s.partition_path, s.file_id, s.base_instant,
                                s.base_file.name if s.base_file else None, [x.name for x in s.log_files],
                                (s.base_file.size or 0) if s.base_file else 0, sum(x.size or 0 for x in s.log_files))
            for s in build_slices(files) if s.log_files and sum(x.size or 0 for x in s.log_files) >= threshold]


def schedule_if_due(conn: Connection, ref: HudiTableRef, times: InstantTimes, now_ms: int) -> str | None:
    """Request a compaction when one is due (in the caller's transaction); its instant time."""
    if not due(conn, ref, now_ms):
        return None
    ops = operations(conn, ref)
    if not ops:
        return None
    return request_plan(conn, ref.tbl_id, times, COMPACTION, compaction_plan(ops), now_ms)
