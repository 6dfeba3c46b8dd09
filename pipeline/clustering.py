"""Clusterings the server scheduled (store/hudi/timeline/clustering_schedule.py: a requested
`clustering` instant whose HoodieClusteringPlan groups small file slices of a partition); the
pipeline runs them, inline before its next write to the table (after the compactions), or through
`hudi-metastore table-services run`.

Each group becomes one Spark task: its slices read (merge-on-read slices merged with their logs,
pipeline/merge_on_read.py), sorted by the plan's sort columns when it has them, written as the
group's `numOutputFileGroups` new file groups at the clustering's instant (the records keep their
`_hoodie_*` meta fields but the file name: Hudi's preserveHoodieMetadata). The instant completes
as a `replacecommit` (operationType CLUSTER) replacing the planned file groups; the record index
moves the keys to the new file groups in that commit. A plan whose slices are not the latest any
more is rolled back by the server when an executor claims it (if no commit did so before:
store/hudi/timeline/service_plans.py), and a new one is scheduled when due; one that loses the
server's conflict check is rolled back (the server schedules a new one later). An attempt that fails or is
killed after its claim stops heartbeating; the next executor rolls it back to REQUESTED and runs
the plan again (pipeline/table_services.py `recover`).
"""

from __future__ import annotations

import json
import logging
import time

import pyarrow as pa

from client import CommitConflict, HudiCatalog, Security
from hudi_format.commit_metadata import CLUSTER, parse_clustering_plan
from hudi_format.config_keys import CLUSTERING_SORT_COLUMNS
from hudi_format.record_key_codec import encode_keys

from .base_file import base_file_name, new_file_id, read_footer, write_base_file, write_token
from .column_stats import encode, footer_stats, indexed_columns, uncompressed_size
from .commit import commit_metadata
from .compaction import Claim, lost_conflict
from .errors import HudiWriteError
from .file_group_writer import STATS_DDL, executor_client, write_stat
from .merge_on_read import read_slice
from .schema import META_COLUMNS, to_avro_schema
from .storage import FileLayout, relative_path
from .table import TableInfo, latest_schema

log = logging.getLogger(__name__)
CLUSTERING = "clustering"
GROUPS_DDL = "ppath string, outputs int, bases array<string>, logs array<array<string>>"
KEY = "_hoodie_record_key"


