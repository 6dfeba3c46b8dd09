"""Memory a large request took, given back to the system (issue 41).

A partition filter of 50,000 terms left a worker at twice its memory for good, for three reasons:
SQLAlchemy kept the compiled statement (store/db/statement_cache.py keeps no such statements
now); compiling it left about 250,000 objects in reference cycles (each bound parameter refers to
itself), which only a full garbage collection frees and which an idle worker may never run; and
glibc's malloc keeps freed pages in its heaps (one per thread, and connections have a thread each)
until the top of a heap is free. So after each request:

- when statements with more than `COLLECT_AFTER_PARAMETERS` bound parameters were compiled and not
  kept since the last collection, a full collection (`gc.collect()`, a few hundred milliseconds
  after such a request, which took seconds);
- when the request was large (`LARGE_REQUEST_BYTES` on the wire), long (`LONG_CALL_S`, which large
  answers are too) or collected, glibc's `malloc_trim(0)`, which hands the free pages of every heap
  back (a few milliseconds on a large heap); elsewhere than glibc, nothing.

Each at most once per `MIN_INTERVAL_S` per worker.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import gc
import logging
import threading
import time
from collections.abc import Callable

from store.db import statement_cache

log = logging.getLogger("hudi_metastore.server")

LARGE_REQUEST_BYTES = 1024 * 1024
LONG_CALL_S = 0.5
COLLECT_AFTER_PARAMETERS = 10_000
MIN_INTERVAL_S = 1.0


def _malloc_trim() -> Callable[[int], int] | None:
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6")
        trim = libc.malloc_trim
    except (OSError, AttributeError):
        return None
    trim.argtypes, trim.restype = [ctypes.c_size_t], ctypes.c_int
    return trim


class MemoryRelease:
    def __init__(self, trim: Callable[[int], int] | None = None, clock: Callable[[], float] = time.monotonic):
        self.trim = trim if trim is not None else _malloc_trim()
        self.clock = clock
        self._lock = threading.Lock()
        self._last = float("-inf")
        self._collected_at = statement_cache.uncached_parameters()

    def after_request(self, seconds: float, request_bytes: int) -> str:
        """Called as each request ends; what was done ("", "trim", "collect+trim")."""
        collect = statement_cache.uncached_parameters() - self._collected_at >= COLLECT_AFTER_PARAMETERS
        if not collect and (self.trim is None or (seconds < LONG_CALL_S and request_bytes < LARGE_REQUEST_BYTES)):
            return ""
        now = self.clock()
        with self._lock:
            if now - self._last < MIN_INTERVAL_S:
                return ""
            self._last = now
            if collect:
                self._collected_at = statement_cache.uncached_parameters()
        done = []
        if collect:
            gc.collect()
            done.append("collect")
        if self.trim is not None:
            try:
                self.trim(0)
                done.append("trim")
            except Exception as exc:  # noqa: BLE001 - never fails a request
                log.debug("malloc_trim failed: %s", exc)
        what = "+".join(done)
        # a collection is rare (statements of over COLLECT_AFTER_PARAMETERS values); trims follow
        # every long call (a large commit, say): those at debug level only
        log.log(logging.INFO if collect else logging.DEBUG,
                "memory given back after a request of %.1f s and %d bytes: %s", seconds, request_bytes, what)
        return what
