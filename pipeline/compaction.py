"""Compactions of merge-on-read tables: the server schedules them (a requested `compaction` instant
whose plan names the file slices to compact, once `hoodie.compact.inline.max.delta.commits`
deltacommits completed since the last one); the pipeline runs them, inline before its next write
to the table, or through `compact(spark, table, ...)`.

Each operation becomes one Spark task: the slice's base file merged with its log files
(pipeline/merge_on_read.py) is written as the file group's new base file at the compaction's
instant time. The instant completes as a `commit` (HoodieCommitMetadata, `operationType` COMPACT)
with the new files' statistics; the record index is unchanged (no key changes its file group).

Its executor claims it (`claim`) and heartbeats it while it runs (`Claim`); an attempt that fails
or is killed stays INFLIGHT until its heartbeat expires, and the next executor rolls it back to
REQUESTED (the files it wrote deleted) and runs the plan again (pipeline/table_services.py
`recover`). One that loses the server's conflict check (a write added logs to a planned file group
meanwhile) can never complete: it is rolled back for good.
"""

from __future__ import annotations

import json
import logging
import math

import pyarrow as pa

from client import CommitConflict, HudiCatalog, InvalidOperation, NotFound, Security
from hudi_format.commit_metadata import parse_compaction_plan, parse_rollback
from hudi_format.config_keys import CLIENT_HEARTBEAT_INTERVAL_MS, CLIENT_HEARTBEAT_TOLERABLE_MISSES, default_of
from hudi_format.record_key_codec import encode_keys

from .base_file import base_file_name, read_footer, write_base_file, write_token
from .column_stats import encode, footer_stats, indexed_columns, uncompressed_size
from .commit import _Heartbeat
from .errors import ServiceClaimed, ServicePlanGone
from .file_group_writer import STATS_DDL, executor_client, write_stat
from .merge_on_read import read_slice
from .schema import META_COLUMNS, to_avro_schema
from .storage import FileLayout, relative_path
from .table import TableInfo, latest_schema, load, split_name

log = logging.getLogger(__name__)
COMPACTION = "compaction"
OPS_DDL = "ppath string, fid string, base string, logs array<string>, prev string"


class _Compactor:
    """Picklable function for `mapInArrow`: each operation's new base file, its write stats row."""

    def __init__(self, *, metastore: str, db: str, table: str, layout: FileLayout, instant: str,
                 file_schema: pa.Schema, ordering_field: str | None, stats_columns: list[str], security=None):
        self.metastore, self.db, self.table, self.security = metastore, db, table, security
        self.layout, self.instant, self.file_schema = layout, instant, file_schema
        self.ordering_field, self.stats_columns = ordering_field, stats_columns

    def __call__(self, batches):
        for batch in batches:
            for ppath, fid, base, logs, prev in zip(*(batch.column(i).to_pylist() for i in range(5))):
                yield from self._compact(ppath, fid, base or None, logs or [], prev).to_batches()

    def _compact(self, ppath: str, fid: str, base: str | None, logs: list[str], prev: str) -> pa.Table:
        merged = read_slice(base, logs, self.file_schema, self.ordering_field)
        token = write_token()
        name = base_file_name(fid, token, self.instant)
        rel = relative_path(ppath, name)
        i = META_COLUMNS.index("_hoodie_file_name")
        merged = merged.set_column(i, "_hoodie_file_name", pa.array([name] * merged.num_rows, pa.string()))
        executor_client(self.metastore, self.security).add_markers(self.db, self.table, self.instant, [rel])
        location = self.layout.location(rel)
        size = write_base_file(location, merged)
        footer = read_footer(location)
        empty = encode_keys([])
        n = merged.num_rows
        return pa.table({
            "partitionPath": [ppath], "fileId": [fid], "path": [rel], "prevCommit": [prev],
            "numWrites": pa.array([n], pa.int64()), "numInserts": pa.array([0], pa.int64()),
            "numUpdateWrites": pa.array([n], pa.int64()), "numDeletes": pa.array([0], pa.int64()),
            "fileSizeInBytes": pa.array([size], pa.int64()),
            "insertedKeys": pa.array([empty], pa.binary()), "updatedKeys": pa.array([empty], pa.binary()),
            "deletedKeys": pa.array([empty], pa.binary()),
            "columnStats": pa.array([encode(footer_stats(footer, merged, self.stats_columns))], pa.binary()),
            "uncompressedSize": pa.array([uncompressed_size(footer)], pa.int64()),
        })


