"""Avro rows encoded a column at a time equal fastavro's encoding of each row."""

from __future__ import annotations

import datetime as dt
import io
import json

import fastavro
import pyarrow as pa
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hudi_format.avro_rows import avro_value, encode_records_section, encode_rows
from hudi_format.errors import HudiFormatError
from hudi_format.log_file import avro_data_block, avro_data_block_of_table, blocks, data_block_records

INT64 = st.integers(-(2 ** 63), 2 ** 63 - 1)
INT32 = st.integers(-(2 ** 31), 2 ** 31 - 1)
TEXT = st.text(max_size=40)
SCHEMA = {"type": "record", "name": "r", "namespace": "hoodie.t", "fields": [
    {"name": "l", "type": ["null", "long"], "default": None},
    {"name": "i", "type": ["null", "int"], "default": None},
    {"name": "s", "type": ["null", "string"], "default": None},
    {"name": "d", "type": ["null", "double"], "default": None},
    {"name": "f", "type": ["null", "float"], "default": None},
    {"name": "b", "type": ["null", "boolean"], "default": None},
    {"name": "y", "type": ["null", "bytes"], "default": None},
    {"name": "day", "type": ["null", {"type": "int", "logicalType": "date"}], "default": None},
    {"name": "at", "type": ["null", {"type": "long", "logicalType": "timestamp-micros"}], "default": None},
    {"name": "req", "type": "long"},
    {"name": "nn", "type": ["string", "null"]},
    {"name": "st", "type": ["null", {"type": "record", "name": "st", "namespace": "hoodie.t.st", "fields": [
        {"name": "a", "type": ["null", "int"], "default": None}]}], "default": None},
    {"name": "m", "type": ["null", {"type": "map", "values": ["null", "long"]}], "default": None},
    {"name": "arr", "type": ["null", {"type": "array", "items": ["null", "string"]}], "default": None},
    {"name": "dec", "type": ["null", {"type": "fixed", "name": "fixed", "namespace": "hoodie.t.dec", "size": 5,
                                      "logicalType": "decimal", "precision": 10, "scale": 2}], "default": None},
]}
ARROW = pa.schema([("l", pa.int64()), ("i", pa.int32()), ("s", pa.string()), ("d", pa.float64()),
                   ("f", pa.float32()), ("b", pa.bool_()), ("y", pa.binary()), ("day", pa.date32()),
                   ("at", pa.timestamp("us", "UTC")), ("req", pa.int64()), ("nn", pa.string()),
                   ("st", pa.struct([("a", pa.int32())])), ("m", pa.map_(pa.string(), pa.int64())),
                   ("arr", pa.list_(pa.string())), ("dec", pa.decimal128(10, 2))])


def _maybe(s):
    return st.none() | s


ROW = st.fixed_dictionaries({
    "l": _maybe(INT64), "i": _maybe(INT32), "s": _maybe(TEXT),
    "d": _maybe(st.floats(allow_nan=False) | st.sampled_from([0.0, -0.0, float("inf")])),
    "f": _maybe(st.floats(width=32, allow_nan=False)), "b": _maybe(st.booleans()),
    "y": _maybe(st.binary(max_size=20)),
    "day": _maybe(st.dates(min_value=dt.date(1, 1, 1))),
    "at": _maybe(st.datetimes(min_value=dt.datetime(1900, 1, 1), max_value=dt.datetime(2200, 1, 1),
                              timezones=st.just(dt.timezone.utc))),
    "req": INT64, "nn": _maybe(TEXT),
    "st": _maybe(st.fixed_dictionaries({"a": _maybe(INT32)})),
    "m": _maybe(st.dictionaries(st.text(max_size=5), _maybe(INT64), max_size=3).map(lambda d: list(d.items()))),
    "arr": _maybe(st.lists(_maybe(TEXT), max_size=3)),
})


def _fastavro_rows(table: pa.Table, schema: dict) -> list[bytes]:
    parsed = fastavro.parse_schema(schema)
    out = []
    for row in table.to_pylist():
        buf = io.BytesIO()
        fastavro.schemaless_writer(buf, parsed, {f.name: avro_value(row.get(f.name), f.type) for f in table.schema})
        out.append(buf.getvalue())
    return out


@settings(max_examples=60, deadline=None)
@given(st.lists(ROW, max_size=25))
def test_rows_equal_fastavros_encoding(rows):
    import decimal

    for k, r in enumerate(rows):
        r["dec"] = None if k % 3 == 0 else decimal.Decimal(k * 7 - 50) / 100
    table = pa.Table.from_pylist(rows, schema=ARROW) if rows else ARROW.empty_table()
    assert encode_rows(table, SCHEMA).to_pylist() == _fastavro_rows(table, SCHEMA)


def test_varints_at_their_byte_boundaries():
    values = sorted({s * (b + d) for b in [0] + [2 ** k for k in range(1, 64)] for d in (-1, 0, 1) for s in (1, -1)
                     if -(2 ** 63) <= s * (b + d) < 2 ** 63} | {-(2 ** 63), 2 ** 63 - 1})
    table = pa.table({"req": pa.array(values, pa.int64())})
    schema = {"type": "record", "name": "r", "fields": [{"name": "req", "type": "long"}]}
    assert encode_rows(table, schema).to_pylist() == _fastavro_rows(table, schema)


def test_chunked_columns_and_a_missing_field():
    schema = {"type": "record", "name": "r", "fields": [{"name": "a", "type": ["null", "string"]},
                                                         {"name": "gone", "type": ["null", "long"]}]}
    table = pa.Table.from_batches([pa.record_batch({"a": ["x", None]}), pa.record_batch({"a": ["é" * 70]})])
    assert encode_rows(table, schema).to_pylist() == [b"\x02\x02x\x00", b"\x00\x00",
                                                      b"\x02\x98\x02" + ("é" * 70).encode() + b"\x00"]


def test_a_null_in_a_field_without_null_is_refused():
    schema = {"type": "record", "name": "r", "fields": [{"name": "a", "type": "long"}]}
    with pytest.raises(HudiFormatError, match="field a is null"):
        encode_rows(pa.table({"a": pa.array([1, None], pa.int64())}), schema)


def test_a_named_type_twice_in_one_field_is_written_row_by_row():
    inner = {"type": "record", "name": "p", "fields": [{"name": "x", "type": "int"}]}
    schema = {"type": "record", "name": "r", "fields": [
        {"name": "pair", "type": {"type": "record", "name": "pair", "fields": [
            {"name": "a", "type": inner}, {"name": "b", "type": "p"}]}}]}
    table = pa.table({"pair": pa.array([{"a": {"x": 1}, "b": {"x": -2}}],
                                       pa.struct([("a", pa.struct([("x", pa.int32())])),
                                                  ("b", pa.struct([("x", pa.int32())]))]))})
    assert encode_rows(table, schema).to_pylist() == _fastavro_rows(table, schema)


def test_data_block_of_a_table_equals_the_block_of_its_records():
    schema = {"type": "record", "name": "r", "fields": [{"name": "k", "type": ["null", "string"]},
                                                         {"name": "v", "type": ["null", "double"]}]}
    table = pa.table({"k": ["a", "b", None], "v": [1.5, None, -2.0]})
    text = json.dumps(schema)
    block = avro_data_block_of_table("20260101000000000", text, table)
    assert block == avro_data_block("20260101000000000", text, table.to_pylist())
    [read] = list(blocks(block))
    assert data_block_records(read) == table.to_pylist()
    count, section = encode_records_section(table, schema)
    assert count == 3 and section in block
