"""markPartitionForEvent / isPartitionMarkedForEvent (store/hms/partitions/partition_events.py)."""

from __future__ import annotations

from adapter.naming import db_name
from store.errors import InvalidObject, NoSuchObject
from store.hms.partitions import PartitionEvents
from thrift_idl.hive_metastore.ttypes import InvalidPartitionException, UnknownTableException


class PartitionEventHandler:
    def __init__(self, events: PartitionEvents):
        self.events = events

    def markPartitionForEvent(self, db_name_, tbl_name, part_vals, eventType):
        self._call(self.events.mark, db_name_, tbl_name, part_vals, eventType)

    def isPartitionMarkedForEvent(self, db_name_, tbl_name, part_vals, eventType):
        return self._call(self.events.is_marked, db_name_, tbl_name, part_vals, eventType)

    @staticmethod
    def _call(fn, db, tbl, part_vals, event_type):
        """Hive's exceptions for these calls: UnknownTableException for a missing table (or
        database), InvalidPartitionException for values that do not name the partition keys."""
        try:
            return fn(db_name(db), tbl or "", part_vals, event_type)
        except NoSuchObject as exc:
            raise UnknownTableException(f"Table: {(tbl or '').lower()} is not found.") from exc
        except InvalidObject as exc:
            raise InvalidPartitionException(exc.message) from exc
