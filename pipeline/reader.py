"""`read(spark, "db.tbl", ...)`: a Hudi table as a DataFrame, planned from the metastore's file
slices (no storage listing: executors open exactly the base and log files the server names).

* snapshot: the latest file slices (merge-on-read: each base file merged with its log files,
  pipeline/merge_on_read.py); `query_type="read_optimized"`: base files only; `as_of`: the slices
  as of the latest instant completed at or before it (time travel);
* incremental (`since` and/or `until`): records written by instants in (since, until], read from the
  file groups those instants wrote, as of `until`;
* `filters`: a Spark SQL filter string (Spark's meaning: `LIKE` with `%` and `_`, its literals
  and casts), or (column, op, value) tuples ANDed. Spark applies it to the rows; the server prunes
  with its translation (pipeline.predicate: exact where the server's Hive filter means the same,
  else conservative, never dropping a partition or file that could match). A snapshot read asks
  `prune_file_slices`, which skips partitions by the partition columns and base files by their
  column statistics (RFC-27); as-of and incremental reads prune partitions only
  (`get_hudi_partitions`). `plan(...).files_skipped` (and the log) says how many files were skipped.
"""

from __future__ import annotations

import logging
import operator

from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F

from client import HudiCatalog, Security, ServerError

from .base_file import read_base_file, with_meta
from .merge_on_read import read_slice
from .predicate import server_filter
from .schema import with_meta_columns
from .storage import relative_path
from .table import TableInfo, latest_schema, load, split_name

log = logging.getLogger(__name__)

QUERY_TYPES = ("snapshot", "read_optimized")


class _SliceReader:
    """Reads file slices given by full paths (as the read plan has them): a base file, merged with
    the slice's log files when it has any."""

    def __init__(self, arrow_schema, ordering_field: str | None = None, as_of: str | None = None):
        self.arrow_schema = arrow_schema
        self.ordering_field = ordering_field
        self.as_of = as_of  # log blocks of later instants are skipped

    def __call__(self, batches):
        for batch in batches:
            for path, logs in zip(batch.column(0).to_pylist(), batch.column(1).to_pylist()):
                if logs:
                    t = read_slice(path or None, logs, self.arrow_schema, self.ordering_field, self.as_of)
                else:
                    t = read_base_file(path, self.arrow_schema)
                yield from t.to_batches()


def partition_filter(filters, key_types: dict[str, str]) -> str | None:
    """The Hive filter the server prunes partitions with for `filters` (a Spark SQL string or
    tuples) over the partition keys of `key_types` (leaves on other columns count as TRUE); see
    pipeline.predicate."""
    return server_filter(filters, key_types, key_types)


_COMPARISONS = {"=": operator.eq, "==": operator.eq, "!=": operator.ne, "<>": operator.ne,
                "<": operator.lt, "<=": operator.le, ">": operator.gt, ">=": operator.ge}


def _row_filter(filters):
    if filters is None:
        return None
    if isinstance(filters, str):
        return F.expr(filters)
    cond = None
    for col, op, value in filters:
        c = F.col(f"`{col}`")
        op_l = str(op).strip().lower()
        if op_l == "in":
            e = c.isin(list(value))
        elif op_l == "not in":
            e = ~c.isin(list(value))
        else:
            e = _COMPARISONS[op_l](c, value)
        cond = e if cond is None else cond & e
    return cond


def _completed_at_or_before(client, info: TableInfo, ts: str | None) -> str | None:
    """The latest completed instant at or before `ts` (any action); None if there is none."""
    done = client.list_instants(info.db, info.name, states=["COMPLETED"], max_ts=ts)
    return done[-1].ts if done else None


class ReadPlan:
    """What a read opens: file slices (the base file's relative path, and full paths as the server
    answers them: the base file's, "" for a slice of log files only, and the log files'), the schema,
    and the row conditions."""

    def __init__(self, info: TableInfo, schema, bases: list[tuple[str, str, list[str]]], commit_range: tuple | None,
                 files_skipped: int = 0, partitions_skipped: int = 0, as_of: str | None = None):
        bases = sorted(bases)
        self.as_of = as_of  # the instant read as of (time travel, incremental): later log blocks are skipped
        self.info, self.schema, self.commit_range = info, schema, commit_range
        self.files = [b[0] for b in bases]  # <partition path>/<file name>
        self.paths = [b[1] for b in bases]  # where the files are (RFC-60 storage strategy)
        self.logs = [b[2] for b in bases]  # each slice's log files, in order (merge-on-read)
        self.files_skipped = files_skipped  # base files skipped in the partitions read
        self.partitions_skipped = partitions_skipped  # partitions not read at all


def plan(client: HudiCatalog, table: str, as_of: str | None = None, since: str | None = None,
         until: str | None = None, filters=None, time_zone: str | None = None,
         escaped_literals: bool = False, query_type: str = "snapshot") -> ReadPlan:
    """`time_zone` (Spark's session time zone, UTC when None) and `escaped_literals` (Spark's
    spark.sql.parser.escapedStringLiterals) say how Spark reads the filter string's literals.
    `query_type`: snapshot, or read_optimized (base files only: merge-on-read logs are not read)."""
    if query_type not in QUERY_TYPES:
        raise ValueError(f"query_type must be one of {', '.join(QUERY_TYPES)}, not {query_type!r}")
    out = _plan(client, table, as_of, since, until, filters, time_zone, escaped_literals)
    if query_type == "read_optimized":
        kept = [(f, p) for f, p in zip(out.files, out.paths) if p]
        out.files, out.paths, out.logs = [f for f, _ in kept], [p for _, p in kept], [[] for _ in kept]
    return out


