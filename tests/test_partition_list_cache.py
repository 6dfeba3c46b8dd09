"""Whole partition lists kept in memory per table (store/hms/partitions/partition_list_cache.py):
answered again without reading the rows while the table's `parts_version` holds, and never stale,
because triggers on `partitions` change that version in every writing transaction
(store/db/parts_version.py). Run on SQLite, PostgreSQL and MariaDB."""

from __future__ import annotations

import uuid

import pytest
from sqlalchemy import text

from store.db import parts_version
from store.services import open_services
from thrift_idl.hive_metastore.ttypes import (
    AlreadyExistsException,
    ColumnStatistics,
    ColumnStatisticsData,
    ColumnStatisticsDesc,
    ColumnStatisticsObj,
    Database,
    FieldSchema,
    LongColumnStatsData,
    Partition,
    StorageDescriptor,
    Table,
)


def _table(c, db: str, name: str = "t") -> None:
    sd = StorageDescriptor(cols=[FieldSchema("id", "bigint", None)], inputFormat="in", outputFormat="out",
                           parameters={})
    c.create_table(Table(tableName=name, dbName=db, sd=sd, owner="o", partitionKeys=[FieldSchema("p", "string", None)],
                         parameters={}, tableType="MANAGED_TABLE"))


def _add(c, db: str, *values: str, table: str = "t") -> None:
    sd = c.get_table(db, table).sd
    c.add_partitions([Partition(values=[v], dbName=db, tableName=table, sd=StorageDescriptor(**{
        **sd.__dict__, "location": None}), parameters={}) for v in values])


@pytest.fixture
def env(our_server_info, thrift_client, monkeypatch):
    """(client of the server, database, in-process services over the same database, reads counter):
    the services stand for a second server whose lists are cached."""
    monkeypatch.setenv("HMS_WIRE_CHECK", "0")  # counted reads: no second read by the check
    c = thrift_client(our_server_info.port)
    db = f"lc_{uuid.uuid4().hex[:8]}"
    c.create_database(Database(name=db, description="", parameters={}))
    _table(c, db)
    _add(c, db, "a", "b", "c")
    services = open_services(our_server_info.db_url, str(our_server_info.warehouse))
    reads = []  # each time rows are read (select_wire), by the list or to fill the cache
    queries = services.partitions.reads.queries
    real = queries.select_wire
    monkeypatch.setattr(queries, "select_wire", lambda *a, **k: reads.append(1) or real(*a, **k))
    try:
        yield c, db, services, reads
    finally:
        services.close()
        c.drop_database(db, True, True)


def _version(services, db: str, table: str = "t") -> int:
    with services.store.read() as conn:
        return conn.execute(text(
            "SELECT t.parts_version FROM tbl t JOIN db d ON d.db_id = t.db_id WHERE d.name = :d AND t.name = :t"),
            {"d": db, "t": table}).scalar_one()


def _values(services, db: str, table: str = "t") -> list[str]:
    return [p.values[0] for p in services.partitions.get_partitions(db, table)]  # built: never cached


def _listed(services, db: str, table: str = "t") -> list[str]:
    """The values of the encoded list (what the server answers), decoded."""
    from thrift.protocol.TBinaryProtocol import TBinaryProtocol
    from thrift.transport.TTransport import TMemoryBuffer

    enc = services.partitions.encoded_partitions(db, table)
    prot = TBinaryProtocol(TMemoryBuffer(enc.data))
    out = []
    for _ in range(enc.count):
        p = Partition()
        p.read(prot)
        out.append(p.values[0])
    return out


def test_the_triggers_are_there(env):
    _c, _db, services, _reads = env
    with services.store.read() as conn:
        assert parts_version.installed(conn)
    assert services.partitions.reads.cache.usable is not None


