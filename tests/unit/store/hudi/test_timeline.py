"""Timeline service (RFC-36) on SQLite, PostgreSQL and MariaDB: instant state machine, heartbeats,
expiry and rollback, instant-time monotonicity across processes, optimistic concurrency, atomic
commits."""

from __future__ import annotations

import json
import multiprocessing
import os
import threading
import uuid

import pytest

from hudi_format.errors import InvalidMetadata
from hudi_format.table_config import HudiTableConfig
from store.db.database import Store, now_ms
from store.db.migrations import upgrade
from store.errors import (
    AlreadyExists,
    CommitConflict,
    InvalidObject,
    InvalidOperation,
    NoSuchObject,
)
from store.services import build_services
from thrift_idl.hive_metastore.ttypes import Database


class Clock:
    def __init__(self):
        self.ms = now_ms()

    def __call__(self) -> int:
        return self.ms

    def advance(self, seconds: float) -> None:
        self.ms += int(seconds * 1000)


class Env:
    def __init__(self, url: str, tmp_path, clock=None):
        self.store = Store(url, str(tmp_path / "wh"))
        upgrade(self.store.engine)
        self.services = build_services(self.store, clock_ms=clock or now_ms)
        self.tables = self.services.tables
        self.partitions = self.services.partitions
        self.timeline = self.services.timeline
        self.snapshot = self.services.snapshot
        self.db = "tl_" + uuid.uuid4().hex[:10]
        self.base = str(tmp_path / "tbl")
        self.tables.create_database(Database(name=self.db, locationUri="file:" + str(tmp_path / "dbloc")))
        self.timeline.register_table(HudiTableConfig(
            db_name=self.db, table_name="t", table_type="COPY_ON_WRITE", record_key_fields=["id"],
            partition_fields=["p"], precombine_field="ts", hive_style_partitioning=True, base_path=self.base))

    def write(self, action: str = "commit", files=(), replaced=None, ts: str | None = None,
              complete: bool = True):
        """One instant writing `files` [(partition, file_id)]; returns its time."""
        inst = self.timeline.create_instant(self.db, "t", ts, action, b"", 60)
        self.timeline.transition_to_inflight(self.db, "t", inst.ts, action, b"")
        if complete:
            self.timeline.complete_instant(self.db, "t", inst.ts, action, commit_json(inst.ts, files, replaced))
        return inst.ts

    def dispose(self):
        self.store.dispose()


def commit_json(ts: str, files, replaced=None) -> bytes:
    stats = {}
    for partition, fid in files:
        stats.setdefault(partition, []).append({
            "fileId": fid, "path": f"{partition}/{fid}_0-1-1_{ts}.parquet", "partitionPath": partition,
            "fileSizeInBytes": 100, "prevCommit": "null", "numWrites": 1})
    doc = {"partitionToWriteStats": stats, "compacted": False, "extraMetadata": {}, "operationType": "UPSERT"}
    if replaced:
        doc["partitionToReplaceFileIds"] = replaced
    return json.dumps(doc).encode()


@pytest.fixture
def env(backend_url, tmp_path):
    e = Env(backend_url, tmp_path)
    yield e
    e.dispose()


