"""Savepoints and restores on the server's commit path (store/hudi/timeline/savepoints.py), on SQLite,
PostgreSQL and MariaDB: what a savepoint holds, cleans keeping it, deleting it, a restore rolling the
table back in one transaction (files, timeline, partitions, statistics, record index, events), and
refused restores changing nothing."""

from __future__ import annotations

import json
import uuid

import pytest
import sqlalchemy as sa

from hudi_format.commit_metadata import parse_restore, parse_savepoint, restore_plan, restored_instants
from hudi_format.config_keys import INDEX_TYPE
from hudi_format.table_config import HudiTableConfig
from store.db.database import Store
from store.db.migrations import upgrade
from store.errors import AlreadyExists, InvalidObject, InvalidOperation, NoSuchObject
from store.hudi.column_stats import ColumnBounds, FileColumnStats, encode_key
from store.hudi.record_index import FileGroupKeys
from store.hudi.snapshot import KEEP_LATEST_FILE_VERSIONS
from store.services import build_services
from thrift_idl.hive_metastore.ttypes import Database


class Env:
    def __init__(self, url: str, tmp_path, record_index: bool = False, version: int = 6):
        self.store = Store(url, str(tmp_path / "wh"))
        upgrade(self.store.engine)
        self.services = build_services(self.store)
        self.timeline = self.services.timeline
        self.snapshot = self.services.snapshot
        self.db = "sp_" + uuid.uuid4().hex[:10]
        self.base = str(tmp_path / "tbl")
        self.services.tables.create_database(Database(name=self.db, locationUri="file:" + str(tmp_path / "dbloc")))
        props = {INDEX_TYPE: "RECORD_INDEX"} if record_index else {}
        self.timeline.register_table(HudiTableConfig(
            db_name=self.db, table_name="t", table_type="COPY_ON_WRITE", record_key_fields=["id"],
            partition_fields=["p"], precombine_field="ts", hive_style_partitioning=True, base_path=self.base,
            table_version=version, properties=props))

    def write(self, files, action: str = "commit", replaced=None, keys=None, complete: bool = True) -> str:
        """One instant writing `files` [(partition, file id)] (with column statistics of each base file)."""
        tl = self.timeline
        inst = tl.create_instant(self.db, "t", None, action, b"", 60)
        tl.transition_to_inflight(self.db, "t", inst.ts, action, b"")
        if complete:
            stats = [FileColumnStats(p, name(fid, inst.ts), 100, 400, [ColumnBounds(
                "id", encode_key("int", 1), encode_key("int", 9), 0, 10)]) for p, fid in files]
            tl.complete_instant(self.db, "t", inst.ts, action, commit_json(inst.ts, files, replaced),
                                record_keys=keys, column_stats=stats)
        return inst.ts

    def savepoint(self, ts: str, metadata: bytes = b"") -> None:
        self.timeline.create_instant(self.db, "t", ts, "savepoint", b"", 60)
        self.timeline.transition_to_inflight(self.db, "t", ts, "savepoint", b"")
        self.timeline.complete_instant(self.db, "t", ts, "savepoint", metadata)

    def restore(self, target: str, keys=None, metadata: bytes = b"") -> str:
        tl = self.timeline
        inst = tl.create_instant(self.db, "t", None, "restore", restore_plan(target, []), 60)
        tl.transition_to_inflight(self.db, "t", inst.ts, "restore", b"")
        tl.complete_instant(self.db, "t", inst.ts, "restore", metadata, record_keys=keys)
        return inst.ts

    def slices(self, as_of: str | None = None) -> dict:
        return {(s.partition_path, s.file_id): (s.base_instant, s.base_file.name if s.base_file else None)
                for s in self.snapshot.latest_file_slices(self.db, "t", as_of=as_of)}

    def instants(self) -> list[tuple[str, str, str]]:
        return [(i.ts, i.action, i.state) for i in self.timeline.list_instants(self.db, "t")]

    def partitions(self) -> list[str]:
        return sorted(self.services.partitions.get_partition_names(self.db, "t"))

    def stats_rows(self) -> tuple:
        """file_stats rows, partition_column_stats rows and snapshot_stats rows of the table (as text)."""
        with self.store.engine.connect() as conn:
            tbl_id = conn.execute(sa.text("SELECT t.tbl_id FROM tbl t JOIN db d ON d.db_id = t.db_id "
                                          "WHERE d.name = :d AND t.name = 't'"), {"d": self.db}).scalar()
            out = []
            for q in ("SELECT f.partition_path, f.name FROM file_stats s JOIN files f ON f.id = s.file_row_id "
                      "WHERE f.tbl_id = :t",
                      "SELECT * FROM partition_column_stats WHERE tbl_id = :t",
                      "SELECT * FROM snapshot_stats WHERE tbl_id = :t"):
                out.append(sorted(tuple(str(v) for v in r) for r in conn.execute(sa.text(q), {"t": tbl_id})))
            return tuple(out)

    def events(self) -> list[tuple[str, str]]:
        return [(e.eventType, e.message) for e in self.services.notifications.next_events(0, db=self.db)]

    def state(self) -> tuple:
        """Everything a refused restore must leave as it was."""
        keys = None
        if INDEX_TYPE in self.timeline.get_table_config(self.db, "t").properties:
            found = self.timeline.record_index.lookup(self.db, "t", ["k1", "k2", "k3", "k4"])
            keys = (found.groups, found.group_of_key, found.instants)
        return (self.slices(), self.instants(), self.partitions(), self.stats_rows(), len(self.events()), keys)

    def dispose(self):
        self.store.dispose()


