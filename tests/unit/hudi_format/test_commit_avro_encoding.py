"""Write stats encoded straight from the JSON document (hudi_format/avro_metadata.py `stat_bytes`,
`commit_bytes`: version 8+ commit files, version 6's archive log) give exactly the bytes fastavro
writes for the record `commit_record` builds, on random stats of every field kind, with values a
JSON writer may send (numbers as text, "null", booleans, non-ASCII text, values past a long)."""

from __future__ import annotations

import io

import fastavro
from hypothesis import given, settings
from hypothesis import strategies as st

from hudi_format.avro_metadata import (
    _WRITE_STAT,
    COMMIT_METADATA_SCHEMA,
    REPLACE_COMMIT_METADATA_SCHEMA,
    _parsed,
    _write_stat,
    commit_bytes,
    commit_record,
    record_bytes,
    stat_bytes,
)

_text = st.text(max_size=12)
_number = st.one_of(st.integers(-(1 << 70), 1 << 70), st.integers(-300, 300), st.just("null"), st.booleans(),
                    st.integers(-(1 << 40), 1 << 40).map(str), st.floats(-1e6, 1e6), st.just("x"))


def _field(name: str, kind: object) -> st.SearchStrategy:
    if kind == "string":
        return st.one_of(_text, st.integers(-5, 5))
    if kind in ("long", "int"):
        return _number
    if name == "logFiles":
        return st.lists(_text, max_size=3)
    if name == "cdcStats":
        return st.dictionaries(_text, st.one_of(st.integers(-(1 << 62), 1 << 62), st.integers(0, 9).map(str)),
                               max_size=3)
    return st.fixed_dictionaries({}, optional={k: _number for k in ("totalScanTime", "totalCreateTime",
                                                                   "totalUpsertTime")})


_stat = st.fixed_dictionaries({}, optional={
    f["name"]: st.one_of(st.none(), _field(f["name"], f["type"][1])) for f in _WRITE_STAT["fields"]})


def _fastavro(stat: dict) -> bytes:
    out = io.BytesIO()
    fastavro.schemaless_writer(out, _parsed(_WRITE_STAT), _write_stat(stat))
    return out.getvalue()


@settings(max_examples=200, deadline=None)
@given(_stat)
def test_a_stat_is_encoded_as_fastavro_encodes_its_record(stat):
    try:
        want = _fastavro(stat)
    except (ValueError, OverflowError) as ex:  # fastavro refuses it: so does the fast path
        try:
            stat_bytes(stat)
        except (ValueError, OverflowError) as got:
            assert type(got) is type(ex)
        else:
            raise AssertionError(f"encoded what fastavro refuses ({ex!r})") from None
        return
    assert stat_bytes(stat) == want


@settings(max_examples=60, deadline=None)
@given(st.dictionaries(_text, st.one_of(st.none(), st.lists(_stat.filter(lambda s: _encodable(s)), max_size=3)),
                       max_size=3),
       st.booleans(), st.dictionaries(_text, _text, max_size=2), st.dictionaries(_text, st.lists(_text, max_size=2),
                                                                               max_size=2))
def test_a_commit_is_encoded_as_record_bytes_encodes_its_record(stats, replace, extra, replaced):
    doc = {"partitionToWriteStats": stats, "compacted": False, "operationType": "UPSERT", "extraMetadata": extra,
           "partitionToReplaceFileIds": replaced}
    schema = REPLACE_COMMIT_METADATA_SCHEMA if replace else COMMIT_METADATA_SCHEMA
    assert commit_bytes(doc, replace) == record_bytes(schema, commit_record(doc, replace))


def _encodable(stat: dict) -> bool:
    try:
        _fastavro(stat)
    except (ValueError, OverflowError):
        return False
    return True


def test_an_empty_document_and_one_with_no_stats():
    for doc in ({}, {"partitionToWriteStats": {}}, {"partitionToWriteStats": {"p": []}},
                {"partitionToWriteStats": {"p": None}}):
        for replace in (False, True):
            schema = REPLACE_COMMIT_METADATA_SCHEMA if replace else COMMIT_METADATA_SCHEMA
            assert commit_bytes(doc, replace) == record_bytes(schema, commit_record(doc, replace))


def test_for_storage_reads_what_orjson_refuses_as_the_json_module_does():
    """A version 8+ commit file from a document orjson refuses (NaN, which Java's JSON writers may
    write: the stat's field is then null, as in fastavro's record) and from plain JSON; not JSON:
    as stored."""
    import json

    from hudi_format.avro_metadata import container_file, for_storage

    for text in ('{"partitionToWriteStats": {"p": [{"fileId": "f", "numWrites": NaN}]}}',
                 '{"partitionToWriteStats": {"p": [{"fileId": "f", "numWrites": 3}]}, "compacted": false}'):
        doc = json.loads(text)
        assert for_storage("commit", 3, text.encode()) == container_file(COMMIT_METADATA_SCHEMA,
                                                                          commit_bytes(doc, False))
    assert for_storage("commit", 3, b"\xff not json") == b"\xff not json"


_EDGES = [0, 63, 64, 8191, 8192, 1048575, 1048576, (1 << 62) - 1, 1 << 62, (1 << 63) - 1]


def test_varints_at_every_length_edge_are_fastavros():
    """Longs and text lengths at the edges of a varint's one, two, three and more bytes."""
    for n in _EDGES + [-v for v in _EDGES] + [-(1 << 63)]:
        stat = {"numWrites": n, "fileId": "x" * (abs(n) % 20000), "totalLogBlocks": str(n)}
        assert stat_bytes(stat) == _fastavro(stat), n


def test_a_commit_parsed_then_encoded_shares_one_document_and_changes_it_not():
    """parse_commit and for_storage of the same bytes read one JSON document (shared_json); both
    leave it as it was, and the file is the one encoded from a fresh copy."""
    import orjson

    from hudi_format.avro_metadata import for_storage
    from hudi_format.commit_metadata import parse_commit, shared_json

    stats = {"p=1": [{"fileId": "f1", "path": "p=1/f1_0-1-2_20260101000000001.parquet", "numWrites": 3,
                      "partitionPath": "p=1", "prevCommit": "null", "fileSizeInBytes": 10}]}
    data = orjson.dumps({"partitionToWriteStats": stats, "operationType": "UPSERT", "extraMetadata": {"k": "v"}})
    assert parse_commit(data).write_stats
    got = for_storage("commit", 3, data)
    assert shared_json(data) is shared_json(data) == orjson.loads(data)
    assert got == for_storage("commit", 3, bytes(bytearray(data)))
