"""`register(spark)`: Spark 4 SQL over the pipeline's tables without Hudi's jars.

Tables the pipeline writes are registered as hive-sync does: Spark data source tables of provider
`hudi`. Hudi ships no Spark 4 bundle, so such a Spark refuses them. `register` installs a Python
data source (pyspark.sql.datasource, Spark 4) under that name: Spark then resolves every catalog
table of provider `hudi` to it, and `spark.table`, `SELECT ... WHERE` read through the server as
`pipeline.read` does.

* Planning (a Python worker of the driver): the filters Spark pushes down (its conjuncts on plain
  columns: comparisons, IN, IS [NOT] NULL, NOT, LIKE prefixes/suffixes/infixes; Spark 4.1's
  `pushFilters`, enabled by `spark.sql.python.filterPushdown.enabled`, which `register` sets) are
  translated as pipeline.predicate translates `pipeline.read`'s filters and sent to the server's
  `prune_file_slices` (partitions and base files skipped by partition values and column
  statistics). All of them stay with Spark too (it filters the rows): pruning is only ever
  conservative.
* Reading (executors): each task opens the base files it is given (pyarrow), as `pipeline.read`.
* The table: Spark hands a Python data source the catalog schema but neither the table's name nor
  its properties. The server writes the name into the first column's metadata of the Spark schema
  it registers (hudi_format.table_config.SPARK_TABLE_METADATA); a table registered before that
  can be read with the option `table` (`SELECT * FROM db.t WITH ('table' = 'db.t')` or
  `spark.read.format("hudi").option("table", "db.t").load()`).
* `SHOW PARTITIONS` and `DESCRIBE`: Spark answers them from the catalog only for tables it resolves
  the "v1" way, which cannot read a Python data source; `register` makes this session's `spark.sql`
  run those two statements with the Python source on Spark's v1 list (`spark.sql.sources.
  useV1SourceList`) and everything else as before (`sql_commands=False`: leave `spark.sql` alone).

Options of `spark.read.format("hudi")`: `table` ("db.name"), `as.of.instant` (time travel),
`hoodie.datasource.query.type=incremental` with `hoodie.datasource.read.begin.instanttime` /
`hoodie.datasource.read.end.instanttime` (records committed in (begin, end]).
"""

from __future__ import annotations

import datetime as dt
import json
import logging
import os
import re
from contextlib import contextmanager
from decimal import Decimal
from typing import TYPE_CHECKING

from pyspark.sql.datasource import DataSource, DataSourceReader, InputPartition
from pyspark.sql.types import StructField, StructType

from hudi_format import config_keys
from hudi_format.table_config import SPARK_TABLE_METADATA, SPARK_TABLE_PATH_METADATA

from . import predicate as P

if TYPE_CHECKING:
    from client import Security

# The Python workers that create the data source and run the read tasks import this module: the
# metastore client (Thrift) is imported only where the server is asked (schema, partitions).
log = logging.getLogger(__name__)

NAME = "hudi"
TABLE_OPTION = "table"
AS_OF_OPTION = "as.of.instant"
QUERY_TYPE_OPTION = config_keys.QUERY_TYPE
BEGIN_OPTION = config_keys.READ_BEGIN_INSTANT
END_OPTION = config_keys.READ_END_INSTANT
PARTITIONS_OPTION = "partitions"  # read tasks: one per base file, at most this many (default 256)
PUSHDOWN_CONF = "spark.sql.python.filterPushdown.enabled"
V1_SOURCES_CONF = "spark.sql.sources.useV1SourceList"
#: what Spark's v1 list names a Python data source by (its JVM class, lower case)
PYTHON_SOURCE_CLASS = "org.apache.spark.sql.execution.datasources.v2.python.pythondatasourcev2"