def test_unchanged_lists_are_not_read_again(env):
    c, db, services, reads = env
    assert _listed(services, db) == ["a", "b", "c"] and len(reads) == 1
    assert _listed(services, db) == ["a", "b", "c"] and len(reads) == 1  # from memory
    assert services.partitions.get_partition_names(db, "t") == ["p=a", "p=b", "p=c"]
    assert services.partitions.get_partition_names(db, "t", max_parts=2) == ["p=a", "p=b"]
    by_names = services.partitions.encoded_partitions_by_names(db, "t", ["p=c", "p=zz", "p=a", "p=c"])
    assert by_names.count == 2
    assert services.partitions.encoded_partitions(db, "t", max_parts=1).count == 1
    assert len(reads) == 1
    assert services.partitions.encoded_partitions(db, "t", part_vals=["b"]).count == 1  # not from memory
    assert len(reads) == 2


def test_every_write_changes_the_version_and_the_next_list(env, thrift_client, our_server_info):
    c, db, services, reads = env
    _table(c, db, "other")

    def changed(what, fn, tables=("t",)):
        before = {t: _version(services, db, t) for t in tables}
        _listed(services, db)  # cached now
        fn()
        after = {t: _version(services, db, t) for t in tables}
        assert all(after[t] != before[t] for t in tables), what
        for t in tables:
            assert _listed(services, db, t) == _values(services, db, t), what

    changed("add", lambda: _add(c, db, "d"))
    p = c.get_partition(db, "t", ["a"])
    p.parameters = {**p.parameters, "k": "v"}
    changed("alter one", lambda: c.alter_partition(db, "t", p))
    ps = c.get_partitions(db, "t", -1)
    for x in ps:
        x.parameters = {**x.parameters, "k2": "v2"}
    changed("alter many", lambda: c.alter_partitions(db, "t", ps))
    r = c.get_partition(db, "t", ["b"])
    r.values = ["b2"]
    changed("rename", lambda: c.rename_partition(db, "t", ["b"], r))
    stats = ColumnStatistics(
        statsDesc=ColumnStatisticsDesc(isTblLevel=False, dbName=db, tableName="t", partName="p=c"),
        statsObj=[ColumnStatisticsObj("id", "bigint", ColumnStatisticsData(
            longStats=LongColumnStatsData(lowValue=1, highValue=2, numNulls=0, numDVs=2)))])
    changed("column statistics", lambda: c.update_partition_column_statistics(stats))
    changed("exchange", lambda: c.exchange_partition({"p": "d"}, db, "t", db, "other"), ("t", "other"))
    t = c.get_table(db, "t")
    t.sd.cols = t.sd.cols + [FieldSchema("more", "string", None)]
    changed("alter table cascade", lambda: c.alter_table_with_cascade(db, "t", t, True))
    changed("drop", lambda: c.drop_partition(db, "t", ["a"], True))
    assert _values(services, db) == ["b2", "c"] and _values(services, db, "other") == ["d"]


def test_a_failed_write_leaves_the_version(env):
    c, db, services, reads = env
    before = _version(services, db)
    with pytest.raises(AlreadyExistsException):
        _add(c, db, "x", "a")  # "a" exists: nothing of the add is kept
    assert _version(services, db) == before
    assert _listed(services, db) == ["a", "b", "c"]


def test_a_table_made_again_is_not_answered_from_the_old_list(env):
    c, db, services, reads = env
    assert _listed(services, db) == ["a", "b", "c"]
    c.drop_table(db, "t", True)
    _table(c, db)
    assert _listed(services, db) == []
    _add(c, db, "z")
    assert _listed(services, db) == ["z"]


def test_a_stale_entry_fails_the_check(env, monkeypatch):
    """HMS_WIRE_CHECK (set for the whole suite) compares every answer from memory with the rows:
    an entry that no longer matches the rows raises."""
    c, db, services, reads = env
    _listed(services, db)
    reads_cache = services.partitions.reads.cache
    with services.store.read() as conn:
        ctx = services.partitions.reads.contexts.read(conn, db, "t")
    entry = reads_cache.get(ctx.tbl_id, ctx.parts_version)
    assert entry is not None
    reads_cache.put(ctx.tbl_id, ctx.parts_version, entry.rows[:2])  # as if a write had been missed
    assert _listed(services, db) == ["a", "b"]  # without the check, the stale list is answered
    monkeypatch.setenv("HMS_WIRE_CHECK", "1")
    with pytest.raises(AssertionError, match="stale"):
        _listed(services, db)


