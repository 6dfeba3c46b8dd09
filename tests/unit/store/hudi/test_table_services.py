"""Table services the server runs itself (issue 38): the clean after each commit of a table whose
config says `hoodie.clean.automatic=true` (the pipeline's), by Hudi's policies, keeping savepointed
slices, its files deleted through the storage boundary and its slices gone from the server's views
in the clean's transaction; a clean that stopped leaves the table readable and is resumed by the
next commit; the archival of the storage timeline keeps it bounded and never passes the earliest
commit the last clean retained. hudi-rs reads every retained commit from storage."""

from __future__ import annotations

import json
import os
import uuid

import pytest

from hudi_format.avro_metadata import clean_plan, parse_clean_plan
from hudi_format.commit_metadata import parse_clean
from hudi_format.config_keys import (
    ARCHIVE_MAX_COMMITS,
    ARCHIVE_MIN_COMMITS,
    CLEAN_AUTOMATIC,
    CLEANER_COMMITS_RETAINED,
    CLEANER_FILE_VERSIONS_RETAINED,
    CLEANER_HOURS_RETAINED,
    CLEANER_POLICY,
)
from hudi_format.storage_timeline import StorageTimeline
from hudi_format.table_config import COW, HudiTableConfig
from store.db.database import Store, now_ms
from store.db.migrations import upgrade
from store.services import build_services
from thrift_idl.hive_metastore.ttypes import Database

hudi = pytest.importorskip("hudi")
pa = pytest.importorskip("pyarrow")
pq = pytest.importorskip("pyarrow.parquet")

SCHEMA = {"type": "record", "name": "t_record", "namespace": "hoodie.t", "fields": [
    {"name": "id", "type": ["int", "null"]}, {"name": "ts", "type": ["long", "null"]},
    {"name": "dt", "type": ["string", "null"]}]}


class Table:
    """A copy-on-write table the server cleans, its timeline mirrored to storage after each commit."""

    def __init__(self, url: str, tmp_path, props: dict[str, str], clock=None):
        self.store = Store(url, str(tmp_path / "wh"))
        upgrade(self.store.engine)
        self.services = build_services(self.store, mirror=True, clock_ms=clock or now_ms)
        self.timeline, self.snapshot = self.services.timeline, self.services.snapshot
        self.db = "ts_" + uuid.uuid4().hex[:10]
        self.base = str(tmp_path / "wh" / "t")
        self.services.tables.create_database(Database(name=self.db))
        self.timeline.register_table(HudiTableConfig(
            db_name=self.db, table_name="t", table_type=COW, record_key_fields=["id"], partition_fields=["dt"],
            precombine_field="ts", key_generator="org.apache.hudi.keygen.SimpleKeyGenerator", base_path=self.base,
            avro_schema=json.dumps(SCHEMA), properties={CLEAN_AUTOMATIC: "true", **props}))

    def commit(self, groups: dict[tuple[str, str], list[int]]) -> str:
        """A commit writing a new version of each file group (partition, file id) with the ids given."""
        tl = self.timeline
        inst = tl.create_instant(self.db, "t", None, "commit", b"", 60)
        stats: dict = {}
        for (part, fid), ids in groups.items():
            name = f"{fid}_0-1-0_{inst.ts}.parquet"
            os.makedirs(os.path.join(self.base, part), exist_ok=True)
            path = os.path.join(self.base, part, name)
            pq.write_table(pa.table({
                "_hoodie_commit_time": [inst.ts] * len(ids),
                "_hoodie_commit_seqno": [f"{inst.ts}_0_{i}" for i in range(len(ids))],
                "_hoodie_record_key": [str(i) for i in ids], "_hoodie_partition_path": [part] * len(ids),
                "_hoodie_file_name": [name] * len(ids), "id": pa.array(ids, pa.int32()),
                "ts": pa.array([int(inst.ts[-6:])] * len(ids), pa.int64()), "dt": [part] * len(ids)}), path)
            stats.setdefault(part, []).append({
                "fileId": fid, "path": f"{part}/{name}", "prevCommit": "null", "numWrites": len(ids),
                "partitionPath": part, "fileSizeInBytes": os.path.getsize(path)})
        tl.transition_to_inflight(self.db, "t", inst.ts, "commit", b"")
        tl.complete_instant(self.db, "t", inst.ts, "commit", json.dumps({
            "partitionToWriteStats": stats, "compacted": False, "extraMetadata": {"schema": json.dumps(SCHEMA)},
            "operationType": "UPSERT"}).encode())
        return inst.ts

    def on_storage(self) -> set[str]:
        """Data files under the base path."""
        out = set()
        for _root, dirs, names in os.walk(self.base):
            dirs[:] = [d for d in dirs if d != ".hoodie"]
            out.update(n for n in names if n.endswith(".parquet") or ".log." in n)
        return out

    def in_views(self) -> set[str]:
        snap = self.snapshot
        return {f.name for p in snap.partitions(self.db, "t") for f in snap.all_files(self.db, "t", p)}

    def cleans(self, states=("COMPLETED",)) -> list[str]:
        return [i.ts for i in self.timeline.list_instants(self.db, "t", states=list(states), actions=["clean"])]

    def check_readers(self, retained: list[str]) -> None:
        """Storage holds what the views list; hudi-rs, as of each retained commit, names the slices the
        server answers, all on storage, and reads the latest rows."""
        assert self.on_storage() == self.in_views()
        table = hudi.HudiTable(self.base)
        for ts in retained:
            opts = hudi.HudiReadOptions().with_as_of_timestamp(ts)
            theirs = {(s.partition_path, s.file_id): s.base_file_name for s in table.get_file_slices(options=opts)}
            ours = {(s.partition_path, s.file_id): s.base_file.name
                    for s in self.snapshot.latest_file_slices(self.db, "t", None, ts) if s.base_file}
            assert theirs == ours, ts
            assert set(theirs.values()) <= self.on_storage(), ts

    def dispose(self) -> None:
        self.services.close()


