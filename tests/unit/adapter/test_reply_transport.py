"""Answers leave the server without copies of their large pieces (adapter/server/transport.py):
ReplyTransport keeps the pieces as written, ClientSocket.write_all gathers them into sendmsg calls
and moves a view on after a partial send, where TSocket.write copied the rest each time."""

from __future__ import annotations

import socket
import threading

import pytest
from thrift.transport import TTransport

from adapter.server.budget import InflightBudget
from adapter.server.transport import Chunks, ClientSocket, ReplyTransport


class _Spy:
    """A socket whose sends are recorded: what each call was given."""

    def __init__(self, sock: socket.socket):
        self.sock = sock
        self.calls: list[list] = []

    def sendmsg(self, buffers):
        self.calls.append(list(buffers))
        return self.sock.sendmsg(buffers)

    def send(self, data):
        self.calls.append([data])
        return self.sock.send(data)

    def __getattr__(self, name):
        return getattr(self.sock, name)


def _pair(send_buffer: int = 4096):
    a, b = socket.socketpair()
    a.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, send_buffer)
    a.settimeout(10)
    spy = _Spy(a)
    sock = ClientSocket(a, 1 << 30, InflightBudget(0, 1.0))
    sock.handle = spy
    return sock, spy, b


def _drain(b: socket.socket, n: int, out: list) -> None:
    got = bytearray()
    while len(got) < n:
        chunk = b.recv(1000)  # a slow reader: many partial sends
        if not chunk:
            break
        got += chunk
    out.append(bytes(got))


def test_a_long_answer_is_sent_whole_without_copies():
    sock, spy, b = _pair()
    big = bytes(range(256)) * 4096  # 1 MB
    trans = ReplyTransport(sock)
    trans.write(b"\x80\x01")
    trans.write(b"head")
    trans.write(Chunks([b"x" * 10, big, b"\x00"]))
    received: list = []
    reader = threading.Thread(target=_drain, args=(b, 2 + 4 + 10 + len(big) + 1, received))
    reader.start()
    trans.flush()
    reader.join(10)
    assert received == [b"\x80\x01head" + b"x" * 10 + big + b"\x00"]
    assert len(spy.calls) > 2  # partial sends happened
    for buffers in spy.calls:  # every piece of the large value is a view of it, never a copy
        for buf in buffers:
            if len(buf) > 1000:
                assert isinstance(buf, memoryview) and buf.obj is big
    b.close()


def test_writes_without_sendmsg_are_views_too():
    sock, spy, b = _pair()
    spy.sendmsg = None  # as under TLS: one send per piece
    big = b"y" * 300_000
    received: list = []
    reader = threading.Thread(target=_drain, args=(b, len(big), received))
    reader.start()
    sock.write(big)
    reader.join(10)
    assert received == [big]
    assert all(isinstance(c[0], memoryview) and c[0].obj is big for c in spy.calls)
    b.close()


def test_a_discarded_answer_is_not_sent_and_a_closed_peer_is_an_error():
    sock, spy, b = _pair()
    trans = ReplyTransport(sock)
    trans.write(b"half an answer")
    trans.discard()
    trans.flush()
    assert spy.calls == []
    b.close()
    trans.write(b"z" * 100_000)
    with pytest.raises(TTransport.TTransportException):
        trans.flush()
