"""Hudi cleaning and partition drops (RFC-36: dropping a partition triggers a physical clean).

A clean is an instant like any other: requested with its plan, inflight, completed with the files
it deleted; the snapshot marks those files deleted in the completing transaction, and the files
leave storage afterwards. Policies, as Hudi's cleaner: keep the file slices needed by the last N
commits (KEEP_LATEST_COMMITS), or the latest N versions of each file group
(KEEP_LATEST_FILE_VERSIONS). File groups replaced before the retained window are cleaned whole.
A file slice a savepoint holds (any of its files in a completed savepoint's list) is never cleaned,
as Hudi's CleanPlanner keeps savepointed files; deleting the savepoint releases it.
"""

from __future__ import annotations

import json
import logging

from sqlalchemy import select

from hudi_format.commit_metadata import WRITE_ACTIONS
from hudi_format.file_slice import FileInfo
from hudi_format.instant import COMPLETED
from store.db import schema as S
from store.db.database import Store
from store.errors import InvalidObject, NoSuchObject
from store.hudi.snapshot.snapshot_service import SnapshotService, file_info
from store.hudi.table_files import TableFiles
from store.hudi.timeline import TimelineService, held_files

log = logging.getLogger(__name__)

KEEP_LATEST_COMMITS = "KEEP_LATEST_COMMITS"
KEEP_LATEST_FILE_VERSIONS = "KEEP_LATEST_FILE_VERSIONS"


def clean_metadata(ts: str, policy: str, earliest: str | None, deleted: dict[str, list[str]]) -> bytes:
    """HoodieCleanMetadata-shaped document (v6 field names)."""
    return json.dumps({
        "startCleanTime": ts, "timeTakenInMillis": 0,
        "totalFilesDeleted": sum(len(v) for v in deleted.values()),
        "earliestCommitToRetain": earliest or "", "lastCompletedCommitTimestamp": "",
        "partitionMetadata": {p: {"partitionPath": p, "policy": policy, "deletePathPatterns": names,
                                  "successDeleteFiles": names, "failedDeleteFiles": [], "isPartitionDeleted": False}
                              for p, names in deleted.items()},
        "version": 2, "bootstrapPartitionMetadata": {},
    }).encode()


def _slices_to_clean(instants: list[str], replace_ts: str | None, policy: str, retain: int, earliest: str | None,
                     whole_partitions: bool) -> list[str]:
    """Base instants of the slices of one file group (`instants`: newest first) the clean deletes;
    `replace_ts`: when a replacecommit replaced the group."""
    if replace_ts is not None:
        # a replaced group is garbage once the replace is out of the retained window
        # (KEEP_LATEST_FILE_VERSIONS keeps nothing of it)
        if policy == KEEP_LATEST_FILE_VERSIONS or (earliest and replace_ts <= earliest) or whole_partitions:
            return instants
        return []
    if policy == KEEP_LATEST_FILE_VERSIONS:
        return instants[retain:]
    # keep every slice a retained commit may read: the newest slice at or before the earliest
    # retained commit, and everything after it
    if earliest is None:
        return []
    return [t for t in instants if t <= earliest][1:]


