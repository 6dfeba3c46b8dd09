"""Pieces of pipeline/ that need no Spark session: schema conversion and evolution, the insert
bucket plan, partition filters sent to the server, cleanup of a retried task's earlier files."""

from __future__ import annotations

import json
import os
from types import SimpleNamespace

import pyarrow as pa
import pytest
from pyspark.sql import types as T

from hudi_format.storage_strategy import HiveStorageStrategy
from pipeline import SchemaEvolutionError
from pipeline.base_file import base_file_name
from pipeline.file_group_writer import FileGroupWriter
from pipeline.reader import partition_filter
from pipeline.schema import evolve, from_avro_schema, hive_columns, to_avro_schema
from pipeline.storage import FileLayout
from pipeline.workload_profile import plan

S = T.StructType([T.StructField("id", T.LongType()), T.StructField("n", T.IntegerType()),
                  T.StructField("tags", T.ArrayType(T.StringType())),
                  T.StructField("amount", T.DecimalType(12, 2)), T.StructField("at", T.TimestampType()),
                  T.StructField("day", T.DateType()),
                  T.StructField("s", T.StructType([T.StructField("a", T.DoubleType())]))])


def test_avro_round_trip_and_hive_types():
    avro = json.loads(to_avro_schema(S, "trips"))
    assert avro["name"] == "trips_record" and avro["namespace"] == "hoodie.trips"
    assert all(f["type"][0] == "null" and f["default"] is None for f in avro["fields"])
    back = from_avro_schema(json.dumps(avro))
    assert [(f.name, f.dataType) for f in back.fields] == [(f.name, f.dataType) for f in S.fields]
    assert dict(hive_columns(S)) == {"id": "bigint", "n": "int", "tags": "array<string>", "amount": "decimal(12,2)",
                                     "at": "timestamp", "day": "date", "s": "struct<a:double>"}


def test_evolution_adds_columns_widens_and_refuses_the_rest():
    table = T.StructType([T.StructField("id", T.LongType()), T.StructField("n", T.IntegerType())])
    batch = T.StructType([T.StructField("n", T.LongType()), T.StructField("id", T.IntegerType()),
                          T.StructField("new", T.StringType(), False)])
    out = evolve(table, batch)
    assert [(f.name, f.dataType, f.nullable) for f in out.fields] == [
        ("id", T.LongType(), True), ("n", T.LongType(), True), ("new", T.StringType(), True)]
    assert evolve(table, T.StructType([T.StructField("id", T.LongType())])) == T.StructType(
        [T.StructField("id", T.LongType(), True), T.StructField("n", T.IntegerType(), True)])
    with pytest.raises(SchemaEvolutionError, match="n: int -> string"):
        evolve(table, T.StructType([T.StructField("n", T.StringType())]))
    with pytest.raises(SchemaEvolutionError, match="id: bigint -> boolean"):
        evolve(T.StructType([T.StructField("id", T.LongType())]), T.StructType([T.StructField("id", T.BooleanType())]))


def _slice(fid, size, name="f.parquet", ppath="p"):
    return SimpleNamespace(file_id=fid, base_file=SimpleNamespace(size=size, name=name), base_instant="1",
                           partition_path=ppath)


def test_bucket_plan_fills_small_files_then_opens_new_ones():
    slices = {"p": [_slice("big", 900), _slice("small", 500, "s.parquet")]}
    buckets = plan({"p": 25, "q": 3}, slices, max_file_size=1000, small_file_limit=800, avg_record_size=50,
                   use_small_files=True)
    p = [b for b in buckets if b.partition_path == "p"]
    assert (p[0].file_id, p[0].records, p[0].base_rel) == ("small", 10, "p/s.parquet")  # (1000-500)/50
    assert sum(b.records for b in p) == 25 and all(b.records <= 20 for b in p) and len(p) == 2
    q = [b for b in buckets if b.partition_path == "q"]
    assert len(q) == 1 and q[0].records == 3 and q[0].base_rel is None
    no_small = plan({"p": 25}, slices, max_file_size=1000, small_file_limit=800, avg_record_size=50,
                    use_small_files=False)
    assert [b.records for b in no_small] == [13, 12] and all(b.base_rel is None for b in no_small)


def test_partition_filters_for_the_server():
    types = {"dt": "string", "day": "int"}
    assert partition_filter([("dt", "=", "2024-01-01"), ("day", ">", 3), ("other", "=", 1)], types) == \
        "dt = '2024-01-01' and day > 3"
    assert partition_filter([("dt", "in", ["a", "b"])], types) == "(dt = 'a' or dt = 'b')"
    assert partition_filter([("DT", "!=", "it's")], types) == "dt != \"it's\""
    assert partition_filter([("other", "=", 1)], types) is None
    assert partition_filter("dt = 'x'", types) == "dt = 'x'"
    with pytest.raises(ValueError, match="operator"):
        partition_filter([("dt", "~", "x")], types)


def test_retried_task_deletes_its_earlier_attempts_files(tmp_path):
    w = FileGroupWriter(metastore="thrift://127.0.0.1:1", db="d", table="t",
                        layout=FileLayout(HiveStorageStrategy(str(tmp_path))),
                        instant="20240101000000000", data_schema=pa.schema([]), groups={})
    os.makedirs(tmp_path / "p")
    for token in ("3-5-0", "3-5-1", "3-6-0"):
        (tmp_path / "p" / base_file_name("f-0", token, "20240101000000000")).write_bytes(b"x")
    w._drop_earlier_attempts("f-0", "p", "3-5-2")
    assert sorted(os.listdir(tmp_path / "p")) == [base_file_name("f-0", "3-6-0", "20240101000000000")]


def _job_on(conf: dict, default_parallelism: int, options: dict | None = None):
    from pipeline.config import WriteConfig
    from pipeline.writer import _Job

    spark = SimpleNamespace(conf=SimpleNamespace(get=conf.get),
                            sparkContext=SimpleNamespace(defaultParallelism=default_parallelism))
    job = _Job.__new__(_Job)
    job.cfg, job.spark = WriteConfig.from_options("upsert", options), spark
    return job


def test_write_shuffles_follow_the_batch_not_sparks_200():
    job = _job_on({"spark.sql.shuffle.partitions": "200"}, 2)
    assert [job._parallelism(n) for n in (0, 30, 3_000, 20_001, 1_000_000, 50_000_000)] == [2, 2, 2, 3, 100, 200]
    assert _job_on({"spark.sql.shuffle.partitions": "8"}, 16)._parallelism(10) == 8  # the session's cap wins
    assert _job_on({"spark.sql.shuffle.partitions": "200"}, 2,
                   {"hoodie.upsert.shuffle.parallelism": "7"})._parallelism(50_000_000) == 7  # as configured
