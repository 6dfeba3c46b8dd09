"""The console's HTML pages: small, server-rendered, every value escaped."""

from __future__ import annotations

from html import escape
from urllib.parse import quote, urlencode

from adapter.console import svg
from adapter.console.data import InstantRow, TableRow, services

STYLE = """body{font-family:system-ui,sans-serif;margin:1.5em;color:#1a202c}
table{border-collapse:collapse;margin:.5em 0}td,th{border:1px solid #cbd5e0;padding:.2em .6em;text-align:left}
th{background:#edf2f7}nav a{margin-right:1em}.muted{color:#718096}code{font-size:90%}
.legend span{display:inline-block;margin-right:1em}.legend i{display:inline-block;width:.8em;height:.8em;
margin-right:.3em}form.search{display:inline;margin-left:1em}
td code.long{display:inline-block;max-width:60em;overflow-wrap:anywhere}"""


SEARCH_FORM = ('<form class=search action="/search" method=get role=search><input name=q type=search '
               'placeholder="database or table name" aria-label="search by name"> <button>search</button></form>')


def page(title: str, crumbs: list[tuple[str, str]], body: str) -> str:
    trail = " / ".join(f'<a href="{escape(href)}">{escape(text)}</a>' for text, href in crumbs)
    return (f"<!doctype html><html lang=en><head><meta charset=utf-8><title>{escape(title)} - hudi-metastore"
            f"</title><style>{STYLE}</style></head><body><nav>{trail} <a href=\"/server\">server</a>"
            f"<a href=\"/metrics\">/metrics</a><a href=\"/readyz\">/readyz</a>{SEARCH_FORM}</nav>"
            f"<h1>{escape(title)}</h1>{body}</body></html>")


def table(headers: list[str], rows: list[list[str]], css: str = "") -> str:
    """rows hold HTML (escape what comes from data before passing it)."""
    head = "".join(f"<th>{escape(h)}</th>" for h in headers)
    body = "".join("<tr>" + "".join(f"<td>{c}</td>" for c in r) + "</tr>" for r in rows)
    return f'<table class="{css}"><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>'


def db_href(db: str) -> str:
    return f"/db/{quote(db, safe='')}"


def table_href(db: str, name: str) -> str:
    return f"{db_href(db)}/{quote(name, safe='')}"


def databases(names: list[str]) -> str:
    rows = [[f'<a class="database" href="{db_href(n)}">{escape(n)}</a>'] for n in names]
    return page("Databases", [("databases", "/")], f"<p>{len(names)} database(s)</p>" + table(["database"], rows))


def database(db: str, description: str, location: str, tables: list[tuple[str, str]]) -> str:
    rows = [[f'<a class="table" href="{table_href(db, n)}">{escape(n)}</a>', escape(t)] for n, t in tables]
    info = f"<p>{escape(description)}</p>" if description else ""
    return page(f"Database {db}", [("databases", "/"), (db, db_href(db))],
                f"{info}<p class=muted>location <code>{escape(location)}</code></p>"
                f"<p>{len(tables)} table(s)</p>" + table(["table", "type"], rows))


def _pager(base: str, page_no: int, pages: int) -> str:
    if pages <= 1:
        return ""
    links = []
    if page_no > 1:
        links.append(f'<a rel="prev" href="{escape(base)}?{urlencode({"page": page_no - 1})}">previous</a>')
    links.append(f"page {page_no} of {pages}")
    if page_no < pages:
        links.append(f'<a rel="next" href="{escape(base)}?{urlencode({"page": page_no + 1})}">next</a>')
    return "<p class=pager>" + " ".join(links) + "</p>"


def _timeline_section(rows: list[InstantRow], now_ms: int) -> str:
    legend = "".join(f'<span><i style="background:{svg.colour(a)}"></i>{escape(a)}</span>'
                     for a in sorted({r.action for r in rows}))
    instants = [[escape(r.ts), escape(r.action), f'<span class=operation>{escape(r.operation or "-")}</span>',
                 escape(r.state), escape(svg.duration(r.duration_ms)),
                 "-" if r.files is None else str(r.files), "-" if r.bytes is None else str(r.bytes)]
                for r in reversed(rows)]
    return (f"<h2>Timeline</h2><div class=legend>{legend}<span class=muted>hatched: pending</span></div>"
            f"{svg.timeline(rows, now_ms)}<h2>Bytes written per commit</h2>{svg.commit_sizes(rows)}"
            f"<h2>Instants</h2>" + table(["instant", "action", "operation", "state", "duration", "files written",
                                          "bytes written"], instants, "instants"))


def _services_section(rows: list[InstantRow]) -> str:
    found = services(rows)
    if not found:
        return ("<h2>Table services</h2><p class=muted>no compaction, log compaction, clustering or clean pending "
                "or recent</p>")
    cells = [[escape(name), escape(r.ts), escape(r.state), escape(svg.duration(r.duration_ms))]
             for name, r in found]
    return "<h2>Table services</h2>" + table(["service", "instant", "state", "duration"], cells, "services")


def _pairs(rows: list[tuple[str, str]], css: str, headers: tuple[str, str] = ("property", "value")) -> str:
    return table(list(headers), [[escape(k), f'<code class=long>{escape(v)}</code>'] for k, v in rows], css)


