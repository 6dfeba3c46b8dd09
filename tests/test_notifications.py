"""Notification log (store/hms/notification_log, adapter/handlers/notifications.py).

* Messages: the JSON Hive's JSONMessageEncoder writes (field names and order, TJSON objects that
  read back equal, Java's TJSONProtocol escaping), and Hive's own deserializer (Hive 2.3, from
  pyspark's jars) reads them.
* The log on each backend: ids in commit order under concurrent writers, rollback, filters and
  bounds, counts, retention.
* Through a real server: get_next_notification, get_current_notificationEventId,
  get_notification_events_count, fire_listener_event; and a consumer that replays the log into a
  second metastore (tests/notification_replay.py).

The write paths of the services do not record events yet: tests record them here, in the
transactions of writes they make, or right after Thrift writes (see `_Emitter`).
"""

from __future__ import annotations

import json
import random
import shutil
import subprocess
import threading
import time
import uuid
from pathlib import Path

import pytest
from sqlalchemy import insert, select
from thrift.Thrift import TException

from store.db import schema as S
from store.db.database import Store
from store.db.migrations import current_revision, upgrade
from store.hms.notification_log import events as E
from store.hms.notification_log import messages as M
from store.hms.notification_log.log import NotificationLog
from tests.harness import ServerStartError, start_our_server, stop_process
from tests.notification_replay import Replayer
from thrift_idl.hive_metastore.ttypes import (
    Catalog,
    Database,
    FieldSchema,
    FireEventRequest,
    FireEventRequestData,
    Function,
    InsertEventRequestData,
    NotificationEventRequest,
    NotificationEventsCountRequest,
    Order,
    Partition,
    ResourceUri,
    SerDeInfo,
    SQLForeignKey,
    SQLPrimaryKey,
    StorageDescriptor,
    Table,
)

# --------------------------------------------------------------------------- objects


def _sd(location, params=None):
    return StorageDescriptor(
        cols=[FieldSchema("id", "int", "the id"), FieldSchema("v", "string", None)], location=location,
        inputFormat="org.apache.hadoop.mapred.TextInputFormat",
        outputFormat="org.apache.hadoop.hive.ql.io.HiveIgnoreKeyTextOutputFormat", compressed=False,
        numBuckets=-1, serdeInfo=SerDeInfo(serializationLib="org.apache.hadoop.hive.serde2.lazy.LazySimpleSerDe",
                                           parameters=params if params is not None else {"field.delim": "\x01"}),
        bucketCols=[], sortCols=[Order("id", 1)], parameters={})


def _table(db="db1", name="t", keys=(("dt", "string"), ("n", "int")), location=None):
    return Table(tableName=name, dbName=db, owner="alice", createTime=1_700_000_000, lastAccessTime=0,
                 retention=0, sd=_sd(location or f"file:/wh/{db}.db/{name}"),
                 partitionKeys=[FieldSchema(k, t, None) for k, t in keys],
                 parameters={"comment": 'é "q" \\ \n\t/ \u2028 \U0001f600'}, tableType="MANAGED_TABLE",
                 catName="hive")


def _part(table, values, **params):
    loc = table.sd.location + "/" + "/".join(f"{k.name}={v}" for k, v in zip(table.partitionKeys, values))
    return Partition(values=list(values), dbName=table.dbName, tableName=table.tableName, createTime=1_700_000_001,
                     lastAccessTime=0, sd=_sd(loc), parameters=dict(params), catName="hive")


def _db(name="db1"):
    return Database(name=name, description="d", locationUri=f"file:/wh/{name}.db", parameters={"k": "v"},
                    ownerName="alice", ownerType=1, catalogName="hive")


def _function(db="db1"):
    return Function(functionName="f", dbName=db, className="x.F", ownerName="alice", ownerType=1,
                    createTime=1_700_000_000, functionType=1,
                    resourceUris=[ResourceUri(resourceType=1, uri="file:/f.jar")], catName="hive")


# --------------------------------------------------------------------------- messages