class HudiDataSource(DataSource):
    """The `hudi` data source; `register` makes a subclass that knows the metastore."""

    metastore: str = "thrift://127.0.0.1:9083"  # pipeline.writer.DEFAULT_METASTORE
    security: Security | None = None
    plan_log: str | None = None  # a file each planned read appends one JSON line to

    @classmethod
    def name(cls) -> str:
        return NAME

    def _table(self, schema: StructType | None = None) -> str:
        table = self.options.get(TABLE_OPTION)
        if not table and schema is not None and schema.fields:
            table = (schema.fields[0].metadata or {}).get(SPARK_TABLE_METADATA)
        if not table:
            raise ValueError(f"the {NAME} data source needs the table: option {TABLE_OPTION!r} "
                             "('db.name'), or a catalog table the metastore registered with its name")
        return table

    def schema(self) -> StructType:
        """The schema of `spark.read.format("hudi").option("table", ...)`: `pipeline.read`'s."""
        from client import HudiCatalog

        from .schema import with_meta_columns
        from .table import latest_schema, load, split_name

        table = self._table()
        with HudiCatalog(self.metastore, security=self.security) as client:
            info = load(client, *split_name(table))
            schema = latest_schema(client, info, self.options.get(AS_OF_OPTION) or None)
        if schema is None:
            raise ValueError(f"{table} has no schema yet (never written)")
        out = with_meta_columns(schema)
        first = out.fields[0]
        fields = [StructField(first.name, first.dataType, first.nullable, {SPARK_TABLE_METADATA: table})]
        return StructType(fields + out.fields[1:])

    def reader(self, schema: StructType) -> HudiReader:
        return HudiReader(self, schema)


class FilesPartition(InputPartition):
    """A read task: the full paths of the base files it opens, and an incremental read's commit
    range (since, until]. (The read function reaches the executors pickled before `partitions()`
    runs: what the plan decides travels with the partitions.)"""

    def __init__(self, paths: list[str], commit_range: tuple | None = None, logs: list[list[str]] | None = None,
                 ordering_field: str | None = None, as_of: str | None = None):
        super().__init__(paths)
        self.as_of = as_of
        self.paths, self.commit_range = paths, commit_range
        self.logs = logs or [[] for _ in paths]  # each base file's log files (merge-on-read)
        self.ordering_field = ordering_field


class HudiReader(DataSourceReader):
    def __init__(self, source: HudiDataSource, schema: StructType):
        options = source.options
        self.table = source._table(schema)
        named = (schema.fields[0].metadata or {}) if schema.fields else {}
        # the base path the catalog schema names with the table (None: given by the option)
        self.base_path = named.get(SPARK_TABLE_PATH_METADATA) if named.get(SPARK_TABLE_METADATA) == self.table \
            else None
        self.metastore, self.security, self.plan_log = source.metastore, source.security, source.plan_log
        self.schema = schema
        self.as_of = options.get(AS_OF_OPTION) or None
        incremental = (options.get(QUERY_TYPE_OPTION) or "snapshot").lower() == "incremental"
        self.since = (options.get(BEGIN_OPTION) or None) if incremental else None
        self.until = (options.get(END_OPTION) or None) if incremental else None
        if incremental and not self.since:
            raise ValueError(f"an incremental read needs {BEGIN_OPTION}")
        self.max_partitions = int(options.get(PARTITIONS_OPTION) or 256)
        self.nodes: list = []  # the pushed filters as pipeline.predicate trees

    def pushFilters(self, filters):
        """Keeps what the server can prune by; every filter stays with Spark (returned)."""
        for f in filters:
            node = source_filter_node(f)
            if node is not None:
                self.nodes.append(node)
            yield f

    def partitions(self):
        from client import HudiCatalog

        from .reader import plan

        tree = None
        if self.nodes:
            tree = self.nodes[0] if len(self.nodes) == 1 else P.Bool("and", tuple(self.nodes))
        with HudiCatalog(self.metastore, security=self.security) as client:
            p = plan(client, self.table, as_of=self.as_of, since=self.since, until=self.until, filters=tree)
        if self.base_path and p.info.base_path.rstrip("/") != self.base_path.rstrip("/"):
            raise ValueError(f"the catalog table's schema names {self.table} at {self.base_path}, but {self.table} is "
                             f"at {p.info.base_path}: renamed since? pipeline.datasource.name_table(<its name>) "
                             f"names it again, or give the option {TABLE_OPTION!r}")
        paths = p.paths
        log.info("%s data source %s: %d base files, %d skipped by column statistics, %d partitions skipped",
                 NAME, self.table, len(paths), p.files_skipped, p.partitions_skipped)
        if self.plan_log:
            entry = {"table": self.table, "pushed": [repr(n) for n in self.nodes],
                     "files": p.files, "files_skipped": p.files_skipped,
                     "partitions_skipped": p.partitions_skipped}
            with open(self.plan_log, "a") as f:
                f.write(json.dumps(entry) + "\n")
        n = max(1, min(len(paths), self.max_partitions))
        return [FilesPartition(paths[i::n], p.commit_range, p.logs[i::n], p.info.precombine_field, p.as_of)
                for i in range(n)]

    def read(self, partition):
        import pyarrow as pa
        import pyarrow.compute as pc
        from pyspark.sql.pandas.types import to_arrow_schema

        from .base_file import conform, read_base_file, with_meta
        from .merge_on_read import read_slice
        from .schema import META_COLUMNS

        arrow_schema = to_arrow_schema(self.schema, timezone="UTC")
        data_schema = None
        for path, logs in zip(partition.paths, partition.logs):
            if logs:  # merged in the files' schema: the catalog's lacks the meta columns
                if data_schema is None:
                    data_schema = with_meta(pa.schema([f for f in arrow_schema if f.name not in META_COLUMNS]))
                t = read_slice(path or None, logs, data_schema, partition.ordering_field, partition.as_of)
            else:
                t = read_base_file(path)
            target = {f.name.lower(): f.name for f in arrow_schema}
            t = t.rename_columns([target.get(c.lower(), c) for c in t.column_names])
            t = conform(t, arrow_schema)
            if partition.commit_range is not None and "_hoodie_commit_time" in t.column_names:
                lo, hi = partition.commit_range
                col = t.column("_hoodie_commit_time")
                if lo:
                    t = t.filter(pc.greater(col, lo))
                    col = t.column("_hoodie_commit_time")
                if hi:
                    t = t.filter(pc.less_equal(col, hi))
            yield from t.to_batches()


