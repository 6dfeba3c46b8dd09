"""get_table_names_by_filter (store/hms/catalog/table_filter.py): Hive's table filters on parameters, owner,
last access time, name and type. Compared with the reference metastores (Trino lists its views with
`hive_filter_field_params__presto_view = "true"`, and with the LIKE form on metastores whose
parameter values cannot be compared with =, as Hive 4's on Derby), then checked on our server alone
on every backend: exact (case-sensitive) comparisons, LIKE patterns, the limits, the errors."""

from __future__ import annotations

import pytest

from store.errors import MetaError
from store.hms.catalog import compile_table_filter
from tests import test_conformance as conformance
from tests.conformance.objects import cols, database, table
from thrift_idl.hive_metastore.ttypes import InvalidOperationException, MetaException, UnknownDBException

# the conformance suite's fixtures (`cf`: the reference of each Hive version and our server)
conformance_reference = conformance.conformance_reference
cf = conformance.cf

P = "hive_filter_field_params__"
OWNER = "hive_filter_field_owner__"
ACCESS = "hive_filter_field_last_access__"


def _tables(db):
    t4 = table(db, "t4", cols("a int"), owner=None)
    t4.lastAccessTime = 100
    return [
        table(db, "v1", cols("a int"), params={"presto_view": "true", "comment": "x", "a.b": "dotted"}, owner="alice"),
        table(db, "v2", cols("a int"), params={"presto_view": "false", "k2": "10"}, owner="bob"),
        table(db, "t3", cols("a int"), params={"k2": "9", "Mixed": "Case"}, owner="alice"),
        t4,
    ]


# every reference: parameters with LIKE, owner, last access, AND / OR, limits
_COMMON = [
    f'{P}presto_view LIKE "true"', f'{P}presto_view like "t.*"', f'{P}presto_view LIKE "t%"',
    f'{P}presto_view LIKE "tru."', f'{P}presto_view LIKE "tr[u]e"', f'{P}presto_view LIKE "TRUE"',
    f'{P}comment like "x"', f'{P}Mixed like "Case"', f'{P}mixed like "Case"', f'{P}nosuch like ".*"',
    f'{OWNER} = "alice"', f'{OWNER} <> "alice"', f'{OWNER} != "alice"', f'{OWNER} LIKE "a.*"', f'{OWNER} > "alice"',
    f'{OWNER} like "(?i)ALICE"', f'{OWNER} like "al%"', f'{OWNER} = 5',
    f'{ACCESS} = 100', f'{ACCESS} > 0', f'{ACCESS} < 50', f'{ACCESS} >= 100', f'{ACCESS} != 100', f'100 < {ACCESS}',
    f'{OWNER} = "alice" and {P}k2 like "9"', f'{OWNER} = "bob" or ({P}k2 like "9" and {OWNER} = "alice")',
    f'{P}k2 like "1.*" or {OWNER} = "alice"', "",
]
# Hive 2.3 (not 4 on Derby, where parameter values are CLOBs): = and != on parameters
_EQUALS = [
    f'{P}presto_view = "true"', f'"true" = {P}presto_view', f'{P}presto_view != "true"', f'{P}presto_view <> "true"',
    f'{P}k2 = 10', f'{OWNER} = "alice" and {P}k2 = "9"',
]
# Hive 4: name and type keys, IN, BETWEEN, back-quoted keys
_HIVE4 = [
    'hive_filter_field_tableName__ like "(?i)V.*"', 'hive_filter_field_tableName__ like "V.*"',
    'hive_filter_field_tableName__ = "v1"', 'hive_filter_field_tableName__ > "t9"',
    'hive_filter_field_tableType__ = "MANAGED_TABLE"', f"{ACCESS} between 50 and 150", f'{ACCESS} = "100"',
    f'`{P}a.b` like "dot.*"', f'({OWNER}) in ("bob", "carol")',
]
_ERRORS = [  # (filter, exception, compare the message)
    ("nosuchkey = \"x\"", "MetaException", True),
    (f'{P}k2 > "5"', "MetaException", False),  # Hive 2.3 lists the operators in another order
    (f'{P}k2 between "1" and "z"', "MetaException", False),
    (f"{ACCESS} LIKE 100", "MetaException", True),
    (f"{P}k2 = ", "MetaException", False),
    ("HIVE_FILTER_FIELD_OWNER__ = \"alice\"", "MetaException", True),
    (None, "InvalidOperationException", True),
]


def test_table_filters_vs_reference(cf):
    (db,) = conformance.names(cf, "tfl")
    cf.call("create_database", database(db), expect="ok")
    for t in _tables(db):
        cf.call("create_table", t, expect="ok")
    filters = _COMMON + (_HIVE4 if cf.version == "4" else _EQUALS)
    for text in filters:
        cf.call("get_table_names_by_filter", db, text, -1, post=sorted)
    cf.call("get_table_names_by_filter", db, f'{OWNER} = "alice"', 0)
    cf.call("get_table_names_by_filter", db, f'{OWNER} like ".*"', 1, post=len)
    cf.call("get_table_names_by_filter", db.upper(), f'{OWNER} = "alice"', -1, post=sorted)
    cf.call("get_table_names_by_filter", f"cf_nosuch_{cf.token}", f'{OWNER} = "alice"', -1)
    for text, exception, message in _ERRORS:
        cf.call("get_table_names_by_filter", db, text, -1, expect=exception, msg=message)
    cf.call("get_table_names_by_filter", None, f'{OWNER} = "alice"', -1, expect="UnknownDBException", msg=True)
    conformance.cleanup(cf, db)


