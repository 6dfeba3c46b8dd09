"""Partition lists encoded by the store (store/hms/common/wire.py) are byte for byte what Thrift's
own encoder writes for the Partition objects the store builds, for every shape a partition row can
have; and the server answers them to a plain Thrift client."""

from __future__ import annotations

import uuid

import pytest
from thrift.protocol import fastbinary
from thrift.protocol.TBinaryProtocol import TBinaryProtocol
from thrift.transport import TTransport

from adapter.server.encoded_answers import encode_reply
from store.hms.common import ENCODER_AVAILABLE, EncodedStructs
from store.services import open_services
from thrift_idl.hive_metastore.ThriftHiveMetastore import (
    get_partitions_by_names_req_result,
    get_partitions_result,
)
from thrift_idl.hive_metastore.ttypes import (
    Database,
    FieldSchema,
    GetPartitionsByNamesRequest,
    GetPartitionsByNamesResult,
    Partition,
    SerDeInfo,
    StorageDescriptor,
    Table,
)

pytestmark = pytest.mark.skipif(not ENCODER_AVAILABLE, reason="thrift without its C extension")


def _plain(obj) -> bytes:
    return fastbinary.encode_binary(obj, [type(obj), obj.thrift_spec])


def _make_table(c, db: str) -> None:
    c.create_database(Database(name=db, description="", parameters={}))
    sd = StorageDescriptor(cols=[FieldSchema("id", "bigint", None), FieldSchema("név", "string", "ü comment")],
                           inputFormat="in", outputFormat="out", compressed=False, numBuckets=-1,
                           serdeInfo=SerDeInfo(name="s", serializationLib="lib", parameters={"k": "v"}),
                           bucketCols=[], sortCols=[], parameters={"sdp": "1"})
    c.create_table(Table(tableName="t", dbName=db, sd=sd, owner="o",
                         partitionKeys=[FieldSchema("a", "string", None), FieldSchema("b", "int", None)],
                         parameters={}, tableType="MANAGED_TABLE"))


def _add(c, db: str, values, params=None, sd=None, location=None) -> None:
    table_sd = c.get_table(db, "t").sd
    psd = sd or StorageDescriptor(**{**table_sd.__dict__, "location": location})
    c.add_partitions([Partition(values=list(values), dbName=db, tableName="t", sd=psd,
                                parameters=params if params is not None else {})])


@pytest.fixture
def shaped_table(our_server_info, thrift_client):
    """A table whose partitions cover the shapes of a row: escaped and non-ASCII values, the default
    partition (an empty value) and its literal name, a descriptor of its own, an older schema
    version, an explicit location, parameters with non-ASCII text and empty values."""
    c = thrift_client(our_server_info.port)
    db = f"pw_{uuid.uuid4().hex[:8]}"
    _make_table(c, db)
    _add(c, db, ["plain", "1"])
    _add(c, db, ["with/slash=and%pct", "2"], {"x": "ő", "empty": ""})
    _add(c, db, ["", "3"])
    _add(c, db, ["__HIVE_DEFAULT_PARTITION__", "4"])
    _add(c, db, ["日本", "5"], {"transient_lastDdlTime": "1"}, location=f"file:///tmp/{db}/elsewhere")
    own = StorageDescriptor(**{**c.get_table(db, "t").sd.__dict__, "location": None, "inputFormat": "other",
                               "serdeInfo": SerDeInfo(name="own", serializationLib="lib2", parameters={})})
    _add(c, db, ["own", "6"], sd=own)
    t = c.get_table(db, "t")  # a new column: the partitions above keep the schema version they had
    t.sd.cols = t.sd.cols + [FieldSchema("added", "double", None)]
    c.alter_table(db, "t", t)
    _add(c, db, ["new", "7"])
    services = open_services(our_server_info.db_url, str(our_server_info.warehouse))
    try:
        yield c, db, services.partitions
    finally:
        services.close()
        c.drop_database(db, True, True)


