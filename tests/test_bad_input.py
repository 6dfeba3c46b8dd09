"""Bad input must be refused cleanly: malformed bytes, unknown methods, oversized messages and
frames, invalid names, filters and partition values. After each, a NEW connection still works
and the server process is alive. Failed writes leave nothing half-written (checked through the
Thrift API on SQLite and PostgreSQL).
"""

from __future__ import annotations

import inspect
import os
import socket
import struct
import time
import uuid
from pathlib import Path

import pytest
from thrift.protocol import TBinaryProtocol
from thrift.Thrift import TApplicationException, TMessageType
from thrift.transport import TSocket, TTransport

from tests.harness import (
    BackendUnavailable,
    ServerStartError,
    ci_mode,
    create_fresh_database,
    log_tail,
    open_thrift_client,
    start_our_server,
    stop_process,
)
from thrift_idl.hive_metastore import ThriftHiveMetastore
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

MAX_MESSAGE = 65_536  # --max-message-size of the servers in this module
VERSION_1 = 0x80010000


# --------------------------------------------------------------------------- servers


class Server:
    def __init__(self, port: int, proc, db_url: str):
        self.port, self.proc, self.db_url = port, proc, db_url
        self.warehouse = Path(proc.warehouse)
        self.log_path = Path(proc.log_path)

    def log(self) -> str:
        return log_tail(self.log_path, 80)

    def assert_healthy(self) -> None:
        """The process is alive and a NEW connection answers."""
        assert self.proc.poll() is None, f"server exited with {self.proc.returncode}\n{self.log()}"
        client, transport = open_thrift_client(self.port, timeout=20)
        try:
            assert isinstance(client.get_all_databases(), list)
            with pytest.raises(NoSuchObjectException):
                client.get_database(f"missing_{uuid.uuid4().hex[:6]}")
        finally:
            transport.close()


def _start(tmp_path_factory, db_url: str | None, name: str, extra=()) -> tuple[Server, object]:
    tmp = tmp_path_factory.mktemp(name)
    url = db_url or f"sqlite:///{tmp / 'metastore.db'}"
    try:
        port, proc = start_our_server(url, tmp, extra_args=["--max-message-size", str(MAX_MESSAGE), *extra])
    except ServerStartError as e:
        pytest.fail(str(e), pytrace=False)
    return Server(port, proc, url), proc


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    """Buffered transport, SQLite, small --max-message-size."""
    srv, proc = _start(tmp_path_factory, None, "bad-input")
    yield srv
    stop_process(proc)


@pytest.fixture(scope="module")
def framed_server(tmp_path_factory):
    srv, proc = _start(tmp_path_factory, None, "bad-input-framed", extra=["--framed"])
    yield srv
    stop_process(proc)


@pytest.fixture(scope="module", params=["sqlite", "postgresql"])
def atomic_server(request, backend_specs, tmp_path_factory):
    """Server for the nothing-half-written checks: SQLite and PostgreSQL."""
    spec = backend_specs[request.param]
    if not spec.available:
        reason = f"{request.param} backend unavailable: {spec.reason}"
        pytest.fail(reason) if ci_mode() else pytest.skip(reason)
    try:
        fresh = create_fresh_database(spec, tmp_path_factory.mktemp(f"atomic-db-{request.param}"))
    except BackendUnavailable as e:
        pytest.fail(str(e)) if ci_mode() else pytest.skip(str(e))
    try:
        srv, proc = _start(tmp_path_factory, fresh.url, f"atomic-{request.param}")
        try:
            yield srv
        finally:
            stop_process(proc)
    finally:
        fresh.drop()


@pytest.fixture
def client(server):
    c, transport = open_thrift_client(server.port, timeout=20)
    yield c
    transport.close()


# --------------------------------------------------------------------------- raw wire helpers


def _message(name: str, body: bytes = b"\x00", seqid: int = 7, version: int = VERSION_1 | TMessageType.CALL) -> bytes:
    n = name.encode()
    return struct.pack("!I", version) + struct.pack("!i", len(n)) + n + struct.pack("!i", seqid) + body


def _string_field(fid: int, value: bytes, declared_len: int | None = None) -> bytes:
    length = len(value) if declared_len is None else declared_len
    return b"\x0b" + struct.pack("!h", fid) + struct.pack("!i", length) + value


def _exchange(port: int, payload: bytes, half_close: bool = True, timeout: float = 15.0) -> tuple[bytes, bool]:
    """Send raw bytes; return (what the server answered, whether it closed the connection)."""
    with socket.create_connection(("127.0.0.1", port), timeout=timeout) as s:
        s.sendall(payload)
        if half_close:
            s.shutdown(socket.SHUT_WR)
        data, closed = b"", False
        deadline = time.monotonic() + timeout
        try:
            while time.monotonic() < deadline:
                chunk = s.recv(65536)
                if not chunk:
                    closed = True
                    break
                data += chunk
        except ConnectionResetError:
            closed = True
        except TimeoutError:
            pass
        return data, closed


