"""Failed log-ins are slowed down per client address (issue 41; adapter/security/login_backoff.py):
the table itself with a fake clock, and a server with `--auth password` refusing an address after
repeated wrong passwords while another address logs in at once."""

from __future__ import annotations

import socket
import subprocess
import sys
import time

import pytest
from thrift.protocol import TBinaryProtocol
from thrift.transport import TSocket, TTransport

from adapter.security import login_backoff
from adapter.security.login_backoff import FIRST_WAIT_S, FREE_FAILURES, MAX_WAIT_S, LoginBackoff, client_key
from tests.harness import start_our_server, stop_process
from thrift_idl.hive_metastore import ThriftHiveMetastore

pytest.importorskip("puresasl")


class _Clock:
    def __init__(self):
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def test_waits_double_after_the_free_failures_up_to_the_maximum():
    clock = _Clock()
    b = LoginBackoff(clock)
    waits = [b.failed("10.0.0.7") for _ in range(FREE_FAILURES + 10)]
    assert waits[:FREE_FAILURES - 1] == [0.0] * (FREE_FAILURES - 1)
    assert waits[FREE_FAILURES - 1:FREE_FAILURES + 2] == [FIRST_WAIT_S, 2 * FIRST_WAIT_S, 4 * FIRST_WAIT_S]
    assert waits[-1] == MAX_WAIT_S
    assert b.wait_left("10.0.0.7") == MAX_WAIT_S
    assert b.wait_left("10.0.0.8") == 0.0  # another address is not slowed down
    clock.now += MAX_WAIT_S
    assert b.wait_left("10.0.0.7") == 0.0
    b.succeeded("10.0.0.7")
    assert b.failed("10.0.0.7") == 0.0  # a success starts afresh


def test_an_address_quiet_for_long_starts_afresh():
    clock = _Clock()
    b = LoginBackoff(clock)
    for _ in range(FREE_FAILURES + 2):
        b.failed("a")
    clock.now += login_backoff.FORGET_AFTER_S + 1
    assert b.wait_left("a") == 0.0 and len(b) == 0
    assert b.failed("a") == 0.0


def test_the_table_is_bounded():
    b = LoginBackoff(_Clock(), max_addresses=100)
    for i in range(1000):
        b.failed(f"10.0.{i // 256}.{i % 256}")
    assert len(b) == 100
    assert b.wait_left("10.0.0.0") == 0.0  # the oldest are forgotten first


def test_client_keys():
    assert client_key(("10.1.2.3", 5555)) == "10.1.2.3"
    assert client_key(("2001:db8:1:2:aaaa::1", 5555, 0, 0)) == client_key(("2001:db8:1:2:bbbb::9", 1, 0, 0)) \
        == "2001:db8:1:2::/64"
    assert client_key(("::ffff:10.1.2.3", 5555, 0, 0)) == "10.1.2.3"


# --------------------------------------------------------------------------- through a server


@pytest.fixture
def password_server(tmp_path):
    passwords = tmp_path / "passwords"
    subprocess.run([sys.executable, "-m", "adapter.cli", "users", "add", "--file", str(passwords), "alice"],
                   input="correct horse\n", text=True, capture_output=True, check=True)
    port, proc = start_our_server(f"sqlite:///{tmp_path / 'm.db'}", tmp_path, extra_args=[
        "--auth", "password", "--auth-password-file", str(passwords), "--admin-users", "alice"])
    try:
        yield port, proc
    finally:
        stop_process(proc)


def _log_in(port: int, password: str, source: str = "127.0.0.1") -> list[str]:
    raw = socket.socket()
    raw.bind((source, 0))
    raw.settimeout(20)
    raw.connect(("127.0.0.1", port))
    sock = TSocket.TSocket("127.0.0.1", port)
    sock.handle = raw
    transport = TTransport.TSaslClientTransport(sock, "127.0.0.1", "hive", mechanism="PLAIN",
                                                username="alice", password=password)
    transport.open()
    try:
        return ThriftHiveMetastore.Client(TBinaryProtocol.TBinaryProtocol(transport)).get_all_databases()
    finally:
        transport.close()


def test_repeated_wrong_passwords_slow_down_that_address_only(password_server):
    port, proc = password_server
    for _ in range(FREE_FAILURES):
        with pytest.raises(TTransport.TTransportException, match="wrong user name or password"):
            _log_in(port, "guess")
    # now this address waits: even the right password is refused without being checked
    with pytest.raises(TTransport.TTransportException, match="too many failed log-ins from 127.0.0.1"):
        _log_in(port, "correct horse")
    assert "default" in _log_in(port, "correct horse", source="127.0.0.2")  # another address: at once
    time.sleep(FIRST_WAIT_S + 0.3)
    assert "default" in _log_in(port, "correct horse")  # after the wait; the success clears the address
    with pytest.raises(TTransport.TTransportException, match="wrong user name or password"):
        _log_in(port, "guess")
    log = open(proc.log_path).read()
    assert "next log-in from 127.0.0.1 in 1 s" in log
    assert "log-in refused for" in log and "Traceback" not in log
