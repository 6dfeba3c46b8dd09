"""Log compaction of merge-on-read tables, scheduled by the server (issue 38; Hudi 0.13+'s
`logcompaction`): on a table whose config says `hoodie.log.compaction.inline=true` or
`hoodie.log.compaction.enable=true` (Hudi's defaults are false; table_config.log_compaction_enabled;
a table whose timeline Hudi's own writers keep gets none), when a deltacommit completes (not a log compaction's own),
the same transaction requests a `logcompaction` instant whose plan (a HoodieCompactionPlan, as
Hudi's HoodieLogCompactionPlanGenerator writes it, in `<ts>.logcompaction.requested`: its strategy
names Hudi's LogCompactionExecutionHelper, preserveHoodieMetadata true) names every
latest file slice with at least `hoodie.log.compaction.blocks.threshold` (5) log blocks as a reader
merges them, but those of file groups a pending compaction, clustering or log compaction plans (as
Hudi's generator leaves them out). Precedence as Hudi's inline table services: a compaction due is
scheduled first (compaction_schedule.py), then a log compaction of the slices it left.

Blocks are counted as Hudi's planner counts them (HoodieLogCompactionPlanGenerator: the blocks
its log scanner queues over all the slice's log files): every data and delete block of the slice,
but a completed log compaction's blocks stand in for all the blocks of the instants it merged
(counted once: its own data and delete block), as they do for a reader. The server reads no log
file: a file's blocks come from the write stats of the commit that wrote it
(commit_metadata.log_blocks: a data block when it wrote records, a delete block when it deleted
keys), which is exact for the pipeline's files (at most one data and one delete block per file and
commit, log compactions' too). For other writers' files it can undercount: a data block split by
size counts one, and blocks appended to an existing log file by later commits (Hudi 0.x writers,
table version 6) are not counted. A slice with at least `threshold` log files reaches it without
reading any commit (each file holds a block); the others read the commits of their files since
their latest log compaction. A log compaction's file stands in for every log file before it (a
write to a planned file group retires the plan, service_plans.py).

The executor (pipeline/log_compaction.py) writes one new log file per slice holding the merged
records (a data block, and a delete block when keys were deleted) with the COMPACTED_BLOCK_TIMES
header, and completes the instant as a `deltacommit` (operationType LOG_COMPACT) through the commit
path: its conflict check is by file group, as a compaction's.
"""

from __future__ import annotations

from sqlalchemy import Connection, select

from hudi_format.commit_metadata import CompactionOperation, log_blocks, log_compaction_plan, parse_compaction_plan
from hudi_format.config_keys import LOG_COMPACT_BLOCKS_THRESHOLD, TIMELINE_SOURCE, default_of
from hudi_format.errors import InvalidMetadata
from hudi_format.file_slice import FileInfo, FileSlice, build_slices
from hudi_format.instant import COMPLETED, REQUESTED
from hudi_format.table_config import MOR, log_compaction_enabled
from store.db import schema as S
from store.hudi.tables import HudiTableRef
from store.hudi.timeline.compaction_schedule import COMPACTION, _under_clustering, live_files
from store.hudi.timeline.instant_times import InstantTimes
from store.hudi.timeline.instants import request_plan

LOG_COMPACTION = "logcompaction"


def enabled(ref: HudiTableRef) -> bool:
    """A merge-on-read table whose config turns log compaction on (`hoodie.log.compaction.inline` or
    `hoodie.log.compaction.enable`) and whose commits go through the server."""
    props = ref.config.properties or {}
    return ref.config.table_type == MOR and log_compaction_enabled(props) and not props.get(TIMELINE_SOURCE)


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


def _since_compacted(s: FileSlice, compacted_by: set[str]) -> list[FileInfo]:
    """The slice's log files in order from its latest log compaction's file (all when none)."""
    logs = sorted(s.log_files, key=lambda f: f.log_version or 0)
    last = max((n for n, f in enumerate(logs) if f.commit_ts in compacted_by), default=0)
    return logs[last:]


def commit_blocks(conn: Connection, tbl_id: int, instants: set[str]) -> dict[tuple[str, str], int]:
    """(partition, file name) -> log blocks, from the write stats of the completed `instants`."""
    m = S.instant_meta
    out: dict[tuple[str, str], int] = {}
    todo = sorted(instants)
    for n in range(0, len(todo), 500):
        for r in conn.execute(select(m.c.data).where(m.c.tbl_id == tbl_id, m.c.state == COMPLETED,
                                                     m.c.ts.in_(todo[n:n + 500]))):
            try:
                out.update(log_blocks(bytes(r.data or b"")))
            except InvalidMetadata:
                continue  # (its files count one block each)
    return out


def block_count(s: FileSlice, compacted_by: set[str], blocks: dict[tuple[str, str], int]) -> int:
    """A slice's log blocks as Hudi's log compaction planner counts them: those of its log files
    from its latest log compaction's file on (whose blocks stand in for all before), each file's
    as `blocks` says (one when it does not know the file)."""
    return sum(blocks.get((f.partition_path, f.name), 1) for f in _since_compacted(s, compacted_by))


def operations(conn: Connection, ref: HudiTableRef) -> list[CompactionOperation]:
    """The latest file slices reaching the blocks threshold, but those of file groups under a
    pending compaction, clustering or log compaction (and replaced ones)."""
    skip = (_under_clustering(conn, ref.tbl_id) | planned_groups(conn, ref.tbl_id, COMPACTION)
            | planned_groups(conn, ref.tbl_id, LOG_COMPACTION))
    files = live_files(conn, ref.tbl_id, skip)
    done = completed_log_compactions(conn, ref.tbl_id)
    threshold = blocks_threshold(ref)
    slices = [s for s in build_slices(files) if s.log_files]
    # a file holds at least one block: only slices with fewer files than the threshold read commits
    short = [s for s in slices if len(_since_compacted(s, done)) < threshold]
    blocks = commit_blocks(conn, ref.tbl_id, {f.commit_ts for s in short for f in _since_compacted(s, done)})
    return [CompactionOperation(s.partition_path, s.file_id, s.base_instant,
                                s.base_file.name if s.base_file else None,
                                [x.name for x in sorted(s.log_files, key=lambda f: f.log_version or 0)],
                                (s.base_file.size or 0) if s.base_file else 0, sum(x.size or 0 for x in s.log_files))
            for s in slices if block_count(s, done, blocks) >= threshold]


def schedule_if_due(conn: Connection, ref: HudiTableRef, times: InstantTimes, now_ms: int) -> str | None:
    """Request a log compaction of the slices that reach the threshold (in the caller's
    transaction); its instant time, None when none does."""
    if not enabled(ref):
        return None
    ops = operations(conn, ref)
    if not ops:
        return None
    return request_plan(conn, ref.tbl_id, times, LOG_COMPACTION, log_compaction_plan(ops), now_ms)