def test_tjson_round_trip_and_java_escaping():
    table = _table()
    text = M.tjson(table)
    assert M.from_tjson(text, Table) == table
    # Java's TJSONProtocol: \u00XX (lower-case hex) for control characters without a short escape,
    # \n \t \" \\ as such, '/' and non-ASCII characters unescaped
    assert '"field.delim":"\\u0001"' in text
    assert 'é \\"q\\" \\\\ \\n\\t/ \u2028 \U0001f600' in text
    assert text.startswith('{"1":{"str":"t"},"2":{"str":"db1"},"3":{"str":"alice"},"4":{"i32":1700000000}')
    assert '"8":{"lst":["rec",2,{"1":{"str":"dt"},"2":{"str":"string"}},{"1":{"str":"n"},"2":{"str":"int"}}]}' in text


HEAD = ["server", "servicePrincipal"]
TABLE = ["db", "table", "tableType"]
PART_TABLE = ["cat", "db", "table", "tableType", "tableObjJson"]
# event builder -> (event type, the message's fields in Hive's order)
SHAPES = {
    "create_database": ("CREATE_DATABASE", HEAD + ["cat", "db", "dbJson", "timestamp"]),
    "alter_database": ("ALTER_DATABASE", HEAD + ["db", "dbObjBeforeJson", "dbObjAfterJson", "timestamp"]),
    "drop_database": ("DROP_DATABASE", HEAD + ["cat", "db", "dbJson", "timestamp"]),
    "create_table": ("CREATE_TABLE", HEAD + TABLE + ["tableObjJson", "timestamp", "files"]),
    "alter_table": ("ALTER_TABLE", HEAD + TABLE + ["tableObjBeforeJson", "tableObjAfterJson", "locOwner",
                                                   "isTruncateOp", "timestamp", "writeId"]),
    "drop_table": ("DROP_TABLE", HEAD + TABLE + ["tableObjJson", "timestamp"]),
    "add_partitions": ("ADD_PARTITION", HEAD + TABLE + ["tableObjJson", "locOwner", "timestamp", "partitions",
                                                        "partitionListJson", "partitionFiles"]),
    "alter_partition": ("ALTER_PARTITION", HEAD + PART_TABLE + ["isTruncateOp", "timestamp", "writeId", "keyValues",
                                                               "partitionObjBeforeJson", "partitionObjAfterJson"]),
    "drop_partitions": ("DROP_PARTITION", HEAD + PART_TABLE + ["timestamp", "partitions"]),
    "insert": ("INSERT", HEAD + PART_TABLE + ["ptnObjJson", "timestamp", "replace", "files"]),
    "create_function": ("CREATE_FUNCTION", HEAD + ["db", "functionObjJson", "timestamp"]),
    "drop_function": ("DROP_FUNCTION", HEAD + ["db", "functionName", "timestamp"]),
    "add_primary_keys": ("ADD_PRIMARYKEY", HEAD + ["timestamp", "primaryKeyListJson"]),
    "add_foreign_keys": ("ADD_FOREIGNKEY", HEAD + ["timestamp", "foreignKeyListJson"]),
    "drop_constraint": ("DROP_CONSTRAINT", HEAD + ["catName", "dbName", "tableName", "constraintName", "timestamp"]),
    "create_catalog": ("CREATE_CATALOG", HEAD + ["catalog", "timestamp"]),
    "alter_catalog": ("ALTER_CATALOG", HEAD + ["catObjBeforeJson", "catObjAfterJson", "timestamp"]),
    "drop_catalog": ("DROP_CATALOG", HEAD + ["catalog", "timestamp"]),
}