def test_state_machine(env):
    tl, db = env.timeline, env.db
    inst = tl.create_instant(db, "t", None, "commit", b"plan", 30)
    assert len(inst.ts) == 17 and inst.state == "REQUESTED"
    with pytest.raises(InvalidOperation, match="REQUESTED, not INFLIGHT"):
        tl.complete_instant(db, "t", inst.ts, "commit", commit_json(inst.ts, []))
    assert tl.transition_to_inflight(db, "t", inst.ts, "commit", b"profile").state == "INFLIGHT"
    with pytest.raises(InvalidOperation, match="from INFLIGHT to INFLIGHT"):
        tl.transition_to_inflight(db, "t", inst.ts, "commit", b"")
    done, version = tl.complete_instant(db, "t", inst.ts, "commit", commit_json(inst.ts, [("p=1", "f1-0")]))
    assert done.state == "COMPLETED" and done.completion_ts > inst.ts and version == 1
    with pytest.raises(InvalidOperation):
        tl.transition_to_inflight(db, "t", inst.ts, "commit", b"")
    with pytest.raises(InvalidOperation):
        tl.heartbeat(db, "t", inst.ts)
    assert tl.instant_metadata(db, "t", inst.ts, "commit", "REQUESTED") == b"plan"
    assert tl.instant_metadata(db, "t", inst.ts, "commit", "INFLIGHT") == b"profile"
    assert json.loads(tl.instant_metadata(db, "t", inst.ts, "commit", "COMPLETED"))["operationType"] == "UPSERT"
    with pytest.raises(AlreadyExists):
        tl.create_instant(db, "t", inst.ts, "commit", b"", 30)
    with pytest.raises(InvalidObject, match="Unknown Hudi action"):
        tl.create_instant(db, "t", None, "upsert", b"", 30)
    with pytest.raises(InvalidObject, match="17 digits"):
        tl.create_instant(db, "t", "2024-01-01", "commit", b"", 30)
    with pytest.raises(NoSuchObject):
        tl.transition_to_inflight(db, "t", "20000101000000000", "commit", b"")
    with pytest.raises(NoSuchObject):
        tl.create_instant(db, "nope", None, "commit", b"", 30)
    # compaction completes as a commit (table version 6 timeline)
    c = tl.create_instant(db, "t", None, "compaction", b"", 30)
    tl.transition_to_inflight(db, "t", c.ts, "compaction", b"")
    assert tl.complete_instant(db, "t", c.ts, "compaction", commit_json(c.ts, [("p=1", "f1-0")]))[0].action == "commit"
    # listing by state, action and time range
    pending = tl.create_instant(db, "t", None, "deltacommit", b"", 30)
    assert [i.ts for i in tl.list_instants(db, "t", states=["REQUESTED"])] == [pending.ts]
    assert [i.ts for i in tl.list_instants(db, "t", states=["COMPLETED"])] == [inst.ts, c.ts]
    assert [i.ts for i in tl.list_instants(db, "t", actions=["deltacommit"])] == [pending.ts]
    assert [i.ts for i in tl.list_instants(db, "t", min_ts=c.ts)] == [c.ts, pending.ts]
    assert [i.ts for i in tl.list_instants(db, "t", max_ts=inst.ts)] == [inst.ts]


def test_heartbeat_expiry_and_rollback(backend_url, tmp_path):
    clock = Clock()
    env = Env(backend_url, tmp_path, clock)
    try:
        tl, db = env.timeline, env.db
        failed = env.write(files=[("p=1", "f1-0")], complete=False)
        tl.heartbeat(db, "t", failed)
        tl.add_markers(db, "t", failed, ["p=1/left-0_0-1-1_x.parquet", "p=1/left-0_0-1-1_x.parquet"])
        os.makedirs(os.path.join(env.base, "p=1"), exist_ok=True)
        leftover = os.path.join(env.base, "p=1", "left-0_0-1-1_x.parquet")
        open(leftover, "wb").write(b"partial")
        clock.advance(50)
        assert tl.failed_instants(db, "t") == []
        tl.heartbeat(db, "t", failed)
        clock.advance(59)
        assert tl.failed_instants(db, "t") == []
        with pytest.raises(InvalidOperation, match="still heartbeating"):
            tl.rollback(db, "t", failed)
        clock.advance(2)
        assert [i.ts for i in tl.failed_instants(db, "t")] == [failed]
        rb, paths = tl.rollback(db, "t", failed)
        assert rb.action == "rollback" and rb.state == "COMPLETED" and rb.ts > failed
        assert paths == ["p=1/left-0_0-1-1_x.parquet"]
        assert not os.path.exists(leftover)
        assert [i.ts for i in tl.list_instants(db, "t")] == [rb.ts]
        assert tl.failed_instants(db, "t") == []
        # the next writer is unaffected
        env.write(files=[("p=1", "f2-0")])
        assert [s.file_id for s in env.snapshot.latest_file_slices(db, "t")] == ["f2-0"]
        with pytest.raises(InvalidOperation, match="completed"):
            tl.rollback(db, "t", tl.list_instants(db, "t", states=["COMPLETED"], actions=["commit"])[0].ts)
    finally:
        env.dispose()


def _times(url: str, db: str, n: int, out) -> None:
    store = Store(url)
    tl = build_services(store).timeline
    out.put([tl.new_instant_time(db, "t") for _ in range(n)])
    store.dispose()


def test_instant_times_monotonic_across_processes(env, backend_url):
    ctx = multiprocessing.get_context("spawn")
    q = ctx.Queue()
    procs = [ctx.Process(target=_times, args=(backend_url, env.db, 150, q)) for _ in range(2)]
    for p in procs:
        p.start()
    results = [q.get(timeout=180) for _ in procs]
    for p in procs:
        p.join(60)
        assert p.exitcode == 0
    for seq in results:
        assert seq == sorted(seq) and len(set(seq)) == len(seq)
        assert all(len(t) == 17 and t.isdigit() for t in seq)
    everything = results[0] + results[1]
    assert len(set(everything)) == len(everything)
    assert env.timeline.new_instant_time(env.db, "t") > max(everything)


