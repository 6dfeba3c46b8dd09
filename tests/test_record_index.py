"""Record-level index (RFC-08) through a real server process on every backend: commits carry key
blocks and change the index in their transaction, lookups of more than 100,000 keys per call,
global uniqueness (a concurrent insert of the same key is a CommitConflictException), bad input
refused with nothing changed, and the `lookup-keys` CLI."""

from __future__ import annotations

import json
import uuid

import pytest

from client import HudiMetastoreClient, file_group_keys
from hudi_format.record_key_codec import decode_keys, encode_keys
from hudi_format.table_config import HudiTableConfig
from tests.harness.hudi_tables import run_cli
from thrift_idl.hive_metastore.ttypes import Database, InvalidObjectException, InvalidOperationException
from thrift_idl.hudi_metastore.ttypes import CommitConflictException, FileGroupKeys


def _commit_json(ts: str, files, replaced=None, op="UPSERT") -> str:
    stats: dict = {}
    for partition, fid in files:
        stats.setdefault(partition, []).append({
            "fileId": fid, "path": f"{partition}/{fid}_0-1-1_{ts}.parquet", "partitionPath": partition,
            "fileSizeInBytes": 100, "prevCommit": "null", "numWrites": 1})
    doc = {"partitionToWriteStats": stats, "compacted": False, "extraMetadata": {}, "operationType": op}
    if replaced:
        doc["partitionToReplaceFileIds"] = replaced
    return json.dumps(doc)


class Table:
    def __init__(self, port: int, tmp_path, index: bool = True):
        self.uri = f"thrift://127.0.0.1:{port}"
        self.c = HudiMetastoreClient(self.uri)
        self.db = f"ri_{uuid.uuid4().hex[:8]}"
        self.c.create_database(Database(name=self.db, description="", locationUri=None, parameters={}))
        props = {"hoodie.index.type": "RECORD_INDEX"} if index else {}
        self.c.register_hudi_table(HudiTableConfig(
            db_name=self.db, table_name="t", table_type="COPY_ON_WRITE", record_key_fields=["id"],
            partition_fields=["p"], hive_style_partitioning=True, base_path=str(tmp_path / "t"), properties=props),
            [("id", "string"), ("p", "string")])

    def begin(self, action="commit") -> str:
        ts = self.c.create_instant(self.db, "t", None, action, b"", 60).timestamp
        self.c.transition_to_inflight(self.db, "t", ts, action)
        return ts

    def complete(self, ts, keys, replaced=None, action="commit"):
        files = sorted({(k.partitionPath, k.fileId) for k in keys})
        return self.c.complete_instant(self.db, "t", ts, action, _commit_json(ts, files, replaced), keys)

    def write(self, keys, replaced=None, action="commit") -> str:
        ts = self.begin(action)
        self.complete(ts, keys, replaced, action)
        return ts

    def where(self, keys):
        return self.c.lookup_record_keys(self.db, "t", keys)

    def count(self):
        return self.c.get_hudi_table_stats(self.db, "t").recordIndexKeys


@pytest.fixture
def table(our_server, tmp_path):
    t = Table(our_server, tmp_path)
    yield t
    t.c.close()


def test_key_blocks_round_trip():
    keys = ["", "a", "ü" * 200, "x" * 70_000, "k\n\t,1"]
    assert decode_keys(encode_keys(keys)) == keys
    assert decode_keys(encode_keys([])) == []
    ascii_only = ["", "a", "key-0000000001", "y" * 127, "k\n\t,1"]  # one text sliced (lengths < 128)
    assert decode_keys(encode_keys(ascii_only)) == ascii_only
    assert decode_keys(encode_keys(["y" * 128, "z"])) == ["y" * 128, "z"]  # a two-byte length
    with pytest.raises(ValueError):
        decode_keys(b"not zlib")
    with pytest.raises(ValueError):
        import zlib
        decode_keys(zlib.compress(b"\x05ab"))  # ends inside a key


