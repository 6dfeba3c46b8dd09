"""Writes and reads the server refuses must leave everything as it was: invalid database and
table names, partition filters and partition values are refused with a clear error (and the server
stays healthy); failed writes leave nothing half-written (checked through the Thrift API on SQLite
and PostgreSQL).
"""

from __future__ import annotations

import os
import time
import uuid

import pytest

from tests.harness import (
    BackendUnavailable,
    ServerStartError,
    ci_mode,
    create_fresh_database,
    open_thrift_client,
    start_checked_server,
)
from thrift_idl.hive_metastore.ttypes import (
    AddPartitionsRequest,
    AlreadyExistsException,
    Database,
    DropPartitionsRequest,
    FieldSchema,
    Function,
    FunctionType,
    InvalidObjectException,
    InvalidOperationException,
    MetaException,
    NoSuchObjectException,
    Partition,
    PrincipalType,
    RequestPartsSpec,
    SerDeInfo,
    StorageDescriptor,
    Table,
)

# --------------------------------------------------------------------------- servers


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    """SQLite."""
    try:
        srv = start_checked_server(tmp_path_factory.mktemp("refused-writes"))
    except ServerStartError as e:
        pytest.fail(str(e), pytrace=False)
    yield srv
    srv.stop()


@pytest.fixture
def client(server):
    c, transport = open_thrift_client(server.port, timeout=20)
    yield c
    transport.close()


@pytest.fixture(scope="module", params=["sqlite", "postgresql"])
def atomic_server(request, backend_specs, tmp_path_factory):
    """Server for the nothing-half-written checks: SQLite and PostgreSQL."""
    spec = backend_specs[request.param]
    if not spec.available:
        reason = f"{request.param} backend unavailable: {spec.reason}"
        pytest.fail(reason) if ci_mode() else pytest.skip(reason)
    try:
        fresh = create_fresh_database(spec, tmp_path_factory.mktemp(f"atomic-db-{request.param}"), migrated=True)
    except BackendUnavailable as e:
        pytest.fail(str(e)) if ci_mode() else pytest.skip(str(e))
    try:
        try:
            srv = start_checked_server(tmp_path_factory.mktemp(f"atomic-{request.param}"), fresh.url)
        except ServerStartError as e:
            pytest.fail(str(e), pytrace=False)
        try:
            yield srv
        finally:
            srv.stop()
    finally:
        fresh.drop()


# --------------------------------------------------------------------------- invalid names, filters, values


def _sd(cols=None, location=None):
    return StorageDescriptor(
        cols=cols if cols is not None else [FieldSchema("id", "int", None), FieldSchema("v", "string", None)],
        location=location, inputFormat="org.apache.hadoop.mapred.TextInputFormat",
        outputFormat="org.apache.hadoop.hive.ql.io.HiveIgnoreKeyTextOutputFormat",
        serdeInfo=SerDeInfo(serializationLib="org.apache.hadoop.hive.serde2.lazy.LazySimpleSerDe",
                            parameters={}), parameters={})


def _table(db, name, keys=(("dt", "string"), ("n", "int")), cols=None):
    return Table(dbName=db, tableName=name, sd=_sd(cols), parameters={}, tableType="MANAGED_TABLE",
                 partitionKeys=[FieldSchema(k, t, None) for k, t in keys])


def _part(db, tbl, values, params=None):
    return Partition(dbName=db, tableName=tbl, values=list(values), sd=_sd(), parameters=params or {})


# Hive 4 takes every printable ASCII character but the backslash in database and table names
BAD_NAMES = ["", "ümlaut", "tab\tname", "back\\slash"]


@pytest.mark.parametrize("bad", BAD_NAMES)
def test_invalid_database_names(server, client, bad):
    with pytest.raises(InvalidObjectException) as info:
        client.create_database(Database(name=bad, parameters={}))
    assert "not a valid" in info.value.message
    assert bad.lower() not in client.get_all_databases() or bad == ""
    server.assert_healthy()


