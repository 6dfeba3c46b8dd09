"""Storage mirror (RFC-36 "Async Snapshot Synchronization"): the timeline on storage, for readers
that do not know this server (Java Hudi, hudi-rs, Trino's Hudi connector).

After an instant completes, the table's state on storage is brought up to the database's, in Hudi's
table version 6 layout (timeline layout 1):

* `.hoodie/hoodie.properties`: the table config, `hoodie.table.checksum` = CRC32 of the UTF-8 bytes of
  `<hoodie.database.name>.<hoodie.table.name>` (HoodieTableConfig.generateChecksum), Java
  properties text; the empty folders Hudi creates (`.aux/.bootstrap/{.partitions,.fileids}`,
  `.schema`, `.temp`, `archived`);
* every instant's files, requested -> inflight -> completed, each written atomically (temp file and
  rename; a single PUT on object stores), never a later state before an earlier one. Names as
  Hudi's InstantFileNameGeneratorV1 gives them (see `instant_file_name`);
* `.hoodie_partition_metadata` (commitTime, partitionDepth) in every partition a commit wrote to,
  before the commit's completed file;
* the files of instants the server rolled back are deleted (completed, inflight, requested).

Progress is `tbl_version.snapshot_status` (0 -> 1, `update_time` = when) per table version, in
version order: a version is 1 once it and everything before it is on storage. The version rows are
the work queue shared by server processes: a process leases a table's pending versions by setting
their `update_time` while they are still 0 (a lease expires after `lease_ms`), and every write is
idempotent, so two processes mirroring the same table at once do no harm.
"""

from __future__ import annotations

import logging
import os
import re
import threading
import time
import uuid
import zlib
from dataclasses import dataclass

from sqlalchemy import func, or_, select, update

from store import schema as S
from store.commit_metadata import WRITE_ACTIONS, parse_commit, parse_rollback
from store.store import Store, now_ms
from store.timeline_service import ACTIONS, COMPLETED, COMPLETED_AS, INFLIGHT, REQUESTED, TimelineService

try:  # metrics are optional for the store
    from adapter import metrics as _metrics
except ImportError:  # pragma: no cover
    _metrics = None

log = logging.getLogger(__name__)

HOODIE = ".hoodie"
PROPERTIES = "hoodie.properties"
PARTITION_METAFILE = ".hoodie_partition_metadata"
# Folders HoodieTableMetaClient.initTable creates (the fixtures written by Hudi 0.14/0.15 have them).
LAYOUT_DIRS = (".aux", ".aux/.bootstrap", ".aux/.bootstrap/.partitions", ".aux/.bootstrap/.fileids",
               ".schema", ".temp", "archived")
# Object stores: a PUT is atomic and there is no rename; everything else gets temp file + rename.
OBJECT_STORES = {"s3", "s3a", "s3n", "gs", "gcs", "abfs", "abfss", "az", "adl", "oss", "cos", "cosn",
                 "obs", "r2", "memory", "http", "https"}
# Properties the mirror never copies: we maintain no metadata table, so readers must list storage.
DROPPED_PROPERTIES = {"hoodie.table.metadata.partitions", "hoodie.table.metadata.partitions.inflight",
                      "hoodie.table.checksum"}
DEFAULT_LEASE_MS = 60_000


def table_checksum(props: dict[str, str]) -> int:
    """HoodieTableConfig.generateChecksum: CRC32 of `<database>.<table>` (database "" when unset)."""
    return zlib.crc32(f"{props.get('hoodie.database.name', '')}.{props['hoodie.table.name']}".encode("utf-8"))