def pending(client: HudiCatalog, info: TableInfo) -> list[str]:
    """Instant times of the compactions scheduled and not begun, oldest first."""
    if not info.merge_on_read:
        return []
    return [i.ts for i in client.list_instants(info.db, info.name, states=["REQUESTED"], actions=[COMPACTION])]


def claim(client: HudiCatalog, db: str, name: str, ts: str, action: str) -> None:
    """Take the requested service instant `ts` (REQUESTED -> INFLIGHT, under the table's row lock
    on the server): of two executors, the second gets ServiceClaimed and leaves it alone. A plan
    that can no longer run is rolled back by the server instead (ServicePlanGone; a new one is
    scheduled when due)."""
    try:
        client.transition_to_inflight(db, name, ts, action, b"")
    except (InvalidOperation, NotFound) as exc:
        if not client.list_instants(db, name, actions=[action], min_ts=ts, max_ts=ts):
            raise ServicePlanGone(f"{action} {ts} of {db}.{name} was rolled back by the server: {exc.message}",
                                  ts) from None
        raise ServiceClaimed(f"{action} {ts} of {db}.{name} is already being run by another executor "
                             f"({exc.message})", ts) from None


def _setting(info: TableInfo, key: str) -> int:
    try:
        return int(info.properties.get(key) or default_of(key))
    except ValueError:
        return int(default_of(key))


def _rollbacks_of(client: HudiCatalog, info: TableInfo, ts: str) -> set[str]:
    """The rollback instants that rolled back an attempt of `ts` (all later than `ts`)."""
    return {i.ts for i in client.list_instants(info.db, info.name, actions=["rollback"], min_ts=ts)
            if ts in parse_rollback(client.get_instant_metadata(info.db, info.name, i.ts, "rollback"))[0]}


class Claim:
    """A claimed service instant, heartbeated while its executor runs it (`with`), at the table's
    `hoodie.client.heartbeat.interval_in_ms` (the server expires the claim after that times
    `hoodie.client.heartbeat.tolerable.misses` + 1)."""

    def __init__(self, client: HudiCatalog, info: TableInfo, ts: str, action: str, metastore: str,
                 security: Security | None = None):
        claim(client, info.db, info.name, ts, action)
        self.info, self.ts, self.action = info, ts, action
        self._rolled_back = _rollbacks_of(client, info, ts)  # earlier failed attempts
        interval = max(1, _setting(info, CLIENT_HEARTBEAT_INTERVAL_MS)) / 1000
        timeout = math.ceil(interval * (max(0, _setting(info, CLIENT_HEARTBEAT_TOLERABLE_MISSES)) + 1))
        self._beat = _Heartbeat(metastore, info.db, info.name, ts, min(interval, max(0.2, timeout / 3)), security)

    def __enter__(self) -> Claim:
        self._beat.start()
        return self

    def __exit__(self, *exc) -> None:
        self._beat.stop()

    def check(self, client: HudiCatalog) -> None:
        """Before completing: this attempt was not rolled back meanwhile (an executor that stalled
        past its heartbeat timeout finds its attempt rolled back, its files deleted, and another
        executor running the plan: it must not complete it)."""
        if _rollbacks_of(client, self.info, self.ts) - self._rolled_back:
            raise ServiceClaimed(f"{self.action} {self.ts} of {self.info.db}.{self.info.name} was rolled back "
                                 "while this executor ran it (its heartbeat had expired); another executor runs "
                                 "it again", self.ts)


def lost_conflict(client: HudiCatalog, info: TableInfo, ts: str) -> None:
    """The server expired `ts` (it lost the conflict check): rolled back for good, its files deleted."""
    try:
        client.rollback_instant(info.db, info.name, ts)
    except (InvalidOperation, NotFound) as exc:
        log.warning("could not roll back %s of %s.%s now (%s); the next executor will", ts, info.db, info.name, exc)


def run(spark, client: HudiCatalog, info: TableInfo, ts: str, metastore: str, security: Security | None = None) -> str:
    """Run the requested compaction `ts`; its instant time once completed. It is claimed first: the
    server rolls back a plan that can no longer run (ServicePlanGone)."""
    db, name = info.db, info.name
    ops = parse_compaction_plan(client.get_instant_metadata(db, name, ts, COMPACTION, "REQUESTED"))
    with Claim(client, info, ts, COMPACTION, metastore, security) as held:
        return _run_claimed(spark, client, info, ts, metastore, security, _slices_of(client, info, ts, ops), held)