def _names(fid: str, times: list[str]) -> set[str]:
    return {f"{fid}_0-1-0_{t}.parquet" for t in times}


@pytest.mark.backends("sqlite", "postgresql", "mysql")
def test_keep_latest_commits_cleans_after_commits_as_hudis_clean_planner(backend_url, tmp_path):
    t = Table(backend_url, tmp_path, {CLEANER_COMMITS_RETAINED: "2"})
    try:
        times = []
        for n in range(6):
            times.append(t.commit({("p1", "a-0"): [1, 2], **({("p2", "b-0"): [3]} if n == 0 else {})}))
            # earliest retained: the 2nd newest; a-0's latest slice and the latest before it stay
            kept = times[-3:] if len(times) > 2 else times
            assert {n for n in t.in_views() if n.startswith("a-0")} == _names("a-0", kept)
            t.check_readers(times[-2:])
        cleans = t.cleans()
        assert len(cleans) == 3  # after the 4th, 5th and 6th commit; b-0's single slice stays
        assert _names("b-0", times[:1]) <= t.on_storage()
        # Hudi's Avro: the plan names full paths, the metadata the deleted names and the earliest retained
        earliest, policy, paths = parse_clean_plan(t.timeline.instant_metadata(t.db, "t", cleans[-1], "clean",
                                                                               "REQUESTED"))
        assert (earliest, policy) == (times[-2], "KEEP_LATEST_COMMITS")
        assert paths == {"p1": [os.path.join(t.base, "p1", f"a-0_0-1-0_{times[2]}.parquet")]}
        meta = t.timeline.instant_metadata(t.db, "t", cleans[-1], "clean", "COMPLETED")
        assert meta[:4] == b"Obj\x01" and parse_clean(meta) == {"p1": [f"a-0_0-1-0_{times[2]}.parquet"]}
        # hudi-rs reads the latest rows
        rows = pa.Table.from_batches(hudi.HudiTable(t.base).read()).to_pylist()
        assert sorted((r["id"], r["_hoodie_commit_time"]) for r in rows) == [
            (1, times[-1]), (2, times[-1]), (3, times[0])]
    finally:
        t.dispose()


