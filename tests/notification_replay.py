"""A notification log consumer that replays one metastore's DDL into another through Thrift, as Hive
replication or a metadata cache does: poll get_next_notification after the last event applied,
decode each message (Hive's json-0.2: Thrift objects as TJSONProtocol text) and apply it.

Applied: CREATE_DATABASE, ALTER_DATABASE, DROP_DATABASE, CREATE_TABLE, ALTER_TABLE, DROP_TABLE,
ADD_PARTITION, ALTER_PARTITION, DROP_PARTITION. Other event types (INSERT, functions,
constraints) change no object this replayer copies and are counted as skipped.
"""

from __future__ import annotations

import json
from collections import Counter

from store.hms.notification_log import from_tjson
from thrift_idl.hive_metastore.ttypes import Database, NotificationEventRequest, Partition, Table


class Replayer:
    def __init__(self, source, target, last_event: int = 0, batch: int = 100):
        self.source = source  # ThriftHiveMetastore clients
        self.target = target
        self.last_event = last_event
        self.batch = batch
        self.applied: Counter[str] = Counter()
        self.skipped: Counter[str] = Counter()

    def poll(self) -> int:
        """Apply every event after the last one applied; returns how many were read."""
        total = 0
        while True:
            events = self.source.get_next_notification(
                NotificationEventRequest(lastEvent=self.last_event, maxEvents=self.batch)).events
            for e in events:
                assert e.eventId > self.last_event, (e.eventId, self.last_event)
                self.apply(e.eventType, json.loads(e.message))
                self.last_event = e.eventId
            total += len(events)
            if len(events) < self.batch:
                return total

    def apply(self, event_type: str, msg: dict) -> None:
        handler = getattr(self, "_" + event_type.lower(), None)
        if handler is None:
            self.skipped[event_type] += 1
            return
        handler(msg)
        self.applied[event_type] += 1

    # --- databases --------------------------------------------------------------------------------

    def _create_database(self, msg):
        self.target.create_database(from_tjson(msg["dbJson"], Database))

    def _alter_database(self, msg):
        self.target.alter_database(msg["db"], from_tjson(msg["dbObjAfterJson"], Database))

    def _drop_database(self, msg):
        self.target.drop_database(msg["db"], False, True)

    # --- tables -----------------------------------------------------------------------------------

    def _create_table(self, msg):
        self.target.create_table(from_tjson(msg["tableObjJson"], Table))

    def _alter_table(self, msg):
        before = from_tjson(msg["tableObjBeforeJson"], Table)
        self.target.alter_table(before.dbName, before.tableName, from_tjson(msg["tableObjAfterJson"], Table))

    def _drop_table(self, msg):
        self.target.drop_table(msg["db"], msg["table"], False)

    # --- partitions -------------------------------------------------------------------------------

    def _add_partition(self, msg):
        self.target.add_partitions([from_tjson(p, Partition) for p in msg["partitionListJson"]])

    def _alter_partition(self, msg):
        before = from_tjson(msg["partitionObjBeforeJson"], Partition)
        after = from_tjson(msg["partitionObjAfterJson"], Partition)
        if before.values != after.values:
            self.target.rename_partition(msg["db"], msg["table"], before.values, after)
        else:
            self.target.alter_partition(msg["db"], msg["table"], after)

    def _drop_partition(self, msg):
        for key_values in msg["partitions"]:
            self.target.drop_partition(msg["db"], msg["table"], list(key_values.values()), False)
