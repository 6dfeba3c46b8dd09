"""The operations, run against one metastore (one :class:`SideBench` per server).

Each ``op_*`` method returns a result dict: the summary from :func:`bench.stats.summarize` plus
``result_size`` (what the call returned, checked against ``expected``) and, for loads, timings.
Write operations form a chain per N so that every partition loaded is used twice, as hmsbench's
pre/post steps would otherwise reload N partitions per iteration:

  addPartitions.N (one call)        -> leaves tables A_0..A_k with N partitions each
  addPartitions.N (batches of 100)  -> leaves tables B_0..B_k
  alterPartitions.N                 -> alters B_0's partitions each iteration
  dropPartitions.N                  -> drops all partitions of A_i (one drop_partitions_req each)
  dropTableWithPartitions.N         -> drops B_i (drop_table, deleteData=true)
"""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass, field

from bench import workload as w
from bench.stats import measure, summarize
from thrift_idl.hive_metastore.ttypes import FieldSchema, GetTableRequest


@dataclass
class Config:
    warmup: int = 10               # light operations (hmsbench default: 15)
    iterations: int = 100          # light operations (hmsbench default: 100)
    budget_s: float = 20.0         # per op and side: stop the timed phase after this (>= 3 samples)
    write_warmup: int = 1          # write chain: warm-up rounds, at min(N, 1000) partitions
    write_iterations: int = 5      # write chain: timed rounds at N <= 1000
    write_iterations_large: int = 3  # write chain: timed rounds at N > 1000
    add_batch: int = 100           # addPartitions "batches of" variant
    load_batch: int = 500          # add_partitions batch when loading tables for reads
    threads: int = 8               # concurrent getTable
    concurrency_s: float = 10.0
    prewarm_s: float = 30.0        # untimed mixed calls per server before measuring
    big_n: int = 100_000
    big_batch: int = 1000
    # dropPartitions sends at most this many names per drop_partitions_req: Hive 2.3 compiles the
    # names into one JDOQL OR-expression and its DataNucleus compiler overflows the thread stack on
    # 10,000 (StackOverflowError, the connection drops), so N > 1000 is dropped in calls of 1000
    drop_batch: int = 1000

    def write_rounds(self, n: int) -> tuple[int, int]:
        return self.write_warmup, (self.write_iterations if n <= 1000 else self.write_iterations_large)