@pytest.fixture(scope="module")
def names_db(server):
    db = f"names_{uuid.uuid4().hex[:6]}"
    c, transport = open_thrift_client(server.port)
    try:
        c.create_database(Database(name=db, parameters={}))
        c.create_table(_table(db, "p"))
        c.add_partitions([_part(db, "p", ["2024-01-01", "1"]), _part(db, "p", ["2024-01-02", "2"])])
    finally:
        transport.close()
    return db


@pytest.mark.parametrize("bad", BAD_NAMES)
def test_invalid_table_names(server, client, names_db, bad):
    with pytest.raises(InvalidObjectException) as info:
        client.create_table(_table(names_db, bad))
    assert "not a valid" in info.value.message
    assert client.get_all_tables(names_db) == ["p"]
    # renaming to an invalid name is refused too
    renamed = client.get_table(names_db, "p")
    renamed.tableName = bad or "\t"
    with pytest.raises(InvalidOperationException):
        client.alter_table(names_db, "p", renamed)
    assert client.get_all_tables(names_db) == ["p"]
    server.assert_healthy()


INVALID_FILTERS = [
    'dt = ',                    # missing literal
    'dt = "2024-01-01" and',    # dangling AND
    '((dt = "2024-01-01")',     # unbalanced parenthesis
    'dt = "unterminated',       # unterminated string
    'v = "x"',                  # not a partition key (a data column)
    'nope = 1',                 # no such column
    'n = "one"',                # string literal against an int key
    'n > 1.5',                  # not a literal the grammar knows
    '1 = 1',                    # no column
    'dt = "a" or or n = 1',
    'dt ~ "a"',
    'drop table p',
]


@pytest.mark.parametrize("filt", INVALID_FILTERS)
def test_invalid_filters(server, client, names_db, filt):
    with pytest.raises(MetaException) as info:
        client.get_partitions_by_filter(names_db, "p", filt, -1)
    message = info.value.message or ""
    assert "filter" in message.lower() or "partition key" in message.lower(), message
    assert len(message) < 1000 and "Traceback" not in message
    with pytest.raises(MetaException):
        client.get_num_partitions_by_filter(names_db, "p", filt)
    # the table is unharmed
    assert len(client.get_partitions_by_filter(names_db, "p", 'dt >= "2024-01-01"', -1)) == 2
    server.assert_healthy()


@pytest.mark.parametrize("values", [[], ["2024-01-01"], ["2024-01-01", "1", "extra"]])
def test_wrong_number_of_partition_values(server, client, names_db, values):
    def expect(fn, *args):
        with pytest.raises(MetaException) as info:
            fn(*args)
        assert "partition values" in info.value.message.lower(), info.value.message

    expect(client.add_partition, _part(names_db, "p", values))
    expect(client.add_partitions, [_part(names_db, "p", ["2024-03-01", "3"]), _part(names_db, "p", values)])
    expect(client.append_partition, names_db, "p", values)
    expect(client.get_partition, names_db, "p", values)
    expect(client.drop_partition, names_db, "p", values, False)
    if len(values) > 2:
        expect(client.get_partitions_ps, names_db, "p", values, -1)
        expect(client.get_partition_names_ps, names_db, "p", values, -1)
    assert client.get_partition_names(names_db, "p", -1) == ["dt=2024-01-01/n=1", "dt=2024-01-02/n=2"]
    with pytest.raises(NoSuchObjectException):  # Hive 2.3: "incomplete partition name - missing n"
        client.get_partition_by_name(names_db, "p", "dt=2024-01-01")  # a name missing a key
    server.assert_healthy()


# --------------------------------------------------------------------------- nothing half-written


