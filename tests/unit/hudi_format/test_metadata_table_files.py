"""The write side of the metadata table's files (hudi_format/hfile_writer.py, log_file.encode_block,
hudi_format/metadata_table.py), read back through our readers (hudi_format/hfile.py, log_file.py).
Hudi's and hudi-rs's view of the same bytes: tests/unit/store/hudi/test_metadata_table.py."""

from __future__ import annotations

import json
import os
import struct
import zipfile
from pathlib import Path

import pytest

from hudi_format import hfile, log_file
from hudi_format import metadata_table as M
from hudi_format.hfile_writer import write_hfile
from hudi_format.table_config import read_properties


@pytest.mark.parametrize("compress", [True, False])
def test_hfile_cells_round_trip_over_many_blocks(compress):
    cells = [(f"key{i:05d}".encode(), bytes([i % 251]) * (i % 300)) for i in range(3000)]
    data = write_hfile(cells, {b"schema": b"{}"}, compress=compress, block_size=4096)
    assert hfile.cells(data) == cells
    trailer = hfile._trailer(data, "x")
    assert trailer[12] == (hfile.GZ if compress else hfile.NONE)
    assert trailer[7] == 3000 and trailer[5] > 10  # entries, data blocks in the root index
    info = hfile._file_info(data, int(trailer[1]), int(trailer[12]), "x")
    assert info[b"schema"] == b"{}" and info[b"hfile.LASTKEY"] == b"\x00\x08key02999"
    assert struct.unpack(">i", info[b"KEY_VALUE_VERSION"]) == (1,)
    # the root index: per data block its offset, on-disk size and first row (2-byte length + row),
    # as Hudi's reader parses it (a bare row made Hudi 1.2 fail on a one-character row)
    _magic, root, _ = hfile._block(data, int(trailer[2]), int(trailer[12]), "x")
    pos, firsts = 0, []
    while pos < len(root):
        offset, _size = struct.unpack_from(">qi", root, pos)
        klen = root[pos + 12]
        key = root[pos + 13:pos + 13 + klen]
        assert struct.unpack(">H", key[:2]) == (len(key) - 2,)
        firsts.append((offset, key[2:]))
        pos += 13 + klen
    assert len(firsts) == trailer[5] and firsts[0] == (0, b"key00000")
    assert all(hfile._block(data, off, int(trailer[12]), "x")[1][10:10 + len(row)] == row for off, row in firsts)


def test_hfile_rows_must_increase():
    with pytest.raises(ValueError):
        write_hfile([(b"b", b""), (b"a", b"")])
    with pytest.raises(ValueError):
        write_hfile([(b"a", b""), (b"a", b"")])
    with pytest.raises(ValueError):
        write_hfile([])


def test_log_block_round_trip():
    one = log_file.encode_block(log_file.HFILE_DATA, {log_file.INSTANT_TIME: "20240101000000000",
                                                      log_file.SCHEMA: "{}"}, b"content")
    two = log_file.encode_block(log_file.DELETE, {log_file.INSTANT_TIME: "20240101000000001"}, b"x" * 9)
    blocks = list(log_file.blocks(one + two))
    assert [(b.block_type, b.instant, b.content) for b in blocks] == [
        (log_file.HFILE_DATA, "20240101000000000", b"content"), (log_file.DELETE, "20240101000000001", b"x" * 9)]
    # the trailing long: the block's length without itself (what Hudi's reverse reader jumps by)
    assert struct.unpack(">q", one[-8:]) == (len(one) - 8,)


def test_files_records_round_trip_and_merge():
    first = M.files_records({"dt=1": {"a.parquet": 10, "b.parquet": 20}, "": {"c.parquet": 5}})
    assert first[0].key == M.ALL_PARTITIONS and set(first[0].entries) == {"dt=1", "."}
    base = M.read_base_file(M.base_file(first))
    assert {r.key: r.entries for r in base} == {r.key: r.entries for r in first}

    second = M.files_records({"dt=1": {"d.parquet": 30}, "dt=2": {"e.parquet": 1}}, {"dt=1": ["a.parquet"]})
    log = M.log_file_bytes("20240101000000001", second)
    [(instant, records)] = M.read_log_file(log)
    assert instant == "20240101000000001"
    assert {r.key: r.entries for r in records} == {r.key: r.entries for r in second}
    assert M.merge_files_records([base, records]) == {
        "": {"c.parquet": 5}, "dt=1": {"b.parquet": 20, "d.parquet": 30}, "dt=2": {"e.parquet": 1}}


