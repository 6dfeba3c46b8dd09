"""Storage mirror (RFC-36 "Async Snapshot Synchronization"): the timeline on storage, for readers
that do not know this server (Java Hudi, hudi-rs, Trino's Hudi connector).

After an instant completes, the table's state on storage is brought up to the database's, in the
layout of the table's version (hudi_format/timeline_layout.py: timeline layout 1 in `.hoodie/` for
version 6, layout 2 in `.hoodie/timeline/` for 8 and 9, its metadata in Hudi 1.x's Avro):

* `.hoodie/hoodie.properties`: the table config, `hoodie.table.checksum` = CRC32 of the UTF-8 bytes of
  `<hoodie.database.name>.<hoodie.table.name>` (HoodieTableConfig.generateChecksum), Java
  properties text; the empty folders Hudi creates (`.aux/.bootstrap/{.partitions,.fileids}`,
  `.schema`, `.temp`, `archived`);
* every instant's files, requested -> inflight -> completed, each written atomically (temp file and
  rename; a single PUT on object stores), never a later state before an earlier one. Names as
  Hudi's InstantFileNameGeneratorV1/V2 give them (`TimelineLayout.file_name`);
* `.hoodie_partition_metadata` (commitTime, partitionDepth) in every partition a commit wrote to,
  before the commit's completed file;
* for a table whose config says `hoodie.metadata.enable=true`, Hudi's metadata table (its `files`
  partition, store/hudi/metadata_table): bootstrapped from the server's rows, then each completed
  instant's deltacommit before the instant's completed file; `hoodie.properties` lists `files` in
  `hoodie.table.metadata.partitions` once the bootstrap is complete; bootstrapped again when the
  table's files changed outside an instant (an import's listing leaves a mark);
* the files of instants the server rolled back (a rollback, a restore) are deleted (completed,
  inflight, requested), and those of savepoints it no longer has (deleted); a table service rolled
  back to REQUESTED (a failed attempt: its plan runs again) loses its inflight file, as Hudi's
  revertInstantFromInflightToRequested deletes it. A savepoint shares its
  commit's instant time, so instants are told apart by time and whether they are savepoints.

Progress is `tbl_version.snapshot_status` (0 -> 1, `update_time` = when) per table version, in
version order: a version is 1 once it and everything before it is on storage. The version rows are
the work queue shared by server processes: a process leases a table's pending versions by setting
their `update_time` while they are still 0 (a lease expires after `lease_ms`), and every write is
idempotent, so two processes mirroring the same table at once do no harm.
"""

from __future__ import annotations

import logging
import sys
import threading
import time
import uuid
from collections.abc import Callable, Iterable, Iterator
from contextlib import AbstractContextManager, contextmanager, nullcontext
from dataclasses import dataclass

from sqlalchemy import Connection, func, or_, select, update
from sqlalchemy.exc import SQLAlchemyError

from hudi_format.avro_metadata import for_storage
from hudi_format.commit_metadata import WRITE_ACTIONS, commit_partitions, parse_rollback, restored_instants
from hudi_format.config_keys import (
    INDEX_DEFS_PATH,
    METADATA_PARTITIONS,
    METADATA_PARTITIONS_INFLIGHT,
    PROPERTIES_FILE,
)
from hudi_format.instant import COMPLETED, COMPLETED_AS, INFLIGHT, REQUESTED
from hudi_format.layout import HOODIE, PARTITION_METAFILE, java_properties, storage_properties
from hudi_format.metadata_column_stats import COLUMN_STATS, INDEX_DEFS
from hudi_format.metadata_table import METADATA_FOLDER
from hudi_format.storage import TableStorage
from hudi_format.table_config import read_properties
from hudi_format.timeline_layout import TimelineLayout, timeline_layout
from store import metrics
from store.db import schema as S
from store.db.database import Store, now_ms
from store.errors import InvalidOperation, TableLocked
from store.hudi.metadata_table import MetadataTableWriter, metadata_table_enabled
from store.hudi.table_files import TableFiles
from store.hudi.tables import HudiTableRef
from store.hudi.timeline import (
    Completed,
    TimelineService,
    after_commit_step,
    clean_retains_from,
    commits_running,
    is_tracked,
)
from store.hudi.timeline_archiver import archive

log = logging.getLogger(__name__)

