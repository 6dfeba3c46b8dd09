"""`hudi-metastore validate` / `repair`: RFC-15's validate mode for the metastore.

validate compares what the server serves for a Hudi table (timeline, partitions, latest file
slices) with what storage shows (the active timeline and one listing, as a reader without a
metastore sees the table: hudi_format/listing.py) and reports every difference; exit status 0
only when they agree. repair reconciles the server with storage through the import path
(adapter/commands/import_hudi.py): instants missing on the server are imported, files found on
storage only are recorded, live files storage no longer has are marked deleted. For a table keeping
a record index, validate also checks it against the keys of the latest file slices on storage
(each key once, in the file group holding it), and repair rebuilds it from them.
Files in the table's folders no commit wrote (a plain Spark INSERT into a Hudi table writes
part-*.parquet files next to Hudi's) are reported; repair moves them aside, keeping their relative
paths, under QUARANTINE in the table's `.hoodie` folder (readers and listings skip it).
"""

from __future__ import annotations

import sys
from dataclasses import dataclass
from datetime import datetime, timezone

import fsspec

from adapter.commands.import_hudi import ImportReport, read_table, sync_from_storage
from adapter.commands.record_index_build import build_or_turn_off, has_index, index_differences
from adapter.commands.table_cli import connect, reporting_errors, require_hudi_table, split_table
from client import HudiCatalog
from hudi_format.file_slice import FileSlice
from hudi_format.instant import COMPLETED, STATE_NAMES, STATES, instant_key
from hudi_format.listing import StorageView, list_table, storage_view
from hudi_format.storage_timeline import StorageTimeline

QUARANTINE = ".hoodie/.quarantine"  # under the base path; one folder per repair (its UTC time)


@dataclass
class Difference:
    kind: str  # instant | partition | file-slice | file | stray-file | record-index
    detail: str

    def __str__(self) -> str:
        return f"{self.kind}: {self.detail}"


def compare(client: HudiCatalog, db: str, table: str) -> tuple[StorageTimeline, list[Difference]]:
    """Every difference between the server's view of db.table and storage's."""
    cfg = client.get_hudi_table(db, table)
    tl = read_table(cfg.base_path or "")
    listing = list_table(tl)
    view = storage_view(tl, listing)
    diffs = _instant_differences(client, db, table, tl)
    diffs += [Difference("stray-file", f"{folder + '/' if folder else ''}{name} ({size} bytes) was written by no "
                                       "commit (not a Hudi file)") for folder, name, size in listing.strays]
    served = client.get_latest_file_slices(db, table)
    if cfg.partition_fields:
        ours = set(client.get_hudi_partitions(db, table))
        theirs = set(view.partitions)
        # a partition whose file groups were all replaced (insert_overwrite_table) stays registered,
        # as with hive-sync: a difference only when the server still serves files in it
        live = {s.partition_path for s in served}
        diffs += [Difference("partition", f"{p} is on storage only") for p in sorted(theirs - ours)]
        diffs += [Difference("partition", f"{p} is on the server only") for p in sorted((ours - theirs) & live)]
    diffs += _slice_differences(served, view)
    sizes = {(f.partition_path, f.name): f.size for f in view.files}
    for s in served:
        for f in ([s.base_file] if s.base_file else []) + list(s.log_files):
            size = sizes.get((f.partition_path, f.name))
            if size is not None and size != f.size:
                diffs.append(Difference("file", f"{f.partition_path or '(table)'}/{f.name} is {size} bytes on "
                                                f"storage, {f.size} on the server"))
    # (with other differences the index is rebuilt by repair anyway)
    if has_index(cfg) and not [d for d in diffs if d.kind != "stray-file"]:
        diffs += [Difference("record-index", d) for d in index_differences(client, db, table)]
    return tl, diffs


def _instant_differences(client: HudiCatalog, db: str, table: str, tl: StorageTimeline) -> list[Difference]:
    diffs = []
    server = {instant_key(i.ts, i.action): i for i in client.list_instants(db, table)}
    on_storage = {i.key: i for i in tl.instants}
    for inst in tl.instants:
        s = server.get(inst.key)
        where = f"{inst.ts}.{inst.done_action if inst.state == COMPLETED else inst.action}"
        if s is None:
            diffs.append(Difference("instant",
                                    f"{where} is {STATE_NAMES[inst.state]} on storage, missing on the server"))
        elif STATES[s.state] != inst.state:
            diffs.append(Difference("instant", f"{where} is {STATE_NAMES[inst.state]} on storage, "
                                               f"{s.state} on the server"))
    for (ts, savepoint), s in sorted(server.items()):
        if (ts, savepoint) not in on_storage and (tl.earliest is None or ts > tl.earliest):
            diffs.append(Difference("instant", f"{ts}.{s.action} is {s.state} on the server, "
                                               "missing on storage"))
    return diffs


# a file slice as compared: (base instant, base file name or None, log file names)
_Slice = tuple[str, str | None, tuple[str, ...]]