def test_the_cell_row_is_the_key_and_the_record_leaves_it_empty():
    data = M.base_file(M.files_records({"p": {"f.parquet": 1}}))
    import io

    import fastavro

    for row, value in hfile.cells(data):
        rec = fastavro.schemaless_reader(io.BytesIO(value), fastavro.parse_schema(M.METADATA_RECORD_SCHEMA))
        assert rec["key"] == "" and row in (b"p", M.ALL_PARTITIONS.encode())


def test_file_names():
    assert M.base_file_name("00000000000000010") == "files-0000-0_0-0-0_00000000000000010.hfile"
    assert M.log_file_name("00000000000000010", 3) == ".files-0000-0_00000000000000010.log.3_0-0-0"
    assert M.parse_files_partition_name(M.log_file_name("00000000000000010", 3)) == ("log", "00000000000000010", 3)
    assert M.parse_files_partition_name(M.base_file_name("20240101000000001")) == ("base", "20240101000000001", None)
    assert M.parse_files_partition_name(".hoodie_partition_metadata") is None


def test_pipeline_passes_the_metadata_table_switch_to_the_table_config():
    from hudi_format.config_keys import METADATA_ENABLE
    from pipeline.config import WriteConfig

    cfg = WriteConfig.from_options("insert", {METADATA_ENABLE: "true", "hoodie.table.x": "1", "hoodie.other": "2"})
    assert cfg.table_properties == {METADATA_ENABLE: "true", "hoodie.table.x": "1"}


# --- against the metadata table Hudi 1.2 wrote (tests/fixtures/hudi-metadata-table/PROVENANCE.md) -----

HUDI_WRITTEN = Path(__file__).resolve().parents[2] / "fixtures" / "hudi-metadata-table" / "hudi12_cow_v6.zip"


