"""Hudi tables that Apache Hudi's own writers write (Spark datasource and SQL, Streamer, Flink),
tracked from their first hive sync: their timeline lives on storage and the server follows it.

* Recognition (`plan_create`): a `create_table` whose table looks like Hudi's (the
  `spark.sql.sources.provider=hudi` parameter, `hoodie.*` table or serde parameters, a Hudi input
  format) over a base path holding `.hoodie/hoodie.properties` makes the table a Hudi table at that
  call, with storage's config and the `TIMELINE_SOURCE=storage` mark, its history imported as
  `import-hudi` would import it: all in the transaction of the create.
* Merge-on-read views: hive sync creates `<t>_ro` and `<t>_rt` beside `<t>` over one base path, and
  one base path has one timeline: the first table created there that is not a `_ro`/`_rt` view is
  the tracked one; the views stay plain HMS tables (their partitions are hive sync's), and each
  of their sync calls catches up the tracked table of their base path first.
* Catch-up (`around`): every later write call on a tracked table or one of its views first brings
  the server's timeline up to storage's: the instants new there (or in a later state), read and
  parsed before the transaction (hudi_format/storage_changes.py, shared with import-hudi), applied
  in ONE transaction with the call through the import's path (timeline_import.py: file slices,
  HMS partitions, Hive statistics, notification events). On the tracked table itself the call's
  own partition changes are then no-ops: its partitions are what the commits say.
* Savepoints and restores (Hudi's `create_savepoint`, `rollback_to_savepoint` procedures) are
  applied through the server's own savepoint and restore code (savepoints.py, by the import's
  path); a savepoint the server took from storage that storage's timeline no longer has
  (`delete_savepoint`) is released in the same transaction.
* An instant that cannot be applied (an unknown action, an unreadable file) fails the call with
  CatchUpError (a MetaException) and changes nothing.
* The watcher (`SyncWatcher`, `serve --watch-interval`) catches up tracked tables written with
  sync turned off, a bounded number of tables and instants per pass.
"""

from __future__ import annotations

import logging
import math
import os
import threading
from base64 import b64decode
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from contextlib import ExitStack
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any, TypeVar

from sqlalchemy import Connection, delete, func, or_, select

from hudi_format.commit_metadata import WRITE_ACTIONS, parse_commit, parse_restore, parse_rollback
from hudi_format.config_keys import (
    CHECKSUM,
    DATABASE_NAME,
    INDEX_TYPE,
    PREFIX,
    RECORD_INDEX_UPDATE_PARTITION_PATH,
    STORAGE_PATH,
    STORAGE_STRATEGY_CLASS,
    TABLE_NAME,
    TABLE_TYPE,
    TIMELINE_SOURCE,
)
from hudi_format.errors import HudiFormatError, NotAHudiTable
from hudi_format.file_slice import FileInfo, FileSlice, parse_file_name, split_path
from hudi_format.instant import ACTIONS, COMPLETED, INFLIGHT, REQUESTED, SAVEPOINT, InstantKey, instant_key
from hudi_format.listing import list_table, storage_view
from hudi_format.parquet_footer import Unsupported
from hudi_format.record_keys import KeyReader, slice_keys
from hudi_format.storage import TableStorage
from hudi_format.storage_changes import (
    FOLLOWED,
    archive_unseen,
    check_partitions,
    config_from_storage,
    instant_files,
    new_instants,
    written_by,
)
from hudi_format.storage_strategy import HIVE, OBJECT_STORE, file_location, load_strategy, strategy_name
from hudi_format.storage_timeline import StorageInstant, StorageTimeline
from hudi_format.table_config import MOR, HudiTableConfig
from store.db import schema as S
from store.db.bulk import insert_rows
from store.db.dialect import pair_chunks
from store.errors import MetaError, NoSuchObject, StoreError
from store.hms.catalog import database_is
from store.hudi.column_stats import ColumnBounds, FileColumnStats, encode_float, encode_number
from store.hudi.file_listing import names_in
from store.hudi.metadata_table import mark_column_stats_rebuild
from store.hudi.record_index import has_record_index
from store.hudi.tables import HudiTableRef
from store.hudi.timeline.savepoints import delete_savepoint
from store.hudi.timeline.timeline_import import ImportOutcome, StoredInstant, TimelineImport
from store.hudi.timeline.timeline_service import TimelineService
from thrift_idl.hive_metastore.ttypes import Table

log = logging.getLogger("hudi_metastore.hudi_sync")
T = TypeVar("T")

STORAGE = "storage"  # TIMELINE_SOURCE of a tracked table
HUDI_INPUT_FORMAT_PREFIX = "org.apache.hudi."
VIEW_SUFFIXES = ("_ro", "_rt")
# the metastore's own properties, never taken from storage
OWN_PROPERTIES = (INDEX_TYPE, RECORD_INDEX_UPDATE_PARTITION_PATH, TIMELINE_SOURCE)


class CatchUpError(MetaError):
    """The server cannot follow an instant of a tracked table; nothing was applied."""


@dataclass
class Pending:
    """What storage holds that the server lacks, read before the transaction."""

    db: str
    tbl: str
    base_path: str
    instants: list[StoredInstant] = field(default_factory=list)
    listed: list[FileInfo] = field(default_factory=list)
    config: HudiTableConfig | None = None  # storage's config, taken over (or registered)
    register: bool = False  # the table becomes a tracked Hudi table in this transaction
    column_stats: list[FileColumnStats] = field(default_factory=list)  # of the new base files, from footers
    released: list[str] = field(default_factory=list)  # savepoints deleted on storage: released
    # record key -> commit time of each new base file (partition, name), read with its footer
    base_keys: dict[tuple[str, str], dict[str, str]] = field(default_factory=dict)
    backlog: bool = False  # apply left file groups in the index backlog (settle reads them)


@dataclass
class Target:
    """The tracked table a call's table belongs to; `own`: the call names the tracked table itself
    (else one of its `_ro`/`_rt` views)."""

    db: str
    tbl: str
    own: bool


