"""RFC-15's CLI views of a Hudi table, served by the metastore: `stats`, `list-partitions`,
`list-files`. Each prints how long the lookup took (on stderr with --json, so stdout stays JSON)."""

from __future__ import annotations

import functools
import json
import sys
import time

from adapter.commands.table_cli import BadArgument, connect, reporting_errors, require_hudi_table, split_table
from hudi_format.config_keys import STORAGE_PATH, STORAGE_STRATEGY_CLASS
from hudi_format.storage_strategy import file_location, load_strategy


def _took(args, seconds: float) -> None:
    print(f"lookup took {seconds * 1000:.1f} ms", file=sys.stderr if args.json else sys.stdout)


def run_stats(args) -> int:
    def go() -> int:
        db, tbl = split_table(args.table)
        with connect(args) as c:
            require_hudi_table(c, db, tbl)
            started = time.perf_counter()
            st = c.get_hudi_table_stats(db, tbl)
            elapsed = time.perf_counter()
        last = st.last_instant
        doc = {"table": f"{db.lower()}.{tbl.lower()}", "partitions": st.partitions, "files": st.files,
               "total_size_bytes": st.total_size_bytes,
               "last_instant": None if last is None else {
                   "timestamp": last.ts, "action": last.action, "state": last.state,
                   "completion_time": last.completion_ts},
               "table_version": st.table_version, "storage_mirror": st.mirrored,
               "storage_mirror_lag_versions": st.mirror_lag_versions if st.mirrored else None,
               "record_index_keys": st.record_index_keys}
        if args.json:
            print(json.dumps(doc, indent=2))
        else:
            print(f"table               {doc['table']}")
            print(f"partitions          {st.partitions}")
            print(f"files               {st.files} (live, every version)")
            print(f"total size          {st.total_size_bytes} bytes")
            done = "-" if last is None else f"{last.ts}.{last.action} (completed {last.completion_ts})"
            print(f"last instant        {done}")
            print(f"snapshot version    {st.table_version}")
            lag = f"{st.mirror_lag_versions} version(s)" if st.mirrored else "n/a (not mirrored: keeps its own layout)"
            print(f"storage mirror lag  {lag}")
            keys = "n/a (no record index)" if st.record_index_keys is None else str(st.record_index_keys)
            print(f"record index keys   {keys}")
        _took(args, elapsed - started)
        return 0

    return reporting_errors("stats", args.metastore, go)


def run_list_partitions(args) -> int:
    def go() -> int:
        db, tbl = split_table(args.table)
        with connect(args) as c:
            require_hudi_table(c, db, tbl)
            started = time.perf_counter()
            parts = c.get_hudi_partitions(db, tbl)
            took = time.perf_counter() - started
        if args.json:
            print(json.dumps(list(parts)))
        else:
            print("PARTITION")
            for p in parts:
                print(p if p else "(unpartitioned)")
            print(f"{len(parts)} partition(s)")
        _took(args, took)
        return 0

    return reporting_errors("list-partitions", args.metastore, go)


def slice_doc(s) -> dict:
    return {"partition": s.partition_path, "file_id": s.file_id, "base_instant": s.base_instant,
            "base_file": s.base_file.name if s.base_file else None, "log_files": [f.name for f in s.log_files]}


def with_paths(doc: dict, s, strategy) -> dict:
    """A slice's document with its files' full paths: as the server answers them, else (a custom
    storage strategy, which the server never loads) where the table's strategy puts them."""
    part = doc["partition"] or ""

    def path(f) -> str:
        return f.path or file_location(strategy(), part, f.name)

    doc["base_file_path"] = path(s.base_file) if s.base_file else None
    doc["log_file_paths"] = [path(f) for f in s.log_files]
    return doc


def _strategy(client, db: str, tbl: str):
    cfg = client.get_hudi_table(db, tbl)
    props = cfg.properties
    try:
        return load_strategy(props.get(STORAGE_STRATEGY_CLASS), cfg.base_path or "", props.get(STORAGE_PATH),
                             cfg.table_name)
    except ValueError as exc:
        raise BadArgument(f"{db}.{tbl}: {exc}") from exc


def run_list_files(args) -> int:
    def go() -> int:
        db, tbl = split_table(args.table)
        if args.partition is not None and args.partition.strip("/") != args.partition:
            raise BadArgument(f"partition path {args.partition!r} must not start or end with '/'")
        with connect(args) as c:
            require_hudi_table(c, db, tbl)
            started = time.perf_counter()
            if args.partition is not None and args.partition not in c.get_hudi_partitions(db, tbl):
                raise BadArgument(f"{db}.{tbl} has no partition {args.partition!r}")
            pruned = None
            if getattr(args, "where", None) is not None:
                pruned = c.prune_file_slices(db, tbl, args.where)
                slices = [s for s in pruned.slices if args.partition is None or s.partition_path == args.partition]
            else:
                slices = c.get_latest_file_slices(db, tbl, [args.partition] if args.partition is not None else None)
            took = time.perf_counter() - started
            strategy = functools.cache(lambda: _strategy(c, db, tbl))  # asked only for a custom strategy
            docs = [with_paths(slice_doc(s), s, strategy) for s in slices]
        if args.json and pruned is not None:
            print(json.dumps({"slices": docs, "files_skipped": pruned.files_skipped,
                              "partitions_skipped": pruned.partitions_skipped,
                              "files_considered": pruned.files_considered}, indent=2))
        elif args.json:
            print(json.dumps(docs, indent=2))
        else:
            print("PARTITION\tFILE_ID\tBASE_INSTANT\tBASE_FILE\tLOG_FILES")
            for d in docs:
                print(f"{d['partition'] or '(table)'}\t{d['file_id']}\t{d['base_instant']}\t{d['base_file'] or '-'}"
                      f"\t{','.join(d['log_files']) or '-'}")
            print(f"{len(docs)} file slice(s)")
            if pruned is not None:
                print(f"{pruned.files_skipped} of {pruned.files_considered} base file(s) and "
                      f"{pruned.partitions_skipped} partition(s) skipped by statistics and the partition filter")
        _took(args, took)
        return 0

    return reporting_errors("list-files", args.metastore, go)
