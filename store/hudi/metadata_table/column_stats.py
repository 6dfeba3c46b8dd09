"""The metadata table's `column_stats` partition (hudi_format/metadata_column_stats.py) written from
the server's column statistics (`column_stats` rows, docs/column_stats.md), never from footers.

* on when the metadata table is written (tables of version 6, 8 and 9), unless the table's config
  says `hoodie.metadata.index.column.stats.enable=false` (`column_stats_enabled`); index version 1
  for versions 6 and 8, 2 (value types) for 9, as Hudi 1.2 writes them;
* initialized (`bootstrap`) at its initial instant (00000000000000011; 00000000000000001 from
  version 8) from the statistics of the table's live base files, after the `files` partition;
  listed in `hoodie.table.metadata.partitions` only once that deltacommit completed (`ready`);
  removed (its deltacommit first) when turned off;
* per completed instant (`files_for`, in the `files` partition's deltacommit): per file group a log
  file with the records of the base files and log files the instant created (their rows,
  `files.created_ts`) and a delete block of the keys of the files it deleted (clean, rollback,
  restore; one key per column of the table's schema: their rows are gone by then) and of the log
  files it appended to again (the server dropped their statistics); compacted into a new base file
  once a group's slice has `compact_after` log files, as the `files` partition is. Names and slices per table
  version as the `files` partition's (hudi_format/metadata_table_layout.py);
* written again from the rows at the mirror's next step when statistics were adopted outside an
  instant for files the mirror had taken up already (`REBUILD_MARK`, writer.mark_column_stats_rebuild).

Bounds come back from their order-preserving keys with the column's Hive type. A file whose
statistics the partition cannot hold for every column it has rows of (unknown bounds, a cut string
bound that is no string) gets no records at all: readers keep files the index does not name.
Columns of other types (binary, nested; index version 1: decimals wider than (30,15)) are not
written. Sizes (`totalSize`, `totalUncompressedSize`) are the column chunks' bytes the writer sent
with the statistics (parquet_stats.py, from the footer, as Hudi reads them), 0 for statistics sent
without them. A log file's records are a base file's with sizes 0, as Hudi 1.2 writes them (its
bounds and counts over the log's data records); a log file without statistics has none, so readers
keep its slice.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Mapping
from decimal import Decimal

from sqlalchemy import delete, select

from hudi_format import metadata_column_stats as C
from hudi_format.config_keys import COLUMN_STATS_COLUMN_LIST, COLUMN_STATS_ENABLE, default_of
from hudi_format.instant import COMPLETED, INFLIGHT, REQUESTED, format_instant
from hudi_format.layout import PARTITION_METAFILE
from hudi_format.metadata_table import METADATA_FOLDER, SCHEMA_JSON
from hudi_format.metadata_table_layout import CompletedDeltacommits, MetadataTableLayout
from hudi_format.storage import TableStorage
from hudi_format.table_config import META_COLUMNS
from store.db import schema as S
from store.db.database import Store
from store.db.dialect import pair_chunks
from store.hudi.column_stats import base_type, decode_number
from store.hudi.file_listing import names_in
from store.hudi.record_index import mirrors_record_index
from store.hudi.tables import HudiTableRef

MDT_HOODIE = f"{METADATA_FOLDER}/.hoodie"
DIR = f"{METADATA_FOLDER}/{C.COLUMN_STATS}"
DELTACOMMIT = "deltacommit"

# record_index_deletes at instant 0 (the journal's marks): the mirror writes this partition again
REBUILD_MARK = "column_stats"

# a file written into the partition by a deltacommit: (path under the metadata table, bytes, write stat)
Written = tuple[str, bytes, dict]


def column_stats_enabled(ref: HudiTableRef) -> bool:
    """Written for this table: version 6, 8 or 9 and not turned off in its config."""
    value = str(ref.config.properties.get(COLUMN_STATS_ENABLE, default_of(COLUMN_STATS_ENABLE)))
    return ref.config.table_version in (6, 8, 9) and value.strip().lower() != "false"


def bound_value(hive_type: str, key: bytes | None, upper: bool) -> tuple[bool, object]:
    """(usable, value) of an order-preserving bound of a column of `hive_type`."""
    if key is None:
        return False, None
    t = base_type(hive_type)
    if t in ("string", "varchar", "char"):
        raw = bytes(key)
        try:
            return True, raw.decode("utf-8")
        except UnicodeDecodeError:
            if upper:  # a cut bound's successor that is no UTF-8: no string bounds the file
                return False, None
            return True, raw.decode("utf-8", "ignore")  # a shorter prefix is still a lower bound
    n = decode_number(bytes(key))
    if n is None or not n.is_finite() and t not in ("float", "double") or n.is_nan():
        return False, None
    if t in ("float", "double"):
        return True, float(n)
    if t == "decimal":
        return True, n
    if n != n.to_integral_value():
        return False, None
    if t == "boolean":
        return True, bool(n)
    return True, int(n)


def file_records(partition: str, name: str, rows: Iterable, types: Mapping[str, str],
                 version: int = 1, log: bool = False) -> list[C.ColumnStatsRecord]:
    """The records of one base file (a log file: `log`, sizes 0) from its `column_stats` rows (index
    `version`); [] when one of them cannot be held."""
    out = []
    for r in rows:
        hive_type = types.get(r.column_name.lower())
        ct = C.column_type(hive_type, version) if hive_type else None
        if ct is None:
            continue
        if r.null_count is None or r.value_count is None:
            return []
        if r.min_key is None and r.max_key is None and r.null_count == r.value_count:
            lo = hi = None  # every value null
        else:
            ok_lo, lo = bound_value(hive_type, r.min_key, False)  # type: ignore[arg-type]
            ok_hi, hi = bound_value(hive_type, r.max_key, True)  # type: ignore[arg-type]
            if not (ok_lo and ok_hi):
                return []
            if ct.wrapper in ("DecimalWrapper", "BytesWrapper"):
                lo, hi = Decimal(lo), Decimal(hi)  # type: ignore[arg-type]
        sizes = (0, 0) if log else (int(r.total_size or 0), int(r.uncompressed_size or 0))
        out.append(C.ColumnStatsRecord(partition, name, r.column_name, ct.wrapper, lo, hi, int(r.null_count),
                                       int(r.value_count), *sizes, value_type=ct.value_type, type_info=ct.type_info))
    return out


def take_mark(store: Store, tbl_id: int, key: str) -> bool:
    """Whether the table has the mark `key` (`record_index_deletes` at instant 0); the mark goes."""
    d = S.record_index_deletes
    mark = (d.c.tbl_id == tbl_id, d.c.instant == 0, d.c.record_key == key)
    with store.read() as conn:
        if conn.execute(select(d.c.instant).where(*mark)).first() is None:
            return False
    return store.run_write(lambda conn: conn.execute(delete(d).where(*mark)).rowcount) > 0


def unmirrored_file():
    """A condition on `files` rows: a table version the storage mirror has not written yet added or
    resized the file (its instant's deltacommit adds it to the metadata table). A bootstrap in the
    same statement leaves such files out, so no file is in both its base file and a log block."""
    f, v = S.files, S.tbl_version
    return select(v.c.version).where(v.c.tbl_id == f.c.tbl_id, v.c.version == f.c.version,
                                     v.c.snapshot_status == 0).exists()


class ColumnStatsPartition:
    def __init__(self, store: Store, clock_ms: Callable[[], int], compact_after: int):
        self.store = store
        self.clock_ms = clock_ms
        self.compact_after = compact_after
        self._ready: set[str] = set()  # storage roots whose partition is initialized
        self._indexed: dict[str, bytes] = {}  # storage root -> index definitions known on storage
        self._names: dict[str, dict[str, str]] = {}  # storage root -> column (lower case) -> as the rows spell it

    def ready(self, st: TableStorage, lay: MetadataTableLayout) -> bool:
        if st.root in self._ready:
            return True
        init = lay.column_stats_init
        if st.exists(lay.deltacommit_file(init, COMPLETED)) if lay.table_version < 8 else \
                lay.completed_file(st.listing(lay.timeline_dir), init):
            self._ready.add(st.root)
            return True
        return False

    def forget(self) -> None:
        self._ready.clear()
        self._indexed.clear()
        self._names.clear()

    def take_rebuild_mark(self, ref: HudiTableRef) -> bool:
        """Whether statistics were adopted outside an instant since the partition was written
        (writer.mark_column_stats_rebuild); the mark goes."""
        return take_mark(self.store, ref.tbl_id, REBUILD_MARK)

    def _spelled(self, st: TableStorage, records: list[C.ColumnStatsRecord], types: Mapping[str, str]) -> list[str]:
        """The table's columns as the statistics rows spell them (the metastore's schema lower-cases)."""
        names = self._names.setdefault(st.root, {})
        names.update({r.column.lower(): r.column for r in records})
        return [names.get(c, c) for c in types]

    def write_index_definitions(self, st: TableStorage, ref: HudiTableRef, types: Mapping[str, str],
                                records: list[C.ColumnStatsRecord]) -> None:
        """`.hoodie/.index_defs/index.json` naming the indexed columns (when missing or different)."""
        listed = {c.strip().lower() for c in (ref.config.properties.get(COLUMN_STATS_COLUMN_LIST) or "").split(",")
                  if c.strip()}
        version = C.index_version(ref.config.table_version)
        columns = [spelled for spelled, (c, t) in zip(self._spelled(st, records, types), types.items())
                   if C.column_type(t, version) and c not in META_COLUMNS and (not listed or c in listed)]
        data = C.index_definitions(columns, version, mirrors_record_index(ref))
        if self._indexed.get(st.root) != data:
            if st.read(C.INDEX_DEFS) != data:
                st.put(C.INDEX_DEFS, data)
            self._indexed[st.root] = data

    # --- rows -----------------------------------------------------------------------------------

    def _types(self, conn, tbl_id: int) -> dict[str, str]:
        """{column (lower case): Hive type} of the table's current schema, data columns first."""
        sc, t = S.schema, S.tbl
        version = select(t.c.schema_version).where(t.c.tbl_id == tbl_id).scalar_subquery()
        return {r.name.lower(): r.type for r in conn.execute(
            select(sc.c.name, sc.c.type).where(sc.c.tbl_id == tbl_id, sc.c.version == version)
            .order_by(sc.c.is_partition_col, sc.c.position))}

    def _records(self, ref: HudiTableRef, created_ts: str | None) -> tuple[list[C.ColumnStatsRecord], dict[str, str]]:
        """The records of the live files with statistics (created by `created_ts`; else all but
        those of versions the mirror has not written yet: their instants' deltacommits write them,
        and Hudi's reader sums the counts of two records of one file), and the table's columns."""
        f, cs = S.files, S.column_stats
        q = select(f.c.id, f.c.partition_path, f.c.name, f.c.is_log, cs.c.column_name, cs.c.min_key, cs.c.max_key,
                   cs.c.null_count, cs.c.value_count, cs.c.total_size, cs.c.uncompressed_size).select_from(
            f.join(cs, cs.c.file_row_id == f.c.id)).where(f.c.tbl_id == ref.tbl_id, f.c.is_deleted.is_(False))
        q = q.where(f.c.created_ts == created_ts if created_ts is not None else ~unmirrored_file())
        by_file: dict[int, list] = {}
        with self.store.read() as conn:
            types = self._types(conn, ref.tbl_id)
            names: dict[int, tuple[str, str]] = {}
            logs: set[int] = set()
            for r in conn.execute(q.order_by(f.c.id)):
                by_file.setdefault(r.id, []).append(r)
                names[r.id] = (r.partition_path or "", r.name)
                if r.is_log:
                    logs.add(r.id)
        out: list[C.ColumnStatsRecord] = []
        version = C.index_version(ref.config.table_version)
        for row_id, rows in by_file.items():
            out.extend(file_records(*names[row_id], rows, types, version, row_id in logs))
        return out, types

    def _appended(self, ref: HudiTableRef, ts: str, added: Mapping[str, Mapping[str, int]]) -> dict[str, list[str]]:
        """The log files among `added` that an instant before `ts` created, by partition."""
        logs = [(p or "", n) for p, names in added.items() for n in names if ".log." in n]
        if not logs:
            return {}
        f = S.files
        out: dict[str, list[str]] = {}
        with self.store.read() as conn:
            for chunk in pair_chunks(logs):
                wanted = set(chunk)
                for r in conn.execute(select(f.c.partition_path, f.c.name).where(
                        f.c.tbl_id == ref.tbl_id, f.c.created_ts != ts,
                        names_in(conn.dialect.name, chunk))):
                    if (r.partition_path, r.name) in wanted:
                        out.setdefault(r.partition_path, []).append(r.name)
        return out

    # --- bootstrap ------------------------------------------------------------------------------

    def bootstrap(self, st: TableStorage, ref: HudiTableRef, lay: MetadataTableLayout) -> None:
        """Initialize the partition from the server's rows (replacing whatever is there)."""
        self.remove(st, lay)
        init = lay.column_stats_init
        records, types = self._records(ref, None)
        self.write_index_definitions(st, ref, types, records)
        groups = self._by_group(records)
        stamp = _stamp(self.clock_ms())
        for state in (REQUESTED, INFLIGHT):
            st.put(lay.deltacommit_file(init, state), b"")
        st.put(f"{DIR}/{PARTITION_METAFILE}",
               f"#partition metadata\n#{stamp}\ncommitTime={init}\npartitionDepth=1\n".encode())
        stats = []
        for group in range(C.FILE_GROUPS):
            cells = groups.get(group, [])
            if cells:
                name, data = C.base_file_name(group, init), C.base_file(cells, now_ms=self.clock_ms())
                stats.append(C.deltacommit_stat(group, f"{C.COLUMN_STATS}/{name}", len(data), len(cells), "null",
                                                None))
            else:  # the file group exists from its first log file: one empty delete block
                name = C.log_file_name(group, init, 1)
                data = C.delete_block(init, [], with_schema=False)
                stats.append(C.deltacommit_stat(group, f"{C.COLUMN_STATS}/{name}", len(data), 0, init, 1))
            st.put(f"{DIR}/{name}", data)
        meta = {"partitionToWriteStats": {C.COLUMN_STATS: stats}, "compacted": False,
                "extraMetadata": {"schema": SCHEMA_JSON}, "operationType": "BULK_INSERT_PREPPED"}
        st.put(lay.deltacommit_file(init, COMPLETED, max(format_instant(self.clock_ms()), init)),
               lay.for_storage(json.dumps(meta, indent=2).encode()))
        self._ready.add(st.root)

    def remove(self, st: TableStorage, lay: MetadataTableLayout) -> None:
        """Remove the partition: its completed deltacommit first, so it is never taken for ready."""
        self._ready.discard(st.root)
        remove_partition(st, lay, lay.column_stats_init, DIR)

    # --- per instant ----------------------------------------------------------------------------

    def files_for(self, st: TableStorage, ref: HudiTableRef, lay: MetadataTableLayout, done: CompletedDeltacommits,
                  ts: str, action: str, added: Mapping[str, Mapping[str, int]],
                  deleted: Mapping[str, Iterable[str]]) -> list[Written]:
        """The files instant `ts` writes into the partition (not yet put); `done`: the metadata
        table's completed instants."""
        records: list[C.ColumnStatsRecord] = []
        types: dict[str, str] = {}
        if any(added.values()) and action not in ("rollback", "restore"):
            records, types = self._records(ref, ts)
            self.write_index_definitions(st, ref, types, records)  # the schema may have changed
        # the files deleted, and the log files appended to again (their records no longer bound them)
        dropped = self._appended(ref, ts, added)
        gone: dict[int, list[str]] = {}
        if any(deleted.values()) or any(dropped.values()):
            if not types:
                with self.store.read() as conn:
                    types = self._types(conn, ref.tbl_id)
            columns = sorted(set(self._spelled(st, records, types)) | set(types))
            for partition, names in [*deleted.items(), *dropped.items()]:
                for name in names:
                    for column in columns:
                        key = C.record_key(column, partition, name)
                        gone.setdefault(C.file_group_of(key), []).append(key)
        groups = self._by_group(records)
        if not groups and not gone:
            return []
        listing = {n: p for n in st.listing(DIR) if (p := C.parse_name(n))}
        out: list[Written] = []
        for group in sorted(set(groups) | set(gone)):
            base = self._current_base(lay, done, {b for g, kind, b, _ in listing.values()
                                                  if g == group and kind == "base"})
            logs = sorted((v if lay.table_version < 8 else b, n) for n, (g, kind, b, v) in listing.items()
                          if g == group and kind == "log" and lay.in_slice(b, base, done.completion(b))
                          and v is not None)
            cells, dels = groups.get(group, []), gone.get(group, [])
            if len(logs) >= self.compact_after and ts > base:  # (as the files partition)
                out.append(self._compacted(st, lay, done, group, ts, base, [n for _, n in logs], cells, dels,
                                           listing))
                continue
            version = int(logs[-1][0]) + 1 if logs and lay.table_version < 8 else 1
            name = lay.log_file_name(base, version, ts, group)
            data = C.log_file_bytes(ts, cells, dels, now_ms=self.clock_ms())
            out.append((f"{C.COLUMN_STATS}/{name}", data,
                        C.deltacommit_stat(group, f"{C.COLUMN_STATS}/{name}", len(data), len(cells), base, version)))
        return out

    def _compacted(self, st: TableStorage, lay: MetadataTableLayout, done: CompletedDeltacommits, group: int, ts: str,
                   base: str, logs: list[str], cells: list[tuple[bytes, bytes]], dels: list[str],
                   listing: Mapping[str, tuple[int, str, str, int | None]]) -> Written:
        return compacted_group(C, C.COLUMN_STATS, st, lay, done, group, ts, base, logs, cells, dels, listing,
                               self.clock_ms())

    @staticmethod
    def _current_base(lay: MetadataTableLayout, done: CompletedDeltacommits, bases: set[str]) -> str:
        """The group's newest base instant whose deltacommit completed (else the initial one)."""
        for b in sorted(bases, reverse=True):
            if b == lay.column_stats_init or b in done:
                return b
        return lay.column_stats_init

    @staticmethod
    def _by_group(records: list[C.ColumnStatsRecord]) -> dict[int, list[tuple[bytes, bytes]]]:
        groups: dict[int, list[C.ColumnStatsRecord]] = {}
        for r in records:
            groups.setdefault(C.file_group_of(r.key), []).append(r)
        return {g: C.cells(rs) for g, rs in groups.items()}


