"""Differential conformance: the same Thrift calls to our server and to a reference Hive Metastore
(2.3.10 and 4.x: every test runs against each, ids ``hive2.3`` / ``hive4``), answers compared field
by field (allowed differences: tests/conformance/allowlist.py and docs/conformance.md).

One reference metastore per Hive version serves the whole session (all three backends); every test
works in databases named after a random token, so tests never see each other's objects. Set
``HMS_CONFORMANCE_REFERENCE_PORT`` (2.3) / ``HMS_CONFORMANCE_REFERENCE4_PORT`` (4) to reuse an already
running reference metastore; ``HMS_CONFORMANCE_COLLECT=1`` to list every mismatch of a test instead
of stopping at the first.
"""

from __future__ import annotations

import os
import secrets

import pytest
from thrift.Thrift import TApplicationException

from tests.conformance import allowlist as A
from tests.conformance.compare import (
    AwaitingServerChange,
    Each,
    Mismatch,
    Pair,
    RequestFormClient,
    Side,
    raw_call,
)
from tests.conformance.objects import (
    bool_stats,
    col_stats,
    cols,
    database,
    double_stats,
    function,
    int_stats,
    partition,
    string_stats,
    table,
)
from thrift_idl.hive_metastore.ttypes import (
    AddPartitionsRequest,
    AlterCatalogRequest,
    Catalog,
    CreateCatalogRequest,
    Database,
    DropCatalogRequest,
    DropPartitionsRequest,
    EnvironmentContext,
    FieldSchema,
    GetCatalogRequest,
    GetDatabaseRequest,
    GetPartitionsByNamesRequest,
    GetTableRequest,
    GetTablesRequest,
    PartitionsStatsRequest,
    RequestPartsSpec,
    TableStatsRequest,
)

# --------------------------------------------------------------------------- fixtures


_PORT_VARS = {"2.3": "HMS_CONFORMANCE_REFERENCE_PORT", "4": "HMS_CONFORMANCE_REFERENCE4_PORT"}


@pytest.fixture(scope="session")
def conformance_reference(request, reference_version):
    port = os.environ.get(_PORT_VARS[reference_version])
    if port:
        return int(port)
    return request.getfixturevalue("reference_hms_pool").port(reference_version)


def _warehouse(client, fallback: str) -> str:
    try:
        return client.get_database("default").locationUri.rstrip("/")
    except Exception:  # noqa: BLE001
        return fallback


@pytest.fixture
def cf(request, conformance_reference, reference_version, our_server_info, thrift_client, tmp_path) -> Pair:
    test = request.node.originalname
    pending = [f"[{did}] {d.reason}" for did, d in A.VERSION_DIFFERENCES.get(reference_version, {}).items()
               if d.kind == "server-change" and test in d.tests]
    if pending:  # ours differs from this reference where our server has to change (see allowlist)
        request.node.add_marker(pytest.mark.xfail(
            strict=True, raises=AwaitingServerChange,
            reason=f"awaiting server changes to answer as Hive {reference_version}: " + "; ".join(pending)))
    ref_client = thrift_client(conformance_reference)
    if reference_version in A.REFERENCE_SUBSTITUTES:
        ref_client = RequestFormClient(ref_client, reference_version)
    our_client = thrift_client(our_server_info.port)
    ext_ref, ext_ours = tmp_path / "ext-ref", tmp_path / "ext-ours"
    ext_ref.mkdir()
    ext_ours.mkdir()
    ref = Side("reference", ref_client, conformance_reference, external=str(ext_ref))
    ours = Side("ours", our_client, our_server_info.port, external=str(ext_ours))
    ref.warehouse = _warehouse(ref_client, "")
    # our server's own warehouse: the `default` database of a shared backend database may have been
    # created by another test's server with another warehouse
    ours.warehouse = our_client.get_config_value("hive.metastore.warehouse.dir", "").rstrip("/") or \
        _warehouse(our_client, f"file:{our_server_info.warehouse}")
    pair = Pair(ref, ours, token=secrets.token_hex(3), version=reference_version,
                collect=os.environ.get("HMS_CONFORMANCE_COLLECT") == "1", test=test)
    yield pair
    if pair.collected:
        pytest.fail(f"{len(pair.collected)} mismatches (HMS_CONFORMANCE_COLLECT=1):\n" + "\n".join(pair.collected),
                    pytrace=False)


def names(cf: Pair, *bases: str) -> list[str]:
    return [f"cf_{b}_{cf.token}" for b in bases]


def cleanup(cf: Pair, *dbs: str) -> None:
    """Drop the test's databases on both sides; then the differences awaiting a server change
    (``Pair.finish``) end the test."""
    for side in (cf.reference, cf.ours):
        for db in dbs:
            try:
                side.client.drop_database(db, True, True)
            except Exception:  # noqa: BLE001
                pass
    cf.finish()


def mine(prefix: str):
    """post-filter: keep the names of a global listing that belong to this test."""
    return lambda names_: [n for n in names_ if n.startswith(prefix)]


def as_hive(cf: Pair, hive4: str, hive23: str) -> str:
    """What a reference answers where Hive 4 and Hive 2.3 differ (ours answers as Hive 4)."""
    return hive4 if cf.version == "4" else hive23


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
    # names: Hive 4 takes any printable ASCII character but the backslash (2.3: letters, digits, _)
    specials = [f"cf_{n}_{cf.token}" for n in ("bad-name", "with space", "dot.ted", "a/b")]
    for name in specials:
        cf.call("create_database", database(name), expect=as_hive(cf, "ok", "InvalidObjectException"))
        if cf.version == "4":
            cf.call("get_database", name)
            cf.call("drop_database", name, True, True, expect="ok")
        else:
            cf.ours_only("drop_database", name, True, True)
    for bad in ("", "back\\slash", "t\tab", "\u00fcml"):
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
    # alter: description, parameters, owner (each side alters its own database object)
    def altered(description):
        def build(client):
            d = client.get_database(db)
            d.description = description
            d.parameters = {"k": "v2", "new": "x"}
            d.ownerName, d.ownerType = "bob", 2
            d.catalogName = None
            d.createTime = None
            return d
        return Each(build)
    cf.call("alter_database", db, altered("second"), expect="ok")
    cf.call("get_database", db, allow="alter-database-hive3")
    assert cf.ours_only("get_database", db).description == "second"  # Hive 3.1 semantics
    cf.call("alter_database", db, altered("first"), expect="ok")
    cf.call("get_database", db)
    d = altered("first").build(cf.ours.client)
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
    cleanup(cf, db, db2, mixed, *specials)


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
    # names: Hive 4 takes any printable ASCII character but the backslash (2.3: letters, digits, _ and /);
    # their directories are written bad-45-name, ...
    for name in ("bad-name", "with space", "dot.ted", "a/b"):
        cf.call("create_table", table(db, name, c3), expect=as_hive(cf, "ok", "ok" if name == "a/b" else
                                                                     "InvalidObjectException"))
        if cf.version == "4":
            cf.call("get_table", db, name)
    cf.call("create_table", table(db, "back\\slash", c3), expect="InvalidObjectException")
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
    if cf.version in A.REFERENCE_SUBSTITUTES:  # the old call's failure can only be compared with 2.3
        cf.call("get_table_objects_by_name_req", GetTablesRequest(dbName=f"cf_nosuch_{cf.token}", tblNames=["alpha"]))
    else:
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
    cf.call("get_partitions", db, "p", -1, expect=as_hive(cf, "ok", "NoSuchObjectException"))
    cf.call("drop_table", f"cf_nosuch_{cf.token}", "t", True, expect="NoSuchObjectException")
    cf.call("get_all_tables", db)
    cleanup(cf, db)