def test_commits_maintain_the_index_and_lookups_take_100k_keys(table):
    n = 120_000
    big = [f"key-{i:07d}" for i in range(n)]
    t1 = table.write([file_group_keys("p=a", "fa", inserted=big[:60_000]),
                      file_group_keys("p=b", "fb", inserted=big[60_000:])])
    found = table.where(big + ["nope"])
    assert len(found) == n + 1 and found[-1] is None
    assert found[0] == ("p=a", "fa", t1) and found[n - 1] == ("p=b", "fb", t1)
    assert all(f is not None for f in found[:n])
    assert table.count() == n
    # one call of 120,000 keys
    r = table.c.call("lookup_record_keys", table.db, "t", encode_keys(big))
    assert len(r.fileGroupOfKey) == n and -1 not in r.fileGroupOfKey

    # update in place (the key keeps the instant that put it there, as in Hudi's index), move p=b -> p=a, delete
    t2 = table.write([file_group_keys("p=a", "fa", updated=["key-0000001"], inserted=["key-0060000"]),
                      file_group_keys("p=b", "fb", deleted=["key-0060000", "key-0060001"])])
    assert table.where(["key-0000001", "key-0000002", "key-0060000", "key-0060001"]) == [
        ("p=a", "fa", t1), ("p=a", "fa", t1), ("p=a", "fa", t2), None]
    assert table.count() == n - 1

    # insert_overwrite of p=a: its keys leave with the replaced file group
    t3 = table.write([file_group_keys("p=a", "fa2", inserted=["key-0000001"])], replaced={"p=a": ["fa"]},
                     action="replacecommit")
    assert table.where(["key-0000001", "key-0000002", "key-0060002"]) == [("p=a", "fa2", t3), None, ("p=b", "fb", t1)]
    assert table.count() == 1 + (n - 60_000 - 2)

    # delete_partition of p=b (the server's partition drop)
    table.c.drop_partition(table.db, "t", ["b"], True)
    assert table.where(["key-0060002", "key-0000001"]) == [None, ("p=a", "fa2", t3)]
    assert table.count() == 1


def test_lookups_of_keys_with_separators_and_quotes(table):
    """PostgreSQL sends looked-up keys as one string split on the unit separator, or as arrays when a
    key holds it: both give each key its own place, whatever characters the keys hold."""
    plain = ['a,b', '{x}', 'q"uote', "back\\slash", "sp ace", "NULL", "\u00fc\n\t", "e'sc"]
    odd = ["with\x1fsep", "\x1f", "z"]
    ts = table.write([file_group_keys("p=a", "fp", inserted=plain), file_group_keys("p=b", "fo", inserted=odd)])
    assert table.where(plain + ["a", "b"]) == [("p=a", "fp", ts)] * len(plain) + [None, None]
    assert table.where(odd + plain[:1]) == [("p=b", "fo", ts)] * len(odd) + [("p=a", "fp", ts)]
    te = table.write([file_group_keys("p=c", "fe", inserted=[""])])  # the empty key, alone in its shard
    assert table.where([""]) == [("p=c", "fe", te)]


def test_concurrent_inserts_of_one_key_second_commit_conflicts(table):
    table.write([file_group_keys("p=a", "f0", inserted=["old"])])
    first, second = table.begin(), table.begin()
    table.complete(first, [file_group_keys("p=a", "f1", inserted=["k1", "shared"])])
    with pytest.raises(CommitConflictException) as exc:
        table.complete(second, [file_group_keys("p=b", "f2", inserted=["k2", "shared"])])
    assert exc.value.conflictingInstants == [first]
    assert "shared" in exc.value.message
    # nothing of the losing commit is left: no key, no file, and it is to be rolled back
    assert table.where(["k2", "shared"]) == [None, ("p=a", "f1", first)]
    assert table.c.get_latest_file_slices(table.db, "t", ["p=b"]) == []
    assert [i.timestamp for i in table.c.get_failed_instants(table.db, "t")] == [second]
    assert table.count() == 3


def test_bad_record_keys_are_refused_and_change_nothing(table):
    t1 = table.write([file_group_keys("p=a", "fa", inserted=["a", "b"]), file_group_keys("p=b", "fo", inserted=["o"])])
    cases = [
        None,  # the table keeps an index: keys are required
        [file_group_keys("p=a", "fa", inserted=["c", "c"])],  # one key inserted twice
        [file_group_keys("p=a", "fa", updated=["zz"])],  # not in that file group
        [file_group_keys("p=a", "fa", updated=["a", "o"])],  # "o" is in another file group
        [file_group_keys("p=a", "fa", deleted=["a"]), file_group_keys("p=x", "fx", inserted=["x"])],  # fx not written
        [FileGroupKeys(partitionPath="p=a", fileId="fa", inserted=b"garbage")],  # not a key block
        [file_group_keys("p=a", "fa", inserted=["k" * 513])],  # too long for the index
    ]
    for keys in cases:
        ts = table.begin()
        files = [("p=a", "fa")]
        with pytest.raises(InvalidObjectException):
            table.c.complete_instant(table.db, "t", ts, "commit", _commit_json(ts, files), keys)
        assert table.where(["a", "b", "c", "x", "o"]) == [("p=a", "fa", t1)] * 2 + [None, None, ("p=b", "fo", t1)]
        assert table.count() == 3
    with pytest.raises(InvalidObjectException):
        table.c.call("lookup_record_keys", table.db, "t", b"garbage")


