"""Log compaction's blocks (hudi_format/log_file.py): the COMPACTED_BLOCK_TIMES header (ordinal 4,
as Hudi's HeaderMetadataType), and `merge_order`, the order in which readers merge a slice's
blocks, a compacted block standing in for the blocks it replaced as Hudi's log record reader does.
Also read through the pipeline's merge-on-read reader and the record index's key reader."""

from __future__ import annotations

import json
import struct

import pyarrow as pa
import pytest

from hudi_format import log_file
from hudi_format.errors import HudiFormatError
from hudi_format.log_file import (
    AVRO_DATA,
    COMMAND,
    COMMAND_BLOCK_TYPE,
    COMPACTED_BLOCK_TIMES,
    CORRUPT,
    DELETE,
    INSTANT_TIME,
    ROLLBACK,
    TARGET_INSTANT_TIME,
    LogBlock,
    avro_data_block_of_table,
    blocks,
    delete_block,
    encode_block,
    merge_order,
)

AVRO = json.dumps({"type": "record", "name": "r", "fields": [
    {"name": "_hoodie_commit_time", "type": ["null", "string"], "default": None},
    {"name": "_hoodie_record_key", "type": ["null", "string"], "default": None},
    {"name": "v", "type": ["null", "long"], "default": None}]})


def _b(instant: str, compacted: str | None = None, kind: int = AVRO_DATA) -> LogBlock:
    header = {INSTANT_TIME: instant}
    if compacted is not None:
        header[COMPACTED_BLOCK_TIMES] = compacted
    return LogBlock(kind, header, b"", f"{instant}{'c' if compacted else ''}")


def _rollback(target: str) -> LogBlock:
    return LogBlock(COMMAND, {INSTANT_TIME: "9", TARGET_INSTANT_TIME: target, COMMAND_BLOCK_TYPE: ROLLBACK}, b"")


def _order(scanned) -> list[str]:
    return [b.source for b in merge_order(scanned)]


def test_header_ordinal_and_round_trip():
    t = pa.table({"_hoodie_commit_time": ["5"], "_hoodie_record_key": ["k"], "v": [1]})
    raw = avro_data_block_of_table("5", AVRO, t, compacted=["1", "2"]) + delete_block("5", [("x", "p")], ["1", "2"])
    data, gone = blocks(raw)
    assert COMPACTED_BLOCK_TIMES == 4
    assert data.compacted_times == ["1", "2"] and gone.compacted_times == ["1", "2"]
    # the header map on the wire: count, then (ordinal, length, UTF-8 value) entries
    assert struct.pack(">ii", 4, 3) + b"1,2" in raw
    plain, = blocks(avro_data_block_of_table("5", AVRO, t))
    assert plain.compacted_times is None and COMPACTED_BLOCK_TIMES not in plain.header
    for bad in ([], ["1,2"], [""]):
        with pytest.raises(HudiFormatError):
            avro_data_block_of_table("5", AVRO, t, compacted=bad)


def test_compacted_block_replaces_at_the_latest_instant_it_names():
    # B1 B2 CB(1,2) B4 in scan order (the compacted block lands in a later file than B4 would not
    # matter: it is placed at B2's instant)
    assert _order([_b("1"), _b("2"), _b("3", "1,2"), _b("4")]) == ["3c", "4"]
    assert _order([_b("1"), _b("2"), _b("4"), _b("3", "1,2")]) == ["3c", "4"]
    # without the compacted block every block is merged, in order
    assert _order([_b("1"), _b("2"), _b("4")]) == ["1", "2", "4"]


def test_layers_of_log_compaction():
    # M1 replaces 1, 2; M2 replaces M1 and 3: only M2, then 5
    scanned = [_b("1"), _b("2"), _b("M1", "1,2"), _b("3"), _b("M2", "M1,3"), _b("5")]
    assert _order(scanned) == ["M2c", "5"]


def test_rollback_corrupt_and_commands():
    # a rolled back log compaction: its replaced blocks are read again
    assert _order([_b("1"), _b("2"), _b("3", "1,2"), _rollback("3")]) == ["1", "2"]
    assert _order([_b("1"), LogBlock(CORRUPT, {}, b""), _b("2"), _rollback("1")]) == ["2"]
    # the data and delete blocks of one instant stay together, in order
    assert _order([_b("1"), _b("2", kind=DELETE), _b("2"), _b("3")]) == ["1", "2", "2", "3"]


def test_reader_of_a_slice_and_keys(tmp_path):
    """The pipeline's reader and the key reader skip the replaced blocks (a test that fails when the
    compacted block is merged at its own place: key 1's value 20 of instant 4 must win)."""
    from hudi_format.file_slice import FileInfo, build_slices
    from hudi_format.record_keys import KeyReader, slice_keys
    from pipeline.merge_on_read import read_slice

    schema = pa.schema([("_hoodie_commit_time", pa.string()), ("_hoodie_record_key", pa.string()), ("v", pa.int64())])

    def rows(instant, *kv):
        return pa.table({"_hoodie_commit_time": [instant] * len(kv), "_hoodie_record_key": [k for k, _ in kv],
                         "v": [v for _, v in kv]}, schema=schema)

    files = {
        ".f_0.log.1_0-1-0": avro_data_block_of_table("1", AVRO, rows("1", ("1", 1), ("2", 2))),
        ".f_0.log.2_0-1-0": delete_block("2", [("2", "")]) + avro_data_block_of_table("2", AVRO, rows("2", ("3", 3))),
        ".f_0.log.3_0-1-0": avro_data_block_of_table("4", AVRO, rows("4", ("1", 20))),
        # the log compaction of instants 1 and 2 (merged: 1 -> 1, 3 -> 3; 2 deleted), written last
        ".f_0.log.4_0-1-0": avro_data_block_of_table("3", AVRO, rows("3", ("1", 1), ("3", 3)), ["1", "2"])
                            + delete_block("3", [("2", "")], ["1", "2"]),
    }
    for name, raw in files.items():
        (tmp_path / name).write_bytes(raw)
    logs = [str(tmp_path / n) for n in files]
    merged = read_slice(None, logs, schema, None)
    assert sorted(zip(merged.column("_hoodie_record_key").to_pylist(), merged.column("v").to_pylist())) == \
        [("1", 20), ("3", 3)]
    # as of instant 2 (before the log compaction and instant 4): the original blocks
    before = read_slice(None, logs, schema, None, as_of="2")
    assert sorted(before.column("v").to_pylist()) == [1, 3]

    class Cfg:
        properties: dict = {}
        record_key_fields = ["k"]
        key_generator = None

    class Storage:
        fs = __import__("fsspec").filesystem("file")

        def path(self, partition, name):
            return str(tmp_path / name)

    infos = [FileInfo("", "f", n, len(r), "0", True, i + 1, None) for i, (n, r) in enumerate(files.items())]
    s, = build_slices(infos)
    keys = slice_keys(Storage(), s, {"1", "2", "3", "4"}, KeyReader(Cfg()))  # type: ignore[arg-type]
    assert keys == {"1": "4", "3": "3"}
    # the log compaction not completed: its block is not read, the original blocks are
    assert slice_keys(Storage(), s, {"1", "2", "4"}, KeyReader(Cfg())) == {"1": "4", "3": "2"}  # type: ignore[arg-type]


def test_encode_block_keeps_unknown_header_keys():
    raw = encode_block(AVRO_DATA, {INSTANT_TIME: "1", 7: "true"}, b"")
    b, = blocks(raw)
    assert b.header[7] == "true" and log_file.merge_order([b]) == [b]
