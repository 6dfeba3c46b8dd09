"""The metadata table's `record_index` partition (hudi_format/metadata_record_index.py) written from
the server's record index (`record_index` rows, store/hudi/record_index), never from storage.

* on for a table that keeps a record index (`hoodie.index.type=RECORD_INDEX`) when the metadata
  table is written, unless `hoodie.metadata.record.index.enable=false` (`mirrors_record_index`);
* initialized (`bootstrap`) at its initial instant (00000000000000012; 00000000000000002 from
  version 8) from every key of the index, in as many file groups as Hudi's estimate for that many
  keys gives; listed in `hoodie.table.metadata.partitions` once that deltacommit completed;
  written again the same way when the index changed outside a commit (a load, a restore: the
  rebuild mark in `record_index_deletes`); removed when turned off;
* per completed write instant (`files_for`, in the `files` partition's deltacommit): per file group
  of the partition a log file with the keys the instant wrote (the index rows of the data file
  groups it wrote whose instant is its own: inserts, moves and updates) and a delete block of the
  keys it took out (`record_index_deletes`, kept by the commit for this, less the keys it wrote
  again); those rows go once the instant is mirrored. Compacted into a new base file once a
  group's slice has `compact_after` log files, as the other partitions. So an instant costs the
  keys of the data file groups it wrote, not the table's.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Mapping

from sqlalchemy import delete, or_, select

from hudi_format import metadata_record_index as R
from hudi_format.commit_metadata import WRITE_ACTIONS
from hudi_format.config_keys import (
    RECORD_INDEX_GROWTH_FACTOR,
    RECORD_INDEX_MAX_FILE_GROUP_SIZE,
    RECORD_INDEX_MAX_FILE_GROUPS,
    RECORD_INDEX_MIN_FILE_GROUPS,
    default_of,
)
from hudi_format.file_slice import parse_file_name
from hudi_format.instant import COMPLETED, INFLIGHT, REQUESTED, format_instant
from hudi_format.layout import PARTITION_METAFILE
from hudi_format.metadata_table import METADATA_FOLDER, SCHEMA_JSON
from hudi_format.metadata_table_layout import CompletedDeltacommits, MetadataTableLayout
from hudi_format.storage import TableStorage
from store.db import schema as S
from store.db.database import Store
from store.hudi.metadata_table.column_stats import compacted_group, remove_partition
from store.hudi.record_index import REBUILD_KEY
from store.hudi.tables import HudiTableRef

DIR = f"{METADATA_FOLDER}/{R.RECORD_INDEX}"
Written = tuple[str, bytes, dict]


def _setting(ref: HudiTableRef, key: str) -> str:
    return str(ref.config.properties.get(key) or default_of(key)).strip()


class RecordIndexPartition:
    def __init__(self, store: Store, clock_ms: Callable[[], int], compact_after: int):
        self.store = store
        self.clock_ms = clock_ms
        self.compact_after = compact_after
        self._ready: set[str] = set()  # storage roots whose partition is initialized
        self._groups: dict[str, int] = {}  # storage root -> its number of file groups

    def ready(self, st: TableStorage, lay: MetadataTableLayout) -> bool:
        if st.root in self._ready:
            return True
        init = R.init_instant(lay.table_version)
        if st.exists(lay.deltacommit_file(init, COMPLETED)) if lay.table_version < 8 else \
                lay.completed_file(st.listing(lay.timeline_dir), init):
            self._ready.add(st.root)
            return True
        return False

    def forget(self) -> None:
        self._ready.clear()
        self._groups.clear()

    def group_count(self, st: TableStorage) -> int:
        """The partition's file groups (their count is fixed when it is initialized)."""
        if st.root not in self._groups:
            found = {p[0] for n in st.listing(DIR) if (p := R.parse_name(n))}
            self._groups[st.root] = max(found) + 1 if found else 0
        return self._groups[st.root]

    # --- rows -----------------------------------------------------------------------------------

    def rebuild_marked(self, ref: HudiTableRef) -> bool:
        d = S.record_index_deletes
        with self.store.read() as conn:
            return conn.execute(select(d.c.instant).where(
                d.c.tbl_id == ref.tbl_id, d.c.instant == 0, d.c.record_key == REBUILD_KEY)).first() is not None

    def clear(self, ref: HudiTableRef, instant: str | None = None) -> None:
        """The journal rows of `instant` (mirrored now; a write only when it has rows), or with None
        every row of the table."""
        d = S.record_index_deletes
        if instant is not None and not self._deleted(ref, instant):
            return

        def run(conn):
            q = delete(d).where(d.c.tbl_id == ref.tbl_id)  # (the other partitions' marks stay)
            conn.execute(q.where(or_(d.c.instant != 0, d.c.record_key == REBUILD_KEY)) if instant is None
                         else q.where(d.c.instant == int(instant)))
        self.store.run_write(run)

    def _entries(self, ref: HudiTableRef, groups: Iterable[tuple[str, str]] | None = None,
                 instant: str | None = None) -> list[R.RecordIndexEntry]:
        """The index's keys (of the data file `groups` and written by `instant`, else all)."""
        ri, fg = S.record_index, S.record_index_file_group
        q = select(ri.c.record_key, ri.c.instant, fg.c.partition_path, fg.c.file_id).select_from(
            ri.join(fg, fg.c.fg_id == ri.c.fg_id)).where(ri.c.tbl_id == ref.tbl_id)
        out: list[R.RecordIndexEntry] = []
        with self.store.read() as conn:
            if groups is None:
                rows = conn.execute(q).all()
            else:
                wanted = set(groups)
                ids = [r.fg_id for r in conn.execute(select(fg.c.fg_id, fg.c.partition_path, fg.c.file_id).where(
                    fg.c.tbl_id == ref.tbl_id, fg.c.file_id.in_(sorted({f for _p, f in wanted}))))
                       if (r.partition_path, r.file_id) in wanted]
                rows = []
                for start in range(0, len(ids), 500):
                    rows += conn.execute(q.where(ri.c.fg_id.in_(ids[start:start + 500]),
                                                 ri.c.instant == int(instant or 0))).all()
            for r in rows:
                out.append(R.RecordIndexEntry(r.record_key, r.partition_path, r.file_id, str(r.instant)))
        return out

    def _deleted(self, ref: HudiTableRef, instant: str) -> list[str]:
        d = S.record_index_deletes
        with self.store.read() as conn:
            return list(conn.execute(select(d.c.record_key).where(
                d.c.tbl_id == ref.tbl_id, d.c.instant == int(instant))).scalars())

    # --- bootstrap ------------------------------------------------------------------------------

    def bootstrap(self, st: TableStorage, ref: HudiTableRef, lay: MetadataTableLayout) -> None:
        """Initialize the partition from every key of the index (replacing whatever is there)."""
        marked = self.rebuild_marked(ref)
        self.remove(st, lay)
        init = R.init_instant(lay.table_version)
        entries = self._entries(ref)
        n = R.file_group_count(len(entries), int(_setting(ref, RECORD_INDEX_MIN_FILE_GROUPS)),
                               int(_setting(ref, RECORD_INDEX_MAX_FILE_GROUPS)),
                               int(_setting(ref, RECORD_INDEX_MAX_FILE_GROUP_SIZE)),
                               float(_setting(ref, RECORD_INDEX_GROWTH_FACTOR)))
        by_group: dict[int, list[R.RecordIndexEntry]] = {}
        for e in entries:
            by_group.setdefault(R.file_group_of(e.key, n), []).append(e)
        for state in (REQUESTED, INFLIGHT):
            st.put(lay.deltacommit_file(init, state), b"")
        stamp = _stamp(self.clock_ms())
        st.put(f"{DIR}/{PARTITION_METAFILE}",
               f"#partition metadata\n#{stamp}\ncommitTime={init}\npartitionDepth=1\n".encode())
        stats = []
        for group in range(n):
            cells = R.cells(by_group.get(group, []))
            if cells:
                name, data = R.base_file_name(group, init), R.base_file(cells, now_ms=self.clock_ms())
                stats.append(R.deltacommit_stat(group, f"{R.RECORD_INDEX}/{name}", len(data), len(cells), "null",
                                                None))
            else:  # the file group exists from its first log file: one empty delete block
                name = R.log_file_name(group, init, 1)
                data = R.delete_block(init, [], with_schema=False)
                stats.append(R.deltacommit_stat(group, f"{R.RECORD_INDEX}/{name}", len(data), 0, init, 1))
            st.put(f"{DIR}/{name}", data)
        meta = {"partitionToWriteStats": {R.RECORD_INDEX: stats}, "compacted": False,
                "extraMetadata": {"schema": SCHEMA_JSON}, "operationType": "BULK_INSERT_PREPPED"}
        st.put(lay.deltacommit_file(init, COMPLETED, max(format_instant(self.clock_ms()), init)),
               lay.for_storage(json.dumps(meta, indent=2).encode()))
        self._ready.add(st.root)
        self._groups[st.root] = n
        if marked:
            d = S.record_index_deletes
            self.store.run_write(lambda conn: conn.execute(delete(d).where(
                d.c.tbl_id == ref.tbl_id, d.c.instant == 0, d.c.record_key == REBUILD_KEY)))

    def remove(self, st: TableStorage, lay: MetadataTableLayout) -> None:
        """Remove the partition: its completed deltacommit first, so it is never taken for ready."""
        self._ready.discard(st.root)
        self._groups.pop(st.root, None)
        remove_partition(st, lay, R.init_instant(lay.table_version), DIR)

    # --- per instant ----------------------------------------------------------------------------

    def files_for(self, st: TableStorage, ref: HudiTableRef, lay: MetadataTableLayout, done: CompletedDeltacommits,
                  ts: str, action: str, added: Mapping[str, Mapping[str, int]]) -> list[Written]:
        """The files instant `ts` writes into the partition (not yet put)."""
        if action not in WRITE_ACTIONS:
            return []
        groups = {(p, parse_file_name(name)[0]) for p, names in added.items() for name in names}
        upserts = self._entries(ref, groups, ts) if groups else []
        written = {e.key for e in upserts}
        gone = [k for k in self._deleted(ref, ts) if k not in written]
        n = self.group_count(st)
        if not n or not (upserts or gone):
            return []
        cells: dict[int, list[R.RecordIndexEntry]] = {}
        dels: dict[int, list[str]] = {}
        for e in upserts:
            cells.setdefault(R.file_group_of(e.key, n), []).append(e)
        for k in gone:
            dels.setdefault(R.file_group_of(k, n), []).append(k)
        listing = {name: p for name in st.listing(DIR) if (p := R.parse_name(name))}
        init = R.init_instant(lay.table_version)
        out: list[Written] = []
        for group in sorted(set(cells) | set(dels)):
            base = _current_base(init, done, {b for g, kind, b, _ in listing.values() if g == group and kind == "base"})
            logs = sorted((v if lay.table_version < 8 else b, name) for name, (g, kind, b, v) in listing.items()
                          if g == group and kind == "log" and lay.in_slice(b, base, done.completion(b))
                          and v is not None)
            group_cells, group_dels = R.cells(cells.get(group, [])), dels.get(group, [])
            if len(logs) >= self.compact_after and ts > base:
                out.append(self._compacted(st, lay, done, group, ts, base, [name for _, name in logs], group_cells,
                                           group_dels, listing))
                continue
            version = int(logs[-1][0]) + 1 if logs and lay.table_version < 8 else 1
            name = _log_name(lay, group, base, version, ts)
            data = R.log_file_bytes(ts, group_cells, group_dels, now_ms=self.clock_ms())
            out.append((f"{R.RECORD_INDEX}/{name}", data,
                        R.deltacommit_stat(group, f"{R.RECORD_INDEX}/{name}", len(data), len(group_cells), base,
                                           version)))
        return out

    def _compacted(self, st: TableStorage, lay: MetadataTableLayout, done: CompletedDeltacommits, group: int,
                   ts: str, base: str, logs: list[str], cells: list[tuple[bytes, bytes]], dels: list[str],
                   listing: Mapping[str, tuple[int, str, str, int | None]]) -> Written:
        return compacted_group(R, R.RECORD_INDEX, st, lay, done, group, ts, base, logs, cells, dels, listing,
                               self.clock_ms())


def _log_name(lay: MetadataTableLayout, group: int, base: str, version: int, ts: str) -> str:
    """As the other partitions' (metadata_table_layout.log_file_name): versions 8+ after the instant."""
    if lay.table_version >= 8:
        return R.log_file_name(group, ts, 1)
    return R.log_file_name(group, base, version)


def _current_base(init: str, done: CompletedDeltacommits, bases: set[str]) -> str:
    """The group's newest base instant whose deltacommit completed (else the initial one)."""
    for b in sorted(bases, reverse=True):
        if b == init or b in done:
            return b
    return init


def _stamp(ms: int) -> str:
    import time

    return time.strftime("%a %b %d %H:%M:%S UTC %Y", time.gmtime(ms / 1000))
