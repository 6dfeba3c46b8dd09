"""Notification log (store/hms/notification_log/log.py, adapter/handlers/notifications.py).

* The log on each backend: ids in commit order under concurrent writers, rollback, filters and
  bounds, counts, retention.
* Through a real server: get_next_notification, get_current_notificationEventId,
  get_notification_events_count, fire_listener_event; and a consumer that replays the log into a
  second metastore (tests/notification_replay.py).

Messages themselves are tested in test_notification_messages.py. The write paths of the services
do not record events yet: tests record them here, in the transactions of writes they make, or right
after Thrift writes (see `_Emitter`).
"""

from __future__ import annotations

import json
import random
import threading
import time
import uuid

import pytest
from sqlalchemy import insert, select
from thrift.Thrift import TException

from store.db import schema as S
from store.db.database import Store
from store.db.migrations import current_revision, upgrade
from store.hms.notification_log import NotificationLog
from store.hms.notification_log import events as E
from store.hms.notification_log import messages as M
from tests.harness import ServerStartError, start_our_server, stop_process
from tests.notification_objects import make_db, make_part, make_sd, make_table
from tests.notification_replay import Replayer
from thrift_idl.hive_metastore.ttypes import (
    Database,
    FieldSchema,
    FireEventRequest,
    FireEventRequestData,
    InsertEventRequestData,
    NotificationEventRequest,
    NotificationEventsCountRequest,
    Partition,
    StorageDescriptor,
    Table,
)

# --------------------------------------------------------------------------- the log on each backend


@pytest.fixture
def store(backend_url):
    """A store on the session's database of the backend (shared with `our_server`): schema upgraded
    to head. Tests keep apart by database names of their own."""
    s = Store(backend_url)
    if current_revision(s.engine) is None:
        upgrade(s.engine)
    yield s
    s.dispose()


def _uid(prefix):
    return f"{prefix}_{uuid.uuid4().hex[:10]}"


def test_record_in_the_writing_transaction(store):
    log = NotificationLog(store)
    db = _uid("rec")
    before = log.current_id()
    with store.write() as conn:
        conn.execute(insert(S.metastore_info).values(info_key=db, info_value="x"))
        ids = log.record(conn, E.create_database(make_db(db)), E.create_table(make_table(db)))
    assert ids == [before + 1, before + 2] and log.current_id() == before + 2
    with pytest.raises(RuntimeError), store.write() as conn:  # rolled back: no event, no id used
        log.record(conn, E.drop_table(make_table(db)))
        raise RuntimeError("abort")
    assert log.current_id() == before + 2
    assert store.run_write(log.record, E.drop_table(make_table(db))) == [before + 3]
    got = log.next_events(before, db=db)
    assert [(e.eventId, e.eventType, e.dbName, e.tableName, e.catName, e.messageFormat) for e in got] == [
        (before + 1, "CREATE_DATABASE", db, None, "hive", "json-0.2"),
        (before + 2, "CREATE_TABLE", db, "t", "hive", "json-0.2"),
        (before + 3, "DROP_TABLE", db, "t", "hive", "json-0.2")]
    assert M.from_tjson(json.loads(got[1].message)["tableObjJson"], Table) == make_table(db)
    with store.read() as conn:
        assert conn.execute(select(S.metastore_info.c.info_value).where(S.metastore_info.c.info_key == db)).scalar()


