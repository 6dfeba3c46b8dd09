"""Clusterings the server schedules (issue 38): on a table clustered inline
(`hoodie.clustering.inline=true`; Hudi's default false schedules none), the write commit that makes
`hoodie.clustering.inline.max.commits` since the last clustering requests one in its transaction,
mirrored as `<ts>.replacecommit.requested` (HoodieRequestedReplaceMetadata); its plan groups each
partition's small latest slices (a partition with one left alone); none while one is pending; it
completes as a replacecommit through the commit path, conflicting only with writers of the file
groups it replaces (not of the partition); hudi-rs then names the slices the server answers."""

from __future__ import annotations

import json
import os

import pytest

from hudi_format.commit_metadata import parse_clustering_plan, parse_rollback
from hudi_format.config_keys import (
    CLUSTERING_INLINE,
    CLUSTERING_MAX_COMMITS,
    CLUSTERING_SMALL_FILE_LIMIT,
    CLUSTERING_SORT_COLUMNS,
    CLUSTERING_TARGET_FILE_MAX_BYTES,
)
from hudi_format.instant import REQUESTED
from hudi_format.storage_timeline import StorageTimeline
from hudi_format.table_config import COW, HudiTableConfig
from store.errors import CommitConflict
from tests.unit.store.hudi.test_table_services import SCHEMA, Table

pytestmark = pytest.mark.backends("sqlite")
pa = pytest.importorskip("pyarrow")
pq = pytest.importorskip("pyarrow.parquet")


def _clusterings(t: Table) -> list[tuple[str, str]]:
    return [(i.ts, i.state) for i in t.timeline.list_instants(t.db, "t", actions=["clustering"])]


def _plan(t: Table, ts: str):
    return parse_clustering_plan(t.timeline.instant_metadata(t.db, "t", ts, "clustering", "REQUESTED"),
                                 CLUSTERING_SORT_COLUMNS)


def _complete(t: Table, ts: str, part: str, replaced: list[str], fid: str, ids: list[int],
              claimed: bool = False) -> None:
    """Run clustering `ts` as an executor would: one new file group `fid` with `ids`."""
    tl = t.timeline
    if not claimed:
        tl.transition_to_inflight(t.db, "t", ts, "clustering", b"")
    name = f"{fid}_0-1-0_{ts}.parquet"
    path = os.path.join(t.base, part, name)
    pq.write_table(pa.table({
        "_hoodie_commit_time": [ts] * len(ids), "_hoodie_commit_seqno": [f"{ts}_0_{i}" for i in range(len(ids))],
        "_hoodie_record_key": [str(i) for i in ids], "_hoodie_partition_path": [part] * len(ids),
        "_hoodie_file_name": [name] * len(ids), "id": pa.array(ids, pa.int32()),
        "ts": pa.array([1] * len(ids), pa.int64()), "dt": [part] * len(ids)}), path)
    tl.complete_instant(t.db, "t", ts, "clustering", json.dumps({
        "partitionToWriteStats": {part: [{"fileId": fid, "path": f"{part}/{name}", "prevCommit": "null",
                                          "numWrites": len(ids), "partitionPath": part,
                                          "fileSizeInBytes": os.path.getsize(path)}]},
        "partitionToReplaceFileIds": {part: replaced}, "compacted": False,
        "extraMetadata": {"schema": json.dumps(SCHEMA)}, "operationType": "CLUSTER"}).encode())


