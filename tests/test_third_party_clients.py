"""Third-party Python clients against our server, on every backend (SQLite, PostgreSQL, MariaDB).

* ``hmsclient`` (PyPI): its own Hive 2.x generated bindings, plain buffered binary protocol.
* PyIceberg's ``HiveCatalog``: namespaces, tables, and commits through the Hive lock protocol
  (``lock`` / ``check_lock`` / ``alter_table_with_environment_context`` / ``unlock``).

The ``our_server`` fixture (tests/conftest.py) is parametrized over the backends; every test uses
its own database names, so the tests share one server per backend.
"""

from __future__ import annotations

import copy
import os
import re
import uuid

import pytest


def _name(prefix: str) -> str:
    return f"{prefix}_{uuid.uuid4().hex[:8]}"


def _calls(log_path, since: int = 0) -> list[str]:
    """(method, status) of the calls logged after byte `since` of the server's log (other tests
    share the server: a test reads only what came after its start)."""
    with open(log_path, "rb") as f:
        f.seek(since)
        text = f.read().decode("utf-8", "replace")
    return re.findall(r"call=(\w+) ms=[\d.]+ status=(\S+)", text)


# --------------------------------------------------------------------------- hmsclient


@pytest.fixture
def hms(our_server):
    hmsclient = pytest.importorskip("hmsclient.hmsclient")
    client = hmsclient.HMSClient(host="127.0.0.1", port=our_server)
    client.open()
    try:
        yield client
    finally:
        client.close()


def test_hmsclient_round_trip(hms, our_server_info):
    from hmsclient import hmsclient
    from hmsclient.genthrift.hive_metastore.ttypes import (
        AlreadyExistsException,
        Database,
        MetaException,
        NoSuchObjectException,
        Partition,
        SerDeInfo,
        StorageDescriptor,
        Table,
    )

    db, tbl = _name("hmsc"), "events"
    assert db not in hms.get_all_databases()
    hms.create_database(Database(name=db, description="hmsclient test", parameters={"k": "v"}))
    assert db in hms.get_all_databases()
    with pytest.raises(AlreadyExistsException):
        hms.create_database(Database(name=db, parameters={}))
    got_db = hms.get_database(db)
    assert got_db.name == db and got_db.parameters == {"k": "v"} and got_db.locationUri

    cols = hmsclient.HMSClient.make_schema(["id:bigint", "payload:string"])
    keys = hmsclient.HMSClient.make_schema(["dt:string", "hour:int"])
    sd = StorageDescriptor(
        cols=cols, location=None, inputFormat=hmsclient.INPUT_FORMAT,
        outputFormat=hmsclient.OUTPUT_FORMAT,
        serdeInfo=SerDeInfo(serializationLib=hmsclient.SIMPLE_SERDE, parameters={}),
        bucketCols=[], sortCols=[], parameters={}, compressed=False, numBuckets=-1)
    hms.create_table(Table(tableName=tbl, dbName=db, owner="tester", sd=sd, partitionKeys=keys,
                           parameters={"comment": "partitioned"}, tableType="MANAGED_TABLE"))

    table = hms.get_table(db, tbl)
    assert table.tableName == tbl and table.dbName == db
    assert [(c.name, c.type) for c in table.sd.cols] == [("id", "bigint"), ("payload", "string")]
    assert [(k.name, k.type) for k in table.partitionKeys] == [("dt", "string"), ("hour", "int")]
    assert table.parameters["comment"] == "partitioned"
    assert table.sd.location and table.sd.location.endswith(f"{db}.db/{tbl}")
    assert hms.get_all_tables(db) == [tbl]

    # add_partitions (the plain call returns the number added) and the helper add_partition
    specs = [(d, h) for d in ("2024-01-01", "2024-01-02", "2024-01-03") for h in ("0", "12")]
    parts = [hms.make_partition(table, [d, h]) for d, h in specs[:-1]]
    assert hms.add_partitions(parts) == len(parts)
    hms.add_partition(table, list(specs[-1]))
    with pytest.raises(AlreadyExistsException):
        hms.add_partitions([hms.make_partition(table, ["2024-01-01", "0"])])

    names = hms.get_partition_names(db, tbl, -1)
    assert names == sorted(f"dt={d}/hour={h}" for d, h in specs)
    assert hms.get_partition_names(db, tbl, 2) == names[:2]

    got = hms.get_partitions(db, tbl, -1)
    assert sorted(tuple(p.values) for p in got) == sorted(specs)
    one = next(p for p in got if p.values == ["2024-01-02", "12"])
    assert one.sd.location.endswith(f"{tbl}/dt=2024-01-02/hour=12")
    assert [(c.name, c.type) for c in one.sd.cols] == [("id", "bigint"), ("payload", "string")]
    assert hms.check_for_named_partition(db, tbl, "dt=2024-01-03/hour=0")
    assert not hms.check_for_named_partition(db, tbl, "dt=2099-01-01/hour=0")

    def by_filter(f):
        return sorted(tuple(p.values) for p in hms.get_partitions_by_filter(db, tbl, f, -1))

    assert by_filter('dt = "2024-01-02"') == [("2024-01-02", "0"), ("2024-01-02", "12")]
    assert by_filter('dt >= "2024-01-02" and hour > 6') == [("2024-01-02", "12"), ("2024-01-03", "12")]
    assert by_filter('(dt = "2024-01-01" or dt = "2024-01-03") and hour = 0') == [
        ("2024-01-01", "0"), ("2024-01-03", "0")]
    assert by_filter('dt like "2024-01-0.*" and hour < 1') == [  # Hive's LIKE: a whole-value regex
        ("2024-01-01", "0"), ("2024-01-02", "0"), ("2024-01-03", "0")]
    with pytest.raises(MetaException, match="not a partition key"):
        hms.get_partitions_by_filter(db, tbl, 'payload = "x"', -1)

    # hmsclient's drop_partitions helper goes through drop_partitions_req
    hms.drop_partitions(db, tbl, ["dt=2024-01-03/hour=0", "dt=2024-01-03/hour=12"])
    assert len(hms.get_partition_names(db, tbl, -1)) == len(specs) - 2

    # a partition object built by hand (copy of the table's descriptor, explicit location)
    psd = copy.deepcopy(table.sd)
    psd.location = table.sd.location + "/dt=2024-02-01/hour=1"
    created = hmsclient.ThriftHiveMetastore.Client.add_partition(  # the plain Thrift call
        hms, Partition(values=["2024-02-01", "1"], dbName=db, tableName=tbl, sd=psd, parameters={}))
    assert created.values == ["2024-02-01", "1"] and created.sd.location == psd.location
    assert "dt=2024-02-01/hour=1" in hms.get_partition_names(db, tbl, -1)

    hms.drop_table(db, tbl, True)
    with pytest.raises(NoSuchObjectException):
        hms.get_table(db, tbl)
    assert hms.get_all_tables(db) == []
    hms.drop_database(db, True, False)
    assert db not in hms.get_all_databases()
    with pytest.raises(NoSuchObjectException):
        hms.get_database(db)

    seen = {name for name, status in _calls(our_server_info.log_path) if status == "ok"}
    assert {"create_table", "add_partitions", "get_partitions_by_filter", "drop_partitions_req",
            "drop_database"} <= seen


