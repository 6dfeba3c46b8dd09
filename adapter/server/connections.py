"""One worker's connections: the accept loop with the connection cap, and one thread per
connection that waits for a request with poll() (no descriptor limit), reads it under the read
timeout and the in-flight budget, and answers it."""

from __future__ import annotations

import logging
import math
import select
import socket
import ssl
import threading
import time

from thrift.protocol.TBinaryProtocol import TBinaryProtocolAccelerated
from thrift.protocol.TProtocol import TProtocolException
from thrift.transport import TTransport

from adapter import identity
from adapter.router import HandlerRouter
from adapter.security import login_backoff, sasl
from adapter.security.settings import ConnectionSecurity
from adapter.server.budget import InflightBudget
from adapter.server.limits import Limits
from adapter.server.logtext import one_line
from adapter.server.memory_release import MemoryRelease
from adapter.server.processor import MetastoreProcessor, ReplyProtocol, RequestRejected, unsolicited_error
from adapter.server.transport import (
    BufferedTransport,
    ClientSocket,
    LimitedFramedTransport,
    ReplyTransport,
    drain,
    has_buffered_input,
)
from store import metrics

log = logging.getLogger("hudi_metastore.server")

REFUSE_GRACE_S = 0.2  # a worker at its cap leaves new connections this long to the other workers
OPEN_GAUGE = "hms_connections_open"
REFUSED = "hms_connections_refused"
LOGINS_FAILED = "hms_logins_failed"
LOGINS_DELAYED = "hms_logins_delayed"  # refused while the address waits after failed log-ins


class _Connection:
    __slots__ = ("sock", "addr", "idle")

    def __init__(self, sock: socket.socket, addr):
        self.sock, self.addr, self.idle = sock, addr, False


class _Burst:
    """Logs refusals once per burst: when they start, and how many when they end."""

    def __init__(self, what: str):
        self.what, self.count, self.since = what, 0, 0.0

    def hit(self, detail: str) -> None:
        if self.count == 0:
            self.since = time.monotonic()
            log.warning("%s: %s", self.what, detail)
        self.count += 1

    def end(self) -> None:
        if self.count:
            log.warning("%s: %d in %.1f s", self.what, self.count, time.monotonic() - self.since)
            self.count = 0