def test_clustering_is_scheduled_mirrored_and_completes_as_a_replacecommit(backend_url, tmp_path):
    t = Table(backend_url, tmp_path, {CLUSTERING_INLINE: "true", CLUSTERING_MAX_COMMITS: "2"})
    try:
        t.commit({("dt=1", "a-0"): [1, 2], ("dt=2", "b-0"): [3]})
        assert _clusterings(t) == []
        second = t.commit({("dt=1", "c-0"): [4]})
        [(ts, state)] = _clusterings(t)
        assert state == "REQUESTED" and ts > second
        plan = _plan(t, ts)
        [group] = plan.groups  # dt=2 has one small slice: left alone (no sort columns)
        assert sorted((s.partition_path, s.file_id) for s in group.slices) == [("dt=1", "a-0"), ("dt=1", "c-0")]
        assert group.output_file_groups == 1 and plan.sort_columns == []
        with open(os.path.join(t.base, ".hoodie", f"{ts}.replacecommit.requested"), "rb") as f:
            assert parse_clustering_plan(f.read(), CLUSTERING_SORT_COLUMNS) == plan  # Hudi's file, our plan
        [mirrored] = [i for i in StorageTimeline.read(t.base).instants if i.ts == ts]
        assert (mirrored.action, mirrored.state) == ("replacecommit", REQUESTED)
        t.commit({("dt=2", "b-0"): [3]})
        t.commit({("dt=1", "d-0"): [5]})  # a new file group in the clustered partition: no conflict
        assert len(_clusterings(t)) == 1  # one pending: no second
        _complete(t, ts, "dt=1", ["a-0", "c-0"], "n-0", [1, 2, 4])
        done = t.timeline.list_instants(t.db, "t", states=["COMPLETED"])
        assert [i.action for i in done if i.ts == ts] == ["replacecommit"]
        latest = {(s.partition_path, s.file_id) for s in t.snapshot.latest_file_slices(t.db, "t", None, None)}
        assert latest == {("dt=1", "d-0"), ("dt=1", "n-0"), ("dt=2", "b-0")}
        t.check_readers([done[-1].ts])
        # the next one (two write commits after the last clustering's instant): an update of a file
        # group it plans, before any executor claimed it, makes it stale: the server rolls it back in
        # that commit's transaction and schedules a new one (service_plans.py)
        t.commit({("dt=2", "e-0"): [6]})
        [(again, _)] = [c for c in _clusterings(t) if c[0] != ts]
        assert {s.file_id for g in _plan(t, again).groups for s in g.slices} >= {"d-0", "n-0"}
        update = t.commit({("dt=1", "d-0"): [5]})
        [rb] = [i for i in t.timeline.list_instants(t.db, "t", actions=["rollback"])]
        assert rb.ts > update and parse_rollback(
            t.timeline.instant_metadata(t.db, "t", rb.ts, "rollback", "COMPLETED"))[0] == [again]
        [(third, state)] = [c for c in _clusterings(t) if c[0] not in (ts, again)]
        assert state == "REQUESTED" and third > rb.ts
        d0 = [s for g in _plan(t, third).groups for s in g.slices if s.file_id == "d-0"]
        assert [s.base_file.split("_")[-1] for s in d0] == [f"{update}.parquet"]  # the slice as it is now
        assert not [n for n in os.listdir(os.path.join(t.base, ".hoodie")) if n.startswith(again)]
    finally:
        t.dispose()


def test_no_clustering_without_inline_or_small_files(backend_url, tmp_path):
    """Hudi's default (hoodie.clustering.inline=false) schedules none; nor does a plan without small
    file slices; sort columns cluster a partition's single small slice and travel in the plan."""
    t = Table(backend_url, tmp_path, {CLUSTERING_MAX_COMMITS: "1"})
    tl = t.timeline
    try:
        for name, props in (("big", {CLUSTERING_SMALL_FILE_LIMIT: "100"}),
                            ("sorted", {CLUSTERING_SORT_COLUMNS: "ts,id"})):
            tl.register_table(HudiTableConfig(
                db_name=t.db, table_name=name, table_type=COW, record_key_fields=["id"], partition_fields=["dt"],
                base_path=f"{t.base}_{name}",
                properties={CLUSTERING_INLINE: "true", CLUSTERING_MAX_COMMITS: "1", **props}))
        for name in ("t", "big", "sorted"):
            for fids in (["a-0", "b-0"], ["a-0"]) if name != "sorted" else (["a-0"],):
                inst = tl.create_instant(t.db, name, None, "commit", b"", 60)
                tl.transition_to_inflight(t.db, name, inst.ts, "commit", b"")
                tl.complete_instant(t.db, name, inst.ts, "commit", json.dumps({"partitionToWriteStats": {"dt=1": [
                    {"fileId": f, "path": f"dt=1/{f}_0-1-0_{inst.ts}.parquet", "partitionPath": "dt=1",
                     "fileSizeInBytes": 100, "prevCommit": "null", "numWrites": 1} for f in fids]},
                    "operationType": "UPSERT", "extraMetadata": {}}).encode())
        assert tl.list_instants(t.db, "t", actions=["clustering"]) == []  # not inline
        assert tl.list_instants(t.db, "big", actions=["clustering"]) == []  # 100 bytes: not small
        [sorted_one] = tl.list_instants(t.db, "sorted", actions=["clustering"])
        plan = parse_clustering_plan(tl.instant_metadata(t.db, "sorted", sorted_one.ts, "clustering", "REQUESTED"),
                                     CLUSTERING_SORT_COLUMNS)
        assert plan.sort_columns == ["ts", "id"] and [[s.file_id for s in g.slices] for g in plan.groups] == [["a-0"]]
    finally:
        t.dispose()


def test_clustering_options_go_to_the_table_config_and_bad_ones_fail_the_write():
    from pipeline.config import WriteConfig

    opts = {CLUSTERING_INLINE: "true", CLUSTERING_MAX_COMMITS: "3", CLUSTERING_SORT_COLUMNS: "ts"}
    assert WriteConfig.from_options("insert", opts).table_properties == opts
    for bad in ({CLUSTERING_INLINE: "yes"}, {CLUSTERING_MAX_COMMITS: "0"}, {CLUSTERING_SMALL_FILE_LIMIT: "-1"},
                {CLUSTERING_TARGET_FILE_MAX_BYTES: "1GB"}):
        with pytest.raises(ValueError, match=next(iter(bad))):
            WriteConfig.from_options("insert", bad)