def test_hmsclient_non_empty_database(hms):
    from hmsclient import hmsclient
    from hmsclient.genthrift.hive_metastore.ttypes import (
        Database,
        InvalidOperationException,
        SerDeInfo,
        StorageDescriptor,
        Table,
    )

    db = _name("hmsc_full")
    hms.create_database(Database(name=db, parameters={}))
    sd = StorageDescriptor(cols=hmsclient.HMSClient.make_schema(["a:int"]),
                           inputFormat=hmsclient.INPUT_FORMAT, outputFormat=hmsclient.OUTPUT_FORMAT,
                           serdeInfo=SerDeInfo(serializationLib=hmsclient.SIMPLE_SERDE, parameters={}),
                           parameters={})
    hms.create_table(Table(tableName="t", dbName=db, sd=sd, partitionKeys=[], parameters={}))
    with pytest.raises(InvalidOperationException, match=f"Database {db} is not empty"):
        hms.drop_database(db, True, False)
    assert hms.get_all_tables(db) == ["t"]
    hms.drop_database(db, True, True)  # cascade
    assert db not in hms.get_all_databases()


# --------------------------------------------------------------------------- PyIceberg


@pytest.fixture
def iceberg_catalog(our_server, tmp_path):
    pytest.importorskip("pyarrow")
    hive = pytest.importorskip("pyiceberg.catalog.hive")
    warehouse = tmp_path / "iceberg-warehouse"
    warehouse.mkdir()
    return hive.HiveCatalog("hudi_metastore_test", uri=f"thrift://127.0.0.1:{our_server}",
                            warehouse=f"file://{warehouse}")


def _arrow_schema():
    import pyarrow as pa

    return pa.schema([pa.field("id", pa.int64(), nullable=False), pa.field("name", pa.string())])


def _rows(ids):
    import pyarrow as pa

    return pa.table({"id": pa.array(ids, pa.int64()), "name": [f"n{i}" for i in ids]},
                    schema=_arrow_schema())


