"""RFC-36 snapshot service: the file system view of a Hudi table, served from the `files` table.

Latest file slices, time travel (as of a completed instant), incremental changes and all files of
a partition. Every query is bounded by the partitions (or instants) asked for, through the
(tbl_id, partition_path) and (tbl_id, created_ts) indexes, never by the size of the table.
"""

from __future__ import annotations

from collections.abc import Sequence

from sqlalchemy import ColumnElement, Connection, Row, Table, and_, or_, select

from hudi_format.file_slice import FileInfo, FileSlice, build_slices
from hudi_format.instant import COMPLETED
from store import metrics
from store.db import schema as S
from store.db.database import Store
from store.db.dialect import BATCH
from store.errors import NoSuchObject
from store.hms.partitions import PartitionService
from store.hudi.file_locations import locate_files, locate_slices
from store.hudi.timeline import TimelineService

# columns of `files` that make a FileInfo, in the order `file_info_of` takes them
FILE_COLUMNS = (S.files.c.partition_path, S.files.c.file_id, S.files.c.name, S.files.c.size,
                S.files.c.base_instant, S.files.c.is_log, S.files.c.log_version, S.files.c.created_ts)


def file_info_of(t: Sequence) -> FileInfo:
    """FileInfo of a row of FILE_COLUMNS, by position (cheaper than by name for large answers)."""
    return FileInfo(t[0], t[1], t[2], t[3], t[4], bool(t[5]), t[6], t[7])


def file_info(r: Row) -> FileInfo:
    """A `files` row as the snapshot answers it."""
    return FileInfo(partition_path=r.partition_path, file_id=r.file_id, name=r.name, size=r.size,
                    base_instant=r.base_instant, is_log=bool(r.is_log), log_version=r.log_version,
                    commit_ts=r.created_ts)


class SnapshotService:
    def __init__(self, store: Store, timeline: TimelineService, partitions: PartitionService):
        self.store = store
        self.timeline = timeline
        self.partition_service = partitions

    def partitions(self, db: str, tbl: str, filter_text: str | None = None) -> list[str]:
        """Partition paths of a Hudi table, pruned with the Hive filter grammar."""
        metrics.incr("hudi_partition_lookups")
        with self.store.read() as conn:
            ref = self.timeline.table_ref(conn, db, tbl)
        cfg = ref.config
        if not cfg.partition_fields:
            return [""]
        base = ref.base_path.rstrip("/") + "/"
        out = []
        for p in self.partition_service.get_partitions(db, tbl, -1, filter_text=filter_text or None):
            loc = p.sd.location or ""
            out.append(loc[len(base):] if loc.startswith(base) else cfg.path_of(p.values))
        return sorted(out)

    @staticmethod
    def _live(f: Table, as_of: str | None) -> ColumnElement[bool]:
        if as_of is None:
            return f.c.is_deleted.is_(False)
        # As Hudi's file-system view: a file belongs to the view as of T when its slice began by T;
        # log blocks written after T are skipped by readers, not by the listing.
        return and_(f.c.base_instant <= as_of, or_(f.c.deleted_ts.is_(None), f.c.deleted_ts > as_of))

    def latest_file_slices(self, db: str, tbl: str, partitions: list[str] | None = None,
                           as_of: str | None = None) -> list[FileSlice]:
        metrics.incr("hudi_file_lookups")
        with self.store.read() as conn:
            ref = self.timeline.table_ref(conn, db, tbl)
            if as_of:
                done = conn.execute(select(S.instant.c.ts).where(
                    S.instant.c.tbl_id == ref.tbl_id, S.instant.c.ts == as_of,
                    S.instant.c.state == COMPLETED)).first()
                if done is None:
                    raise NoSuchObject(f"No completed instant {as_of} on {ref.db_name}.{ref.name}")
            slices = self.latest_in(conn, ref.tbl_id, partitions, as_of)
        locate_slices(ref, slices)
        return slices

    def latest_in(self, conn: Connection, tbl_id: int, partitions: list[str] | None = None,
                  as_of: str | None = None) -> list[FileSlice]:
        """latest_file_slices on an open connection, for table `tbl_id`."""
        f, rg = S.files, S.replaced_file_groups
        chunks = [None] if not partitions else [partitions[i:i + BATCH] for i in range(0, len(partitions), BATCH)]
        rows: list[Row] = []
        replaced: set[tuple[str, str]] = set()
        for chunk in chunks:
            q = select(*FILE_COLUMNS).where(f.c.tbl_id == tbl_id, self._live(f, as_of))
            rq = select(rg.c.partition_path, rg.c.file_id).where(rg.c.tbl_id == tbl_id)
            if chunk is not None:
                q = q.where(f.c.partition_path.in_(chunk))
                rq = rq.where(rg.c.partition_path.in_(chunk))
            if as_of:
                rq = rq.where(rg.c.replace_ts <= as_of)
            rows.extend(conn.execute(q))
            replaced.update((r.partition_path, r.file_id) for r in conn.execute(rq))
        files = [file_info_of(r) for r in rows if not replaced or (r[0], r[1]) not in replaced]
        return build_slices(files)

    def files_changed(self, db: str, tbl: str, since: str | None, until: str | None) -> list[FileInfo]:
        """Files written by instants in (since, until] that are still on storage (incremental reads)."""
        metrics.incr("hudi_file_lookups")
        with self.store.read() as conn:
            ref = self.timeline.table_ref(conn, db, tbl)
            f = S.files
            q = select(f).where(f.c.tbl_id == ref.tbl_id, f.c.is_deleted.is_(False))
            if since:
                q = q.where(f.c.created_ts > since)
            if until:
                q = q.where(f.c.created_ts <= until)
            files = [file_info(r) for r in conn.execute(q.order_by(f.c.created_ts, f.c.partition_path, f.c.name))]
        locate_files(ref, files)
        return files

    def all_files(self, db: str, tbl: str, partition: str) -> list[FileInfo]:
        """Every file of a partition still on storage, old versions and replaced groups included."""
        metrics.incr("hudi_file_lookups")
        with self.store.read() as conn:
            ref = self.timeline.table_ref(conn, db, tbl)
            f = S.files
            q = select(f).where(f.c.tbl_id == ref.tbl_id, f.c.partition_path == (partition or ""),
                                f.c.is_deleted.is_(False))
            files = [file_info(r) for r in conn.execute(q.order_by(f.c.file_id, f.c.base_instant, f.c.name))]
        locate_files(ref, files)
        return files
