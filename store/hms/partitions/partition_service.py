"""RFC-36 partition service: partitions of a table, their key values (`partition_key_val`) and pruning.

`PartitionService` is the entry point the handlers and the Hudi services use; the work is done by
PartitionReads (partition_reads.py), PartitionWrites (add, drop, truncate: partition_writes.py) and
PartitionAlteration (alter, rename: partition_alteration.py), over the table context
(partition_context.py) and the SQL of partition reads (partition_queries.py).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from sqlalchemy import Connection

from store.db.database import Store
from store.errors import InvalidObject, NoSuchObject, StoreError
from store.hms.catalog import TableService
from store.hms.common import EncodedStrings, EncodedStructs
from store.hms.partitions.partition_alteration import PartitionAlteration
from store.hms.partitions.partition_context import TableContexts, TableCtx
from store.hms.partitions.partition_exchange import PartitionExchange
from store.hms.partitions.partition_queries import PartitionQueries
from store.hms.partitions.partition_reads import PartitionReads
from store.hms.partitions.partition_writes import PartitionWrites
from thrift_idl.hive_metastore.ttypes import Partition


class PartitionService:
    def __init__(self, store: Store, tables: TableService):
        self.store = store
        self.tables = tables
        self.contexts = TableContexts(store.backend)
        self.queries = PartitionQueries(store)
        self.reads = PartitionReads(store, self.contexts, self.queries)
        self.writes = PartitionWrites(store, self.contexts, self.queries, self.reads, tables)
        self.alteration = PartitionAlteration(store, self.contexts, self.queries, tables)
        self.exchange = PartitionExchange(self.contexts, self.queries, self.writes)

    def table_ctx(self, conn: Connection, db_name: str, tbl_name: str,
                  missing: type[StoreError] = NoSuchObject) -> TableCtx:
        return self.contexts.read(conn, db_name, tbl_name, missing)

    # --- reads ----------------------------------------------------------------------------------

    def get_partition(self, db: str, tbl: str, values: Sequence[str]) -> Partition:
        return self.reads.get_partition(db, tbl, values)

    def get_partition_by_name(self, db: str, tbl: str, name: str) -> Partition:
        return self.reads.get_partition_by_name(db, tbl, name)

    def get_partitions(self, db: str, tbl: str, max_parts: int = -1, part_vals: Sequence[str] | None = None,
                       filter_text: str | None = None) -> list[Partition]:
        return self.reads.get_partitions(db, tbl, max_parts, part_vals, filter_text)

    def encoded_partitions(self, db: str, tbl: str, max_parts: int = -1, part_vals: Sequence[str] | None = None,
                           filter_text: str | None = None) -> EncodedStructs:
        """`get_partitions` as Thrift bytes (store/hms/common/wire.py): what handlers answer."""
        return self.reads.encoded_partitions(db, tbl, max_parts, part_vals, filter_text)

    def encoded_without_columns(self, db: str, tbl: str, max_parts: int, filter_text: str | None,
                                built: Callable[[], Sequence[Partition]]) -> EncodedStructs | None:
        """get_partitions_by_filter_req's list without the descriptors' columns, as Thrift bytes;
        None where a partition has to be built."""
        return self.reads.encoded_without_columns(db, tbl, max_parts, filter_text, built)

    def encoded_partition_names(self, db: str, tbl: str, max_parts: int = -1) -> EncodedStrings | list[str]:
        """A table's partition names for an answer (store/hms/common/wire.py)."""
        return self.reads.encoded_partition_names(db, tbl, max_parts)

    def encoded_partition_names_ps(self, db: str, tbl: str, max_parts: int, part_vals: Sequence[str]) -> EncodedStrings:
        """get_partition_names_ps for an answer (store/hms/common/wire.py)."""
        return self.reads.encoded_partition_names_ps(db, tbl, max_parts, part_vals)

    def get_partition_names(self, db: str, tbl: str, max_parts: int = -1, part_vals: Sequence[str] | None = None,
                            filter_text: str | None = None) -> list[str]:
        return self.reads.get_partition_names(db, tbl, max_parts, part_vals, filter_text)

    def count_partitions(self, db: str, tbl: str, filter_text: str | None) -> int:
        return self.reads.count_partitions(db, tbl, filter_text)

    def get_partitions_by_names(self, db: str, tbl: str, names: Sequence[str] | None) -> list[Partition]:
        return self.reads.get_partitions_by_names(db, tbl, names)

    def encoded_partitions_by_names(self, db: str, tbl: str, names: Sequence[str] | None) -> EncodedStructs:
        return self.reads.encoded_partitions_by_names(db, tbl, names)

    def get_partitions_by_names_in(self, conn: Connection, ctx: TableCtx, names: Sequence[str]) -> list[Partition]:
        """The partitions of `names` that exist, inside the caller's transaction (`ctx`: `table_ctx`)."""
        return self.queries.named(conn, ctx, names)

    def get_partition_values(self, db: str, tbl: str, key_names: Sequence[str], filter_text: str | None,
                             ascending: bool = True, max_parts: int = -1) -> list[list[str]]:
        return self.reads.get_partition_values(db, tbl, key_names, filter_text, ascending, max_parts)

    # --- writes ---------------------------------------------------------------------------------

    def add_partitions(self, db: str, tbl: str, parts: list[Partition], if_not_exists: bool = False,
                       env: dict[str, str] | None = None, missing: type[StoreError] = InvalidObject,
                       conn: Connection | None = None) -> list[Partition]:
        return self.writes.add_partitions(db, tbl, parts, if_not_exists, env, missing, conn)

    def append_partition(self, db: str, tbl: str, values: Sequence[str] | None) -> Partition:
        return self.writes.append_partition(db, tbl, values)

    def append_partition_by_name(self, db: str, tbl: str, name: str) -> Partition:
        return self.writes.append_partition_by_name(db, tbl, name)

    def alter_partitions(self, db: str, tbl: str, parts: list[Partition], env: dict[str, str] | None = None) -> None:
        self.alteration.alter_partitions(db, tbl, parts, env)

    def rename_partition(self, db: str, tbl: str, old_values: Sequence[str] | None, new_part: Partition) -> None:
        self.alteration.rename_partition(db, tbl, old_values, new_part)

    def exchange_partitions(self, spec: dict[str, str] | None, src_db: str | None, src_tbl: str | None,
                            dst_db: str | None, dst_tbl: str | None) -> list[Partition]:
        """Move the partitions matching `spec` from the source table to the destination table."""
        return self.exchange.exchange(spec, src_db, src_tbl, dst_db, dst_tbl)

    def drop_partitions(self, db: str, tbl: str, names: Sequence[str] | None = None,
                        values_list: Sequence[Sequence[str]] | None = None, delete_data: bool = True,
                        if_exists: bool = False, need_result: bool = False,
                        exact_names: bool = False) -> EncodedStructs | None:
        return self.writes.drop_partitions(db, tbl, names, values_list, delete_data, if_exists, need_result,
                                           exact_names)

    def delete_rows_in(self, conn: Connection, part_ids: list[int], sd_ids: list[int]) -> None:
        """Delete these partitions' rows (and their own descriptors) inside the caller's transaction;
        no event is recorded and no directory deleted (store/hudi drops partitions through its commits)."""
        self.writes.delete_rows(conn, part_ids, sd_ids)

    def truncate(self, db: str, tbl: str, part_names: Sequence[str] | None) -> None:
        self.writes.truncate(db, tbl, part_names)
