"""The storage mirror's `record_index` partition of the metadata table
(store/hudi/metadata_table/record_index.py), read back by a reader of its own here (fastavro with the
schema the files carry, Java's String.hashCode spelled again, UUIDs rebuilt from their bits), equals
the server's record index after inserts, updates, deletes, a key moving partitions, an
insert_overwrite, compactions and a load outside a commit; the data table's `hoodie.properties` lists
it; a table without the index, or with `hoodie.metadata.record.index.enable=false`, has none.
Tables of version 6 and 9, each in its own layout. (Hudi's own files: test_metadata_record_index_files.py.)"""

from __future__ import annotations

import io
import json
import os
import uuid

import fastavro
import pytest

from hudi_format import hfile, log_file
from hudi_format.config_keys import INDEX_TYPE, METADATA_ENABLE, METADATA_PARTITIONS, RECORD_INDEX_ENABLE
from hudi_format.metadata_table_layout import metadata_table_layout
from hudi_format.table_config import COW, HudiTableConfig, read_properties
from store.db import schema as S
from store.hudi.record_index import FileGroupKeys
from tests.test_storage_mirror import AVRO_SCHEMA, attach, services
from thrift_idl.hive_metastore.ttypes import Database

PARTITION = "record_index"


def _table(tmp_path, version: int, props: dict[str, str] | None = None, compact_after: int | None = None):
    tables, timeline, _snapshot = services(tmp_path)
    tables.create_database(Database(name="db1"))
    base = str(tmp_path / "t1")
    timeline.register_table(HudiTableConfig(
        db_name="db1", table_name="t1", table_type=COW, record_key_fields=["id"], partition_fields=["dt"],
        precombine_field="ts", key_generator="org.apache.hudi.keygen.SimpleKeyGenerator", base_path=base,
        table_version=version, avro_schema=json.dumps(AVRO_SCHEMA),
        properties={METADATA_ENABLE: "true", INDEX_TYPE: "RECORD_INDEX", **(props or {})}))
    mirror = attach(timeline)
    if compact_after:
        mirror.metadata_table.compact_after = compact_after
        mirror.metadata_table.record_index.compact_after = compact_after
        mirror.metadata_table.column_stats.compact_after = compact_after
    return timeline, mirror, base


def _write(timeline, changes: list[FileGroupKeys], replaced: dict[str, list[str]] | None = None,
           action: str = "commit", db: str = "db1") -> str:
    ts = timeline.create_instant(db, "t1", None, action, b"", 60).ts
    stats: dict[str, list] = {}
    for c in changes:
        stats.setdefault(c.partition_path, []).append({
            "fileId": c.file_id, "path": f"{c.partition_path}/{c.file_id}_0-1-1_{ts}.parquet",
            "partitionPath": c.partition_path, "fileSizeInBytes": 100, "prevCommit": "null", "numWrites": 1})
    doc: dict = {"partitionToWriteStats": stats, "compacted": False, "extraMetadata": {}, "operationType": "UPSERT"}
    if replaced:
        doc["partitionToReplaceFileIds"] = replaced
    timeline.transition_to_inflight(db, "t1", ts, action, b"")
    timeline.complete_instant(db, "t1", ts, action, json.dumps(doc).encode(), record_keys=changes)
    return ts


def _java_hash_group(key: str, groups: int) -> int:
    """Java's String.hashCode over UTF-16 code units, then abs(abs(h) % n) with Java's int abs."""
    h = 0
    data = key.encode("utf-16-be")
    for i in range(0, len(data), 2):
        h = (h * 31 + int.from_bytes(data[i:i + 2], "big")) % (1 << 32)
    h = h - (1 << 32) if h >= 1 << 31 else h
    return abs(abs(h) % groups) if h != -(1 << 31) else abs(h % groups)


def _decode(value: bytes, schema: dict) -> tuple[str, str, int]:
    rec = fastavro.schemaless_reader(io.BytesIO(value), fastavro.parse_schema(schema))
    assert rec["type"] == 5 and rec["key"] == ""
    info = rec["recordIndexMetadata"]
    assert info["position"] is None
    if info["fileIdEncoding"] == 0:
        assert info["fileId"] == ""
        bits = ((info["fileIdHighBits"] % (1 << 64)) << 64) | (info["fileIdLowBits"] % (1 << 64))
        fid = f"{uuid.UUID(int=bits)}-{info['fileIndex']}"
    else:
        assert (info["fileIdHighBits"], info["fileIdLowBits"], info["fileIndex"]) == (-1, -1, -1)
        fid = info["fileId"]
    return info["partitionName"], fid, info["instantTime"]


