"""The wire fuzz campaign: `python -m bench.fuzz --messages 24000`.

Starts a server (SQLite, one worker) unless --port names a running one, sends mutated Thrift
messages (bench/wire_fuzz.py) in batches, and after each batch checks that the server answers a
normal call and its resident memory stays under a bound. Prints one JSON line per batch and a
summary; exit status 1 when any message broke the rules (listed) or the server failed.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path

from bench.server_proc import start_server, stop_server
from bench.wire_fuzz import campaign, rss_kb


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.fuzz", description=__doc__)
    parser.add_argument("--messages", type=int, default=24_000)
    parser.add_argument("--seed", type=int, default=19)
    parser.add_argument("--batch", type=int, default=1_000)
    parser.add_argument("--rss-growth-mb", type=int, default=200,
                        help="allowed growth of the server's resident memory over its start (MB)")
    parser.add_argument("--port", type=int, help="fuzz a running server instead (give --pid for memory)")
    parser.add_argument("--pid", type=int, action="append", default=[])
    args = parser.parse_args(argv)

    server = None
    if args.port is None:
        workdir = Path(tempfile.mkdtemp(prefix="hms-fuzz-"))
        server = start_server(f"sqlite:///{workdir / 'metastore.db'}", workdir)
        port, pids = server.port, [server.pid]
    else:
        port, pids = args.port, args.pid
    try:
        base = sum(rss_kb(pid) for pid in pids)
        limit = base + args.rss_growth_mb * 1024 if pids else None
        start = time.monotonic()
        report = None
        for report in campaign(port, pids, args.messages, args.seed, args.batch, limit):
            print(json.dumps({"batch": report.batches, **report.summary()}), flush=True)
        assert report is not None
        summary = {**report.summary(), "seconds": round(time.monotonic() - start, 1),
                   "start_rss_mb": round(base / 1024, 1), "seed": args.seed}
        print(json.dumps({"summary": summary}))
        for line in report.violations[:50]:
            print("VIOLATION", line)
        if server is not None and "Traceback" in server.log():
            print("the server logged a traceback; see", server.log_path)
            return 1
        return 1 if report.violations else 0
    finally:
        if server is not None:
            stop_server(server)


if __name__ == "__main__":
    sys.exit(main())
