"""The metadata table's `column_stats` partition as hudi_format/metadata_column_stats.py writes it,
against what Hudi 1.2 wrote for version-6 tables (tests/fixtures/hudi-metadata-table/PROVENANCE.md):
every record's bytes, its key and file group, the delete blocks of cleans, the empty blocks of the
partition's initialization and the index definitions."""

from __future__ import annotations

import datetime as dt
import os
import zipfile
from decimal import Decimal
from pathlib import Path

import pytest

from hudi_format import log_file
from hudi_format import metadata_column_stats as C

FIXTURE = Path(__file__).resolve().parents[2] / "fixtures" / "hudi-metadata-table" / "hudi12_column_stats_v6.zip"
TYPES = {"id": "string", "i": "int", "l": "bigint", "b": "boolean", "f": "float", "d": "double", "s": "string",
         "dt": "date", "dec": "decimal(10,2)", "t": "timestamp", "ts": "bigint", "p": "string",
         "_hoodie_commit_time": "string", "_hoodie_partition_path": "string", "_hoodie_record_key": "string"}
PARTITIONS = {"cs6": ["a", "b", "c"], "np6": [""]}


@pytest.fixture(scope="module")
def hudi_written(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("cs")
    with zipfile.ZipFile(FIXTURE) as z:
        z.extractall(out)
    return out


def _files(root: Path, table: str):
    d = root / table / ".hoodie" / "metadata" / C.COLUMN_STATS
    for name in sorted(os.listdir(d)):
        parsed = C.parse_name(name)
        if parsed:
            yield name, parsed, (d / name).read_bytes()


def test_xxhash64_reference_vectors():
    assert C.xxhash64(b"", 0) == 0xEF46DB3751D8E999
    assert C.xxhash64(b"a", 0) == 0xD24EC4F1A98C6E5B
    assert C.xxhash64(b"Nobody inspects the spammish repetition", 0) == 0xFBCEA83C8A378BF1  # 32-byte stripes
    # Hudi's seed: column `i`, partitions `a` and unpartitioned (`.`) as its keys begin
    assert C.record_key("i", "a", "x")[:24] == "G7uSFvrozM8=BFHqp2KLzrM="
    assert C.record_key("i", "", "x")[12:24] == "FXThHwelITM="


@pytest.mark.parametrize("table", sorted(PARTITIONS))
def test_records_keys_and_groups_are_hudis(hudi_written, table):
    records = 0
    kinds = set()
    for name, (group, kind, base, _version), data in _files(hudi_written, table):
        assert kind == "log" and base == C.INIT_INSTANT, name
        for instant, cells, deleted in C.read_cells(data, name):
            assert all(C.file_group_of(k) == group for k in deleted), name
            for row, value in cells:
                s = C.decode_stats(value)
                key = row.decode()
                [partition] = [p for p in PARTITIONS[table] if C.record_key(s["columnName"], p, s["fileName"]) == key]
                assert C.file_group_of(key) == group
                wrapper = C.wrapper_of(TYPES[s["columnName"]])
                assert s["minValue"][0] == s["maxValue"][0] == wrapper, s
                kinds.add(wrapper)
                rec = C.ColumnStatsRecord(partition, s["fileName"], s["columnName"], wrapper,  # type: ignore[arg-type]
                                          s["minValue"][1], s["maxValue"][1], s["nullCount"], s["valueCount"],
                                          s["totalSize"], s["totalUncompressedSize"])
                assert C.encode_record(rec) == value, (name, instant, s["columnName"])
                records += 1
    assert records > 20
    assert kinds == {"IntWrapper", "LongWrapper", "BooleanWrapper", "FloatWrapper", "DoubleWrapper", "StringWrapper",
                     "DateWrapper", "DecimalWrapper"}


def test_delete_blocks_and_the_initial_blocks_are_hudis(hudi_written):
    deletes = 0
    for name, (_group, _kind, _base, version), data in _files(hudi_written, "cs6"):
        blocks = list(log_file.blocks(data, name))
        if version == 1:  # the partition's initialization: an empty delete block without schema
            assert data == C.delete_block(C.INIT_INSTANT, [], with_schema=False)
            continue
        for block in blocks:
            if block.block_type == log_file.DELETE:
                keys = log_file.deleted_keys(block, name)
                ours = next(log_file.blocks(C.delete_block(block.instant or "", keys)))
                assert ours.content == block.content and keys == sorted(keys)
                deletes += 1
    assert deletes >= 2


def test_index_definitions_are_hudis(hudi_written):
    for table in PARTITIONS:
        raw = (hudi_written / table / ".hoodie" / ".index_defs" / "index.json").read_bytes()
        import json

        fields = json.loads(raw)["indexDefinitions"]["column_stats"]["sourceFields"]
        assert C.index_definitions(fields) == raw


def test_values_round_trip_through_the_records():
    recs = [C.ColumnStatsRecord("x=1", "f.parquet", "c", "DecimalWrapper", Decimal("1.5"), Decimal("-2"), 0, 3),
            C.ColumnStatsRecord("", "f.parquet", "d", "DateWrapper", dt.date(1970, 1, 3), 10, 1, 3),
            C.ColumnStatsRecord("", "f.parquet", "e", "StringWrapper", None, None, 3, 3)]
    got = [C.decode_stats(C.encode_record(r)) for r in recs]
    assert got[0]["minValue"] == ("DecimalWrapper", Decimal("1.500000000000000"))
    assert got[1]["minValue"] == ("DateWrapper", 2) and got[1]["maxValue"] == ("DateWrapper", 10)
    assert got[2]["minValue"] is None and got[2]["nullCount"] == 3
    assert C.wrapper_of("decimal(38,18)") is None and C.wrapper_of("binary") is None
    assert C.wrapper_of("decimal(10,2)") == "DecimalWrapper" and C.wrapper_of("varchar(5)") == "StringWrapper"