def test_without_the_triggers_nothing_is_kept(env, our_server_info):
    c, db, services, reads = env
    with services.store.engine.begin() as conn:
        if conn.dialect.name == "postgresql":
            conn.exec_driver_sql("DROP TRIGGER hms_partitions_upd ON partitions")
        else:
            conn.exec_driver_sql("DROP TRIGGER hms_partitions_upd")
    try:
        fresh = open_services(our_server_info.db_url, str(our_server_info.warehouse))
        queries = fresh.partitions.reads.queries
        real = queries.select_wire
        queries.select_wire = lambda *a, **k: reads.append(1) or real(*a, **k)
        try:
            for _ in range(2):
                assert _listed(fresh, db) == ["a", "b", "c"]
            assert len(reads) == 2
        finally:
            fresh.close()
    finally:
        with services.store.engine.begin() as conn:
            assert parts_version.install(conn)


def test_the_budget_bounds_memory():
    from store.hms.partitions import PartitionListCache

    cache = PartitionListCache(budget=40_000)
    row = ("p=x", None, 0, b"v" * 1000, b"t", b"l", b"p")
    for tbl in range(20):
        cache.put(tbl, 7, [row] * 5)
    kept = [t for t in range(20) if cache.get(t, 7) is not None]
    assert 0 < len(kept) < 20 and kept == list(range(20 - len(kept), 20))  # the oldest went first
    cache.put(3, 8, [row])
    cache.put(3, 9, [row])  # a table keeps one entry: its latest
    assert cache.get(3, 8) is None and cache.get(3, 9) is not None
    assert cache.put(99, 1, [row] * 50).rows and cache.get(99, 1) is None  # a quarter of the budget: not kept


def test_names_fill_only_a_list_kept_before(env):
    """Partition names alone never read a whole list into memory (a table too large to keep would
    be read whole for nothing); once a list of the table is kept, names after a change fill it."""
    c, db, services, reads = env
    cache = services.partitions.reads.cache
    assert services.partitions.get_partition_names(db, "t") == ["p=a", "p=b", "p=c"]
    assert reads == [] and not cache.holds(_ctx(services, db).tbl_id)
    _listed(services, db)
    _add(c, db, "d")
    assert services.partitions.get_partition_names(db, "t") == ["p=a", "p=b", "p=c", "p=d"]
    assert len(reads) == 2  # the list, then the names' fill of the new version
    assert _listed(services, db) == ["a", "b", "c", "d"] and len(reads) == 2


def _context_reads(services, monkeypatch) -> list[int]:
    """A list that grows by one at each read of a table's whole context."""
    contexts: list[int] = []
    reads = services.partitions.reads
    real = reads.contexts.read
    monkeypatch.setattr(reads.contexts, "read", lambda *a, **k: contexts.append(1) or real(*a, **k))
    return contexts


def _ctx(services, db: str, table: str = "t"):
    with services.store.read() as conn:
        return services.partitions.reads.contexts.read(conn, db, table)


def test_the_whole_answer_is_kept_and_follows_the_table(env):
    """The whole list's answer is joined once per list and shared parts: a change of the table
    that leaves its partition rows alone (a rename) shows in the next answer."""
    from thrift.protocol.TBinaryProtocol import TBinaryProtocol
    from thrift.transport.TTransport import TMemoryBuffer

    c, db, services, reads = env
    sd = StorageDescriptor(cols=[FieldSchema("id", "bigint", None)], inputFormat="in", outputFormat="out",
                           parameters={}, location=f"file:///tmp/{db}/ext")
    c.create_table(Table(tableName="ext", dbName=db, sd=sd, owner="o", partitionKeys=[FieldSchema("p", "string", None)],
                         parameters={"EXTERNAL": "TRUE"}, tableType="EXTERNAL_TABLE"))
    _add(c, db, "a", "b", table="ext")
    first = services.partitions.encoded_partitions(db, "ext")
    assert services.partitions.encoded_partitions(db, "ext").data is first.data
    version = _version(services, db, "ext")
    t = c.get_table(db, "ext")
    t.tableName = "ext2"
    c.alter_table(db, "ext", t)  # an external table's partitions stay where they are
    assert _version(services, db, "ext2") == version  # no partition row changed
    renamed = services.partitions.encoded_partitions(db, "ext2")
    p = Partition()
    p.read(TBinaryProtocol(TMemoryBuffer(renamed.data)))
    assert p.tableName == "ext2" and renamed.data != first.data
    assert services.partitions.encoded_partitions(db, "ext2").data is renamed.data
    assert _listed(services, db, "ext2") == ["a", "b"] and len(reads) == 1