# --- pushed filters -> pipeline.predicate trees --------------------------------------------------


def _lit(value) -> P.Lit:
    if isinstance(value, dt.datetime) and value.tzinfo is None:
        return P.Lit("other")  # a timestamp_ntz value: not translated (never pruned by)
    if isinstance(value, (list, tuple, dict, bytes, bytearray)):
        return P.Lit("other")
    if isinstance(value, (str, bool, int, float, Decimal, dt.date, dt.datetime)) or value is None:
        return P.python_lit(value)
    return P.Lit("other")


def _like_escape(text: str) -> str:
    return re.sub(r"([\\%_])", r"\\\1", text)


def source_filter_node(f):
    """The pipeline.predicate tree of a pushed pyspark.sql.datasource Filter; None for a filter
    on a nested field (never pruned by)."""
    from pyspark.sql import datasource as D

    if isinstance(f, D.Not):
        child = source_filter_node(f.child)
        return None if child is None else P.Not(child)
    attribute = getattr(f, "attribute", None)
    if not attribute or len(attribute) != 1:
        return None
    col = attribute[0].lower()
    value = getattr(f, "value", None)
    ops = {D.EqualTo: "=", D.GreaterThan: ">", D.GreaterThanOrEqual: ">=", D.LessThan: "<",
           D.LessThanOrEqual: "<="}
    for cls, op in ops.items():
        if type(f) is cls:
            lit = _lit(value)
            return P.Opaque() if lit.kind == "other" else P.Cmp(col, op, lit)
    if isinstance(f, D.In):
        lits = tuple(_lit(v) for v in (value or ()))
        return P.Opaque() if any(lit.kind == "other" for lit in lits) else P.In(col, lits)
    if isinstance(f, D.IsNull):
        return P.IsNull(col)
    if isinstance(f, D.IsNotNull):
        return P.Not(P.IsNull(col))
    patterns = {D.StringStartsWith: "{}%", D.StringEndsWith: "%{}", D.StringContains: "%{}%"}
    for cls, shape in patterns.items():
        if type(f) is cls and isinstance(value, str):
            return P.Like(col, P.Lit("string", shape.format(_like_escape(value))), "\\")
    return P.Opaque()  # EqualNullSafe, ...


# --- the table's name in its Spark schema ----------------------------------------------------------

_SCHEMA_PARTS = "spark.sql.sources.schema.numParts"
_SCHEMA_PART = "spark.sql.sources.schema.part."


def named_schema_properties(params: dict[str, str], table: str, base_path: str | None = None) -> dict[str, str] | None:
    """`params` (an HMS table's) with `table` (and `base_path`) in the metadata of its Spark
    schema's first field; None when there is no Spark schema or it names them already."""
    n = int(params.get(_SCHEMA_PARTS) or 0)
    if n <= 0:
        return None
    schema = json.loads("".join(params.get(f"{_SCHEMA_PART}{i}", "") for i in range(n)))
    fields = schema.get("fields") or []
    if not fields:
        return None
    have = fields[0].get("metadata") or {}
    want = {SPARK_TABLE_METADATA: table, **({SPARK_TABLE_PATH_METADATA: base_path} if base_path else {})}
    if all(have.get(k) == v for k, v in want.items()):
        return None
    fields[0]["metadata"] = {**have, **want}
    text = json.dumps(schema, separators=(",", ":"))
    parts = [text[i:i + 4000] for i in range(0, len(text), 4000)]
    out = {k: v for k, v in params.items() if not k.startswith(_SCHEMA_PART)}
    out[_SCHEMA_PARTS] = str(len(parts))
    out.update({f"{_SCHEMA_PART}{i}": p for i, p in enumerate(parts)})
    return out


