"""The Prometheus endpoint: `GET /metrics` answered from the process's metrics registry."""

from __future__ import annotations

import logging
import socket
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import cast

from store.metrics import Registry, registry

log = logging.getLogger(__name__)


class _Handler(BaseHTTPRequestHandler):
    server_version = "hudi-metastore-metrics"
    protocol_version = "HTTP/1.1"
    timeout = 30  # seconds a scrape connection may stall before it is closed (no thread held forever)

    def do_GET(self):  # http.server's name
        path = self.path.split("?", 1)[0]
        if path not in ("/metrics", "/metrics/"):
            body, status, ctype = b"not found; try /metrics\n", 404, "text/plain; charset=utf-8"
        else:
            reg = cast("MetricsServer", self.server).registry
            body, status = reg.render().encode("utf-8"), 200
            ctype = "text/plain; version=0.0.4; charset=utf-8"
        self.send_response(status)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, fmt, *args):  # scrapes are not worth a log line each
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
    """Answer /metrics on `sock` (bound and listening) from a daemon thread; `.shutdown()` stops it."""
    server = MetricsServer(sock, reg or registry)
    threading.Thread(target=server.serve_forever, name="metrics-http", daemon=True).start()
    log.info("metrics on http://%s:%d/metrics", *sock.getsockname()[:2])
    return server
