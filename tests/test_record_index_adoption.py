"""Adoption of the record-level index (RFC-08) for tables imported from storage, on every backend:
import-hudi builds it from the latest file slices' `_hoodie_record_key`s (equal to what hudi-rs
reads), validate checks it against storage and reports a damaged one, repair rebuilds it;
merge-on-read tables get theirs from base files and the data blocks of their log files (equal to
what hudi-rs's file group reader merges, rolled-back blocks left out)."""

from __future__ import annotations

import struct
import uuid

import pyarrow as pa
import pytest

from adapter.commands.import_hudi import import_hudi_table
from client import HudiMetastoreClient, file_group_keys
from tests.harness.hudi_tables import run_cli, table_copy
from thrift_idl.hive_metastore.ttypes import Database

hudi = pytest.importorskip("hudi")


def _storage_keys(base: str) -> dict:
    t = pa.Table.from_batches(hudi.HudiTable(base).read())
    return {r["_hoodie_record_key"]: (r["_hoodie_partition_path"], r["_hoodie_file_name"].split("_")[0],
                                      r["_hoodie_commit_time"])
            for r in t.select(["_hoodie_record_key", "_hoodie_partition_path", "_hoodie_file_name",
                               "_hoodie_commit_time"]).to_pylist()}


@pytest.fixture
def imported(our_server, tmp_path):
    uri = f"thrift://127.0.0.1:{our_server}"
    db = f"ria_{uuid.uuid4().hex[:8]}"
    with HudiMetastoreClient(uri) as c:
        c.create_database(Database(name=db, description="", locationUri=None, parameters={}))

        def make(name: str):
            base = table_copy(name, tmp_path)
            return uri, db, c, base, import_hudi_table(uri, base, db, "t")

        yield make


def test_import_builds_validate_checks_repair_rebuilds(imported):
    uri, db, c, base, report = imported("cow_v6_complexkeygen_hivestyle")
    want = _storage_keys(base)
    assert want and report.index_keys == len(want)
    assert c.get_hudi_table(db, "t").properties["hoodie.index.type"] == "RECORD_INDEX"
    keys = sorted(want)
    assert dict(zip(keys, c.lookup_record_keys(db, "t", keys))) == want
    tbl = f"{db}.t"
    ok = run_cli("validate", tbl, "--metastore", uri)
    assert ok.returncode == 0, ok.stdout + ok.stderr

    # damage the index: one key gone, one key in a wrong file group
    p, fid, ts = want[keys[0]]
    c.load_record_index(db, "t", [file_group_keys(p, fid, inserted=keys[2:], instant=ts)], reset=True)
    c.load_record_index(db, "t", [file_group_keys(p, "elsewhere", inserted=[keys[1]], instant=ts)])
    bad = run_cli("validate", tbl, "--metastore", uri)
    assert bad.returncode == 1
    assert f"record-index: key {keys[0]!r}" in bad.stdout and "missing in the index" in bad.stdout
    assert f"record-index: key {keys[1]!r}" in bad.stdout and "/elsewhere in the index" in bad.stdout

    fixed = run_cli("repair", tbl, "--yes", "--metastore", uri)
    assert fixed.returncode == 0, fixed.stdout + fixed.stderr
    assert "built the record index" in fixed.stdout
    assert dict(zip(keys, c.lookup_record_keys(db, "t", keys))) == want
    assert run_cli("validate", tbl, "--metastore", uri).returncode == 0


def _slice_keys_by_hudi_rs(base: str) -> dict:
    """key -> (partition, file id, commit time) as hudi-rs merges each latest file slice."""
    table = hudi.HudiTable(base)
    reader = table.create_file_group_reader_with_options()
    out = {}
    for s in table.get_file_slices():
        batch = reader.read_file_slice(s)
        t = pa.Table.from_batches(batch if isinstance(batch, list) else [batch])
        for key, ts in zip(t.column("_hoodie_record_key").to_pylist(), t.column("_hoodie_commit_time").to_pylist()):
            out[key] = (s.partition_path, s.file_id, ts)
    return out


