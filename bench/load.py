"""The connection load test: `python -m bench.load` (default 2,000 connections, `--workers 2`).

Starts a server (SQLite) unless --port names a running one, opens N connections and keeps them
open, makes one call on every one of them at once (twice), and while they are all open checks that
new clients are still served. Prints one JSON report: how many connections were opened, how many
calls were answered in each round, how many new clients were served, how the connections spread
over the workers, and the server's resident memory. Exit status 1 when a call or a new client
went unanswered.
"""

from __future__ import annotations

import argparse
import json
import resource
import selectors
import socket
import sys
import tempfile
import time
from pathlib import Path

from bench.server_proc import start_server, stop_server
from bench.wire_fuzz import encode, read_reply, rss_kb, server_answers
from thrift_idl.hive_metastore import ThriftHiveMetastore as T


def _raise_fd_limit(need: int) -> None:
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft < need:
        target = need if hard == resource.RLIM_INFINITY else min(need, hard)
        resource.setrlimit(resource.RLIMIT_NOFILE, (target, hard))


def open_connections(port: int, n: int) -> list[socket.socket]:
    socks = []
    for _ in range(n):
        s = socket.create_connection(("127.0.0.1", port), timeout=30)
        socks.append(s)
    return socks


def call_all(socks: list[socket.socket], seqid: int, timeout: float = 120.0) -> int:
    """One get_all_databases on every connection at once; how many were answered."""
    request = encode("get_all_databases", T.get_all_databases_args(), seqid)
    sel = selectors.DefaultSelector()
    buffers: dict[socket.socket, bytes] = {}
    for s in socks:
        s.setblocking(True)
        s.settimeout(30)
        s.sendall(request)
        s.setblocking(False)
        sel.register(s, selectors.EVENT_READ)
        buffers[s] = b""
    answered = 0
    deadline = time.monotonic() + timeout
    while buffers and time.monotonic() < deadline:
        for key, _ in sel.select(timeout=1.0):
            s = key.fileobj
            assert isinstance(s, socket.socket)
            try:
                chunk = s.recv(65536)
            except (BlockingIOError, InterruptedError):
                continue
            except OSError:
                chunk = b""
            buffers[s] += chunk
            reply = read_reply(buffers[s])
            if reply is not None or not chunk:
                answered += reply is not None and reply[2] == seqid
                sel.unregister(s)
                del buffers[s]
    sel.close()
    return answered


def new_clients(port: int, n: int) -> tuple[int, float]:
    """(how many of n new clients were served, the slowest one's seconds)."""
    served, slowest = 0, 0.0
    for _ in range(n):
        t0 = time.monotonic()
        served += server_answers(port)
        slowest = max(slowest, time.monotonic() - t0)
    return served, slowest


def connections_per_process(pids: list[int]) -> dict[int, int]:
    """Open TCP sockets per process (its descriptors that are sockets)."""
    out = {}
    for pid in pids:
        try:
            fds = list(Path(f"/proc/{pid}/fd").iterdir())
        except OSError:
            continue
        out[pid] = sum(1 for fd in fds if _is_socket(fd))
    return out


def _is_socket(fd: Path) -> bool:
    try:
        return fd.readlink().name.startswith("socket:")
    except OSError:
        return False


def run_load(port: int, pids: list[int], connections: int, new: int) -> dict:
    _raise_fd_limit(connections + 500)
    t0 = time.monotonic()
    socks = open_connections(port, connections)
    report: dict = {"connections": connections, "opened": len(socks),
                    "open_seconds": round(time.monotonic() - t0, 1)}
    try:
        t1 = time.monotonic()
        report["round1_answered"] = call_all(socks, 1)
        report["round1_seconds"] = round(time.monotonic() - t1, 1)
        report["new_clients_served"], slowest = new_clients(port, new)
        report["new_clients"] = new
        report["new_client_slowest_seconds"] = round(slowest, 2)
        t2 = time.monotonic()
        report["round2_answered"] = call_all(socks, 2)
        report["round2_seconds"] = round(time.monotonic() - t2, 1)
        report["sockets_per_process"] = connections_per_process(pids)
        report["server_rss_mb"] = round(sum(rss_kb(pid) for pid in pids) / 1024, 1)
    finally:
        for s in socks:
            s.close()
    report["served_after_close"] = server_answers(port)
    return report


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.load", description=__doc__)
    parser.add_argument("--connections", type=int, default=2_000)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--new-clients", type=int, default=20)
    parser.add_argument("--port", type=int, help="load a running server instead (give --pid for memory)")
    parser.add_argument("--pid", type=int, action="append", default=[])
    parser.add_argument("--serve-arg", action="append", default=[], help="extra `serve` flag (repeat)")
    args = parser.parse_args(argv)

    server = None
    if args.port is None:
        workdir = Path(tempfile.mkdtemp(prefix="hms-load-"))
        server = start_server(f"sqlite:///{workdir / 'metastore.db'}", workdir,
                              ("--workers", str(args.workers), *args.serve_arg))
        time.sleep(1.0)  # the workers fork after the port opens
        port, pids = server.port, server.process_ids()
    else:
        port, pids = args.port, args.pid
    try:
        report = run_load(port, pids, args.connections, args.new_clients)
        report["workers"] = args.workers if server else None
        if server is not None:
            log = server.log()
            report["server_tracebacks"] = log.count("Traceback")
            report["server_refusals_logged"] = log.count("new connections refused")
        print(json.dumps(report, indent=1))
        ok = (report["round1_answered"] == report["round2_answered"] == args.connections
              and report["new_clients_served"] == args.new_clients and report["served_after_close"])
        return 0 if ok else 1
    finally:
        if server is not None:
            stop_server(server)


if __name__ == "__main__":
    sys.exit(main())
