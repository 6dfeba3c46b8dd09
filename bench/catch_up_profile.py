"""Where a catch-up's time goes (issue 44): the catch-up of one commit of Hudi's own writer, in
process (no Thrift), with each phase timed and one round under cProfile.

    python -m bench.catch_up_profile [--backend postgres|sqlite] [--files 1000] [--commit-partitions 100]
        [--rounds 5] [--profile-top 40]

The table and its commits are bench/hudi_sync_bench.py's (Hudi 1.2's layout). Each round writes one
more commit on storage (untimed), then times `TimelineCatchUp.read` (storage: timeline, commit
metadata) and `apply` (the transaction) apart, then the whole sync call
(`alter_table_with_environment_context`) of the next commit, then the settling of the index backlog
it left (the new files' footers and keys, read after the call: a server does it on a thread of its
own); the last round's call runs under cProfile.
"""

from __future__ import annotations

import argparse
import cProfile
import io
import pstats
import statistics
import sys
import tempfile
import time
from pathlib import Path

from bench import procs
from bench.hudi_sync_bench import DB, HudiTableOnStorage, partition_names, synced_table


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--backend", choices=["postgres", "sqlite"], default="postgres")
    p.add_argument("--files", type=int, default=1000)
    p.add_argument("--commit-partitions", type=int, default=100)
    p.add_argument("--rows-per-file", type=int, default=10)
    p.add_argument("--rounds", type=int, default=5)
    p.add_argument("--profile-top", type=int, default=40)
    p.add_argument("--sql-top", type=int, default=25, help="statements of the profiled call, by total time")
    args = p.parse_args(argv)

    from adapter.handlers.tables import TableHandler
    from store.db.database import Store
    from store.db.migrations import upgrade
    from store.services import build_services
    from thrift_idl.hive_metastore.ttypes import Database, EnvironmentContext

    tmp = Path(tempfile.mkdtemp(prefix="catch-up-profile-"))
    cleanup = []
    if args.backend == "postgres":
        dbname = procs.create_pg_database("cuprof")
        cleanup.append(lambda: procs.drop_pg_database(dbname))
        url = procs.pg_url(dbname)
    else:
        url = f"sqlite:///{tmp / 'metastore.db'}"
    try:
        store = Store(url, str(tmp / "wh"))
        upgrade(store.engine)
        s = build_services(store)
        tables = TableHandler(s.tables, s.partitions, s.timeline, constraints=s.constraints,
                              table_filter=s.table_filter, hudi_sync=s.hudi_sync)
        s.tables.create_database(Database(name=DB, locationUri="file:" + str(tmp / "dbloc")))
        table = HudiTableOnStorage(tmp / "trips", "trips", args.rows_per_file)
        parts = partition_names(args.commit_partitions)
        table.commit(parts, groups_per_partition=max(1, args.files // len(parts)))
        t0 = time.perf_counter()
        tables.create_table(synced_table("trips", table.base))
        print(f"registration: {(time.perf_counter() - t0) * 1000:.0f} ms", file=sys.stderr)
        sync = s.hudi_sync
        assert sync is not None
        sql = _SqlTimes(store)
        sync.background = False  # each round's backlog is settled (and timed) after its call
        reads, applies, calls, settles = [], [], [], []
        prof = cProfile.Profile()
        for i in range(args.rounds):
            table.commit()
            t0 = time.perf_counter()
            pending = sync.read(DB, "trips")
            t1 = time.perf_counter()
            store.run_write(sync.apply, pending)
            t2 = time.perf_counter()
            sync.settle(DB, "trips")
            reads.append((t1 - t0) * 1000)
            applies.append((t2 - t1) * 1000)
            ts = table.commit()
            t = s.tables.get_table(DB, "trips")
            t.parameters = {**(t.parameters or {}), "last_commit_time_sync": ts}
            last = i == args.rounds - 1
            if last:
                prof.enable()
            sql.reset()
            t3 = time.perf_counter()
            tables.alter_table_with_environment_context(DB, "trips", t, EnvironmentContext(properties={}))
            calls.append((time.perf_counter() - t3) * 1000)
            t4 = time.perf_counter()
            sync.settle(DB, "trips")  # waits for the server's thread, if that took the backlog first
            settles.append((time.perf_counter() - t4) * 1000)
            if last:
                prof.disable()
                sql.report(args.sql_top)
            else:
                sql.summary()
            print(f"round {i}: read {reads[-1]:.0f} ms, apply {applies[-1]:.0f} ms, "
                  f"whole sync call {calls[-1]:.0f} ms, settle after it {settles[-1]:.0f} ms", file=sys.stderr)
        print(f"median: read {statistics.median(reads):.0f} ms, apply {statistics.median(applies):.0f} ms, "
              f"whole sync call {statistics.median(calls):.0f} ms, settle after it {statistics.median(settles):.0f} ms "
              f"({args.backend}, {args.files} files)")
        out = io.StringIO()
        pstats.Stats(prof, stream=out).sort_stats("cumulative").print_stats(args.profile_top)
        print(out.getvalue())
        out = io.StringIO()
        pstats.Stats(prof, stream=out).sort_stats("tottime").print_stats(args.profile_top)
        print(out.getvalue())
        s.close()
    finally:
        for fn in cleanup:
            fn()
    return 0


class _SqlTimes:
    """Wall time of each SQL statement (and COPY) the call runs, grouped by the statement's text."""

    def __init__(self, store) -> None:
        from sqlalchemy import event

        from store.db import bulk

        self.times: dict[str, list[float]] = {}
        self._start: list[float] = []
        for engine in {id(store.engine): store.engine, id(store.read_engine): store.read_engine}.values():
            event.listen(engine, "before_cursor_execute", self._before)
            event.listen(engine, "after_cursor_execute", self._after)
        inner = bulk._insert

        def timed(conn, table, columns, rows, pg_types, batch):
            t0 = time.perf_counter()
            try:
                return inner(conn, table, columns, rows, pg_types, batch)
            finally:
                self._add(f"COPY/bulk {table.name} ({len(rows)} rows)", time.perf_counter() - t0)

        bulk._insert = timed

    def reset(self) -> None:
        self.times = {}

    def _before(self, conn, cursor, statement, parameters, context, executemany) -> None:
        self._start.append(time.perf_counter())

    def _after(self, conn, cursor, statement, parameters, context, executemany) -> None:
        self._add(" ".join(statement.split())[:110], time.perf_counter() - self._start.pop())

    def _add(self, key: str, dt: float) -> None:
        self.times.setdefault(key, []).append(dt * 1000)

    def summary(self) -> None:
        n = sum(len(v) for v in self.times.values())
        total = sum(sum(v) for v in self.times.values())
        print(f"  sql: {n} statements, {total:.0f} ms", file=sys.stderr)

    def report(self, top: int) -> None:
        self.summary()
        for key, v in sorted(self.times.items(), key=lambda kv: -sum(kv[1]))[:top]:
            print(f"  {sum(v):7.1f} ms {len(v):4d}x  {key}", file=sys.stderr)


if __name__ == "__main__":
    sys.exit(main())
