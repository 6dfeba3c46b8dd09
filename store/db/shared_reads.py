"""One-row lookups that concurrent calls of a process share, as a group commit shares a flush.

A caller that finds no lookup under way runs one statement for its key. Callers that come while it
runs queue up; when it ends, the first of them runs one statement for every key queued, and so on.
Each statement starts after every call it answers began, so no call reads anything older than it
would have read alone. Each call that joins a statement saves a connection checkout, a round trip
and the database's work (docs/performance.md, round three, part five: getTable under 8 clients).
"""

from __future__ import annotations

import threading
from collections import deque
from collections.abc import Callable, Hashable, Sequence
from typing import Generic, TypeVar

K = TypeVar("K", bound=Hashable)
V = TypeVar("V")


class _Waiter:
    __slots__ = ("key", "gate", "lead", "value", "failed")

    def __init__(self, key: Hashable):
        self.key = key
        self.gate = threading.Lock()
        self.gate.acquire()  # released by a leader: with the answer, or to lead
        self.lead = False
        self.value = None
        self.failed = False


class SharedReads(Generic[K, V]):
    """`get(key)`: `read(keys)`'s value for `key` (None when absent), the statement shared with the
    callers queued at the time. `read` gets at most `limit` distinct keys and may raise: the one
    whose statement failed raises; the others it answered each read their key alone."""

    def __init__(self, read: Callable[[Sequence[K]], dict[K, V]], limit: int = 16):
        self._read = read
        self.limit = limit
        self._mutex = threading.Lock()
        self._queue: deque[_Waiter] = deque()
        self._busy = False  # a caller is leading (invariant: not busy -> nobody queued)
        self.statements = 0  # counted, for tests and the benchmark's notes
        self.answered = 0

    def get(self, key: K) -> V | None:
        me = _Waiter(key)
        with self._mutex:
            self._queue.append(me)
            leading = not self._busy
            self._busy = True
        if not leading:
            me.gate.acquire()
            if not me.lead:
                if me.failed:
                    return self._read([key]).get(key)
                return me.value
        return self._lead(me)

    def _lead(self, me: _Waiter) -> V | None:
        with self._mutex:  # `me` is first in the queue
            batch: list[_Waiter] = []
            keys: dict[Hashable, None] = {}
            while self._queue and (len(keys) < self.limit or self._queue[0].key in keys):
                w = self._queue.popleft()
                batch.append(w)
                keys[w.key] = None
        found: dict = {}
        error: BaseException | None = None
        try:
            found = self._read(list(keys))  # type: ignore[arg-type]
        except BaseException as exc:  # noqa: BLE001 - raised below, for this caller only
            error = exc
        self.statements += 1
        self.answered += len(batch)
        for w in batch:
            if w is not me:
                w.value, w.failed = found.get(w.key), error is not None
                w.gate.release()
        with self._mutex:
            if self._queue:
                nxt = self._queue[0]
                nxt.lead = True
                nxt.gate.release()
            else:
                self._busy = False
        if error is not None:
            raise error
        return found.get(me.key)
