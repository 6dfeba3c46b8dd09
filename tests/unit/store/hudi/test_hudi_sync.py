"""Hudi tables Hudi's own writers write, tracked from their first hive sync (store/hudi/timeline/catch_up.py),
in process on every backend: the handlers Hudi's sync calls (create_table, alter_table, add/alter/drop
partitions) over real Hudi tables (tests/fixtures/hudi-tables), with instants held back and put back
on storage as a writer would add them. After each call the server's file slices, partitions and
rows are hudi-rs's; bad instants fail the call and change nothing."""

from __future__ import annotations

import os
import uuid

import pytest

from adapter.handlers.partitions import PartitionHandler
from adapter.handlers.tables import TableHandler
from hudi_format.config_keys import TIMELINE_SOURCE
from hudi_format.file_slice import parse_file_name
from hudi_format.instant import COMPLETED
from hudi_format.storage_timeline import StorageTimeline
from hudi_format.table_config import INPUT_FORMAT, SERDE
from store.db.database import Store
from store.db.migrations import upgrade
from store.errors import InvalidOperation, MetaError, NoSuchObject, StoreError
from store.hudi.record_index import has_record_index
from store.hudi.timeline import CatchUpError, SyncWatcher
from store.services import build_services
from tests.harness.hudi_tables import (
    hive_synced_table,
    hold_back,
    put_back,
    table_copy,
    theirs_partitions,
    theirs_rows,
    theirs_slices,
    timeline_dir,
)
from thrift_idl.hive_metastore.ttypes import (
    Database,
    DropPartitionsRequest,
    FieldSchema,
    Partition,
    RequestPartsSpec,
    SerDeInfo,
    StorageDescriptor,
    Table,
)


class Env:
    def __init__(self, url: str, tmp_path):
        self.store = Store(url, str(tmp_path / "wh"))
        upgrade(self.store.engine)
        self.s = build_services(self.store)
        self.tables = TableHandler(self.s.tables, self.s.partitions, self.s.timeline, constraints=self.s.constraints,
                                   table_filter=self.s.table_filter, hudi_sync=self.s.hudi_sync)
        self.parts = PartitionHandler(self.s.partitions, self.s.tables, self.s.hudi_partitions,
                                      hudi_sync=self.s.hudi_sync)
        self.db = "hs_" + uuid.uuid4().hex[:10]
        self.s.tables.create_database(Database(name=self.db, locationUri="file:" + str(tmp_path / "dbloc")))
        self.tmp = tmp_path

    def synced_table(self, name: str, base: str, ttype: str = "COPY_ON_WRITE") -> Table:
        """The table as Hudi 1.x's hive sync (`hms` mode, sync_as_datasource) creates it."""
        return hive_synced_table(self.db, name, base, ttype)

    def part(self, name: str, values: list[str], base: str) -> Partition:
        t = self.s.tables.get_table(self.db, name)
        sd = StorageDescriptor(**{**t.sd.__dict__, "location": "file:" + base + "/" + "/".join(values)})
        return Partition(values=values, dbName=self.db, tableName=name, sd=sd, parameters={})

    def slices(self, name: str) -> dict:
        return {(s.partition_path, s.file_id): (s.base_instant, s.base_file.name if s.base_file else None,
                                                tuple(f.name for f in s.log_files))
                for s in self.s.snapshot.latest_file_slices(self.db, name)}

    def instants(self, name: str) -> list[tuple[str, str, str]]:
        return [(i.ts, i.action, i.state) for i in self.s.timeline.list_instants(self.db, name)]

    def hms_partitions(self, name: str) -> list[str]:
        return sorted(self.s.partitions.get_partition_names(self.db, name, -1))


@pytest.fixture
def env(backend_url, tmp_path):
    e = Env(backend_url, tmp_path)
    yield e
    e.s.close()


def _hms_names(base: str) -> list[str]:
    return sorted(theirs_partitions(base))


def _file_id(name: str) -> str:
    """The file group of a row's `_hoodie_file_name` (a log record names its file group alone)."""
    try:
        return parse_file_name(name)[0]
    except ValueError:
        return name


def count_index_keys(env: Env, name: str) -> int:
    from store.hudi.record_index import count_keys

    with env.store.read() as conn:
        return count_keys(conn, env.s.timeline.table_ref(conn, env.db, name).tbl_id)


def assert_follows(env: Env, name: str, base: str) -> None:
    """The server's view of tracked `name` is hudi-rs's view of storage."""
    assert env.slices(name) == theirs_slices(base)
    tl = StorageTimeline.read(base)
    assert [i[0] for i in env.instants(name)] == [i.ts for i in tl.instants]
    # RFC-08: where the record index finds each key is where Hudi's reader finds it
    if has_record_index(env.s.timeline.get_table_config(env.db, name).properties):
        want = {r["_hoodie_record_key"]: (r["_hoodie_partition_path"] or "", _file_id(r["_hoodie_file_name"]))
                for r in theirs_rows(base)}
        found = env.s.timeline.record_index.lookup(env.db, name, sorted(want))
        got = {k: found.groups[i] for k, i in zip(sorted(want), found.group_of_key)}
        assert got == want
        assert count_index_keys(env, name) == len(want)
    # RFC-27 column statistics of every latest base file, from its footer (as import-hudi loads them)
    assert env.s.timeline.files_without_column_stats(env.db, name) == []
    if env.s.timeline.get_table_config(env.db, name).partition_fields:
        assert len(env.hms_partitions(name)) == len(_hms_names(base))
        assert sorted(env.s.snapshot.partitions(env.db, name)) == _hms_names(base)


PARTITIONED = ["cow_v8_complexkeygen_hivestyle", "cow_v6_simplekeygen_nonhivestyle", "mor_v6_trips_8i1u",
               "mor_v8_delete_blocks"]


