"""Python client of hudi-metastore: the Hudi extension calls, typed, plus every Hive Metastore call.

    from client import HudiMetastoreClient

    with HudiMetastoreClient("thrift://127.0.0.1:9083") as c:
        c.get_all_databases()                              # any HMS call, passed through
        ts = c.new_instant_time("db", "t")
        c.create_instant("db", "t", ts, "commit")
        c.transition_to_inflight("db", "t", ts, "commit")
        c.complete_instant("db", "t", ts, "commit", {"partitionToWriteStats": {...}, ...})
        c.get_latest_file_slices("db", "t", ["p1"])

Types. Typed methods take Python values (str, bytes, lists, dicts; ``None`` for "not given") and
return the Thrift structs of ``thrift_idl.hudi_metastore.ttypes`` (``Instant``, ``FileSlice``,
``HudiFile``, ``HudiTableConfig``, ``CommitResult``, ``RollbackResult``): plain objects with
attributes, ``==`` and ``repr``; enums are ints (``InstantState.COMPLETED``; ``state_name()``
gives the text). Errors are the Thrift exceptions the server declares (``NoSuchObjectException``,
``CommitConflictException``, ...). Every other attribute of the generated
``HudiMetastore.Client`` (all HMS methods: ``get_table``, ``get_partitions_by_filter``, ...) is
passed through with Thrift arguments unchanged; ``call(name, *args)`` does the same explicitly.

Connection, retries and the session: client/connection.py.
"""

from __future__ import annotations

import json

from hudi_format.record_key_codec import encode_keys
from hudi_format.table_config import HudiTableConfig as FormatConfig
from thrift_idl.hive_metastore.ttypes import FieldSchema
from thrift_idl.hudi_metastore.ttypes import (
    CommitResult,
    FileColumnStats,
    FileGroupKeys,
    FileSlice,
    HudiFile,
    HudiTableConfig,
    HudiTableStats,
    HudiTableType,
    ImportResult,
    Instant,
    InstantFilter,
    InstantState,
    PrunedFileSlices,
    RecordKeyLocations,
    RollbackResult,
)

from .connection import Connection, is_idempotent, metastore_endpoints
from .convert import column_stats_struct, config_to_thrift

__all__ = ["HudiMetastoreClient", "column_stats_struct", "file_group_keys", "is_idempotent", "metastore_endpoints",
           "state_name"]


def state_name(state: int) -> str:
    """InstantState value -> "REQUESTED" | "INFLIGHT" | "COMPLETED"."""
    return InstantState._VALUES_TO_NAMES[state]


def _state_value(state) -> int:
    if isinstance(state, str):
        try:
            return InstantState._NAMES_TO_VALUES[state.upper()]
        except KeyError:
            raise ValueError(f"unknown instant state {state!r}") from None
    return int(state)


def _payload(value) -> bytes | None:
    """Plans, profiles and commit metadata: bytes as given, str as UTF-8, dict/list as JSON."""
    if value is None or isinstance(value, bytes):
        return value
    if isinstance(value, (bytearray, memoryview)):
        return bytes(value)
    if isinstance(value, str):
        return value.encode("utf-8")
    return json.dumps(value).encode("utf-8")


