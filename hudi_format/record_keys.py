"""The record keys of a Hudi file slice as storage holds them (RFC-08): its base file's keys, then its
log files' data and delete blocks in order. Read by import-hudi, validate and repair
(adapter/commands/record_index_build.py) and the server's catch-up of tracked tables
(store/hudi/timeline/catch_up.py).

Keys come from the `_hoodie_record_key` and `_hoodie_commit_time` meta columns or, for tables written
without meta fields (`hoodie.populate.meta.fields=false`), from the record key fields through the
table's key generator (hudi_format/key_generator.py), with the instant that wrote the file or block.
"""

from __future__ import annotations

from hudi_format import key_generator, log_file
from hudi_format.config_keys import POPULATE_META_FIELDS, default_of
from hudi_format.errors import HudiFormatError
from hudi_format.storage import TableStorage
from hudi_format.table_config import HudiTableConfig


class KeyReader:
    """How a file's record keys are read: the meta columns, or the record key fields through the
    key generator (no meta fields; the commit time is then the file's or the block's instant)."""

    def __init__(self, cfg: HudiTableConfig):
        self.meta = cfg.properties.get(POPULATE_META_FIELDS, default_of(POPULATE_META_FIELDS)).lower() != "false"
        self.fields = list(cfg.record_key_fields)
        self.generator = cfg.key_generator
        self.properties = dict(cfg.properties)
        self.columns = [log_file.KEY, log_file.COMMIT_TIME] if self.meta else self.fields

    def of(self, table, instant: str | None) -> dict[str, str]:
        """key -> commit time of the rows of a pyarrow table holding `columns`."""
        if self.meta:
            return dict(zip(table.column(0).to_pylist(), table.column(1).to_pylist()))
        keys = key_generator.record_keys({f: table.column(f).to_pylist() for f in self.fields},
                                         self.fields, self.generator, self.properties)
        return dict.fromkeys(keys, instant or "")


def slice_keys(storage: TableStorage, s, completed: set[str], reader: KeyReader) -> dict[str, str]:
    """key -> commit time of one file slice: its base file's keys, then its log files' data and
    delete blocks in merge order (a later block's record replaces an earlier one; a delete removes
    it; a log compaction's block stands in for the blocks it replaced: `log_file.merge_order`)."""
    import pyarrow.parquet as pq

    keys: dict[str, str] = {}
    if s.base_file is not None:
        with _open(storage, s.partition_path, s.base_file) as fh:
            keys.update(reader.of(pq.read_table(fh, columns=reader.columns), s.base_file.commit_ts))
    scanned: list[log_file.LogBlock] = []
    for f in s.log_files:
        name = f"{s.partition_path}/{f.name}".lstrip("/")
        try:
            with _open(storage, s.partition_path, f) as fh:
                data = fh.read()
        except FileNotFoundError:
            raise HudiFormatError(f"log file {name} is missing on storage") from None
        scanned += log_file.blocks(data, name)
    for block in live_blocks(scanned, completed):
        if block.block_type in (log_file.AVRO_DATA, log_file.HFILE_DATA, log_file.PARQUET_DATA):
            keys.update(reader.of(log_file.data_block_table(block, reader.columns, block.source), block.instant))
        elif block.block_type == log_file.DELETE:
            for key in log_file.deleted_keys(block, f"log file {block.source}"):
                keys.pop(key, None)
    return keys


def _open(storage: TableStorage, partition: str, f):
    """A listed file, at the path the server answers (its storage strategy's), else under the table path."""
    if f.path:
        import fsspec

        fs, path = fsspec.core.url_to_fs(f.path)
    else:
        fs, path = storage.fs, storage.path(partition, f.name)
    try:
        fs.invalidate_cache(path.rpartition("/")[0])  # an object store's cached listing may predate the file
    except Exception:  # filesystems without a cache
        pass
    return fs.open(path, "rb")


def live_blocks(blocks: list[log_file.LogBlock], completed: set[str]) -> list[log_file.LogBlock]:
    """The blocks a reader merges, in merge order (`log_file.merge_order`): written by a completed
    instant, not undone by a rollback command block, not replaced by a log compaction's block."""
    undone = {b.header.get(log_file.TARGET_INSTANT_TIME) for b in blocks if b.is_rollback}
    return log_file.merge_order([b for b in blocks if b.block_type not in (log_file.COMMAND, log_file.CORRUPT)
                                 and b.instant in completed and b.instant not in undone])