@pytest.mark.parametrize("fixture", ["mor_v6_trips_8i1u", "mor_v6_nonpartitioned_rollback",
                                     "mor_v6_simplekeygen_nonhivestyle", "mor_v6_delete_blocks",
                                     "mor_v8_delete_blocks", "mor_v8_hfile_blocks"])
def test_merge_on_read_is_adopted_with_the_keys_of_its_log_files(imported, fixture):
    uri, db, c, base, report = imported(fixture)
    want = _slice_keys_by_hudi_rs(base)
    assert report.index_note is None and report.index_keys == len(want) > 0
    assert any(s.logFiles for s in c.get_latest_file_slices(db, "t"))
    keys = sorted(want)
    assert dict(zip(keys, c.lookup_record_keys(db, "t", keys))) == want
    ok = run_cli("validate", f"{db}.t", "--metastore", uri)
    assert ok.returncode == 0, ok.stdout + ok.stderr
    if fixture.endswith(("delete_blocks", "hfile_blocks")):  # k1, k4 deleted; k5 deleted, then written again
        assert {"k1", "k4"}.isdisjoint(want) and {"k0", "k5", "k9"} <= set(want)
        assert c.lookup_record_keys(db, "t", ["k1", "k4"]) == [None, None]


def test_kryo_delete_blocks_of_hudi_before_0_14_remove_their_keys(imported):
    """A table Hudi 0.12.2 wrote (version-2 delete blocks: Kryo) and Hudi 0.15.0 upgraded to version
    6 with one more upsert: adopted with the index of the keys Hudi 0.15.0 reads back (hudi-rs
    refuses version-2 blocks): insert k0..k9 (odd keys in `a`, even in `b`), upsert k0..k2, delete
    k1, k4, k5, upsert k5, then (0.15.0) upsert k9."""
    uri, db, c, base, report = imported("mor_v6_kryo_delete_blocks")
    instants = sorted(i.timestamp for i in c.list_instants(db, "t", states=["COMPLETED"]))
    assert len(instants) == 5
    insert, upsert, _delete, again, last = instants
    groups = {s.partitionPath: s.fileId for s in c.get_latest_file_slices(db, "t")}
    written = {"k0": upsert, "k2": upsert, "k3": insert, "k5": again, "k6": insert, "k7": insert,
               "k8": insert, "k9": last}
    want = {k: (p, groups[p], ts) for k, ts in written.items() for p in ["a" if int(k[1]) % 2 else "b"]}
    assert report.index_note is None and report.index_keys == len(want), report.index_note
    keys = sorted(want)
    assert dict(zip(keys, c.lookup_record_keys(db, "t", keys))) == want
    assert c.lookup_record_keys(db, "t", ["k1", "k4"]) == [None, None]
    ok = run_cli("validate", f"{db}.t", "--metastore", uri)
    assert ok.returncode == 0, ok.stdout + ok.stderr


def _block(block_type: int, header: dict[int, str], content: bytes = b"") -> bytes:
    """One log block in Hudi's layout (hudi_format/log_file.py)."""
    import struct

    def _map(m: dict[int, str]) -> bytes:
        out = struct.pack(">i", len(m))
        for k, v in m.items():
            out += struct.pack(">ii", k, len(v.encode())) + v.encode()
        return out

    body = struct.pack(">ii", 1, block_type) + _map(header) + struct.pack(">q", len(content)) + content + _map({})
    body += struct.pack(">q", len(body) + 14)
    return b"#HUDI#" + struct.pack(">q", len(body)) + body


def _delete_content(version: int, records: bytes = b"") -> bytes:
    return struct.pack(">ii", version, len(records)) + records


def _avro_long(n: int) -> bytes:
    z, out = (n << 1) ^ (n >> 63), b""
    while z > 0x7F:
        out += bytes([(z & 0x7F) | 0x80])
        z >>= 7
    return out + bytes([z])