@pytest.mark.parametrize("fixture", PARTITIONED + ["cow_v8_nonpartitioned", "mor_v6_nonpartitioned_rollback"])
def test_tracked_from_create_then_caught_up_by_each_sync_call(env, tmp_path, fixture):
    base = table_copy(fixture, tmp_path)
    tl = StorageTimeline.read(base)
    ttype = tl.properties.get("hoodie.table.type", "COPY_ON_WRITE")
    held = tmp_path / "held"
    last = tl.instants[-1]
    assert hold_back(base, last.ts, held)

    env.tables.create_table(env.synced_table("t", base, ttype))  # Hudi's first sync
    cfg = env.s.timeline.get_table_config(env.db, "t")
    assert cfg.properties[TIMELINE_SOURCE] == "storage" and cfg.table_type == ttype
    assert has_record_index(cfg.properties), fixture  # built from storage, as import-hudi builds it
    assert_follows(env, "t", base)

    put_back(base, held)  # Hudi's writer commits; its sync then calls the metastore
    assert last.ts not in {i[0] for i in env.instants("t")}
    if cfg.partition_fields:
        names = _hms_names(base)
        values = [[kv.split("=", 1)[-1] for kv in n.split("/")] for n in names]
        # every partition, new or not: never refused, the answer is the partitions as committed
        added = env.parts.add_partitions([env.part("t", v, base) for v in values])
        assert added == len(values)
    else:
        new = env.synced_table("t", base, ttype)
        new.parameters["last_commit_time_sync"] = last.ts
        env.tables.alter_table(env.db, "t", new)
        assert env.s.tables.get_table(env.db, "t").parameters["last_commit_time_sync"] == last.ts
    assert_follows(env, "t", base)


def test_partitions_follow_commits_whatever_the_sync_call_says(env, tmp_path):
    base = table_copy("cow_v8_complexkeygen_hivestyle", tmp_path)
    env.tables.create_table(env.synced_table("t", base))
    before = env.hms_partitions("t")
    # an add of a partition no commit wrote, an alter, a drop: all answered, none changes partitions
    ghost = env.part("t", ["99", "999"], base)
    assert env.parts.add_partitions([ghost]) == 1
    env.parts.alter_partitions(env.db, "t", [env.part("t", ["10", "300"], base)])
    assert env.parts.drop_partition_by_name(env.db, "t", before[0], True) is True
    env.parts.drop_partitions_req(DropPartitionsRequest(dbName=env.db, tblName="t",
                                                        parts=RequestPartsSpec(names=before[1:])))
    assert env.hms_partitions("t") == before
    assert_follows(env, "t", base)


def test_a_pipeline_table_keeps_its_rules(env, tmp_path):
    """Tables whose commits go through the server are not tracked: partition writes stay refused."""
    from hudi_format.table_config import HudiTableConfig

    env.s.timeline.register_table(HudiTableConfig(
        db_name=env.db, table_name="own", table_type="COPY_ON_WRITE", record_key_fields=["id"],
        partition_fields=["p"], precombine_field="ts", hive_style_partitioning=True, base_path=str(tmp_path / "own")))
    with pytest.raises(InvalidOperation, match="follow its commits"):
        env.parts.add_partitions([env.part("own", ["x"], str(tmp_path / "own"))])


def test_merge_on_read_views_share_the_tracked_timeline(env, tmp_path):
    base = table_copy("mor_v6_trips_8i1u", tmp_path)
    tl = StorageTimeline.read(base)
    held = tmp_path / "held"
    last = tl.instants[-1]
    hold_back(base, last.ts, held)
    mor = "MERGE_ON_READ"
    env.tables.create_table(env.synced_table("t_ro", base, mor))  # hive sync's order: _ro, _rt, then t
    env.tables.create_table(env.synced_table("t_rt", base, mor))
    with pytest.raises(NoSuchObject):
        env.s.timeline.get_table_config(env.db, "t_ro")
    env.tables.create_table(env.synced_table("t", base, mor))
    assert env.s.timeline.get_table_config(env.db, "t").properties[TIMELINE_SOURCE] == "storage"
    assert_follows(env, "t", base)

    put_back(base, held)
    names = _hms_names(base)
    values = [[kv.split("=", 1)[-1] for kv in n.split("/")] for n in names]
    # the view's partitions are hive sync's own (a plain HMS table); its call catches `t` up first
    env.parts.add_partitions([env.part("t_ro", v, base) for v in values])
    assert env.hms_partitions("t_ro") == sorted(env.hms_partitions("t"))
    assert_follows(env, "t", base)
    env.tables.create_table(env.synced_table("t_x", base, mor))  # another table there: a view too
    with pytest.raises(NoSuchObject):
        env.s.timeline.get_table_config(env.db, "t_x")


def _corrupt_last(base: str, tmp_path):
    tl = StorageTimeline.read(base)
    last = tl.instants[-1]
    held = tmp_path / "held"
    hold_back(base, last.ts, held)
    return last, held


@pytest.mark.parametrize("how", ["corrupt", "unknown-action", "savepoint"])
def test_an_instant_the_server_cannot_apply_fails_the_call_and_changes_nothing(env, tmp_path, how):
    base = table_copy("cow_v8_complexkeygen_hivestyle", tmp_path)
    last, held = _corrupt_last(base, tmp_path)
    env.tables.create_table(env.synced_table("t", base))
    instants, slices, parts = env.instants("t"), env.slices("t"), env.hms_partitions("t")
    put_back(base, held)
    tdir = timeline_dir(base)
    if how == "corrupt":
        done = StorageTimeline.read(base).instants[-1].files[COMPLETED]
        with open(os.path.join(tdir, done), "wb") as f:
            f.write(b"\x00not avro")
        match = "corrupt instant file"
    elif how == "unknown-action":
        open(os.path.join(tdir, "29990101000000000.frobnicate.requested"), "wb").close()
        match = "not an instant of an action"
    else:  # a savepoint whose metadata is unreadable
        done = StorageTimeline.read(base).instants[-1]
        open(os.path.join(tdir, f"{done.ts}.savepoint.inflight"), "wb").close()
        open(os.path.join(tdir, f"{done.ts}_29990101000000001.savepoint"), "wb").write(b"\x00not avro")
        match = "corrupt instant file"
    new = env.s.tables.get_table(env.db, "t")
    new.parameters["last_commit_time_sync"] = "changed"
    with pytest.raises(CatchUpError, match=match) as err:
        env.tables.alter_table(env.db, "t", new)
    assert isinstance(err.value, MetaError)  # answered as MetaException
    with pytest.raises(CatchUpError):
        env.parts.add_partitions([env.part("t", ["10", "300"], base)])
    assert (env.instants("t"), env.slices("t"), env.hms_partitions("t")) == (instants, slices, parts)
    assert env.s.tables.get_table(env.db, "t").parameters["last_commit_time_sync"] == "x"


