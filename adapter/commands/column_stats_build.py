"""Column statistics (RFC-27) of a table import-hudi adopts, from its base files' Parquet footers.

The server names the latest base files that have no statistics (`list_files_without_column_stats`);
their footers are read at most `workers` at a time (float columns' values too: Parquet bounds leave
NaN out, so a column holding NaN gets no bounds), and the statistics go back in batches of `batch`
files (`load_column_stats`, one transaction each: the partitions' aggregates and Hive statistics
follow). Bounded (one batch in memory), parallel, and resumable: a rerun reads only the files still
missing, and the server keeps what a file already has.
"""

from __future__ import annotations

from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor

from client import BaseFileStats, HudiCatalog

WORKERS = 8
BATCH = 200


def build_column_stats(client: HudiCatalog, db: str, table: str, base_path: str,
                       workers: int = WORKERS, batch: int = BATCH,
                       progress: Callable[[int, int], None] | None = None) -> tuple[int, str | None]:
    """(files whose statistics were stored, why none could be computed or None)."""
    try:
        import pyarrow  # noqa: F401 - the footers are read with it (hudi-metastore[pipeline])
    except ImportError:
        return 0, "pyarrow is not installed (pip install 'hudi-metastore[pipeline]')"
    import fsspec

    from hudi_format.config_keys import STORAGE_PATH, STORAGE_STRATEGY_CLASS
    from hudi_format.storage_strategy import file_location, load_strategy

    paths = client.list_files_without_column_stats(db, table, 0)
    if not paths:
        return 0, None
    properties = dict(client.get_hudi_table(db, table).properties)
    # where the data files are: the table's storage strategy (RFC-60; the table path by default)
    strategy = load_strategy(properties.get(STORAGE_STRATEGY_CLASS), base_path, properties.get(STORAGE_PATH), table)
    stored = 0

    def locate(rel: str) -> str:
        partition, _, name = rel.rpartition("/")
        return file_location(strategy, partition, name)

    fs = fsspec.core.url_to_fs(base_path)[0]
    with ThreadPoolExecutor(max_workers=max(1, workers)) as pool:
        for i in range(0, len(paths), batch):
            chunk = paths[i:i + batch]
            stats = list(pool.map(lambda rel: _file_stats(fs, locate(rel), rel, properties), chunk))
            stored += client.load_column_stats(db, table, stats)
            if progress is not None:
                progress(min(i + batch, len(paths)), len(paths))
    return stored, None


def _file_stats(fs, location: str, rel: str, properties: dict[str, str]) -> BaseFileStats:
    import pyarrow as pa
    import pyarrow.parquet as pq

    from hudi_format.parquet_stats import encode, footer_stats, indexed_columns, uncompressed_size

    path = fs._strip_protocol(location)
    with fs.open(path, "rb") as f:
        meta = pq.read_metadata(f)
        schema = meta.schema.to_arrow_schema()
        columns = indexed_columns(schema, properties)
        floats = [c for c in columns if pa.types.is_floating(schema.field(c).type)]
        values = pq.read_table(f, columns=floats) if floats else pa.table({})
    size = fs.size(path)
    partition = rel.rsplit("/", 1)[0] if "/" in rel else ""
    return BaseFileStats(partition, rel, int(size), uncompressed_size(meta),
                         encode(footer_stats(meta, values, columns)))
