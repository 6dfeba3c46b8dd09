"""Partitions of Hudi tables over the HMS API (RFC-36): they appear through commits only; a legacy
hive-sync add of existing partitions is harmless; a drop replaces and cleans the partition."""

from __future__ import annotations

import json
import os
import uuid

import pytest

from client import HudiMetastoreClient
from hudi_format.table_config import HudiTableConfig
from thrift_idl.hive_metastore.ttypes import (
    AddPartitionsRequest,
    Database,
    InvalidOperationException,
    MetaException,
    NoSuchObjectException,
    Partition,
    StorageDescriptor,
)


def commit(client, db, tbl, files):
    inst = client.create_instant(db, tbl, None, "commit")
    client.transition_to_inflight(db, tbl, inst.timestamp, "commit")
    stats = {}
    for part, fid in files:
        stats.setdefault(part, []).append({"fileId": fid, "path": f"{part}/{fid}_0-1-1_{inst.timestamp}.parquet",
                                           "partitionPath": part, "fileSizeInBytes": 5, "prevCommit": "null"})
    client.complete_instant(db, tbl, inst.timestamp, "commit",
                            {"partitionToWriteStats": stats, "operationType": "INSERT", "extraMetadata": {}})
    return inst.timestamp


@pytest.fixture
def hudi_table(our_server, tmp_path):
    client = HudiMetastoreClient(f"thrift://127.0.0.1:{our_server}")
    db = "hp_" + uuid.uuid4().hex[:8]
    client.create_database(Database(name=db, locationUri="file:" + str(tmp_path / "db")))
    base = str(tmp_path / "t")
    client.register_hudi_table(HudiTableConfig(
        db_name=db, table_name="t", table_type="COPY_ON_WRITE", record_key_fields=["id"],
        partition_fields=["dt"], hive_style_partitioning=True, base_path=base),
        [("id", "int"), ("v", "string"), ("dt", "string")])
    yield client, db, base
    client.close()


def test_partitions_follow_commits(hudi_table):
    client, db, base = hudi_table
    assert client.get_partition_names(db, "t", -1) == []
    ts = commit(client, db, "t", [("dt=2024-01-01", "a-0"), ("dt=2024-01-02", "b-0")])
    assert client.get_partition_names(db, "t", -1) == ["dt=2024-01-01", "dt=2024-01-02"]
    part = client.get_partition(db, "t", ["2024-01-01"])
    assert part.sd.location.endswith("/t/dt=2024-01-01")
    assert part.sd.inputFormat == "org.apache.hudi.hadoop.HoodieParquetInputFormat"
    table = client.get_table(db, "t")
    assert table.parameters["spark.sql.sources.provider"] == "hudi" and table.tableType == "EXTERNAL_TABLE"
    # the keys hive-sync writes (SparkDataSourceTableUtils) and Spark's HiveExternalCatalog reads
    p = table.parameters
    assert p["spark.sql.sources.schema.numParts"] == "1" and p["spark.sql.sources.schema.numPartCols"] == "1"
    assert p["spark.sql.sources.schema.partCol.0"] == "dt"
    fields = json.loads(p["spark.sql.sources.schema.part.0"])["fields"]
    assert [(f["name"], f["type"]) for f in fields][-3:] == [("id", "integer"), ("v", "string"), ("dt", "string")]
    assert table.sd.serdeInfo.parameters["path"] == base
    assert table.sd.serdeInfo.parameters["hoodie.query.as.ro.table"] == "false"
    assert [c.name for c in table.sd.cols][:5] == ["_hoodie_commit_time", "_hoodie_commit_seqno",
                                                  "_hoodie_record_key", "_hoodie_partition_path", "_hoodie_file_name"]
    assert client.get_hudi_partitions(db, "t") == ["dt=2024-01-01", "dt=2024-01-02"]
    assert client.get_hudi_partitions(db, "t", 'dt = "2024-01-02"') == ["dt=2024-01-02"]
    assert ts


def test_hms_partition_writes_refused(hudi_table):
    client, db, base = hudi_table
    commit(client, db, "t", [("dt=2024-01-01", "a-0")])
    existing = client.get_partition(db, "t", ["2024-01-01"])
    # a legacy hive-sync re-adding what exists is a harmless no-op
    res = client.add_partitions_req(AddPartitionsRequest(db, "t", [existing], True, True))
    assert res.partitions == []
    assert client.add_partition(existing).values == ["2024-01-01"]
    new = Partition(values=["2024-02-02"], dbName=db, tableName="t", sd=StorageDescriptor(**existing.sd.__dict__))
    # calls that do not declare InvalidOperationException answer MetaException with its text
    with pytest.raises(MetaException, match="InvalidOperationException: .*follow its commits"):
        client.add_partition(new)
    with pytest.raises(MetaException, match="follow its commits"):
        client.add_partitions_req(AddPartitionsRequest(db, "t", [existing, new], True, True))
    with pytest.raises(InvalidOperationException, match="follow its commits"):
        client.alter_partition(db, "t", existing)
    with pytest.raises(MetaException, match="follow its commits"):
        client.append_partition(db, "t", ["2024-03-03"])
    with pytest.raises(InvalidOperationException, match="follow its commits"):
        client.rename_partition(db, "t", ["2024-01-01"], new)
    assert client.get_partition_names(db, "t", -1) == ["dt=2024-01-01"]


