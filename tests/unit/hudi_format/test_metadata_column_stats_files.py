"""The metadata table's `column_stats` partition as hudi_format/metadata_column_stats.py writes it,
against what Hudi 1.2 wrote for tables of version 6, 8 and 9 (tests/fixtures/hudi-metadata-table/
PROVENANCE.md; every indexed type, a column always null): every record's bytes, its key and file
group, the delete blocks of cleans, the empty blocks of the partition's initialization and the
index definitions (index version 1 for 6 and 8, 2 for 9); and for another version-9 table (index version 2,
value types: tests/fixtures/hudi-tables/cow_v9_restored.zip, whose restore turned the metadata
table on): its base files' records, the restore's delete blocks, the initial empty blocks and the
index definitions; and the records Hudi 1.2 wrote for the log files of the merge-on-read copy
(mor_v9_restored.zip; the server writes them so: tests/unit/store/hudi/test_metadata_column_stats.py)."""

from __future__ import annotations

import datetime as dt
import os
import zipfile
from decimal import Decimal
from pathlib import Path

import pytest

from hudi_format import log_file
from hudi_format import metadata_column_stats as C

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "hudi-metadata-table"
FIXTURE = FIXTURES / "hudi12_column_stats_v6.zip"
FIXTURE_V8_V9 = FIXTURES / "hudi12_column_stats_v8_v9.zip"
V9_FIXTURE = Path(__file__).resolve().parents[2] / "fixtures" / "hudi-tables" / "cow_v9_restored.zip"
V9_TYPES = {"id": "string", "v": "bigint", "ts": "bigint", "p": "string", "_hoodie_commit_time": "string",
            "_hoodie_partition_path": "string", "_hoodie_record_key": "string"}
TYPES = {"id": "string", "i": "int", "l": "bigint", "b": "boolean", "f": "float", "d": "double", "s": "string",
         "dt": "date", "dec": "decimal(10,2)", "t": "timestamp", "ts": "bigint", "p": "string",
         "_hoodie_commit_time": "string", "_hoodie_partition_path": "string", "_hoodie_record_key": "string",
         "n": "string"}
PARTITIONS = {f"{kind}{v}": parts for v in (6, 8, 9) for kind, parts in (("cs", ["a", "b", "c"]), ("np", [""]))}


