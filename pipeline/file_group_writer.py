"""Executor side of a write: one file group's new base file (copy-on-write merge), or on a
merge-on-read table one new log file appended to its slice.

Records arrive grouped by file group (`_fg`), with their record key and partition path and a
`_delete` flag. For a file group with a base file, the old file's records whose keys are not in
the batch are kept (with their commit time and sequence number); the batch's upserts are added;
deletes drop keys. The new file is announced as a marker to the metastore before it is written.
Only the write statistics go back to the driver, and for a table keeping a record index the keys
the file group gained (inserted), rewrote (updated) and lost (deleted), as key blocks.

A log file (`appends`: merge-on-read file groups that take updates and deletes, not inserts) holds
an Avro data block of the upserts (meta fields first; `_hoodie_file_name` is the file id, as Hudi's
append handle writes it) and a delete block of the deleted keys (hudi_format/log_file.py); its
write stat carries the column statistics of the upserts (`log_stats`; a delete-only log: 0 values).
"""

from __future__ import annotations

import json
import threading

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from hudi_format.avro_rows import encode_prefixed
from hudi_format.file_slice import parse_file_name
from hudi_format.log_file import avro_data_block_of_encoded, delete_block, log_file_name
from hudi_format.log_stats import records_stats, records_stats_many
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
from .errors import HudiWriteError
from .schema import META_COLUMNS
from .storage import FileLayout, locate, relative_path

