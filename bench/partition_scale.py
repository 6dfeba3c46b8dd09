"""One table with a million partitions, our server and the reference Hive Metastore, both on PostgreSQL.

    python -m bench.partition_scale [--n 1000000] [--batch 10000] [--ref-budget 1800] [--json out.json]

For each server (fresh PostgreSQL database each, started here on free ports): one table
partitioned by (`day`, `hour`), `--n` partitions added with `add_partitions_req` in batches of
`--batch`; then a filter selecting the 24 partitions of one day (median of 11), `get_partition_names`
of the whole table (median of 3), `get_partitions_by_filter` answering ~100,000 partitions while the
server's resident memory (its process tree, sampled every 20 ms) is watched, and dropping 10,000
partitions by name (`drop_partitions_req`). The reference gets `--ref-budget` seconds to add its
partitions: when it runs out, its queries are measured at the size it reached, and the report says so.
Client: our generated bindings with the accelerated binary protocol (decoding in C).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import sys
import tempfile
import threading
import time
from pathlib import Path

from bench import procs

DB, TABLE = "scale", "parts"
HOURS = 24


def log(msg: str) -> None:
    print(f"[{time.strftime('%H:%M:%S')}] {msg}", file=sys.stderr, flush=True)


def _sd(location: str | None):
    from thrift_idl.hive_metastore.ttypes import FieldSchema, SerDeInfo, StorageDescriptor

    return StorageDescriptor(
        cols=[FieldSchema("id", "bigint", None), FieldSchema("v", "string", None)], location=location,
        inputFormat="org.apache.hadoop.hive.ql.io.parquet.MapredParquetInputFormat",
        outputFormat="org.apache.hadoop.hive.ql.io.parquet.MapredParquetOutputFormat",
        serdeInfo=SerDeInfo(serializationLib="org.apache.hadoop.hive.ql.io.parquet.serde.ParquetHiveSerDe",
                            parameters={}),
        compressed=False, numBuckets=-1, bucketCols=[], sortCols=[], parameters={})


def _day(i: int) -> str:
    return f"d{i:06d}"


def _create(c) -> str:
    from thrift_idl.hive_metastore.ttypes import Database, FieldSchema, Table

    c.create_database(Database(name=DB, description="", parameters={}))
    c.create_table(Table(tableName=TABLE, dbName=DB, owner="bench", sd=_sd(None), parameters={"EXTERNAL": "TRUE"},
                         partitionKeys=[FieldSchema("day", "string", None), FieldSchema("hour", "string", None)],
                         tableType="EXTERNAL_TABLE"))
    return c.get_table(DB, TABLE).sd.location


def _batch(location: str, start: int, count: int) -> list:
    from thrift_idl.hive_metastore.ttypes import Partition

    out = []
    for i in range(start, start + count):
        day, hour = _day(i // HOURS), f"{i % HOURS:02d}"
        out.append(Partition(values=[day, hour], dbName=DB, tableName=TABLE, parameters={},
                             sd=_sd(f"{location}/day={day}/hour={hour}")))
    return out


def add_partitions(c, location: str, n: int, batch: int, budget_s: float) -> tuple[int, float]:
    """(partitions added, seconds): stops at `n` or when `budget_s` is spent."""
    from thrift_idl.hive_metastore.ttypes import AddPartitionsRequest

    done, t0 = 0, time.monotonic()
    while done < n and time.monotonic() - t0 < budget_s:
        count = min(batch, n - done)
        parts = _batch(location, done, count)
        c.add_partitions_req(AddPartitionsRequest(dbName=DB, tblName=TABLE, parts=parts, ifNotExists=False,
                                                  needResult=False))
        done += count
        if done % (batch * 10) == 0:
            log(f"  {done:,} partitions ({done / (time.monotonic() - t0):,.0f}/s)")
    return done, time.monotonic() - t0


def _timed(fn, runs: int) -> tuple[float, object]:
    times, result = [], None
    for _ in range(runs):
        t0 = time.perf_counter()
        result = fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times), result


def _tree_rss(pid: int) -> int:
    """Resident bytes of `pid` and its descendants (Linux /proc)."""
    children: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/stat") as f:
                    ppid = int(f.read().rsplit(")", 1)[1].split()[1])
            except (OSError, IndexError, ValueError):
                continue
            children.setdefault(ppid, []).append(int(entry))
    total, todo = 0, [pid]
    while todo:
        p = todo.pop()
        todo.extend(children.get(p, []))
        try:
            with open(f"/proc/{p}/status") as f:
                for line in f:
                    if line.startswith("VmRSS:"):
                        total += int(line.split()[1]) * 1024
        except OSError:
            pass
    return total


class PeakRss:
    def __init__(self, pid: int):
        self.pid, self.peak, self._stop = pid, 0, threading.Event()
        self.before = _tree_rss(pid)
        self._t = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        while not self._stop.is_set():
            self.peak = max(self.peak, _tree_rss(self.pid))
            time.sleep(0.02)

    def __enter__(self):
        self._t.start()
        return self

    def __exit__(self, *exc) -> None:
        self._stop.set()
        self._t.join()


def measure(server: procs.Server, n: int, batch: int, budget_s: float) -> dict:
    """The steps in order; a step that fails (an error answer, a dropped connection) is recorded as
    `<step>_failed` and the next one runs on a new connection."""
    from thrift_idl.hive_metastore.ttypes import DropPartitionsRequest, RequestPartsSpec

    out: dict = {}
    conn: list = [None, None]

    def client():
        if conn[0] is None:
            conn[0], conn[1] = procs.thrift_client(server.port)
        return conn[0]

    def step(name: str, fn) -> None:
        try:
            fn(client())
        except Exception as e:  # noqa: BLE001 - the failure is the result
            out[f"{name}_failed"] = f"{type(e).__name__}: {e}"[:300]
            log(f"  {name} failed: {out[f'{name}_failed']}")
            try:
                conn[1].close()
            except Exception:  # noqa: BLE001
                pass
            conn[0] = None

    def add(c) -> None:
        location = _create(c)
        added, add_s = add_partitions(c, location, n, batch, budget_s)
        out.update({"partitions": added, "add_seconds": round(add_s, 1),
                    "add_rate_per_s": round(added / add_s), "complete": added == n})

    def filter_24(c) -> None:
        day = _day(out["partitions"] // HOURS // 2)
        t, res = _timed(lambda: c.get_partitions_by_filter(DB, TABLE, f'day = "{day}"', -1), 11)
        out["filter_24_ms"], out["filter_24_rows"] = round(t * 1000, 2), len(res)  # type: ignore[arg-type]

    def names(c) -> None:
        t, res = _timed(lambda: c.get_partition_names(DB, TABLE, -1), 3)
        out["names_s"], out["names_rows"] = round(t, 2), len(res)  # type: ignore[arg-type]

    def get_100k(c) -> None:
        upto = _day(min(100_000, out["partitions"]) // HOURS)
        with PeakRss(server.pid) as rss:
            t0 = time.perf_counter()
            try:
                out["get_100k_rows"] = len(c.get_partitions_by_filter(DB, TABLE, f'day < "{upto}"', -1))
                out["get_100k_s"] = round(time.perf_counter() - t0, 2)
            finally:
                out["rss_before_mib"], out["rss_peak_mib"] = rss.before >> 20, rss.peak >> 20

    def drop_10k(c) -> None:
        names = c.get_partition_names(DB, TABLE, 10_000)
        t0 = time.perf_counter()
        try:
            c.drop_partitions_req(DropPartitionsRequest(dbName=DB, tblName=TABLE, parts=RequestPartsSpec(names=names),
                                                        deleteData=False, needResult=False))
        finally:
            out["drop_10k_s"] = round(time.perf_counter() - t0, 2)
        out["after_drop"] = out["partitions"] - len(names)

    try:
        step("add", add)
        if "partitions" in out:
            for name, fn in (("filter_24", filter_24), ("names", names), ("get_100k", get_100k),
                             ("drop_10k", drop_10k)):
                step(name, fn)
        return out
    finally:
        if conn[0] is not None:
            conn[1].close()


def run(n: int, batch: int, ref_budget: float, sides: list[str]) -> dict:
    """Each side in turn on a fresh PostgreSQL database: {"n", "batch", "postgresql", "load_average",
    side: measure(...)}."""
    results: dict = {"n": n, "batch": batch, "postgresql": procs.pg_version(), "load_average": os.getloadavg()}
    cleanup: list = []
    tmp = Path(tempfile.mkdtemp(prefix="partition-scale-"))
    try:
        for side in sides:
            name = procs.create_pg_database(f"pscale_{side[:3]}")
            cleanup.append(lambda name=name: procs.drop_pg_database(name))
            if side == "ours":
                server = procs.start_ours(procs.pg_url(name), tmp / side)
            else:
                server = procs.start_reference(tmp / side, procs.pg_url(name, "jdbc"), procs.pg_user(), heap="4g")
            cleanup.append(server.stop)  # (cleanup runs in reverse: the server stops before its database goes)
            log(f"{side}: {server.description} on port {server.port}")
            results[f"{side}_server"] = server.description
            budget = float("inf") if side == "ours" else ref_budget
            results[side] = measure(server, n, batch, budget)
            log(f"{side}: {json.dumps(results[side])}")
            server.stop()
    finally:
        procs.cleanup_all(cleanup)
        shutil.rmtree(tmp, ignore_errors=True)
    return results


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--n", type=int, default=1_000_000)
    p.add_argument("--batch", type=int, default=10_000)
    p.add_argument("--ref-budget", type=float, default=1800, help="seconds the reference may spend adding")
    p.add_argument("--skip-reference", action="store_true")
    p.add_argument("--only", choices=["ours", "reference"], help="measure one side")
    p.add_argument("--json", type=Path)
    args = p.parse_args(argv)
    ok, why = procs.pg_available()
    if not ok:
        print(f"PostgreSQL is needed: {why}", file=sys.stderr)
        return 2
    sides = [args.only] if args.only else ["ours"] if args.skip_reference else ["ours", "reference"]
    results = run(args.n, args.batch, args.ref_budget, sides)
    print(json.dumps(results, indent=2))
    if args.json:
        args.json.write_text(json.dumps(results, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
