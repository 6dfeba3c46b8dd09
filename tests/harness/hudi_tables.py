"""Hudi fixture tables on disk and what hudi-rs (the independent oracle) and our server say about
them; running the `hudi-metastore` CLI. For the import, validate/repair and CLI
view tests."""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import uuid
from pathlib import Path

from .cli_loop import CliLoop
from .procs import REPO_ROOT, VENV_PYTHON

REPO_FIXTURES = os.path.join(os.path.dirname(__file__), "..", "fixtures", "hudi-tables")


def fixture_zip(name: str) -> str:
    """A fixture of the repository (tests/fixtures/hudi-tables)."""
    return os.path.join(REPO_FIXTURES, f"{name}.zip")


def table_copy(name: str, dest: Path) -> str:
    """A private copy of fixture `name` (e.g. "cow_v8_nonpartitioned"); its base path."""
    from tests.test_hudi_fixtures import unzip_table

    base = unzip_table(fixture_zip(name), dest / f"unzip-{uuid.uuid4().hex[:6]}")
    target = dest / name
    shutil.copytree(base, target)
    return str(target)


def tree_digest(base: str) -> dict[str, str]:
    """Relative path -> sha1 of every file under base (to show storage was left alone)."""
    out = {}
    for root, _, names in os.walk(base):
        for n in names:
            p = os.path.join(root, n)
            out[os.path.relpath(p, base)] = hashlib.sha1(open(p, "rb").read()).hexdigest()
    return out


def timeline_dir(base: str) -> str:
    t = os.path.join(base, ".hoodie", "timeline")
    return t if os.path.isdir(t) else os.path.join(base, ".hoodie")


def hold_back(base: str, ts: str, dest: Path, completed_only: bool = False) -> list[str]:
    """Move instant `ts`'s timeline files (or only its completed file) out of the table."""
    tdir = timeline_dir(base)
    dest.mkdir(parents=True, exist_ok=True)
    moved = []
    for n in sorted(os.listdir(tdir)):
        if not n.startswith(ts) or not os.path.isfile(os.path.join(tdir, n)):
            continue
        pending = n.endswith(".requested") or n.endswith(".inflight")
        if completed_only and pending:
            continue
        shutil.move(os.path.join(tdir, n), dest / n)
        moved.append(n)
    return moved


def put_back(base: str, src: Path) -> None:
    tdir = timeline_dir(base)
    for n in os.listdir(src):
        shutil.move(src / n, os.path.join(tdir, n))


def theirs_slices(base: str) -> dict:
    """hudi-rs's latest file slices: (partition, file id) -> (base instant, base file, log files)."""
    from tests.test_hudi_fixtures import hudi, theirs_norm

    return theirs_norm(hudi.HudiTable(base), None)


def ours_slices(slices) -> dict:
    """The same from our server's Thrift FileSlice list."""
    return {(s.partitionPath, s.fileId): (s.baseInstant, s.baseFile.name if s.baseFile else None,
                                          tuple(f.name for f in s.logFiles or [])) for s in slices}


def theirs_partitions(base: str) -> list[str]:
    return sorted({k[0] for k in theirs_slices(base)})


def _sorted_rows(batches) -> list[dict]:
    import pyarrow as pa

    batches = [b for b in batches if b is not None and b.num_rows]
    if not batches:
        return []
    rows = pa.Table.from_batches(batches).to_pylist()
    return sorted(rows, key=lambda r: (r["_hoodie_partition_path"] or "", r["_hoodie_record_key"]))


def theirs_rows(base: str) -> list[dict]:
    from tests.test_hudi_fixtures import hudi

    return _sorted_rows(hudi.HudiTable(base).read())


def rows_of_slices(base: str, slices) -> list[dict]:
    """The rows of the file slices our server lists, merged by hudi-rs's file group reader."""
    from tests.test_hudi_fixtures import hudi

    reader = hudi.HudiTable(base).create_file_group_reader_with_options()
    batches = []
    for s in slices:
        prefix = f"{s.partitionPath}/" if s.partitionPath else ""
        logs = [prefix + f.name for f in s.logFiles or []]
        base_file = prefix + s.baseFile.name if s.baseFile else ""
        batches.append(reader.read_file_slice_from_paths(base_file, logs))
    return _sorted_rows(batches)


def hive_synced_table(db: str, name: str, base: str, ttype: str = "COPY_ON_WRITE"):
    """The HMS table Hudi 1.x's hive sync (`hms` mode, sync as a data source) creates for the table at
    `base`: EXTERNAL, Hudi's input format, serde `path`, `spark.sql.sources.provider=hudi`."""
    from hudi_format.table_config import INPUT_FORMAT, OUTPUT_FORMAT, SERDE, read_properties
    from thrift_idl.hive_metastore.ttypes import FieldSchema, SerDeInfo, StorageDescriptor, Table

    props = read_properties(open(os.path.join(base, ".hoodie", "hoodie.properties")).read())
    keys = [FieldSchema(k, "string", None) for k in props.get("hoodie.table.partition.fields", "").split(",") if k]
    cols = [FieldSchema(c, "string", None) for c in ("_hoodie_commit_time", "_hoodie_record_key", "id")]
    sd = StorageDescriptor(cols=cols, location="file:" + base, inputFormat=INPUT_FORMAT[ttype],
                           outputFormat=OUTPUT_FORMAT, compressed=False, numBuckets=-1,
                           serdeInfo=SerDeInfo(serializationLib=SERDE, parameters={
                               "path": "file:" + base, "hoodie.query.as.ro.table": "false",
                               "serialization.format": "1"}),
                           bucketCols=[], sortCols=[], parameters={})
    return Table(tableName=name, dbName=db, owner="spark", sd=sd, partitionKeys=keys, tableType="EXTERNAL_TABLE",
                 parameters={"EXTERNAL": "TRUE", "spark.sql.sources.provider": "hudi", "last_commit_time_sync": "x"})


_LOOP: CliLoop | None = None


def run_cli(*args: str, input_text: str | None = None, timeout: float = 120,
            own_process: bool = False) -> subprocess.CompletedProcess:
    """`hudi-metastore <args>` with `input_text` (or nothing) on its standard input: run by the test
    worker's CLI loop (tests/harness/cli_loop.py: the same `main`, environment and input, without
    an interpreter start per command), or in a process of its own (`own_process`, or when the loop
    is busy or does not answer)."""
    global _LOOP
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(REPO_ROOT)] + ([env["PYTHONPATH"]] if env.get("PYTHONPATH") else []))
    if not own_process:
        if _LOOP is None:
            _LOOP = CliLoop(VENV_PYTHON, str(REPO_ROOT), env)
        if _LOOP.lock.acquire(blocking=False):
            try:
                return _LOOP.run(list(args), env, input_text or "", timeout)
            except OSError:
                pass
            finally:
                _LOOP.lock.release()
    return subprocess.run([VENV_PYTHON, "-m", "adapter.cli", *args], cwd=str(REPO_ROOT), env=env,
                          input=input_text if input_text is not None else "", capture_output=True, text=True,
                          timeout=timeout)
