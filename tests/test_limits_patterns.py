"""Issue 19, findings 1-3 and the filter nesting limit, on every backend, through real Thrift clients:
Hive name patterns and LIKE in filters match in linear time (the adversarial inputs that froze a
worker answer at once, and correctly); long AND / OR chains compile to SQL whose planning stays
linear; filters nested too deeply answer a MetaException; a statement that runs past
`--statement-timeout` answers a MetaException saying the request was too expensive, and the worker
answers the next call.

The time bounds are generous: they prove "does not hang" (each input took minutes before)."""

from __future__ import annotations

import time

import pytest

from tests.conformance.objects import cols, database, function, partition, table
from tests.harness.procs import ServerStartError, start_our_server, stop_process
from thrift_idl.hive_metastore.ttypes import FieldSchema, MetaException

BOUND_S = 10.0
P = "hive_filter_field_params__"
OWNER = "hive_filter_field_owner__"


def _quick(fn, *args):
    start = time.monotonic()
    out = fn(*args)
    elapsed = time.monotonic() - start
    assert elapsed < BOUND_S, f"{fn.__name__} took {elapsed:.1f} s"
    return out


def _partitioned(client, db: str, name: str, values: list[str], owner: str = "tester", params=None):
    tbl = table(db, name, cols("x int"), keys=[FieldSchema("p", "string", None)], owner=owner, params=params)
    client.create_table(tbl)
    for i in range(0, len(values), 1000):
        client.add_partitions([partition(tbl, [v]) for v in values[i:i + 1000]])
    return tbl


def _part_values(client, db: str, name: str, filt: str) -> list[str]:
    return sorted(p.values[0] for p in _quick(client.get_partitions_by_filter, db, name, filt, -1))


# --- finding 1: name patterns -----------------------------------------------------------------


def test_name_patterns_match_in_linear_time(our_server, thrift_client):
    client = thrift_client(our_server)
    db, long_name = "lp" + "a" * 98, "a" * 100
    client.create_database(database(db))
    client.create_table(table(db, long_name, cols("x int")))
    client.create_function(function(db, long_name))
    stars_b, stars_a = "*" * 12 + "b", "*" * 12 + "a"

    assert db not in _quick(client.get_databases, "*" * 8 + "b")  # the campaign's input
    assert db not in _quick(client.get_databases, stars_b)
    assert db in _quick(client.get_databases, stars_a)
    assert _quick(client.get_tables, db, stars_b) == []
    assert _quick(client.get_tables, db, stars_a) == [long_name]
    assert _quick(client.get_functions, db, stars_b) == []
    assert _quick(client.get_functions, db, stars_a) == [long_name]
    # other tests share the server: look only at this test's database
    assert [m for m in _quick(client.get_table_meta, stars_b, "*", []) if m.dbName == db] == []
    assert [(m.dbName, m.tableName) for m in _quick(client.get_table_meta, stars_a, stars_a, [])
            if m.dbName == db] == [(db, long_name)]
    # Hive's semantics kept: case-insensitive, `|` alternatives, `.` one character, `*` any run
    assert db in client.get_databases("nosuch|LP" + "A" * 98)
    assert db in client.get_databases("l." + "a" * 98)
    assert db not in client.get_databases("l." + "a" * 97)
    assert db in client.get_databases(" lp*a*a*a ")
    assert client.get_tables(db, "a*a.a|b") == [long_name]
    assert client.get_tables(db, "") == []


# --- finding 2: LIKE in filters ---------------------------------------------------------------

A29B = "a" * 29 + "b"
# (pattern, does "a" * 29 + "b" match); "a" * 30 matches none of them
ADVERSARIAL_LIKES = [(".*" * 10 + "b", True), ("a.*" * 15 + "b", True), (".*a" * 20 + ".*b", True),
                     ("." * 29 + ".*.*.*b", True), ("a.*" * 15 + "c", False), (".*a" * 31 + ".*", False)]


