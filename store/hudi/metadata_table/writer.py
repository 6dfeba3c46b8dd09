"""The metadata table's `files` partition (hudi_format/metadata_table.py) written by the storage
mirror for a table whose config says `hoodie.metadata.enable=true`, laid out for the table's
version (hudi_format/metadata_table_layout.py: 6, or Hudi 1.x's 8 and 9); its `column_stats`
(column_stats.py) and `record_index` (record_index.py) partitions go in the same deltacommits.

* bootstrap (`bootstrap`): the table's live files from the server's rows (`files`, never a storage
  listing of the data table), but for those of versions not mirrored yet (their deltacommits
  follow), as the base HFile of the file group at instant 00000000000000010,
  then that deltacommit's completed file; a partial metadata table left by an interrupted bootstrap
  is removed first, as is one the server did not write (Hudi's writers', on an adopted table). Only
  after it does the data table's `hoodie.properties` list `files` (`hoodie.table.metadata.partitions`),
  so readers never use a metadata table being built; run again when the table's files changed
  outside an instant (`mark_metadata_table_rewrite`: an import's listing);
* per completed instant (`apply`): the files it added and deleted, from its own metadata as the
  server stored it, as one new log file (one HFile data block at the instant's time) between the
  metadata table's requested/inflight and completed deltacommit files, all before the data table's
  completed instant file (the mirror's order). A completed deltacommit at that time on storage means
  it is done (a retry after a crash writes nothing twice; a log file orphaned by a crash before its
  deltacommit completed holds the same records and is harmless). Each file is one atomic write (a
  PUT on object stores): log files are never appended to.

Compaction: when the current file slice has `compact_after` log files, the next instant (when
later than the current base file's: the newest base instant names the newest slice) writes a
new base file instead (a new file slice at its time, in its deltacommit: the slice merged with the
instant's records, read back from the metadata table's own files) and deletes the slice before the
current one. So an instant costs its own files plus a listing of the `files` folder (at most two
slices), and every `compact_after` instants one merge of the listing (as Hudi's compaction).
The metadata table's timeline is not archived (one deltacommit per instant stays).

Hudi's own writer continues a metadata table the mirror took over (a tracked table): its
deltacommits are skipped as above, its compactions (`<ts>.commit`, base files with its write
token) name the current slice, whose base file is read by its name on storage (docs/hudi.md).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence

from sqlalchemy import Connection, insert, select

from hudi_format import metadata_column_stats as C
from hudi_format import metadata_table as M
from hudi_format.config_keys import CHECKSUM, METADATA_ENABLE, PROPERTIES_FILE
from hudi_format.instant import COMPLETED, INFLIGHT, REQUESTED, format_instant
from hudi_format.layout import PARTITION_METAFILE, java_properties, table_checksum
from hudi_format.metadata_partition_stats import PARTITION_STATS
from hudi_format.metadata_record_index import RECORD_INDEX
from hudi_format.metadata_table_layout import CompletedDeltacommits, MetadataTableLayout, metadata_table_layout
from hudi_format.storage import TableStorage
from store.db import schema as S
from store.db.database import Store
from store.hudi.file_listing import add_version
from store.hudi.metadata_table.column_stats import (
    REBUILD_MARK,
    ColumnStatsPartition,
    Written,
    column_stats_enabled,
    take_mark,
    unmirrored_file,
)
from store.hudi.metadata_table.partition_stats import PartitionStatsPartition, partition_stats_enabled
from store.hudi.metadata_table.record_index import RecordIndexPartition
from store.hudi.record_index import mirrors_record_index
from store.hudi.tables import HudiTableRef

MDT_HOODIE = f"{M.METADATA_FOLDER}/.hoodie"
FILES_DIR = f"{M.METADATA_FOLDER}/{M.FILES}"
DELTACOMMIT = "deltacommit"
COMPACT_AFTER = 20
MARK = "Metadata table written by hudi-metastore"  # the first line of its hoodie.properties
FILES_MARK = "files"  # record_index_deletes at instant 0 (the journal's marks): written again from the rows


def metadata_table_enabled(ref: HudiTableRef) -> bool:
    """The mirror writes this table's metadata table: `hoodie.metadata.enable=true`."""
    return ref.config.table_version in (6, 8, 9) and \
        str(ref.config.properties.get(METADATA_ENABLE, "")).strip().lower() == "true"