def partition_view(base: str, version: int) -> dict[str, tuple[str, str, int]]:
    """key -> (partition, file id, instant ms) as a reader merges each file group's latest slice:
    the newest completed base file, then the log blocks of completed deltacommits in order (version
    6: the slice's log versions; 8+: log files completed at or after the base), delete blocks drop
    keys. Every key must sit in the group its hash names."""
    lay = metadata_table_layout(version)
    d = os.path.join(base, ".hoodie", "metadata", PARTITION)
    completion = {n.split(".")[0].split("_")[0]: n.split(".")[0].split("_")[-1]
                  for n in os.listdir(os.path.join(base, lay.timeline_dir)) if n.endswith(".deltacommit")}
    files: dict[int, list[tuple[str, str, str]]] = {}  # group -> (kind, instant, name)
    for n in os.listdir(d):
        if n.startswith(".hoodie_partition"):
            continue
        fid, _, rest = n.lstrip(".").partition("_")
        assert fid.startswith("record-index-") and fid.endswith("-0"), n
        group = int(fid[len("record-index-"):-2])
        if n.endswith(".hfile"):
            files.setdefault(group, []).append(("base", n[:-6].rsplit("_", 1)[1], n))
        else:
            files.setdefault(group, []).append(("log", rest.split(".log.")[0], n))
    groups = len(files)
    assert sorted(files) == list(range(groups))
    out: dict[str, tuple[str, str, int]] = {}
    for group, fs in files.items():
        bases = sorted(i for kind, i, _ in fs if kind == "base" and i in completion)
        latest = bases[-1] if bases else min(i for _k, i, _ in fs)
        merged: dict[bytes, tuple[str, str, int]] = {}
        if bases:
            data = open(os.path.join(d, next(n for k, i, n in fs if k == "base" and i == latest)), "rb").read()
            schema = json.loads(hfile.file_info(data)[b"schema"])
            merged.update({r: _decode(v, schema) for r, v in hfile.cells(data)})
        if version < 8:
            logs = sorted((int(n.split(".log.")[1].split("_")[0]), n) for k, i, n in fs if k == "log" and i == latest)
        else:
            logs = sorted((completion[i], n) for k, i, n in fs if k == "log" and i in completion
                          and completion[i] >= latest and i != latest)
        for _order, n in logs:
            for block in log_file.blocks(open(os.path.join(d, n), "rb").read(), n):
                if block.instant not in completion:
                    continue
                if block.block_type == log_file.HFILE_DATA:
                    schema = json.loads(block.header[log_file.SCHEMA])
                    merged.update({r: _decode(v, schema) for r, v in hfile.cells(block.content)})
                elif block.block_type == log_file.DELETE:
                    for k in log_file.deleted_keys(block, n):
                        merged.pop(k.encode(), None)
        for k, loc in merged.items():
            assert _java_hash_group(k.decode(), groups) == group, (k, group)
            out[k.decode()] = loc
    return out


def server_index(timeline, db: str = "db1", table: str = "t1") -> dict[str, tuple[str, str, int]]:
    """db.table's record index (other tests' tables may share the database)."""
    with timeline.store.read() as conn:
        ri, fg = S.record_index, S.record_index_file_group
        tbl_id = timeline.table_ref(conn, db, table).tbl_id
        rows = conn.execute(ri.join(fg, fg.c.fg_id == ri.c.fg_id).select().where(ri.c.tbl_id == tbl_id)).all()
    from hudi_format.instant import parse_instant

    return {r.record_key: (r.partition_path, r.file_id, parse_instant(str(r.instant))) for r in rows}


def _fid() -> str:
    return f"{uuid.uuid4()}-0"


def _listed(base: str) -> list[str]:
    with open(os.path.join(base, ".hoodie", "hoodie.properties")) as f:
        return read_properties(f.read())[METADATA_PARTITIONS].split(",")


