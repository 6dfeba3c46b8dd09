"""The metadata table's `partition_stats` partition as hudi_format/metadata_partition_stats.py writes
it, against what Hudi 1.2 wrote for tables of version 8 and 9 (tests/fixtures/hudi-metadata-table/
PROVENANCE.md, hudi12_partition_stats_v8_v9.zip): the file names, every record's bytes re-encoded
from its values (index version 1 for 8, 2 with value types for 9), its key and file group, the empty
block of the partition's initialization, and which partitions each commit's log file holds; for a
merge-on-read table (hudi12_partition_stats_mor_v8_v9.zip) each record against Hudi's own
column_stats records of the partition's latest base files and log files."""

from __future__ import annotations

import os
import zipfile
from pathlib import Path

import pytest

from hudi_format import hfile, log_file
from hudi_format import metadata_column_stats as C
from hudi_format import metadata_partition_stats as P
from hudi_format.config_keys import METADATA_PARTITIONS
from hudi_format.table_config import read_properties
from tests.unit.hudi_format.test_metadata_column_stats_files import TYPES

FIXTURE = Path(__file__).resolve().parents[2] / "fixtures" / "hudi-metadata-table" / "hudi12_partition_stats_v8_v9.zip"
# per commit (insert k0..k9, upsert k0..k2, delete k1 and k4, insert k20 k21 into c; a clean between
# them writes nothing): the partitions its log file holds
TOUCHED = [["a", "b"], ["a", "b"], ["a", "b"], ["c"]]