def test_encoded_lists_are_the_objects_bytes(shaped_table):
    c, db, partitions = shaped_table
    cases = [dict(), dict(max_parts=3), dict(part_vals=["plain"]), dict(filter_text='b > 2'),
             dict(filter_text='a = "nothing"')]
    for kw in cases:
        objects = partitions.get_partitions(db, "t", **kw)
        encoded = partitions.encoded_partitions(db, "t", **kw)
        assert isinstance(encoded, EncodedStructs) and encoded.count == len(objects), kw
        assert encode_reply(get_partitions_result(success=encoded), None) == \
            _plain(get_partitions_result(success=objects)), kw
    everything = partitions.get_partitions(db, "t")
    assert len(everything) == 7
    assert len({p.sd.cols.__len__() for p in everything}) == 2  # two schema versions answered
    names = ["a=plain/b=1", "a=own/b=6", "a=__HIVE_DEFAULT_PARTITION__/b=3", "a=missing/b=0", "a=new/b=7"]
    objects = partitions.get_partitions_by_names(db, "t", names)
    encoded = partitions.encoded_partitions_by_names(db, "t", names)
    assert len(objects) == 4
    plain = _plain(get_partitions_by_names_req_result(success=GetPartitionsByNamesResult(partitions=objects)))
    ours = encode_reply(get_partitions_by_names_req_result(
        success=GetPartitionsByNamesResult(partitions=encoded)), None)
    assert len(ours) == len(plain)  # the list field moves after the others: same bytes, other order
    decoded = get_partitions_by_names_req_result()
    decoded.read(TBinaryProtocol(TTransport.TMemoryBuffer(ours)))  # Thrift's pure-Python reader
    assert decoded.success.partitions == objects


def test_clients_get_the_encoded_lists(shaped_table):
    """Over the wire: every list call decodes to what the store builds as objects."""
    c, db, partitions = shaped_table
    expected = partitions.get_partitions(db, "t")
    assert c.get_partitions(db, "t", -1) == expected
    assert c.get_partitions_ps(db, "t", ["plain"], -1) == [p for p in expected if p.values[0] == "plain"]
    assert c.get_partitions_by_filter(db, "t", "b > 5", -1) == [p for p in expected if int(p.values[1]) > 5]
    names = ["a=new/b=7", "a=own/b=6"]
    assert c.get_partitions_by_names(db, "t", names) == [p for p in expected if p.values[0] in ("new", "own")]
    got = c.get_partitions_by_names_req(GetPartitionsByNamesRequest(db_name=db, tbl_name="t", names=names))
    assert got.partitions == [p for p in expected if p.values[0] in ("new", "own")]
    assert c.get_partitions(db, "missing_table", -1) == []
    assert c.get_partitions_by_filter(db, "t", 'a = "none"', -1) == []


def test_a_reply_without_encoded_lists_is_thrifts_own():
    r = get_partitions_result(success=[Partition(values=["x"], dbName="d", tableName="t")])
    assert encode_reply(r, [type(r), r.thrift_spec]) == _plain(r)
    with pytest.raises(TypeError):  # an encoded list only stands for a list field
        from thrift_idl.hive_metastore.ThriftHiveMetastore import get_partition_result

        bad = get_partition_result()
        bad.success = EncodedStructs(0, b"")
        encode_reply(bad, None)


