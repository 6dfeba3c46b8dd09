"""Differential conformance of column statistics, functions, wire-level errors, Hive 3 calls and quick
stats: the same Thrift calls to our server and to the reference Hive Metastore 2.3.10, answers
compared field by field (allowed differences: tests/conformance/allowlist.py and
docs/conformance.md).

One reference metastore serves the whole session (all three backends); every test works in
databases named after a random token, so tests never see each other's objects. Set
``HMS_CONFORMANCE_REFERENCE_PORT`` to reuse an already running reference metastore. The fixtures
(`cf`) are in tests/conftest.py, the comparison in tests/conformance/."""

from __future__ import annotations

import os

import pytest
from thrift.Thrift import TApplicationException

from tests.conformance.compare import Each, Pair, cleanup, create_filled_table, names, raw_call
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
    EnvironmentContext,
    GetDatabaseRequest,
    GetPartitionsByNamesRequest,
    GetTableRequest,
    GetTablesRequest,
    PartitionsStatsRequest,
    TableStatsRequest,
)

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
    cf.call("create_function",
            function(db2, "f1", cls="com.example.Other", resources=[(2, "file:///x.py"), (3, "a.zip")]), expect="ok")
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


def test_hive3_calls_on_ours_only(cf):
    """Calls Hive 2.3 lacks (UNKNOWN_METHOD there): ours must answer as the 2.3 call does."""
    (db,) = names(cf, "h3")
    create_filled_table(cf, db)
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
    assert cf.reference_gap("hive3-calls", "get_catalogs").names == ["hive"]
    with pytest.raises(TApplicationException) as info:
        ref.get_database_req(GetDatabaseRequest(name=db))
    assert info.value.type == TApplicationException.UNKNOWN_METHOD
    assert info.value.message == "Invalid method name: 'get_database_req'"
    cleanup(cf, db)


# --------------------------------------------------------------------------- quick stats from data files


def _files(cf: Pair, rel: str, files: dict[str, str]) -> None:
    """The same data files under each side's external root."""

    for side in (cf.reference, cf.ours):
        for name, content in files.items():
            path = os.path.join(side.external, rel, name)
            os.makedirs(os.path.dirname(path), exist_ok=True)
            with open(path, "w") as f:
                f.write(content)


def test_quick_stats(cf):
    """numFiles / totalSize Hive keeps in parameters when it creates or alters objects on
    directories that already hold data (hidden `.`/`_` files do not count)."""
    (db,) = names(cf, "qs")
    cf.call("create_database", database(db), expect="ok")
    _files(cf, "t", {"part-0": "hello\n", "sub/part-1": "more data\n", ".hidden": "x", "_SUCCESS": ""})
    c2 = cols("a int", "b string")
    cf.call("create_table", table(db, "t", c2, location="@EXT@/t", external=True), expect="ok")
    cf.call("get_table", db, "t")
    cf.call("create_table", table(db, "t_partial", c2, location="@EXT@/t", external=True, params={"numFiles": "9"}),
            expect="ok")
    cf.call("get_table", db, "t_partial")
    cf.call("create_table", table(db, "t_given", c2, location="@EXT@/t", external=True,
                                  params={"numFiles": "9", "totalSize": "99"}), expect="ok")
    cf.call("get_table", db, "t_given")
    cf.call("create_table", table(db, "t_dnus", c2, location="@EXT@/t", external=True,
                                  params={"DO_NOT_UPDATE_STATS": "true"}), expect="ok")
    cf.call("get_table", db, "t_dnus")
    cf.call("create_table", table(db, "t_new", c2, location="@EXT@/new", external=True), expect="ok")
    cf.call("get_table", db, "t_new")
    # alter recounts (unless DO_NOT_UPDATE_STATS); STATS_GENERATED=TASK marks basic stats accurate
    _files(cf, "t", {"part-2": "0123456789"})

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
    pt = table(db, "p", c2, cols("ds string"), location="@EXT@/p", external=True)
    cf.call("create_table", pt, expect="ok")
    cf.call("get_table", db, "p")
    _files(cf, "p/ds=x", {"f1": "abc", "f2": "defgh"})
    cf.call("add_partition", partition(pt, ["x"]), expect="ok")
    cf.call("add_partition", partition(pt, ["y"]), expect="ok")
    cf.call("add_partitions", [partition(pt, ["z"], location="@EXT@/p/ds=x")], expect="ok")
    cf.call("append_partition", db, "p", ["w"], expect="ok")
    cf.call("get_partitions", db, "p", -1)
    _files(cf, "p/ds=y", {"f": "12345678"})

    def part(vals, fn=lambda p: None):
        return Each(lambda client: _edited(client.get_partition(db, "p", vals), fn))
    cf.call("alter_partition", db, "p", part(["x"]), expect="ok")  # same stats: kept
    cf.call("alter_partition", db, "p", part(["y"]), expect="ok")  # none yet: counted
    cf.call("alter_partition", db, "p", part(["z"], lambda p: p.parameters.update(numFiles="5")), expect="ok")
    cf.call("alter_partitions_with_environment_context", db, "p", [part(["w"], lambda p: p.parameters.clear())],
            EnvironmentContext(properties={"DO_NOT_UPDATE_STATS": "true"}), expect="ok")
    cf.call("get_partitions", db, "p", -1)
    cleanup(cf, db)
