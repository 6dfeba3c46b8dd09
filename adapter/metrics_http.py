"""The worker's HTTP port (`serve --metrics-port`): `/metrics` (Prometheus text from the process's
registry), `/healthz` (the process answers), `/readyz` (its database answers with the schema this
version needs) and the read-only web console (adapter/console/, front page `/`).

The Thrift server binds and serves the port (adapter/server.py); what it answers beyond /metrics
comes from the worker's services, attached once per worker process with `attach()`."""

from __future__ import annotations

import logging
import socket
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import TYPE_CHECKING, cast

from store.metrics import Registry, registry

if TYPE_CHECKING:
    from adapter.console.app import Console
    from adapter.readiness import Readiness

log = logging.getLogger(__name__)
TEXT = "text/plain; charset=utf-8"


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
    log.info("HTTP on http://%s:%d/ (/metrics, /healthz, /readyz, web console)", *sock.getsockname()[:2])
    return server