# --------------------------------------------------------------------------- partitions


def _pt(db, name="pt", **kw):
    return table(db, name, cols("a int", "b string"), cols("ds string", "hr int"), **kw)


def test_partitions_add(cf):
    (db,) = names(cf, "padd")
    cf.call("create_database", database(db), expect="ok")
    t = _pt(db)
    cf.call("create_table", t, expect="ok")
    cf.call("add_partition", partition(t, ["2024-01-01", "1"]), expect="ok")
    cf.call("add_partition", partition(t, ["2024-01-01", "2"], params={"k": "v"}), expect="ok")
    cf.call("add_partition", partition(t, ["2024-01-02", "1"], location="@EXT@/custom"), expect="ok")
    cf.call("add_partition", partition(t, ["2024-01-02", "2"], use_sd=False), expect="MetaException")
    cf.call("add_partition_with_environment_context", partition(t, ["2024-01-02", "3"]),
            EnvironmentContext(properties={}), expect="ok")
    cf.call("get_partitions", db, "pt", -1)
    # failures
    cf.call("add_partition", partition(t, ["2024-01-01", "1"]), expect="AlreadyExistsException")
    cf.call("add_partition", partition(t, ["2024-01-03"]), expect="MetaException")
    cf.call("add_partition", partition(t, ["2024-01-03", "1", "x"]), expect="MetaException")
    cf.call("add_partition", partition(_pt(db, "nosuch"), ["2024-01-03", "1"]), expect="InvalidObjectException")
    cf.call("add_partition", partition(_pt(f"cf_nosuch_{cf.token}"), ["2024-01-03", "1"]),
            expect="InvalidObjectException")
    # add_partitions: a count; all or nothing
    cf.call("add_partitions", [partition(t, ["2024-02-01", str(h)]) for h in range(3)], expect="ok")
    cf.call("add_partitions", [partition(t, ["2024-02-02", "0"]), partition(t, ["2024-01-01", "1"])],
            expect="AlreadyExistsException")
    cf.call("add_partitions", [partition(t, ["2024-02-03", "0"]), partition(t, ["2024-02-03", "0"])],
            expect="MetaException", slow_reference_error=True)
    cf.call("add_partitions", [], expect="ok")
    cf.call("get_partition_names", db, "pt", -1)
    # add_partitions_req (Spark: ifNotExists + needResult; Hudi: needResult=false)
    parts = [partition(t, ["2024-03-01", "1"]), partition(t, ["2024-01-01", "1"])]
    cf.call("add_partitions_req", AddPartitionsRequest(dbName=db, tblName="pt", parts=parts, ifNotExists=True,
                                                       needResult=True), expect="ok")
    cf.call("add_partitions_req", AddPartitionsRequest(dbName=db, tblName="pt", parts=parts, ifNotExists=False,
                                                       needResult=True), expect="AlreadyExistsException")
    cf.call("add_partitions_req", AddPartitionsRequest(
        dbName=db, tblName="pt", parts=[partition(t, ["2024-03-02", "1"])], ifNotExists=True, needResult=False),
        expect="ok")
    cf.call("add_partitions_req", AddPartitionsRequest(
        dbName=db, tblName="pt", parts=[partition(t, ["2024-03-03", "1"])], ifNotExists=False), expect="ok")
    cf.call("add_partitions_req", AddPartitionsRequest(
        dbName=db, tblName="pt", parts=[partition(_pt(db, "other"), ["2024-03-04", "1"])], ifNotExists=True,
        needResult=True), expect="MetaException")
    cf.call("add_partitions_req", AddPartitionsRequest(dbName=db, tblName="nosuch", parts=[
        partition(_pt(db, "nosuch"), ["2024-03-04", "1"])], ifNotExists=True, needResult=True),
        expect="InvalidObjectException")
    # append
    cf.call("append_partition", db, "pt", ["2024-04-01", "5"], expect="ok")
    cf.call("append_partition", db, "pt", ["2024-04-01", "5"], expect="AlreadyExistsException")
    cf.call("append_partition", db, "pt", ["2024-04-01"], expect="MetaException")
    cf.call("append_partition", db, "nosuch", ["2024-04-01", "5"], expect="InvalidObjectException")
    cf.call("append_partition_by_name", db, "pt", "ds=2024-04-02/hr=6", expect="ok")
    cf.call("append_partition_by_name", db, "pt", "hr=7/ds=2024-04-03", expect="ok")
    cf.call("append_partition_by_name", db, "pt", "ds=2024-04-02/hr=6", expect="AlreadyExistsException")
    cf.call("append_partition_by_name", db, "pt", "ds=2024-04-04", expect="InvalidObjectException", msg=True)
    cf.call("append_partition_by_name", db, "pt", "garbage", expect="InvalidObjectException")
    cf.call("append_partition_by_name", db, "nosuch", "ds=2024-04-02/hr=6", expect="InvalidObjectException")
    cf.call("get_partitions", db, "pt", -1)
    cleanup(cf, db)


def _filled(cf, db):
    t = _pt(db)
    cf.call("create_database", database(db), expect="ok")
    cf.call("create_table", t, expect="ok")
    vals = [["2024-01-01", "1"], ["2024-01-01", "2"], ["2024-01-02", "1"], ["2024-01-02", "10"],
            ["2024-01-03", "1"]]
    cf.call("add_partitions", [partition(t, v, params={"n": str(i)}) for i, v in enumerate(vals)], expect="ok")
    return t