def is_tracked(config: HudiTableConfig) -> bool:
    return (config.properties.get(TIMELINE_SOURCE) or "").lower() == STORAGE


def hudi_base_path(table: Table) -> str | None:
    """The base path of a table Hudi's sync (or Hudi's Spark catalog) sends: recognised by the
    `spark.sql.sources.provider=hudi` parameter, `hoodie.*` table or serde parameters or a Hudi input
    format; None for other tables."""
    params = {k: v for k, v in (table.parameters or {}).items() if v is not None}
    sd = table.sd
    serde = dict((sd.serdeInfo.parameters or {}) if sd is not None and sd.serdeInfo is not None else {})
    hudi = (params.get("spark.sql.sources.provider", "").lower() == "hudi"
            or any(k.startswith(PREFIX) for k in params) or any(k.startswith(PREFIX) for k in serde)
            or (sd is not None and (sd.inputFormat or "").startswith(HUDI_INPUT_FORMAT_PREFIX)))
    if not hudi:
        return None
    path = serde.get("path") or (sd.location if sd is not None else None)
    return path or None


def _path_spellings(path: str) -> list[str]:
    """A base path as a table may spell it: with and without `file:` / `file://` and a trailing /."""
    p = path.rstrip("/")
    bare = p[len("file://"):] if p.startswith("file://") else p[len("file:"):] if p.startswith("file:") else p
    out = {p, bare}
    if bare.startswith("/"):
        out |= {"file:" + bare, "file://" + bare}
    return sorted(out | {x + "/" for x in out})


def _own_view(props: dict[str, str]) -> dict[str, str]:
    """hoodie.properties apart from names, checksum and the metastore's own keys."""
    out = dict(props)
    for k in (TABLE_NAME, DATABASE_NAME, CHECKSUM, *OWN_PROPERTIES):
        out.pop(k, None)
    return out


