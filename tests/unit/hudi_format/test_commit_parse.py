"""parse_commit's write stats and parse_file_name: the fast paths take what the full checks take."""

import json

import pytest

from hudi_format.commit_metadata import WriteStat, parse_commit
from hudi_format.errors import InvalidMetadata
from hudi_format.file_slice import parse_file_name

TS = "20260101000000001"


def _meta(stats: dict) -> bytes:
    return json.dumps({"partitionToWriteStats": stats, "operationType": "UPSERT"}).encode()


def test_write_stats_as_given():
    meta = parse_commit(_meta({"p=1": [
        {"fileId": "f1", "path": "p=1/f1_0-1-2_" + TS + ".parquet", "partitionPath": "p=1", "prevCommit": "null",
         "fileSizeInBytes": 10, "totalWriteBytes": 99},
        {"fileId": "f2", "path": "p=1/f2_0-1-2_" + TS + ".parquet", "prevCommit": TS, "totalWriteBytes": "7"},
        {"fileId": "f3", "path": "null"},
        {"fileId": "f4", "path": "/p=1/f4_0-1-2_" + TS + ".parquet", "partitionPath": "q", "fileSizeInBytes": None,
         "totalWriteBytes": None}]}))
    assert meta.write_stats == [
        WriteStat("p=1", "p=1/f1_0-1-2_" + TS + ".parquet", "f1", 10, None),
        WriteStat("p=1", "p=1/f2_0-1-2_" + TS + ".parquet", "f2", 7, TS),
        WriteStat("q", "/p=1/f4_0-1-2_" + TS + ".parquet", "f4", 0, None)]
    assert meta.write_stats[1].prev_commit == TS and meta.write_stats[2].partition_path == "q"


@pytest.mark.parametrize("path, error", [
    ("p/../x", "leaves the table's base path"), ("p/a\x01b", "control character"), ("p/a\x7f", "control character"),
    (5, "must be a string")])
def test_bad_write_stat_paths(path, error):
    with pytest.raises(InvalidMetadata, match=error):
        parse_commit(_meta({"p": [{"fileId": "f", "path": path}]}))


def test_unusual_paths_that_stay_inside():
    names = ["p/a..b_0_" + TS + ".parquet", "p/a\u00a0b_0_" + TS + ".parquet", "p/..a"]
    meta = parse_commit(_meta({"p": [{"fileId": "f", "path": n} for n in names]}))
    assert [s.path for s in meta.write_stats] == names
    with pytest.raises(InvalidMetadata, match="write stat without fileId"):
        parse_commit(_meta({"p": [{"path": "p/x"}]}))
    with pytest.raises(InvalidMetadata, match="control character"):
        parse_commit(_meta({"p": [{"fileId": "f", "path": "p/x", "partitionPath": "p\n"}]}))


@pytest.mark.parametrize("name, parsed", [
    ("f1_0-1-2_" + TS + ".parquet", ("f1", TS, False, None)),
    ("f1_0-1-2_20260101000000.orc", ("f1", "20260101000000", False, None)),
    ("f1_0-1-2_" + TS + ".parquet\n", ("f1", TS, False, None)),  # `$` takes a final newline
    ("f1_0-1-2_" + "\u0663" * 14 + ".parquet", ("f1", "\u0663" * 14, False, None)),  # \d: any decimal digit
    (".f1_0-1_" + TS + ".parquet", (".f1", TS, False, None)),  # a dot, and no log file: a base file name
    (".f1_" + TS + ".log.3_1-0-1", ("f1", TS, True, 3)),
    (".f_x_" + TS + ".log.12", ("f_x", TS, True, 12)),
    ("f1_0-1-2_2026010100000.parquet", None), ("f1_0-1-2_202601010000000012.parquet", None),
    ("f1__" + TS + ".parquet", None), ("_t_" + TS + ".parquet", None), ("f1_t_" + TS + ".", None),
    ("f1_t_" + TS + ".par-quet", None), ("f1_t_" + TS + ".\u00e9", None), ("f1_t_u_" + TS + ".parquet", None),
    ("f1_t_" + TS + "parquet", None), ("f1_t_" + TS[:-1] + "x.parquet", None), ("", None)])
def test_file_names(name, parsed):
    if parsed is None:
        with pytest.raises(ValueError, match="not a Hudi data file name"):
            parse_file_name(name)
    else:
        assert parse_file_name(name) == parsed
