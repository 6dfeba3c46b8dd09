"""The Thrift server: accepts connections, one thread each, on the accelerated binary protocol.

Several worker processes may share the listening socket (`--workers`); they share nothing else,
so every answer comes from the database.
"""

from __future__ import annotations

import io
import logging
import os
import signal
import socket
import threading
import time
from collections.abc import Callable

from thrift.protocol import TBinaryProtocol
from thrift.protocol.TBinaryProtocol import TBinaryProtocolAcceleratedFactory
from thrift.protocol.TProtocol import TProtocolException
from thrift.Thrift import TApplicationException, TMessageType, TType
from thrift.transport import TSocket, TTransport

from adapter import metrics_http
from adapter.call_log import log_call
from adapter.router import HandlerRouter, take_error
from store import metrics
from thrift_idl.hudi_metastore import HudiMetastore

log = logging.getLogger("hudi_metastore.server")
call_log = logging.getLogger("hudi_metastore.calls")


def _reply_error(oprot, name: str, seqid: int, kind: int, message: str) -> None:
    oprot.writeMessageBegin(name, TMessageType.EXCEPTION, seqid)
    TApplicationException(kind, message).write(oprot)
    oprot.writeMessageEnd()
    oprot.trans.flush()


def _skip(iprot, ttype: int = TType.STRUCT, depth: int = 64) -> None:
    """TProtocolBase.skip, but strings are read as bytes: the arguments of a method we do not serve
    may hold binary fields that are no UTF-8 (get_partitions_by_expr's serialized expression)."""
    if depth <= 0:
        raise TProtocolException(TProtocolException.DEPTH_LIMIT)
    if ttype == TType.STRING:
        iprot.readBinary()
    elif ttype == TType.STRUCT:
        iprot.readStructBegin()
        while True:
            _name, ftype, _fid = iprot.readFieldBegin()
            if ftype == TType.STOP:
                break
            _skip(iprot, ftype, depth - 1)
            iprot.readFieldEnd()
        iprot.readStructEnd()
    elif ttype == TType.MAP:
        ktype, vtype, size = iprot.readMapBegin()
        for _ in range(size):
            _skip(iprot, ktype, depth - 1)
            _skip(iprot, vtype, depth - 1)
        iprot.readMapEnd()
    elif ttype in (TType.SET, TType.LIST):
        etype, size = iprot.readSetBegin() if ttype == TType.SET else iprot.readListBegin()
        for _ in range(size):
            _skip(iprot, etype, depth - 1)
        iprot.readSetEnd() if ttype == TType.SET else iprot.readListEnd()
    else:
        iprot.skip(ttype)


class MetastoreProcessor(HudiMetastore.Processor):
    """The generated processor of the Hudi extension service (which extends ThriftHiveMetastore, so
    one port serves both), plus: Hive's text for unknown methods (clients match on it), a clear
    error for oversized or malformed arguments, and one log line and metrics record per call."""

    def __init__(self, router: HandlerRouter):
        super().__init__(router)
        self.router = router

    def process(self, iprot, oprot):
        try:
            name, _mtype, seqid = iprot.readMessageBegin()
        except _OversizedFrame as exc:
            # The frame was refused before reading it; answer with what its header told us.
            if not exc.name:  # not a framed binary-protocol call at all (e.g. an unframed client)
                raise TProtocolException(TProtocolException.INVALID_DATA, str(exc)) from exc
            log_call(call_log, exc.name, 0.0, "too-large", iprot)
            metrics.record_call(exc.name if exc.name in self._processMap else "unknown", 0.0, "too-large")
            self._reject(oprot, exc.name, exc.seqid, str(exc))
            raise RequestRejected(str(exc)) from exc
        fn = self._processMap.get(name) if self.router.serves(name) else None
        if fn is None:
            _skip(iprot)
            iprot.readMessageEnd()
            _reply_error(oprot, name, seqid, TApplicationException.UNKNOWN_METHOD,
                         f"Invalid method name: '{name}'")
            log_call(call_log, name, 0.0, "unknown-method", iprot)
            metrics.record_call("unknown", 0.0, "unknown-method")  # not the name: any text could come
            return
        start = time.perf_counter()
        status = "ok"
        take_error()
        try:
            fn(self, seqid, iprot, oprot)
            status = take_error() or "ok"  # e.g. NoSuchObjectException: answered, but not a success
        except TTransport.TTransportException as exc:
            if exc.type != TTransport.TTransportException.SIZE_LIMIT:
                status = "disconnected"
                raise
            status = "too-large"
            self._reject(oprot, name, seqid, f"Request for {name} exceeds the maximum message size "
                                             f"({exc.message})")
            raise RequestRejected(status) from exc
        except Exception as exc:
            # The generated code handles every handler error itself, so what gets here failed while
            # decoding the arguments (the accelerated protocol raises OverflowError for strings or
            # containers beyond the limit, TProtocolException/UnicodeDecodeError/... for bad bytes).
            too_big = (isinstance(exc, OverflowError) and "limit" in str(exc)) or \
                getattr(exc, "type", None) == TProtocolException.SIZE_LIMIT
            status = "too-large" if too_big else "bad-request"
            text = (f"Request for {name} exceeds the maximum message size ({exc})" if too_big
                    else f"Malformed request for {name}: {type(exc).__name__}: {exc}")
            self._reject(oprot, name, seqid, text)
            raise RequestRejected(text) from exc
        finally:
            elapsed = time.perf_counter() - start
            log_call(call_log, name, elapsed, status, iprot)
            metrics.record_call(name, elapsed, status)

    @staticmethod
    def _reject(oprot, name, seqid, text) -> None:
        log.warning("refusing a %s request: %s", name, text)
        # Drop any half-written reply (an error while encoding one) so the answer is a clean message.
        for attr in ("_TBufferedTransport__wbuf", "_TFramedTransport__wbuf"):
            if hasattr(oprot.trans, attr):
                setattr(oprot.trans, attr, io.BytesIO())
        try:
            _reply_error(oprot, name, seqid, TApplicationException.PROTOCOL_ERROR, text)
        except Exception:  # the peer may be gone already
            pass