class ThriftServer:
    def __init__(self, router: HandlerRouter, listen_sock: socket.socket, limits: Limits | None = None,
                 security: ConnectionSecurity | None = None):
        self.processor = MetastoreProcessor(router)
        self.security = security or ConnectionSecurity()
        self.ssl_context = self.security.ssl_context()
        self.exchanges = self.security.exchanges(getattr(router, "delegation_tokens", None))
        self.logins = login_backoff.LoginBackoff()  # failed log-ins per client address
        self.memory = MemoryRelease()  # what a large request took, given back
        self.listen_sock = listen_sock
        self.limits = limits or Limits()
        self.budget = InflightBudget(self.limits.inflight_bytes, self.limits.read_timeout or 60.0)
        self.stopping = threading.Event()
        self.active = 0  # calls in flight
        self._lock = threading.Lock()
        self._open: dict[_Connection, None] = {}
        self._refusals = _Burst("connection cap reached, new connections refused")
        self._closing = _Closing()
        self._refusal = unsolicited_error(
            f"The metastore is at its connection limit ({self.limits.max_connections} per process, "
            "--max-connections): connection refused, retry later", framed=self.limits.framed)
        self._accept_errors = _Burst("accepting connections failed")

    # --- accept loop ------------------------------------------------------------------------------

    def serve_forever(self) -> None:
        self.listen_sock.settimeout(0.5)
        while not self.stopping.is_set():
            self._closing.sweep()
            if self.open_connections() >= self.limits.max_connections:
                self._refuse_pending()
                continue
            try:
                client, addr = self.listen_sock.accept()
            except (TimeoutError, BlockingIOError, InterruptedError):
                continue
            except OSError as exc:  # out of descriptors or memory, a connection reset while queued
                if self.stopping.is_set():
                    break
                self._accept_errors.hit(str(exc))
                self.stopping.wait(0.1)
                continue
            self._accept_errors.end()
            self._refusals.end()
            self._start(client, addr)
        self._close_idle()
        self._drain()

    def open_connections(self) -> int:
        with self._lock:
            return len(self._open)

    def _refuse_pending(self) -> None:
        """At the cap: when a connection is still waiting after the grace (no other worker took
        it), accept it and close it at once, and the others waiting with it."""
        if not _readable(self.listen_sock, 0.5) or self.stopping.wait(REFUSE_GRACE_S):
            return
        while self.open_connections() >= self.limits.max_connections and _readable(self.listen_sock, 0):
            try:
                client, _addr = self.listen_sock.accept()
            except OSError:
                return
            self._closing.add(client, self._refusal)
            metrics.incr(REFUSED)
            self._refusals.hit(f"{self.limits.max_connections} open (--max-connections)")

    def _start(self, client: socket.socket, addr) -> None:
        conn = _Connection(client, addr)
        with self._lock:
            self._open[conn] = None
            metrics.set_gauge(OPEN_GAUGE, len(self._open))
        try:
            threading.Thread(target=self._serve_client, args=(conn,), daemon=True).start()
        except RuntimeError as exc:  # no more threads
            log.warning("cannot serve a connection from %s: %s", addr, exc)
            self._forget(conn)

    def _forget(self, conn: _Connection) -> None:
        try:
            conn.sock.close()
        except OSError:
            pass
        with self._lock:
            self._open.pop(conn, None)
            metrics.set_gauge(OPEN_GAUGE, len(self._open))

    # --- one connection ---------------------------------------------------------------------------

    def _serve_client(self, conn: _Connection) -> None:
        try:
            self._serve_secured(conn)
        finally:
            identity.forget()
            self._forget(conn)

    def _serve_secured(self, conn: _Connection) -> None:
        """TLS and the SASL handshake, when configured, before the first request; each failure
        closes the connection with a log line (and, for SASL, the reason sent to the client)."""
        conn.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        conn.sock.settimeout(self.limits.read_timeout or None)  # while a request is read or answered
        if self.ssl_context is not None and not self._start_tls(conn):
            return
        limit = self.limits.max_message_size
        sock = ClientSocket(conn.sock, limit, self.budget)
        if self.security.sasl:
            key = login_backoff.client_key(conn.addr)
            wait = self.logins.wait_left(key)
            if wait > 0:  # refused without looking at the credentials
                sasl.refuse(sock, f"too many failed log-ins from {key}: try again in {math.ceil(wait)} s")
                metrics.incr(LOGINS_DELAYED)
                log.warning("closing connection from %s: log-in refused for %.1f s more after failed log-ins",
                            conn.addr, wait)
                drain(conn.sock, seconds=2.0)
                return
            waits: list[float] = []

            def failed(exc: sasl.HandshakeRefused) -> None:  # recorded before the client is told
                if isinstance(exc, sasl.CredentialsRefused):
                    metrics.incr(LOGINS_FAILED)
                    waits.append(self.logins.failed(key))
            try:
                who = sasl.negotiate(sock, self.exchanges, failed)
            except sasl.HandshakeRefused as exc:
                if isinstance(exc, sasl.NotSasl):
                    _answer_plain(conn.sock, unsolicited_error(str(exc), framed=exc.framed))
                later = f" (next log-in from {key} in {waits[0]:g} s)" if waits and waits[0] > 0 else ""
                log.warning("closing connection from %s: SASL authentication refused: %s%s",
                            conn.addr, one_line(str(exc)), later)
                drain(conn.sock, seconds=2.0)
                return
            self.logins.succeeded(key)
            identity.bind_authenticated(who.user, who.mechanism, who.principal)
            log.info("connection from %s authenticated as %s (%s)", conn.addr, who.principal, who.mechanism)
        self._serve_requests(conn, sock, framed=self.limits.framed or self.security.sasl)

    def _start_tls(self, conn: _Connection) -> bool:
        """The TLS handshake; a client that starts with anything but a TLS record (a plaintext
        Thrift client) is answered in plaintext Thrift that TLS is required."""
        assert self.ssl_context is not None
        try:
            first = conn.sock.recv(1, socket.MSG_PEEK)
            if not first:  # closed without a byte: a port probe
                return False
            if first != TLS_HANDSHAKE_RECORD:
                _answer_plain(conn.sock, unsolicited_error(
                    "this metastore accepts TLS connections only (configure the client's TLS settings, "
                    "e.g. hive.metastore.use.SSL=true; docs/security.md)", framed=first == b"\0"))
                log.warning("closing connection from %s: a plaintext client on the TLS port", conn.addr)
                drain(conn.sock, seconds=2.0)
                return False
            conn.sock = self.ssl_context.wrap_socket(conn.sock, server_side=True)
            return True
        except (ssl.SSLError, OSError) as exc:
            log.warning("closing connection from %s: TLS handshake failed: %s", conn.addr, one_line(str(exc)))
            return False

    def _serve_requests(self, conn: _Connection, sock: ClientSocket, framed: bool) -> None:
        client, limit = conn.sock, self.limits.max_message_size
        if framed:  # SASL's messages after the handshake are frames (QOP auth: unwrapped)
            itrans: TTransport.TTransportBase = LimitedFramedTransport(sock, limit)
            otrans: TTransport.TTransportBase = TTransport.TFramedTransport(sock)
        else:
            itrans, otrans = BufferedTransport(sock), ReplyTransport(sock)
        iprot = TBinaryProtocolAccelerated(itrans, string_length_limit=limit, container_length_limit=limit)
        oprot = ReplyProtocol(otrans, string_length_limit=limit, container_length_limit=limit)
        poller = select.poll()
        poller.register(client, select.POLLIN | select.POLLPRI)
        try:
            while self._wait_request(conn, itrans, poller):
                self._one_request(sock, iprot, oprot)
        except RequestRejected:
            drain(client)
        except TTransport.TTransportException as exc:
            if exc.type == TTransport.TTransportException.TIMED_OUT:
                log.info("closing connection from %s: stalled in a request header for %g s",
                         conn.addr, self.limits.read_timeout)
        except TProtocolException as exc:
            log.info("closing connection from %s: %s", conn.addr, one_line(str(exc)))
        except (EOFError, ConnectionError):
            pass
        except Exception:
            log.exception("connection from %s failed", conn.addr)

    def _one_request(self, sock: ClientSocket, iprot, oprot) -> None:
        with self._lock:
            self.active += 1
        sock.start_request()
        start = time.monotonic()
        try:
            self.processor.process(iprot, oprot)
        finally:
            sock.end_request()
            with self._lock:
                self.active -= 1
            self.memory.after_request(time.monotonic() - start, sock.consumed)

    def _wait_request(self, conn: _Connection, itrans, poller) -> bool:
        """Block until the next request starts; False when the server stops, the client closes or
        it stays idle beyond --idle-timeout (stop() wakes idle connections by shutting them down)."""
        if has_buffered_input(itrans) or (isinstance(conn.sock, ssl.SSLSocket) and conn.sock.pending()):
            return not self.stopping.is_set()
        with self._lock:
            conn.idle = True
        try:
            if self.stopping.is_set():
                return False
            idle = self.limits.idle_timeout
            if not poller.poll(idle * 1000 if idle > 0 else None):
                log.info("closing connection from %s: idle for %g s", conn.addr, idle)
                return False
            return not self.stopping.is_set()
        finally:
            with self._lock:
                conn.idle = False

    # --- stopping ---------------------------------------------------------------------------------

    def stop(self) -> None:
        """Safe in a signal handler: the accept loop closes idle connections within 0.5 s."""
        self.stopping.set()

    def _close_idle(self) -> None:
        with self._lock:
            for conn in self._open:
                if conn.idle:
                    try:
                        conn.sock.shutdown(socket.SHUT_RDWR)
                    except OSError:
                        pass

    def _drain(self, timeout: float = 30.0) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            with self._lock:
                if self.active == 0:
                    return
            time.sleep(0.05)


