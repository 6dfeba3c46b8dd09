"""Catalogs on our server, on every backend: the same database name in two catalogs holds different
tables, partitions, statistics and functions; every call finds a database through the catalog it names
(`@<catalog>#<db>` prefixes in the old calls, catName / catalogName fields of the request structs);
Hive 4's rules for creating, altering and dropping catalogs. tests/test_conformance.py::test_catalogs
compares the same calls with Hive 4; here is what the reference cannot show (partitions, statistics
and functions of another catalog: Hive 4's add_partition ignores Partition.catName) and the migration
that brought catalogs.
"""

from __future__ import annotations

import os
import uuid

import pytest
from sqlalchemy import text

from tests.conformance.objects import col_stats, cols, database, function, int_stats, partition, table
from tests.harness.backends import BackendUnavailable, create_fresh_database
from thrift_idl.hive_metastore.ttypes import (
    AddPartitionsRequest,
    AlterCatalogRequest,
    Catalog,
    CreateCatalogRequest,
    Database,
    DropCatalogRequest,
    DropPartitionsRequest,
    GetCatalogRequest,
    GetDatabaseRequest,
    GetTableRequest,
    GetTablesRequest,
    InvalidObjectException,
    InvalidOperationException,
    MetaException,
    NoSuchObjectException,
    PartitionsStatsRequest,
    RequestPartsSpec,
    TableStatsRequest,
    UnknownDBException,
)


@pytest.fixture
def client(our_server, thrift_client):
    return thrift_client(our_server)


@pytest.fixture
def spark(client, tmp_path):
    """A catalog `spark_<token>` holding a database `sales_<token>`; `hive` holds one of that name too."""
    token = uuid.uuid4().hex[:6]
    cat, db = f"spark_{token}", f"sales_{token}"
    client.create_catalog(CreateCatalogRequest(Catalog(name=cat, description="Spark's",
                                                       locationUri=str(tmp_path / cat))))
    client.create_database(Database(name=db, catalogName=cat, parameters={"in": "spark"}))
    client.create_database(database(db, params={"in": "hive"}))
    yield cat, db
    for name in (f"@{cat}#{db}", db, f"@{cat}#default"):
        try:
            client.drop_database(name, True, True)
        except NoSuchObjectException:
            pass
    try:
        client.drop_catalog(DropCatalogRequest(name=cat))
    except NoSuchObjectException:
        pass


def test_catalogs_listed_read_altered(client, spark, tmp_path):
    cat, _ = spark
    assert {"hive", cat} <= set(client.get_catalogs().names)
    got = client.get_catalog(GetCatalogRequest(name=cat.upper())).catalog
    assert (got.name, got.description, got.locationUri) == (cat, "Spark's", str(tmp_path / cat))
    assert got.createTime > 0
    assert os.path.isdir(tmp_path / cat)  # where its `default` database lives
    default = client.get_database(f"@{cat}#default")
    assert (default.catalogName, default.locationUri) == (cat, f"file:{tmp_path / cat}")
    hive = client.get_catalog(GetCatalogRequest(name="hive")).catalog
    assert (hive.description, hive.createTime) == ("Default catalog for Hive", 0)
    assert hive.locationUri == client.get_database("default").locationUri
    with pytest.raises(NoSuchObjectException, match="No catalog nope"):
        client.get_catalog(GetCatalogRequest(name="nope"))
    with pytest.raises(InvalidOperationException, match="cannot change a catalog's name"):
        client.alter_catalog(AlterCatalogRequest(cat, Catalog(name="other", locationUri="/x")))
    client.alter_catalog(AlterCatalogRequest(cat, Catalog(name=cat, description="changed")))
    got = client.get_catalog(GetCatalogRequest(name=cat)).catalog
    assert (got.description, got.locationUri) == ("changed", str(tmp_path / cat))
    client.alter_catalog(AlterCatalogRequest(cat, Catalog(description="moved", locationUri=str(tmp_path / "x"))))
    assert client.get_catalog(GetCatalogRequest(name=cat)).catalog.locationUri == str(tmp_path / "x")