@pytest.fixture
def atomic(atomic_server):
    c, transport = open_thrift_client(atomic_server.port, timeout=60)
    db = f"atomic_{uuid.uuid4().hex[:8]}"
    c.create_database(Database(name=db, parameters={}))
    yield atomic_server, c, db
    try:
        c.drop_database(db, True, True)
    except NoSuchObjectException:
        pass
    transport.close()


def test_add_partitions_one_duplicate_adds_none(atomic):
    srv, c, db = atomic
    c.create_table(_table(db, "p"))
    c.add_partition(_part(db, "p", ["d025", "25"], {"original": "yes"}))
    before = c.get_partition_names(db, "p", -1)
    new = [_part(db, "p", [f"n{i:03d}", str(i)], {"batch": "1"}) for i in range(50)]
    batch = new[:25] + [_part(db, "p", ["d025", "25"], {"original": "no"})] + new[25:]

    with pytest.raises(AlreadyExistsException):
        c.add_partitions(batch)
    assert c.get_partition_names(db, "p", -1) == before
    with pytest.raises(AlreadyExistsException):
        c.add_partitions_req(AddPartitionsRequest(dbName=db, tblName="p", parts=batch, ifNotExists=False,
                                                  needResult=True))
    assert c.get_partition_names(db, "p", -1) == before
    # the same batch with a bad last element (wrong number of values) adds none either
    bad = new + [_part(db, "p", ["only-one"])]
    with pytest.raises(MetaException):
        c.add_partitions(bad)
    assert c.get_partition_names(db, "p", -1) == before
    # ... nor does a batch that names a partition twice
    with pytest.raises(MetaException):
        c.add_partitions(new + [new[0]])
    assert c.get_partition_names(db, "p", -1) == before
    # with ifNotExists the 50 new ones are added and the existing one is untouched
    res = c.add_partitions_req(AddPartitionsRequest(dbName=db, tblName="p", parts=batch, ifNotExists=True,
                                                    needResult=True))
    assert len(res.partitions) == 50
    assert len(c.get_partition_names(db, "p", -1)) == 51
    assert c.get_partition(db, "p", ["d025", "25"]).parameters["original"] == "yes"
    srv.assert_healthy()


def test_create_table_in_missing_database_leaves_nothing(atomic):
    srv, c, db = atomic
    missing = f"{db}_missing"
    with pytest.raises(InvalidObjectException):
        c.create_table(_table(missing, "t"))
    with pytest.raises(NoSuchObjectException):
        c.get_table(missing, "t")
    assert [m for m in c.get_table_meta("*", "*", []) if m.dbName == missing] == []
    c.create_database(Database(name=missing, parameters={}))
    try:
        assert c.get_all_tables(missing) == []
        with pytest.raises(NoSuchObjectException):
            c.get_table(missing, "t")
        assert not (srv.warehouse / f"{missing}.db" / "t").exists()
        c.create_table(_table(missing, "t"))  # the name is free
        assert c.get_all_tables(missing) == ["t"]
    finally:
        c.drop_database(missing, True, True)
    # a table with duplicate columns is refused as a whole too
    with pytest.raises((InvalidObjectException, MetaException)):
        c.create_table(_table(db, "dup", cols=[FieldSchema("a", "int", None), FieldSchema("A", "string", None)]))
    assert c.get_all_tables(db) == []
    srv.assert_healthy()


def test_failed_drop_database_keeps_everything(atomic):
    srv, c, db = atomic
    c.create_table(_table(db, "p"))
    c.create_table(_table(db, "q", keys=()))
    c.add_partitions([_part(db, "p", [f"d{i}", str(i)]) for i in range(5)])
    c.create_function(Function(functionName="f1", dbName=db, className="com.example.F1", ownerName="me",
                               ownerType=PrincipalType.USER, createTime=int(time.time()),
                               functionType=FunctionType.JAVA, resourceUris=[]))
    with pytest.raises(InvalidOperationException, match=f"Database {db} is not empty"):
        c.drop_database(db, True, False)
    assert c.get_all_tables(db) == ["p", "q"]
    assert len(c.get_partition_names(db, "p", -1)) == 5
    assert c.get_function(db, "f1").className == "com.example.F1"
    # only a function left: still not empty
    c.drop_table(db, "p", True)
    c.drop_table(db, "q", True)
    with pytest.raises(InvalidOperationException, match="not empty"):
        c.drop_database(db, True, False)
    assert c.get_function(db, "f1").functionName == "f1"
    c.drop_database(db, True, True)
    with pytest.raises(NoSuchObjectException):
        c.get_database(db)
    srv.assert_healthy()


