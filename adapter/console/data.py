"""What the console shows, read through the store services (never SQL) as plain rows."""

from __future__ import annotations

import datetime as dt
import os
import time
from dataclasses import dataclass, field
from decimal import Decimal as PyDecimal

from hudi_format.commit_metadata import WRITE_ACTIONS, parse_commit
from hudi_format.errors import InvalidMetadata
from hudi_format.instant import parse_instant
from store.errors import NoSuchObject
from store.services import Services


@dataclass(frozen=True)
class InstantRow:
    ts: str
    action: str
    state: str
    start_ms: int
    end_ms: int | None        # completion (None: pending)
    files: int | None         # files written (write actions, completed)
    bytes: int | None         # bytes written
    operation: str | None = None  # the write's operation (insert, upsert, delete, ...; completed writes)

    @property
    def duration_ms(self) -> int | None:
        return None if self.end_ms is None else max(0, self.end_ms - self.start_ms)


# Hive's basic statistics among a table's parameters (StatsSetupConst)
BASIC_STATS = ("numRows", "rawDataSize", "totalSize", "numFiles", "numPartitions", "numFilesErasureCoded",
               "COLUMN_STATS_ACCURATE")


@dataclass(frozen=True)
class TableRow:
    name: str
    table_type: str
    hudi: bool
    location: str
    partition_keys: list[str]
    columns: list[tuple[str, str]]
    comments: dict[str, str] = field(default_factory=dict)  # column -> comment
    key_types: list[tuple[str, str]] = field(default_factory=list)  # partition keys with their types
    parameters: dict[str, str] = field(default_factory=dict)
    owner: str = ""
    storage: list[tuple[str, str]] = field(default_factory=list)  # input / output format, serde
    hudi_config: list[tuple[str, str]] = field(default_factory=list)  # the Hudi table's type, keys, version

    @property
    def basic_stats(self) -> list[tuple[str, str]]:
        return [(k, self.parameters[k]) for k in BASIC_STATS if k in self.parameters]


def table_row(services: Services, db: str, name: str, detail: bool = False) -> TableRow:
    """The table as the console shows it; `detail`: with its Hudi configuration (one more read)."""
    t = services.tables.get_table(db, name)
    params = t.parameters or {}
    sd = t.sd
    cfg = hudi_config(services, db, name) if detail else None
    hudi = cfg is not None or (not detail and is_hudi(services, db, name)) or \
        params.get("spark.sql.sources.provider", "").lower() == "hudi"
    cols = sd.cols if sd and sd.cols else []
    storage = [("input format", sd.inputFormat or ""), ("output format", sd.outputFormat or ""),
               ("serde", sd.serdeInfo.serializationLib or "" if sd.serdeInfo else "")] if sd else []
    return TableRow(t.tableName, t.tableType or "", hudi, (sd.location if sd else "") or "",
                    [k.name for k in t.partitionKeys or []], [(c.name, c.type) for c in cols],
                    {c.name: c.comment for c in cols + list(t.partitionKeys or []) if c.comment},
                    [(k.name, k.type) for k in t.partitionKeys or []], dict(sorted(params.items())), t.owner or "",
                    storage, cfg or [])


def hudi_config(services: Services, db: str, name: str) -> list[tuple[str, str]] | None:
    """The Hudi table's configuration as the metastore keeps it; None: no Hudi timeline."""
    try:
        cfg = services.timeline.get_table_config(db, name)
    except NoSuchObject:
        return None
    return [("table type", cfg.table_type), ("table version", str(cfg.table_version)),
            ("base path", cfg.base_path or ""), ("record key", ", ".join(cfg.record_key_fields)),
            ("partition fields", ", ".join(cfg.partition_fields)), ("precombine field", cfg.precombine_field or "")]


def column_stats(services: Services, db: str, name: str) -> list[list[str]]:
    """Table-level column statistics (Hive's, or derived from a Hudi table's file statistics): one
    row per column: name, type, nulls, distinct, min, max, average and maximum length, trues/falses."""
    _, objs = services.statistics.table_stats(db, name, None)
    return [[o.colName, o.colType, *_stats_cells(o.statsData)] for o in objs]


