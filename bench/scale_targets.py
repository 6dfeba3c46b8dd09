"""Issue 16's targets that are not ratios of one call, run by `bench.java_client` after its pairings.

* One table with `--scale` partitions (default 1,000,000) on PostgreSQL, ours and then the reference
  with `--scale-ref-budget` seconds to add its partitions (`bench/partition_scale.py`, Python client):
  the filter selecting 24 partitions (target < 20 ms) and the server's peak memory while answering
  ~100,000 partitions (target < 1 GiB), with the adds, `get_partition_names` and a drop of 10,000.
* `complete_instant` of a commit writing 10,000 files over 100 partitions, `--commits` times on one
  table that grows by 10,000 files per commit (`bench/hudi_bench.py`; target < 0.3 s, flat). The
  reference has no such call.
"""

from __future__ import annotations

import shutil
import statistics
import tempfile
from pathlib import Path

from bench import partition_scale

FILTER_MS, MEMORY_MIB, COMMIT_MS = 20.0, 1024, 300.0


def run(scale: int, batch: int, ref_budget: float, commits: int, commit_files: int) -> dict:
    out: dict = {}
    if scale:
        out["scale"] = partition_scale.run(scale, batch, ref_budget, ["ours", "reference"])
    if commits:
        out["commits"] = complete_instant(commits, commit_files)
    return out


def complete_instant(iterations: int, files: int) -> dict:
    from bench import hudi_bench

    args = hudi_bench.build_parser().parse_args(
        ["--backend", "postgres", "--iterations", str(iterations), "--files", str(files)])
    tmp = Path(tempfile.mkdtemp(prefix="hudi-commits-"))
    bench = hudi_bench.HudiBench("postgres", args, tmp)
    try:
        bench.start()
        bench.bench_complete()
    finally:
        bench.stop()
        shutil.rmtree(tmp, ignore_errors=True)
    return {**bench.rows[0], "server": bench.info.get("server")}


def _verdict(ok: bool | None) -> str:
    return "" if ok is None else ("PASS" if ok else "FAIL")


def _cell(side: dict | None, key: str, fmt) -> str:
    if not side:
        return "not run"
    if key in side:
        return fmt(side[key])
    failed = [k for k in side if k.endswith("_failed")]
    return f"fails ({side[failed[0]][:80]})" if failed else "-"


def render(res: dict) -> str:
    """The Markdown table of these targets."""
    lines = ["| step | reference | ours | target |  |", "|---|---|---|---|---|"]
    scale = res.get("scale")
    if scale:
        ours, ref = scale.get("ours") or {}, scale.get("reference") or {}

        def size(side: dict) -> str:
            n = side.get("partitions")
            return f" at {n:,}" if n is not None else ""

        lines.append(
            f"| partitions added (batches of {scale['batch']:,}) | "
            + " | ".join(_cell(s, "partitions", lambda n, s=s: f"{n:,} in {s['add_seconds']:.0f} s "
                                                                 f"({s['add_rate_per_s']:,}/s)")
                         for s in (ref, ours)) + " |  |  |")
        f_ok = ours.get("filter_24_ms") is not None and ours.get("partitions") == scale["n"]
        lines.append(
            f"| filter selecting 24 partitions (median of 11) | "
            f"{_cell(ref, 'filter_24_ms', lambda v: f'{v:.1f} ms')}{size(ref)} | "
            f"{_cell(ours, 'filter_24_ms', lambda v: f'{v:.1f} ms')}{size(ours)} | < {FILTER_MS:g} ms at "
            f"{scale['n']:,} | {_verdict(ours['filter_24_ms'] < FILTER_MS if f_ok else None)} |")
        lines.append(
            "| `get_partition_names`, whole table (median of 3) | "
            + " | ".join(_cell(s, "names_s", lambda v, s=s: f"{v:.2f} s ({s['names_rows']:,} names)")
                         for s in (ref, ours)) + " |  |  |")

        def memory(s: dict) -> str:
            rows = s.get("get_100k_rows")
            got = f"{rows:,} partitions in {s['get_100k_s']:.2f} s" if rows is not None else "failed"
            return f"peak {s['rss_peak_mib']:,} MiB ({s['rss_before_mib']:,} before); {got}"

        m_ok = ours.get("get_100k_rows") is not None
        lines.append(
            "| server memory answering ~100,000 partitions (`get_partitions_by_filter`) | "
            + " | ".join(_cell(s, "rss_peak_mib", lambda _v, s=s: memory(s)) for s in (ref, ours))
            + f" | < 1 GiB | {_verdict(ours['rss_peak_mib'] < MEMORY_MIB if m_ok else None)} |")
        lines.append(
            "| drop 10,000 partitions by name | "
            + " | ".join(_cell(s, "drop_10k_s", lambda v: f"{v:.2f} s") for s in (ref, ours)) + " |  |  |")
    commits = res.get("commits")
    if commits:
        tenth = max(1, len(commits["samples_ms"]) // 10)
        first = statistics.median(commits["samples_ms"][:tenth])
        last = statistics.median(commits["samples_ms"][-tenth:])
        files = commits["table_files_before"]
        lines.append(
            f"| `complete_instant` of {commits['files']:,} files over {commits['partitions']} partitions "
            f"({commits['iterations']} commits; table from {files[0]:,} to {files[-1]:,} files) | no such call | "
            f"median {commits['median_ms']:.0f} ms (first {tenth}: {first:.0f} ms, last {tenth}: {last:.0f} ms); "
            f"check {commits['check']} | < {COMMIT_MS:g} ms, flat | "
            f"{_verdict(commits['median_ms'] < COMMIT_MS and last < COMMIT_MS)} |")
    return "\n".join(lines)