BASE_FILE_SUFFIX = ".parquet"

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
    """Picklable; `write_sorted` is the function for `mapInArrow` over records partitioned and
    sorted by `_fg`.

    `groups`: file id -> (partition path, relative path of its current base file or None,
    that file's instant or None). `index`: the table keeps a record index (report key changes).
    `stats_columns`: the columns whose statistics (RFC-27) go back with the file's write stat."""

    def __init__(self, *, metastore: str, db: str, table: str, layout: FileLayout, instant: str,
                 data_schema: pa.Schema, groups: dict[str, tuple[str, str | None, str | None]],
                 index: bool = False, stats_columns: list[str] | None = None, security=None,
                 appends: dict[str, tuple[str, int]] | None = None, avro_schema: str | None = None):
        self.metastore, self.db, self.table = metastore, db, table
        self.security = security
        self.layout, self.instant = layout, instant
        self.data_schema = data_schema
        self.file_schema = with_meta(data_schema)
        self.groups = groups
        self.index = index
        self.stats_columns = stats_columns or []
        self.appends = appends or {}  # file id -> (base instant, version of its new log file)
        self.log_schema = log_schema(avro_schema) if avro_schema else None

    def write_sorted(self, batches, client=None):
        """mapInArrow over one task's records, sorted by `_fg`: the file groups in runs of up to
        MARKER_RUN_GROUPS groups or MARKER_RUN_ROWS records, each run's markers added in one call
        (not one per file group) before its files are written. Yields the write statistics.
        `client`: the metastore connection to use (default: the worker's, `executor_client`)."""
        token = write_token()
        run: list[tuple[str, list[pa.RecordBatch]]] = []
        held = 0
        for batch in batches:
            for fid, part in _runs_of(batch):
                if run and run[-1][0] == fid:
                    run[-1][1].append(part)
                else:
                    if len(run) >= MARKER_RUN_GROUPS or held >= MARKER_RUN_ROWS:  # (the last group is complete)
                        yield from self._write_run(run, token, client)
                        run, held = [], 0
                    run.append((fid, [part]))
                held += part.num_rows
        if run:
            yield from self._write_run(run, token, client)

    def _write_run(self, run: list[tuple[str, list[pa.RecordBatch]]], token: str, client=None):
        rels = [self._file(fid, token) for fid, _ in run]
        (client or executor_client(self.metastore, self.security)).add_markers(self.db, self.table, self.instant, rels)
        tables = [pa.Table.from_batches(parts) for _, parts in run]
        appended = [(fid, _upserts(t)) for (fid, _), t in zip(run, tables) if fid in self.appends]
        encoded = self._log_records(appended, token)
        stats = log_stats_many([conform(u, self.data_schema) for _, u in appended], self.stats_columns)
        ready = {fid: (u, encoded.get(fid), st) for (fid, u), st in zip(appended, stats)}
        for (fid, _), table, rel in zip(run, tables, rels):
            prepared = ready.get(fid)
            yield from self._write(fid, table, token, rel, prepared).to_batches()

    def _log_records(self, groups: list[tuple[str, pa.Table]], token: str) -> dict[str, pa.Array]:
        """file id -> the upserts of appended file groups as their log files' Avro records
        (length-prefixed), encoded for all the groups at once (a column's encoding costs about as
        much for 100 rows as for 10,000)."""
        fids, parts = [], []
        for fid, upserts in groups:
            if upserts.num_rows:
                fids.append(fid)
                parts.append(conform(upserts, self.data_schema).append_column(
                    "_hoodie_record_key", upserts.column("_hoodie_record_key").cast(pa.string())))
        if not parts:
            return {}
        counts = [p.num_rows for p in parts]
        rows = pa.concat_tables(parts)
        n = rows.num_rows
        starts = np.repeat(np.cumsum([0] + counts[:-1]), counts)
        seq = pc.binary_join_element_wise(f"{self.instant}_{token.split('-')[0]}_",
                                          pa.array(np.arange(n) - starts).cast(pa.string()), "")
        group_of = np.repeat(np.arange(len(fids), dtype=np.int32), counts)
        meta = {"_hoodie_commit_time": _repeat(self.instant, n), "_hoodie_commit_seqno": seq,
                "_hoodie_record_key": rows.column("_hoodie_record_key"),
                "_hoodie_partition_path": _each(group_of, [self.groups[f][0] for f in fids]),
                "_hoodie_file_name": _each(group_of, fids)}
        records = pa.table({**meta, **{c: rows.column(c) for c in rows.column_names if c not in meta}})
        prefixed = encode_prefixed(records, json.loads(self.log_schema or "{}"))
        out, at = {}, 0
        for fid, k in zip(fids, counts):
            out[fid] = prefixed.slice(at, k)
            at += k
        return out

    def _file(self, fid: str, token: str) -> str:
        """Relative path of the file this task writes for file group `fid`."""
        ppath = self.groups[fid][0]
        if fid in self.appends:
            base_instant, version = self.appends[fid]
            return relative_path(ppath, log_file_name(fid, base_instant, version, token))
        return relative_path(ppath, base_file_name(fid, token, self.instant))

    def _write(self, fid: str, batch: pa.Table, token: str, rel: str,
               prepared: tuple[pa.Table, pa.Array | None, bytes | None] | None = None) -> pa.Table:
        """The file group's new file (its marker is added): statistics of one row. `prepared`: an
        appended group's upserts, encoded (`_log_records`), and their statistics."""
        ppath, old_rel, old_instant = self.groups[fid]
        deletes = batch.filter(pc.fill_null(batch.column("_delete"), False))
        if prepared is not None:  # (every appended group: _write_run)
            return self._append(fid, ppath, deletes, token, rel, prepared)
        upserts = _upserts(batch)
        name = rel.rsplit("/", 1)[-1]
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

    def _append(self, fid: str, ppath: str, deletes: pa.Table, token: str, rel: str,
                prepared: tuple[pa.Table, pa.Array | None, bytes | None]) -> pa.Table:
        """One new log file of the file group: `prepared`, its upserts (updates: the group holds their
        keys), their Avro records (`_log_records`; None without upserts) and statistics, and its
        deletes, each a block."""
        base_instant, version = self.appends[fid]
        upserts, records, stats = prepared
        n = upserts.num_rows
        keys = upserts.column("_hoodie_record_key").cast(pa.string())
        gone = pc.unique(deletes.column("_hoodie_record_key").cast(pa.string())).to_pylist()
        data = b""
        if n:
            if records is None or len(records) != n:
                raise HudiWriteError(f"file group {fid}: {n} upserts, {0 if records is None else len(records)} "
                                     "records encoded")
            data += avro_data_block_of_encoded(self.instant, self.log_schema or "", records)
        if gone:
            data += delete_block(self.instant, [(k, ppath) for k in gone])
        self._drop_earlier_attempts(fid, ppath, token, lambda t: log_file_name(fid, base_instant, version, t))
        write_log_file(self.layout, rel, data)
        keys_of = ((encode_keys([]), encode_keys(pc.unique(keys).to_pylist()), encode_keys(gone)) if self.index
                   else (None, None, None))
        return log_stat_row(ppath, fid, rel, base_instant, n, len(gone), len(data), keys_of, stats)

    @staticmethod
    def _key_blocks(up_keys: pa.Array, old_keys: pa.Array, deletes: pa.Table) -> tuple[bytes, bytes, bytes]:
        """(inserted, updated, deleted) key blocks: what the file group gained, rewrote, lost."""
        known = pc.is_in(up_keys, value_set=old_keys)
        gone = pc.unique(deletes.column("_hoodie_record_key").cast(pa.string()))
        gone = gone.filter(pc.is_in(gone, value_set=old_keys))
        return (encode_keys(up_keys.filter(pc.invert(known)).to_pylist()),
                encode_keys(up_keys.filter(known).to_pylist()), encode_keys(gone.to_pylist()))


    def _drop_earlier_attempts(self, fid: str, ppath: str, token: str, named=None) -> None:
        """A retried task deletes what its failed attempts may have written (named, not listed)."""
        pid, sid, attempt = token.split("-")
        for a in range(int(attempt)):
            t = f"{pid}-{sid}-{a}"
            name = named(t) if named else base_file_name(fid, t, self.instant)
            delete_file(self.layout.location(relative_path(ppath, name)))


def write_log_file(layout: FileLayout, rel: str, data: bytes) -> None:
    """Write a new log file (`rel`, relative to the table) whole."""
    fs, full = locate(layout.location(rel))
    fs.create_dir(full.rsplit("/", 1)[0], recursive=True)
    with fs.open_output_stream(full) as out:
        out.write(data)