def test_names_are_encoded_once_per_kept_list(env, thrift_client, our_server_info):
    """get_partition_names answers a kept list's names encoded once: the bytes are Thrift's
    encoding of the names, shared by later calls, and follow a change at once (also through the
    server)."""
    from store.hms.common import EncodedStrings

    c, db, services, reads = env
    _add(c, db, "ü/ß=x")  # escaped and non-ASCII
    _listed(services, db)
    names = services.partitions.encoded_partition_names(db, "t")
    assert isinstance(names, EncodedStrings)
    assert names == EncodedStrings.of(services.partitions.get_partition_names(db, "t"))
    assert services.partitions.encoded_partition_names(db, "t") is names
    assert services.partitions.encoded_partition_names(db, "t", max_parts=1) == ["p=a"]
    server = thrift_client(our_server_info.port)
    server.get_partitions(db, "t", -1)  # the server's own list is kept
    assert server.get_partition_names(db, "t", -1) == services.partitions.get_partition_names(db, "t")
    c.drop_partition(db, "t", ["a"], True)
    assert services.partitions.encoded_partition_names(db, "t") == \
        EncodedStrings.of(services.partitions.get_partition_names(db, "t"))
    assert server.get_partition_names(db, "t", -1) == services.partitions.get_partition_names(db, "t")
    assert "p=a" not in server.get_partition_names(db, "t", -1)


def test_names_of_a_kept_list_are_found_by_the_tables_key(env, monkeypatch):
    """Once a table's names were answered from its kept list, later names calls read only the
    table's id and parts version (no descriptor, no columns), and still follow every change: a
    new partition, the table renamed and another made under its name, the table dropped."""
    from store.errors import NoSuchObject
    from store.hms.common import EncodedStrings

    c, db, services, _reads = env
    contexts = _context_reads(services, monkeypatch)
    _listed(services, db)
    first = services.partitions.encoded_partition_names(db, "t")
    assert first == EncodedStrings.of(["p=a", "p=b", "p=c"])
    contexts.clear()
    assert services.partitions.encoded_partition_names(db, "t") is first
    assert services.partitions.encoded_partition_names(db, "T") is first
    assert contexts == []  # by the key alone
    _add(c, db, "d")
    assert services.partitions.encoded_partition_names(db, "t") == EncodedStrings.of(["p=a", "p=b", "p=c", "p=d"])
    c.alter_table(db, "t", Table(**{**c.get_table(db, "t").__dict__, "tableName": "t_old"}))
    _table(c, db)
    _add(c, db, "x")
    assert services.partitions.encoded_partition_names(db, "t") in (["p=x"], EncodedStrings.of(["p=x"]))
    c.drop_table(db, "t", True)
    with pytest.raises(NoSuchObject):
        services.partitions.encoded_partition_names(db, "t")


