"""A replaying Thrift proxy: a metastore that answers at once, for measuring a client's ceiling.

The proxy listens on loopback in front of a real metastore port and speaks what Hive's client
speaks without SASL: unframed TBinaryProtocol (strict or old-style message headers). It splits the
stream into messages (message header, then a generic skip of the argument or result struct) and
forwards each call upstream on a connection of its own per client connection.

* In ``record`` mode every answered call is forwarded, and its reply's bytes are kept, keyed by
  (method name, argument struct bytes).
* In ``replay`` mode a call whose key was recorded is answered from the recording at once, with
  the reply's seqid set to the request's (one ``sendmsg``, no upstream call); any other call is
  forwarded as in record mode (connection setup such as set_ugi keeps working).

What a client then measures is its own encoding and decoding and the sockets: the ceiling that no
server can beat. ``forwarded`` and ``replayed`` count the calls by method.

    with InstantServer(upstream_port) as proxy:
        ... run the client against proxy.port ...   # records
        proxy.mode = "replay"
        ... run it again ...                         # answered from the recording
"""

from __future__ import annotations

import socket
import struct
import threading
from collections import Counter
from dataclasses import dataclass

# Thrift type ids (TType) and the byte size of the fixed-size ones
STOP, BOOL, BYTE, DOUBLE, I16, I32, I64, STRING = 0, 2, 3, 4, 6, 8, 10, 11
STRUCT, MAP, SET, LIST, UUID = 12, 13, 14, 15, 16
_FIXED = {BOOL: 1, BYTE: 1, DOUBLE: 8, I16: 2, I32: 4, I64: 8, UUID: 16}
CALL, REPLY, EXCEPTION, ONEWAY = 1, 2, 3, 4
_VERSION_MASK, _VERSION_1 = 0xFFFF0000, 0x80010000
_I32 = struct.Struct("!i")
#: calls never answered from a recording: they set the connection's state upstream
NEVER_REPLAYED = frozenset({"set_ugi"})


class ProtocolError(Exception):
    pass


@dataclass(frozen=True)
class Message:
    name: str
    mtype: int
    data: bytes  # the whole message, header included
    seq_at: int  # offset of the 4 seqid bytes in data
    body_at: int  # offset of the argument (or result) struct in data


class _Reader:
    """Messages off a socket: bytes are received into a buffer as the parse needs them."""

    def __init__(self, sock: socket.socket):
        self.sock, self.buf, self.pos = sock, bytearray(), 0

    def _need(self, n: int) -> None:
        missing = n - (len(self.buf) - self.pos)
        while missing > 0:
            chunk = self.sock.recv(max(missing, 1 << 16))
            if not chunk:
                raise EOFError("connection closed")
            self.buf += chunk
            missing -= len(chunk)

    def _i32(self) -> int:
        self._need(4)
        (v,) = _I32.unpack_from(self.buf, self.pos)
        self.pos += 4
        return v

    def _size(self) -> int:
        n = self._i32()
        if n < 0:
            raise ProtocolError(f"negative size {n}")
        return n

    def _byte(self) -> int:
        self._need(1)
        self.pos += 1
        return self.buf[self.pos - 1]

    def _skip_bytes(self, n: int) -> None:
        self._need(n)
        self.pos += n

    def _skip(self, ttype: int, depth: int = 0) -> None:
        if depth > 64:
            raise ProtocolError("nesting too deep")
        size = _FIXED.get(ttype)
        if size is not None:
            self._skip_bytes(size)
        elif ttype == STRING:
            self._skip_bytes(self._size())
        elif ttype == STRUCT:
            while (ftype := self._byte()) != STOP:
                self._skip_bytes(2)  # field id
                self._skip(ftype, depth + 1)
        elif ttype == MAP:
            ktype, vtype, n = self._byte(), self._byte(), self._size()
            ks, vs = _FIXED.get(ktype), _FIXED.get(vtype)
            if ks is not None and vs is not None:
                self._skip_bytes(n * (ks + vs))
            else:
                for _ in range(n):
                    self._skip(ktype, depth + 1)
                    self._skip(vtype, depth + 1)
        elif ttype in (LIST, SET):
            etype, n = self._byte(), self._size()
            es = _FIXED.get(etype)
            if es is not None:
                self._skip_bytes(n * es)
            else:
                for _ in range(n):
                    self._skip(etype, depth + 1)
        else:
            raise ProtocolError(f"unknown Thrift type {ttype}")

    def message(self) -> Message:
        """The next whole message (blocks until it has arrived; EOFError when the peer closed)."""
        start = self.pos
        first = self._i32()
        if first < 0:  # strict: version | type, name, seqid
            if first & _VERSION_MASK != _VERSION_1:
                raise ProtocolError(f"bad message version {first & 0xFFFFFFFF:#x}")
            mtype = first & 0xFF
            name_len = self._size()
            self._need(name_len)
            name = bytes(self.buf[self.pos:self.pos + name_len]).decode("utf-8")
            self.pos += name_len
        else:  # old style: name, type, seqid
            self._need(first)
            name = bytes(self.buf[self.pos:self.pos + first]).decode("utf-8")
            self.pos += first
            mtype = self._byte()
        seq_at = self.pos - start
        self._skip_bytes(4)
        body_at = self.pos - start
        self._skip(STRUCT)
        data = bytes(self.buf[start:self.pos])
        del self.buf[:self.pos]
        self.pos = 0
        return Message(name, mtype, data, seq_at, body_at)


