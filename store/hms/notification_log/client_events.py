"""Events that clients report (Hive's fire_listener_event): data written into a table or partition
by an engine, which the metastore cannot see itself. Each becomes an INSERT event."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol

from store.errors import MetaError
from store.hms.notification_log import events
from store.hms.notification_log.log import NotificationLog
from thrift_idl.hive_metastore.ttypes import Partition, Table


class TableReader(Protocol):
    def get_table(self, db_name: str, name: str) -> Table: ...


class PartitionReader(Protocol):
    def get_partition(self, db: str, tbl: str, values) -> Partition: ...


@dataclass(frozen=True)
class Insert:
    """One insert a client reports: into the partition with `partition_values` (None: the table)."""

    partition_values: Sequence[str] | None
    files: Sequence[str]
    checksums: Sequence[str] | None = None
    replace: bool = True  # Hive's default when the client does not say


class ClientEvents:
    def __init__(self, log: NotificationLog, tables: TableReader, partitions: PartitionReader):
        self.log = log
        self.tables = tables
        self.partitions = partitions

    def fire_inserts(self, db: str, table: str, inserts: Sequence[Insert]) -> list[int]:
        """Record one INSERT event per insert, in one transaction; returns their ids. The table and
        partitions must exist (NoSuchObject otherwise), as on Hive."""
        tbl = self.tables.get_table(db, table)
        built = []
        for ins in inserts:
            if ins.checksums and len(ins.checksums) != len(ins.files):
                raise MetaError("Number of files and checksums do not match for insert event")
            part = None
            if ins.partition_values is not None:
                part = self.partitions.get_partition(db, table, list(ins.partition_values))
            built.append(events.insert(tbl, part, ins.files, ins.checksums, ins.replace))
        return self.log.record_now(*built)