def _slices_of(client: HudiCatalog, info: TableInfo, ts: str, ops) -> list[tuple]:
    """The planned slices' files, as the server answers them now (each still the latest: the
    server's claim checked it)."""
    db, name = info.db, info.name
    slices = {(s.partition_path, s.file_id): s
              for s in client.get_latest_file_slices(db, name, sorted({o.partition_path for o in ops}))}
    layout = info.layout()

    def where(ppath: str, f) -> str:
        return f.path or layout.location(relative_path(ppath, f.name))

    rows = []
    for o in ops:
        s = slices.get((o.partition_path, o.file_id))
        if s is None or s.base_instant != o.base_instant:
            raise ValueError(f"compaction {ts} of {db}.{name}: the slice of file group {o.file_id} in "
                             f"{o.partition_path!r} it plans is not the latest any more")
        logs = {f.name: f for f in s.log_files}
        base = where(o.partition_path, s.base_file) if s.base_file is not None and o.base_file else ""
        rows.append((o.partition_path, o.file_id, base, [where(o.partition_path, logs[n]) for n in o.log_files],
                     o.base_instant))
    return rows


def _run_claimed(spark, client: HudiCatalog, info: TableInfo, ts: str, metastore: str, security,
                 rows: list[tuple], held: Claim) -> str:
    from pyspark.sql.pandas.types import to_arrow_schema

    from .base_file import with_meta

    db, name = info.db, info.name
    layout = info.layout()
    schema = latest_schema(client, info)
    data_schema = to_arrow_schema(schema, timezone="UTC")
    compactor = _Compactor(metastore=metastore, db=db, table=name, layout=layout, instant=ts,
                           file_schema=with_meta(data_schema), ordering_field=info.precombine_field,
                           stats_columns=indexed_columns(data_schema, info.properties), security=security)
    run_operations(spark, client, info, ts, COMPACTION, rows, compactor, to_avro_schema(schema, name), "COMPACT",
                   held)
    log.info("compacted %s.%s at %s: %d file groups", db, name, ts, len(rows))
    return ts


def run_operations(spark, client: HudiCatalog, info: TableInfo, ts: str, action: str, rows: list[tuple],
                   executor, avro_schema: str, operation: str, held: Claim) -> list[dict]:
    """Run a claimed compaction's or log compaction's operations (`rows`, OPS_DDL), one Spark task
    per few, and complete its instant with their write stats (`compacted`, the schema,
    `operationType` `operation`); a lost conflict check expires it. The stats rows."""
    from .writer import _column_stats, _record_keys

    n = max(1, min(len(rows), spark.sparkContext.defaultParallelism * 2))
    stats = [r.asDict() for r in spark.createDataFrame(rows, OPS_DDL).repartition(n)
             .mapInArrow(executor, STATS_DDL).collect()]
    by_partition: dict[str, list[dict]] = {}
    for r in stats:
        by_partition.setdefault(r["partitionPath"], []).append(write_stat(r))
    meta = {"partitionToWriteStats": by_partition, "compacted": True,
            "extraMetadata": {"schema": avro_schema}, "operationType": operation}
    held.check(client)
    try:
        client.complete_instant(info.db, info.name, ts, action, json.dumps(meta),
                                _record_keys(stats) if info.record_index else None, _column_stats(stats))
    except CommitConflict:
        lost_conflict(client, info, ts)
        raise
    return stats


def compact(spark, table: str, metastore: str = "thrift://127.0.0.1:9083", security: Security | None = None
            ) -> list[str]:
    """Run the table's scheduled compactions (failed attempts rolled back first; a plan the server
    rolled back at its claim is replaced by the one it scheduled instead); their instant times."""
    return run_pending(spark, table, metastore, security, pending, run)


def run_pending(spark, table: str, metastore: str, security: Security | None, pending_of, run_one) -> list[str]:
    """`compact` and `log_compact`: after the table's failed service attempts were rolled back, run
    each instant `pending_of(client, info)` names, oldest first, with `run_one`; again while a plan
    the server rolled back at its claim (ServicePlanGone) was replaced by a new one. Their instant
    times."""
    from .table_services import recover

    db, name = split_name(table)
    done: list[str] = []
    seen: set[str] = set()
    with HudiCatalog(metastore, security=security) as client:
        info = load(client, db, name)
        recover(client, info)
        while todo := [ts for ts in pending_of(client, info) if ts not in seen]:
            gone = False
            for ts in todo:
                seen.add(ts)
                try:
                    done.append(run_one(spark, client, info, ts, metastore, security))
                except ServicePlanGone as exc:
                    log.info("%s", exc)
                    gone = True
            if not gone:
                break
    return done
