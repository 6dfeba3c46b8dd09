"""A table's pending services run as one Spark job (`hudi-metastore table-services run DB.TABLE`,
docs/pipeline.md, Table services): the compactions, then the clusterings the server scheduled,
oldest first, each claimed on the server before it runs (REQUESTED -> INFLIGHT under the instant's
row lock), so two executors never run the same one: the second gets ServiceClaimed and goes on
with the next.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass

from client import HudiCatalog, Security

from . import clustering, compaction
from .errors import ServiceClaimed
from .table import TableInfo

log = logging.getLogger(__name__)
PENDING = ("REQUESTED", "INFLIGHT")


@dataclass(frozen=True)
class Pending:
    service: str  # "compaction" or "clustering"
    instant: str
    state: str  # REQUESTED: waiting for an executor; INFLIGHT: one runs it (or stopped running it)


@dataclass(frozen=True)
class Outcome:
    service: str
    instant: str
    result: str  # "completed", "claimed" (another executor had it), "failed"
    detail: str = ""


def pending(client: HudiCatalog, info: TableInfo) -> list[Pending]:
    """The table's service instants not completed, oldest first (no Spark needed)."""
    actions = [compaction.COMPACTION] if info.merge_on_read else []
    order = {compaction.COMPACTION: 0, clustering.CLUSTERING: 1}  # compactions first, as inline
    found = client.list_instants(info.db, info.name, states=list(PENDING), actions=actions + [clustering.CLUSTERING])
    return sorted((Pending(i.action, i.ts, i.state) for i in found),
                  key=lambda p: (order[p.service], p.instant))


def run(spark, client: HudiCatalog, info: TableInfo, metastore: str, security: Security | None = None
        ) -> list[Outcome]:
    """Run every requested service instant of the table; what happened to each. A failed one stays
    INFLIGHT (rolled back once its heartbeat times out, as a failed inline compaction)."""
    out: list[Outcome] = []
    for p in pending(client, info):
        if p.state != "REQUESTED":
            continue
        try:
            service = compaction if p.service == compaction.COMPACTION else clustering
            service.run(spark, client, info, p.instant, metastore, security)
        except ServiceClaimed as exc:
            out.append(Outcome(p.service, p.instant, "claimed", str(exc)))
            continue
        except Exception as exc:
            log.warning("%s %s of %s.%s failed: %s", p.service, p.instant, info.db, info.name, exc)
            out.append(Outcome(p.service, p.instant, "failed", f"{type(exc).__name__}: {exc}"))
            continue
        out.append(Outcome(p.service, p.instant, "completed"))
    return out
