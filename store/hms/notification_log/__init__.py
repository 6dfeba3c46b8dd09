"""The notification log: metastore events in Hive's NOTIFICATION_LOG form, for event-driven caches
and replication (docs/notifications.md). `events` builds them, `log` stores and serves them,
`messages` encodes them as Hive's JSONMessageEncoder does, `client_events` records the events
clients fire."""
