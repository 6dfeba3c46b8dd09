"""The connection layer's limits (issue 19, findings 5, 6, 9 and 12), against real server processes
over real sockets:

- more than 1,024 connections on one worker are served (poll, not select), and the connection cap
  refuses the ones beyond it with an answer that names it, logged once per burst (finding 5);
- a request that stalls half-way is answered and closed after --read-timeout; an idle connection
  between requests is not (finding 6);
- a method name that is no UTF-8 answers UNKNOWN_METHOD and the connection goes on; a name cannot
  forge a log line; set_ugi with null names answers; oneway calls get no answer (finding 9);
- three 80 MB requests at once stay within --max-inflight-bytes, and a request beyond it is
  refused with a clear error (finding 12).
"""

from __future__ import annotations

import re
import resource
import socket
import struct
import threading
import time
from pathlib import Path

import pytest
from thrift.Thrift import TApplicationException, TMessageType

from bench.wire_fuzz import encode, read_reply, rss_kb
from tests.harness import CheckedServer, ServerStartError, open_thrift_client, start_checked_server
from thrift_idl.fb303 import FacebookService
from thrift_idl.hive_metastore import ThriftHiveMetastore as T

READ_TIMEOUT = 2  # --read-timeout of the server most tests use
CAP = 20  # --max-connections of the capped server


def _start(tmp_path_factory, name: str, extra: list[str]) -> CheckedServer:
    try:
        return start_checked_server(tmp_path_factory.mktemp(name), extra_args=extra)
    except ServerStartError as e:
        pytest.fail(str(e), pytrace=False)


@pytest.fixture(scope="module")
def srv(tmp_path_factory):
    server = _start(tmp_path_factory, "limits", ["--read-timeout", str(READ_TIMEOUT)])
    yield server
    server.stop()


@pytest.fixture(scope="module")
def capped(tmp_path_factory):
    server = _start(tmp_path_factory, "limits-capped",
                    ["--max-connections", str(CAP), "--max-inflight-bytes", "1000000"])
    yield server
    server.stop()


@pytest.fixture(scope="module")
def budgeted(tmp_path_factory):
    server = _start(tmp_path_factory, "limits-budget", ["--max-inflight-bytes", "100000000"])
    yield server
    server.stop()


def _log(server: CheckedServer) -> str:
    return Path(server.log_path).read_text(errors="replace")


def _recv_reply(s: socket.socket, timeout: float = 20.0):
    """The next whole answer on `s` (see bench.wire_fuzz.read_reply), or None if the server closed."""
    s.settimeout(timeout)
    data = b""
    while True:
        reply = read_reply(data)
        if reply is not None:
            return reply
        chunk = s.recv(65536)
        if not chunk:
            return None
        data += chunk


def _call(s: socket.socket, seqid: int):
    s.sendall(encode("get_all_databases", T.get_all_databases_args(), seqid))
    reply = _recv_reply(s)
    assert reply is not None and reply[1:3] == (TMessageType.REPLY, seqid), reply
    return reply


def _raise_own_fd_limit(need: int) -> None:
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft < need:
        if hard != resource.RLIM_INFINITY and hard < need:
            pytest.fail(f"this test needs {need} open files; the hard limit is {hard}")
        resource.setrlimit(resource.RLIMIT_NOFILE, (need, hard))


# --------------------------------------------------------------------------- finding 5


def test_more_than_1024_connections_on_one_worker(srv):
    n = 1_100
    _raise_own_fd_limit(n + 200)
    socks = []
    try:
        for _ in range(n):
            socks.append(socket.create_connection(("127.0.0.1", srv.port), timeout=30))
        for i, s in enumerate(socks[-20:] + socks[:3]):  # the last ones have server descriptors > 1024
            _call(s, i + 1)
        assert len(list(Path(f"/proc/{srv.proc.pid}/fd").iterdir())) > 1024
        srv.assert_healthy()
    finally:
        for s in socks:
            s.close()
    log = _log(srv)
    assert "Traceback" not in log and "ValueError" not in log, srv.log()


