"""Hudi base files: naming and Parquet reading/writing (run on executors, with pyarrow).

A base file is `<fileId>_<writeToken>_<instantTime>.parquet` in its partition's folder; the write
token is `<taskPartitionId>-<stageId>-<taskAttempt>` of the task that wrote it. Its columns are the
five `_hoodie_*` meta columns, then the table's columns.
"""

from __future__ import annotations

import uuid

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from .schema import META_COLUMNS
from .storage import locate

META_FIELDS = [pa.field(m, pa.string()) for m in META_COLUMNS]
SPARK_VERSION_KEY = b"org.apache.spark.version"


def _spark_version() -> bytes:
    import pyspark

    return pyspark.__version__.encode()


def new_file_id() -> str:
    return f"{uuid.uuid4()}-0"


def write_token() -> str:
    from pyspark import TaskContext

    ctx = TaskContext.get()
    if ctx is None:
        return "0-0-0"
    return f"{ctx.partitionId()}-{ctx.stageId()}-{ctx.attemptNumber()}"


def base_file_name(file_id: str, token: str, instant: str) -> str:
    return f"{file_id}_{token}_{instant}.parquet"


def with_meta(data_schema: pa.Schema) -> pa.Schema:
    return pa.schema(META_FIELDS + [f for f in data_schema if f.name not in META_COLUMNS])


def conform(table: pa.Table, schema: pa.Schema) -> pa.Table:
    """`table` with exactly the fields of `schema`, in order: missing ones null, types cast
    (widening), extra ones dropped."""
    cols = []
    names = set(table.column_names)
    for f in schema:
        if f.name in names:
            col = table.column(f.name)
            cols.append(col if col.type == f.type else col.cast(f.type))
        else:
            cols.append(pa.nulls(table.num_rows, f.type))
    return pa.Table.from_arrays(cols, schema=schema)


def read_base_file(location: str, schema: pa.Schema | None = None,
                   columns: list[str] | None = None) -> pa.Table:
    fs, path = locate(location)
    with fs.open_input_file(path) as f:  # one open: no dataset discovery (on S3: half the requests)
        t = pq.read_table(f, columns=columns)
    return conform(t, schema) if schema is not None else t


def write_base_file(location: str, table: pa.Table) -> int:
    """Write the Parquet file; its size in bytes. The footer names the Spark version that wrote it
    (`org.apache.spark.version`, as Spark's own writer does): Spark readers then take its dates and
    timestamps as proleptic Gregorian, which pyarrow writes, instead of refusing those before 1582."""
    fs, full = locate(location)
    parent = full.rsplit("/", 1)[0]
    fs.create_dir(parent, recursive=True)
    table = table.replace_schema_metadata({**(table.schema.metadata or {}), SPARK_VERSION_KEY: _spark_version()})
    pq.write_table(table, full, filesystem=fs, compression="snappy")
    return fs.get_file_info(full).size


def read_footer(location: str) -> pq.FileMetaData:
    """The Parquet footer of a file (its statistics; no data pages are read)."""
    fs, path = locate(location)
    with fs.open_input_file(path) as f:
        return pq.read_metadata(f)


def delete_file(location: str) -> None:
    fs, path = locate(location)
    try:
        fs.delete_file(path)
    except FileNotFoundError:
        pass


def keys_not_in(table: pa.Table, keys: pa.Array) -> pa.Table:
    if len(keys) == 0 or table.num_rows == 0:
        return table
    return table.filter(pc.invert(pc.is_in(table.column("_hoodie_record_key"), value_set=keys)))


def count_in(table: pa.Table, keys: pa.Array) -> int:
    if len(keys) == 0 or table.num_rows == 0:
        return 0
    return int(pc.sum(pc.is_in(table.column("_hoodie_record_key"), value_set=keys)).as_py() or 0)