def test_a_kept_whole_list_is_found_by_the_tables_key(env, monkeypatch):
    """Once a table's whole list was answered from memory, the next whole list is found by the
    table's id, parts version and meta version alone (no context read), and still follows every
    change: a new partition, the table's descriptor altered, the table renamed."""
    c, db, services, _reads = env
    contexts = _context_reads(services, monkeypatch)
    first = services.partitions.encoded_partitions(db, "t")
    assert services.partitions.encoded_partitions(db, "t") is first  # from the kept list: the same bytes
    contexts.clear()
    assert services.partitions.encoded_partitions(db, "t") is first
    assert contexts == []  # by the key alone
    _add(c, db, "d")
    assert _listed(services, db) == ["a", "b", "c", "d"]
    t = c.get_table(db, "t")
    t.sd.inputFormat = "in2"
    c.alter_table(db, "t", t)
    services.partitions.encoded_partitions(db, "t")
    assert {p.sd.inputFormat for p in _decoded(services.partitions.encoded_partitions(db, "t"))} == {"in2"}
    c.alter_table(db, "t", Table(**{**c.get_table(db, "t").__dict__, "tableName": "t_new"}))
    _table(c, db)
    assert _listed(services, db) == []
    assert {p.tableName for p in _decoded(services.partitions.encoded_partitions(db, "t_new"))} == {"t_new"}


def _decoded(enc) -> list[Partition]:
    from thrift.protocol.TBinaryProtocol import TBinaryProtocol
    from thrift.transport.TTransport import TMemoryBuffer

    prot = TBinaryProtocol(TMemoryBuffer(enc.data))
    out = []
    for _ in range(enc.count):
        p = Partition()
        p.read(prot)
        out.append(p)
    return out


def test_names_alone_are_kept_and_found_by_the_tables_key(env, monkeypatch):
    """A table only ever asked for its names keeps them alone, encoded (its whole list is never
    read for them): the next names call reads only the table's key, and every change of its
    partitions shows at once. The names take part in the budget."""
    from store.hms.common import EncodedStrings

    c, db, services, reads = env
    partitions = services.partitions.reads
    contexts = _context_reads(services, monkeypatch)
    first = services.partitions.encoded_partition_names(db, "t")
    assert first == EncodedStrings.of(["p=a", "p=b", "p=c"]) and len(contexts) == 1
    assert services.partitions.encoded_partition_names(db, "t") is first
    assert len(contexts) == 1 and reads == []  # by the key alone; no whole list read
    assert not partitions.cache.holds(_ctx(services, db).tbl_id)
    contexts.clear()
    _add(c, db, "d")
    assert services.partitions.encoded_partition_names(db, "t") == EncodedStrings.of(["p=a", "p=b", "p=c", "p=d"])
    c.drop_partition(db, "t", ["b"], True)
    assert services.partitions.encoded_partition_names(db, "t") == EncodedStrings.of(["p=a", "p=c", "p=d"])
    assert services.partitions.encoded_partition_names(db, "t", max_parts=1) == ["p=a"]  # a prefix: read
    assert reads == []
    # the server answers the same
    assert c.get_partition_names(db, "t", -1) == ["p=a", "p=c", "p=d"]
    assert c.get_partition_names(db, "t", -1) == ["p=a", "p=c", "p=d"]


def test_names_alone_leave_the_budget_first():
    from store.hms.partitions import PartitionListCache

    cache = PartitionListCache(budget=40_000)
    row = ("p=x", None, 0, b"v" * 1000, b"t", b"l", b"p")
    cache.put(1, 7, [row] * 5)
    for tbl in range(10, 30):
        cache.names_put(tbl, 3, f"names {tbl}", 3_000)
    kept = [t for t in range(10, 30) if cache.names_get(t, 3) is not None]
    assert 0 < len(kept) < 20 and kept == list(range(30 - len(kept), 30))  # the oldest went first
    assert cache.get(1, 7) is not None  # the whole list stayed
    cache.names_put(29, 4, "newer", 10)
    assert cache.names_get(29, 3) is None and cache.names_get(29, 4) == "newer"  # one per table
    cache.names_put(99, 1, "huge", 20_000)
    assert cache.names_get(99, 1) is None  # over a quarter of the budget: not kept


_ALL_BUT_Z = "p <> 'zzz'"  # a filter every partition passes: the whole list, by filter


