"""A client connection's bytes: the per-message size limit, the in-flight budget, the read timeout,
the framed transport's frame-size check, and answers written without copying their large pieces."""

from __future__ import annotations

import io
import os
import socket
import ssl
import struct
import time

from thrift.protocol import TBinaryProtocol
from thrift.transport import TSocket, TTransport

from adapter.server.budget import BudgetExhausted, InflightBudget, Ticket

RECV_CHUNK = 1024 * 1024  # at most this much is asked of one recv (it allocates what it is asked)
LARGE_READ = 64 * 1024  # a value at least this long is read into a buffer of its own (or sent as it is)
_IOV_MAX = min(os.sysconf("SC_IOV_MAX") if hasattr(os, "sysconf") else 1024, 1024)  # buffers per sendmsg


class Busy(TTransport.TTransportException):
    """The in-flight budget refused the rest of a request."""


class ClientSocket(TSocket.TSocket):
    """A client socket that refuses to read more than `limit` bytes for one message, reserves what
    it reads from the process's in-flight budget, and reads large messages in linear time."""

    def __init__(self, sock: socket.socket, limit: int, budget: InflightBudget):
        super().__init__()
        self.setHandle(sock)
        self.limit = limit
        self.budget = budget
        self.consumed = 0
        self.ticket: Ticket | None = None
        self.tape: bytearray | None = None  # what is read while a request's arguments may be replayed
        self.tape_limit = 0

    def start_request(self) -> None:
        self.consumed = 0
        self.ticket = self.budget.ticket()

    def end_request(self) -> None:
        if self.ticket is not None:
            self.budget.release(self.ticket)
            self.ticket = None

    def read(self, sz):
        sz = min(sz, RECV_CHUNK)
        if self.consumed + sz > self.limit:
            sz = max(1, self.limit - self.consumed + 1)  # one byte over is enough to refuse
        self._cover(self.consumed + sz)
        data = super().read(sz)
        self.consumed += len(data)
        if self.tape is not None:
            self._record(data)
        if self.consumed > self.limit:
            raise TTransport.TTransportException(TTransport.TTransportException.SIZE_LIMIT,
                                                 "message exceeds the maximum size")
        return data

    def _cover(self, total: int) -> None:
        if self.ticket is not None:
            try:
                self.budget.cover(self.ticket, total)
            except BudgetExhausted as exc:
                raise Busy(TTransport.TTransportException.UNKNOWN, str(exc)) from exc

    def readAll(self, sz):
        return self.read_exactly(sz)

    def read_exactly(self, n: int, prefix: bytes = b"") -> bytes:
        """`prefix` and the next `n` bytes. The whole read is reserved from the budget at once (a
        long string, a frame), so concurrent large requests wait for each other instead of each
        holding part of it; the buffer grows as bytes arrive (a declared length costs no memory
        before its bytes come), and there is one copy at the end, not TTransportBase.readAll's
        concatenation as it goes (quadratic)."""
        if self.consumed + n > self.limit:
            raise TTransport.TTransportException(TTransport.TTransportException.SIZE_LIMIT,
                                                 "message exceeds the maximum size")
        self._cover(self.consumed + n)
        buf = bytearray(prefix)
        scratch = memoryview(bytearray(min(n, RECV_CHUNK)))
        left = n
        while left > 0:
            k = self._recv_into(scratch[:min(left, len(scratch))])
            buf += scratch[:k]
            left -= k
            self.consumed += k
        scratch.release()
        if self.tape is not None:
            self._record(memoryview(buf)[len(prefix):])
        return bytes(buf)

    def _record(self, data) -> None:
        """Keep what was read for a replay (adapter/server/replay.py); beyond its limit, nothing."""
        assert self.tape is not None
        if len(self.tape) + len(data) > self.tape_limit:
            self.tape = None
        else:
            self.tape += data

    def write(self, buff) -> None:
        self.write_all([buff])

    def write_all(self, chunks) -> None:
        """Send `chunks` in order, gathered in one system call where the socket allows (not under
        TLS), without copying them: a partial send moves a view on (TSocket.write copies the rest
        after each partial send, quadratic in the size of a long answer a slow reader takes)."""
        if not self.handle:
            raise TTransport.TTransportException(TTransport.TTransportException.NOT_OPEN, "Transport not open")
        views = [memoryview(c) for c in chunks if len(c)]
        gather = getattr(self.handle, "sendmsg", None) if not isinstance(self.handle, ssl.SSLSocket) else None
        try:
            while views:
                sent = gather(views[:_IOV_MAX]) if gather is not None else self.handle.send(views[0])
                if sent == 0:
                    raise TTransport.TTransportException(TTransport.TTransportException.END_OF_FILE,
                                                         "TSocket sent 0 bytes")
                while sent:
                    first = views[0]
                    if sent >= first.nbytes:
                        sent -= first.nbytes
                        views.pop(0)
                    else:
                        views[0] = first[sent:]
                        sent = 0
        except TimeoutError as exc:
            raise TTransport.TTransportException(TTransport.TTransportException.TIMED_OUT, "write timeout") from exc
        except OSError as exc:
            raise TTransport.TTransportException(message="unexpected exception", inner=exc) from exc

    def _recv_into(self, view: memoryview) -> int:
        try:
            k = self.handle.recv_into(view)
        except TimeoutError as exc:
            raise TTransport.TTransportException(TTransport.TTransportException.TIMED_OUT, "read timeout") from exc
        except OSError as exc:
            raise TTransport.TTransportException(message=f"read failed: {exc}") from exc
        if k == 0:
            raise TTransport.TTransportException(TTransport.TTransportException.END_OF_FILE, "peer closed")
        return k


