"""The metadata table's `files` partition (hudi_format/metadata_table.py) written by the storage
mirror for a table of version 6 whose config says `hoodie.metadata.enable=true`.

* bootstrap (`bootstrap`): the table's live files from the server's rows (`files`, never a storage
  listing of the data table) as the base HFile of the file group at instant 00000000000000010,
  then that deltacommit's completed file; a partial metadata table left by an interrupted bootstrap
  is removed first, as is one the server did not write (Hudi's writers', on an adopted table). Only
  after it does the data table's `hoodie.properties` list `files` (`hoodie.table.metadata.partitions`),
  so readers never use a metadata table being built;
* per completed instant (`apply`): the files it added and deleted, from its own metadata as the
  server stored it, as one new log file (one HFile data block at the instant's time) between the
  metadata table's requested/inflight and completed deltacommit files, all before the data table's
  completed instant file (the mirror's order). A completed deltacommit at that time on storage means
  it is done (a retry after a crash writes nothing twice; a log file orphaned by a crash before its
  deltacommit completed holds the same records and is harmless). Each file is one atomic write (a
  PUT on object stores): log files are never appended to.

Compaction: when the current file slice has `compact_after` log files, the next instant writes a
new base file instead (a new file slice at its time, in its deltacommit: the slice merged with the
instant's records, read back from the metadata table's own files) and deletes the slice before the
current one. So an instant costs its own files plus a listing of the `files` folder (at most two
slices), and every `compact_after` instants one merge of the listing (as Hudi's compaction).
The metadata table's timeline is not archived (one deltacommit per instant stays).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence

from sqlalchemy import select

from hudi_format import metadata_column_stats as C
from hudi_format import metadata_table as M
from hudi_format.config_keys import CHECKSUM, METADATA_ENABLE, PROPERTIES_FILE
from hudi_format.instant import COMPLETED, INFLIGHT, REQUESTED
from hudi_format.layout import LAYOUT_DIRS, PARTITION_METAFILE, instant_file_name, java_properties, table_checksum
from hudi_format.storage import TableStorage
from store.db import schema as S
from store.db.database import Store
from store.hudi.metadata_table.column_stats import ColumnStatsPartition, Written, column_stats_enabled
from store.hudi.tables import HudiTableRef

MDT_HOODIE = f"{M.METADATA_FOLDER}/.hoodie"
FILES_DIR = f"{M.METADATA_FOLDER}/{M.FILES}"
DELTACOMMIT = "deltacommit"
COMPACT_AFTER = 20
MARK = "Metadata table written by hudi-metastore"  # the first line of its hoodie.properties


def metadata_table_enabled(ref: HudiTableRef) -> bool:
    """The mirror writes this table's metadata table: version 6 and `hoodie.metadata.enable=true`."""
    return ref.config.table_version == 6 and \
        str(ref.config.properties.get(METADATA_ENABLE, "")).strip().lower() == "true"


