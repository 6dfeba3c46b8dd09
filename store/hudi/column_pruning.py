"""Data skipping (RFC-27): the latest file slices of a Hudi table that may hold rows matching a
predicate. The partition filter (the predicate's partition-key leaves) picks partitions through the
HMS partition index; partition statistics skip whole partitions; file statistics skip base files;
all three in SQL, bounded by the partitions touched. Slices with log files are never skipped (log
files carry no statistics here), nor files without statistics for a column.
"""

from __future__ import annotations

from dataclasses import dataclass

from sqlalchemy import Connection, select

from hudi_format.file_slice import FileSlice
from store import metrics
from store.db import schema as S
from store.db.database import Store
from store.errors import MetaError
from store.hms.partition_filter.errors import FilterError
from store.hms.partition_filter.nodes import And, Leaf, Node, Or
from store.hms.table_service import TableService
from store.hudi.column_predicate import keep_condition, parse_predicate, without_columns
from store.hudi.snapshot_service import SnapshotService
from store.hudi.timeline_service import TimelineService

_CHUNK = 500


@dataclass(frozen=True)
class PrunedSlices:
    slices: list[FileSlice]
    files_skipped: int
    partitions_skipped: int
    files_considered: int


class ColumnPruning:
    def __init__(self, store: Store, timeline: TimelineService, tables: TableService, snapshot: SnapshotService):
        self.store = store
        self.timeline = timeline
        self.tables = tables
        self.snapshot = snapshot

    def prune(self, db: str, tbl: str, predicate: str) -> PrunedSlices:
        """Latest slices that may hold rows matching `predicate` (MetaError for a bad predicate)."""
        try:
            return self._prune(db, tbl, predicate)
        except FilterError as exc:
            raise MetaError(str(exc).replace("partition filter", "predicate", 1)) from exc

    def _prune(self, db: str, tbl: str, predicate: str) -> PrunedSlices:
        metrics.incr("hudi_file_lookups")
        table = self.tables.get_table(db, tbl)
        part_keys = {k.name.lower() for k in table.partitionKeys or []}
        types = {c.name.lower(): c.type for c in list(table.sd.cols or []) + list(table.partitionKeys or [])}
        tree = parse_predicate(predicate) if predicate.strip() else None
        if tree is not None:
            _check_columns(tree, predicate, types)
        part_tree = without_columns(tree, set(types) - part_keys) if tree is not None else None
        data_tree = without_columns(tree, part_keys) if tree is not None else None
        all_parts = self.snapshot.partitions(db, tbl, None)
        parts = all_parts if part_tree is None else self.snapshot.partitions(db, tbl, _filter_text(part_tree))
        if data_tree is None:
            slices = self.snapshot.latest_file_slices(db, tbl, parts) if parts else []
            return PrunedSlices(slices, 0, len(all_parts) - len(parts), sum(s.base_file is not None for s in slices))
        with self.store.read() as conn:
            ref = self.timeline.table_ref(conn, db, tbl)
            skipped_parts = _skipped_partitions(conn, ref.tbl_id, parts, data_tree, predicate, types)
            parts = [p for p in parts if p not in skipped_parts]
            skipped_files = _skipped_files(conn, ref.tbl_id, parts, data_tree, predicate, types)
        slices = self.snapshot.latest_file_slices(db, tbl, parts) if parts else []
        kept = [s for s in slices if s.log_files or s.base_file is None
                or (s.partition_path, s.base_file.name) not in skipped_files]
        considered = sum(s.base_file is not None for s in slices)
        return PrunedSlices(kept, len(slices) - len(kept), len(all_parts) - len(parts), considered)


def _skipped_partitions(conn: Connection, tbl_id: int, parts: list[str], tree: Node, text: str,
                        types: dict[str, str]) -> set[str]:
    outer, inner = S.partition_column_stats.alias("o"), S.partition_column_stats.alias("s")

    def rows(column: str):
        return select(inner.c.column_name).where(
            inner.c.tbl_id == tbl_id, inner.c.partition_path == outer.c.partition_path,
            inner.c.column_name == column, inner.c.files_without_stats == 0)

    keep = keep_condition(tree, text, types, inner, rows)
    out: set[str] = set()
    for i in range(0, len(parts), _CHUNK):
        q = select(outer.c.partition_path).distinct().where(
            outer.c.tbl_id == tbl_id, outer.c.partition_path.in_(parts[i:i + _CHUNK]), ~keep)
        out.update(r[0] for r in conn.execute(q))
    return out


def _skipped_files(conn: Connection, tbl_id: int, parts: list[str], tree: Node, text: str,
                   types: dict[str, str]) -> set[tuple[str, str]]:
    f, cs = S.files, S.column_stats

    def rows(column: str):
        return select(cs.c.column_name).where(cs.c.file_row_id == f.c.id, cs.c.column_name == column)

    keep = keep_condition(tree, text, types, cs, rows)
    out: set[tuple[str, str]] = set()
    for i in range(0, len(parts), _CHUNK):
        q = select(f.c.partition_path, f.c.name).where(
            f.c.tbl_id == tbl_id, f.c.partition_path.in_(parts[i:i + _CHUNK]), f.c.is_deleted.is_(False),
            f.c.is_log.is_(False), ~keep)
        out.update((r.partition_path, r.name) for r in conn.execute(q))
    return out


def _check_columns(node: Node, text: str, types: dict[str, str]) -> None:
    if isinstance(node, (And, Or)):
        for i in node.items:
            _check_columns(i, text, types)
    elif isinstance(node, Leaf) and node.key not in types:
        raise FilterError(f"{node.key} is not a column of the table (columns: {', '.join(types)})", text, node.pos)


def _filter_text(node: Node) -> str:
    """A tree of partition-key leaves back as Hive filter text (for the partition index)."""
    if isinstance(node, (And, Or)):
        sep = " AND " if isinstance(node, And) else " OR "
        return "(" + sep.join(_filter_text(i) for i in node.items) + ")"
    assert isinstance(node, Leaf)
    lits = [_literal(v.kind, v.text) for v in node.values]
    key = f"`{node.key}`"
    if node.op in ("IN", "NOT IN"):
        return f"{key} {node.op} ({', '.join(lits)})"
    if node.op in ("BETWEEN", "NOT BETWEEN"):
        return f"{key} {node.op} {lits[0]} AND {lits[1]}"
    return f"{key} {node.op} {lits[0]}"


def _literal(kind: str, text: str) -> str:
    if kind == "int":
        return text
    prefix = {"date": "DATE ", "timestamp": "TIMESTAMP "}.get(kind, "")
    quote = "'" if "'" not in text else '"'
    return f"{prefix}{quote}{text}{quote}"
