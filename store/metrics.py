"""Process-wide metrics (RFC-15's metadata metrics, RFC-36's services) in the Prometheus text format.

Three kinds, all thread-safe, all kept in one registry per process:

* counters   ``metrics.incr(name, n=1)``             only go up (lookups, commits); exported as
  ``<name>_total`` (Prometheus' naming rule), e.g. ``hudi_commits`` -> ``hudi_commits_total``
* durations  ``metrics.observe(name, seconds)``      count, total and max seconds
  (a Prometheus summary without quantiles, ``<name>_count`` / ``<name>_sum``, plus a
  ``<name>_max`` gauge)
* gauges     ``metrics.set_gauge(name, value)``      last value set (e.g. mirror lag)

``metrics.timer(name)`` is a context manager that observes the time its block took.

Every Thrift call is recorded by the server (``record_call``): ``hms_thrift_calls_total`` by method
and status (``ok``, the exception answered, ``unknown-method``, ...) and the
``hms_thrift_call_seconds`` duration by method.

The store's names (RFC-15 ``lookup_partitions.count``, ``lookup_files.count``, ``sync.duration``; RFC-36
commits) are declared below so they are exported as 0 before first use. Any other name works too:
names must match ``[a-zA-Z_:][a-zA-Z0-9_:]*``.

``adapter.metrics_http.serve_http(sock)`` answers ``GET /metrics`` in the Prometheus text format
(version 0.0.4) on its own thread. The registry is per process: with ``serve --workers N`` each
worker serves its own on ``--metrics-port P + i`` (worker i); see README.
"""

from __future__ import annotations

import contextlib
import logging
import math
import os
import re
import threading
import time
from collections.abc import Iterator

log = logging.getLogger("hudi_metastore.metrics")

CALLS = "hms_thrift_calls_total"
CALL_SECONDS = "hms_thrift_call_seconds"

# Names the store records (help text is what /metrics shows).
KNOWN = {
    "hudi_partition_lookups": ("counter",
                               "Partition lists answered from the metastore (RFC-15 lookup_partitions.count)"),
    "hudi_file_lookups": ("counter", "File lists answered from the metastore (RFC-15 lookup_files.count)"),
    "hudi_commits": ("counter", "Hudi instants completed"),
    "hudi_record_key_lookups": ("counter", "Record keys looked up in the record-level index"),
    "hudi_commit_seconds": ("duration",
                            "Time to complete an instant: timeline, snapshot and partitions in one transaction"),
    "hudi_snapshot_sync_seconds": ("duration",
                                   "Time to mirror a table's timeline and snapshot to storage (RFC-15 sync.duration)"),
    "hudi_storage_mirror_lag_versions": ("gauge", "Table versions not yet mirrored to storage"),
    CALLS: ("counter", "Thrift calls answered, by method and status"),
    CALL_SECONDS: ("duration", "Thrift call latency, by method"),
}

_NAME = re.compile(r"^[a-zA-Z_:][a-zA-Z0-9_:]*$")
Labels = tuple[tuple[str, str], ...]  # sorted ((key, value), ...)


def _labels(labels: dict | None) -> Labels:
    return tuple(sorted((str(k), str(v)) for k, v in labels.items())) if labels else ()


class _Duration:
    __slots__ = ("count", "total", "max")

    def __init__(self):
        self.count, self.total, self.max = 0, 0.0, 0.0