class _Clusterer:
    """Picklable function for `mapInArrow`: each group's new file groups, one stats row each."""

    def __init__(self, *, metastore: str, db: str, table: str, layout: FileLayout, instant: str,
                 file_schema: pa.Schema, ordering_field: str | None, sort_columns: list[str],
                 stats_columns: list[str], security=None):
        self.metastore, self.db, self.table, self.security = metastore, db, table, security
        self.layout, self.instant, self.file_schema = layout, instant, file_schema
        self.ordering_field, self.sort_columns, self.stats_columns = ordering_field, sort_columns, stats_columns

    def __call__(self, batches):
        for batch in batches:
            for ppath, outputs, bases, logs in zip(*(batch.column(i).to_pylist() for i in range(4))):
                merged = pa.concat_tables([read_slice(b or None, ls or [], self.file_schema, self.ordering_field)
                                           for b, ls in zip(bases, logs)])
                if self.sort_columns:
                    merged = merged.sort_by([(c, "ascending") for c in self.sort_columns])
                if not merged.num_rows:  # (every record deleted: the group's file groups just go)
                    continue
                step = -(-merged.num_rows // max(1, outputs or 1))  # records per new file group
                for start in range(0, merged.num_rows, step):
                    yield from self._write(ppath, merged.slice(start, step)).to_batches()

    def _write(self, ppath: str, records: pa.Table) -> pa.Table:
        fid = new_file_id()
        name = base_file_name(fid, write_token(), self.instant)
        rel = relative_path(ppath, name)
        i = META_COLUMNS.index("_hoodie_file_name")
        records = records.set_column(i, "_hoodie_file_name", pa.array([name] * records.num_rows, pa.string()))
        executor_client(self.metastore, self.security).add_markers(self.db, self.table, self.instant, [rel])
        location = self.layout.location(rel)
        size = write_base_file(location, records)
        footer = read_footer(location)
        n = records.num_rows
        empty = encode_keys([])
        return pa.table({
            "partitionPath": [ppath], "fileId": [fid], "path": [rel], "prevCommit": ["null"],
            "numWrites": pa.array([n], pa.int64()), "numInserts": pa.array([n], pa.int64()),
            "numUpdateWrites": pa.array([0], pa.int64()), "numDeletes": pa.array([0], pa.int64()),
            "fileSizeInBytes": pa.array([size], pa.int64()),
            "insertedKeys": pa.array([encode_keys(records.column(KEY).to_pylist())], pa.binary()),
            "updatedKeys": pa.array([empty], pa.binary()), "deletedKeys": pa.array([empty], pa.binary()),
            "columnStats": pa.array([encode(footer_stats(footer, records, self.stats_columns))], pa.binary()),
            "uncompressedSize": pa.array([uncompressed_size(footer)], pa.int64()),
        })


def pending(client: HudiCatalog, info: TableInfo, states=("REQUESTED",)) -> list[str]:
    """Instant times of the table's clusterings in `states`, oldest first."""
    return [i.ts for i in client.list_instants(info.db, info.name, states=list(states), actions=[CLUSTERING])]


def under_clustering(client: HudiCatalog, info: TableInfo) -> dict[tuple[str, str], str]:
    """(partition, file id) -> the clustering an executor runs now (INFLIGHT, its claim alive)
    whose plan replaces that file group. (One whose executor stopped blocks nothing; the next
    executor rolls it back and runs it again.)"""
    out: dict[tuple[str, str], str] = {}
    now_ms = time.time() * 1000
    for i in client.list_instants(info.db, info.name, states=["INFLIGHT"], actions=[CLUSTERING]):
        if i.heartbeat_ms + i.heartbeat_timeout_s * 1000 < now_ms:
            continue
        plan = parse_clustering_plan(client.get_instant_metadata(info.db, info.name, i.ts, CLUSTERING, "REQUESTED"),
                                     CLUSTERING_SORT_COLUMNS)
        out.update({(s.partition_path, s.file_id): i.ts for g in plan.groups for s in g.slices})
    return out


def run(spark, client: HudiCatalog, info: TableInfo, ts: str, metastore: str, security: Security | None = None) -> str:
    """Run the requested clustering `ts`; its instant time once completed."""
    db, name = info.db, info.name
    plan = parse_clustering_plan(client.get_instant_metadata(db, name, ts, CLUSTERING, "REQUESTED"),
                                 CLUSTERING_SORT_COLUMNS)
    schema = latest_schema(client, info)
    missing = [c for c in plan.sort_columns if c not in schema.fieldNames()]
    if missing:
        raise HudiWriteError(f"clustering {ts} of {db}.{name} sorts by {', '.join(missing)}, which the table "
                             "does not have")
    with Claim(client, info, ts, CLUSTERING, metastore, security) as held:  # writers leave its groups alone
        rows, replaced = _groups_of(client, info, ts, plan)
        return _run_claimed(spark, client, info, ts, metastore, security, plan, schema, rows, replaced, held)


def _groups_of(client: HudiCatalog, info: TableInfo, ts: str, plan) -> tuple[list[tuple], dict[str, list[str]]]:
    """The planned groups' files as the server answers them now (each slice still the latest: the
    server's claim checked it), and the file groups replaced per partition."""
    db, name = info.db, info.name
    partitions = sorted({s.partition_path for g in plan.groups for s in g.slices})
    slices = {(s.partition_path, s.file_id): s for s in client.get_latest_file_slices(db, name, partitions)}
    layout = info.layout()

    def where(ppath: str, f) -> str:
        return f.path or layout.location(relative_path(ppath, f.name))

    rows: list[tuple] = []
    replaced: dict[str, list[str]] = {}
    for g in plan.groups:
        bases, logs = [], []
        for p in g.slices:
            s = slices.get((p.partition_path, p.file_id))
            if s is None or (s.base_file.name if s.base_file else None) != p.base_file or \
                    [f.name for f in s.log_files] != p.log_files:
                raise HudiWriteError(f"clustering {ts} of {db}.{name}: the slice of file group {p.file_id} in "
                                     f"{p.partition_path!r} it plans is not the latest any more")
            bases.append(where(p.partition_path, s.base_file) if s.base_file else "")
            logs.append([where(p.partition_path, f) for f in s.log_files])
            replaced.setdefault(p.partition_path, []).append(p.file_id)
        rows.append((g.slices[0].partition_path, g.output_file_groups, bases, logs))
    return rows, replaced


def _run_claimed(spark, client: HudiCatalog, info: TableInfo, ts: str, metastore: str, security, plan, schema,
                 rows: list[tuple], replaced: dict[str, list[str]], held: Claim) -> str:
    from pyspark.sql.pandas.types import to_arrow_schema

    from .base_file import with_meta
    from .writer import _column_stats, _record_keys

    db, name = info.db, info.name
    layout = info.layout()
    data_schema = to_arrow_schema(schema, timezone="UTC")
    clusterer = _Clusterer(metastore=metastore, db=db, table=name, layout=layout, instant=ts,
                           file_schema=with_meta(data_schema), ordering_field=info.precombine_field,
                           sort_columns=plan.sort_columns,
                           stats_columns=indexed_columns(data_schema, info.properties), security=security)
    n = max(1, min(len(rows), spark.sparkContext.defaultParallelism * 2))
    stats = [r.asDict() for r in spark.createDataFrame(rows, GROUPS_DDL).repartition(n)
             .mapInArrow(clusterer, STATS_DDL).collect()]
    meta = commit_metadata(CLUSTER, [write_stat(r) for r in stats], to_avro_schema(schema, name), replaced)
    held.check(client)
    try:
        client.complete_instant(db, name, ts, CLUSTERING, json.dumps(meta),
                                _record_keys(stats) if info.record_index else None, _column_stats(stats))
    except CommitConflict:
        lost_conflict(client, info, ts)  # the server expired it: its files go at once
        raise
    log.info("clustered %s.%s at %s: %d file groups into %d", db, name, ts,
             sum(map(len, replaced.values())), len(stats))
    return ts
