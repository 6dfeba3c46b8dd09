"""Charts as SVG, drawn on the server: a Hudi timeline on a time axis (one mark per instant: a bar
from request to completion, coloured by action, hatched while pending) and bytes written per
commit over time."""

from __future__ import annotations

import datetime as dt
from html import escape

from adapter.console.data import InstantRow

ACTION_COLOURS = {"commit": "#2b6cb0", "deltacommit": "#2f855a", "replacecommit": "#b7791f",
                  "clean": "#718096", "rollback": "#c53030", "restore": "#9b2c2c",
                  "compaction": "#6b46c1", "logcompaction": "#805ad5", "clustering": "#d69e2e",
                  "savepoint": "#2c7a7b", "indexing": "#4a5568"}
WIDTH, LEFT, RIGHT, ROW, TOP = 960, 120, 70, 16, 30
MIN_BAR = 3  # px: an instant that took no time still shows


def colour(action: str) -> str:
    return ACTION_COLOURS.get(action, "#4a5568")


def _when(ms: int, span_ms: int | None = None) -> str:
    """UTC time; on a short axis (under a minute) to the millisecond, so ticks differ."""
    t = dt.datetime.fromtimestamp(ms / 1000, dt.timezone.utc)
    if span_ms is not None and span_ms < 60_000:
        return t.strftime("%H:%M:%S.") + f"{ms % 1000:03d}"
    return t.strftime("%Y-%m-%d %H:%M:%S")


def _ticks(lo: int, hi: int, n: int = 6) -> list[int]:
    if hi <= lo:
        return [lo]
    step = (hi - lo) / (n - 1)
    return [int(lo + k * step) for k in range(n)]


def _size(n: int | None) -> str:
    if n is None:
        return "-"
    for unit in ("B", "KiB", "MiB", "GiB"):
        if n < 1024 or unit == "GiB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n = n / 1024  # type: ignore[assignment]
    return str(n)


def duration(ms: int | None) -> str:
    if ms is None:
        return "pending"
    return f"{ms} ms" if ms < 1000 else f"{ms / 1000:.1f} s" if ms < 120_000 else f"{ms / 60_000:.1f} min"


def timeline(rows: list[InstantRow], now_ms: int) -> str:
    """One row per action; each instant a bar from its request to its completion (now if pending)."""
    if not rows:
        return '<svg xmlns="http://www.w3.org/2000/svg" class="timeline" width="400" height="30">' \
               '<text x="10" y="20">no instants</text></svg>'
    actions = sorted({r.action for r in rows})
    lo = min(r.start_ms for r in rows)
    hi = max((r.end_ms if r.end_ms is not None else max(now_ms, r.start_ms)) for r in rows)
    span = max(hi - lo, 1)
    plot = WIDTH - LEFT - RIGHT
    height = TOP + ROW * 2 * len(actions) + 30

    def x(ms: int) -> float:
        return LEFT + plot * (ms - lo) / span

    out = [f'<svg xmlns="http://www.w3.org/2000/svg" class="timeline" width="{WIDTH}" height="{height}" '
           f'viewBox="0 0 {WIDTH} {height}" role="img" aria-label="timeline of {len(rows)} instants">',
           '<defs><pattern id="pending" width="6" height="6" patternUnits="userSpaceOnUse" '
           'patternTransform="rotate(45)"><rect width="3" height="6" fill="#e53e3e"/></pattern></defs>',
           f'<rect x="0" y="0" width="{WIDTH}" height="{height}" fill="#ffffff"/>']
    axis_y = height - 22
    out.append(f'<line x1="{LEFT}" y1="{axis_y}" x2="{WIDTH - RIGHT}" y2="{axis_y}" stroke="#2d3748"/>')
    for t in _ticks(lo, hi):
        out.append(f'<line x1="{x(t):.1f}" y1="{axis_y}" x2="{x(t):.1f}" y2="{axis_y + 4}" stroke="#2d3748"/>'
                   f'<text x="{x(t):.1f}" y="{axis_y + 16}" font-size="10" text-anchor="middle">'
                   f'{escape(_when(t, span))}</text>')
    for k, action in enumerate(actions):
        y = TOP + ROW * 2 * k
        out.append(f'<text x="{LEFT - 8}" y="{y + ROW - 4}" font-size="12" text-anchor="end">{escape(action)}</text>'
                   f'<line x1="{LEFT}" y1="{y + ROW + 4}" x2="{WIDTH - RIGHT}" y2="{y + ROW + 4}" stroke="#edf2f7"/>')
    for r in rows:
        y = TOP + ROW * 2 * actions.index(r.action)
        end = r.end_ms if r.end_ms is not None else max(now_ms, r.start_ms)
        x0, w = x(r.start_ms), max(x(end) - x(r.start_ms), MIN_BAR)
        fill = colour(r.action) if r.state == "COMPLETED" else "url(#pending)"
        title = (f"{r.ts} {r.action} {r.state}, requested {_when(r.start_ms)} UTC, took {duration(r.duration_ms)}, "
                 f"{'-' if r.files is None else r.files} file(s), {_size(r.bytes)} written")
        out.append(f'<rect class="instant" data-ts="{escape(r.ts)}" data-action="{escape(r.action)}" '
                   f'data-state="{escape(r.state)}" x="{x0:.1f}" y="{y + 2}" width="{w:.1f}" height="{ROW}" '
                   f'fill="{fill}" stroke="{colour(r.action)}"><title>{escape(title)}</title></rect>')
    out.append("</svg>")
    return "".join(out)


