"""Notification log calls: get_next_notification, get_current_notificationEventId,
get_notification_events_count and fire_listener_event."""

from __future__ import annotations

from adapter.naming import check_catalog, db_name
from store.errors import MetaError
from store.hms.notification_log import ClientEvents, Insert, NotificationLog
from thrift_idl.hive_metastore.ttypes import (
    CurrentNotificationEventId,
    FireEventResponse,
    NotificationEventResponse,
    NotificationEventsCountResponse,
)


class NotificationHandler:
    def __init__(self, log: NotificationLog, client_events: ClientEvents):
        self.log = log
        self.client_events = client_events

    def get_next_notification(self, rqst):
        if rqst is None:
            raise MetaError("NotificationEventRequest is required")
        events = self.log.next_events(
            rqst.lastEvent or 0, rqst.maxEvents, rqst.eventTypeSkipList or (),
            cat=rqst.catName, db=rqst.dbName, tables=rqst.tableNames or ())
        return NotificationEventResponse(events=events)

    def get_current_notificationEventId(self):
        return CurrentNotificationEventId(eventId=self.log.current_id())

    def get_notification_events_count(self, rqst):
        if rqst is None or rqst.dbName is None:
            raise MetaError("NotificationEventsCountRequest with a dbName is required")
        n = self.log.count(rqst.fromEventId or 0, rqst.dbName, cat=rqst.catName, to_event=rqst.toEventId,
                           limit=rqst.limit, tables=rqst.tableNames or ())
        return NotificationEventsCountResponse(eventsCount=n)

    def fire_listener_event(self, rqst):
        data = rqst.data if rqst is not None else None
        if data is None:
            raise MetaError("FireEventRequest with data is required")
        check_catalog(rqst.catName)
        if data.insertData is not None:
            inserts = [_insert(data.insertData, rqst.partitionVals)]
        elif data.insertDatas is not None:
            inserts = [_insert(d, d.partitionVal) for d in data.insertDatas]
        else:
            raise MetaError("Event type refreshEvent not currently supported.")
        ids = self.client_events.fire_inserts(db_name(rqst.dbName), (rqst.tableName or "").lower(), inserts)
        return FireEventResponse(eventIds=ids)


def _insert(data, partition_values) -> Insert:
    return Insert(partition_values=partition_values, files=list(data.filesAdded or []),
                  checksums=data.filesAddedChecksum,
                  replace=data.replace if data.replace is not None else True)