class HudiMetastoreClient(Connection):
    """Every metastore call (see Connection) plus the Hudi extension's calls, typed."""

    # --- Hudi extension: tables ------------------------------------------------------------------

    def register_hudi_table(self, config, columns=None) -> None:
        """`config`: a Thrift HudiTableConfig (tableType may also be "COPY_ON_WRITE" /
        "MERGE_ON_READ"), or a hudi_format.table_config.HudiTableConfig.
        `columns`: FieldSchema list or (name, type[, comment]) tuples; None lets the server derive
        them from config.avroSchema."""
        cols = None
        if columns is not None:
            cols = [c if isinstance(c, FieldSchema) else FieldSchema(c[0], c[1], c[2] if len(c) > 2 else None)
                    for c in columns]
        self.call("register_hudi_table", _config(config), cols)

    def get_hudi_table(self, db: str, table: str) -> HudiTableConfig:
        return self.call("get_hudi_table", db, table)

    # --- Hudi extension: timeline ----------------------------------------------------------------

    def new_instant_time(self, db: str, table: str) -> str:
        return self.call("new_instant_time", db, table)

    def create_instant(self, db: str, table: str, timestamp: str | None, action: str, plan=None,
                       heartbeat_timeout_s: int = 0) -> Instant:
        """REQUESTED instant. timestamp None/"" lets the server pick; heartbeat_timeout_s 0: server default.
        `plan`: bytes, str or JSON-able value."""
        return self.call("create_instant", db, table, timestamp or "", action, _payload(plan),
                         int(heartbeat_timeout_s or 0))

    def transition_to_inflight(self, db: str, table: str, timestamp: str, action: str,
                               workload_profile=None) -> Instant:
        return self.call("transition_to_inflight", db, table, timestamp, action, _payload(workload_profile))

    def complete_instant(self, db: str, table: str, timestamp: str, action: str, commit_metadata,
                         record_keys: list[FileGroupKeys] | None = None,
                         column_stats: list[FileColumnStats] | None = None) -> CommitResult:
        """`commit_metadata`: bytes, str or a dict (sent as JSON). `record_keys`: for a table keeping
        a record index, the keys of each file group written (`file_group_keys`); `column_stats`: the
        column statistics of the base files written. Raises CommitConflictException."""
        return self.call("complete_instant", db, table, timestamp, action, _payload(commit_metadata) or b"",
                         record_keys, column_stats)

    def heartbeat_instant(self, db: str, table: str, timestamp: str) -> None:
        self.call("heartbeat_instant", db, table, timestamp)

    def add_markers(self, db: str, table: str, timestamp: str, paths) -> None:
        self.call("add_markers", db, table, timestamp, list(paths))

    def list_instants(self, db: str, table: str, states=None, actions=None, min_ts: str | None = None,
                      max_ts: str | None = None) -> list[Instant]:
        """states: names ("COMPLETED") or InstantState values; bounds inclusive; None: no condition."""
        f = InstantFilter(states=[_state_value(s) for s in states] if states else None,
                          actions=list(actions) if actions else None,
                          minTimestamp=min_ts or None, maxTimestamp=max_ts or None)
        return self.call("list_instants", db, table, f)

    def get_instant_metadata(self, db: str, table: str, timestamp: str, action: str,
                             state="COMPLETED") -> bytes:
        return self.call("get_instant_metadata", db, table, timestamp, action, _state_value(state))

    def get_failed_instants(self, db: str, table: str) -> list[Instant]:
        return self.call("get_failed_instants", db, table)

    def rollback_instant(self, db: str, table: str, timestamp: str) -> RollbackResult:
        return self.call("rollback_instant", db, table, timestamp)

    def delete_savepoint(self, db: str, table: str, timestamp: str) -> Instant:
        return self.call("delete_savepoint", db, table, timestamp)

    # --- Hudi extension: snapshot ----------------------------------------------------------------

    def get_hudi_partitions(self, db: str, table: str, filter: str | None = None) -> list[str]:
        return self.call("get_hudi_partitions", db, table, filter or "")

    def get_latest_file_slices(self, db: str, table: str, partitions=None, as_of: str | None = None) -> list[FileSlice]:
        """partitions None/[]: all; as_of None: latest completed."""
        return self.call("get_latest_file_slices", db, table, list(partitions or []), as_of or "")

    def prune_file_slices(self, db: str, table: str, predicate: str | None = None,
                          compact: bool = False) -> PrunedFileSlices:
        """Latest slices whose column statistics allow a row matching `predicate` (Hive filter
        grammar over any column, plus IS [NOT] NULL), with how many files were skipped.
        `compact`: slices of a base file only come as columns (`baseFiles`; `slices_of` gives
        every slice back as structs)."""
        return self.call("prune_file_slices", db, table, predicate or "", compact)

    def get_files_changed(self, db: str, table: str, since: str | None = None,
                          until: str | None = None) -> list[HudiFile]:
        """Files written by instants in (since, until]; None: open bound."""
        return self.call("get_files_changed", db, table, since or "", until or "")

    def get_all_files(self, db: str, table: str, partition: str = "") -> list[HudiFile]:
        return self.call("get_all_files", db, table, partition or "")

    def sync_storage(self, db: str, table: str) -> int:
        return self.call("sync_storage", db, table)

    def get_hudi_table_stats(self, db: str, table: str) -> HudiTableStats:
        return self.call("get_hudi_table_stats", db, table)

    # --- Hudi extension: record-level index ------------------------------------------------------

    def lookup_record_keys(self, db: str, table: str, keys) -> list[tuple[str, str, str] | None]:
        """Where each key (str) lives: (partition path, file id, instant) or None, in order."""
        keys = list(keys)
        out: list[tuple[str, str, str] | None] = []
        for start in range(0, len(keys), LOOKUP_BATCH):
            r: RecordKeyLocations = self.call("lookup_record_keys", db, table,
                                              encode_keys(keys[start:start + LOOKUP_BATCH]))
            out += [(r.partitionPaths[g], r.fileIds[g], i) if g >= 0 else None
                    for g, i in zip(r.fileGroupOfKey, r.instantOfKey)]
        return out

    def load_record_index(self, db: str, table: str, file_groups: list[FileGroupKeys], reset: bool = False,
                          enable: bool | None = None) -> int:
        """Adoption/repair: add keys to the table's index (after clearing it with `reset`); `enable`
        True turns the index on, False off, None leaves it. Returns the number of keys the index holds."""
        return self.call("load_record_index", db, table, list(file_groups), bool(reset), enable)

    def list_files_without_column_stats(self, db: str, table: str, limit: int = 0,
                                        log_files: bool = False) -> list[str]:
        """Latest base files without column statistics (relative paths; at most `limit`, 0: all);
        with `log_files` also the latest slices' log files without them."""
        return self.call("list_files_without_column_stats", db, table, int(limit), True if log_files else None)

    def load_column_stats(self, db: str, table: str, stats: list[FileColumnStats]) -> int:
        """Adoption: statistics of live files (files that have some keep theirs; a log file's only
        at the size the server records for it); the number stored."""
        return self.call("load_column_stats", db, table, list(stats))

    # --- Hudi extension: import from storage -------------------------------------------------------

    def import_hudi_instants(self, db: str, table: str, instants, listed_files=None,
                             missing_files=None, config=None) -> ImportResult:
        """Adopt instants that happened on storage (ImportedInstant list) and a listing's files
        (HudiFile lists), in one transaction; repeating it changes nothing. `config` (optional, as
        for register_hudi_table): the table's hoodie.properties as on storage now."""
        return self.call("import_hudi_instants", db, table, list(instants), list(listed_files or []),
                         list(missing_files or []), _config(config) if config is not None else None)


