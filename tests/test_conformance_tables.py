"""Differential conformance of databases and tables: the same Thrift calls to our server and to the
reference Hive Metastore 2.3.10, answers compared field by field (allowed differences:
tests/conformance/allowlist.py and docs/conformance.md).

One reference metastore serves the whole session (all three backends); every test works in
databases named after a random token, so tests never see each other's objects. Set
``HMS_CONFORMANCE_REFERENCE_PORT`` to reuse an already running reference metastore. The fixtures
(`cf`) are in tests/conftest.py, the comparison in tests/conformance/."""

from __future__ import annotations

from tests.conformance.compare import Each, cleanup, names
from tests.conformance.objects import (
    cols,
    database,
    function,
    partition,
    table,
)
from thrift_idl.hive_metastore.ttypes import (
    EnvironmentContext,
    FieldSchema,
)

# --------------------------------------------------------------------------- databases


def test_databases(cf):
    db, db2, mixed = names(cf, "db", "db2", "mixed")
    cf.call("create_database", database(db, "first", {"k": "v", "K2": "V2"}), expect="ok")
    cf.call("get_database", db)
    cf.call("get_database", db.upper())
    cf.call("create_database", database(db), expect="AlreadyExistsException", msg=True)
    cf.call("create_database", database(db.upper()), expect="AlreadyExistsException")
    cf.call("get_database", f"cf_nosuch_{cf.token}", expect="NoSuchObjectException")
    # explicit location and owner
    cf.call("create_database", database(db2, None, None, location="@EXT@/db2loc", owner="alice"), expect="ok")
    cf.call("get_database", db2)
    cf.call("create_database", database(mixed.replace("mixed", "MiXeD")), expect="ok")
    cf.call("get_database", mixed)
    # invalid names
    for bad in ("bad-name", "with space", "dot.ted", "", "a/b"):
        cf.call("create_database", database(bad), expect="InvalidObjectException")
    cf.call("create_database", database("x" * 129), expect="MetaException",  # wider than DBS.NAME
            slow_reference_error=True)
    # patterns
    prefix = "cf_db"
    cf.call("get_databases", f"cf_db*_{cf.token}")
    cf.call("get_databases", f"cf_db_{cf.token}|cf_mixed_{cf.token}")
    cf.call("get_databases", f"CF_DB_{cf.token}")
    cf.call("get_databases", f"cf_db?_{cf.token}")
    cf.call("get_databases", f"cf_db._{cf.token}")
    cf.call("get_databases", f"*{cf.token}")
    cf.call("get_databases", f"cf_nomatch_{cf.token}*")
    cf.call("get_all_databases", post=lambda ns: [n for n in ns if cf.token in n or n == "default"])
    cf.call("get_databases", "*", post=lambda ns: [n for n in ns if cf.token in n or n == "default"])
    cf.call("get_database", "default")
    del prefix
    # alter: description, parameters, owner
    d = cf.ours.client.get_database(db)
    d.description = "second"
    d.parameters = {"k": "v2", "new": "x"}
    d.ownerName, d.ownerType = "bob", 2
    d.catalogName = None
    d.createTime = None
    cf.call("alter_database", db, d, expect="ok")
    cf.call("get_database", db, allow="alter-database-hive3")
    assert cf.ours_only("get_database", db).description == "second"  # Hive 3.1 semantics
    d.description = "first"
    cf.call("alter_database", db, d, expect="ok")
    cf.call("get_database", db)
    cf.quirk("alter-missing-database", "alter_database", f"cf_nosuch_{cf.token}", d)
    # drop: non-empty without cascade, cascade, missing, default
    cf.call("create_table", table(db, "t1", cols("a int")), expect="ok")
    cf.call("drop_database", db, True, False, expect="InvalidOperationException", msg=True)
    cf.call("get_database", db)
    cf.call("drop_database", db, True, True, expect="ok")
    cf.call("get_database", db, expect="NoSuchObjectException")
    cf.call("get_table", db, "t1", expect="NoSuchObjectException")
    cf.quirk("drop-missing-database", "drop_database", db, True, True)
    cf.call("drop_database", db2, False, False, expect="ok")
    cf.call("drop_database", "default", True, True, expect="MetaException", msg=True)
    cf.call("drop_database", mixed.upper(), True, True, expect="ok")
    cleanup(cf, db, db2, mixed)


