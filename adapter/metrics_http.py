"""The worker's HTTP port (`serve --metrics-port`): `/metrics` (Prometheus text from the process's
registry), `/healthz` (the process answers), `/readyz` (its database answers with the schema this
version needs) and the read-only web console (adapter/console/, front page `/`).

The Thrift server binds and serves the port (adapter/server.py); what it answers beyond /metrics
comes from the worker's services, attached once per worker process with `attach()`."""

from __future__ import annotations

import hmac
import logging
import os
import socket
import ssl
import threading
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import TYPE_CHECKING, cast

from store.metrics import Registry, registry

if TYPE_CHECKING:
    from adapter.console.app import Console
    from adapter.readiness import Readiness

log = logging.getLogger(__name__)
TEXT = "text/plain; charset=utf-8"


TOKEN_ENV = "HUDI_METASTORE_METRICS_TOKEN"


@dataclass(frozen=True)
class HttpAccess:
    """Who may reach the HTTP port: the address it binds (loopback unless an admin says otherwise),
    TLS (certificate and key files) and a bearer token every request but /healthz must carry."""

    host: str = "127.0.0.1"
    token: str | None = None
    certfile: str | None = None
    keyfile: str | None = None

    @classmethod
    def from_settings(cls, host: str, token_file: str | None, certfile: str | None, keyfile: str | None,
                      environ=os.environ) -> HttpAccess:
        """From `serve`'s settings; ValueError says what is wrong (a token twice, a key without a cert)."""
        token = environ.get(TOKEN_ENV) or None
        if token_file:
            if token:
                raise ValueError(f"the metrics token is given twice ({TOKEN_ENV} and --metrics-token-file)")
            with open(token_file, encoding="utf-8") as f:
                token = f.read().strip() or None
            if token is None:
                raise ValueError(f"--metrics-token-file {token_file} is empty")
        if bool(certfile) != bool(keyfile):
            raise ValueError("--metrics-tls-cert and --metrics-tls-key go together")
        access = cls(host or "127.0.0.1", token, certfile or None, keyfile or None)
        access.tls_context()  # unreadable or mismatched files fail the start, not the first scrape
        return access

    def tls_context(self) -> ssl.SSLContext | None:
        if not self.certfile:
            return None
        ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        ctx.minimum_version = ssl.TLSVersion.TLSv1_2
        ctx.load_cert_chain(self.certfile, self.keyfile)
        return ctx


class _Access:
    current = HttpAccess()


def configure(access: HttpAccess) -> None:
    """Set before the port is bound (and before worker processes fork)."""
    _Access.current = access


def access() -> HttpAccess:
    return _Access.current


class _Attached:
    """What this worker process serves besides /metrics (set by `attach`, read by the handler)."""

    readiness: Readiness | None = None
    console: Console | None = None


def attach(readiness: Readiness | None, console: Console | None = None) -> None:
    """Called in each worker process once its services exist (before its HTTP port answers)."""
    _Attached.readiness, _Attached.console = readiness, console


class _Handler(BaseHTTPRequestHandler):
    server_version = "hudi-metastore"
    protocol_version = "HTTP/1.1"
    timeout = 30  # seconds a scrape connection may stall before it is closed (no thread held forever)

    def do_GET(self):  # http.server's name
        path, _, query = self.path.partition("?")
        if path != "/healthz" and not self._authorized():
            return
        if path in ("/metrics", "/metrics/"):
            reg = cast("MetricsServer", self.server).registry
            self._send(200, "text/plain; version=0.0.4; charset=utf-8", reg.render().encode("utf-8"))
        elif path == "/healthz":
            self._send(200, TEXT, b"ok\n")
        elif path == "/readyz":
            self._readyz()
        elif _Attached.console is not None:
            status, ctype, body = _Attached.console.get(path, query)
            self._send(status, ctype, body)
        else:
            self._send(404, TEXT, b"not found; try /metrics, /healthz or /readyz\n")

    def _authorized(self) -> bool:
        """With a token configured, every request but /healthz carries `Authorization: Bearer <token>`."""
        token = cast("MetricsServer", self.server).access.token
        if token is None:
            return True
        given = self.headers.get("Authorization", "")
        scheme, _, value = given.partition(" ")
        if scheme.lower() == "bearer" and hmac.compare_digest(value.strip().encode(), token.encode()):
            return True
        body = b"unauthorized: send Authorization: Bearer <token>\n"
        self.send_response(401)
        self.send_header("WWW-Authenticate", 'Bearer realm="hudi-metastore"')
        self.send_header("Content-Type", TEXT)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)
        return False

    def _readyz(self) -> None:
        if _Attached.readiness is None:
            self._send(503, TEXT, b"not ready: no store attached\n")
            return
        status = _Attached.readiness.status()
        text = f"{'ready' if status.ready else 'not ready'}: {status.detail}\n"
        self._send(200 if status.ready else 503, TEXT, text.encode("utf-8"))

    def _send(self, status: int, ctype: str, body: bytes) -> None:
        self.send_response(status)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(body)))
        self.send_header("Cache-Control", "no-store")
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, fmt, *args):  # scrapes and probes are not worth a log line each
        log.debug("%s %s", self.address_string(), fmt % args)


class MetricsServer(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self, sock: socket.socket, reg: Registry):
        super().__init__(sock.getsockname()[:2], _Handler, bind_and_activate=False)
        self.socket.close()
        self.socket = sock  # bound (and listening) by the caller, possibly before a fork
        self.server_address = sock.getsockname()
        self.registry = reg
        self.access = access()
        self._tls = self.access.tls_context()

    def finish_request(self, request, client_address):
        """The TLS handshake runs in the request's own thread (a stalled client holds only it)."""
        if self._tls is not None:
            request.settimeout(_Handler.timeout)
            try:
                request = self._tls.wrap_socket(request, server_side=True)
            except (ssl.SSLError, OSError) as exc:
                log.debug("TLS handshake with %s failed: %s", client_address, exc)
                return
        super().finish_request(request, client_address)


def bind(host: str, port: int) -> socket.socket:
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind((host, port))
    sock.listen(64)
    return sock


def serve_http(sock: socket.socket, reg: Registry | None = None) -> MetricsServer:
    """Answer on `sock` (bound and listening) from a daemon thread; `.shutdown()` stops it."""
    server = MetricsServer(sock, reg or registry)
    threading.Thread(target=server.serve_forever, name="metrics-http", daemon=True).start()
    log.info("HTTP on %s://%s:%d/ (/metrics, /healthz, /readyz, web console)%s",
             "https" if server.access.certfile else "http", *sock.getsockname()[:2],
             "; a bearer token is required" if server.access.token else "")
    return server