class Registry:
    def __init__(self):
        self._lock = threading.Lock()
        self._counters: dict[str, dict[Labels, float]] = {}
        self._durations: dict[str, dict[Labels, _Duration]] = {}
        self._gauges: dict[str, dict[Labels, float]] = {}
        self._help: dict[str, str] = {}
        self.started = time.time()
        self.reset()

    def reset(self) -> None:
        """Forget every value (the known names stay, at 0)."""
        with self._lock:
            self._counters.clear()
            self._durations.clear()
            self._gauges.clear()
            for name, (kind, help_text) in KNOWN.items():
                self._help[name] = help_text
                if name in (CALLS, CALL_SECONDS):
                    continue  # labelled: no unlabelled series
                if kind == "duration":
                    self._durations[name] = {(): _Duration()}
                elif kind == "counter":
                    self._counters[name] = {(): 0.0}
                else:
                    self._gauges[name] = {(): 0.0}

    # --- recording --------------------------------------------------------------------------------

    def incr(self, name: str, n: float = 1, labels: dict | None = None) -> None:
        key = _labels(labels)
        with self._lock:
            series = self._counters.get(name)
            if series is None:
                series = self._new(self._counters, name)
            series[key] = series.get(key, 0.0) + n

    def observe(self, name: str, seconds: float, labels: dict | None = None) -> None:
        key = _labels(labels)
        with self._lock:
            series = self._durations.get(name)
            if series is None:
                series = self._new(self._durations, name)
            d = series.get(key)
            if d is None:
                d = series[key] = _Duration()
            d.count += 1
            d.total += seconds
            if seconds > d.max:
                d.max = seconds

    def set_gauge(self, name: str, value: float, labels: dict | None = None) -> None:
        key = _labels(labels)
        with self._lock:
            series = self._gauges.get(name)
            if series is None:
                series = self._new(self._gauges, name)
            series[key] = float(value)

    @contextlib.contextmanager
    def timer(self, name: str, labels: dict | None = None) -> Iterator[None]:
        start = time.perf_counter()
        try:
            yield
        finally:
            self.observe(name, time.perf_counter() - start, labels)

    def record_call(self, method: str, seconds: float, status: str) -> None:
        """One Thrift call (the server calls this next to its call log line)."""
        with self._lock:
            calls = self._counters.setdefault(CALLS, {})
            key = (("method", method), ("status", status))
            calls[key] = calls.get(key, 0.0) + 1
            lat = self._durations.setdefault(CALL_SECONDS, {})
            d = lat.get((("method", method),))
            if d is None:
                d = lat[(("method", method),)] = _Duration()
            d.count += 1
            d.total += seconds
            if seconds > d.max:
                d.max = seconds

    def _new(self, table: dict, name: str) -> dict:
        """Caller holds the lock."""
        if not _NAME.match(name):
            raise ValueError(f"invalid metric name {name!r}")
        for other in (self._counters, self._durations, self._gauges):
            if other is not table and name in other:
                raise ValueError(f"metric {name!r} is already a different kind")
        series = table[name] = {}
        return series

    # --- reading ----------------------------------------------------------------------------------

    def counter(self, name: str, labels: dict | None = None) -> float:
        with self._lock:
            return self._counters.get(name, {}).get(_labels(labels), 0.0)

    def gauge(self, name: str, labels: dict | None = None) -> float:
        with self._lock:
            return self._gauges.get(name, {}).get(_labels(labels), 0.0)

    def duration(self, name: str, labels: dict | None = None) -> tuple[int, float, float]:
        """(count, total seconds, max seconds)."""
        with self._lock:
            d = self._durations.get(name, {}).get(_labels(labels))
            return (d.count, d.total, d.max) if d else (0, 0.0, 0.0)

    def snapshot(self) -> dict:
        """Plain copy: {"counters": {name: {labels: v}}, "durations": {name: {labels: (count, sum, max)}},
        "gauges": {...}}."""
        with self._lock:
            return {
                "counters": {n: dict(s) for n, s in self._counters.items()},
                "durations": {n: {k: (d.count, d.total, d.max) for k, d in s.items()}
                              for n, s in self._durations.items()},
                "gauges": {n: dict(s) for n, s in self._gauges.items()},
            }

    def render(self) -> str:
        """Prometheus text exposition format 0.0.4."""
        snap = self.snapshot()
        with self._lock:
            help_text = dict(self._help)
        out: list[str] = []
        for name in sorted(snap["counters"]):
            exported = name if name.endswith("_total") else name + "_total"
            _head(out, help_text.get(name), exported, "counter")
            for key, v in sorted(snap["counters"][name].items()):
                out.append(f"{exported}{_fmt_labels(key)} {_num(v)}")
        for name in sorted(snap["durations"]):
            series = sorted(snap["durations"][name].items())
            _head(out, help_text.get(name), name, "summary")
            for key, (count, total, _mx) in series:
                out.append(f"{name}_sum{_fmt_labels(key)} {_num(total)}")
                out.append(f"{name}_count{_fmt_labels(key)} {count}")
            _head(out, help_text.get(name), f"{name}_max", "gauge")
            for key, (_count, _total, mx) in series:
                out.append(f"{name}_max{_fmt_labels(key)} {_num(mx)}")
        for name in sorted(snap["gauges"]):
            _head(out, help_text.get(name), name, "gauge")
            for key, v in sorted(snap["gauges"][name].items()):
                out.append(f"{name}{_fmt_labels(key)} {_num(v)}")
        out.append("# HELP hudi_metastore_process_start_time_seconds Start time of this process (Unix seconds)")
        out.append("# TYPE hudi_metastore_process_start_time_seconds gauge")
        out.append(f'hudi_metastore_process_start_time_seconds{{pid="{os.getpid()}"}} {_num(self.started)}')
        return "\n".join(out) + "\n"


def _head(out: list[str], help_text: str | None, name: str, kind: str) -> None:
    """The HELP (when known) and TYPE lines of a metric."""
    if help_text:
        out.append(f"# HELP {name} {_escape_help(help_text)}")
    out.append(f"# TYPE {name} {kind}")


def _num(v: float) -> str:
    if isinstance(v, int) or (isinstance(v, float) and v.is_integer() and abs(v) < 1e15):
        return str(int(v))
    if math.isnan(v):
        return "NaN"
    if math.isinf(v):
        return "+Inf" if v > 0 else "-Inf"
    return repr(float(v))


def _escape_help(text: str) -> str:
    return text.replace("\\", "\\\\").replace("\n", "\\n")


def _escape_value(text: str) -> str:
    return text.replace("\\", "\\\\").replace("\n", "\\n").replace('"', '\\"')


def _fmt_labels(key: Labels) -> str:
    if not key:
        return ""
    return "{" + ",".join(f'{k}="{_escape_value(v)}"' for k, v in key) + "}"


# The process-wide registry and its module-level API (what the store calls).
registry = Registry()
incr = registry.incr
observe = registry.observe
set_gauge = registry.set_gauge
timer = registry.timer
record_call = registry.record_call