def name(fid: str, ts: str) -> str:
    return f"{fid}_0-1-1_{ts}.parquet"


def commit_json(ts: str, files, replaced=None) -> bytes:
    stats: dict = {}
    for partition, fid in files:
        stats.setdefault(partition, []).append({
            "fileId": fid, "path": f"{partition}/{name(fid, ts)}", "partitionPath": partition,
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


def test_savepoint_requests_and_what_it_holds(env):
    tl, db = env.timeline, env.db
    c1 = env.write([("p=1", "f1"), ("p=2", "f2")])
    c2 = env.write([("p=1", "f1")])
    with pytest.raises(InvalidObject, match="instant time of the commit"):
        tl.create_instant(db, "t", None, "savepoint", b"", 60)
    with pytest.raises(InvalidOperation, match="no completed commit"):
        tl.create_instant(db, "t", "20000101000000000", "savepoint", b"", 60)
    env.savepoint(c1)
    with pytest.raises(AlreadyExists, match="savepoint already"):
        tl.create_instant(db, "t", c1, "savepoint", b"", 60)
    # the savepoint shares its commit's time; both are on the timeline
    assert (c1, "commit", "COMPLETED") in env.instants() and (c1, "savepoint", "COMPLETED") in env.instants()
    held = parse_savepoint(tl.instant_metadata(db, "t", c1, "savepoint", "COMPLETED"))
    assert held == {"p=1": [name("f1", c1)], "p=2": [name("f2", c1)]}  # the slices as of c1, not c2's
    assert env.slices()[("p=1", "f1")][0] == c2
    # metadata a client sends is kept as given
    env.savepoint(c2, b'{"savepointedBy": "me", "partitionMetadata": {"p=1": {"partitionPath": "p=1", '
                      b'"savepointDataFile": ["x.parquet"]}}}')
    assert parse_savepoint(tl.instant_metadata(db, "t", c2, "savepoint", "COMPLETED")) == {"p=1": ["x.parquet"]}


def test_clean_keeps_savepointed_slices_until_the_savepoint_is_deleted(env):
    tl, db, clean = env.timeline, env.db, env.services.clean
    c1 = env.write([("p=1", "f1")])
    env.savepoint(c1)
    c2 = env.write([("p=1", "f1")])
    c3 = env.write([("p=1", "f1")])
    _, doomed = clean.plan(db, "t", KEEP_LATEST_FILE_VERSIONS, 1)
    assert sorted(f.name for fs in doomed.values() for f in fs) == [name("f1", c2)]  # c1's slice is held
    ts, _ = clean.clean(db, "t", KEEP_LATEST_FILE_VERSIONS, 1)
    assert ts is not None
    assert {f.name for f in env.snapshot.all_files(db, "t", "p=1")} == {name("f1", c1), name("f1", c3)}
    # deleting the savepoint releases it (and a second delete finds nothing)
    removed = tl.delete_savepoint(db, "t", c1)
    assert removed.action == "savepoint" and (c1, "savepoint", "COMPLETED") not in env.instants()
    assert (c1, "commit", "COMPLETED") in env.instants()
    with pytest.raises(NoSuchObject):
        tl.delete_savepoint(db, "t", c1)
    clean.clean(db, "t", KEEP_LATEST_FILE_VERSIONS, 1)
    assert {f.name for f in env.snapshot.all_files(db, "t", "p=1")} == {name("f1", c3)}
    # a savepoint of a commit a clean no longer retains is refused (Hudi's lookup window)
    env.write([("p=1", "f1")])
    c5 = env.write([("p=1", "f1")])
    # earliest retained c5; c4's slice (the latest before it) stays, as Hudi's CleanPlanner keeps it
    assert env.services.clean.clean(db, "t", "KEEP_LATEST_COMMITS", 1)[0] is not None
    with pytest.raises(InvalidOperation, match="retained only"):
        tl.create_instant(db, "t", c3, "savepoint", b"", 60)
    env.savepoint(c5)


def test_pending_savepoint_rolled_back_alone(env):
    tl, db = env.timeline, env.db
    c1 = env.write([("p=1", "f1")])
    tl.create_instant(db, "t", c1, "savepoint", b"", 60)
    tl.rollback(db, "t", c1, force=True)
    assert env.instants() == [(c1, "commit", "COMPLETED")]
    assert env.slices() == {("p=1", "f1"): (c1, name("f1", c1))}


def test_restore_rolls_back_everything_after_the_savepoint(env):
    tl, db = env.timeline, env.db
    c1 = env.write([("p=1", "f1"), ("p=1", "g1")])
    env.savepoint(c1)
    at_c1 = (env.slices(), env.partitions(), env.stats_rows()[1:])
    c2 = env.write([("p=1", "f1"), ("p=2", "f2")])  # an update and a new partition
    c3 = env.write([("p=1", "h1")], action="replacecommit", replaced={"p=1": ["g1"]})  # replaces g1
    c4 = env.write([("p=3", "f3")], complete=False)  # pending
    tl.add_markers(db, "t", c4, [f"p=3/{name('f3', c4)}"])
    assert env.partitions() == ["p=1", "p=2"]
    events_before = len(env.events())
    r = env.restore(c1)
    assert env.slices() == at_c1[0]
    assert env.partitions() == at_c1[1] == ["p=1"]
    assert env.stats_rows()[1:] == at_c1[2]  # the partitions' aggregates and Hive statistics as at c1
    assert {p for p, _ in env.stats_rows()[0]} == {"p=1"}
    # the rolled-back instants left the timeline; the savepoint and the restore are on it
    left = env.instants()
    assert [(t, a) for t, a, _ in left] == [(c1, "commit"), (c1, "savepoint"), (r, "restore")]
    meta = tl.instant_metadata(db, "t", r, "restore", "COMPLETED")
    assert sorted(restored_instants(meta)) == sorted([c2, c3, c4])
    deleted = {t: files for (t_list, files, _) in parse_restore(meta) for t in t_list}
    assert deleted[c2] == {"p=1": [name("f1", c2)], "p=2": [name("f2", c2)]}
    # events: INSERT (replace, no files) for the partition left, DROP_PARTITION for the one gone
    new = env.events()[events_before:]
    kinds = sorted(k for k, _ in new)
    assert kinds == ["DROP_PARTITION", "INSERT"]
    insert = json.loads(next(m for k, m in new if k == "INSERT"))
    assert insert["replace"] in ("true", True) and not insert.get("files")
    # the table goes on from there
    c5 = env.write([("p=2", "f5")])
    assert env.partitions() == ["p=1", "p=2"] and env.slices()[("p=2", "f5")][0] == c5


def test_restore_keeps_a_partition_whose_untouched_groups_remain(env):
    c1 = env.write([("p=1", "g1")])
    env.savepoint(c1)
    env.write([("p=1", "f2")])  # a new file group beside g1
    env.restore(c1)
    assert env.partitions() == ["p=1"] and env.slices() == {("p=1", "g1"): (c1, name("g1", c1))}


def test_restore_brings_back_a_dropped_partition(env):
    db = env.db
    c1 = env.write([("p=1", "f1"), ("p=2", "f2")])
    env.savepoint(c1)
    env.services.clean.drop_partitions(db, "t", ["p=2"])
    assert env.partitions() == ["p=1"]
    seen = len(env.events())
    env.restore(c1)
    assert env.partitions() == ["p=1", "p=2"]
    assert sorted(k for k, _ in env.events()[seen:]) == ["ADD_PARTITION", "INSERT"]
    assert env.slices() == {("p=1", "f1"): (c1, name("f1", c1)), ("p=2", "f2"): (c1, name("f2", c1))}


def test_refused_restores_change_nothing(env):
    tl, db = env.timeline, env.db
    c1 = env.write([("p=1", "f1")])
    c2 = env.write([("p=1", "f1"), ("p=2", "f2")])
    env.savepoint(c2)
    env.savepoint(c1)
    before = env.state()
    # refused when requested: no target, not on the timeline, not a savepoint, a later savepoint
    with pytest.raises(InvalidObject, match="savepointToRestoreTimestamp"):
        tl.create_instant(db, "t", None, "restore", b"", 60)
    with pytest.raises(InvalidOperation, match="no completed commit"):
        tl.create_instant(db, "t", None, "restore", restore_plan("20000101000000000", []), 60)
    c3 = env.write([("p=1", "f1")])
    before = env.state()
    with pytest.raises(InvalidOperation, match="no savepoint"):
        tl.create_instant(db, "t", None, "restore", restore_plan(c3, []), 60)
    with pytest.raises(InvalidOperation, match="after it would lose"):
        tl.create_instant(db, "t", None, "restore", restore_plan(c1, []), 60)
    assert env.state() == before
    # refused when completed: the savepoint was deleted meanwhile; metadata naming other instants
    inst = tl.create_instant(db, "t", None, "restore", restore_plan(c2, []), 60)
    tl.transition_to_inflight(db, "t", inst.ts, "restore", b"")
    before = env.state()
    tl.delete_savepoint(db, "t", c2)
    with pytest.raises(InvalidOperation, match="no savepoint"):
        tl.complete_instant(db, "t", inst.ts, "restore", b"")
    env.savepoint(c2)
    after_resave = env.state()
    assert after_resave[0] == before[0] and after_resave[2:4] == before[2:4]
    with pytest.raises(InvalidOperation, match="its metadata rolls back"):
        tl.complete_instant(db, "t", inst.ts, "restore", json.dumps({"instantsToRollback": [c2]}).encode())
    assert env.state() == after_resave
    assert (inst.ts, "restore", "INFLIGHT") in env.instants()
    # and then it completes
    tl.complete_instant(db, "t", inst.ts, "restore", json.dumps({"instantsToRollback": [c3]}).encode())
    assert env.slices() == {("p=1", "f1"): (c2, name("f1", c2)), ("p=2", "f2"): (c2, name("f2", c2))}


def test_restore_of_a_table_keeping_a_record_index(backend_url, tmp_path):
    env = Env(backend_url, tmp_path, record_index=True)
    try:
        tl, db = env.timeline, env.db
        c1 = env.write([("p=1", "f1")], keys=[FileGroupKeys("p=1", "f1", inserted=["k1", "k2"])])
        env.savepoint(c1)
        env.write([("p=1", "f1"), ("p=2", "f2")], keys=[
            FileGroupKeys("p=1", "f1", updated=["k1"], deleted=["k2"]), FileGroupKeys("p=2", "f2", inserted=["k3"])])
        before = env.state()
        with pytest.raises(InvalidObject, match="keeps a record index"):
            env.restore(c1)
        with pytest.raises(InvalidObject, match="without keys"):
            env.restore(c1, keys=[])
        with pytest.raises(InvalidObject, match="does not change"):
            env.restore(c1, keys=[FileGroupKeys("p=9", "zz", inserted=["k4"], instant=c1)])
        now = env.state()
        assert now[0] == before[0] and now[2:4] == before[2:4] and now[5] == before[5]
        env.restore(c1, keys=[FileGroupKeys("p=1", "f1", inserted=["k1", "k2"], instant=c1)])
        found = tl.record_index.lookup(db, "t", ["k1", "k2", "k3"])
        assert [found.groups[g] if g >= 0 else None for g in found.group_of_key] == [("p=1", "f1"), ("p=1", "f1"),
                                                                                      None]
        assert found.instants == [c1, c1, ""]
    finally:
        env.dispose()


def test_restore_in_table_version_8_goes_by_completion_time(backend_url, tmp_path):
    env = Env(backend_url, tmp_path, version=8)
    try:
        tl, db = env.timeline, env.db
        slow = tl.create_instant(db, "t", None, "commit", b"", 60)  # requested before c1, completes after
        tl.transition_to_inflight(db, "t", slow.ts, "commit", b"")
        c1 = env.write([("p=1", "f1")])
        tl.complete_instant(db, "t", slow.ts, "commit", commit_json(slow.ts, [("p=1", "s1")]))
        env.savepoint(c1)
        env.restore(c1)
        assert env.slices() == {("p=1", "f1"): (c1, name("f1", c1))}
        assert slow.ts not in {t for t, _, _ in env.instants()}
    finally:
        env.dispose()


# --- storage: the mirrored timeline after a savepoint, a restore and a savepoint's deletion, read by hudi-rs

SCHEMA = json.dumps({"type": "record", "name": "t_record", "namespace": "hoodie.t", "fields": [
    {"name": "id", "type": "string"}, {"name": "v", "type": "long"}, {"name": "p", "type": "string"}]})


class StorageEnv:
    """A table whose commits write real Parquet files, mirrored to storage as they complete."""

    def __init__(self, url: str, tmp_path):
        import os

        self.os = os
        wh = str(tmp_path / "wh")
        self.store = Store(url, wh)
        upgrade(self.store.engine)
        self.services = build_services(self.store, mirror=True)
        self.timeline = self.services.timeline
        self.db = "sps_" + uuid.uuid4().hex[:8]
        self.services.tables.create_database(Database(name=self.db, locationUri=f"file:{wh}/{self.db}.db"))
        self.base = f"{wh}/{self.db}.db/t"
        self.timeline.register_table(HudiTableConfig(
            db_name=self.db, table_name="t", table_type="COPY_ON_WRITE", record_key_fields=["id"],
            partition_fields=["p"], hive_style_partitioning=True, base_path="file:" + self.base, avro_schema=SCHEMA))

    def write(self, rows_by_group: dict) -> str:
        import pyarrow as pa
        import pyarrow.parquet as pq

        tl, os = self.timeline, self.os
        inst = tl.create_instant(self.db, "t", None, "commit", b"", 60)
        tl.transition_to_inflight(self.db, "t", inst.ts, "commit", b"")
        stats: dict = {}
        for (p, fid), rows in rows_by_group.items():
            file_name = name(fid, inst.ts)
            os.makedirs(f"{self.base}/{p}", exist_ok=True)
            pq.write_table(pa.table({
                "_hoodie_commit_time": [inst.ts] * len(rows),
                "_hoodie_commit_seqno": [f"{inst.ts}_{i}" for i in range(len(rows))],
                "_hoodie_record_key": [k for k, _ in rows], "_hoodie_partition_path": [p] * len(rows),
                "_hoodie_file_name": [file_name] * len(rows), "id": [k for k, _ in rows],
                "v": [v for _, v in rows], "p": [p.split("=")[1]] * len(rows)}), f"{self.base}/{p}/{file_name}")
            stats.setdefault(p, []).append({
                "fileId": fid, "path": f"{p}/{file_name}", "partitionPath": p, "prevCommit": "null",
                "fileSizeInBytes": os.path.getsize(f"{self.base}/{p}/{file_name}"), "numWrites": len(rows)})
        meta = {"partitionToWriteStats": stats, "compacted": False, "extraMetadata": {"schema": SCHEMA},
                "operationType": "UPSERT"}
        tl.complete_instant(self.db, "t", inst.ts, "commit", json.dumps(meta).encode())
        return inst.ts

    def timeline_files(self) -> set[str]:
        return {n for n in self.os.listdir(f"{self.base}/.hoodie") if n[:1].isdigit()}

    def hudi_rs(self) -> tuple[dict, dict]:
        """(record key -> v, file slices) as hudi-rs reads them from storage."""
        import hudi
        import pyarrow as pa

        table = hudi.HudiTable(self.base)
        batches = table.read()
        rows = pa.Table.from_batches(batches).to_pylist() if batches else []
        return ({r["id"]: r["v"] for r in rows},
                {(s.partition_path, s.file_id): (s.creation_instant_time, s.base_file_name)
                 for s in table.get_file_slices()})

    def server_slices(self) -> dict:
        return {(s.partition_path, s.file_id): (s.base_instant, s.base_file.name if s.base_file else None)
                for s in self.services.snapshot.latest_file_slices(self.db, "t")}


def test_restore_and_savepoints_on_storage_read_by_hudi_rs(backend_url, tmp_path):
    pytest.importorskip("hudi")
    env = StorageEnv(backend_url, tmp_path)
    try:
        tl, db = env.timeline, env.db
        c1 = env.write({("p=a", "f1-0"): [("k1", 1), ("k2", 2)]})
        tl.create_instant(db, "t", c1, "savepoint", b"", 60)
        tl.transition_to_inflight(db, "t", c1, "savepoint", b"")
        tl.complete_instant(db, "t", c1, "savepoint", b"")
        at_c1 = env.hudi_rs()
        assert at_c1[0] == {"k1": 1, "k2": 2}
        c2 = env.write({("p=a", "f1-0"): [("k1", 10), ("k2", 2)], ("p=b", "f2-0"): [("k3", 3)]})
        assert env.hudi_rs()[0] == {"k1": 10, "k2": 2, "k3": 3}
        assert {f"{c1}.commit", f"{c1}.savepoint", f"{c1}.savepoint.inflight", f"{c2}.commit"} <= env.timeline_files()
        r = tl.create_instant(db, "t", None, "restore", restore_plan(c1, []), 60)
        tl.transition_to_inflight(db, "t", r.ts, "restore", b"")
        tl.complete_instant(db, "t", r.ts, "restore", b"")
        # hudi-rs reads the table as it was at the savepoint; the server serves the same slices
        assert env.hudi_rs() == at_c1
        assert env.server_slices() == env.hudi_rs()[1]
        files = env.timeline_files()
        assert not {n for n in files if n.startswith(c2)}  # the restored-away commit left storage's timeline
        assert {f"{r.ts}.restore", f"{c1}.commit", f"{c1}.savepoint"} <= files
        assert not env.os.path.exists(f"{env.base}/p=a/{name('f1-0', c2)}")  # and its files left storage
        # deleting the savepoint removes its instant files only
        tl.delete_savepoint(db, "t", c1)
        files = env.timeline_files()
        assert f"{c1}.commit" in files and not {n for n in files if "savepoint" in n}
        c3 = env.write({("p=b", "f3-0"): [("k4", 4)]})
        assert env.hudi_rs()[0] == {"k1": 1, "k2": 2, "k4": 4}
        assert env.server_slices() == env.hudi_rs()[1] and ("p=b", "f3-0") in env.server_slices()
        assert c3 > c1
    finally:
        env.services.close()


def test_metaserver_delete_instant_of_a_savepoint(env):
    from adapter.handlers.metaserver import MetaserverHandler
    from thrift_idl.hudi_metaserver.ttypes import TAction, THoodieInstant, TState

    c1 = env.write([("p=1", "f1")])
    env.savepoint(c1)
    m = MetaserverHandler(env.services.tables, env.timeline)
    assert m.deleteInstant(env.db, "t", THoodieInstant(c1, TAction.SAVEPOINT, TState.COMPLETED)).success
    assert env.instants() == [(c1, "commit", "COMPLETED")]  # the commit sharing its time stays


def test_a_clean_completing_over_a_savepointed_file_is_refused(env):
    tl, db = env.timeline, env.db
    c1 = env.write([("p=1", "f1")])
    env.write([("p=1", "f1")])
    _, doomed = env.services.clean.plan(db, "t", KEEP_LATEST_FILE_VERSIONS, 1)
    names = {p: [f.name for f in fs] for p, fs in doomed.items()}
    assert names == {"p=1": [name("f1", c1)]}
    env.savepoint(c1)  # completes between the clean's plan and its completion
    cl = tl.create_instant(db, "t", None, "clean", b"", 60)
    tl.transition_to_inflight(db, "t", cl.ts, "clean", b"")
    meta = json.dumps({"partitionMetadata": {"p=1": {"partitionPath": "p=1", "successDeleteFiles": names["p=1"]}},
                       "earliestCommitToRetain": ""}).encode()
    with pytest.raises(InvalidOperation, match="a savepoint holds"):
        tl.complete_instant(db, "t", cl.ts, "clean", meta)
    assert {f.name for f in env.snapshot.all_files(db, "t", "p=1")} >= {name("f1", c1)}


def test_apply_restore_of_an_instant_read_from_storage(env):
    """The catch-up path's entry: a restore whose metadata names the instants it rolled back, applied
    in the caller's transaction, never refused for its target."""
    tl, db = env.timeline, env.db
    c1 = env.write([("p=1", "f1")])
    c2 = env.write([("p=1", "f1"), ("p=2", "f2")])
    with env.store.write() as conn:
        ref = tl.table_ref(conn, db, "t", lock=True)
        out = tl.apply_restore(conn, ref, "29990101000000000", c1, b"", rolled=[c2])
    assert out.rolled == [(c2, "commit")] and sorted(out.partitions) == ["p=1", "p=2"]
    assert env.slices() == {("p=1", "f1"): (c1, name("f1", c1))} and env.partitions() == ["p=1"]
    with env.store.write() as conn:
        ref = tl.table_ref(conn, db, "t", lock=True)
        held = parse_savepoint(tl.apply_savepoint(conn, ref, c1, b""))
    assert held == {"p=1": [name("f1", c1)]}