class MetadataTableWriter:
    def __init__(self, store: Store, clock_ms: Callable[[], int], compact_after: int = COMPACT_AFTER):
        self.store = store
        self.clock_ms = clock_ms
        self.compact_after = compact_after  # log files in a slice before an instant writes a new base file
        self._ready: set[str] = set()  # base paths whose metadata table is bootstrapped
        self._committed_bases: dict[str, set[str]] = {}  # storage root -> base instants known completed
        self.column_stats = ColumnStatsPartition(store, clock_ms, compact_after)

    def ready(self, st: TableStorage, base_path: str) -> bool:
        """The metadata table is on storage (its bootstrap deltacommit completed)."""
        if base_path in self._ready:
            return True
        # ours (its properties say so: one Hudi's writers left, e.g. on an adopted table, is written
        # again from the rows, never continued) and bootstrapped
        if (st.read(f"{MDT_HOODIE}/{PROPERTIES_FILE}") or b"").startswith(f"#{MARK}".encode()) and \
                st.exists(f"{MDT_HOODIE}/{instant_file_name(M.INIT_INSTANT, DELTACOMMIT, COMPLETED)}"):
            self._ready.add(base_path)
            return True
        return False

    def forget(self, base_path: str) -> None:
        self._ready.discard(base_path)
        self._committed_bases.clear()
        self.column_stats.forget()

    def available(self, st: TableStorage, ref: HudiTableRef, prepare: bool) -> list[str]:
        """The partitions readers may use (`hoodie.table.metadata.partitions`), once the metadata
        table is bootstrapped; with `prepare` (under the mirror's lease) the `column_stats` partition
        is first initialized or removed as the table's config says."""
        if not self.ready(st, ref.base_path):
            return []
        wanted = column_stats_enabled(ref)
        if prepare and wanted != self.column_stats.ready(st):
            if wanted:
                self.column_stats.bootstrap(st, ref)
            else:
                self.column_stats.remove(st)
        return [C.COLUMN_STATS, M.FILES] if wanted and self.column_stats.ready(st) else [M.FILES]

    # --- bootstrap ------------------------------------------------------------------------------

    def live_files(self, ref: HudiTableRef) -> dict[str, dict[str, int]]:
        """partition -> file name -> size of the table's files the server holds as not deleted."""
        f = S.files
        out: dict[str, dict[str, int]] = {}
        with self.store.read() as conn:
            for r in conn.execute(select(f.c.partition_path, f.c.name, f.c.size).where(
                    f.c.tbl_id == ref.tbl_id, f.c.is_deleted.is_(False))):
                out.setdefault(r.partition_path or "", {})[r.name] = int(r.size)
        return out

    def bootstrap(self, st: TableStorage, ref: HudiTableRef) -> None:
        """Write the metadata table from the server's rows (replacing whatever is there)."""
        self.forget(ref.base_path)
        if st.listing(M.METADATA_FOLDER):  # a partial one (an interrupted bootstrap) or a stale one
            try:
                st.fs.rm(st.path(M.METADATA_FOLDER), recursive=True)
            except FileNotFoundError:
                pass
        props = M.metadata_properties(ref.config.table_name)
        props[CHECKSUM] = str(table_checksum(props))
        st.put(f"{MDT_HOODIE}/{PROPERTIES_FILE}", java_properties(props, MARK))
        if not st.object_store:
            for d in LAYOUT_DIRS:
                st.makedirs(f"{MDT_HOODIE}/{d}")
        st.put(f"{FILES_DIR}/{PARTITION_METAFILE}", self._partition_metafile(M.INIT_INSTANT))
        records = M.files_records(self.live_files(ref))
        if not records:  # an empty table: the partition list, empty
            records = [M.FilesRecord(M.ALL_PARTITIONS)]
        data = M.base_file(records, now_ms=self.clock_ms())
        name = M.base_file_name(M.INIT_INSTANT)
        self._deltacommit(st, M.INIT_INSTANT, f"{FILES_DIR}/{name}", data, len(records), "null",
                          "BULK_INSERT_PREPPED", None)
        self._ready.add(ref.base_path)

    # --- per instant ----------------------------------------------------------------------------

    def apply(self, st: TableStorage, ts: str, action: str, metadata: bytes, ref: HudiTableRef | None = None) -> bool:
        """The files-partition records of the completed instant `ts` (its `metadata` as stored), and
        with `ref` its column_stats records when that partition is on; True when a deltacommit was written."""
        if st.exists(f"{MDT_HOODIE}/{instant_file_name(ts, DELTACOMMIT, COMPLETED)}"):
            return False
        added, deleted = M.listing_change(action, metadata)
        records = M.files_records(added, deleted)
        if not records:
            return False
        extra: list[Written] = []
        if ref is not None and column_stats_enabled(ref) and self.column_stats.ready(st):
            extra = self.column_stats.files_for(st, ref, ts, action, added, deleted)
        names = {n: p for n in st.listing(FILES_DIR) if (p := M.parse_files_partition_name(n))}
        base = self._current_base(st, {b for kind, b, _ in names.values() if kind == "base"})
        logs = sorted((v, n) for n, (kind, b, v) in names.items() if kind == "log" and b == base and v is not None)
        if len(logs) >= self.compact_after:
            self._compact(st, ts, base, [n for _, n in logs], records, names, extra)
            return True
        version = logs[-1][0] + 1 if logs else 1
        data = M.log_file_bytes(ts, records, now_ms=self.clock_ms())
        self._deltacommit(st, ts, f"{FILES_DIR}/{M.log_file_name(base, version)}", data, len(records), base,
                          "UPSERT_PREPPED", version, extra)
        return True

    def _current_base(self, st: TableStorage, bases: set[str]) -> str:
        """The newest base instant whose deltacommit completed: a base file a crash left behind
        uncommitted (its instant is written again, or rolled back and never completed) is no slice."""
        known = self._committed_bases.setdefault(st.root, {M.INIT_INSTANT})
        for b in sorted(bases, reverse=True):
            if b in known or st.exists(f"{MDT_HOODIE}/{instant_file_name(b, DELTACOMMIT, COMPLETED)}"):
                known.add(b)
                return b
        return M.INIT_INSTANT

    def _compact(self, st: TableStorage, ts: str, base: str, logs: list[str], records: list[M.FilesRecord],
                 names: dict[str, tuple[str, str, int | None]], extra: Sequence[Written] = ()) -> None:
        """Instant `ts` writes a new base file (a new file slice at `ts`) holding the current slice
        merged with its records, instead of one more log file; the slice before the current one is
        then deleted (the current one stays for readers that listed it)."""
        done = {n.split(".")[0] for n in st.listing(MDT_HOODIE)
                if n.endswith(f".{DELTACOMMIT}") or n.endswith(".commit")}
        batches = [M.read_base_file(st.read(f"{FILES_DIR}/{M.base_file_name(base)}") or b"")] \
            if M.base_file_name(base) in names else []
        for name in logs:
            for instant, recs in M.read_log_file(st.read(f"{FILES_DIR}/{name}") or b"", name):
                if instant in done:
                    batches.append(recs)
        batches.append(records)
        merged = M.merge_files_records(batches)
        out = M.files_records(merged) or [M.FilesRecord(M.ALL_PARTITIONS)]
        data = M.base_file(out, now_ms=self.clock_ms())
        self._deltacommit(st, ts, f"{FILES_DIR}/{M.base_file_name(ts)}", data, len(out), base, "UPSERT_PREPPED",
                          None, extra)
        for name, (_kind, b, _v) in names.items():
            if b < base or (b > base and b != ts):  # older slices; files of a compaction never completed
                st.delete(f"{FILES_DIR}/{name}")

    def _deltacommit(self, st: TableStorage, ts: str, rel: str, data: bytes, records: int, prev: str,
                     operation: str, log_version: int | None, extra: Sequence[Written] = ()) -> None:
        """requested, inflight, the files (`extra`: column_stats'), completed: each an atomic write,
        in that order."""
        for state in (REQUESTED, INFLIGHT):
            st.put(f"{MDT_HOODIE}/{instant_file_name(ts, DELTACOMMIT, state)}", b"")
        st.put(rel, data)
        for path, content, _stat in extra:
            st.put(f"{M.METADATA_FOLDER}/{path}", content)
        meta = M.deltacommit_metadata(rel[len(M.METADATA_FOLDER) + 1:], len(data), records, prev, operation,
                                      log_version)
        meta = C.with_stats(meta, [stat for _p, _c, stat in extra])
        st.put(f"{MDT_HOODIE}/{instant_file_name(ts, DELTACOMMIT, COMPLETED)}", meta)

    def _partition_metafile(self, ts: str) -> bytes:
        stamp = time.strftime("%a %b %d %H:%M:%S UTC %Y", time.gmtime(self.clock_ms() / 1000))
        return f"#partition metadata\n#{stamp}\ncommitTime={ts}\npartitionDepth=1\n".encode()
