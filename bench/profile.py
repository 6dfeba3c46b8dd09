"""Profile our server on one benchmark operation with py-spy, and say where the time goes.

    python -m bench.profile --backend postgres --op getPartitions --n 10000 [--rate 200] [--out DIR]

Starts our server alone (``--workers 1``, fresh database), sets the data up as the benchmark does,
then runs the operation repeatedly under ``py-spy record --idle --format raw`` (collapsed stacks,
wall-clock: threads waiting on the database count too).  Only the samples taken while the server was
inside the operation's Thrift method (``process_<method>``) are kept, so loading is excluded.
Prints the share of those samples per category (database wait, SQLAlchemy, Thrift serialisation,
our code, ...), the top functions by self time and by inclusive time, and writes the raw stacks and
an SVG flame graph to ``--out``.  Needs ``pip install py-spy``.
"""

from __future__ import annotations

import argparse
import collections
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from bench import procs
from bench import workload as w
from bench.ops import Config, SideBench
from thrift_idl.hive_metastore.ttypes import GetTableRequest

# operation -> the Thrift method whose handling is profiled
METHODS = {
    "getTable": "get_table_req",
    "listDatabases": "get_all_databases",
    "listTables": "get_all_tables",
    "getPartitionNames": "get_partition_names",
    "getPartitions": "get_partitions",
    "getPartitionsByNames": "get_partitions_by_names",
    "getPartitionsByFilter": "get_partitions_by_filter",
    "bigFilter": "get_partitions_by_filter",
    "addPartitions": "add_partitions",
    "alterPartitions": "alter_partitions",
    "dropPartitions": "drop_partitions_req",
    "dropTableWithPartitions": "drop_table",
}

FRAME_RE = re.compile(r"^(?P<func>.*?) \((?P<file>[^()]*?)(?::(?P<line>\d+))?\)$")

CATEGORIES = [
    ("database driver / DB wait", ("psycopg", "sqlite3", "pymysql", "<built-in method execute",
                                   "_sqlite3", "psycopg_binary")),
    ("SQLAlchemy", ("sqlalchemy",)),
    ("Thrift (de)serialisation", ("thrift/", "thrift_idl", "fastbinary", "TBinaryProtocol", "TTransport")),
    ("logging", ("logging/",)),
    ("file system", ("shutil.py", "os.py", "posixpath.py", "genericpath.py", "pathlib.py")),
    ("our code (store/)", ("store/",)),
    ("our code (adapter/)", ("adapter/",)),
]


def categorize(frame_file: str) -> str:
    for name, needles in CATEGORIES:
        if any(n in frame_file for n in needles):
            return name
    return "other (stdlib/interpreter)"


def parse_frame(frame: str) -> tuple[str, str]:
    m = FRAME_RE.match(frame.strip())
    if not m:
        return frame.strip(), ""
    return m.group("func"), m.group("file")


def short_file(path: str) -> str:
    for marker in ("site-packages/", "/work/main/", "lib/python3"):
        if marker in path:
            return path.split(marker, 1)[1]
    return path


def summarize_stacks(raw: str, method: str, top: int = 15) -> dict:
    """Collapsed stacks (``f1;f2;f3 count`` per line) -> shares within ``process_<method>``."""
    total = 0
    self_c: collections.Counter = collections.Counter()
    incl_c: collections.Counter = collections.Counter()
    cat_c: collections.Counter = collections.Counter()
    needle = f"process_{method}"
    for line in raw.splitlines():
        line = line.strip()
        if not line or " " not in line:
            continue
        stack, _, count = line.rpartition(" ")
        try:
            n = int(count)
        except ValueError:
            continue
        frames = stack.split(";")
        idx = next((i for i, f in enumerate(frames) if parse_frame(f)[0].split(".")[-1] == needle), None)
        if idx is None:
            continue
        inner = frames[idx:]
        total += n
        func, file = parse_frame(inner[-1])
        self_c[f"{func} ({short_file(file)})"] += n
        cat_c[categorize(file)] += n
        seen = set()
        for f in inner:
            fn, fl = parse_frame(f)
            key = f"{fn} ({short_file(fl)})"
            if key not in seen:
                seen.add(key)
                incl_c[key] += n
    def share(c):
        return [(k, v, round(100.0 * v / total, 1)) for k, v in c.most_common(top)] if total else []
    return {"method": method, "samples": total, "categories": share(cat_c), "self": share(self_c),
            "inclusive": share(incl_c)}