def test_create_catalog_refusals(client, spark, tmp_path):
    cat, _ = spark
    for bad, exc in ((Catalog(name=cat, locationUri="/x"), "AlreadyExistsException"),
                     (Catalog(name="hive", locationUri="/x"), "AlreadyExistsException"),
                     (Catalog(name="no-dash", locationUri="/x"), "InvalidObjectException"),
                     (Catalog(name=f"noloc_{cat}"), "InvalidObjectException")):
        with pytest.raises(Exception) as info:
            client.create_catalog(CreateCatalogRequest(bad))
        assert type(info.value).__name__ == exc, bad


def test_same_database_name_in_two_catalogs(client, spark):
    cat, db = spark
    assert client.get_database(db).parameters == {"in": "hive"}
    assert client.get_database(f"@{cat}#{db}").parameters == {"in": "spark"}
    assert client.get_database(f"@hive#{db}").parameters == {"in": "hive"}
    assert client.get_database_req(GetDatabaseRequest(name=db, catalogName=cat)).catalogName == cat
    assert client.get_databases(f"@{cat}#*") == ["default", db]
    assert client.get_databases(f"@{cat}#") == ["default", db]
    assert db in client.get_all_databases()
    assert f"@{cat}#{db}" not in client.get_all_databases()
    # a table in each, by the table's catName, by a prefix
    t = table(db, "events", cols("a int", "b string"), cols("ds string"))
    t.catName = cat
    client.create_table(t)
    client.create_table(table(f"@{cat}#{db}", "other", cols("a int")))
    client.create_table(table(db, "events", cols("x double")))
    spark_events = client.get_table_req(GetTableRequest(dbName=db, tblName="events", catName=cat)).table
    hive_events = client.get_table(db, "events")
    assert (spark_events.catName, [c.name for c in spark_events.sd.cols]) == (cat, ["a", "b"])
    assert (hive_events.catName, [c.name for c in hive_events.sd.cols]) == ("hive", ["x"])
    assert spark_events.id != hive_events.id
    assert client.get_table(f"@{cat}#{db}", "events").id == spark_events.id
    assert client.get_all_tables(f"@{cat}#{db}") == ["events", "other"]
    assert client.get_all_tables(db) == ["events"]
    assert [(m.catName, m.dbName, m.tableName) for m in client.get_table_meta(f"@{cat}#sales*", "*", [])] == [
        (cat, db, "events"), (cat, db, "other")]
    objs = client.get_table_objects_by_name_req(GetTablesRequest(dbName=db, tblNames=["events", "other"], catName=cat))
    assert [(o.catName, o.tableName) for o in objs.tables] == [(cat, "events"), (cat, "other")]
    with pytest.raises(UnknownDBException):
        client.get_table_objects_by_name_req(GetTablesRequest(dbName="nope", tblNames=["x"], catName=cat))
    with pytest.raises(NoSuchObjectException, match=f"hive.{db}.other table not found"):
        client.get_table(db, "other")
    # dropping one catalog's database leaves the other's
    client.drop_database(f"@{cat}#{db}", True, True)
    assert client.get_all_tables(db) == ["events"]
    assert client.get_databases(f"@{cat}#*") == ["default"]