def test_partitions_read(cf):
    (db,) = names(cf, "prd")
    _filled(cf, db)
    cf.call("get_partition", db, "pt", ["2024-01-01", "2"])
    cf.call("get_partition", db, "PT", ["2024-01-01", "2"])
    cf.call("get_partition", db, "pt", ["2024-01-01", "3"], expect="NoSuchObjectException")
    cf.call("get_partition", db, "pt", ["2024-01-01"], expect="MetaException")
    cf.call("get_partition", db, "nosuch", ["2024-01-01", "2"], expect="NoSuchObjectException")
    cf.call("get_partition_with_auth", db, "pt", ["2024-01-01", "2"], "user", ["group"])
    cf.call("get_partition_with_auth", db, "pt", ["2024-01-01", "9"], "user", [], expect="NoSuchObjectException")
    cf.call("get_partition_by_name", db, "pt", "ds=2024-01-02/hr=10")
    cf.call("get_partition_by_name", db, "pt", "hr=10/ds=2024-01-02")
    cf.call("get_partition_by_name", db, "pt", "ds=2024-01-02/hr=11", expect="NoSuchObjectException")
    for name in ("ds=2024-01-02", "garbage", "DS=2024-01-02/hr=10", "ds=2024-01-02/hr="):
        cf.call("get_partition_by_name", db, "pt", name, expect="NoSuchObjectException", msg=True)
    for name in ("ds=2024-01-02/hr=10/x=1", "x=1/ds=2024-01-02/hr=10", "/ds=2024-01-02//hr=10/",
                 "ds=2024%2D01-02/hr=10"):
        cf.call("get_partition_by_name", db, "pt", name)
    for mp in (-1, 0, 2, 100):
        cf.call("get_partitions", db, "pt", mp)
        cf.call("get_partitions_with_auth", db, "pt", mp, "user", ["g"])
        cf.call("get_partition_names", db, "pt", mp)
    cf.call("get_partitions", db, "nosuch", -1, expect=as_hive(cf, "ok", "NoSuchObjectException"))
    cf.call("get_partitions_with_auth", db, "nosuch", -1, "user", [],
            expect=as_hive(cf, "NoSuchObjectException", "ok"))
    cf.quirk("partition-names-missing-table", "get_partition_names", db, "nosuch", -1)
    for spec in (["2024-01-01"], ["2024-01-01", "2"], ["", "1"], ["2024-01-09"], [], ["", ""]):
        for mp in (-1, 0, 1):
            # Hive does not order partial-specification results: compare as sets (counts when limited)
            kw = {"unordered_result": True} if mp != 1 else {"post": len}
            cf.call("get_partitions_ps", db, "pt", spec, mp, **kw)
            cf.call("get_partitions_ps_with_auth", db, "pt", spec, mp, "user", ["g"], **kw)
            cf.call("get_partition_names_ps", db, "pt", spec, mp, **kw)
    cf.call("get_partitions_ps", db, "pt", ["a", "b", "c"], -1, expect="MetaException")
    cf.call("get_partition_names_ps", db, "pt", ["a", "b", "c"], -1, expect="MetaException")
    cf.call("get_partitions_ps", db, "nosuch", ["a"], -1, expect="NoSuchObjectException")
    cf.call("get_partitions_by_names", db, "pt", ["ds=2024-01-02/hr=10", "ds=2024-01-01/hr=1", "ds=nosuch/hr=1"])
    cf.call("get_partitions_by_names", db, "pt", [])
    cf.call("get_partitions_by_names", db, "pt", ["garbage", "ds=2024-01-01/hr=1"])
    cf.call("get_partitions_by_names", db, "pt", ["hr=1/ds=2024-01-01", "DS=2024-01-01/hr=1", "ds=2024-01-01/hr=1/"])
    cf.call("get_partitions_by_names", db, "nosuch", ["ds=2024-01-01/hr=1"], expect="NoSuchObjectException")
    cleanup(cf, db)


def _edit_part(db, tbl, values, fn):
    def build(client):
        p = client.get_partition(db, tbl, values)
        fn(p)
        return p
    return Each(build)


def test_partitions_alter_rename(cf):
    (db,) = names(cf, "palt")
    _filled(cf, db)
    cf.call("alter_partition", db, "pt", _edit_part(db, "pt", ["2024-01-01", "1"],
                                                    lambda p: p.parameters.update(x="1")), expect="ok")
    cf.call("get_partition", db, "pt", ["2024-01-01", "1"])

    def relocate(p):
        p.sd.location = cf_ext + "/moved"
    cf_ext = "@EXT@"
    cf.call("alter_partition_with_environment_context", db, "pt",
            _edit_part(db, "pt", ["2024-01-01", "2"], relocate), EnvironmentContext(properties={}), expect="ok")
    cf.call("get_partition", db, "pt", ["2024-01-01", "2"])

    def new_cols(p):
        p.sd.cols = p.sd.cols + [FieldSchema("c", "string", None)]
        p.parameters = {"replaced": "yes"}
    cf.call("alter_partition", db, "pt", _edit_part(db, "pt", ["2024-01-02", "1"], new_cols), expect="ok")
    cf.call("get_partition", db, "pt", ["2024-01-02", "1"])
    cf.call("alter_partitions", db, "pt", [
        _edit_part(db, "pt", ["2024-01-02", "10"], lambda p: p.parameters.update(y="2")),
        _edit_part(db, "pt", ["2024-01-03", "1"], lambda p: p.parameters.update(y="3"))], expect="ok")
    cf.call("get_partitions", db, "pt", -1)
    # several at once: new columns on one, the rest as they are; then one missing among existing
    # ones (nothing changes)
    cf.call("alter_partitions", db, "pt", [
        _edit_part(db, "pt", ["2024-01-02", "10"], new_cols),
        _edit_part(db, "pt", ["2024-01-03", "1"], lambda p: None)], expect="ok")
    cf.call("get_partitions", db, "pt", -1)
    cf.call("alter_partitions", db, "pt", [
        _edit_part(db, "pt", ["2024-01-02", "10"], lambda p: p.parameters.update(z="1")),
        _edit_part(db, "pt", ["2024-01-03", "1"], lambda p: setattr(p, "values", ["2024-09-09", "9"]))],
        expect="InvalidOperationException")
    cf.call("get_partitions", db, "pt", -1)
    cf.call("alter_partitions_with_environment_context", db, "pt", [
        _edit_part(db, "pt", ["2024-01-03", "1"], lambda p: p.parameters.pop("y"))],
        EnvironmentContext(properties={"DO_NOT_UPDATE_STATS": "true"}), expect="ok")
    cf.call("get_partition", db, "pt", ["2024-01-03", "1"])
    # altering a partition that does not exist, of a table that does not exist
    missing = _edit_part(db, "pt", ["2024-01-03", "1"], lambda p: setattr(p, "values", ["2024-09-09", "9"]))
    cf.call("alter_partition", db, "pt", missing, expect="InvalidOperationException")
    cf.call("alter_partitions", db, "pt", [missing], expect="InvalidOperationException")
    cf.call("alter_partition", db, "nosuch", _edit_part(db, "pt", ["2024-01-03", "1"], lambda p: None),
            expect="InvalidOperationException")
    # rename: the managed partition's directory moves with it
    cf.call("rename_partition", db, "pt", ["2024-01-01", "1"],
            _edit_part(db, "pt", ["2024-01-01", "1"], lambda p: setattr(p, "values", ["2024-05-05", "5"])),
            expect="ok")
    cf.call("get_partition", db, "pt", ["2024-05-05", "5"])
    cf.call("get_partition", db, "pt", ["2024-01-01", "1"], expect="NoSuchObjectException")
    cf.call("rename_partition", db, "pt", ["2024-01-01", "2"],
            _edit_part(db, "pt", ["2024-01-01", "2"], lambda p: setattr(p, "values", ["2024-05-06", "5"])),
            expect="ok")
    # ...but not out of a place outside the warehouse that the server did not make (issue 17)
    moved = cf.call("get_partition", db, "pt", ["2024-05-06", "5"], allow="rename-outside-boundary")
    assert moved.sd.location.endswith("/moved"), moved.sd.location
    cf.call("rename_partition", db, "pt", ["2024-05-05", "5"],
            _edit_part(db, "pt", ["2024-05-05", "5"], lambda p: setattr(p, "values", ["2024-05-06", "5"])),
            expect="InvalidOperationException", msg=True)
    cf.call("rename_partition", db, "pt", ["2024-09-09", "9"],
            _edit_part(db, "pt", ["2024-05-05", "5"], lambda p: setattr(p, "values", ["2024-05-07", "5"])),
            expect="InvalidOperationException")
    cf.call("get_partition_names", db, "pt", -1)
    cleanup(cf, db)