def _read_reply(data: bytes):
    """(name, type, seqid, payload) of a binary-protocol reply; payload is the
    TApplicationException for EXCEPTION replies."""
    trans = TTransport.TMemoryBuffer(data)
    prot = TBinaryProtocol.TBinaryProtocol(trans)
    name, mtype, seqid = prot.readMessageBegin()
    payload = None
    if mtype == TMessageType.EXCEPTION:
        payload = TApplicationException()
        payload.read(prot)
    return name, mtype, seqid, payload


def _framed_client(port: int):
    sock = TSocket.TSocket("127.0.0.1", port)
    sock.setTimeout(20_000)
    transport = TTransport.TFramedTransport(sock)
    c = ThriftHiveMetastore.Client(TBinaryProtocol.TBinaryProtocolAccelerated(transport))
    transport.open()
    return c, transport


# --------------------------------------------------------------------------- malformed bytes


MALFORMED = {
    "garbage": bytes(range(256)) * 8,
    "http-request": b"GET / HTTP/1.1\r\nHost: metastore\r\n\r\n",
    "zeros": b"\x00" * 64,
    "wrong-protocol-version": _message("get_all_databases", version=0x80020000 | TMessageType.CALL),
    "compact-protocol": b"\x82\x21\x01\x11get_all_databases\x00",
    "truncated-header": _message("get_all_databases")[:9],
    "truncated-args": _message("get_database", _string_field(1, b"abc", declared_len=100)),
    "huge-method-name": struct.pack("!I", VERSION_1 | 1) + struct.pack("!i", 0x7FFFFFF0) + b"get",
}


@pytest.mark.parametrize("case", list(MALFORMED))
def test_malformed_bytes_close_only_that_connection(server, case):
    data, closed = _exchange(server.port, MALFORMED[case])
    assert closed, f"{case}: the server kept the connection open"
    if data:  # an answer, if any, is a well-formed exception
        _, mtype, _, exc = _read_reply(data)
        assert mtype == TMessageType.EXCEPTION and exc.message
    server.assert_healthy()


BAD_ARGUMENTS = {  # get_database arguments -> (status logged, text of the answer)
    "negative-string-length": (_string_field(1, b"abc", declared_len=-5) + b"\x00", "bad-request",
                               "Malformed request for get_database"),
    "unknown-field-type": (b"\x55\x00\x01" + b"\x00" * 16, "bad-request", "Malformed request for get_database"),
    "string-longer-than-limit": (_string_field(1, b"abc", declared_len=MAX_MESSAGE + 1), "too-large",
                                 "exceeds the maximum message size"),
}


@pytest.mark.parametrize("case", list(BAD_ARGUMENTS))
def test_malformed_arguments_get_a_protocol_error(server, case):
    body, kind, text = BAD_ARGUMENTS[case]
    data, closed = _exchange(server.port, _message("get_database", body, seqid=41))
    name, mtype, seqid, exc = _read_reply(data)
    assert (name, mtype, seqid) == ("get_database", TMessageType.EXCEPTION, 41)
    assert exc.type == TApplicationException.PROTOCOL_ERROR
    assert text in exc.message
    assert closed
    assert "call=get_database " in server.log() and f"status={kind}" in server.log()
    server.assert_healthy()


def test_stuck_client_does_not_block_others(server):
    """A client that sends half a request and waits holds only its own connection."""
    with socket.create_connection(("127.0.0.1", server.port), timeout=10) as stuck:
        stuck.sendall(_message("get_database", _string_field(1, b"abc", declared_len=50)))
        server.assert_healthy()
        server.assert_healthy()
    server.assert_healthy()


# --------------------------------------------------------------------------- unknown methods


def test_unknown_method_raw(server):
    name = "no_such_method_xyz"
    args = _string_field(1, b"some value") + b"\x08\x00\x02" + struct.pack("!i", 5) + \
        b"\x0f\x00\x03\x0b" + struct.pack("!i", 2) + struct.pack("!i", 1) + b"a" + struct.pack("!i", 1) + b"b" + \
        b"\x00"
    follow_up = _message("get_all_databases", seqid=2)
    with socket.create_connection(("127.0.0.1", server.port), timeout=15) as s:
        s.sendall(_message(name, args, seqid=99))
        reply = _recv_message(s)
        got_name, mtype, seqid, exc = _read_reply(reply)
        assert (got_name, mtype, seqid) == (name, TMessageType.EXCEPTION, 99)
        assert exc.type == TApplicationException.UNKNOWN_METHOD
        assert exc.message == f"Invalid method name: '{name}'"
        # the arguments were skipped: the same connection goes on with the next call
        s.sendall(follow_up)
        got_name, mtype, seqid, _ = _read_reply(_recv_message(s))
        assert (got_name, mtype, seqid) == ("get_all_databases", TMessageType.REPLY, 2)
    assert f"call={name} " in server.log()
    server.assert_healthy()