def test_like_in_partition_filters_runs_in_linear_time(our_server, thrift_client):
    client = thrift_client(our_server)
    db = "lp_like"
    client.create_database(database(db))
    values = ["a" * 30, A29B, "x.y", "x%y", "x_y", "x*y", "x[y", "x?y", "x!y"]
    _partitioned(client, db, "t", values)
    for pattern, matches in ADVERSARIAL_LIKES:
        assert _part_values(client, db, "t", f'p like "{pattern}"') == ([A29B] if matches else [])
        assert _part_values(client, db, "t", f'not p like "{pattern}" and p like "a.*"') == \
            (["a" * 30] if matches else ["a" * 30, A29B])
    # the semantics the conformance suite checks: `.*`, `.`, `\.`; everything else literal
    assert _part_values(client, db, "t", 'p like ".*a"') == ["a" * 30]
    assert _part_values(client, db, "t", 'p like "x.y"') == sorted(v for v in values if v.startswith("x"))
    assert _part_values(client, db, "t", r'p like "x\.y"') == ["x.y"]
    for literal in ("x%y", "x_y", "x*y", "x[y", "x?y", "x!y"):
        assert _part_values(client, db, "t", f'p like "{literal}"') == [literal]
    assert _part_values(client, db, "t", 'p like "a.*b"') == [A29B]


def test_like_in_table_filters_runs_in_linear_time(our_server, thrift_client):
    client = thrift_client(our_server)
    db = "lp_tlike"
    client.create_database(database(db))
    client.create_table(table(db, "t1", cols("x int"), owner="a" * 30, params={"k": "a" * 30}))
    client.create_table(table(db, "t2", cols("x int"), owner=A29B, params={"k": A29B}))
    for pattern, matches in ADVERSARIAL_LIKES:
        want = ["t2"] if matches else []
        assert _quick(client.get_table_names_by_filter, db, f'{P}k like "{pattern}"', -1) == want
        assert _quick(client.get_table_names_by_filter, db, f'{OWNER} like "{pattern}"', -1) == want
    assert client.get_table_names_by_filter(db, f'{OWNER} like "(?i)A.*B"', -1) == ["t2"]


# --- finding 3: long chains compile to linear SQL ---------------------------------------------


def test_long_and_or_chains_answer_quickly(our_server, thrift_client):
    client = thrift_client(our_server)
    db = "lp_chain"
    client.create_database(database(db))
    values = [f"v{i}" for i in range(0, 3000, 7)] + ["w1", "w2"]
    _partitioned(client, db, "t", values)
    n = 3000
    excluded = " and ".join(f"p != 'v{i}'" for i in range(n))
    assert _part_values(client, db, "t", excluded) == ["w1", "w2"]
    assert _part_values(client, db, "t", f"({excluded}) and p like 'w.*' and p != 'w2'") == ["w1"]
    chosen = " or ".join(f"p = 'v{i}'" for i in range(0, n, 2))
    assert _part_values(client, db, "t", chosen) == sorted(f"v{i}" for i in range(0, 3000, 14))
    assert _part_values(client, db, "t", f"p > 'v' and ({chosen}) and p < 'v2'") == \
        sorted(f"v{i}" for i in range(0, 3000, 14) if f"v{i}" < "v2")
    # table filters: the same chain on a parameter
    for i in range(3):
        client.create_table(table(db, f"t_p{i}", cols("x int"), params={"k": f"w{i}"}))
    params_chain = " and ".join(f'{P}k != "v{i}"' for i in range(400))
    assert _quick(client.get_table_names_by_filter, db, f'{params_chain} and {P}k != "w1"', -1) == ["t_p0", "t_p2"]


# --- filter nesting -----------------------------------------------------------------------------


def _nested(depth: int, leaf: str, other: str) -> str:
    """`depth` levels of parentheses, AND and OR alternating (no level can be flattened away)."""
    text = leaf
    for level in range(depth):
        text = f"({text} {'or' if level % 2 else 'and'} {other})"
    return text