LOOKUP_BATCH = 200_000  # keys per lookup_record_keys call


def file_group_keys(partition_path: str, file_id: str, inserted=(), updated=(), deleted=(),
                    instant: str | None = None) -> FileGroupKeys:
    """A FileGroupKeys struct with its key blocks encoded."""
    return FileGroupKeys(partitionPath=partition_path, fileId=file_id,
                         inserted=encode_keys(inserted) if inserted else None,
                         updated=encode_keys(updated) if updated else None,
                         deleted=encode_keys(deleted) if deleted else None, instant=instant)


def _config(config) -> HudiTableConfig:
    if isinstance(config, HudiTableConfig):
        if isinstance(config.tableType, str):
            t = HudiTableConfig(**{k: getattr(config, k) for k in config.__dict__})
            t.tableType = HudiTableType._NAMES_TO_VALUES[config.tableType.upper()]
            return t
        return config
    if isinstance(config, FormatConfig):
        return config_to_thrift(config)
    raise TypeError(f"expected a HudiTableConfig, got {type(config).__name__}")


def slices_of(pruned: PrunedFileSlices) -> list[FileSlice]:
    """Every slice of a prune_file_slices answer, compact or not, as FileSlice structs ordered by
    (partition, file id) as the server orders them."""
    out = list(pruned.slices or [])
    c = pruned.baseFiles
    if c is not None:
        out += [FileSlice(p, fid, bi, HudiFile(p, fid, name, size, bi, False, None, ct, path or None), [])
                for p, fid, bi, name, size, ct, path in zip(c.partitionPaths, c.fileIds, c.baseInstants, c.names,
                                                             c.sizes, c.commitTimes, c.paths, strict=True)]
        out.sort(key=lambda s: (s.partitionPath, s.fileId))
    return out
