"""Our server against the reference Hive Metastore, measured with the engines' own Java client.

    python -m bench.java_client [--pairing postgres|embedded|both] [--runs 5] [--n 1000,10000]
                                [--add-n 10000] [--drop-n 1000] [--json out.json] [--quick]
                                [--docs docs/performance.md] [--scale 1000000] [--commits 10]
                                [--ceiling [--ceiling-runs 3]]

The driver (bench/java/HmsJavaBench.java) is Hive's HiveMetaStoreClient from the Hive 2.3 jars Spark
ships: the client Spark and Hive use, whose decoding is cheap, so the time measured is the
server's. It is compiled with `javac` once per source version (cached under
~/.cache/hudi-metastore/bench-java). Both servers are started here (free ports, temp dirs, fresh
PostgreSQL databases dropped at the end), loaded with the same tables through the Java client, and
measured in `--runs` rounds; each round measures both servers (alternating which goes first). A
row's ratio is the median of the rounds' ratios (reference/ours; throughput: ours/reference), with
their range. After the pairings it measures issue 16's targets that are not ratios of one call
(`bench/scale_targets.py`: a table of a million partitions, `complete_instant` of 10,000 files).
With `--ceiling`, each pairing's read rows also show the Java client's ceiling: the same `reads`
against our server through bench/instant_server.py, a proxy that answers every recorded call at
once (what remains is the client's work and the sockets), and ours as a percentage of its ratio.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from bench import procs, scale_targets
from bench.instant_server import InstantServer

SOURCE = Path(__file__).resolve().parent / "java" / "HmsJavaBench.java"
DB = "jbench"
# (operation, n or None) -> the ratio the issue asks for; n None: any n
# issue 43's targets: ratios to the reference (lists at 2,000 partitions, getTable, writes; drops:
# issue 16's), and at 10,000 partitions a share of the ceiling's ratio (measured with --ceiling)
TARGETS: dict[tuple[str, int | None], float] = {
    ("getTable", None): 5, ("concurrentGetTable", None): 5,
    ("getPartitionNames", 2000): 4, ("getPartitions", 2000): 4, ("getPartitionsByNames", 1000): 4,
    ("getPartitionsByFilter", 2000): 4, ("bigFilter.or6", 2000): 4,
    ("addPartitions", None): 20, ("alterPartitions", None): 20, ("dropPartitions", 1000): 10,
}
CEILING_TARGETS: dict[tuple[str, int], float] = {
    ("getPartitionNames", 10_000): 0.8, ("getPartitions", 10_000): 0.8,
    ("getPartitionsByFilter", 10_000): 0.8, ("bigFilter.or6", 10_000): 0.8,
}
OPS = ("reads", "concurrent", "add", "alter", "drop")
THROUGHPUT = {"concurrentGetTable"}
# measured on the first table only: they do not depend on its partitions. getConfigValue reads no
# database on either server: ours against the ceiling there is the server's own work per call
# (reading the request, authorizing, logging, answering), which no kept answer saves
PER_CALL = {"getTable", "getConfigValue"}


def log(msg: str) -> None:
    print(f"[{time.strftime('%H:%M:%S')}] {msg}", file=sys.stderr, flush=True)


def spark_jars() -> Path:
    import pyspark

    return Path(pyspark.__file__).resolve().parent / "jars"


def compile_driver() -> Path:
    """The compiled driver's directory (javac once per source text)."""
    if shutil.which("javac") is None:
        raise procs.StartError("javac not found: the Java driver needs a JDK (Debian: openjdk-17-jdk-headless)")
    digest = hashlib.sha256(SOURCE.read_bytes()).hexdigest()[:16]
    cache = Path(os.environ.get("HUDI_METASTORE_CACHE", Path.home() / ".cache" / "hudi-metastore"))
    out = cache / "bench-java" / digest
    if (out / "HmsJavaBench.class").exists():
        return out
    tmp = Path(tempfile.mkdtemp(prefix="bench-java-"))
    res = subprocess.run(["javac", "-nowarn", "-cp", f"{spark_jars()}/*", "-d", str(tmp), str(SOURCE)],
                         capture_output=True, text=True)
    if res.returncode != 0:
        raise procs.StartError(f"javac failed:\n{res.stdout}{res.stderr}")
    out.parent.mkdir(parents=True, exist_ok=True)
    shutil.rmtree(out, ignore_errors=True)
    tmp.rename(out)
    return out


