"""Log compaction of merge-on-read tables, scheduled by the server (issue 38; Hudi 0.13+'s
`logcompaction`): on a table whose config says `hoodie.log.compaction.inline=true` (Hudi's default
is false; a table whose timeline Hudi's own writers keep gets none), when a deltacommit completes,
the same transaction requests a `logcompaction` instant whose plan (a HoodieCompactionPlan, as
Hudi's HoodieLogCompactionPlanGenerator writes it, in `<ts>.logcompaction.requested`: its strategy
names Hudi's LogCompactionExecutionHelper, preserveHoodieMetadata true) names every
latest file slice with at least `hoodie.log.compaction.blocks.threshold` (5) log blocks as a reader
merges them, but those of file groups a pending compaction, clustering or log compaction plans (as
Hudi's generator leaves them out). Precedence as Hudi's inline table services: a compaction due is
scheduled first (compaction_schedule.py), then a log compaction of the slices it left.

The server counts a slice's blocks by its log files (it reads no log file in a commit): the
pipeline writes one log file per file group and deltacommit, which Hudi counts as one block, or two
when the write also deleted keys (data and delete block); a completed log compaction's file stands
in for the log files before it (all of them: a write to a planned file group retires the plan,
service_plans.py), as its block does for a reader.

The executor (pipeline/log_compaction.py) writes one new log file per slice holding the merged
records (a data block, and a delete block when keys were deleted) with the COMPACTED_BLOCK_TIMES
header, and completes the instant as a `deltacommit` (operationType LOG_COMPACT) through the commit
path: its conflict check is by file group, as a compaction's.
"""

from __future__ import annotations

from sqlalchemy import Connection, select

from hudi_format.commit_metadata import CompactionOperation, log_compaction_plan, parse_compaction_plan
from hudi_format.config_keys import LOG_COMPACT_BLOCKS_THRESHOLD, LOG_COMPACT_INLINE, TIMELINE_SOURCE, default_of
from hudi_format.errors import InvalidMetadata
from hudi_format.file_slice import FileSlice, build_slices
from hudi_format.instant import COMPLETED, REQUESTED
from hudi_format.table_config import MOR
from store.db import schema as S
from store.hudi.tables import HudiTableRef
from store.hudi.timeline.compaction_schedule import COMPACTION, _under_clustering, live_files
from store.hudi.timeline.instant_times import InstantTimes
from store.hudi.timeline.instants import request_plan

LOG_COMPACTION = "logcompaction"


def enabled(ref: HudiTableRef) -> bool:
    props = ref.config.properties or {}
    return (ref.config.table_type == MOR and (props.get(LOG_COMPACT_INLINE) or "").strip().lower() == "true"
            and not props.get(TIMELINE_SOURCE))


def blocks_threshold(ref: HudiTableRef) -> int:
    raw = (ref.config.properties or {}).get(LOG_COMPACT_BLOCKS_THRESHOLD) or default_of(LOG_COMPACT_BLOCKS_THRESHOLD)
    try:
        return max(1, int(raw))
    except ValueError:
        return int(default_of(LOG_COMPACT_BLOCKS_THRESHOLD))


def _pending_plans(conn: Connection, tbl_id: int, action: str) -> list[tuple[str, bytes]]:
    """(instant, plan) of the `action` plans whose instant is pending."""
    i, m = S.instant, S.instant_meta
    q = select(m.c.ts, m.c.data).join(i, (i.c.tbl_id == m.c.tbl_id) & (i.c.ts == m.c.ts)).where(
        m.c.tbl_id == tbl_id, m.c.action == action, m.c.state == REQUESTED, i.c.state != COMPLETED,
        i.c.action == action)
    return [(r.ts, bytes(r.data or b"")) for r in conn.execute(q)]


def planned_groups(conn: Connection, tbl_id: int, action: str) -> set[tuple[str, str]]:
    """File groups a pending compaction's or log compaction's plan names."""
    out = set()
    for _ts, data in _pending_plans(conn, tbl_id, action):
        try:
            out |= {(o.partition_path, o.file_id) for o in parse_compaction_plan(data)}
        except InvalidMetadata:
            continue
    return out


def completed_log_compactions(conn: Connection, tbl_id: int) -> set[str]:
    """Instant times of the table's completed log compactions (completed as deltacommits; their
    plans are not read)."""
    i, m = S.instant, S.instant_meta
    return set(conn.execute(select(m.c.ts).join(i, (i.c.tbl_id == m.c.tbl_id) & (i.c.ts == m.c.ts)).where(
        m.c.tbl_id == tbl_id, m.c.action == LOG_COMPACTION, m.c.state == REQUESTED,
        i.c.state == COMPLETED)).scalars())


def block_count(s: FileSlice, compacted_by: set[str]) -> int:
    """A slice's log blocks as the server counts them: its log files, those before its latest
    log compaction's file replaced by it."""
    logs = sorted(s.log_files, key=lambda f: f.log_version or 0)
    last = max((n for n, f in enumerate(logs) if f.commit_ts in compacted_by), default=None)
    return len(logs) if last is None else len(logs) - last


def operations(conn: Connection, ref: HudiTableRef) -> list[CompactionOperation]:
    """The latest file slices reaching the blocks threshold, but those of file groups under a
    pending compaction, clustering or log compaction (and replaced ones)."""
    skip = (_under_clustering(conn, ref.tbl_id) | planned_groups(conn, ref.tbl_id, COMPACTION)
            | planned_groups(conn, ref.tbl_id, LOG_COMPACTION))
    files = live_files(conn, ref.tbl_id, skip)
    done = completed_log_compactions(conn, ref.tbl_id)
    threshold = blocks_threshold(ref)
    return [CompactionOperation(s.partition_path, s.file_id, s.base_instant,
                                s.base_file.name if s.base_file else None,
                                [x.name for x in sorted(s.log_files, key=lambda f: f.log_version or 0)])
            for s in build_slices(files) if s.log_files and block_count(s, done) >= threshold]


def schedule_if_due(conn: Connection, ref: HudiTableRef, times: InstantTimes, now_ms: int) -> str | None:
    """Request a log compaction of the slices that reach the threshold (in the caller's
    transaction); its instant time, None when none does."""
    if not enabled(ref):
        return None
    ops = operations(conn, ref)
    if not ops:
        return None
    return request_plan(conn, ref.tbl_id, times, LOG_COMPACTION, log_compaction_plan(ops), now_ms)