def test_the_call_and_its_catch_up_are_one_transaction(env, tmp_path):
    base = table_copy("cow_v8_complexkeygen_hivestyle", tmp_path)
    last, held = _corrupt_last(base, tmp_path)
    env.tables.create_table(env.synced_table("t", base))
    instants = env.instants("t")
    put_back(base, held)
    other = env.synced_table("other", base)
    other.sd.location = other.sd.serdeInfo.parameters["path"] = "file:" + str(tmp_path / "elsewhere")
    env.s.tables.create_table(other)
    bad = env.s.tables.get_table(env.db, "t")
    bad.tableName = "other"  # the alter is refused after the catch-up ran in its transaction
    with pytest.raises(StoreError):
        env.tables.alter_table(env.db, "t", bad)
    assert env.instants("t") == instants
    env.tables.alter_table(env.db, "t", env.s.tables.get_table(env.db, "t"))
    assert_follows(env, "t", base)


def test_notification_events_of_caught_up_commits(env, tmp_path):
    base = table_copy("cow_v8_complexkeygen_hivestyle", tmp_path)
    last, held = _corrupt_last(base, tmp_path)
    env.tables.create_table(env.synced_table("t", base))
    since = env.s.notifications.current_id()
    put_back(base, held)
    env.tables.alter_table(env.db, "t", env.s.tables.get_table(env.db, "t"))
    events = [e for e in env.s.notifications.next_events(since, 1000) if e.tableName == "t"]
    assert any(e.eventType == "INSERT" for e in events), [e.eventType for e in events]


def test_watcher_catches_up_tables_written_without_sync(env, tmp_path):
    bases = {}
    for name in ("a", "b"):
        base = table_copy("cow_v8_complexkeygen_hivestyle", tmp_path / name)
        last, held = _corrupt_last(base, tmp_path / name)
        env.tables.create_table(env.synced_table(name, base))
        put_back(base, held)
        bases[name] = base
    watcher = SyncWatcher(env.s.hudi_sync, tables_per_pass=1, instants_per_table=100)
    counts = [len(env.instants("a")), len(env.instants("b"))]
    watcher.run_once()  # one table per pass (the backend may hold other tests' tracked tables too)
    assert sum(len(env.instants(n)) for n in "ab") - sum(counts) <= 1
    for _ in env.s.hudi_sync.tracked_tables():
        watcher.run_once()
    for name, base in bases.items():
        assert_follows(env, name, base)
    # a table whose storage went bad is logged, and the others go on
    tdir = timeline_dir(bases["a"])
    open(os.path.join(tdir, "29990101000000000.frobnicate.requested"), "wb").close()
    SyncWatcher(env.s.hudi_sync).run_once()


@pytest.mark.backends("sqlite")
def test_the_index_backlog_is_settled_by_the_server_and_by_the_watcher(env, tmp_path):
    """A catch-up leaves the new files' statistics and keys to a thread of the server, which reads
    them without any reader asking; a backlog a stopped server left is settled by the watcher."""
    import time

    from bench.hudi_sync_bench import HudiTableOnStorage, partition_names
    from thrift_idl.hive_metastore.ttypes import EnvironmentContext

    table = HudiTableOnStorage(tmp_path / "writer", "w", 3)
    table.commit(partition_names(2), groups_per_partition=2)
    env.tables.create_table(env.synced_table("w", str(table.base)))
    sync = env.s.hudi_sync

    def sync_call() -> None:
        table.commit()
        t = env.s.tables.get_table(env.db, "w")
        env.tables.alter_table_with_environment_context(env.db, "w", t, EnvironmentContext(properties={}))

    sync_call()  # settled by the server's thread
    deadline = time.monotonic() + 60
    while env.s.timeline.files_without_column_stats(env.db, "w") and time.monotonic() < deadline:
        time.sleep(0.05)
    assert env.s.timeline.files_without_column_stats(env.db, "w") == []
    sync.stop()  # the thread is done (and gone): no backlog left
    assert sync.settle(env.db, "w") == 0
    sync.background = False  # as if the server stopped before its thread ran
    sync_call()
    assert len(env.s.timeline.files_without_column_stats(env.db, "w")) == 4
    # (every tracked table in one pass: the shared store may hold other tests' tracked tables)
    SyncWatcher(sync, tables_per_pass=10_000).run_once()
    assert env.s.timeline.files_without_column_stats(env.db, "w") == []
    want = {k: g for g, keys in table.keys.items() for k in keys}
    found = env.s.timeline.record_index.lookup(env.db, "w", sorted(want))
    assert {k: found.groups[i] for k, i in zip(sorted(want), found.group_of_key)} == want


def test_watcher_takes_a_bounded_number_of_instants(env, tmp_path):
    base = table_copy("mor_v6_trips_8i1u", tmp_path)
    tl = StorageTimeline.read(base)
    held = tmp_path / "held"
    first = tl.instants[0]
    for inst in tl.instants[1:]:
        hold_back(base, inst.ts, held)
    env.tables.create_table(env.synced_table("t", base, "MERGE_ON_READ"))
    assert [i[0] for i in env.instants("t")] == [first.ts]
    put_back(base, held)
    watcher = SyncWatcher(env.s.hudi_sync, tables_per_pass=10_000, instants_per_table=2)
    before = len(env.instants("t"))
    while len(env.instants("t")) < len(tl.instants):
        watcher.run_once()
        assert len(env.instants("t")) - before <= 2  # at most 2 instants of a table per pass
        before = len(env.instants("t"))
    assert_follows(env, "t", base)