class Driver:
    def __init__(self, classes: Path):
        self.classpath = f"{spark_jars()}/*{os.pathsep}{classes}"

    def __call__(self, port: int, *args, timeout: float = 3600) -> list[dict]:
        cmd = ["java", "-Xmx1g", "-cp", self.classpath, "HmsJavaBench", str(port), *map(str, args)]
        res = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
        if res.returncode != 0:
            tail = "\n".join((res.stdout + res.stderr).splitlines()[-25:])
            raise RuntimeError(f"java driver {' '.join(map(str, args))} failed ({res.returncode}):\n{tail}")
        out = []
        for line in res.stdout.splitlines():
            if not line.startswith("RESULT "):
                continue
            _r, op, n, size, values = line.split(" ", 4)
            if op in THROUGHPUT:  # n: client threads, size: calls made
                out.append({"op": op, "n": int(n), "size": int(size), "throughput": float(values)})
            else:
                ms = [float(x) for x in values.split(",") if x]
                out.append({"op": op, "n": int(n), "size": int(size), "median_ms": statistics.median(ms),
                            "samples": len(ms)})
        return out


# --------------------------------------------------------------------------- servers


class Servers:
    def __init__(self, pairing: str, workers: int, keep: bool):
        self.pairing, self.cleanup = pairing, []
        self.tmp = Path(tempfile.mkdtemp(prefix=f"hms-javabench-{pairing}-"))
        if not keep:
            self.cleanup.append(lambda: shutil.rmtree(self.tmp, ignore_errors=True))
        self.dbs: dict[str, str] = {}
        props = {"hive.warehouse.subdir.inherit.perms": "false"}
        if pairing == "postgres":
            ok, why = procs.pg_available()
            if not ok:
                raise procs.StartError(f"PostgreSQL not reachable at {procs.PG_ADMIN_URL}: {why}")
            for side, prefix in (("reference", "hmsref"), ("ours", "hms_bench")):
                self.dbs[side] = name = procs.create_pg_database(prefix)
                if not keep:
                    self.cleanup.append(lambda name=name: procs.drop_pg_database(name))
            log(f"starting the reference HMS on PostgreSQL database {self.dbs['reference']}")
            ref = procs.start_reference(self.tmp / "reference", procs.pg_url(self.dbs["reference"], "jdbc"),
                                        procs.pg_user(), system_props=props)
            our_url = procs.pg_url(self.dbs["ours"])
        else:
            log("starting the reference HMS on embedded Derby")
            ref = procs.start_reference(self.tmp / "reference", system_props=props)
            (self.tmp / "ours").mkdir(parents=True, exist_ok=True)
            our_url = f"sqlite:///{self.tmp / 'ours' / 'metastore.db'}"
        self.cleanup.append(ref.stop)
        log(f"starting our server (--workers {workers})")
        ours = procs.start_ours(our_url, self.tmp / "ours", workers=workers, log_level="INFO")
        self.cleanup.append(ours.stop)
        self.servers = {"reference": ref, "ours": ours}

    def analyze(self) -> None:
        for name in self.dbs.values():
            procs.analyze_pg_database(name)

    def stop(self) -> None:
        procs.cleanup_all(self.cleanup)


# --------------------------------------------------------------------------- the run


def measure(args, driver: Driver, servers: Servers) -> dict:
    """{(op, n): {"reference": [per-round value], "ours": [...], "size": {...}}}"""
    ports = {name: s.port for name, s in servers.servers.items()}
    for name, port in ports.items():
        for n in args.ns if {"reads", "concurrent"} & set(args.ops) else []:
            t0 = time.monotonic()
            driver(port, "load", DB, f"t_{n}", n)
            log(f"loaded {n} partitions into {name} in {time.monotonic() - t0:.1f} s")
    if servers.pairing == "postgres":
        servers.analyze()
    results: dict = {}

    def keep(side: str, rows: list[dict]) -> None:
        for r in rows:
            cell = results.setdefault((r["op"], r["n"]), {"reference": [], "ours": [], "size": {}})
            cell[side].append(r.get("throughput", r.get("median_ms")))
            cell["size"][side] = r["size"]

    ops = set(args.ops)
    for rnd in range(-args.warmup_rounds, args.runs):  # rounds below 0 warm both servers up, not counted
        order = ["reference", "ours"] if rnd % 2 == 0 else ["ours", "reference"]
        for side in order:
            port = ports[side]
            log(f"round {rnd + 1}/{args.runs}{' (warm-up, not counted)' if rnd < 0 else ''}: {side}")

            def run(*call, port=port, counted=rnd >= 0) -> list[dict]:
                rows = driver(port, *call)
                return rows if counted else []

            if "reads" in ops:
                for n in args.ns:
                    rows = run("reads", DB, f"t_{n}", n, args.warmup, args.iterations, args.budget,
                               args.client_warmup)
                    keep(side, [r for r in rows if r["op"] not in PER_CALL or n == args.ns[0]])
            if "concurrent" in ops:
                keep(side, run("concurrent", DB, f"t_{args.ns[0]}", args.threads, args.concurrency_seconds,
                               args.client_warmup))
            tag = f"{rnd}" if rnd >= 0 else f"w{-rnd}"
            if "add" in ops:
                keep(side, run("add", DB, f"add_{tag}", args.add_n))
            if "alter" in ops:
                keep(side, run("alter", DB, f"alter_{tag}", args.alter_n))
            if "drop" in ops:
                keep(side, run("drop", DB, f"drop_{tag}", args.drop_n))
    return results