def _stats_cells(d) -> list[str]:
    """nulls, distinct values, low, high, avg length, max length, trues / falses."""
    def text(v) -> str:
        return "" if v is None else str(v)

    for kind in ("longStats", "doubleStats", "decimalStats", "dateStats", "timestampStats"):
        x = getattr(d, kind, None) if d is not None else None
        if x is not None:
            return [text(x.numNulls), text(x.numDVs), _value(x.lowValue), _value(x.highValue), "", "", ""]
    if d is not None and d.stringStats is not None:
        x = d.stringStats
        return [text(x.numNulls), text(x.numDVs), "", "", f"{x.avgColLen:.1f}" if x.avgColLen is not None else "",
                text(x.maxColLen), ""]
    if d is not None and d.binaryStats is not None:
        x = d.binaryStats
        return [text(x.numNulls), "", "", "", f"{x.avgColLen:.1f}" if x.avgColLen is not None else "",
                text(x.maxColLen), ""]
    if d is not None and d.booleanStats is not None:
        x = d.booleanStats
        return [text(x.numNulls), "", "", "", "", "", f"{x.numTrues} / {x.numFalses}"]
    return [""] * 7


def _value(v) -> str:
    """A statistic's low or high value: a number, a Hive Decimal, Date or Timestamp."""
    if v is None:
        return ""
    if hasattr(v, "unscaled"):  # Decimal: big-endian two's complement and a scale
        n = int.from_bytes(v.unscaled or b"\0", "big", signed=True)
        return str(PyDecimal(n).scaleb(-(v.scale or 0)))
    if hasattr(v, "daysSinceEpoch"):
        return (dt.date(1970, 1, 1) + dt.timedelta(days=v.daysSinceEpoch)).isoformat()
    if hasattr(v, "secondsSinceEpoch"):
        return dt.datetime.fromtimestamp(v.secondsSinceEpoch, dt.timezone.utc).strftime("%Y-%m-%d %H:%M:%S")
    return str(v)


def search(services: Services, text: str, limit: int = 500) -> tuple[list[str], list[tuple[str, str, str]]]:
    """Databases and tables whose name holds `text` (any case): (database names, (db, table, type))."""
    needle = text.strip().lower()
    if not needle:
        return [], []
    dbs = [d for d in services.tables.list_databases() if needle in d.lower()][:limit]
    tables = [(m.dbName, m.tableName, m.tableType or "") for m in services.tables.table_meta(None, None, None)
              if needle in m.tableName.lower()][:limit]
    return dbs, tables


def is_hudi(services: Services, db: str, name: str) -> bool:
    try:
        services.timeline.get_table_config(db, name)
        return True
    except NoSuchObject:
        return False


def _ms(instant_time: str | None) -> int | None:
    if not instant_time:
        return None
    try:
        return parse_instant(instant_time)
    except ValueError:
        return None


def _written(services: Services, db: str, name: str, ts: str,
             action: str) -> tuple[int | None, int | None, str | None]:
    """Files and bytes a completed write wrote, and its operation (insert, upsert, delete, ...)."""
    if action not in WRITE_ACTIONS:
        return None, None, None
    try:
        meta = parse_commit(services.timeline.instant_metadata(db, name, ts, action, "COMPLETED"))
    except (NoSuchObject, InvalidMetadata, ValueError):
        return None, None, None
    op = (meta.operation_type or "").lower() or None
    return len(meta.write_stats), sum(max(0, s.size) for s in meta.write_stats), op


def timeline(services: Services, db: str, name: str) -> list[InstantRow]:
    rows = []
    for i in services.timeline.list_instants(db, name):
        start = _ms(i.ts) or i.requested_ms
        end = _ms(i.completion_ts) if i.state == "COMPLETED" else None
        if i.state == "COMPLETED" and end is None:
            end = start
        files, size, op = _written(services, db, name, i.ts, i.action) if i.state == "COMPLETED" \
            else (None, None, None)
        rows.append(InstantRow(i.ts, i.action, i.state, start, end, files, size, op))
    return rows


# a table's services as the timeline shows them: (service, action pending, completed as, operation)
SERVICES = (("compaction", "compaction", "commit", "compact"),
            ("logcompaction", "logcompaction", "deltacommit", "log_compact"),
            ("clustering", "clustering", "replacecommit", "cluster"), ("clean", "clean", "clean", None))