@pytest.fixture(scope="module")
def hudi_mdt(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("hudi_mdt")
    with zipfile.ZipFile(HUDI_WRITTEN) as z:
        z.extractall(out)
    return out / "m6_metadata_table" / ".hoodie"


def _timeline(hoodie: Path) -> list[tuple[str, str]]:
    return sorted((n.split(".")[0], n.split(".", 1)[1]) for n in os.listdir(hoodie)
                  if n.split(".")[0].isdigit() and n.split(".", 1)[1] in ("commit", "clean", "deltacommit"))


def test_our_reader_merges_hudis_files_partition_into_the_table_listing(hudi_mdt):
    """Hudi's base file and log blocks, merged as its reader merges them, list what the data
    table's timeline says is there: the files the commits wrote minus those the cleans deleted."""
    from hudi_format.commit_metadata import parse_clean, parse_commit

    expected: dict[str, dict[str, int]] = {}
    for ts, action in _timeline(hudi_mdt):
        data = (hudi_mdt / f"{ts}.{action}").read_bytes()
        if action == "commit":
            for s in parse_commit(data).write_stats:
                expected.setdefault(s.partition_path, {})[os.path.basename(s.path)] = s.size
        else:
            for p, names in parse_clean(data).items():
                for n in names:
                    expected[p].pop(n)
    files = hudi_mdt / "metadata" / "files"
    names = {n: M.parse_files_partition_name(n) for n in os.listdir(files) if M.parse_files_partition_name(n)}
    [base] = [n for n, p in names.items() if p and p[0] == "base"]
    assert names[base] == ("base", M.INIT_INSTANT, None)
    batches = [M.read_base_file((files / base).read_bytes())]
    logs = sorted((p[2], n) for n, p in names.items() if p and p[0] == "log")
    assert [p[1] for _, n in logs for p in [names[n]]] == [M.INIT_INSTANT] * len(logs)
    data_instants = {ts for ts, _ in _timeline(hudi_mdt)}
    for _, n in logs:
        for instant, records in M.read_log_file((files / n).read_bytes(), n):
            assert instant in data_instants  # one block per data instant, at its time
            batches.append(records)
    assert M.merge_files_records(batches) == expected
    # and our listing_change of each instant gives the records Hudi wrote for it
    by_instant = {i: r for _, n in logs for i, r in M.read_log_file((files / n).read_bytes(), n)}
    for ts, action in _timeline(hudi_mdt):
        added, deleted = M.listing_change(action, (hudi_mdt / f"{ts}.{action}").read_bytes())
        ours = {r.key: r.entries for r in M.files_records(added, deleted)}
        theirs = {r.key: r.entries for r in by_instant[ts]}
        assert ours == theirs, ts


def test_what_we_write_is_laid_out_as_hudi_lays_it_out(hudi_mdt):
    files = hudi_mdt / "metadata" / "files"
    [base] = [n for n in os.listdir(files) if n.endswith(".hfile")]
    theirs = (files / base).read_bytes()
    ours = M.base_file(M.files_records({"a": {"f.parquet": 1}}))
    t_trailer, o_trailer = hfile._trailer(theirs, "theirs"), hfile._trailer(ours, "ours")
    # Hudi's base file also has a bloom filter meta block (field 6 counts it); readers of the
    # files partition do not use it
    assert set(o_trailer) == set(t_trailer)
    assert (o_trailer[11], o_trailer[12], o_trailer[8]) == (t_trailer[11], t_trailer[12], t_trailer[8])
    t_info = hfile._file_info(theirs, int(t_trailer[1]), int(t_trailer[12]), "theirs")
    o_info = hfile._file_info(ours, int(o_trailer[1]), int(o_trailer[12]), "ours")
    assert set(t_info) - set(o_info) == {b"bloomFilterTypeCode"}
    from fastavro.schema import to_parsing_canonical_form

    assert to_parsing_canonical_form(json.loads(o_info[b"schema"])) == \
        to_parsing_canonical_form(json.loads(t_info[b"schema"]))
    # a cell: the same key layout (row, empty family, latest timestamp, Put) and memstore byte
    t_cell = hfile._block(theirs, 0, int(t_trailer[12]), "theirs")[1]
    o_cell = hfile._block(ours, 0, int(o_trailer[12]), "ours")[1]
    t_klen, o_klen = struct.unpack_from(">i", t_cell)[0], struct.unpack_from(">i", o_cell)[0]
    assert t_cell[8 + t_klen - 10:8 + t_klen] == o_cell[8 + o_klen - 10:8 + o_klen]
    # log files: one HFile data block, with the instant and the schema in its header
    logs = sorted(n for n in os.listdir(files) if M.parse_files_partition_name(n) and ".log." in n)
    t_blocks = [b for n in logs for b in log_file.blocks((files / n).read_bytes())
                if b.block_type == log_file.HFILE_DATA]
    [o_block] = log_file.blocks(M.log_file_bytes("20240101000000000", M.files_records({"a": {"f.parquet": 1}})))
    assert {frozenset(b.header) for b in t_blocks} == {frozenset(o_block.header)}
    # the metadata table's hoodie.properties: what a reader reads, as Hudi writes it
    t_props = read_properties((hudi_mdt / "metadata" / ".hoodie" / "hoodie.properties").read_text())
    o_props = M.metadata_properties("m6")
    for key in ("hoodie.table.name", "hoodie.table.type", "hoodie.table.version", "hoodie.timeline.layout.version",
                "hoodie.table.base.file.format", "hoodie.table.recordkey.fields", "hoodie.populate.meta.fields",
                "hoodie.compaction.payload.class", "hoodie.archivelog.folder"):
        assert o_props[key] == t_props[key], key
    # Hudi's deltacommit names the file it wrote as ours does
    meta = json.loads((hudi_mdt / "metadata" / ".hoodie" / f"{M.INIT_INSTANT}.deltacommit").read_text())
    [stat] = meta["partitionToWriteStats"]["files"]
    assert (stat["fileId"], stat["path"]) == (M.FILE_ID, f"files/{base}")
    assert read_properties((hudi_mdt / "hoodie.properties").read_text())["hoodie.table.metadata.partitions"] == "files"



def test_merge_is_hudis_two_stage_merge():
    """Log blocks merge first, then the base file under them (HoodieMetadataPayload): a deletion of
    a name an earlier log block lists drops both, so a name the base file lists, that a log block
    adds again and a later one deletes, is still listed; one the base file alone lists is deleted."""
    def rec(**entries):
        return M.FilesRecord("p", {n: v for n, v in entries.items()})

    parts = M.FilesRecord(M.ALL_PARTITIONS, {"p": (0, False)})
    base = [parts, rec(a=(10, False), b=(20, False))]
    logs = [[rec(a=(10, False), c=(5, False))], [rec(a=(0, True), b=(0, True), c=(7, False))],
            [rec(d=(1, False))], [rec(d=(0, True)), rec(d=(0, True))]]
    assert M.merge_files_records([base, *logs]) == {"p": {"a": 10, "c": 7}}
    assert M.merge_files_records([[], [parts], *logs]) == {"p": {"c": 7}}  # no base file
    # in order (the mirror's compaction): the listing as the instants changed it
    assert M.merge_files_records([base, *logs], as_hudi=False) == {"p": {"c": 7}}