@dataclass
class SideBench:
    name: str
    port: int
    cfg: Config
    client: w.Client = None
    read_count: int = 0
    read_table: object = None
    list_count: int = 0
    chain: dict = field(default_factory=dict)
    loads: list = field(default_factory=list)   # (what, count, seconds)
    on_load: object = None   # called after each loading step (the pairing runs ANALYZE there)

    def __post_init__(self):
        self.client = w.Client(self.port)

    def close(self):
        self.client.close()

    def reconnect(self):
        """A fresh connection (after the server dropped one)."""
        self.client.close()
        self.client = w.Client(self.port)

    # ----------------------------------------------------------------- setup

    def setup(self):
        w.ensure_database(self.client, w.BENCH_DB)
        w.ensure_database(self.client, w.LIST_TABLES_DB)
        w.recreate_table(self.client, w.BENCH_DB, "t_get")

    def prewarm(self, seconds: float):
        """Untimed mixed calls before any measurement, so the reference's JIT has compiled the hot
        paths (hmsbench's per-op warm-up of 15 calls is short for a cold JVM)."""
        if seconds <= 0:
            return
        t0 = time.monotonic()
        c = self.client
        tbl = w.recreate_table(c, w.BENCH_DB, "t_prewarm")
        req = GetTableRequest(dbName=w.BENCH_DB, tblName="t_get")
        rounds = 0
        while time.monotonic() - t0 < seconds or rounds < 1:
            w.add_partitions(c, tbl, range(rounds * 200, rounds * 200 + 200), 100)
            names = c.get_partition_names(w.BENCH_DB, "t_prewarm", -1)
            parts = c.get_partitions(w.BENCH_DB, "t_prewarm", -1)
            c.get_partitions_by_names(w.BENCH_DB, "t_prewarm", names[:100])
            c.get_partitions_by_filter(w.BENCH_DB, "t_prewarm", w.FILTER_OR6, -1)
            c.alter_partitions(w.BENCH_DB, "t_prewarm", parts[:100])
            for _ in range(100):
                c.get_table_req(req)
                c.get_all_databases()
            c.get_all_tables(w.BENCH_DB)
            w.drop_partitions_by_names(c, w.BENCH_DB, "t_prewarm", names[:100])
            rounds += 1
        w.drop_table(c, w.BENCH_DB, "t_prewarm")
        self.loads.append((f"pre-warm ({rounds} rounds of mixed calls)", 0, round(time.monotonic() - t0, 2)))

    def _light(self, fn, expected=None):
        c = self.cfg
        box = {}

        def test(_i):
            box["r"] = fn()

        samples = measure(test, warmup=c.warmup, iterations=c.iterations, budget_s=c.budget_s)
        out = summarize(samples)
        r = box.get("r")
        if isinstance(r, list):
            out["result_size"] = len(r)
        if expected is not None:
            out["expected"] = expected
        return out

    # ----------------------------------------------------------------- light ops

    def op_get_table(self):
        req = GetTableRequest(dbName=w.BENCH_DB, tblName="t_get")
        return self._light(lambda: self.client.get_table_req(req).table)

    def op_list_databases(self):
        return self._light(lambda: self.client.get_all_databases())

    def op_concurrent_get_table(self):
        """``threads`` clients (one connection each) calling get_table_req for ``concurrency_s``."""
        c = self.cfg
        clients = [w.Client(self.port) for _ in range(c.threads)]
        req = GetTableRequest(dbName=w.BENCH_DB, tblName="t_get")
        lat: list[list[float]] = [[] for _ in clients]
        errors: list[str] = []
        phase = {"stop": 0.0}
        barrier = threading.Barrier(len(clients) + 1)

        def worker(k: int):
            cl = clients[k]
            mine = lat[k]
            try:
                barrier.wait()
                while time.monotonic() < phase["warm_end"]:
                    cl.get_table_req(req)
                while True:
                    t0 = time.perf_counter()
                    if time.monotonic() >= phase["stop"]:
                        break
                    cl.get_table_req(req)
                    mine.append(time.perf_counter() - t0)
            except Exception as e:
                errors.append(f"{type(e).__name__}: {e}")

        threads = [threading.Thread(target=worker, args=(k,), daemon=True) for k in range(len(clients))]
        for t in threads:
            t.start()
        warm = min(2.0, c.concurrency_s / 4)
        phase["warm_end"] = time.monotonic() + 60  # set properly below, before releasing the barrier
        now = time.monotonic()
        phase["warm_end"] = now + warm
        phase["stop"] = now + warm + c.concurrency_s
        barrier.wait()
        for t in threads:
            t.join(timeout=c.concurrency_s + warm + 120)
        for cl in clients:
            cl.close()
        samples = [x for lst in lat for x in lst]
        out = summarize(samples)
        out.pop("samples_ms", None)   # thousands of samples: keep the summary only
        out["threads"] = c.threads
        out["seconds"] = c.concurrency_s
        out["calls"] = len(samples)
        out["throughput"] = round(len(samples) / c.concurrency_s, 1)
        if errors:
            out["errors"] = errors[:5]
        return out

    # ----------------------------------------------------------------- read ops on an N-partition table

    def ensure_read_table(self, n: int):
        if self.read_table is None:
            self.read_table = w.recreate_table(self.client, w.BENCH_DB, "t_read")
        if n > self.read_count:
            t0 = time.monotonic()
            w.add_partitions(self.client, self.read_table, range(self.read_count, n), self.cfg.load_batch)
            self.loads.append((f"read table {self.read_count}->{n} partitions", n - self.read_count,
                               round(time.monotonic() - t0, 2)))
            self.read_count = n
            self._loaded()

    def _loaded(self):
        if self.on_load is not None:
            self.on_load()

    def op_partition_names(self, n):
        self.ensure_read_table(n)
        return self._light(lambda: self.client.get_partition_names(w.BENCH_DB, "t_read", -1), expected=n)

    def op_get_partitions(self, n):
        self.ensure_read_table(n)
        return self._light(lambda: self.client.get_partitions(w.BENCH_DB, "t_read", -1), expected=n)

    def op_by_names(self, n):
        self.ensure_read_table(n)
        names = [w.flat_name(i) for i in range(n)]
        return self._light(lambda: self.client.get_partitions_by_names(w.BENCH_DB, "t_read", names), expected=n)

    def op_filter(self, n, expr, expected):
        self.ensure_read_table(n)
        return self._light(lambda: self.client.get_partitions_by_filter(w.BENCH_DB, "t_read", expr, -1),
                           expected=expected)

    def op_list_tables(self, n):
        if n > self.list_count:
            t0 = time.monotonic()
            w.create_tables(self.client, w.LIST_TABLES_DB, self.list_count, n)
            self.loads.append((f"list db {self.list_count}->{n} tables", n - self.list_count,
                               round(time.monotonic() - t0, 2)))
            self.list_count = n
            self._loaded()
        # the benchmark database also holds nothing else; expected = n
        return self._light(lambda: self.client.get_all_tables(w.LIST_TABLES_DB), expected=n)

    # ----------------------------------------------------------------- write chain

    def _warm_n(self, n: int) -> int:
        return min(n, 1000)

    def op_add(self, n: int, mode: str):
        """mode "one": one add_partitions call of N; "batch": add_partitions in batches of add_batch."""
        c = self.cfg
        warmup, iterations = c.write_rounds(n)
        batch = n if mode == "one" else c.add_batch
        tables: dict[int, tuple[object, int]] = {}

        def pre(i):
            name = f"t_add_{mode}_{n}_{'w' if i < 0 else ''}{abs(i)}"
            tables[i] = (w.recreate_table(self.client, w.BENCH_DB, name), 0)

        def add(i, count):
            tbl, _ = tables[i]
            b = count if mode == "one" else batch
            added = w.add_partitions(self.client, tbl, range(count), b)
            tables[i] = (tbl, added)

        samples = measure(lambda i: add(i, n), warmup=warmup, iterations=iterations, pre=pre,
                          warm_test=lambda i: add(i, self._warm_n(n)))
        self.chain[(n, mode)] = tables
        out = summarize(samples)
        out["result_size"] = min((cnt for i, (_, cnt) in tables.items() if i >= 0), default=0)
        out["expected"] = n
        out["calls_per_iteration"] = 1 if mode == "one" else -(-n // batch)
        return out

    def _chain_tables(self, n, mode):
        tables = self.chain.get((n, mode))
        if not tables:
            raise RuntimeError(f"addPartitions.{n} ({mode}) did not leave tables to work on")
        warm = sorted((i for i in tables if i < 0), reverse=True)
        timed = sorted(i for i in tables if i >= 0)
        return tables, warm, timed

    def op_alter(self, n: int):
        tables, _, timed = self._chain_tables(n, "batch")
        tbl, count = tables[timed[0]]
        parts = self.client.get_partitions(w.BENCH_DB, tbl.tableName, -1)
        base_cols = list(tbl.sd.cols)
        extra_cols = base_cols + [FieldSchema("new_col", "string", None)]
        warmup, iterations = self.cfg.write_rounds(n)
        iterations = max(iterations, 3)

        def alter(i, subset):
            for p in subset:
                p.parameters = dict(p.parameters or {})
                p.parameters["bench_iter"] = str(i)
                p.sd.cols = extra_cols if i % 2 == 0 else base_cols
            self.client.alter_partitions(w.BENCH_DB, tbl.tableName, subset)

        samples = measure(lambda i: alter(i, parts), warmup=warmup, iterations=iterations,
                          warm_test=lambda i: alter(i, parts[: self._warm_n(n)]))
        out = summarize(samples)
        out["result_size"] = len(parts)
        out["expected"] = n
        return out

    def op_drop_partitions(self, n: int):
        tables, warm, timed = self._chain_tables(n, "one")
        names: dict[int, list[str]] = {}
        sizes = []

        def _pick(i):
            return warm[-1 - i] if i < 0 else timed[i]

        def pre(i):
            _, count = tables[_pick(i)]
            names[i] = [w.flat_name(k) for k in range(count)]

        step = self.cfg.drop_batch

        def test(i):
            tbl, _ = tables[_pick(i)]
            dropped = 0
            for k in range(0, len(names[i]), step):
                res = w.drop_partitions_by_names(self.client, w.BENCH_DB, tbl.tableName, names[i][k:k + step])
                dropped += len(res.partitions or [])
            if i >= 0:
                sizes.append(dropped)

        samples = measure(test, warmup=len(warm), iterations=len(timed), pre=pre)
        for tbl, _ in tables.values():      # the emptied tables are not needed any more
            w.drop_table(self.client, w.BENCH_DB, tbl.tableName)
        out = summarize(samples)
        out["result_size"] = min(sizes) if sizes else 0
        out["expected"] = n
        out["calls_per_iteration"] = -(-n // step)
        return out

    def op_drop_table(self, n: int):
        tables, warm, timed = self._chain_tables(n, "batch")

        def _pick(i):
            return warm[-1 - i] if i < 0 else timed[i]

        def test(i):
            tbl, _ = tables[_pick(i)]
            self.client.drop_table(w.BENCH_DB, tbl.tableName, True)

        samples = measure(test, warmup=len(warm), iterations=len(timed))
        out = summarize(samples)
        out["result_size"] = min(cnt for i, (_, cnt) in tables.items() if i >= 0)
        out["expected"] = n
        self.chain.pop((n, "batch"), None)
        self.chain.pop((n, "one"), None)
        return out

    # ----------------------------------------------------------------- big table

    def load_big(self, big_n: int) -> float:
        tbl = w.recreate_table(self.client, w.BENCH_DB, "t_big")
        t0 = time.monotonic()
        w.add_partitions(self.client, tbl, range(big_n), self.cfg.big_batch, values=w.big_values)
        secs = round(time.monotonic() - t0, 2)
        self.loads.append((f"big table {big_n} partitions", big_n, secs))
        self._loaded()
        return secs

    def op_big_filter(self, big_n: int):
        return self._light(lambda: self.client.get_partitions_by_filter(w.BENCH_DB, "t_big", w.BIG_FILTER, -1),
                           expected=w.BIG_EXPECTED)