class TimelineCatchUp:
    def __init__(self, timeline: TimelineService, latest_slices: LatestSlices | None = None):
        """`latest_slices(conn, ref, partitions)`: the table's latest file slices with their files'
        paths (the snapshot service's, handed in by store/services.py); without it no record index
        is kept for tracked tables."""
        self.timeline = timeline
        self.latest_slices = latest_slices
        self.store = timeline.store
        self.importer = TimelineImport(timeline)
        self.background = True  # a call's backlog is settled by a thread of the server's
        self._settler: ThreadPoolExecutor | None = None
        self._settle_lock = threading.Lock()
        if latest_slices is not None:
            timeline.record_index.before_read.append(self.settle)

    def stop(self) -> None:
        """Wait for the background settling of index backlogs (before the database goes)."""
        with self._settle_lock:
            settler, self._settler = self._settler, None
        if settler is not None:
            settler.shutdown(wait=True)

    # --- which table a call belongs to ---------------------------------------------------------------

    def target(self, db: str, tbl: str) -> Target | None:
        """The tracked table of db.tbl (itself, or the one at its base path for a view); None when
        the call's table is not part of one."""
        with self.store.read() as conn:
            h, t = S.hudi_table, S.tbl
            row = conn.execute(select(t.c.tbl_id, t.c.location, t.c.name, h.c.properties).select_from(
                t.join(S.db, S.db.c.db_id == t.c.db_id).outerjoin(h, h.c.tbl_id == t.c.tbl_id)).where(
                database_is(db or ""), t.c.name == (tbl or "").lower())).first()
            if row is None:
                return None
            if row.properties is not None:
                tracked = (_json(row.properties).get(TIMELINE_SOURCE) or "").lower() == STORAGE
                return Target(db, row.name, True) if tracked else None
            if not row.location:
                return None
            owner = self._tracked_at(conn, row.location)
            return Target(owner[0], owner[1], False) if owner is not None else None

    def _tracked_at(self, conn: Connection, path: str, any_hudi: bool = False) -> tuple[str, str] | None:
        """(db, table) of the tracked Hudi table whose base path is `path` (`any_hudi`: or of any
        Hudi table there)."""
        h, t = S.hudi_table, S.tbl
        rows = conn.execute(select(S.db.c.cat_name, S.db.c.name.label("db_name"), t.c.name, h.c.properties)
                            .select_from(h.join(t, t.c.tbl_id == h.c.tbl_id).join(S.db, S.db.c.db_id == t.c.db_id))
                            .where(or_(*[h.c.base_path == p for p in _path_spellings(path)]))).all()
        for r in rows:
            if any_hudi or (_json(r.properties).get(TIMELINE_SOURCE) or "").lower() == STORAGE:
                db = r.db_name if r.cat_name == "hive" else f"@{r.cat_name}#{r.db_name}"
                return db, r.name
        return None

    # --- reading storage (before the transaction) ---------------------------------------------------

    def plan_create(self, table: Table) -> Pending | None:
        """For a create_table of a table Hudi's sync sends over a Hudi base path: what the create's
        transaction applies (the table's registration and history, or the catch-up of the tracked
        table whose view it is); None for any other table."""
        path = hudi_base_path(table)
        if path is None:
            return None
        try:
            tl = StorageTimeline.read(path)
        except NotAHudiTable:
            return None  # not (yet) a table on storage: created as asked (and adopted as before)
        except HudiFormatError as exc:
            raise CatchUpError(f"{table.dbName}.{table.tableName}: {exc.message}") from None
        with self.store.read() as conn:
            owner = self._tracked_at(conn, path)
            other = self._tracked_at(conn, path, any_hudi=True) if owner is None else None
        if owner is not None:
            return self.read(owner[0], owner[1], tl)
        if other is not None:
            return None  # a table whose commits go through the server: created as asked, as before
        name = (table.tableName or "").lower()
        if (tl.properties.get(TABLE_TYPE) or "").upper() == MOR and name.endswith(VIEW_SUFFIXES):
            return None  # a view created before its snapshot table: the latter is tracked
        try:
            cfg = config_from_storage(tl, table.dbName or "", name)
        except HudiFormatError as exc:
            raise CatchUpError(exc.message) from None
        cfg.properties = {k: v for k, v in cfg.properties.items() if k not in OWN_PROPERTIES}
        cfg.properties[TIMELINE_SOURCE] = STORAGE
        cfg.base_path = path
        pending = self._read(tl, cfg.db_name, cfg.table_name, {}, cfg)
        pending.config, pending.register = cfg, True
        return pending

    def read(self, db: str, tbl: str, tl: StorageTimeline | None = None, limit: int = 0) -> Pending:
        """What storage holds of tracked db.tbl that the server lacks (`limit`: at most that many
        instants, the oldest first; 0: all)."""
        with self.store.read() as conn:
            ref = self.timeline.table_ref(conn, db, tbl)
            if tl is None:
                try:
                    tl = StorageTimeline.read(ref.base_path)
                except HudiFormatError as exc:
                    raise CatchUpError(f"{ref.db_name}.{ref.name}: {exc.message}") from None
            known = self._known(conn, ref, tl.earliest)
            imported = self._imported_savepoints(conn, ref)
        pending = self._read(tl, db, tbl, known, ref.config, limit)
        on_storage = {i.ts for i in tl.instants if i.action == SAVEPOINT}
        pending.released = sorted(imported - on_storage)
        try:
            stored = config_from_storage(tl, ref.db_name, ref.name)
        except HudiFormatError as exc:
            raise CatchUpError(f"{ref.db_name}.{ref.name}: {exc.message}") from None
        if _own_view(stored.hoodie_properties()) != _own_view(ref.config.hoodie_properties()):
            kept = {k: v for k, v in ref.config.properties.items() if k in OWN_PROPERTIES}
            stored.properties = {**{k: v for k, v in stored.properties.items() if k not in OWN_PROPERTIES}, **kept}
            pending.config = stored
        return pending

    @staticmethod
    def _known(conn: Connection, ref: HudiTableRef, earliest: str | None) -> dict[InstantKey, int]:
        """The server's instants from storage's earliest active one on (key -> state), and its
        latest completed one before that (so an unseen archive is noticed)."""
        i = S.instant
        q = select(i.c.ts, i.c.action, i.c.state).where(i.c.tbl_id == ref.tbl_id)
        if earliest is not None:
            q = q.where(i.c.ts >= earliest)
        known = {instant_key(r.ts, r.action): int(r.state) for r in conn.execute(q)}
        before = conn.execute(select(func.max(i.c.ts)).where(
            i.c.tbl_id == ref.tbl_id, i.c.state == COMPLETED, i.c.action != SAVEPOINT,
            *([i.c.ts < earliest] if earliest is not None else []))).scalar()
        if before is not None:
            known[(before, False)] = COMPLETED
        return known

    @staticmethod
    def _imported_savepoints(conn: Connection, ref: HudiTableRef) -> set[str]:
        """Times of the table's savepoints the server took from storage (an import records an
        instant's own time as its requested time; a savepoint made through the server's API is
        requested later than the commit it saves, and stays until deleted through the API)."""
        i = S.instant
        return set(conn.execute(select(i.c.ts).where(i.c.tbl_id == ref.tbl_id, i.c.action == SAVEPOINT,
                                                     i.c.requested_ts == i.c.ts)).scalars())

    def _read(self, tl: StorageTimeline, db: str, tbl: str, known: dict[InstantKey, int], cfg: HudiTableConfig,
              limit: int = 0) -> Pending:
        where = f"{db}.{tbl}"
        top = max((ts for ts, _ in known), default="")
        for name in tl.unrecognised:
            if name.split("_")[0].split(".")[0] > top:
                raise CatchUpError(f"{where}: cannot follow {tl.timeline_dir}/{name}: not an instant of an action "
                                   f"the server knows ({', '.join(ACTIONS)})")
        todo = new_instants(tl, known)
        if limit:
            todo = todo[:limit]
        out = Pending(db, tbl, tl.base_path)
        written: set[tuple[str, str]] = set()
        for inst in todo:
            self._check_followed(where, tl, inst)
            try:
                files = instant_files(tl, inst)
                if inst.state == COMPLETED:
                    names = written_by(inst, files[COMPLETED])
                    check_partitions(tl, cfg, inst, names)
                    written |= names
            except HudiFormatError as exc:
                raise CatchUpError(f"{where}: {exc.message}") from None
            out.instants.append(StoredInstant(
                ts=inst.ts, action=inst.action, state=inst.state,
                completion_ts=inst.completion_ts if inst.state == COMPLETED else None,
                requested=files.get(REQUESTED), inflight=files.get(INFLIGHT), completed=files.get(COMPLETED)))
        if not known or archive_unseen(tl, known):  # files of archived instants: one listing
            try:
                view = storage_view(tl, list_table(tl))
            except HudiFormatError as exc:
                raise CatchUpError(f"{where}: {exc.message}") from None
            out.listed = [f for f in view.files if (f.partition_path, f.name) not in written]
        if known and self.latest_slices is not None:
            return out  # the new files' statistics and keys are read after the call (index_backlog)
        base_files = sorted({(p, n) for p, n in written} | {(f.partition_path or "", f.name) for f in out.listed})
        # at the registration the record index's keys are read with the footers (one open each),
        # before the transaction
        reader = KeyReader(cfg) if self.latest_slices is not None else None
        out.column_stats, out.base_keys = read_base_files(tl.base_path, cfg, base_files, reader)
        return out

    @staticmethod
    def _check_followed(where: str, tl: StorageTimeline, inst: StorageInstant) -> None:
        """A completed instant of an action the server cannot apply stops the catch-up (applying the
        instants after it would make the server's view diverge from Hudi's)."""
        action = inst.done_action if inst.state == COMPLETED else inst.action
        if inst.state == COMPLETED and action not in FOLLOWED:
            raise CatchUpError(f"{where}: instant {inst.ts} is a completed {action}, which the server "
                               "cannot apply")

    # --- applying (in the call's transaction) ---------------------------------------------------------

    def apply(self, conn: Connection, pending: Pending) -> ImportOutcome | None:
        """Pending's changes inside the caller's transaction."""
        if pending.register:
            assert pending.config is not None
            self.timeline.hudi_tables.insert_in(conn, pending.config)
        elif not pending.instants and not pending.listed and pending.config is None and not pending.released:
            return None
        out = self.importer.import_in(conn, pending.db, pending.tbl, pending.instants, pending.listed, [],
                                      None if pending.register else pending.config, events=True,
                                      column_stats={(st.partition_path, st.file_name): st
                                                    for st in pending.column_stats})
        if pending.released:
            ref = self.timeline.table_ref(conn, pending.db, pending.tbl)
            for ts in pending.released:  # Hudi's delete_savepoint removed its instant files
                delete_savepoint(conn, ref, ts, self.timeline.clock_ms(), mirrored=True)
                log.info("%s.%s: savepoint %s deleted on storage: released", pending.db, pending.tbl, ts)
        rest = [st for st in pending.column_stats if (st.partition_path, st.file_name) not in out.stats_recorded]
        if rest:  # of listed files, or of files a later instant of the catch-up replaced
            self._record_column_stats(conn, self.timeline.table_ref(conn, pending.db, pending.tbl), rest)
        if pending.register:
            self._record_log_stats(conn, pending)
            self._record_index(conn, pending)
        elif out.imported or out.files_added:
            self._defer_index(conn, pending, out.restored_groups)
        if out.imported or out.files_added or pending.register:
            log.info("%s.%s caught up with storage: %d instant(s), %d listed file(s)", pending.db, pending.tbl,
                     len(out.imported), out.files_added)
        return out

    def _defer_index(self, conn: Connection, pending: Pending, restored: set[tuple[str, str]]) -> None:
        """The file groups the caught-up instants wrote, replaced, rolled back or listed go to the
        table's index backlog: their base files' statistics and record keys are read after the call
        (`settle`), so that the call's cost follows the commit's metadata, not its files. Until then
        their files are never pruned (no statistics), and every read of the record index settles the
        backlog first."""
        if self.latest_slices is None:
            return
        groups = _touched_groups(pending.instants) | restored | {
            (f.partition_path or "", parse_file_name(f.name)[0]) for f in pending.listed if _is_data(f.name)}
        if not groups:
            return
        ref = self.timeline.table_ref(conn, pending.db, pending.tbl)
        insert_rows(conn, S.index_backlog, _BACKLOG, [(ref.tbl_id, p, f) for p, f in sorted(groups)], None,
                    pg_types=_BACKLOG_PG)
        pending.backlog = True

    # --- the index backlog (after the call) ---------------------------------------------------------

    def settle(self, db: str, tbl: str) -> int:
        """Read the statistics and record keys the table's index backlog waits for and store them,
        in a transaction of their own (the backlog's groups as their latest slices are now); the
        number of file groups done, 0 when the table has no backlog (or is no table)."""
        if self.latest_slices is None:
            return 0
        b, t = S.index_backlog, S.tbl
        with self.store.read() as conn:
            waiting = conn.execute(select(b.c.entry_id).select_from(b.join(t, t.c.tbl_id == b.c.tbl_id).join(
                S.db, S.db.c.db_id == t.c.db_id)).where(database_is(db or ""), t.c.name == (tbl or "").lower())
                .limit(1)).first()
        if waiting is None:
            return 0
        return self.store.run_write(self._settle_in, db, tbl)

    def _settle_in(self, conn: Connection, db: str, tbl: str) -> int:
        assert self.latest_slices is not None
        ref = self.timeline.table_ref(conn, db, tbl, lock=True)  # no catch-up changes the slices meanwhile
        b = S.index_backlog
        groups = {(r.partition_path, r.file_id) for r in conn.execute(
            select(b.c.partition_path, b.c.file_id).where(b.c.tbl_id == ref.tbl_id))}
        if not groups:
            return 0
        slices = [s for s in self.latest_slices(conn, ref, sorted({p for p, _ in groups}))
                  if (s.partition_path, s.file_id) in groups]
        keeps = has_record_index(ref.config.properties)
        bases = [(s.partition_path, s.base_file.name) for s in slices if s.base_file is not None]
        stats, base_keys = read_base_files(ref.base_path, ref.config, bases, KeyReader(ref.config) if keeps else None)
        stats += read_log_files(ref.base_path, ref.config, slices)
        if stats:
            self._record_column_stats(conn, ref, stats)
        if keeps:
            self._keep_index(conn, ref, lambda: self.timeline.record_index.reload_groups_in(
                conn, ref, self._group_keys(conn, ref, slices, base_keys), sorted(groups)))
        conn.execute(delete(b).where(b.c.tbl_id == ref.tbl_id))
        log.info("%s.%s: statistics and record keys of %d file group(s) read after their catch-up", ref.db_name,
                 ref.name, len(groups))
        return len(groups)

    def _schedule_settle(self, pending: Pending) -> None:
        """Settle the backlog a call left, in the background (one thread per server)."""
        if not pending.backlog or not self.background:
            return
        with self._settle_lock:
            if self._settler is None:
                self._settler = ThreadPoolExecutor(max_workers=1, thread_name_prefix="hudi-index-backlog")
            self._settler.submit(self._settle_logged, pending.db, pending.tbl)

    def _settle_logged(self, db: str, tbl: str) -> None:
        try:
            self.settle(db, tbl)
        except Exception as exc:  # noqa: BLE001 - the backlog stays; the next read or pass settles it
            log.warning("%s.%s: index backlog not settled: %s", db, tbl, getattr(exc, "message", None) or exc)

    def _record_log_stats(self, conn: Connection, pending: Pending) -> None:
        """The statistics of the log files of a table registered from storage (merge-on-read), read
        from their blocks in the transaction of the registration (as its record index's keys)."""
        if self.latest_slices is None or pending.config is None or pending.config.table_type != MOR:
            return
        ref = self.timeline.table_ref(conn, pending.db, pending.tbl)
        stats = read_log_files(ref.base_path, ref.config, self.latest_slices(conn, ref, None))
        if stats:
            self._record_column_stats(conn, ref, stats)

    def _record_index(self, conn: Connection, pending: Pending) -> None:
        """The record index (RFC-08) of a table registered from storage: Hudi's commit metadata
        carries no keys, so the keys of its latest slices are read from storage (with the footers,
        or hudi_format/record_keys.py for slices with log files). A table becomes indexed at its
        registration, as import-hudi builds the index of a table it registers, when every key is
        readable and in one file group (else it has none, logged)."""
        if self.latest_slices is None:
            return
        ref = self.timeline.table_ref(conn, pending.db, pending.tbl)

        def build() -> None:
            slices = self.latest_slices(conn, ref, None)  # type: ignore[misc]
            keys = self._group_keys(conn, ref, slices, pending.base_keys)
            n = self.timeline.record_index.reload_groups_in(conn, ref, keys, reset=True, count=True)
            self.timeline.record_index.switch_in(conn, ref, True)
            log.info("%s.%s: record index built from storage: %d key(s)", ref.db_name, ref.name, n)

        self._keep_index(conn, ref, build)

    def _group_keys(self, conn: Connection, ref: HudiTableRef, slices: list[FileSlice],
                    base_keys: dict[tuple[str, str], dict[str, str]]) -> dict[tuple[str, str], dict[str, str]]:
        """Each slice's keys (key -> the instant that wrote it): a lone base file's as read with its
        footer (`base_keys`), else read from storage."""
        completed: set[str] = set()
        if any(s.log_files for s in slices):
            i = S.instant
            completed = set(conn.execute(select(i.c.ts).where(i.c.tbl_id == ref.tbl_id, i.c.state == COMPLETED))
                            .scalars())
        storage, reader = TableStorage(ref.base_path), KeyReader(ref.config)

        def keys_of(s: FileSlice) -> dict[str, str]:
            read = base_keys.get((s.partition_path, s.base_file.name)) \
                if s.base_file is not None and not s.log_files else None
            return read if read is not None else slice_keys(storage, s, completed, reader)

        return {(s.partition_path, s.file_id): {k: ts or s.base_instant for k, ts in keys_of(s).items()}
                for s in slices}

    def _keep_index(self, conn: Connection, ref: HudiTableRef, work: Callable[[], Any]) -> None:
        """`work` on the record index; when it cannot be kept (a key in two file groups, an unreadable
        block) a table that keeps one has it turned off, logged (repair rebuilds it)."""
        keeps = has_record_index(ref.config.properties)
        try:
            work()
        except (StoreError, HudiFormatError, OSError, ValueError, KeyError, ImportError) as exc:
            why = getattr(exc, "message", None) or str(exc)
            if keeps:
                self.timeline.record_index.turn_off_in(conn, ref)
                log.warning("%s.%s: record index turned off: %s (hudi-metastore repair rebuilds it)",
                            ref.db_name, ref.name, why)
            else:
                log.info("%s.%s: no record index: %s", ref.db_name, ref.name, why)

    def _record_column_stats(self, conn: Connection, ref: HudiTableRef, column_stats: list[FileColumnStats]) -> None:
        """The statistics of files still live that have none (base files' from their footers, log
        files' from their blocks, as import-hudi loads them), with the partitions' aggregates and
        Hive statistics."""
        f = S.files
        live: set[tuple[str, str]] = set()
        for chunk in pair_chunks((st.partition_path, st.file_name) for st in column_stats):
            wanted = set(chunk)
            live.update((r[0], r[1]) for r in conn.execute(select(f.c.partition_path, f.c.name).where(
                f.c.tbl_id == ref.tbl_id, names_in(conn.dialect.name, chunk, live=True))) if (r[0], r[1]) in wanted)
        stats = [st for st in column_stats if (st.partition_path, st.file_name) in live]
        if stats:
            stored: list[int] = []
            self.timeline.completion.column_stats.record_existing(conn, ref, stats, stored)
            self.timeline.statistics.publish(conn, ref, sorted({st.partition_path for st in stats}))
            mark_column_stats_rebuild(conn, ref, self.timeline.clock_ms(), stored)  # for the mirrored metadata table

    def around(self, target: Target, call: Callable[[], T]) -> T:
        """`call` (a service call on target's table or a view of it) after the catch-up of the
        tracked table, in one transaction."""
        pending = self._read_logged(target.db, target.tbl)

        def tx(conn: Connection) -> T:
            self.apply(conn, pending)
            return call()

        result = self.store.one_transaction(tx)
        self._schedule_settle(pending)
        return result

    def create(self, pending: Pending, call: Callable[[], T]) -> T:
        """A create_table (`call`) with the registration or catch-up `pending`, in one transaction."""
        def tx(conn: Connection) -> T:
            result = call()
            self.apply(conn, pending)
            return result

        result = self.store.one_transaction(tx)
        self._schedule_settle(pending)
        return result

    def catch_up(self, db: str, tbl: str, limit: int = 0) -> ImportOutcome | None:
        """Catch tracked db.tbl up in a transaction of its own (the watcher, which settles the index
        backlog after it)."""
        pending = self._read_logged(db, tbl, limit)
        return self.store.run_write(self.apply, pending)

    def _read_logged(self, db: str, tbl: str, limit: int = 0) -> Pending:
        try:
            return self.read(db, tbl, limit=limit)
        except CatchUpError as exc:
            log.error("catch-up of %s.%s stopped: %s", db, tbl, exc.message)
            raise

    def tracked_tables(self) -> list[tuple[str, str]]:
        """(db, table) of every tracked table."""
        h, t = S.hudi_table, S.tbl
        with self.store.read() as conn:
            rows = conn.execute(select(S.db.c.cat_name, S.db.c.name.label("db_name"), t.c.name, h.c.properties)
                                .select_from(h.join(t, t.c.tbl_id == h.c.tbl_id)
                                             .join(S.db, S.db.c.db_id == t.c.db_id))
                                .order_by(h.c.tbl_id)).all()
        return [(r.db_name if r.cat_name == "hive" else f"@{r.cat_name}#{r.db_name}", r.name) for r in rows
                if (_json(r.properties).get(TIMELINE_SOURCE) or "").lower() == STORAGE]


