"""Several servers over one database, a Galera cluster or replicated PostgreSQL (issue 40): the mixed
read/write workload's throughput and latency with 1, 2 and 3 servers.

    python -m bench.scale_out [--topologies single,galera,patroni] [--servers 1,2,3] [--seconds 10]
        [--clients 6] [--writes 0.2] [--json out.json]

Topologies (started here, on loopback, from Debian's packages, as the tests start them:
tests/harness/galera.py, tests/harness/patroni.py):

* ``single``: one PostgreSQL database (``HMS_TEST_POSTGRES_URL``, a fresh database in it);
* ``galera``: a 3-node MariaDB Galera cluster, server i on node i;
* ``patroni``: PostgreSQL under Patroni (a primary, two standbys, etcd), every server given the
  three nodes (``target_session_attrs=read-write``).

Workload: ``--clients`` processes, client j on server j mod n, for ``--seconds`` after a warm-up of
one second; each call is a write with probability ``--writes`` (``add_partition`` of a new
partition) and otherwise a read, in turn ``get_table``, ``get_partitions_by_names`` of 5 partitions,
``get_partition_names`` (up to 100) and ``get_partitions_ps`` of one value. Reported per topology
and server count: calls per second, the median and 99th percentile latency of reads and of writes,
and errors. Every process shares the machine's cores (clients, servers, database nodes): read the
numbers with its size (printed).
"""

from __future__ import annotations

import argparse
import json
import multiprocessing as mp
import os
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path

DB, TABLE = "cluster_load", "events"  # tests/harness/cluster_load.py's
START_PARTITIONS = 200
SERVER_ARGS = ["--no-storage-mirror", "--statement-timeout", "30"]


def _setup(port: int, warehouse: str) -> None:
    """The fault tests' database and partitioned table (tests/harness/cluster_load.py), with
    START_PARTITIONS partitions."""
    from client import HudiMetastoreClient
    from tests.harness import cluster_load
    from thrift_idl.hive_metastore.ttypes import Partition, StorageDescriptor

    cluster_load.setup(port, warehouse)
    with HudiMetastoreClient(f"thrift://127.0.0.1:{port}", retries=2) as c:
        t = c.get_table(DB, TABLE)
        parts = []
        for i in range(START_PARTITIONS):
            psd = StorageDescriptor(**{**t.sd.__dict__, "location": f"{t.sd.location}/p=s{i:04d}"})
            parts.append(Partition(dbName=DB, tableName=TABLE, values=[f"s{i:04d}"], sd=psd, parameters={}))
        c.add_partitions(parts)


def _client(uri: str, seconds: float, writes: float, seed: int, out) -> None:
    """One client process: calls until the deadline; sends back (kind, seconds) per call, errors."""
    from client import HudiMetastoreClient
    from thrift_idl.hive_metastore.ttypes import Partition

    rnd = random.Random(seed)
    lat: dict[str, list[float]] = {"read": [], "write": []}
    errors: list[str] = []
    n = 0
    with HudiMetastoreClient(uri, retries=2) as c:
        t = c.get_table(DB, TABLE)
        names = [f"p=s{i:04d}" for i in range(START_PARTITIONS)]
        warm_until = time.monotonic() + 1.0
        deadline = warm_until + seconds
        while True:
            now = time.monotonic()
            if now >= deadline:
                break
            write = rnd.random() < writes
            t0 = time.perf_counter()
            try:
                if write:
                    value = f"w{seed}-{n}"
                    sd = t.sd.__class__(**{**t.sd.__dict__, "location": f"{t.sd.location}/p={value}"})
                    c.add_partition(Partition(dbName=DB, tableName=TABLE, values=[value], sd=sd, parameters={}))
                else:
                    k = n % 4
                    if k == 0:
                        c.get_table(DB, TABLE)
                    elif k == 1:
                        c.get_partitions_by_names(DB, TABLE, rnd.sample(names, 5))
                    elif k == 2:
                        c.get_partition_names(DB, TABLE, 100)
                    else:
                        c.get_partitions_ps(DB, TABLE, [f"s{rnd.randrange(START_PARTITIONS):04d}"], -1)
            except Exception as exc:  # noqa: BLE001 - counted, the run goes on
                errors.append(f"{type(exc).__name__}: {str(exc)[:120]}")
            dt = time.perf_counter() - t0
            n += 1
            if now >= warm_until:
                lat["write" if write else "read"].append(dt)
    out.put((lat, errors))


def _pct(values: list[float], q: float) -> float | None:
    if not values:
        return None
    values = sorted(values)
    return values[min(len(values) - 1, int(q * len(values)))]


