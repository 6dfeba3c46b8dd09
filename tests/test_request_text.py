"""Text no request may carry (issue 41): NUL characters and bytes that are no UTF-8, in any argument
of reads and writes, are answered with the exception the method declares, naming the argument,
before the database sees them, with no traceback in the log; the connection goes on."""

from __future__ import annotations

import socket
import struct
import time
import uuid

import pytest
from thrift.protocol import TBinaryProtocol
from thrift.Thrift import TApplicationException, TMessageType
from thrift.transport import TTransport

from tests.harness import ServerStartError, start_checked_server
from thrift_idl.hive_metastore import ThriftHiveMetastore as T
from thrift_idl.hive_metastore.ttypes import (
    Database,
    FieldSchema,
    MetaException,
    NoSuchObjectException,
    SerDeInfo,
    StorageDescriptor,
    Table,
)


def _name(prefix: str) -> str:
    return f"{prefix}_{uuid.uuid4().hex[:8]}"


def _table(db: str, name: str, serde_params=None, params=None) -> Table:
    sd = StorageDescriptor(cols=[FieldSchema("a", "string")], serdeInfo=SerDeInfo(parameters=serde_params or {}),
                           parameters={})
    return Table(tableName=name, dbName=db, sd=sd, partitionKeys=[FieldSchema("p", "string")],
                 parameters=params or {})


def _log_from(path, offset: int) -> str:
    with open(path, "rb") as f:
        f.seek(offset)
        return f.read().decode("utf-8", "replace")


# --------------------------------------------------------------------------- NUL, on every backend


def test_nul_in_reads_and_writes_is_refused_before_the_database(our_server_info, thrift_client):
    offset = our_server_info.log_path.stat().st_size
    c = thrift_client(our_server_info.port)
    db = _name("nul")
    c.create_database(Database(name=db, parameters={}))
    c.create_table(_table(db, "t"))
    reads = {
        "get_database": lambda: c.get_database(db + "\x00"),
        "get_table": lambda: c.get_table(db, "t\x00x"),
        "get_tables": lambda: c.get_tables(db, "t\x00*"),
        "get_partitions_by_filter": lambda: c.get_partitions_by_filter(db, "t", "p = 'a\x00'", -1),
        "get_partition_names_ps": lambda: c.get_partition_names_ps(db, "t", ["a\x00"], -1),
    }
    for method, call in reads.items():
        with pytest.raises(MetaException) as e:
            call()
        assert f"request for {method}" in e.value.message and "NUL" in e.value.message, e.value.message
    with pytest.raises(TApplicationException) as e:  # it declares no exception: the reason in its text
        c.get_table_objects_by_name(db, ["t", "u\x00"])
    assert "tbl_names[1] contains a NUL" in e.value.message, e.value.message
    with pytest.raises(MetaException) as e:
        c.create_table(_table(db, "u", serde_params={"field.delim": "\x00"}))
    assert "tbl.sd.serdeInfo.parameters['field.delim'] contains a NUL" in e.value.message, e.value.message
    with pytest.raises(NoSuchObjectException):
        c.get_table(db, "u")
    table = c.get_table(db, "t")
    table.parameters["k\x00"] = "v"
    with pytest.raises(MetaException) as e:
        c.alter_table(db, "t", table)
    assert "new_tbl.parameters key 'k\\x00'" in e.value.message, e.value.message
    assert "k\x00" not in c.get_table(db, "t").parameters
    log = _log_from(our_server_info.log_path, offset)
    assert "Traceback" not in log and "error id" not in log, log[-3000:]
    assert "status=MetaException" in log


# --------------------------------------------------------------------------- bytes that are no UTF-8


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    try:
        srv = start_checked_server(tmp_path_factory.mktemp("request-text"))
    except ServerStartError as e:
        pytest.fail(str(e), pytrace=False)
    yield srv
    srv.stop()


@pytest.fixture(scope="module")
def framed_server(tmp_path_factory):
    try:
        srv = start_checked_server(tmp_path_factory.mktemp("request-text-framed"), extra_args=["--framed"])
    except ServerStartError as e:
        pytest.fail(str(e), pytrace=False)
    yield srv
    srv.stop()


def _call(method: str, args, seqid: int, replace: tuple[bytes, bytes] | None = None) -> bytes:
    buf = TTransport.TMemoryBuffer()
    prot = TBinaryProtocol.TBinaryProtocol(buf)
    prot.writeMessageBegin(method, TMessageType.CALL, seqid)
    args.write(prot)
    prot.writeMessageEnd()
    data = buf.getvalue()
    if replace is not None:
        assert data.count(replace[0]) == 1 and len(replace[0]) == len(replace[1])
        data = data.replace(*replace)
    return data


def _frame(data: bytes) -> bytes:
    return struct.pack("!i", len(data)) + data


