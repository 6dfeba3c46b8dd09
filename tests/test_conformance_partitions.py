"""Differential conformance of partitions and partition filters: the same Thrift calls to our server
and to the reference Hive Metastore 2.3.10, answers compared field by field (allowed differences:
tests/conformance/allowlist.py and docs/conformance.md).

One reference metastore serves the whole session (all three backends); every test works in
databases named after a random token, so tests never see each other's objects. Set
``HMS_CONFORMANCE_REFERENCE_PORT`` to reuse an already running reference metastore. The fixtures
(`cf`) are in tests/conftest.py, the comparison in tests/conformance/."""

from __future__ import annotations

from tests.conformance.compare import Each, Mismatch, cleanup, create_filled_table, names
from tests.conformance.objects import (
    cols,
    database,
    partition,
    partitioned_table,
    table,
)
from thrift_idl.hive_metastore.ttypes import (
    AddPartitionsRequest,
    DropPartitionsRequest,
    EnvironmentContext,
    FieldSchema,
    RequestPartsSpec,
)

# --------------------------------------------------------------------------- partitions


def test_partitions_add(cf):
    (db,) = names(cf, "padd")
    cf.call("create_database", database(db), expect="ok")
    t = partitioned_table(db)
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
    cf.call("add_partition", partition(partitioned_table(db, "nosuch"), ["2024-01-03", "1"]),
            expect="InvalidObjectException")
    cf.call("add_partition", partition(partitioned_table(f"cf_nosuch_{cf.token}"), ["2024-01-03", "1"]),
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
        dbName=db, tblName="pt", parts=[partition(partitioned_table(db, "other"), ["2024-03-04", "1"])],
        ifNotExists=True, needResult=True), expect="MetaException")
    cf.call("add_partitions_req", AddPartitionsRequest(dbName=db, tblName="nosuch", parts=[
        partition(partitioned_table(db, "nosuch"), ["2024-03-04", "1"])], ifNotExists=True, needResult=True),
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


def test_partitions_read(cf):
    (db,) = names(cf, "prd")
    create_filled_table(cf, db)
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
    cf.call("get_partitions", db, "nosuch", -1, expect="NoSuchObjectException")
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
    create_filled_table(cf, db)
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
    cf.call("get_partition", db, "pt", ["2024-05-06", "5"])
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
    create_filled_table(cf, db)
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
    t = partitioned_table(db)
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
    # type rules: dates read leniently, the default partition of a date/int key never matches
    "d = '2024-1-1'", 'd = " 2024-01-01"', 'd = "2024-01-01 10:00:00"', '(d) in ("2024-01-01", "2024-1-3")',
    "d between 2024-01-01 and 2024-01-04", "s = 2024-01-01", 'd <> "2024-01-01"',
]

BAD_FILTERS = ['s = ', 'nosuch = "a"', 's = a', "s", '((s = "a")', 's = "a" and', 's === "a"', 'i = 1.5',
               '"a" = "a"', 'i = "2"', "i = 2024-01-01", "s = 1", "s > 9", 'd = "20240101"', 'd = "2024-02-30"',
               "d = 1", 'i like "1.*"', 'd like "2024.*"', '"a.*" like s', "i = 0x10", "i = +2",
               'x = 1']

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
        ("d = date '2024-01-01'", {("a", "1"), ("x'y", "5")}),
        ('s == "b"', {("b", "2")}),
        ('`s` = "b"', {("b", "2")}),
        ("s not like 'a.*' and i < 3", {("b", "2")}),
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
                parts = cf.reference_gap(gap, "get_partitions_by_filter", db, "f", f, -1)
                got = {(p.values[0], p.values[1]) for p in parts}
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
