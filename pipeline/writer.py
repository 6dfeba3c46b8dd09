"""`write(df, table=..., operation=...)`: a Spark DataFrame committed to a Hudi table (copy-on-write
or merge-on-read) through the metastore (see docs/pipeline.md).

Driver: checks the schema, counts records per partition (statistics only), starts the instant, reads
the affected partitions' file slices from the metastore, tags records with their file groups,
plans where inserts go, and completes the instant with the executors' write statistics.
Executors: key lookups (in the metastore's record index, or in base files for tables without it)
and one Parquet base file per written file group; on a merge-on-read table, updates and deletes of
a file group that is not a small file taking inserts append one log file to its slice instead.
"""

from __future__ import annotations

import bisect
import logging
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager

import pyarrow as pa
import pyarrow.compute as pc
from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F
from pyspark.sql import types as T

from client import BaseFileStats, FileGroupKeys, HudiCatalog, Security
from hudi_format.commit_metadata import commit_document
from hudi_format.config_keys import CLUSTERING_INLINE, WRITE_TABLE_TYPE
from hudi_format.errors import InvalidMetadata

from . import index_tagging, keygen, tagging, workload_profile
from .column_stats import indexed_columns
from .commit import WriteTransaction, commit_metadata
from .config import WriteConfig
from .errors import HudiWriteError
from .file_group_writer import BASE_FILE_SUFFIX, STATS_DDL, FileGroupWriter, write_stat
from .schema import META_COLUMNS, evolve, to_avro_schema
from .table import latest_schema, load, open_for_write, split_name, sync_hms_schema

log = logging.getLogger(__name__)
SHUFFLE_PARTITIONS = "spark.sql.shuffle.partitions"

DEFAULT_METASTORE = "thrift://127.0.0.1:9083"
RECORDS_PER_TASK = 10_000  # records per shuffle partition of a write, unless configured
DRIVER_WRITERS = 8  # threads of the driver writing a small batch's log files (at most Spark's default parallelism)


def write(df: DataFrame | None, table: str, operation: str = "upsert", record_key=None, precombine_field=None,
          partition_by=None, metastore: str = DEFAULT_METASTORE, path: str | None = None,
          options: dict | None = None, security: Security | None = None, table_type: str | None = None) -> str:
    """Write `df` to the Hudi table `db.tbl` with `operation`; returns the completed instant time.

    operation: insert, upsert, delete, bulk_insert, insert_overwrite, insert_overwrite_table,
    delete_partition. The table (and its database) is created on first write. record_key and
    partition_by take a name, a comma-separated string or a list. `options`: Hudi write options
    (docs/pipeline.md). delete_partition takes the partitions of `df`'s rows or the option
    `hoodie.datasource.write.partitions.to.delete` (partition paths; `df` may then be None).
    `security`: how to log in to the metastore (client Security: password, Kerberos, TLS); with
    Kerberos the tasks log in with a delegation token the driver gets for this write. `table_type`:
    COPY_ON_WRITE or MERGE_ON_READ (`hoodie.datasource.write.table.type`; of a table this write
    creates; an existing table's must match)."""
    if table_type is not None:
        options = {**(options or {}), WRITE_TABLE_TYPE: table_type}
    cfg = WriteConfig.from_options(operation, options)
    db, name = split_name(table)
    with HudiCatalog(metastore, security=security) as client, _task_security(client) as tasks:
        job = _Job(client, metastore, db, name, cfg, df, record_key, precombine_field, partition_by, path)
        job.task_security = tasks
        return job.run()


@contextmanager
def _task_security(client: HudiCatalog):
    """How the executors log in: as the driver, except that a Kerberos driver (whose tasks have no
    ticket) gets a delegation token for them, cancelled after the write."""
    security = client.security
    if security.auth != "kerberos":
        yield security
        return
    token = client.get_delegation_token()
    try:
        yield security.with_token(token)
    finally:
        try:
            client.cancel_delegation_token(token)
        except Exception as exc:  # it expires anyway
            log.warning("could not cancel the write's delegation token: %s", exc)


def _col(name: str):
    return F.col(f"`{name}`")


