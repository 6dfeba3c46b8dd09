"""The docs' examples run: every ```python runnable block of README.md and docs/*.md is executed
against a fresh server (its `thrift://127.0.0.1:9083` replaced by the server's address), in its own
interpreter and directory, and must exit 0. Every ```sh runnable block is a list of `hudi-metastore`
commands (one a line; `#` comments), run in order against the server (HUDI_METASTORE_METASTORE set
to it, so they need no --metastore; in this process) holding the table they say is given, `sales.orders`
(partitioned by dt, two partitions); each must exit 0."""

from __future__ import annotations

import os
import re
import shlex
import subprocess

import pytest

from tests.harness import REPO_ROOT, VENV_PYTHON, start_our_server, stop_process
from tests.harness.cli_logs import cli_logs_to_capsys

BLOCK = re.compile(r"^```python runnable[^\n]*\n(.*?)^```", re.M | re.S)
SH_BLOCK = re.compile(r"^```sh runnable[^\n]*\n(.*?)^```", re.M | re.S)
DOCS = [REPO_ROOT / "README.md", *sorted((REPO_ROOT / "docs").glob("*.md"))]


def snippets(block: re.Pattern = BLOCK) -> list[tuple[str, int, str]]:
    out = []
    for path in DOCS:
        text = path.read_text()
        for m in block.finditer(text):
            out.append((str(path.relative_to(REPO_ROOT)), text.count("\n", 0, m.start()) + 1, m.group(1)))
    return out


def test_there_are_runnable_snippets():
    assert any(doc == "docs/hudi.md" for doc, _, _ in snippets())
    assert any(doc == "README.md" for doc, _, _ in snippets(SH_BLOCK))


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


def _given_sales_orders(port: int) -> None:
    """The table sh blocks say is given: sales.orders, partitioned by dt, two partitions (fresh)."""
    from client import HudiMetastoreClient
    from thrift_idl.hive_metastore.ttypes import (
        Database,
        FieldSchema,
        NoSuchObjectException,
        Partition,
        SerDeInfo,
        StorageDescriptor,
        Table,
    )

    with HudiMetastoreClient(f"thrift://127.0.0.1:{port}") as c:
        try:
            c.drop_database("sales", True, True)
        except NoSuchObjectException:
            pass
        c.create_database(Database(name="sales", description="the docs' example", parameters={}))
        sd = StorageDescriptor(cols=[FieldSchema("id", "bigint", "order id"), FieldSchema("amount", "double", "")],
                               inputFormat="org.apache.hadoop.hive.ql.io.parquet.MapredParquetInputFormat",
                               outputFormat="org.apache.hadoop.hive.ql.io.parquet.MapredParquetOutputFormat",
                               serdeInfo=SerDeInfo(serializationLib="org.apache.hadoop.hive.ql.io.parquet.serde."
                                                                    "ParquetHiveSerDe", parameters={}))
        c.create_table(Table(tableName="orders", dbName="sales", tableType="MANAGED_TABLE", parameters={},
                             partitionKeys=[FieldSchema("dt", "string", "")], sd=sd))
        c.add_partitions([Partition(values=[d], dbName="sales", tableName="orders", parameters={}, sd=sd)
                          for d in ("2024-01-01", "2024-01-02")])


@pytest.mark.parametrize("doc, line, code", snippets(SH_BLOCK),
                         ids=lambda v: v if isinstance(v, str) and v.endswith(".md")
                         else str(v) if isinstance(v, int) else "")
def test_cli_snippet_runs(server, monkeypatch, capsys, doc, line, code):
    """In this process (adapter.cli.main, as the console script runs it), which saves an
    interpreter's start per command."""
    from adapter.cli import main

    _given_sales_orders(server)
    for k in [k for k in os.environ if k.startswith("HUDI_METASTORE_") and k != "HUDI_METASTORE_CACHE"]:
        monkeypatch.delenv(k)
    monkeypatch.setenv("HUDI_METASTORE_METASTORE", f"thrift://127.0.0.1:{server}")
    cli_logs_to_capsys(monkeypatch)  # main() points the logs at the captured stderr
    for k, text in enumerate(code.splitlines()):
        command = text.split(" #", 1)[0].strip()
        if not command or command.startswith("#"):
            continue
        words = shlex.split(command.replace("thrift://127.0.0.1:9083", f"thrift://127.0.0.1:{server}"))
        assert words[0] == "hudi-metastore", f"{doc}:{line + 1 + k}: not a hudi-metastore command: {command}"
        status = main(words[1:])
        err = capsys.readouterr().err
        assert status == 0, f"{doc}:{line + 1 + k} `{command}` failed:\n{err[-3000:]}"


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