def test_filters_nested_too_deeply_are_refused(our_server, thrift_client):
    client = thrift_client(our_server)
    db = "lp_nest"
    client.create_database(database(db))
    _partitioned(client, db, "t", ["a", "b"])
    client.create_table(table(db, "tp", cols("x int"), params={"k": "a"}))
    # 100 levels answer, and correctly
    assert _part_values(client, db, "t", _nested(100, "p = 'a'", "p < 'b'")) == ["a"]
    # ((p = 'a' and p > 'a') or p > 'a') and ... : only b
    assert _part_values(client, db, "t", _nested(100, "p = 'a'", "p > 'a'")) == ["b"]
    assert _part_values(client, db, "t", "not " * 100 + "p = 'a'") == ["a"]
    assert client.get_table_names_by_filter(db, _nested(100, f'{P}k = "a"', f'{P}k != "zz"'), -1) == ["tp"]
    # deeper: a MetaException that says why (it was a RecursionError at ~330)
    for deep in (_nested(101, "p = 'a'", "p = 'a'"), "(" * 5000 + "p = 'a'" + ")" * 5000, "not " * 5000 + "p = 'a'"):
        with pytest.raises(MetaException, match="nested too deeply"):
            _quick(client.get_partitions_by_filter, db, "t", deep, -1)
        with pytest.raises(MetaException, match="nested too deeply"):
            _quick(client.get_table_names_by_filter, db, deep.replace("p = 'a'", f'{P}k = "a"'), -1)
    assert client.get_databases(db) == [db]  # the worker still answers


# --- statement timeout --------------------------------------------------------------------------

TIMEOUT_S = 0.2
PARTITIONS, PATTERNS = 10_000, 500  # 5 million LIKE tests: seconds on every backend


@pytest.fixture
def slow_server(our_server_info, tmp_path):
    """A second server on the same database whose statements may run TIMEOUT_S seconds."""
    try:
        port, proc = start_our_server(our_server_info.db_url, tmp_path,
                                      extra_args=["--statement-timeout", str(TIMEOUT_S)],
                                      warehouse=our_server_info.warehouse)
    except ServerStartError as e:
        pytest.fail(str(e), pytrace=False)
    yield port, proc
    stop_process(proc)


def _expensive_filter(patterns: int) -> str:
    """Legal, and expensive: ORed LIKEs that no index serves, each one a pass over the key's rows."""
    return " or ".join(f"p like '.*q{i}.*z'" for i in range(patterns))


def test_statement_timeout_answers_too_expensive(our_server, thrift_client, slow_server):
    setup = thrift_client(our_server)
    db = "lp_slow"
    setup.create_database(database(db))
    _partitioned(setup, db, "t", [f"{'q' * 40}{i}" for i in range(PARTITIONS)])
    port, proc = slow_server
    client = thrift_client(port)
    start = time.monotonic()
    with pytest.raises(MetaException) as err:
        client.get_partitions_by_filter(db, "t", _expensive_filter(PATTERNS), -1)
    assert time.monotonic() - start < BOUND_S
    message = err.value.message
    assert "too expensive" in message and "statement timeout" in message, message
    assert "SELECT " not in message.upper() and "partition_key_val" not in message, message
    # the worker answers the next call, and cheap filters still run under the timeout
    assert client.get_databases(db) == [db]
    assert [p.values for p in client.get_partitions_by_filter(db, "t", f"p = '{'q' * 40}7'", -1)] == [["q" * 40 + "7"]]
    assert proc.poll() is None
    # the same filter completes on the server with the default timeout (the request is legal)
    start = time.monotonic()
    assert setup.get_partitions_by_filter(db, "t", _expensive_filter(PATTERNS), -1) == []
    assert time.monotonic() - start > TIMEOUT_S
