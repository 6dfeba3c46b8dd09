"""A drop of many partitions (delete_partition_dirs: each partition's directory and then its parents
removed by one of several threads, with one RealPaths for the whole drop) deletes what a drop of
one does: each dropped partition's directory and the parents it leaves empty inside the table
(also one all of them share), never a parent that still holds something, never through a symbolic
link out of the warehouse."""

from __future__ import annotations

import os

from thrift_idl.hive_metastore.ttypes import FieldSchema, Partition, SerDeInfo, StorageDescriptor, Table

N = 40  # above the count from which directories are removed by several threads


def _sd() -> StorageDescriptor:
    return StorageDescriptor(cols=[FieldSchema("x", "string")], serdeInfo=SerDeInfo(parameters={}), parameters={})


def test_a_big_drop_removes_what_a_small_one_removes(sqlite_services, tmp_path):
    keys = [FieldSchema(k, "string") for k in ("a", "b", "c")]
    sqlite_services.tables.create_table(Table(tableName="t", dbName="db", sd=_sd(), partitionKeys=keys, parameters={},
                                       tableType="MANAGED_TABLE"))
    base = tmp_path / "wh" / "db.db" / "t"
    shared = [["s", "s", f"{i}"] for i in range(N)]  # one parent for all: the last one removed takes it along
    values = [[f"{i}", f"{i}", f"{i}"] for i in range(N)] + shared + [["0", "0", "kept"], ["1", "other", "kept"]]
    sqlite_services.partitions.add_partitions("db", "t", [
        Partition(dbName="db", tableName="t", values=v, sd=_sd(), parameters={}) for v in values])
    assert all((base / f"a={a}" / f"b={b}" / f"c={c}").is_dir() for a, b, c in values)
    (base / "a=2" / "stranger.txt").write_text("not the metastore's")  # a=2 keeps a file
    outside = tmp_path / "outside"
    (outside / "b=3").mkdir(parents=True)
    (base / "a=3" / "b=3" / "c=3").rmdir()
    (base / "a=3" / "b=3").rmdir()
    (base / "a=3").rmdir()
    os.symlink(outside, base / "a=3")  # a=3 is a link out of the warehouse

    names = [f"a={a}/b={b}/c={c}" for a, b, c in values[:2 * N]]
    dropped = sqlite_services.partitions.drop_partitions("db", "t", names=names, delete_data=True, if_exists=True,
                                                  need_result=True, exact_names=True)
    assert dropped is not None and dropped.count == 2 * N
    assert sorted(p.name for p in base.iterdir()) == ["a=0", "a=1", "a=2", "a=3"]
    assert sorted(str(p.relative_to(base)) for p in base.rglob("*")) == [
        "a=0", "a=0/b=0", "a=0/b=0/c=kept", "a=1", "a=1/b=other", "a=1/b=other/c=kept", "a=2", "a=2/stranger.txt",
        "a=3"]
    assert (outside / "b=3").is_dir()  # nothing deleted through the link
    assert base.is_dir()
