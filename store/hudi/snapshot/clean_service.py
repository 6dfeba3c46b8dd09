"""Hudi cleaning and partition drops (RFC-36: dropping a partition triggers a physical clean), and
the clean the server runs itself after the commits of the tables whose config says
`hoodie.clean.automatic=true` (the pipeline's tables; issue 38).

A clean is an instant like any other: requested with its plan (a HoodieCleanerPlan, Avro), inflight,
completed with the files it deleted (a HoodieCleanMetadata, Avro, as Hudi writes them). As Hudi's
executor, the files leave storage while it is inflight, through the server's storage boundary (only
the table's own files), then the snapshot marks them deleted in the completing transaction
(timeline/commit.py); a clean that stops in between stays inflight (its slices are old versions, no
latest slice: the table stays readable) and the next commit after its heartbeat expired runs it
again. What a clean keeps follows Hudi's CleanPlanner for each policy:

* KEEP_LATEST_COMMITS (`hoodie.cleaner.commits.retained`, N): once more than N write commits have
  completed, the earliest commit retained is the N-th newest (or the newest completed before the
  first pending write, when that is earlier); a slice that began before it is deleted unless it is
  its file group's latest or the latest that began before it. Replaced file groups go whole once
  their replacecommit is before it.
* KEEP_LATEST_BY_HOURS (`hoodie.cleaner.hours.retained`): the same with the earliest commit
  retained = the first completed in the last N hours.
* KEEP_LATEST_FILE_VERSIONS (`hoodie.cleaner.fileversions.retained`, N): the newest N slices of each
  file group stay; replaced file groups go whole.

A file slice a savepoint holds (any of its files in a completed savepoint's list) is never cleaned,
as Hudi's CleanPlanner keeps savepointed files; deleting the savepoint releases it. Slices a pending
compaction reads (its base instant and later) stay.
"""

from __future__ import annotations

import json
import logging
import os
from dataclasses import dataclass
from datetime import datetime, timezone

from sqlalchemy import Connection, and_, exists, func, select

from hudi_format.avro_metadata import clean_metadata_avro, clean_plan, parse_clean_plan
from hudi_format.commit_metadata import WRITE_ACTIONS, parse_compaction_plan
from hudi_format.config_keys import (
    CLEAN_AUTOMATIC,
    CLEANER_COMMITS_RETAINED,
    CLEANER_FILE_VERSIONS_RETAINED,
    CLEANER_HOURS_RETAINED,
    CLEANER_POLICY,
    TIMELINE_SOURCE,
    default_of,
)
from hudi_format.file_slice import FileInfo
from hudi_format.instant import COMPLETED, REQUESTED
from store.db import schema as S
from store.db.database import Store
from store.errors import InvalidObject, InvalidOperation, NoSuchObject
from store.hudi.file_locations import locator
from store.hudi.snapshot.snapshot_service import SnapshotService, file_info
from store.hudi.table_files import TableFiles
from store.hudi.tables import HudiTableRef
from store.hudi.timeline import Completed, TimelineService, held_files

log = logging.getLogger(__name__)

KEEP_LATEST_COMMITS = "KEEP_LATEST_COMMITS"
KEEP_LATEST_FILE_VERSIONS = "KEEP_LATEST_FILE_VERSIONS"
KEEP_LATEST_BY_HOURS = "KEEP_LATEST_BY_HOURS"
POLICIES = (KEEP_LATEST_COMMITS, KEEP_LATEST_FILE_VERSIONS, KEEP_LATEST_BY_HOURS)
CLEAN = "clean"
# the commits-and-compaction timeline (CleanerUtils): a pending one bounds the earliest commit retained
_TIMELINE_ACTIONS = (*WRITE_ACTIONS, "compaction", "logcompaction", "clustering")
CLEAN_TIMEOUT_S = 60  # a clean the server runs and that stops for longer is resumed by the next commit
DELETE_BATCH = 1000  # files deleted between two heartbeats of a clean


@dataclass(frozen=True)
class CleanPolicy:
    """A table's cleaning settings (Hudi's names and defaults)."""
    policy: str = KEEP_LATEST_COMMITS
    commits: int = 10
    versions: int = 3
    hours: int = 24

    @property
    def retain(self) -> int:
        return {KEEP_LATEST_FILE_VERSIONS: self.versions, KEEP_LATEST_BY_HOURS: self.hours}.get(
            self.policy, self.commits)


