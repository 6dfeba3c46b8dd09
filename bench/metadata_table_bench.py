"""What writing Hudi's metadata table (store/hudi/metadata_table) adds to the storage mirror's step
of a commit, in process, on a local folder:

    python -m bench.metadata_table_bench [--files 100000] [--partitions 100] [--commit-files 1000]
                                         [--commits 25] [--compact-after 20]

A metadata table holding `--files` files over `--partitions` partitions (its base file), then
`--commits` commits of `--commit-files` new files each, each appended as the mirror appends it
(`MetadataTableWriter.apply`: one log file, or every `--compact-after` commits a new base file
merging the listing). Prints the time of each commit's step, the median of the appending ones and
the compacting ones.
"""

from __future__ import annotations

import argparse
import json
import statistics
import tempfile
import time

from hudi_format import metadata_table as M
from hudi_format.storage import TableStorage
from store.hudi.metadata_table import FILES_DIR, MDT_HOODIE, MetadataTableWriter


def _commit(ts: str, files: int, partitions: int) -> bytes:
    stats: dict[str, list] = {}
    for k in range(files):
        p = f"p={k % partitions}"
        stats.setdefault(p, []).append({"fileId": f"f{k}-{ts}-0", "path": f"{p}/f{k}-{ts}-0_0-1-1_{ts}.parquet",
                                        "partitionPath": p, "fileSizeInBytes": 1000 + k, "prevCommit": "null"})
    return json.dumps({"partitionToWriteStats": stats, "operationType": "INSERT"}).encode()


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--files", type=int, default=100_000)
    p.add_argument("--partitions", type=int, default=100)
    p.add_argument("--commit-files", type=int, default=1000)
    p.add_argument("--commits", type=int, default=25)
    p.add_argument("--compact-after", type=int, default=20)
    a = p.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp:
        st = TableStorage(tmp)
        per = max(1, a.files // a.partitions)
        table = {f"p={i}": {f"g{i}-{j}-0_0-1-1_20240101000000000.parquet": 1000 + j for j in range(per)}
                 for i in range(a.partitions)}
        started = time.perf_counter()
        st.put(f"{FILES_DIR}/{M.base_file_name(M.INIT_INSTANT)}", M.base_file(M.files_records(table)))
        st.put(f"{MDT_HOODIE}/{M.INIT_INSTANT}.deltacommit", b"{}")
        print(f"base file of {per * a.partitions} files: {time.perf_counter() - started:.3f} s")
        writer = MetadataTableWriter(None, lambda: 0, compact_after=a.compact_after)  # type: ignore[arg-type]
        appends, compactions = [], []
        for i in range(a.commits):
            ts = f"20240102{i:09d}"
            meta = _commit(ts, a.commit_files, a.partitions)
            logs_before = sum(1 for n in st.listing(FILES_DIR) if ".log." in n)
            t = time.perf_counter()
            writer.apply(st, ts, "commit", meta)
            took = time.perf_counter() - t
            compacted = M.base_file_name(ts) in st.listing(FILES_DIR)
            (compactions if compacted else appends).append(took)
            print(f"commit {i + 1}: {took * 1000:.0f} ms{' (compaction)' if compacted else ''} "
                  f"[{logs_before} log files before]")
        print(f"median append: {statistics.median(appends) * 1000:.0f} ms"
              + (f", median compaction: {statistics.median(compactions) * 1000:.0f} ms" if compactions else ""))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
