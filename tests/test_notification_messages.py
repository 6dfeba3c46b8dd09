"""Notification messages (store/hms/notification_log/messages.py, events.py): the JSON Hive's
JSONMessageEncoder writes (field names and order, TJSON objects that read back equal, Java's
TJSONProtocol escaping), and Hive's own deserializer (Hive 2.3, from pyspark's jars) reads them."""

from __future__ import annotations

import json
import random as random_module
import shutil
import subprocess
from pathlib import Path

import pytest
from thrift.Thrift import TType

from store.hms.notification_log import NotificationLog
from store.hms.notification_log import events as E
from store.hms.notification_log import messages as M
from tests.harness import jvm
from tests.notification_objects import make_db, make_function, make_part, make_table
from thrift_idl.hive_metastore.ttypes import Catalog, Function, Partition, SQLForeignKey, SQLPrimaryKey, Table


def test_tjson_round_trip_and_java_escaping():
    table = make_table()
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
    t, p = make_table(), make_part(make_table(), ["2024-01-01", "1"])
    cat = Catalog(name="c2", description="x", locationUri="file:/c2")
    pk = SQLPrimaryKey(table_db="db1", table_name="t", column_name="id", key_seq=1, pk_name="pk",
                       enable_cstr=True, validate_cstr=False, rely_cstr=False, catName="hive")
    fk = SQLForeignKey(pktable_db="db1", pktable_name="t", pkcolumn_name="id", fktable_db="db2", fktable_name="u",
                       fkcolumn_name="tid", key_seq=1, update_rule=0, delete_rule=0, fk_name="fk", pk_name="pk",
                       enable_cstr=True, validate_cstr=False, rely_cstr=False, catName="hive")
    d, fn = make_db(), make_function()
    built = {
        "create_database": lambda: E.create_database(d), "alter_database": lambda: E.alter_database(d, d),
        "drop_database": lambda: E.drop_database(d), "create_table": lambda: E.create_table(t),
        "alter_table": lambda: E.alter_table(t, t), "drop_table": lambda: E.drop_table(t),
        "add_partitions": lambda: E.add_partitions(t, [p])[0], "alter_partition": lambda: E.alter_partition(t, p, p),
        "drop_partitions": lambda: E.drop_partitions(t, [p])[0], "insert": lambda: E.insert(t, p, ["f1"]),
        "create_function": lambda: E.create_function(fn), "drop_function": lambda: E.drop_function(fn),
        "add_primary_keys": lambda: E.add_primary_keys([pk])[0],
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
    t = make_table()
    p1, p2 = make_part(t, ["2024-01-01", "1"]), make_part(t, ["2024-01-02", "2"], k="v")
    [add] = E.add_partitions(t, [p1, p2])
    assert (add.db_name, add.table_name, add.cat_name) == ("db1", "t", "hive")
    assert add.body["partitions"] == [{"dt": "2024-01-01", "n": "1"}, {"dt": "2024-01-02", "n": "2"}]
    assert [M.from_tjson(s, Partition) for s in add.body["partitionListJson"]] == [p1, p2]
    assert M.from_tjson(add.body["tableObjJson"], Table) == t
    assert E.add_partitions(t, []) == [] and E.drop_partitions(t, []) == []
    many = [make_part(t, [f"d{i}", str(i)]) for i in range(E.ADD_PARTITION_BATCH + 1)]
    split = E.add_partitions(t, many)
    assert [len(e.body["partitions"]) for e in split] == [E.ADD_PARTITION_BATCH, 1]
    assert [len(e.body["partitions"]) for e in E.drop_partitions(t, [["d", "1"]] * (E.DROP_PARTITION_BATCH + 2))] == [
        E.DROP_PARTITION_BATCH, 2]

    [drop] = E.drop_partitions(t, [p1, ["2024-01-02", "2"]])
    assert drop.body["partitions"] == [{"dt": "2024-01-01", "n": "1"}, {"dt": "2024-01-02", "n": "2"}]
    renamed = make_part(t, ["2024-01-03", "3"])
    alter = E.alter_partition(t, p1, renamed, truncate=True)
    assert alter.body["keyValues"] == {"dt": "2024-01-01", "n": "1"} and alter.body["isTruncateOp"] == "true"
    assert M.from_tjson(alter.body["partitionObjAfterJson"], Partition) == renamed
    assert alter.body["writeId"] == -1

    new = Table(**{**t.__dict__, "tableName": "t2"})
    rename = E.alter_table(t, new)
    assert (rename.table_name, rename.body["table"], rename.body["isTruncateOp"]) == ("t2", "t", "false")
    assert M.from_tjson(rename.body["tableObjAfterJson"], Table) == new


def test_insert_and_hudi_commit_events():
    t = make_table()
    p = make_part(t, ["2024-01-01", "1"])
    ins = E.insert(t, p, ["file:/a", "file:/b"], ["c1", "c2"], replace=False)
    assert ins.body["files"] == ["file:/a#c1", "file:/b#c2"] and ins.body["replace"] == "false"
    assert M.from_tjson(ins.body["ptnObjJson"], Partition) == p
    assert E.insert(t, None, ["file:/a"]).body["ptnObjJson"] is None
    assert E.insert(t, None, []).body["replace"] == "true"

    p2 = make_part(t, ["2024-01-02", "2"])
    commit = E.hudi_commit(t, [(p, ["file:/p/f1.parquet"]), (p2, ["file:/p2/f2.parquet"])], replace=True)
    assert [e.event_type for e in commit] == ["INSERT", "INSERT"]
    assert [e.body["files"] for e in commit] == [["file:/p/f1.parquet"], ["file:/p2/f2.parquet"]]
    assert all(e.body["replace"] == "true" for e in commit)
    flat = make_table(keys=())
    [whole] = E.hudi_commit(flat, [(None, ["file:/t/f.parquet"])])
    assert whole.body["ptnObjJson"] is None and whole.table_name == "t"


def test_event_names_follow_hive():
    fk = SQLForeignKey(pktable_db="db1", pktable_name="t", fktable_db="db2", fktable_name="u", catName=None)
    [e] = E.add_foreign_keys([fk])
    assert (e.cat_name, e.db_name, e.table_name) == ("hive", "db1", "t")  # the referenced table, as Hive
    assert E.add_primary_keys([]) == []
    db = make_db()
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
    t = _hive23(make_table())
    p1, p2 = _hive23(make_part(t, ["2024-01-01", "1"])), _hive23(make_part(t, ["2024-01-02", "2"], k="v"))
    fn = _hive23(make_function())
    events = [E.create_database(make_db()), E.drop_database(make_db()), E.create_table(t), E.alter_table(t, t),
              E.drop_table(t), *E.add_partitions(t, [p1, p2]), E.alter_partition(t, p1, p2),
              *E.drop_partitions(t, [p1, p2]), E.insert(t, p1, ["file:/a"], ["c"]), E.create_function(fn),
              E.drop_function(fn)]
    log = NotificationLog(None, clock_s=lambda: 1)  # type: ignore[arg-type]
    lines = tmp_path / "messages.tsv"
    lines.write_text("".join(f"{e.event_type}\t{log._row(e, 1)['message']}\n" for e in events), encoding="utf-8")
    (tmp_path / "HiveMessageCheck.java").write_text(JAVA_CHECK)
    cp = f"{jars}/*"
    subprocess.run(["javac", *jvm.javac_flags(), "-nowarn", "-cp", cp, "-d", str(tmp_path),
                    str(tmp_path / "HiveMessageCheck.java")], check=True, capture_output=True, timeout=300)
    res = subprocess.run(["java", *jvm.java_flags(), "-cp", f"{tmp_path}:{cp}", "HiveMessageCheck", str(lines)],
                         capture_output=True, text=True, encoding="utf-8", timeout=300)
    assert res.returncode == 0, res.stderr[-3000:]
    kv1, kv2 = "{dt=2024-01-01, n=1}", "{dt=2024-01-02, n=2}"
    assert res.stdout.rstrip("\n").split("\n") == [  # not splitlines(): U+2028 is in a line
        "CREATE_DATABASE\tdb1", "DROP_DATABASE\tdb1", f"CREATE_TABLE\tt\t{M.tjson(t)}",
        f"ALTER_TABLE\tt\t{M.tjson(t)}", "DROP_TABLE\tt",
        f"ADD_PARTITION\t[{kv1}, {kv2}]\t{M.tjson(p1)}\t{M.tjson(p2)}", f"ALTER_PARTITION\t{kv1}\t{M.tjson(p2)}",
        f"DROP_PARTITION\t[{kv1}, {kv2}]", "INSERT\tt\tfile:/a#c", f"CREATE_FUNCTION\t{M.tjson(fn)}",
        "DROP_FUNCTION\tf"]




# --------------------------------------------------------------------------- the fast TJSON writer

_PRIMITIVE_SAMPLES = {
    TType.BOOL: (True, False), TType.BYTE: (-128, 0, 127), TType.I16: (-3000, 7), TType.I32: (-2**31, 5, 2**31 - 1),
    TType.I64: (-2**63, 0, 2**63 - 1), TType.DOUBLE: (0.1, 2.0, -1e300, 3.5e-7, float("inf")),
}
_TEXT_SAMPLES = ("a", "é\x01\"\\/\n", "", "x y\t\x7f\u2028", "ключ")


def _sample(rnd, ttype, arg, depth):
    if ttype == TType.STRING:
        return bytes(rnd.randrange(256) for _ in range(5)) if arg == "BINARY" else rnd.choice(_TEXT_SAMPLES)
    if ttype == TType.STRUCT:
        return _filled(rnd, arg[0], depth + 1)
    if ttype in (TType.LIST, TType.SET):
        items = [_sample(rnd, arg[0], arg[1], depth + 1) for _ in range(2 if depth < 3 else 0)]
        return set(items) if ttype == TType.SET and arg[0] not in (TType.STRUCT, TType.LIST, TType.MAP) else items
    if ttype == TType.MAP:
        if arg[0] in (TType.STRUCT, TType.LIST, TType.SET, TType.MAP) or depth >= 3:
            return {}
        return {_sample(rnd, arg[0], arg[1], depth + 1): _sample(rnd, arg[2], arg[3], depth + 1) for _ in range(2)}
    return rnd.choice(_PRIMITIVE_SAMPLES[ttype])


def _filled(rnd, cls, depth=0):
    """An instance of `cls` with every field set (nested to a few levels)."""
    if depth > 4:
        return cls()
    fields = {spec[2]: _sample(rnd, spec[1], spec[3], depth) for spec in cls.thrift_spec if spec is not None}
    try:
        return cls(**fields)
    except TypeError:  # unions take no keyword arguments for all fields at once
        obj = cls()
        for name, value in fields.items():
            setattr(obj, name, value)
        return obj


def test_fast_tjson_writes_what_the_protocol_writes():
    """messages.tjson (store/hms/notification_log/tjson.py) against the Thrift library's TJSONProtocol,
    for every struct of both IDLs with every field set: same text, byte for byte."""
    import inspect
    import random

    import thrift_idl.hive_metastore.ttypes as hive_types
    import thrift_idl.hudi_metastore.ttypes as hudi_types

    rnd = random.Random(19)
    checked = 0
    for module in (hive_types, hudi_types):
        for name, cls in inspect.getmembers(module, inspect.isclass):
            if getattr(cls, "thrift_spec", None) is None or cls.__module__ != module.__name__:
                continue
            for _ in range(3):
                obj = _filled(rnd, cls)
                assert M.tjson(obj) == M.tjson_by_protocol(obj), name
                checked += 1
    assert checked > 500


def test_tjson_memo_writes_shared_parts_once_and_the_same_text():
    """The memo of one message batch (tjson.py): partitions that share one descriptor's columns and
    serde, or differ only in their own fields, are written exactly as without the memo."""
    import copy

    rnd = random_module.Random(7)
    base = _filled(rnd, Partition)
    parts = []
    for i in range(5):
        p = copy.copy(base)
        p.values = [f"v{i}", str(i)]
        p.sd = copy.copy(base.sd)  # the store's shallow copy: columns and serde shared
        p.sd.location = f"file:/w/t/k={i}"
        p.parameters = {"n": str(i)} if i % 2 else base.parameters
        parts.append(p)
    other = _filled(rnd, Partition)  # nothing shared with the others
    memo: dict = {}
    written = [M.tjson(p, memo) for p in parts + [other]]
    assert written == [M.tjson_by_protocol(p) for p in parts + [other]]
    assert any(entry[0] is base.sd.cols for entry in memo.values())


def test_tjson_memo_reuses_the_text_of_equal_copies_and_never_of_different_values():
    """A Java client sends each new partition its own copy of one descriptor: equal objects, no
    shared ones. The memo writes their text once (each field remembers its last value) and still
    writes exactly what the protocol writes, also when a copy differs in one nested value."""
    import copy

    rnd = random_module.Random(11)
    base = _filled(rnd, Partition)
    parts = []
    for i in range(6):
        p = copy.deepcopy(base)  # nothing shared with base
        p.values = [f"v{i}", str(i)]
        p.sd.location = f"file:/w/t/k={i}"
        if i == 3:
            p.sd.cols[0].comment = "changed"  # one column differs
        if i == 4:
            p.sd.serdeInfo.parameters = dict(reversed(list(p.sd.serdeInfo.parameters.items())) or {"a": "b"})
        if i == 5:
            p.parameters = {**p.parameters, "extra": "1"}
        parts.append(p)
    memo: dict = {}
    written = [M.tjson(p, memo) for p in parts]
    assert written == [M.tjson_by_protocol(p) for p in parts]
    cols_text = [memo[id(p.sd.cols)][1] for p in parts]
    assert cols_text[0] is cols_text[1] is cols_text[2]  # written once for the equal copies
    assert cols_text[3] != cols_text[2]


def test_tjson_memo_takes_a_fields_text_only_from_the_very_same_object():
    """A struct written with the memo takes each field's text from the last struct of its class
    whose field held the very same object: an alter's `after` sharing its `before`'s values and
    descriptor, descriptors that differ in their location alone, a descriptor of another struct
    class (a table's), and one whose columns are an equal-looking changed copy. Every text is the
    protocol's."""
    import copy

    rnd = random_module.Random(23)
    base = _filled(rnd, Partition)
    objs: list = []
    for i in range(4):
        before = copy.copy(base)
        before.values = [f"v{i}", "x"]
        before.sd = copy.copy(base.sd)
        before.sd.location = f"file:/w/t/k={i}"
        after = copy.copy(before)  # the same values and descriptor objects
        after.parameters = {**(before.parameters or {}), "n": str(i)}
        after.lastAccessTime = i + 1000
        objs += [before, after]
    changed = copy.copy(base)
    changed.sd = copy.copy(base.sd)
    changed.sd.cols = copy.deepcopy(base.sd.cols)
    changed.sd.cols[0].name = "changed"
    table = _filled(rnd, Table)
    table.sd = objs[-1].sd
    objs += [changed, table, base]
    memo: dict = {}
    assert [M.tjson(o, memo) for o in objs] == [M.tjson_by_protocol(o) for o in objs]


@pytest.mark.parametrize("text", ['{"1":{"str":"a \\"q\\" é \U0001f600 \x01 \u2028"}}', "a lone \ud800"])
@pytest.mark.parametrize("other", ["plain", 2 ** 64])
def test_a_shared_text_is_written_as_the_string_it_holds(text, other):
    """SharedText (a text many messages hold, encoded once): the message is what json.dumps writes
    for the plain string, also when something else in it makes json.dumps write it."""
    shared = M.SharedText(text)
    body = {"db": "d", "tableObjJson": shared, "other": other, "keyValues": {"k": "v"}}
    expected = json.dumps({**body, "tableObjJson": text}, ensure_ascii=False, separators=(",", ":"))
    assert M.encode(body) == M.encode(dict(body)) == expected


def test_tjson_writes_structs_without_fields_and_lists_of_strings_as_the_protocol_does():
    """Structs with no field set (alone and nested, with and without the memo), lists of strings with
    characters Java escapes, empty lists: the same text as the protocol's."""
    from thrift_idl.hive_metastore.ttypes import SerDeInfo, StorageDescriptor

    objs = [Partition(), Partition(values=[]), Partition(values=['a"\\\x01\n', "é", ""], sd=StorageDescriptor()),
            Partition(sd=StorageDescriptor(serdeInfo=SerDeInfo(), bucketCols=["x\ty"]), createTime=0)]
    memo: dict = {}
    assert [M.tjson(o) for o in objs] == [M.tjson_by_protocol(o) for o in objs]
    assert [M.tjson(o, memo) for o in objs + objs] == [M.tjson_by_protocol(o) for o in objs + objs]


@pytest.mark.parametrize("body", [
    {"server": None, "files": ["/a/é \"q\" \\ \n\t/ \u2028 \U0001f600 \x01\x1f\x7f"], "timestamp": 1700000000,
     "replace": "true", "big": 2 ** 63 - 1, "neg": -(2 ** 63), "flag": False},
    {"beyond 64 bits": 2 ** 64, "x": "y"}, {"lone surrogate": "a\ud800b"}, {"\udfff": 1},
    {"float": 1e16, "nan": float("nan")}, {"nested": {"a": [1, "b", None]}}, {"tuple": ("a",)}, {1: "int key"},
    {"mixed list": ["a", 1]}, {},
    {"keyValues": {"pé \"k\"": "v \\ \n \x01 \U0001f600", "": ""}, "db": "d"}, {"keyValues": {"a": "\ud800"}},
    {"keyValues": {}}, {"keyValues": {"a": 1}}])
def test_encode_writes_what_json_dumps_writes(body):
    """The message text is compact json.dumps with non-ASCII characters as they are, whichever
    encoder writes it."""
    assert M.encode(body) == json.dumps(body, ensure_ascii=False, separators=(",", ":"))
