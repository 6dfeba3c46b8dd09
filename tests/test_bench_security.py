"""`python -m bench.security` keeps working: it starts its own server, runs the attacks of issue 41
and prints its table, one row per attack (what each outcome is depends on the server; the table
in docs/security.md says what it was when measured)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("puresasl")

REPO_ROOT = Path(__file__).resolve().parents[1]
ATTACKS = (
    "Bob's table on Alice's table folder, dropped with deleteData",
    "Bob's partition on Alice's table folder, dropped with deleteData",
    "Bob's table on Alice's table folder, truncated",
    "rename a table on, or onto, Alice's table folder",
    "Bob's table at the warehouse root, dropped with deleteData",
    "Bob's Hudi table on Alice's folder, a marker naming her file, rollback",
    "database names with '..'",
    "names with quotes and spaces",
    "a table on a big folder",
    "NUL characters in requests",
    "a huge partition filter",
    "repeated wrong passwords from one address",
)


def test_the_security_bench_prints_its_table():
    done = subprocess.run([sys.executable, "-m", "bench.security", "--quick"], cwd=REPO_ROOT, capture_output=True,
                          text=True, timeout=900)
    assert done.returncode == 0, done.stderr[-3000:]
    lines = done.stdout.splitlines()
    assert lines[0] == "| attack | expected | outcome | victim files intact |", done.stdout
    rows = [line for line in lines[2:] if line.startswith("| ")]
    assert len(rows) == len(ATTACKS), done.stdout
    for attack, row in zip(ATTACKS, rows):
        assert row.startswith(f"| {attack}"), (attack, row)
        assert "the bench failed" not in row, row
    nul = next(r for r in rows if r.startswith("| NUL"))
    assert "refused (MetaException" in nul and ": allowed" not in nul  # this branch's own part