@pytest.fixture(scope="module")
def hudi_written(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("ps")
    with zipfile.ZipFile(FIXTURE) as z:
        z.extractall(out)
    return out


@pytest.mark.parametrize("version", [8, 9])
def test_partition_stats_are_hudis(hudi_written, version):
    table = hudi_written / f"ps{version}"
    props = read_properties((table / ".hoodie" / "hoodie.properties").read_text())
    assert props[METADATA_PARTITIONS] == "column_stats,files,partition_stats"
    d = table / ".hoodie" / "metadata" / P.PARTITION_STATS
    names = sorted(n for n in os.listdir(d) if not n.startswith(".hoodie_partition"))
    parsed = {n: P.parse_name(n) for n in names}
    assert all(parsed.values()), parsed
    init, *commits = sorted(names, key=lambda n: parsed[n][2])  # type: ignore[index]
    assert parsed[init] == (0, "log", "00000000000000002", 1)  # no record index: the instant after column_stats'
    assert (d / init).read_bytes() == C.delete_block("00000000000000002", [], with_schema=False)
    iv = C.index_version(version)
    assert len(commits) == len(TOUCHED)
    for name, touched in zip(commits, TOUCHED):
        group, kind, base, log_version = parsed[name]  # type: ignore[misc]
        assert (group, kind, log_version) == (0, "log", 1), name
        [block] = log_file.blocks((d / name).read_bytes(), name)
        assert block.block_type == log_file.HFILE_DATA and block.instant == base
        cells = hfile.cells(block.content, name)
        partitions = set()
        for row, value in cells:
            s = C.decode_stats(value)
            ct = C.column_type(TYPES[s["columnName"]], iv)
            assert ct is not None and s["valueType"] == (None if iv == 1 else (ct.value_type, ct.type_info)), s
            assert s["isTightBound"] and not s["isDeleted"], s
            rec = P.PartitionStatsRecord(s["fileName"], s["columnName"], ct.wrapper,
                                         None if s["minValue"] is None else s["minValue"][1],
                                         None if s["maxValue"] is None else s["maxValue"][1],
                                         s["nullCount"], s["valueCount"], s["totalSize"], s["totalUncompressedSize"],
                                         ct.value_type, ct.type_info)
            assert row.decode() == rec.key == P.record_key(s["columnName"], s["fileName"])
            assert P.file_group_of(rec.key) == group
            assert P.encode_record(rec) == value, (name, s["columnName"])
            partitions.add(s["fileName"])
        assert sorted(partitions) == touched, name
        assert len(cells) == len(touched) * len(TYPES)  # every column of column_stats', meta columns too
        assert [c for c, _ in cells] == [c for c, _ in P.cells(
            P.PartitionStatsRecord(p, col, "StringWrapper", None, None, 0, 0) for p in touched for col in TYPES)]


MOR_FIXTURE = FIXTURE.with_name("hudi12_partition_stats_mor_v8_v9.zip")
MOR_TYPES = {"id": "string", "i": "int", "s": "string", "ts": "bigint", "p": "string"}
# per write of write_partition_stats_mor.py (insert; upsert into a log file of a; delete (a log file
# of a delete block in a); upsert into a log file of b; its compaction; upsert into a log file of a):
# the partitions its log file holds
MOR_TOUCHED = [["a", "b"], ["a"], ["a"], ["b"], ["a", "b"], ["a"]]


def _slice_files(files: dict[str, dict[str, dict]], partition: str) -> list[str]:
    """The files of a partition's latest slices (Hudi 1.x names: a log file carries its own
    instant, later than its slice's base file's)."""
    groups: dict[str, tuple[str, list[str]]] = {}
    for name in files.get(partition, {}):
        if name.endswith(".parquet"):
            fid, instant = name.split("_")[0], name.rsplit("_", 1)[1].split(".")[0]
            if instant > groups.get(fid, ("", []))[0]:
                groups[fid] = (instant, [name])
    out = []
    for fid, (base_instant, names) in groups.items():
        out += names + [n for n in files[partition] if n.startswith(f".{fid}_")
                        and n.split("_")[1].split(".")[0] > base_instant]
    return out


@pytest.mark.parametrize("version", [8, 9])
def test_merge_on_read_partition_stats_cover_log_files(tmp_path, version):
    """Hudi 1.2 on a merge-on-read table: a partition's record covers its latest slices' base files
    and log files, as its own column_stats records of those files give them: min and max their
    union, value and null counts their sums (a log file of deletes alone counts 0 values),
    `totalSize`/`totalUncompressedSize` the base files' sums (a log file's are 0), `isTightBound`
    true; every deltacommit writes the records of the partitions it wrote (also one of deletes
    alone: unchanged records), the compaction those of the base files it wrote, the clean none.
    Our encoding of each record's values is byte-equal."""
    with zipfile.ZipFile(MOR_FIXTURE) as z:
        z.extractall(tmp_path)
    table = tmp_path / f"mor{version}"
    meta = table / ".hoodie" / "metadata"
    assert read_properties((table / ".hoodie" / "hoodie.properties").read_text())[METADATA_PARTITIONS] == \
        "column_stats,files,partition_stats"
    # column_stats' blocks by instant: partition -> file -> column -> its record
    blocks: dict[str, list] = {}
    for name in os.listdir(meta / C.COLUMN_STATS):
        if C.parse_name(name):
            for instant, cells, deleted in C.read_cells((meta / C.COLUMN_STATS / name).read_bytes(), name):
                blocks.setdefault(instant or "", []).append((cells, deleted))
    d = meta / P.PARTITION_STATS
    commits = sorted((p[2], n) for n in os.listdir(d) if (p := P.parse_name(n)) and p[2] != "00000000000000002")
    assert len(commits) == len(MOR_TOUCHED)
    iv = C.index_version(version)
    files: dict[str, dict[str, dict]] = {}
    by_key: dict[str, tuple[str, str]] = {}
    applied: set[str] = set()
    for (instant, name), touched in zip(commits, MOR_TOUCHED):
        for ts in sorted(t for t in blocks if t <= instant and t not in applied):
            applied.add(ts)
            for cells, deleted in blocks[ts]:
                for k, v in cells:
                    s = C.decode_stats(v)
                    p = next(p for p in "ab" if k.decode().startswith(C._id64(s["columnName"]) + C._id64(p)))
                    files.setdefault(p, {}).setdefault(s["fileName"], {})[s["columnName"]] = s
                    by_key[k.decode()] = (p, s["fileName"])
                for k in deleted:
                    p, f = by_key[k]
                    files[p].pop(f, None)
        [(_i, cells, _d)] = P.read_cells((d / name).read_bytes(), name)
        assert sorted({C.decode_stats(v)["fileName"] for _k, v in cells}) == touched, name
        for k, v in cells:
            s = C.decode_stats(v)
            p, col = s["fileName"], s["columnName"]
            parts = [files[p][f][col] for f in _slice_files(files, p)]
            assert any(f.startswith(".") for f in _slice_files(files, p)) == (instant not in {commits[0][0],
                                                                                              commits[4][0]})
            bounded = [r for r in parts if r["minValue"] is not None]
            assert (s["minValue"], s["maxValue"]) == (min(r["minValue"] for r in bounded),
                                                      max(r["maxValue"] for r in bounded)), (name, p, col)
            assert (s["valueCount"], s["nullCount"]) == (sum(r["valueCount"] for r in parts),
                                                         sum(r["nullCount"] for r in parts)), (name, p, col)
            assert (s["totalSize"], s["totalUncompressedSize"]) == (
                sum(r["totalSize"] for r in parts), sum(r["totalUncompressedSize"] for r in parts)), (name, p, col)
            assert s["isTightBound"] and not s["isDeleted"]
            ct = C.column_type(MOR_TYPES.get(col, "string"), iv)
            assert ct is not None
            rec = P.PartitionStatsRecord(p, col, ct.wrapper, s["minValue"][1], s["maxValue"][1], s["nullCount"],
                                         s["valueCount"], s["totalSize"], s["totalUncompressedSize"],
                                         ct.value_type, ct.type_info)
            assert k.decode() == rec.key and P.encode_record(rec) == v, (name, p, col)
    # the upsert into a's log file widened a's bounds past its base file's: i -50..100, then 500
    last = {(s["fileName"], s["columnName"]): s for _k, v in P.read_cells((d / commits[-1][1]).read_bytes(),
                                                                         commits[-1][1])[0][1]
            for s in [C.decode_stats(v)]}
    assert (last[("a", "i")]["minValue"], last[("a", "i")]["maxValue"]) == (("IntWrapper", -50), ("IntWrapper", 500))
