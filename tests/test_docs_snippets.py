"""The docs' examples run: every ```python runnable block of README.md and docs/*.md is executed
against a fresh server (its `thrift://127.0.0.1:9083` replaced by the server's address), in its own
interpreter and directory, and must exit 0."""

from __future__ import annotations

import os
import re
import subprocess

import pytest

from tests.harness import REPO_ROOT, VENV_PYTHON, start_our_server, stop_process

BLOCK = re.compile(r"^```python runnable[^\n]*\n(.*?)^```", re.M | re.S)
DOCS = [REPO_ROOT / "README.md", *sorted((REPO_ROOT / "docs").glob("*.md"))]


def snippets() -> list[tuple[str, int, str]]:
    out = []
    for path in DOCS:
        text = path.read_text()
        for m in BLOCK.finditer(text):
            out.append((str(path.relative_to(REPO_ROOT)), text.count("\n", 0, m.start()) + 1, m.group(1)))
    return out


def test_there_are_runnable_snippets():
    assert any(doc == "docs/hudi.md" for doc, _, _ in snippets())


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("docs")
    port, proc = start_our_server(f"sqlite:///{tmp / 'm.db'}", tmp)
    yield port
    stop_process(proc)


@pytest.mark.parametrize("doc, line, code", snippets(), ids=lambda v: v if isinstance(v, str) and v.endswith(".md")
                         else str(v) if isinstance(v, int) else "")
def test_snippet_runs(server, tmp_path, doc, line, code):
    code = code.replace("thrift://127.0.0.1:9083", f"thrift://127.0.0.1:{server}")
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(REPO_ROOT), os.environ.get("PYTHONPATH", "")]))
    r = subprocess.run([VENV_PYTHON, "-c", code], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, f"{doc}:{line} failed:\n{r.stderr[-3000:]}"


PATH_REF = re.compile(r"`((?:adapter|client|store|bench|tests|tools|docs|hudi_format|pipeline|thrift_idl|docker|\.ci)"
                      r"/[\w./-]*\w)`")


def test_paths_named_in_the_docs_exist():
    """Every repository path the docs name in backticks is in the repository (a script outside it,
    or one renamed since, fails here)."""
    missing = []
    for path in DOCS:
        for m in PATH_REF.finditer(path.read_text()):
            ref = m.group(1)
            if not (REPO_ROOT / ref).exists() and not (REPO_ROOT / (ref + ".py")).exists():
                missing.append(f"{path.relative_to(REPO_ROOT)}: {ref}")
    assert not missing, missing
