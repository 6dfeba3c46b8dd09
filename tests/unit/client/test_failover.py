"""The client's failover when a server answers that its database is unavailable (client/connection.py)."""

from __future__ import annotations

import socket
import threading

from adapter.errors import DATABASE_UNAVAILABLE as SERVER_TEXT
from client import DATABASE_UNAVAILABLE, HudiMetastoreClient, database_unavailable
from thrift_idl.hive_metastore.ttypes import MetaException


def test_client_and_server_agree_on_the_text():
    assert DATABASE_UNAVAILABLE == SERVER_TEXT


def test_only_an_answer_that_changed_nothing_fails_over():
    assert database_unavailable(MetaException(
        f"get_table failed: {SERVER_TEXT} from this metastore server; nothing was changed (error id 1)"))
    assert not database_unavailable(MetaException("get_table failed: the metastore database reported an error"))
    assert not database_unavailable(MetaException(
        "create_table: the metastore database connection was lost while committing and the outcome is unknown"))


def test_fail_over_puts_the_current_server_last():
    conn = HudiMetastoreClient("thrift://a:1,thrift://b:2,thrift://c:3")
    conn._endpoint = "thrift://a:1"
    conn._fail_over()
    assert conn.endpoints == [("b", 2), ("c", 3), ("a", 1)]
    conn._endpoint = "thrift://c:3"
    conn._fail_over()
    assert conn.endpoints == [("b", 2), ("a", 1), ("c", 3)]


def test_a_call_answered_unavailable_runs_again_on_the_next_server(monkeypatch):
    """Two listening sockets stand for two servers; the first answers 'unavailable' to every call."""
    servers = [socket.create_server(("127.0.0.1", 0)) for _ in range(2)]
    ports = [s.getsockname()[1] for s in servers]
    conn = HudiMetastoreClient(",".join(f"thrift://127.0.0.1:{p}" for p in ports), retries=2, backoff_s=0.01)
    calls: list[str] = []

    def attempt(method, args, kwargs):
        conn._connection()
        calls.append(conn._endpoint)
        if conn._endpoint.endswith(f":{ports[0]}"):
            raise MetaException(f"{method} failed: {SERVER_TEXT} from this metastore server; nothing was "
                                "changed (error id x)")
        return "answer"

    accepted: list[socket.socket] = []
    stop = threading.Event()

    def accept(srv):
        srv.settimeout(0.2)
        while not stop.is_set():
            try:
                accepted.append(srv.accept()[0])
            except OSError:
                pass

    threads = [threading.Thread(target=accept, args=(s,), daemon=True) for s in servers]
    for t in threads:
        t.start()
    monkeypatch.setattr(conn, "_attempt", attempt)
    try:
        assert conn.call("create_database", None) == "answer"  # not idempotent, yet it changed nothing
        assert calls == [f"thrift://127.0.0.1:{ports[0]}", f"thrift://127.0.0.1:{ports[1]}"]
    finally:
        stop.set()
        conn.close()
        for t in threads:
            t.join()
        for s in servers + accepted:
            s.close()