def ceiling(driver: Driver, port: int, ns: list[int], runs: int, warmup: int, iterations: int, budget: float,
            client_warmup: int, db: str = DB) -> dict:
    """The Java client's ceiling: `reads` of the tables t_<n> through bench/instant_server.py in front
    of the metastore on `port`, once recording, then `runs` rounds answered from the recording.
    {(op, n): [each round's median ms]}; getTable from the first table only, as in `measure`."""
    out: dict = {}
    with InstantServer(port) as proxy:
        for n in ns:
            driver(proxy.port, "reads", db, f"t_{n}", n, 0, 1, 0, 1)
        recorded = proxy.forwarded - proxy.oneway
        proxy.mode = "replay"
        for rnd in range(runs):
            log(f"ceiling round {rnd + 1}/{runs}")
            for n in ns:
                rows = driver(proxy.port, "reads", db, f"t_{n}", n, warmup, iterations, budget, client_warmup)
                for r in rows:
                    if r["op"] not in PER_CALL or n == ns[0]:
                        out.setdefault((r["op"], r["n"]), []).append(r["median_ms"])
        # what reached the server while replaying: connection setup only, or the ceiling is not one
        leaked = {m: c for m, c in (proxy.forwarded - proxy.oneway - recorded).items()
                  if m not in proxy.never_replayed}
        if leaked or proxy.errors:
            raise RuntimeError(f"the ceiling run reached the server: forwarded {leaked}, errors {proxy.errors[:3]}")
        log(f"ceiling: {sum(proxy.replayed.values())} calls answered from the recording")
    return out


def rows_of(results: dict, ceilings: dict | None = None) -> list[dict]:
    """The table's rows; with `ceilings` (of `ceiling`) a row measured there also carries its
    "ceiling" (ms, median of the rounds), "ceiling_ratio" (reference / ceiling: the best ratio any
    server reaches with this client) and "of_ceiling" (ratio / ceiling_ratio)."""
    rows = []
    for (op, n), cell in sorted(results.items(), key=lambda kv: (_ORDER.index(kv[0][0]), kv[0][1])):
        ref, ours = cell["reference"], cell["ours"]
        if op in THROUGHPUT:
            ratios = [o / r for r, o in zip(ref, ours) if r]
        else:
            ratios = [r / o for r, o in zip(ref, ours) if o]
        target = TARGETS.get((op, n), TARGETS.get((op, None)))
        ratio = statistics.median(ratios) if ratios else None
        rows.append({"op": op, "n": n, "reference": statistics.median(ref), "ours": statistics.median(ours),
                     "unit": "calls/s" if op in THROUGHPUT else "ms", "ratio": ratio,
                     "range": [min(ratios), max(ratios)] if ratios else None, "target": target,
                     "sizes": cell["size"], "pass": None if target is None or ratio is None else ratio >= target})
        row = rows[-1]
        if (op, n) in CEILING_TARGETS:
            row["ceiling_target"] = CEILING_TARGETS[(op, n)]
        if ceilings and (op, n) in ceilings and op not in THROUGHPUT:
            ceil = statistics.median(ceilings[(op, n)])
            row["ceiling"], row["ceiling_range"] = ceil, [min(ceilings[(op, n)]), max(ceilings[(op, n)])]
            row["ceiling_ratio"] = row["reference"] / ceil if ceil else None
            row["of_ceiling"] = ratio / row["ceiling_ratio"] if ratio and row["ceiling_ratio"] else None
            if "ceiling_target" in row and row["of_ceiling"] is not None:
                row["pass"] = row["of_ceiling"] >= row["ceiling_target"]
    return rows