def test_concurrent_writers_disjoint_and_conflicting(env):
    tl, db = env.timeline, env.db
    a = env.write(files=[("p=1", "a-0")], complete=False)
    b = env.write(files=[("p=2", "b-0")], complete=False)
    tl.complete_instant(db, "t", b, "commit", commit_json(b, [("p=2", "b-0")]))
    tl.complete_instant(db, "t", a, "commit", commit_json(a, [("p=1", "a-0")]))  # disjoint: both win
    c = env.write(files=[("p=1", "a-0")], complete=False)
    d = env.write(files=[("p=1", "a-0")], complete=False)
    tl.complete_instant(db, "t", c, "commit", commit_json(c, [("p=1", "a-0")]))
    with pytest.raises(CommitConflict) as info:
        tl.complete_instant(db, "t", d, "commit", commit_json(d, [("p=1", "a-0")]))
    assert info.value.conflicting == [c]
    assert tl.list_instants(db, "t", min_ts=d, max_ts=d)[0].state == "INFLIGHT"
    slices = {s.file_id: s.base_instant for s in env.snapshot.latest_file_slices(db, "t")}
    assert slices == {"a-0": c, "b-0": b}
    # a replace conflicts with any write to the same partition, even on other file groups
    e = env.write("replacecommit", complete=False)
    env.write(files=[("p=2", "new-0")])
    with pytest.raises(CommitConflict):
        tl.complete_instant(db, "t", e, "replacecommit", commit_json(e, [], {"p=2": ["b-0"]}))


def test_racing_completions_one_winner(env):
    tl, db = env.timeline, env.db
    env.write(files=[("p=1", "g-0")])
    racers = [env.write(files=[("p=1", "g-0")], complete=False) for _ in range(4)]
    outcome = {}

    def finish(ts):
        try:
            tl.complete_instant(db, "t", ts, "commit", commit_json(ts, [("p=1", "g-0")]))
            outcome[ts] = "won"
        except CommitConflict:
            outcome[ts] = "conflict"

    threads = [threading.Thread(target=finish, args=(ts,)) for ts in racers]
    for t in threads:
        t.start()
    for t in threads:
        t.join(120)
    assert sorted(outcome.values()) == ["conflict"] * 3 + ["won"]
    winner = next(ts for ts, o in outcome.items() if o == "won")
    assert [s.base_instant for s in env.snapshot.latest_file_slices(db, "t")] == [winner]


def test_failed_commit_changes_nothing(env):
    tl, db = env.timeline, env.db
    env.write(files=[("p=1", "x-0")])
    before = (env.snapshot.latest_file_slices(db, "t"), env.snapshot.partitions(db, "t"))
    ts = env.write(complete=False)
    bad = json.dumps({"partitionToWriteStats": {"p=9": [
        {"fileId": "y-0", "path": "p=9/y-0_0-1-1_" + ts + ".parquet", "partitionPath": "p=9", "fileSizeInBytes": 1},
        {"fileId": "z-0", "path": "p=9/not-a-hudi-file.txt", "partitionPath": "p=9", "fileSizeInBytes": 1}]}})
    with pytest.raises(InvalidObject):
        tl.complete_instant(db, "t", ts, "commit", bad.encode())
    with pytest.raises(InvalidMetadata):
        tl.complete_instant(db, "t", ts, "commit", b"{not json")
    assert (env.snapshot.latest_file_slices(db, "t"), env.snapshot.partitions(db, "t")) == before
    assert tl.list_instants(db, "t", min_ts=ts, max_ts=ts)[0].state == "INFLIGHT"
    # the retry with good metadata succeeds
    tl.complete_instant(db, "t", ts, "commit", commit_json(ts, [("p=9", "y-0")]))
    assert env.snapshot.partitions(db, "t") == ["p=1", "p=9"]