def _touched_groups(instants: list[StoredInstant]) -> set[tuple[str, str]]:
    """(partition, file id) of the file groups completed instants wrote, replaced or rolled back."""
    out: set[tuple[str, str]] = set()
    for inst in instants:
        if inst.state != COMPLETED:
            continue
        action = inst.done_action
        if action in WRITE_ACTIONS:
            meta = parse_commit(inst.completed)
            stats = meta.write_stats
            out |= {(p, fid) for p, fids in meta.replaced.items() for fid in fids}
        elif action in ("rollback", "restore"):
            stats = []
            rollbacks = [parse_rollback(inst.completed)] if action == "rollback" else parse_restore(inst.completed)
            for _, deleted, written in rollbacks:
                stats += written.write_stats
                out |= {(p, parse_file_name(n)[0]) for p, names in deleted.items() for n in names if _is_data(n)}
        else:
            continue
        for st in stats:
            partition, name = split_path(st.path)
            if _is_data(name):
                out.add((st.partition_path if st.partition_path is not None else partition, parse_file_name(name)[0]))
    return out


def _is_data(name: str) -> bool:
    try:
        parse_file_name(name)
        return True
    except ValueError:
        return False


_BACKLOG = ("tbl_id", "partition_path", "file_id")
_BACKLOG_PG = ("int8", "text", "text")
LatestSlices = Callable[[Connection, HudiTableRef, "list[str] | None"], "list[FileSlice]"]
FOOTER_WORKERS = 4
LOG_STATS_MAX_BYTES = 64 << 20  # a log file read for statistics is read whole: larger ones get none
FOOTER_BATCH = 25  # files per task of the footer readers


