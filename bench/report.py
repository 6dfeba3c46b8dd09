"""Targets, ratios and the printed table."""

from __future__ import annotations

import math

# (family, N or None for "any"/unsized, kind, threshold or {pairing: threshold})
#   ratio:       reference median / ours median >= threshold
#   throughput:  ours calls/s / reference calls/s >= threshold
#   ours_ms:     ours median < threshold milliseconds
TARGETS = [
    ("getTable", None, "ratio", 5),
    ("getPartitions", 10000, "ratio", 5),
    ("getPartitionsByNames", 1000, "ratio", 5),
    ("getPartitionsByFilter", "*", "ratio", 5),
    ("addPartitions", 10000, "ratio", {"postgres": 10, "embedded": 20}),
    ("dropPartitions", 1000, "ratio", 10),
    ("concurrentGetTable", None, "throughput", 3),
    ("bigFilter", None, "ours_ms", 20),
]


def row_label(row: dict) -> str:
    fam, n, var = row["family"], row.get("n"), row.get("variant")
    if fam == "concurrentGetTable":
        return f"getTable x{row.get('threads', 8)} threads (calls/s)"
    if fam == "bigFilter":
        return f"getPartitionsByFilter {row.get('expected', 24)} of {n}"
    label = fam if n is None else f"{fam}.{n}"
    if var:
        label += f" ({var})"
    return label


def ratio(row: dict):
    ref, ours = row.get("reference") or {}, row.get("ours") or {}
    if row["family"] == "concurrentGetTable":
        a, b = ours.get("throughput"), ref.get("throughput")
    else:
        a, b = ref.get("median_ms"), ours.get("median_ms")
    if not a or not b or "error" in ref or "error" in ours:
        return None
    return a / b


def apply_targets(rows: list[dict], pairing: str) -> None:
    """Set row["target"] / row["status"] ("PASS", "FAIL", "" ) and a note when the target's N was not
    run in this pairing and the largest N run was used instead (status gets a '*')."""
    for fam, n, kind, thr in TARGETS:
        threshold = thr.get(pairing) if isinstance(thr, dict) else thr
        if threshold is None:
            continue
        cands = [r for r in rows if r["family"] == fam]
        if not cands:
            continue
        substituted = False
        if n not in (None, "*"):
            exact = [r for r in cands if r.get("n") == n]
            if not exact:
                largest = max(r.get("n") or 0 for r in cands)
                exact = [r for r in cands if r.get("n") == largest]
                substituted = True
            cands = exact
        for r in cands:
            if kind == "ours_ms":
                r["target"] = f"ours < {threshold} ms"
                med = (r.get("ours") or {}).get("median_ms")
                ok = med is not None and med < threshold
                known = med is not None
            else:
                r["target"] = f">= {threshold}x"
                q = ratio(r)
                ok = q is not None and q >= threshold
                known = q is not None
            r["status"] = ("PASS" if ok else "FAIL") if known else "n/a"
            if substituted and known:
                r["status"] += "*"
                r["target_note"] = f"target is for N={n}; N={r.get('n')} is the largest run here"


def fmt_ms(v) -> str:
    if v is None or (isinstance(v, float) and math.isnan(v)):
        return "-"
    if v >= 10_000:
        return f"{v / 1000:.1f} s"
    if v >= 1000:
        return f"{v / 1000:.2f} s"
    if v >= 100:
        return f"{v:.0f} ms"
    if v >= 10:
        return f"{v:.1f} ms"
    return f"{v:.2f} ms"


def cells(row: dict) -> list[str]:
    ref, ours = row.get("reference") or {}, row.get("ours") or {}
    q = ratio(row)
    if row["family"] == "concurrentGetTable":
        def med(s):
            return "error" if "error" in s else (f"{s['throughput']:.0f}/s" if "throughput" in s else "-")

        def p90(s):
            return fmt_ms(s.get("p90_ms"))
    else:
        def med(s):
            if "error" in s:
                return "error"
            if s.get("skipped"):
                return "skipped"
            return fmt_ms(s.get("median_ms"))

        def p90(s):
            return fmt_ms(s.get("p90_ms"))
    iters = f"{ref.get('iterations', '-')}/{ours.get('iterations', '-')}"
    if row["family"] == "concurrentGetTable":
        iters = f"{ref.get('calls', '-')}/{ours.get('calls', '-')}"
    return [row_label(row), med(ref), med(ours), "-" if q is None else f"{q:.2f}x",
            p90(ref), p90(ours), fmt_ms(ref.get("max_ms")), fmt_ms(ours.get("max_ms")), iters,
            row.get("target", ""), row.get("status", "")]


HEADER = ["operation", "ref median", "ours median", "ref/ours", "ref p90", "ours p90", "ref max",
          "ours max", "iters r/o", "target", "status"]


def render_table(rows: list[dict], markdown: bool = False) -> str:
    body = [cells(r) for r in rows]
    if markdown:
        lines = ["| " + " | ".join(HEADER) + " |", "|" + "|".join("---" for _ in HEADER) + "|"]
        lines += ["| " + " | ".join(c.replace("|", "/") for c in b) + " |" for b in body]
        return "\n".join(lines)
    widths = [max(len(h), *(len(b[i]) for b in body)) if body else len(h) for i, h in enumerate(HEADER)]
    def line(vals):
        return "  ".join(v.ljust(widths[i]) if i == 0 else v.rjust(widths[i]) for i, v in enumerate(vals))
    out = [line(HEADER), line(["-" * x for x in widths])]
    out += [line(b) for b in body]
    return "\n".join(out)


def notes(rows: list[dict]) -> list[str]:
    out = []
    for r in rows:
        label = row_label(r)
        for side in ("reference", "ours"):
            s = r.get(side) or {}
            if "error" in s:
                extra = f" (server log: {s['server_log']})" if s.get("server_log") else ""
                out.append(f"{label}: {side} failed: {s['error']}{extra}")
            elif s.get("skipped"):
                out.append(f"{label}: {side} skipped: {s['skipped']}")
            elif "expected" in s and "result_size" in s and s["result_size"] != s["expected"]:
                out.append(f"{label}: {side} returned {s['result_size']} (expected {s['expected']})")
            if s.get("errors"):
                out.append(f"{label}: {side} thread errors: {s['errors'][0]}")
        if r.get("target_note"):
            out.append(f"{label}: {r['target_note']}")
    return out