def render_summary(s: dict) -> str:
    lines = [f"samples inside process_{s['method']}: {s['samples']}", "", "by category (self time):"]
    lines += [f"  {pct:5.1f}%  {k}" for k, _, pct in s["categories"]]
    lines += ["", "top functions, self time:"]
    lines += [f"  {pct:5.1f}%  {k}" for k, _, pct in s["self"]]
    lines += ["", "top functions, inclusive time:"]
    lines += [f"  {pct:5.1f}%  {k}" for k, _, pct in s["inclusive"]]
    return "\n".join(lines)


def pg_table_accesses(dbname: str) -> dict[str, int]:
    """seq_scan + idx_scan per table of our database (PostgreSQL statistics)."""
    import psycopg
    from sqlalchemy.engine import make_url

    u = make_url(procs.pg_url(dbname))
    with psycopg.connect(host=u.host, port=u.port or 5432, user=u.username, dbname=dbname,
                         autocommit=True) as conn:
        conn.execute("SELECT pg_stat_clear_snapshot()")
        rows = conn.execute("SELECT relname, coalesce(seq_scan, 0) + coalesce(idx_scan, 0) "
                            "FROM pg_stat_user_tables").fetchall()
    return {r[0]: int(r[1]) for r in rows}


def calls_of(op: str, rounds: int) -> int:
    return rounds * 50 if op in ("getTable", "listDatabases") else rounds


READ_OPS = ("getTable", "listDatabases", "getPartitionNames", "getPartitions", "getPartitionsByNames",
            "getPartitionsByFilter", "bigFilter")


def run_op(side: SideBench, op: str, n: int, variant: str, rounds: int) -> None:
    c = side.cfg
    if op in ("getTable", "listDatabases"):
        req = GetTableRequest(dbName=w.BENCH_DB, tblName="t_get")
        for _ in range(rounds * 50):
            if op == "getTable":
                side.client.get_table_req(req)
            else:
                side.client.get_all_databases()
        return
    if op == "listTables":
        side.op_list_tables(n)
        return
    if op in ("getPartitionNames", "getPartitions", "getPartitionsByNames", "getPartitionsByFilter"):
        side.ensure_read_table(n)
        names = [w.flat_name(i) for i in range(n)]
        expr = w.FILTER_OR6 if variant == "or6" else w.FILTER_EQ
        if op == "getPartitionNames" and variant == "kept":  # as in the Java bench: the list was read before
            side.client.get_partitions(w.BENCH_DB, "t_read", -1)
        for _ in range(rounds):
            if op == "getPartitionNames":
                side.client.get_partition_names(w.BENCH_DB, "t_read", -1)
            elif op == "getPartitions":
                side.client.get_partitions(w.BENCH_DB, "t_read", -1)
            elif op == "getPartitionsByNames":
                side.client.get_partitions_by_names(w.BENCH_DB, "t_read", names)
            else:
                side.client.get_partitions_by_filter(w.BENCH_DB, "t_read", expr, -1)
        return
    if op == "bigFilter":
        for _ in range(rounds):
            side.client.get_partitions_by_filter(w.BENCH_DB, "t_big", w.BIG_FILTER, -1)
        return
    # write chain: rounds of add / alter / drop (the add rounds are loading when profiling drops)
    c.write_warmup, c.write_iterations, c.write_iterations_large = 0, rounds, rounds
    side.op_add(n, "one")
    side.op_add(n, "batch")
    if op == "alterPartitions":
        side.op_alter(n)
    side.op_drop_partitions(n)
    side.op_drop_table(n)


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="python -m bench.profile", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--backend", choices=["postgres", "sqlite"], default="postgres")
    p.add_argument("--op", choices=sorted(METHODS), required=True)
    p.add_argument("--n", type=int, default=1000)
    p.add_argument("--variant", default="eq", help="getPartitionsByFilter: eq or or6; addPartitions: one or batch; "
                   "getPartitionNames: kept (the list read once before)")
    p.add_argument("--rounds", type=int, default=20, help="calls (write ops: rounds of the chain)")
    p.add_argument("--big-n", type=int, default=100_000)
    p.add_argument("--rate", type=int, default=200, help="py-spy samples per second")
    p.add_argument("--out", default=None, help="directory for raw stacks, svg and summary")
    p.add_argument("--top", type=int, default=15)
    return p


def profile_tag(args) -> str:
    """The name of a profile's files: the operation and its size / variant."""
    if args.op in ("getTable", "listDatabases"):
        return args.op
    if args.op == "bigFilter":
        return f"bigFilter.{args.big_n}"
    return f"{args.op}.{args.n}" + (f".{args.variant}" if args.op in ("getPartitionsByFilter", "addPartitions")
                                    else "")


