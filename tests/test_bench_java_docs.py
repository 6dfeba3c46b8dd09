"""`python -m bench.java_client --docs FILE` writes each pairing's table and the run's conditions
between its markers: a second run replaces the block, the rest of the file stays."""

from __future__ import annotations

from pathlib import Path

import pytest

from bench.java_client import render, rows_of, write_docs


def _rows(ours_ms: float) -> list[dict]:
    return [{"op": "getTable", "n": 1000, "reference": 3.0, "ours": ours_ms, "unit": "ms", "ratio": 3.0 / ours_ms,
             "range": [2.0, 4.0], "target": 5, "sizes": {}, "pass": 3.0 / ours_ms >= 5},
            {"op": "addPartitions", "n": 10_000, "reference": 80_000.0, "ours": 4_000.0, "unit": "ms", "ratio": 20.0,
             "range": [18.0, 21.0], "target": 20, "sizes": {}, "pass": True}]


def test_docs_blocks_are_written_then_replaced(tmp_path: Path):
    md = tmp_path / "performance.md"
    md.write_text("# Performance\n\nintro\n\n<!-- java_client:postgres -->\nold\n"
                  "<!-- /java_client:postgres -->\n\nafter\n")
    write_docs(md, "postgres", "**Run A**", render(_rows(1.0), 5))
    write_docs(md, "embedded", "**Run B**", render(_rows(0.5), 5))
    write_docs(md, "postgres", "**Run C**", render(_rows(0.4), 5))
    text = md.read_text()
    assert text.startswith("# Performance\n\nintro\n\n<!-- java_client:postgres -->\n**Run C**\n")
    assert "old" not in text and "**Run A**" not in text and text.count("<!-- java_client:postgres -->") == 1
    assert "\nafter\n" in text and text.index("after") < text.index("**Run B**")  # a new pairing goes at the end
    assert "| getTable | 3.00 ms | 0.40 ms | 7.50x | 2.00–4.00x | ≥ 5x | PASS |" in text
    assert "| getTable | 3.00 ms | 0.50 ms | 6.00x |" in text
    assert "| addPartitions.10000 | 80000.00 ms | 4000.00 ms | 20.00x | 18.00–21.00x | ≥ 20x | PASS |" in text


def test_rows_carry_the_ceiling_and_render_shows_it():
    """`--ceiling`: a read row gets the ceiling (median of its rounds), the ratio it allows
    (reference / ceiling) and ours as a share of that; a row not measured there keeps its cells."""
    results = {("getPartitions", 2000): {"reference": [40.0, 44.0, 42.0], "ours": [20.0, 20.0, 21.0], "size": {}},
               ("concurrentGetTable", 8): {"reference": [800.0], "ours": [4000.0], "size": {}}}
    ceilings = {("getPartitions", 2000): [12.0, 10.0, 11.0], ("concurrentGetTable", 8): [1.0]}
    plain = rows_of(results)
    rows = rows_of(results, ceilings)
    by_op = {r["op"]: r for r in rows}
    part = by_op["getPartitions"]
    assert part["ceiling"] == 11.0 and part["ceiling_range"] == [10.0, 12.0]
    assert part["ceiling_ratio"] == pytest.approx(42.0 / 11.0)
    assert part["of_ceiling"] == pytest.approx(part["ratio"] / (42.0 / 11.0))
    assert "ceiling" not in by_op["concurrentGetTable"]  # a throughput has no ceiling
    table = render(rows, 3)
    assert table.splitlines()[0] == ("| operation | reference | ours | ratio (median of 3) | range | "
                                     "ceiling (ratio) | ours of ceiling | target |  |")
    # ratio 2.00x (median of 2.0, 2.2, 2.0), ceiling ratio 42/11 = 3.82x: 2.00 / 3.82 = 52%
    assert "| getPartitions.2000 | 42.00 ms | 20.00 ms | 2.00x | 2.00–2.20x | 11.00 ms (3.82x) | 52% | ≥ 4x | FAIL |" \
        in table
    assert "| getTable, 8 concurrent clients | 800/s | 4000/s | 5.00x | 5.00–5.00x | | | ≥ 5x | PASS |" in table
    assert "ceiling" not in render(plain, 3)  # without --ceiling the table is as before


def test_lists_of_ten_thousand_are_held_to_a_share_of_the_ceiling():
    """Issue 43: at 10,000 partitions a list passes at 80% of the ratio the ceiling allows; without
    --ceiling it has no verdict."""
    results = {("getPartitions", 10_000): {"reference": [150.0], "ours": [60.0], "size": {}}}
    row = rows_of(results, {("getPartitions", 10_000): [50.0]})[0]
    assert row["of_ceiling"] == pytest.approx(2.5 / 3.0) and row["pass"] is True
    assert "| 83% | ≥ 80% of the ceiling | PASS |" in render([row], 1)
    slow = rows_of({("getPartitions", 10_000): {"reference": [150.0], "ours": [70.0], "size": {}}},
                   {("getPartitions", 10_000): [50.0]})[0]
    assert slow["pass"] is False
    assert rows_of(results)[0]["pass"] is None