def test_lists_by_filter_are_kept_and_found_by_the_tables_key(env, monkeypatch):
    """A list by filter or partial specification (also Hive 4's form without the descriptors'
    columns) is kept with the table's versions: asked again, only the table's key is read (no
    context, no rows), and the same bytes are answered."""
    c, db, services, reads = env
    partitions = services.partitions
    contexts = _context_reads(services, monkeypatch)
    asked = [
        lambda: partitions.encoded_partitions(db, "t", filter_text="p = 'b' or p = 'c'"),
        lambda: partitions.encoded_partitions(db, "t", filter_text="p = 'b' or p = 'c'", max_parts=1),
        lambda: partitions.encoded_partitions(db, "t", part_vals=["a"]),
        lambda: partitions.encoded_without_columns(db, "t", -1, "p > 'a'", lambda: []),
        lambda: partitions.encoded_partition_names_ps(db, "t", -1, ["c"]),
        lambda: partitions.encoded_partitions_by_names(db, "t", ["p=c", "p=zz", "p=a", "p=c"]),
    ]
    first = [ask() for ask in asked]
    assert [f.count for f in first] == [2, 1, 1, 2, 1, 2]
    assert len(contexts) == 6 and len(reads) == 5
    again = [ask() for ask in asked]
    assert all(a is f for a, f in zip(again, first))
    assert len(contexts) == 6 and len(reads) == 5  # by the key alone
    assert [p.values for p in _decoded(first[5])] == [["a"], ["c"]]
    assert partitions.encoded_partitions(db, "T", filter_text="p = 'b' or p = 'c'") is first[0]
    assert [p.values for p in _decoded(first[0])] == [["b"], ["c"]]
    assert [p.values for p in _decoded(first[3])] == [["b"], ["c"]] and \
        all(p.sd.cols == [] for p in _decoded(first[3]))


def test_kept_lists_by_filter_follow_every_write(env):
    """Written through the server, read by the services (another server): a kept list by filter
    is answered again only while nothing it comes from changed."""
    c, db, services, reads = env
    _table(c, db, "other")

    def changed(what, fn, table="t"):
        services.partitions.encoded_partitions(db, table, filter_text=_ALL_BUT_Z)  # kept now
        fn()
        kept = services.partitions.encoded_partitions(db, table, filter_text=_ALL_BUT_Z)
        assert _decoded(kept) == services.partitions.get_partitions(db, table, filter_text=_ALL_BUT_Z), what

    changed("add", lambda: _add(c, db, "d"))
    p = c.get_partition(db, "t", ["a"])
    p.parameters = {**p.parameters, "k": "v"}
    changed("alter one", lambda: c.alter_partition(db, "t", p))
    r = c.get_partition(db, "t", ["b"])
    r.values = ["b2"]
    changed("rename a partition", lambda: c.rename_partition(db, "t", ["b"], r))
    changed("exchange", lambda: c.exchange_partition({"p": "d"}, db, "t", db, "other"))
    changed("exchange, the other table", lambda: None, "other")
    t = c.get_table(db, "t")
    t.sd.cols = t.sd.cols + [FieldSchema("more", "string", None)]
    changed("alter table cascade", lambda: c.alter_table_with_cascade(db, "t", t, True))
    t = c.get_table(db, "t")
    t.parameters = {**t.parameters, "k": "v"}
    changed("alter table", lambda: c.alter_table(db, "t", t))
    changed("drop", lambda: c.drop_partition(db, "t", ["a"], True))
    names = services.partitions.encoded_partition_names_ps(db, "t", -1, [""])
    by_names = services.partitions.encoded_partitions_by_names(db, "t", ["p=e", "p=c"])
    _add(c, db, "e")
    assert services.partitions.encoded_partition_names_ps(db, "t", -1, [""]) != names
    assert [p.values for p in _decoded(services.partitions.encoded_partitions_by_names(db, "t", ["p=e", "p=c"]))] \
        == [["c"], ["e"]]
    c.drop_partition(db, "t", ["e"], True)
    assert services.partitions.encoded_partition_names_ps(db, "t", -1, [""]) == names
    assert services.partitions.encoded_partitions_by_names(db, "t", ["p=e", "p=c"]).data == by_names.data
    assert [p.values for p in _decoded(services.partitions.encoded_partitions(db, "t", filter_text=_ALL_BUT_Z))] \
        == [["b2"], ["c"]]
    kept = services.partitions.encoded_partitions(db, "t", filter_text=_ALL_BUT_Z)
    c.alter_table(db, "t", Table(**{**c.get_table(db, "t").__dict__, "tableName": "t_old"}))
    _table(c, db)
    _add(c, db, "x")
    again = services.partitions.encoded_partitions(db, "t", filter_text=_ALL_BUT_Z)
    assert again is not kept and [(p.tableName, p.values) for p in _decoded(again)] == [("t", ["x"])]
    c.drop_table(db, "t", True)
    from store.errors import NoSuchObject

    with pytest.raises(NoSuchObject):
        services.partitions.encoded_partitions(db, "t", filter_text=_ALL_BUT_Z)