_ORDER = ["getTable", "getConfigValue", "concurrentGetTable", "getPartitionNames", "getPartitions",
          "getPartitionsByNames", "getPartitionsByFilter", "bigFilter.or6", "addPartitions", "alterPartitions",
          "dropPartitions"]


def label(row: dict) -> str:
    if row["op"] == "getTable":
        return "getTable"
    if row["op"] == "getConfigValue":
        return "getConfigValue (no statement on either side)"
    if row["op"] == "concurrentGetTable":
        return f"getTable, {row['n']} concurrent clients"
    if row["op"] == "getPartitionsByFilter":
        return f"getPartitionsByFilter.{row['n']} (p_a = 'a0')"
    if row["op"] == "bigFilter.or6":
        return f"getPartitionsByFilter.{row['n']} (6-term OR)"
    return f"{row['op']}.{row['n']}"


def render(rows: list[dict], runs: int) -> str:
    """A Markdown table; with two more columns when rows carry a ceiling (`rows_of`'s ceilings): the
    ceiling's ms and ratio, and ours as a percentage of that ratio."""
    with_ceiling = any("ceiling" in r for r in rows)
    head = ["operation", "reference", "ours", f"ratio (median of {runs})", "range",
            *(["ceiling (ratio)", "ours of ceiling"] if with_ceiling else []), "target", ""]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for r in rows:
        fmt = (lambda v: f"{v:.0f}/s") if r["unit"] == "calls/s" else (lambda v: f"{v:.2f} ms")
        rng = f"{r['range'][0]:.2f}–{r['range'][1]:.2f}x" if r["range"] else "-"
        verdict = "" if r["pass"] is None else ("PASS" if r["pass"] else "FAIL")
        target = f"≥ {r['target']:g}x" if r["target"] else ""
        if r.get("ceiling_target"):
            target = f"≥ {r['ceiling_target']:.0%} of the ceiling"
        ceil = ""
        if with_ceiling:
            c, cr, of = r.get("ceiling"), r.get("ceiling_ratio"), r.get("of_ceiling")
            ceil = (f" {c:.2f} ms ({cr:.2f}x) |" if c is not None and cr else " |") + \
                   (f" {of:.0%} |" if of is not None else " |")
        lines.append(f"| {label(r)} | {fmt(r['reference'])} | {fmt(r['ours'])} | "
                     f"{r['ratio']:.2f}x | {rng} |{ceil} {target} | {verdict} |")
    return "\n".join(lines)


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="python -m bench.java_client", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--pairing", choices=["postgres", "embedded", "both"], default="postgres",
                   help="both: the PostgreSQL pairing, then the embedded one (SQLite against Derby)")
    p.add_argument("--runs", type=int, default=5)
    p.add_argument("--n", default="1000,10000", help="partitions of the read tables")
    p.add_argument("--add-n", type=int, default=10_000)
    p.add_argument("--drop-n", type=int, default=1000)
    p.add_argument("--alter-n", type=int, default=2000, help="partitions of one alter_partitions")
    p.add_argument("--ops", default=",".join(OPS),
                   help=f"what to measure, of {','.join(OPS)} (e.g. add,alter: the writes alone)")
    p.add_argument("--warmup-rounds", type=int, default=1,
                   help="rounds of every operation against both servers before the counted ones (their "
                        "JVM and caches warm, as a long-running metastore's are), not counted")
    p.add_argument("--warmup", type=int, default=5, help="untimed calls of each operation before its timed ones")
    p.add_argument("--client-warmup", type=int, default=2000,
                   help="getTable calls each client JVM makes before timing anything (the same against either "
                        "server): the Java client's code then runs compiled, as in an engine")
    p.add_argument("--iterations", type=int, default=50)
    p.add_argument("--budget", type=float, default=10.0, help="seconds per op and round (at least 3 samples)")
    p.add_argument("--threads", type=int, default=8)
    p.add_argument("--concurrency-seconds", type=float, default=10.0)
    p.add_argument("--workers", type=int, default=2, help="our server's --workers")
    p.add_argument("--quick", action="store_true", help="tiny sizes, two rounds (a smoke run)")
    p.add_argument("--json", default=None)
    p.add_argument("--docs", default=None, metavar="MD",
                   help="write each pairing's table and the run's conditions into this Markdown file "
                        "(docs/performance.md), between its java_client markers")
    p.add_argument("--scale", type=int, default=1_000_000,
                   help="partitions of the scale table, after the pairings (issue 16's filter and memory "
                        "targets, bench/partition_scale.py; 0: skip)")
    p.add_argument("--scale-batch", type=int, default=10_000)
    p.add_argument("--scale-ref-budget", type=float, default=300,
                   help="seconds the reference may spend adding the scale table's partitions")
    p.add_argument("--commits", type=int, default=10,
                   help="timed complete_instant calls of --commit-files files each (bench/hudi_bench.py; 0: skip)")
    p.add_argument("--commit-files", type=int, default=10_000)
    p.add_argument("--ceiling", action="store_true",
                   help="after each pairing's rounds, measure the Java client's ceiling with `reads` against "
                        "our server through bench/instant_server.py (a proxy answering recorded calls at once) "
                        "and add each read row's ceiling and ours as a percentage of it")
    p.add_argument("--ceiling-runs", type=int, default=3, help="rounds of the ceiling (with --ceiling)")
    p.add_argument("--keep", action="store_true", help="keep temp dirs and databases")
    return p


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    if args.quick:
        args.runs, args.n, args.add_n, args.drop_n, args.alter_n = 2, "50", 100, 50, 100
        args.warmup, args.iterations, args.budget, args.concurrency_seconds = 1, 3, 2.0, 1.0
        args.client_warmup = 20
        args.scale, args.scale_batch, args.scale_ref_budget = 4800, 1200, 20
        args.commits, args.commit_files = 2, 500
    args.ns = [int(x) for x in args.n.split(",") if x.strip()]
    args.ops = [x.strip() for x in args.ops.split(",") if x.strip()]
    if unknown := set(args.ops) - set(OPS):
        raise SystemExit(f"--ops: unknown {', '.join(sorted(unknown))} (of {', '.join(OPS)})")
    driver = Driver(compile_driver())
    runs = {}
    for pairing in (["postgres", "embedded"] if args.pairing == "both" else [args.pairing]):
        info, rows = run_pairing(args, driver, pairing)
        runs[pairing] = {"info": info, "rows": rows}
        print(f"== Java client (HiveMetaStoreClient 2.3.10), pairing {pairing}: {info['reference']} "
              f"vs {info['ours']}; {args.runs} rounds; load average at the end {info['loadavg'][0]:.2f} ==")
        print(render(rows, args.runs))
        if args.docs and set(args.ops) == set(OPS):  # a part of the comparison leaves the whole one's table
            write_docs(Path(args.docs), pairing, conditions(info, args), render(rows, args.runs))
    pg_ok, pg_why = procs.pg_available() if args.scale or args.commits else (True, "")
    if not pg_ok:  # both steps run on PostgreSQL (the issue sets their targets there)
        log(f"skipping the scale and complete_instant step: PostgreSQL is not reachable ({pg_why})")
    if (args.scale or args.commits) and pg_ok:
        t0, started, load_before = time.monotonic(), time.strftime("%Y-%m-%d %H:%M", time.gmtime()), os.getloadavg()
        extra = scale_targets.run(args.scale, args.scale_batch, args.scale_ref_budget, args.commits, args.commit_files)
        info = {"started": started, "ended": time.strftime("%H:%M", time.gmtime()), "commit": _commit(args.docs),
                "loadavg_before": load_before, "loadavg": os.getloadavg(),
                "seconds": round(time.monotonic() - t0, 1)}
        runs["scale"] = {"info": info, **extra}
        table = scale_targets.render(extra)
        print(f"== issue 16's other targets ==\n{table}")
        if args.docs:
            write_docs(Path(args.docs), "scale", scale_conditions(info, args, extra), table)
    if args.json:
        doc = runs[args.pairing] if args.pairing != "both" and len(runs) == 1 else runs
        Path(args.json).write_text(json.dumps(doc, indent=1, default=str))
    return 0


