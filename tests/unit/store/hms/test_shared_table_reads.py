"""get_table's key read shared by concurrent calls (store/db/shared_reads.py, TableService): on
every backend, readers racing a writer never get an answer older than what was committed before
their call, every answer is the table as the full read builds it (HMS_WIRE_CHECK also checks each
kept answer), and on PostgreSQL and MySQL concurrent calls do share statements."""

from __future__ import annotations

import threading

import pytest
from thrift.protocol.TBinaryProtocol import TBinaryProtocol
from thrift.transport.TTransport import TMemoryBuffer

from adapter.serve import prepare_store
from store.errors import NoSuchObject
from store.services import open_services
from thrift_idl.hive_metastore.ttypes import Database, FieldSchema, SerDeInfo, StorageDescriptor, Table


@pytest.fixture
def services(own_backend_url, tmp_path):
    prepare_store(own_backend_url)
    svc = open_services(own_backend_url, str(tmp_path / "wh"))
    svc.tables.create_database(Database(name="d", locationUri=str(tmp_path / "wh" / "d.db"), parameters={}))
    sd = StorageDescriptor(cols=[FieldSchema("x", "int", None)], inputFormat="in", outputFormat="out",
                           serdeInfo=SerDeInfo(serializationLib="lib", parameters={}), parameters={})
    for name in ("t", "u"):
        svc.tables.create_table(Table(tableName=name, dbName="d", sd=sd, tableType="MANAGED_TABLE",
                                      parameters={"v": "0"}, partitionKeys=[]))
    try:
        yield svc
    finally:
        svc.close()


def _decoded(data: bytes) -> Table:
    t = Table()
    t.read(TBinaryProtocol(TMemoryBuffer(data.data)))
    return t


def test_readers_racing_a_writer(services):
    tables = services.tables
    committed = {"t": 0, "u": 0}
    stop = threading.Event()
    errors: list = []

    def writer():
        try:
            for v in range(1, 31):
                for name in ("t", "u"):
                    new = tables.get_table("d", name)
                    new.parameters["v"] = str(v)
                    tables.alter_table("d", name, new)
                    committed[name] = v
        except BaseException as exc:  # noqa: BLE001
            errors.append(exc)
        finally:
            stop.set()

    def reader(i):
        try:
            n = 0
            while not stop.is_set() or n < 20:
                name = "t" if (i + n) % 2 else "u"
                before = committed[name]
                data, insert_only = tables.get_table_encoded_flagged("d", name.upper() if n % 3 == 0 else name)
                got = _decoded(data)
                assert got.tableName == name and not insert_only
                assert int(got.parameters["v"]) >= before, (name, got.parameters, before)
                n += 1
            with pytest.raises(NoSuchObject):
                tables.get_table_encoded_flagged("d", "absent")
        except BaseException as exc:  # noqa: BLE001
            errors.append(exc)

    threads = [threading.Thread(target=writer)] + [threading.Thread(target=reader, args=(i,)) for i in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(120)
    assert not any(t.is_alive() for t in threads)
    assert errors == []
    for name in ("t", "u"):  # the kept answer is the full read's
        data, _ = tables.get_table_encoded_flagged("d", name)
        assert _decoded(data) == tables.get_table("d", name)
        assert _decoded(data).parameters["v"] == "30"
    shared = tables._keys
    if services.store.backend == "sqlite":
        assert shared is None
    else:
        assert shared is not None and shared.answered > 0


def test_concurrent_calls_share_statements(services):
    shared = services.tables._keys
    if services.store.backend == "sqlite":  # reads in process: nothing to share
        assert shared is None
        return
    tables = services.tables
    tables.get_table_encoded_flagged("d", "t")  # the versions are known after a first read
    for _attempt in range(5):  # sharing needs calls that overlap; 8 threads of 50 calls all but always do
        before = shared.statements, shared.answered
        threads = [threading.Thread(target=lambda: [tables.get_table_encoded_flagged("d", "t") for _ in range(50)])
                   for _ in range(8)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(60)
        statements, answered = shared.statements - before[0], shared.answered - before[1]
        assert answered == 400
        if statements < answered:
            break
    assert statements < answered
