"""The write side of the metadata table's files (hudi_format/hfile_writer.py, log_file.encode_block,
hudi_format/metadata_table.py), read back through our readers (hudi_format/hfile.py, log_file.py).
Hudi's and hudi-rs's view of the same bytes: tests/unit/store/hudi/test_metadata_table.py."""

from __future__ import annotations

import struct

import pytest

from hudi_format import hfile, log_file
from hudi_format import metadata_table as M
from hudi_format.hfile_writer import write_hfile


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