def test_a_failed_clustering_attempt_is_rolled_back_to_requested_and_runs_again(backend_url, tmp_path):
    """Its executor's claim lives by heartbeats (the table's heartbeat settings): while it beats, it
    is neither failed nor rolled back; once it stopped, the rollback deletes the files the attempt
    wrote, records them in a rollback instant and puts the clustering back to REQUESTED with its
    plan (no inflight file on storage); the next executor claims it and completes it."""
    from hudi_format.commit_metadata import parse_rollback
    from hudi_format.config_keys import CLIENT_HEARTBEAT_INTERVAL_MS, CLIENT_HEARTBEAT_TOLERABLE_MISSES
    from store.db.database import now_ms
    from store.errors import InvalidOperation

    clock = [now_ms()]
    t = Table(backend_url, tmp_path, {CLUSTERING_INLINE: "true", CLUSTERING_MAX_COMMITS: "2",
                                      CLIENT_HEARTBEAT_INTERVAL_MS: "1000", CLIENT_HEARTBEAT_TOLERABLE_MISSES: "1"},
              clock=lambda: clock[0])
    tl = t.timeline
    try:
        t.commit({("dt=1", "a-0"): [1, 2]})
        t.commit({("dt=1", "c-0"): [4]})
        [(ts, _)] = _clusterings(t)
        plan = _plan(t, ts)
        claimed = tl.transition_to_inflight(t.db, "t", ts, "clustering", b"")
        assert claimed.heartbeat_timeout_s == 2  # 1 s x (1 + 1): no longer the plan's days
        stray = f"x-0_0-1-0_{ts}.parquet"  # what the attempt wrote before it failed
        tl.add_markers(t.db, "t", ts, [f"dt=1/{stray}"])
        open(os.path.join(t.base, "dt=1", stray), "wb").write(b"PAR1")
        clock[0] += 1500
        tl.heartbeat(t.db, "t", ts)  # a live executor: its claim is not taken
        clock[0] += 1500
        assert tl.failed_instants(t.db, "t") == []
        with pytest.raises(InvalidOperation, match="still heartbeating"):
            tl.rollback(t.db, "t", ts)
        t.services.mirror.sync(t.db, "t")  # (the inflight file on storage)
        assert os.path.exists(os.path.join(t.base, ".hoodie", f"{ts}.replacecommit.inflight"))
        clock[0] += 2500  # it stopped heartbeating
        assert [(i.ts, i.state) for i in tl.failed_instants(t.db, "t")] == [(ts, "INFLIGHT")]
        rb, deleted = tl.rollback(t.db, "t", ts)
        assert deleted == [f"dt=1/{stray}"] and not os.path.exists(os.path.join(t.base, "dt=1", stray))
        assert _clusterings(t) == [(ts, "REQUESTED")] and _plan(t, ts) == plan
        assert tl.failed_instants(t.db, "t") == []  # a plan waiting for an executor again
        assert parse_rollback(tl.instant_metadata(t.db, "t", rb.ts, "rollback", "COMPLETED"))[0] == [ts]
        hoodie = os.listdir(os.path.join(t.base, ".hoodie"))
        assert f"{ts}.replacecommit.requested" in hoodie and f"{ts}.replacecommit.inflight" not in hoodie
        assert f"{rb.ts}.rollback" in hoodie
        assert t.on_storage() == t.in_views()
        with pytest.raises(InvalidOperation):  # a second rollback finds nothing to roll back
            tl.rollback(t.db, "t", ts)
        _complete(t, ts, "dt=1", ["a-0", "c-0"], "n-0", [1, 2, 4])  # the next executor runs the plan
        assert [i.action for i in tl.list_instants(t.db, "t", states=["COMPLETED"]) if i.ts == ts] == ["replacecommit"]
        t.check_readers([ts])
    finally:
        t.dispose()


def test_a_clustering_that_lost_a_conflict_leaves_the_timeline(backend_url, tmp_path):
    """Expired by the server (it can never complete): its rollback removes it, as a failed write's."""
    t = Table(backend_url, tmp_path, {CLUSTERING_INLINE: "true", CLUSTERING_MAX_COMMITS: "2"})
    try:
        t.commit({("dt=1", "a-0"): [1, 2]})
        t.commit({("dt=1", "c-0"): [4]})
        [(ts, _)] = _clusterings(t)
        t.timeline.transition_to_inflight(t.db, "t", ts, "clustering", b"")  # claimed: its executor runs it
        t.commit({("dt=1", "a-0"): [1, 2]})
        with pytest.raises(CommitConflict):
            _complete(t, ts, "dt=1", ["a-0", "c-0"], "n-0", [1, 2, 4], claimed=True)
        t.timeline.rollback(t.db, "t", ts)
        assert _clusterings(t) == []
        assert not [n for n in os.listdir(os.path.join(t.base, ".hoodie")) if n.startswith(ts)]
    finally:
        t.dispose()