def test_pyiceberg_hive_catalog(iceberg_catalog, our_server, our_server_info):
    from pyiceberg.exceptions import (
        NamespaceAlreadyExistsError,
        NamespaceNotEmptyError,
        NoSuchNamespaceError,
        NoSuchTableError,
        TableAlreadyExistsError,
    )

    log_start = os.path.getsize(our_server_info.log_path)
    cat = iceberg_catalog
    ns = _name("ice")
    cat.create_namespace(ns, {"owner": "pyiceberg"})
    assert (ns,) in cat.list_namespaces()
    assert cat.load_namespace_properties(ns).get("owner") == "pyiceberg"
    with pytest.raises(NamespaceAlreadyExistsError):
        cat.create_namespace(ns)

    table = cat.create_table(f"{ns}.events", schema=_arrow_schema())
    with pytest.raises(TableAlreadyExistsError):
        cat.create_table(f"{ns}.events", schema=_arrow_schema())
    assert table.scan().to_arrow().num_rows == 0

    # Each append commits through lock / check_lock / get_table / alter_table / unlock.
    table.append(_rows([1, 2, 3]))
    table.append(_rows([4, 5]))
    loaded = cat.load_table(f"{ns}.events")
    assert loaded.metadata_location == table.metadata_location
    assert sorted(loaded.scan().to_arrow().to_pylist(), key=lambda r: r["id"]) == [
        {"id": i, "name": f"n{i}"} for i in range(1, 6)]
    assert len(loaded.metadata.snapshots) == 2
    assert loaded.scan(row_filter="id >= 4").to_arrow().num_rows == 2

    # What the Hive table looks like to a plain Thrift client.
    from tests.harness import thrift_client

    with thrift_client(our_server) as c:
        hive_table = c.get_table(ns, "events")
    assert hive_table.parameters["table_type"].upper() == "ICEBERG"
    assert hive_table.parameters["metadata_location"] == loaded.metadata_location
    assert hive_table.parameters["previous_metadata_location"]

    cat.rename_table(f"{ns}.events", f"{ns}.events_renamed")
    assert cat.list_tables(ns) == [(ns, "events_renamed")]
    with pytest.raises(NoSuchTableError):
        cat.load_table(f"{ns}.events")
    renamed = cat.load_table(f"{ns}.events_renamed")
    assert renamed.scan().to_arrow().num_rows == 5

    with pytest.raises(NamespaceNotEmptyError):
        cat.drop_namespace(ns)
    assert (ns,) in cat.list_namespaces()

    cat.drop_table(f"{ns}.events_renamed")
    assert cat.list_tables(ns) == []
    with pytest.raises(NoSuchTableError):
        cat.load_table(f"{ns}.events_renamed")
    cat.drop_namespace(ns)
    assert (ns,) not in cat.list_namespaces()
    with pytest.raises(NoSuchNamespaceError):
        cat.load_namespace_properties(ns)

    calls = [(n, s) for n, s in _calls(our_server_info.log_path, log_start)]
    names = {n for n, _ in calls}
    assert {"lock", "unlock", "alter_table_with_environment_context"} <= names
    assert not [c for c in calls if c[0] in ("lock", "unlock", "check_lock") and c[1] != "ok"]


def test_pyiceberg_concurrent_writer_loses_no_update(iceberg_catalog):
    """Two writers start from the same metadata. The second commit must not overwrite the first:
    the server's answer to its lock + get_table shows the newer metadata_location, PyIceberg's
    requirement check fails (CommitFailedException), and PyIceberg retries on the new base (or
    surfaces the failure). Either way no appended rows are lost and no lock is left behind."""
    from pyiceberg.exceptions import CommitFailedException

    cat = iceberg_catalog
    ns = _name("ice_race")
    cat.create_namespace(ns)
    cat.create_table(f"{ns}.t", schema=_arrow_schema())
    first = cat.load_table(f"{ns}.t")
    stale = cat.load_table(f"{ns}.t")
    first.append(_rows([1]))
    try:
        stale.append(_rows([2]))
    except CommitFailedException:  # PyIceberg versions that do not retry
        stale.refresh()
        stale.append(_rows([2]))
    current = cat.load_table(f"{ns}.t")
    assert sorted(r["id"] for r in current.scan().to_arrow().to_pylist()) == [1, 2]
    assert len(current.metadata.snapshots) == 2
    first.refresh()
    first.append(_rows([3]))  # the lock was released: a third commit goes through
    assert sorted(r["id"] for r in cat.load_table(f"{ns}.t").scan().to_arrow().to_pylist()) == [1, 2, 3]
    cat.drop_table(f"{ns}.t")
    cat.drop_namespace(ns)