def test_drop_partition_replaces_and_cleans(env, tmp_path):

    tl, db = env.timeline, env.db
    for part in ("p=1", "p=2"):
        os.makedirs(os.path.join(env.base, part), exist_ok=True)
    first = env.write(files=[("p=1", "a-0"), ("p=2", "b-0")])
    second = env.write(files=[("p=1", "a-0")])
    for ts, part, fid in ((first, "p=1", "a-0"), (first, "p=2", "b-0"), (second, "p=1", "a-0")):
        open(os.path.join(env.base, part, f"{fid}_0-1-1_{ts}.parquet"), "wb").write(b"x")
    cleaner = env.services.clean
    replace_ts, clean_ts = cleaner.drop_partitions(db, "t", ["p=1"])
    assert env.snapshot.partitions(db, "t") == ["p=2"]
    assert [s.file_id for s in env.snapshot.latest_file_slices(db, "t")] == ["b-0"]
    # physically cleaned (a partition metafile may be there: the backends other than SQLite share
    # one database between tests, and another test's background mirror may mirror this table too)
    def data_files(part):
        names = os.listdir(os.path.join(env.base, part))
        return sorted(n for n in names if not n.startswith(".hoodie_partition_metadata"))
    assert data_files("p=1") == []
    assert data_files("p=2") == [f"b-0_0-1-1_{first}.parquet"]
    actions = [(i.ts, i.action) for i in tl.list_instants(db, "t", states=["COMPLETED"])]
    assert (replace_ts, "replacecommit") in actions and (clean_ts, "clean") in actions
    # time travel before the drop still sees the partition's (old) slices in the snapshot
    assert {s.file_id for s in env.snapshot.latest_file_slices(db, "t", None, second)} == {"a-0", "b-0"}
    with pytest.raises(NoSuchObject):
        cleaner.drop_partitions(db, "t", ["p=1"])


def test_clean_policies(env):
    from store.hudi.snapshot import (
        KEEP_LATEST_COMMITS,
        KEEP_LATEST_FILE_VERSIONS,
    )

    db = env.db
    times = [env.write(files=[("p=1", "a-0")]) for _ in range(4)]
    cleaner = env.services.clean
    _, doomed = cleaner.plan(db, "t", KEEP_LATEST_FILE_VERSIONS, 2)
    assert sorted(f.base_instant for f in doomed["p=1"]) == times[:2]
    # Hudi's CleanPlanner: the earliest commit retained is times[2]; the latest slice before it stays
    earliest, doomed = cleaner.plan(db, "t", KEEP_LATEST_COMMITS, 2)
    assert earliest == times[2] and sorted(f.base_instant for f in doomed["p=1"]) == times[:1]
    _, doomed = cleaner.plan(db, "t", KEEP_LATEST_COMMITS, 10)
    assert doomed == {}
    clean_ts, paths = cleaner.clean(db, "t", KEEP_LATEST_FILE_VERSIONS, 1)
    assert len(paths) == 3 and clean_ts
    assert cleaner.plan(db, "t", KEEP_LATEST_FILE_VERSIONS, 1)[1] == {}
    assert [s.base_instant for s in env.snapshot.latest_file_slices(db, "t")] == [times[-1]]


def test_commits_write_notification_events(env):
    """A commit's new partitions are ADD_PARTITION events and its files INSERT events (one per
    partition written), in the commit's transaction; a dropped partition is a DROP_PARTITION event."""
    log, db = env.services.notifications, env.db
    start = log.current_id()
    ts = env.write(files=[("p=1", "a-0"), ("p=2", "b-0"), ("p=1", "c-0")])
    events = log.next_events(start)
    kinds = [(e.eventType, e.tableName) for e in events]
    assert kinds == [("ADD_PARTITION", "t"), ("INSERT", "t"), ("INSERT", "t")]
    inserts = [json.loads(e.message) for e in events if e.eventType == "INSERT"]
    assert [sorted(os.path.basename(f) for f in m["files"]) for m in inserts] == [
        [f"a-0_0-1-1_{ts}.parquet", f"c-0_0-1-1_{ts}.parquet"], [f"b-0_0-1-1_{ts}.parquet"]]
    failed = env.write(files=[("p=3", "d-0")], complete=False)
    assert log.current_id() == events[-1].eventId  # nothing for an instant not completed
    env.timeline.heartbeat(db, "t", failed)
    env.services.clean.drop_partitions(db, "t", ["p=2"])
    assert "DROP_PARTITION" in [e.eventType for e in log.next_events(events[-1].eventId)]


def test_partition_folders_a_commit_makes_are_recorded_in_its_transaction(env, tmp_path):
    """A commit into a new partition outside the warehouse makes its folder and records it (the
    server may delete what it made) in the commit's own transaction: on SQLite a second connection
    would wait on the commit's lock until the busy timeout and leave the folder unrecorded."""
    from sqlalchemy import select

    from store.db import schema as S

    with env.store.engine.begin() as conn:  # the base path as one the server did not make
        conn.execute(S.created_locations.delete())
    env.write(files=[("p=a", "f1")])
    folder = tmp_path / "tbl" / "p=a"
    assert folder.is_dir()
    with env.store.engine.connect() as conn:
        recorded = set(conn.execute(select(S.created_locations.c.location)).scalars())
    assert any(loc.rstrip("/").endswith("/tbl/p=a") for loc in recorded), recorded
