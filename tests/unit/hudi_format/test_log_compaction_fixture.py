"""Hudi 1.2's own log compaction (tests/fixtures/hudi-tables/mor_v{6,9}_log_compaction.zip, written by
Hudi's write client: write_log_compaction.py) against ours: its timeline files and plan, the header
of the blocks it wrote (COMPACTED_BLOCK_TIMES, ordinal 4, naming the three deltacommits merged), its
completed deltacommit (operationType LOG_COMPACT); our readers (the merge-on-read reader, the key
reader) read its slice as Hudi does, and our executor's log file for the same logs holds the same
records, deletes and header (the blocks in the other order: our delete block first)."""

from __future__ import annotations

import glob
import json
import os

import pyarrow as pa
import pytest

from hudi_format.commit_metadata import _avro_record, parse_compaction_plan
from hudi_format.file_slice import FileInfo, FileSlice, parse_file_name
from hudi_format.log_file import (
    AVRO_DATA,
    COMPACTED_BLOCK_TIMES,
    DELETE,
    INSTANT_TIME,
    SCHEMA,
    blocks,
    data_block_records,
    deleted_keys,
)
from hudi_format.record_keys import KeyReader, slice_keys
from pipeline.base_file import with_meta
from pipeline.log_compaction import compacted_log
from pipeline.merge_on_read import read_slice
from tests.harness.hudi_tables import table_copy

DATA = pa.schema([("id", pa.int64()), ("name", pa.string()), ("ts", pa.int64()), ("dt", pa.string())])


def _timeline(base: str, version: int) -> str:
    return os.path.join(base, ".hoodie", "timeline") if version >= 8 else os.path.join(base, ".hoodie")