def _java_escape(s: str, key: bool) -> str:
    """java.util.Properties.saveConvert with escUnicode (what Properties.store(OutputStream) writes)."""
    out = []
    for i, ch in enumerate(s):
        o = ord(ch)
        if 61 < o < 127:
            out.append("\\\\" if ch == "\\" else ch)
        elif ch == " ":
            out.append("\\ " if i == 0 or key else " ")
        elif ch in "\t\n\r\f":
            out.append({"\t": "\\t", "\n": "\\n", "\r": "\\r", "\f": "\\f"}[ch])
        elif ch in "=:#!":
            out.append("\\" + ch)
        elif o < 0x20 or o > 0x7E:
            units = ch.encode("utf-16-be")
            out.extend(f"\\u{units[j] << 8 | units[j + 1]:04X}" for j in range(0, len(units), 2))
        else:
            out.append(ch)
    return "".join(out)


def java_properties(props: dict[str, str], comment: str) -> bytes:
    """Properties text Java's Properties.load(InputStream) reads back (ISO-8859-1, \\u escapes)."""
    lines = [f"#{comment}"] + [f"{_java_escape(k, True)}={_java_escape(v, False)}" for k, v in sorted(props.items())]
    return ("\n".join(lines) + "\n").encode("ascii")


def storage_properties(cfg) -> dict[str, str]:
    """hoodie.properties as the mirror writes it: the table's config and its checksum."""
    props = {k: v for k, v in cfg.hoodie_properties().items() if k not in DROPPED_PROPERTIES}
    if not props.get("hoodie.table.partition.fields"):  # Hudi writes none for non-partitioned tables
        props.pop("hoodie.table.partition.fields", None)
    props["hoodie.table.checksum"] = str(table_checksum(props))
    return props


def instant_file_name(ts: str, action: str, state: int) -> str | None:
    """Timeline layout 1 (table version 6) file name of an instant in a state; `action` is the action
    the instant was requested with (compaction, clustering, ...). None: Hudi writes no such file
    (a savepoint has no requested file)."""
    if state == COMPLETED:
        return f"{ts}.{COMPLETED_AS.get(action, action)}"
    if action == "clustering":  # 0.x: clustering shares the replace commit's file names
        action = "replacecommit"
    if action == "commit" and state == INFLIGHT:
        return f"{ts}.inflight"
    if action == "savepoint" and state == REQUESTED:
        return None
    return f"{ts}.{action}.{'requested' if state == REQUESTED else 'inflight'}"


_INSTANT_FILE = re.compile(r"^(\d{14,17})\.(.+)$")
_EXTENSIONS = {name.partition(".")[2] for a in ACTIONS for s in (REQUESTED, INFLIGHT, COMPLETED)
               if (name := instant_file_name("0" * 17, a, s))}


def parse_instant_file(name: str) -> str | None:
    """The instant time of a timeline file name, None for other files."""
    m = _INSTANT_FILE.match(name)
    return m.group(1) if m and m.group(2) in _EXTENSIONS else None


@dataclass
class _Inst:
    instant_id: int
    ts: str
    action: str  # as requested (compaction stays compaction)
    state: int

    def files(self) -> list[tuple[str, int, str]]:
        """(file name, state, action of its metadata row) in the order they are written."""
        out = []
        for st in (REQUESTED, INFLIGHT, COMPLETED):
            if st > self.state:
                break
            name = instant_file_name(self.ts, self.action, st)
            if name:
                out.append((name, st, COMPLETED_AS.get(self.action, self.action) if st == COMPLETED else self.action))
        return out