def test_connection_cap_refuses_with_an_answer_and_logs_once(capped):
    held = []
    try:
        for i in range(CAP):
            s = socket.create_connection(("127.0.0.1", capped.port), timeout=30)
            _call(s, i + 1)
            held.append(s)
        for _ in range(5):
            client, transport = open_thrift_client(capped.port, timeout=20)
            try:
                with pytest.raises(TApplicationException) as info:
                    client.get_all_databases()
                assert info.value.type == TApplicationException.INTERNAL_ERROR
                assert "--max-connections" in info.value.message
            finally:
                transport.close()
        assert _log(capped).count("connection cap reached, new connections refused: 20 open") == 1
        for s in held[:10]:
            s.close()
        del held[:10]
        deadline = time.monotonic() + 20
        while True:  # the server notices the closed ones, then serves new clients again
            s = socket.create_connection(("127.0.0.1", capped.port), timeout=20)
            s.sendall(encode("get_all_databases", T.get_all_databases_args(), 1))
            reply = _recv_reply(s)
            s.close()
            if reply is not None and reply[1] == TMessageType.REPLY:
                break
            assert time.monotonic() < deadline, "no new client was served after connections closed"
            time.sleep(0.5)
        # the 5 refused above, and any new client of the loop refused before the server noticed the
        # closed ones (a loaded machine)
        refused = re.findall(r"connection cap reached, new connections refused: (\d+) in", _log(capped))
        assert refused and int(refused[0]) >= 5, _log(capped)
    finally:
        for s in held:
            s.close()
    capped.assert_healthy()


# --------------------------------------------------------------------------- finding 6


def _partial_request() -> bytes:
    whole = encode("get_database", T.get_database_args(name="some_database_name"), 41)
    return whole[:-10]


def test_stalled_request_is_answered_and_closed(srv):
    start = time.monotonic()
    with socket.create_connection(("127.0.0.1", srv.port), timeout=30) as s:
        s.sendall(_partial_request())
        reply = _recv_reply(s)
        assert reply is not None, "closed without an answer"
        name, mtype, seqid, exc = reply
        assert (name, mtype, seqid) == (b"get_database", TMessageType.EXCEPTION, 41)
        assert exc.type == TApplicationException.PROTOCOL_ERROR and "timed out" in exc.message
        assert s.recv(100) == b""  # then closed
    assert time.monotonic() - start < 15
    assert "call=get_database ms=" in _log(srv) and "status=timed-out" in _log(srv)


def test_stalled_clients_do_not_hold_the_worker(srv):
    stalled = [socket.create_connection(("127.0.0.1", srv.port), timeout=30) for _ in range(200)]
    try:
        for i, s in enumerate(stalled):
            s.sendall(_partial_request() if i % 2 else b"\x80\x01")  # half a request, half a header
        srv.assert_healthy()
        for s in stalled:  # every one is closed after the read timeout
            s.settimeout(20)
            data = b""
            while chunk := s.recv(65536):
                data += chunk
    finally:
        for s in stalled:
            s.close()
    srv.assert_healthy()


def test_idle_connections_outlive_the_read_timeout(srv):
    client, transport = open_thrift_client(srv.port, timeout=30)
    quiet = socket.create_connection(("127.0.0.1", srv.port), timeout=30)  # never sent a byte
    try:
        assert isinstance(client.get_all_databases(), list)
        time.sleep(READ_TIMEOUT * 2.5)
        assert isinstance(client.get_all_databases(), list)
        _call(quiet, 1)
    finally:
        transport.close()
        quiet.close()


# --------------------------------------------------------------------------- finding 9


def test_method_name_that_is_no_utf8_answers_unknown_method(srv):
    name = b"\xff\xfe\x80get_all_databases"
    msg = encode("get_all_databases", T.get_all_databases_args(), 5)
    msg = msg[:4] + struct.pack("!i", len(name)) + name + msg[8 + 17:]
    with socket.create_connection(("127.0.0.1", srv.port), timeout=30) as s:
        s.sendall(msg)
        reply = _recv_reply(s)
        assert reply is not None
        got_name, mtype, seqid, exc = reply
        assert (got_name, mtype, seqid) == (name, TMessageType.EXCEPTION, 5)
        assert exc.type == TApplicationException.UNKNOWN_METHOD
        assert exc.message.startswith("Invalid method name: '")
        _call(s, 6)  # the same connection goes on
    log = _log(srv)
    assert "Traceback" not in log
    assert 'call="\\xff\\xfe\\x80get_all_databases" ms=0.00 status=unknown-method' in log