def test_a_large_update_naming_one_key_of_another_file_group_is_refused(table):
    """The check of updated keys is one lookup, which for many keys PostgreSQL runs half on a
    second connection: a misplaced key among 25,000 is still found, and a correct update passes."""
    keys = [f"k{i:05d}" for i in range(25_000)]
    t1 = table.write([file_group_keys("p=a", "fa", inserted=keys), file_group_keys("p=b", "fo", inserted=["o"])])
    ts = table.begin()
    with pytest.raises(InvalidObjectException):
        table.c.complete_instant(table.db, "t", ts, "commit", _commit_json(ts, [("p=a", "fa")]),
                                 [file_group_keys("p=a", "fa", updated=keys[:12_000] + ["o"] + keys[12_000:])])
    t2 = table.write([file_group_keys("p=a", "fa", updated=keys)])
    assert t2 > t1 and table.where([keys[0], keys[-1], "o"]) == [("p=a", "fa", t1)] * 2 + [("p=b", "fo", t1)]
    assert table.count() == 25_001


def test_tables_without_the_index(our_server, tmp_path):
    t = Table(our_server, tmp_path, index=False)
    try:
        t.write([file_group_keys("p=a", "fa", inserted=["a"])])  # keys are ignored
        t.write([])
        with pytest.raises(InvalidOperationException):
            t.where(["a"])
        assert t.count() is None
        # adoption: load the keys, then the index is on
        keys = [file_group_keys("p=a", "fa", inserted=["a"], instant="20240101000000000")]
        assert t.c.load_record_index(t.db, "t", keys, reset=True, enable=True) == 1
        assert t.where(["a", "b"]) == [("p=a", "fa", "20240101000000000"), None]
        assert t.c.get_hudi_table(t.db, "t").properties["hoodie.index.type"] == "RECORD_INDEX"
    finally:
        t.c.close()


def test_lookup_keys_cli(table):
    t1 = table.write([file_group_keys("p=a", "fa", inserted=["k1", "k 2"])])
    tbl = f"{table.db}.t"
    r = run_cli("lookup-keys", tbl, "k1", "nope", "k 2", "--json", "--metastore", table.uri)
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout) == [
        {"key": "k1", "partition": "p=a", "file_id": "fa", "instant": t1},
        {"key": "nope", "partition": None, "file_id": None, "instant": None},
        {"key": "k 2", "partition": "p=a", "file_id": "fa", "instant": t1}]
    text = run_cli("lookup-keys", tbl, "k1", "nope", "--metastore", table.uri)
    assert text.returncode == 0
    assert f"k1\tp=a\tfa\t{t1}" in text.stdout and "nope\t-" in text.stdout and "1 of 2 key(s) found" in text.stdout
    missing = run_cli("lookup-keys", f"{table.db}.none", "k1", "--metastore", table.uri)
    assert missing.returncode == 2 and "not found" in missing.stderr
    no_keys = run_cli("lookup-keys", tbl, "--metastore", table.uri)
    assert no_keys.returncode == 2


def test_dropping_a_table_or_its_database_drops_its_index(our_server_info, tmp_path):
    """record_index and files have no foreign key to tbl: the drops delete the rows themselves."""
    from sqlalchemy import create_engine, text

    t = Table(our_server_info.port, tmp_path)
    engine = create_engine(our_server_info.db_url)

    def rows_of(tbl_id: int, table: str = "record_index") -> int:
        with engine.connect() as conn:
            return conn.execute(text(f"SELECT count(*) FROM {table} WHERE tbl_id = :t"), {"t": tbl_id}).scalar_one()

    try:
        t.write([file_group_keys("p=a", "fa", inserted=["a", "b"])])
        first = t.c.get_table(t.db, "t").id
        assert rows_of(first) == 2 and rows_of(first, "files") > 0
        t.c.drop_table(t.db, "t", False)
        assert rows_of(first) == 0 and rows_of(first, "files") == 0
        t.c.register_hudi_table(HudiTableConfig(  # the same name again: an empty index
            db_name=t.db, table_name="t", table_type="COPY_ON_WRITE", record_key_fields=["id"], partition_fields=["p"],
            hive_style_partitioning=True, base_path=str(tmp_path / "t2"),
            properties={"hoodie.index.type": "RECORD_INDEX"}), [("id", "string"), ("p", "string")])
        assert t.where(["a", "b"]) == [None, None] and t.count() == 0
        t.write([file_group_keys("p=a", "fb", inserted=["b"])])
        second = t.c.get_table(t.db, "t").id
        assert rows_of(second) == 1 and rows_of(second, "files") > 0
        t.c.drop_database(t.db, False, True)
        assert rows_of(second) == 0 and rows_of(second, "files") == 0
    finally:
        t.c.close()
        engine.dispose()
