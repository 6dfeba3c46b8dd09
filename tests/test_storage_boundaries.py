"""Nothing outside what the server manages is deleted, moved, emptied or written (issue 17): a victim
directory outside the warehouse survives every request that once reached it, made by a third-party
client (hmsclient) and by the Hudi extension's own client, on every backend. What the server made
itself it still cleans up."""

from __future__ import annotations

import os
import socket
import time
import uuid
from pathlib import Path

import pytest

from client import HudiMetastoreClient
from thrift_idl.hive_metastore.ttypes import FieldSchema as OurFieldSchema
from thrift_idl.hive_metastore.ttypes import InvalidObjectException as OurInvalidObject
from thrift_idl.hive_metastore.ttypes import MetaException as OurMetaException
from thrift_idl.hudi_metastore.ttypes import HudiTableConfig, HudiTableType

hmsclient = pytest.importorskip("hmsclient.hmsclient")
from hmsclient.genthrift.hive_metastore.ttypes import (  # noqa: E402
    Database,
    FieldSchema,
    MetaException,
    Partition,
    SerDeInfo,
    StorageDescriptor,
    Table,
)


def _victim(root: Path, name: str) -> Path:
    d = root / "victims" / name
    (d / "sub").mkdir(parents=True)
    (d / "precious.txt").write_text("keep me")
    (d / "sub" / "data.parquet").write_text("keep me too")
    return d


def _intact(d: Path) -> bool:
    return (d / "precious.txt").read_text() == "keep me" and (d / "sub" / "data.parquet").exists()


def _table(db: str, name: str, location: str | None, managed: bool = True, keys=()) -> Table:
    sd = StorageDescriptor(cols=[FieldSchema("id", "bigint", None)], location=location, inputFormat="x",
                           outputFormat="y", serdeInfo=SerDeInfo(serializationLib="z", parameters={}), parameters={})
    return Table(tableName=name, dbName=db, owner="mallory", sd=sd, parameters={} if managed else {"EXTERNAL": "TRUE"},
                 partitionKeys=[FieldSchema(k, "string", None) for k in keys],
                 tableType="MANAGED_TABLE" if managed else "EXTERNAL_TABLE")


@pytest.fixture
def hms(our_server):
    c = hmsclient.HMSClient(host="127.0.0.1", port=our_server)
    c.open()
    c.set_ugi("mallory", [])
    yield c
    c.close()


@pytest.fixture
def db(hms):
    name = f"sb_{uuid.uuid4().hex[:8]}"
    hms.create_database(Database(name=name, description="", parameters={}))
    yield name
    try:
        hms.drop_database(name, True, True)
    except Exception:  # noqa: BLE001 - the test may have dropped it
        pass


def test_hive_requests_leave_directories_outside_the_warehouse_alone(hms, db, tmp_path, our_server):
    v1, v2, v3, v4, v5, v6 = (_victim(tmp_path, f"v{i}") for i in range(1, 7))

    # a MANAGED table whose location is outside: dropping it with deleteData drops the metadata only
    hms.create_table(_table(db, "t1", f"file:{v1}"))
    hms.drop_table(db, "t1", True)
    assert _intact(v1)

    # a partition outside, dropped with deleteData
    hms.create_table(_table(db, "t3", None, keys=["p"]))
    t3 = hms.get_table(db, "t3")
    sd = StorageDescriptor(**{**t3.sd.__dict__, "location": f"file:{v3}"})
    hms.add_partitions([Partition(values=["x"], dbName=db, tableName="t3", sd=sd, parameters={})])
    hms.drop_partition(db, "t3", ["x"], True)
    assert _intact(v3)

    # an EXTERNAL table flipped to MANAGED, then dropped
    hms.create_table(_table(db, "t4", f"file:{v4}", managed=False))
    t4 = hms.get_table(db, "t4")
    t4.tableType, t4.parameters = "MANAGED_TABLE", {"EXTERNAL": "FALSE"}
    hms.alter_table(db, "t4", t4)
    hms.drop_table(db, "t4", True)
    assert _intact(v4)

    # truncate refuses, before emptying anything (hmsclient's IDL predates truncate_table)
    hms.create_table(_table(db, "t5", f"file:{v5}"))
    with HudiMetastoreClient(f"thrift://127.0.0.1:{our_server}", retries=0) as ours, \
            pytest.raises(OurMetaException, match="outside the warehouse"):
        ours.call("truncate_table", db, "t5", None)
    assert _intact(v5)

    # renaming a MANAGED table outside does not move its directory into the warehouse
    hms.create_table(_table(db, "t6", f"file:{v6}"))
    t6 = hms.get_table(db, "t6")
    t6.tableName = "t6_renamed"
    hms.alter_table(db, "t6", t6)
    assert _intact(v6)
    assert hms.get_table(db, "t6_renamed").sd.location == f"file:{v6}"

    # a database whose location existed already: dropped with its tables and deleteData
    other = f"{db}_loc"
    hms.create_database(Database(name=other, description="", locationUri=f"file:{v2}", parameters={}))
    hms.create_table(_table(other, "inside", None))
    hms.drop_database(other, True, True)
    assert _intact(v2)