def test_partitions_drop(cf):
    (db,) = names(cf, "pdrp")
    _filled(cf, db)
    cf.call("drop_partition", db, "pt", ["2024-01-01", "1"], True, expect="ok")
    cf.call("drop_partition", db, "pt", ["2024-01-01", "1"], True, expect="NoSuchObjectException")
    cf.call("drop_partition", db, "pt", ["2024-01-01"], True, expect="MetaException")
    cf.call("drop_partition", db, "nosuch", ["2024-01-01", "1"], True, expect="NoSuchObjectException")
    cf.call("drop_partition_with_environment_context", db, "pt", ["2024-01-01", "2"], False,
            EnvironmentContext(properties={}), expect="ok")
    cf.call("drop_partition_by_name", db, "pt", "ds=2024-01-02/hr=1", True, expect="ok")
    cf.call("drop_partition_by_name", db, "pt", "ds=2024-01-02/hr=1", True, expect="NoSuchObjectException")
    cf.call("drop_partition_by_name", db, "pt", "garbage", True, expect="NoSuchObjectException")
    cf.call("drop_partition_by_name_with_environment_context", db, "pt", "ds=2024-01-02/hr=10", True,
            EnvironmentContext(properties={}), expect="ok")
    cf.call("get_partition_names", db, "pt", -1)
    t = _pt(db)
    cf.call("add_partitions", [partition(t, ["2024-06-01", str(h)]) for h in range(4)], expect="ok")

    def dpr(names_, **kw):
        return DropPartitionsRequest(dbName=db, tblName="pt", parts=RequestPartsSpec(names=names_), **kw)
    cf.call("drop_partitions_req", dpr(["ds=2024-06-01/hr=0", "ds=2024-06-01/hr=1"], deleteData=True,
                                       needResult=True), expect="ok")
    cf.call("drop_partitions_req", dpr(["ds=2024-06-01/hr=2", "ds=2024-06-01/hr=9"], ifExists=True,
                                       needResult=True), expect="ok")
    cf.call("drop_partitions_req", dpr(["ds=2024-06-01/hr=3", "ds=2024-06-01/hr=9"], ifExists=False),
            expect="NoSuchObjectException")
    cf.call("get_partition_names", db, "pt", -1)
    cf.call("drop_partitions_req", dpr(["ds=2024-06-01/hr=3"], needResult=False), expect="ok")
    cf.call("drop_partitions_req", dpr([], needResult=True), expect="ok")
    cf.call("get_partition_names", db, "pt", -1)
    cleanup(cf, db)


def test_partition_names_and_escaping(cf):
    (db,) = names(cf, "pesc")
    cf.call("create_database", database(db), expect="ok")
    t = table(db, "esc", cols("a int"), cols("s string"))
    cf.call("create_table", t, expect="ok")
    values = ["a/b", "x=y", "100%", "sp ace", "\u00fcml", "a:b", "#h", "q'uote", 'd"q', "back\\slash", "tab\there",
              "__HIVE_DEFAULT_PARTITION__", "UPPER", "upper", "{br}", "[sq]", "st*r", "qm?", "car^et", "del\x7f",
              "comma,semi;", "dollar$", "plus+", "dot.", "tilde~"]
    for v in values:
        cf.call("add_partition", partition(t, [v]), expect="ok")
    cf.call("get_partition_names", db, "esc", -1)
    cf.call("get_partitions", db, "esc", -1)
    for v in values:
        cf.call("get_partition", db, "esc", [v])
    for name in cf.ours_only("get_partition_names", db, "esc", -1):
        cf.call("get_partition_by_name", db, "esc", name)
        cf.call("partition_name_to_vals", name)
        cf.call("partition_name_to_spec", name)
    cf.call("get_partitions_by_names", db, "esc", ["s=a%2Fb", "s=x%3Dy", "s=100%25", "s=UPPER"])
    cf.call("get_partitions_ps", db, "esc", ["a/b"], -1)
    cf.call("get_partition_names_ps", db, "esc", ["x=y"], -1)
    # an empty value: Hive names it __HIVE_DEFAULT_PARTITION__
    t2 = table(db, "esc2", cols("a int"), cols("s string", "i int"))
    cf.call("create_table", t2, expect="ok")
    cf.call("add_partition", partition(t2, ["", ""]), expect="ok")
    cf.call("get_partition_names", db, "esc2", -1)
    cf.call("get_partitions", db, "esc2", -1)
    cf.call("get_partition", db, "esc2", ["", ""])
    cf.call("get_partition", db, "esc2", ["__HIVE_DEFAULT_PARTITION__", "__HIVE_DEFAULT_PARTITION__"])
    cf.call("add_partition", partition(t2, ["__HIVE_DEFAULT_PARTITION__", "__HIVE_DEFAULT_PARTITION__"]),
            expect="AlreadyExistsException")
    cf.call("drop_partition_by_name", db, "esc", "s=a%2Fb", True, expect="ok")
    cf.call("drop_partition", db, "esc", ["x=y"], True, expect="ok")
    cf.call("get_partition_names", db, "esc", -1)
    # name <-> values / spec
    for name in ("a=1/b=2", "a=x%2Fy/b=%25", "A=1", "a=1/b=", "a=", "a", "", "a=1//b=2", "a=1/b=2/", "k=v=w",
                 "a=%zz", "a=%2", "/a=1"):
        cf.call("partition_name_to_vals", name)
        cf.call("partition_name_to_spec", name)
    cleanup(cf, db)


# --------------------------------------------------------------------------- partition filters

FILTER_ROWS = [  # (s string, i int, d date)
    ("a", "1", "2024-01-01"), ("b", "2", "2024-01-15"), ("B", "10", "2024-02-01"), ("a b", "-3", "2023-12-31"),
    ("x'y", "5", "2024-01-01"), ('q"t', "20", "2024-03-01"), ("10", "100", "2024-01-02"), ("9", "9", "2024-01-03"),
    ("abc", "3", "2024-01-04"), ("a", "__HIVE_DEFAULT_PARTITION__", "2024-01-05"),
]