@pytest.mark.backends("sqlite")
def test_file_versions_by_hours_savepoints_and_tables_not_cleaned(backend_url, tmp_path):
    t = Table(backend_url, tmp_path, {CLEANER_POLICY: "KEEP_LATEST_FILE_VERSIONS", CLEANER_FILE_VERSIONS_RETAINED: "1"})
    try:
        c1 = t.commit({("p1", "a-0"): [1]})
        tl = t.timeline
        sp = tl.create_instant(t.db, "t", c1, "savepoint", b"", 60)
        tl.transition_to_inflight(t.db, "t", sp.ts, "savepoint", b"")
        tl.complete_instant(t.db, "t", sp.ts, "savepoint", b"")
        times = [c1] + [t.commit({("p1", "a-0"): [1]}) for _ in range(3)]
        # one version kept, and the savepointed one
        assert t.in_views() == t.on_storage() == _names("a-0", [c1, times[-1]])
        tl.delete_savepoint(t.db, "t", c1)
        times.append(t.commit({("p1", "a-0"): [1]}))
        assert t.in_views() == t.on_storage() == _names("a-0", times[-1:])
        t.check_readers(times[-1:])
    finally:
        t.dispose()
    # KEEP_LATEST_BY_HOURS: commits of the last hour are retained (the clock says when they were)
    clock = [now_ms() - 3 * 3600 * 1000]
    t = Table(backend_url, tmp_path / "h", {CLEANER_POLICY: "KEEP_LATEST_BY_HOURS", CLEANER_HOURS_RETAINED: "1"},
              clock=lambda: clock[0])
    try:
        old = [t.commit({("p1", "a-0"): [1]}) for _ in range(3)]
        assert t.cleans() == []  # nothing retained within the hour yet: nothing cleaned
        clock[0] = now_ms()
        new = [t.commit({("p1", "a-0"): [1]}) for _ in range(2)]
        # the earliest retained is new[0]; old[-1] (the latest slice before it) stays
        assert t.in_views() == t.on_storage() == _names("a-0", [old[-1], *new])
    finally:
        t.dispose()
    # hoodie.clean.automatic=false: the server does not clean
    t = Table(backend_url, tmp_path / "off", {CLEAN_AUTOMATIC: "false", CLEANER_COMMITS_RETAINED: "1"})
    try:
        times = [t.commit({("p1", "a-0"): [1]}) for _ in range(4)]
        assert t.cleans() == [] and t.in_views() == _names("a-0", times)
    finally:
        t.dispose()


@pytest.mark.backends("sqlite")
def test_a_clean_that_stopped_leaves_the_table_readable_and_is_resumed(backend_url, tmp_path):
    clock = [now_ms()]
    t = Table(backend_url, tmp_path, {CLEANER_COMMITS_RETAINED: "1"}, clock=lambda: clock[0])
    try:
        clean = t.services.clean
        times = [t.commit({("p1", "a-0"): [1]}) for _ in range(2)]
        boundary = clean.files

        class Killed(Exception):
            pass

        class Dying:  # the server dies while the clean deletes its files
            def delete_files(self, *args):
                raise Killed

            def writable(self, *args):
                return boundary.writable(*args)

        clean.files = Dying()
        times.append(t.commit({("p1", "a-0"): [1]}))  # the hook's failure never fails the commit
        [stopped] = t.cleans(("INFLIGHT",))
        assert t.cleans() == [] and t.in_views() == _names("a-0", times)
        t.check_readers(times[-1:])  # readable: the stopped clean is pending, every file is there
        clean.files = boundary
        # the next commit while it heartbeats: no second clean; once its heartbeat expired: run again
        times.append(t.commit({("p1", "a-0"): [1]}))
        assert t.cleans(("REQUESTED", "INFLIGHT")) == [stopped] and t.cleans() == []
        clock[0] += 120_000
        times.append(t.commit({("p1", "a-0"): [1]}))
        assert stopped in t.cleans() and t.cleans(("REQUESTED", "INFLIGHT")) == []
        assert t.in_views() == t.on_storage() == _names("a-0", times[-2:])
        t.check_readers(times[-1:])
        # a clean requested just before the server died (its plan on the timeline, nothing run): resumed
        automatic = clean.run_automatic
        clean.run_automatic = lambda *a: None
        times.append(t.commit({("p1", "a-0"): [1]}))
        clean.run_automatic = automatic
        earliest, doomed = clean.plan(t.db, "t", "KEEP_LATEST_COMMITS", 1)
        plan = clean_plan(earliest, "commit", "KEEP_LATEST_COMMITS",
                          {p: [f"{t.base}/{p}/{f.name}" for f in fs] for p, fs in doomed.items()})
        requested = t.timeline.create_instant(t.db, "t", None, "clean", plan, 60).ts
        assert t.in_views() == t.on_storage() == _names("a-0", times[-3:])
        clock[0] += 120_000
        times.append(t.commit({("p1", "a-0"): [1]}))
        assert t.cleans(("REQUESTED", "INFLIGHT")) == [] and requested in t.cleans()
        assert t.in_views() == t.on_storage() == _names("a-0", times[-2:])
    finally:
        t.dispose()


