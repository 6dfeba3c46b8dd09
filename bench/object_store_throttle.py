"""Write throughput of one job under the `hive` and `object-store` storage layouts (RFC-60) against
an S3-compatible store that throttles per prefix, as S3 does.

    python -m bench.object_store_throttle [--files 600] [--writers 16] [--rate 20] [--prefix-depth 2]
                                          [--prefix-chars 0] [--layouts hive,object-store] [--json out.json]

The store is moto's server (loopback, a child process) behind a small throttling layer: every key
prefix (the key up to its `--prefix-depth`-th `/`: `warehouse/t/`, `data/3fa2c1b0/`; with
`--prefix-chars N` only N characters of that last segment, as S3 splits a busy prefix) gets a token
bucket of `--rate` writes (PUT, POST, DELETE) per second, S3's 3,500 writes/s per prefix scaled
down; a write over the budget is answered `503 SlowDown`, as S3 answers it. The job writes
`--files` Parquet base files (one file group each, over 10 partitions) with `--writers` concurrent
writers, as executors would, at the paths the table's storage strategy gives
(hudi_format/storage_strategy.py): all under `warehouse/t/` with `hive`, spread over hashed
prefixes under `data/` with `object-store`. Clients (botocore, s3fs) retry SlowDown with backoff;
a file whose retries ran out is written again by the job (counted). Printed: files/s per layout,
throttled requests, and the ratio object-store / hive.
"""

from __future__ import annotations

import argparse
import io
import json
import os
import subprocess
import sys
import threading
import time
import uuid
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from bench.procs import free_port

WRITES = ("PUT", "POST", "DELETE")
SLOW_DOWN = (b'<?xml version="1.0" encoding="UTF-8"?>\n<Error><Code>SlowDown</Code>'
             b"<Message>Please reduce your request rate.</Message></Error>")
PARTITIONS = 10


def log(msg: str) -> None:
    print(f"[{time.strftime('%H:%M:%S')}] {msg}", file=sys.stderr, flush=True)


# --------------------------------------------------------------------------- the throttled store


class PrefixThrottle:
    """Token buckets of `rate` writes per second (burst: one second's worth) per key prefix."""

    def __init__(self, rate: float, depth: int, chars: int = 0):
        self.rate, self.depth, self.chars = rate, depth, chars
        self.buckets: dict[str, tuple[float, float]] = {}  # prefix -> (tokens, last refill)
        self.lock = threading.Lock()
        self.allowed = 0
        self.throttled = 0
        self.per_prefix: dict[str, int] = {}

    def prefix(self, path: str) -> str | None:
        """The throttled prefix of a request path `/<bucket>/<key>`; None for bucket-level requests."""
        parts = path.lstrip("/").split("/", 1)
        if len(parts) < 2 or not parts[1]:
            return None
        segments = parts[1].split("/")
        if len(segments) <= self.depth:
            return parts[1].rpartition("/")[0]
        if self.chars:  # S3 splits a busy prefix on its next characters: `data/3` of `data/3fa2c1b0/`
            return "/".join(segments[:self.depth - 1] + [segments[self.depth - 1][:self.chars]])
        return "/".join(segments[:self.depth]) + "/"

    def admit(self, method: str, path: str) -> bool:
        if method not in WRITES:
            return True
        prefix = self.prefix(path)
        if prefix is None:
            return True
        now = time.monotonic()
        with self.lock:
            tokens, last = self.buckets.get(prefix, (self.rate, now))
            tokens = min(self.rate, tokens + (now - last) * self.rate)
            if tokens < 1:
                self.buckets[prefix] = (tokens, now)
                self.throttled += 1
                return False
            self.buckets[prefix] = (tokens - 1, now)
            self.allowed += 1
            self.per_prefix[prefix] = self.per_prefix.get(prefix, 0) + 1
            return True

    def stats(self) -> dict:
        with self.lock:
            busiest = max(self.per_prefix.values(), default=0)
            mean = self.allowed / len(self.per_prefix) if self.per_prefix else 0.0
            return {"writes": self.allowed, "throttled": self.throttled, "prefixes": len(self.per_prefix),
                    "busiest_prefix_writes": busiest, "busiest_over_mean": round(busiest / mean, 2) if mean else 0.0}

    def reset(self) -> None:
        with self.lock:
            self.buckets.clear()
            self.per_prefix.clear()
            self.allowed = self.throttled = 0