def test_plain_hudi_looking_table_without_storage_stays_as_before(env, tmp_path):
    base = str(tmp_path / "nothing_here")
    os.makedirs(os.path.join(base, ".hoodie"))
    props = {"hoodie.table.name": "t", "hoodie.table.type": "COPY_ON_WRITE", "hoodie.table.recordkey.fields": "id"}
    t = Table(tableName="t", dbName=env.db, owner="x", tableType="EXTERNAL_TABLE",
              sd=StorageDescriptor(cols=[FieldSchema("id", "string", None)], location="file:" + base,
                                   serdeInfo=SerDeInfo(serializationLib=SERDE, parameters={}),
                                   inputFormat=INPUT_FORMAT["COPY_ON_WRITE"]),
              partitionKeys=[], parameters={"spark.sql.sources.provider": "hudi", **props})
    env.tables.create_table(t)  # no hoodie.properties: adopted from its parameters, as before
    assert TIMELINE_SOURCE not in env.s.timeline.get_table_config(env.db, "t").properties


def test_the_background_watcher_of_serve_watch_interval(backend_url, tmp_path):
    """`serve --watch-interval`: build_services(watch_interval_s=...) runs the watcher in the
    background; close() stops it."""
    import time

    store = Store(backend_url, str(tmp_path / "wh"))
    upgrade(store.engine)
    services = build_services(store, watch_interval_s=0.05)
    try:
        assert services.watcher is not None
        db = "hw_" + uuid.uuid4().hex[:10]
        services.tables.create_database(Database(name=db, locationUri="file:" + str(tmp_path / "dbloc")))
        handler = TableHandler(services.tables, services.partitions, services.timeline, hudi_sync=services.hudi_sync)
        base = table_copy("cow_v8_complexkeygen_hivestyle", tmp_path)
        last, held = _corrupt_last(base, tmp_path)
        handler.create_table(hive_synced_table(db, "t", base))
        put_back(base, held)  # written with sync off: nobody calls the metastore
        deadline = time.monotonic() + 30
        while last.ts not in {i.ts for i in services.timeline.list_instants(db, "t")}:
            assert time.monotonic() < deadline, "the watcher did not catch the table up"
            time.sleep(0.05)
    finally:
        services.close()
    assert services.watcher._thread is None


# --- savepoints and restores Hudi's procedures wrote (tests/fixtures/hudi-tables/*_v9_{savepoint,restored,deleted}) ---

def _stage(base: str, kind: str, stage: str, tmp_path) -> None:
    """Storage at base becomes the table as Hudi left it at `stage` (what its writer did meanwhile)."""
    import shutil

    src = table_copy(f"{kind}_v9_{stage}", tmp_path / f"{kind}-{stage}-{uuid.uuid4().hex[:6]}")
    shutil.rmtree(base, ignore_errors=True)
    shutil.copytree(src, base)


def _sync(env: Env, name: str) -> None:
    """Hudi's next write syncs: an alter_table of the table as it is (the catch-up runs first)."""
    env.tables.alter_table(env.db, name, env.s.tables.get_table(env.db, name))


def _held(env: Env, name: str) -> set:
    from store.hudi.timeline import held_files

    with env.store.read() as conn:
        return held_files(conn, env.s.timeline.table_ref(conn, env.db, name).tbl_id)


@pytest.mark.parametrize("kind", ["cow", "mor"])
def test_savepoint_restore_and_delete_savepoint_are_followed(env, tmp_path, kind):
    """Hudi's create_savepoint, rollback_to_savepoint and delete_savepoint procedures, each followed by
    the next sync: the savepoint (sharing its commit's time) holds the files Hudi's lists, the
    restore rolls the later commits back through the server's restore, the deleted savepoint is
    released."""
    base = str(tmp_path / "t")
    _stage(base, kind, "savepoint", tmp_path)
    tl = StorageTimeline.read(base)
    [saved] = [i for i in tl.instants if i.action == "savepoint"]
    assert [i for i in tl.instants if i.ts == saved.ts and i.action != "savepoint"]  # its commit, same time
    later = [i.ts for i in tl.instants if i.ts > saved.ts]
    ttype = tl.properties["hoodie.table.type"]
    env.tables.create_table(env.synced_table("t", base, ttype))
    assert_follows(env, "t", base)
    assert (saved.ts, "savepoint", "COMPLETED") in env.instants("t")
    held = _held(env, "t")
    assert held and {n for _, n in held} <= {n for _, _, names in os.walk(base) for n in names}
    assert "p=nyc" in env.hms_partitions("t")

    _stage(base, kind, "restored", tmp_path)  # CALL rollback_to_savepoint
    [restore] = [i for i in StorageTimeline.read(base).instants if i.action == "restore"]
    since = env.s.notifications.current_id()
    _sync(env, "t")
    assert_follows(env, "t", base)
    assert not {ts for ts, _, _ in env.instants("t")} & set(later)  # rolled back: off the timeline
    assert (restore.ts, "restore", "COMPLETED") in env.instants("t")
    assert (saved.ts, "savepoint", "COMPLETED") in env.instants("t")
    assert "p=nyc" not in env.hms_partitions("t")  # only the rolled-back insert wrote there
    assert {r["_hoodie_record_key"] for r in theirs_rows(base)} == {f"k{i}" for i in range(6)}
    events = [e.eventType for e in env.s.notifications.next_events(since, 1000) if e.tableName == "t"]
    assert "INSERT" in events and "DROP_PARTITION" in events, events

    _stage(base, kind, "deleted", tmp_path)  # an upsert, then CALL delete_savepoint
    _sync(env, "t")
    assert_follows(env, "t", base)
    assert not [i for i in env.instants("t") if i[1] == "savepoint"]
    assert _held(env, "t") == set()


def test_a_bad_restore_fails_the_call_and_changes_nothing(env, tmp_path):
    base = str(tmp_path / "t")
    _stage(base, "cow", "savepoint", tmp_path)
    env.tables.create_table(env.synced_table("t", base))
    state = (env.instants("t"), env.slices("t"), env.hms_partitions("t"), _held(env, "t"))
    _stage(base, "cow", "restored", tmp_path)
    [restore] = [i for i in StorageTimeline.read(base).instants if i.action == "restore"]
    with open(os.path.join(timeline_dir(base), restore.files[COMPLETED]), "wb") as f:
        f.write(b"\x00not avro")
    with pytest.raises(CatchUpError, match="corrupt instant file"):
        _sync(env, "t")
    assert (env.instants("t"), env.slices("t"), env.hms_partitions("t"), _held(env, "t")) == state


