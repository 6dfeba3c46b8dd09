"""Column statistics (RFC-27) of a table import-hudi adopts, from its base files' Parquet footers
and its log files' blocks.

The server names the latest slices' base files and log files that have no statistics
(`list_files_without_column_stats` with log files); base files' footers are read at most `workers`
at a time (float columns' values too: Parquet bounds leave NaN out, so a column holding NaN gets no
bounds), log files whole, their data blocks' records counted as Hudi's append handle counts them
(hudi_format/log_stats.py: a log file with a block not read there, e.g. a rollback, gets none and
is not sent; one of deletes alone takes its indexed columns from its slice's base file). The
statistics go back in batches of `batch` files (`load_column_stats`, one transaction each: the
partitions' aggregates and Hive statistics follow). Bounded (one batch in memory; a log file is
read whole), parallel, and resumable: a rerun reads only the files still missing, and the server
keeps what a file already has.
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

    paths = client.list_files_without_column_stats(db, table, 0, log_files=True)
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
    bases = _slice_bases(client, db, table, paths)

    def one(rel: str) -> BaseFileStats | None:
        if not _is_log(rel):
            return _file_stats(fs, locate(rel), rel, properties)
        base = bases.get(_group(rel))
        return _log_file_stats(fs, locate(rel), rel, properties, None if base is None else locate(base))

    with ThreadPoolExecutor(max_workers=max(1, workers)) as pool:
        for i in range(0, len(paths), batch):
            chunk = paths[i:i + batch]
            stats = [st for st in pool.map(one, chunk) if st is not None]
            stored += client.load_column_stats(db, table, stats) if stats else 0
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


def _is_log(rel: str) -> bool:
    from hudi_format.file_slice import parse_file_name

    return parse_file_name(rel.rsplit("/", 1)[-1])[2]


def _group(rel: str) -> tuple[str, str]:
    from hudi_format.file_slice import parse_file_name

    partition = rel.rsplit("/", 1)[0] if "/" in rel else ""
    return partition, parse_file_name(rel.rsplit("/", 1)[-1])[0]


def _slice_bases(client: HudiCatalog, db: str, table: str, paths: list[str]) -> dict[tuple[str, str], str]:
    """(partition, file id) -> the relative path of the latest slice's base file, of the groups
    whose log files need statistics (a log file of deletes alone takes its columns from it)."""
    groups = {_group(rel) for rel in paths if _is_log(rel)}
    if not groups:
        return {}
    out = {}
    for s in client.get_latest_file_slices(db, table, sorted({p for p, _ in groups})):
        if (s.partition_path, s.file_id) in groups and s.base_file is not None:
            name = s.base_file.name
            out[(s.partition_path, s.file_id)] = f"{s.partition_path}/{name}" if s.partition_path else name
    return out


def _log_file_stats(fs, location: str, rel: str, properties: dict[str, str],
                    base_location: str | None) -> BaseFileStats | None:
    """A log file's statistics from its blocks (None when a block is not read: it keeps none)."""
    import pyarrow.parquet as pq

    from hudi_format.log_stats import encoded_log_file_stats

    with fs.open(fs._strip_protocol(location), "rb") as f:
        data = f.read()
    schema = None
    if base_location is not None:
        with fs.open(fs._strip_protocol(base_location), "rb") as f:
            schema = pq.read_schema(f)
    blob = encoded_log_file_stats(data, properties, schema, rel)
    if blob is None:
        return None
    partition = rel.rsplit("/", 1)[0] if "/" in rel else ""
    return BaseFileStats(partition, rel, len(data), len(data), blob)