def run_pairing(args: argparse.Namespace, driver: Driver, pairing: str) -> tuple[dict, list[dict]]:
    servers = Servers(pairing, args.workers, args.keep)
    try:
        t0 = time.monotonic()
        started = time.strftime("%Y-%m-%d %H:%M", time.gmtime())
        commit = _commit(args.docs)  # the code the servers run: as it is when they start
        load_before = os.getloadavg()
        results = measure(args, driver, servers)
        ceilings = None
        if args.ceiling and "reads" in args.ops:
            ceilings = ceiling(driver, servers.servers["ours"].port, args.ns, args.ceiling_runs, args.warmup,
                               args.iterations, args.budget, args.client_warmup)
        rows = rows_of(results, ceilings)
        info = {"pairing": pairing, "runs": args.runs, "n": args.ns, "add_n": args.add_n,
                "drop_n": args.drop_n, "alter_n": args.alter_n, "ops": args.ops,
                "warmup_rounds": args.warmup_rounds, "workers": args.workers, "threads": args.threads,
                "ceiling_runs": args.ceiling_runs if ceilings else 0,
                "reference": servers.servers["reference"].description, "ours": servers.servers["ours"].description,
                "started": started, "ended": time.strftime("%H:%M", time.gmtime()), "commit": commit,
                "loadavg_before": load_before, "loadavg": os.getloadavg(), "seconds": round(time.monotonic() - t0, 1)}
    finally:
        servers.stop()
    return info, rows