FILTERS = [
    # strings, both quote styles, literal on either side
    's = "a"', "s = 'a'", 's != "a"', 's <> "a"', 's < "b"', 's <= "b"', 's > "a"', 's >= "B"', '"a" = s',
    '"b" > s', "s = \"x'y\"", "s = 'q\"t'", 's = "nomatch"', 's = "10"', 's > "9"', 'S = "a"', "s = 'a b'",
    # integers: numeric order, the default partition never matches
    "i = 2", "i != 2", "i <> 2", "i < 10", "i <= 2", "i > 1", "i >= -3", "10 > i", "i = -3", "i > 9",
    # dates
    'd = "2024-01-01"', "d = '2024-01-01'", 'd < "2024-01-15"', 'd >= "2024-01-02"', 'd <> "2024-01-01"',
    # BETWEEN
    "i between 1 and 5", "i not between 1 and 5", 's between "a" and "b"', 'd between "2024-01-01" and "2024-01-15"',
    # IN / NOT IN (Hive's form has the key in parentheses)
    '(s) in ("a", "b")', '(s) not in ("a", "b")', "(i) in (1, 2, 3)", "(i) not in (1, 2)",
    # AND binds tighter than OR; parentheses; NOT
    's = "a" or i = 2 and d = "2024-01-15"', '(s = "a" or i = 2) and d = "2024-01-15"', 's = "a" and i = 1 or s = "b"',
    's = "a" AND i = 1 OR s = "B"', '(s = "a")', '((s = "a") and (i = 1))', "(i >= 1 and i <= 5)",
    '(s = "a" or (s = "b" and (i = 2 or i = 3)))',
    # what Spark sends
    '(s = "a" or s = "b")', '(s != "a" and s != "b")', '(d >= "2024-01-02" and d <= "2024-01-04")',
]

FILTERS += [
    # LIKE on a string key: `.*` any run, `.` one character, anything else literal, whole value
    's like "a.*"', 's like ".*b.*"', 's LIKE "A.*"', 's like "a"', 's like "_"', 's like "a%"', 's like "a.c"',
    's like "(a|b)"', 's like "."', 's like "x\'.*"', 's like ".*"',
    # type rules: date keys compare as text (Hive 4; 2.3 read dates leniently and refused non-dates), the
    # default partition of a date/int key never matches
    "d = '2024-1-1'", 'd = " 2024-01-01"', 'd = "2024-01-01 10:00:00"', '(d) in ("2024-01-01", "2024-1-3")',
    "d between 2024-01-01 and 2024-01-04", "s = 2024-01-01", 'd <> "2024-01-01"', 'd = "20240101"',
    'd = "2024-02-30"',
    # LIKE on a date key (Hive 4; 2.3 refuses): `%` and `_` are wildcards there too
    'd like "2024.*"', 'd like "2024-01-0_"', 'd like "%-01"', 'd like "2024-01-01"',
]

BAD_FILTERS = ['s = ', 'nosuch = "a"', 's = a', "s", '((s = "a")', 's = "a" and', 's === "a"', 'i = 1.5',
               '"a" = "a"', 'i = "2"', "i = 2024-01-01", "s = 1", "s > 9", "d = 1", 'i like "1.*"',
               '"a.*" like s', "i = 0x10", "i = +2", 'x = 1']

# (filter, expected (s, i) of the matching rows): where the reference cannot answer (REFERENCE_GAPS)
GAP_FILTERS = {
    "like-with-other-keys": [
        ('i = 1 and s like "a.*"', {("a", "1")}),
        ('s like "a.*" or i > 9', {("a", "1"), ("a", "__HIVE_DEFAULT_PARTITION__"), ("a b", "-3"), ("abc", "3"),
                                   ("B", "10"), ('q"t', "20"), ("10", "100")}),
        ('s like "a.*" and d < "2024-01-04"', {("a", "1"), ("a b", "-3")}),
    ],
    "filter-extensions": [
        ('not s = "a"', {(r[0], r[1]) for r in FILTER_ROWS if r[0] != "a"}),
        ('not (s = "a" or i > 2)', {("b", "2"), ("a b", "-3")}),
        ('s in ("a", "b")', {("a", "1"), ("a", "__HIVE_DEFAULT_PARTITION__"), ("b", "2")}),
        ("s not like 'a.*' and i < 3", {("b", "2")}),
    ],
    "filter-extensions-hive23": [
        ("d = date '2024-01-01'", {("a", "1"), ("x'y", "5")}),
        ('s == "b"', {("b", "2")}),
        ('`s` = "b"', {("b", "2")}),
    ],
}


def test_partition_filters(cf):
    (db,) = names(cf, "flt")
    cf.call("create_database", database(db), expect="ok")
    t = table(db, "f", cols("x int"), cols("s string", "i int", "d date"))
    cf.call("create_table", t, expect="ok")
    cf.call("add_partitions", [partition(t, list(r)) for r in FILTER_ROWS], expect="ok")
    problems = []

    def check(*args, **kw):
        try:
            cf.call(*args, **kw)
        except Mismatch as e:
            problems.append(str(e))

    for f in FILTERS:
        check("get_partitions_by_filter", db, "f", f, -1, expect="ok")
        check("get_num_partitions_by_filter", db, "f", f, expect="ok")
    check("get_partitions_by_filter", db, "f", "i > 1", 2)
    check("get_partitions_by_filter", db, "f", "", -1)
    check("get_partitions_by_filter", db, "nosuch", 's = "a"', -1)
    for f in BAD_FILTERS:
        check("get_partitions_by_filter", db, "f", f, -1, expect="MetaException")
        check("get_num_partitions_by_filter", db, "f", f, expect="MetaException")
    for gap, cases in GAP_FILTERS.items():
        for f, want in cases:
            try:
                answer = cf.reference_gap(gap, "get_partitions_by_filter", db, "f", f, -1)
                got = {(p.values[0], p.values[1]) for p in answer}
                n = cf.reference_gap(gap, "get_num_partitions_by_filter", db, "f", f)
            except Mismatch as e:
                problems.append(str(e))
                continue
            if got != want or n != len(want):
                problems.append(f"{f}: ours {sorted(got)} ({n}), expected {sorted(want)}")
    try:
        cf.quirk("filter-trailing-text", "get_partitions_by_filter", db, "f", 's = "a" xor i = 1', -1)
    except Mismatch as e:
        problems.append(str(e))
    assert not problems, f"{len(problems)} filter differences:\n" + "\n".join(problems)
    cleanup(cf, db)


# --------------------------------------------------------------------------- column statistics