def _int(props: dict[str, str], key: str) -> int:
    raw = props.get(key) or default_of(key)
    try:
        value = int(raw)
    except ValueError:
        raise InvalidObject(f"{key} must be a whole number, not {raw!r}") from None
    if value < 1:
        raise InvalidObject(f"{key} must be at least 1, not {value}")
    return value


def policy_of(props: dict[str, str]) -> CleanPolicy:
    """The cleaning settings of a table config's properties; InvalidObject for a bad one."""
    policy = (props.get(CLEANER_POLICY) or default_of(CLEANER_POLICY)).strip().upper()
    if policy not in POLICIES:
        raise InvalidObject(f"{CLEANER_POLICY} must be one of {', '.join(POLICIES)}, not {policy!r}")
    return CleanPolicy(policy, _int(props, CLEANER_COMMITS_RETAINED), _int(props, CLEANER_FILE_VERSIONS_RETAINED),
                       _int(props, CLEANER_HOURS_RETAINED))


def cleaned_by_server(ref: HudiTableRef) -> bool:
    """Does the server clean this table after its commits (its config says hoodie.clean.automatic=true,
    as the pipeline's tables' do; never a table whose own writers keep its timeline on storage)?"""
    props = ref.config.properties or {}
    return (props.get(CLEAN_AUTOMATIC) or "").strip().lower() == "true" and not props.get(TIMELINE_SOURCE)


def clean_metadata(ts: str, policy: str, earliest: str | None, deleted: dict[str, list[str]],
                   last_commit: str = "") -> bytes:
    """HoodieCleanMetadata (Avro, version 2), as Hudi writes a completed clean."""
    return clean_metadata_avro({
        "startCleanTime": ts, "timeTakenInMillis": 0,
        "totalFilesDeleted": sum(len(v) for v in deleted.values()),
        "earliestCommitToRetain": earliest or "", "lastCompletedCommitTimestamp": last_commit,
        "partitionMetadata": {p: {"partitionPath": p, "policy": policy, "deletePathPatterns": names,
                                  "successDeleteFiles": names, "failedDeleteFiles": [], "isPartitionDeleted": False}
                              for p, names in deleted.items()},
    })


def instant_time(ms: int) -> str:
    """yyyyMMddHHmmssSSS (UTC) of epoch milliseconds."""
    return datetime.fromtimestamp(ms / 1000, tz=timezone.utc).strftime("%Y%m%d%H%M%S") + f"{ms % 1000:03d}"


def earliest_commit_to_retain(conn: Connection, tbl_id: int, policy: CleanPolicy, now_ms: int) -> str | None:
    """Hudi's CleanerUtils.getEarliestCommitToRetain over the server's instants (None: nothing
    retained yet, so nothing cleaned by the commit-based policies)."""
    i = S.instant
    done = and_(i.c.tbl_id == tbl_id, i.c.state == COMPLETED, i.c.action.in_(WRITE_ACTIONS))
    if policy.policy == KEEP_LATEST_BY_HOURS:
        cutoff = instant_time(now_ms - policy.hours * 3600 * 1000)
        return conn.execute(select(func.min(i.c.ts)).where(done, i.c.ts >= cutoff)).scalar()
    if policy.policy != KEEP_LATEST_COMMITS:
        return None
    newest = list(conn.execute(select(i.c.ts).where(done).order_by(i.c.ts.desc()).limit(policy.commits + 1))
                  .scalars())
    if len(newest) <= policy.commits:
        return None
    earliest = newest[policy.commits - 1]
    pending = conn.execute(select(func.min(i.c.ts)).where(
        i.c.tbl_id == tbl_id, i.c.state != COMPLETED, i.c.action.in_(_TIMELINE_ACTIONS))).scalar()
    if pending is not None and earliest > pending:
        return conn.execute(select(func.max(i.c.ts)).where(done, i.c.ts < pending)).scalar()
    return earliest


