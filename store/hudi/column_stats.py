"""Column statistics of base files (RFC-27 column stats index) as commits change them: stored in the
transaction that completes the instant, removed when clean, rollback or replace remove their files,
and summed per partition (RFC-27 partition entries) for the partitions a change touches.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

from sqlalchemy import Connection, Row, delete, func, select

from store.db import schema as S
from store.errors import InvalidObject
from store.hudi.column_stats_codec import lower_bound, upper_bound
from store.hudi.tables import HudiTableRef

_CHUNK = 500


@dataclass(frozen=True)
class ColumnBounds:
    column: str
    min_key: bytes | None  # order-preserving keys (column_stats_codec)
    max_key: bytes | None
    null_count: int | None
    value_count: int | None


@dataclass(frozen=True)
class FileColumnStats:
    partition_path: str
    file_name: str
    total_size: int
    uncompressed_size: int
    columns: list[ColumnBounds] = field(default_factory=list)


class ColumnStats:
    def record(self, conn: Connection, ref: HudiTableRef, ts: str, stats: list[FileColumnStats]) -> None:
        """Statistics of the base files instant `ts` wrote (inside its completing transaction)."""
        if not stats:
            return
        ids = self._written_ids(conn, ref, ts, stats)
        file_rows: list[dict] = []
        col_rows: list[dict] = []
        for st in stats:
            row_id = ids.get((st.partition_path, st.file_name))
            if row_id is None:
                raise InvalidObject(f"Column statistics for {st.partition_path}/{st.file_name}, "
                                    f"a file the commit {ts} does not write")
            num_rows = max((c.value_count for c in st.columns if c.value_count is not None), default=None)
            file_rows.append({"file_row_id": row_id, "tbl_id": ref.tbl_id, "total_size": st.total_size,
                              "uncompressed_size": st.uncompressed_size, "num_rows": num_rows})
            col_rows.extend({"file_row_id": row_id, "column_name": c.column.lower(),
                             "min_key": lower_bound(c.min_key), "max_key": upper_bound(c.max_key),
                             "null_count": c.null_count, "value_count": c.value_count}
                            for c in st.columns)
        for i in range(0, len(file_rows), 1000):
            conn.execute(S.file_stats.insert(), file_rows[i:i + 1000])
        for i in range(0, len(col_rows), 1000):
            conn.execute(S.column_stats.insert(), col_rows[i:i + 1000])

    @staticmethod
    def _written_ids(conn: Connection, ref: HudiTableRef, ts: str,
                     stats: list[FileColumnStats]) -> dict[tuple[str, str], int]:
        f = S.files
        by_partition: dict[str, list[str]] = {}
        for st in stats:
            by_partition.setdefault(st.partition_path, []).append(st.file_name)
        out = {}
        for partition, names in by_partition.items():
            for i in range(0, len(names), _CHUNK):
                for r in conn.execute(select(f.c.id, f.c.name).where(
                        f.c.tbl_id == ref.tbl_id, f.c.partition_path == partition, f.c.created_ts == ts,
                        f.c.is_log.is_(False), f.c.name.in_(names[i:i + _CHUNK]))):
                    out[(partition, r.name)] = r.id
        return out

    def forget_removed(self, conn: Connection, ref: HudiTableRef, partitions: Iterable[str]) -> None:
        """Drop the statistics of the deleted files of these partitions (a clean or rollback removed
        them), then recompute the partitions' aggregates. Replaced file groups keep theirs until
        cleaned: the latest view skips them, and the aggregates only widen."""
        f = S.files
        parts = sorted(set(partitions))
        for i in range(0, len(parts), _CHUNK):
            gone = select(f.c.id).join(S.file_stats, S.file_stats.c.file_row_id == f.c.id).where(
                f.c.tbl_id == ref.tbl_id, f.c.partition_path.in_(parts[i:i + _CHUNK]), f.c.is_deleted.is_(True))
            ids = [r.id for r in conn.execute(gone)]
            for j in range(0, len(ids), _CHUNK):
                conn.execute(delete(S.column_stats).where(S.column_stats.c.file_row_id.in_(ids[j:j + _CHUNK])))
                conn.execute(delete(S.file_stats).where(S.file_stats.c.file_row_id.in_(ids[j:j + _CHUNK])))
        self.refresh_partitions(conn, ref, parts)

    @staticmethod
    def partitions_of_instants(conn: Connection, ref: HudiTableRef, instants: list[str]) -> list[str]:
        """Partitions holding files written by these instants (before a rollback forgets them)."""
        if not instants:
            return []
        f = S.files
        return [r[0] for r in conn.execute(select(f.c.partition_path).distinct().where(
            f.c.tbl_id == ref.tbl_id, f.c.created_ts.in_(instants)))]

    def refresh_partitions(self, conn: Connection, ref: HudiTableRef, partitions: list[str]) -> None:
        """Per partition and column: bounds over the live files' statistics, and how many live
        files (log files included) give no usable bounds for it (the partition is then never skipped
        by that column)."""
        f, cs, pcs = S.files, S.column_stats, S.partition_column_stats
        for i in range(0, len(partitions), _CHUNK):
            chunk = partitions[i:i + _CHUNK]
            conn.execute(delete(pcs).where(pcs.c.tbl_id == ref.tbl_id, pcs.c.partition_path.in_(chunk)))
            live: dict[str, int] = dict(conn.execute(select(f.c.partition_path, func.count()).where(
                f.c.tbl_id == ref.tbl_id, f.c.partition_path.in_(chunk), f.c.is_deleted.is_(False)
            ).group_by(f.c.partition_path)).tuples().all())
            q = select(f.c.partition_path, cs.c.column_name, cs.c.min_key, cs.c.max_key, cs.c.null_count,
                       cs.c.value_count).select_from(cs.join(f, f.c.id == cs.c.file_row_id)).where(
                f.c.tbl_id == ref.tbl_id, f.c.partition_path.in_(chunk), f.c.is_deleted.is_(False))
            sums: dict[tuple[str, str], _Sum] = {}
            for r in conn.execute(q):  # in Python: PostgreSQL has no min/max over bytea
                sums.setdefault((r.partition_path, r.column_name), _Sum()).add(r)
            rows = [{"tbl_id": ref.tbl_id, "partition_path": p, "column_name": c, **s.row(live.get(p, 0))}
                    for (p, c), s in sums.items()]
            for j in range(0, len(rows), 1000):
                conn.execute(pcs.insert(), rows[j:j + 1000])


class _Sum:
    """One partition's column: bounds over its files, counts, and files with usable statistics."""

    def __init__(self) -> None:
        self.lo: bytes | None = None
        self.hi: bytes | None = None
        self.nulls: int | None = 0
        self.values: int | None = 0
        self.good = 0

    def add(self, r: Row) -> None:
        nulls, values = r.null_count, r.value_count
        counted = nulls is not None and values is not None
        self.nulls = self.nulls + nulls if counted and self.nulls is not None else None
        self.values = self.values + values if counted and self.values is not None else None
        if r.min_key is not None and r.max_key is not None:
            lo, hi = bytes(r.min_key), bytes(r.max_key)
            self.lo = lo if self.lo is None else min(self.lo, lo)
            self.hi = hi if self.hi is None else max(self.hi, hi)
            self.good += counted
        elif counted and nulls == values:  # every value null: no bounds needed
            self.good += 1

    def row(self, live_files: int) -> dict:
        return {"min_key": self.lo, "max_key": self.hi, "null_count": self.nulls, "value_count": self.values,
                "files_without_stats": live_files - self.good}