def test_answers_follow_every_change(shaped_table, thrift_client, our_server_info):
    """The second answer comes from the cache of encoded pieces; alters (parameters, location,
    times), a new column, a table rename and a drop still show in the next answer at once."""
    c, db, partitions = shaped_table
    for _ in range(2):  # cold, then from the cache
        encoded = partitions.encoded_partitions(db, "t")
        assert encode_reply(get_partitions_result(success=encoded), None) == \
            _plain(get_partitions_result(success=partitions.get_partitions(db, "t")))
    assert len(partitions.reads.queries.pieces_cache) == 4  # not: own descriptor, default partition names
    server = thrift_client(our_server_info.port)
    server.get_partitions(db, "t", -1)  # warms the server's cache too
    p = server.get_partition(db, "t", ["plain", "1"])
    p.parameters = {**p.parameters, "changed": "yes"}
    p.sd.location = p.sd.location + "_moved"
    p.lastAccessTime = 12345
    server.alter_partition(db, "t", p)
    t = server.get_table(db, "t")
    t.sd.cols = t.sd.cols + [FieldSchema("later", "string", None)]
    server.alter_table_with_cascade(db, "t", t, True)
    server.drop_partition(db, "t", ["new", "7"], False)
    t = server.get_table(db, "t")
    t.tableName = "t2"
    server.alter_table(db, "t", t)
    got = {tuple(x.values): x for x in server.get_partitions(db, "t2", -1)}
    assert ("new", "7") not in got and len(got) == 6
    plain = got[("plain", "1")]
    assert plain.parameters["changed"] == "yes" and plain.sd.location.endswith("_moved")
    assert plain.lastAccessTime == 12345 and plain.tableName == "t2"
    assert [f.name for f in plain.sd.cols][-1] == "later"
    assert got == {tuple(x.values): x for x in partitions.get_partitions(db, "t2")}
    t.tableName = "t"
    server.alter_table(db, "t2", t)  # back, for the fixture's cleanup


def test_get_table_answers_are_the_objects_bytes_and_follow_every_change(our_server_info, thrift_client):
    """get_table's Table comes as bytes kept per process by the table's whole row
    (TableRows.encoded): the bytes are Thrift's encoding of the object, and every kind of change
    (parameters, columns, owner, location, a rename, statistics) shows in the next answer at once,
    also when it was made through another connection."""
    from thrift_idl.hive_metastore.ThriftHiveMetastore import get_table_req_result, get_table_result
    from thrift_idl.hive_metastore.ttypes import GetTableRequest, GetTableResult

    c = thrift_client(our_server_info.port)
    other = thrift_client(our_server_info.port)
    db = f"gt_{uuid.uuid4().hex[:8]}"
    _make_table(c, db)
    services = open_services(our_server_info.db_url, str(our_server_info.warehouse))
    try:
        def check(name: str) -> Table:
            objects = services.tables.get_table(db, name)
            for _ in range(2):  # cold, then from the cache
                encoded = services.tables.get_table_encoded(db, name)
                assert encode_reply(get_table_result(success=encoded), None) == \
                    _plain(get_table_result(success=objects))
                ours = encode_reply(get_table_req_result(success=GetTableResult(table=encoded)), None)
                assert ours == _plain(get_table_req_result(success=GetTableResult(table=objects)))
            got = c.get_table(db, name)  # through the server, whose cache is warm
            assert got == objects
            assert c.get_table_req(GetTableRequest(dbName=db, tblName=name.upper())).table == objects
            return got

        t = check("t")
        t.parameters = {**t.parameters, "k": "ő", "empty": ""}
        other.alter_table(db, "t", t)
        assert check("t").parameters["k"] == "ő"
        t = check("t")
        t.sd.cols = t.sd.cols + [FieldSchema("added", "double", "a comment")]
        t.owner = "someone"
        t.sd.location = t.sd.location + "_moved"
        other.alter_table(db, "t", t)
        got = check("t")
        assert got.sd.cols[-1].name == "added" and got.owner == "someone" and got.sd.location.endswith("_moved")
        other.alter_table(db, "t", Table(**{**got.__dict__, "tableName": "t2"}))
        check("t2")
        with pytest.raises(Exception) as info:
            c.get_table(db, "t")
        assert type(info.value).__name__ == "NoSuchObjectException"
    finally:
        services.close()
        c.drop_database(db, True, True)


def _wire_table(c, db: str) -> None:
    """Partitions the database concatenates: one schema version, no descriptor of their own; escaped,
    non-ASCII and default-partition values, parameters with non-ASCII text and empty values."""
    _make_table(c, db)
    for values, params in ((["plain", "1"], {}), (["with/slash=and%pct", "2"], {"x": "ő", "empty": ""}),
                           (["", "3"], {}), (["__HIVE_DEFAULT_PARTITION__", "4"], {"k": "v"}),
                           (["日本", "5"], {"transient_lastDdlTime": "1"})):
        _add(c, db, values, params)