class _Reader:
    def __init__(self, sock: socket.socket, framed: bool):
        self.sock, self.framed, self.buf = sock, framed, b""

    def _need(self, n: int) -> bytes:
        while len(self.buf) < n:
            chunk = self.sock.recv(65536)
            if not chunk:
                raise EOFError("closed")
            self.buf += chunk
        out, self.buf = self.buf[:n], self.buf[n:]
        return out

    def reply(self, result_cls):
        """(name, seqid, result struct or TApplicationException) of the next answer."""
        if self.framed:
            (n,) = struct.unpack("!i", self._need(4))
            data = self._need(n)
        else:  # our answers fit in what one recv gives here: read until a whole message parses
            data = b""
            deadline = time.monotonic() + 15
            while time.monotonic() < deadline:
                data += self.buf or self.sock.recv(65536)
                self.buf = b""
                try:
                    return self._parse(data, result_cls, keep_rest=True)
                except (EOFError, TTransport.TTransportException):
                    continue
            raise AssertionError("no answer")
        return self._parse(data, result_cls)

    def _parse(self, data: bytes, result_cls, keep_rest: bool = False):
        trans = TTransport.TMemoryBuffer(data)
        prot = TBinaryProtocol.TBinaryProtocol(trans)
        name, mtype, seqid = prot.readMessageBegin()
        result = TApplicationException() if mtype == TMessageType.EXCEPTION else result_cls()
        result.read(prot)
        if keep_rest:
            self.buf = data[trans._buffer.tell():]
        return name, seqid, result


BAD_BYTES = {"invalid": b"\xff\xfe", "surrogate": b"\xed\xa0\x80", "truncated": b"\xe2\x82"}


@pytest.mark.parametrize("framed", [False, True], ids=["buffered", "framed"])
@pytest.mark.parametrize("bad", list(BAD_BYTES))
def test_text_that_is_no_utf8_answers_the_declared_exception(request, framed, bad):
    srv = request.getfixturevalue("framed_server" if framed else "server")
    offset = srv.log_path.stat().st_size
    wrap = _frame if framed else (lambda d: d)
    placeholder = "tbl_" + "Q" * len(BAD_BYTES[bad])  # replaced by bytes of the same length
    first = _call("get_table", T.get_table_args(dbname="default", tbl_name=placeholder), 11,
                  (placeholder.encode(), b"tbl_" + BAD_BYTES[bad]))
    second = _call("get_all_databases", T.get_all_databases_args(), 12)
    with socket.create_connection(("127.0.0.1", srv.port), timeout=15) as s:
        s.sendall(wrap(first) + wrap(second))  # pipelined: the second call follows the first's bytes
        reader = _Reader(s, framed)
        name, seqid, result = reader.reply(T.get_table_result)
        assert (name, seqid) == ("get_table", 11)
        assert isinstance(result, T.get_table_result), result
        assert result.o1 is not None and "tbl_name is not valid UTF-8" in result.o1.message, result
        name, seqid, result = reader.reply(T.get_all_databases_result)
        assert (name, seqid) == ("get_all_databases", 12) and "default" in result.success
    log = _log_from(srv.log_path, offset)
    assert "call=get_table " in log and "status=MetaException" in log
    assert "Traceback" not in log
    if not framed:  # the health check's client is unframed
        srv.assert_healthy()


def test_a_write_whose_text_is_no_utf8_changes_nothing(server):
    db = _name("utf")
    args = T.create_database_args(database=Database(name=db, parameters={"key": "VALUE_QQ"}))
    with socket.create_connection(("127.0.0.1", server.port), timeout=15) as s:
        s.sendall(_call("create_database", args, 5, (b"VALUE_QQ", b"VALUE_\xc0\xaf")))
        _, _, result = _Reader(s, False).reply(T.create_database_result)
    assert result.o3 is not None and "database.parameters['key'] is not valid UTF-8" in result.o3.message, result
    with socket.create_connection(("127.0.0.1", server.port), timeout=15) as s:
        s.sendall(_call("get_database", T.get_database_args(name=db), 6))
        _, _, result = _Reader(s, False).reply(T.get_database_result)
    assert result.o1 is not None  # NoSuchObjectException: nothing was created


def test_beyond_the_bytes_kept_bad_text_is_replaced_as_before(server):
    """Arguments beyond the bytes kept for decoding again (1 MiB): Thrift's decoder replaced the bad
    bytes by U+FFFD, and the call goes on with that (as before issue 41)."""
    big = T.get_table_args(dbname="default", tbl_name="b" * 1_200_000 + "_END")
    data = _call("get_table", big, 3, (b"_END", b"\xff\xff\xff\xff"))
    with socket.create_connection(("127.0.0.1", server.port), timeout=15) as s:
        s.sendall(data)
        _, seqid, result = _Reader(s, False).reply(T.get_table_result)
    assert seqid == 3 and result.o2 is not None and result.o2.message.endswith("\ufffd" * 4 + " table not found")
    server.assert_healthy()


def test_a_replacement_character_the_client_sent_is_kept(server):
    db = _name("fffd")
    with socket.create_connection(("127.0.0.1", server.port), timeout=15) as s:
        s.sendall(_call("create_database", T.create_database_args(
            database=Database(name=db, description="a \ufffd in it", parameters={})), 1))
        _, _, result = _Reader(s, False).reply(T.create_database_result)
        assert (result.o1, result.o2, result.o3) == (None, None, None)
        s.sendall(_call("get_database", T.get_database_args(name=db), 2))
        _, _, result = _Reader(s, False).reply(T.get_database_result)
    assert result.success.description == "a \ufffd in it"