def taken_over(ref: HudiTableRef) -> bool:
    """Does the table's storage hold a metadata table the mirror wrote (its properties say so)?
    Only then do changes the server learns from storage (imports, the catch-up of Hudi's writers'
    instants, adopted statistics) go to it: a table whose metadata table is Hudi's writers' or
    none, the mirror has not taken over, keeps it as it is (one small read of storage)."""
    return metadata_table_enabled(ref) and _written_by_us(TableStorage(ref.base_path))


def _written_by_us(st: TableStorage) -> bool:
    """The metadata table's hoodie.properties is the mirror's (its first line says so)."""
    return (st.read(f"{MDT_HOODIE}/{PROPERTIES_FILE}") or b"").startswith(f"#{MARK}".encode())


def mark_column_stats_rebuild(conn: Connection, ref: HudiTableRef, now: int, files: Sequence[int]) -> None:
    """In the caller's transaction: the statistics of `files` (their `files` row ids) were adopted
    outside an instant (`load_column_stats`, the catch-up's index backlog). Files whose table
    version the mirror has not taken up yet (pending, not leased) need nothing: its deltacommit
    reads their statistics (those version rows are locked until the caller commits, so a mirror
    claims them after). Otherwise the mirror's next step writes the `column_stats` partition (and
    `partition_stats`, from the same rows) again from the rows: a mark in `record_index_deletes`
    says so, and a pending table version makes that step come."""
    if not files or not (column_stats_enabled(ref) and taken_over(ref)):
        return
    f, v = S.files, S.tbl_version
    taken = False
    ids = sorted(set(files))
    for start in range(0, len(ids), 500):
        taken = any(r.snapshot_status != 0 or r.update_time is not None for r in conn.execute(
            select(v.c.snapshot_status, v.c.update_time).select_from(
                f.join(v, (v.c.tbl_id == f.c.tbl_id) & (v.c.version == f.c.version)))
            .where(f.c.id.in_(ids[start:start + 500])).with_for_update())) or taken
    if not taken:
        return
    _mark(conn, ref, now, REBUILD_MARK)


def mark_metadata_table_rewrite(conn: Connection, ref: HudiTableRef, now: int) -> None:
    """In the caller's transaction: the table's files changed outside an instant (a listing's
    changes: import-hudi, repair). The mirror's next step writes the whole metadata table again
    from the rows (`FILES_MARK`, and a pending table version that makes the step come), if it
    has taken the table over."""
    if taken_over(ref):
        _mark(conn, ref, now, FILES_MARK)


def _mark(conn: Connection, ref: HudiTableRef, now: int, key: str) -> None:
    d = S.record_index_deletes
    if conn.execute(select(d.c.instant).where(d.c.tbl_id == ref.tbl_id, d.c.instant == 0,
                                              d.c.record_key == key)).first() is None:
        conn.execute(insert(d).values(tbl_id=ref.tbl_id, instant=0, record_key=key))
    add_version(conn, ref.tbl_id, 0, now)