def run_workload(ports: list[int], clients: int, seconds: float, writes: float) -> dict:
    ctx = mp.get_context("fork")
    out = ctx.Queue()
    procs = [ctx.Process(target=_client, args=(f"thrift://127.0.0.1:{ports[j % len(ports)]}", seconds, writes,
                                                 j + 1, out)) for j in range(clients)]
    for p in procs:
        p.start()
    results = [out.get(timeout=seconds + 120) for _ in procs]
    for p in procs:
        p.join(timeout=30)
    reads = [x for lat, _ in results for x in lat["read"]]
    wrote = [x for lat, _ in results for x in lat["write"]]
    errors = [e for _, errs in results for e in errs]

    def ms(v: float | None) -> float | None:
        return None if v is None else round(v * 1000, 2)

    return {"servers": len(ports), "calls_per_s": round((len(reads) + len(wrote)) / seconds, 1),
            "reads": len(reads), "writes": len(wrote),
            "read_p50_ms": ms(statistics.median(reads) if reads else None), "read_p99_ms": ms(_pct(reads, 0.99)),
            "write_p50_ms": ms(statistics.median(wrote) if wrote else None), "write_p99_ms": ms(_pct(wrote, 0.99)),
            "errors": len(errors), "first_errors": errors[:3]}


def _servers(urls: list[str], base: Path) -> list:
    from tests.harness.procs import start_our_server

    procs = []
    for i, url in enumerate(urls):
        procs.append(start_our_server(url, base / f"server{i}", SERVER_ARGS, warehouse=base / "warehouse")[1])
    return procs


def _stop(procs: list) -> None:
    from tests.harness.procs import stop_process

    for p in procs:
        stop_process(p, grace=0)


def run_topology(name: str, counts: list[int], args, base: Path) -> list[dict]:
    """Each server count on a fresh schema of the topology (the previous count's rows dropped)."""
    rows = []
    for n in counts:
        where = base / f"{name}-{n}"
        where.mkdir(parents=True)
        cleanup = []
        try:
            if name == "single":
                from tests.harness.backends import backend_urls, create_fresh_database

                fresh = create_fresh_database(backend_urls()["postgresql"], where, migrated=True)
                cleanup.append(fresh.drop)
                urls = [fresh.url] * n
            elif name == "galera":
                from tests.harness import galera

                cluster = galera.GaleraCluster()
                cleanup.append(cluster.stop)
                cluster.start()
                urls = [cluster.url(i) for i in range(n)]
            else:
                from tests.harness import patroni

                pcluster = patroni.PatroniCluster()
                cleanup.append(pcluster.stop)
                pcluster.start()
                urls = [pcluster.url()] * n
            procs = _servers(urls, where)
            cleanup.append(lambda procs=procs: _stop(procs))
            _setup(procs[0].port, str(where / "warehouse"))
            row = {"topology": name, **run_workload([p.port for p in procs], args.clients, args.seconds, args.writes),
                   "load_after": [round(x, 2) for x in os.getloadavg()]}
            print(json.dumps(row), file=sys.stderr, flush=True)
            rows.append(row)
        finally:
            for fn in reversed(cleanup):
                try:
                    fn()
                except Exception as exc:  # noqa: BLE001 - the next topology still runs
                    print(f"cleanup: {exc}", file=sys.stderr)
    return rows


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--topologies", default="single,galera,patroni")
    p.add_argument("--servers", default="1,2,3")
    p.add_argument("--seconds", type=float, default=10.0)
    p.add_argument("--clients", type=int, default=6)
    p.add_argument("--writes", type=float, default=0.2)
    p.add_argument("--json")
    return p


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    counts = [int(x) for x in args.servers.split(",")]
    base = Path(tempfile.mkdtemp(prefix="scale-out-"))
    machine = {"nproc": os.cpu_count(), "load_before": [round(x, 2) for x in os.getloadavg()]}
    print(json.dumps(machine), file=sys.stderr)
    rows = []
    for name in args.topologies.split(","):
        rows += run_topology(name, counts, args, base)
    print(f"{'topology':9} {'servers':>7} {'calls/s':>8} {'read p50':>9} {'read p99':>9} {'write p50':>9} "
          f"{'write p99':>9} {'errors':>6}")
    for r in rows:
        print(f"{r['topology']:9} {r['servers']:>7} {r['calls_per_s']:>8} {r['read_p50_ms']!s:>9} "
              f"{r['read_p99_ms']!s:>9} {r['write_p50_ms']!s:>9} {r['write_p99_ms']!s:>9} {r['errors']:>6}")
    if args.json:
        Path(args.json).write_text(json.dumps({"machine": machine, "rows": rows}, indent=1))
    return 0 if all(r["errors"] == 0 for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
