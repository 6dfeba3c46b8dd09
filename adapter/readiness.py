"""Readiness of a worker: its database answers and holds the schema revision this version needs.
`/readyz` and fb303 `getStatus` ask the same checker; answers are cached for a second so probes and
clients never add load to the database."""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass

from store.db.database import Store
from store.db.migrations import current_revision, head_revision


@dataclass(frozen=True)
class Status:
    ready: bool
    detail: str


class Readiness:
    def __init__(self, store: Store, ttl_s: float = 1.0):
        self.store = store
        self.ttl_s = ttl_s
        self._lock = threading.Lock()
        self._last: tuple[float, Status] | None = None
        self._head = head_revision()

    def status(self) -> Status:
        with self._lock:
            if self._last is not None and time.monotonic() - self._last[0] < self.ttl_s:
                return self._last[1]
            status = self._check()
            self._last = (time.monotonic(), status)
            return status

    def _check(self) -> Status:
        try:
            revision = current_revision(self.store.read_engine)
        except Exception as exc:  # noqa: BLE001 - any failure means: not ready, and why
            orig = getattr(exc, "orig", None) or exc
            text = " ".join(str(orig).split()) or type(orig).__name__
            return Status(False, f"database unreachable: {text[:300]}")
        if revision != self._head:
            return Status(False, f"database schema at revision {revision}, this server needs {self._head} "
                                 "(run `hudi-metastore db upgrade`)")
        return Status(True, f"database reachable, schema at revision {revision}")