def test_a_savepoint_made_through_the_server_is_not_released_by_a_catch_up(env, tmp_path):
    """Only savepoints taken from storage follow storage's deletions: one made through the server's
    API on a tracked table stays until deleted through the API."""
    base = table_copy("cow_v8_complexkeygen_hivestyle", tmp_path)
    env.tables.create_table(env.synced_table("t", base))
    commit = [ts for ts, action, state in env.instants("t") if action == "commit" and state == "COMPLETED"][-1]
    tl = env.s.timeline
    tl.create_instant(env.db, "t", commit, "savepoint", None)
    tl.transition_to_inflight(env.db, "t", commit, "savepoint", None)
    tl.complete_instant(env.db, "t", commit, "savepoint", b"")
    _sync(env, "t")
    assert (commit, "savepoint", "COMPLETED") in env.instants("t")


# --- the catch-up keeps the column statistics commit by commit: equal to a recount ----------------------


def _stats_rows(env: Env, name: str) -> tuple[list, list, int]:
    from store.db import schema as S

    with env.store.read() as conn:
        tbl_id = env.s.timeline.table_ref(conn, env.db, name).tbl_id
        basic = sorted(tuple(r[1:]) for r in conn.execute(
            S.snapshot_stats.select().where(S.snapshot_stats.c.tbl_id == tbl_id)))
        cols = sorted(tuple(r[1:]) for r in conn.execute(
            S.partition_column_stats.select().where(S.partition_column_stats.c.tbl_id == tbl_id)))
        files = conn.execute(S.file_stats.select().where(S.file_stats.c.tbl_id == tbl_id)).all()
    return basic, cols, len(files)


@pytest.mark.backends("sqlite")
def test_caught_up_statistics_and_index_equal_a_recount(env, tmp_path):
    """Commits of Hudi's writer (a new base file in every file group, new file groups beside old
    ones, new partitions, a new base file in some groups of a partition) caught up one sync call at a
    time: the partitions' statistics the catch-up
    kept incrementally are what a recount of every partition finds, and the record index holds every
    key where the writer put it."""
    from bench.hudi_sync_bench import HudiTableOnStorage, partition_names
    from thrift_idl.hive_metastore.ttypes import EnvironmentContext

    table = HudiTableOnStorage(tmp_path / "writer", "w", 3)
    parts = partition_names(4)
    table.commit(parts[:3], groups_per_partition=2)
    env.tables.create_table(env.synced_table("w", str(table.base)))
    sync = env.s.hudi_sync
    sync.background = False  # the backlog is settled below, not by the server's thread

    def recount(conn):
        ref = env.s.timeline.table_ref(conn, env.db, "w")
        env.s.timeline.completion.column_stats.refresh_partitions(conn, ref, parts)

    for step in (lambda: table.commit(), lambda: table.commit(parts[1:], groups_per_partition=1),
                 lambda: table.commit(), lambda: table.commit(only=set(sorted(table.groups)[::2]))):
        ts = step()
        t = env.s.tables.get_table(env.db, "w")
        env.tables.alter_table_with_environment_context(env.db, "w", t, EnvironmentContext(properties={}))
        # the call stored the new files without reading them: no statistics yet, never pruned
        waiting = env.s.timeline.files_without_column_stats(env.db, "w")
        assert waiting and all(parse_file_name(n.rsplit("/", 1)[-1])[1] == ts for n in waiting)
        kept = _stats_rows(env, "w")
        env.store.run_write(recount)
        assert _stats_rows(env, "w") == kept
        assert sync.settle(env.db, "w") > 0 and sync.settle(env.db, "w") == 0
        kept = _stats_rows(env, "w")
        assert kept[2] > 0 and len(kept[0]) == len({p for p, _ in table.groups})
        env.store.run_write(recount)
        assert _stats_rows(env, "w") == kept
        assert env.s.timeline.files_without_column_stats(env.db, "w") == []
        want = {k: g for g, keys in table.keys.items() for k in keys}
        found = env.s.timeline.record_index.lookup(env.db, "w", sorted(want))
        assert {k: found.groups[i] for k, i in zip(sorted(want), found.group_of_key)} == want
        # each key's instant: the commit that last wrote it (every record of a group is rewritten)
        latest = {g: parse_file_name(name)[1] for g, name in table.groups.items()}
        assert dict(zip(sorted(want), found.instants)) == {k: latest[g] for k, g in want.items()}


def test_log_files_of_a_tracked_table_get_statistics_from_their_blocks(env, tmp_path):
    """Merge-on-read slices of a tracked table are skipped by their base file's and log files'
    statistics: those of the log files at the registration are read from their blocks with it, a
    deltacommit's new log file's by the index backlog after the sync call (until then its slice is
    kept). mor_v8_delete_blocks: `v` 1..9 in base files, 100..102 in log files, log files of
    deletes alone; the held-back last deltacommit writes k5's `v` 205 into a log file of p=a."""
    base = table_copy("mor_v8_delete_blocks", tmp_path)
    last = StorageTimeline.read(base).instants[-1]
    held = tmp_path / "held"
    assert hold_back(base, last.ts, held)
    table = env.synced_table("t", base, "MERGE_ON_READ")
    table.sd.cols = table.sd.cols + [FieldSchema("v", "bigint", None)]  # the harness names string columns alone
    env.tables.create_table(table)
    sync = env.s.hudi_sync
    sync.background = False  # the backlog is settled below, not by the server's thread

    def kept(predicate: str) -> list[str]:
        return sorted(s.partition_path for s in env.s.pruning.prune(env.db, "t", predicate).slices)

    assert env.s.timeline.files_without_column_stats(env.db, "t", logs=True) == []
    assert all(s.log_files for s in env.s.snapshot.latest_file_slices(env.db, "t"))
    assert kept("v > 200") == [] and kept("v > 101") == ["b"] and kept("v = 9") == ["a"]

    put_back(base, held)  # the writer's deltacommit, then its sync call
    t = env.s.tables.get_table(env.db, "t")
    env.tables.alter_table(env.db, "t", t)
    assert last.ts in {i[0] for i in env.instants("t")}
    [waiting] = env.s.timeline.files_without_column_stats(env.db, "t", logs=True)
    assert waiting.startswith("a/.") and kept("v > 200") == ["a"]  # no statistics: kept
    assert kept("v > 300") == ["a"]
    assert sync.settle(env.db, "t") > 0
    assert env.s.timeline.files_without_column_stats(env.db, "t", logs=True) == []
    assert kept("v > 200") == ["a"] and kept("v > 300") == []


