"""What the console shows, read through the store services (never SQL) as plain rows."""

from __future__ import annotations

import time
from dataclasses import dataclass

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

    @property
    def duration_ms(self) -> int | None:
        return None if self.end_ms is None else max(0, self.end_ms - self.start_ms)


@dataclass(frozen=True)
class TableRow:
    name: str
    table_type: str
    hudi: bool
    location: str
    partition_keys: list[str]
    columns: list[tuple[str, str]]


def table_row(services: Services, db: str, name: str) -> TableRow:
    t = services.tables.get_table(db, name)
    params = t.parameters or {}
    sd = t.sd
    hudi = is_hudi(services, db, name) or params.get("spark.sql.sources.provider", "").lower() == "hudi"
    return TableRow(t.tableName, t.tableType or "", hudi, (sd.location if sd else "") or "",
                    [k.name for k in t.partitionKeys or []],
                    [(c.name, c.type) for c in (sd.cols if sd and sd.cols else [])])


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


def _written(services: Services, db: str, name: str, ts: str, action: str) -> tuple[int | None, int | None]:
    if action not in WRITE_ACTIONS:
        return None, None
    try:
        meta = parse_commit(services.timeline.instant_metadata(db, name, ts, action, "COMPLETED"))
    except (NoSuchObject, InvalidMetadata, ValueError):
        return None, None
    return len(meta.write_stats), sum(max(0, s.size) for s in meta.write_stats)


def timeline(services: Services, db: str, name: str) -> list[InstantRow]:
    rows = []
    for i in services.timeline.list_instants(db, name):
        start = _ms(i.ts) or i.requested_ms
        end = _ms(i.completion_ts) if i.state == "COMPLETED" else None
        if i.state == "COMPLETED" and end is None:
            end = start
        files, size = _written(services, db, name, i.ts, i.action) if i.state == "COMPLETED" else (None, None)
        rows.append(InstantRow(i.ts, i.action, i.state, start, end, files, size))
    return rows


def now_ms() -> int:
    return int(time.time() * 1000)


def partitions(services: Services, db: str, name: str, hudi: bool) -> list[str]:
    """Hudi partition paths (what file slices are listed by), else the HMS partition names."""
    if hudi:
        return sorted(services.snapshot.partitions(db, name))
    return list(services.partitions.get_partition_names(db, name, -1))
