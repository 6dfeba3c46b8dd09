"""Column statistics of log files from their blocks (hudi_format/log_stats.py), as import-hudi and
the catch-up compute them for log files Hudi's own writers wrote."""

from __future__ import annotations

import io
import json
from datetime import date, datetime, timezone
from decimal import Decimal

import fastavro
import pyarrow as pa

from hudi_format.hfile_writer import write_hfile
from hudi_format.log_file import (
    COMMAND,
    COMMAND_BLOCK_TYPE,
    CORRUPT,
    HFILE_DATA,
    INSTANT_TIME,
    PARQUET_DATA,
    ROLLBACK,
    SCHEMA,
    TARGET_INSTANT_TIME,
    avro_data_block,
    delete_block,
    encode_block,
)
from hudi_format.log_stats import encoded_log_file_stats, log_file_stats, records_stats, records_stats_many

META = [{"name": m, "type": ["null", "string"], "default": None}
        for m in ("_hoodie_commit_time", "_hoodie_commit_seqno", "_hoodie_record_key",
                  "_hoodie_partition_path", "_hoodie_file_name")]
SCHEMA_JSON = json.dumps({"type": "record", "name": "r", "fields": META + [
    {"name": "id", "type": ["null", "long"], "default": None},
    {"name": "name", "type": ["null", "string"], "default": None},
    {"name": "price", "type": ["null", "double"], "default": None},
    {"name": "day", "type": ["null", {"type": "int", "logicalType": "date"}], "default": None},
    {"name": "ts", "type": ["null", {"type": "long", "logicalType": "timestamp-micros"}], "default": None},
    {"name": "amount", "type": ["null", {"type": "bytes", "logicalType": "decimal", "precision": 10, "scale": 2}],
     "default": None},
    {"name": "tags", "type": ["null", {"type": "array", "items": "string"}], "default": None},
]})
T1, T2 = "20260101000000000", "20260102000000000"


def _row(i, name, price=None, day=None, ts=None, amount=None):
    return {"_hoodie_commit_time": T1, "_hoodie_commit_seqno": f"{T1}_0_{i}", "_hoodie_record_key": f"k{i}",
            "_hoodie_partition_path": "p", "_hoodie_file_name": "fg", "id": i, "name": name, "price": price,
            "day": day, "ts": ts, "amount": amount, "tags": ["x"]}


def _by_column(stats):
    return {c["column"]: c for c in stats}


def test_avro_data_blocks_several_columns_with_nulls_and_strings():
    ts = datetime(2026, 1, 2, 3, 4, 5, 678901, tzinfo=timezone.utc)
    data = (avro_data_block(T1, SCHEMA_JSON, [_row(3, "pear", 1.5, date(2026, 1, 1), ts, Decimal("12.50")),
                                              _row(7, None, None, None, None, None)])
            + delete_block(T1, [("k9", "p")])
            + avro_data_block(T2, SCHEMA_JSON, [_row(5, "apple", -2.0, date(2025, 12, 31), None, Decimal("-1.25"))]))
    stats = _by_column(log_file_stats(data, {}))
    assert set(stats) == {"id", "name", "price", "day", "ts", "amount"}  # the array is not indexable
    assert stats["id"] == {"column": "id", "min": {"i": 3}, "max": {"i": 7}, "nulls": 0, "values": 3,
                           "size": 0, "usize": 0}
    assert (stats["name"]["min"], stats["name"]["max"], stats["name"]["nulls"]) == ({"s": "apple"}, {"s": "pear"}, 1)
    assert (stats["price"]["min"], stats["price"]["max"], stats["price"]["nulls"]) == ({"d": -2.0}, {"d": 1.5}, 1)
    # dates as days, timestamps as microseconds, decimals as text: as a base file's (parquet_stats)
    assert stats["day"]["min"] == {"i": (date(2025, 12, 31) - date(1970, 1, 1)).days}
    micros = int(ts.timestamp()) * 1_000_000 + 678901
    assert (stats["ts"]["min"], stats["ts"]["max"], stats["ts"]["nulls"]) == ({"i": micros}, {"i": micros}, 2)
    assert (stats["amount"]["min"], stats["amount"]["max"]) == ({"dec": "-1.25"}, {"dec": "12.50"})
    assert all(c["values"] == 3 and c["size"] == 0 and c["usize"] == 0 for c in stats.values())
    # the table's column list narrows them, as for base files
    listed = log_file_stats(data, {"hoodie.metadata.index.column.stats.column.list": "name,id"})
    assert [c["column"] for c in listed] == ["id", "name"]
    assert json.loads(encoded_log_file_stats(data, {})) == log_file_stats(data, {})


def test_a_column_some_data_block_lacks_is_left_out():
    narrow = json.dumps({"type": "record", "name": "r", "fields": META + [
        {"name": "id", "type": ["null", "long"], "default": None}]})
    data = (avro_data_block(T1, SCHEMA_JSON, [_row(3, "pear")])
            + avro_data_block(T2, narrow, [{"id": 1, **{m["name"]: None for m in META}}]))
    stats = _by_column(log_file_stats(data, {}))
    assert set(stats) == {"id"} and stats["id"]["min"] == {"i": 1} and stats["id"]["values"] == 2