def _recv_message(s: socket.socket) -> bytes:
    """Read until one complete reply parses (replies are small)."""
    data = b""
    while True:
        chunk = s.recv(65536)
        assert chunk, "connection closed before a reply"
        data += chunk
        try:
            trans = TTransport.TMemoryBuffer(data)
            prot = TBinaryProtocol.TBinaryProtocol(trans)
            prot.readMessageBegin()
            prot.skip(TBinaryProtocol.TType.STRUCT)
            return data
        except (EOFError, TTransport.TTransportException, struct.error):
            continue


def test_unknown_method_generated_client(server, client):
    """An IDL method no handler serves answers UNKNOWN_METHOD with Hive's exact text
    (Spark and Trino fall back when they see it)."""
    served = _served_methods(server)
    candidates = [n[len("process_"):] for n in dir(ThriftHiveMetastore.Processor)
                  if n.startswith("process_") and n[len("process_"):] not in served]
    if not candidates:
        pytest.skip("every IDL method is served")
    name = sorted(candidates)[0]
    fn = getattr(client, name)
    nargs = len(inspect.signature(fn).parameters)
    with pytest.raises(TApplicationException) as info:
        fn(*([None] * nargs))
    assert info.value.type == TApplicationException.UNKNOWN_METHOD
    assert info.value.message == f"Invalid method name: '{name}'"
    assert isinstance(client.get_all_databases(), list)  # same connection still in sync
    server.assert_healthy()


def _served_methods(server) -> set[str]:
    """Methods the server answers, learnt from the router over the same database."""
    from adapter.app import build_router
    from store.services import open_services

    services = open_services(server.db_url, str(server.warehouse))
    try:
        router = build_router(services)
        return {n for n in dir(ThriftHiveMetastore.Iface) if not n.startswith("_") and router.serves(n)}
    finally:
        services.close()


# --------------------------------------------------------------------------- oversized messages


def test_oversized_string_is_refused_clearly(server, client):
    with pytest.raises(TApplicationException) as info:
        client.get_database("x" * (MAX_MESSAGE * 3))
    assert info.value.type == TApplicationException.PROTOCOL_ERROR
    assert "get_database exceeds the maximum message size" in info.value.message
    server.assert_healthy()


def test_oversized_message_of_small_strings_is_refused_clearly(server):
    c, transport = open_thrift_client(server.port, timeout=20)
    try:
        with pytest.raises(TApplicationException) as info:
            c.get_table_objects_by_name("default", [f"table_{i:06d}" for i in range(MAX_MESSAGE // 8)])
        assert info.value.type == TApplicationException.PROTOCOL_ERROR
        assert "get_table_objects_by_name exceeds the maximum message size" in info.value.message
    finally:
        transport.close()
    server.assert_healthy()


def test_very_large_message_megabytes(server):
    """The client is still sending when the server refuses: it must get the answer, not a reset."""
    c, transport = open_thrift_client(server.port, timeout=30)
    try:
        with pytest.raises(TApplicationException, match="exceeds the maximum message size"):
            c.get_database("y" * 8_000_000)
    finally:
        transport.close()
    server.assert_healthy()


def test_message_under_the_limit_is_served(server, client):
    with pytest.raises(NoSuchObjectException):
        client.get_database("z" * (MAX_MESSAGE // 4))
    server.assert_healthy()


def test_framed_transport_and_oversized_frame(framed_server):
    c, transport = _framed_client(framed_server.port)
    try:
        assert isinstance(c.get_all_databases(), list)
        with pytest.raises(TApplicationException) as info:
            c.get_database("x" * (MAX_MESSAGE * 2))
        assert info.value.type == TApplicationException.PROTOCOL_ERROR
        assert "get_database" in info.value.message and "exceeds the maximum message size" in info.value.message
    finally:
        transport.close()
    c, transport = _framed_client(framed_server.port)  # a new connection works
    try:
        assert isinstance(c.get_all_databases(), list)
    finally:
        transport.close()
    # a frame size that is negative or absurd, and an unframed client on the framed port
    for payload in (struct.pack("!i", -1) + b"abcd", struct.pack("!i", 0x7FFFFFFF) + b"abcd",
                    _message("get_all_databases")):
        data, closed = _exchange(framed_server.port, payload)
        assert closed
    assert framed_server.proc.poll() is None
    c, transport = _framed_client(framed_server.port)
    try:
        assert isinstance(c.get_all_databases(), list)
    finally:
        transport.close()


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