def start_side(args, tmp: Path, cleanup: list) -> tuple[SideBench, int, str | None]:
    """Our server on the backend with the operation's tables loaded: (bench side, server pid,
    PostgreSQL database or None)."""
    db = None
    if args.backend == "postgres":
        db = procs.create_pg_database("hms_bench")
        cleanup.append(lambda: procs.drop_pg_database(db))
        url = procs.pg_url(db)
    else:
        url = f"sqlite:///{tmp / 'metastore.db'}"
    srv = procs.start_ours(url, tmp / "ours", workers=1)
    cleanup.append(srv.stop)
    side = SideBench("ours", srv.port, Config())
    cleanup.append(side.close)
    side.setup()
    side.prewarm(5)
    if args.op == "bigFilter":
        side.load_big(args.big_n)
    elif args.op in ("getPartitionNames", "getPartitions", "getPartitionsByNames", "getPartitionsByFilter"):
        side.ensure_read_table(args.n)
    return side, srv.pid, db


def run_profiled(args, side: SideBench) -> float:
    """The operation's calls; the seconds they took."""
    t0 = time.monotonic()
    if args.op == "addPartitions":
        c = side.cfg
        c.write_warmup, c.write_iterations, c.write_iterations_large = 0, args.rounds, args.rounds
        side.op_add(args.n, args.variant if args.variant in ("one", "batch") else "one")
    else:
        run_op(side, args.op, args.n, args.variant, args.rounds)
    return time.monotonic() - t0


def table_access_text(before: dict[str, int], after: dict[str, int], calls: int) -> str:
    delta = {t: after.get(t, 0) - before.get(t, 0) for t in after}
    delta = {t: d for t, d in delta.items() if d > 0}
    total = sum(delta.values())
    text = f"\n\nPostgreSQL table accesses (seq_scan + idx_scan) per call: {total / calls:.1f}\n"
    return text + "\n".join(f"  {d / calls:7.1f}  {t}" for t, d in sorted(delta.items(), key=lambda x: -x[1])[:12])


def main(argv=None) -> int:
    args = build_parser().parse_args(argv)
    pyspy = shutil.which("py-spy") or str(Path(sys.executable).with_name("py-spy"))
    if not Path(pyspy).exists():
        print("py-spy not found: pip install py-spy", file=sys.stderr)
        return 2
    out = Path(args.out or tempfile.mkdtemp(prefix="hms-profile-"))
    out.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix="hms-profile-srv-"))
    cleanup = [lambda: shutil.rmtree(tmp, ignore_errors=True)]
    method, tag = METHODS[args.op], profile_tag(args)
    try:
        side, pid, db = start_side(args, tmp, cleanup)
        raw_path = out / f"{tag}.{args.backend}.txt"
        rec = subprocess.Popen([pyspy, "record", "--pid", str(pid), "--idle", "--rate", str(args.rate),
                                "--format", "raw", "-o", str(raw_path)],
                               stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        time.sleep(1.5)
        before = None
        if db is not None and args.op in READ_OPS:
            time.sleep(1.5)   # let the server's backends flush their statistics
            before = pg_table_accesses(db)
        wall = run_profiled(args, side)
        rec.send_signal(signal.SIGINT)
        try:
            _, err = rec.communicate(timeout=120)
        except subprocess.TimeoutExpired:
            rec.kill()
            _, err = rec.communicate()
        if not raw_path.exists():
            print(f"py-spy wrote nothing: {err.decode(errors='replace')[-2000:]}", file=sys.stderr)
            return 1
        summary = summarize_stacks(raw_path.read_text(), method, args.top)
        calls = calls_of(args.op, args.rounds)
        text = (f"profile of our server ({args.backend}), op {tag}, method {method}, {calls} calls in "
                f"{wall:.1f} s ({1000 * wall / calls:.1f} ms/call incl. client), py-spy --idle at "
                f"{args.rate} Hz\n\n" + render_summary(summary))
        if before is not None and db is not None:
            time.sleep(2.0)
            text += table_access_text(before, pg_table_accesses(db), calls)
        (out / f"{tag}.{args.backend}.summary.txt").write_text(text + "\n")
        try:
            _flamegraph(raw_path, out / f"{tag}.{args.backend}.svg")
        except Exception:
            pass
        print(text)
        print(f"\nraw stacks: {raw_path}")
        return 0
    finally:
        procs.cleanup_all(cleanup)


def _flamegraph(raw_path: Path, svg_path: Path) -> None:
    """An SVG flame graph needs flamegraph.pl or inferno; skipped when neither is installed."""
    for tool in ("inferno-flamegraph", "flamegraph.pl"):
        exe = shutil.which(tool)
        if exe:
            with open(raw_path) as src, open(svg_path, "w") as dst:
                subprocess.run([exe], stdin=src, stdout=dst, timeout=120)
            return


if __name__ == "__main__":
    sys.exit(main())