def test_ids_follow_commit_order(store):
    """Writers whose transactions start, take their ids and commit in any interleaving (some roll
    back): a reader polling all the while never misses an event, and the ids have no gaps."""
    log = NotificationLog(store)
    db = _uid("order")
    recorded: list[int] = []
    errors: list[BaseException] = []
    done = threading.Event()

    def writer(seed):
        rnd = random.Random(seed)
        try:
            for i in range(8):
                try:
                    with store.write() as conn:
                        conn.execute(insert(S.metastore_info).values(info_key=f"{db}_{seed}_{i}", info_value="x"))
                        time.sleep(rnd.uniform(0, 0.01))  # work before the event
                        ids = log.record(conn, E.create_table(make_table(db, f"t{seed}_{i}")))
                        time.sleep(rnd.uniform(0, 0.01))  # holds the id lock until the commit
                        if rnd.random() < 0.2:
                            raise KeyError("roll back")
                    recorded.extend(ids)
                except KeyError:
                    pass
        except BaseException as exc:  # noqa: BLE001
            errors.append(exc)

    seen: list[int] = []
    start = log.current_id()

    def reader():
        last = start
        while True:
            stop = done.is_set()
            got = [e.eventId for e in log.next_events(last, db=db)]
            assert got == sorted(got) and (not got or got[0] > last)
            seen.extend(got)
            last = got[-1] if got else last
            if stop:
                return

    r = threading.Thread(target=reader)
    r.start()
    threads = [threading.Thread(target=writer, args=(n,)) for n in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    done.set()
    r.join()
    assert not errors, errors
    assert recorded and seen == sorted(recorded)
    assert seen == list(range(seen[0], seen[0] + len(seen)))  # rolled-back transactions left no gaps


def _filter_fixture(store):
    log = NotificationLog(store)
    a, b = _uid("fa"), _uid("fb")
    base = log.current_id()
    t1, t2 = make_table(a, "t1"), make_table(a, "t2")
    evs = [E.create_table(t1), E.create_table(t2), *E.add_partitions(t1, [make_part(t1, ["d", "1"])]),
           E.insert(t2, None, ["f"]), E.drop_table(t1), E.create_table(make_table(b, "t1"))]
    ids = store.run_write(log.record, *evs)
    return log, a, b, base, ids


def test_filters_and_bounds(store):
    log, a, b, base, ids = _filter_fixture(store)

    def got(**kw):
        return [(e.eventType, e.tableName) for e in log.next_events(base, **kw)]

    assert [e.eventId for e in log.next_events(base, db=a)] == ids[:5]
    assert got(db=a.upper(), tables=["T1"]) == [("CREATE_TABLE", "t1"), ("ADD_PARTITION", "t1"), ("DROP_TABLE", "t1")]
    assert got(db=a, skip_types=["INSERT", "ADD_PARTITION", "DROP_TABLE"]) == [("CREATE_TABLE", "t1"),
                                                                             ("CREATE_TABLE", "t2")]
    assert len(got(db=a, cat="HIVE")) == 5 and got(db=a, cat="other") == []
    assert got(tables=["t1"], db=b) == [("CREATE_TABLE", "t1")]
    assert len(log.next_events(base, 2)) == 2
    assert len(log.next_events(base, 0)) == len(log.next_events(base, -1)) == len(log.next_events(base)) == 6
    assert log.next_events(ids[-1]) == []
    capped = NotificationLog(store, max_events=3)
    assert [e.eventId for e in capped.next_events(base, 0)] == ids[:3]
    assert [e.eventId for e in capped.next_events(base, 100)] == ids[:3]
    tiny = NotificationLog(store, max_response_chars=10)  # the first event always comes, however long
    assert [e.eventId for e in tiny.next_events(base, 10)] == ids[:1]
    small = NotificationLog(store, max_response_chars=2 * len(log.next_events(base, 1)[0].message) + 1)
    assert len(small.next_events(base, 10)) == 2

    assert log.count(base, a) == 5 and log.count(base, a.upper(), cat="hive") == 5
    assert log.count(base, "*") == 6 and log.count(base, a, cat="other") == 0
    assert log.count(base, a, to_event=ids[1]) == 2 and log.count(base, a, limit=3) == 3
    assert log.count(base, a, tables=["T2"]) == 2 and log.count(ids[2], a) == 2


def test_retention(store):
    now = [1_000]
    log = NotificationLog(store, ttl_s=100, clock_s=lambda: now[0])
    db = _uid("ret")
    base = log.current_id()
    old = store.run_write(log.record, *[E.create_table(make_table(db, f"o{i}")) for i in range(5)])
    now[0] = 1_050
    young = store.run_write(log.record, *[E.create_table(make_table(db, f"y{i}")) for i in range(3)])
    now[0] = 1_101  # the first five are older than 100 s
    assert log.clean(batch=2) == 5
    assert [e.eventId for e in log.next_events(base, db=db)] == young
    assert log.current_id() == young[-1] and old[-1] < young[0]
    assert log.clean() == 0
    now[0] = 1_200
    log.start_cleaner(interval_s=0.05)
    try:
        deadline = time.monotonic() + 30
        while log.next_events(base, db=db) and time.monotonic() < deadline:
            time.sleep(0.05)
    finally:
        log.stop()
    assert log.next_events(base, db=db) == [] and log.current_id() >= young[-1]


def test_serve_cleans_expired_events(store, tmp_path, thrift_client):
    """`serve --event-ttl --event-clean-interval`: the server's cleaner deletes expired events."""
    log = NotificationLog(store, clock_s=lambda: 1_000)  # recorded long ago
    db = _uid("serve")
    base = log.current_id()
    [old] = store.run_write(log.record, E.create_database(make_db(db)))
    [young] = store.run_write(NotificationLog(store).record, E.drop_database(make_db(db)))
    try:
        port, proc = start_our_server(store.url, tmp_path, extra_args=["--event-ttl", "3600",
                                                                       "--event-clean-interval", "0.2"])
    except ServerStartError as e:
        pytest.fail(str(e), pytrace=False)
    try:
        client = thrift_client(port)
        deadline = time.monotonic() + 30
        while len(log.next_events(base, db=db)) > 1 and time.monotonic() < deadline:
            time.sleep(0.1)
        got = client.get_next_notification(NotificationEventRequest(lastEvent=base, dbName=db)).events
        assert [e.eventId for e in got] == [young] and old < young
    finally:
        stop_process(proc)


# --------------------------------------------------------------------------- through the server


@pytest.fixture
def server_log(our_server_info):
    s = Store(our_server_info.db_url)
    yield NotificationLog(s)
    s.dispose()


def test_thrift_calls(our_server, server_log, thrift_client):
    client = thrift_client(our_server)
    log, a, b, base, ids = _filter_fixture(server_log.store)
    assert client.get_current_notificationEventId().eventId == ids[-1] == log.current_id()
    resp = client.get_next_notification(NotificationEventRequest(lastEvent=base))
    assert [e.eventId for e in resp.events] == ids
    assert resp.events == log.next_events(base)
    first = resp.events[0]
    assert (first.eventType, first.dbName, first.tableName, first.catName, first.messageFormat) == (
        "CREATE_TABLE", a, "t1", "hive", "json-0.2")
    assert M.from_tjson(json.loads(first.message)["tableObjJson"], Table) == make_table(a, "t1")

    def ids_of(**kw):
        return [e.eventId for e in client.get_next_notification(NotificationEventRequest(lastEvent=base, **kw)).events]

    assert ids_of(maxEvents=2) == ids[:2] and ids_of(maxEvents=0) == ids and ids_of(maxEvents=-5) == ids
    assert ids_of(eventTypeSkipList=["CREATE_TABLE"]) == ids[2:5]
    assert ids_of(dbName=b) == ids[5:] and ids_of(dbName=a, tableNames=["t2"]) == [ids[1], ids[3]]
    assert ids_of(catName="hive", dbName=a.upper()) == ids[:5] and ids_of(catName="spark") == []

    def count(**kw):
        return client.get_notification_events_count(NotificationEventsCountRequest(fromEventId=base, **kw)).eventsCount

    assert count(dbName=a) == 5 and count(dbName="*") == 6 and count(dbName=a, toEventId=ids[2]) == 3
    assert count(dbName=a, limit=1) == 1 and count(dbName=a, tableNames=["t1"]) == 3 and count(dbName=b) == 1
    assert count(dbName=a, catName="spark") == 0


def _create_partitioned(client, db):
    client.create_database(Database(name=db, parameters={}))
    client.create_table(Table(tableName="t", dbName=db, sd=make_sd(None, params={}), parameters={},
                              partitionKeys=[FieldSchema("dt", "string", None), FieldSchema("n", "int", None)],
                              tableType="MANAGED_TABLE"))
    table = client.get_table(db, "t")
    client.add_partitions([make_part(table, ["2024-01-01", "1"]), make_part(table, ["2024-01-02", "2"])])
    return table


def test_fire_listener_event(our_server, server_log, thrift_client):
    client = thrift_client(our_server)
    db = _uid("fire")
    table = _create_partitioned(client, db)
    part = client.get_partition(db, "t", ["2024-01-01", "1"])
    one = FireEventRequest(successful=True, dbName=db.upper(), tableName="T", partitionVals=["2024-01-01", "1"],
                           data=FireEventRequestData(insertData=InsertEventRequestData(
                               replace=False, filesAdded=["file:/x/a", "file:/x/b"], filesAddedChecksum=["1", "2"])))
    [eid] = client.fire_listener_event(one).eventIds
    assert client.get_current_notificationEventId().eventId >= eid
    [ev] = client.get_next_notification(NotificationEventRequest(lastEvent=eid - 1, maxEvents=1)).events
    msg = json.loads(ev.message)
    assert (ev.eventId, ev.eventType, ev.dbName, ev.tableName) == (eid, "INSERT", db, "t")
    assert (msg["files"], msg["replace"], msg["db"], msg["table"]) == (["file:/x/a#1", "file:/x/b#2"], "false", db, "t")
    assert M.from_tjson(msg["tableObjJson"], Table) == client.get_table(db, "t") == table
    assert M.from_tjson(msg["ptnObjJson"], Partition) == part

    bulk = FireEventRequest(successful=True, dbName=db, tableName="t", data=FireEventRequestData(insertDatas=[
        InsertEventRequestData(filesAdded=["file:/x/c"], partitionVal=["2024-01-02", "2"]),
        InsertEventRequestData(filesAdded=["file:/x/d"])]))
    ids = client.fire_listener_event(bulk).eventIds
    assert ids == [ids[0], ids[0] + 1] and ids[0] > eid
    evs = client.get_next_notification(NotificationEventRequest(lastEvent=ids[0] - 1, maxEvents=2)).events
    msgs = [json.loads(e.message) for e in evs]
    assert [m["replace"] for m in msgs] == ["true", "true"]  # Hive's default when unset
    assert M.from_tjson(msgs[0]["ptnObjJson"], Partition).values == ["2024-01-02", "2"]
    assert msgs[1]["ptnObjJson"] is None

    current = client.get_current_notificationEventId().eventId
    for bad in (FireEventRequest(successful=True, dbName=db, tableName="missing", data=one.data),
                FireEventRequest(successful=True, dbName=db, tableName="t", partitionVals=["no", "0"], data=one.data),
                FireEventRequest(successful=True, dbName=db, tableName="t",
                                 data=FireEventRequestData(refreshEvent=True))):
        with pytest.raises(TException):
            client.fire_listener_event(bad)
    assert client.get_current_notificationEventId().eventId == current


# --------------------------------------------------------------------------- replay into a second metastore


@pytest.fixture(scope="module")
def target_server(tmp_path_factory):
    """A second metastore (SQLite) that the replay consumer writes into."""
    d = tmp_path_factory.mktemp("replay-target")
    try:
        port, proc = start_our_server(f"sqlite:///{d / 'target.db'}", d)
    except ServerStartError as e:
        pytest.fail(str(e), pytrace=False)
    yield port
    stop_process(proc)


class _Emitter:
    """Records the events a Thrift write should have recorded, unless the write did so itself (once
    the write paths emit events, this becomes a no-op and the test keeps passing)."""

    def __init__(self, client, log: NotificationLog | None):
        self.client = client
        self.log = log

    def __call__(self, write, build):
        before = self.client.get_current_notificationEventId().eventId
        write()
        if self.log is not None and self.client.get_current_notificationEventId().eventId == before:
            self.log.record_now(*build())


def _scenario(client, db, emit):
    """DDL on the source: databases, tables, partitions, created, altered, renamed and dropped."""
    get = client.get_table
    emit(lambda: client.create_database(Database(name=db, description="src", parameters={"a": "1"})),
         lambda: [E.create_database(client.get_database(db))])
    cols = [FieldSchema("dt", "string", None)]
    # external: both metastores name the same directories, which renames must not move twice
    for name, keys in (("t", cols), ("u", []), ("v", [])):
        tbl = Table(tableName=name, dbName=db, sd=make_sd(None, params={}), parameters={"p": name, "EXTERNAL": "TRUE"},
                    partitionKeys=keys, tableType="EXTERNAL_TABLE")
        emit(lambda tbl=tbl: client.create_table(tbl), lambda name=name: [E.create_table(get(db, name))])
    t = get(db, "t")
    parts = [make_part(t, [d]) for d in ("2024-01-01", "2024-01-02", "2024-01-03")]
    emit(lambda: client.add_partitions(parts),
         lambda: E.add_partitions(get(db, "t"), [client.get_partition(db, "t", p.values) for p in parts]))
    old = client.get_partition(db, "t", ["2024-01-01"])
    new = Partition(**{**old.__dict__, "parameters": {**old.parameters, "k": "v"}})
    emit(lambda: client.alter_partition(db, "t", new),
         lambda: [E.alter_partition(get(db, "t"), old, client.get_partition(db, "t", old.values))])
    old = client.get_partition(db, "t", ["2024-01-02"])
    moved = Partition(**{**old.__dict__, "values": ["2024-02-02"]})
    emit(lambda: client.rename_partition(db, "t", old.values, moved),
         lambda: [E.alter_partition(get(db, "t"), old, client.get_partition(db, "t", moved.values))])
    emit(lambda: client.drop_partition(db, "t", ["2024-01-03"], False),
         lambda: E.drop_partitions(get(db, "t"), [["2024-01-03"]]))
    old_u = get(db, "u")
    wider = StorageDescriptor(**{**old_u.sd.__dict__, "cols": old_u.sd.cols + [FieldSchema("w", "int", None)]})
    new_u = Table(**{**old_u.__dict__, "parameters": {**old_u.parameters, "q": "2"}, "sd": wider})
    emit(lambda: client.alter_table(db, "u", new_u), lambda: [E.alter_table(old_u, get(db, "u"))])
    old_u = get(db, "u")
    emit(lambda: client.alter_table(db, "u", Table(**{**old_u.__dict__, "tableName": "u2"})),
         lambda: [E.alter_table(old_u, get(db, "u2"))])
    old_v = get(db, "v")
    emit(lambda: client.drop_table(db, "v", False), lambda: [E.drop_table(old_v)])
    old_db = client.get_database(db)
    emit(lambda: client.alter_database(db, Database(**{**old_db.__dict__, "parameters": {"a": "2"}})),
         lambda: [E.alter_database(old_db, client.get_database(db))])
    gone = db + "_gone"
    emit(lambda: client.create_database(Database(name=gone, parameters={})),
         lambda: [E.create_database(client.get_database(gone))])
    old_gone = client.get_database(gone)
    emit(lambda: client.drop_database(gone, False, True), lambda: [E.drop_database(old_gone)])


def _snapshot(client, db):
    """What the replay copies, without the times a metastore sets itself."""
    d = client.get_database(db)
    out = {"db": (d.name, d.description, d.locationUri, d.parameters), "tables": {}}
    for name in sorted(client.get_all_tables(db)):
        t = client.get_table(db, name)
        t.createTime = t.lastAccessTime = t.id = None  # each metastore numbers its own tables
        parts = sorted(client.get_partitions(db, name, -1), key=lambda p: p.values)
        for p in parts:
            p.createTime = p.lastAccessTime = None
        out["tables"][name] = (t, parts)
    return out


def _replay(our_server, target_server, thrift_client, emitting):
    source, target = thrift_client(our_server), thrift_client(target_server)
    db = _uid("replay")
    start = source.get_current_notificationEventId().eventId
    _scenario(source, db, _Emitter(source, emitting))
    replayer = Replayer(source, target, last_event=start, batch=3)
    replayer.poll()
    assert replayer.applied["CREATE_TABLE"] == 3 and replayer.applied["DROP_DATABASE"] == 1
    assert _snapshot(target, db) == _snapshot(source, db)
    assert db + "_gone" not in target.get_all_databases()
    assert replayer.poll() == 0


def test_replay_into_second_metastore(our_server, target_server, thrift_client, server_log):
    """The replay consumer applied to the events the scenario's writes record (here by the test,
    right after each write; by the writes themselves once they emit events)."""
    _replay(our_server, target_server, thrift_client, server_log)


def test_replay_from_write_paths(our_server, target_server, thrift_client):
    """Replay of events the write paths record themselves: the two metastores end up equal."""
    _replay(our_server, target_server, thrift_client, None)


def test_unknown_event_types_are_skipped():
    r = Replayer(None, None)
    r.apply("CREATE_FUNCTION", {})
    assert r.skipped["CREATE_FUNCTION"] == 1 and not r.applied

