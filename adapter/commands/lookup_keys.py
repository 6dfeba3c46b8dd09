"""`hudi-metastore lookup-keys DB.TABLE KEY... [--json]`: where record keys live, from the table's
record-level index (one lookup_record_keys call per 200,000 keys). Text output: one line per key,
`key<TAB>partition<TAB>file id<TAB>instant` (`-` for an unknown key); `--json`: a list of objects
with key, partition, file_id, instant (partition, file_id and instant null for an unknown key).
Exit status 0 even when keys are unknown; 2 on errors (no such table, a table without the index)."""

from __future__ import annotations

import json
import sys
import time

from adapter.commands.table_cli import connect, reporting_errors, require_hudi_table, split_table


def key_docs(keys: list[str], found) -> list[dict]:
    return [{"key": k, "partition": f[0] if f else None, "file_id": f[1] if f else None,
             "instant": f[2] if f else None} for k, f in zip(keys, found)]


def run_lookup_keys(args) -> int:
    def go() -> int:
        db, tbl = split_table(args.table)
        with connect(args) as c:
            require_hudi_table(c, db, tbl)
            started = time.perf_counter()
            found = c.lookup_record_keys(db, tbl, args.keys)
            took = time.perf_counter() - started
        docs = key_docs(args.keys, found)
        if args.json:
            print(json.dumps(docs, indent=2))
        else:
            for d in docs:
                where = "-" if d["partition"] is None else \
                    f"{d['partition'] or '(table)'}\t{d['file_id']}\t{d['instant']}"
                print(f"{d['key']}\t{where}")
            print(f"{sum(f is not None for f in found)} of {len(found)} key(s) found")
        print(f"lookup took {took * 1000:.1f} ms", file=sys.stderr if args.json else sys.stdout)
        return 0

    return reporting_errors("lookup-keys", args.metastore, go)