def _build(name):
    t, p = _table(), _part(_table(), ["2024-01-01", "1"])
    cat = Catalog(name="c2", description="x", locationUri="file:/c2")
    pk = SQLPrimaryKey(table_db="db1", table_name="t", column_name="id", key_seq=1, pk_name="pk",
                       enable_cstr=True, validate_cstr=False, rely_cstr=False, catName="hive")
    fk = SQLForeignKey(pktable_db="db1", pktable_name="t", pkcolumn_name="id", fktable_db="db2", fktable_name="u",
                       fkcolumn_name="tid", key_seq=1, update_rule=0, delete_rule=0, fk_name="fk", pk_name="pk",
                       enable_cstr=True, validate_cstr=False, rely_cstr=False, catName="hive")
    built = {
        "create_database": lambda: E.create_database(_db()), "alter_database": lambda: E.alter_database(_db(), _db()),
        "drop_database": lambda: E.drop_database(_db()), "create_table": lambda: E.create_table(t),
        "alter_table": lambda: E.alter_table(t, t), "drop_table": lambda: E.drop_table(t),
        "add_partitions": lambda: E.add_partitions(t, [p])[0], "alter_partition": lambda: E.alter_partition(t, p, p),
        "drop_partitions": lambda: E.drop_partitions(t, [p])[0], "insert": lambda: E.insert(t, p, ["f1"]),
        "create_function": lambda: E.create_function(_function()),
        "drop_function": lambda: E.drop_function(_function()), "add_primary_keys": lambda: E.add_primary_keys([pk])[0],
        "add_foreign_keys": lambda: E.add_foreign_keys([fk])[0],
        "drop_constraint": lambda: E.drop_constraint("db1", "t", "pk"), "create_catalog": lambda: E.create_catalog(cat),
        "alter_catalog": lambda: E.alter_catalog(cat, cat), "drop_catalog": lambda: E.drop_catalog(cat),
    }
    return built[name]()


@pytest.mark.parametrize("name", sorted(SHAPES))
def test_message_fields_in_hive_order(name):
    event_type, fields = SHAPES[name]
    event = _build(name)
    assert event.event_type == event_type
    assert list(event.body) == fields
    log = NotificationLog(None, server="thrift://h:9083", service_principal="", clock_s=lambda: 1234)  # type: ignore[arg-type]
    row = log._row(event, 1234)
    msg = json.loads(row["message"])
    assert list(msg) == fields and row["message_format"] == "json-0.2"
    assert (msg["server"], msg["servicePrincipal"], msg["timestamp"]) == ("thrift://h:9083", "", 1234)
    assert row["event_time"] == 1234 and row["event_type"] == event_type


def test_table_and_partition_messages():
    t = _table()
    p1, p2 = _part(t, ["2024-01-01", "1"]), _part(t, ["2024-01-02", "2"], k="v")
    [add] = E.add_partitions(t, [p1, p2])
    assert (add.db_name, add.table_name, add.cat_name) == ("db1", "t", "hive")
    assert add.body["partitions"] == [{"dt": "2024-01-01", "n": "1"}, {"dt": "2024-01-02", "n": "2"}]
    assert [M.from_tjson(s, Partition) for s in add.body["partitionListJson"]] == [p1, p2]
    assert M.from_tjson(add.body["tableObjJson"], Table) == t
    assert E.add_partitions(t, []) == [] and E.drop_partitions(t, []) == []

    [drop] = E.drop_partitions(t, [p1, ["2024-01-02", "2"]])
    assert drop.body["partitions"] == [{"dt": "2024-01-01", "n": "1"}, {"dt": "2024-01-02", "n": "2"}]
    renamed = _part(t, ["2024-01-03", "3"])
    alter = E.alter_partition(t, p1, renamed, truncate=True)
    assert alter.body["keyValues"] == {"dt": "2024-01-01", "n": "1"} and alter.body["isTruncateOp"] == "true"
    assert M.from_tjson(alter.body["partitionObjAfterJson"], Partition) == renamed
    assert alter.body["writeId"] == -1

    new = Table(**{**t.__dict__, "tableName": "t2"})
    rename = E.alter_table(t, new)
    assert (rename.table_name, rename.body["table"], rename.body["isTruncateOp"]) == ("t2", "t", "false")
    assert M.from_tjson(rename.body["tableObjAfterJson"], Table) == new