def commit_sizes(rows: list[InstantRow]) -> str:
    """Bytes written by each completed write, as bars at its completion time."""
    done = [r for r in rows if r.bytes is not None and r.end_ms is not None]
    if not done:
        return '<svg xmlns="http://www.w3.org/2000/svg" class="commit-sizes" width="400" height="30">' \
               '<text x="10" y="20">no completed writes</text></svg>'
    height, bottom = 220, 190
    lo = min(r.end_ms for r in done if r.end_ms is not None)
    hi = max(r.end_ms for r in done if r.end_ms is not None)
    top_bytes = max(max(r.bytes or 0 for r in done), 1)
    plot = WIDTH - LEFT - RIGHT
    bar = max(min(plot / max(len(done), 1) * 0.6, 24), 3)

    def x(ms: int) -> float:
        return LEFT + (plot - bar) * ((ms - lo) / (hi - lo) if hi > lo else 0.5)

    out = [f'<svg xmlns="http://www.w3.org/2000/svg" class="commit-sizes" width="{WIDTH}" height="{height}" '
           f'viewBox="0 0 {WIDTH} {height}" role="img" aria-label="bytes written per commit">',
           f'<rect x="0" y="0" width="{WIDTH}" height="{height}" fill="#ffffff"/>',
           f'<line x1="{LEFT}" y1="{bottom}" x2="{WIDTH - RIGHT}" y2="{bottom}" stroke="#2d3748"/>',
           f'<text x="{LEFT - 8}" y="24" font-size="10" text-anchor="end">{escape(_size(top_bytes))}</text>',
           f'<text x="{LEFT - 8}" y="{bottom}" font-size="10" text-anchor="end">0</text>']
    for t in _ticks(lo, hi, 4 if hi > lo else 1):
        out.append(f'<text x="{x(t) + bar / 2:.1f}" y="{bottom + 16}" font-size="10" text-anchor="middle">'
                   f'{escape(_when(t, hi - lo))}</text>')
    for r in done:
        h = (bottom - 20) * (r.bytes or 0) / top_bytes
        out.append(f'<rect class="commit" data-ts="{escape(r.ts)}" x="{x(r.end_ms or lo):.1f}" y="{bottom - h:.1f}" '
                   f'width="{bar:.1f}" height="{h:.1f}" fill="{colour(r.action)}">'
                   f'<title>{escape(f"{r.ts} {r.action}: {r.files} file(s), {_size(r.bytes)}")}</title></rect>')
    out.append("</svg>")
    return "".join(out)