def _commit(docs: str | None) -> str:
    """The checked-out commit, marked when the work tree differs from it (the `--docs` file aside:
    the run writes it)."""
    root = Path(__file__).resolve().parent.parent
    spec = ["--", "."] + ([f":(exclude){Path(docs).resolve()}"] if docs else [])
    try:
        head = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=root, capture_output=True,
                              text=True, check=True).stdout.strip()
        dirty = subprocess.run(["git", "status", "--porcelain", "--untracked-files=no", *spec], cwd=root,
                               capture_output=True, text=True, check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return "unknown"
    return f"{head} with uncommitted changes" if dirty else head


def conditions(info: dict, args: argparse.Namespace) -> str:
    """One paragraph: when, on what, with which settings, under which load."""
    import platform

    ceil = f" --ceiling --ceiling-runs {info['ceiling_runs']}" if info.get("ceiling_runs") else ""
    return (f"**Run of {info['started']}–{info['ended']} UTC**, written by `python -m bench.java_client "
            f"--pairing {info['pairing']} --runs {args.runs} --warmup-rounds {args.warmup_rounds} --ops "
            f"{','.join(args.ops)}{ceil} --budget {args.budget:g} --iterations "
            f"{args.iterations} --client-warmup {args.client_warmup} --docs ...` (commit {info['commit']}; "
            f"{os.cpu_count()} CPUs, Python "
            f"{platform.python_version()}, Java client HiveMetaStoreClient 2.3.10; reference: "
            f"{info['reference']}; ours: {info['ours']}; N = "
            f"{', '.join(str(n) for n in info['n'])}, add {info['add_n']}, alter {info['alter_n']}, drop "
            f"{info['drop_n']}; load "
            f"average {info['loadavg_before'][0]:.2f} at the start and {info['loadavg'][0]:.2f} at the "
            f"end; {info['seconds'] / 60:.1f} min).")


def scale_conditions(info: dict, args: argparse.Namespace, extra: dict) -> str:
    import platform

    scale = extra.get("scale") or {}
    return (f"**Run of {info['started']}–{info['ended']} UTC**, the same command's last step (`--scale "
            f"{args.scale} --scale-ref-budget {args.scale_ref_budget:g} --commits {args.commits}`; commit "
            f"{info['commit']}; {os.cpu_count()} CPUs, Python {platform.python_version()}, "
            f"PostgreSQL {scale.get('postgresql', '')}; Python client with the accelerated binary protocol; "
            f"ours: {scale.get('ours_server', 'hudi-metastore')}, reference: "
            f"{scale.get('reference_server', 'not run')}, each alone on a fresh database; load average "
            f"{info['loadavg_before'][0]:.2f} at the start and {info['loadavg'][0]:.2f} at the end; "
            f"{info['seconds'] / 60:.1f} min).")


def write_docs(path: Path, pairing: str, paragraph: str, table: str) -> None:
    """Replace the text between `<!-- java_client:PAIRING -->` and `<!-- /java_client:PAIRING -->`
    (appended at the end when the file has no such markers)."""
    start, end = f"<!-- java_client:{pairing} -->", f"<!-- /java_client:{pairing} -->"
    block = f"{start}\n{paragraph}\n\n{table}\n{end}"
    text = path.read_text() if path.exists() else ""
    if start in text and end in text:
        head, rest = text.split(start, 1)
        text = head + block + rest.split(end, 1)[1]
    else:
        text = text.rstrip("\n") + "\n\n" + block + "\n"
    path.write_text(text)
    log(f"wrote the {pairing} table into {path}")


if __name__ == "__main__":
    sys.exit(main())