def test_failed_rename_rolls_back(atomic):
    """A managed table's rename moves its directory inside the metadata transaction; when the
    target directory already exists the rename fails and nothing changes."""
    srv, c, db = atomic
    c.create_table(_table(db, "src"))
    c.add_partitions([_part(db, "src", [f"d{i}", str(i)]) for i in range(3)])
    table = c.get_table(db, "src")
    src_dir = srv.warehouse / f"{db}.db" / "src"
    assert table.sd.location.endswith(f"{db}.db/src") and src_dir.is_dir()
    (src_dir / "data.txt").write_text("payload")
    blocker = srv.warehouse / f"{db}.db" / "dst"
    (blocker / "other").mkdir(parents=True)
    locations = {tuple(p.values): p.sd.location for p in c.get_partitions(db, "src", -1)}

    table.tableName = "dst"
    with pytest.raises((InvalidOperationException, MetaException)) as info:
        c.alter_table(db, "src", table)
    assert "dst" in info.value.message
    assert c.get_all_tables(db) == ["src"]
    assert c.get_table(db, "src").sd.location.endswith(f"{db}.db/src")
    assert {tuple(p.values): p.sd.location for p in c.get_partitions(db, "src", -1)} == locations
    assert (src_dir / "data.txt").read_text() == "payload"
    assert os.listdir(blocker) == ["other"]

    # once the way is clear the rename goes through, data and partitions included
    (blocker / "other").rmdir()
    blocker.rmdir()
    c.alter_table(db, "src", table)
    assert c.get_all_tables(db) == ["dst"]
    assert (blocker / "data.txt").read_text() == "payload"
    assert all("/dst/" in p.sd.location for p in c.get_partitions(db, "dst", -1))
    srv.assert_healthy()


def test_alter_and_drop_partitions_all_or_nothing(atomic):
    srv, c, db = atomic
    c.create_table(_table(db, "p"))
    c.add_partitions([_part(db, "p", [f"d{i}", str(i)], {"v": "0"}) for i in range(4)])
    changed = c.get_partitions(db, "p", -1)
    for p in changed:
        p.parameters["v"] = "1"
    ghost = _part(db, "p", ["nope", "9"], {"v": "1"})
    with pytest.raises(InvalidOperationException):
        c.alter_partitions(db, "p", changed + [ghost])
    assert {p.parameters["v"] for p in c.get_partitions(db, "p", -1)} == {"0"}

    names = c.get_partition_names(db, "p", -1)
    with pytest.raises(NoSuchObjectException):
        c.drop_partitions_req(DropPartitionsRequest(
            dbName=db, tblName="p", parts=RequestPartsSpec(names=names[:2] + ["dt=nope/n=9"]),
            deleteData=True, ifExists=False, needResult=True))
    assert c.get_partition_names(db, "p", -1) == names
    res = c.drop_partitions_req(DropPartitionsRequest(
        dbName=db, tblName="p", parts=RequestPartsSpec(names=names[:2] + ["dt=nope/n=9"]),
        deleteData=True, ifExists=True, needResult=True))
    assert sorted(p.values[0] for p in res.partitions) == ["d0", "d1"]
    assert c.get_partition_names(db, "p", -1) == names[2:]
    srv.assert_healthy()