def test_log_files_above_the_read_limit_get_no_statistics(env, tmp_path, monkeypatch):
    """A log file is read whole for its statistics, so one larger than the limit gets none (the
    server's memory stays bounded) and its slice is kept by every predicate."""
    monkeypatch.setattr("store.hudi.timeline.catch_up.LOG_STATS_MAX_BYTES", 64)
    base = table_copy("mor_v8_delete_blocks", tmp_path)
    table = env.synced_table("t", base, "MERGE_ON_READ")
    table.sd.cols = table.sd.cols + [FieldSchema("v", "bigint", None)]
    env.tables.create_table(table)
    env.s.hudi_sync.background = False
    kept = sorted(s.partition_path for s in env.s.pruning.prune(env.db, "t", "v > 200").slices)
    assert kept == ["a", "b"]
    assert env.s.timeline.files_without_column_stats(env.db, "t", logs=True)
    assert env.s.timeline.files_without_column_stats(env.db, "t") == []  # base files have theirs


def _synced_with_v(env, tmp_path):
    """mor_v6_delete_blocks synced as table `t` with its `v` column (background catch-up off): its
    base path, the sync service, and the partitions the server keeps for a predicate."""
    base = table_copy("mor_v6_delete_blocks", tmp_path)
    table = env.synced_table("t", base, "MERGE_ON_READ")
    table.sd.cols = table.sd.cols + [FieldSchema("v", "bigint", None)]
    env.tables.create_table(table)
    sync = env.s.hudi_sync
    sync.background = False

    def kept(predicate: str) -> list[str]:
        return sorted(s.partition_path for s in env.s.pruning.prune(env.db, "t", predicate).slices)

    return base, sync, kept


def test_a_caught_up_append_to_a_log_file_drops_its_statistics(env, tmp_path):
    """Hudi's writer of table version 6 may append to a log file the server has statistics of: the
    catch-up of that deltacommit drops them (they no longer cover the file), and the index backlog
    reads the whole file again. mor_v6_delete_blocks: p=a's newest log file holds k5's `v` 205; a
    deltacommit appends k7 with `v` 999 to it."""
    import json
    import shutil

    from hudi_format.log_file import avro_data_block
    from pipeline.file_group_writer import log_schema

    base, sync, kept = _synced_with_v(env, tmp_path)

    assert env.s.timeline.files_without_column_stats(env.db, "t", logs=True) == []
    assert kept("v > 200") == ["a"] and kept("v > 500") == []

    tdir = timeline_dir(base)
    last = StorageTimeline.read(base).instants[-1].ts
    meta = json.load(open(os.path.join(tdir, f"{last}.deltacommit")))
    [stat] = meta["partitionToWriteStats"]["a"]
    path = os.path.join(base, stat["path"])
    ts = "20261124093000000"
    schema = log_schema(meta["extraMetadata"]["schema"])
    record = {"_hoodie_commit_time": ts, "_hoodie_commit_seqno": f"{ts}_0_1", "_hoodie_record_key": "k7",
              "_hoodie_partition_path": "a", "_hoodie_file_name": stat["fileId"], "id": "k7", "v": 999, "ts": 5,
              "p": "a"}
    offset = os.path.getsize(path)
    with open(path, "ab") as f:
        f.write(avro_data_block(ts, schema, [record]))
    stat.update(logOffset=offset, fileSizeInBytes=os.path.getsize(path), prevCommit=stat["prevCommit"])
    for suffix in ("deltacommit.requested", "deltacommit.inflight"):
        shutil.copy(os.path.join(tdir, f"{last}.{suffix}"), os.path.join(tdir, f"{ts}.{suffix}"))
    with open(os.path.join(tdir, f"{ts}.deltacommit"), "w") as f:
        json.dump(meta, f)

    env.tables.alter_table(env.db, "t", env.s.tables.get_table(env.db, "t"))  # its sync call
    assert ts in {i[0] for i in env.instants("t")}
    assert env.s.timeline.files_without_column_stats(env.db, "t", logs=True) == [stat["path"]]
    assert kept("v > 500") == ["a"]  # its statistics are gone: kept
    assert sync.settle(env.db, "t") > 0
    assert env.s.timeline.files_without_column_stats(env.db, "t", logs=True) == []
    assert kept("v > 500") == ["a"] and kept("v > 1000") == []  # read again whole: 205 and 999


def _append_deltacommit(base: str, ts: str, record: dict, complete: bool = True) -> dict:
    """Hudi's writer of table version 6 appending `record` (partition a) to the newest log file of
    p=a, as the last deltacommit did: the write stat of the append (the deltacommit's instant files
    written, the completed one when `complete`; a failed writer leaves requested and inflight)."""
    import json
    import shutil

    from hudi_format.log_file import avro_data_block
    from pipeline.file_group_writer import log_schema

    tdir = timeline_dir(base)
    last = [i.ts for i in StorageTimeline.read(base).instants if i.action == "deltacommit"][-1]
    meta = json.load(open(os.path.join(tdir, f"{last}.deltacommit")))
    [stat] = meta["partitionToWriteStats"]["a"]
    path = os.path.join(base, stat["path"])
    offset = os.path.getsize(path)
    with open(path, "ab") as f:
        f.write(avro_data_block(ts, log_schema(meta["extraMetadata"]["schema"]), [
            {"_hoodie_commit_time": ts, "_hoodie_commit_seqno": f"{ts}_0_1", "_hoodie_record_key": record["id"],
             "_hoodie_partition_path": "a", "_hoodie_file_name": stat["fileId"], "p": "a", **record}]))
    stat.update(logOffset=offset, fileSizeInBytes=os.path.getsize(path))
    for suffix in ("deltacommit.requested", "deltacommit.inflight"):
        shutil.copy(os.path.join(tdir, f"{last}.{suffix}"), os.path.join(tdir, f"{ts}.{suffix}"))
    if complete:
        with open(os.path.join(tdir, f"{ts}.deltacommit"), "w") as f:
            json.dump(meta, f)
    return stat