class MetadataTableWriter:
    def __init__(self, store: Store, clock_ms: Callable[[], int], compact_after: int = COMPACT_AFTER):
        self.store = store
        self.clock_ms = clock_ms
        self.compact_after = compact_after  # log files in a slice before an instant writes a new base file
        self._ready: set[str] = set()  # base paths whose metadata table is bootstrapped
        self._committed_bases: dict[str, set[str]] = {}  # storage root -> base instants known completed
        self.column_stats = ColumnStatsPartition(store, clock_ms, compact_after)
        self.record_index = RecordIndexPartition(store, clock_ms, compact_after)
        self.partition_stats = PartitionStatsPartition(store, clock_ms, compact_after)

    def ready(self, st: TableStorage, base_path: str, table_version: int = 6) -> bool:
        """The metadata table is on storage (its bootstrap deltacommit completed)."""
        if base_path in self._ready:
            return True
        # ours (its properties say so: one Hudi's writers left, e.g. on an adopted table, is written
        # again from the rows, never continued) and bootstrapped
        lay = metadata_table_layout(table_version)
        if _written_by_us(st) and lay.init_instant in CompletedDeltacommits(st, lay):
            self._ready.add(base_path)
            return True
        return False

    def take_rewrite_mark(self, ref: HudiTableRef) -> bool:
        """Whether the table's files changed outside an instant since the metadata table was
        written (mark_metadata_table_rewrite); the mark goes."""
        return take_mark(self.store, ref.tbl_id, FILES_MARK)

    def forget(self, base_path: str) -> None:
        self._ready.discard(base_path)
        self._committed_bases.clear()
        self.column_stats.forget()
        self.record_index.forget()
        self.partition_stats.forget()

    def available(self, st: TableStorage, ref: HudiTableRef, prepare: bool) -> list[str]:
        """The partitions readers may use (`hoodie.table.metadata.partitions`), once the metadata
        table is bootstrapped; with `prepare` (under the mirror's lease) the `column_stats` partition
        is first initialized or removed as the table's config says."""
        if not self.ready(st, ref.base_path, ref.config.table_version):
            return []
        lay = metadata_table_layout(ref.config.table_version)
        wanted = column_stats_enabled(ref)
        # statistics adopted outside an instant: the partition is written again (the mark goes first,
        # so one set while it is written stays for the next step)
        rebuild = prepare and self.column_stats.take_rebuild_mark(ref)
        if prepare and (wanted != self.column_stats.ready(st, lay) or wanted and rebuild):
            if wanted:
                self.column_stats.bootstrap(st, ref, lay)
            else:
                self.column_stats.remove(st, lay)
        keys = mirrors_record_index(ref)
        if prepare:  # written again from the rows when the index changed outside a commit
            if keys and (not self.record_index.ready(st, lay) or self.record_index.rebuild_marked(ref)):
                self.record_index.bootstrap(st, ref, lay)
            elif not keys and self.record_index.ready(st, lay):
                self.record_index.remove(st, lay)
                self.record_index.clear(ref)
        # partition_stats: after column_stats (Hudi's readers need both)
        stats = wanted and partition_stats_enabled(ref) and self.column_stats.ready(st, lay)
        if prepare and stats and (rebuild or not self.partition_stats.ready(st, lay)):
            self.partition_stats.bootstrap(st, ref, lay)
        elif prepare and not stats and ref.config.table_version >= 8 and self.partition_stats.ready(st, lay):
            self.partition_stats.remove(st, lay)
        out = [C.COLUMN_STATS] if wanted and self.column_stats.ready(st, lay) else []
        out.append(M.FILES)
        if stats and self.partition_stats.ready(st, lay):
            out.append(PARTITION_STATS)
        if keys and self.record_index.ready(st, lay):
            out.append(RECORD_INDEX)
        return out

    # --- bootstrap ------------------------------------------------------------------------------

    def live_files(self, ref: HudiTableRef) -> dict[str, dict[str, int]]:
        """partition -> file name -> size of the table's files the server holds as not deleted,
        except those a version the mirror has not written yet added or resized: its instant's
        deltacommit adds them. (Hudi's reader merges the log files' records before the base file's,
        and drops a deletion whose file an earlier log record added: a file both in the base file
        and in a log file would outlive its deletion.) One statement, so one snapshot."""
        f = S.files
        out: dict[str, dict[str, int]] = {}
        with self.store.read() as conn:
            for r in conn.execute(select(f.c.partition_path, f.c.name, f.c.size).where(
                    f.c.tbl_id == ref.tbl_id, f.c.is_deleted.is_(False), ~unmirrored_file())):
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
        lay = metadata_table_layout(ref.config.table_version)
        props = lay.properties(ref.config.table_name)
        props[CHECKSUM] = str(table_checksum(props))
        st.put(f"{MDT_HOODIE}/{PROPERTIES_FILE}", java_properties(props, MARK))
        if not st.object_store:
            for d in lay.hoodie_dirs:
                st.makedirs(f"{MDT_HOODIE}/{d}")
        st.put(f"{FILES_DIR}/{PARTITION_METAFILE}", self._partition_metafile(lay.init_instant))
        records = M.files_records(self.live_files(ref))
        if not records:  # an empty table: the partition list, empty
            records = [M.FilesRecord(M.ALL_PARTITIONS)]
        data = M.base_file(records, now_ms=self.clock_ms())
        name = M.base_file_name(lay.init_instant)
        self._deltacommit(st, lay, lay.init_instant, f"{FILES_DIR}/{name}", data, len(records), "null",
                          "BULK_INSERT_PREPPED", None)
        self._ready.add(ref.base_path)

    # --- per instant ----------------------------------------------------------------------------

    def apply(self, st: TableStorage, ts: str, action: str, metadata: bytes, table_version: int = 6,
              ref: HudiTableRef | None = None, completion_ts: str | None = None) -> bool:
        """The files-partition records of the completed instant `ts` (its `metadata` as stored), and
        with `ref` its column_stats records when that partition is on; True when a deltacommit was
        written. Its deltacommit completes at the instant's own completion time (`completion_ts`,
        versions 8+: a log file joins the slice of the newest base file before that time, so an
        instant that a later one's compaction already holds never lands after it), else now."""
        lay = metadata_table_layout(table_version)
        done = CompletedDeltacommits(st, lay)
        keys = ref is not None and mirrors_record_index(ref) and self.record_index.ready(st, lay)
        if ts in done:
            if keys:
                self.record_index.clear(ref, ts)  # type: ignore[arg-type]
            return False
        added, deleted = M.listing_change(action, metadata)
        records = M.files_records(added, deleted)
        if not records:
            if keys:
                self.record_index.clear(ref, ts)  # type: ignore[arg-type]
            return False
        extra: list[Written] = []
        if ref is not None and column_stats_enabled(ref) and self.column_stats.ready(st, lay):
            extra = self.column_stats.files_for(st, ref, lay, done, ts, action, added, deleted)
        if ref is not None and partition_stats_enabled(ref):
            extra = [*extra, *self.partition_stats.files_for(st, ref, lay, done, ts, action, added, deleted)]
        if keys:
            extra = [*extra, *self.record_index.files_for(st, ref, lay, done, ts, action,  # type: ignore[arg-type]
                                                          added)]
        names = {n: p for n in st.listing(FILES_DIR) if (p := M.parse_files_partition_name(n))}
        base = self._current_base(st, lay, done, {b for kind, b, _ in names.values() if kind == "base"})
        logs = sorted((v if lay.table_version < 8 else b, n) for n, (kind, b, v) in names.items()
                      if kind == "log" and lay.in_slice(b, base, done.completion(b)) and v is not None)
        # a new base file only after the current one: an instant that completes after a later one's
        # compaction writes a log file (the newest base instant names the newest slice)
        if len(logs) >= self.compact_after and ts > base:
            self._compact(st, lay, done, ts, base, [n for _, n in logs], records, names, extra, completion_ts)
        else:
            version = int(logs[-1][0]) + 1 if logs and lay.table_version < 8 else 1
            data = M.log_file_bytes(ts, records, now_ms=self.clock_ms())
            self._deltacommit(st, lay, ts, f"{FILES_DIR}/{lay.log_file_name(base, version, ts)}", data,
                              len(records), base, "UPSERT_PREPPED", version, extra, completion_ts)
        if keys:  # the instant's deletes are on storage: their journal rows go
            self.record_index.clear(ref, ts)  # type: ignore[arg-type]
        return True

    def base_instant(self, st: TableStorage, table_version: int = 6) -> str:
        """The instant of the files partition's current base file (its records hold every older
        instant's: the data table's timeline may archive those), or an older one whose log file is
        in the current slice (version 8+: completed after the base's instant)."""
        lay = metadata_table_layout(table_version)
        names = {n: p for n in st.listing(FILES_DIR) if (p := M.parse_files_partition_name(n))}
        done = CompletedDeltacommits(st, lay)
        base = self._current_base(st, lay, done, {b for kind, b, _ in names.values() if kind == "base"})
        if lay.table_version < 8:
            return base
        return min([base, *(b for kind, b, _ in names.values() if kind == "log" and b < base and
                            lay.in_slice(b, base, done.completion(b)))])

    def _current_base(self, st: TableStorage, lay: MetadataTableLayout, done: CompletedDeltacommits,
                      bases: set[str]) -> str:
        """The newest base instant whose deltacommit completed: a base file a crash left behind
        uncommitted (its instant is written again, or rolled back and never completed) is no slice."""
        known = self._committed_bases.setdefault(st.root, {lay.init_instant})
        for b in sorted(bases, reverse=True):
            if b in known or b in done:
                known.add(b)
                return b
        return lay.init_instant

    def _compact(self, st: TableStorage, lay: MetadataTableLayout, done: CompletedDeltacommits, ts: str, base: str,
                 logs: list[str], records: list[M.FilesRecord], names: dict[str, tuple[str, str, int | None]],
                 extra: Sequence[Written] = (), completion_ts: str | None = None) -> None:
        """Instant `ts` writes a new base file (a new file slice at `ts`) holding the current slice
        merged with its records, instead of one more log file; the slice before the current one is
        then deleted (the current one stays for readers that listed it)."""
        # the current base file by its name on storage: Hudi's writer compacting the metadata table
        # names it with its own write token
        current = next((n for n, (kind, b, _v) in sorted(names.items()) if kind == "base" and b == base), None)
        batches = [M.read_base_file(st.read(f"{FILES_DIR}/{current}") or b"")
                   if current is not None else []]  # (the first batch is the base file's)
        completed = done.all()
        for name in logs:
            for instant, recs in M.read_log_file(st.read(f"{FILES_DIR}/{name}") or b"", name):
                if instant in completed:
                    batches.append(recs)
        batches.append(records)
        merged = M.merge_files_records(batches, as_hudi=False)  # (repairs a name both in base and logs)
        out = M.files_records(merged) or [M.FilesRecord(M.ALL_PARTITIONS)]
        data = M.base_file(out, now_ms=self.clock_ms())
        self._deltacommit(st, lay, ts, f"{FILES_DIR}/{M.base_file_name(ts)}", data, len(out), base,
                          "UPSERT_PREPPED", None, extra, completion_ts)
        for name, (kind, b, _v) in names.items():
            if stale(lay, done, base, ts, kind, b):
                st.delete(f"{FILES_DIR}/{name}")

    def _deltacommit(self, st: TableStorage, lay: MetadataTableLayout, ts: str, rel: str, data: bytes, records: int,
                     prev: str, operation: str, log_version: int | None, extra: Sequence[Written] = (),
                     completion_ts: str | None = None) -> None:
        """requested, inflight, the files (`extra`: column_stats'), completed: each an atomic write,
        in that order."""
        for state in (REQUESTED, INFLIGHT):
            st.put(lay.deltacommit_file(ts, state), b"")
        st.put(rel, data)
        for path, content, _stat in extra:
            st.put(f"{M.METADATA_FOLDER}/{path}", content)
        meta = lay.deltacommit_metadata(rel[len(M.METADATA_FOLDER) + 1:], len(data), records, prev, operation,
                                        log_version, [stat for _p, _c, stat in extra])
        completion = completion_ts if completion_ts and completion_ts >= ts else \
            max(format_instant(self.clock_ms()), ts)
        st.put(lay.deltacommit_file(ts, COMPLETED, completion), meta)

    def _partition_metafile(self, ts: str) -> bytes:
        stamp = time.strftime("%a %b %d %H:%M:%S UTC %Y", time.gmtime(self.clock_ms() / 1000))
        return f"#partition metadata\n#{stamp}\ncommitTime={ts}\npartitionDepth=1\n".encode()


def stale(lay: MetadataTableLayout, done: CompletedDeltacommits, base: str, ts: str, kind: str, instant: str) -> bool:
    """A file a compaction at `ts` deletes, of the slice before the current one (`base`'s) or of a
    compaction that never completed; version 8+ log files by their slice (`in_slice`), the current
    slice's staying for readers that listed it."""
    if kind == "log" and lay.table_version >= 8:
        return not lay.in_slice(instant, base, done.completion(instant)) and instant < base
    return instant < base or (instant > base and instant != ts)
