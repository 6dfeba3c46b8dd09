"""Partitions marked for an event (markPartitionForEvent / isPartitionMarkedForEvent), kept by name
as Hive's PARTITION_EVENTS: the table must exist and the values must name every partition key,
but the partition itself need not exist, and the marks outlive a dropped table (Hive's event
expiry is off by default)."""

from __future__ import annotations

from sqlalchemy import Connection, select

from store.db import schema as S
from store.db.database import Store, now_ms
from store.errors import InvalidObject, MetaError
from store.hms.partitions.partition_context import TableContexts, TableCtx
from store.hms.partitions.partition_names import make_name
from thrift_idl.hive_metastore.ttypes import PartitionEventType

_E = S.partition_events


class PartitionEvents:
    def __init__(self, store: Store):
        self.store = store
        self.contexts = TableContexts(store.backend)

    def mark(self, db: str, table: str, values: dict[str, str] | None, event_type: int | None) -> None:
        """NoSuchObject for a missing table; InvalidObject for values that do not name the
        partition keys (Hive: InvalidPartitionException)."""
        self.store.run_write(self._mark, db, table, values, event_type)

    def _mark(self, conn: Connection, db: str, table: str, values: dict[str, str] | None,
              event_type: int | None) -> None:
        ctx, name = self._partition(conn, db, table, values, event_type)
        conn.execute(_E.insert().values(db_name=ctx.db_name, tbl_name=ctx.name, part_name=name,
                                        event_type=event_type, event_time=now_ms()))

    def is_marked(self, db: str, table: str, values: dict[str, str] | None, event_type: int | None) -> bool:
        with self.store.read() as conn:
            ctx, name = self._partition(conn, db, table, values, event_type)
            return conn.execute(select(_E.c.event_id).where(
                _E.c.db_name == ctx.db_name, _E.c.tbl_name == ctx.name, _E.c.part_name == name,
                _E.c.event_type == event_type).limit(1)).first() is not None

    def _partition(self, conn: Connection, db: str, table: str, values: dict[str, str] | None,
                   event_type: int | None) -> tuple[TableCtx, str]:
        if event_type not in PartitionEventType._VALUES_TO_NAMES:
            raise MetaError(f"Unknown partition event type {event_type}")
        if values is None:
            raise MetaError("Partition values are required")
        ctx = self.contexts.read(conn, db, table)
        if len(values) != len(ctx.keys):
            raise InvalidObject(f"Number of partition columns in table: {len(ctx.keys)} doesn't match with "
                                f"number of supplied partition values: {len(values)}")
        ordered = []
        for key in ctx.key_names:
            if key not in values:
                raise InvalidObject(f"No value found for partition column: {key}")
            ordered.append(values[key])
        return ctx, make_name(ctx.key_names, ordered)