class RequestRejected(Exception):
    """A request was answered with an error and the rest of its bytes cannot be trusted:
    the connection ends (after draining what the client still sends, so it reads the answer)."""


class _OversizedFrame(TTransport.TTransportException):
    def __init__(self, message: str, name: str | None, seqid: int):
        super().__init__(TTransport.TTransportException.SIZE_LIMIT, message)
        self.name, self.seqid = name, seqid


class _CountingSocket(TSocket.TSocket):
    """A client socket that refuses to read more than `limit` bytes for one message."""

    def __init__(self, sock: socket.socket, limit: int):
        super().__init__()
        self.setHandle(sock)
        self.limit = limit
        self.consumed = 0

    def read(self, sz):
        data = super().read(sz)
        self.consumed += len(data)
        if self.consumed > self.limit:
            raise TTransport.TTransportException(TTransport.TTransportException.SIZE_LIMIT,
                                                 "message exceeds the maximum size")
        return data


class _LimitedFramedTransport(TTransport.TFramedTransport):
    def __init__(self, trans, limit: int):
        super().__init__(trans)
        self.limit = limit

    def readFrame(self):
        import struct

        buff = self._TFramedTransport__trans.readAll(4)
        (sz,) = struct.unpack("!i", buff)
        if sz < 0 or sz > self.limit:
            name, seqid = self._peek_header(sz)
            raise _OversizedFrame(f"Request{' for ' + name if name else ''}: frame of {sz} bytes "
                                  f"exceeds the maximum message size of {self.limit}", name, seqid)
        self._TFramedTransport__rbuf = io.BytesIO(self._TFramedTransport__trans.readAll(sz))

    def _peek_header(self, sz: int) -> tuple[str | None, int]:
        """Method name and seqid from the start of a refused frame (strict binary header)."""
        import struct

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