def test_hfile_data_block():
    schema = {"type": "record", "name": "r", "fields": [{"name": "id", "type": "long"},
                                                        {"name": "name", "type": ["null", "string"]}]}
    parsed = fastavro.parse_schema(schema)

    def value(rec):
        buf = io.BytesIO()
        fastavro.schemaless_writer(buf, parsed, rec)
        return buf.getvalue()

    hfile = write_hfile([(b"a", value({"id": 4, "name": "x"})), (b"b", value({"id": -1, "name": None}))])
    data = encode_block(HFILE_DATA, {INSTANT_TIME: T1, SCHEMA: json.dumps(schema)}, hfile)
    stats = _by_column(log_file_stats(data, {}))
    assert stats["id"]["min"] == {"i": -1} and stats["id"]["max"] == {"i": 4} and stats["id"]["values"] == 2
    assert stats["name"]["nulls"] == 1 and stats["name"]["min"] == {"s": "x"}


def test_delete_only_log_file_has_no_bounds_and_zero_values():
    data = delete_block(T1, [("k1", "p"), ("k2", "p")])
    table = pa.schema([("_hoodie_record_key", pa.string()), ("id", pa.int64()), ("name", pa.string()),
                       ("tags", pa.list_(pa.string()))])
    assert log_file_stats(data, {}, table) == [
        {"column": "id", "min": None, "max": None, "nulls": 0, "values": 0, "size": 0, "usize": 0},
        {"column": "name", "min": None, "max": None, "nulls": 0, "values": 0, "size": 0, "usize": 0}]
    assert log_file_stats(data, {}) is None  # no schema to say the indexed columns: none


def test_blocks_not_read_give_no_statistics():
    good = avro_data_block(T1, SCHEMA_JSON, [_row(3, "pear")])
    assert log_file_stats(good, {}) is not None
    rollback = encode_block(COMMAND, {INSTANT_TIME: T2, TARGET_INSTANT_TIME: T1, COMMAND_BLOCK_TYPE: ROLLBACK}, b"")
    assert log_file_stats(good + rollback, {}) is None  # a rollback invalidates earlier blocks
    assert log_file_stats(good + encode_block(CORRUPT, {}, b"junk"), {}) is None
    parquet = encode_block(PARQUET_DATA, {INSTANT_TIME: T2, SCHEMA: SCHEMA_JSON}, b"PAR1")
    assert log_file_stats(good + parquet, {}) is None
    assert log_file_stats(good + encode_block(42, {INSTANT_TIME: T2}, b""), {}) is None  # an unknown type
    assert log_file_stats(good + good[:20], {}) is None  # a torn block at the end
    assert log_file_stats(good[:-30], {}) is None  # a data block cut short
    content = b"\x00\x00\x00\x03\x00\x00\x00\x01\x00\x00\x00\x09z"
    broken = encode_block(3, {INSTANT_TIME: T1, SCHEMA: SCHEMA_JSON}, content)
    assert log_file_stats(broken, {}) is None  # a record that does not decode


def test_many_log_files_statistics_from_one_footer_equal_each_files_own():
    """`records_stats_many` (a row group per log file) gives what `records_stats` gives each file:
    nulls, NaN, signed zeros, long strings, an empty file, a file of nulls only."""
    schema = pa.schema([("a", pa.int64()), ("s", pa.string()), ("d", pa.float64()),
                        ("ts", pa.timestamp("us", tz="UTC")), ("dec", pa.decimal128(10, 2)), ("b", pa.bool_())])
    utc = timezone.utc
    tables = [
        pa.table({"a": [1, None, 3], "s": ["x", "é", None], "d": [1.5, float("nan"), -0.0],
                  "ts": [datetime(2020, 1, 1, tzinfo=utc), None, None],
                  "dec": [Decimal("1.50"), None, Decimal("-3.00")], "b": [True, None, False]},
                 schema=schema),
        schema.empty_table(),
        pa.table({c: [None] for c in schema.names}, schema=schema),
        pa.table({"a": [7] * 5, "s": ["z" * 5000] * 5, "d": [0.0] * 5, "ts": [None] * 5,
                  "dec": [Decimal("9.99")] * 5, "b": [False] * 5}, schema=schema),
        pa.table({"a": [-(2 ** 63)], "s": [""], "d": [float("-inf")],
                  "ts": [datetime(1970, 1, 1, tzinfo=utc)], "dec": [Decimal("0.01")],
                  "b": [True]}, schema=schema),
    ]
    columns = ["a", "s", "d", "ts", "dec", "b"]
    assert records_stats_many(tables, columns) == [records_stats(t, columns) for t in tables]
    assert records_stats_many(tables, ["s", "d"]) == [records_stats(t, ["s", "d"]) for t in tables]
