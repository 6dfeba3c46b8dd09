"""Every Spark type through the pipeline: pipeline.write, then pipeline.read, hudi-rs and Apache
Hudi's own Spark reader (reading storage on their own) give back the same values, nulls included
(issue 12's type matrix). A timestamp column used to crash the writer with a bare AssertionError."""

from __future__ import annotations

import datetime as dt
import json
import os
import uuid
from decimal import Decimal

import pytest

from pipeline import write
from tests.harness.hudi_spark import hudi_spark_env, hudi_spark_python
from tests.harness.spark import run_spark_script
from tests.pipeline_helpers import base_dir, hudi_rs, ours, uri
from tests.spark.hudi_spark_jobs import plain

# the subject is Spark's types, not the database: each case on one backend (tests/conftest.py)
pytestmark = [pytest.mark.spark, pytest.mark.backends_in_turn("mysql", "postgresql", "sqlite")]

SCHEMA = ("id string, ts timestamp, ts_ntz timestamp_ntz, d date, dec decimal(12,3), bin binary, flag boolean, "
          "i8 tinyint, i16 smallint, i32 int, i64 bigint, f32 float, f64 double, s string, "
          "st struct<a:int,b:string>, arr array<int>, m map<string,int>")
COLS = [c.split(" ")[0] for c in SCHEMA.split(", ") if not c.startswith(("st ", "arr ", "m "))] + ["st", "arr", "m"]
UTC = dt.timezone.utc
ROWS = [
    ("a", dt.datetime(2024, 3, 1, 12, 30, 15, 123456, tzinfo=UTC), dt.datetime(2024, 3, 1, 12, 30, 15, 123456),
     dt.date(2024, 2, 29), Decimal("-1234.567"), b"\x00\xffbin", True, -128, -32768, -2**31, -2**63, 1.5, -2.25,
     "ünïcode", (1, "x"), [1, None, 3], {"k": 1}),
    ("b", dt.datetime(1969, 12, 31, 23, 59, 59, tzinfo=UTC), dt.datetime(1900, 1, 1), dt.date(1, 1, 1),
     Decimal("999999999.999"), b"", False, 127, 32767, 2**31 - 1, 2**63 - 1, 0.25, 1e308, "", (None, None), [],
     {}),
    ("c",) + (None,) * 16,
]


def _plain(v, col: str = ""):
    """Values as both readers give them: timestamps as naive UTC, structs as tuples, maps as sorted
    pairs (Spark gives Rows and dicts, hudi-rs dicts and lists of pairs)."""
    if isinstance(v, dt.datetime) and v.tzinfo is not None:  # Spark collects naive (session zone: UTC)
        return v.astimezone(UTC).replace(tzinfo=None)
    if col == "m" and v is not None:
        return tuple(sorted(v.items() if isinstance(v, dict) else v))
    if isinstance(v, dict):
        return tuple(v.values())
    if isinstance(v, (list, tuple)) or hasattr(v, "asDict"):
        return tuple(v)
    return v


def _rows_by_key(rows, cols: list[str]) -> dict:
    return {r[0]: tuple(_plain(v, c) for v, c in zip(r, cols)) for r in rows}


def _write_and_read(spark, port: int, rows, schema: str, cols: list[str],
                    table_type: str = "COPY_ON_WRITE") -> tuple[str, dict]:
    """Merge-on-read: the keys are inserted with every other column null, then the rows upserted,
    so every value read comes from a log file's Avro data block."""
    zone = spark.conf.get("spark.sql.session.timeZone")
    spark.conf.set("spark.sql.session.timeZone", "UTC")  # naive timestamps come back as UTC wall time
    try:
        table = f"ty_{uuid.uuid4().hex[:8]}.t"
        if table_type == "MERGE_ON_READ":
            keys = [(r[0],) + (None,) * (len(r) - 1) for r in rows]
            write(spark.createDataFrame(keys, schema), table, "insert", record_key="id", metastore=uri(port),
                  table_type=table_type)
            write(spark.createDataFrame(rows, schema), table, "upsert", record_key="id", metastore=uri(port))
        else:
            write(spark.createDataFrame(rows, schema), table, "insert", record_key="id", metastore=uri(port))
        return table, _rows_by_key(list(ours(spark, port, table, cols).values()), cols)
    finally:
        spark.conf.set("spark.sql.session.timeZone", zone)


TABLE_TYPES = pytest.mark.parametrize("table_type", ["COPY_ON_WRITE", "MERGE_ON_READ"])


@TABLE_TYPES
def test_every_spark_type_round_trips(spark, our_server, table_type):
    _, got = _write_and_read(spark, our_server, ROWS, SCHEMA, COLS, table_type)
    assert got == _rows_by_key(ROWS, COLS)