def test_drop_partition_is_a_replacecommit_and_clean(hudi_table):
    client, db, base = hudi_table
    ts = commit(client, db, "t", [("dt=2024-01-01", "a-0"), ("dt=2024-01-02", "b-0")])
    for part, fid in (("dt=2024-01-01", "a-0"), ("dt=2024-01-02", "b-0")):
        os.makedirs(os.path.join(base, part), exist_ok=True)
        open(os.path.join(base, part, f"{fid}_0-1-1_{ts}.parquet"), "wb").write(b"x")
    assert client.drop_partition(db, "t", ["2024-01-01"], True) is True
    assert client.get_partition_names(db, "t", -1) == ["dt=2024-01-02"]
    assert [s.fileId for s in client.get_latest_file_slices(db, "t")] == ["b-0"]
    assert [n for n in os.listdir(os.path.join(base, "dt=2024-01-01")) if not n.startswith(".")] == []
    actions = [i.action for i in client.list_instants(db, "t")]
    assert actions == ["commit", "replacecommit", "clean"]
    with pytest.raises(NoSuchObjectException):
        client.drop_partition(db, "t", ["2024-01-01"], True)


def test_hms_created_hudi_table_is_adopted(our_server, tmp_path):
    """A table created over plain HMS with provider hudi and hoodie.* properties (Hudi's Spark
    catalog) is Hudi-managed: it has a timeline and its partitions follow commits."""
    from thrift_idl.hive_metastore.ttypes import FieldSchema, SerDeInfo, Table

    client = HudiMetastoreClient(f"thrift://127.0.0.1:{our_server}")
    db = "hp_" + uuid.uuid4().hex[:8]
    client.create_database(Database(name=db, locationUri="file:" + str(tmp_path / "db")))
    sd = StorageDescriptor(cols=[FieldSchema("id", "int", None)], location="file:" + str(tmp_path / "db" / "h"),
                           inputFormat="org.apache.hudi.hadoop.HoodieParquetInputFormat",
                           outputFormat="org.apache.hadoop.hive.ql.io.parquet.MapredParquetOutputFormat",
                           serdeInfo=SerDeInfo(serializationLib="org.apache.hadoop.hive.ql.io.parquet.serde.ParquetHiveSerDe",
                                               parameters={}))
    client.create_table(Table(tableName="h", dbName=db, sd=sd, partitionKeys=[FieldSchema("dt", "string", None)],
                              tableType="EXTERNAL_TABLE",
                              parameters={"EXTERNAL": "TRUE", "spark.sql.sources.provider": "hudi", "type": "mor",
                                          "primaryKey": "id", "hoodie.table.name": "h"}))
    cfg = client.get_hudi_table(db, "h")
    assert cfg.recordKeyFields == ["id"] and cfg.partitionFields == ["dt"]
    assert client.list_instants(db, "h") == []
    # a plain table with provider parquet stays plain
    client.create_table(Table(tableName="p", dbName=db, sd=sd, partitionKeys=[], tableType="EXTERNAL_TABLE",
                              parameters={"EXTERNAL": "TRUE", "spark.sql.sources.provider": "parquet"}))
    with pytest.raises(NoSuchObjectException):
        client.get_hudi_table(db, "p")
    client.close()


def test_instant_times_increase_across_two_servers(backend_url, our_server, tmp_path):
    """Two server processes on one database hand out strictly increasing instant times for a table,
    and an instant created through one completes through the other."""
    import threading

    from tests.harness import start_our_server, stop_process

    port2, proc2 = start_our_server(backend_url, tmp_path / "second", extra_args=["--no-storage-mirror"])
    try:
        a = HudiMetastoreClient(f"thrift://127.0.0.1:{our_server}")
        b = HudiMetastoreClient(f"thrift://127.0.0.1:{port2}")
        db = "hp_" + uuid.uuid4().hex[:8]
        a.create_database(Database(name=db, locationUri="file:" + str(tmp_path / "db")))
        a.register_hudi_table(HudiTableConfig(db_name=db, table_name="t", table_type="MERGE_ON_READ",
                                              record_key_fields=["id"], partition_fields=["dt"],
                                              base_path=str(tmp_path / "t")), [("id", "int"), ("dt", "string")])
        seen = {"a": [], "b": []}

        def take(name, client):
            seen[name] += [client.new_instant_time(db, "t") for _ in range(60)]

        threads = [threading.Thread(target=take, args=("a", a)), threading.Thread(target=take, args=("b", b))]
        for t in threads:
            t.start()
        for t in threads:
            t.join(120)
        for seq in seen.values():
            assert len(seq) == 60 and seq == sorted(seq) and len(set(seq)) == 60
        assert not set(seen["a"]) & set(seen["b"])
        inst = a.create_instant(db, "t", None, "deltacommit")
        assert inst.timestamp > max(seen["a"] + seen["b"])
        b.transition_to_inflight(db, "t", inst.timestamp, "deltacommit")
        b.complete_instant(db, "t", inst.timestamp, "deltacommit", {"partitionToWriteStats": {}, "extraMetadata": {}})
        assert [i.state for i in a.list_instants(db, "t")] == [3]
        a.close()
        b.close()
    finally:
        stop_process(proc2)