class _Storage:
    """One table's base path through fsspec."""

    def __init__(self, base_path: str):
        import fsspec

        self.fs, root = fsspec.core.url_to_fs(base_path)
        self.root = root.rstrip("/") or "/"
        protocols = self.fs.protocol if isinstance(self.fs.protocol, (tuple, list)) else (self.fs.protocol,)
        self.object_store = bool(set(protocols) & OBJECT_STORES)
        self.local = "file" in protocols or "local" in protocols

    def path(self, *parts: str) -> str:
        rel = "/".join(p.strip("/") for p in parts if p and p.strip("/"))
        return f"{self.root.rstrip('/')}/{rel}" if rel else self.root

    def listing(self, rel: str) -> dict[str, int | None]:
        """Name -> size (None for folders) of what is directly in a folder; {} when it is absent."""
        try:
            self.fs.invalidate_cache(self.path(rel))  # other processes write here too
        except Exception:  # noqa: BLE001 - a filesystem without a listing cache
            pass
        try:
            entries = self.fs.ls(self.path(rel), detail=True)
        except (FileNotFoundError, NotADirectoryError):
            return {}
        out = {}
        for e in entries:
            name = e["name"].rstrip("/").rsplit("/", 1)[-1]
            out[name] = None if e.get("type") == "directory" else int(e.get("size") or 0)
        return out

    def exists(self, rel: str) -> bool:
        return self.fs.exists(self.path(rel))

    def read(self, rel: str) -> bytes | None:
        try:
            return self.fs.cat_file(self.path(rel))
        except FileNotFoundError:
            return None

    def makedirs(self, rel: str) -> None:
        self.fs.makedirs(self.path(rel), exist_ok=True)

    def put(self, rel: str, data: bytes, tmp_name=None) -> None:
        """Write a file atomically: readers see the old content or the new, never a part."""
        target = self.path(rel)
        parent, _, name = target.rpartition("/")
        if self.object_store:
            self.fs.pipe_file(target, data)
            return
        if not self.fs.exists(parent):
            self.fs.makedirs(parent, exist_ok=True)
        # hidden and with an extension no reader takes for an instant or a data file
        tmp = f"{parent}/{tmp_name or f'.{name}.{uuid.uuid4().hex}.tmp'}"
        self.fs.pipe_file(tmp, data)
        try:
            if self.local:
                os.replace(tmp, target)
            else:
                self.fs.mv(tmp, target)
        except BaseException:
            try:
                self.fs.rm(tmp)
            except OSError:
                pass
            raise

    def delete(self, rel: str) -> None:
        try:
            self.fs.rm(self.path(rel))
        except FileNotFoundError:
            pass


