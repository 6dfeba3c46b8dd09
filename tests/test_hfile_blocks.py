"""HFile data blocks of merge-on-read log files (hudi_format/hfile.py, hudi_format/log_file.py),
read from a table Apache Hudi 1.2.0 wrote with hoodie.logfile.data.block.format=hfile
(tests/fixtures/hudi-tables/mor_v8_hfile_blocks.zip); hudi-rs is the oracle for what its file
slices hold (tests/test_record_index_adoption.py adopts the table and compares)."""

from __future__ import annotations

import struct
import uuid
import zlib
from pathlib import Path

import hudi
import pyarrow as pa
import pytest

from adapter.commands.import_hudi import import_hudi_table
from client import HudiMetastoreClient
from hudi_format import hfile, log_file
from hudi_format.errors import HudiFormatError
from tests.harness.hudi_tables import table_copy
from thrift_idl.hive_metastore.ttypes import Database

FIXTURE = "mor_v8_hfile_blocks"


def _hfile_blocks(base: str) -> list[tuple[Path, log_file.LogBlock]]:
    out = []
    for p in sorted(Path(base).rglob(".*.log.*")):
        out += [(p, b) for b in log_file.blocks(p.read_bytes(), p.name) if b.block_type == log_file.HFILE_DATA]
    return out


def test_hudi_written_hfile_blocks_read_as_hudi_rs_reads_them(tmp_path):
    """Every HFile block of the fixture decodes; each cell's row is its record's key; the records
    the blocks hold are the ones hudi-rs merges into the slices (the blocks' latest versions)."""
    base = table_copy(FIXTURE, tmp_path)
    blocks = _hfile_blocks(base)
    assert len(blocks) >= 2
    written: dict[str, str] = {}
    for path, block in blocks:
        raw = hfile.cells(block.content, path.name)
        assert raw and all(row for row, _ in raw)
        t = log_file.data_block_table(block, [log_file.KEY, log_file.COMMIT_TIME, "v", "p"], path.name)
        assert t.num_rows == len(raw)
        assert t.column(log_file.KEY).to_pylist() == [row.decode() for row, _ in raw]
        assert set(t.column(log_file.COMMIT_TIME).to_pylist()) == {block.instant}
        for key, ts in zip(t.column(0).to_pylist(), t.column(1).to_pylist()):
            written[key] = max(ts, written.get(key, ""))
    assert {"k0", "k1", "k2", "k5"} <= set(written)  # the upserts and the rewrite of k5
    table = hudi.HudiTable(base)
    reader = table.create_file_group_reader_with_options()
    rs: dict[str, str] = {}
    for s in table.get_file_slices():
        batch = reader.read_file_slice(s)
        t = pa.Table.from_batches(batch if isinstance(batch, list) else [batch])
        rs.update(zip(t.column("_hoodie_record_key").to_pylist(), t.column("_hoodie_commit_time").to_pylist()))
    for key in ("k0", "k2", "k5"):  # live, last written by a log block
        assert rs[key] == written[key]
    assert "k1" not in rs  # upserted into a block, then deleted


def _first_block(tmp_path) -> tuple[Path, log_file.LogBlock]:
    return _hfile_blocks(table_copy(FIXTURE, tmp_path))[0]


def _trailer_fields(content: bytes) -> tuple[int, dict]:
    n, pos = hfile._varint(content, len(content) - hfile.TRAILER + 8)
    return pos, dict(hfile._pb_fields(content[pos:pos + n]))


def test_uncompressed_hfile_reads_the_same_cells(tmp_path):
    """The same file rewritten without compression (codec none, every block inflated) gives the
    same cells: the reader follows the trailer's codec."""
    _, block = _first_block(tmp_path)
    c = block.content
    want = hfile.cells(c)
    _, trailer = _trailer_fields(c)
    out, pos, moved = bytearray(), 0, {}
    while pos < len(c) - hfile.TRAILER:
        magic = c[pos:pos + 8]
        on_disk, size, prev, ck, per, data_end = struct.unpack_from(">iiqbii", c, pos + 8)
        payload = zlib.decompress(c[pos + 33:pos + data_end], 47)
        moved[pos] = len(out)
        out += magic + struct.pack(">iiqbii", len(payload), len(payload), -1, 0, per, 33 + len(payload)) + payload
        pos += 33 + on_disk
    fields = {**trailer, 1: moved[trailer[1]], 2: moved[trailer[2]], 12: hfile.NONE}
    msg = b"".join(_pb(k, v) for k, v in sorted(fields.items()))
    tail = hfile.TRAILER_MAGIC + _uvarint(len(msg)) + msg
    out += tail + b"\x00" * (hfile.TRAILER - len(tail) - 4) + c[-4:]
    assert hfile.cells(bytes(out)) == want


def _uvarint(n: int) -> bytes:
    out = bytearray()
    while True:
        b, n = n & 0x7F, n >> 7
        out.append(b | (0x80 if n else 0))
        if not n:
            return bytes(out)


def _pb(num: int, value) -> bytes:
    if isinstance(value, bytes):
        return _uvarint(num << 3 | 2) + _uvarint(len(value)) + value
    return _uvarint(num << 3) + _uvarint(value)


@pytest.mark.parametrize("damage, why", [
    (lambda c: c[:-10], "no trailer"),
    (lambda c: c[:-4] + b"\x00\x00\x00\x02", "major version 2"),
    (lambda c: b"XX" + c[2:], "unknown HFile block"),
    (lambda c: c[:40] + bytes(len(c) - 40 - hfile.TRAILER) + c[-hfile.TRAILER:], "not a readable HFile|impossible"),
])
def test_damaged_hfile_is_refused_with_hfile_error(tmp_path, damage, why):
    _, block = _first_block(tmp_path)
    with pytest.raises(hfile.HFileError, match=why):
        hfile.cells(damage(block.content))


def test_hfile_of_another_codec_is_refused(tmp_path):
    _, block = _first_block(tmp_path)
    c = block.content
    pos, trailer = _trailer_fields(c)
    msg = b"".join(_pb(k, 3 if k == 12 else v) for k, v in sorted(trailer.items()))  # SNAPPY
    tail = hfile.TRAILER_MAGIC + _uvarint(len(msg)) + msg
    changed = c[:-hfile.TRAILER] + tail + b"\x00" * (hfile.TRAILER - len(tail) - 4) + c[-4:]
    with pytest.raises(hfile.HFileError, match="compressed with SNAPPY"):
        hfile.cells(changed)
    assert issubclass(hfile.HFileError, HudiFormatError)


def test_unreadable_hfile_block_leaves_the_table_without_index_and_says_why(our_server, tmp_path):
    """Adoption of a table whose HFile block does not decode: registered without a record index,
    the report naming the log file (as for the other blocks it cannot read)."""
    base = table_copy(FIXTURE, tmp_path)
    path, block = _hfile_blocks(base)[0]
    data = path.read_bytes()
    at = data.index(block.content)
    path.write_bytes(data[:at] + block.content[:100] + bytes(len(block.content) - 100) + data[at + len(block.content):])
    uri = f"thrift://127.0.0.1:{our_server}"
    db = f"hfb_{uuid.uuid4().hex[:8]}"
    with HudiMetastoreClient(uri) as c:
        c.create_database(Database(name=db, description="", locationUri=None, parameters={}))
        report = import_hudi_table(uri, base, db, "t")
        assert report.index_keys is None and path.name in (report.index_note or ""), report.index_note
        assert "hoodie.index.type" not in (c.get_hudi_table(db, "t").properties or {})