@pytest.fixture(scope="module")
def hudi_written(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("cs")
    for fixture in (FIXTURE, FIXTURE_V8_V9):
        with zipfile.ZipFile(fixture) as z:
            z.extractall(out)
    return out


def _files(root: Path, table: str):
    d = root / table / ".hoodie" / "metadata" / C.COLUMN_STATS
    for name in sorted(os.listdir(d)):
        parsed = C.parse_name(name)
        if parsed:
            yield name, parsed, (d / name).read_bytes()


def test_xxhash64_reference_vectors():
    assert C.xxhash64(b"", 0) == 0xEF46DB3751D8E999
    assert C.xxhash64(b"a", 0) == 0xD24EC4F1A98C6E5B
    assert C.xxhash64(b"Nobody inspects the spammish repetition", 0) == 0xFBCEA83C8A378BF1  # 32-byte stripes
    # Hudi's seed: column `i`, partitions `a` and unpartitioned (`.`) as its keys begin
    assert C.record_key("i", "a", "x")[:24] == "G7uSFvrozM8=BFHqp2KLzrM="
    assert C.record_key("i", "", "x")[12:24] == "FXThHwelITM="


@pytest.mark.parametrize("table", sorted(PARTITIONS))
def test_records_keys_and_groups_are_hudis(hudi_written, table):
    """Every record Hudi 1.2 wrote, re-encoded from its values as the table's version says (index
    version 1 for tables of version 6 and 8, 2 with value types for 9), is byte-equal."""
    records = 0
    kinds = set()
    table_version = int(table[2:])
    iv = C.index_version(table_version)
    for name, (group, kind, base, _version), data in _files(hudi_written, table):
        # version 6: every log file of the initial slice; 8+: named after its own deltacommit
        assert kind == "log" and (base == C.INIT_INSTANT or table_version >= 8), name
        for instant, cells, deleted in C.read_cells(data, name):
            assert all(C.file_group_of(k) == group for k in deleted), name
            for row, value in cells:
                s = C.decode_stats(value)
                key = row.decode()
                [partition] = [p for p in PARTITIONS[table] if C.record_key(s["columnName"], p, s["fileName"]) == key]
                assert C.file_group_of(key) == group
                ct = C.column_type(TYPES[s["columnName"]], iv)
                assert ct is not None and s["valueType"] == (None if iv == 1 else (ct.value_type, ct.type_info)), s
                if s["minValue"] is None:  # every value null
                    assert s["maxValue"] is None and s["nullCount"] == s["valueCount"], s
                else:
                    assert s["minValue"][0] == s["maxValue"][0] == ct.wrapper, s
                    kinds.add(ct.wrapper)
                rec = C.ColumnStatsRecord(partition, s["fileName"], s["columnName"], ct.wrapper,
                                          None if s["minValue"] is None else s["minValue"][1],
                                          None if s["maxValue"] is None else s["maxValue"][1],
                                          s["nullCount"], s["valueCount"], s["totalSize"], s["totalUncompressedSize"],
                                          ct.value_type, ct.type_info)
                assert C.encode_record(rec) == value, (name, instant, s["columnName"])
                records += 1
    assert records > 20
    # index version 2: dates as IntWrapper, decimals as BytesWrapper
    assert kinds == {"IntWrapper", "LongWrapper", "BooleanWrapper", "FloatWrapper", "DoubleWrapper", "StringWrapper",
                     *(("DateWrapper", "DecimalWrapper") if iv == 1 else ("BytesWrapper",))}


@pytest.mark.parametrize("table", ["cs6", "cs8", "cs9"])
def test_delete_blocks_and_the_initial_blocks_are_hudis(hudi_written, table):
    deletes = 0
    init = C.init_instant(int(table[2:]))
    for name, (_group, _kind, base, version), data in _files(hudi_written, table):
        blocks = list(log_file.blocks(data, name))
        # the partition's initialization: an empty delete block without schema (version 6: the
        # first log file of the initial slice; 8+: the log file named after the initial instant)
        if (version == 1 and table == "cs6") or (base == init and table != "cs6"):
            assert data == C.delete_block(init, [], with_schema=False)
            continue
        for block in blocks:
            if block.block_type == log_file.DELETE:
                keys = log_file.deleted_keys(block, name)
                ours = next(log_file.blocks(C.delete_block(block.instant or "", keys)))
                assert ours.content == block.content and keys == sorted(keys)
                deletes += 1
    assert deletes >= 2


def test_index_definitions_are_hudis(hudi_written):
    for table in PARTITIONS:
        raw = (hudi_written / table / ".hoodie" / ".index_defs" / "index.json").read_bytes()
        import json

        fields = json.loads(raw)["indexDefinitions"]["column_stats"]["sourceFields"]
        assert C.index_definitions(fields, C.index_version(int(table[2:]))) == raw


def test_values_round_trip_through_the_records():
    recs = [C.ColumnStatsRecord("x=1", "f.parquet", "c", "DecimalWrapper", Decimal("1.5"), Decimal("-2"), 0, 3),
            C.ColumnStatsRecord("", "f.parquet", "d", "DateWrapper", dt.date(1970, 1, 3), 10, 1, 3),
            C.ColumnStatsRecord("", "f.parquet", "e", "StringWrapper", None, None, 3, 3)]
    got = [C.decode_stats(C.encode_record(r)) for r in recs]
    assert got[0]["minValue"] == ("DecimalWrapper", Decimal("1.500000000000000"))
    assert got[1]["minValue"] == ("DateWrapper", 2) and got[1]["maxValue"] == ("DateWrapper", 10)
    assert got[2]["minValue"] is None and got[2]["nullCount"] == 3
    assert C.wrapper_of("decimal(38,18)") is None and C.wrapper_of("binary") is None
    assert C.wrapper_of("decimal(10,2)") == "DecimalWrapper" and C.wrapper_of("varchar(5)") == "StringWrapper"


def test_v9_records_delete_blocks_and_index_definitions_are_hudis(tmp_path):
    """Index version 2 (table version 9): every record of the base files Hudi 1.2 wrote re-encoded
    from its values with the column's value type is byte-equal; so are the initial empty blocks
    (instant 00000000000000001), the restore's delete blocks and the index definitions (`V2`)."""
    prefix = ".hoodie/metadata/column_stats/"
    with zipfile.ZipFile(V9_FIXTURE) as z:
        files = {n[len(prefix):]: z.read(n) for n in z.namelist() if n.startswith(prefix) and not n.endswith("/")}
        index = z.read(".hoodie/.index_defs/index.json")
    from hudi_format import hfile

    records = deletes = inits = 0
    value_types = set()
    for name, data in sorted(files.items()):
        parsed = C.parse_name(name)
        if parsed is None:
            continue
        group, kind, base, _version = parsed
        if kind == "base":
            assert base == C.init_instant(9) == C.V2_INIT_INSTANT
            for row, value in hfile.cells(data, name):
                s = C.decode_stats(value)
                ct = C.column_type(V9_TYPES[s["columnName"]], C.index_version(9))
                assert ct is not None and s["valueType"] == (ct.value_type, ct.type_info), s
                value_types.add(s["valueType"])
                [partition] = [p for p in ("p=la", "p=sf", "p=nyc")
                               if C.record_key(s["columnName"], p, s["fileName"]) == row.decode()]
                assert C.file_group_of(row.decode()) == group
                rec = C.ColumnStatsRecord(partition, s["fileName"], s["columnName"], ct.wrapper, s["minValue"][1],
                                          s["maxValue"][1], s["nullCount"], s["valueCount"], s["totalSize"],
                                          s["totalUncompressedSize"], ct.value_type, ct.type_info)
                assert C.encode_record(rec) == value, s
                records += 1
        elif base == C.V2_INIT_INSTANT:
            assert data == C.delete_block(base, [], with_schema=False)
            inits += 1
        else:
            for block in log_file.blocks(data, name):
                assert block.block_type == log_file.DELETE
                keys = log_file.deleted_keys(block, name)
                assert all(C.file_group_of(k) == group for k in keys) and keys == sorted(keys)
                [ours] = log_file.blocks(C.delete_block(block.instant or "", keys))
                # the schema in the header: Hudi's with its docs, ours without (the same parsing form)
                assert ours.content == block.content and ours.instant == block.instant
                assert _canonical(ours.header[log_file.SCHEMA]) == _canonical(block.header[log_file.SCHEMA])
                deletes += 1
    assert records == 49 and inits == 2 and deletes == 2
    assert value_types == {(7, None), (4, None)}  # STRING, LONG
    import json

    fields = json.loads(index)["indexDefinitions"]["column_stats"]["sourceFields"]
    assert C.index_definitions(fields, 2) == index


def _canonical(schema: str) -> str:
    import json

    from fastavro.schema import to_parsing_canonical_form

    return to_parsing_canonical_form(json.loads(schema))


def test_v2_value_types_and_their_wrappers():
    """Index version 2 as Hudi 1.2's ValueType writes values: dates as IntWrapper days, decimals as
    BytesWrapper of the unscaled value (Java's BigInteger.toByteArray) with "precision,scale"."""
    assert C.index_version(6) == C.index_version(8) == 1 and C.index_version(9) == 2
    assert C.column_type("date", 2) == C.ColumnType("IntWrapper", 12)
    assert C.column_type("timestamp", 2) == C.ColumnType("LongWrapper", 16)
    assert C.column_type("decimal(38,18)", 2) == C.ColumnType("BytesWrapper", 10, "38,18")
    assert C.column_type("decimal(38,18)", 1) is None and C.column_type("binary", 2) is None
    assert C.column_type("smallint", 2) == C.ColumnType("IntWrapper", 3)
    for n, raw in ((0, b"\x00"), (127, b"\x7f"), (128, b"\x00\x80"), (-128, b"\x80"), (-129, b"\xff\x7f"),
                   (-1, b"\xff"), (32768, b"\x00\x80\x00")):
        assert C.unscaled_bytes(Decimal(n).scaleb(-2), 2) == raw, n
    rec = C.ColumnStatsRecord("", "f.parquet", "c", "BytesWrapper", Decimal("1.25"), Decimal("-3.5"), 0, 2,
                              value_type=10, type_info="10,2")
    got = C.decode_stats(C.encode_record(rec))
    assert got["minValue"] == ("BytesWrapper", b"\x7d") and got["maxValue"] == ("BytesWrapper", b"\xfe\xa2")
    assert got["valueType"] == (10, "10,2")
    rec = C.ColumnStatsRecord("", "f.parquet", "d", "IntWrapper", dt.date(1970, 1, 3), dt.date(1970, 1, 5), 0, 2,
                              value_type=12)
    got = C.decode_stats(C.encode_record(rec))
    assert got["minValue"] == ("IntWrapper", 2) and got["valueType"] == (12, None)


def test_column_sizes_are_hudis(tmp_path):
    """Each column's sizes as hudi_format/parquet_stats.py reads them from a base file's footer equal
    the `totalSize` and `totalUncompressedSize` Hudi 1.2 wrote for it (the base files of
    cow_v9_restored.zip, whose data files are kept)."""
    import io

    import pyarrow as pa
    import pyarrow.parquet as pq

    from hudi_format import hfile
    from hudi_format.parquet_stats import footer_stats

    prefix = ".hoodie/metadata/column_stats/"
    checked = 0
    sizes: dict[str, dict[str, tuple[int, int]]] = {}  # file -> column -> ours
    with zipfile.ZipFile(V9_FIXTURE) as z:
        data_files = {n.rsplit("/", 1)[-1]: n for n in z.namelist() if n.endswith(".parquet")}
        for name in z.namelist():
            if not (name.startswith(prefix) and name.endswith(".hfile")):
                continue
            for _row, value in hfile.cells(z.read(name), name):
                s = C.decode_stats(value)
                if s["fileName"] not in data_files:
                    continue
                if s["fileName"] not in sizes:
                    raw = z.read(data_files[s["fileName"]])
                    meta = pq.ParquetFile(io.BytesIO(raw)).metadata
                    columns = [meta.schema.column(j).path for j in range(meta.num_columns)]
                    sizes[s["fileName"]] = {e["column"]: (e["size"], e["usize"]) for e in footer_stats(
                        meta, pa.table({}), columns)}  # no float columns: no NaN to look for
                ours = sizes[s["fileName"]][s["columnName"]]
                assert ours == (s["totalSize"], s["totalUncompressedSize"]), s
                assert s["totalSize"] > 0
                checked += 1
    assert checked >= 20


MOR_V9_FIXTURE = V9_FIXTURE.with_name("mor_v9_restored.zip")


def test_v9_records_of_log_files_are_hudis():
    """What Hudi 1.2 writes into `column_stats` for a merge-on-read table's log files (the facts
    docs/hudi.md "Statistics of log files" follows; the server's: test_metadata_column_stats.py): a record per
    (log file, column) as for base files, keyed by the log file's name, its bounds and counts over
    the log's data records, sizes 0; re-encoded from its values by our encoder byte-equal. The
    restore deleted the records of the log files it rolled back by key, as those of base files."""
    from hudi_format import hfile

    prefix = ".hoodie/metadata/column_stats/"
    with zipfile.ZipFile(MOR_V9_FIXTURE) as z:
        names = z.namelist()
        files = {n[len(prefix):]: z.read(n) for n in names if n.startswith(prefix) and not n.endswith("/")}
        logs = {n.rsplit("/", 1)[1]: z.read(n) for n in names if ".log." in n and not n.startswith(".hoodie/")}
    assert len(logs) == 2, sorted(logs)
    of_logs: dict[str, dict[str, dict]] = {}
    deleted: set[str] = set()
    for name, data in sorted(files.items()):
        parsed = C.parse_name(name)
        if parsed is None:
            continue
        if parsed[1] == "base":
            for row, value in hfile.cells(data, name):
                s = C.decode_stats(value)
                if ".log." not in s["fileName"]:
                    continue
                [partition] = [p for p in ("p=la", "p=sf", "p=nyc")
                               if C.record_key(s["columnName"], p, s["fileName"]) == row.decode()]
                assert s["totalSize"] == 0 and s["totalUncompressedSize"] == 0 and s["isTightBound"] is False, s
                ct = C.column_type(V9_TYPES[s["columnName"]], C.index_version(9))
                assert ct is not None and s["valueType"] == (ct.value_type, ct.type_info), s
                rec = C.ColumnStatsRecord(partition, s["fileName"], s["columnName"], ct.wrapper, s["minValue"][1],
                                          s["maxValue"][1], s["nullCount"], s["valueCount"], 0, 0,
                                          ct.value_type, ct.type_info)
                assert C.encode_record(rec) == value, s
                of_logs.setdefault(s["fileName"], {})[s["columnName"]] = s
        else:
            for block in log_file.blocks(data, name):
                if block.block_type == log_file.DELETE:
                    deleted.update(log_file.deleted_keys(block, name))
    # the live log files: one upsert each, the statistics of its one data record
    for name, data in logs.items():
        records = [r for b in log_file.blocks(data, name) if b.block_type == log_file.AVRO_DATA
                   for r in log_file.data_block_records(b, name)]
        assert len(records) == 1, (name, records)
        stats = of_logs[name]
        assert set(stats) == set(V9_TYPES), (name, sorted(stats))
        for column, s in stats.items():
            assert s["minValue"][1] == s["maxValue"][1] == records[0][column], (name, column, s)
            assert (s["nullCount"], s["valueCount"]) == (0, 1), (name, column, s)
    # the rolled-back log files (instant 20261202193129502): indexed at the initialization, deleted
    # by the restore key by key (their records stay in the base files, the delete blocks drop them)
    rolled_back = {f for f in of_logs if "_20261202193129502.log." in f}
    assert len(rolled_back) == 2 and rolled_back.isdisjoint(logs)
    for f in rolled_back:
        for column in of_logs[f]:
            assert any(C.record_key(column, p, f) in deleted for p in ("p=la", "p=sf")), (f, column)
