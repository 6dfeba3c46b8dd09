"""Running `hudi-metastore` (as `python -m adapter.cli`) in a subprocess for the CLI tests."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

from tests.harness import REPO_ROOT, VENV_PYTHON


def cli_env(extra: dict[str, str] | None = None) -> dict[str, str]:
    """This environment without HUDI_METASTORE_* settings, plus `extra`, importing this checkout."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("HUDI_METASTORE_") or k == "HUDI_METASTORE_CACHE"}
    env["PYTHONPATH"] = os.pathsep.join([str(REPO_ROOT)] + ([env["PYTHONPATH"]] if env.get("PYTHONPATH") else []))
    env.update(extra or {})
    return env


def run_cli(*args: str, cwd: Path | str | None = None, env: dict[str, str] | None = None,
            timeout: float = 120, python_flags: bool = False) -> subprocess.CompletedProcess:
    """`hudi-metastore ARGS`; with `python_flags`, ARGS may start with the interpreter's own
    (`-X importtime`), up to the first word that is not one."""
    flags: list[str] = []
    rest = list(args)
    while python_flags and rest and rest[0] in ("-X",):
        flags += rest[:2]
        rest = rest[2:]
    return subprocess.run([VENV_PYTHON, *flags, "-m", "adapter.cli", *rest], cwd=str(cwd or REPO_ROOT),
                          env=cli_env(env), stdin=subprocess.DEVNULL, capture_output=True, text=True,
                          timeout=timeout)


def assert_one_line_error(r: subprocess.CompletedProcess, *words: str) -> str:
    """Exit status 2, one line on stderr (no traceback) holding every one of `words`."""
    lines = r.stderr.splitlines()
    assert r.returncode == 2, (r.returncode, r.stderr)
    assert len(lines) == 1, r.stderr
    assert "Traceback" not in r.stderr
    for w in words:
        assert w in lines[0], (w, lines[0])
    return lines[0]
