"""Log compactions of merge-on-read tables (Hudi 0.13+'s `logcompaction`): the server schedules them
(a requested `logcompaction` instant whose plan, a HoodieCompactionPlan, names the file slices
with at least `hoodie.log.compaction.blocks.threshold` log blocks:
store/hudi/timeline/log_compaction_schedule.py); the pipeline runs them, inline before its next
write to the table (after the compactions), or through `log_compact(spark, table, ...)` or
`table-services run`.

Each operation becomes one Spark task: the slice's log blocks merged by key as a reader merges them
(pipeline/merge_on_read.py `merge_logs`: by ordering field, deletes applied, earlier log
compactions' blocks standing in for the blocks they replaced), written as one new log file of the
slice (the next log version) holding a delete block of the keys the logs delete, then an Avro data
block of the surviving records, both with the COMPACTED_BLOCK_TIMES header naming the instants of
the blocks merged (as Hudi's log compaction names its scanner's valid block instants); records
keep their meta fields (Hudi's plan: preserveHoodieMetadata). The delete block comes first: a key
deleted and written again keeps its base file record deleted. The instant completes as a
`deltacommit` (HoodieCommitMetadata, `operationType` LOG_COMPACT); the record index is unchanged.

Claims, heartbeats, failed attempts and lost conflict checks as a compaction's (pipeline/compaction.py).
"""

from __future__ import annotations

import logging
import os

import pyarrow as pa

from client import HudiCatalog, Security
from hudi_format.commit_metadata import parse_compaction_plan
from hudi_format.file_slice import parse_file_name
from hudi_format.log_file import avro_data_block_of_table, delete_block, log_file_name
from hudi_format.record_key_codec import encode_keys
from hudi_format.table_config import log_compaction_enabled

from .base_file import conform, write_token
from .compaction import Claim, _slices_of, run_operations, run_pending
from .file_group_writer import executor_client, log_schema, log_stat_row, log_stats, write_log_file
from .merge_on_read import Merged, merge_logs
from .schema import to_avro_schema
from .storage import FileLayout, relative_path
from .table import TableInfo, latest_schema

log = logging.getLogger(__name__)
LOG_COMPACTION = "logcompaction"


def enabled(info: TableInfo) -> bool:
    """A merge-on-read table whose config turns log compaction on: `hoodie.log.compaction.inline` or
    `hoodie.log.compaction.enable` true (hudi_format/table_config.py); the pipeline runs its pending
    log compactions inline before a write only then (as the server schedules them only then)."""
    return info.merge_on_read and log_compaction_enabled(info.properties)


class _LogCompactor:
    """Picklable function for `mapInArrow`: each operation's new log file, its write stats row."""

    def __init__(self, *, metastore: str, db: str, table: str, layout: FileLayout, instant: str,
                 file_schema: pa.Schema, data_schema: pa.Schema, log_schema: str, ordering_field: str | None,
                 stats_columns: list[str], security=None):
        self.metastore, self.db, self.table, self.security = metastore, db, table, security
        self.layout, self.instant, self.file_schema, self.data_schema = layout, instant, file_schema, data_schema
        self.log_schema, self.ordering_field, self.stats_columns = log_schema, ordering_field, stats_columns

    def __call__(self, batches):
        for batch in batches:
            for ppath, fid, _base, logs, prev in zip(*(batch.column(i).to_pylist() for i in range(5))):
                out = self._compact(ppath, fid, logs or [], prev)
                if out is not None:
                    yield from out.to_batches()

    def _compact(self, ppath: str, fid: str, logs: list[str], prev: str) -> pa.Table | None:
        out = compacted_log(self.instant, logs, ppath, self.file_schema, self.log_schema, self.ordering_field)
        if out is None:  # (no block left to merge: nothing to write)
            return None
        data, merged = out
        n = merged.table.num_rows
        version = max(parse_file_name(os.path.basename(p))[3] or 0 for p in logs) + 1
        name = log_file_name(fid, prev, version, write_token())
        rel = relative_path(ppath, name)
        executor_client(self.metastore, self.security).add_markers(self.db, self.table, self.instant, [rel])
        write_log_file(self.layout, rel, data)
        empty = encode_keys([])
        return log_stat_row(ppath, fid, rel, prev, n, len(merged.deleted), len(data), (empty, empty, empty),
                            log_stats(conform(merged.table, self.data_schema), self.stats_columns))


def compacted_log(instant: str, logs: list[str], ppath: str, file_schema: pa.Schema, schema_json: str,
                  ordering_field: str | None) -> tuple[bytes, Merged] | None:
    """The content of a log compaction's new log file of a slice whose log files are `logs` (in
    order): a delete block, then an Avro data block (Hudi's own writes the data block first; here
    the delete block comes first so that a key deleted and written again keeps its earlier records
    deleted, as a reader of the original blocks has it), both naming the merged instants in
    COMPACTED_BLOCK_TIMES; None when no block is left to merge."""
    merged = merge_logs(logs, file_schema, ordering_field)
    if not merged.instants:
        return None
    data = b""
    if merged.deleted:
        data += delete_block(instant, [(k, ppath) for k in merged.deleted], merged.instants)
    if merged.table.num_rows:
        data += avro_data_block_of_table(instant, schema_json, merged.table, merged.instants)
    return data, merged


def run(spark, client: HudiCatalog, info: TableInfo, ts: str, metastore: str, security: Security | None = None) -> str:
    """Run the requested log compaction `ts`; its instant time once completed. It is claimed
    first: the server rolls back a plan that can no longer run (ServicePlanGone)."""
    from pyspark.sql.pandas.types import to_arrow_schema

    from .base_file import with_meta
    from .column_stats import indexed_columns

    db, name = info.db, info.name
    ops = parse_compaction_plan(client.get_instant_metadata(db, name, ts, LOG_COMPACTION, "REQUESTED"))
    with Claim(client, info, ts, LOG_COMPACTION, metastore, security) as held:
        rows = _slices_of(client, info, ts, ops)
        schema = latest_schema(client, info)
        data_schema = to_arrow_schema(schema, timezone="UTC")
        avro = to_avro_schema(schema, name)
        compactor = _LogCompactor(metastore=metastore, db=db, table=name, layout=info.layout(), instant=ts,
                                  file_schema=with_meta(data_schema), data_schema=data_schema,
                                  log_schema=log_schema(avro), ordering_field=info.precombine_field,
                                  stats_columns=indexed_columns(data_schema, info.properties), security=security)
        stats = run_operations(spark, client, info, ts, LOG_COMPACTION, rows, compactor, avro, "LOG_COMPACT", held)
    log.info("log-compacted %s.%s at %s: %d file groups", db, name, ts, len(stats))
    return ts


def pending(client: HudiCatalog, info: TableInfo) -> list[str]:
    """Instant times of the log compactions scheduled and not begun, oldest first."""
    if not info.merge_on_read:
        return []
    return [i.ts for i in client.list_instants(info.db, info.name, states=["REQUESTED"], actions=[LOG_COMPACTION])]


def log_compact(spark, table: str, metastore: str = "thrift://127.0.0.1:9083", security: Security | None = None
                ) -> list[str]:
    """Run the table's scheduled log compactions, as `compact` runs its compactions (failed attempts
    rolled back first; a plan the server rolled back at its claim is replaced by the one it
    scheduled instead; the server schedules them, this schedules none); their instant times."""
    return run_pending(spark, table, metastore, security, pending, run)