def test_directories_the_server_made_are_still_deleted(hms, db, tmp_path):
    """A database location the server created (it did not exist), and a table in it: dropping them
    deletes what the server made, as Hive does."""
    made = tmp_path / "made-by-server" / "db.db"
    other = f"{db}_made"
    hms.create_database(Database(name=other, description="", locationUri=f"file:{made}", parameters={}))
    hms.create_table(_table(other, "t", None))
    loc = hms.get_table(other, "t").sd.location
    path = Path(loc.removeprefix("file:"))
    assert path.is_dir() and str(path).startswith(str(made))
    (path / "part-0").write_text("rows")
    hms.drop_table(other, "t", True)
    assert not path.exists()
    hms.drop_database(other, True, True)
    assert not made.exists()


def test_locations_on_other_schemes_are_refused_and_never_opened(hms, db):
    """ftp:// (or memory://, sftp://) is no file system tables live on: refused before anything is
    written, and the server never connects to the port it names."""
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(5)
    listener.settimeout(0.5)
    url = f"ftp://127.0.0.1:{listener.getsockname()[1]}/x"
    try:
        with pytest.raises(MetaException, match="scheme 'ftp'"):
            hms.create_database(Database(name=f"{db}_ftp", description="", locationUri=url, parameters={}))
        with pytest.raises(MetaException, match="scheme 'ftp'"):
            hms.create_table(_table(db, "t_ftp", url))
        hms.create_table(_table(db, "t", None, keys=["p"]))
        t = hms.get_table(db, "t")
        with pytest.raises(MetaException, match="scheme 'memory'"):
            hms.add_partitions([Partition(values=["x"], dbName=db, tableName="t", parameters={},
                                          sd=StorageDescriptor(**{**t.sd.__dict__, "location": "memory://x/y"}))])
        t.sd.location = "sftp://127.0.0.1/x"
        with pytest.raises(MetaException, match="scheme 'sftp'"):
            hms.alter_table(db, "t", t)
        assert f"{db}_ftp" not in hms.get_all_databases() and "t_ftp" not in hms.get_all_tables(db)
        assert hms.get_partitions(db, "t", -1) == []
        with pytest.raises(socket.timeout):
            listener.accept()
    finally:
        listener.close()


def _hudi(uri: str, db: str, table: str, base: Path) -> HudiMetastoreClient:
    c = HudiMetastoreClient(uri, retries=0)
    c.register_hudi_table(
        HudiTableConfig(dbName=db, tableName=table, tableType=HudiTableType.COPY_ON_WRITE, recordKeyFields=["id"],
                        partitionFields=["p"], precombineField="ts", basePath=str(base), properties={}),
        [OurFieldSchema("id", "string", None), OurFieldSchema("ts", "bigint", None),
         OurFieldSchema("p", "string", None)])
    return c