def test_partitions_statistics_functions_of_another_catalog(client, spark):
    cat, db = spark
    qdb = f"@{cat}#{db}"
    t = table(db, "p", cols("a int"), cols("ds string"))
    t.catName = cat
    client.create_table(t)
    client.create_table(table(db, "p", cols("a int"), cols("ds string")))  # hive's twin
    p1 = partition(t, ["x"])
    p1.catName = cat
    added = client.add_partition(p1)
    assert (added.catName, added.dbName) == (cat, db)
    client.add_partitions_req(AddPartitionsRequest(dbName=db, tblName="p", catName=cat, parts=[partition(t, ["y"])],
                                                   ifNotExists=False, needResult=True))
    client.append_partition(qdb, "p", ["z"])
    assert client.get_partition_names(qdb, "p", -1) == ["ds=x", "ds=y", "ds=z"]
    assert client.get_partition_names(db, "p", -1) == []
    assert [p.catName for p in client.get_partitions(qdb, "p", -1)] == [cat] * 3
    assert [p.values for p in client.get_partitions_by_filter(qdb, "p", 'ds > "x"', -1)] == [["y"], ["z"]]
    assert client.get_partition(qdb, "p", ["y"]).catName == cat
    client.drop_partitions_req(DropPartitionsRequest(dbName=db, tblName="p", catName=cat,
                                                     parts=RequestPartsSpec(names=["ds=z"])))
    assert client.get_partition_names(qdb, "p", -1) == ["ds=x", "ds=y"]
    # statistics
    stats = col_stats(db, "p", [int_stats("a", 1, 9, 0, 3)])
    stats.statsDesc.catName = cat
    client.update_table_column_statistics(stats)
    got = client.get_table_column_statistics(qdb, "p", "a")
    assert (got.statsDesc.catName, got.engine, got.statsObj[0].colName) == (cat, "hive", "a")
    assert client.get_table_statistics_req(TableStatsRequest(dbName=db, tblName="p", colNames=["a"])).tableStats == []
    assert len(client.get_table_statistics_req(
        TableStatsRequest(dbName=db, tblName="p", colNames=["a"], catName=cat)).tableStats) == 1
    pstats = col_stats(qdb, "p", [int_stats("a", 1, 2, 0, 1)], part_name="ds=x")
    client.update_partition_column_statistics(pstats)
    res = client.get_partitions_statistics_req(PartitionsStatsRequest(
        dbName=db, tblName="p", colNames=["a"], partNames=["ds=x"], catName=cat))
    assert list(res.partStats) == ["ds=x"]
    assert client.get_partition_column_statistics(qdb, "p", "ds=x", "a").statsDesc.catName == cat
    # functions
    f = function(db, "f1")
    f.catName = cat
    client.create_function(f)
    assert client.get_function(qdb, "f1").catName == cat
    assert client.get_functions(qdb, "*") == ["f1"]
    assert client.get_functions(db, "*") == []
    assert all(fn.catName == "hive" for fn in client.get_all_functions().functions)
    with pytest.raises(NoSuchObjectException, match=f"Function {db}.f1 does not exist"):  # as Hive: the name as given
        client.get_function(db, "f1")


def test_alter_table_stays_in_its_catalog(client, spark):
    cat, db = spark
    qdb = f"@{cat}#{db}"
    t = table(db, "t", cols("a int"))
    t.catName = cat
    client.create_table(t)
    renamed = client.get_table(qdb, "t")
    renamed.tableName = "t2"
    client.alter_table(qdb, "t", renamed)  # the table's catName: stays in its catalog
    assert client.get_all_tables(qdb) == ["t2"]
    renamed = client.get_table(qdb, "t2")
    renamed.catName = None  # no catalog named: the table's own
    renamed.tableName = "t3"
    client.alter_table(qdb, "t2", renamed)
    assert client.get_all_tables(qdb) == ["t3"]
    moved = client.get_table(qdb, "t3")
    moved.catName = "hive"
    with pytest.raises(InvalidOperationException, match="cannot be moved between catalogs"):
        client.alter_table(qdb, "t3", moved)
    assert client.get_all_tables(db) == []