class _Job:
    def __init__(self, client, metastore, db, name, cfg: WriteConfig, df, record_key, precombine_field,
                 partition_by, path):
        self.client, self.metastore, self.db, self.name, self.cfg = client, metastore, db, name, cfg
        self.df, self.record_key, self.precombine_field = df, record_key, precombine_field
        self.partition_by, self.path = partition_by, path
        self._persisted: list[DataFrame] = []
        self.task_security: Security | None = None  # the executors' log-in (write's _task_security)
        self.instant = ""
        self.created = False  # this job registered the table (its first write)
        self.parallelism = 1  # of the write's shuffles (_parallelism), once the batch is counted
        self._session_value: str | None = None  # spark.sql.shuffle.partitions before the write set its own
        self._merged: set[str] = set()  # merge-on-read: existing small file groups taking inserts (rewritten)
        self._log_versions: dict[str, int] = {}  # merge-on-read: file id -> its slice's last log version
        self._clustering: dict[tuple[str, str], str] = {}  # file groups under a clustering run elsewhere
        self._batch: pa.Table | None = None  # a small batch in the driver (`_small_batch`)
        self._sizes: dict[tuple[str, ...], int] = {}  # `_avg_record_size` by actions

    # --- driver -----------------------------------------------------------------------------------

    def run(self) -> str:
        cfg, df = self.cfg, self.df
        if df is None and not (cfg.operation == "delete_partition" and cfg.partitions_to_delete is not None):
            raise ValueError(f"{cfg.operation} needs a DataFrame")
        self.spark = df.sparkSession if df is not None else SparkSession.getActiveSession()
        self.created, self._sizes = False, {}
        try:
            with self._session_shuffles() as shuffles:
                current = self._open_table()
                self._run_compactions()
                records = self._prepare(df) if df is not None else None
                self._batch = self._small_batch(records) if records is not None else None
                counts = (_arrow_counts(self._batch, self.info.record_key_fields) if self._batch is not None
                          else self._partition_counts(records) if records is not None else {})
                self.parallelism = self._parallelism(sum(counts.values()))
                shuffles(self.parallelism)
                done = self._commit(records, counts)
        except BaseException:
            if self.created:
                self._unregister_new_table()
            raise
        if current is not None and df is not None and self.schema != current:
            sync_hms_schema(self.client, self.info, self.schema)
        return done

    def _run_compactions(self) -> None:
        """The compactions (merge-on-read) and clusterings the server scheduled run first, inline
        (pipeline/compaction.py, clustering.py), after failed attempts whose executor stopped
        heartbeating were rolled back to run again. One that fails does not fail the write: it stays
        INFLIGHT until its heartbeat expires, and the next executor runs it again."""
        from . import clustering, compaction, log_compaction
        from .table_services import run

        inline = (self.info.properties.get(CLUSTERING_INLINE) or "").lower() == "true"
        log_inline = log_compaction.enabled(self.info)
        services = ((compaction.COMPACTION,) + ((log_compaction.LOG_COMPACTION,) if log_inline else ())
                    + ((clustering.CLUSTERING,) if inline else ()))
        # (failures are logged there; the write goes on)
        run(self.spark, self.client, self.info, self.metastore, self.task_security, services)
        if inline:  # those another executor runs: their file groups take no records meanwhile (as Hudi's default)
            self._clustering = clustering.under_clustering(self.client, self.info)

    def _unregister_new_table(self) -> None:
        """The first write of a table this job created failed: the table goes again, unless another
        writer has begun an instant on it meanwhile (a failed first write leaves nothing registered)."""
        try:
            others = [i for i in self.client.list_instants(self.db, self.name) if i.ts != self.instant]
            if not others:
                self.client.drop_table(self.db, self.name, True)
        except Exception as exc:  # the write's own error is the one to raise
            log.warning("could not unregister %s.%s after its failed first write: %s", self.db, self.name, exc)

    def _open_table(self) -> T.StructType | None:
        """Load the table (created on a first write) and settle the schema written; returns the
        table's schema before this write (None: it has none yet)."""
        cfg, df = self.cfg, self.df
        schema_in = df.schema if df is not None else T.StructType([])
        if df is None:
            self.info = load(self.client, self.db, self.name)
        else:
            self.info, self.created = open_for_write(
                self.client, self.db, self.name, schema_in, record_key=self.record_key,
                precombine_field=self.precombine_field, partition_by=self.partition_by, path=self.path, cfg=cfg)
        current = latest_schema(self.client, self.info)
        if cfg.operation in ("delete", "delete_partition") or df is None:
            if current is None:
                raise HudiWriteError(f"{self.db}.{self.name} has no schema yet; nothing to {cfg.operation}")
            self.schema = current
        else:
            self.schema = evolve(current, schema_in)  # SchemaEvolutionError before anything is written
        self.schema_avro = to_avro_schema(self.schema, self.name)
        if df is not None:
            self._check_fields(schema_in)
        return current

    def _commit(self, records: DataFrame | None, counts: dict[str, int]) -> str:
        """One instant: begun, the file groups written, completed (abandoned on any failure)."""
        cfg = self.cfg
        action = cfg.action(self.info.merge_on_read)
        txn = WriteTransaction(self.client, self.db, self.name, action, cfg.operation,
                               cfg.heartbeat_timeout_s, cfg.heartbeat_interval_ms / 1000)
        self.instant = txn.begin(self.schema_avro)
        try:
            rows, replaced = self._execute(records, counts)
            held = sorted({(r["partitionPath"], r["fileId"]) for r in rows} & set(self._clustering))
            if held:
                p, fid = held[0]
                raise HudiWriteError(f"{self.db}.{self.name}: file group {fid} in {p!r} is under pending clustering "
                                     f"{self._clustering[held[0]]}, which another executor runs; updates to it are "
                                     "refused until it completes (retry then)")
            meta = commit_metadata(cfg.operation, [write_stat(r) for r in rows], self.schema_avro,
                                   replaced if action == "replacecommit" else None)
            return txn.complete(meta, _record_keys(rows) if self.info.record_index else None, _column_stats(rows))
        except BaseException:
            txn.abandon()
            raise
        finally:
            for d in self._persisted:
                d.unpersist()

    def _check_fields(self, schema_in: T.StructType) -> None:
        have = {f.name.lower() for f in schema_in.fields}
        need = list(self.info.record_key_fields) + list(self.info.partition_fields)
        if self.cfg.operation == "delete_partition":
            need = list(self.info.partition_fields)
        missing = [f for f in need if f.lower() not in have]
        if missing:
            raise ValueError(f"the DataFrame lacks the key/partition column(s) {missing} of {self.db}.{self.name}")
        pc = self.info.precombine_field
        if self.cfg.combine and self.cfg.operation in ("upsert", "insert") and pc and pc.lower() not in have:
            raise ValueError(f"the DataFrame lacks the precombine column {pc!r}")

    def _prepare(self, df: DataFrame) -> DataFrame:
        """Table columns (cast to the table schema, missing ones null), record key, partition path."""
        by_lower = {f.name.lower(): f.name for f in df.schema.fields}
        cols = []
        for f in self.schema.fields:
            src = by_lower.get(f.name.lower())
            cols.append((_col(src).cast(f.dataType) if src else F.lit(None).cast(f.dataType)).alias(f.name))
        info = self.info
        out = df.select(*cols)
        key = (F.lit("") if self.cfg.operation == "delete_partition"
               else keygen.record_key(info.record_key_fields, info.field_prefixed_keys))
        return out.select("*", key.alias("_hoodie_record_key"),
                          keygen.partition_path(info.partition_fields, info.hive_style, info.url_encode)
                          .alias("_hoodie_partition_path"))

    def _parallelism(self, records: int) -> int:
        """Partitions of the write's shuffles (de-duplication, file groups):
        `hoodie.<operation>.shuffle.parallelism` when set, else one per RECORDS_PER_TASK records,
        at least Spark's default parallelism and at most `spark.sql.shuffle.partitions`. A small
        batch then runs a few tasks, not 200 (each one a Python worker and a metastore lookup)."""
        spark = self.spark
        if self.cfg.shuffle_partitions or spark is None:  # (no session: nothing to shuffle)
            return self.cfg.shuffle_partitions or 1
        try:  # the session's own value, also while _session_shuffles has set the write's
            most = int(getattr(self, "_session_value", None) or spark.conf.get(SHUFFLE_PARTITIONS) or 200)
        except ValueError:
            most = 200
        least = spark.sparkContext.defaultParallelism
        return max(1, min(most, max(least, -(-records // RECORDS_PER_TASK))))

    @contextmanager
    def _session_shuffles(self):
        """Spark's implicit shuffles of the write (the counting aggregation, joins, distinct
        partitions, insert counts) get the write's own number of partitions too: the session's
        `spark.sql.shuffle.partitions` is set while the write runs (the smallest count,
        `_parallelism(0)`, until the batch is counted; then the write's) and restored after. Spark's
        adaptive execution does not shrink all of them (a one-row `spark.sql` write ran 6 stages of
        200 tasks). Yields a function that sets the count. (The setting is the session's: a query
        other threads plan meanwhile on the same session gets it too.)"""
        spark = self.spark
        if spark is None:
            yield lambda n: None
            return
        before = str(spark.conf.get(SHUFFLE_PARTITIONS))

        def use(n: int) -> None:
            spark.conf.set(SHUFFLE_PARTITIONS, str(n))

        use(self._parallelism(0))
        self._session_value = before
        try:
            yield use
        finally:
            self._session_value = None
            spark.conf.set(SHUFFLE_PARTITIONS, before)

    def _partition_counts(self, records: DataFrame) -> dict[str, int]:
        """Records per partition path (one small aggregation); refuses null record keys."""
        rows = records.groupBy("_hoodie_partition_path").agg(
            F.count(F.lit(1)).alias("n"), F.sum(F.col("_hoodie_record_key").isNull().cast("long")).alias("nulls")
        ).collect()
        nulls = sum(r["nulls"] or 0 for r in rows)
        if nulls:
            raise HudiWriteError(f"{nulls} record(s) have a null record key ({self.info.record_key_fields})")
        return {r["_hoodie_partition_path"]: r["n"] for r in rows}

    def _slices(self, partitions) -> list:
        if partitions is None:
            return self.client.get_latest_file_slices(self.db, self.name)
        partitions = sorted(partitions)
        return self.client.get_latest_file_slices(self.db, self.name, partitions) if partitions else []

    def _avg_record_size(self, actions=("commit", "replacecommit")) -> int:
        """Bytes per record written by the table's latest completed `actions` that wrote any (of 5),
        else `hoodie.copyonwrite.record.size.estimate` (asked once per write)."""
        key = tuple(actions)
        if key not in self._sizes:
            self._sizes[key] = self._read_record_size(actions)
        return self._sizes[key]

    def _read_record_size(self, actions) -> int:
        instants = self.client.list_instants(self.db, self.name, states=["COMPLETED"], actions=list(actions))
        for inst in reversed(instants[-5:]):
            try:  # JSON, or Avro: a version 8+ instant of Hudi's own writer the server caught up
                meta = commit_document(self.client.get_instant_metadata(self.db, self.name, inst.ts, inst.action))
            except InvalidMetadata:
                continue
            stats = [s for ss in (meta.get("partitionToWriteStats") or {}).values() for s in ss or []]
            writes = sum(int(s.get("numWrites") or 0) for s in stats)
            size = sum(int(s.get("totalWriteBytes") or 0) for s in stats)
            if writes > 0 and size > 0:
                return max(1, size // writes)
        return self.cfg.record_size_estimate

    def _persist(self, d: DataFrame) -> DataFrame:
        d = d.persist()
        self._persisted.append(d)
        return d

    def _execute(self, records, counts) -> tuple[list[dict], dict[str, list[str]]]:
        """Write the operation's file groups: (stats rows, file ids replaced per partition)."""
        cfg, op = self.cfg, self.cfg.operation
        if op == "delete_partition":
            parts = cfg.partitions_to_delete if cfg.partitions_to_delete is not None else list(counts)
            return [], _file_ids(self._slices(parts))
        if self.info.record_index:
            return self._execute_indexed(records, counts)
        if cfg.combine and op != "delete":
            records = self._dedupe(records)
        elif op == "delete":
            records = self._distinct(records, ["_hoodie_partition_path", "_hoodie_record_key"])
        slices, replaced = self._target_slices(counts)
        groups = self._groups(slices)
        tagged = None
        if op in ("upsert", "delete") and groups:
            keys = tagging.existing_keys(self.spark, self.info.layout(), slices)
            tagged = self._persist(tagging.tag(records, keys))
        if op == "delete":
            if tagged is None:
                return [], replaced
            to_write = tagged.where(F.col("_fg").isNotNull()).withColumn("_delete", F.lit(True))
        else:
            to_write = self._place(records, tagged, counts, slices, groups).withColumn("_delete", F.lit(False))
        return self._write_file_groups(to_write, groups), replaced

    def _execute_indexed(self, records, counts) -> tuple[list[dict], dict[str, list[str]]]:
        """As `_execute`, tagging with the record index: keys are unique across the table, so every
        batch is de-duplicated by key and inserts of keys the table has update them (or move them)."""
        op = self.cfg.operation
        slices, replaced = self._target_slices(counts)
        on_driver = self._tagged_on_driver(records) if self._on_driver(counts) else None
        found = None
        if on_driver is not None:
            appended = self._append_on_driver(on_driver, slices)
            if appended is not None:
                return appended, replaced
            # (the driver's tags, handed to Spark)
            schema = index_tagging.tagged_schema(records.schema)
            found = self._persist(records.sparkSession.createDataFrame(on_driver, schema=schema))
            records = found.drop("_old_ppath", "_fg")
        else:
            records = self._distinct(records, ["_hoodie_record_key"]) if op == "delete" else self._dedupe(records)
        tagged = leaving = None
        touched: list[str] = []
        if op != "insert_overwrite_table":  # (that one replaces every file group: all records are new)
            if found is None:
                found = self._persist(index_tagging.tag(self._for_lookups(records, sum(counts.values())),
                                                        self.metastore, self.db, self.name,
                                                        security=self.task_security))
            upp = self.cfg.update_partition_path
            tagged, leaving = index_tagging.route(found, op, sorted(counts),
                                                  self.info.update_partition_path if upp is None else upp)
            touched = index_tagging.touched_partitions(found)
        have = {s.partition_path for s in slices}
        slices += self._slices(set(touched) - have)
        groups = self._groups(slices)
        parts = []
        if op != "delete":
            bins = [s for s in slices if s.partition_path in counts] if op in ("insert", "upsert") else []
            parts.append(self._place(records, tagged, counts, bins, groups).withColumn("_delete", F.lit(False)))
        if leaving is not None:
            parts.append(leaving.withColumn("_delete", F.lit(True)))
        to_write = parts[0] if len(parts) == 1 else parts[0].unionByName(parts[1])
        return self._write_file_groups(to_write, groups), replaced

    def _driver_cap(self) -> int:
        """The most records a batch the driver takes may have (0: none): a merge-on-read table with
        a record index, not its first write, an upsert, insert or delete, within both limits (the
        bytes by the table's bytes per record)."""
        if not (self.info.merge_on_read and self.info.record_index and not self.created
                and self.cfg.operation in ("upsert", "insert", "delete") and self.cfg.driver_max_records > 0):
            return 0
        size = self._avg_record_size(("commit", "deltacommit", "replacecommit"))
        return min(self.cfg.driver_max_records, self.cfg.driver_max_bytes // max(1, size))

    def _small_batch(self, records: DataFrame) -> pa.Table | None:
        """The batch in the driver when the driver may take it (`_driver_cap`): its first records up
        to one more than the cap, in one `toArrow` that also spares counting it in Spark; None for a
        larger batch (the driver then fetched at most the cap's bytes for nothing)."""
        cap = self._driver_cap()
        if cap <= 0:
            return None
        t = records.limit(cap + 1).toArrow()
        return t if t.num_rows <= cap else None

    def _on_driver(self, counts: dict[str, int]) -> bool:
        """A small batch on a merge-on-read table with a record index (`_small_batch`): the driver
        de-duplicates and tags it (its own lookups) and, when every record is an update in place or
        a delete, appends the log files itself (`_append_on_driver`). Those writes cost little next
        to the Spark stages they would need; a copy-on-write batch rewrites base files (Spark's
        tasks)."""
        return self._batch is not None and sum(counts.values()) > 0

    def _tagged_on_driver(self, records: DataFrame) -> pa.Table:
        """The batch de-duplicated by key (`_dedupe`'s choice) with `_old_ppath` and `_fg`
        (index_tagging.tag's columns), in the driver."""
        t, self._batch = self._batch if self._batch is not None else records.toArrow(), None
        if self.cfg.operation == "delete":
            t = _first_per_key(t, None)
        else:
            pc_field = self.info.precombine_field
            t = _first_per_key(t, next((c for c in t.column_names if pc_field and c.lower() == pc_field.lower()),
                                       None))
        key_pos = t.column_names.index("_hoodie_record_key")
        step = index_tagging.LOOKUP_BATCH
        return pa.concat_tables([index_tagging.locate(self.client, self.db, self.name, t.slice(i, step), key_pos)
                                 for i in range(0, t.num_rows, step)])

    def _append_on_driver(self, tagged: pa.Table, slices: list) -> list[dict] | None:
        """Stats rows of the log files the driver appended for `tagged`, or None (nothing written)
        when some record is new, moves partition, or falls to a file group that takes no log file."""
        op, upp = self.cfg.operation, self.cfg.update_partition_path
        moves = self.info.update_partition_path if upp is None else upp
        if op == "delete":
            tagged = tagged.filter(pc.is_valid(tagged.column("_fg")))
        elif tagged.column("_fg").null_count:
            return None  # (inserts: placed by Spark, `_place`)
        elif moves and not pc.all(pc.equal(tagged.column("_old_ppath"),
                                           tagged.column("_hoodie_partition_path"))).as_py():
            return None  # (moves: deleted where they were, inserted where they go)
        if not tagged.num_rows:
            return []
        old = tagged.column("_old_ppath")  # (where each key lives; with moves off, where it stays)
        tagged = tagged.set_column(tagged.column_names.index("_hoodie_partition_path"), "_hoodie_partition_path", old)
        have = {s.partition_path for s in slices}
        slices = slices + self._slices(set(pc.unique(old).to_pylist()) - have)
        groups = self._groups(slices)
        appends = self._appends(groups)
        if not pc.all(pc.is_in(tagged.column("_fg"), value_set=pa.array(list(appends), pa.string()))).as_py():
            return None
        cols = [f.name for f in self.schema.fields if f.name not in META_COLUMNS]
        final = (tagged.select(cols + ["_hoodie_record_key", "_hoodie_partition_path", "_fg"])
                 .append_column("_delete", pa.array([op == "delete"] * tagged.num_rows, pa.bool_()))
                 .sort_by("_fg"))
        writer = self._file_group_writer(groups)
        parts = _split_groups(final, min(DRIVER_WRITERS, self.df.sparkSession.sparkContext.defaultParallelism))

        def write_part(part: pa.Table) -> list[dict]:  # (a connection per thread)
            with HudiCatalog(self.metastore, security=self.task_security) as c:
                return [r for b in writer.write_sorted(part.to_batches(), client=c) for r in b.to_pylist()]

        if len(parts) == 1:
            return write_part(parts[0])
        with ThreadPoolExecutor(len(parts), thread_name_prefix="driver-write") as pool:
            return [r for rows in pool.map(write_part, parts) for r in rows]

    def _for_lookups(self, records: DataFrame, n: int) -> DataFrame:
        """A batch of at most LOOKUP_BATCH keys per core in one partition per core, each task one
        lookup: one lookup of many keys costs the server less than several of few (PostgreSQL,
        10,000,000 keys: 100,000 keys looked up in 0.45 s, as 10 lookups of 10,000 in 1 s). No
        shuffle: the de-duplication's tasks merge, so a larger batch keeps its partitions (merged,
        they ran out of memory: 10,000,000 rows of 256-byte payloads in 100 partitions)."""
        cores = records.sparkSession.sparkContext.defaultParallelism
        if n > cores * index_tagging.LOOKUP_BATCH or cores >= self.parallelism:
            return records
        return records.coalesce(cores)

    def _target_slices(self, counts: dict[str, int]) -> tuple[list, dict[str, list[str]]]:
        """The file slices records may go to, and the file ids the operation replaces."""
        op = self.cfg.operation
        if op == "insert_overwrite_table":
            return [], _file_ids(self._slices(None))
        if op == "insert_overwrite":
            return [], _file_ids(self._slices(counts))
        if op == "bulk_insert":
            return [], {}
        return self._slices(counts), {}

    def _place(self, records: DataFrame, tagged: DataFrame | None, counts: dict[str, int], slices: list,
               groups: dict[str, tuple]) -> DataFrame:
        """Updates stay in their file groups (`tagged`); inserts go to small files or new file
        groups as the workload profile plans them. The planned groups are added to `groups`."""
        op = self.cfg.operation
        if tagged is not None:
            updates = tagged.where(F.col("_fg").isNotNull())
            inserts = tagged.where(F.col("_fg").isNull()).drop("_fg")
            insert_counts = {r[0]: r[1] for r in inserts.groupBy("_hoodie_partition_path").count().collect()}
        else:
            updates, inserts, insert_counts = None, records, counts
        if updates is not None and not any(n > 0 for n in insert_counts.values()):
            return updates  # updates alone: nothing to place (no sizes read, no join planned)
        by_partition: dict[str, list] = {}
        for s in slices:
            if (s.partition_path, s.file_id) in self._clustering:
                continue  # (under pending clustering: takes no inserts)
            if not s.log_files:  # (merge-on-read: a slice with logs takes no inserts, as in Hudi)
                by_partition.setdefault(s.partition_path, []).append(s)
        buckets = workload_profile.plan(
            insert_counts, by_partition, max_file_size=self.cfg.max_file_size,
            small_file_limit=self.cfg.small_file_limit, avg_record_size=self._avg_record_size(),
            use_small_files=op in ("insert", "upsert"))
        for b in buckets:
            groups.setdefault(b.file_id, (b.partition_path, b.base_rel, b.base_instant))
            if b.base_rel is not None:
                self._merged.add(b.file_id)
        assigned = workload_profile.assign(self.spark, inserts, buckets)
        return assigned if updates is None else updates.unionByName(assigned)

    def _dedupe(self, records: DataFrame) -> DataFrame:
        """One record per (partition path, key), or per key with a record index: the one with the
        greatest precombine value."""
        pc = self.info.precombine_field
        names = records.columns
        struct = F.struct(*[_col(c) for c in names])
        keys = ["_hoodie_record_key"] if self.info.record_index else ["_hoodie_partition_path", "_hoodie_record_key"]
        if pc and pc.lower() in {c.lower() for c in names}:
            agg = F.max_by(struct, _col(next(c for c in names if c.lower() == pc.lower())))
        else:
            agg = F.first(struct)
        return records.repartition(self.parallelism, *keys).groupBy(*keys).agg(agg.alias("_r")).select("_r.*")

    def _distinct(self, records: DataFrame, keys: list[str]) -> DataFrame:
        return records.repartition(self.parallelism, *keys).dropDuplicates(keys)

    def _file_group_writer(self, groups: dict) -> FileGroupWriter:
        from pyspark.sql.pandas.types import to_arrow_schema

        data_schema = to_arrow_schema(self.schema, timezone="UTC")  # Spark timestamps: UTC instants
        return FileGroupWriter(metastore=self.metastore, db=self.db, table=self.name,
                               layout=self.info.layout(), instant=self.instant, data_schema=data_schema,
                               groups=groups, index=self.info.record_index,
                               stats_columns=indexed_columns(data_schema, self.info.properties),
                               security=self.task_security, appends=self._appends(groups),
                               avro_schema=self.schema_avro)

    def _write_file_groups(self, to_write: DataFrame, groups: dict) -> list[dict]:
        writer = self._file_group_writer(groups)
        cols = [_col(f.name) for f in self.schema.fields if f.name not in META_COLUMNS]
        final = to_write.select(*cols, "_hoodie_record_key", "_hoodie_partition_path", "_fg", "_delete")
        # each task writes its file groups one after the other, a run of them per marker call
        final = final.repartition(self.parallelism, "_fg").sortWithinPartitions("_fg")
        rows = final.mapInArrow(writer.write_sorted, STATS_DDL).collect()
        return [r.asDict() for r in rows]


    def _groups(self, slices) -> dict[str, tuple]:
        """`_base_files` of the slices; on a merge-on-read table also the slices of log files only,
        and each slice's last log version."""
        groups = _base_files(slices)
        if self.info.merge_on_read:
            for s in slices:
                groups.setdefault(s.file_id, (s.partition_path, None, s.base_instant))
                self._log_versions[s.file_id] = max([f.log_version or 0 for f in s.log_files], default=0)
        return groups

    def _appends(self, groups: dict[str, tuple]) -> dict[str, tuple[str, int]]:
        """Merge-on-read: file id -> (base instant, version of the new log file) of the existing file
        groups written, except the small files taking inserts (rewritten, as Hudi does)."""
        if not self.info.merge_on_read:
            return {}
        return {fid: (base_instant, self._log_versions.get(fid, 0) + 1)
                for fid, (_p, _rel, base_instant) in groups.items()
                if base_instant is not None and fid in self._log_versions and fid not in self._merged}


def _base_files(slices) -> dict[str, tuple]:
    """file id -> (partition path, relative path of its base file, its instant), of the slices."""
    groups: dict[str, tuple] = {}
    for s in slices:
        if s.base_file is not None:
            rel = f"{s.partition_path}/{s.base_file.name}" if s.partition_path else s.base_file.name
            groups[s.file_id] = (s.partition_path, rel, s.base_instant)
    return groups


def _arrow_counts(t: pa.Table, key_fields) -> dict[str, int]:
    """`_partition_counts` of a batch in the driver."""
    nulls = t.column("_hoodie_record_key").null_count
    if nulls:
        raise HudiWriteError(f"{nulls} record(s) have a null record key ({key_fields})")
    counts = pc.value_counts(t.column("_hoodie_partition_path"))
    return dict(zip(counts.field("values").to_pylist(), counts.field("counts").to_pylist()))


def _first_per_key(t: pa.Table, order: str | None) -> pa.Table:
    """One record per `_hoodie_record_key`: the one with the greatest `order` (nulls last), or any."""
    sort = [("_hoodie_record_key", "ascending")] + ([(order, "descending")] if order else [])
    perm = pc.sort_indices(t, sort_keys=sort)  # (nulls last)
    keys = t.column("_hoodie_record_key").take(perm)
    n = len(keys)
    if n < 2:
        return t
    first = pa.concat_arrays([pa.array([True]), pc.not_equal(keys.slice(1), keys.slice(0, n - 1)).combine_chunks()])
    return t.take(perm.filter(first))


def _split_groups(t: pa.Table, k: int) -> list[pa.Table]:
    """`t` (sorted by `_fg`) in at most `k` slices of about equal rows, none splitting a file group."""
    n = t.num_rows
    if k <= 1 or n < 2:
        return [t]
    fg = t.column("_fg").combine_chunks()
    starts = [0] + [i + 1 for i in pc.indices_nonzero(pc.not_equal(fg.slice(1), fg.slice(0, n - 1))).to_pylist()]
    cuts = sorted({starts[bisect.bisect_left(starts, n * j // k)] for j in range(k) if n * j // k <= starts[-1]})
    cuts = [c for c in cuts if c > 0]
    bounds = [0] + cuts + [n]
    return [t.slice(a, b - a) for a, b in zip(bounds, bounds[1:]) if b > a]


def _record_keys(rows: list[dict]) -> list:
    """FileGroupKeys of the file groups written (key blocks as the executors encoded them)."""
    out = []
    for r in rows:
        k = FileGroupKeys(r["partitionPath"], r["fileId"])
        k.inserted, k.updated, k.deleted = (None if r[c] is None else bytes(r[c])
                                            for c in ("insertedKeys", "updatedKeys", "deletedKeys"))
        out.append(k)
    return out


def _column_stats(rows: list[dict]) -> list:
    """FileColumnStats of the base files written (from their footers, as the executors read them)
    and of the log files whose table indexes some column (a delete-only log file: 0 values)."""
    return [BaseFileStats(r["partitionPath"], r["path"], r["fileSizeInBytes"], r["uncompressedSize"] or 0,
                          None if r["columnStats"] is None else bytes(r["columnStats"])) for r in rows
            if r["path"].endswith(BASE_FILE_SUFFIX) or r["columnStats"] is not None]


def _file_ids(slices) -> dict[str, list[str]]:
    """File ids of file slices per partition path."""
    out: dict[str, list[str]] = {}
    for s in slices:
        out.setdefault(s.partition_path, []).append(s.file_id)
    return out