@pytest.mark.parametrize(("version", "compact_after"), [(6, None), (9, 2)])
def test_partition_follows_the_index(tmp_path, version, compact_after):
    timeline, _mirror, base = _table(tmp_path, version, compact_after=compact_after)
    fa, fb, fc = _fid(), _fid(), "plain-file-id"  # the last one no UUID: written as text (encoding 1)
    _write(timeline, [FileGroupKeys("dt=a", fa, inserted=[f"k{i}" for i in range(0, 30)]),
                      FileGroupKeys("dt=b", fb, inserted=[f"k{i}" for i in range(30, 60)])])
    assert "record_index" in _listed(base)
    with open(os.path.join(base, ".hoodie", ".index_defs", "index.json")) as f:  # as Hudi defines it
        assert list(json.load(f)["indexDefinitions"]) == ["record_index", "column_stats"]
    assert partition_view(base, version) == server_index(timeline)
    assert len({n for n in os.listdir(os.path.join(base, ".hoodie", "metadata", PARTITION))
                if n.endswith(".hfile") or ".log." in n and n.startswith(".record-index-")}) >= 10
    # updates, deletes and inserts in one commit
    _write(timeline, [FileGroupKeys("dt=a", fa, inserted=["n1", "n2"], updated=["k1", "k2"], deleted=["k3", "k4"])])
    assert partition_view(base, version) == server_index(timeline)
    # a key moves partition: out of dt=b's group, into a new group of dt=c
    _write(timeline, [FileGroupKeys("dt=b", fb, deleted=["k30"]), FileGroupKeys("dt=c", fc, inserted=["k30"])])
    view = partition_view(base, version)
    assert view == server_index(timeline) and view["k30"][:2] == ("dt=c", fc) and "k3" not in view
    # insert_overwrite of dt=a: its group's keys leave, the new group's come
    fa2 = _fid()
    _write(timeline, [FileGroupKeys("dt=a", fa2, inserted=["k0", "z1"])], replaced={"dt=a": [fa]},
           action="replacecommit")
    view = partition_view(base, version)
    assert view == server_index(timeline) and "k5" not in view and view["k0"][1] == fa2
    for i in range(4):  # more commits: compactions when compact_after is small
        _write(timeline, [FileGroupKeys("dt=b", fb, inserted=[f"m{i}"], deleted=[f"k{31 + i}"])])
        assert partition_view(base, version) == server_index(timeline)
    if compact_after:
        assert any(n.endswith(".hfile") and not n.endswith(f"_{metadata_table_layout(version).init_instant}.hfile")
                   for n in os.listdir(os.path.join(base, ".hoodie", "metadata", PARTITION)))
    # the deltacommits name the partition's files in their write stats
    assert not _journal(timeline)


def _journal(timeline, db: str = "db1", table: str = "t1") -> list:
    with timeline.store.read() as conn:
        tbl_id = timeline.table_ref(conn, db, table).tbl_id
        return conn.execute(S.record_index_deletes.select().where(S.record_index_deletes.c.tbl_id == tbl_id)).all()


def test_load_outside_a_commit_writes_the_partition_again(tmp_path):
    timeline, mirror, base = _table(tmp_path, 9)
    fa = _fid()
    _write(timeline, [FileGroupKeys("dt=a", fa, inserted=["a1", "a2"])])
    fb = _fid()
    timeline.record_index.load("db1", "t1", [FileGroupKeys("dt=b", fb, inserted=["b1"], instant="20260101000000000")],
                               reset=True, enable=None)
    assert [r.instant for r in _journal(timeline)] == [0]  # the rebuild mark
    mirror.sync("db1", "t1")  # what the load handler runs
    assert partition_view(base, 9) == server_index(timeline) == {"b1": ("dt=b", fb, 1767225600000)}
    assert not _journal(timeline)


def test_no_partition_when_turned_off_in_the_config(tmp_path):
    timeline, _mirror, base = _table(tmp_path, 6, {RECORD_INDEX_ENABLE: "false"})
    _write(timeline, [FileGroupKeys("dt=a", _fid(), inserted=["a1"], deleted=[])])
    assert "record_index" not in _listed(base) and "files" in _listed(base)
    assert not os.path.exists(os.path.join(base, ".hoodie", "metadata", PARTITION))
    assert not _journal(timeline)


