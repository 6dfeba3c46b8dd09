"""The notification log (Hive's NOTIFICATION_LOG): events written in the transactions of the changes
they describe, read by consumers that poll for events after the last one they saw.

Ordering: an event's id is taken from the 'notification_event' row of `sequences` under that row's
lock (`SELECT ... FOR UPDATE`; on SQLite the IMMEDIATE write transaction already serializes
writers), held until the writing transaction ends. A transaction that records an event therefore
waits for every earlier one that did to commit or roll back, and ids increase in commit order: a
consumer that has read every event up to id N never later sees a new event with an id <= N, and
ids have no gaps (a rolled-back transaction takes its ids back with it). Retention deletes the
oldest events only.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Sequence
from typing import Any

from sqlalchemy import Connection, delete, func, insert, select, update
from sqlalchemy.exc import IntegrityError

from store.db import schema as S
from store.db.bulk import insert_rows
from store.db.database import Store, now_s
from store.db.dialect import in_list
from store.hms.notification_log import messages
from store.hms.notification_log.events import DEFAULT_CATALOG, Event
from thrift_idl.hive_metastore.ttypes import NotificationEvent

log = logging.getLogger("hudi_metastore.notifications")

SEQUENCE = "notification_event"
DEFAULT_TTL_S = 86_400  # Hive's hive.metastore.event.db.listener.timetolive
DEFAULT_CLEAN_INTERVAL_S = 7_200  # Hive's hive.metastore.event.db.listener.clean.interval
MAX_EVENTS = 10_000  # events one get_next_notification answers at most (Hive: 1,000,000)
MAX_RESPONSE_CHARS = 64 << 20  # message text one answer carries at most (beyond its first event)
CLEAN_BATCH = 1_000  # events one cleaner transaction deletes
_READ_CHUNK = 500

_L = S.notification_log
_COLUMNS = ("event_id", "event_time", "event_type", "cat_name", "db_name", "tbl_name", "message", "message_format")
# their types for PostgreSQL's binary COPY: messages go as they are (text COPY escapes every
# backslash of their JSON, and the server reads them back)
_PG_TYPES = ("int8", "int4", "text", "text", "text", "text", "text", "text")


class NotificationLog:
    """Writes events into the caller's transaction (`record`) and answers the readers of the log.

    `server` and `service_principal` go into every message as Hive's `hive.metastore.uris` and
    Kerberos principal do (empty by default, as on a Hive Metastore without them configured)."""

    def __init__(self, store: Store, server: str = "", service_principal: str = "",
                 ttl_s: int = DEFAULT_TTL_S, clock_s: Callable[[], int] = now_s,
                 max_events: int = MAX_EVENTS, max_response_chars: int = MAX_RESPONSE_CHARS):
        self.store = store
        self.server = server
        self.service_principal = service_principal
        self.ttl_s = ttl_s
        self.clock_s = clock_s
        self.max_events = max_events
        self.max_response_chars = max_response_chars
        self._stop = threading.Event()
        self._cleaner: threading.Thread | None = None

    # --- writing ----------------------------------------------------------------------------------

    def record(self, conn: Connection, *events: Event) -> list[int]:
        """Append `events` to the log inside the caller's write transaction `conn`; returns their ids.
        Call it as the transaction's last statement: from here until the commit, every other
        transaction recording an event waits."""
        return self.record_encoded(conn, self.encode(*events))  # encoded before the id lock is taken

    def encode(self, *events: Event) -> list[dict[str, Any]]:
        """The rows of `events` for `record_encoded`: their messages' text, the Python part of
        recording them (a caller may do it while the database works on its other writes)."""
        now = self.clock_s()
        return [self._row(e, now) for e in events]

    def record_encoded(self, conn: Connection, rows: list[dict[str, Any]]) -> list[int]:
        """`record` of events `encode` made."""
        if not rows:
            return []
        first = self._take_ids(conn, len(rows))
        for i, row in enumerate(rows):
            row["event_id"] = first + i
        if len(rows) == 1:
            conn.execute(insert(_L), rows)
        else:  # a batch's events in one statement (COPY on PostgreSQL; store/db/bulk.py). Widths
            # need no check: names are the stored objects', messages JSON text (no NUL, no limit)
            insert_rows(conn, _L, _COLUMNS, [tuple(r[c] for c in _COLUMNS) for r in rows], None, pg_types=_PG_TYPES)
        return [first + i for i in range(len(rows))]

    def record_now(self, *events: Event) -> list[int]:
        """`record` in a transaction of its own (events about no other change, e.g. INSERT)."""
        return self.store.run_write(self.record, *events)

    def _row(self, event: Event, now: int) -> dict[str, Any]:
        body = dict(event.body, server=self.server, servicePrincipal=self.service_principal, timestamp=now)
        return {"event_time": now, "event_type": event.event_type, "cat_name": event.cat_name,
                "db_name": event.db_name, "tbl_name": event.table_name, "message": messages.encode(body),
                "message_format": messages.FORMAT}

    def _take_ids(self, conn: Connection, count: int) -> int:
        """The first of `count` new event ids, under the sequence row's lock (held until commit)."""
        seq = S.sequences
        stmt = select(seq.c.next_val).where(seq.c.name == SEQUENCE)
        if self.store.backend != "sqlite":
            stmt = stmt.with_for_update()
        first = conn.execute(stmt).scalar()
        if first is None:  # a schema made without the migration that creates the row
            try:
                with conn.begin_nested():
                    conn.execute(insert(seq).values(name=SEQUENCE, next_val=1))
            except IntegrityError:
                pass  # another process created it first
            first = conn.execute(stmt).scalar_one()
        conn.execute(update(seq).where(seq.c.name == SEQUENCE).values(next_val=first + count))
        return first

    # --- reading ----------------------------------------------------------------------------------

    def current_id(self) -> int:
        """The id of the last event recorded (0 before the first), even when retention removed it."""
        with self.store.read() as conn:
            next_val = conn.execute(select(S.sequences.c.next_val).where(S.sequences.c.name == SEQUENCE)).scalar()
        return (next_val or 1) - 1

    def next_events(self, last_event: int, max_events: int | None = None, skip_types: Sequence[str] = (),
                    cat: str | None = None, db: str | None = None,
                    tables: Sequence[str] = ()) -> list[NotificationEvent]:
        """Events after `last_event` in id order, as Hive's get_next_notification filters them: at
        most `max_events` (unset or < 1: as many as one answer may carry) and, beyond the first,
        no more than `max_response_chars` of message text."""
        limit = self.max_events if max_events is None or max_events < 1 else min(max_events, self.max_events)
        where = [_L.c.event_id > last_event]
        if cat is not None:
            where.append(_L.c.cat_name == cat.lower())
        if db is not None:
            where.append(_L.c.db_name == db.lower())
        if tables:
            where.append(in_list(self.store.backend, _L.c.tbl_name, sorted({t.lower() for t in tables})))
        if skip_types:
            where.append(_L.c.event_type.not_in(list(skip_types)))
        out: list[NotificationEvent] = []
        chars = 0
        after = last_event
        with self.store.read() as conn:
            while len(out) < limit:
                rows = conn.execute(select(_L).where(*where, _L.c.event_id > after)
                                    .order_by(_L.c.event_id).limit(min(_READ_CHUNK, limit - len(out)))).all()
                for r in rows:
                    chars += len(r.message)
                    if out and chars > self.max_response_chars:
                        return out
                    out.append(_event(r))
                if len(rows) < _READ_CHUNK:
                    break
                after = rows[-1].event_id
        return out

    def count(self, from_event: int, db: str, cat: str | None = None, to_event: int | None = None,
              limit: int | None = None, tables: Sequence[str] = ()) -> int:
        """Hive's get_notification_events_count: events after `from_event` (up to `to_event`) of
        database `db` ('*': any) and catalog `cat` (default 'hive'); events of no database or
        catalog count for every one; at most `limit`."""
        where = [_L.c.event_id > from_event,
                 (_L.c.cat_name == (cat or DEFAULT_CATALOG).lower()) | _L.c.cat_name.is_(None)]
        if db != "*":
            where.append((_L.c.db_name == db.lower()) | _L.c.db_name.is_(None))
        if to_event is not None:
            where.append(_L.c.event_id <= to_event)
        if tables:
            where.append(in_list(self.store.backend, _L.c.tbl_name, sorted({t.lower() for t in tables})))
        with self.store.read() as conn:
            n = conn.execute(select(func.count()).select_from(_L).where(*where)).scalar_one()
        return min(n, limit) if limit is not None else n

    # --- retention --------------------------------------------------------------------------------

    def clean(self, ttl_s: int | None = None, batch: int = CLEAN_BATCH) -> int:
        """Delete events older than `ttl_s` seconds (default: the log's), oldest first, `batch` per
        transaction; returns how many."""
        cutoff = self.clock_s() - (self.ttl_s if ttl_s is None else ttl_s)
        total = 0
        while True:
            n = self.store.run_write(self._clean_batch, cutoff, batch)
            total += n
            if n < batch:
                return total

    @staticmethod
    def _clean_batch(conn: Connection, cutoff: int, batch: int) -> int:
        ids = conn.execute(select(_L.c.event_id).where(_L.c.event_time <= cutoff)
                           .order_by(_L.c.event_id).limit(batch)).scalars().all()
        if ids:
            conn.execute(delete(_L).where(_L.c.event_id.in_(ids)))
        return len(ids)

    def start_cleaner(self, interval_s: float = DEFAULT_CLEAN_INTERVAL_S) -> None:
        """Run `clean` now and then every `interval_s` seconds in a background thread."""
        if self._cleaner is not None and self._cleaner.is_alive():
            return
        self._stop.clear()

        def run() -> None:
            while not self._stop.is_set():
                try:
                    n = self.clean()
                    if n:
                        log.info("deleted %d notification events older than %d s", n, self.ttl_s)
                except Exception:  # noqa: BLE001 - e.g. the database is away for a moment
                    log.exception("notification log cleaning failed")
                self._stop.wait(interval_s)

        self._cleaner = threading.Thread(target=run, name="notification-log-cleaner", daemon=True)
        self._cleaner.start()

    def stop(self, timeout: float = 30) -> None:
        self._stop.set()
        if self._cleaner is not None:
            self._cleaner.join(timeout)
            self._cleaner = None


def _event(r) -> NotificationEvent:
    return NotificationEvent(eventId=r.event_id, eventTime=r.event_time, eventType=r.event_type,
                             dbName=r.db_name, tableName=r.tbl_name, message=r.message,
                             messageFormat=r.message_format, catName=r.cat_name)