def _plan(client: HudiCatalog, table: str, as_of, since, until, filters, time_zone, escaped_literals) -> ReadPlan:
    db, name = split_name(table)
    info = load(client, db, name)
    if as_of and (since or until):
        raise ValueError("as_of (time travel) and since/until (incremental) do not combine")
    if filters is not None and not (as_of or since or until):
        pruned = _pruned_plan(client, info, filters, time_zone, escaped_literals)
        if pruned is not None:
            return pruned
    partitions = None
    if filters is not None and info.partition_fields:
        key_types = {k.name.lower(): k.type for k in client.get_table(db, name).partition_keys}
        text = server_filter(filters, key_types, key_types, time_zone, escaped_literals, info.url_encode)
        if text:
            try:
                partitions = client.get_hudi_partitions(db, name, text)
            except ServerError as exc:  # never expected: the filter is translated for the server
                log.warning("read %s: no partition pruning (%s)", name, exc.message)
    incremental = since is not None or until is not None
    view = as_of if as_of else until
    at = _completed_at_or_before(client, info, view) if view else None
    schema = latest_schema(client, info, at) if (view is None or at) else None
    if view and at is None:  # nothing had completed by then
        return ReadPlan(info, schema or latest_schema(client, info), [], None)
    if partitions is not None and not partitions:
        slices = []
    else:
        slices = client.get_latest_file_slices(db, name, partitions, at)
    if incremental:
        touched = {(f.partition_path, f.file_id) for f in client.get_files_changed(db, name, since, at)}
        slices = [s for s in slices if (s.partition_path, s.file_id) in touched]
    return ReadPlan(info, schema, _base_files(info, slices), (since, at) if incremental else None, as_of=at)


def _base_files(info: TableInfo, slices) -> list[tuple[str, str, list[str]]]:
    """(relative path, full path) of the slices' base files, with their log files' full paths (a
    slice of log files only: the first log file's relative path and ""). The server answers full
    paths; only for a custom storage strategy (which the server never loads) the client's strategy
    maps them."""
    out = []
    layout: list = []

    def location(f) -> tuple[str, str]:
        rel = relative_path(s.partition_path or "", f.name)
        if f.path:
            return rel, f.path
        if not layout:
            layout.append(info.layout())
        return rel, layout[0].location(rel)

    for s in slices:
        logs = [location(f)[1] for f in s.log_files]
        if s.base_file is not None:
            out.append((*location(s.base_file), logs))
        elif logs:
            out.append((location(s.log_files[0])[0], "", logs))
    return out


def read(spark: SparkSession, table: str, metastore: str = "thrift://127.0.0.1:9083", as_of: str | None = None,
         since: str | None = None, until: str | None = None, filters=None,
         security: Security | None = None, query_type: str = "snapshot") -> DataFrame:
    """The table's rows (with the `_hoodie_*` meta columns) as a DataFrame; see the module doc.
    `security`: how the driver logs in to the metastore (client Security; executors do not call it).
    `query_type`: snapshot, or read_optimized (merge-on-read tables: base files only)."""
    from pyspark.sql.pandas.types import to_arrow_schema

    conf = spark.conf  # both have defaults (the session's time zone: the JVM's)
    time_zone = conf.get("spark.sql.session.timeZone")
    escaped = str(conf.get("spark.sql.parser.escapedStringLiterals")).lower() == "true"
    with HudiCatalog(metastore, security=security) as client:
        p = plan(client, table, as_of=as_of, since=since, until=until, filters=filters, time_zone=time_zone,
                 escaped_literals=escaped, query_type=query_type)
    if filters is not None:
        log.info("read %s: %d base files, %d skipped by column statistics, %d partitions skipped", table,
                 len(p.files), p.files_skipped, p.partitions_skipped)
    if p.schema is None:
        raise ValueError(f"{table} has no schema yet (never written)")
    schema = with_meta_columns(p.schema)
    if not p.files:
        df = spark.createDataFrame([], schema)
    else:
        arrow_schema = with_meta(to_arrow_schema(p.schema, timezone="UTC"))  # as the writer stores them
        paths = spark.createDataFrame(list(zip(p.paths, p.logs)), "path string, logs array<string>")
        n = max(1, min(len(p.paths), spark.sparkContext.defaultParallelism * 2))
        df = paths.repartition(n).mapInArrow(_SliceReader(arrow_schema, p.info.precombine_field, p.as_of), schema)
    if p.commit_range is not None:
        lo, hi = p.commit_range
        if lo:
            df = df.where(F.col("_hoodie_commit_time") > F.lit(lo))
        if hi:
            df = df.where(F.col("_hoodie_commit_time") <= F.lit(hi))
    cond = _row_filter(filters)
    return df if cond is None else df.where(cond)


def _pruned_plan(client: HudiCatalog, info: TableInfo, filters, time_zone: str | None,
                 escaped_literals: bool) -> ReadPlan | None:
    """A snapshot read's plan from the server's data skipping (partition and column statistics) of
    the filter translated for it (pipeline.predicate); None if the server refuses it anyway: the
    read then prunes by partition columns only."""
    table = client.get_table(info.db, info.name)
    types = {c.name.lower(): c.type for c in table.columns + table.partition_keys}
    text = server_filter(filters, types, {k.name.lower() for k in table.partition_keys}, time_zone, escaped_literals,
                         info.url_encode)
    try:
        pruned = client.prune_file_slices(info.db, info.name, text or "")
    except ServerError as exc:
        log.info("read %s: no data skipping (%s)", info.name, exc.message)
        return None
    return ReadPlan(info, latest_schema(client, info), _base_files(info, pruned.slices), None,
                    pruned.files_skipped, pruned.partitions_skipped)