# --------------------------------------------------------------------------- our server


@pytest.fixture
def client(our_server, thrift_client):
    return thrift_client(our_server)


@pytest.fixture
def db(client):
    name = "tfilter_ours"
    try:
        client.drop_database(name, True, True)
    except Exception:  # noqa: BLE001
        pass
    client.create_database(database(name))
    for t in _tables(name):
        client.create_table(t)
    special = table(name, "s1", cols("a int"), params={"presto_view": "TRUE", "p": "50%_off", "q": "a b ",
                                                       "u": "gr\u00fc\u00df", "e": ""}, owner="Alice")
    client.create_table(special)
    yield name
    client.drop_database(name, True, True)


@pytest.mark.parametrize("text, expected", [
    (f'{P}presto_view = "true"', ["v1"]),  # exact: not "TRUE"
    (f'{P}presto_view = "TRUE"', ["s1"]),
    (f'{P}presto_view like "(?i)true"', ["v1", "s1"]),
    (f'{P}presto_view != "true"', ["v2", "s1"]),  # tables without the parameter match no test
    (f'{P}MIXED = "Case"', []),  # parameter keys are case-sensitive
    (f'{P}Mixed = "case"', []),
    (f'{P}p like "50%_off"', ["s1"]), (f'{P}p like "50.*"', ["s1"]), (f'{P}p = "50%_off"', ["s1"]),
    (f'{P}p like "50_%off"', []),  # % and _ are literal
    (f'{P}q = "a b "', ["s1"]), (f'{P}q = "a b"', []),  # trailing blanks count (MariaDB's pad collations would not)
    (f'{P}u = "gr\u00fc\u00df"', ["s1"]), (f'{P}u like "gr.."', ["s1"]), (f'{P}u like "gr..."', []),
    (f'{P}e = ""', ["s1"]),
    (f'{OWNER} = "alice"', ["v1", "t3"]), (f'{OWNER} > "alice"', ["v2"]),
    (f'{P}k2 like ".*" or {OWNER} = "alice"', ["v2", "t3"]),  # as Hive: only tables with parameter k2
    (f'{OWNER} < "b"', ["v1", "t3", "s1"]),  # code point order: "Alice" < "alice"
    (f'{OWNER} like "(?i)alice"', ["v1", "t3", "s1"]),
    (f'not {OWNER} = "alice"', ["v2", "s1"]), (f'{OWNER} not in ("alice", "bob")', ["s1"]),
    (f'{ACCESS} <= 99', ["v1", "v2", "t3", "s1"]),
    ('hive_filter_field_tableName__ in ("v1", "t4", "zz")', ["v1", "t4"]),
    ('hive_filter_field_tableType__ != "MANAGED_TABLE"', []),
])
def test_filters_on_our_server(client, db, text, expected):
    assert client.get_table_names_by_filter(db, text, -1) == expected  # in creation order


def test_limits_and_errors(client, db):
    assert client.get_table_names_by_filter(db, "", -1) == ["v1", "v2", "t3", "t4", "s1"]
    assert client.get_table_names_by_filter(db, "", 2) == ["v1", "v2"]
    assert client.get_table_names_by_filter(db, "", 0) == []
    assert client.get_table_names_by_filter("nosuch_db", f'{OWNER} = "alice"', -1) == []
    with pytest.raises(UnknownDBException, match="DB name is null or empty"):
        client.get_table_names_by_filter("", "", -1)
    with pytest.raises(InvalidOperationException, match="null cannot apply null filter"):
        client.get_table_names_by_filter(db, None, -1)
    for text, error in ((f'{P}k2 < "5"', "Only \\[LIKE, =, <>, !=\\] are supported"),
                        (f'{P}k2 not like "5"', "Only \\[LIKE, =, <>, !=\\] are supported"),
                        (f'{OWNER} not like "a.*"', "NOT LIKE is not supported"),
                        (f'{ACCESS} like "1"', "Like is not supported for HIVE_FILTER_FIELD_LAST_ACCESS"),
                        (f'{ACCESS} = "soon"', "compares with integers"),
                        ("hive_filter_field_OWNER__ = \"x\"", "Invalid key name in filter"),
                        (f'{OWNER} = "x" xor', "Error parsing partition filter")):
        with pytest.raises(MetaException, match=error):
            client.get_table_names_by_filter(db, text, -1)


@pytest.mark.parametrize("backend", ["sqlite", "postgresql", "mysql"])
def test_compiles_to_one_statement(backend):
    """The filter becomes SQL over tbl / tbl_params for each backend (nothing is filtered in Python)."""
    from sqlalchemy import select
    from sqlalchemy.dialects import mysql, postgresql, sqlite

    from store.db import schema as S

    where = compile_table_filter(f'{P}presto_view like "t.*" and ({OWNER} = "a" or {ACCESS} > 3)', backend)
    dialect = {"sqlite": sqlite.dialect(), "postgresql": postgresql.dialect(), "mysql": mysql.dialect()}[backend]
    sql = str(select(S.tbl.c.name).where(where).compile(dialect=dialect))
    assert "tbl_params" in sql and "last_access_time" in sql and "owner" in sql
    assert compile_table_filter("  ", backend) is None
    with pytest.raises(MetaError):
        compile_table_filter("nosuch = 1", backend)