def _pending_compaction_bases(conn: Connection, tbl_id: int) -> dict[tuple[str, str], str]:
    """(partition, file id) -> the base instant a pending compaction's plan reads."""
    i, m = S.instant, S.instant_meta
    out: dict[tuple[str, str], str] = {}
    for data in conn.execute(select(m.c.data).select_from(m.join(i, (i.c.tbl_id == m.c.tbl_id) & (
            i.c.ts == m.c.ts) & (i.c.action == m.c.action))).where(
            m.c.tbl_id == tbl_id, m.c.action.in_(("compaction", "logcompaction")), m.c.state == REQUESTED,
            i.c.state != COMPLETED)).scalars():
        try:
            ops = parse_compaction_plan(bytes(data or b""))
        except Exception:  # a plan we cannot read: keep every slice of the table from the policies
            return {("*", "*"): ""}
        for o in ops:
            out[(o.partition_path, o.file_id)] = o.base_instant
    return out


def _slices_to_clean(instants: list[str], replace_ts: str | None, policy: str, retain: int, earliest: str | None,
                     whole_partitions: bool, compaction_base: str | None = None) -> list[str]:
    """Base instants of the slices of one file group (`instants`: newest first) the clean deletes;
    `replace_ts`: when a replacecommit replaced the group; `compaction_base`: the base instant a
    pending compaction of the group reads (it and later slices stay)."""
    if replace_ts is not None:
        # a replaced group is garbage once the replace is before the earliest commit retained
        # (KEEP_LATEST_FILE_VERSIONS keeps nothing of it)
        if policy == KEEP_LATEST_FILE_VERSIONS or (earliest and replace_ts < earliest) or whole_partitions:
            return instants
        return []
    free = [t for t in instants if compaction_base is None or t < compaction_base]
    if policy == KEEP_LATEST_FILE_VERSIONS:
        return free[max(0, retain - (1 if compaction_base is not None else 0)):]
    if earliest is None:
        return []
    # keep the latest slice, and the latest that began before the earliest commit retained (a query
    # running since then reads it)
    before = next((t for t in instants if t < earliest), None)
    return [t for t in free if t < earliest and t != instants[0] and t != before]


