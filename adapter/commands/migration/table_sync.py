"""A table's column statistics and partitions (with their statistics), copied to the target or only
compared: partitions go in batches (``get_partitions_by_names``), in parallel on a thread pool."""

from __future__ import annotations

import threading
from concurrent.futures import Executor
from typing import TextIO

from thrift_idl.hive_metastore.ttypes import (
    ColumnStatistics,
    ColumnStatisticsDesc,
    EnvironmentContext,
    NoSuchObjectException,
    PartitionsStatsRequest,
    SetPartitionsStatsRequest,
    TableStatsRequest,
)

from .compare import chunks, column_names, differing_fields, for_write, partition_view, stats_view, values_of_name
from .progress import Progress
from .report import MigrationReport
from .source import Connections

# Writes carry the source's statistics parameters as they are: the target must not compute its own.
KEEP_STATS = {"DO_NOT_UPDATE_STATS": "true"}


def keep_stats() -> EnvironmentContext:
    return EnvironmentContext(properties=dict(KEEP_STATS))


class TableSync:
    """Copies (apply) or compares one table's statistics and partitions; counts what it writes in
    the report (shared with the pool's threads, hence the lock)."""

    def __init__(self, conns: Connections, report: MigrationReport, pool: Executor, batch_size: int,
                 progress: bool, log: TextIO):
        self.conns, self.report, self.pool = conns, report, pool
        self.batch_size, self.progress, self.log = batch_size, progress, log
        self._lock = threading.Lock()

    # ------------------------------------------------------------------ table statistics
    def table_stats(self, t, apply: bool, count: bool = False, hudi: bool = False) -> list[str]:
        """Copy (apply) or compare the table-level column statistics; the difference found, if any.
        A Hudi table's columns the source has none for may have statistics our server derives."""
        cols = column_names(t)
        if not cols:
            return []
        db, name = t.dbName.lower(), t.tableName.lower()
        req = TableStatsRequest(dbName=db, tblName=name, colNames=cols)
        s = self.conns.source().get_table_statistics_req(req)
        try:
            cur = self.conns.target().get_table_statistics_req(req).tableStats
        except NoSuchObjectException:
            cur = []
        want = stats_view(s.tableStats)
        if hudi:
            named = {o.colName.lower() for o in s.tableStats or []}
            cur = [o for o in cur or [] if o.colName.lower() in named]
        if want == stats_view(cur) or not want:
            return []
        if count:
            with self._lock:
                self.report.table_stats_written += 1
        if apply:
            self.conns.target().update_table_column_statistics(ColumnStatistics(
                statsDesc=ColumnStatisticsDesc(isTblLevel=True, dbName=db, tableName=name),
                statsObj=list(s.tableStats)))
        return [f"table column statistics differ (columns {', '.join(o.get('colName', '') for o in want)})"]

    # ------------------------------------------------------------------ partitions
    def partitions(self, t, hudi: bool, apply: bool, verify: bool = False) -> list[str]:
        """Copy (apply) or compare the table's partitions and their statistics in parallel batches;
        returns the differences found before writing."""
        db, name = t.dbName.lower(), t.tableName.lower()
        names = list(self.conns.source().get_partition_names(db, name, -1))
        bar = None
        if len(names) > self.batch_size and not verify:
            bar = Progress(f"  {db}.{name}: partitions", len(names), self.log, self.progress)
        cols = column_names(t)
        futures = [self.pool.submit(self._batch, db, name, batch, cols, hudi, apply, bar)
                   for batch in chunks(names, self.batch_size)]
        diffs: list[str] = []
        for f in futures:
            diffs += f.result()
        if bar:
            bar.close()
        return diffs

    def _batch(self, db: str, name: str, names: list[str], cols: list[str], hudi: bool, apply: bool,
               bar: Progress | None) -> list[str]:
        want = {tuple(p.values): p for p in self.conns.source().get_partitions_by_names(db, name, names)}
        try:
            have = {tuple(p.values): p for p in self.conns.target().get_partitions_by_names(db, name, names)}
        except NoSuchObjectException:
            have = {}
        diffs, missing, changed = _compare_partitions(names, want, have, hudi)
        if hudi:  # a Hudi table's partitions come from its commits; report, never write
            missing, changed = [], []
        stats_diff, stats_writes = self._partition_stats(db, name, names, cols,
                                                         set(have) | {tuple(p.values) for p in missing})
        diffs += stats_diff
        with self._lock:
            self.report.partitions_added += len(missing)
            self.report.partitions_updated += len(changed)
            self.report.partition_stats_written += len(stats_writes)
        if apply:
            tgt = self.conns.target()
            if missing:
                tgt.add_partitions([for_write(p) for p in missing])
            if changed:
                tgt.alter_partitions_with_environment_context(db, name, [for_write(p) for p in changed], keep_stats())
            if stats_writes:
                tgt.set_aggr_stats_for(SetPartitionsStatsRequest(colStats=stats_writes))
        if bar:
            bar.update(len(names))
        return diffs

    def _partition_stats(self, db, name, names, cols, target_values) -> tuple[list[str], list[ColumnStatistics]]:
        """Partition column statistics differing between source and target: (differences, writes)."""
        if not cols:
            return [], []
        req = PartitionsStatsRequest(dbName=db, tblName=name, colNames=cols, partNames=names)
        s = self.conns.source().get_partitions_statistics_req(req).partStats or {}
        if not s:
            return [], []
        try:
            cur = self.conns.target().get_partitions_statistics_req(req).partStats or {}
        except NoSuchObjectException:
            cur = {}
        diffs, writes = [], []
        for part_name, objs in sorted(s.items()):
            if stats_view(objs) == stats_view(cur.get(part_name)):
                continue
            diffs.append(f"partition {part_name} column statistics differ")
            if values_of_name(part_name) in target_values:  # else the partition itself is reported
                writes.append(ColumnStatistics(
                    statsDesc=ColumnStatisticsDesc(isTblLevel=False, dbName=db, tableName=name, partName=part_name),
                    statsObj=list(objs)))
        return diffs, writes


def _compare_partitions(names: list[str], want: dict, have: dict, hudi: bool) -> tuple[list[str], list, list]:
    """(differences, partitions missing in the target, partitions differing there); a Hudi table's
    partitions are only compared by name."""
    name_of = {values_of_name(n): n for n in names}
    diffs, missing, changed = [], [], []
    for values, p in want.items():
        pname = name_of.get(values, "/".join(values))
        cur = have.get(values)
        if cur is None:
            missing.append(p)
            diffs.append(f"partition {pname} missing in target")
        elif not hudi and partition_view(cur) != partition_view(p):
            changed.append(p)
            fields = differing_fields(partition_view(cur), partition_view(p))
            diffs.append(f"partition {pname} differs ({', '.join(fields)})")
    return diffs, missing, changed