class CleanService:
    def __init__(self, store: Store, timeline: TimelineService, snapshot: SnapshotService, files: TableFiles):
        self.store = store
        self.timeline = timeline
        self.snapshot = snapshot
        self.files = files

    def plan(self, db: str, tbl: str, policy: str = KEEP_LATEST_COMMITS, retain: int = 10,
             partitions: list[str] | None = None) -> tuple[str | None, dict[str, list[FileInfo]]]:
        """(earliest commit retained, partition -> files to delete)."""
        if policy not in (KEEP_LATEST_COMMITS, KEEP_LATEST_FILE_VERSIONS):
            raise InvalidObject(f"Unknown clean policy {policy!r}")
        if retain < 1:
            raise InvalidObject("Clean policies retain at least 1 commit or file version")
        with self.store.read() as conn:
            ref = self.timeline.table_ref(conn, db, tbl)
            i = S.instant
            commits = list(conn.execute(select(i.c.ts).where(
                i.c.tbl_id == ref.tbl_id, i.c.state == COMPLETED, i.c.action.in_(WRITE_ACTIONS)
            ).order_by(i.c.ts.desc()).limit(retain)).scalars())
            earliest = commits[-1] if commits and policy == KEEP_LATEST_COMMITS and len(commits) == retain else None
            f, rg = S.files, S.replaced_file_groups
            q = select(f).where(f.c.tbl_id == ref.tbl_id, f.c.is_deleted.is_(False))
            rq = select(rg).where(rg.c.tbl_id == ref.tbl_id)
            if partitions is not None:
                q = q.where(f.c.partition_path.in_(partitions))
                rq = rq.where(rg.c.partition_path.in_(partitions))
            files = [file_info(r) for r in conn.execute(q)]
            replaced = {(r.partition_path, r.file_id): r.replace_ts for r in conn.execute(rq)}
            held = held_files(conn, ref.tbl_id)
        groups: dict[tuple[str, str], dict[str, list[FileInfo]]] = {}
        for fi in files:
            groups.setdefault((fi.partition_path, fi.file_id), {}).setdefault(fi.base_instant, []).append(fi)
        doomed: dict[str, list[FileInfo]] = {}
        for key, slices in groups.items():
            replace_ts = replaced.get(key)
            for t in _slices_to_clean(sorted(slices, reverse=True), replace_ts, policy, retain, earliest,
                                      whole_partitions=partitions is not None):
                if held and any((fi.partition_path, fi.name) in held for fi in slices[t]):
                    continue  # a savepoint holds this slice
                doomed.setdefault(key[0], []).extend(slices[t])
        return earliest, doomed

    def clean(self, db: str, tbl: str, policy: str = KEEP_LATEST_COMMITS, retain: int = 10,
              partitions: list[str] | None = None) -> tuple[str | None, list[str]]:
        """Plan, run and complete a clean instant; returns (clean instant time, deleted paths)."""
        earliest, doomed = self.plan(db, tbl, policy, retain, partitions)
        if not doomed:
            return None, []
        names = {p: sorted(fi.name for fi in fis) for p, fis in doomed.items()}
        plan = json.dumps({"earliestInstantToRetain": {"timestamp": earliest or ""}, "policy": policy,
                           "filePathsToBeDeletedPerPartition": names, "version": 2}).encode()
        inst = self.timeline.create_instant(db, tbl, None, "clean", plan, 60)
        self.timeline.transition_to_inflight(db, tbl, inst.ts, "clean", plan)
        self.timeline.complete_instant(db, tbl, inst.ts, "clean", clean_metadata(inst.ts, policy, earliest, names))
        with self.store.read() as conn:
            ref = self.timeline.table_ref(conn, db, tbl)
        base = ref.base_path
        paths = [f"{p}/{n}" if p else n for p, ns in names.items() for n in ns]
        # recorded either way; the files stay where the server may not delete
        return inst.ts, self.files.delete_files(base, paths, "delete cleaned files under", ref.tbl_id)

    def drop_partitions(self, db: str, tbl: str, partition_paths: list[str]) -> tuple[str, str | None]:
        """Drop partitions of a Hudi table: a replacecommit replacing every file group in them (the
        HMS partitions go in the same transaction), then a clean deleting their files."""
        wanted = sorted(set(partition_paths))
        if not wanted:
            raise InvalidObject("No partitions to drop")
        known = set(self.snapshot.partitions(db, tbl))
        missing = [p for p in wanted if p not in known]
        if missing:
            raise NoSuchObject(f"Partition {missing[0]} of Hudi table {db}.{tbl} does not exist")
        slices = self.snapshot.latest_file_slices(db, tbl, wanted)
        replaced: dict[str, list[str]] = {p: [] for p in wanted}
        for s in slices:
            replaced[s.partition_path].append(s.file_id)
        meta = json.dumps({"partitionToWriteStats": {}, "partitionToReplaceFileIds": replaced,
                           "compacted": False, "extraMetadata": {}, "operationType": "DELETE_PARTITION"}).encode()
        plan = json.dumps({"operationType": "DELETE_PARTITION", "partitions": wanted}).encode()
        inst = self.timeline.create_instant(db, tbl, None, "replacecommit", plan, 60)
        self.timeline.transition_to_inflight(db, tbl, inst.ts, "replacecommit", b"")
        self.timeline.complete_instant(db, tbl, inst.ts, "replacecommit", meta, drop_partitions=wanted)
        clean_ts, _ = self.clean(db, tbl, KEEP_LATEST_FILE_VERSIONS, 1, partitions=wanted)
        return inst.ts, clean_ts