DEFAULT_LEASE_MS = 60_000
HOOK_WAIT_S = 15.0  # how long a commit's hook waits for another mirror holding the table's lease
HOOK_FRESH_LEASE_MS = 10_000  # a lease taken longer ago than this: its holder is taken for gone
ARCHIVE_YIELD_S = 1.0  # how long the background archive waits for running commits at each pause
ARCHIVE_LOCK_WAIT_S = 1.0  # how long the background archive of a tracked table waits for Hudi's table lock
# hoodie.properties' keys about the metadata table: the mirror's only changes to a tracked table's file
METADATA_KEYS = (METADATA_PARTITIONS, METADATA_PARTITIONS_INFLIGHT, INDEX_DEFS_PATH)
_BUSY = -1  # _sync_round: another thread or process holds the table's lease

Listing = dict[str, int | None]  # file name under .hoodie -> size (None: a folder)
Key = tuple[str, bool]  # an instant: its time, and whether it is a savepoint (which shares its commit's time)
SAVEPOINT = "savepoint"


def _is_savepoint_file(name: str) -> bool:
    return name.partition(".")[2] in (SAVEPOINT, f"{SAVEPOINT}.inflight")


@dataclass
class _Timeline:
    """The timeline folder of a table on storage: its layout (by table version) and files."""
    layout: TimelineLayout
    files: Listing  # file name in the timeline folder -> size
    table_version: int = 6

    def path(self, name: str) -> str:
        return f"{self.layout.timeline_dir}/{name}"


def _properties(raw: bytes | None) -> dict[str, str]:
    """A hoodie.properties file's keys; {} when missing or unreadable (then written again)."""
    if raw is None:
        return {}
    try:
        return read_properties(raw.decode("latin-1"))
    except Exception:  # noqa: BLE001 - unreadable: rewritten
        return {}


@dataclass
class _Inst:
    instant_id: int
    ts: str
    action: str  # as requested (compaction stays compaction)
    state: int
    completion_ts: str | None = None

    def files(self, layout: TimelineLayout) -> list[tuple[str, int, str]]:
        """(file name, state, action of its metadata row) in the order they are written."""
        out = []
        for st in (REQUESTED, INFLIGHT, COMPLETED):
            if st > self.state:
                break
            name = layout.file_name(self.ts, self.action, st, self.completion_ts)
            if name:
                out.append((name, st, COMPLETED_AS.get(self.action, self.action) if st == COMPLETED else self.action))
        return out


class MirrorQueue:
    """Table versions not yet on storage (`tbl_version.snapshot_status` 0): the work queue the
    server processes share, with leases (`update_time` of pending versions) and progress."""

    def __init__(self, store: Store, clock_ms: Callable[[], int], lease_ms: int):
        self.store = store
        self.clock_ms = clock_ms
        self.lease_ms = lease_ms

    def lag(self, tbl_id: int) -> int:
        with self.store.read() as conn:
            v = S.tbl_version
            return conn.execute(select(func.count()).select_from(v).where(
                v.c.tbl_id == tbl_id, v.c.snapshot_status == 0)).scalar_one()

    def total_lag(self) -> int:
        with self.store.read() as conn:
            return conn.execute(select(func.count()).select_from(S.tbl_version).where(
                S.tbl_version.c.snapshot_status == 0)).scalar_one()

    @staticmethod
    def pending(conn: Connection, tbl_id: int) -> list[tuple[int, int]]:
        """(version, instant id) of the table's versions not on storage yet, in order."""
        v = S.tbl_version
        return [(r.version, r.instant_id) for r in conn.execute(
            select(v.c.version, v.c.instant_id).where(v.c.tbl_id == tbl_id, v.c.snapshot_status == 0)
            .order_by(v.c.version))]

    def claim(self, tbl_id: int, versions: list[int], force: bool) -> int | None:
        """Lease the pending versions (their update_time while still 0); None when another holds them."""
        return self.store.run_write(self._claim_in, tbl_id, versions, force, self.clock_ms())

    def _claim_in(self, conn: Connection, tbl_id: int, versions: list[int], force: bool, token: int) -> int | None:
        v = S.tbl_version
        if not force:
            got = conn.execute(update(v).where(
                v.c.tbl_id == tbl_id, v.c.version == versions[0], v.c.snapshot_status == 0,
                or_(v.c.update_time.is_(None), v.c.update_time < token - self.lease_ms),
            ).values(update_time=token)).rowcount
            if got != 1:
                return None
        conn.execute(update(v).where(v.c.tbl_id == tbl_id, v.c.snapshot_status == 0,
                                     v.c.version.in_(versions)).values(update_time=token))
        return token

    def lease_age_ms(self, tbl_id: int) -> int | None:
        """How long ago the newest lease on the table's pending versions was taken; None: no lease."""
        v = S.tbl_version
        with self.store.read() as conn:
            newest = conn.execute(select(func.max(v.c.update_time)).where(
                v.c.tbl_id == tbl_id, v.c.snapshot_status == 0)).scalar()
        return None if newest is None else self.clock_ms() - int(newest)

    def release(self, tbl_id: int, token: int) -> None:
        try:
            self.store.run_write(self._release_in, tbl_id, token)
        except Exception:  # the lease then just expires
            log.debug("could not release mirror lease", exc_info=True)

    @staticmethod
    def _release_in(conn: Connection, tbl_id: int, token: int) -> None:
        v = S.tbl_version
        conn.execute(update(v).where(v.c.tbl_id == tbl_id, v.c.snapshot_status == 0,
                                     v.c.update_time == token).values(update_time=None))

    def mark(self, tbl_id: int, version: int) -> int:
        """The version is on storage: 1 when this call marked it."""
        return self.store.run_write(self._mark_in, tbl_id, version)

    def _mark_in(self, conn: Connection, tbl_id: int, version: int) -> int:
        v = S.tbl_version
        return conn.execute(update(v).where(
            v.c.tbl_id == tbl_id, v.c.version == version, v.c.snapshot_status == 0,
        ).values(snapshot_status=1, update_time=self.clock_ms())).rowcount


