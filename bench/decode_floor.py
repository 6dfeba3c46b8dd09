"""The client's share of a partition list: how long the benchmark's Python client takes to decode a
get_partitions answer of N partitions (TBinaryProtocolAccelerated, as in bench.run), with no server
at all. A server answering in zero time still costs this much per call, which bounds the ratio
reference/ours that any server can reach on getPartitions.N and getPartitionsByNames.N.

    python -m bench.decode_floor [--n 1000,10000] [--repeat 7]

With `--java`, the same bound for the Java client (HiveMetaStoreClient 2.3, bench/java_client.py's
driver): our server is started on a fresh database (embedded SQLite, or `--backend postgres`), the
tables t_<n> are loaded with the driver's `load`, and its `reads` run once through
bench/instant_server.py recording the answers, then `--runs` rounds answered from the recording at
once. Each read's median ms over the rounds is the ceiling: the client's own work and the sockets.

    python -m bench.decode_floor --java [--n 2000,10000] [--runs 3] [--backend sqlite|postgres]
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import tempfile
import time
from pathlib import Path

from thrift.protocol import TBinaryProtocol
from thrift.transport import TTransport

from bench import workload as w
from thrift_idl.hive_metastore import ThriftHiveMetastore as T


def answer_bytes(n: int) -> bytes:
    """A get_partitions answer shaped like the benchmark's table (5 columns, 3 keys), with the
    location and parameter a metastore fills in."""
    tbl = w.table(w.BENCH_DB, "t")
    parts = []
    for i in range(n):
        p = w.partition(tbl, w.flat_values(i))
        p.sd.location = f"file:/tmp/warehouse/bench.db/t/{w.flat_name(i)}"
        p.parameters = {"transient_lastDdlTime": "1763800000"}
        parts.append(p)
    buf = TTransport.TMemoryBuffer()
    T.get_partitions_result(success=parts).write(TBinaryProtocol.TBinaryProtocolAccelerated(buf))
    return buf.getvalue()


def decode_ms(data: bytes, repeat: int) -> float:
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        res = T.get_partitions_result()
        res.read(TBinaryProtocol.TBinaryProtocolAccelerated(TTransport.TMemoryBuffer(data)))
        times.append(time.perf_counter() - t0)
    return statistics.median(times) * 1000


def java_ceiling(args: argparse.Namespace) -> int:
    from bench import java_client as jc
    from bench import procs

    ns = [int(x) for x in args.n.split(",") if x.strip()]
    driver = jc.Driver(jc.compile_driver())
    tmp = Path(tempfile.mkdtemp(prefix="hms-java-ceiling-"))
    cleanup = [lambda: shutil.rmtree(tmp, ignore_errors=True)]
    try:
        if args.backend == "postgres":
            ok, why = procs.pg_available()
            if not ok:
                raise procs.StartError(f"PostgreSQL not reachable at {procs.PG_ADMIN_URL}: {why}")
            name = procs.create_pg_database("hms_ceiling")
            cleanup.append(lambda: procs.drop_pg_database(name))
            url = procs.pg_url(name)
        else:
            url = f"sqlite:///{tmp / 'metastore.db'}"
        server = procs.start_ours(url, tmp / "ours", workers=args.workers, log_level="INFO")
        cleanup.append(server.stop)
        for n in ns:
            t0 = time.monotonic()
            driver(server.port, "load", jc.DB, f"t_{n}", n)
            jc.log(f"loaded {n} partitions in {time.monotonic() - t0:.1f} s")
        if args.backend == "postgres":
            procs.analyze_pg_database(name)
        found = jc.ceiling(driver, server.port, ns, args.runs, args.warmup, args.iterations, args.budget,
                           args.client_warmup)
    finally:
        procs.cleanup_all(cleanup)
    print(f"== the Java client's ceiling (HiveMetaStoreClient 2.3.10, answers replayed at once; "
          f"{server.description}; median of {args.runs} rounds) ==")
    order = jc._ORDER
    for (op, n), ms in sorted(found.items(), key=lambda kv: (order.index(kv[0][0]), kv[0][1])):
        row = {"op": op, "n": n}
        print(f"{jc.label(row)}: {statistics.median(ms):.2f} ms (rounds {min(ms):.2f}–{max(ms):.2f})")
    return 0


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--n", default=None, help="partitions (default 1000,10000; with --java 2000,10000)")
    ap.add_argument("--repeat", type=int, default=7)
    java = ap.add_argument_group("--java: the Java client's ceiling")
    java.add_argument("--java", action="store_true")
    java.add_argument("--backend", choices=["sqlite", "postgres"], default="sqlite")
    java.add_argument("--runs", type=int, default=3)
    java.add_argument("--warmup", type=int, default=5, help="untimed calls of each read before its timed ones")
    java.add_argument("--iterations", type=int, default=50)
    java.add_argument("--budget", type=float, default=10.0, help="seconds per read and round")
    java.add_argument("--client-warmup", type=int, default=2000, help="untimed getTable calls per client JVM")
    java.add_argument("--workers", type=int, default=1, help="our server's --workers")
    args = ap.parse_args(argv)
    if args.java:
        args.n = args.n or "2000,10000"
        return java_ceiling(args)
    for n in (int(x) for x in (args.n or "1000,10000").split(",")):
        data = answer_bytes(n)
        print(f"decode get_partitions answer of {n} partitions ({len(data) / 1e6:.2f} MB): "
              f"median {decode_ms(data, args.repeat):.1f} ms")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