def serve(port: int, rate: float, depth: int, chars: int = 0, latency_ms: float = 0.0) -> None:
    """moto on 127.0.0.1:port behind the throttle (WSGI middleware: the proxy); `GET /__throttle`
    answers its counters, `POST /__throttle` resets them. `latency_ms`: each request to the store
    waits that long before it is answered (S3's first-byte latency; requests wait concurrently)."""
    import logging

    from moto.server import ThreadedMotoServer

    logging.getLogger("werkzeug").setLevel(logging.ERROR)  # no line per request
    server = ThreadedMotoServer(ip_address="127.0.0.1", port=port, verbose=False)
    server.start()
    throttle = PrefixThrottle(rate, depth, chars)
    app = server._server.app

    def throttled(environ, start_response):
        method, path = environ["REQUEST_METHOD"], environ.get("PATH_INFO", "")
        if path == "/__throttle":
            if method == "POST":
                throttle.reset()
            body = json.dumps(throttle.stats()).encode()
            start_response("200 OK", [("Content-Type", "application/json"), ("Content-Length", str(len(body)))])
            return [body]
        if latency_ms:
            time.sleep(latency_ms / 1000)
        if not throttle.admit(method, path):
            stream = environ.get("wsgi.input")
            length = int(environ.get("CONTENT_LENGTH") or 0)
            if stream is not None and length:
                stream.read(length)  # drain the body, as S3 does before answering
            start_response("503 Slow Down", [("Content-Type", "application/xml"),
                                              ("Content-Length", str(len(SLOW_DOWN)))])
            return [SLOW_DOWN]
        return app(environ, start_response)

    server._server.app = throttled
    print("ready", flush=True)
    try:
        while True:
            time.sleep(3600)
    finally:
        server.stop()


# --------------------------------------------------------------------------- the job


def _parquet_bytes(rows: int) -> bytes:
    import pyarrow as pa
    import pyarrow.parquet as pq

    table = pa.table({"id": list(range(rows)), "name": [f"n{i}" for i in range(rows)]})
    buf = io.BytesIO()
    pq.write_table(table, buf)
    return buf.getvalue()


def store_fs(endpoint: str):
    """s3fs on the bench's own store (its endpoint and throwaway credentials given here, so the
    caller's AWS environment is neither used nor changed)."""
    import s3fs

    return s3fs.S3FileSystem(skip_instance_cache=True, key="bench", secret="bench",
                             client_kwargs={"endpoint_url": endpoint})


def run_job(fs, bucket: str, strategy_name: str, files: int, writers: int, data: bytes) -> dict:
    """Write `files` base files at the strategy's paths; (wall seconds, job-level rewrites)."""
    from hudi_format.storage_strategy import file_location, load_strategy

    run = uuid.uuid4().hex[:6]
    strategy = load_strategy(strategy_name, f"s3://{bucket}/warehouse/t{run}", f"s3://{bucket}/data",
                             f"t{run}")
    instant = time.strftime("%Y%m%d%H%M%S") + "000"
    targets = [file_location(strategy, f"dt=d{i % PARTITIONS}", f"{uuid.uuid4()}-0_0-1-{i}_{instant}.parquet")
               for i in range(files)]
    rewrites = 0
    lock = threading.Lock()

    def put(url: str) -> None:
        nonlocal rewrites
        for attempt in range(20):
            try:
                fs.pipe_file(url[len("s3://"):], data)
                return
            except OSError:  # the client's own retries ran out: the job writes the file again
                with lock:
                    rewrites += 1
                time.sleep(min(2.0, 0.05 * 2 ** attempt))
        raise RuntimeError(f"{url}: still throttled after 20 attempts")

    started = time.perf_counter()
    with ThreadPoolExecutor(max_workers=writers) as pool:
        list(pool.map(put, targets))
    wall = time.perf_counter() - started
    return {"wall_s": round(wall, 3), "files_per_s": round(files / wall, 1), "job_rewrites": rewrites}