def _rollback_block(base: str, stat: dict, ts: str, target: str) -> dict:
    """Hudi's rollback (table version 6) of deltacommit `target`: a rollback command block appended to
    the log file of `stat`, and the partition metadata naming it (rollbackLogFiles) and the failed
    commit's log file (logFilesFromFailedCommit); `target`'s instant files leave the timeline."""
    from hudi_format.log_file import (
        COMMAND,
        COMMAND_BLOCK_TYPE,
        INSTANT_TIME,
        ROLLBACK,
        TARGET_INSTANT_TIME,
        encode_block,
    )

    path = os.path.join(base, stat["path"])
    with open(path, "ab") as f:
        f.write(encode_block(COMMAND, {INSTANT_TIME: ts, TARGET_INSTANT_TIME: target, COMMAND_BLOCK_TYPE: ROLLBACK},
                             b""))
    tdir = timeline_dir(base)
    for n in os.listdir(tdir):
        if n.startswith(target + "."):
            os.remove(os.path.join(tdir, n))
    size = os.path.getsize(path)
    return {"startRollbackTime": ts, "timeTakenInMillis": 1, "totalFilesDeleted": 0, "commitsRollback": [target],
            "partitionMetadata": {"a": {"partitionPath": "a", "successDeleteFiles": [], "failedDeleteFiles": [],
                                        "rollbackLogFiles": {"file:" + path: size},
                                        "logFilesFromFailedCommit": {"file:" + path: size}}},
            "version": 1, "instantsRollback": [{"commitTime": target, "action": "deltacommit"}]}


@pytest.mark.parametrize("how", ["rollback", "restore"])
def test_a_caught_up_rollback_block_drops_the_log_files_statistics(env, tmp_path, how):
    """Hudi's rollback (and restore) of table version 6 appends a rollback command block to a log
    file the server has statistics of: the catch-up drops them, so no predicate skips the slice by
    the old bounds, and the index backlog reads none again (a rollback block is not read for
    statistics). rollback: of a failed deltacommit that appended k7's `v` 999 to p=a's newest log
    file (bounds up to 205); restore: of a completed one (bounds up to 999, read by the backlog)."""
    from hudi_format.commit_metadata import (
        RESTORE_METADATA_SCHEMA,
        ROLLBACK_METADATA_SCHEMA,
        avro_container,
        restore_plan,
        rollback_plan,
    )

    base, sync, kept = _synced_with_v(env, tmp_path)

    def sync_call() -> None:
        env.tables.alter_table(env.db, "t", env.s.tables.get_table(env.db, "t"))

    failed, undone = "20261124093000000", "20261124094000000"
    record = {"id": "k7", "v": 999, "ts": 5}
    if how == "rollback":
        stat = _append_deltacommit(base, failed, record, complete=False)  # the writer fails
        old = "v > 500"
    else:
        stat = _append_deltacommit(base, failed, record)
        sync_call()
        assert sync.settle(env.db, "t") > 0
        old = "v > 1000"
    assert env.s.timeline.files_without_column_stats(env.db, "t", logs=True) == []
    assert kept(old) == []  # the log file's bounds skip its slice

    tdir = timeline_dir(base)
    rollback = _rollback_block(base, stat, undone, failed)
    if how == "rollback":
        plan = rollback_plan(failed, "deltacommit", {})
        done = avro_container(ROLLBACK_METADATA_SCHEMA, rollback)
    else:
        plan = restore_plan(failed, [(failed, "deltacommit")])  # a restore to a savepoint before it
        done = avro_container(RESTORE_METADATA_SCHEMA, {
            "startRestoreTime": undone, "timeTakenInMillis": 1, "instantsToRollback": [failed],
            "hoodieRestoreMetadata": {failed: [rollback]}, "version": 1,
            "restoreInstantInfo": [{"commitTime": failed, "action": "deltacommit"}], "extraMetadata": None})
    for suffix, data in ((f"{how}.requested", plan), (f"{how}.inflight", b""), (how, done)):
        with open(os.path.join(tdir, f"{undone}.{suffix}"), "wb") as f:
            f.write(data)

    sync_call()
    assert (undone, how, "COMPLETED") in env.instants("t")
    assert env.s.timeline.files_without_column_stats(env.db, "t", logs=True) == [stat["path"]]
    assert kept(old) == ["a"]  # its statistics are gone: kept
    sync.settle(env.db, "t")
    assert env.s.timeline.files_without_column_stats(env.db, "t", logs=True) == [stat["path"]]
    assert kept(old) == ["a"] and kept("v > 100000") == ["a"]
    assert_follows(env, "t", base)