def _send(sock: socket.socket, parts: list) -> None:
    total = sum(len(p) for p in parts)
    sent = sock.sendmsg(parts)
    if sent < total:
        sock.sendall(memoryview(b"".join(parts))[sent:])


class InstantServer:
    """The proxy; ``mode`` is "record" or "replay" and may change while it runs."""

    def __init__(self, upstream_port: int, upstream_host: str = "127.0.0.1", port: int = 0,
                 never_replayed: frozenset[str] = NEVER_REPLAYED):
        self.upstream = (upstream_host, upstream_port)
        self.never_replayed = never_replayed
        self.mode = "record"
        self.recorded: dict[tuple[str, bytes], tuple[bytes, bytes]] = {}  # -> (reply before seqid, after)
        self.forwarded: Counter[str] = Counter()
        self.replayed: Counter[str] = Counter()
        self.oneway: Counter[str] = Counter()  # of the forwarded calls, those without a reply (fb303 shutdown)
        self.errors: list[str] = []
        self._lock = threading.Lock()
        self._conns: set[socket.socket] = set()
        self._listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self._listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self._listener.bind(("127.0.0.1", port))
        self._listener.listen(64)
        self.port: int = self._listener.getsockname()[1]
        self._thread: threading.Thread | None = None
        self._stopped = False

    def start(self) -> InstantServer:
        self._thread = threading.Thread(target=self._accept, name="instant-server", daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stopped = True
        try:
            self._listener.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass
        self._listener.close()
        with self._lock:
            conns = list(self._conns)
        for c in conns:
            try:
                c.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
        if self._thread is not None:
            self._thread.join(5)

    def __enter__(self) -> InstantServer:
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()

    def _accept(self) -> None:
        while not self._stopped:
            try:
                client, _ = self._listener.accept()
            except OSError:
                return
            threading.Thread(target=self._serve, args=(client,), name="instant-conn", daemon=True).start()

    def _serve(self, client: socket.socket) -> None:
        upstream = None
        try:
            upstream = socket.create_connection(self.upstream)
            for s in (client, upstream):
                s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            with self._lock:
                self._conns.update((client, upstream))
            calls, replies = _Reader(client), _Reader(upstream)
            while True:
                call = calls.message()
                if self.mode == "replay":
                    hit = self.recorded.get((call.name, call.data[call.body_at:]))
                    if hit is not None:
                        with self._lock:  # counted before the reply: a client reads counts after it
                            self.replayed[call.name] += 1
                        _send(client, [hit[0], call.data[call.seq_at:call.seq_at + 4], hit[1]])
                        continue
                upstream.sendall(call.data)
                with self._lock:
                    self.forwarded[call.name] += 1
                if call.mtype == ONEWAY:
                    with self._lock:
                        self.oneway[call.name] += 1
                    continue
                reply = replies.message()
                if self.mode == "record" and reply.mtype == REPLY and call.name not in self.never_replayed:
                    self.recorded[(call.name, call.data[call.body_at:])] = (
                        reply.data[:reply.seq_at], reply.data[reply.seq_at + 4:])
                client.sendall(reply.data)
        except (EOFError, OSError):
            pass  # the client (or the upstream) closed
        except ProtocolError as e:  # not unframed binary Thrift: drop the connection, keep the reason
            with self._lock:
                self.errors.append(str(e))
        finally:
            with self._lock:
                self._conns.difference_update((client, upstream))
            for s in (client, upstream):
                if s is not None:
                    s.close()