def _throttle(endpoint: str, method: str = "GET") -> dict:
    import urllib.request

    req = urllib.request.Request(f"{endpoint}/__throttle", method=method)
    with urllib.request.urlopen(req, timeout=10) as r:
        return json.loads(r.read())


def launch(port: int, rate: float, depth: int = 2, chars: int = 0, latency_ms: float = 0.0) -> subprocess.Popen:
    """The store (`serve`) in a child process on 127.0.0.1:port, once it answers; stop it with
    terminate(). The child gets no AWS_* variables of the caller's."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("AWS_")}
    child = subprocess.Popen([sys.executable, "-m", "bench.object_store_throttle", "--serve", str(port),
                              "--rate", str(rate), "--prefix-depth", str(depth), "--prefix-chars", str(chars),
                              "--latency-ms", str(latency_ms)],
                             stdout=subprocess.PIPE, env=env, cwd=str(Path(__file__).resolve().parent.parent))
    assert child.stdout is not None
    if child.stdout.readline().strip() != b"ready":
        child.kill()
        raise RuntimeError("the object store did not start")
    return child


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--files", type=int, default=600)
    ap.add_argument("--writers", type=int, default=16)
    ap.add_argument("--rate", type=float, default=20.0, help="writes per second per prefix (S3: 3,500)")
    ap.add_argument("--prefix-depth", type=int, default=2)
    ap.add_argument("--prefix-chars", type=int, default=0,
                    help="only the first N characters of the last prefix segment (0: all of it)")
    ap.add_argument("--rows", type=int, default=1000, help="rows per base file")
    ap.add_argument("--layouts", default="hive,object-store")
    ap.add_argument("--json", help="write the results here")
    ap.add_argument("--serve", type=int, help=argparse.SUPPRESS)  # the child: the throttled store
    ap.add_argument("--latency-ms", type=float, default=0.0, help=argparse.SUPPRESS)  # the child's per-request wait
    a = ap.parse_args(argv)
    if a.serve:
        serve(a.serve, a.rate, a.prefix_depth, a.prefix_chars, a.latency_ms)
        return 0

    port = free_port()
    endpoint = f"http://127.0.0.1:{port}"
    child = launch(port, a.rate, a.prefix_depth, a.prefix_chars)
    try:
        fs = store_fs(endpoint)
        bucket = f"bench-{uuid.uuid4().hex[:8]}"
        fs.mkdir(bucket)
        data = _parquet_bytes(a.rows)
        results = {}
        for layout in a.layouts.split(","):
            _throttle(endpoint, "POST")
            log(f"{layout}: {a.files} files, {a.writers} writers, {a.rate:g} writes/s per prefix")
            r = run_job(fs, bucket, layout, a.files, a.writers, data)
            r.update(_throttle(endpoint))
            results[layout] = r
            log(f"{layout}: {r}")
        ratio = (results["object-store"]["files_per_s"] / max(results["hive"]["files_per_s"], 1e-9)
                 if {"hive", "object-store"} <= set(results) else 0.0)
        out = {"meta": {"files": a.files, "writers": a.writers, "rate_per_prefix": a.rate,
                        "prefix_depth": a.prefix_depth, "prefix_chars": a.prefix_chars, "file_bytes": len(data)},
               "results": results, "ratio_object_store_over_hive": round(ratio, 2)}
        print(f"{'layout':<14}{'files/s':>10}{'wall s':>10}{'throttled':>11}{'prefixes':>10}{'busiest':>9}"
              f"{'busiest/mean':>14}")
        for layout, r in results.items():
            print(f"{layout:<14}{r['files_per_s']:>10}{r['wall_s']:>10}{r['throttled']:>11}{r['prefixes']:>10}"
                  f"{r['busiest_prefix_writes']:>9}{r['busiest_over_mean']:>14}")
        if ratio:
            print(f"object-store / hive write throughput: {ratio:.2f}x")
        if a.json:
            Path(a.json).write_text(json.dumps(out, indent=2))
        return 0
    finally:
        child.terminate()
        try:
            child.wait(timeout=10)
        except subprocess.TimeoutExpired:
            child.kill()


if __name__ == "__main__":
    sys.exit(main())
