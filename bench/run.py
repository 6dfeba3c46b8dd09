"""Benchmark our metastore against the reference Hive Metastore 2.3.10, hmsbench-style.

    python -m bench.run --pairing postgres|embedded|both [--n 1000,10000] [--iterations K] [--quick]
                        [--json out.json]

For each pairing it starts both servers itself (free ports, temp dirs, fresh PostgreSQL databases
``hmsref_<random>`` / ``hms_bench_<random>`` dropped at the end), runs every operation against the
reference and then against ours with the same Python Thrift client (plain thrift runtime,
TBufferedTransport + TBinaryProtocolAccelerated), and prints one table per pairing: medians, the
ratio reference/ours (for throughput: ours/reference), p90, max, and PASS/FAIL against the targets.

Pairings
  postgres  reference on PostgreSQL (DataNucleus over JDBC), ours on PostgreSQL (psycopg)
  embedded  reference on embedded Derby, ours on SQLite
"""

from __future__ import annotations

import argparse
import datetime as _dt
import json
import os
import platform
import shutil
import subprocess
import sys
import tempfile
import time
import traceback
from pathlib import Path

from bench import procs, report
from bench import workload as w
from bench.ops import Config, SideBench

DEFAULT_N = "1000,10000"
# The reference on Derby adds partitions at roughly 4-20 ms each (and the write chain loads
# N partitions several times), so the embedded pairing defaults to a smaller N.
DEFAULT_EMBEDDED_N = "1000"

FAMILIES = ["getTable", "listDatabases", "concurrentGetTable", "listTables", "getPartitionNames",
            "getPartitions", "getPartitionsByNames", "getPartitionsByFilter", "addPartitions",
            "alterPartitions", "dropPartitions", "dropTableWithPartitions", "bigFilter"]


def log(msg: str) -> None:
    print(f"[{time.strftime('%H:%M:%S')}] {msg}", file=sys.stderr, flush=True)