class StorageMirror:
    def __init__(self, store: Store, timeline: TimelineService, clock_ms=now_ms, lease_ms: int = DEFAULT_LEASE_MS):
        self.store = store
        self.timeline = timeline
        self.clock_ms = clock_ms
        self.lease_ms = lease_ms
        self._props_written: dict[str, bytes] = {}  # base path -> hoodie.properties known on storage
        self._thread: threading.Thread | None = None
        self._stop = threading.Event()

    # --- API ----------------------------------------------------------------------------------

    def hook(self, db: str, tbl: str) -> None:
        """For `timeline.on_commit`: mirror right after a commit; failures wait for the background retry."""
        try:
            self.sync(db, tbl, force=False)
        except Exception as exc:  # noqa: BLE001 - never fails the commit
            log.warning("storage mirror of %s.%s failed (left for retry): %s", db, tbl, exc)

    def lag(self, db: str, tbl: str) -> int:
        """Versions of the table not yet on storage."""
        with self.store.read() as conn:
            ref = self.timeline.table_ref(conn, db, tbl)
            v = S.tbl_version
            return conn.execute(select(func.count()).select_from(v).where(
                v.c.tbl_id == ref.tbl_id, v.c.snapshot_status == 0)).scalar_one()

    def total_lag(self) -> int:
        with self.store.read() as conn:
            return conn.execute(select(func.count()).select_from(S.tbl_version).where(
                S.tbl_version.c.snapshot_status == 0)).scalar_one()

    def sync(self, db: str, tbl: str, force: bool = True) -> int:
        """Mirror every pending version of the table, in order; the number of versions mirrored.
        `force=False` skips a table another process (or thread) holds the lease on."""
        started = time.monotonic()
        total = 0
        try:
            for round_ in range(20):  # versions committed while we mirrored are taken too
                n = self._sync_round(db, tbl, force, first=round_ == 0)
                if n is None:
                    break
                total += n
                if n == 0:
                    break
        finally:
            self._observe(time.monotonic() - started)
        return total

    def sync_pending(self) -> int:
        """One pass over every Hudi table with pending versions (what the background thread runs)."""
        v = S.tbl_version
        with self.store.read() as conn:
            rows = conn.execute(select(S.db.c.name.label("db"), S.tbl.c.name.label("tbl")).select_from(
                v.join(S.tbl, S.tbl.c.tbl_id == v.c.tbl_id).join(S.db, S.db.c.db_id == S.tbl.c.db_id)
                 .join(S.hudi_table, S.hudi_table.c.tbl_id == v.c.tbl_id)
            ).where(v.c.snapshot_status == 0, S.hudi_table.c.table_version == 6).distinct()).all()
        total = 0
        for r in rows:
            if self._stop.is_set() and self._thread is not None and threading.current_thread() is self._thread:
                break
            try:
                total += self.sync(r.db, r.tbl, force=False)
            except Exception as exc:  # noqa: BLE001 - one table's storage must not stop the others
                log.warning("storage mirror of %s.%s failed (will retry): %s", r.db, r.tbl, exc)
        return total

    def start_background(self, interval_s: float = 5) -> None:
        if self._thread is not None and self._thread.is_alive():
            return
        self._stop.clear()

        def run():
            while not self._stop.is_set():
                try:
                    self.sync_pending()
                except Exception:  # noqa: BLE001 - e.g. the database is away for a moment
                    log.exception("storage mirror pass failed")
                self._stop.wait(interval_s)

        self._thread = threading.Thread(target=run, name="hudi-storage-mirror", daemon=True)
        self._thread.start()

    def stop(self, timeout: float = 30) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout)
            self._thread = None

    # --- one round ------------------------------------------------------------------------------

    def _observe(self, seconds: float) -> None:
        if _metrics is None:
            return
        try:
            if hasattr(_metrics, "observe"):
                _metrics.observe("hudi_snapshot_sync_seconds", seconds)
            if hasattr(_metrics, "set_gauge"):
                _metrics.set_gauge("hudi_storage_mirror_lag_versions", self.total_lag())
        except Exception:  # noqa: BLE001 - metrics never break the mirror
            log.debug("mirror metrics failed", exc_info=True)

    def _pending(self, conn, tbl_id: int) -> list[tuple[int, int]]:
        v = S.tbl_version
        return [(r.version, r.instant_id) for r in conn.execute(
            select(v.c.version, v.c.instant_id).where(v.c.tbl_id == tbl_id, v.c.snapshot_status == 0)
            .order_by(v.c.version))]

    def _claim(self, tbl_id: int, versions: list[int], force: bool) -> int | None:
        """Lease the pending versions (their update_time while still 0); None when another holds them."""
        token = self.clock_ms()
        v = S.tbl_version

        def tx(conn):
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

        return self.store.run_write(tx)

    def _release(self, tbl_id: int, token: int) -> None:
        v = S.tbl_version

        def tx(conn):
            conn.execute(update(v).where(v.c.tbl_id == tbl_id, v.c.snapshot_status == 0,
                                         v.c.update_time == token).values(update_time=None))

        try:
            self.store.run_write(tx)
        except Exception:  # noqa: BLE001 - the lease then just expires
            log.debug("could not release mirror lease", exc_info=True)

    def _mark(self, tbl_id: int, version: int) -> int:
        v = S.tbl_version

        def tx(conn):
            return conn.execute(update(v).where(
                v.c.tbl_id == tbl_id, v.c.version == version, v.c.snapshot_status == 0,
            ).values(snapshot_status=1, update_time=self.clock_ms())).rowcount

        return self.store.run_write(tx)

    def _sync_round(self, db: str, tbl: str, force: bool, first: bool = True) -> int | None:
        with self.store.read() as conn:
            ref = self.timeline.table_ref(conn, db, tbl)
            pending = self._pending(conn, ref.tbl_id)
        if ref.config.table_version != 6:
            if not pending or not force:
                return None  # not ours to mirror (yet); the CLI says so
            raise NotImplementedError(f"storage mirror writes table version 6 layout; "
                                      f"{ref.db_name}.{ref.name} is version {ref.config.table_version}")
        if not pending:
            # forced: the layout and the pending instants; else the layout of a table not seen yet
            if first and (force or ref.config.base_path not in self._props_written):
                self._mirror(ref, [], layout_only=not force)
            return 0
        token = self._claim(ref.tbl_id, [p[0] for p in pending], force)
        if token is None:
            return None
        try:
            return self._mirror(ref, pending)
        except BaseException:
            self._release(ref.tbl_id, token)
            raise

    def _mirror(self, ref, pending: list[tuple[int, int]], layout_only: bool = False) -> int:
        cfg = ref.config
        st = _Storage(cfg.base_path)
        # Storage is listed before the database is read: a file this listing misses was written
        # by someone who read a newer database state, so it is never taken for a stale one.
        listing = st.listing(HOODIE)
        self._write_layout(st, cfg, listing)
        if layout_only:
            return 0

        with self.store.read() as conn:
            instants = self._instants(conn, ref.tbl_id)
            meta = self._meta_loader(ref.tbl_id)
        by_id = {i.instant_id: i for i in instants.values()}
        known_partitions: set[str] = set()
        mirrored = 0
        for version, instant_id in pending:
            inst = by_id.get(instant_id)
            if inst is not None:
                self._write_instant(st, inst, meta, listing, known_partitions)
                if inst.state == COMPLETED and inst.action == "rollback":
                    rolled, _, _ = parse_rollback(meta(inst.ts, "rollback", COMPLETED))
                    self._delete_instants(st, [t for t in rolled if t not in instants], listing)
            mirrored += self._mark(ref.tbl_id, version)

        # instants still pending on the server: their requested / inflight files
        written = []
        for inst in sorted(instants.values(), key=lambda i: i.ts):
            if inst.state != COMPLETED:
                if self._write_instant(st, inst, meta, listing, known_partitions):
                    written.append(inst.ts)
        if written:  # one of them rolled back meanwhile (its rollback's sync may have run already)
            with self.store.read() as conn:
                still = set(self._instants(conn, ref.tbl_id))
            self._delete_instants(st, [t for t in written if t not in still], listing)
        return mirrored

    # --- pieces ---------------------------------------------------------------------------------

    def _write_layout(self, st: _Storage, cfg, listing: dict[str, int | None]) -> None:
        """hoodie.properties (when missing or different) and Hudi's folders (when missing)."""
        text = java_properties(storage_properties(cfg), "Properties saved by hudi-metastore")
        if listing.get(PROPERTIES) != len(text) or self._props_written.get(cfg.base_path) != text:
            if st.read(f"{HOODIE}/{PROPERTIES}") != text:
                st.put(f"{HOODIE}/{PROPERTIES}", text)
            listing[PROPERTIES] = len(text)
            self._props_written[cfg.base_path] = text
        if st.object_store:  # object stores have no folders
            return
        for d in LAYOUT_DIRS:  # sub-folders of .aux only when .aux itself was missing
            if d.split("/")[0] not in listing:
                st.makedirs(f"{HOODIE}/{d}")
        for d in LAYOUT_DIRS:
            listing.setdefault(d.split("/")[0], None)

    def _instants(self, conn, tbl_id: int) -> dict[str, _Inst]:
        """ts -> instant; the action is the one the instant was requested with (from its metadata rows)."""
        i, m = S.instant, S.instant_meta
        requested_as = {}
        for r in conn.execute(select(m.c.ts, m.c.action).where(
                m.c.tbl_id == tbl_id, m.c.state.in_([REQUESTED, INFLIGHT]))):
            requested_as[r.ts] = r.action
        out = {}
        for r in conn.execute(select(i.c.instant_id, i.c.ts, i.c.action, i.c.state).where(
                i.c.tbl_id == tbl_id).order_by(i.c.ts)):
            action = requested_as.get(r.ts, r.action)
            if r.state == COMPLETED and COMPLETED_AS.get(action, action) != r.action:
                action = r.action
            out[r.ts] = _Inst(r.instant_id, r.ts, action, r.state)
        return out

    def _meta_loader(self, tbl_id: int):
        cache: dict[tuple[str, str, int], bytes] = {}

        def load(ts: str, action: str, state: int) -> bytes:
            key = (ts, action, state)
            if key not in cache:
                m = S.instant_meta
                with self.store.read() as conn:
                    data = conn.execute(select(m.c.data).where(
                        m.c.tbl_id == tbl_id, m.c.ts == ts, m.c.action == action, m.c.state == state)).scalar()
                cache[key] = bytes(data) if data is not None else b""
            return cache[key]

        return load

    def _write_instant(self, st: _Storage, inst: _Inst, meta, listing, known_partitions: set[str]) -> bool:
        """Write the instant's missing files in state order; True when something was written."""
        wrote = False
        for name, state, meta_action in inst.files():
            data = meta(inst.ts, meta_action, state)
            if state == COMPLETED and meta_action in WRITE_ACTIONS:
                self._partition_metadata(st, inst.ts, data, known_partitions)
            if listing.get(name) == len(data):
                continue  # instant files are immutable: the same name and size is the same file
            st.put(f"{HOODIE}/{name}", data)
            listing[name] = len(data)
            wrote = True
        return wrote

    def _partition_metadata(self, st: _Storage, ts: str, commit: bytes, known: set[str]) -> None:
        for partition in sorted(parse_commit(commit).partitions):
            partition = (partition or "").strip("/")
            if partition in known:
                continue
            rel = f"{partition}/{PARTITION_METAFILE}" if partition else PARTITION_METAFILE
            if not st.exists(rel):
                depth = len(partition.split("/")) if partition else 0
                stamp = time.strftime("%a %b %d %H:%M:%S UTC %Y", time.gmtime(self.clock_ms() / 1000))
                text = f"#partition metadata\n#{stamp}\ncommitTime={ts}\npartitionDepth={depth}\n".encode()
                # Hudi's own temp name (HoodiePartitionMetadata.trySave), unique per writer
                st.put(rel, text, tmp_name=f"{PARTITION_METAFILE}_{uuid.uuid4().hex}")
            known.add(partition)

    def _delete_instants(self, st: _Storage, instants: list[str], listing) -> None:
        """Remove the timeline files of instants the server no longer has: completed first, so a
        reader never sees a completed instant without its requested and inflight files."""
        if not instants:
            return
        gone = set(instants)
        names = [n for n in list(listing) if parse_instant_file(n) in gone]
        order = {REQUESTED: 2, INFLIGHT: 1, COMPLETED: 0}

        def rank(n: str) -> int:
            rest = n.partition(".")[2]
            return order[REQUESTED] if rest.endswith(".requested") else \
                order[INFLIGHT] if rest == "inflight" or rest.endswith(".inflight") else order[COMPLETED]

        for n in sorted(names, key=rank):
            st.delete(f"{HOODIE}/{n}")
            listing.pop(n, None)


def attach(timeline: TimelineService, store: Store | None = None, background_interval_s: float | None = None) -> StorageMirror:
    """A mirror hooked to the timeline's commits (and, with an interval, retrying in the background)."""
    mirror = StorageMirror(store or timeline.store, timeline)
    timeline.on_commit.append(mirror.hook)
    if background_interval_s:
        mirror.start_background(background_interval_s)
    return mirror


def mirror_factory(background_interval_s: float | None = 5):
    """For `adapter.app.build_router(mirror_factory=...)`: a mirror per router, retrying in the background."""
    def make(store: Store, timeline: TimelineService) -> StorageMirror:
        mirror = StorageMirror(store, timeline)
        if background_interval_s:
            mirror.start_background(background_interval_s)
        return mirror

    return make


__all__ = ["StorageMirror", "attach", "mirror_factory", "instant_file_name", "java_properties", "parse_instant_file",
           "storage_properties", "table_checksum"]