def _concatenated(partitions, db: str, tbl: str, monkeypatch) -> list[Partition]:
    """The table's partitions as the database concatenates them (building them is made to fail),
    checked against the ones built from the rows; the same for by-names and a filter."""
    from store.hms.partitions import make_name

    def no_building(*_a, **_k):
        raise AssertionError("the answer was built in Python, not concatenated by the database")

    objects = partitions.get_partitions(db, tbl)
    with monkeypatch.context() as m:
        m.setattr(type(partitions.reads.queries), "encode", no_building)
        m.setenv("HMS_WIRE_CHECK", "1")
        encoded = partitions.encoded_partitions(db, tbl)
        by_names = partitions.encoded_partitions_by_names(
            db, tbl, [make_name(["a", "b"], x.values) for x in objects][:2] + ["a=no/b=0"])
        filtered = partitions.encoded_partitions(db, tbl, filter_text="b >= 3")
    decoded = get_partitions_result()
    decoded.read(TBinaryProtocol(TTransport.TMemoryBuffer(encode_reply(get_partitions_result(success=encoded), None))))
    assert decoded.success == objects
    assert by_names.count == min(2, len(objects))
    assert filtered.count == len([x for x in objects if int(x.values[1]) >= 3])
    return objects


def test_lists_concatenated_by_the_database_follow_every_write(our_server_info, thrift_client, monkeypatch):
    """Every write of partition rows or parameters keeps the rows' encoded parts
    (store/hms/partitions/partition_wire.py): after each, the list the database concatenates
    equals the one built from the rows, and no answer is built in Python."""
    from thrift_idl.hive_metastore.ttypes import (
        ColumnStatistics,
        ColumnStatisticsData,
        ColumnStatisticsDesc,
        ColumnStatisticsObj,
        LongColumnStatsData,
        SetPartitionsStatsRequest,
    )

    c = thrift_client(our_server_info.port)
    db = f"pwc_{uuid.uuid4().hex[:8]}"
    _wire_table(c, db)
    services = open_services(our_server_info.db_url, str(our_server_info.warehouse))
    partitions = services.partitions
    try:
        assert len(_concatenated(partitions, db, "t", monkeypatch)) == 5
        p = c.get_partition(db, "t", ["plain", "1"])  # alter: parameters, location, access time
        p.parameters = {**p.parameters, "changed": "ű"}
        p.sd.location += "_moved"
        p.lastAccessTime = 12345
        c.alter_partition(db, "t", p)
        parts = c.get_partitions(db, "t", -1)  # alter many
        for x in parts:
            x.parameters = {**x.parameters, "batch": x.values[1]}
        c.alter_partitions(db, "t", parts)
        old = c.get_partition(db, "t", ["日本", "5"])  # rename
        old.values = ["renamed", "5"]
        c.rename_partition(db, "t", ["日本", "5"], old)
        c.append_partition(db, "t", ["appended", "6"])

        def stats(part_name):
            return ColumnStatistics(
                statsDesc=ColumnStatisticsDesc(isTblLevel=False, dbName=db, tableName="t", partName=part_name),
                statsObj=[ColumnStatisticsObj("id", "bigint", ColumnStatisticsData(
                    longStats=LongColumnStatsData(1, 9, 0, 3)))], engine="hive")
        c.update_partition_column_statistics(stats("a=plain/b=1"))  # COLUMN_STATS_ACCURATE
        c.set_aggr_stats_for(SetPartitionsStatsRequest(colStats=[stats("a=renamed/b=5")], engine="hive"))
        objects = _concatenated(partitions, db, "t", monkeypatch)
        assert "id" in objects[-2].parameters["COLUMN_STATS_ACCURATE"]  # a=plain/b=1
        c.truncate_table(db, "t", ["a=plain/b=1"])
        t = c.get_table(db, "t")  # a table rename moves the partitions' locations
        t.tableName = "t2"
        c.alter_table(db, "t", t)
        objects = _concatenated(partitions, db, "t2", monkeypatch)
        assert {tuple(x.values) for x in objects} == {("plain", "1"), ("with/slash=and%pct", "2"), ("", "3"),
                                                      ("__HIVE_DEFAULT_PARTITION__", "4"), ("renamed", "5"),
                                                      ("appended", "6")}
        assert all("/t2/" in x.sd.location for x in objects if not x.sd.location.endswith("_moved"))
        c.drop_partition(db, "t2", ["appended", "6"], True)
        _concatenated(partitions, db, "t2", monkeypatch)
    finally:
        services.close()
        c.drop_database(db, True, True)