def _delete_records(*records: tuple[str, int | None]) -> bytes:
    """A HoodieDeleteRecordList: (key, ordering value as an IntWrapper or None) per record."""
    out = _avro_long(len(records))
    for key, ordering in records:
        out += b"\x02" + _avro_long(len(key)) + key.encode() + b"\x00"  # key; no partition path
        out += b"\x00" if ordering is None else _avro_long(2) + _avro_long(ordering)
    return out + b"\x00"


@pytest.mark.parametrize("content, why", [
    (_delete_content(1, b"\xac\xed\x00\x05"), "version 1 (Java-serialized keys) is not read"),
    (_delete_content(2, b"\x01\x00garbage"), "Kryo delete block"),
    (_delete_content(3, _delete_records(("k", None), ("x", 7))), "orders its deletes by value"),
    (_delete_content(3, _delete_records(("k", None)))[:-3], "is not a HoodieDeleteRecordList"),
])
def test_delete_blocks_not_read_leave_no_index_and_say_why(our_server, tmp_path, content, why):
    """A delete block the index cannot apply for sure: the table is adopted without an index, and
    the report names the log file and why; a cut-short log file is refused the same way."""
    from pathlib import Path

    from hudi_format import log_file
    from hudi_format.errors import HudiFormatError

    base = table_copy("mor_v6_trips_8i1u", tmp_path)
    [log] = [p for p in Path(base).rglob(".*.log.*")]
    instant = next(iter(log_file.blocks(log.read_bytes()))).instant
    with open(log, "ab") as fh:
        fh.write(_block(log_file.DELETE, {log_file.INSTANT_TIME: instant}, content))
    uri = f"thrift://127.0.0.1:{our_server}"
    db = f"ria_{uuid.uuid4().hex[:8]}"
    with HudiMetastoreClient(uri) as c:
        c.create_database(Database(name=db, description="", locationUri=None, parameters={}))
        report = import_hudi_table(uri, base, db, "t")
        assert report.index_keys is None and why in (report.index_note or ""), report.index_note
        assert log.name in report.index_note
        assert "hoodie.index.type" not in (c.get_hudi_table(db, "t").properties or {})
    whole = log.read_bytes()
    with pytest.raises(HudiFormatError, match="cut short"):
        list(log_file.blocks(whole[:-5], log.name))


def test_delete_block_of_default_ordering_deletes_in_log_order():
    """Keys deleted by a block with Hudi's default ordering value (IntWrapper 0) or none."""
    from hudi_format import log_file

    block = log_file.LogBlock(log_file.DELETE, {}, _delete_content(3, _delete_records(("a", 0), ("b", None))))
    assert log_file.deleted_keys(block) == ["a", "b"]


@pytest.mark.parametrize("fixture", ["cow_v6_complexkeygen_hivestyle", "cow_v6_simplekeygen_nonhivestyle"])
def test_table_without_meta_fields_gets_keys_from_its_key_generator(our_server, tmp_path, fixture):
    """The fixture's files rewritten without the `_hoodie_*` columns and its config saying so: the
    keys computed from the record key fields equal the keys Apache Hudi's writer stored."""
    from pathlib import Path

    import pyarrow.parquet as pq

    base = table_copy(fixture, tmp_path)
    want = {k: v[:2] for k, v in _storage_keys(base).items()}
    for f in Path(base).rglob("*.parquet"):
        t = pq.read_table(f)
        pq.write_table(t.select([n for n in t.schema.names if not n.startswith("_hoodie_")]), f)
    props = Path(base, ".hoodie", "hoodie.properties")
    props.write_text(props.read_text() + "hoodie.populate.meta.fields=false\n")
    uri = f"thrift://127.0.0.1:{our_server}"
    db = f"ria_{uuid.uuid4().hex[:8]}"
    with HudiMetastoreClient(uri) as c:
        c.create_database(Database(name=db, description="", locationUri=None, parameters={}))
        report = import_hudi_table(uri, base, db, "t")
        assert report.index_note is None and report.index_keys == len(want) > 0
        keys = sorted(want)
        assert {k: at[:2] for k, at in zip(keys, c.lookup_record_keys(db, "t", keys))} == want