TLS_HANDSHAKE_RECORD = b"\x16"


def _answer_plain(sock: socket.socket, answer: bytes) -> None:
    try:
        sock.sendall(answer)
    except OSError:
        pass


class _Closing:
    """Refused connections: told why, then closed once the client has had a second to read it
    (closing with its request unread would reset the connection and lose the answer)."""

    LINGER_S = 1.0
    MAX = 1024

    def __init__(self):
        self._socks: list[tuple[float, socket.socket]] = []

    def add(self, client: socket.socket, answer: bytes) -> None:
        try:
            client.setblocking(False)
            client.send(answer)
            client.shutdown(socket.SHUT_WR)
        except OSError:
            client.close()
            return
        if len(self._socks) >= self.MAX:
            self._socks.pop(0)[1].close()
        self._socks.append((time.monotonic() + self.LINGER_S, client))

    def sweep(self) -> None:
        now, keep = time.monotonic(), []
        for deadline, client in self._socks:
            if now < deadline and _discard_input(client):
                keep.append((deadline, client))
            else:
                client.close()
        self._socks = keep


def _discard_input(client: socket.socket) -> bool:
    """Read what a refused client sent; False once it closed."""
    try:
        while True:
            if not client.recv(65536):
                return False
    except BlockingIOError:
        return True
    except OSError:
        return False


def _readable(sock: socket.socket, timeout: float) -> bool:
    poller = select.poll()
    poller.register(sock, select.POLLIN)
    return bool(poller.poll(timeout * 1000))