def test_hudi_paths_never_leave_the_base_path(our_server, db, tmp_path):
    """Markers, write stats and partition paths with `..` are refused before anything is written; a
    rollback then deletes only what is inside the table."""
    base = tmp_path / "lake" / "t"
    v8, v10 = _victim(tmp_path, "v8"), tmp_path / "victims" / "v10"
    c = _hudi(f"thrift://127.0.0.1:{our_server}", db, "t", base)
    try:
        ts = c.new_instant_time(db, "t")
        c.create_instant(db, "t", ts, "commit", plan=b"", heartbeat_timeout_s=1)
        c.transition_to_inflight(db, "t", ts, "commit", b"")
        with pytest.raises(OurInvalidObject, match=r"marker path .* leaves the table's base path"):
            c.add_markers(db, "t", ts, [os.path.relpath(v8 / "precious.txt", base)])
        c.add_markers(db, "t", ts, [f"p=1/f1_0-1-1_{ts}.parquet"])
        stat = {"fileId": "f1", "path": f"../../victims/v10/f1_0-1-1_{ts}.parquet",
                "partitionPath": "../../victims/v10", "fileSizeInBytes": 10, "prevCommit": "null"}
        with pytest.raises(OurInvalidObject, match="leaves the table's base path"):
            c.complete_instant(db, "t", ts, "commit", {"partitionToWriteStats": {"../../victims/v10": [stat]},
                                                       "extraMetadata": {}, "operationType": "INSERT"})
        assert not v10.exists() and c.get_hudi_partitions(db, "t") == []
        deadline = time.monotonic() + 30
        while not c.get_failed_instants(db, "t"):  # its heartbeat (1 s) expires
            assert time.monotonic() < deadline, "the instant's heartbeat never expired"
            time.sleep(0.2)
        c.rollback_instant(db, "t", ts)  # deletes what its markers name: inside the table only
        assert _intact(v8)
    finally:
        c.close()


def test_a_hudi_table_outside_the_boundary_is_recorded_never_written(our_server, hms, db, tmp_path):
    """A Hudi table registered on a directory that existed outside the warehouse (adopted in place):
    commits are recorded, but the server writes no timeline there, and neither a rollback (markers
    naming a file of the base path) nor a partition drop's clean deletes anything."""
    base = _victim(tmp_path, "v11")
    c = _hudi(f"thrift://127.0.0.1:{our_server}", db, "t", base)
    try:
        ts = c.new_instant_time(db, "t")
        c.create_instant(db, "t", ts, "commit", plan=b"", heartbeat_timeout_s=600)
        c.transition_to_inflight(db, "t", ts, "commit", b"")
        (base / "1").mkdir()
        name = f"f1-0_0-1-1_{ts}.parquet"
        (base / "1" / name).write_text("a client's data file")
        stat = {"fileId": "f1-0", "path": f"1/{name}", "partitionPath": "1", "fileSizeInBytes": 20,
                "prevCommit": "null", "numWrites": 1, "numInserts": 1}
        c.complete_instant(db, "t", ts, "commit", {"partitionToWriteStats": {"1": [stat]},
                                                   "extraMetadata": {}, "operationType": "INSERT"})
        assert [s.fileId for s in c.get_latest_file_slices(db, "t")] == ["f1-0"]
        assert not (base / ".hoodie").exists() and not (base / "1" / ".hoodie_partition_metadata").exists()
        with pytest.raises(Exception, match="outside the warehouse"):
            c.sync_storage(db, "t")

        failed = c.new_instant_time(db, "t")
        c.create_instant(db, "t", failed, "commit", plan=b"", heartbeat_timeout_s=1)
        c.transition_to_inflight(db, "t", failed, "commit", b"")
        c.add_markers(db, "t", failed, ["precious.txt", "sub/data.parquet"])  # inside the base path
        deadline = time.monotonic() + 30
        while not c.get_failed_instants(db, "t"):
            assert time.monotonic() < deadline, "the instant's heartbeat never expired"
            time.sleep(0.2)
        assert c.rollback_instant(db, "t", failed).deletedPaths in (None, [])
        assert _intact(base)

        hms.drop_partition(db, "t", ["1"], True)  # a replacecommit and a clean, both recorded
        assert c.get_latest_file_slices(db, "t") == []
        assert (base / "1" / name).read_text() == "a client's data file" and _intact(base)
        assert not (base / ".hoodie").exists()
    finally:
        c.close()