def machine_info() -> dict:
    def cmd(args):
        try:
            r = subprocess.run(args, capture_output=True, text=True, timeout=30)
            return (r.stdout + r.stderr).strip()
        except (OSError, subprocess.TimeoutExpired):
            return "?"

    mem = "?"
    try:
        for line in open("/proc/meminfo"):
            if line.startswith("MemTotal"):
                mem = f"{int(line.split()[1]) / 1024 / 1024:.1f} GiB"
    except OSError:
        pass
    cpu = "?"
    try:
        for line in open("/proc/cpuinfo"):
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    import sqlite3

    import sqlalchemy
    import thrift

    java = cmd(["java", "-version"]).splitlines()
    return {
        "date": _dt.datetime.now(_dt.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
        "nproc": cmd(["nproc"]),
        "cpu": cpu,
        "memory": mem,
        "kernel": platform.release(),
        "python": platform.python_version(),
        "java": java[0] if java else "?",
        "postgresql": procs.pg_version(),
        "sqlite": sqlite3.sqlite_version,
        "thrift_py": getattr(thrift, "__version__", None) or _dist_version("thrift"),
        "sqlalchemy": sqlalchemy.__version__,
        "postgresql_autovacuum": procs.pg_setting("autovacuum"),
    }


def _dist_version(name: str) -> str:
    try:
        from importlib.metadata import version

        return version(name)
    except Exception:
        return "?"


# --------------------------------------------------------------------------- one pairing


class Pairing:
    def __init__(self, kind: str, ns: list[int], cfg: Config, args):
        self.kind, self.ns, self.cfg, self.args = kind, ns, cfg, args
        self.rows: list[dict] = []
        self.sides: dict[str, SideBench] = {}
        self.servers: dict = {}
        self.cleanup: list = []
        self.info: dict = {"pairing": kind, "n": ns}

    def wants(self, family: str) -> bool:
        return self.args.ops is None or family in self.args.ops

    # ------------------------------------------------------------------ lifecycle

    def start(self):
        tmp = Path(tempfile.mkdtemp(prefix=f"hms-bench-{self.kind}-"))
        self.tmp = tmp
        if not self.args.keep:
            self.cleanup.append(lambda: shutil.rmtree(tmp, ignore_errors=True))
        props = {} if self.args.reference_inherit_perms else {"hive.warehouse.subdir.inherit.perms": "false"}
        with_ref = not self.args.ours_only
        if self.kind == "postgres":
            ok, why = procs.pg_available()
            if not ok:
                raise procs.StartError(f"PostgreSQL not reachable at {procs.PG_ADMIN_URL}: {why}")
            if with_ref:
                ref_db = procs.create_pg_database("hmsref")
                if not self.args.keep:
                    self.cleanup.append(lambda: procs.drop_pg_database(ref_db))
                self.info["reference_db"] = ref_db
            our_db = procs.create_pg_database("hms_bench")
            if not self.args.keep:
                self.cleanup.append(lambda: procs.drop_pg_database(our_db))
            self.info["ours_db"] = our_db
            our_url = procs.pg_url(our_db)
            if with_ref:
                log(f"[{self.kind}] starting the reference HMS on PostgreSQL database {ref_db}")
                ref = procs.start_reference(tmp / "reference", procs.pg_url(ref_db, "jdbc"), procs.pg_user(),
                                            system_props=props)
        else:
            our_url = f"sqlite:///{tmp / 'ours' / 'metastore.db'}"
            (tmp / "ours").mkdir(parents=True, exist_ok=True)
            if with_ref:
                log(f"[{self.kind}] starting the reference HMS on embedded Derby")
                ref = procs.start_reference(tmp / "reference", system_props=props)
        if with_ref:
            self.cleanup.append(ref.stop)
            self.servers["reference"] = ref
        log(f"[{self.kind}] starting our server on {our_url.split('@')[-1]} (--workers {self.args.workers})")
        ours = procs.start_ours(our_url, tmp / "ours", workers=self.args.workers, log_level=self.args.our_log_level)
        self.cleanup.append(ours.stop)
        self.servers["ours"] = ours
        for name, srv in self.servers.items():
            self.info[f"{name}_server"] = srv.description
            self.info[f"{name}_start_s"] = srv.start_seconds
            self.info[f"{name}_pid"] = srv.pid
            self.info[f"{name}_port"] = srv.port
        self.info["reference_system_properties"] = props
        self.info["analyze_after_loading"] = bool(self.kind == "postgres" and self.args.analyze)
        dbs = {"reference": self.info.get("reference_db"), "ours": self.info.get("ours_db")}
        for name, srv in self.servers.items():
            side = SideBench(name, srv.port, self.cfg)
            if self.kind == "postgres" and self.args.analyze and dbs.get(name):
                side.on_load = (lambda db=dbs[name], side=side:
                                side.loads.append(("ANALYZE", 0, round(procs.analyze_pg_database(db), 2))))
            self.cleanup.append(side.close)
            side.setup()
            self.sides[name] = side
        for name, side in self.sides.items():
            log(f"[{self.kind}] pre-warming {name} for {self.cfg.prewarm_s:.0f} s")
            side.prewarm(self.cfg.prewarm_s)
        if self.args.pause_after_start:
            log(f"[{self.kind}] servers: " + ", ".join(f"{n} pid={s.pid} port={s.port}"
                                                       for n, s in self.servers.items()))

    def stop(self):
        procs.cleanup_all(self.cleanup)
        self.cleanup = []

    # ------------------------------------------------------------------ running ops

    def both(self, family: str, fn, n=None, variant=None, sides=("reference", "ours"), **extra) -> dict:
        row = {"family": family, "n": n, "variant": variant, **extra,
               "loadavg_before": round(os.getloadavg()[0], 2)}
        for name in sides:
            side = self.sides.get(name)
            if side is None:
                row[name] = {"skipped": "not started (--ours-only)"}
                continue
            t0 = time.monotonic()
            try:
                row[name] = fn(side)
            except Exception as e:
                row[name] = {"error": f"{type(e).__name__}: {str(e)[:300]}"}
                if self.args.verbose:
                    traceback.print_exc()
                tail = procs.log_tail(self.servers[name].log_path, 400)
                for marker in ("StackOverflowError", "OutOfMemoryError", "Traceback"):
                    if marker in tail:
                        row[name]["server_log"] = marker
                try:   # the server may have dropped the connection: later ops get a new one
                    side.reconnect()
                except Exception:
                    pass
            row[name]["wall_s"] = round(time.monotonic() - t0, 2)
        row["loadavg_after"] = round(os.getloadavg()[0], 2)
        for name in ("reference", "ours"):
            if name not in row:
                row[name] = {"skipped": "not run"}
        self.rows.append(row)
        cl = report.cells(row)
        log(f"[{self.kind}] {cl[0]}: ref {cl[1]}, ours {cl[2]}, ref/ours {cl[3]}")
        return row

    def run(self):
        cfg = self.cfg
        if self.wants("getTable"):
            self.both("getTable", lambda s: s.op_get_table())
        if self.wants("listDatabases"):
            self.both("listDatabases", lambda s: s.op_list_databases())
        if self.wants("concurrentGetTable"):
            self.both("concurrentGetTable", lambda s: s.op_concurrent_get_table(), threads=cfg.threads)
        for n in self.ns:
            if self.wants("getPartitionNames"):
                self.both("getPartitionNames", lambda s, n=n: s.op_partition_names(n), n)
            if self.wants("getPartitions"):
                self.both("getPartitions", lambda s, n=n: s.op_get_partitions(n), n)
            if self.wants("getPartitionsByNames"):
                self.both("getPartitionsByNames", lambda s, n=n: s.op_by_names(n), n)
            if self.wants("getPartitionsByFilter"):
                self.both("getPartitionsByFilter", lambda s, n=n: s.op_filter(n, w.FILTER_EQ, 1), n,
                          "p_a = 'a0'", filter=w.FILTER_EQ)
                self.both("getPartitionsByFilter", lambda s, n=n: s.op_filter(n, w.FILTER_OR6, min(n, 2)), n,
                          "6-term OR", filter=w.FILTER_OR6)
            if self.wants("listTables") and n <= self.args.list_tables_max:
                self.both("listTables", lambda s, n=n: s.op_list_tables(n), n)
            if self.wants("addPartitions") or self.wants("alterPartitions") or self.wants("dropPartitions") \
                    or self.wants("dropTableWithPartitions"):
                # the chain: the add ops leave the tables that alter and the drop ops work on
                self.both("addPartitions", lambda s, n=n: s.op_add(n, "one"), n, "1 call")
                self.both("addPartitions", lambda s, n=n: s.op_add(n, "batch"), n, f"batches of {cfg.add_batch}")
                if self.wants("alterPartitions"):
                    self.both("alterPartitions", lambda s, n=n: s.op_alter(n), n)
                self.both("dropPartitions", lambda s, n=n: s.op_drop_partitions(n), n,
                          None if n <= cfg.drop_batch else f"calls of {cfg.drop_batch}")
                self.both("dropTableWithPartitions", lambda s, n=n: s.op_drop_table(n), n)
        if self.wants("bigFilter"):
            self.run_big()

    def run_big(self):
        cfg = self.cfg
        big = cfg.big_n
        sides = ["ours"]
        note = "reference not loaded (use --big-reference)"
        if self.args.big_reference and "reference" in self.sides:
            sides = ["reference", "ours"]
            note = ""
        loads = {}
        for name in sides:
            log(f"[{self.kind}] loading {big} partitions into {name} (batches of {cfg.big_batch})")
            try:
                loads[name] = self.sides[name].load_big(big)
                log(f"[{self.kind}]   {name}: {loads[name]:.1f} s")
            except Exception as e:
                loads[name] = f"error: {type(e).__name__}: {e}"
        row = self.both("bigFilter", lambda s: s.op_big_filter(big), big, sides=tuple(
            s for s in sides if isinstance(loads.get(s), float)), expected=w.BIG_EXPECTED, filter=w.BIG_FILTER,
            load_s=loads)
        if note:
            row["reference"] = {"skipped": note}
        # estimate what loading the reference would take, from its measured add rate
        ref = self.sides.get("reference")
        if note and ref is not None:
            rates = [cnt / secs for what, cnt, secs in ref.loads if secs > 0 and cnt >= 500]
            if rates:
                row["reference"]["estimated_load_s"] = round(big / max(rates), 0)
                row["reference"]["skipped"] += (f"; loading {big} partitions at its measured rate "
                                                f"would take ~{big / max(rates) / 60:.0f} min")


def render(kind: str, pairing: dict) -> str:
    lines = [f"== pairing: {kind} ==", f"reference: {pairing['info'].get('reference_server', 'not run')}",
             f"ours:      {pairing['info'].get('ours_server')}",
             f"N: {', '.join(str(x) for x in pairing['info']['n'])}; " + pairing["info"].get("iterations", ""),
             "reference JVM system properties: " + (", ".join(
                 f"{k}={v}" for k, v in pairing["info"].get("reference_system_properties", {}).items()) or "none")
             + ("; both PostgreSQL databases ANALYZEd after each loading step"
                if pairing["info"].get("analyze_after_loading") else ""),
             "", report.render_table(pairing["rows"])]
    nts = report.notes(pairing["rows"])
    loads = pairing["info"].get("loads", {})
    if loads:
        lines += ["", "loading (untimed setup):"]
        for side, items in loads.items():
            for what, cnt, secs in items:
                rate = f" ({cnt / secs:.0f}/s)" if secs and cnt else ""
                lines.append(f"  {side}: {what}: {secs:.1f} s{rate}")
    if nts:
        lines += ["", "notes:"] + [f"  - {n}" for n in nts]
    return "\n".join(lines)


def parse_ns(text: str) -> list[int]:
    return [int(x) for x in text.replace(" ", "").split(",") if x]


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="python -m bench.run", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--pairing", choices=["postgres", "embedded", "both"], default="both")
    p.add_argument("--n", default=None, help=f"partition/table counts (default {DEFAULT_N})")
    p.add_argument("--embedded-n", default=None,
                   help=f"N for the embedded pairing (default: --n if given, else {DEFAULT_EMBEDDED_N}, "
                        "since the reference on Derby is slow to load)")
    p.add_argument("--iterations", type=int, default=None, help="timed iterations of light ops (default 100)")
    p.add_argument("--warmup", type=int, default=None, help="warm-up iterations of light ops (default 10)")
    p.add_argument("--budget", type=float, default=None,
                   help="seconds per op and side after which the timed phase stops (>= 3 samples; default 20)")
    p.add_argument("--write-iterations", type=int, default=None,
                   help="timed rounds of the write chain at N <= 1000 (default 5; 3 above 1000)")
    p.add_argument("--write-iterations-large", type=int, default=None)
    p.add_argument("--prewarm", type=float, default=None,
                   help="seconds of untimed mixed calls per server before measuring (default 30)")
    p.add_argument("--threads", type=int, default=8, help="client threads for concurrent getTable")
    p.add_argument("--concurrency-seconds", type=float, default=None)
    p.add_argument("--big-n", type=int, default=None, help="partitions of the big filter table (default 100000)")
    p.add_argument("--big-reference", action="store_true",
                   help="also load the big table into the reference (slow)")
    p.add_argument("--list-tables-max", type=int, default=10_000, help="largest N for listTables")
    p.add_argument("--workers", type=int, default=2, help="our server's --workers (default 2)")
    p.add_argument("--our-log-level", default="INFO", help="our server's --log-level (default INFO, as shipped)")
    p.add_argument("--reference-inherit-perms", action="store_true",
                   help="keep Hive 2.3's hive.warehouse.subdir.inherit.perms=true (on a local file system "
                        "it forks ls/chmod per directory; off by default, as in Hive 3+)")
    p.add_argument("--no-analyze", dest="analyze", action="store_false",
                   help="postgres pairing: do not ANALYZE both databases after each loading step (they are "
                        "analyzed by default because autovacuum may be off, as on the machine this was "
                        "written on, and nothing else would ever collect statistics)")
    p.add_argument("--ops", default=None, help=f"comma-separated subset of: {','.join(FAMILIES)}")
    p.add_argument("--ours-only", action="store_true", help="do not start the reference")
    p.add_argument("--quick", action="store_true", help="tiny sizes and few iterations (a smoke run)")
    p.add_argument("--json", default=None, help="write all results to this file")
    p.add_argument("--markdown", action="store_true", help="also print the tables as Markdown")
    p.add_argument("--keep", action="store_true", help="keep temp dirs and databases")
    p.add_argument("--pause-after-start", action="store_true", help="print server pids (for profilers)")
    p.add_argument("-v", "--verbose", action="store_true")
    return p


def config_from(args) -> tuple[Config, list[int], list[int]]:
    cfg = Config()
    if args.quick:
        cfg = Config(warmup=2, iterations=10, budget_s=5, write_warmup=1, write_iterations=2,
                     write_iterations_large=2, concurrency_s=2, big_n=2000, big_batch=1000, prewarm_s=0)
        ns = parse_ns(args.n or "100")
        ens = parse_ns(args.embedded_n or args.n or "100")
    else:
        ns = parse_ns(args.n or DEFAULT_N)
        ens = parse_ns(args.embedded_n or args.n or DEFAULT_EMBEDDED_N)
    for attr, val in (("iterations", args.iterations), ("warmup", args.warmup), ("budget_s", args.budget),
                      ("write_iterations", args.write_iterations),
                      ("write_iterations_large", args.write_iterations_large),
                      ("concurrency_s", args.concurrency_seconds), ("big_n", args.big_n),
                      ("prewarm_s", args.prewarm)):
        if val is not None:
            setattr(cfg, attr, val)
    cfg.threads = args.threads
    return cfg, sorted(set(ns)), sorted(set(ens))


def main(argv=None) -> int:
    args = build_parser().parse_args(argv)
    args.ops = set(args.ops.split(",")) if args.ops else None
    if args.ops and not args.ops <= set(FAMILIES):
        print(f"unknown --ops {sorted(args.ops - set(FAMILIES))}", file=sys.stderr)
        return 2
    cfg, ns, ens = config_from(args)
    kinds = ["postgres", "embedded"] if args.pairing == "both" else [args.pairing]
    info = machine_info()
    results = {"machine": info, "command": "python -m bench.run " + " ".join(sys.argv[1:] if argv is None else argv),
               "config": cfg.__dict__, "pairings": {}}
    log("machine: " + ", ".join(f"{k}={v}" for k, v in info.items()))
    outputs = []
    rc = 0
    for kind in kinds:
        pn = Pairing(kind, ns if kind == "postgres" else ens, cfg, args)
        pn.info["iterations"] = (f"pre-warm {cfg.prewarm_s:.0f} s per server; light ops: warm-up {cfg.warmup}, "
                                 f"up to {cfg.iterations} iterations or {cfg.budget_s:.0f} s; "
                                 f"write chain: warm-up {cfg.write_warmup} at min(N,1000), "
                                 f"{cfg.write_iterations} rounds (N<=1000) / "
                                 f"{cfg.write_iterations_large} (N>1000); concurrency {cfg.threads} threads x "
                                 f"{cfg.concurrency_s:.0f} s")
        log(f"[{kind}] N={pn.ns}; {pn.info['iterations']}")
        t0 = time.monotonic()
        try:
            pn.start()
            pn.run()
        except Exception as e:
            rc = 1
            pn.info["error"] = f"{type(e).__name__}: {e}"
            log(f"[{kind}] aborted: {pn.info['error']}")
            if args.verbose:
                traceback.print_exc()
        finally:
            pn.info["loads"] = {name: s.loads for name, s in pn.sides.items()}
            pn.stop()
        pn.info["wall_s"] = round(time.monotonic() - t0, 1)
        report.apply_targets(pn.rows, kind)
        results["pairings"][kind] = {"info": pn.info, "rows": pn.rows}
        text = render(kind, results["pairings"][kind])
        if "error" in pn.info:
            text += f"\n\npairing aborted: {pn.info['error']}"
        text += f"\n(pairing wall time {pn.info['wall_s'] / 60:.1f} min)"
        outputs.append(text)
        print(text + "\n", flush=True)
        if args.markdown:
            print(report.render_table(pn.rows, markdown=True) + "\n", flush=True)
    if args.json:
        Path(args.json).write_text(json.dumps(results, indent=1, default=str))
        log(f"results written to {args.json}")
    return rc


if __name__ == "__main__":
    sys.exit(main())
