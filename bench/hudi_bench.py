"""Benchmark of the Hudi timeline and snapshot services, through the Thrift client.

    python -m bench.hudi_bench [--backend sqlite|postgres|both] [--files 10000] [--partitions 10,10000]
                               [--iterations N] [--read-iterations M] [--json out.json]

For each backend it starts our server itself (``python -m adapter.cli serve`` on a free port; SQLite:
a file database in a temp dir; PostgreSQL: a fresh database ``hudi_bench_<random>`` on
127.0.0.1:5432 as user postgres, or ``HMS_BENCH_POSTGRES_URL``, dropped at the end) and measures
with ``client.HudiMetastoreClient``:

1. ``complete_instant`` of a commit writing ``--files`` files over ``--commit-partitions``
   partitions (default 10,000 over 100). Each iteration is a fresh instant (create_instant and
   transition_to_inflight are untimed) writing a new base file for every file group, as an upsert
   does; an untimed first commit inserts the file groups and creates the partitions.
2. ``get_latest_file_slices`` for 1 partition, on one table per ``--partitions`` size (default 10
   and 10,000 partitions), every partition holding ``--file-groups`` file groups (3) with
   ``--versions`` base file versions each (2); loaded with a few large commits (untimed). Each
   call asks for a random partition; the tables are called alternately. The ratio of medians
   largest/smallest table shows whether the cost follows the answer (the same on every table) or
   the table.
3. ``get_hudi_partitions`` with an equality filter (``dt = "<one partition>"``) on the same tables.

The server runs as shipped (storage mirror on: a commit also writes its timeline files under the
table's base path before it answers); ``--no-storage-mirror`` measures without it. Results are
checked (slice counts, latest versions, one partition per filter); a wrong answer is an error.

Processes, databases and statistics come from bench/procs.py and bench/stats.py.
"""

from __future__ import annotations

import argparse
import datetime as _dt
import json
import math
import os
import platform
import random
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import traceback
import uuid
from pathlib import Path

from bench import procs
from bench.stats import summarize

REPO_ROOT, PYTHON = procs.REPO_ROOT, procs.PYTHON
DB = "hudi_bench"
DAY0 = _dt.date(2000, 1, 1)


def log(msg: str) -> None:
    print(f"[{time.strftime('%H:%M:%S')}] {msg}", file=sys.stderr, flush=True)


# --------------------------------------------------------------------------- statistics


def fmt_ms(v) -> str:
    if v is None or (isinstance(v, float) and math.isnan(v)):
        return "-"
    if v >= 1000:
        return f"{v / 1000:.2f} s"
    if v >= 100:
        return f"{v:.0f} ms"
    if v >= 10:
        return f"{v:.1f} ms"
    return f"{v:.2f} ms"


# --------------------------------------------------------------------------- processes and databases


class Server:
    """Our server as a child process (stopped with SIGTERM, then SIGKILL)."""

    def __init__(self, db_url: str, workdir: Path, workers: int, mirror: bool, timeout: float = 90):
        workdir.mkdir(parents=True, exist_ok=True)
        self.warehouse = workdir / "warehouse"
        self.warehouse.mkdir(exist_ok=True)
        self.log_path = workdir / "server.log"
        self.port = procs.free_port()
        cmd = [PYTHON, "-m", "adapter.cli", "serve", "--host", "127.0.0.1", "--port", str(self.port),
               "--db-url", db_url, "--warehouse", str(self.warehouse), "--workers", str(workers)]
        if not mirror:
            cmd.append("--no-storage-mirror")
        env = dict(os.environ)
        env["PYTHONPATH"] = os.pathsep.join([str(REPO_ROOT)] + ([env["PYTHONPATH"]] if env.get("PYTHONPATH") else []))
        env.setdefault("PYTHONUNBUFFERED", "1")
        t0 = time.monotonic()
        with open(self.log_path, "ab") as out:
            self.proc = subprocess.Popen(cmd, cwd=str(REPO_ROOT), stdout=out, stderr=subprocess.STDOUT,
                                         stdin=subprocess.DEVNULL, env=env)
        deadline = t0 + timeout
        while not procs.port_open(self.port):
            if self.proc.poll() is not None:
                raise RuntimeError(f"our server exited with {self.proc.returncode}\n{procs.log_tail(self.log_path)}")
            if time.monotonic() > deadline:
                self.stop()
                raise RuntimeError(f"our server did not open port {self.port}\n{procs.log_tail(self.log_path)}")
            time.sleep(0.2)
        self.start_seconds = round(time.monotonic() - t0, 1)

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(timeout=10)


