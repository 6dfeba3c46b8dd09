"""Apache Hudi's metaserver protocol (RFC-36 `ThriftHoodieMetaserver`, thrift_idl/hudi_metaserver.thrift)
on the server's one port, next to the Hive Metastore and HudiMetastore calls: a client of that
protocol (our bindings of Hudi's wire contract) creates a database and a table, runs a commit
REQUESTED -> INFLIGHT -> COMPLETED, reads the timeline back; the same table is then a Hudi table
for the HudiMetastore calls. Errors come as the protocol's exceptions."""

from __future__ import annotations

import json
import uuid

import pytest
from thrift.protocol import TBinaryProtocol
from thrift.transport import TSocket, TTransport

from client import HudiMetastoreClient
from thrift_idl.hudi_metaserver import ThriftHoodieMetaserver
from thrift_idl.hudi_metaserver.ttypes import (
    AlreadyExistException,
    MetaserverException,
    MetaserverNoSuchObjectException,
    MetaserverStorageException,
    MetaserverTable,
    TAction,
    THoodieInstant,
    TState,
)


@pytest.fixture
def metaserver(our_server):
    sock = TSocket.TSocket("127.0.0.1", our_server)
    sock.setTimeout(30_000)
    transport = TTransport.TBufferedTransport(sock)
    transport.open()
    yield ThriftHoodieMetaserver.Client(TBinaryProtocol.TBinaryProtocol(transport))
    transport.close()


def _instant(ts: str, state: int) -> THoodieInstant:
    return THoodieInstant(timestamp=ts, action=TAction.COMMIT, state=state)


def test_metaserver_protocol_commit_and_timeline(metaserver, our_server, tmp_path):
    m, db = metaserver, f"ms_{uuid.uuid4().hex[:8]}"
    m.createDatabase(db)
    with pytest.raises(AlreadyExistException):
        m.createDatabase(db)
    props = {"hoodie.table.name": "t", "hoodie.table.type": "COPY_ON_WRITE", "hoodie.table.version": "6",
             "hoodie.table.recordkey.fields": "id", "hoodie.table.partition.fields": "dt",
             "hoodie.table.precombine.field": "ts"}
    m.createTable(MetaserverTable(tableName="t", databaseName=db, owner="x", location=str(tmp_path / "t"),
                                  tableType="COPY_ON_WRITE", partitionKeys=[], parameters=props))
    got = m.getTable(db, "t")
    assert (got.tableName, got.databaseName, got.tableType, got.location) == ("t", db, "COPY_ON_WRITE",
                                                                              str(tmp_path / "t"))
    assert [k.name for k in got.partitionKeys] == ["dt"] and got.parameters["hoodie.table.recordkey.fields"] == "id"

    ts = m.createNewInstantTime(db, "t")
    assert len(ts) == 17 and ts.isdigit()
    r = m.createNewInstantWithTime(db, "t", _instant(ts, TState.REQUESTED), b"")
    assert r.success and r.instant.state == TState.REQUESTED
    r = m.transitionInstantState(db, "t", _instant(ts, TState.REQUESTED), _instant(ts, TState.INFLIGHT), b"")
    assert r.success and r.instant.state == TState.INFLIGHT
    meta = json.dumps({"partitionToWriteStats": {}, "operationType": "INSERT", "extraMetadata": {}}).encode()
    r = m.transitionInstantState(db, "t", _instant(ts, TState.INFLIGHT), _instant(ts, TState.COMPLETED), meta)
    assert r.success and r.instant.state == TState.COMPLETED
    assert [(i.timestamp, i.action, i.state) for i in m.listInstants(db, "t", 0)] == [(ts, TAction.COMMIT, 3)]
    assert json.loads(m.getInstantMetadata(db, "t", _instant(ts, TState.COMPLETED)))["operationType"] == "INSERT"

    ts2 = m.createNewInstantTime(db, "t")
    m.createNewInstantWithTime(db, "t", _instant(ts2, TState.REQUESTED), b"")
    assert [i.timestamp for i in m.listInstants(db, "t", 1)] == [ts2]
    assert m.deleteInstant(db, "t", _instant(ts2, TState.REQUESTED)).success  # never completed: rolled back
    with HudiMetastoreClient(f"thrift://127.0.0.1:{our_server}") as c:  # the same table for HudiMetastore
        assert c.get_hudi_table(db, "t").recordKeyFields == ["id"]
        states = {i.timestamp: i.state for i in c.list_instants(db, "t")}
        assert states[ts] == 3 and states.get(ts2) != 2
        assert c.get_table(db, "t").parameters["spark.sql.sources.provider"] == "hudi"

    with pytest.raises(MetaserverNoSuchObjectException):
        m.getTable(db, "nope")
    with pytest.raises(MetaserverNoSuchObjectException):
        m.listInstants(db, "nope", 0)
    with pytest.raises(MetaserverStorageException, match="action"):  # (createNewInstantWithTime declares no other)
        m.createNewInstantWithTime(db, "t", THoodieInstant(timestamp=ts2, action=99, state=1), b"")
    m.getTable(db, "t")  # the connection still serves


