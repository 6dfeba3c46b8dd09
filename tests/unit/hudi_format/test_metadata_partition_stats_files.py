"""The metadata table's `partition_stats` partition as hudi_format/metadata_partition_stats.py writes
it, against what Hudi 1.2 wrote for tables of version 8 and 9 (tests/fixtures/hudi-metadata-table/
PROVENANCE.md, hudi12_partition_stats_v8_v9.zip): the file names, every record's bytes re-encoded
from its values (index version 1 for 8, 2 with value types for 9), its key and file group, the empty
block of the partition's initialization, and which partitions each commit's log file holds."""

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
