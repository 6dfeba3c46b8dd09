"""The console's routes: `/`, `/db/DB`, `/db/DB/TABLE[?page=N]`, `/db/DB/TABLE/files?partition=P`,
`/search?q=TEXT` (databases and tables by name), `/server` (this worker: calls, Hudi, other metrics;
the raw text for Prometheus stays at /metrics). Answers (status, content type, body)."""

from __future__ import annotations

import logging
from urllib.parse import parse_qs, unquote

from adapter.console import data, pages
from adapter.readiness import Readiness
from store import metrics
from store.errors import NoSuchObject
from store.services import Services

HTML = "text/html; charset=utf-8"
PAGE_SIZE = 100
log = logging.getLogger(__name__)


class Console:
    def __init__(self, services: Services, readiness: Readiness | None = None, page_size: int = PAGE_SIZE):
        self.services = services
        self.readiness = readiness
        self.page_size = page_size

    def get(self, path: str, query: str) -> tuple[int, str, bytes]:
        parts = [unquote(p) for p in path.strip("/").split("/")] if path.strip("/") else []
        args = {k: v[0] for k, v in parse_qs(query).items()}
        try:
            html = self._route(parts, args)
        except NoSuchObject as exc:
            return 404, HTML, pages.not_found(exc.message).encode()
        except Exception:  # the console must never take the port down
            log.exception("console page %s failed", path)
            return 500, HTML, pages.not_found("internal error (see the server's log)").encode()
        if html is None:
            return 404, HTML, pages.not_found(f"no page {path}").encode()
        return 200, HTML, html.encode()

    def _route(self, parts: list[str], args: dict[str, str]) -> str | None:
        s = self.services
        if not parts:
            return pages.databases(s.tables.list_databases())
        if parts == ["server"]:
            status = self.readiness.status() if self.readiness else None
            ready = "unknown" if status is None else f"{'ready' if status.ready else 'not ready'}: {status.detail}"
            return pages.server(data.server_sections(metrics.registry.snapshot(), metrics.registry.started, ready,
                                                     data.version()))
        if parts == ["search"]:
            text = args.get("q", "")
            dbs, found = data.search(s, text)
            return pages.search(text, dbs, found)
        if parts[0] != "db" or len(parts) < 2:
            return None
        db = parts[1]
        if len(parts) == 2:
            d = s.tables.get_database(db)
            tables = [(n, data.table_row(s, db, n).table_type) for n in s.tables.list_tables(db)]
            return pages.database(d.name, d.description or "", d.locationUri or "", tables)
        name = parts[2]
        if len(parts) == 3:
            return self._table(db, name, args)
        if len(parts) == 4 and parts[3] == "files":
            partition = args.get("partition", "")
            slices = s.snapshot.latest_file_slices(db, name, [partition])
            return pages.file_slices(db, name, partition, slices)
        return None

    def _table(self, db: str, name: str, args: dict[str, str]) -> str:
        t = data.table_row(self.services, db, name, detail=True)
        names = data.partitions(self.services, db, name, t.hudi) if t.partition_keys or t.hudi else []
        pages_n = max(1, -(-len(names) // self.page_size))
        try:
            page_no = min(max(1, int(args.get("page", "1"))), pages_n)
        except ValueError:
            page_no = 1
        shown = names[(page_no - 1) * self.page_size: page_no * self.page_size]
        timeline = data.timeline(self.services, db, name) if t.hudi else None
        return pages.table_page(db, t, shown, page_no, pages_n, len(names), timeline, data.now_ms(),
                                data.column_stats(self.services, db, name))