def test_a_clustering_plan_gone_stale_is_refused_at_its_claim_and_rolled_back_once(backend_url, tmp_path):
    """A write rewrote a file group of a claimed clustering whose executor then died; back to
    REQUESTED, the plan can no longer run as planned: the next claim is refused, the server rolls the
    plan back once (store/hudi/timeline/service_plans.py), and a second claim finds it gone."""
    from hudi_format.config_keys import CLIENT_HEARTBEAT_INTERVAL_MS, CLIENT_HEARTBEAT_TOLERABLE_MISSES
    from store.db.database import now_ms
    from store.errors import InvalidOperation, NoSuchObject

    clock = [now_ms()]
    t = Table(backend_url, tmp_path, {CLUSTERING_INLINE: "true", CLUSTERING_MAX_COMMITS: "2",
                                      CLIENT_HEARTBEAT_INTERVAL_MS: "1000", CLIENT_HEARTBEAT_TOLERABLE_MISSES: "0"},
              clock=lambda: clock[0])
    tl = t.timeline

    def rollbacks_of(ts: str) -> list[str]:
        return [i.ts for i in tl.list_instants(t.db, "t", actions=["rollback"])
                if ts in parse_rollback(tl.instant_metadata(t.db, "t", i.ts, "rollback", "COMPLETED"))[0]]

    try:
        t.commit({("dt=1", "a-0"): [1, 2]})
        t.commit({("dt=1", "c-0"): [4]})
        [(ts, _)] = _clusterings(t)
        tl.transition_to_inflight(t.db, "t", ts, "clustering", b"")  # an attempt, which then dies
        t.commit({("dt=1", "a-0"): [1, 2]})  # a new version of a group the plan names
        assert _clusterings(t) == [(ts, "INFLIGHT")]  # (a claimed plan is its executor's to finish)
        clock[0] += 5_000  # its claim (1 s) expired
        tl.rollback(t.db, "t", ts)  # as the next executor's recovery does: back to REQUESTED
        assert _clusterings(t) == [(ts, "REQUESTED")] and len(rollbacks_of(ts)) == 1
        with pytest.raises(InvalidOperation, match="can no longer run as planned"):
            tl.transition_to_inflight(t.db, "t", ts, "clustering", b"")
        assert len(rollbacks_of(ts)) == 2  # the attempt's, and the plan's
        assert ts not in [c for c, _ in _clusterings(t)]
        with pytest.raises((InvalidOperation, NoSuchObject)):
            tl.transition_to_inflight(t.db, "t", ts, "clustering", b"")
        assert len(rollbacks_of(ts)) == 2  # once
        assert t.on_storage() == t.in_views()
    finally:
        t.dispose()


def test_a_clustering_plan_names_the_files_where_the_tables_storage_strategy_puts_them(backend_url, tmp_path):
    """RFC-60: on a table with the object-store strategy the plan's slices name each base file at
    its physical path (a hashed folder under the storage path), as Hudi's planner does, not under
    the base path."""
    import io

    import fastavro

    from hudi_format.config_keys import STORAGE_PATH, STORAGE_STRATEGY_CLASS
    from hudi_format.storage_strategy import OBJECT_STORE, file_location, load_strategy

    objects = str(tmp_path / "objects")
    t = Table(backend_url, tmp_path, {CLUSTERING_INLINE: "true", CLUSTERING_MAX_COMMITS: "2",
                                      STORAGE_STRATEGY_CLASS: OBJECT_STORE, STORAGE_PATH: objects})
    try:
        t.commit({("dt=1", "a-0"): [1, 2]})
        t.commit({("dt=1", "c-0"): [4]})
        [(ts, _)] = _clusterings(t)
        raw = t.timeline.instant_metadata(t.db, "t", ts, "clustering", "REQUESTED")
        [record] = list(fastavro.reader(io.BytesIO(raw)))
        [group] = record["clusteringPlan"]["inputGroups"]
        strategy = load_strategy(OBJECT_STORE, t.base, objects, "t")
        names = {s.file_id: s.base_file.name for s in t.snapshot.latest_file_slices(t.db, "t", None, None)}
        assert {s["fileId"]: s["dataFilePath"] for s in group["slices"]} == {
            fid: file_location(strategy, "dt=1", name) for fid, name in names.items()}
        assert all(s["dataFilePath"].startswith(objects) for s in group["slices"])
    finally:
        t.dispose()