def test_statistics(cf):
    (db,) = names(cf, "sts")
    cf.call("create_database", database(db), expect="ok")
    c5 = cols("a int", "b string", "c double", "d boolean", "e bigint")
    t = table(db, "t", c5)
    p = table(db, "p", c5, cols("ds string"))
    cf.call("create_table", t, expect="ok")
    cf.call("create_table", p, expect="ok")
    cf.call("add_partitions", [partition(p, [v]) for v in ("x", "y")], expect="ok")
    objs = [int_stats("a", 1, 100, 0, 50), string_stats("b", 10, 4.5, 2, 30), double_stats("c", -1.5, 9.25, 1, 7),
            bool_stats("d", 3, 4, 0)]
    # table level
    cf.call("update_table_column_statistics", col_stats(db, "t", objs), expect="ok")
    cf.call("get_table", db, "t")
    for col in ("a", "b", "c", "d"):
        cf.call("get_table_column_statistics", db, "t", col)
    cf.call("get_table_column_statistics", db, "t", "A")
    cf.call("get_table_column_statistics", db, "t", "e", expect="TApplicationException")  # no result
    cf.call("get_table_column_statistics", db, "t", "zz", expect="TApplicationException")
    cf.call("get_table_column_statistics", db, "nosuch", "a", expect="NoSuchObjectException")
    cf.call("get_table_statistics_req", TableStatsRequest(dbName=db, tblName="t", colNames=["a", "b", "e", "zz"]))
    cf.call("get_table_statistics_req", TableStatsRequest(dbName=db, tblName="t", colNames=["d", "c"]))
    cf.call("get_table_statistics_req", TableStatsRequest(dbName=db, tblName="t", colNames=[]))
    cf.call("get_table_statistics_req", TableStatsRequest(dbName=db, tblName="nosuch", colNames=["a"]),
            expect="NoSuchObjectException")
    # overwrite one column, then a column the table does not have, a table that does not exist
    cf.call("update_table_column_statistics", col_stats(db, "t", [int_stats("a", 5, 6, 1, 2)]), expect="ok")
    cf.call("get_table_column_statistics", db, "t", "a")
    cf.call("get_table", db, "t")
    cf.call("update_table_column_statistics", col_stats(db, "t", [int_stats("zz", 1, 2, 0, 1)]))
    cf.call("update_table_column_statistics", col_stats(db, "nosuch", [int_stats("a", 1, 2, 0, 1)]))
    # partition level
    cf.call("update_partition_column_statistics", col_stats(db, "p", objs[:2], part_name="ds=x"), expect="ok")
    cf.call("update_partition_column_statistics", col_stats(db, "p", objs[2:], part_name="ds=y"), expect="ok")
    cf.call("get_partition", db, "p", ["x"])
    cf.call("get_table", db, "p")
    cf.call("get_partition_column_statistics", db, "p", "ds=x", "a")
    cf.call("get_partition_column_statistics", db, "p", "ds=x", "c", expect="TApplicationException")
    cf.call("get_partition_column_statistics", db, "p", "ds=zz", "a")
    for colnames, partnames in ((["a", "b", "c", "d"], ["ds=x", "ds=y"]), (["a"], ["ds=y"]),
                                (["a", "c"], ["ds=x", "ds=nosuch", "garbage"]), ([], ["ds=x"]), (["a"], [])):
        cf.call("get_partitions_statistics_req", PartitionsStatsRequest(
            dbName=db, tblName="p", colNames=colnames, partNames=partnames))
    cf.call("get_partitions_statistics_req", PartitionsStatsRequest(
        dbName=db, tblName="nosuch", colNames=["a"], partNames=["ds=x"]), expect="NoSuchObjectException")
    cf.call("update_partition_column_statistics", col_stats(db, "p", objs[:1], part_name="ds=nosuch"))
    cf.call("update_partition_column_statistics", col_stats(db, "p", objs[:1], part_name="garbage"))
    # delete
    cf.call("delete_table_column_statistics", db, "t", "a", None, expect="ok")
    cf.call("get_table_column_statistics", db, "t", "a", expect="TApplicationException")
    cf.call("delete_table_column_statistics", db, "t", "a", None)
    cf.call("get_table", db, "t")
    cf.call("delete_table_column_statistics", db, "t", None, None, expect="ok")
    cf.call("get_table_statistics_req", TableStatsRequest(dbName=db, tblName="t", colNames=["a", "b", "c", "d"]))
    cf.call("delete_table_column_statistics", db, "nosuch", "a", None)
    cf.call("delete_partition_column_statistics", db, "p", "ds=x", "a", None, expect="ok")
    cf.call("delete_partition_column_statistics", db, "p", "ds=x", "a", None)
    cf.call("delete_partition_column_statistics", db, "p", "ds=nosuch", "a", None)
    cf.call("get_partitions_statistics_req", PartitionsStatsRequest(
        dbName=db, tblName="p", colNames=["a", "b", "c", "d"], partNames=["ds=x", "ds=y"]))
    cf.call("delete_partition_column_statistics", db, "p", "ds=y", None, None, expect="ok")
    cf.call("get_partitions_statistics_req", PartitionsStatsRequest(
        dbName=db, tblName="p", colNames=["a", "b", "c", "d"], partNames=["ds=x", "ds=y"]))
    # dropping a column drops its statistics
    cf.call("update_table_column_statistics", col_stats(db, "t", objs), expect="ok")

    def drop_last(tb):  # (dropping one in the middle would shift types: an incompatible change)
        tb.sd.cols = tb.sd.cols[:3]
    cf.call("alter_table", db, "t", Each(lambda client: _edited(client.get_table(db, "t"), drop_last)), expect="ok")
    cf.call("get_table_statistics_req", TableStatsRequest(dbName=db, tblName="t", colNames=["a", "b", "c", "d"]))
    cf.call("get_table", db, "t")
    cleanup(cf, db)


def _edited(obj, fn):
    fn(obj)
    return obj


# --------------------------------------------------------------------------- functions


def test_functions(cf):
    db, db2 = names(cf, "fn", "fn2")
    for d in (db, db2):
        cf.call("create_database", database(d), expect="ok")
    cf.call("create_function", function(db, "f1", resources=[(1, "file:///tmp/udf.jar")]), expect="ok")
    cf.call("create_function", function(db, "upper_f", cls="com.example.Upper"), expect="ok")
    cf.call("create_function", function(db2, "f1", cls="com.example.Other",
                                        resources=[(2, "file:///x.py"), (3, "a.zip")]), expect="ok")
    cf.call("get_function", db, "f1")
    cf.call("get_function", db, "F1")
    cf.call("get_function", db, "upper_f")
    cf.call("get_function", db2, "f1")
    cf.call("get_function", db, "nosuch", expect="NoSuchObjectException", msg_contains="nosuch does not exist")
    cf.call("get_function", f"cf_nosuch_{cf.token}", "f1", expect="NoSuchObjectException")
    for pattern in ("*", "f*", "F1", "u*|f1", "nomatch", ""):
        cf.call("get_functions", db, pattern)
    cf.call("get_functions", f"cf_nosuch_{cf.token}", "*")
    cf.call("get_all_functions", post=lambda r: sorted(
        (f for f in r.functions if cf.token in f.dbName), key=lambda f: (f.dbName, f.functionName)))
    # failures
    cf.call("create_function", function(db, "f1"), expect="AlreadyExistsException")
    cf.call("create_function", function(db, "F1"), expect="AlreadyExistsException")
    cf.call("create_function", function(f"cf_nosuch_{cf.token}", "f9"), expect="NoSuchObjectException")
    cf.call("create_function", function(db, "bad-name"), expect="InvalidObjectException")
    cf.call("create_function", function(db, "nocls", cls=None))
    cf.call("drop_function", db, "f1", expect="ok")
    cf.call("get_function", db, "f1", expect="NoSuchObjectException")
    cf.call("drop_function", db, "f1", expect="NoSuchObjectException")
    cf.call("drop_function", db, "UPPER_F", expect="ok")
    cf.call("get_functions", db, "*")
    # a mixed-case name from a client that does not lower-case it first
    cf.call("create_function", function(db, "Mixed_F"), expect="ok")
    cf.quirk("function-name-case", "get_function", db, "mixed_f")
    cleanup(cf, db, db2)


