"""exchange_partitions (store/hms/partitions/partition_exchange.py): partitions and their directory
move from one table to another of the same schema in one transaction; Hive's refusals leave both
tables as they were."""

from __future__ import annotations

import os

import pytest

from adapter.serve import prepare_store
from store.errors import MetaError
from store.services import open_services
from thrift_idl.hive_metastore.ttypes import Database, FieldSchema, Partition, SerDeInfo, StorageDescriptor, Table


def _table(name: str, cols=(("x", "int"),), keys=(("p", "string"), ("q", "string"))) -> Table:
    sd = StorageDescriptor(cols=[FieldSchema(n, t, None) for n, t in cols], inputFormat="in", outputFormat="out",
                           serdeInfo=SerDeInfo(serializationLib="lib", parameters={}), parameters={})
    return Table(tableName=name, dbName="d", sd=sd, tableType="MANAGED_TABLE", parameters={},
                 partitionKeys=[FieldSchema(n, t, None) for n, t in keys])


@pytest.fixture
def svc(own_backend_url, tmp_path):
    prepare_store(own_backend_url)
    s = open_services(own_backend_url, str(tmp_path / "wh"))
    s.tables.create_database(Database(name="d", locationUri=str(tmp_path / "wh" / "d.db"), parameters={}))
    for name in ("src", "dst"):
        s.tables.create_table(_table(name))
    s.tables.create_table(_table("other_cols", cols=(("x", "bigint"),)))
    s.tables.create_table(_table("other_keys", keys=(("p", "string"),)))
    s.partitions.add_partitions("d", "src", [Partition(values=v, dbName="d", tableName="src", parameters={})
                                             for v in (["a", "1"], ["a", "2"], ["b", "1"])])
    try:
        yield s
    finally:
        s.close()


def _values(s, tbl: str) -> list[list[str]]:
    return sorted(p.values for p in s.partitions.get_partitions("d", tbl))


_REFUSALS = [
    (({"p": "a"}, "d", "src", "d", "nosuch"), "The destination table hive.d.nosuch not found"),
    (({"p": "a"}, "d", "nosuch", "d", "dst"), "The source table hive.d.nosuch not found"),
    (({"p": "zz"}, "d", "src", "d", "dst"), "No partition is found with the values {p=zz} for the table src"),
    (({"p": "a"}, "d", "src", "d", "other_cols"), "The tables have different schemas"),
    (({"p": "a"}, "d", "src", "d", "other_keys"), "The tables have different schemas"),
    (({"p": "a"}, "d", "src", "@other#d", "dst"), "You cannot move a partition across catalogs"),
    ((None, "d", "src", "d", "dst"), "must not be null"),
]


@pytest.mark.backends("sqlite", "postgresql")  # a fresh MariaDB database costs 4 s; the SQL is plain
def test_exchange(svc, tmp_path):
    """One test (a fresh database per backend is the cost): refusals, then moves."""
    for args, text in _REFUSALS:
        with pytest.raises(MetaError) as exc:
            svc.partitions.exchange_partitions(*args)
        assert text in exc.value.message, (args, exc.value.message)
    svc.partitions.add_partitions("d", "dst", [Partition(values=["a", "2"], dbName="d", tableName="dst",
                                                         parameters={})])
    with pytest.raises(MetaError, match="The partition p=a/q=2 already exists in the table dst"):
        svc.partitions.exchange_partitions({"p": "a"}, "d", "src", "d", "dst")
    assert _values(svc, "src") == [["a", "1"], ["a", "2"], ["b", "1"]] and _values(svc, "dst") == [["a", "2"]]
    assert os.path.isdir(tmp_path / "wh" / "d.db" / "src" / "p=a" / "q=1")
    svc.partitions.drop_partitions("d", "dst", values_list=[["a", "2"]])

    src_dir = tmp_path / "wh" / "d.db" / "src" / "p=a"
    (src_dir / "q=1" / "f.txt").write_text("data")
    before = svc.partitions.get_partition("d", "src", ["a", "1"]).parameters
    moved = svc.partitions.exchange_partitions({"p": "a"}, "d", "src", "d", "dst")
    assert sorted(p.values for p in moved) == [["a", "1"], ["a", "2"]]
    assert _values(svc, "src") == [["b", "1"]] and _values(svc, "dst") == [["a", "1"], ["a", "2"]]
    dst_dir = tmp_path / "wh" / "d.db" / "dst" / "p=a"
    assert not src_dir.exists() and (dst_dir / "q=1" / "f.txt").read_text() == "data"
    got = svc.partitions.get_partition("d", "dst", ["a", "1"])
    assert got.sd.location.endswith("/d.db/dst/p=a/q=1")
    assert got.parameters == before  # kept as they were (Hive's store counts no files here either)
    # a full specification moves one partition
    svc.partitions.exchange_partitions({"p": "b", "q": "1"}, "d", "src", "d", "dst")
    assert _values(svc, "src") == [] and os.path.isdir(tmp_path / "wh" / "d.db" / "dst" / "p=b" / "q=1")