def test_database_not_empty_with_functions(cf):
    (db,) = names(cf, "fdb")
    cf.call("create_database", database(db), expect="ok")
    cf.call("create_function", function(db, "f1"), expect="ok")
    cf.call("drop_database", db, True, False, expect="InvalidOperationException")
    cf.call("drop_database", db, True, True, expect="ok")
    cf.call("get_function", db, "f1", expect="NoSuchObjectException")
    cleanup(cf, db)


# --------------------------------------------------------------------------- tables


def test_tables_create_get(cf):
    (db,) = names(cf, "tbl")
    cf.call("create_database", database(db), expect="ok")
    c3 = cols("id int the id", "name string", "price double")
    keys = cols("ds string", "hr int")
    cf.call("create_table", table(db, "managed", c3, params={"p1": "v1", "P1": "V1"}), expect="ok")
    cf.call("get_table", db, "managed")
    cf.call("get_table", db.upper(), "MANAGED")
    cf.call("create_table", table(db, "Parted", c3, keys, params={"comment": "a partitioned table"}), expect="ok")
    cf.call("get_table", db, "parted")
    cf.call("create_table", table(db, "ext", c3, location="@EXT@/ext", external=True), expect="ok")
    cf.call("get_table", db, "ext")
    cf.call("create_table", table(db, "ext_parted", c3, keys, location="@EXT@/extp", external=True,
                                  parquet=True), expect="ok")
    cf.call("get_table", db, "ext_parted")
    # EXTERNAL_TABLE without EXTERNAL=TRUE, MANAGED_TABLE with it, lower-case "true"
    cf.call("create_table", table(db, "ext_type_only", c3, location="@EXT@/eto", table_type="EXTERNAL_TABLE"),
            expect="ok")
    cf.call("get_table", db, "ext_type_only")
    cf.call("create_table", table(db, "managed_param", c3, location="@EXT@/mp", params={"EXTERNAL": "TRUE"},
                                  table_type="MANAGED_TABLE"), expect="ok")
    cf.call("get_table", db, "managed_param")
    cf.call("create_table", table(db, "lower_true", c3, location="@EXT@/lt", params={"EXTERNAL": "true"},
                                  table_type="EXTERNAL_TABLE"), expect="ok")
    cf.call("get_table", db, "lower_true")
    # a managed table with an explicit location, a minimal descriptor, a view
    cf.call("create_table", table(db, "managed_loc", c3, location="@EXT@/ml"), expect="ok")
    cf.call("get_table", db, "managed_loc")
    # Hive's widths: table names up to 256 characters (TBLS.TBL_NAME), column names up to 767
    long_name = "t" * 200
    cf.call("create_table", table(db, long_name, cols(f"{'c' * 300} int")), expect="ok")
    cf.call("get_table", db, long_name)
    cf.call("create_table", table(db, "t" * 257, c3), expect="MetaException", slow_reference_error=True)
    cf.call("create_table", table(db, "minimal", c3, full=False), expect="ok")
    cf.call("get_table", db, "minimal")
    view = table(db, "v1", c3, table_type="VIRTUAL_VIEW")
    view.sd.location = None
    view.viewOriginalText = "select * from managed"
    view.viewExpandedText = f"select `managed`.`id` from `{db}`.`managed`"
    cf.call("create_table", view, expect="ok")
    cf.call("get_table", db, "v1")
    # with environment context (Spark), a temporary-flag-free Hudi-like table
    hudi = table(db, "hudi_t", c3, keys[:1], location="@EXT@/hudi", external=True, parquet=True,
                 params={"spark.sql.sources.provider": "hudi", "spark.sql.sources.schema.numParts": "1",
                         "spark.sql.sources.schema.part.0": '{"type":"struct","fields":[]}',
                         "last_commit_time_sync": "20240101000000"})
    hudi.sd.inputFormat = "org.apache.hudi.hadoop.HoodieParquetInputFormat"
    cf.call("create_table_with_environment_context", hudi, EnvironmentContext(properties={}), expect="ok")
    cf.call("get_table", db, "hudi_t")
    # failures
    cf.call("create_table", table(db, "managed", c3), expect="AlreadyExistsException")
    cf.call("create_table", table(db, "MANAGED", c3), expect="AlreadyExistsException")
    cf.call("create_table", table(f"cf_nosuch_{cf.token}", "t", c3), expect="InvalidObjectException")
    cf.call("create_table", table(db, "bad-name", c3), expect="InvalidObjectException")
    cf.call("create_table", table(db, "dupcol", cols("a int", "A string")), expect="MetaException",
            slow_reference_error=True)
    cf.call("create_table", table(db, "dupkey", cols("a int"), cols("a string")), expect="ok")
    cf.call("get_table", db, "dupkey")
    cf.call("create_table", table(db, "dupkey2", cols("a int"), cols("k string", "K int")), expect="MetaException",
            slow_reference_error=True)
    # column names and types as Hive validates them
    for i, (n, t, want) in enumerate([
            ("", "int", "ok"), ("a b", "int", "ok"), ("a:b", "int", "ok"), ("x", "map<string,int", "ok"),
            ("x", "decimal(10,2)", "ok"), ("x", "varchar(10)", "ok"), ("x", "array<struct<a:int>>", "ok"),
            ("x", "nonsense", "InvalidObjectException"), ("A", "INT", "InvalidObjectException"),
            ("x", "", "MetaException"), ("x", None, "MetaException"), (None, "int", "MetaException")]):
        cf.call("create_table", table(db, f"col{i}", [FieldSchema(n, t, None)]), expect=want,
                msg=want == "InvalidObjectException")
        cf.call("create_table", table(db, f"key{i}", cols("z int"), [FieldSchema(n, t, None)]), expect=want,
                msg=want == "InvalidObjectException")
        if want == "ok":
            cf.call("get_table", db, f"col{i}")
            cf.call("get_table", db, f"key{i}")
    nosd = table(db, "nosd", c3)
    nosd.sd = None
    cf.call("create_table", nosd, expect="MetaException")
    nocols = table(db, "nocols", c3)
    nocols.sd.cols = None
    cf.call("create_table", nocols, expect="MetaException")
    cf.call("create_table", table(db, None, c3), expect="MetaException")
    cf.call("create_table", table(None, "t", c3), expect="MetaException")
    cf.call("get_table", db, "nosuch", expect="NoSuchObjectException", msg=True)
    cf.call("get_table", f"cf_nosuch_{cf.token}", "t", expect="NoSuchObjectException", msg=True)
    cleanup(cf, db)