# --------------------------------------------------------------------------- wire-level errors, Hive 3 calls


def test_unknown_method(cf):
    outs = [raw_call(side.client, "no_such_method") for side in (cf.reference, cf.ours)]
    for o in outs:
        assert isinstance(o, TApplicationException), o
    ref, ours = outs
    assert (ref.type, ref.message) == (ours.type, ours.message) == (
        TApplicationException.UNKNOWN_METHOD, "Invalid method name: 'no_such_method'")
    # the connection stays usable
    cf.call("get_database", "default")
    # calls a reference no longer has (compared through their request form elsewhere): ours keeps them
    for method in A.REFERENCE_SUBSTITUTES.get(cf.version, {}):
        x = raw_call(cf.reference.client._client, method)
        assert isinstance(x, TApplicationException) and x.type == TApplicationException.UNKNOWN_METHOD, (method, x)
    cf.finish()


def test_set_ugi(cf):
    """The answer is the groups as sent (Hive 2.3 and 4 alike), without the user."""
    cf.call("set_ugi", "alice", ["g1", "g2"])
    # (an empty group list makes the reference drop the connection; ours answers [])
    cf.finish()


def test_hive3_calls_on_ours_only(cf):
    """Calls Hive 2.3 lacks (UNKNOWN_METHOD there): ours must answer as the 2.3 call does."""
    (db,) = names(cf, "h3")
    _filled(cf, db)
    ref = cf.reference.client
    # present in 2.3 already: compared directly
    cf.call("get_table_req", GetTableRequest(dbName=db, tblName="pt"))
    cf.call("get_table_req", GetTableRequest(dbName=db, tblName="nosuch"), expect="NoSuchObjectException")
    cf.call("get_table_objects_by_name_req", GetTablesRequest(dbName=db, tblNames=["pt", "nosuch"]))
    # Hive 3 / 4 only
    names_ = ["ds=2024-01-01/hr=1", "ds=2024-01-02/hr=10"]
    cf.same("get_partitions_by_names_req", ref.get_partitions_by_names(db, "pt", names_),
            cf.reference_gap("hive3-calls", "get_partitions_by_names_req",
                             GetPartitionsByNamesRequest(db_name=db, tbl_name="pt", names=names_)).partitions)
    cf.same("get_database_req", ref.get_database(db),
            cf.reference_gap("hive3-calls", "get_database_req", GetDatabaseRequest(name=db)))
    if cf.version == "4":
        cf.call("get_catalogs", post=lambda r: [n for n in r.names if n == "hive" or cf.token in n])
    else:
        assert "hive" in cf.reference_gap("hive3-calls", "get_catalogs").names
    if cf.version == "2.3":
        with pytest.raises(TApplicationException) as info:
            ref.get_database_req(GetDatabaseRequest(name=db))
        assert info.value.type == TApplicationException.UNKNOWN_METHOD
        assert info.value.message == "Invalid method name: 'get_database_req'"
    else:  # as Hive 4 clients send it
        cf.call("get_database_req", GetDatabaseRequest(name=db, catalogName="hive"))
    cleanup(cf, db)


# --------------------------------------------------------------------------- catalogs


@pytest.mark.hive_versions("4")  # Hive 2.3 has no catalogs (its get_catalog is an unknown method)
def test_catalogs(cf):
    """Catalogs (Hive 3+), compared with Hive 4: the same database name in two catalogs holds different
    tables; `@<catalog>#<db>` prefixes in the old calls, catalog fields in the request structs."""
    cat, nocat, (db,) = f"cf_cat_{cf.token}", f"cf_nocat_{cf.token}", names(cf, "catdb")

    def catalogs(r):
        return [n for n in r.names if n == "hive" or cf.token in n]
    cf.call("get_catalogs", post=catalogs)
    cf.call("get_catalog", GetCatalogRequest(name="hive"))
    cf.call("get_catalog", GetCatalogRequest(name="HIVE"))
    cf.call("get_catalog", GetCatalogRequest(name=cat), expect="NoSuchObjectException", msg=True)
    # create: a location is required, the name is validated and lower-cased
    cf.call("create_catalog", CreateCatalogRequest(Catalog(name=cat)), expect="InvalidObjectException", msg=True)
    cf.call("create_catalog", CreateCatalogRequest(Catalog(name=f"cf-bad_{cf.token}", locationUri="@EXT@/bad")),
            expect="InvalidObjectException")
    cf.call("create_catalog", CreateCatalogRequest(Catalog(name=cat.upper(), description="first",
                                                           locationUri="@EXT@/cat")), expect="ok")
    cf.call("create_catalog", CreateCatalogRequest(Catalog(name=cat, locationUri="@EXT@/cat2")),
            expect="AlreadyExistsException", msg=True)
    cf.call("get_catalog", GetCatalogRequest(name=cat))
    cf.call("get_catalogs", post=catalogs)
    # its `default` database; a database of the same name in each catalog
    cf.call("get_databases", f"@{cat}#*")
    cf.call("get_database", f"@{cat}#default")
    cf.call("get_database_req", GetDatabaseRequest(name="default", catalogName=cat))
    cf.call("create_database", Database(name=db, catalogName=cat, parameters={}), expect="ok")
    cf.call("create_database", database(db), expect="ok")
    cf.call("create_database", Database(name=db, catalogName=cat, parameters={}), expect="AlreadyExistsException")
    cf.call("create_database", Database(name=db, catalogName=nocat, parameters={}), expect="InvalidObjectException",
            msg=True)
    cf.call("get_database", f"@{cat}#{db}")
    cf.call("get_database", db)
    cf.call("get_database", f"@{nocat}#{db}", expect="NoSuchObjectException", msg=True)
    for pattern in (f"@{cat}#*", f"@{cat}#", f"@{cat}#cf_cat*", f"@{nocat}#*"):
        cf.call("get_databases", pattern)
    # tables: each database holds its own
    t = table(db, "t", cols("a int"), cols("p string"))
    t.catName = cat
    cf.call("create_table", t, expect="ok")
    cf.call("create_table", table(db, "other", cols("a int")), expect="ok")
    cf.call("get_table_req", GetTableRequest(dbName=db, tblName="t", catName=cat))
    cf.call("get_table_req", GetTableRequest(dbName=db, tblName="t"), expect="NoSuchObjectException", msg=True)
    cf.call("get_table_req", GetTableRequest(dbName=db, tblName="other", catName=cat), expect="NoSuchObjectException",
            msg=True)
    cf.call("get_tables", f"@{cat}#{db}", "*")
    cf.call("get_all_tables", db)
    cf.call("get_table_meta", f"@{cat}#*", "*", [], unordered_result=True)
    cf.call("get_table_objects_by_name_req", GetTablesRequest(dbName=db, tblNames=["t", "other"], catName=cat))
    # alter: not the name
    cf.call("alter_catalog", AlterCatalogRequest(cat, Catalog(name="renamed", locationUri="@EXT@/cat")),
            expect="InvalidOperationException", msg=True)
    cf.call("alter_catalog", AlterCatalogRequest(cat, Catalog(name=cat, description="second", locationUri="@EXT@/c3")),
            expect="ok")
    cf.call("get_catalog", GetCatalogRequest(name=cat))
    cf.call("alter_catalog", AlterCatalogRequest(nocat, Catalog(name=nocat, description="x")),
            expect="NoSuchObjectException", msg=True)
    # drop: not `hive`, not while it holds databases or objects in its `default`
    cf.call("drop_catalog", DropCatalogRequest(name=cat), expect="InvalidOperationException", msg=True)
    cf.call("drop_catalog", DropCatalogRequest(name="hive"), expect="MetaException", msg=True)
    cf.call("drop_catalog", DropCatalogRequest(name=nocat), expect="NoSuchObjectException", msg=True)
    cf.call("drop_database", f"@{cat}#{db}", True, True, expect="ok")
    cf.call("get_table_req", GetTableRequest(dbName=db, tblName="other"))
    t2 = table("default", "t2", cols("a int"))
    t2.catName = cat
    cf.call("create_table", t2, expect="ok")
    cf.call("drop_catalog", DropCatalogRequest(name=cat), expect="InvalidOperationException", msg=True)
    cf.call("drop_table", f"@{cat}#default", "t2", True, expect="ok")
    cf.call("drop_catalog", DropCatalogRequest(name=cat), expect="ok")
    cf.call("get_catalog", GetCatalogRequest(name=cat), expect="NoSuchObjectException")
    cf.call("get_databases", f"@{cat}#*")
    for side in (cf.reference, cf.ours):  # what a failure above left
        try:
            for d in side.client.get_databases(f"@{cat}#*"):
                side.client.drop_database(f"@{cat}#{d}", True, True)
            side.client.drop_catalog(DropCatalogRequest(name=cat))
        except Exception:  # noqa: BLE001
            pass
    cleanup(cf, db)