def services(rows: list[InstantRow], recent: int = 5) -> list[tuple[str, InstantRow]]:
    """(service, instant) of the pending and the `recent` newest completed compactions, log
    compactions, clusterings and cleans, from the timeline's rows (no further reads)."""
    out = []
    for name, pending, done, op in SERVICES:
        out += [(name, r) for r in rows if r.action == pending and r.state != "COMPLETED"]
        finished = [r for r in rows
                    if r.action == done and r.state == "COMPLETED" and (op is None or r.operation == op)]
        out += [(name, r) for r in finished[-recent:] if recent > 0]
    return out


def now_ms() -> int:
    return int(time.time() * 1000)


def partitions(services: Services, db: str, name: str, hudi: bool) -> list[str]:
    """Hudi partition paths (what file slices are listed by), else the HMS partition names."""
    if hudi:
        return sorted(services.snapshot.partitions(db, name))
    return list(services.partitions.get_partition_names(db, name, -1))


def version() -> str:
    """This installation's version (as `hudi-metastore --version` says it)."""
    from importlib.metadata import PackageNotFoundError
    from importlib.metadata import version as dist_version

    try:
        return dist_version("hudi-metastore")
    except PackageNotFoundError:  # run from a checkout that is not installed
        return "0.1.0+source"


def _millis(seconds: float) -> str:
    return f"{seconds * 1000:.1f} ms"


def _labels(key) -> str:
    return ", ".join(f"{k}={v}" for k, v in key) or "-"


def server_sections(snap: dict, started: float, ready: str, version: str) -> list[tuple[str, list[str],
                                                                                     list[list[str]], str]]:
    """The /server page's sections from a metrics registry's snapshot (store.metrics): this worker,
    Thrift calls by method, Hudi, and every other metric. (title, headers, rows, css class)."""
    from store.metrics import CALL_SECONDS, CALLS, KNOWN

    up = max(0, int(time.time() - started))
    worker = [["version", version], ["process", str(os.getpid())],
              ["started", dt.datetime.fromtimestamp(started, dt.timezone.utc).strftime("%Y-%m-%d %H:%M:%S UTC")],
              ["up", f"{up // 86400} d {up % 86400 // 3600} h {up % 3600 // 60} min {up % 60} s"],
              ["readiness", ready]]
    calls: dict[str, dict[str, float]] = {}
    for key, n in snap["counters"].get(CALLS, {}).items():
        labels = dict(key)
        calls.setdefault(labels.get("method", "?"), {})[labels.get("status", "?")] = n
    rows: list[list[str]] = []
    for method, by_status in calls.items():
        count, total, mx = snap["durations"].get(CALL_SECONDS, {}).get((("method", method),), (0, 0.0, 0.0))
        failed = {s: int(n) for s, n in by_status.items() if s != "ok"}
        rows.append([method, str(int(sum(by_status.values()))), str(int(by_status.get("ok", 0))),
                     ", ".join(f"{s} {n}" for s, n in sorted(failed.items())) or "-",
                     _millis(total / count) if count else "-", _millis(mx) if count else "-"])
    rows.sort(key=lambda r: (-int(r[1]), r[0]))
    hudi: list[list[str]] = []
    other: list[list[str]] = []
    for kind in ("counters", "durations", "gauges"):
        for name, series in sorted(snap[kind].items()):
            if name in (CALLS, CALL_SECONDS):
                continue
            about = KNOWN.get(name, ("", ""))[1]
            for key, v in sorted(series.items()):
                value = (f"{v[0]} times, mean {_millis(v[1] / v[0])}, max {_millis(v[2])}" if v[0] else "0 times") \
                    if kind == "durations" else f"{v:g}"
                (hudi if name.startswith("hudi_") else other).append([name, _labels(key), value, about])
    return [("This worker", ["", "value"], worker, "worker"),
            ("Thrift calls", ["method", "calls", "ok", "failed", "mean", "max"], rows, "calls"),
            ("Hudi", ["metric", "labels", "value", "what"], hudi, "hudi-metrics"),
            ("Other metrics", ["metric", "labels", "value", "what"], other, "other-metrics")]