class BufferedTransport(TTransport.TBufferedTransport):
    """TBufferedTransport whose refill for a large value (a long string) reads it into one buffer
    instead of concatenating what the buffer held with what the socket gave."""

    def __init__(self, sock: ClientSocket):
        super().__init__(sock)
        self.sock = sock

    def cstringio_refill(self, partialread, reqlen):
        if reqlen < LARGE_READ:
            return super().cstringio_refill(partialread, reqlen)
        rbuf = io.BytesIO(self.sock.read_exactly(reqlen - len(partialread), prefix=partialread))
        self._TBufferedTransport__rbuf = rbuf
        return rbuf


class Chunks(list):
    """The pieces of one encoded value, in order, written without joining them (adapter/server/
    encoded_answers.py: a partition list's bytes kept by the store go to the socket as they are)."""


class ReplyTransport(TTransport.TTransportBase):
    """The output of an unframed connection: an answer's pieces are kept as written (small ones
    joined at the end) and sent at flush by ClientSocket.write_all, so a large one is never copied
    (TBufferedTransport copies every byte into its buffer and out again)."""

    def __init__(self, sock: ClientSocket):
        self.sock = sock
        self._chunks: list = []

    def isOpen(self) -> bool:
        return self.sock.isOpen()

    def write(self, buf) -> None:
        if isinstance(buf, Chunks):
            self._chunks.extend(buf)
        else:
            self._chunks.append(buf)

    def discard(self) -> None:
        """Drop a half-written answer."""
        self._chunks = []

    def flush(self) -> None:
        chunks, self._chunks = self._chunks, []
        out: list = []
        small: list = []
        for c in chunks:
            if len(c) < LARGE_READ:
                small.append(c)
                continue
            if small:
                out.append(b"".join(small))
                small = []
            out.append(c)
        if small:
            out.append(b"".join(small))
        if out:
            self.sock.write_all(out)


class OversizedFrame(TTransport.TTransportException):
    def __init__(self, message: str, name: str | None, seqid: int):
        super().__init__(TTransport.TTransportException.SIZE_LIMIT, message)
        self.name, self.seqid = name, seqid


class LimitedFramedTransport(TTransport.TFramedTransport):
    """A framed transport that refuses a frame above `limit` after reading just its header."""

    def __init__(self, trans, limit: int):
        super().__init__(trans)
        self.limit = limit

    def readFrame(self):
        buff = self._TFramedTransport__trans.readAll(4)
        (sz,) = struct.unpack("!i", buff)
        if sz < 0 or sz > self.limit:
            name, seqid = self._peek_header(sz)
            raise OversizedFrame(f"Request{' for ' + name if name else ''}: frame of {sz} bytes "
                                 f"exceeds the maximum message size of {self.limit}", name, seqid)
        self._TFramedTransport__rbuf = io.BytesIO(self._TFramedTransport__trans.readAll(sz))

    def _peek_header(self, sz: int) -> tuple[str | None, int]:
        """Method name and seqid from the start of a refused frame (strict binary header)."""
        trans = self._TFramedTransport__trans
        try:
            if sz < 12:
                return None, 0
            (version,) = struct.unpack("!i", trans.readAll(4))
            if version & TBinaryProtocol.TBinaryProtocol.VERSION_MASK != TBinaryProtocol.TBinaryProtocol.VERSION_1:
                return None, 0
            (n,) = struct.unpack("!i", trans.readAll(4))
            if not 0 < n <= min(1024, sz - 12):
                return None, 0
            name = trans.readAll(n).decode("utf-8", "replace")
            (seqid,) = struct.unpack("!i", trans.readAll(4))
            return name, seqid
        except (TTransport.TTransportException, struct.error):
            return None, 0


def has_buffered_input(itrans) -> bool:
    """Whether the transport holds bytes of a next request already (a pipelining client)."""
    buffered = getattr(itrans, "_TBufferedTransport__rbuf", None) \
        or getattr(itrans, "_TFramedTransport__rbuf", None)
    return buffered is not None and buffered.tell() < len(buffered.getvalue())


def drain(client: socket.socket, seconds: float = 5.0, idle: float = 1.0) -> None:
    """After refusing a request: read and discard what the client still sends (closing a socket
    with unread input resets it, and the client would lose our answer), for a bounded time."""
    try:
        client.shutdown(socket.SHUT_WR)
    except OSError:
        return
    deadline = time.monotonic() + seconds
    try:
        while (left := deadline - time.monotonic()) > 0:
            client.settimeout(min(idle, left))
            if not client.recv(65536):
                break
    except OSError:
        pass
