"""The metadata table's `record_index` partition as hudi_format/metadata_record_index.py writes it,
against what Hudi 1.2 wrote for tables of version 6, 8 and 9 with the record index
(tests/fixtures/hudi-metadata-table/PROVENANCE.md, hudi12_record_index.zip: two file groups): the
file names, every record's bytes re-encoded from its values, each key in the group its hash names,
the delete block of a delete, the empty blocks of the partition's initialization, and the keys the
partition holds in the end."""

from __future__ import annotations

import json
import os
import zipfile
from pathlib import Path

import pytest

from hudi_format import log_file
from hudi_format import metadata_column_stats as C
from hudi_format import metadata_record_index as R
from hudi_format.instant import format_instant

FIXTURE = Path(__file__).resolve().parents[2] / "fixtures" / "hudi-metadata-table" / "hudi12_record_index.zip"
LIVE = {f"k{i}": ("a" if i % 2 else "b") for i in (0, 2, 3, 5, 6, 7, 8, 9)} | {"k20": "c", "k21": "c"}


@pytest.fixture(scope="module")
def hudi_written(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("ri")
    with zipfile.ZipFile(FIXTURE) as z:
        z.extractall(out)
    return out


@pytest.mark.parametrize("version", [6, 8, 9])
def test_record_index_is_hudis(hudi_written, version):
    d = hudi_written / f"ri{version}" / ".hoodie" / "metadata" / R.RECORD_INDEX
    names = sorted(n for n in os.listdir(d) if not n.startswith(".hoodie_partition") and not n.endswith(".crc"))
    parsed = {n: R.parse_name(n) for n in names}
    assert all(parsed.values()), parsed
    init = R.init_instant(version)
    assert {p[0] for p in parsed.values()} == {0, 1}  # two file groups (the writer's settings)
    view: dict[str, tuple[str, str, int]] = {}
    records = deletes = inits = 0
    for name in names:
        group, kind, base, log_version = parsed[name]  # type: ignore[misc]
        data = (d / name).read_bytes()
        assert kind == "log", name  # no compaction in four commits
        assert (base == init) if version < 8 else (log_version == 1), name
        if (version < 8 and log_version == 1) or (version >= 8 and base == init):
            assert data == R.delete_block(init, [], with_schema=False), name  # the initialization
            inits += 1
            continue
        for block in log_file.blocks(data, name):
            if block.block_type == log_file.DELETE:
                keys = log_file.deleted_keys(block, name)
                assert all(R.file_group_of(k, 2) == group for k in keys) and keys == sorted(keys)
                [ours] = log_file.blocks(R.delete_block(block.instant or "", keys))
                assert ours.content == block.content and ours.instant == block.instant
                for k in keys:
                    view.pop(k, None)
                deletes += 1
                continue
            assert block.block_type == log_file.HFILE_DATA
            for row, value in R.read_cells(data, name)[0][1]:
                key = row.decode()
                assert R.file_group_of(key, 2) == group, (key, group)
                partition, fid, millis = R.decode_location(value)
                entry = R.RecordIndexEntry(key, partition, fid, format_instant(millis))
                assert R.instant_millis(entry.instant) == millis
                assert R.encode_record(entry) == value, (name, key)
                view[key] = (partition, fid, millis)
                records += 1
    assert inits == 2 and records == 12 and deletes >= 1
    assert {k: p for k, (p, _f, _m) in view.items()} == LIVE
    # the data table lists the partition and defines the index (global, V1) before column_stats
    hoodie = hudi_written / f"ri{version}" / ".hoodie"
    assert "hoodie.table.metadata.partitions=column_stats,files," in (hoodie / "hoodie.properties").read_text()
    index = (hoodie / ".index_defs" / "index.json").read_bytes()
    fields = json.loads(index)["indexDefinitions"]["column_stats"]["sourceFields"]
    assert C.index_definitions(fields, C.index_version(version), record_index=True) == index
