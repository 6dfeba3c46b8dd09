"""A reference's answers recorded in tests/fixtures, for differential tests whose reference run is
long and gives the same answers every time (a fixed workload against the reference Hive Metastore).

`reference(name, key, live)` returns the recording `<name>.json` when its key is `key` (a digest of
everything the answers depend on: `digest(...)`), else `live()`'s answers. The thorough run
(`HYPOTHESIS_PROFILE=thorough`) always asks `live()` and fails when a recording of the same key
differs; `HMS_TEST_WRITE_REFERENCE=1` asks `live()` and writes the recording. Answers are kept in
JSON's form (`canonical`): compare the other side's answers in that form too.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

import pytest

from tests.harness.properties import thorough

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"


def canonical(value: Any) -> Any:
    """`value` as a recording holds it: lists for tuples, `repr` for what JSON has no type for."""
    return json.loads(json.dumps(value, default=repr))


def digest(paths: Iterable[Path | str], *extra: str) -> str:
    h = hashlib.sha256()
    for p in paths:
        try:
            h.update(Path(p).read_bytes())
        except OSError:
            h.update(f"<missing {Path(p).name}>".encode())
    for e in extra:
        h.update(e.encode())
    return h.hexdigest()[:16]


def reference(name: str, key: str, live: Callable[[], Any], check: Callable[[Any], list[str]] | None = None,
              differing: Callable[[Any, Any], list[str]] | None = None) -> Any:
    """The answers recorded as `name` under `key`, or `live()`'s (see the module). `check`: what is
    wrong with live answers, which are then not recorded; `differing`: names of the parts in which
    two answers differ (for the thorough run's message)."""
    path = FIXTURES / f"{name}.json"
    write = os.environ.get("HMS_TEST_WRITE_REFERENCE") == "1"
    try:
        recorded = json.loads(path.read_text())
    except (OSError, ValueError):
        recorded = None
    if recorded is not None and recorded.get("key") != key:
        recorded = None
    if recorded is not None and not thorough() and not write:
        return recorded["answers"]
    answers = canonical(live())
    if write:
        wrong = check(answers) if check is not None else []
        assert not wrong, f"not recorded: {wrong}"
        path.write_text(json.dumps({"key": key, "answers": answers}, indent=0, sort_keys=True) + "\n")
    elif recorded is not None and recorded["answers"] != answers:
        parts = differing(recorded["answers"], answers) if differing is not None else []
        pytest.fail(f"the reference's answers differ from {path.name} (same key): {parts[:20]}", pytrace=False)
    return answers