@pytest.mark.parametrize("version", [6, 9])
def test_hudis_log_compaction_against_ours(tmp_path, version):
    base = table_copy(f"mor_v{version}_log_compaction", tmp_path)
    tl = _timeline(base, version)
    [requested] = glob.glob(os.path.join(tl, "*.logcompaction.requested"))
    lc = os.path.basename(requested).split(".")[0]
    names = sorted(n for n in os.listdir(tl) if n.startswith(lc))
    done = f"{lc}.deltacommit" if version == 6 else next(n for n in names if n.endswith(".deltacommit"))
    assert names == sorted([f"{lc}.logcompaction.requested", f"{lc}.logcompaction.inflight", done])
    assert version == 6 or done.startswith(f"{lc}_")
    deltas = sorted(n.split(".")[0].split("_")[0] for n in os.listdir(tl)
                    if n.endswith(".deltacommit") and not n.startswith(lc))
    # its plan: a HoodieCompactionPlan our parser reads, naming the slice's three log files
    [op] = parse_compaction_plan(open(requested, "rb").read())
    assert len(op.log_files) == 3 and op.base_file is not None
    plan = _avro_record(open(requested, "rb").read())
    assert plan["preserveHoodieMetadata"] is True
    assert plan["strategy"]["compactorClassName"].endswith(".LogCompactionExecutionHelper")
    # completed as a deltacommit of operationType LOG_COMPACT
    raw = open(os.path.join(tl, done), "rb").read()
    meta = json.loads(raw) if version == 6 else _avro_record(raw)
    assert meta["operationType"] == "LOG_COMPACT" and meta["compacted"] is True
    [stat] = meta["partitionToWriteStats"]["p"]
    assert (stat["numWrites"], stat["numDeletes"]) == (2, 1)
    # its new log file: a data block and a delete block of the log compaction's instant, naming the
    # deltacommits of the merged blocks (not the base file's)
    part = os.path.join(base, "p")
    logs = sorted((n for n in os.listdir(part) if ".log." in n and not n.endswith(".crc")),
                  key=lambda n: (parse_file_name(n)[1], parse_file_name(n)[3]))
    theirs = [b for n in logs for b in blocks(open(os.path.join(part, n), "rb").read(), n) if b.instant == lc]
    assert [b.block_type for b in theirs] == [AVRO_DATA, DELETE]
    assert all(set(b.header) == {INSTANT_TIME, SCHEMA, COMPACTED_BLOCK_TIMES} for b in theirs)
    assert [b.compacted_times for b in theirs] == [deltas[1:]] * 2
    # our readers read the slice as Hudi's reader does (keys 1 and 3, 'c', ts 3)
    schema = with_meta(DATA)
    [parquet] = [n for n in os.listdir(part) if n.endswith(".parquet")]
    paths = [os.path.join(part, n) for n in logs]
    got = read_slice(os.path.join(part, parquet), paths, schema, "ts")
    assert sorted((r["id"], r["name"], r["ts"]) for r in got.to_pylist()) == [(1, "c", 3), (3, "c", 3)]

    class Cfg:  # the fixture's table writes its meta fields
        properties: dict = {}
        record_key_fields = ["id"]
        key_generator = None

    # (one slice of the base file and every log file: version 9 names a log file by the instant that
    # wrote it, Hudi's file-system view puts it in the slice by completion time)
    fid = parse_file_name(parquet)[0]
    infos = [FileInfo("p", fid, n, os.path.getsize(os.path.join(part, n)), op.base_instant, True, k + 1, "")
             for k, n in enumerate(logs)]

    class Storage:
        fs = __import__("fsspec").filesystem("file")

        def path(self, partition, name):
            return os.path.join(base, partition, name)

    s = FileSlice("p", fid, op.base_instant, FileInfo("p", fid, parquet, 1, op.base_instant, False, None, deltas[0]),
                  infos)
    keys = slice_keys(Storage(), s, set(deltas) | {lc}, KeyReader(Cfg()))  # type: ignore[arg-type]
    assert sorted(keys) == ["1", "3"]
    # ours for the same three log files: the same records (meta fields kept), deletes and header
    replaced = [p for p in paths if not os.path.basename(p).startswith(f".{op.file_id}_{lc}")
                and lc not in {b.instant for b in blocks(open(p, "rb").read())}]
    assert len(replaced) == 3
    data, _merged = compacted_log(lc, replaced, "p", schema, theirs[0].header[SCHEMA], "ts")
    ours = list(blocks(data))
    assert [b.block_type for b in ours] == [DELETE, AVRO_DATA]
    assert [b.compacted_times for b in ours] == [deltas[1:]] * 2
    # (our delete block carries no schema, as the pipeline's delete blocks; Hudi's has the writer's)
    assert [set(b.header) for b in ours] == [{INSTANT_TIME, COMPACTED_BLOCK_TIMES},
                                             {INSTANT_TIME, SCHEMA, COMPACTED_BLOCK_TIMES}]

    stamped = ("_hoodie_commit_time", "_hoodie_commit_seqno", "_hoodie_file_name")

    def records(b, fields=None):
        def keep(k):
            return k in fields or k == "_hoodie_record_key" if fields else k not in stamped

        return sorted(({k: v for k, v in r.items() if keep(k)} for r in data_block_records(b)),
                      key=lambda r: r["_hoodie_record_key"])

    assert records(ours[1]) == records(theirs[0])
    # Hudi 1.2 stamps the merged records with the log compaction's instant (despite its plan's
    # preserveHoodieMetadata); ours keep the instants that wrote them (as a compaction does), so
    # incremental reads do not see compacted records as new
    assert {r["_hoodie_commit_time"] for r in records(theirs[0], stamped)} == {lc}
    assert [r["_hoodie_commit_time"] for r in records(ours[1], stamped)] == [deltas[3], deltas[3]]
    assert deleted_keys(ours[0]) == deleted_keys(theirs[1]) == ["2"]


@pytest.mark.parametrize("version", [6, 9])
def test_write_stats_tell_the_blocks_hudi_wrote(tmp_path, version):
    """The server counts a log file's blocks from the write stats of the commit that wrote it
    (commit_metadata.log_blocks: a data block when numWrites > 0, a delete block when numDeletes >
    0): for every log file of Hudi 1.2's own writes (its upserts, deletes and its log compaction's
    data and delete block) that count equals the data and delete blocks the file holds of that
    commit's instant."""
    from hudi_format.commit_metadata import log_blocks

    base = table_copy(f"mor_v{version}_log_compaction", tmp_path)
    tl = _timeline(base, version)
    said: dict = {}
    for n in os.listdir(tl):
        if n.endswith(".deltacommit"):
            ts = n.split(".")[0].split("_")[0]
            said.update({(p, name, ts): k for (p, name), k in log_blocks(open(os.path.join(tl, n), "rb").read()).items()
                         if ".log." in name})
    found: dict = {}
    part = os.path.join(base, "p")
    for name in os.listdir(part):
        if ".log." in name and not name.endswith(".crc"):
            for b in blocks(open(os.path.join(part, name), "rb").read(), name):
                if b.block_type in (AVRO_DATA, DELETE):
                    found[("p", name, b.instant)] = found.get(("p", name, b.instant), 0) + 1
    assert said == found and len(said) >= 4 and 2 in said.values()