def _schema(t: TableRow) -> str:
    keys = {n for n, _ in t.key_types}
    rows = [[escape(n), escape(ty), escape(t.comments.get(n, "")), ""] for n, ty in t.columns if n not in keys]
    rows += [[escape(n), escape(ty), escape(t.comments.get(n, "")), "partition key"] for n, ty in t.key_types]
    return "<h2>Schema</h2>" + table(["column", "type", "comment", ""], rows, "schema")


def _statistics(t: TableRow, column_stats: list[list[str]]) -> str:
    basic = _pairs(t.basic_stats, "basic-stats", ("statistic", "value")) if t.basic_stats \
        else "<p class=muted>no basic statistics (numRows, totalSize, ...) among the table's parameters</p>"
    if column_stats:
        rows = [[escape(c) for c in r[:2]] + [f"<span>{escape(c)}</span>" for c in r[2:]] for r in column_stats]
        cols = table(["column", "type", "nulls", "distinct", "min", "max", "avg length", "max length",
                      "true / false"], rows, "column-stats")
    else:
        cols = "<p class=muted>no column statistics (ANALYZE TABLE ... COMPUTE STATISTICS FOR COLUMNS)</p>"
    return f"<h2>Statistics</h2><h3>Hive statistics</h3>{basic}<h3>Column statistics</h3>{cols}"


def table_page(db: str, t: TableRow, parts: list[str], page_no: int, pages: int, total: int,
               timeline: list[InstantRow] | None, now_ms: int, column_stats: list[list[str]] | None = None) -> str:
    href = table_href(db, t.name)
    head = (f"<p>{escape(t.table_type)}{' · Hudi table' if t.hudi else ''} · "
            f"partitioned by {escape(', '.join(t.partition_keys)) or '(none)'}"
            f"{' · owner ' + escape(t.owner) if t.owner else ''}</p>"
            f"<p class=muted>location <code>{escape(t.location)}</code></p>")
    if t.hudi_config:
        head += "<h2>Hudi</h2>" + _pairs(t.hudi_config, "hudi-config", ("Hudi", "value"))
    if t.hudi:
        prows = [[f'<a class="partition" href="{href}/files?{urlencode({"partition": p})}">'
                  f'{escape(p) or "(table)"}</a>'] for p in parts]
    else:
        prows = [[f'<span class="partition">{escape(p)}</span>'] for p in parts]
    body = head + (_services_section(timeline) + _timeline_section(timeline, now_ms) if timeline is not None else "")
    body += (f"<h2>Partitions</h2><p>{total} partition(s)</p>" + _pager(href, page_no, pages)
             + table(["partition"], prows, "partitions") + _pager(href, page_no, pages))
    body += _schema(t) + _statistics(t, column_stats or [])
    body += "<h2>Storage</h2>" + _pairs(t.storage, "storage", ("storage", "value"))
    body += "<h2>Properties</h2>" + (_pairs(list(t.parameters.items()), "properties") if t.parameters
                                     else "<p class=muted>no parameters</p>")
    return page(f"Table {db}.{t.name}", [("databases", "/"), (db, db_href(db)), (t.name, href)], body)


def file_slices(db: str, name: str, partition: str, slices: list) -> str:
    rows = []
    for s in slices:
        base = s.base_file
        logs = ", ".join(escape(f.name) for f in s.log_files) or "-"
        size = (base.size if base else 0) + sum(f.size for f in s.log_files)
        rows.append([escape(s.file_id), escape(s.base_instant), escape(base.name) if base else "-", logs, str(size)])
    href = table_href(db, name)
    return page(f"File slices of {db}.{name} / {partition or '(table)'}",
                [("databases", "/"), (db, db_href(db)), (name, href)],
                f"<p>{len(slices)} latest file slice(s)</p>"
                + table(["file id", "base instant", "base file", "log files", "bytes"], rows, "slices"))


def search(text: str, dbs: list[str], tables: list[tuple[str, str, str]]) -> str:
    drows = [[f'<a class="database" href="{db_href(n)}">{escape(n)}</a>'] for n in dbs]
    trows = [[f'<a class="table" href="{table_href(d, n)}">{escape(d)}.{escape(n)}</a>', escape(ty)]
             for d, n, ty in tables]
    body = (f"<p>{len(dbs)} database(s) and {len(tables)} table(s) whose name holds "
            f"<code>{escape(text)}</code></p>" if text else "<p>give a part of a name</p>")
    if drows:
        body += "<h2>Databases</h2>" + table(["database"], drows, "found-databases")
    if trows:
        body += "<h2>Tables</h2>" + table(["table", "type"], trows, "found-tables")
    return page(f"Search {text}" if text else "Search", [("databases", "/")], body)


def server(sections: list[tuple[str, list[str], list[list[str]], str]]) -> str:
    """sections: (title, headers, rows of text, css class)."""
    body = "<p class=muted>this worker's view (with --workers N each worker has its own port); the same numbers " \
           "for Prometheus: <a href=\"/metrics\">/metrics</a></p>"
    for title, headers, rows, css in sections:
        cells = [[escape(c) for c in r] for r in rows]
        body += f"<h2>{escape(title)}</h2>" + (table(headers, cells, css) if rows else "<p class=muted>none yet</p>")
    return page("Server", [("databases", "/")], body)


def not_found(text: str) -> str:
    return page("Not found", [("databases", "/")], f"<p>{escape(text)}</p>")
