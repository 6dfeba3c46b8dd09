"""RFC-36 instant time generation: 17-digit `yyyyMMddHHmmssSSS` (UTC) times, strictly increasing per
table across every server process. `tbl_timestamp` holds the last time handed out and is advanced
by compare-and-set."""

from __future__ import annotations

from collections.abc import Callable

from sqlalchemy import Connection, select, update
from sqlalchemy.exc import IntegrityError

from hudi_format.instant import format_instant, parse_instant
from store.db import schema as S
from store.errors import InvalidObject, InvalidOperation


def check_instant_time(ts: str) -> str:
    if not ts or not ts.isdigit() or len(ts) not in (14, 17):
        raise InvalidObject(f"Instant time must be 17 digits yyyyMMddHHmmssSSS: {ts!r}")
    try:
        parse_instant(ts)
    except ValueError:
        raise InvalidObject(f"Instant time is not a valid date: {ts!r}") from None
    return ts


class InstantTimes:
    def __init__(self, clock_ms: Callable[[], int]):
        self.clock_ms = clock_ms

    def advance(self, conn: Connection, tbl_id: int, at_least: str | None = None) -> str:
        """Next instant time of the table, strictly above every one handed out (compare-and-set)."""
        t = S.tbl_timestamp
        for _ in range(100):
            cur = conn.execute(select(t.c.ts).where(t.c.tbl_id == tbl_id)).scalar()
            cand = format_instant(self.clock_ms())
            if cur is not None and cand <= cur:
                cand = format_instant(parse_instant(cur) + 1)
            if at_least and cand < at_least:
                cand = at_least
            if cur is None:
                try:
                    with conn.begin_nested():
                        conn.execute(t.insert().values(tbl_id=tbl_id, ts=cand))
                    return cand
                except IntegrityError:
                    continue
            if conn.execute(update(t).where(t.c.tbl_id == tbl_id, t.c.ts == cur).values(ts=cand)).rowcount == 1:
                return cand
        raise InvalidOperation("Could not allocate an instant time (too much contention)")

    @staticmethod
    def bump_to(conn: Connection, tbl_id: int, ts: str) -> None:
        """Make sure no later instant time is handed out at or below `ts` (client-chosen times)."""
        t = S.tbl_timestamp
        cur = conn.execute(select(t.c.ts).where(t.c.tbl_id == tbl_id)).scalar()
        if cur is None:
            try:
                with conn.begin_nested():
                    conn.execute(t.insert().values(tbl_id=tbl_id, ts=ts))
                return
            except IntegrityError:
                pass  # another writer inserted the row: the update below raises it
        conn.execute(update(t).where(t.c.tbl_id == tbl_id, t.c.ts < ts).values(ts=ts))
