"""Helpers of the pipeline tests: reading a table three ways (our reader, hudi-rs on storage, the
server's file slices) and looking at storage."""

from __future__ import annotations

import os

import pyarrow as pa

from client import HudiMetastoreClient
from store.storage.warehouse import local_path

DATA_FILE_SUFFIX = ".parquet"


def uri(port: int) -> str:
    return f"thrift://127.0.0.1:{port}"


def base_dir(port: int, table: str) -> str:
    db, name = table.split(".")
    with HudiMetastoreClient(uri(port)) as c:
        return local_path(c.get_hudi_table(db, name).basePath)


def model_key(record_key: str) -> str:
    """The tests' models key rows by the value of `id`: the field-prefixed key of that one field
    (`id:5`, the complex key generator's: tables of two partition fields) is taken as `5`."""
    return record_key[3:] if record_key.startswith("id:") and "," not in record_key else record_key


def ours(spark, port: int, table: str, cols: list[str], **kw) -> dict:
    """record key -> tuple of `cols`, from pipeline.read."""
    from pipeline import read

    rows = read(spark, table, metastore=uri(port), **kw).select("_hoodie_record_key", *cols).collect()
    out = {}
    for r in rows:
        key = model_key(r[0])
        assert key not in out, f"duplicate record key {r[0]}"
        out[key] = tuple(r[1:])
    return out


def hudi_rs(base: str, cols: list[str], as_of: str | None = None, storage_options: dict | None = None) -> dict:
    """record key -> tuple of `cols`, read from storage by hudi-rs (it lists storage itself);
    `storage_options` for an object store (tests/harness/object_store.py)."""
    import hudi

    opts = hudi.HudiReadOptions().with_as_of_timestamp(as_of) if as_of else None
    table = hudi.HudiTable(base, options=storage_options) if storage_options else hudi.HudiTable(base)
    batches = table.read(options=opts)
    if not batches:
        return {}
    t = pa.Table.from_batches(batches)
    out = {}
    for r in t.to_pylist():
        key = model_key(r["_hoodie_record_key"])
        assert key not in out, f"duplicate record key {r['_hoodie_record_key']}"
        out[key] = tuple(r[c] for c in cols)
    return out


def server_slices(port: int, table: str) -> dict:
    db, name = table.split(".")
    with HudiMetastoreClient(uri(port)) as c:
        return {(s.partitionPath, s.fileId): (s.baseInstant, s.baseFile.name if s.baseFile else None, ())
                for s in c.get_latest_file_slices(db, name)}


def hudi_rs_slices(base: str) -> dict:
    import hudi

    return {(s.partition_path, s.file_id): (s.creation_instant_time, s.base_file_name or None, tuple(s.log_file_names))
            for s in hudi.HudiTable(base).get_file_slices()}


def data_files(base: str) -> set[str]:
    """Base files on storage (relative paths)."""
    out = set()
    for root, dirs, names in os.walk(base):
        dirs[:] = [d for d in dirs if d != ".hoodie"]
        for n in names:
            if n.endswith(DATA_FILE_SUFFIX):
                out.add(os.path.relpath(os.path.join(root, n), base))
    return out


def listed_files(port: int, table: str) -> set[str]:
    """Every live file the server lists (all versions), relative to the base path."""
    db, name = table.split(".")
    with HudiMetastoreClient(uri(port)) as c:
        out = set()
        for p in c.get_hudi_partitions(db, name):
            for f in c.get_all_files(db, name, p):
                out.add(f"{p}/{f.name}" if p else f.name)
        return out


def instants(port: int, table: str, states=None) -> list:
    db, name = table.split(".")
    with HudiMetastoreClient(uri(port)) as c:
        return c.list_instants(db, name, states=states)