@pytest.mark.backends("sqlite")
def test_storage_timeline_stays_bounded_and_keeps_what_the_last_clean_retained(backend_url, tmp_path):
    t = Table(backend_url, tmp_path, {CLEANER_COMMITS_RETAINED: "2", ARCHIVE_MIN_COMMITS: "3",
                                      ARCHIVE_MAX_COMMITS: "4"})
    try:
        sizes = []
        for n in range(16):
            t.commit({("p1", "a-0"): [1], ("p1", f"n{n}-0"): [100 + n]})
            active = StorageTimeline.read(t.base).instants
            sizes.append(len(active))
            retained = [i.ts for i in t.timeline.list_instants(t.db, "t", states=["COMPLETED"], actions=["commit"])]
            earliest = retained[-2] if len(retained) > 2 else retained[0]
            assert earliest in {i.ts for i in active}  # never archived past the earliest commit retained
        assert max(sizes[6:]) <= 8, sizes  # bounded: the commits and cleans of the window kept
        assert len(t.timeline.list_instants(t.db, "t")) > 16 + 10  # the server keeps every instant
        t.check_readers(retained[-2:])
        rows = pa.Table.from_batches(hudi.HudiTable(t.base).read()).to_pylist()
        assert len(rows) == 17
    finally:
        t.dispose()


def test_pipeline_options_of_the_services_go_to_the_table_config_and_bad_ones_fail_the_write():
    from pipeline.config import WriteConfig

    cfg = WriteConfig.from_options("insert", {CLEANER_POLICY: "KEEP_LATEST_FILE_VERSIONS",
                                              CLEANER_FILE_VERSIONS_RETAINED: "2", ARCHIVE_MIN_COMMITS: "5",
                                              "hoodie.unrelated": "x"})
    assert cfg.table_properties == {CLEANER_POLICY: "KEEP_LATEST_FILE_VERSIONS", CLEANER_FILE_VERSIONS_RETAINED: "2",
                                    ARCHIVE_MIN_COMMITS: "5"}
    for bad in ({CLEANER_POLICY: "KEEP_EVERYTHING"}, {CLEANER_COMMITS_RETAINED: "0"},
                {CLEANER_HOURS_RETAINED: "a day"}, {ARCHIVE_MAX_COMMITS: "-1"}):
        with pytest.raises(ValueError, match=next(iter(bad))):
            WriteConfig.from_options("insert", bad)


@pytest.mark.backends("sqlite")
def test_storage_timeline_stays_bounded_over_many_commits(backend_url, tmp_path):
    """The active timeline on storage stays bounded over COMMITS commits (1,000 in the thorough run),
    each a new version of one file group and a new file group, cleaned and archived as they go."""
    from tests.harness.properties import thorough

    commits = 1000 if thorough() else 100
    t = Table(backend_url, tmp_path, {CLEANER_COMMITS_RETAINED: "2", ARCHIVE_MIN_COMMITS: "3",
                                      ARCHIVE_MAX_COMMITS: "4"})
    timeline_dir = os.path.join(t.base, ".hoodie")
    try:
        most = 0
        for n in range(commits):
            t.commit({("p1", "a-0"): [1], ("p1", f"n{n}-0"): [100 + n]})
            if n >= 10:
                most = max(most, len(StorageTimeline.read(t.base).instants))
        assert most <= 8, most
        top_level = [n for n in os.listdir(timeline_dir) if n[:1].isdigit()]
        assert len(top_level) <= 3 * 8, len(top_level)  # the instants' files: requested, inflight, completed
        retained = [i.ts for i in t.timeline.list_instants(t.db, "t", states=["COMPLETED"], actions=["commit"])]
        assert len(retained) == commits  # the server keeps every instant
        t.check_readers(retained[-2:])
        assert len(pa.Table.from_batches(hudi.HudiTable(t.base).read()).to_pylist()) == commits + 1
    finally:
        t.dispose()