def machine_info() -> dict:
    mem = cpu = "?"
    try:
        for line in open("/proc/meminfo"):
            if line.startswith("MemTotal"):
                mem = f"{int(line.split()[1]) / 1024 / 1024:.1f} GiB"
                break
        for line in open("/proc/cpuinfo"):
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    import sqlite3

    import sqlalchemy

    return {"date": _dt.datetime.now(_dt.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
            "nproc": (subprocess.run(["nproc"], capture_output=True, text=True).stdout.strip()
                      if shutil.which("nproc") else str(os.cpu_count())),
            "cpu": cpu, "memory": mem, "kernel": platform.release(), "python": platform.python_version(),
            "sqlite": sqlite3.sqlite_version, "sqlalchemy": sqlalchemy.__version__}


# --------------------------------------------------------------------------- workload


def partition_path(i: int) -> str:
    return f"dt={DAY0 + _dt.timedelta(days=i)}"


def new_file_id() -> str:
    return f"{uuid.uuid4()}-0"


def write_stat(part: str, fid: str, ts: str, prev: str | None, i: int) -> dict:
    name = f"{fid}_{i % 4}-{i % 7}-{i}_{ts}.parquet"
    return {"fileId": fid, "path": f"{part}/{name}", "partitionPath": part, "prevCommit": prev or "null",
            "numWrites": 1000, "numDeletes": 0, "numUpdateWrites": 0 if prev is None else 1000,
            "numInserts": 1000 if prev is None else 0, "totalWriteBytes": 440_000, "totalWriteErrors": 0,
            "fileSizeInBytes": 440_000}


def commit_metadata(stats: dict[str, list[dict]], operation: str) -> bytes:
    return json.dumps({"partitionToWriteStats": stats, "compacted": False, "operationType": operation,
                       "extraMetadata": {"schema": ""}}).encode()


class HudiBench:
    """One backend: a server, a client and the tables."""

    def __init__(self, backend: str, args, tmp: Path):
        self.backend, self.args, self.tmp = backend, args, tmp
        self.cleanup: list = []
        self.info: dict = {"backend": backend}
        self.rows: list[dict] = []
        self.client = None
        self.rng = random.Random(42)

    # ------------------------------------------------------------------ lifecycle

    def start(self) -> None:
        from client import HudiMetastoreClient
        from thrift_idl.hive_metastore.ttypes import Database

        work = self.tmp / self.backend
        if self.backend == "postgres":
            name = procs.create_pg_database("hudi_bench")
            url = procs.pg_url(name)
            self.info["database"] = name
            self.info["postgresql"] = procs.pg_version()
            self.cleanup.append(lambda: procs.drop_pg_database(name))
        else:
            work.mkdir(parents=True, exist_ok=True)
            url = f"sqlite:///{work / 'metastore.db'}"
        log(f"[{self.backend}] starting our server on {url.split('@')[-1]}")
        srv = Server(url, work, self.args.workers, not self.args.no_storage_mirror)
        self.cleanup.append(srv.stop)
        self.server = srv
        self.info.update(server=f"hudi-metastore serve --workers {self.args.workers}"
                         + (" --no-storage-mirror" if self.args.no_storage_mirror else ""),
                         start_s=srv.start_seconds, port=srv.port)
        self.client = HudiMetastoreClient(f"thrift://127.0.0.1:{srv.port}", timeout_s=600, retries=0)
        self.cleanup.append(self.client.close)
        self.client.create_database(Database(name=DB, locationUri="file:" + str(srv.warehouse / DB)))

    def stop(self) -> None:
        while self.cleanup:
            act = self.cleanup.pop()
            try:
                act()
            except Exception as e:
                log(f"[{self.backend}] cleanup: {type(e).__name__}: {e}")

    def register(self, table: str) -> None:
        from hudi_format.table_config import HudiTableConfig

        self.client.register_hudi_table(HudiTableConfig(
            db_name=DB, table_name=table, table_type="COPY_ON_WRITE", record_key_fields=["id"],
            partition_fields=["dt"], hive_style_partitioning=True, precombine_field="ts",
            base_path=str(self.server.warehouse / DB / table), table_version=self.args.table_version),
            [("id", "string"), ("ts", "bigint"), ("v", "string"), ("dt", "string")])

    def commit(self, table: str, build, operation: str) -> tuple[str, float]:
        """create + inflight (untimed), then complete_instant with build(ts) as write stats."""
        c = self.client
        inst = c.create_instant(DB, table, None, "commit")
        c.transition_to_inflight(DB, table, inst.timestamp, "commit")
        meta = commit_metadata(build(inst.timestamp), operation)
        t0 = time.perf_counter()
        c.complete_instant(DB, table, inst.timestamp, "commit", meta)
        return inst.timestamp, time.perf_counter() - t0

    def row(self, op: str, label: str, samples: list[float], **extra) -> dict:
        r = {"op": op, "label": label, **summarize(samples), **extra}
        self.rows.append(r)
        log(f"[{self.backend}] {label}: median {fmt_ms(r.get('median_ms'))}, p90 {fmt_ms(r.get('p90_ms'))}, "
            f"max {fmt_ms(r.get('max_ms'))} ({r['iterations']} iterations)")
        return r

    # ------------------------------------------------------------------ 1. complete_instant

    def bench_complete(self) -> None:
        a = self.args
        nparts = max(1, min(a.commit_partitions, a.files))
        table = "commit_bench"
        self.register(table)
        parts = [partition_path(i) for i in range(nparts)]
        groups = [(parts[i % nparts], new_file_id()) for i in range(a.files)]
        prev = [None]

        def build(ts):
            stats: dict[str, list[dict]] = {}
            for i, (p, fid) in enumerate(groups):
                stats.setdefault(p, []).append(write_stat(p, fid, ts, prev[0], i))
            return stats

        ts, first = self.commit(table, build, "INSERT")
        prev[0] = ts
        self.info["first_commit_ms"] = round(first * 1000, 1)
        log(f"[{self.backend}] first commit (inserts {a.files} file groups, creates {nparts} partitions): "
            f"{fmt_ms(first * 1000)}")
        size = len(commit_metadata(build(ts), "UPSERT"))
        samples = []
        for _ in range(a.iterations):
            ts, secs = self.commit(table, build, "UPSERT")
            prev[0] = ts
            samples.append(secs)
        slices = self.client.get_latest_file_slices(DB, table, [parts[0]])
        want = len([g for g in groups if g[0] == parts[0]])
        ok = len(slices) == want and all(s.baseInstant == ts for s in slices)
        self.row("complete_instant", f"complete_instant ({a.files} files, {nparts} partitions)", samples,
                 files=a.files, partitions=nparts, metadata_bytes=size,
                 table_files_before=[a.files * (i + 1) for i in range(a.iterations)],
                 check="ok" if ok else f"WRONG: {len(slices)} slices (want {want}) after the last commit")

    # ------------------------------------------------------------------ 2./3. reads

    def load_table(self, table: str, nparts: int) -> float:
        """nparts partitions x file_groups x versions, in commits of about --load-batch files."""
        a = self.args
        self.register(table)
        parts = [partition_path(i) for i in range(nparts)]
        groups = {p: [new_file_id() for _ in range(a.file_groups)] for p in parts}
        per_commit = max(1, a.load_batch // max(1, a.file_groups))
        t0 = time.monotonic()
        commits = 0
        last_ts = {}
        for v in range(a.versions):
            for lo in range(0, nparts, per_commit):
                chunk = parts[lo:lo + per_commit]

                def build(ts, chunk=chunk):
                    stats = {}
                    for p in chunk:
                        stats[p] = [write_stat(p, fid, ts, last_ts.get(p), j) for j, fid in enumerate(groups[p])]
                    return stats

                ts, _ = self.commit(table, build, "INSERT" if v == 0 else "UPSERT")
                for p in chunk:
                    last_ts[p] = ts
                commits += 1
        secs = time.monotonic() - t0
        self.info.setdefault("loads", {})[table] = {
            "partitions": nparts, "files": nparts * a.file_groups * a.versions, "commits": commits,
            "seconds": round(secs, 1)}
        log(f"[{self.backend}] loaded {table}: {nparts} partitions, {nparts * a.file_groups * a.versions} files "
            f"in {commits} commits, {secs:.1f} s")
        self._latest = last_ts
        return secs

    def bench_reads(self) -> None:
        """Load every table first, then alternate the tables call by call (no drift between them)."""
        a = self.args
        c = self.client
        tables = []
        for n in a.partitions:
            t = f"slices_{n}"
            self.load_table(t, n)
            tables.append((n, t, dict(self._latest)))
        total = a.read_warmup + a.read_iterations
        picks = {n: [self.rng.randrange(n) for _ in range(total)] for n, _, _ in tables}
        samples = {(op, n): [] for op in ("slices", "filter") for n, _, _ in tables}
        bad: dict[tuple, list[str]] = {k: [] for k in samples}
        for i in range(total):
            for n, t, latest in tables:
                p = partition_path(picks[n][i])
                t0 = time.perf_counter()
                res = c.get_latest_file_slices(DB, t, [p])
                dt = time.perf_counter() - t0
                if len(res) != a.file_groups or any(s.baseInstant != latest[p] or s.partitionPath != p for s in res):
                    bad["slices", n].append(f"{p}: {len(res)} slices")
                if i >= a.read_warmup:
                    samples["slices", n].append(dt)
                flt = f'dt = "{p[3:]}"'
                t0 = time.perf_counter()
                res = c.get_hudi_partitions(DB, t, flt)
                dt = time.perf_counter() - t0
                if res != [p]:
                    bad["filter", n].append(f"{flt}: {res[:3]}")
                if i >= a.read_warmup:
                    samples["filter", n].append(dt)
        small = min(a.partitions)
        for op, name, label, size in (
                ("slices", "get_latest_file_slices", "get_latest_file_slices 1 of {n} partitions", a.file_groups),
                ("filter", "get_hudi_partitions", 'get_hudi_partitions dt = "..." on {n} partitions', 1)):
            base = None
            for n, _, _ in tables:
                r = self.row(name, label.format(n=n), samples[op, n], partitions=n, result_size=size,
                             check="ok" if not bad[op, n] else f"WRONG: {bad[op, n][0]}")
                if n == small:
                    base = r.get("median_ms")
                elif base:
                    r["ratio_to_smallest"] = round(r["median_ms"] / base, 2)
                    self.info.setdefault("ratios", {})[f"{name} {n}/{small}"] = r["ratio_to_smallest"]

    def run(self) -> None:
        self.start()
        self.bench_complete()
        self.bench_reads()


# --------------------------------------------------------------------------- report

HEADER = ["operation", "median", "p90", "max", "iters", "vs smallest", "check"]


def render(backend: str, res: dict, markdown: bool = False) -> str:
    info, rows = res["info"], res["rows"]
    body = [[r["label"], fmt_ms(r.get("median_ms")), fmt_ms(r.get("p90_ms")), fmt_ms(r.get("max_ms")),
             str(r.get("iterations", 0)), f"{r['ratio_to_smallest']:.2f}x" if "ratio_to_smallest" in r else "",
             r.get("check", "")] for r in rows]
    if markdown:
        out = ["| " + " | ".join(HEADER) + " |", "|" + "|".join("---" for _ in HEADER) + "|"]
        out += ["| " + " | ".join(c.replace("|", "/") for c in b) + " |" for b in body]
        return "\n".join(out)
    widths = [max(len(h), *(len(b[i]) for b in body)) if body else len(h) for i, h in enumerate(HEADER)]

    def line(vals):
        return "  ".join(v.ljust(widths[i]) if i in (0, 6) else v.rjust(widths[i]) for i, v in enumerate(vals))

    out = [f"== backend: {backend} ==", f"server: {info.get('server')}"
           + (f" on PostgreSQL {info['postgresql']}" if info.get("postgresql") else " on SQLite (file)")]
    if "loadavg" in info:
        out.append(f"load average (1 min) before/after: {info['loadavg'][0]:.2f} / {info['loadavg'][1]:.2f} "
                   f"on {os.cpu_count()} CPUs")
    if "first_commit_ms" in info:
        out.append(f"first commit (inserts the file groups, creates the partitions; untimed): "
                   f"{fmt_ms(info['first_commit_ms'])}")
    for r in rows:
        if r["op"] == "complete_instant" and r.get("samples_ms"):
            out.append(f"complete_instant samples in order (table holds {r['table_files_before'][0]} .. "
                       f"{r['table_files_before'][-1]} files before each): "
                       + ", ".join(fmt_ms(x) for x in r["samples_ms"]))
    for t, ld in info.get("loads", {}).items():
        out.append(f"loaded {t}: {ld['partitions']} partitions, {ld['files']} files, {ld['commits']} commits, "
                   f"{ld['seconds']} s")
    out += ["", line(HEADER), line(["-" * w for w in widths])] + [line(b) for b in body]
    for k, v in info.get("ratios", {}).items():
        out.append(f"ratio of medians, {k} partitions: {v:.2f}x")
    if "error" in info:
        out.append(f"aborted: {info['error']}")
    return "\n".join(out)


def parse_ints(text: str) -> list[int]:
    return sorted({int(x) for x in text.replace(" ", "").split(",") if x})


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="python -m bench.hudi_bench", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--backend", choices=["sqlite", "postgres", "both"], default="both")
    p.add_argument("--files", type=int, default=10_000, help="files of the measured commit (default 10000)")
    p.add_argument("--commit-partitions", type=int, default=100,
                   help="partitions the measured commit writes to (default 100)")
    p.add_argument("--partitions", type=parse_ints, default=parse_ints("10,10000"),
                   help="partition counts of the read tables (default 10,10000)")
    p.add_argument("--file-groups", type=int, default=3, help="file groups per partition of the read tables")
    p.add_argument("--versions", type=int, default=2, help="base file versions per file group (default 2)")
    p.add_argument("--load-batch", type=int, default=6000, help="files per loading commit (default 6000)")
    p.add_argument("--iterations", type=int, default=10, help="timed complete_instant iterations (default 10)")
    p.add_argument("--table-version", type=int, choices=(6, 8, 9), default=6,
                   help="Hudi table version of the tables (default 6; 8 and 9 keep commit metadata in Avro)")
    p.add_argument("--read-iterations", type=int, default=200, help="timed iterations of each read (default 200)")
    p.add_argument("--read-warmup", type=int, default=20, help="untimed read calls first (default 20)")
    p.add_argument("--workers", type=int, default=1, help="our server's --workers (default 1)")
    p.add_argument("--no-storage-mirror", action="store_true", help="run the server without the storage mirror")
    p.add_argument("--json", default=None, help="write all results to this file")
    p.add_argument("--markdown", action="store_true", help="also print the tables as Markdown")
    p.add_argument("--keep", action="store_true", help="keep the temp dir (PostgreSQL databases are dropped)")
    p.add_argument("-v", "--verbose", action="store_true")
    return p


def main(argv=None) -> int:
    args = build_parser().parse_args(argv)
    backends = ["sqlite", "postgres"] if args.backend == "both" else [args.backend]
    info = machine_info()
    if "postgres" in backends:
        info["postgresql"] = procs.pg_version()
    results = {"machine": info,
               "command": "python -m bench.hudi_bench " + " ".join(sys.argv[1:] if argv is None else argv),
               "config": {k: v for k, v in vars(args).items() if k not in ("json", "markdown", "keep", "verbose")},
               "backends": {}}
    log("machine: " + ", ".join(f"{k}={v}" for k, v in info.items()))
    tmp = Path(tempfile.mkdtemp(prefix="hudi-bench-"))
    rc = 0
    try:
        for backend in backends:
            b = HudiBench(backend, args, tmp)
            t0 = time.monotonic()
            load0 = os.getloadavg()[0]
            try:
                b.run()
            except Exception as e:
                rc = 1
                b.info["error"] = f"{type(e).__name__}: {str(e)[:500]}"
                log(f"[{backend}] aborted: {b.info['error']}")
                if args.verbose:
                    traceback.print_exc()
            finally:
                b.stop()
            b.info["wall_s"] = round(time.monotonic() - t0, 1)
            b.info["loadavg"] = [round(load0, 2), round(os.getloadavg()[0], 2)]
            if any(str(r.get("check", "ok")) != "ok" for r in b.rows):
                rc = 1
            results["backends"][backend] = {"info": b.info, "rows": b.rows}
            print(render(backend, results["backends"][backend]) + f"\n(wall time {b.info['wall_s']:.0f} s)\n",
                  flush=True)
            if args.markdown:
                print(render(backend, results["backends"][backend], markdown=True) + "\n", flush=True)
    finally:
        if not args.keep:
            shutil.rmtree(tmp, ignore_errors=True)
    if args.json:
        Path(args.json).write_text(json.dumps(results, indent=1, default=str))
        log(f"results written to {args.json}")
    return rc


if __name__ == "__main__":
    sys.exit(main())
