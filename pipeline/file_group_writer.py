"""Executor side of a write: one file group's new base file (copy-on-write merge).

Records arrive grouped by file group (`_fg`), with their record key and partition path and a
`_delete` flag. For a file group with a base file, the old file's records whose keys are not in
the batch are kept (with their commit time and sequence number); the batch's upserts are added;
deletes drop keys. The new file is announced as a marker to the metastore before it is written.
Only the write statistics go back to the driver, and for a table keeping a record index the keys
the file group gained (inserted), rewrote (updated) and lost (deleted), as key blocks.
"""

from __future__ import annotations

import threading

import pyarrow as pa
import pyarrow.compute as pc

from hudi_format.record_key_codec import encode_keys

from .base_file import (
    base_file_name,
    conform,
    count_in,
    delete_file,
    keys_not_in,
    read_base_file,
    read_footer,
    with_meta,
    write_base_file,
    write_token,
)
from .column_stats import encode, footer_stats, uncompressed_size
from .schema import META_COLUMNS
from .storage import FileLayout, relative_path

STATS_DDL = ("partitionPath string, fileId string, path string, prevCommit string, numWrites long, "
             "numInserts long, numUpdateWrites long, numDeletes long, fileSizeInBytes long, "
             "insertedKeys binary, updatedKeys binary, deletedKeys binary, columnStats binary, "
             "uncompressedSize long")

_clients: dict[tuple, object] = {}
_clients_lock = threading.Lock()


def executor_client(uri: str, security=None):
    """One metastore connection per Python worker (workers are reused across tasks) and log-in
    (client Security; a Kerberos driver hands its tasks a delegation token: writer.py)."""
    from client import HudiCatalog

    with _clients_lock:
        c = _clients.get((uri, security))
        if c is None:
            c = _clients[(uri, security)] = HudiCatalog(uri, security=security)
        return c