def test_tables_listing(cf):
    db, db2 = names(cf, "lst", "lst2")
    for d in (db, db2):
        cf.call("create_database", database(d), expect="ok")
    c2 = cols("a int", "b string")
    cf.call("create_table", table(db, "alpha", c2, params={"comment": "first"}), expect="ok")
    cf.call("create_table", table(db, "beta", c2, cols("p string")), expect="ok")
    cf.call("create_table", table(db, "gamma_ext", c2, location="@EXT@/g", external=True), expect="ok")
    v = table(db, "delta_view", c2, table_type="VIRTUAL_VIEW")
    v.sd.location = None
    v.viewOriginalText = v.viewExpandedText = "select 1"
    cf.call("create_table", v, expect="ok")
    cf.call("create_table", table(db2, "alpha", c2), expect="ok")
    for pattern in ("*", ".*", "a*", "*a", "alpha|beta", "ALPHA", "al*|*ext", "nomatch", "be.a", "*_*", ""):
        cf.call("get_tables", db, pattern)
    cf.call("get_tables", f"cf_nosuch_{cf.token}", "*")
    cf.call("get_all_tables", db)
    cf.call("get_all_tables", db.upper())
    cf.call("get_all_tables", f"cf_nosuch_{cf.token}")
    for tt in ("MANAGED_TABLE", "EXTERNAL_TABLE", "VIRTUAL_VIEW", "INDEX_TABLE", "managed_table"):
        cf.call("get_tables_by_type", db, "*", tt)
    cf.call("get_tables_by_type", db, "a*|g*", "MANAGED_TABLE")
    dbp = f"cf_lst*_{cf.token}"
    cf.call("get_table_meta", dbp, "*", [], unordered_result=True)
    cf.call("get_table_meta", dbp, "alpha", [], unordered_result=True)
    cf.call("get_table_meta", dbp, "*", ["MANAGED_TABLE"], unordered_result=True)
    cf.call("get_table_meta", dbp, "*", ["EXTERNAL_TABLE", "VIRTUAL_VIEW"], unordered_result=True)
    cf.call("get_table_meta", f"cf_lst_{cf.token}", "a*|d*", [], unordered_result=True)
    cf.call("get_table_meta", f"cf_nosuch_{cf.token}", "*", [])
    cf.call("get_table_objects_by_name", db, ["alpha", "beta", "nosuch", "GAMMA_EXT"], unordered_result=True)
    cf.call("get_table_objects_by_name", db, [])
    cf.call("get_table_objects_by_name", f"cf_nosuch_{cf.token}", ["alpha"])
    cf.call("get_table_objects_by_name", db, ["beta", "beta"])
    cleanup(cf, db, db2)