def name_table(table: str, metastore: str = HudiDataSource.metastore, security: Security | None = None) -> bool:
    """Writes "db.name" into the Spark schema of a table registered before the server did so (or
    renamed since), which the `hudi` data source then finds without the `table` option; True when
    the table was altered."""
    from client import HudiCatalog

    from .table import split_name

    db, name = split_name(table)
    with HudiCatalog(metastore, security=security) as client:
        t = client.get_table(db, name)
        base_path = client.get_hudi_table(db, name).base_path
        params = named_schema_properties(dict(t.parameters), f"{db}.{name}", base_path)
        if params is None:
            return False
        client.alter_table_columns(db, name, t.columns, params)
        return True


# --- registration ---------------------------------------------------------------------------------


def _session_metastore(spark) -> str:
    uris = None
    try:
        uris = spark.conf.get("spark.hadoop.hive.metastore.uris", None)
    except Exception:  # noqa: BLE001 - a conf the session may not know
        uris = None
    if not uris:
        try:
            uris = spark.sparkContext._jsc.hadoopConfiguration().get("hive.metastore.uris")
        except Exception:  # noqa: BLE001 - no JVM context (Spark Connect)
            uris = None
    return (uris or HudiDataSource.metastore).split(",")[0].strip()


def register(spark, metastore: str | None = None, security: Security | None = None,
             plan_log: str | os.PathLike | None = None, sql_commands: bool = True) -> type[HudiDataSource]:
    """Registers the `hudi` data source on `spark` (see the module doc). `metastore`: the server's
    URI (default: the session's `hive.metastore.uris`); `security`: how the planning worker logs in
    (client Security); `plan_log`: a file each planned read appends a JSON line to (table, pushed
    filters, base files, files and partitions skipped). Returns the registered class."""
    attrs = {"metastore": metastore or _session_metastore(spark), "security": security,
             "plan_log": os.fspath(plan_log) if plan_log else None}
    # a class made here is pickled by value: the planning worker gets these attributes with it
    cls = type("RegisteredHudiDataSource", (HudiDataSource,), attrs)
    spark.dataSource.register(cls)
    spark.conf.set(PUSHDOWN_CONF, "true")
    if sql_commands:
        route_catalog_commands(spark)
    return cls


_CATALOG_COMMAND = re.compile(
    r"\s*(?:SHOW\s+PARTITIONS\s|(?:DESC|DESCRIBE)\s+(?:TABLE\s+)?(?:EXTENDED\s+|FORMATTED\s+)?"
    r"(?!(?:QUERY|FUNCTION|DATABASE|SCHEMA|NAMESPACE|CATALOG|SELECT|WITH|FROM|VALUES|TABLE)\b)[`\w])",
    re.I)


def is_catalog_command(text: str) -> bool:
    """SHOW PARTITIONS or DESCRIBE of a table (not of a query, function or namespace)."""
    return bool(_CATALOG_COMMAND.match(text))


@contextmanager
def v1_python_sources(spark):
    """Spark resolves catalog tables of Python data sources the v1 way meanwhile."""
    before = spark.conf.get(V1_SOURCES_CONF)
    listed = [s.strip() for s in (before or "").split(",") if s.strip()]
    if PYTHON_SOURCE_CLASS in listed:
        yield
        return
    spark.conf.set(V1_SOURCES_CONF, ",".join(listed + [PYTHON_SOURCE_CLASS]))
    try:
        yield
    finally:
        spark.conf.set(V1_SOURCES_CONF, before)


def route_catalog_commands(spark) -> None:
    """This session's `spark.sql` runs SHOW PARTITIONS and DESCRIBE of a table with Python data
    sources on Spark's v1 list (Spark runs them eagerly: the list is restored when it returns)."""
    original = spark.sql
    if getattr(original, "_hudi_routed", False):
        return

    def sql(sqlQuery, args=None, **kwargs):
        if isinstance(sqlQuery, str) and is_catalog_command(sqlQuery):
            with v1_python_sources(spark):
                return original(sqlQuery, args, **kwargs)
        return original(sqlQuery, args, **kwargs)

    sql._hudi_routed = True  # type: ignore[attr-defined]
    sql.__doc__ = original.__doc__
    spark.sql = sql
