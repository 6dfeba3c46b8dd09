"""The notification log: metastore events in Hive's NOTIFICATION_LOG form, for event-driven caches
and replication (docs/notifications.md). `events` builds them (one builder per Hive event type,
exported as a namespace: `events.create_table(table)`), `NotificationLog` (log.py) stores and serves
them, `messages` encodes them as Hive's JSONMessageEncoder does (a namespace too; `from_tjson`
decodes a message's Thrift object), `ClientEvents` (client_events.py) records the events clients fire.

The door of store/hms/notification_log: other packages import these names from here, never its
modules. Imports nothing else of store/hms.
"""

from store.hms.notification_log import events, messages
from store.hms.notification_log.client_events import ClientEvents, Insert
from store.hms.notification_log.log import DEFAULT_TTL_S, NotificationLog
from store.hms.notification_log.messages import from_tjson

__all__ = ["DEFAULT_TTL_S", "ClientEvents", "Insert", "NotificationLog", "events", "from_tjson", "messages"]