class _InstantMetadata:
    """Instant metadata rows of one table, each read once (in its own short read)."""

    def __init__(self, store: Store, tbl_id: int, done: Completed | None = None):
        self.store = store
        self.tbl_id = tbl_id
        self._cache: dict[tuple[str, str, int], bytes] = {}
        self.partitions: dict[str, frozenset[str]] = {}  # ts -> partitions of a commit known already
        if done is not None:  # what the completion just stored (commit.Completed)
            self._cache[(done.ts, done.action, COMPLETED)] = bytes(done.metadata)
            if done.partitions is not None:
                self.partitions[done.ts] = done.partitions

    def __call__(self, ts: str, action: str, state: int) -> bytes:
        key = (ts, action, state)
        if key not in self._cache:
            m = S.instant_meta
            with self.store.read() as conn:
                data = conn.execute(select(m.c.data).where(
                    m.c.tbl_id == self.tbl_id, m.c.ts == ts, m.c.action == action, m.c.state == state)).scalar()
            self._cache[key] = bytes(data) if data is not None else b""
        return self._cache[key]


class StorageMirror:
    def __init__(self, store: Store, timeline: TimelineService, clock_ms: Callable[[], int] = now_ms,
                 lease_ms: int = DEFAULT_LEASE_MS, boundary: TableFiles | None = None,
                 table_lock: Callable[[str, str, float], AbstractContextManager[None]] | None = None):
        """`boundary`: the server's storage boundary; tables whose base path lies outside it are not
        written (their versions stay pending). None (the admin CLI): every table is written.
        `table_lock(db, tbl, wait_s)`: the EXCLUSIVE table lock Hudi's lock provider takes
        (LockManager.table_held), held by the background archive of a tracked table."""
        self.table_lock = table_lock
        self.store = store
        self.timeline = timeline
        self.boundary = boundary
        self.clock_ms = clock_ms
        self.queue = MirrorQueue(store, clock_ms, lease_ms)
        self.metadata_table = MetadataTableWriter(store, clock_ms)
        self._props_written: dict[str, bytes] = {}  # base path -> hoodie.properties known on storage
        self._thread: threading.Thread | None = None
        self._stop = threading.Event()
        # tables whose timeline the background thread archives (a commit's hook does not wait for
        # it), in the order asked; one archive of a table at a time in this process
        self._archive_due: dict[tuple[str, str], None] = {}
        self._archive_lock = threading.Lock()
        self._archiving: dict[str, threading.Lock] = {}
        self._wake = threading.Event()

    # --- API ----------------------------------------------------------------------------------

    def hook(self, db: str, tbl: str, done: Completed | None = None) -> None:
        """For `timeline.on_commit`: mirror right after a commit (`done`: what it stored, not read
        back); failures wait for the background retry. When another mirror (the background thread,
        another server) holds the table's lease, waits for it, bounded by HOOK_WAIT_S: a writer
        that reads storage right after its commit must find the commit there. A lease older than
        HOOK_FRESH_LEASE_MS (its holder killed, say) is not waited for: it expires for the retry."""
        try:
            deadline = time.monotonic() + HOOK_WAIT_S
            while self._hook_sync(db, tbl, done) and time.monotonic() < deadline:
                with self.store.read() as conn:
                    tbl_id = self.timeline.table_ref(conn, db, tbl).tbl_id
                age = self.queue.lease_age_ms(tbl_id)
                if age is None:  # released between our try and this look: try again
                    continue
                if age > HOOK_FRESH_LEASE_MS:
                    break
                time.sleep(0.05)
        except Exception as exc:  # never fails the commit
            log.warning("storage mirror of %s.%s failed (left for retry): %s", db, tbl, exc)

    def _hook_sync(self, db: str, tbl: str, done: Completed | None) -> bool:
        """One try of the hook's mirror, during which the background archive gives way (as to the
        commit's transaction); whether another mirror held the lease."""
        with after_commit_step():
            return self._sync(db, tbl, False, done)[1]

    def lag(self, db: str, tbl: str) -> int:
        """Versions of the table not yet on storage."""
        with self.store.read() as conn:
            tbl_id = self.timeline.table_ref(conn, db, tbl).tbl_id
        return self.queue.lag(tbl_id)

    def total_lag(self) -> int:
        return self.queue.total_lag()

    def sync(self, db: str, tbl: str, force: bool = True, done: Completed | None = None) -> int:
        """Mirror every pending version of the table, in order; the number of versions mirrored.
        `force=False` skips a table another process (or thread) holds the lease on."""
        return self._sync(db, tbl, force, done)[0]

    def _sync(self, db: str, tbl: str, force: bool, done: Completed | None) -> tuple[int, bool]:
        """(versions mirrored, whether another mirror held the lease and versions are left)."""
        started = time.monotonic()
        total = 0
        busy = False
        try:
            for round_ in range(20):  # versions committed while we mirrored are taken too
                n = self._sync_round(db, tbl, force, first=round_ == 0, done=done)
                if n is None:
                    break
                if n == _BUSY:
                    busy = True
                    break
                total += n
                if n == 0:
                    break
        finally:
            self._observe(time.monotonic() - started)
        return total, busy

    def sync_pending(self) -> int:
        """One pass over every Hudi table with pending versions (what the background thread runs)."""
        v = S.tbl_version
        with self.store.read() as conn:
            rows = conn.execute(select(S.db.c.name.label("db"), S.tbl.c.name.label("tbl")).select_from(
                v.join(S.tbl, S.tbl.c.tbl_id == v.c.tbl_id).join(S.db, S.db.c.db_id == S.tbl.c.db_id)
                 .join(S.hudi_table, S.hudi_table.c.tbl_id == v.c.tbl_id)
            ).where(v.c.snapshot_status == 0).distinct()).all()
        total = 0
        for r in rows:
            if self._stop.is_set() and self._thread is not None and threading.current_thread() is self._thread:
                break
            try:
                total += self.sync(r.db, r.tbl, force=False)
            except Exception as exc:  # one table's storage must not stop the others
                log.warning("storage mirror of %s.%s failed (will retry): %s", r.db, r.tbl, exc)
        return total

    def start_background(self, interval_s: float = 5) -> None:
        if self._thread is not None and self._thread.is_alive():
            return
        self._stop.clear()
        self._thread = threading.Thread(target=self._run, args=(interval_s,), name="hudi-storage-mirror",
                                        daemon=True)
        self._thread.start()

    def _run(self, interval_s: float) -> None:
        while not self._stop.is_set():
            self._wake.clear()
            try:
                self.archive_due()
                self.sync_pending()
            except Exception:  # e.g. the database is away for a moment
                log.exception("storage mirror pass failed")
            self._wake.wait(interval_s)

    def stop(self, timeout: float = 30) -> None:
        self._stop.set()
        self._wake.set()
        if self._thread is not None:
            self._thread.join(timeout)
            self._thread = None

    def archive_due(self) -> int:
        """Archive the timelines the commits' hooks left to the background (the number of tables);
        a table that fails waits for its next commit."""
        with self._archive_lock:
            due, self._archive_due = list(self._archive_due), {}
        if not due:
            return 0
        with _short_switches():
            return self._archive_tables(due)

    def _archive_tables(self, due: list[tuple[str, str]]) -> int:
        done = 0
        for db, tbl in due:
            if self._stop.is_set():
                break
            try:
                with self.store.read() as conn:
                    ref = self.timeline.table_ref(conn, db, tbl)
                # a tracked table's timeline is Hudi's writers' too: archived under the lock their
                # commits (and Hudi's own archiver) hold, so that neither reads what the other deletes
                with self.table_lock(db, tbl, ARCHIVE_LOCK_WAIT_S) if self.table_lock is not None and \
                        is_tracked(ref.config) else nullcontext():
                    st = TableStorage(ref.base_path)
                    layout = timeline_layout(ref.config.table_version, ref.config.hoodie_properties())
                    tl = _Timeline(layout, st.listing(layout.timeline_dir), ref.config.table_version)
                    self._archive(st, ref, tl, metadata_table_enabled(ref))
                done += 1
            except TableLocked:  # a writer holds the table: the next pass tries again
                with self._archive_lock:
                    self._archive_due[(db, tbl)] = None
                log.info("archiving the timeline of %s.%s waits: a writer holds the table's lock", db, tbl)
            except Exception as exc:  # noqa: BLE001 - the table's next commit asks again
                log.warning("archiving the timeline of %s.%s failed (left for its next commit): %s", db, tbl, exc)
        return done

    def _archive(self, st: TableStorage, ref: HudiTableRef, tl: _Timeline, mdt: bool) -> None:
        """Old instants to the archived timeline, as Hudi's archiver (store/hudi/timeline_archiver.py):
        never the metadata table's base instant or the earliest commit the last clean retained."""
        with self._archive_lock:
            lock = self._archiving.setdefault(ref.base_path, threading.Lock())
        with lock:
            with self.store.read() as conn:
                floors = [clean_retains_from(conn, ref.tbl_id)]
            if mdt:
                floors.append(self.metadata_table.base_instant(st, tl.table_version))
            present = [f for f in floors if f]
            # the background thread gives way to commits: on a server's few cores an archive of
            # commits of 10,000 files took half the CPU of the commits it overlapped
            pause = _yield_to_commits if threading.current_thread() is self._thread else None
            archive(st, tl.layout, tl.files, ref.config.hoodie_properties(), min(present) if present else None,
                    pause)

    # --- one round ------------------------------------------------------------------------------

    def _observe(self, seconds: float) -> None:
        metrics.observe("hudi_snapshot_sync_seconds", seconds)
        try:
            lag = self.total_lag()
        except SQLAlchemyError:  # the gauge waits for the next round; the mirror goes on
            log.debug("mirror lag not read", exc_info=True)
            return
        metrics.set_gauge("hudi_storage_mirror_lag_versions", lag)

    def _sync_round(self, db: str, tbl: str, force: bool, first: bool = True,
                    done: Completed | None = None) -> int | None:
        with self.store.read() as conn:
            ref = self.timeline.table_ref(conn, db, tbl)
            pending = self.queue.pending(conn, ref.tbl_id)
        if not pending and not first:  # a later round that finds nothing new: nothing to check
            return 0
        if self.boundary is not None and \
                not self.boundary.writable(ref.base_path, "mirror the timeline to", ref.tbl_id):
            if force:  # asked for by name: say why nothing is written
                raise InvalidOperation(
                    f"{ref.db_name}.{ref.name}: its base path {ref.base_path} is outside the warehouse and the "
                    f"server's --storage-roots, or inside another object's location, so the server does not "
                    f"write its timeline there (the instants are kept in the store; docs/security.md, Storage "
                    f"boundaries and Storage ownership)")
            return None  # outside what the server manages: recorded in the store, never written
        if not pending:
            # forced: the layout and the pending instants; else the layout of a table not seen yet
            if first and (force or ref.base_path not in self._props_written):
                self._mirror(ref, [], layout_only=not force)
            return 0
        token = self.queue.claim(ref.tbl_id, [p[0] for p in pending], force)
        if token is None:
            return _BUSY
        try:
            return self._mirror(ref, pending, done=done)
        except BaseException:
            self.queue.release(ref.tbl_id, token)
            raise

    def _mirror(self, ref: HudiTableRef, pending: list[tuple[int, int]], layout_only: bool = False,
                done: Completed | None = None) -> int:
        st = TableStorage(ref.base_path)
        # Storage is listed before the database is read: a file this listing misses was written
        # by someone who read a newer database state, so it is never taken for a stale one.
        listing = st.listing(HOODIE)
        layout = timeline_layout(ref.config.table_version, ref.config.hoodie_properties())
        tl = _Timeline(layout, listing if layout.timeline_dir == HOODIE else st.listing(layout.timeline_dir),
                       ref.config.table_version)
        # the metadata table (issue 45): bootstrapped under the lease only (layout_only holds none),
        # listed in hoodie.properties once it is complete
        mdt = metadata_table_enabled(ref)
        # (written again when the table's files changed outside an instant: a re-import's listing)
        rewrite = mdt and not layout_only and self.metadata_table.take_rewrite_mark(ref)
        if mdt and not layout_only and (rewrite or not self.metadata_table.ready(st, ref.base_path,
                                                                                 tl.table_version)):
            self.metadata_table.bootstrap(st, ref)
        if not mdt:
            self.metadata_table.forget(ref.base_path)
        if layout_only:
            self._write_layout(st, ref, listing, layout,
                               self.metadata_table.available(st, ref, False) if mdt else None)
            return 0

        with self.store.read() as conn:
            instants = self._instants(conn, ref.tbl_id)
        by_id = {i.instant_id: i for i in instants.values()}
        own = self._writes_own(by_id, pending, tl)
        if not mdt and is_tracked(ref.config) and own:
            self._withdraw_metadata_table(st, ref)
        self._write_layout(st, ref, listing, layout, self.metadata_table.available(st, ref, True) if mdt else None)
        meta = _InstantMetadata(self.store, ref.tbl_id, done)
        known_partitions: set[str] = set()
        mirrored = 0
        for version, instant_id in pending:
            inst = by_id.get(instant_id)
            if inst is not None:
                self._write_instant(st, inst, meta, tl, known_partitions, ref if mdt else None)
                if inst.state == COMPLETED and inst.action in ("rollback", "restore"):
                    data = meta(inst.ts, inst.action, COMPLETED)
                    rolled = parse_rollback(data)[0] if inst.action == "rollback" else restored_instants(data)
                    self._delete_instants(st, [t for t in rolled if (t, False) not in instants], tl)
                    # a service rolled back to REQUESTED (rollback.py): its inflight file goes
                    self._delete_inflight(st, [t for t in rolled if (t, False) in instants
                                               and instants[(t, False)].state == REQUESTED], tl)
            mirrored += self.queue.mark(ref.tbl_id, version)

        # instants still pending on the server: their requested / inflight files
        written: list[Key] = []
        for key, inst in sorted(instants.items()):
            if inst.state != COMPLETED and self._write_instant(st, inst, meta, tl, known_partitions):
                written.append(key)
        if written:  # one of them rolled back meanwhile (its rollback's sync may have run already)
            with self.store.read() as conn:
                still = set(self._instants(conn, ref.tbl_id))
            for savepoints in (False, True):
                self._delete_instants(st, [t for t, sp in written if sp == savepoints and (t, sp) not in still],
                                      tl, savepoints)
        # savepoints deleted on the server
        self._delete_instants(st, [t for n in list(tl.files) if _is_savepoint_file(n) and
                                   (t := layout.instant_of(n)) and (t, True) not in instants], tl, True)
        # Only after the server's own instants: instants caught up from storage were written by a
        # Hudi writer, which archives its timeline itself and may still be reading it (its meta
        # sync is what made the server catch up)
        if mirrored and own:
            background = self._thread
            locked = self.table_lock is not None and is_tracked(ref.config)
            if background is not None and background.is_alive() and (
                    threading.current_thread() is not background or locked):
                # a commit's hook: the background thread archives (archiving ten commits of 10,000
                # files takes seconds, which the commit would wait for); the background's own step
                # of a tracked table too (its archive takes the table's lock)
                with self._archive_lock:
                    self._archive_due[(ref.db_name, ref.name)] = None
                self._wake.set()
            else:
                self._archive(st, ref, tl, mdt)
        return mirrored

    # --- pieces ---------------------------------------------------------------------------------

    @staticmethod
    def _writes_own(by_id: dict[int, _Inst], pending: list[tuple[int, int]], tl: _Timeline) -> bool:
        """Does the step complete an instant that changes the table's files on storage (one the
        server committed, not one it caught up from there)?"""
        for _, instant_id in pending:
            inst = by_id.get(instant_id)
            if inst is not None and inst.state == COMPLETED and inst.action != SAVEPOINT and any(
                    state == COMPLETED and name not in tl.files for name, state, _ in inst.files(tl.layout)):
                return True
        return False

    def _withdraw_metadata_table(self, st: TableStorage, ref: HudiTableRef) -> None:
        """A tracked table whose metadata table is Hudi's writers' gets an instant from the server,
        which does not write that metadata table: it would no longer list every file. Readers are
        told first (hoodie.properties without its partitions: they list storage), then it is
        deleted; Hudi's writer builds it again at its next write."""
        path = f"{HOODIE}/{PROPERTIES_FILE}"
        found = st.read(path)
        props = _properties(found)
        if not any(k in props for k in METADATA_KEYS) and not st.exists(METADATA_FOLDER):
            return
        if any(k in props for k in METADATA_KEYS):
            kept = {k: v for k, v in props.items() if k not in METADATA_KEYS}
            st.put(path, java_properties(kept, "Properties saved by hudi-metastore"))
        try:
            st.fs.rm(st.path(METADATA_FOLDER), recursive=True)
        except FileNotFoundError:
            pass
        log.info("%s.%s: the server wrote an instant into a table whose metadata table is Hudi's writers': "
                 "withdrawn (readers list storage; Hudi's next write builds it again)", ref.db_name, ref.name)

    def _write_layout(self, st: TableStorage, ref: HudiTableRef, listing: Listing, layout: TimelineLayout,
                      metadata_partitions: list[str] | None = None) -> None:
        """`hoodie.properties` (when missing or different; listing the metadata table's
        `metadata_partitions`; None: the mirror writes no metadata table) and Hudi's folders (when
        missing). A tracked table's file (Hudi's writers') changes only in the metadata table's keys,
        when the mirror writes that table."""
        props = storage_properties(ref.config)
        path = f"{HOODIE}/{PROPERTIES_FILE}"
        found: bytes | None = None
        read = is_tracked(ref.config)
        if read:  # tracked: Hudi's writers own the file; only a metadata table the mirror writes is listed
            found = st.read(path)
            theirs = _properties(found)
            if theirs:
                props = {k: v for k, v in theirs.items()
                         if metadata_partitions is None or k not in METADATA_KEYS}
        if metadata_partitions:
            props[METADATA_PARTITIONS] = ",".join(metadata_partitions)
            if COLUMN_STATS in metadata_partitions:  # Hudi's readers skip by the columns it names
                props[INDEX_DEFS_PATH] = INDEX_DEFS
        text = java_properties(props, "Properties saved by hudi-metastore")
        if listing.get(PROPERTIES_FILE) != len(text) or self._props_written.get(ref.base_path) != text:
            if not read:
                found = st.read(path)
            # the same properties in another order or with another comment (Hudi's writer wrote
            # them) stay as they are: a Java writer may be reading them right now
            if found != text and not (found is not None and _properties(found) == props):
                st.put(path, text)
            listing[PROPERTIES_FILE] = len(text)
            self._props_written[ref.base_path] = text
        if st.object_store:  # object stores have no folders
            return
        for d in layout.dirs:  # sub-folders of .aux only when .aux itself was missing
            if d.split("/")[0] not in listing:
                st.makedirs(f"{HOODIE}/{d}")
        for d in layout.dirs:
            listing.setdefault(d.split("/")[0], None)

    @staticmethod
    def _instants(conn: Connection, tbl_id: int) -> dict[Key, _Inst]:
        """(ts, is a savepoint) -> instant; the action is the one the instant was requested with (from
        its metadata rows)."""
        i, m = S.instant, S.instant_meta
        requested_as = {}
        for meta_row in conn.execute(select(m.c.ts, m.c.action).where(
                m.c.tbl_id == tbl_id, m.c.state.in_([REQUESTED, INFLIGHT]))):
            requested_as[(meta_row.ts, meta_row.action == SAVEPOINT)] = meta_row.action
        out = {}
        for r in conn.execute(select(i.c.instant_id, i.c.ts, i.c.action, i.c.state, i.c.completion_ts).where(
                i.c.tbl_id == tbl_id).order_by(i.c.ts)):
            key = (r.ts, r.action == SAVEPOINT)
            action = requested_as.get(key, r.action)
            if r.state == COMPLETED and COMPLETED_AS.get(action, action) != r.action:
                action = r.action
            out[key] = _Inst(r.instant_id, r.ts, action, r.state, r.completion_ts)
        return out

    def _write_instant(self, st: TableStorage, inst: _Inst, meta: _InstantMetadata, tl: _Timeline,
                       known_partitions: set[str], metadata_table: HudiTableRef | None = None) -> bool:
        """Write the instant's missing files in state order, the metadata table's deltacommit of a
        completed one before its completed file; True when something was written."""
        wrote = False
        for name, state, meta_action in inst.files(tl.layout):
            data = meta(inst.ts, meta_action, state)
            if state == COMPLETED and meta_action in WRITE_ACTIONS:
                partitions = meta.partitions.get(inst.ts)
                self._partition_metadata(st, inst.ts, commit_partitions(data) if partitions is None else partitions,
                                         known_partitions)
            if tl.layout.version > 1:  # Hudi 1.x's Avro metadata
                data = for_storage(meta_action, state, data, inst.action)
            if state == COMPLETED and metadata_table is not None:  # (kept when written before)
                self.metadata_table.apply(st, inst.ts, meta_action, data, tl.table_version, metadata_table,
                                          inst.completion_ts)
            if tl.files.get(name) == len(data):
                continue  # instant files are immutable: the same name and size is the same file
            st.put(tl.path(name), data)
            tl.files[name] = len(data)
            wrote = True
        return wrote

    def _partition_metadata(self, st: TableStorage, ts: str, partitions: Iterable[str], known: set[str]) -> None:
        for partition in sorted(partitions):
            partition = (partition or "").strip("/")
            if partition in known or ".." in partition.split("/"):  # commits refuse '..' (stored before?)
                continue
            rel = f"{partition}/{PARTITION_METAFILE}" if partition else PARTITION_METAFILE
            if not st.exists(rel):
                depth = len(partition.split("/")) if partition else 0
                stamp = time.strftime("%a %b %d %H:%M:%S UTC %Y", time.gmtime(self.clock_ms() / 1000))
                text = f"#partition metadata\n#{stamp}\ncommitTime={ts}\npartitionDepth={depth}\n".encode()
                # Hudi's own temp name (HoodiePartitionMetadata.trySave), unique per writer
                st.put(rel, text, tmp_name=f"{PARTITION_METAFILE}_{uuid.uuid4().hex}")
            known.add(partition)

    @staticmethod
    def _delete_inflight(st: TableStorage, instants: list[str], tl: _Timeline) -> None:
        """Remove the inflight files of instants back in REQUESTED (Hudi's
        revertInstantFromInflightToRequested)."""
        gone = set(instants)
        for n in [n for n in tl.files if _deletion_order(n) == 1 and not _is_savepoint_file(n)
                  and tl.layout.instant_of(n) in gone]:
            st.delete(tl.path(n))
            tl.files.pop(n, None)

    @staticmethod
    def _delete_instants(st: TableStorage, instants: list[str], tl: _Timeline, savepoints: bool = False) -> None:
        """Remove the timeline files of instants the server no longer has (of savepoints, or of the
        other instants at those times): completed first, so a reader never sees a completed instant
        without its requested and inflight files."""
        if not instants:
            return
        gone = set(instants)
        names = [n for n in list(tl.files) if tl.layout.instant_of(n) in gone and _is_savepoint_file(n) == savepoints]
        for n in sorted(names, key=_deletion_order):
            st.delete(tl.path(n))
            tl.files.pop(n, None)


def _yield_to_commits() -> None:
    """Wait while commits of this process run, at most ARCHIVE_YIELD_S (the archive goes on)."""
    deadline = time.monotonic() + ARCHIVE_YIELD_S
    while commits_running() and time.monotonic() < deadline:
        time.sleep(0.002)


@contextmanager
def _short_switches() -> Iterator[None]:
    """While the background thread archives (seconds of CPU), the interpreter hands over to a
    waiting thread (a commit back from the database) after 0.5 ms instead of 5 ms: a commit then
    shares the CPU with the archive instead of waiting 5 ms at each of its database round trips."""
    before = sys.getswitchinterval()
    sys.setswitchinterval(min(before, 0.0005))
    try:
        yield
    finally:
        sys.setswitchinterval(before)


def _deletion_order(name: str) -> int:
    """Completed (0) before inflight (1) before requested (2) instant files."""
    rest = name.partition(".")[2]
    if rest.endswith(".requested"):
        return 2
    if rest == "inflight" or rest.endswith(".inflight"):
        return 1
    return 0
