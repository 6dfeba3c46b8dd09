"""Worker processes: N processes share one listening socket (`--workers`), a supervisor starts a
new one when one exits and passes SIGTERM / SIGINT on."""

from __future__ import annotations

import logging
import os
import signal
import socket
import threading
from collections.abc import Callable

from adapter import metrics_http
from adapter.server.connections import ThriftServer
from adapter.server.limits import Limits, fit_connections, raise_open_files_limit
from adapter.server.logtext import install_safe_formatter

log = logging.getLogger("hudi_metastore.server")


def bind(host: str, port: int) -> socket.socket:
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind((host, port))
    sock.listen(4096)  # the kernel caps it at net.core.somaxconn
    return sock


def run(make_router, host: str, port: int, workers: int = 1, limits: Limits | None = None,
        metrics_port: int = 0, security=None) -> None:
    """Serve until SIGTERM/SIGINT. `make_router()` is called in each worker process.

    metrics_port > 0: each worker answers GET /metrics (its own registry) on metrics_port + its slot
    (0 .. workers-1); the ports are bound here, before forking, so a busy port fails the start and
    a respawned worker takes over its slot's port."""
    install_safe_formatter()
    limits = fit_connections(limits or Limits(), raise_open_files_limit())
    listen_sock = bind(host, port)
    log.info("listening on %s:%d (%s transport, %d worker%s, up to %d connections each, read timeout "
             "%g s, %d bytes of requests in flight)", host, listen_sock.getsockname()[1],
             "framed" if limits.framed else "buffered", workers, "" if workers == 1 else "s",
             limits.max_connections, limits.read_timeout, limits.inflight_bytes)
    metrics_host = metrics_http.access().host  # loopback unless --metrics-host says otherwise
    metrics_socks = [metrics_http.bind(metrics_host, metrics_port + slot) for slot in range(max(workers, 1))] \
        if metrics_port > 0 else []

    def serve(slot: int) -> None:
        _run_worker(make_router, listen_sock, limits, metrics_socks[slot] if metrics_socks else None, security)

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


def _run_worker(make_router, listen_sock: socket.socket, limits: Limits, metrics_sock=None, security=None) -> None:
    server = ThriftServer(make_router(), listen_sock, limits, security)
    if metrics_sock is not None:
        metrics_http.serve_http(metrics_sock)

    def on_signal(signum, _frame):
        log.info("signal %d: finishing calls in flight, then stopping", signum)
        server.stop()

    signal.signal(signal.SIGTERM, on_signal)
    signal.signal(signal.SIGINT, on_signal)
    server.serve_forever()
    log.info("stopped")