def test_turned_off_removes_it(tmp_path):
    timeline, mirror, base = _table(tmp_path, 6)
    _write(timeline, [FileGroupKeys("dt=a", _fid(), inserted=["a1"], deleted=[])])
    assert "record_index" in _listed(base)
    with timeline.store.read() as conn:
        ref = timeline.table_ref(conn, "db1", "t1")
    timeline.store.run_write(lambda conn: timeline.record_index.turn_off_in(conn, ref))
    mirror.sync("db1", "t1")
    assert "record_index" not in _listed(base)
    assert not os.path.exists(os.path.join(base, ".hoodie", "metadata", PARTITION))


def test_restore_writes_the_partition_again(tmp_path):
    from hudi_format.commit_metadata import restore_plan

    timeline, _mirror, base = _table(tmp_path, 6)
    f1, f2 = _fid(), _fid()
    c1 = _write(timeline, [FileGroupKeys("dt=a", f1, inserted=["k1", "k2"])])
    for state in ("create", "inflight", "complete"):  # a savepoint of c1
        if state == "create":
            timeline.create_instant("db1", "t1", c1, "savepoint", b"", 60)
        elif state == "inflight":
            timeline.transition_to_inflight("db1", "t1", c1, "savepoint", b"")
        else:
            timeline.complete_instant("db1", "t1", c1, "savepoint", b"")
    c2 = _write(timeline, [FileGroupKeys("dt=a", f1, updated=["k1"], deleted=["k2"]),
                           FileGroupKeys("dt=b", f2, inserted=["k3"])])
    assert set(partition_view(base, 6)) == {"k1", "k3"}
    r = timeline.create_instant("db1", "t1", None, "restore", restore_plan(c1, []), 60).ts
    timeline.transition_to_inflight("db1", "t1", r, "restore", b"")
    timeline.complete_instant("db1", "t1", r, "restore", json.dumps({"instantsToRollback": [c2]}).encode(),
                              record_keys=[FileGroupKeys("dt=a", f1, inserted=["k1", "k2"], instant=c1)])
    assert partition_view(base, 6) == server_index(timeline) and set(server_index(timeline)) == {"k1", "k2"}
    assert not _journal(timeline)


def test_deletes_and_moves_on_each_backend(backend_url, tmp_path):
    """The commit's journal of keys taken out (bulk insert per backend, case-sensitive keys) and the
    mirror's reads of it and of the index rows."""
    from store.db.database import Store
    from store.db.migrations import upgrade
    from store.hudi.storage_mirror import StorageMirror
    from store.services import build_services

    store = Store(backend_url, str(tmp_path / "wh"))
    try:
        upgrade(store.engine)
        s = build_services(store)
        db = f"ri_{uuid.uuid4().hex[:8]}"  # the backend's database is shared with other tests
        s.tables.create_database(Database(name=db))
        base = str(tmp_path / "t1")
        s.timeline.register_table(HudiTableConfig(
            db_name=db, table_name="t1", table_type=COW, record_key_fields=["id"], partition_fields=["dt"],
            precombine_field="ts", key_generator="org.apache.hudi.keygen.SimpleKeyGenerator", base_path=base,
            table_version=8, avro_schema=json.dumps(AVRO_SCHEMA),
            properties={METADATA_ENABLE: "true", INDEX_TYPE: "RECORD_INDEX"}))
        s.timeline.on_commit.append(StorageMirror(store, s.timeline).hook)
        fa, fb = _fid(), _fid()
        _write(s.timeline, [FileGroupKeys("dt=a", fa, inserted=["K", "k", "x"])], db=db)
        _write(s.timeline, [FileGroupKeys("dt=a", fa, deleted=["k", "x"]), FileGroupKeys("dt=b", fb, inserted=["x"])],
               db=db)
        view = partition_view(base, 8)
        assert view == server_index(s.timeline, db) and {k: v[:2] for k, v in view.items()} == {
            "K": ("dt=a", fa), "x": ("dt=b", fb)}
        assert not _journal(s.timeline, db)
    finally:
        store.dispose()