def test_insert_and_hudi_commit_events():
    t = _table()
    p = _part(t, ["2024-01-01", "1"])
    ins = E.insert(t, p, ["file:/a", "file:/b"], ["c1", "c2"], replace=False)
    assert ins.body["files"] == ["file:/a#c1", "file:/b#c2"] and ins.body["replace"] == "false"
    assert M.from_tjson(ins.body["ptnObjJson"], Partition) == p
    assert E.insert(t, None, ["file:/a"]).body["ptnObjJson"] is None
    assert E.insert(t, None, []).body["replace"] == "true"

    commit = E.hudi_commit(t, [(p, ["file:/p/f1.parquet"]), (_part(t, ["2024-01-02", "2"]), ["file:/p2/f2.parquet"])],
                           replace=True)
    assert [e.event_type for e in commit] == ["INSERT", "INSERT"]
    assert [e.body["files"] for e in commit] == [["file:/p/f1.parquet"], ["file:/p2/f2.parquet"]]
    assert all(e.body["replace"] == "true" for e in commit)
    flat = _table(keys=())
    [whole] = E.hudi_commit(flat, [(None, ["file:/t/f.parquet"])])
    assert whole.body["ptnObjJson"] is None and whole.table_name == "t"


def test_event_names_follow_hive():
    fk = SQLForeignKey(pktable_db="db1", pktable_name="t", fktable_db="db2", fktable_name="u", catName=None)
    [e] = E.add_foreign_keys([fk])
    assert (e.cat_name, e.db_name, e.table_name) == ("hive", "db1", "t")  # the referenced table, as Hive
    assert E.add_primary_keys([]) == []
    db = _db()
    db.catalogName = None
    ev = E.create_database(db)
    assert (ev.cat_name, ev.db_name, ev.table_name, ev.body["cat"]) == ("hive", "db1", None, "hive")
    cat = E.create_catalog(Catalog(name="c2", locationUri="file:/c2"))
    assert (cat.cat_name, cat.db_name) == ("c2", None)


JAVA_CHECK = r"""
import java.nio.file.*;
import java.util.*;
import org.apache.hadoop.hive.metastore.messaging.*;
import org.apache.hadoop.hive.metastore.messaging.json.JSONMessageDeserializer;
import org.apache.thrift.TBase;
import org.apache.thrift.TSerializer;
import org.apache.thrift.protocol.TJSONProtocol;

// Reads "TYPE<tab>MESSAGE" lines with Hive's deserializer; prints what it read, objects
// serialized again with Java's TJSONProtocol.
public class HiveMessageCheck {
  static TSerializer ser;
  static String tj(TBase o) throws Exception { return ser.toString(o); }
  public static void main(String[] a) throws Exception {
    ser = new TSerializer(new TJSONProtocol.Factory());
    MessageDeserializer d = new JSONMessageDeserializer();
    for (String line : Files.readAllLines(Paths.get(a[0]))) {
      String[] f = line.split("\t", 2);
      List<String> out = new ArrayList<>();
      switch (f[0]) {
        case "CREATE_DATABASE": out.add(d.getCreateDatabaseMessage(f[1]).getDB()); break;
        case "DROP_DATABASE": out.add(d.getDropDatabaseMessage(f[1]).getDB()); break;
        case "CREATE_TABLE": { CreateTableMessage m = d.getCreateTableMessage(f[1]);
          out.add(m.getTable()); out.add(tj(m.getTableObj())); break; }
        case "ALTER_TABLE": { AlterTableMessage m = d.getAlterTableMessage(f[1]);
          out.add(m.getTable()); out.add(tj(m.getTableObjAfter())); break; }
        case "DROP_TABLE": out.add(d.getDropTableMessage(f[1]).getTable()); break;
        case "ADD_PARTITION": { AddPartitionMessage m = d.getAddPartitionMessage(f[1]);
          out.add(m.getPartitions().toString());
          for (Object p : m.getPartitionObjs()) out.add(tj((TBase) p)); break; }
        case "ALTER_PARTITION": { AlterPartitionMessage m = d.getAlterPartitionMessage(f[1]);
          out.add(m.getKeyValues().toString()); out.add(tj(m.getPtnObjAfter())); break; }
        case "DROP_PARTITION": out.add(d.getDropPartitionMessage(f[1]).getPartitions().toString()); break;
        case "INSERT": { InsertMessage m = d.getInsertMessage(f[1]);
          out.add(m.getTable()); for (String s : m.getFiles()) out.add(s); break; }
        case "CREATE_FUNCTION": out.add(tj(d.getCreateFunctionMessage(f[1]).getFunctionObj())); break;
        case "DROP_FUNCTION": out.add(d.getDropFunctionMessage(f[1]).getFunctionName()); break;
        default: throw new IllegalArgumentException(f[0]);
      }
      System.out.println(f[0] + "\t" + String.join("\t", out));
    }
  }
}
"""