def test_fields_and_schema(cf):
    (db,) = names(cf, "fld")
    cf.call("create_database", database(db), expect="ok")
    cf.call("create_table", table(db, "t", cols("id int the id", "m map<string,int>", "s struct<a:int,b:string>"),
                                  cols("ds string", "hr int")), expect="ok")
    for m in ("get_fields", "get_schema"):
        cf.call(m, db, "t")
        cf.call(m, db, "T")
        cf.call(m, db, "nosuch", expect="UnknownTableException")
        cf.call(m, f"cf_nosuch_{cf.token}", "t")
        cf.call(f"{m}_with_environment_context", db, "t", EnvironmentContext(properties={}))
    cleanup(cf, db)


def test_tables_alter(cf):
    db, db2 = names(cf, "alt", "alt2")
    for d in (db, db2):
        cf.call("create_database", database(d), expect="ok")
    c2 = cols("a int", "b string")
    cf.call("create_table", table(db, "t", c2, params={"x": "1"}), expect="ok")
    cf.call("create_table", table(db, "p", c2, cols("ds string")), expect="ok")
    cf.call("create_table", table(db, "other", c2), expect="ok")
    cf.call("add_partition", partition(table(db, "p", c2, cols("ds string")), ["2024-01-01"]), expect="ok")

    def edit(name, fn, d=db):
        def build(client):
            t = client.get_table(d, name)
            fn(t)
            return t
        return Each(build)

    # add a column, change params, owner
    def add_col(t):
        t.sd.cols = t.sd.cols + [FieldSchema("c", "double", "new col")]
        t.parameters = {"x": "2", "y": "3"}
        t.owner = "carol"
    cf.call("alter_table", db, "t", edit("t", add_col), expect="ok")
    cf.call("get_table", db, "t")
    # with environment context (Spark) and cascade to partitions
    def add_c(t):
        t.sd.cols = t.sd.cols + [FieldSchema("c", "bigint", None)]
    cf.call("alter_table_with_environment_context", db, "p", edit("p", add_c),
            EnvironmentContext(properties={"CASCADE": "true"}), expect="ok")
    cf.call("get_table", db, "p")
    cf.call("get_partition", db, "p", ["2024-01-01"])
    def add_d(t):
        t.sd.cols = t.sd.cols + [FieldSchema("d", "string", None)]
    cf.call("alter_table_with_environment_context", db, "p", edit("p", add_d), EnvironmentContext(properties={}),
            expect="ok")
    cf.call("get_table", db, "p")
    cf.call("get_partition", db, "p", ["2024-01-01"])
    # Trino: do not update stats
    cf.call("alter_table_with_environment_context", db, "t", edit("t", lambda t: t.parameters.update(z="4")),
            EnvironmentContext(properties={"DO_NOT_UPDATE_STATS": "true"}), expect="ok")
    cf.call("get_table", db, "t")
    # partition keys cannot change
    cf.call("alter_table", db, "p", edit("p", lambda t: setattr(t, "partitionKeys", cols("ds string", "hr int"))),
            expect="InvalidOperationException")
    # rename within the database, with partitions: data and partition locations move
    cf.call("alter_table", db, "t", edit("t", lambda t: setattr(t, "tableName", "t_renamed")), expect="ok")
    cf.call("get_table", db, "t", expect="NoSuchObjectException")
    cf.call("get_table", db, "t_renamed")
    cf.call("alter_table", db, "p", edit("p", lambda t: setattr(t, "tableName", "p_renamed")), expect="ok")
    cf.call("get_table", db, "p_renamed")
    cf.call("get_partitions", db, "p_renamed", -1)
    # rename across databases
    def move(t):
        t.dbName, t.tableName = db2, "moved"
    cf.call("alter_table", db, "t_renamed", edit("t_renamed", move), expect="ok")
    cf.call("get_table", db2, "moved")
    cf.call("get_all_tables", db)
    # rename onto an existing table, into a missing database, alter a missing table
    cf.call("alter_table", db, "other", edit("other", lambda t: setattr(t, "tableName", "p_renamed")),
            expect="InvalidOperationException")
    def to_missing_db(t):
        t.dbName, t.tableName = f"cf_nosuch_{cf.token}", "x"
    cf.call("alter_table", db, "other", edit("other", to_missing_db), expect="InvalidOperationException")
    cf.call("alter_table", db, "nosuch", edit("other", lambda t: None), expect="InvalidOperationException")
    # column type changes: widening is fine, anything else at the same position is refused
    def retype(*types):
        def fn(t):
            for c, ty in zip(t.sd.cols, types):
                c.type = ty
        return fn
    cf.call("alter_table", db, "other", edit("other", retype("bigint", "varchar(10)")), expect="ok")
    cf.call("get_table", db, "other")
    cf.call("alter_table", db, "other", edit("other", retype("double", "string")), expect="ok")
    for types in (("int", "string"), ("string", "string"), ("double", "int"), ("boolean", "string"),
                  ("double", "map<string,int>"), ("decimal(10,2)", "date"), ("float", "string")):
        cf.call("alter_table", db, "other", edit("other", retype(*types)),
                expect="ok" if types == ("string", "string") else "InvalidOperationException",
                msg=True)
    cf.call("get_table", db, "other")
    # external <-> managed through the EXTERNAL parameter
    def make_ext(t):
        t.parameters["EXTERNAL"] = "TRUE"
        t.tableType = "EXTERNAL_TABLE"
    cf.call("alter_table", db, "other", edit("other", make_ext), expect="ok")
    cf.call("get_table", db, "other")
    cf.call("alter_table", db, "other", edit("other", lambda t: t.parameters.pop("EXTERNAL")), expect="ok")
    cf.call("get_table", db, "other")
    cleanup(cf, db, db2)


def test_tables_drop(cf):
    (db,) = names(cf, "drp")
    cf.call("create_database", database(db), expect="ok")
    c2 = cols("a int", "b string")
    cf.call("create_table", table(db, "t", c2), expect="ok")
    cf.call("create_table", table(db, "e", c2, location="@EXT@/e", external=True), expect="ok")
    cf.call("create_table", table(db, "p", c2, cols("ds string")), expect="ok")
    cf.call("add_partition", partition(table(db, "p", c2, cols("ds string")), ["x"]), expect="ok")
    cf.call("drop_table", db, "t", True, expect="ok")
    cf.call("drop_table", db, "t", True, expect="NoSuchObjectException")
    cf.call("drop_table_with_environment_context", db, "e", True, EnvironmentContext(properties={"ifPurge": "TRUE"}),
            expect="ok")
    cf.call("drop_table", db, "P", False, expect="ok")
    cf.call("get_partitions", db, "p", -1, expect="NoSuchObjectException")
    cf.call("drop_table", f"cf_nosuch_{cf.token}", "t", True, expect="NoSuchObjectException")
    cf.call("get_all_tables", db)
    cleanup(cf, db)
