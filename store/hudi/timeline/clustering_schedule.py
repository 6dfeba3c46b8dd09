"""Clustering, scheduled by the server (issue 38): on a table whose config says
`hoodie.clustering.inline=true` (Hudi's default is false; a table whose timeline Hudi's own writers
keep gets none), when a write commit completes and `hoodie.clustering.inline.max.commits` (4) write
commits completed since the table's last clustering, with none pending, the same transaction
requests a `clustering` instant (`<ts>.replacecommit.requested` on storage, table version 6) whose
plan (HoodieRequestedReplaceMetadata with a HoodieClusteringPlan, as Hudi's size-based planner
writes it) groups, per partition, the latest file slices whose base file is smaller than
`hoodie.clustering.plan.strategy.small.file.limit`: each group up to
`hoodie.clustering.plan.strategy.target.file.max.bytes` per output file group, sorted by
`hoodie.clustering.plan.strategy.sort.columns` when given. A partition with one small slice is
left alone unless sort columns are given. File groups a pending compaction reads are left out (and
a compaction scheduled later leaves out those a pending clustering replaces).
The pipeline runs it (inline before its next write, or `table-services run`) and completes it as a
`replacecommit` (operationType CLUSTER).
"""

from __future__ import annotations

from sqlalchemy import Connection, func, select

from hudi_format.commit_metadata import (
    ClusteringGroup,
    ClusteringPlan,
    ClusteringSlice,
    clustering_plan,
    parse_compaction_plan,
)
from hudi_format.config_keys import (
    CLUSTERING_INLINE,
    CLUSTERING_MAX_COMMITS,
    CLUSTERING_SMALL_FILE_LIMIT,
    CLUSTERING_SORT_COLUMNS,
    CLUSTERING_TARGET_FILE_MAX_BYTES,
    TIMELINE_SOURCE,
    default_of,
)
from hudi_format.file_slice import build_slices
from hudi_format.instant import COMPLETED, REQUESTED
from store.db import schema as S
from store.hudi.file_locations import locator
from store.hudi.tables import HudiTableRef
from store.hudi.timeline.compaction_schedule import CLUSTERING, COMPACTION, live_files
from store.hudi.timeline.instant_times import InstantTimes
from store.hudi.timeline.instants import request_plan

LOG_COMPACTION = "logcompaction"

WRITE_COMMITS = ("commit", "deltacommit", "replacecommit")


def _number(ref: HudiTableRef, key: str, least: int) -> int:
    raw = (ref.config.properties or {}).get(key) or default_of(key)
    try:
        return max(least, int(raw))
    except ValueError:
        return int(default_of(key))


def enabled(ref: HudiTableRef) -> bool:
    props = ref.config.properties or {}
    return (props.get(CLUSTERING_INLINE) or "").strip().lower() == "true" and not props.get(TIMELINE_SOURCE)


def clusterings(conn: Connection, tbl_id: int) -> list[str]:
    """Instant times of the table's clusterings (pending or completed), by their requested plans."""
    m = S.instant_meta
    return list(conn.execute(select(m.c.ts).where(
        m.c.tbl_id == tbl_id, m.c.action == CLUSTERING, m.c.state == REQUESTED).order_by(m.c.ts)).scalars())


def due(conn: Connection, ref: HudiTableRef) -> bool:
    """Clustering on, none pending, and enough write commits since the last one."""
    if not enabled(ref):
        return False
    i = S.instant
    if conn.execute(select(i.c.ts).where(i.c.tbl_id == ref.tbl_id, i.c.action == CLUSTERING,
                                         i.c.state != COMPLETED).limit(1)).first() is not None:
        return False
    done = clusterings(conn, ref.tbl_id)
    q = select(func.count()).select_from(i).where(
        i.c.tbl_id == ref.tbl_id, i.c.action.in_(WRITE_COMMITS), i.c.state == COMPLETED)
    if done:
        q = q.where(i.c.ts > done[-1])
    return int(conn.execute(q).scalar() or 0) >= _number(ref, CLUSTERING_MAX_COMMITS, 1)


def _under_compaction(conn: Connection, tbl_id: int) -> set[tuple[str, str]]:
    """File groups a pending compaction or log compaction plans (Hudi's clustering planner leaves
    both out)."""
    i, m = S.instant, S.instant_meta
    plans = conn.execute(select(m.c.data).join(i, (i.c.tbl_id == m.c.tbl_id) & (i.c.ts == m.c.ts)).where(
        m.c.tbl_id == tbl_id, m.c.action.in_((COMPACTION, LOG_COMPACTION)), m.c.state == REQUESTED,
        i.c.action == m.c.action, i.c.state != COMPLETED)).scalars()
    return {(o.partition_path, o.file_id) for data in plans for o in parse_compaction_plan(data)}


def plan(conn: Connection, ref: HudiTableRef) -> ClusteringPlan:
    """The groups of small latest file slices per partition (replaced file groups and those under a
    pending compaction left out)."""
    files = live_files(conn, ref.tbl_id, _under_compaction(conn, ref.tbl_id))
    small, target = _number(ref, CLUSTERING_SMALL_FILE_LIMIT, 0), _number(ref, CLUSTERING_TARGET_FILE_MAX_BYTES, 1)
    sort = [c.strip() for c in ((ref.config.properties or {}).get(CLUSTERING_SORT_COLUMNS) or "").split(",")
            if c.strip()]
    where = locator(ref) or _in_base_path(ref)
    by_partition: dict[str, list[ClusteringSlice]] = {}
    for s in build_slices(files):
        if s.base_file is None or s.base_file.size >= small:
            continue
        size = s.base_file.size + sum(x.size for x in s.log_files)
        by_partition.setdefault(s.partition_path, []).append(ClusteringSlice(
            s.partition_path, s.file_id, where(s.partition_path, s.base_file.name),
            [where(s.partition_path, x.name) for x in s.log_files], size))
    groups = []
    for p in sorted(by_partition):
        slices = sorted(by_partition[p], key=lambda x: (-x.size, x.file_id))
        if len(slices) < 2 and not sort:
            continue
        total = sum(x.size for x in slices)
        groups.append(ClusteringGroup(slices, max(1, -(-total // target))))
    return ClusteringPlan(groups, sort)


def _in_base_path(ref: HudiTableRef):
    """Paths under the base path's partition folders (a custom storage strategy: the server does
    not run its code; the executor maps the files by partition and name)."""
    base = (ref.base_path or "").rstrip("/")
    return lambda partition, name: f"{base}/{partition}/{name}" if partition else f"{base}/{name}"


def schedule_if_due(conn: Connection, ref: HudiTableRef, times: InstantTimes, now_ms: int) -> str | None:
    """Request a clustering when one is due and its plan has a group (in the caller's
    transaction); its instant time."""
    if not due(conn, ref):
        return None
    p = plan(conn, ref)
    if not p.groups:
        return None
    return request_plan(conn, ref.tbl_id, times, CLUSTERING, clustering_plan(p, CLUSTERING_SORT_COLUMNS), now_ms)