class ThriftServer:
    def __init__(self, router: HandlerRouter, listen_sock: socket.socket, framed: bool = False,
                 max_message_size: int = 104_857_600):
        self.processor = MetastoreProcessor(router)
        self.listen_sock = listen_sock
        self.framed = framed
        self.max_message_size = max_message_size
        self.protocol = TBinaryProtocolAcceleratedFactory(
            string_length_limit=max_message_size, container_length_limit=max_message_size)
        self.stopping = threading.Event()
        self.active = 0
        self.active_lock = threading.Lock()

    def serve_forever(self) -> None:
        self.listen_sock.settimeout(0.5)
        while not self.stopping.is_set():
            try:
                client, addr = self.listen_sock.accept()
            except (TimeoutError, BlockingIOError, InterruptedError):
                continue
            except OSError:
                if self.stopping.is_set():
                    break
                raise
            client.settimeout(None)
            client.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            threading.Thread(target=self._serve_client, args=(client, addr), daemon=True).start()
        self._drain()

    def _serve_client(self, client: socket.socket, addr) -> None:
        sock = _CountingSocket(client, self.max_message_size)
        if self.framed:
            itrans = _LimitedFramedTransport(sock, self.max_message_size)
            otrans = TTransport.TFramedTransport(sock)
        else:
            itrans = TTransport.TBufferedTransport(sock)
            otrans = TTransport.TBufferedTransport(sock)
        iprot = self.protocol.getProtocol(itrans)
        oprot = self.protocol.getProtocol(otrans)
        try:
            while not self.stopping.is_set():
                sock.consumed = 0
                if not self._wait_readable(client, itrans):
                    break
                with self.active_lock:
                    self.active += 1
                try:
                    self.processor.process(iprot, oprot)
                finally:
                    with self.active_lock:
                        self.active -= 1
        except RequestRejected:
            _drain(client)
        except TTransport.TTransportException:
            pass  # peer closed
        except TProtocolException as exc:
            log.info("closing connection from %s: %s", addr, exc)
        except Exception:
            log.exception("connection from %s failed", addr)
        finally:
            try:
                client.close()
            except OSError:
                pass

    def _wait_readable(self, client: socket.socket, itrans) -> bool:
        """Block until the next request starts (or we stop); lets SIGTERM drain idle connections."""
        import select

        buffered = getattr(itrans, "_TBufferedTransport__rbuf", None) \
            or getattr(itrans, "_TFramedTransport__rbuf", None)
        if buffered is not None and buffered.tell() < len(buffered.getvalue()):
            return True
        while not self.stopping.is_set():
            ready, _, _ = select.select([client], [], [], 0.5)
            if ready:
                return True
        return False

    def stop(self) -> None:
        self.stopping.set()

    def _drain(self, timeout: float = 30.0) -> None:
        deadline = time.time() + timeout
        while time.time() < deadline:
            with self.active_lock:
                if self.active == 0:
                    return
            time.sleep(0.05)


def _drain(client: socket.socket, seconds: float = 5.0, idle: float = 1.0) -> None:
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


def bind(host: str, port: int) -> socket.socket:
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind((host, port))
    sock.listen(512)
    return sock


def run(make_router, host: str, port: int, workers: int = 1, framed: bool = False,
        max_message_size: int = 104_857_600, metrics_port: int = 0) -> None:
    """Serve until SIGTERM/SIGINT. `make_router()` is called in each worker process.

    metrics_port > 0: each worker answers GET /metrics (its own registry) on metrics_port + its slot
    (0 .. workers-1); the ports are bound here, before forking, so a busy port fails the start and
    a respawned worker takes over its slot's port."""
    listen_sock = bind(host, port)
    log.info("listening on %s:%d (%s transport, %d worker%s)", host, listen_sock.getsockname()[1],
             "framed" if framed else "buffered", workers, "" if workers == 1 else "s")
    metrics_socks = [metrics_http.bind(host, metrics_port + slot) for slot in range(max(workers, 1))] \
        if metrics_port > 0 else []

    def serve(slot: int) -> None:
        _run_worker(make_router, listen_sock, framed, max_message_size,
                    metrics_socks[slot] if metrics_socks else None)

    if workers <= 1:
        serve(0)
        return
    _supervise(workers, serve)
    listen_sock.close()


def _supervise(workers: int, serve: Callable[[int], None]) -> None:
    """Fork a worker process per slot running `serve(slot)`, start a new one when a worker exits,
    pass SIGTERM / SIGINT on to the workers and return once they are gone."""
    children: dict[int, int] = {}
    stopping = threading.Event()

    def spawn(slot: int) -> None:
        pid = os.fork()
        if pid == 0:
            signal.signal(signal.SIGTERM, signal.SIG_DFL)
            signal.signal(signal.SIGINT, signal.SIG_DFL)
            try:
                serve(slot)
            finally:
                os._exit(0)
        children[pid] = slot

    def on_signal(signum, _frame):
        stopping.set()
        for pid in list(children):
            try:
                os.kill(pid, signal.SIGTERM)
            except ProcessLookupError:
                pass

    signal.signal(signal.SIGTERM, on_signal)
    signal.signal(signal.SIGINT, on_signal)
    for slot in range(workers):
        spawn(slot)
    while children:
        try:
            pid, status = os.wait()
        except ChildProcessError:
            break
        except InterruptedError:
            continue
        exited_slot = children.pop(pid, None)
        if exited_slot is not None and not stopping.is_set():
            log.warning("worker %d exited (status %d); starting a new one", pid, status)
            spawn(exited_slot)


def _run_worker(make_router, listen_sock, framed, max_message_size, metrics_sock=None) -> None:
    server = ThriftServer(make_router(), listen_sock, framed, max_message_size)
    if metrics_sock is not None:
        metrics_http.serve_http(metrics_sock)

    def on_signal(signum, _frame):
        log.info("signal %d: finishing calls in flight, then stopping", signum)
        server.stop()

    signal.signal(signal.SIGTERM, on_signal)
    signal.signal(signal.SIGINT, on_signal)
    server.serve_forever()
    log.info("stopped")