def _hive23(obj):
    """`obj` as Hive 2.3's Thrift classes know it (fields Hive 3 added dropped)."""
    fields = {Table: ("catName", "ownerType", "writeId"), Partition: ("catName", "writeId"),
              Function: ("catName",)}[type(obj)]
    return type(obj)(**{**obj.__dict__, **dict.fromkeys(fields)})


def test_hive_deserializer_reads_the_messages(tmp_path):
    """Hive's own JSONMessageDeserializer (Hive 2.3.10, in pyspark's jars) reads every message type
    it knows; the Thrift objects it reads serialize with Java's TJSONProtocol to our text."""
    pyspark = pytest.importorskip("pyspark")
    jars = Path(pyspark.__file__).parent / "jars"
    if shutil.which("javac") is None or not list(jars.glob("hive-metastore-*.jar")):
        pytest.skip("needs javac and pyspark's Hive jars")
    t = _hive23(_table())
    p1, p2 = _hive23(_part(t, ["2024-01-01", "1"])), _hive23(_part(t, ["2024-01-02", "2"], k="v"))
    fn = _hive23(_function())
    events = [E.create_database(_db()), E.drop_database(_db()), E.create_table(t), E.alter_table(t, t),
              E.drop_table(t), *E.add_partitions(t, [p1, p2]), E.alter_partition(t, p1, p2),
              *E.drop_partitions(t, [p1, p2]), E.insert(t, p1, ["file:/a"], ["c"]), E.create_function(fn),
              E.drop_function(fn)]
    log = NotificationLog(None, clock_s=lambda: 1)  # type: ignore[arg-type]
    lines = tmp_path / "messages.tsv"
    lines.write_text("".join(f"{e.event_type}\t{log._row(e, 1)['message']}\n" for e in events), encoding="utf-8")
    (tmp_path / "HiveMessageCheck.java").write_text(JAVA_CHECK)
    cp = f"{jars}/*"
    subprocess.run(["javac", "-nowarn", "-cp", cp, "-d", str(tmp_path), str(tmp_path / "HiveMessageCheck.java")],
                   check=True, capture_output=True, timeout=300)
    res = subprocess.run(["java", "-cp", f"{tmp_path}:{cp}", "HiveMessageCheck", str(lines)],
                         capture_output=True, text=True, encoding="utf-8", timeout=300)
    assert res.returncode == 0, res.stderr[-3000:]
    kv1, kv2 = "{dt=2024-01-01, n=1}", "{dt=2024-01-02, n=2}"
    assert res.stdout.rstrip("\n").split("\n") == [  # not splitlines(): U+2028 is in a line
        "CREATE_DATABASE\tdb1", "DROP_DATABASE\tdb1", f"CREATE_TABLE\tt\t{M.tjson(t)}",
        f"ALTER_TABLE\tt\t{M.tjson(t)}", "DROP_TABLE\tt",
        f"ADD_PARTITION\t[{kv1}, {kv2}]\t{M.tjson(p1)}\t{M.tjson(p2)}", f"ALTER_PARTITION\t{kv1}\t{M.tjson(p2)}",
        f"DROP_PARTITION\t[{kv1}, {kv2}]", "INSERT\tt\tfile:/a#c", f"CREATE_FUNCTION\t{M.tjson(fn)}",
        "DROP_FUNCTION\tf"]


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
        ids = log.record(conn, E.create_database(_db(db)), E.create_table(_table(db)))
    assert ids == [before + 1, before + 2] and log.current_id() == before + 2
    with pytest.raises(RuntimeError), store.write() as conn:  # rolled back: no event, no id used
        log.record(conn, E.drop_table(_table(db)))
        raise RuntimeError("abort")
    assert log.current_id() == before + 2
    assert store.run_write(log.record, E.drop_table(_table(db))) == [before + 3]
    got = log.next_events(before, db=db)
    assert [(e.eventId, e.eventType, e.dbName, e.tableName, e.catName, e.messageFormat) for e in got] == [
        (before + 1, "CREATE_DATABASE", db, None, "hive", "json-0.2"),
        (before + 2, "CREATE_TABLE", db, "t", "hive", "json-0.2"),
        (before + 3, "DROP_TABLE", db, "t", "hive", "json-0.2")]
    assert M.from_tjson(json.loads(got[1].message)["tableObjJson"], Table) == _table(db)
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
                        ids = log.record(conn, E.create_table(_table(db, f"t{seed}_{i}")))
                        time.sleep(rnd.uniform(0, 0.01))  # holds the id lock until the commit
                        if rnd.random() < 0.2:
                            raise KeyError("roll back")
                    recorded.extend(ids)
                except KeyError:
                    pass
        except BaseException as exc:  # noqa: BLE001
            errors.append(exc)

    seen: list[int] = []

    def reader():
        last = log.current_id()
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
    t1, t2 = _table(a, "t1"), _table(a, "t2")
    evs = [E.create_table(t1), E.create_table(t2), *E.add_partitions(t1, [_part(t1, ["d", "1"])]),
           E.insert(t2, None, ["f"]), E.drop_table(t1), E.create_table(_table(b, "t1"))]
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
    old = store.run_write(log.record, *[E.create_table(_table(db, f"o{i}")) for i in range(5)])
    now[0] = 1_050
    young = store.run_write(log.record, *[E.create_table(_table(db, f"y{i}")) for i in range(3)])
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
    assert M.from_tjson(json.loads(first.message)["tableObjJson"], Table) == _table(a, "t1")

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
    client.create_table(Table(tableName="t", dbName=db, sd=_sd(None, params={}), parameters={},
                              partitionKeys=[FieldSchema("dt", "string", None), FieldSchema("n", "int", None)],
                              tableType="MANAGED_TABLE"))
    table = client.get_table(db, "t")
    client.add_partitions([_part(table, ["2024-01-01", "1"]), _part(table, ["2024-01-02", "2"])])
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
        tbl = Table(tableName=name, dbName=db, sd=_sd(None, params={}), parameters={"p": name, "EXTERNAL": "TRUE"},
                    partitionKeys=keys, tableType="EXTERNAL_TABLE")
        emit(lambda tbl=tbl: client.create_table(tbl), lambda name=name: [E.create_table(get(db, name))])
    t = get(db, "t")
    parts = [_part(t, [d]) for d in ("2024-01-01", "2024-01-02", "2024-01-03")]
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
        t.createTime = t.lastAccessTime = None
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


@pytest.mark.xfail(strict=True, reason="write paths do not emit events yet", raises=(AssertionError, TException))
def test_replay_from_write_paths(our_server, target_server, thrift_client):
    """Replay of events the write paths record themselves: the two metastores end up equal."""
    _replay(our_server, target_server, thrift_client, None)


def test_unknown_event_types_are_skipped():
    r = Replayer(None, None)
    r.apply("CREATE_FUNCTION", {})
    assert r.skipped["CREATE_FUNCTION"] == 1 and not r.applied