def test_the_server_answers_kept_filters_and_their_changes(env, thrift_client, our_server_info):
    c, db, services, reads = env
    server = thrift_client(our_server_info.port)
    for _ in range(2):
        assert [p.values for p in server.get_partitions_by_filter(db, "t", "p >= 'b'", -1)] == [["b"], ["c"]]
    _add(c, db, "d")
    assert [p.values for p in server.get_partitions_by_filter(db, "t", "p >= 'b'", -1)] == [["b"], ["c"], ["d"]]
    assert [p.values for p in server.get_partitions_ps(db, "t", ["d"], -1)] == [["d"]]
    for _ in range(2):
        assert server.get_partition_names_ps(db, "t", ["d"], -1) == ["p=d"]
    c.drop_partition(db, "t", ["d"], True)
    assert server.get_partitions_ps(db, "t", ["d"], -1) == []
    assert server.get_partition_names_ps(db, "t", ["d"], -1) == []
    assert server.get_partition_names_ps(db, "t", [""], 2) == ["p=a", "p=b"]
    assert [p.values for p in server.get_partitions_by_filter(db, "t", "p >= 'b'", -1)] == [["b"], ["c"]]


def test_a_stale_kept_filter_answer_fails_the_check(env, monkeypatch):
    c, db, services, reads = env
    partitions = services.partitions
    one = partitions.encoded_partitions(db, "t", filter_text="p = 'a'")
    cache = partitions.reads.cache
    request = (db, "t", "list", "p = 'b'", None, -1)
    partitions.encoded_partitions(db, "t", filter_text="p = 'b'")
    got = cache.answer_get(request)
    assert got is not None
    cache.answer_put(request, *got[:3], one, 10)  # as if a write had been missed
    assert [p.values for p in _decoded(partitions.encoded_partitions(db, "t", filter_text="p = 'b'"))] == [["a"]]
    monkeypatch.setenv("HMS_WIRE_CHECK", "1")
    with pytest.raises(AssertionError, match="stale"):
        partitions.encoded_partitions(db, "t", filter_text="p = 'b'")


def test_kept_filter_answers_leave_the_budget_first_and_are_bounded():
    from store.hms.partitions import PartitionListCache

    cache = PartitionListCache(budget=64_000)
    row = ("p=x", None, 0, b"v" * 1000, b"t", b"l", b"p")
    cache.put(1, 7, [row] * 5)
    cache.names_put(2, 3, "names", 3_000)
    for i in range(60):
        cache.answer_put(("db", "t", "list", f"p = '{i}'", None, -1), 1, 7, 1, f"answer {i}", 990)
    kept = [i for i in range(60) if cache.answer_get(("db", "t", "list", f"p = '{i}'", None, -1)) is not None]
    assert 0 < len(kept) < 60 and kept == list(range(60 - len(kept), 60))  # the oldest went first
    assert cache.get(1, 7) is not None and cache.names_get(2, 3) == "names"  # lists and names stayed
    cache.answer_put(("db", "t", "list", "big", None, -1), 1, 7, 1, "big", 4_100)
    assert cache.answer_get(("db", "t", "list", "big", None, -1)) is None  # over 1/16 of the budget
    cache = PartitionListCache(budget=64_000, answers_max=5)
    for i in range(10):
        cache.answer_put(("db", "u", "list", str(i), None, -1), 3, 1, 1, "a", 1)
    assert sum(cache.answer_get(("db", "u", "list", str(i), None, -1)) is not None for i in range(10)) == 5