class FileGroupWriter:
    """Picklable function for `groupBy("_fg").applyInArrow`.

    `groups`: file id -> (partition path, relative path of its current base file or None,
    that file's instant or None). `index`: the table keeps a record index (report key changes).
    `stats_columns`: the columns whose statistics (RFC-27) go back with the file's write stat."""

    def __init__(self, *, metastore: str, db: str, table: str, layout: FileLayout, instant: str,
                 data_schema: pa.Schema, groups: dict[str, tuple[str, str | None, str | None]],
                 index: bool = False, stats_columns: list[str] | None = None, security=None):
        self.metastore, self.db, self.table = metastore, db, table
        self.security = security
        self.layout, self.instant = layout, instant
        self.data_schema = data_schema
        self.file_schema = with_meta(data_schema)
        self.groups = groups
        self.index = index
        self.stats_columns = stats_columns or []

    def __call__(self, batch: pa.Table) -> pa.Table:
        fid = batch.column("_fg")[0].as_py()
        ppath, old_rel, old_instant = self.groups[fid]
        deletes = batch.filter(pc.fill_null(batch.column("_delete"), False))
        upserts = batch.filter(pc.invert(pc.fill_null(batch.column("_delete"), False)))
        token = write_token()
        name = base_file_name(fid, token, self.instant)
        rel = relative_path(ppath, name)
        n = upserts.num_rows
        seq_prefix = f"{self.instant}_{token.split('-')[0]}_"
        new = conform(upserts, self.data_schema)
        meta = [pa.array([self.instant] * n, pa.string()),
                pc.binary_join_element_wise(seq_prefix, pa.array(range(n), pa.int64()).cast(pa.string()), ""),
                upserts.column("_hoodie_record_key").cast(pa.string()),
                pa.array([ppath] * n, pa.string()),
                pa.array([name] * n, pa.string())]
        new = pa.Table.from_arrays(meta + list(new.columns), schema=self.file_schema)
        updates = removed = 0
        up_keys = pc.unique(upserts.column("_hoodie_record_key").cast(pa.string()))
        old_keys = pa.array([], pa.string())
        if old_rel is not None:
            old = read_base_file(self.layout.location(old_rel), self.file_schema)
            old_keys = old.column("_hoodie_record_key").combine_chunks().cast(pa.string())
            del_keys = pc.unique(deletes.column("_hoodie_record_key").cast(pa.string()))
            updates, removed = count_in(old, up_keys), count_in(old, del_keys)
            kept = keys_not_in(keys_not_in(old, up_keys), del_keys)
            kept = kept.set_column(META_COLUMNS.index("_hoodie_file_name"), "_hoodie_file_name",
                                   pa.array([name] * kept.num_rows, pa.string()))
            out = pa.concat_tables([kept, new])
        else:
            out = new
        executor_client(self.metastore, self.security).add_markers(self.db, self.table, self.instant, [rel])
        self._drop_earlier_attempts(fid, ppath, token)
        location = self.layout.location(rel)
        size = write_base_file(location, out)
        footer = read_footer(location)
        stats = encode(footer_stats(footer, out, self.stats_columns))
        blocks = self._key_blocks(up_keys, old_keys, deletes) if self.index else (None, None, None)
        return pa.table({
            "partitionPath": [ppath], "fileId": [fid], "path": [rel],
            "prevCommit": [old_instant or "null"], "numWrites": pa.array([out.num_rows], pa.int64()),
            "numInserts": pa.array([n - updates], pa.int64()), "numUpdateWrites": pa.array([updates], pa.int64()),
            "numDeletes": pa.array([removed], pa.int64()), "fileSizeInBytes": pa.array([size], pa.int64()),
            "insertedKeys": pa.array([blocks[0]], pa.binary()), "updatedKeys": pa.array([blocks[1]], pa.binary()),
            "deletedKeys": pa.array([blocks[2]], pa.binary()),
            "columnStats": pa.array([stats], pa.binary()),
            "uncompressedSize": pa.array([uncompressed_size(footer)], pa.int64()),
        })

    @staticmethod
    def _key_blocks(up_keys: pa.Array, old_keys: pa.Array, deletes: pa.Table) -> tuple[bytes, bytes, bytes]:
        """(inserted, updated, deleted) key blocks: what the file group gained, rewrote, lost."""
        known = pc.is_in(up_keys, value_set=old_keys)
        gone = pc.unique(deletes.column("_hoodie_record_key").cast(pa.string()))
        gone = gone.filter(pc.is_in(gone, value_set=old_keys))
        return (encode_keys(up_keys.filter(pc.invert(known)).to_pylist()),
                encode_keys(up_keys.filter(known).to_pylist()), encode_keys(gone.to_pylist()))


    def _drop_earlier_attempts(self, fid: str, ppath: str, token: str) -> None:
        """A retried task deletes what its failed attempts may have written (named, not listed)."""
        pid, sid, attempt = token.split("-")
        for a in range(int(attempt)):
            name = base_file_name(fid, f"{pid}-{sid}-{a}", self.instant)
            delete_file(self.layout.location(relative_path(ppath, name)))


def write_stat(row) -> dict:
    """A Hudi HoodieWriteStat (JSON) of a stats row."""
    return {"fileId": row["fileId"], "path": row["path"], "prevCommit": row["prevCommit"],
            "numWrites": row["numWrites"], "numDeletes": row["numDeletes"],
            "numUpdateWrites": row["numUpdateWrites"], "numInserts": row["numInserts"],
            "totalWriteBytes": row["fileSizeInBytes"], "totalWriteErrors": 0, "tempPath": None,
            "partitionPath": row["partitionPath"], "totalLogRecords": 0, "totalLogFilesCompacted": 0,
            "totalLogSizeCompacted": 0, "totalUpdatedRecordsCompacted": 0, "totalLogBlocks": 0,
            "totalCorruptLogBlock": 0, "totalRollbackBlocks": 0, "fileSizeInBytes": row["fileSizeInBytes"],
            "minEventTime": None, "maxEventTime": None, "runtimeStats": None}