def test_method_name_cannot_forge_a_log_line(srv):
    forged = "call=drop_database ms=0.00 status=ok"
    name = f"get_x\n2030-01-01 00:00:00,000 1 INFO hudi_metastore.calls {forged}".encode()
    msg = encode("get_all_databases", T.get_all_databases_args(), 5)
    msg = msg[:4] + struct.pack("!i", len(name)) + name + msg[8 + 17:]
    with socket.create_connection(("127.0.0.1", srv.port), timeout=30) as s:
        s.sendall(msg)
        reply = _recv_reply(s)
        assert reply is not None and reply[3].type == TApplicationException.UNKNOWN_METHOD
        _call(s, 6)
    log = _log(srv)
    assert "call=drop_database" not in log
    assert 'call="get_x\\x0a2030-01-01\\x2000:00:00,000' in log


def test_set_ugi_with_null_names_answers(srv):
    client, transport = open_thrift_client(srv.port, timeout=30)
    try:
        assert client.set_ugi(None, None) == []
        assert client.set_ugi("alice", None) == []
        assert client.set_ugi(None, ["g1", "g2"]) == ["g1", "g2"]
        assert isinstance(client.get_all_databases(), list)  # the same connection goes on
    finally:
        transport.close()


def test_oneway_calls_get_no_answer(srv):
    messages = [
        encode("shutdown", FacebookService.shutdown_args(), 1, TMessageType.ONEWAY),
        encode("reinitialize", FacebookService.reinitialize_args(), 2, TMessageType.CALL),  # oneway by the IDL
        encode("get_database", T.get_database_args(name="default"), 3, TMessageType.ONEWAY),
        encode("no_such_method", T.get_all_databases_args(), 4, TMessageType.ONEWAY),
    ]
    with socket.create_connection(("127.0.0.1", srv.port), timeout=30) as s:
        s.sendall(b"".join(messages))
        _call(s, 5)  # the first answer on the connection is this call's
        s.settimeout(1.0)
        with pytest.raises(TimeoutError):
            s.recv(100)  # and nothing else comes
    srv.assert_healthy()


# --------------------------------------------------------------------------- finding 12


def _config_request(size: int, seqid: int = 1) -> bytes:
    # a key Hive lets clients read (hive.*): answered with the default, not refused
    return encode("get_config_value", T.get_config_value_args(name="hive." + "x" * (size - 5), defaultValue="d"),
                  seqid)


def _peak_kb(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1])
    raise AssertionError("no VmHWM")


def test_three_large_requests_stay_within_the_budget(budgeted):
    """--max-inflight-bytes 100 MB: three 80 MB requests at once are served one after the other.
    Without the budget the server's peak grows by about 420 MB here (about 750 MB before the
    server read large values into one buffer); with it, about 190 MB."""
    pid = budgeted.proc.pid
    before = rss_kb(pid)
    data = _config_request(80 * 1024 * 1024)
    replies: dict[int, object] = {}

    def one(i: int) -> None:
        with socket.create_connection(("127.0.0.1", budgeted.port), timeout=120) as s:
            s.sendall(data)
            replies[i] = _recv_reply(s, timeout=120)

    threads = [threading.Thread(target=one, args=(i,)) for i in range(3)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=180)
    assert [replies.get(i) and replies[i][1] for i in range(3)] == [TMessageType.REPLY] * 3, replies
    growth_mb = (_peak_kb(pid) - before) / 1024
    assert growth_mb < 300, f"peak resident memory grew by {growth_mb:.0f} MB"
    budgeted.assert_healthy()


def test_request_beyond_the_budget_is_refused_clearly(capped):
    with socket.create_connection(("127.0.0.1", capped.port), timeout=30) as s:
        s.sendall(_config_request(5 * 1024 * 1024, seqid=9))
        reply = _recv_reply(s)
    assert reply is not None, "closed without an answer"
    name, mtype, seqid, exc = reply
    assert (name, mtype, seqid) == (b"get_config_value", TMessageType.EXCEPTION, 9)
    assert exc.type == TApplicationException.INTERNAL_ERROR
    assert "server busy" in exc.message and "--max-inflight-bytes 1000000" in exc.message
    assert "status=busy" in _log(capped)
    capped.assert_healthy()