# --------------------------------------------------------------------------- quick stats from data files


def _files(cf: Pair, rel: str, files: dict[str, str], root: str = "@EXT@") -> None:
    """The same data files under each side's external root (`root` "@WH@": its warehouse)."""
    import os

    for side in (cf.reference, cf.ours):
        for name, content in files.items():
            base = side.subst(root)
            path = os.path.join(base[len("file:"):] if base.startswith("file:") else base, rel, name)
            os.makedirs(os.path.dirname(path), exist_ok=True)
            with open(path, "w") as f:
                f.write(content)


def test_quick_stats(cf):
    """numFiles / totalSize Hive keeps in parameters when it creates or alters objects on
    directories that already hold data (hidden `.`/`_` files do not count). The folders are in the
    warehouse: ours counts only folders under the warehouse and the configured roots."""
    (db,) = names(cf, "qs")
    d = f"{db}_data"
    cf.call("create_database", database(db), expect="ok")
    _files(cf, f"{d}/t", {"part-0": "hello\n", "sub/part-1": "more data\n", ".hidden": "x", "_SUCCESS": ""},
           root="@WH@")
    c2 = cols("a int", "b string")
    cf.call("create_table", table(db, "t", c2, location=f"@WH@/{d}/t", external=True), expect="ok")
    cf.call("get_table", db, "t")
    cf.call("create_table", table(db, "t_partial", c2, location=f"@WH@/{d}/t", external=True, params={"numFiles": "9"}),
            expect="ok")
    cf.call("get_table", db, "t_partial")
    cf.call("create_table", table(db, "t_given", c2, location=f"@WH@/{d}/t", external=True,
                                  params={"numFiles": "9", "totalSize": "99"}), expect="ok")
    cf.call("get_table", db, "t_given")
    cf.call("create_table", table(db, "t_dnus", c2, location=f"@WH@/{d}/t", external=True,
                                  params={"DO_NOT_UPDATE_STATS": "true"}), expect="ok")
    cf.call("get_table", db, "t_dnus")
    cf.call("create_table", table(db, "t_new", c2, location=f"@WH@/{d}/new", external=True), expect="ok")
    cf.call("get_table", db, "t_new")
    # alter recounts (unless DO_NOT_UPDATE_STATS); STATS_GENERATED=TASK marks basic stats accurate
    _files(cf, f"{d}/t", {"part-2": "0123456789"}, root="@WH@")

    def edit(name, fn=lambda t: None):
        return Each(lambda client: _edited(client.get_table(db, name), fn))
    cf.call("alter_table_with_environment_context", db, "t", edit("t"),
            EnvironmentContext(properties={"DO_NOT_UPDATE_STATS": "true"}), expect="ok")
    cf.call("get_table", db, "t")
    cf.call("alter_table", db, "t", edit("t"), expect="ok")
    cf.call("get_table", db, "t")
    cf.call("alter_table_with_environment_context", db, "t_given", edit("t_given"),
            EnvironmentContext(properties={"STATS_GENERATED": "TASK"}), expect="ok")
    cf.call("get_table", db, "t_given")
    # partitions
    pt = table(db, "p", c2, cols("ds string"), location=f"@WH@/{d}/p", external=True)
    cf.call("create_table", pt, expect="ok")
    cf.call("get_table", db, "p")
    _files(cf, f"{d}/p/ds=x", {"f1": "abc", "f2": "defgh"}, root="@WH@")
    cf.call("add_partition", partition(pt, ["x"]), expect="ok")
    cf.call("add_partition", partition(pt, ["y"]), expect="ok")
    cf.call("add_partitions", [partition(pt, ["z"], location=f"@WH@/{d}/p/ds=x")], expect="ok")
    cf.call("append_partition", db, "p", ["w"], expect="ok")
    cf.call("get_partitions", db, "p", -1)
    _files(cf, f"{d}/p/ds=y", {"f": "12345678"}, root="@WH@")

    def part(vals, fn=lambda p: None):
        return Each(lambda client: _edited(client.get_partition(db, "p", vals), fn))
    cf.call("alter_partition", db, "p", part(["x"]), expect="ok")  # same stats: kept
    cf.call("alter_partition", db, "p", part(["y"]), expect="ok")  # none yet: counted
    cf.call("alter_partition", db, "p", part(["z"], lambda p: p.parameters.update(numFiles="5")), expect="ok")
    cf.call("alter_partitions_with_environment_context", db, "p", [part(["w"], lambda p: p.parameters.clear())],
            EnvironmentContext(properties={"DO_NOT_UPDATE_STATS": "true"}), expect="ok")
    cf.call("get_partitions", db, "p", -1)
    cleanup(cf, db)