def test_create_table_with_names_only_takes_hoodie_properties_from_storage(metaserver, tmp_path):
    """Hudi 0.13-0.15's client creates the table with names, type and base path only, after writing
    `.hoodie/hoodie.properties` there: the server registers the table from that file."""
    m, db = metaserver, f"ms_{uuid.uuid4().hex[:8]}"
    m.createDatabase(db)
    base = tmp_path / "t"
    (base / ".hoodie").mkdir(parents=True)
    (base / ".hoodie" / "hoodie.properties").write_text(
        "#Properties saved on 2024-06-04\nhoodie.table.type=COPY_ON_WRITE\nhoodie.table.precombine.field=ts\n"
        "hoodie.table.partition.fields=city\nhoodie.table.recordkey.fields=id\nhoodie.table.name=t\n"
        f"hoodie.database.name={db}\nhoodie.table.version=6\nhoodie.timeline.layout.version=1\n")
    m.createTable(MetaserverTable(tableName="t", databaseName=db, owner="x", location=str(base),
                                  tableType="COPY_ON_WRITE"))
    got = m.getTable(db, "t")
    assert [k.name for k in got.partitionKeys] == ["city"]
    assert got.parameters["hoodie.table.recordkey.fields"] == "id" and got.parameters["hoodie.table.version"] == "6"

    with pytest.raises(MetaserverException, match="hoodie.properties"):  # nothing on storage
        m.createTable(MetaserverTable(tableName="u", databaseName=db, owner="x", location=str(tmp_path / "u"),
                                      tableType="COPY_ON_WRITE"))


def test_create_table_reads_storage_only_where_the_caller_may_place_tables(tmp_path):
    """With authorization on, hoodie.properties is read only inside the warehouse or the external
    locations, unless the caller is an admin (nothing is read from a location the caller may not use)."""
    from adapter.handlers.metaserver import MetaserverHandler
    from store.errors import InvalidOperation
    from store.storage import ownership
    from tests.test_hudi_fixtures import services

    tables, timeline, _ = services(tmp_path)
    handler = MetaserverHandler(tables, timeline)
    handler.createDatabase("db")
    props = ("hoodie.table.type=COPY_ON_WRITE\nhoodie.table.recordkey.fields=id\nhoodie.table.name={}\n"
             "hoodie.database.name=db\nhoodie.table.version=6\n")
    for where in ("wh/db/inside", "elsewhere/t", "elsewhere/u"):
        (tmp_path / where / ".hoodie").mkdir(parents=True)
        (tmp_path / where / ".hoodie" / "hoodie.properties").write_text(props.format(where.rsplit("/", 1)[1]))

    def create(name: str, where: str, admin: bool) -> None:
        ownership.set_claimant(ownership.Claimant(user="bob", admin=admin, owns=lambda *a: True))
        try:
            handler.createTable(MetaserverTable(tableName=name, databaseName="db", owner="bob",
                                                location=str(tmp_path / where), tableType="COPY_ON_WRITE"))
        finally:
            ownership.set_claimant(None)

    create("inside", "wh/db/inside", admin=False)
    with pytest.raises(InvalidOperation, match="give the table.s hoodie.properties as parameters"):  # read nothing
        create("t", "elsewhere/t", admin=False)
    create("u", "elsewhere/u", admin=True)
    assert timeline.get_table_config("db", "inside").record_key_fields == ["id"]
    assert timeline.get_table_config("db", "u").record_key_fields == ["id"]
