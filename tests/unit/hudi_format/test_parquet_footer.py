"""The footer reader (hudi_format/parquet_footer.py) gives a base file's column statistics and keys
exactly as the pyarrow path does, or declines (Unsupported) and leaves the file to it."""

from __future__ import annotations

import datetime as dt
import zipfile
from decimal import Decimal
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from hudi_format.config_keys import POPULATE_META_FIELDS
from hudi_format.parquet_footer import Unsupported, read_footer, stats_trusted
from hudi_format.record_keys import KeyReader
from hudi_format.table_config import HudiTableConfig
from store.hudi.timeline import base_file_by_footer, base_file_by_pyarrow

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "hudi-tables"
N = 40


def _config(meta: bool = True) -> HudiTableConfig:
    return HudiTableConfig(db_name="db", table_name="t", base_path="/x", table_type="COPY_ON_WRITE",
                           record_key_fields=["id"], partition_fields=[],
                           properties={POPULATE_META_FIELDS: "true" if meta else "false"})


def _table(nulls: bool, nan: bool) -> pa.Table:
    def maybe(values):
        return [None if nulls and i % 7 == 3 else v for i, v in enumerate(values)]

    keys = [f"key-{i:04d}-é" for i in range(N)]
    doubles = [float(i) - 20.5 for i in range(N)]
    if nan:
        doubles[5] = float("nan")
    return pa.table({
        "_hoodie_commit_time": ["20260101000000000" if i % 2 else "20260101000000111" for i in range(N)],
        "_hoodie_record_key": keys,
        "i8": pa.array(maybe(list(range(-20, 20))), pa.int8()),
        "i16": pa.array(maybe([i * 300 for i in range(N)]), pa.int16()),
        "i32": pa.array(maybe([i * -70000 for i in range(N)]), pa.int32()),
        "i64": pa.array(maybe([i * 2**40 for i in range(N)]), pa.int64()),
        "f32": pa.array(maybe([x / 3 for x in doubles]), pa.float32()),
        "f64": pa.array(maybe(doubles), pa.float64()),
        "zero": pa.array([0.0 if i % 2 else -0.0 for i in range(N)], pa.float64()),
        "flag": pa.array(maybe([i % 3 == 0 for i in range(N)]), pa.bool_()),
        "dec": pa.array(maybe([Decimal(f"{i * 7 - 100}.{i % 10}0") for i in range(N)]), pa.decimal128(9, 2)),
        "wide": pa.array(maybe([Decimal(f"{i * 10**15}.5") for i in range(N)]), pa.decimal128(30, 1)),
        "s": pa.array(maybe([f"v{i % 13}-ü" for i in range(N)]), pa.string()),
        "bin": pa.array(maybe([bytes([i, 255 - i]) for i in range(N)]), pa.binary()),
        "day": pa.array(maybe([dt.date(2020, 1, 1) + dt.timedelta(days=i * 37) for i in range(N)]), pa.date32()),
        "ms": pa.array(maybe([1_700_000_000_123 + i for i in range(N)]), pa.timestamp("ms")),
        "us": pa.array(maybe([1_700_000_000_123_456 + i for i in range(N)]), pa.timestamp("us", tz="UTC")),
        "ns": pa.array(maybe([1_700_000_000_123_456_789 + i for i in range(N)]), pa.timestamp("ns")),
        "empty": pa.array([None] * N, pa.int32()),
        "nested": pa.array([{"a": i} for i in range(N)]),
        "listed": pa.array([[i, i + 1] for i in range(N)]),
        "later": pa.array([f"after-nested-{i}" for i in range(N)]),
    })


CASES = {
    "plain": dict(),
    "nulls": dict(nulls=True),
    "nan": dict(nan=True),
    "nan_nulls_no_dictionary": dict(nan=True, nulls=True, use_dictionary=False),
    "row_groups_gzip": dict(row_group_size=9, compression="gzip"),
    "pages_v2_zstd": dict(data_page_version="2.0", compression="zstd", data_page_size=64),
    "no_compression_small_pages": dict(compression="none", data_page_size=32, nulls=True),
    "decimals_as_integers": dict(store_decimal_as_integer=True),
    "no_statistics": dict(write_statistics=False),
    "some_statistics": dict(write_statistics=["i32", "s", "_hoodie_record_key"]),
}


