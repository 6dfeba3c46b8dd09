"""HudiCatalog: the metastore as the pipeline and the CLI's table commands see it, in plain Python
values and the client's own errors. Thrift stays here: every call goes through a
HudiMetastoreClient (its connection reuse and retries), and its structs and exceptions are
converted at this edge (client/convert.py, client/errors.py), as PyIceberg's Hive catalog does.

    with HudiCatalog("thrift://127.0.0.1:9083") as c:
        cfg = c.get_hudi_table("db", "t")                  # hudi_format HudiTableConfig
        for s in c.get_latest_file_slices("db", "t"):      # hudi_format FileSlice
            print(s.partition_path, s.base_file.name if s.base_file else None)

Hudi calls keep the extension's method names; tables, instants, files and file slices are
hudi_format's dataclasses, the rest client/values.py's. Errors: client/errors.py (NotFound,
AlreadyExists, CommitConflict, ...); OSError/EOFError of a connection that stayed down pass as they
are.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Self

from hudi_format.commit_metadata import restore_plan
from hudi_format.file_slice import FileInfo, FileSlice
from hudi_format.instant import Instant
from hudi_format.table_config import HudiTableConfig
from thrift_idl.hive_metastore.ttypes import Database as ThriftDatabase

from . import convert
from .errors import converted
from .hudi_client import HudiMetastoreClient
from .values import (
    BaseFileStats,
    Column,
    Database,
    FileGroupKeys,
    HiveTable,
    ImportedInstant,
    ImportResult,
    KeyLocations,
    PrunedSlices,
    TableStats,
)

__all__ = ["HudiCatalog"]


class HudiCatalog:
    """One metastore connection (opened on first use; `uri` and `options` as HudiMetastoreClient's)."""

    def __init__(self, uri: str = "thrift://127.0.0.1:9083", **options):
        self._client = HudiMetastoreClient(uri, **options)

    @property
    def uri(self) -> str:
        return self._client.uri

    @property
    def security(self):
        """The connection's Security (client/security.py)."""
        return self._client.security

    def close(self) -> None:
        self._client.close()

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"HudiCatalog({self.uri!r})"

    # --- databases and tables of the Hive Metastore ------------------------------------------------

    def list_databases(self, pattern: str | None = None) -> list[str]:
        """Database names, sorted; `pattern`: Hive's (`*` any text, `|` alternatives), as SHOW DATABASES LIKE."""
        with converted():
            names = self._client.get_databases(pattern) if pattern else self._client.get_all_databases()
        return sorted(names)

    def get_database(self, db: str) -> Database:
        with converted():
            d = self._client.get_database(db)
        return Database(d.name, d.locationUri, d.description, d.ownerName, dict(d.parameters or {}))

    def create_database(self, db: str, description: str | None = None, location: str | None = None) -> None:
        """`location` None: the server's warehouse decides."""
        with converted():
            self._client.create_database(ThriftDatabase(name=db, description=description, locationUri=location,
                                                        parameters={}))

    def drop_database(self, db: str, delete_data: bool = False, cascade: bool = False) -> None:
        with converted():
            self._client.drop_database(db, delete_data, cascade)

    def list_tables(self, db: str, pattern: str | None = None) -> list[str]:
        """Table (and view) names of `db`, sorted; `pattern`: Hive's, as SHOW TABLES LIKE. NotFound
        when the database does not exist (the Hive call itself answers an empty list)."""
        with converted():
            self._client.get_database(db)
            return sorted(self._client.get_tables(db, pattern or "*"))

    def get_tables(self, db: str, names: list[str], batch: int = 300) -> list[HiveTable]:
        """The tables of `names` that exist, `batch` a call (Hive's hive.metastore.batch.retrieve.max)."""
        names = list(names)
        with converted():
            return [convert.table_from_thrift(t) for i in range(0, len(names), batch)
                    for t in self._client.get_table_objects_by_name(db, names[i:i + batch])]

    def get_table(self, db: str, table: str) -> HiveTable:
        with converted():
            return convert.table_from_thrift(self._client.get_table(db, table))

    def alter_table_columns(self, db: str, table: str, columns: list[Column],
                            parameters: dict[str, str] | None = None) -> None:
        """The table's data columns become `columns`, its parameters `parameters` (None: they stay);
        the rest of it stays."""
        with converted():
            t = self._client.get_table(db, table)
            t.sd.cols = convert.columns_to_thrift(columns)
            if parameters is not None:
                t.parameters = dict(parameters)
            self._client.alter_table(db, table, t)

    def drop_table(self, db: str, table: str, delete_data: bool) -> None:
        with converted():
            self._client.drop_table(db, table, delete_data)

    # --- partitions of the Hive Metastore ----------------------------------------------------------

    def list_partition_names(self, db: str, table: str, filter: str | None = None, limit: int = -1) -> list[str]:
        """The table's partition names (`k1=v1/k2=v2`, as SHOW PARTITIONS), sorted; `filter`: Hive's
        filter over the partition keys (get_partitions_by_filter); `limit` -1: all."""
        with converted():
            if not filter:
                return sorted(self._client.get_partition_names(db, table, limit))
            keys = [k.name for k in self._client.get_table(db, table).partitionKeys or []]
            parts = self._client.get_partitions_by_filter(db, table, filter, limit)
        return sorted(convert.partition_name(keys, p.values or []) for p in parts)

    def drop_partition(self, db: str, table: str, name: str, delete_data: bool = True) -> None:
        """Drop partition `name` (`k1=v1/k2=v2`); `delete_data`: its directory goes too, where the
        server deletes data (a MANAGED table's)."""
        with converted():
            self._client.drop_partition_by_name(db, table, name, delete_data)

    # --- delegation tokens (a Kerberos client's, for its tasks: Security.with_token) ----------------

    def get_delegation_token(self, owner: str = "", renewer: str = "") -> str:
        """A token for the logged-in Kerberos user (`owner` empty: the caller), in its string form."""
        with converted():
            return self._client.get_delegation_token(owner, renewer)

    def cancel_delegation_token(self, token: str) -> None:
        with converted():
            self._client.cancel_delegation_token(token)

    # --- Hudi tables -------------------------------------------------------------------------------

    def register_hudi_table(self, config: HudiTableConfig, columns: Iterable | None = None) -> None:
        """`columns`: Column values or (name, type[, comment]) tuples; None lets the server derive
        them from the config's Avro schema."""
        with converted():
            self._client.register_hudi_table(config, None if columns is None else convert.columns_to_thrift(columns))

    def get_hudi_table(self, db: str, table: str) -> HudiTableConfig:
        with converted():
            return convert.config_from_thrift(self._client.get_hudi_table(db, table))

    def get_hudi_table_stats(self, db: str, table: str) -> TableStats:
        with converted():
            return convert.stats_from_thrift(self._client.get_hudi_table_stats(db, table))

    def sync_storage(self, db: str, table: str) -> int:
        """Mirror the table's timeline and snapshot to its storage now; the versions mirrored."""
        with converted():
            return self._client.sync_storage(db, table)

    # --- timeline ----------------------------------------------------------------------------------

    def create_instant(self, db: str, table: str, timestamp: str | None, action: str, plan=None,
                       heartbeat_timeout_s: int = 0) -> Instant:
        with converted():
            return convert.instant_from_thrift(self._client.create_instant(db, table, timestamp, action, plan,
                                                                           heartbeat_timeout_s))

    def transition_to_inflight(self, db: str, table: str, timestamp: str, action: str,
                               workload_profile=None) -> Instant:
        with converted():
            return convert.instant_from_thrift(self._client.transition_to_inflight(db, table, timestamp, action,
                                                                                   workload_profile))

    def complete_instant(self, db: str, table: str, timestamp: str, action: str, commit_metadata,
                         record_keys: list[FileGroupKeys] | None = None,
                         column_stats: list[BaseFileStats] | None = None) -> Instant:
        """Raises CommitConflict when another writer's commit conflicts (the instant is then expired)."""
        keys = None if record_keys is None else [convert.keys_to_thrift(k) for k in record_keys]
        stats = None if column_stats is None else [convert.file_stats_to_thrift(s) for s in column_stats]
        # a big commit takes the server longer than a call's usual timeout: a second per 20,000 keys
        # and per 1,000 files on top of it
        n_keys = sum(len(k.inserted or []) + len(k.updated or []) + len(k.deleted or []) for k in keys or [])
        wait = (self._client.timeout_s or 0) + n_keys / 20_000 + len(stats or []) / 1000
        with converted(), self._client.waiting(wait):
            done = self._client.complete_instant(db, table, timestamp, action, commit_metadata, keys, stats)
            return convert.instant_from_thrift(done.instant)

    def heartbeat_instant(self, db: str, table: str, timestamp: str) -> None:
        with converted():
            self._client.heartbeat_instant(db, table, timestamp)

    def add_markers(self, db: str, table: str, timestamp: str, paths) -> None:
        with converted():
            self._client.add_markers(db, table, timestamp, paths)

    def list_instants(self, db: str, table: str, states=None, actions=None, min_ts: str | None = None,
                      max_ts: str | None = None) -> list[Instant]:
        """states: names ("COMPLETED"); bounds inclusive; None: no condition."""
        with converted():
            return [convert.instant_from_thrift(i)
                    for i in self._client.list_instants(db, table, states, actions, min_ts, max_ts)]

    def get_instant_metadata(self, db: str, table: str, timestamp: str, action: str, state="COMPLETED") -> bytes:
        with converted():
            return self._client.get_instant_metadata(db, table, timestamp, action, state)

    def get_failed_instants(self, db: str, table: str) -> list[Instant]:
        with converted():
            return [convert.instant_from_thrift(i) for i in self._client.get_failed_instants(db, table)]

    def rollback_instant(self, db: str, table: str, timestamp: str) -> list[str]:
        """The paths the rollback deleted."""
        with converted():
            return list(self._client.rollback_instant(db, table, timestamp).deletedPaths or [])

    def savepoint(self, db: str, table: str, commit: str, metadata: bytes = b"") -> Instant:
        """Savepoint completed commit `commit` (the savepoint takes its time); `metadata` empty: the
        server lists the files it holds."""
        with converted():
            self._client.create_instant(db, table, commit, "savepoint", b"", 0)
            self._client.transition_to_inflight(db, table, commit, "savepoint", b"")
            return convert.instant_from_thrift(
                self._client.complete_instant(db, table, commit, "savepoint", metadata).instant)

    def delete_savepoint(self, db: str, table: str, timestamp: str) -> Instant:
        with converted():
            return convert.instant_from_thrift(self._client.delete_savepoint(db, table, timestamp))

    def restore(self, db: str, table: str, savepoint: str,
                record_keys: list[FileGroupKeys] | None = None) -> Instant:
        """Restore the table to `savepoint`: every write instant after it is rolled back (their files
        leave the table and storage); the completed restore instant. `record_keys`: for a table
        keeping a record index, the keys each changed file group holds at the savepoint (`inserted`,
        with the instant that wrote them)."""
        keys = None if record_keys is None else [convert.keys_to_thrift(k) for k in record_keys]
        with converted():
            inst = self._client.create_instant(db, table, "", "restore", restore_plan(savepoint, []), 0)
            self._client.transition_to_inflight(db, table, inst.timestamp, "restore", b"")
            return convert.instant_from_thrift(self._client.complete_instant(
                db, table, inst.timestamp, "restore", b"", keys).instant)

    # --- snapshot ----------------------------------------------------------------------------------

    def get_hudi_partitions(self, db: str, table: str, filter: str | None = None) -> list[str]:
        with converted():
            return list(self._client.get_hudi_partitions(db, table, filter))

    def get_latest_file_slices(self, db: str, table: str, partitions=None, as_of: str | None = None) -> list[FileSlice]:
        """partitions None/[]: all; as_of None: latest completed."""
        with converted():
            return [convert.slice_from_answer(s)
                    for s in self._client.get_latest_file_slices(db, table, partitions, as_of)]

    def prune_file_slices(self, db: str, table: str, predicate: str | None = None) -> PrunedSlices:
        """Latest slices whose column statistics allow a row matching `predicate` (Hive filter
        grammar over any column, plus IS [NOT] NULL), with what was skipped."""
        with converted():
            return convert.pruned_from_answer(self._client.prune_file_slices(db, table, predicate, compact=True))

    def get_files_changed(self, db: str, table: str, since: str | None = None,
                          until: str | None = None) -> list[FileInfo]:
        """Files written by instants in (since, until]; None: open bound."""
        with converted():
            return [convert.file_from_answer(f) for f in self._client.get_files_changed(db, table, since, until)]

    def get_all_files(self, db: str, table: str, partition: str = "") -> list[FileInfo]:
        with converted():
            return [convert.file_from_answer(f) for f in self._client.get_all_files(db, table, partition)]

    # --- record-level index ------------------------------------------------------------------------

    def lookup_record_keys(self, db: str, table: str, keys) -> list[tuple[str, str, str] | None]:
        """Where each key (str) lives: (partition path, file id, instant) or None, in order."""
        with converted():
            return self._client.lookup_record_keys(db, table, keys)

    def locate_record_keys(self, db: str, table: str, key_block: bytes) -> KeyLocations:
        """One lookup of a key block (hudi_format.record_key_codec.encode_keys), answered as columns."""
        with converted():
            return convert.key_locations_from_thrift(self._client.call("lookup_record_keys", db, table, key_block))

    def load_record_index(self, db: str, table: str, file_groups: list[FileGroupKeys], reset: bool = False,
                          enable: bool | None = None) -> int:
        """Add keys to the table's index (after clearing it with `reset`); `enable` True turns the
        index on, False off, None leaves it. The number of keys the index holds."""
        groups = [convert.keys_to_thrift(k) for k in file_groups]
        with converted():
            return self._client.load_record_index(db, table, groups, reset, enable)

    # --- column statistics -------------------------------------------------------------------------

    def list_files_without_column_stats(self, db: str, table: str, limit: int = 0,
                                        log_files: bool = False) -> list[str]:
        with converted():
            return list(self._client.list_files_without_column_stats(db, table, limit, log_files))

    def load_column_stats(self, db: str, table: str, stats: list[BaseFileStats]) -> int:
        structs = [convert.file_stats_to_thrift(s) for s in stats]
        with converted():
            return self._client.load_column_stats(db, table, structs)

    # --- import from storage -----------------------------------------------------------------------

    def import_hudi_instants(self, db: str, table: str, instants: list[ImportedInstant],
                             listed_files: list[FileInfo] | None = None, missing_files: list[FileInfo] | None = None,
                             config: HudiTableConfig | None = None) -> ImportResult:
        """Adopt instants that happened on storage and a listing's files in one transaction
        (repeating it changes nothing); `config`: the table's hoodie.properties as on storage now."""
        sent = [convert.imported_instant_to_thrift(i) for i in instants]
        listed = [convert.file_to_thrift(f) for f in listed_files or []]
        missing = [convert.file_to_thrift(f) for f in missing_files or []]
        with converted():
            return convert.import_result_from_thrift(
                self._client.import_hudi_instants(db, table, sent, listed, missing, config))
