"""The CLI's logging in tests that call `adapter.cli.main` in process and read its stderr."""

from __future__ import annotations

import logging


def cli_logs_to_capsys(monkeypatch) -> None:
    """`main()` points the root logger's handlers at the captured stderr and sets its level: both are
    restored after the test. py4j stays quiet meanwhile: a Spark test's connection collected during
    the call logs its close at INFO (a CI run once counted that line as the CLI's)."""
    root = logging.getLogger()
    monkeypatch.setattr(root, "handlers", list(root.handlers))
    monkeypatch.setattr(root, "level", root.level)
    py4j = logging.getLogger("py4j")
    monkeypatch.setattr(py4j, "level", py4j.level)
    py4j.setLevel(logging.WARNING)