def log_stat_row(ppath: str, fid: str, rel: str, prev: str, writes: int, deletes: int, size: int,
                 keys: tuple[bytes | None, bytes | None, bytes | None], stats: bytes | None) -> pa.Table:
    """The write stats row (STATS_DDL) of a new log file: `writes` records updated in place,
    `deletes` deleted; `keys` its (inserted, updated, deleted) key blocks."""
    return pa.table({
        "partitionPath": [ppath], "fileId": [fid], "path": [rel], "prevCommit": [prev],
        "numWrites": pa.array([writes], pa.int64()), "numInserts": pa.array([0], pa.int64()),
        "numUpdateWrites": pa.array([writes], pa.int64()), "numDeletes": pa.array([deletes], pa.int64()),
        "fileSizeInBytes": pa.array([size], pa.int64()),
        "insertedKeys": pa.array([keys[0]], pa.binary()), "updatedKeys": pa.array([keys[1]], pa.binary()),
        "deletedKeys": pa.array([keys[2]], pa.binary()),
        "columnStats": pa.array([stats], pa.binary()), "uncompressedSize": pa.array([size], pa.int64()),
    })


MARKER_RUN_GROUPS = 64  # file groups of a task whose markers go in one call
MARKER_RUN_ROWS = 200_000  # records a task holds for one run (a larger file group is held whole)


def _runs_of(batch: pa.RecordBatch):
    """(file id, slice) of each run of equal `_fg` in a batch sorted by it."""
    fg = batch.column(batch.schema.get_field_index("_fg"))
    n = batch.num_rows
    if n == 0:
        return
    starts = [0]
    if n > 1:
        changed = pc.not_equal(fg.slice(1), fg.slice(0, n - 1))
        starts += [i + 1 for i in pc.indices_nonzero(changed).to_pylist()]
    starts.append(n)
    for a, b in zip(starts, starts[1:]):
        yield fg[a].as_py(), batch.slice(a, b - a)


def log_stats(upserts: pa.Table, columns: list[str]) -> bytes | None:
    """Column statistics of a log file's data records (its upserts; deletes are none of them), as
    Hudi's append handle keeps them (hudi_format/log_stats.py `records_stats`: bounds as a base
    file's, column sizes 0; a log file of deletes alone: no bounds and 0 values per column)."""
    if not columns:
        return None
    return encode(records_stats(upserts, columns))


def log_stats_many(upserts: list[pa.Table], columns: list[str]) -> list[bytes | None]:
    """`log_stats` of several log files' upserts (one schema), from one Parquet footer."""
    if not columns:
        return [None] * len(upserts)
    return [encode(s) for s in records_stats_many([u.select(columns) for u in upserts], columns)]


def log_schema(avro_schema: str) -> str:
    """The writer schema with the five meta fields first (the schema of a log file's records)."""
    doc = json.loads(avro_schema)
    meta = [{"name": m, "type": ["null", "string"], "doc": "", "default": None} for m in META_COLUMNS]
    doc["fields"] = meta + [f for f in doc["fields"] if f["name"] not in META_COLUMNS]
    return json.dumps(doc)


def _repeat(value: str, n: int) -> pa.Array:
    """`n` times the string `value`."""
    return _each(np.zeros(n, np.int32), [value])


def _each(indices, values: list[str]) -> pa.Array:
    """values[i] for each i of `indices` (strings)."""
    return pa.DictionaryArray.from_arrays(pa.array(indices, pa.int32()), values).cast(pa.string())


def _upserts(batch: pa.Table) -> pa.Table:
    """The records of a file group's batch that are not deletes."""
    return batch.filter(pc.invert(pc.fill_null(batch.column("_delete"), False)))


def write_stat(row) -> dict:
    """A Hudi HoodieWriteStat (JSON) of a stats row; of a log file a HoodieDeltaWriteStat."""
    out = _write_stat(row)
    name = row["path"].rsplit("/", 1)[-1]
    if not name.endswith(BASE_FILE_SUFFIX):
        out.update({"logVersion": parse_file_name(name)[3], "logOffset": 0, "baseFile": "", "logFiles": [name],
                    "totalLogRecords": row["numWrites"], "totalLogBlocks": 0})
    return out


def _write_stat(row) -> dict:
    return {"fileId": row["fileId"], "path": row["path"], "prevCommit": row["prevCommit"],
            "numWrites": row["numWrites"], "numDeletes": row["numDeletes"],
            "numUpdateWrites": row["numUpdateWrites"], "numInserts": row["numInserts"],
            "totalWriteBytes": row["fileSizeInBytes"], "totalWriteErrors": 0, "tempPath": None,
            "partitionPath": row["partitionPath"], "totalLogRecords": 0, "totalLogFilesCompacted": 0,
            "totalLogSizeCompacted": 0, "totalUpdatedRecordsCompacted": 0, "totalLogBlocks": 0,
            "totalCorruptLogBlock": 0, "totalRollbackBlocks": 0, "fileSizeInBytes": row["fileSizeInBytes"],
            "minEventTime": None, "maxEventTime": None, "runtimeStats": None}