def _slice_differences(served: list[FileSlice], view: StorageView) -> list[Difference]:
    ours: dict[tuple[str, str], _Slice] = {
        (s.partition_path, s.file_id): (s.base_instant, s.base_file.name if s.base_file else None,
                                        tuple(f.name for f in s.log_files))
        for s in served}
    theirs: dict[tuple[str, str], _Slice] = {
        (s.partition_path, s.file_id): (s.base_instant, s.base_file.name if s.base_file else None,
                                        tuple(f.name for f in s.log_files))
        for s in view.slices}
    diffs = []
    for key in sorted(set(ours) | set(theirs)):
        where = f"{key[0] or '(table)'}/{key[1]}"
        a, b = ours.get(key), theirs.get(key)
        if a == b:
            continue
        if a is None:
            diffs.append(Difference("file-slice", f"{where} is on storage only ({_describe(b)})"))
        elif b is None:
            diffs.append(Difference("file-slice", f"{where} is on the server only ({_describe(a)})"))
        else:
            diffs.append(Difference("file-slice", f"{where} differs: server {_describe(a)}, storage {_describe(b)}"))
    return diffs


def _describe(s: _Slice | None) -> str:
    if s is None:
        return "none"
    base_instant, base_file, logs = s
    text = f"base instant {base_instant}, base file {base_file or '-'}"
    return text + (f", log files {', '.join(logs)}" if logs else "")


def repair(client: HudiCatalog, db: str, table: str, tl: StorageTimeline | None = None) -> ImportReport:
    """Reconcile the server with storage through the import path."""
    cfg = client.get_hudi_table(db, table)
    tl = tl or read_table(cfg.base_path or "")
    report = ImportReport(db.lower(), table.lower(), tl.base_path, tl.table_version, cfg.table_type)
    report = sync_from_storage(client, tl, db, table, report, reconcile=True)
    if has_index(cfg):
        report.index_keys, report.index_note = build_or_turn_off(client, db, table, keeps=True)
    return report


def quarantine_strays(tl: StorageTimeline) -> list[str]:
    """Move the files no commit wrote to QUARANTINE/<UTC time>/<their relative path>; the lines say where."""
    strays = list_table(tl).strays
    if not strays:
        return []
    fs, root = tl.storage.fs, tl.storage.root.rstrip("/")
    folder = f"{root}/{QUARANTINE}/{datetime.now(timezone.utc).strftime('%Y%m%dT%H%M%S%fZ')}"
    lines = []
    for rel_folder, name, _size in strays:
        if "://" in rel_folder:  # under the table's storage path (RFC-60): kept as <scheme>/<bucket>/<key>
            scheme, _, rest = rel_folder.partition("://")
            src_fs, src = fsspec.core.url_to_fs(f"{rel_folder}/{name}")
            rel = f"{scheme}/{rest}/{name}"
        else:
            rel = f"{rel_folder}/{name}" if rel_folder else name
            src_fs, src = fs, f"{root}/{rel}"
        target = f"{folder}/{rel}"
        fs.makedirs(target.rpartition("/")[0], exist_ok=True)
        if src_fs is fs:
            fs.mv(src, target)
        else:  # another store: copy, then delete
            fs.pipe_file(target, src_fs.cat_file(src))
            src_fs.rm(src)
        lines.append(f"moved {rel_folder + '/' if rel_folder else ''}{name} (written by no commit) to {target}")
    return lines


# --------------------------------------------------------------------------- CLI


def run_validate(args) -> int:
    def go() -> int:
        db, tbl = split_table(args.table)
        with connect(args) as c:
            require_hudi_table(c, db, tbl)
            tl, diffs = compare(c, db, tbl)
        for d in diffs:
            print(d)
        if diffs:
            print(f"{db}.{tbl}: {len(diffs)} difference(s) between the metastore and {tl.base_path}")
            return 1
        print(f"{db}.{tbl}: the metastore agrees with {tl.base_path}")
        return 0

    return reporting_errors("validate", args.metastore, go)


def run_repair(args) -> int:
    def go() -> int:
        db, tbl = split_table(args.table)
        with connect(args) as c:
            require_hudi_table(c, db, tbl)
            tl, diffs = compare(c, db, tbl)
            if not diffs:
                print(f"{db}.{tbl}: the metastore agrees with {tl.base_path}; nothing to repair")
                return 0
            for d in diffs:
                print(d)
            if not args.yes:
                if not sys.stdin.isatty():
                    print("repair: not confirmed (no terminal); pass --yes to repair from a script", file=sys.stderr)
                    return 2
                answer = input(f"Reconcile {db}.{tbl} with storage ({len(diffs)} difference(s))? [y/N] ")
                if answer.strip().lower() not in ("y", "yes"):
                    print("repair: cancelled; nothing changed")
                    return 1
            for line in quarantine_strays(tl):
                print(line)
            if [d for d in diffs if d.kind != "stray-file"]:
                print("\n".join(repair(c, db, tbl, tl).lines()))
            _, left = compare(c, db, tbl)
        for d in left:
            print(f"not repaired: {d}")
        if left:
            return 1
        print(f"{db}.{tbl}: the metastore now agrees with {tl.base_path}")
        return 0

    return reporting_errors("repair", args.metastore, go)