def _stamp(ms: int) -> str:
    import time

    return time.strftime("%a %b %d %H:%M:%S UTC %Y", time.gmtime(ms / 1000))


def compacted_group(fmt, partition: str, st: TableStorage, lay: MetadataTableLayout, done: CompletedDeltacommits,
                    group: int, ts: str, base: str, logs: list[str], cells: list[tuple[bytes, bytes]], dels: list[str],
                    listing: Mapping[str, tuple[int, str, str, int | None]], now_ms: int) -> Written:
    """A new base file at `ts` of file group `group` of an HFile partition (`fmt`: its format module,
    hudi_format.metadata_column_stats or metadata_record_index): the group's current slice merged
    with the instant's records; the slices before the current one are deleted (the current one
    stays for readers that listed it)."""
    from hudi_format import hfile
    from store.hudi.metadata_table.writer import stale

    folder = f"{METADATA_FOLDER}/{partition}"
    merged: dict[bytes, bytes] = {}
    # the current base file by its name on storage (Hudi's compaction names it with its write token)
    current = next((n for n, (g, kind, b, _v) in sorted(listing.items())
                    if g == group and kind == "base" and b == base), None)
    if current is not None:
        merged.update(hfile.cells(st.read(f"{folder}/{current}") or b"", current))
    for name in logs:
        for instant, block_cells, keys in fmt.read_cells(st.read(f"{folder}/{name}") or b"", name):
            if instant not in done:
                continue
            merged.update(block_cells)
            for k in keys:
                merged.pop(k.encode(), None)
    merged.update(cells)
    for k in dels:
        merged.pop(k.encode(), None)
    out = sorted(merged.items())
    for name, (g, kind, b, _v) in listing.items():
        if g == group and stale(lay, done, base, ts, kind, b):
            st.delete(f"{folder}/{name}")
    if out:
        name, data = fmt.base_file_name(group, ts), fmt.base_file(out, now_ms=now_ms)
        return (f"{partition}/{name}", data,
                fmt.deltacommit_stat(group, f"{partition}/{name}", len(data), len(out), base, None))
    name = fmt.log_file_name(group, ts, 1)
    data = fmt.delete_block(ts, [], with_schema=False)
    return f"{partition}/{name}", data, fmt.deltacommit_stat(group, f"{partition}/{name}", len(data), 0, ts, 1)


def remove_partition(st: TableStorage, lay: MetadataTableLayout, init: str, folder: str) -> None:
    """Remove a metadata table partition begun at `init` whose files are under `folder`: its
    completed deltacommit first, so it is never taken for ready."""
    done = lay.completed_file(st.listing(lay.timeline_dir), init) if lay.table_version >= 8 else None
    if done:
        st.delete(f"{lay.timeline_dir}/{done}")
    for state in (COMPLETED, INFLIGHT, REQUESTED):
        if state != COMPLETED or lay.table_version < 8:
            st.delete(lay.deltacommit_file(init, state))
    if st.listing(folder):
        try:
            st.fs.rm(st.path(folder), recursive=True)
        except FileNotFoundError:
            pass