def read_base_files(base_path: str, cfg: HudiTableConfig, files: list[tuple[str, str]],
                    reader: KeyReader | None = None,
                    ) -> tuple[list[FileColumnStats], dict[tuple[str, str], dict[str, str]]]:
    """RFC-27 statistics of the Parquet base files among `files` (partition, name) from their footers,
    as import-hudi computes them (adapter/commands/column_stats_build.py), and with `reader` their
    record keys (key -> commit time, as hudi_format/record_keys.py reads a base file), each file
    opened once; nothing without pyarrow or for a storage strategy that is not built in (the
    server imports no strategy class: the keys are then read from the slices' paths)."""
    wanted = [(p, n) for p, n in files if n.endswith(".parquet") and not n.startswith(".")]
    if not wanted:
        return [], {}
    try:
        import pyarrow  # noqa: F401 - the footers are read with it
    except ImportError:
        return [], {}
    props = cfg.properties or {}
    if strategy_name(props.get(STORAGE_STRATEGY_CLASS)).lower() not in (HIVE, OBJECT_STORE):
        return [], {}
    strategy = load_strategy(props.get(STORAGE_STRATEGY_CLASS), base_path, props.get(STORAGE_PATH),
                             cfg.table_name)

    plans: list[_Plan] = []  # per schema of the files (a commit's files share one)
    fast: dict[tuple, _FastPlan | None] = {}  # the same for the footer reader's schema keys

    def one(item: tuple[str, str]) -> tuple[FileColumnStats | None, dict[str, str] | None]:
        partition, name = item
        try:
            location = file_location(strategy, partition, name)
            local = _local_path(location)
            if local is not None:
                try:
                    return base_file_by_footer(local, partition, name, props, reader, fast)
                except Unsupported:
                    pass  # read as before, by pyarrow
            return base_file_by_pyarrow(location, partition, name, props, reader, plans)
        except Exception as exc:  # noqa: BLE001 - a file without statistics is only never pruned
            log.warning("%s: no column statistics for %s/%s: %s", base_path, partition, name, exc)
            return None, None

    def some(items: list[tuple[str, str]]) -> list[tuple[FileColumnStats | None, dict[str, str] | None]]:
        return [one(item) for item in items]

    stats: list[FileColumnStats] = []
    keys: dict[tuple[str, str], dict[str, str]] = {}
    # a few files per task: a task's hand-over costs about what a small file's reading does
    step = max(1, min(FOOTER_BATCH, -(-len(wanted) // FOOTER_WORKERS)))
    batches = [wanted[k:k + step] for k in range(0, len(wanted), step)]
    if len(batches) == 1:
        done = some(batches[0])
    else:
        with ThreadPoolExecutor(max_workers=min(FOOTER_WORKERS, len(batches)), thread_name_prefix="footer") as pool:
            done = [r for rs in pool.map(some, batches) for r in rs]
    for item, (st, file_keys) in zip(wanted, done):
        if st is not None:
            stats.append(st)
        if file_keys is not None:
            keys[item] = file_keys
    return stats, keys


def read_log_files(base_path: str, cfg: HudiTableConfig, slices: list[FileSlice]) -> list[FileColumnStats]:
    """RFC-27 statistics of the log files of `slices` from their data blocks, as import-hudi
    computes them (hudi_format/log_stats.py; a log file of deletes alone takes its indexed columns
    from its slice's base file): none for a log file with a block not read there (a rollback, a
    Parquet data block), nor without pyarrow or for a storage strategy that is not built in. The
    file's size is the one read: the store keeps them only at the size it records for the file."""
    wanted = [s for s in slices if s.log_files]
    if not wanted:
        return []
    try:
        import pyarrow  # noqa: F401 - the records are written and read back with it
    except ImportError:
        return []
    props = cfg.properties or {}
    if strategy_name(props.get(STORAGE_STRATEGY_CLASS)).lower() not in (HIVE, OBJECT_STORE):
        return []
    strategy = load_strategy(props.get(STORAGE_STRATEGY_CLASS), base_path, props.get(STORAGE_PATH),
                             cfg.table_name)

    def one(s: FileSlice) -> list[FileColumnStats]:
        import fsspec
        import pyarrow.parquet as pq

        from hudi_format.log_stats import log_file_stats

        out = []
        schema = None
        try:
            if s.base_file is not None:
                fs, path = fsspec.core.url_to_fs(file_location(strategy, s.partition_path, s.base_file.name))
                with fs.open(path, "rb") as f:
                    schema = pq.read_schema(f)
            for lf in s.log_files:
                if (lf.size or 0) > LOG_STATS_MAX_BYTES:  # read whole: a larger one keeps its slice
                    continue
                fs, path = fsspec.core.url_to_fs(file_location(strategy, s.partition_path, lf.name))
                with fs.open(path, "rb") as f:
                    data = f.read(LOG_STATS_MAX_BYTES + 1)
                if len(data) > LOG_STATS_MAX_BYTES:
                    continue
                stats = log_file_stats(data, props, schema, f"{s.partition_path}/{lf.name}")
                if stats is None:
                    continue
                bounds = []
                for c in stats:
                    lo, hi = _key(c.get("min")), _key(c.get("max"))
                    if lo is None or hi is None or lo > hi:
                        lo = hi = None
                    bounds.append(ColumnBounds(c["column"], lo, hi, c.get("nulls"), c.get("values"), 0, 0))
                out.append(FileColumnStats(s.partition_path, lf.name, len(data), len(data), bounds))
        except Exception as exc:  # noqa: BLE001 - a file without statistics only keeps its slice
            log.warning("%s: no column statistics for the log files of %s/%s: %s", base_path, s.partition_path,
                        s.file_id, exc)
        return out

    if len(wanted) == 1:
        return one(wanted[0])
    with ThreadPoolExecutor(max_workers=min(FOOTER_WORKERS, len(wanted)), thread_name_prefix="log-stats") as pool:
        return [st for sts in pool.map(one, wanted) for st in sts]


@dataclass(frozen=True)
class _Plan:
    """What is read of the files of one schema: the indexed columns, the columns read (floats, to
    see NaN; the record key columns), where each column's chunk is in the footer."""

    parquet_schema: Any
    arrow_schema: Any
    columns: list[str]
    floats: list[str]
    read: list[str]
    index: dict[str, int]


def _plan_of(plans: list[_Plan], meta: Any, schema: Any, props: dict[str, str], reader: KeyReader | None) -> _Plan:
    """The plan of a file's schema, made once per schema (`plans`, shared by the reading threads)."""
    import pyarrow as pa

    from hudi_format.parquet_stats import column_index, indexed_columns

    for plan in plans:
        if plan.arrow_schema.equals(schema) and plan.parquet_schema.equals(meta.schema):
            return plan
    columns = indexed_columns(schema, props)
    floats = [c for c in columns if pa.types.is_floating(schema.field(c).type)]
    plan = _Plan(meta.schema, schema, columns, floats,
                 list(dict.fromkeys(floats + (reader.columns if reader is not None else []))), column_index(meta))
    plans.append(plan)
    return plan


def base_file_by_pyarrow(location: str, partition: str, name: str, props: dict[str, str],
                reader: KeyReader | None = None, plans: list[_Plan] | None = None,
                ) -> tuple[FileColumnStats, dict[str, str] | None]:
    import pyarrow as pa
    import pyarrow.parquet as pq

    from hudi_format.parquet_stats import footer_stats, uncompressed_size

    local = _local_path(location)
    with ExitStack() as opened:
        if local is not None:  # pyarrow's own file reads, outside the GIL: half the time of fsspec's
            # (opened here, not by path: no file system resolved per file; no read-ahead of a few
            # columns' pages)
            pf = pq.ParquetFile(opened.enter_context(pa.OSFile(local)), pre_buffer=False)
            size = os.path.getsize(local)
        else:
            import fsspec

            fs, path = fsspec.core.url_to_fs(location)
            pf = pq.ParquetFile(opened.enter_context(fs.open(path, "rb")))
            size = int(fs.size(path))
        meta = pf.metadata
        plan = _plan_of(plans if plans is not None else [], meta, pf.schema_arrow, props, reader)
        floats = plan.floats
        try:
            values = pf.read(columns=plan.read, use_threads=False) if plan.read else pa.table({})
        except Exception:  # noqa: BLE001 - e.g. no key column: the keys are read (and fail) in the transaction
            if reader is None:
                raise
            reader = None
            values = pf.read(columns=floats, use_threads=False) if floats else pa.table({})
    bounds = []
    for c in footer_stats(meta, values, plan.columns, plan.index):
        lo, hi = _key(c.get("min")), _key(c.get("max"))
        if lo is None or hi is None or lo > hi:
            lo = hi = None
        bounds.append(ColumnBounds(c["column"], lo, hi, c.get("nulls"), c.get("values"), c.get("size"), c.get("usize")))
    keys = None
    if reader is not None:
        try:
            keys = reader.of(values.select(reader.columns), _base_instant(name))
        except Exception:  # noqa: BLE001 - read again in the transaction, where a failure turns the index off
            keys = None
    return FileColumnStats(partition, name, size, uncompressed_size(meta), bounds), keys


@dataclass(frozen=True)
class _FastPlan:
    """The footer reader's plan of one schema: the indexed columns and how their statistics
    decode, the float columns among them (read to see NaN)."""

    columns: list[str]
    kinds: dict[str, str]
    floats: list[str]


FAST_KEY_ROWS = 20_000  # a larger file's keys are read by pyarrow (its per-file cost no longer counts)


def base_file_by_footer(local: str, partition: str, name: str, props: dict[str, str], reader: KeyReader | None,
                     plans: dict[tuple, _FastPlan | None]) -> tuple[FileColumnStats, dict[str, str] | None]:
    """base_file_by_pyarrow of a local file by hudi_format/parquet_footer.py (about a tenth of pyarrow's cost
    for a small file); Unsupported where it does not read the file the same way."""
    from hudi_format.parquet_footer import (
        BYTE_ARRAY,
        byte_array_values,
        column_pages,
        floats_have_nan,
        read_footer,
        stats_trusted,
    )
    from hudi_format.parquet_stats import raw_footer_stats

    if reader is not None and not reader.meta:
        raise Unsupported("keys through the key generator")
    with open(local, "rb") as fh:
        footer = read_footer(fh, os.fstat(fh.fileno()).st_size)
        meta = footer.meta
        if not stats_trusted(meta.created_by):
            raise Unsupported(f"statistics of {meta.created_by!r}")
        if footer.schema_key not in plans:
            plans[footer.schema_key] = _fast_plan(local, footer, props)
        plan = plans[footer.schema_key]
        if plan is None:
            raise Unsupported("a schema the footer reader does not read")
        groups = range(len(meta.row_groups or []))
        nan = {c for c in plan.floats
               if any(floats_have_nan(column_pages(fh, footer, footer.columns[c], g, nulls=True),
                                      footer.columns[c].physical) for g in groups)}
        keys = None
        if reader is not None:
            if (meta.num_rows or 0) > FAST_KEY_ROWS:
                raise Unsupported("a large file's keys")
            cols = [footer.columns.get(c) for c in reader.columns]
            if any(c is None or c.physical != BYTE_ARRAY for c in cols):
                raise Unsupported("no key columns")
            values = [[v for g in groups for v in byte_array_values(column_pages(fh, footer, c, g))]
                      for c in cols if c is not None]
            try:
                keys = {k.decode(): t.decode() for k, t in zip(values[0], values[1])}
            except UnicodeDecodeError:
                raise Unsupported("keys that are not UTF-8") from None
    bounds = []
    for c in raw_footer_stats(footer, plan.columns, plan.kinds, nan):
        lo, hi = _key(c.get("min")), _key(c.get("max"))
        if lo is None or hi is None or lo > hi:
            lo = hi = None
        bounds.append(ColumnBounds(c["column"], lo, hi, c.get("nulls"), c.get("values"), c.get("size"), c.get("usize")))
    size = sum(rg.total_byte_size for rg in meta.row_groups or [])
    return FileColumnStats(partition, name, footer.size, size, bounds), keys


def _fast_plan(local: str, footer: Any, props: dict[str, str]) -> _FastPlan | None:
    """The plan of a footer's schema: its indexed columns as pyarrow's schema of the file gives
    them (read once per schema), None when one of them does not decode here."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    from hudi_format.parquet_footer import value_kind
    from hudi_format.parquet_stats import indexed_columns

    schema = pq.read_schema(local)
    columns = indexed_columns(schema, props)
    try:
        kinds = {c: value_kind(footer.columns[c]) for c in columns}
    except (Unsupported, KeyError):
        return None
    return _FastPlan(columns, kinds, [c for c in columns if pa.types.is_floating(schema.field(c).type)])


def _base_instant(name: str) -> str | None:
    try:
        return parse_file_name(name)[1]
    except ValueError:
        return None


def _local_path(location: str) -> str | None:
    """The local path of a `file:` URL or a plain absolute path; None for other file systems."""
    if location.startswith("file://"):
        location = location[len("file://"):]
    elif location.startswith("file:"):
        location = location[len("file:"):]
    elif "://" in location:
        return None
    return location if location.startswith("/") else None


def _key(tagged: dict | None) -> bytes | None:
    """The order-preserving key of a bound as hudi_format.parquet_stats tags it (as the handler's
    value_key makes it of the wire's ColumnValue)."""
    if not tagged:
        return None
    if "i" in tagged:
        return encode_number(Decimal(tagged["i"]))
    if "d" in tagged:
        x = float(tagged["d"])
        return None if math.isnan(x) else encode_float(x)
    if "dec" in tagged:
        d = Decimal(tagged["dec"])
        return encode_number(d) if d.is_finite() else None
    if "s" in tagged:
        return str(tagged["s"]).encode()
    return b64decode(tagged["b"])


def _json(text: Any) -> dict[str, str]:
    import json

    try:
        out = json.loads(text) if isinstance(text, str) else dict(text or {})
    except ValueError:
        return {}
    return out if isinstance(out, dict) else {}


class SyncWatcher:
    """`serve --watch-interval`: catches up tracked tables whose writers do not sync. Each pass
    takes at most `tables_per_pass` tables (round robin) and `instants_per_table` instants of each;
    the rest waits for the next pass. Errors are logged, never raised."""

    def __init__(self, catch_up: TimelineCatchUp, tables_per_pass: int = 50, instants_per_table: int = 100):
        self.catch_up = catch_up
        self.tables_per_pass = tables_per_pass
        self.instants_per_table = instants_per_table
        self._next = 0
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def run_once(self) -> int:
        """One pass; the number of instants applied."""
        try:
            tables = self.catch_up.tracked_tables()
        except Exception:  # noqa: BLE001 - e.g. the database is away for a moment
            log.exception("watcher: listing tracked tables failed")
            return 0
        if not tables:
            return 0
        start = self._next % len(tables)
        chosen = (tables[start:] + tables[:start])[:self.tables_per_pass]
        self._next = start + len(chosen)
        applied = 0
        for db, tbl in chosen:
            try:
                out = self.catch_up.catch_up(db, tbl, self.instants_per_table)
                applied += len(out.imported) if out is not None else 0
                self.catch_up.settle(db, tbl)  # also a backlog a stopped server left
            except NoSuchObject:
                continue  # dropped meanwhile
            except Exception as exc:  # noqa: BLE001 - logged; the next pass tries again
                if not isinstance(exc, CatchUpError):
                    log.warning("watcher: catch-up of %s.%s failed: %s", db, tbl, exc)
        return applied

    def start(self, interval_s: float) -> None:
        if self._thread is not None and self._thread.is_alive():
            return
        self._stop.clear()
        self._thread = threading.Thread(target=self._run, args=(interval_s,), name="hudi-sync-watcher", daemon=True)
        self._thread.start()

    def _run(self, interval_s: float) -> None:
        while not self._stop.wait(interval_s):
            self.run_once()

    def stop(self, timeout: float = 30) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout)
            self._thread = None


__all__ = ["CatchUpError", "Pending", "SyncWatcher", "Target", "TimelineCatchUp", "hudi_base_path",
           "is_tracked"]