def _both(path: Path, props: dict, reader: KeyReader | None):
    slow = base_file_by_pyarrow(str(path), "p", path.name, props, reader, [])
    fast = base_file_by_footer(str(path), "p", path.name, props, reader, {})
    return slow, fast


@pytest.mark.parametrize("case", sorted(CASES))
def test_fast_footer_equals_pyarrow(tmp_path, case):
    opts = dict(CASES[case])
    table = _table(opts.pop("nulls", False), opts.pop("nan", False))
    path = tmp_path / "f1_0-1-1_20260101000000111.parquet"
    pq.write_table(table, path, **opts)
    slow, fast = _both(path, {}, KeyReader(_config()))
    assert fast == slow
    assert len(fast[1]) == N and fast[1]["key-0003-é"] == "20260101000000000"
    assert {b.column for b in fast[0].columns} >= {"i8", "f64", "dec", "s", "day", "ns", "later"}
    meta = pq.ParquetFile(path).metadata  # a column's sizes: its chunks' over the row groups (Hudi's totalSize)
    at = {meta.schema.column(j).path: j for j in range(meta.num_columns)}
    groups = [meta.row_group(g) for g in range(meta.num_row_groups)]
    assert [(b.total_size, b.uncompressed_size) for b in fast[0].columns] == [
        (sum(g.column(at[b.column]).total_compressed_size for g in groups),
         sum(g.column(at[b.column]).total_uncompressed_size for g in groups)) for b in fast[0].columns]
    assert all(b.total_size for b in fast[0].columns)
    only = {"hoodie.metadata.index.column.stats.column.list": "s,F64,i32"}
    slow, fast = _both(path, only, None)
    assert fast == slow and [b.column for b in fast[0].columns] == ["i32", "f64", "s"]


def test_declines_what_it_does_not_read(tmp_path):
    path = tmp_path / "f1_0-1-1_20260101000000111.parquet"
    pq.write_table(pa.table({"_hoodie_record_key": ["a", None], "_hoodie_commit_time": ["1", "1"],
                             "u": pa.array([1, 2], pa.uint32())}), path)
    with pytest.raises(Unsupported):  # a null key
        base_file_by_footer(str(path), "p", path.name, {}, KeyReader(_config()), {})
    with pytest.raises(Unsupported):  # an unsigned column is indexed: left to pyarrow
        base_file_by_footer(str(path), "p", path.name, {}, None, {})
    with pytest.raises(Unsupported):  # keys through the key generator
        base_file_by_footer(str(path), "p", path.name, {}, KeyReader(_config(meta=False)), {})
    (tmp_path / "junk.parquet").write_bytes(b"not parquet at all")
    with pytest.raises(Unsupported), open(tmp_path / "junk.parquet", "rb") as fh:
        read_footer(fh, 18)
    assert stats_trusted("parquet-mr version 1.13.1 (build db4183109d5b734ec5930d870cdae161e408ddba)")
    assert not stats_trusted("parquet-mr version 1.8.1 (build 4aba4dae7bb0d4edbcf7923ae1339f28fd3f7fcf)")
    assert stats_trusted("parquet-cpp-arrow version 26.0.1") and not stats_trusted(None)


def test_hudi_written_files(tmp_path):
    """Base files Apache Hudi's writer wrote (parquet-mr): the same statistics and keys."""
    seen = 0
    for archive in sorted(FIXTURES.glob("*.zip")):
        with zipfile.ZipFile(archive) as z:
            for member in z.namelist():
                if not member.endswith(".parquet") or ".hoodie/" in member or "__MACOSX" in member:
                    continue
                path = tmp_path / archive.stem / Path(member).name
                path.parent.mkdir(exist_ok=True)
                path.write_bytes(z.read(member))
                slow, fast = _both(path, {}, KeyReader(_config()))
                assert fast == slow, member
                seen += 1
    assert seen >= 20
