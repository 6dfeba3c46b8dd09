"""Bad input on the wire must be refused cleanly: malformed bytes, unknown methods, oversized
messages and frames. After each, a NEW connection still works and the server process is alive.
Invalid names, filters and values, and failed writes: tests/test_refused_writes.py.
"""

from __future__ import annotations

import inspect
import socket
import struct
import time

import pytest
from thrift.protocol import TBinaryProtocol
from thrift.Thrift import TApplicationException, TMessageType
from thrift.transport import TSocket, TTransport

from tests.harness import (
    CheckedServer,
    ServerStartError,
    open_thrift_client,
    start_checked_server,
)
from thrift_idl.hive_metastore import ThriftHiveMetastore
from thrift_idl.hive_metastore.ttypes import (
    NoSuchObjectException,
)

MAX_MESSAGE = 65_536  # --max-message-size of the servers in this module
VERSION_1 = 0x80010000


# --------------------------------------------------------------------------- servers


def _start(tmp_path_factory, name: str, extra=()) -> CheckedServer:
    try:
        return start_checked_server(tmp_path_factory.mktemp(name),
                                    extra_args=["--max-message-size", str(MAX_MESSAGE), *extra])
    except ServerStartError as e:
        pytest.fail(str(e), pytrace=False)


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    """Buffered transport, SQLite, small --max-message-size."""
    srv = _start(tmp_path_factory, "bad-input")
    yield srv
    srv.stop()


@pytest.fixture(scope="module")
def framed_server(tmp_path_factory):
    srv = _start(tmp_path_factory, "bad-input-framed", extra=["--framed"])
    yield srv
    srv.stop()


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
        data, closed = b"", False
        try:
            s.sendall(payload)
            if half_close:
                s.shutdown(socket.SHUT_WR)
        except OSError:  # ENOTCONN, EPIPE, ECONNRESET: the server has closed already; read what it said
            closed = True
        deadline = time.monotonic() + timeout
        try:
            while time.monotonic() < deadline:
                chunk = s.recv(65536)
                if not chunk:
                    closed = True
                    break
                data += chunk
        except TimeoutError:
            pass
        except OSError:  # reset, or not connected any more
            closed = True
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
