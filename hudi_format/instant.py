"""Hudi instants: actions, the REQUESTED -> INFLIGHT -> COMPLETED states, instant times."""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass

REQUESTED, INFLIGHT, COMPLETED = 1, 2, 3
STATE_NAMES = {REQUESTED: "REQUESTED", INFLIGHT: "INFLIGHT", COMPLETED: "COMPLETED"}
STATES = {v: k for k, v in STATE_NAMES.items()}
ACTIONS = ("commit", "deltacommit", "replacecommit", "clean", "rollback", "restore", "compaction",
           "logcompaction", "clustering", "savepoint", "indexing")
# Table version 6: a completed compaction is a commit, log compaction a deltacommit, clustering a replacecommit.
COMPLETED_AS = {"compaction": "commit", "logcompaction": "deltacommit", "clustering": "replacecommit"}
SAVEPOINT = "savepoint"
# An instant on a timeline: its time, and whether it is a savepoint (a savepoint shares the time of
# the commit it saves, so the time alone does not tell the two apart).
InstantKey = tuple[str, bool]


def instant_key(ts: str, action: str) -> InstantKey:
    return ts, action == SAVEPOINT

_FMT = "%Y%m%d%H%M%S%f"


def format_instant(ms: int) -> str:
    t = dt.datetime.fromtimestamp(ms / 1000, dt.timezone.utc)
    return t.strftime(_FMT)[:17]


def parse_instant(ts: str) -> int:
    if len(ts) == 14:
        ts += "000"
    t = dt.datetime.strptime(ts[:14], "%Y%m%d%H%M%S").replace(tzinfo=dt.timezone.utc)
    return int(t.timestamp() * 1000) + int(ts[14:17])


@dataclass
class Instant:
    ts: str
    action: str
    state: str  # REQUESTED | INFLIGHT | COMPLETED
    completion_ts: str | None
    requested_ms: int
    heartbeat_ms: int
    heartbeat_timeout_s: int