def test_stale_parts_fail_the_check(our_server_info, thrift_client, monkeypatch):
    """The check the test suite runs with (HMS_WIRE_CHECK) finds a row whose parts a write forgot."""
    from sqlalchemy import update

    from store.db import schema as S
    from store.hms.common import location_field

    c = thrift_client(our_server_info.port)
    db = f"pws_{uuid.uuid4().hex[:8]}"
    _wire_table(c, db)
    services = open_services(our_server_info.db_url, str(our_server_info.warehouse))
    try:
        with services.store.write() as conn:
            conn.execute(update(S.partitions).where(S.partitions.c.part_name == "a=plain/b=1").values(
                w_location=location_field("file:///elsewhere")))
        monkeypatch.setenv("HMS_WIRE_CHECK", "1")
        with pytest.raises(AssertionError, match="stale parts"):
            services.partitions.encoded_partitions(db, "t")
        monkeypatch.setenv("HMS_WIRE_CHECK", "0")  # unchecked, the database's answer is what it holds
        wrong = services.partitions.encoded_partitions(db, "t")
        assert b"file:///elsewhere" in wrong.data
    finally:
        services.close()
        c.drop_database(db, True, True)


def test_migration_0025_fills_the_parts_of_stored_partitions(our_server_info, thrift_client, monkeypatch):
    """Partitions stored before the parts existed (NULL) are answered by building them, and migration
    0025's fill gives them the parts the database then concatenates."""
    import importlib.util
    from pathlib import Path

    from sqlalchemy import update

    from store.db import schema as S

    path = Path(__file__).resolve().parents[1] / "store/db/migrations/versions/0025_partition_wire.py"
    spec = importlib.util.spec_from_file_location("migration_0025", path)
    assert spec is not None and spec.loader is not None
    migration = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(migration)
    c = thrift_client(our_server_info.port)
    db = f"pwm_{uuid.uuid4().hex[:8]}"
    _wire_table(c, db)
    services = open_services(our_server_info.db_url, str(our_server_info.warehouse))
    try:
        built = services.partitions.get_partitions(db, "t")
        with services.store.write() as conn:
            conn.execute(update(S.partitions).values(w_values=None, w_times=None, w_location=None, w_params=None))
        monkeypatch.setenv("HMS_WIRE_CHECK", "0")
        decoded = get_partitions_result()
        decoded.read(TBinaryProtocol(TTransport.TMemoryBuffer(encode_reply(
            get_partitions_result(success=services.partitions.encoded_partitions(db, "t")), None))))
        assert decoded.success == built  # built in Python
        with services.store.write() as conn:
            assert migration.fill(conn, chunk=2) >= 5
        assert _concatenated(services.partitions, db, "t", monkeypatch) == built
    finally:
        services.close()
        c.drop_database(db, True, True)


