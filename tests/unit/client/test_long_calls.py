"""A call that takes the server longer than the client's timeout (a commit of millions of keys):
`Connection.waiting` lengthens it for the calls inside, `HudiCatalog.complete_instant` waits by the
size of the commit, and the pipeline asks whether an instant whose answer was lost completed."""

from __future__ import annotations

import socket
import threading
import time

import pytest

from client import FileGroupKeys, HudiCatalog, HudiMetastoreClient, TransportError
from pipeline.commit import WriteTransaction


def _slow_server(delay_s: float) -> tuple[socket.socket, int]:
    """A listening socket that reads a request, then closes the connection after `delay_s`."""
    srv = socket.create_server(("127.0.0.1", 0))

    def serve():
        while True:
            try:
                conn, _ = srv.accept()
            except OSError:
                return
            conn.recv(65536)
            time.sleep(delay_s)
            conn.close()

    threading.Thread(target=serve, daemon=True).start()
    return srv, srv.getsockname()[1]


def test_waiting_lengthens_the_calls_inside_and_restores_the_timeout():
    srv, port = _slow_server(1.5)
    try:
        conn = HudiMetastoreClient(f"thrift://127.0.0.1:{port}", timeout_s=0.5, retries=0)
        with pytest.raises(Exception) as timed_out:
            conn.get_all_databases()
        assert "timeout" in str(timed_out.value).lower()
        with conn.waiting(10), pytest.raises(Exception) as closed:
            conn.get_all_databases()  # waits for the server, which closes: not a timeout
        assert "timeout" not in str(closed.value).lower()
        assert conn.timeout_s == 0.5
        with conn.waiting(0.1):  # never shorter
            assert conn.timeout_s == 0.5
        conn.close()
    finally:
        srv.close()


def test_complete_instant_waits_by_the_size_of_the_commit(monkeypatch):
    catalog = HudiCatalog("thrift://127.0.0.1:1")
    waits: list[float] = []
    inner = catalog._client

    class Done:
        instant = None

    monkeypatch.setattr(inner, "waiting", lambda s: (waits.append(s), _Null())[1])
    monkeypatch.setattr(inner, "complete_instant", lambda *a: Done())
    monkeypatch.setattr("client.catalog.convert.instant_from_thrift", lambda i: "done")
    keys = [FileGroupKeys("p", "f1-0", inserted=[str(i) for i in range(400_000)], updated=[], deleted=[],
                          instant="1")]
    assert catalog.complete_instant("db", "t", "1", "commit", "{}", keys, None) == "done"
    assert waits == [inner.timeout_s + 20]


class _Null:
    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False


def test_a_lost_answer_of_a_completed_instant_is_a_success():
    class Client:
        uri, security = "thrift://x:1", None

        def complete_instant(self, *a):
            raise TransportError("read timeout")

        def list_instants(self, *a, **kw):
            return ["completed"]

    txn = WriteTransaction(Client(), "db", "t", "commit", "upsert", 60, 10)  # type: ignore[arg-type]
    txn.instant = "1"
    assert txn.complete({}) == "1"
