"""Directories that hold tables (the warehouse, a database's directory the server makes) are marked
as tops of directory hierarchies (ext4's `chattr +T`), so that ext4 places each table's directories
in a block group of its own choosing (store/storage/warehouse.py, mark_top). A hint only: nothing
fails where the file system has no such flag."""

from __future__ import annotations

import os

import pytest

from adapter.serve import prepare_store, prepare_warehouse
from store.services import open_services
from store.storage import warehouse
from thrift_idl.hive_metastore.ttypes import Database


def test_mark_top_sets_the_flag_when_it_says_so(tmp_path):
    d = tmp_path / "wh"
    d.mkdir()
    marked = warehouse.mark_top(str(d))
    assert warehouse.is_marked_top(str(d)) is (True if marked else warehouse.is_marked_top(str(d)))
    if marked:
        assert warehouse.mark_top(str(d)) is True  # marked again: still set, no error
        assert warehouse.is_marked_top(str(d)) is True
        # not inherited by what is made inside (only the tops are marked)
        (d / "sub").mkdir()
        assert warehouse.is_marked_top(str(d / "sub")) is False


def test_mark_top_never_raises_and_follows_no_link(tmp_path):
    (tmp_path / "f").write_text("x")
    assert warehouse.mark_top(str(tmp_path / "f")) is False
    assert warehouse.mark_top(str(tmp_path / "missing")) is False
    (tmp_path / "target").mkdir()
    os.symlink(tmp_path / "target", tmp_path / "link")
    assert warehouse.mark_top(str(tmp_path / "link")) is False
    assert warehouse.is_marked_top(str(tmp_path / "target")) is not True


@pytest.fixture
def marked(monkeypatch):
    calls: list[str] = []
    real = warehouse.mark_top

    def spy(path: str) -> bool:
        calls.append(path)
        return real(path)

    monkeypatch.setattr(warehouse, "mark_top", spy)
    return calls


def test_the_warehouse_and_the_database_directories_the_server_makes_are_marked(own_backend_url, tmp_path,
                                                                              marked):
    wh = prepare_warehouse(str(tmp_path / "wh"))
    assert marked == [wh]
    prepare_store(own_backend_url)
    svc = open_services(own_backend_url, wh)
    try:
        marked.clear()
        svc.tables.create_database(Database(name="made", parameters={}))
        made = os.path.join(wh, "made.db")
        assert os.path.isdir(made) and marked == [made]
        supported = warehouse.is_marked_top(wh)
        if supported is not None and warehouse.mark_top(str(tmp_path)):  # a file system with the flag
            assert warehouse.is_marked_top(made) is True
        # a partitioned table's directory is marked (its partitions), an unpartitioned one's not
        from thrift_idl.hive_metastore.ttypes import FieldSchema, SerDeInfo, StorageDescriptor, Table

        def table(name, keys):
            sd = StorageDescriptor(cols=[FieldSchema("x", "int", None)], inputFormat="i", outputFormat="o",
                                   serdeInfo=SerDeInfo(serializationLib="l", parameters={}), parameters={})
            return Table(tableName=name, dbName="made", sd=sd, tableType="MANAGED_TABLE", parameters={},
                         partitionKeys=[FieldSchema(k, "string", None) for k in keys])

        marked.clear()
        svc.tables.create_table(table("parted", ["p"]))
        svc.tables.create_table(table("plain", []))
        assert marked == [os.path.join(made, "parted")] and os.path.isdir(os.path.join(made, "plain"))
        # a directory that was there is someone's: left as it is
        (tmp_path / "theirs").mkdir()
        marked.clear()
        svc.tables.create_database(Database(name="theirs", locationUri=str(tmp_path / "theirs"), parameters={}))
        assert marked == []
    finally:
        svc.close()