@TABLE_TYPES
def test_hudi_rs_reads_what_the_pipeline_wrote_of_every_type(spark, our_server, table_type):
    """hudi-rs 0.5 panics ("not yet implemented") on a table whose schema has a timestamp without
    time zone (Avro local-timestamp-micros, as Apache Hudi writes it), so that column is left out."""
    at = COLS.index("ts_ntz")
    rows = [r[:at] + r[at + 1:] for r in ROWS]
    cols = COLS[:at] + COLS[at + 1:]
    table, got = _write_and_read(spark, our_server, rows, SCHEMA.replace("ts_ntz timestamp_ntz, ", ""), cols,
                                 table_type)
    want = _rows_by_key(rows, cols)
    assert got == want
    rs = _rows_by_key(list(hudi_rs(base_dir(our_server, table), cols).values()), cols)
    assert rs == want


def _json_value(v, col: str):
    """A value as Hudi's reader gives it back (tests/spark/hudi_spark_jobs.py renders what it collects)."""
    return plain(_plain(v, col))


@pytest.mark.slow
@pytest.mark.backends("sqlite", "postgresql")
def test_hudi_spark_reader_reads_what_the_pipeline_wrote_of_every_type(spark, our_server, tmp_path):
    """Apache Hudi's Spark 3.5 bundle reads the table (snapshot by path) with the values written,
    the timestamp without time zone included, with Spark's default settings: the base files name
    the Spark version that wrote them, so the date 0001-01-01 is read as written (Spark 3.5 refuses
    dates before 1582 in a Parquet file it cannot tell the calendar of)."""
    _hudi_spark_reads_every_type(spark, our_server, tmp_path, "COPY_ON_WRITE")


@pytest.mark.slow
@pytest.mark.backends("sqlite")
def test_hudi_spark_reader_reads_every_type_from_log_files(spark, our_server, tmp_path):
    """The same of a merge-on-read table whose values all come from its log files (Avro data
    blocks encoded a column at a time, hudi_format/avro_rows.py)."""
    _hudi_spark_reads_every_type(spark, our_server, tmp_path, "MERGE_ON_READ")


def _hudi_spark_reads_every_type(spark, our_server, tmp_path, table_type: str):
    table, got = _write_and_read(spark, our_server, ROWS, SCHEMA, COLS, table_type)
    want = _rows_by_key(ROWS, COLS)
    assert got == want
    script = os.path.join(os.path.dirname(__file__), "spark", "hudi_spark_jobs.py")
    out = run_spark_script(script, our_server, tmp_path / "hudi-wh", tmp_path / "hudi-read.json", timeout=900,
                           python=hudi_spark_python(), env=hudi_spark_env(),
                           extra_args=["--read-only", "--read", json.dumps(
                               {"types": {"base": base_dir(our_server, table), "columns": COLS, "typed": True}})])
    read = out["read"]["types"]
    assert "error" not in read, read
    assert read["ancient_dates_by_default"] is None, read
    expected = sorted(([_json_value(v, c) for v, c in zip(row, COLS)] for row in want.values()), key=json.dumps)
    assert read["snapshot"] == expected


def test_every_spark_type_handed_from_the_driver_to_spark(spark, our_server, monkeypatch):
    """A merge-on-read upsert of one existing key and new ones: the driver tags the batch and hands
    it to Spark's tasks (`createDataFrame` of its Arrow table, pipeline/writer.py `_on_driver`);
    every type reads back as written."""
    from pipeline import writer as writer_module

    handed: list = []
    original = writer_module._Job._append_on_driver

    def spy(self, tagged, slices):
        out = original(self, tagged, slices)
        handed.append(out is None)
        return out

    monkeypatch.setattr(writer_module._Job, "_append_on_driver", spy)
    zone = spark.conf.get("spark.sql.session.timeZone")
    spark.conf.set("spark.sql.session.timeZone", "UTC")
    try:
        table = f"ty_{uuid.uuid4().hex[:8]}.t"
        first = ROWS[0]
        write(spark.createDataFrame([(first[0],) + (None,) * (len(first) - 1)], SCHEMA), table, "insert",
              record_key="id", metastore=uri(our_server), table_type="MERGE_ON_READ")
        write(spark.createDataFrame(ROWS, SCHEMA), table, "upsert", record_key="id", metastore=uri(our_server))
        got = _rows_by_key(list(ours(spark, our_server, table, COLS).values()), COLS)
    finally:
        spark.conf.set("spark.sql.session.timeZone", zone)
    assert handed == [True]
    assert got == _rows_by_key(ROWS, COLS)