def test_partition_names_in_every_form(our_server_info, thrift_client):
    """Partition names (every form; on PostgreSQL read on the driver's cursor) in name order."""
    from thrift_idl.hive_metastore.ttypes import GetPartitionNamesPsRequest, PartitionsByExprRequest

    c = thrift_client(our_server_info.port)
    db = f"pwn_{uuid.uuid4().hex[:8]}"
    _wire_table(c, db)
    services = open_services(our_server_info.db_url, str(our_server_info.warehouse))
    try:
        partitions = services.partitions
        names = partitions.get_partition_names(db, "t")
        assert len(names) == 5 and names == sorted(names) and any("%2F" in n for n in names)
        assert partitions.get_partition_names(db, "t", max_parts=2) == names[:2]
        assert partitions.get_partition_names(db, "t", part_vals=["plain"]) == ["a=plain/b=1"]
        assert partitions.get_partition_names(db, "t", filter_text="b >= 3") == [
            n for n in names if int(n.rsplit("=", 1)[1]) >= 3]
        assert partitions.get_partition_names(db, "t", filter_text='a = "none"') == []
        assert c.get_partition_names(db, "t", -1) == names
        assert c.get_partition_names(db, "t", 2) == names[:2]
        assert c.get_partition_names_ps(db, "t", ["plain"], -1) == ["a=plain/b=1"]
        assert c.get_partition_names_ps_req(GetPartitionNamesPsRequest(
            dbName=db, tblName="t", partValues=["", "5"], maxParts=-1)).names == [n for n in names if n.endswith("b=5")]
        assert c.fetch_partition_names_req(PartitionsByExprRequest(dbName=db, tblName="t", maxParts=-1)) == names
        assert c.get_partition_names(db, "missing", -1) == []
    finally:
        services.close()
        c.drop_database(db, True, True)


def test_lists_without_columns_are_the_trimmed_objects_bytes(shaped_table, monkeypatch):
    """Hive 4's get_partitions_by_filter_req with skipColumnSchemaForPartition: the rows' parts
    joined with a descriptor without columns are Thrift's encoding of the trimmed objects; a row
    that has to be built (its own descriptor, another schema version) makes it answer None."""
    from store.hms.partitions import trimmed_partitions

    monkeypatch.setenv("HMS_WIRE_CHECK", "0")
    c, db, partitions = shaped_table
    for where in ('b = 7', 'b >= 7', 'a = "nothing"'):
        built = trimmed_partitions(partitions.get_partitions(db, "t", filter_text=where), True, None, None)
        encoded = partitions.encoded_without_columns(db, "t", -1, where, lambda built=built: built)
        assert encoded is not None and encoded.count == len(built), where
        assert encode_reply(get_partitions_result(success=encoded), None) == \
            _plain(get_partitions_result(success=built)), where
        assert all(p.sd.cols == [] for p in built)
    for where in ('b = 6', 'b > 2 and b < 6'):  # its own descriptor; older schema versions
        assert partitions.encoded_without_columns(db, "t", -1, where, lambda: []) is None, where


def test_filters_with_long_value_lists(our_server_info, thrift_client):
    """IN lists longer than leaf_sql.LONG_LIST (one parameter: a JSON array on SQLite, an array on
    PostgreSQL, an expanding list on MariaDB) answer as short ones: lists, and names (on PostgreSQL
    read on the driver's cursor)."""
    from store.hms.partition_filter import LONG_LIST

    c = thrift_client(our_server_info.port)
    db = f"pwl_{uuid.uuid4().hex[:8]}"
    _wire_table(c, db)
    services = open_services(our_server_info.db_url, str(our_server_info.warehouse))
    try:
        by_values = {tuple(p.values): name for p, name in zip(
            c.get_partitions(db, "t", -1), services.partitions.get_partition_names(db, "t"))}
        fill = [f"zz{i}" for i in range(LONG_LIST + 20)]
        strings = ", ".join(f"'{v}'" for v in [*fill, "plain", "日本", "PLAIN", "plain "])
        ints = ", ".join(str(i) for i in [*range(100, 100 + LONG_LIST + 20), 2, 5])
        cases = {f"a in ({strings})": {("plain", "1"), ("日本", "5")},
                 f"a not in ({strings}) and b not in ({ints})": {("", "3"), ("__HIVE_DEFAULT_PARTITION__", "4")},
                 f"b in ({ints}) or a in ({strings})": {("plain", "1"), ("with/slash=and%pct", "2"), ("日本", "5")}}
        for filt, want in cases.items():
            assert {tuple(p.values) for p in c.get_partitions_by_filter(db, "t", filt, -1)} == want, filt
            names = services.partitions.get_partition_names(db, "t", filter_text=filt)
            assert names == sorted(by_values[v] for v in want), filt
    finally:
        services.close()
        c.drop_database(db, True, True)