def test_statistics_the_backlog_reads_after_the_mirror_took_the_instant_reach_its_metadata_table(env, tmp_path):
    """A tracked table whose metadata table the mirror writes: when its index backlog is settled
    after the mirror wrote the caught-up instant's deltacommit (whose files had no statistics yet),
    the settle leaves a mark and a pending version, and the mirror's next step writes the
    `column_stats` partition again from the rows: it then holds the instant's files."""
    from store.hudi.storage_mirror import StorageMirror
    from tests.unit.store.hudi.test_metadata_column_stats import partition_view

    base = table_copy("cow_v6_simplekeygen_nonhivestyle", tmp_path)
    with open(os.path.join(base, ".hoodie", "hoodie.properties"), "a") as f:
        f.write("hoodie.metadata.enable=true\n")
    last = StorageTimeline.read(base).instants[-1]
    hold_back(base, last.ts, tmp_path / "held")
    table = env.synced_table("t", base)
    table.sd.cols = [FieldSchema("name", "string", None), FieldSchema("longfield", "bigint", None)]
    table.partitionKeys = [FieldSchema("bytefield", "tinyint", None)]  # its columns' types: statistics hold
    env.tables.create_table(table)
    mirror = StorageMirror(env.store, env.s.timeline)
    mirror.sync(env.db, "t")  # the mirror takes the table's storage over

    def recorded() -> set[str]:
        return {s["fileName"] for s in partition_view(base).values()}

    env.s.hudi_sync.background = False  # the backlog waits
    put_back(base, tmp_path / "held")
    env.tables.alter_table(env.db, "t", env.s.tables.get_table(env.db, "t"))
    new = {s.base_file.name for s in env.s.snapshot.latest_file_slices(env.db, "t") if s.base_instant == last.ts}
    assert recorded()
    mirror.sync(env.db, "t")
    assert new and not new & recorded()
    assert env.s.hudi_sync.settle(env.db, "t") > 0
    assert mirror.lag(env.db, "t") == 1
    mirror.sync(env.db, "t")
    assert new <= recorded() and mirror.lag(env.db, "t") == 0


def test_the_mirror_leaves_archiving_a_tracked_timeline_to_its_writer(env, tmp_path):
    """Instants caught up from storage were written by a Hudi writer: it archives its timeline
    itself, and it may still be reading it (its meta sync is what made the server catch up; a CI
    run once saw Hudi's sync fail on a commit file the server's archive had just removed). So the
    mirror's step over caught-up instants archives nothing, however long the timeline is."""
    from hudi_format.config_keys import ARCHIVE_MAX_COMMITS, ARCHIVE_MIN_COMMITS
    from store.hudi.storage_mirror import StorageMirror

    def timeline_files() -> list[str]:  # the active timeline's files and the archived timeline's
        tdir = timeline_dir(base)
        return sorted([n for n in os.listdir(tdir) if os.path.isfile(os.path.join(tdir, n))] +
                      [f"archived/{n}" for n in os.listdir(os.path.join(base, ".hoodie", "archived"))])

    base = table_copy("mor_v6_kryo_delete_blocks", tmp_path)  # 5 deltacommits
    with open(os.path.join(base, ".hoodie", "hoodie.properties"), "a") as f:
        f.write(f"hoodie.metadata.enable=true\n{ARCHIVE_MIN_COMMITS}=2\n{ARCHIVE_MAX_COMMITS}=3\n")
    stamps = [i.ts for i in StorageTimeline.read(base).instants]
    for ts in stamps[2:]:
        hold_back(base, ts, tmp_path / "held")
    env.tables.create_table(env.synced_table("t", base, "MERGE_ON_READ"))
    mirror = StorageMirror(env.store, env.s.timeline)
    mirror.metadata_table.compact_after = 1  # its base file follows: no floor before the newest instant
    mirror.sync(env.db, "t")  # the mirror takes the table's metadata table over
    put_back(base, tmp_path / "held")  # Hudi's writer commits three more; its sync calls the metastore
    env.tables.alter_table(env.db, "t", env.s.tables.get_table(env.db, "t"))
    assert [i[0] for i in env.instants("t")] == stamps
    before = timeline_files()
    assert mirror.lag(env.db, "t") > 0  # the caught-up instants wait for the mirror's step
    mirror.sync(env.db, "t")  # as the background thread's pass runs it
    assert mirror.lag(env.db, "t") == 0
    assert timeline_files() == before  # nothing archived, nothing removed
    assert [i.ts for i in StorageTimeline.read(base).instants] == stamps


def test_the_background_archive_of_a_tracked_table_holds_hudis_table_lock(env, tmp_path, monkeypatch):
    """A tracked table's timeline is Hudi's writers' too: the server's background archive of it (due
    after the server's own commits) runs under the EXCLUSIVE table lock Hudi's
    HiveMetastoreBasedLockProvider takes for its commits and its archiver. While a writer holds it,
    nothing is archived and the table stays due; the pass after its release archives."""
    from hudi_format.config_keys import ARCHIVE_MAX_COMMITS, ARCHIVE_MIN_COMMITS
    from store.hudi import storage_mirror
    from thrift_idl.hive_metastore.ttypes import (
        DataOperationType,
        LockComponent,
        LockLevel,
        LockRequest,
        LockState,
        LockType,
        ShowLocksRequest,
        UnlockRequest,
    )

    monkeypatch.setattr(storage_mirror, "ARCHIVE_LOCK_WAIT_S", 0.1)
    base = table_copy("mor_v6_kryo_delete_blocks", tmp_path)  # 5 deltacommits, no metadata table
    with open(os.path.join(base, ".hoodie", "hoodie.properties"), "a") as f:
        f.write(f"{ARCHIVE_MIN_COMMITS}=2\n{ARCHIVE_MAX_COMMITS}=3\n")
    stamps = [i.ts for i in StorageTimeline.read(base).instants]
    env.tables.create_table(env.synced_table("t", base, "MERGE_ON_READ"))
    mirror = storage_mirror.StorageMirror(env.store, env.s.timeline, table_lock=env.s.locks.table_held)
    mirror.sync(env.db, "t")

    hudi = env.s.locks.lock(LockRequest(component=[LockComponent(
        type=LockType.EXCLUSIVE, level=LockLevel.TABLE, dbname=env.db, tablename="t",
        operationType=DataOperationType.UPDATE)], user="hudi", hostname="writer"))
    assert hudi.state == LockState.ACQUIRED
    mirror._archive_due[(env.db, "t")] = None  # as the server's own commit leaves it
    assert mirror.archive_due() == 0
    assert [i.ts for i in StorageTimeline.read(base).instants] == stamps  # nothing archived
    assert (env.db, "t") in mirror._archive_due  # still due

    env.s.locks.unlock(UnlockRequest(lockid=hudi.lockid))
    assert mirror.archive_due() == 1
    assert [i.ts for i in StorageTimeline.read(base).instants] == stamps[3:]  # as Hudi's archiver: keep 2
    assert not mirror._archive_due
    assert env.s.locks.show_locks(ShowLocksRequest(dbname=env.db, tablename="t")).locks == []  # released
