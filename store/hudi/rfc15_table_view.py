"""RFC-15's "stats" view of a Hudi table, counted in the database (never by loading files)."""

from __future__ import annotations

from dataclasses import dataclass

from sqlalchemy import func, select

from hudi_format.instant import COMPLETED, Instant
from store.db import schema as S
from store.hudi.record_index import count_keys, has_record_index
from store.hudi.timeline import TimelineService, instant_from_row


@dataclass
class TableStats:
    partition_count: int
    file_count: int
    total_size: int
    last_instant: Instant | None
    mirrored: bool
    mirror_lag: int
    version: int
    index_keys: int | None = None  # keys in the record index, if the table keeps one


def table_stats(timeline: TimelineService, db: str, tbl: str) -> TableStats:
    with timeline.store.read() as conn:
        ref = timeline.table_ref(conn, db, tbl)
        f, v, i = S.files, S.tbl_version, S.instant
        n, size = conn.execute(select(func.count(), func.coalesce(func.sum(f.c.size), 0)).where(
            f.c.tbl_id == ref.tbl_id, f.c.is_deleted.is_(False))).one()
        if ref.config.partition_fields:
            parts = conn.execute(select(func.count()).select_from(S.partitions).where(
                S.partitions.c.tbl_id == ref.tbl_id)).scalar_one()
        else:
            parts = 1
        last = conn.execute(select(i).where(i.c.tbl_id == ref.tbl_id, i.c.state == COMPLETED)
                            .order_by(i.c.ts.desc()).limit(1)).first()
        lag = conn.execute(select(func.count()).select_from(v).where(
            v.c.tbl_id == ref.tbl_id, v.c.snapshot_status == 0)).scalar_one()
        version = conn.execute(select(func.max(v.c.version)).where(v.c.tbl_id == ref.tbl_id)).scalar() or 0
        keys = count_keys(conn, ref.tbl_id) if has_record_index(ref.config.properties) else None
    return TableStats(int(parts), int(n), int(size), instant_from_row(last) if last is not None else None,
                      ref.config.table_version in (6, 8, 9), int(lag), int(version), keys)