def test_drop_catalog_rules(client, spark, tmp_path):
    cat, db = spark
    with pytest.raises(MetaException, match="Can not drop hive catalog"):
        client.drop_catalog(DropCatalogRequest(name="hive"))
    with pytest.raises(NoSuchObjectException):
        client.drop_catalog(DropCatalogRequest(name="nope"))
    with pytest.raises(InvalidOperationException, match="non-default databases"):
        client.drop_catalog(DropCatalogRequest(name=cat))
    client.drop_database(f"@{cat}#{db}", True, True)
    t = table("default", "t", cols("a int"))
    t.catName = cat
    client.create_table(t)
    with pytest.raises(InvalidOperationException, match="still objects in the default database"):
        client.drop_catalog(DropCatalogRequest(name=cat))
    client.drop_table(f"@{cat}#default", "t", True)
    client.drop_catalog(DropCatalogRequest(name=cat))
    assert cat not in client.get_catalogs().names
    assert not os.path.exists(tmp_path / cat)  # its default database's directory
    assert client.get_databases(f"@{cat}#*") == []
    assert client.get_database(db).parameters == {"in": "hive"}
    with pytest.raises(MetaException, match="in catalog hive"):
        client.drop_database("default", True, True)


def test_names_of_missing_catalogs_and_prefixes(client, spark):
    cat, db = spark
    with pytest.raises(NoSuchObjectException, match="database nope.default"):
        client.get_database("@nope#default")
    with pytest.raises(InvalidObjectException, match="No such catalog nope"):
        client.create_database(Database(name="x", catalogName="nope", parameters={}))
    with pytest.raises(InvalidObjectException):
        client.create_table(table("@nope#default", "t", cols("a int")))
    assert client.get_databases("@nope#*") == []
    assert client.get_all_tables("@nope#default") == []
    with pytest.raises(MetaException, match="catalog marker"):
        client.get_database("@nocatalogseparator")
    # `!` stands for an empty database name
    with pytest.raises(NoSuchObjectException, match=f"database {cat}."):
        client.get_database(f"@{cat}#!")


@pytest.mark.parametrize("backend", ["sqlite", "postgresql", "mysql"])
def test_migration_keeps_databases_in_hive(backend, backend_specs, tmp_path):
    """Migration 0005 on a store holding data: every database lands in `hive`, nothing is lost
    (on SQLite the rebuild of `db` must not cascade into its tables)."""
    from store.db.engine import make_engine
    from store.db.migrations import current_revision, head_revision, upgrade

    try:
        fresh = create_fresh_database(backend_specs[backend], tmp_path)
    except BackendUnavailable as e:
        if os.environ.get("CI") == "true":
            pytest.fail(str(e))
        pytest.skip(str(e))
    engine = make_engine(fresh.url)
    try:
        upgrade(engine, "0004")
        with engine.begin() as conn:
            conn.execute(text("INSERT INTO db (name, location_uri) VALUES ('d1', 'file:/w/d1.db')"))
            db_id = conn.execute(text("SELECT db_id FROM db WHERE name = 'd1'")).scalar_one()
            conn.execute(text("INSERT INTO tbl (db_id, name, create_time, last_access_time, retention, "
                              f"schema_version) VALUES ({db_id}, 't1', 0, 0, 0, 0)"))
            conn.execute(text(f"INSERT INTO db_params (db_id, param_key, param_value) VALUES ({db_id}, 'k', 'v')"))
        upgrade(engine)
        assert current_revision(engine) == head_revision()
        with engine.connect() as conn:
            assert conn.execute(text("SELECT cat_name, name FROM db")).all() == [("hive", "d1")]
            assert conn.execute(text("SELECT name FROM tbl")).scalars().all() == ["t1"]
            assert conn.execute(text("SELECT param_key FROM db_params")).scalars().all() == ["k"]
            assert conn.execute(text("SELECT name, description FROM catalogs")).all() == [
                ("hive", "Default catalog for Hive")]
        with engine.begin() as conn:  # a database name is unique in its catalog only
            conn.execute(text("INSERT INTO catalogs (name, location_uri) VALUES ('c2', '/c2')"))
            conn.execute(text("INSERT INTO db (cat_name, name) VALUES ('c2', 'd1')"))
    finally:
        engine.dispose()
        fresh.drop()
