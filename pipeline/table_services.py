"""A table's pending services run as one Spark job (`hudi-metastore table-services run DB.TABLE`,
docs/pipeline.md, Table services): the compactions, then the log compactions, then the clusterings
the server scheduled, oldest first, each claimed on the server before it runs (REQUESTED -> INFLIGHT under the table's
row lock), so two executors never run the same one: the second gets ServiceClaimed and goes on with
the next. A plan waiting for an executor runs whatever its age; one that can no longer run (a write
since it was planned touched its file groups) is rolled back by the server at the claim
(ServicePlanGone), and the one it schedules instead runs in the same pass. An attempt whose executor
stopped heartbeating (it failed or was killed: its claim expired) is rolled back first (`recover`:
the files it wrote deleted, the instant REQUESTED again, as Hudi rolls back a failed inflight
compaction or clustering) and its plan runs again; a claim whose executor still heartbeats is left
alone.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass

from client import HudiCatalog, InvalidOperation, NotFound, Security

from . import clustering, compaction, log_compaction
from .errors import ServiceClaimed, ServicePlanGone
from .table import TableInfo

log = logging.getLogger(__name__)
PENDING = ("REQUESTED", "INFLIGHT")
SERVICES = (compaction.COMPACTION, log_compaction.LOG_COMPACTION, clustering.CLUSTERING)


@dataclass(frozen=True)
class Pending:
    service: str  # "compaction", "logcompaction" or "clustering"
    instant: str
    state: str  # REQUESTED: waiting for an executor; INFLIGHT: one runs it (or stopped running it)


@dataclass(frozen=True)
class Outcome:
    service: str
    instant: str
    # "completed", "claimed" (another executor had it), "failed", "rolled back" (a failed attempt, to
    # run again), "obsolete" (its plan could no longer run: the server rolled it back)
    result: str
    detail: str = ""


def pending(client: HudiCatalog, info: TableInfo) -> list[Pending]:
    """The table's service instants not completed, oldest first (no Spark needed)."""
    actions = [compaction.COMPACTION, log_compaction.LOG_COMPACTION] if info.merge_on_read else []
    # compactions first, then log compactions, then clusterings: Hudi's inline order
    order = {compaction.COMPACTION: 0, log_compaction.LOG_COMPACTION: 1, clustering.CLUSTERING: 2}
    found = client.list_instants(info.db, info.name, states=list(PENDING), actions=actions + [clustering.CLUSTERING])
    return sorted((Pending(i.action, i.ts, i.state) for i in found),
                  key=lambda p: (order[p.service], p.instant))


def recover(client: HudiCatalog, info: TableInfo) -> list[Outcome]:
    """Roll back the failed attempts of the table's services (INFLIGHT, their executor's heartbeat
    expired) to REQUESTED: the server deletes the files they wrote and keeps their plans."""
    out = []
    for i in client.get_failed_instants(info.db, info.name):
        if i.action not in SERVICES or i.state != "INFLIGHT":
            continue  # (failed writes: their next writer's; a plan waiting for an executor never fails)
        try:
            client.rollback_instant(info.db, info.name, i.ts)
        except (InvalidOperation, NotFound) as exc:  # another executor was quicker
            log.info("not rolling back %s %s of %s.%s: %s", i.action, i.ts, info.db, info.name, exc)
            continue
        log.warning("rolled back the failed attempt of %s %s of %s.%s; it runs again", i.action, i.ts,
                    info.db, info.name)
        out.append(Outcome(i.action, i.ts, "rolled back", "its executor stopped heartbeating; it runs again"))
    return out


def run(spark, client: HudiCatalog, info: TableInfo, metastore: str, security: Security | None = None,
        services: tuple[str, ...] = SERVICES) -> list[Outcome]:
    """Run every requested service instant of the table (of `services`), after failed attempts were
    rolled back (`recover`); what happened to each. One that fails stays INFLIGHT until its
    heartbeat expires (the next run rolls it back and runs it again); one whose plan the server
    rolled back at its claim is followed by the plan it scheduled instead."""
    out: list[Outcome] = recover(client, info)
    seen: set[str] = set()
    while todo := [p for p in pending(client, info)
                   if p.state == "REQUESTED" and p.service in services and p.instant not in seen]:
        gone = False
        for p in todo:
            seen.add(p.instant)
            try:
                service = {compaction.COMPACTION: compaction,
                           log_compaction.LOG_COMPACTION: log_compaction}.get(p.service, clustering)
                service.run(spark, client, info, p.instant, metastore, security)
            except ServicePlanGone as exc:
                log.info("%s", exc)
                out.append(Outcome(p.service, p.instant, "obsolete", str(exc)))
                gone = True
                continue
            except ServiceClaimed as exc:
                out.append(Outcome(p.service, p.instant, "claimed", str(exc)))
                continue
            except Exception as exc:
                log.warning("%s %s of %s.%s failed: %s", p.service, p.instant, info.db, info.name, exc)
                out.append(Outcome(p.service, p.instant, "failed", f"{type(exc).__name__}: {exc}"))
                continue
            out.append(Outcome(p.service, p.instant, "completed"))
        if not gone:
            break
    return out