class CleanService:
    def __init__(self, store: Store, timeline: TimelineService, snapshot: SnapshotService, files: TableFiles):
        self.store = store
        self.timeline = timeline
        self.snapshot = snapshot
        self.files = files

    def plan(self, db: str, tbl: str, policy: str = KEEP_LATEST_COMMITS, retain: int = 10,
             partitions: list[str] | None = None) -> tuple[str | None, dict[str, list[FileInfo]]]:
        """(earliest commit retained, partition -> files to delete)."""
        if policy not in POLICIES:
            raise InvalidObject(f"Unknown clean policy {policy!r}")
        if retain < 1:
            raise InvalidObject("Clean policies retain at least 1 commit, file version or hour")
        settings = CleanPolicy(policy, commits=retain, versions=retain, hours=retain)
        with self.store.read() as conn:
            ref = self.timeline.table_ref(conn, db, tbl)
            return self._plan_in(conn, ref, settings, partitions)

    def _plan_in(self, conn: Connection, ref: HudiTableRef, settings: CleanPolicy,
                 partitions: list[str] | None) -> tuple[str | None, dict[str, list[FileInfo]]]:
        earliest = earliest_commit_to_retain(conn, ref.tbl_id, settings, self.timeline.times.clock_ms())
        f, rg = S.files, S.replaced_file_groups
        live = and_(f.c.tbl_id == ref.tbl_id, f.c.is_deleted.is_(False))
        # replaced groups with files left (those cleaned already have none)
        rq = select(rg).where(rg.c.tbl_id == ref.tbl_id, exists().where(
            live, f.c.partition_path == rg.c.partition_path, f.c.file_id == rg.c.file_id))
        if partitions is not None:
            rq = rq.where(rg.c.partition_path.in_(partitions))
            wanted = set(partitions)
        else:
            # only partitions with a file group of more than one slice, or a replaced group, can
            # have something to clean: the whole table is not read after every commit
            multi = select(f.c.partition_path).where(live).group_by(f.c.partition_path, f.c.file_id).having(
                func.count(func.distinct(f.c.base_instant)) > 1)
            wanted = set(conn.execute(multi.distinct()).scalars())
        replaced = {(r.partition_path, r.file_id): r.replace_ts for r in conn.execute(rq)}
        wanted |= {p for p, _ in replaced}
        if not wanted:
            return earliest, {}
        files = [file_info(r) for r in conn.execute(select(f).where(live, f.c.partition_path.in_(sorted(wanted))))]
        held = held_files(conn, ref.tbl_id)
        compacting = _pending_compaction_bases(conn, ref.tbl_id)
        if ("*", "*") in compacting:
            return earliest, {}
        groups: dict[tuple[str, str], dict[str, list[FileInfo]]] = {}
        for fi in files:
            groups.setdefault((fi.partition_path, fi.file_id), {}).setdefault(fi.base_instant, []).append(fi)
        doomed: dict[str, list[FileInfo]] = {}
        for key, slices in groups.items():
            for t in _slices_to_clean(sorted(slices, reverse=True), replaced.get(key), settings.policy,
                                      settings.retain, earliest, partitions is not None, compacting.get(key)):
                if held and any((fi.partition_path, fi.name) in held for fi in slices[t]):
                    continue  # a savepoint holds this slice
                doomed.setdefault(key[0], []).extend(slices[t])
        return earliest, doomed

    def clean(self, db: str, tbl: str, policy: str = KEEP_LATEST_COMMITS, retain: int = 10,
              partitions: list[str] | None = None) -> tuple[str | None, list[str]]:
        """Plan, run and complete a clean instant; returns (clean instant time, deleted paths)."""
        earliest, doomed = self.plan(db, tbl, policy, retain, partitions)
        return self._run(db, tbl, policy, earliest, doomed, CLEAN_TIMEOUT_S)

    def _run(self, db: str, tbl: str, policy: str, earliest: str | None, doomed: dict[str, list[FileInfo]],
             timeout_s: int, exclusive: bool = False) -> tuple[str | None, list[str]]:
        """Request, run and complete a clean of `doomed`; `exclusive` (the server's automatic
        cleans): none when another clean was requested first."""
        if not doomed:
            return None, []
        names = {p: sorted(fi.name for fi in fis) for p, fis in doomed.items()}
        with self.store.read() as conn:
            ref = self.timeline.table_ref(conn, db, tbl)
            i = S.instant
            earliest_action = conn.execute(select(i.c.action).where(
                i.c.tbl_id == ref.tbl_id, i.c.ts == earliest, i.c.state == COMPLETED)).scalar() if earliest else None
        where = locator(ref)
        paths = {p: [where(p, n) if where else _joined(ref.base_path, p, n) for n in ns] for p, ns in names.items()}
        plan = clean_plan(earliest, earliest_action or "commit", policy, paths)
        inst = self.timeline.create_instant(db, tbl, None, CLEAN, plan, timeout_s)
        if exclusive and any(p.ts < inst.ts for p in self.timeline.list_instants(
                db, tbl, states=["REQUESTED", "INFLIGHT"], actions=[CLEAN])):
            # another executor requested one first: it runs, this one goes
            self.timeline.rollback(db, tbl, inst.ts, force=True)
            return None, []
        self.timeline.transition_to_inflight(db, tbl, inst.ts, CLEAN, plan)  # Hudi's inflight holds the plan
        return inst.ts, self._execute_or_roll_back(db, tbl, inst.ts, policy, earliest, names)

    def _execute(self, db: str, tbl: str, ts: str, policy: str, earliest: str | None,
                 names: dict[str, list[str]]) -> list[str]:
        """Run inflight clean `ts` as Hudi's CleanActionExecutor does: delete its files from storage,
        then complete it (the slices leave the server's views in that transaction). A clean that
        stops in between stays inflight and is run again (deleting is idempotent). The deleted paths."""
        i = S.instant
        with self.store.read() as conn:
            ref = self.timeline.table_ref(conn, db, tbl)
            last = conn.execute(select(func.max(i.c.ts)).where(
                i.c.tbl_id == ref.tbl_id, i.c.state == COMPLETED, i.c.action.in_(WRITE_ACTIONS))).scalar()
            held = held_files(conn, ref.tbl_id)
        hit = sorted((p, n) for p, ns in names.items() for n in ns if (p, n) in held)
        if hit:  # a savepoint completed since the clean was planned (completion checks it again)
            raise InvalidOperation(f"Clean {ts} of {db}.{tbl} would delete {len(hit)} file(s) a savepoint "
                                   f"holds (e.g. {hit[0][0]}/{hit[0][1]}); plan the clean again")
        paths = [f"{p}/{n}" if p else n for p, ns in names.items() for n in ns]
        # the files stay where the server may not delete; the clean is recorded either way. A long
        # clean heartbeats between batches, so nobody takes it for a stopped one.
        deleted: list[str] = []
        for start in range(0, len(paths), DELETE_BATCH):
            if start:
                self.timeline.heartbeat(db, tbl, ts)
            deleted += self.files.delete_files(ref.base_path, paths[start:start + DELETE_BATCH],
                                               "delete cleaned files under", ref.tbl_id)
        self.timeline.complete_instant(db, tbl, ts, CLEAN, clean_metadata(ts, policy, earliest, names, last or ""))
        return deleted

    def _execute_or_roll_back(self, db: str, tbl: str, ts: str, policy: str, earliest: str | None,
                              names: dict[str, list[str]]) -> list[str]:
        """`_execute`; a clean that can no longer run (a savepoint holds a file of it) is rolled back
        (nothing was deleted) and the error raised."""
        try:
            return self._execute(db, tbl, ts, policy, earliest, names)
        except InvalidOperation:
            try:
                self.timeline.rollback(db, tbl, ts, force=True)
            except (InvalidOperation, NoSuchObject):  # completed or rolled back meanwhile
                pass
            raise

    # --- the server's own cleaning (issue 38) ------------------------------------------------------

    def after_commit(self, db: str, tbl: str, done: Completed | None = None) -> None:
        """For `timeline.on_commit`: after a write commit of a table the server cleans, resume a
        clean that stopped, or run one when the table's policy finds files to delete."""
        if done is None or done.action not in WRITE_ACTIONS:
            return
        ref = done.table
        if ref is None:
            with self.store.read() as conn:
                ref = self.timeline.table_ref(conn, db, tbl)
        if not cleaned_by_server(ref):
            return
        try:
            settings = policy_of(ref.config.properties or {})
        except InvalidObject as exc:
            log.warning("not cleaning %s.%s: %s", db, tbl, exc)
            return
        self.run_automatic(db, tbl, settings)

    def run_automatic(self, db: str, tbl: str, settings: CleanPolicy) -> str | None:
        """One clean by the table's policy (none while another is pending and heartbeating); the
        clean instant's time, None when nothing was cleaned."""
        pending = self.timeline.list_instants(db, tbl, states=["REQUESTED", "INFLIGHT"], actions=[CLEAN])
        if pending:
            failed = {i.ts for i in self.timeline.failed_instants(db, tbl)}
            for inst in pending:
                if inst.ts not in failed:
                    return None  # another executor runs it
                self.resume(db, tbl, inst.ts, inst.state)
        with self.store.read() as conn:
            earliest, doomed = self._plan_in(conn, self.timeline.table_ref(conn, db, tbl), settings, None)
        ts, _ = self._run(db, tbl, settings.policy, earliest, doomed, CLEAN_TIMEOUT_S, exclusive=True)
        return ts

    def resume(self, db: str, tbl: str, ts: str, state: str) -> list[str]:
        """Run a clean that stopped (requested or inflight) from its plan; one that can no longer run
        (a savepoint holds a file of it, an unreadable plan) is rolled back. The deleted paths."""
        try:
            plan = self.timeline.instant_metadata(db, tbl, ts, CLEAN, "REQUESTED")
            try:
                earliest, policy, paths = parse_clean_plan(plan)
            except Exception:  # a plan this server wrote before it wrote Avro ones
                doc = json.loads(bytes(plan).decode("utf-8"))
                earliest = (doc.get("earliestInstantToRetain") or {}).get("timestamp") or None
                policy, paths = str(doc.get("policy") or ""), doc.get("filePathsToBeDeletedPerPartition") or {}
            names = {p: sorted({os.path.basename(str(x).rstrip("/")) for x in xs}) for p, xs in paths.items()}
            if state == "REQUESTED":
                self.timeline.transition_to_inflight(db, tbl, ts, CLEAN, plan)
        except (InvalidOperation, NoSuchObject):  # another executor took it, or it was rolled back
            return []
        except (ValueError, KeyError, TypeError, AttributeError) as exc:
            log.warning("clean %s of %s.%s has no plan to run (%s): rolled back", ts, db, tbl, exc)
            self.timeline.rollback(db, tbl, ts, force=True)
            return []
        try:
            return self._execute_or_roll_back(db, tbl, ts, policy, earliest, names)
        except InvalidOperation as exc:
            log.warning("clean %s of %s.%s cannot run (%s): rolled back", ts, db, tbl, exc)
            return []

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


def _joined(base: str, partition: str, name: str) -> str:
    return "/".join(x for x in (base.rstrip("/"), partition, name) if x)
