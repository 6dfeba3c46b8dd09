"""Partition filters: parser unit tests, and compiled SQL checked against a Python oracle on
SQLite, PostgreSQL (HMS_TEST_POSTGRES_URL) and MySQL/MariaDB (HMS_TEST_MYSQL_URL)."""

from __future__ import annotations

import os
import re
import uuid

import pytest
from sqlalchemy import create_engine, insert, select, text
from sqlalchemy.engine import make_url

from store.db import schema as S
from store.db.driver_cursor import driver_rows
from store.db.engine import make_engine
from store.hms.partition_filter import (
    LONG_LIST,
    And,
    FilterError,
    Leaf,
    Not,
    Or,
    compile_filter,
    is_integral,
    parse_filter,
    push_not,
)

# --- AST rendering -------------------------------------------------------------------------------


def sx(node) -> str:
    """A compact s-expression of a parsed filter."""
    if isinstance(node, Leaf):
        vals = " ".join(
            repr(v.value) if v.kind == "string" else str(v.value) if v.kind == "int" else f"{v.kind}:{v.value}"
            for v in node.values
        )
        return f"({node.op} {node.key} {vals})"
    if isinstance(node, And):
        return "(AND " + " ".join(sx(i) for i in node.items) + ")"
    if isinstance(node, Or):
        return "(OR " + " ".join(sx(i) for i in node.items) + ")"
    if isinstance(node, Not):
        return f"(NOT {sx(node.item)})"
    raise AssertionError(node)


# --- parser --------------------------------------------------------------------------------------

PARSES = [
    ("ds = 'a'", "(= ds 'a')"),
    ('ds = "a"', "(= ds 'a')"),
    ("ds == 'a'", "(= ds 'a')"),
    ("ds <> 'a'", "(!= ds 'a')"),
    ("ds != 'a'", "(!= ds 'a')"),
    ("ds<'a'", "(< ds 'a')"),
    ("ds <= 'a'", "(<= ds 'a')"),
    ("ds>'a'", "(> ds 'a')"),
    ("ds >= 'a'", "(>= ds 'a')"),
    ("ds like 'a%'", "(LIKE ds 'a%')"),
    ("ds LiKe 'a_'", "(LIKE ds 'a_')"),
    ("ds not like 'a%'", "(NOT LIKE ds 'a%')"),
    # flipped literal / identifier
    ("'a' < ds", "(> ds 'a')"),
    ("5 >= hr", "(<= hr 5)"),
    ("5 = hr", "(= hr 5)"),
    ("-5 <> hr", "(!= hr -5)"),
    # precedence and parentheses
    ("a = 1 or b = 2 and c = 3", "(OR (= a 1) (AND (= b 2) (= c 3)))"),
    ("a = 1 and b = 2 or c = 3", "(OR (AND (= a 1) (= b 2)) (= c 3))"),
    ("(a = 1 or b = 2) and c = 3", "(AND (OR (= a 1) (= b 2)) (= c 3))"),
    ("a = 1 and b = 2 and c = 3", "(AND (= a 1) (= b 2) (= c 3))"),
    ("((a = 1))", "(= a 1)"),
    ("not a = 1 and b = 2", "(AND (NOT (= a 1)) (= b 2))"),
    ("not (a = 1 and b = 2)", "(NOT (AND (= a 1) (= b 2)))"),
    ("NOT NOT a = 1", "(NOT (NOT (= a 1)))"),
    ("A = 1 AnD b = 2 oR c = 3", "(OR (AND (= a 1) (= b 2)) (= c 3))"),
    # quotes and escapes
    ("ds = 'it\\'s'", "(= ds \"it\\\\'s\")"),
    ('ds = "say \\"hi\\""', "(= ds 'say \\\\\"hi\\\\\"')"),
    ("ds = \"it's\"", "(= ds \"it's\")"),
    ("ds = 'say \"hi\"'", "(= ds 'say \"hi\"')"),
    ("ds = 'back\\\\slash'", "(= ds 'back\\\\\\\\slash')"),
    ("ds = '\\a\\b'", "(= ds '\\\\a\\\\b')"),
    ("ds = ''", "(= ds '')"),
    ("ds = 'a b  c'", "(= ds 'a b  c')"),
    # identifiers
    ("`DS` = 'a'", "(= ds 'a')"),
    ("`odd name` = 'a'", "(= odd name 'a')"),
    ("Part_1 = 'a'", "(= part_1 'a')"),
    ("1col = 'a'", "(= 1col 'a')"),
    ("date = 'a'", "(= date 'a')"),
    # integers
    ("hr = -12", "(= hr -12)"),
    ("hr = 007", "(= hr 7)"),
    ("hr = 9223372036854775807", "(= hr 9223372036854775807)"),
    # BETWEEN
    ("hr between 1 and 5", "(BETWEEN hr 1 5)"),
    ("hr NOT BETWEEN -1 AND 5 and x = 1", "(AND (NOT BETWEEN hr -1 5) (= x 1))"),
    ("ds between 'a' and \"b\"", "(BETWEEN ds 'a' 'b')"),
    # IN
    ("hr in (1, 2, -3)", "(IN hr 1 2 -3)"),
    ("(hr) in (1)", "(IN hr 1)"),
    ("(hr) NOT IN (1, 2)", "(NOT IN hr 1 2)"),
    ("ds not in ('a', \"b\")", "(NOT IN ds 'a' 'b')"),
    ("((ds) in ('a')) or (hr = 1)", "(OR (IN ds 'a') (= hr 1))"),
    (
        "(STRUCT(ds, hr)) IN (CONST STRUCT('a', 1), CONST STRUCT('b', 2))",
        "(OR (AND (= ds 'a') (= hr 1)) (AND (= ds 'b') (= hr 2)))",
    ),
    ("(struct(ds)) not in (const struct('a'))", "(NOT (= ds 'a'))"),
    # dates and timestamps
    ("dt = DATE '2024-01-31'", "(= dt date:2024-01-31)"),
    ("dt = date \"2024-01-31\"", "(= dt date:2024-01-31)"),
    ("dt = 2024-01-31", "(= dt date:2024-01-31)"),
    ("2024-01-31 < dt", "(> dt date:2024-01-31)"),
    ("dt between 2024-01-01 and DATE '2024-12-31'", "(BETWEEN dt date:2024-01-01 date:2024-12-31)"),
    ("dt in (2024-01-01, date '2024-01-02')", "(IN dt date:2024-01-01 date:2024-01-02)"),
    ("dt = '2024-01-31'", "(= dt '2024-01-31')"),
    ("ts = TIMESTAMP '2024-01-31 10:00:00'", "(= ts timestamp:2024-01-31 10:00:00)"),
    ("ts >= 2024-01-31 10:00:00", "(>= ts timestamp:2024-01-31 10:00:00)"),
]


@pytest.mark.parametrize("filt,expected", PARSES)
def test_parse(filt, expected):
    assert sx(parse_filter(filt)) == expected


ERRORS = [
    ("a = ", 4, "expected a literal"),
    ("a = 'x", 4, "unterminated string literal"),
    ('a = "x\\"', 4, "unterminated string literal"),
    ("a = 'x' and b = \"y", 16, "unterminated string literal"),
    ("a 'x'", 2, "expected a comparison operator"),
    ("a", 1, "expected a comparison operator"),
    ("a = 'x' b = 'y'", 8, "expected AND, OR or end of filter"),
    ("a = 'x' )", 8, "unbalanced ')'"),
    ("(a = 'x'", 8, "expected ')'"),
    ("a = 'x' and", 11, "expected a partition column name"),
    ("a = 'x' or or b = 1", 11, "expected a partition column name"),
    ("", 0, "expected a partition column name"),
    ("a = b", 4, "expected a literal"),
    ("a ! 1", 2, "unexpected character '!'"),
    ("a = 1 ; drop table x", 6, "unexpected character ';'"),
    ("a = #", 4, "unexpected character"),
    ("'x' like a", 4, "the column must be on the left of LIKE"),
    ("'x' = 'y'", 6, "expected a partition column name"),
    ("a not = 1", 2 + 4, "expected BETWEEN, IN or LIKE after NOT"),
    ("a between 1 or 2", 12, "expected AND"),
    ("a in 1", 5, "expected '('"),
    ("a in (1, 2", 10, "expected ',' or ')'"),
    ("a in ()", 6, "expected a literal"),
    ("a = 99999999999999999999", 4, "integer literal out of range"),
    ("a = -", 4, "unexpected character '-'"),
    ("a = -1x", 4, "invalid number"),
    ("a = DATE '2024-13-01'", 9, "invalid date"),
    ("a = DATE 'yesterday'", 9, "expected yyyy-mm-dd after DATE"),
    ("a = 2024-02-30", 4, "invalid date"),
    ("a = `b", 4, "unterminated back-quoted identifier"),
    ("(STRUCT(a, b)) IN (CONST STRUCT(1))", 31, "expected 2 values"),
]


@pytest.mark.parametrize("filt,pos,message", ERRORS)
def test_parse_errors(filt, pos, message):
    with pytest.raises(FilterError) as info:
        parse_filter(filt)
    err = info.value
    assert isinstance(err, ValueError)
    assert err.pos == pos, str(err)
    assert message in str(err)
    assert str(err).startswith(f'Error parsing partition filter "{filt}" at position {pos}: ')


def test_error_message_format():
    with pytest.raises(FilterError) as info:
        compile_filter("a = ", 1, [("a", "string")], "sqlite")
    assert str(info.value) == 'Error parsing partition filter "a = " at position 4: expected a literal'


KEYS = [("ds", "string"), ("hr", "int"), ("dt", "date")]

COMPILE_ERRORS = [
    ("nope = 'x'", 0, "nope is not a partition key"),
    ("ds = 'x' and Other = 1", 13, "other is not a partition key"),
    ("'x' < missing", 6, "missing is not a partition key"),
    ("hr = '5'", 5, "cannot compare integer partition key hr with a string literal"),
    ("hr in (1, '2')", 10, "cannot compare integer partition key hr with a string literal"),
    ("hr between 1 and '9'", 17, "string literal"),
    ("hr = 2024-01-01", 5, "cannot compare integer partition key hr with a date literal"),
    ("'5' > hr", 0, "string literal"),
    ("hr like '1%'", 0, "LIKE is not supported on integer partition key hr"),
    ("ds = 10", 5, "Filtering is supported only on partition keys of type string"),
]


@pytest.mark.parametrize("filt,pos,message", COMPILE_ERRORS)
def test_compile_errors(filt, pos, message):
    with pytest.raises(FilterError) as info:
        compile_filter(filt, 1, KEYS, "sqlite")
    assert info.value.pos == pos, str(info.value)
    assert message in str(info.value)
    assert f'"{filt}"' in str(info.value)


def test_push_not():
    tree = parse_filter("not (a = 1 and (b < 2 or not c like 'x%')) or not d in (1, 2) or not e between 1 and 2")
    assert sx(push_not(tree)) == (
        "(OR (OR (!= a 1) (AND (>= b 2) (LIKE c 'x%'))) (NOT IN d 1 2) (NOT BETWEEN e 1 2))"
    )
    assert sx(push_not(parse_filter("not (a <= 1 or a > 2)"))) == "(AND (> a 1) (<= a 2))"


def test_integral_types():
    for t in ("tinyint", "SMALLINT", "int", "integer", "bigint", " int "):
        assert is_integral(t)
    for t in ("string", "varchar(10)", "char(2)", "date", "timestamp", "decimal(10,0)", "double", "boolean"):
        assert not is_integral(t)


# --- execution against the backends --------------------------------------------------------------

DEFAULT = "__HIVE_DEFAULT_PARTITION__"
DS_VALUES = [
    "2024-01-01", "2024-01-02", "2024-01-10", "2024-02-01", "abc", "ABC", "Abc", "abd", "a_c", "a%c",
    "axc", "a!c", "it's", 'say "hi"', "back\\slash", "x y", "abc ", "b", "B", "é", "É", "ü😀", "10",
    "9", DEFAULT, "[x]*?",
]
HR_VALUES = ["0", "1", "2", "5", "9", "10", "11", "23", "100", "007", "-3", DEFAULT, "2147483648"]
DT_VALUES = ["2023-12-31", "2024-01-01", "2024-01-15", "2024-02-29", "2024-10-01", DEFAULT]
N_PARTS = 62
_INT = re.compile(r"^-?\d{1,18}$")  # how the store fills part_key_num


def _num(v: str):
    return int(v) if _INT.match(v) else None


def _rows():
    rows = []
    for i in range(N_PARTS):
        rows.append((
            DS_VALUES[i % len(DS_VALUES)],
            HR_VALUES[(i * 7) % len(HR_VALUES)],
            DT_VALUES[(i * 5) % len(DT_VALUES)],
        ))
    assert len(set(rows)) == N_PARTS
    return rows


ROWS = _rows()


def _populate(engine) -> tuple[int, dict[int, tuple]]:
    """Two tables with the same keys; returns the filtered table's id and its part_id -> values."""
    S.metadata.create_all(engine)
    parts: dict[int, tuple] = {}
    with engine.begin() as conn:
        db_id = conn.execute(insert(S.db).values(name="pf").returning(S.db.c.db_id)).scalar_one()
        tbl_ids = []
        for name in ("t_other", "t"):
            tbl_ids.append(conn.execute(insert(S.tbl).values(
                db_id=db_id, name=name, create_time=0, tbl_type="EXTERNAL_TABLE").returning(S.tbl.c.tbl_id)
            ).scalar_one())
        for tbl_id in tbl_ids:
            for n, values in enumerate(ROWS):
                pid = conn.execute(insert(S.partitions).values(
                    tbl_id=tbl_id, part_name=f"p{n}", create_time=0, schema_version=0
                ).returning(S.partitions.c.part_id)).scalar_one()
                conn.execute(insert(S.partition_key_val), [
                    {"part_id": pid, "key_idx": i, "tbl_id": tbl_id, "part_key_name": k,
                     "part_key_val": v, "part_key_num": _num(v)}
                    for i, ((k, _), v) in enumerate(zip(KEYS, values))
                ])
                if tbl_id == tbl_ids[-1]:
                    parts[pid] = values
    return tbl_ids[-1], parts


def _server_url(env: str) -> str | None:
    url = os.environ.get(env)
    if not url:
        if os.environ.get("CI") == "true":
            pytest.fail(f"{env} is not set, and CI=true requires every backend")
        pytest.skip(f"{env} is not set")
    return url


@pytest.fixture(scope="module", params=["sqlite", "postgresql", "mysql"])
def backend(request, tmp_path_factory):
    kind = request.param
    name = f"pf_{uuid.uuid4().hex[:12]}"
    if kind == "sqlite":
        engine = make_engine(f"sqlite:///{tmp_path_factory.mktemp('pf') / 'pf.db'}")
        try:
            yield (kind, engine, *_populate(engine))
        finally:
            engine.dispose()
        return

    env = "HMS_TEST_POSTGRES_URL" if kind == "postgresql" else "HMS_TEST_MYSQL_URL"
    server = make_url(_server_url(env))
    admin = create_engine(server, isolation_level="AUTOCOMMIT")
    with admin.connect() as conn:
        if kind == "postgresql":
            # A locale whose ordering is not code point order, when the server has ICU.
            try:
                conn.execute(text(f"CREATE DATABASE {name} TEMPLATE template0 LOCALE_PROVIDER icu "
                                  "ICU_LOCALE 'en-US' LOCALE 'C.UTF-8'"))
            except Exception:
                conn.execute(text(f"CREATE DATABASE {name}"))
        else:
            # The usual MariaDB/MySQL default: case-insensitive and PAD SPACE.
            conn.execute(text(f"CREATE DATABASE {name} CHARACTER SET utf8mb4 COLLATE utf8mb4_general_ci"))
    engine = make_engine(server.set(database=name).render_as_string(hide_password=False))
    try:
        yield (kind, engine, *_populate(engine))
    finally:
        engine.dispose()
        with admin.connect() as conn:
            if kind == "postgresql":
                conn.execute(text(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)"))
            else:
                conn.execute(text(f"DROP DATABASE IF EXISTS {name}"))
        admin.dispose()


# The oracle: evaluates the parsed tree directly (NOT included) in Kleene logic, where a
# non-integer value of an integral key makes a comparison unknown. A partition matches when the
# filter is true. This is the pushed-down-NOT semantics of compile_filter, derived independently.

_TYPES = {name: is_integral(t) for name, t in KEYS}
_IDX = {name: i for i, (name, _) in enumerate(KEYS)}


def _like(value: str, pattern: str, sql: bool = False) -> bool:
    """Hive LIKE as its store evaluates it: `.*` any run, `.` any one character, a backslash
    before a dot a dot, everything else literal; the whole value, case-sensitively. `sql` (date
    keys): `%` any run and `_` any one character too."""
    def match(i: int, j: int) -> bool:
        if i == len(pattern):
            return j == len(value)
        if pattern.startswith(".*", i) or (sql and pattern[i] == "%"):
            n = 1 if pattern[i] == "%" else 2
            return any(match(i + n, k) for k in range(j, len(value) + 1))
        if sql and pattern[i] == "_":
            return j < len(value) and match(i + 1, j + 1)
        if pattern.startswith("\\.", i):
            return j < len(value) and value[j] == "." and match(i + 2, j + 1)
        if pattern.startswith("\\\\", i):
            return value.startswith("\\\\", j) and match(i + 2, j + 2)
        if j < len(value) and (pattern[i] == "." or pattern[i] == value[j]):
            return match(i + 1, j + 1)
        return False
    return match(0, 0)


def _leaf(leaf: Leaf, values: tuple):
    raw = values[_IDX[leaf.key]]
    if leaf.key == "dt":  # a date key: compared as text (Hive 4); the default partition never matches
        if raw == DEFAULT:
            return None
        x = raw
        lits = [str(v.value) for v in leaf.values]
    elif _TYPES[leaf.key]:
        x = _num(raw)
        if x is None:
            return None
        lits = [v.value for v in leaf.values]
    else:
        x = raw
        lits = [v.text if v.kind == "int" else v.value for v in leaf.values]
    op = leaf.op
    if op == "=":
        return x == lits[0]
    if op == "!=":
        return x != lits[0]
    if op == "<":
        return x < lits[0]
    if op == "<=":
        return x <= lits[0]
    if op == ">":
        return x > lits[0]
    if op == ">=":
        return x >= lits[0]
    if op == "IN":
        return x in lits
    if op == "NOT IN":
        return x not in lits
    if op == "BETWEEN":
        return lits[0] <= x <= lits[1]
    if op == "NOT BETWEEN":
        return not lits[0] <= x <= lits[1]
    if op == "LIKE":
        return _like(x, lits[0], sql=leaf.key == "dt")
    if op == "NOT LIKE":
        return not _like(x, lits[0], sql=leaf.key == "dt")
    raise AssertionError(op)


def _eval(node, values):
    if isinstance(node, Leaf):
        return _leaf(node, values)
    if isinstance(node, Not):
        r = _eval(node.item, values)
        return None if r is None else not r
    rs = [_eval(i, values) for i in node.items]
    if isinstance(node, And):
        return False if False in rs else None if None in rs else True
    return True if True in rs else None if None in rs else False


def oracle(filt: str, parts: dict[int, tuple]) -> set[int]:
    tree = parse_filter(filt)
    return {pid for pid, values in parts.items() if _eval(tree, values) is True}


MATRIX = [
    # string equality: exact, case- and trailing-space-sensitive
    "ds = 'abc'",
    'ds = "abc"',
    "ds == 'ABC'",
    "ds = 'abc '",
    "ds = 'b' or ds = 'B'",
    "ds = 'é'",
    "ds = \"it's\"",
    "ds = 'it\\'s'",
    "ds = 'say \"hi\"'",
    "ds = 'back\\\\slash'",
    "ds = '__HIVE_DEFAULT_PARTITION__'",
    "ds = 2024-01-01",
    "ds != 'abc'",
    "ds <> 'abc'",
    # string order (code point order, not locale order)
    "ds < 'b'",
    "ds <= 'b'",
    "ds > 'B'",
    "ds >= 'a%c'",
    "ds > 'z'",
    "ds > '10'",
    "ds < 'abc '",
    "'b' > ds",
    "'abc' <= ds",
    # LIKE: Hive's whole-value, case-sensitive regular expression (Spark sends `us.*`, `.*x`, `.*x.*`)
    "ds like 'a.*'",
    "ds like 'A.*'",
    "ds LIKE 'a.c'",
    "ds like '.*c'",
    "ds like '.*C'",
    "ds like 'a!c'",
    "ds like 'a%c'",
    "ds like 'a%'",
    "ds like 'back\\\\.*'",
    "ds like '.*\\[x\\]\\*\\?.*'",
    "ds like '..'",
    "ds like '.*'",
    "ds like 'abc'",
    "ds like \".*b.*\"",
    "ds like '.*\\'.*'",
    "ds like 'a(b|x)c'",
    "ds like '[ab].*'",
    "ds not like '.*a.*'",
    "ds NOT LIKE 'a.c'",
    "not ds like 'A.*'",
    # BETWEEN / IN on strings
    "ds between '2024-01-01' and '2024-01-31'",
    "ds not between 'a' and 'b'",
    "ds between 'b' and 'a'",
    "ds in ('abc', 'ABC', 'zzz')",
    "ds not in ('abc', 'b', '__HIVE_DEFAULT_PARTITION__')",
    "(ds) in ('x y')",
    "(ds) not in ('x y', 'abc ')",
    "not ds in ('abc')",
    # integral key: numeric order, default partition never matches
    "hr < 10",
    "hr > 9",
    "hr = 7",
    "hr = 2147483648",
    "hr != 5",
    "hr <> 5",
    "not hr = 5",
    "not (hr < 10)",
    "not hr >= -3",
    "10 > hr",
    "hr between 1 and 10",
    "hr not between 1 and 10",
    "not (hr between 1 and 10)",
    "hr in (0, 23, -3)",
    "hr not in (0, 23)",
    "not hr in (0, 23)",
    "(hr) not in (1)",
    "not (hr not in (1))",
    "hr >= -3 and hr <= 2",
    "hr = 1 or hr = 2 or hr = 5",
    "hr >= 1 and hr <= 10",
    "hr < 10 and ds < '10'",
    # date keys
    "dt = DATE '2024-01-01'",
    "dt = 2024-01-01",
    "dt = '2024-01-01'",
    "dt < date '2024-02-01'",
    "dt > 2024-01-01",
    "dt between 2024-01-01 and 2024-02-29",
    "dt not in (DATE '2024-01-01', date '2023-12-31')",
    "dt >= 2024-01-15 and not dt = '2024-10-01'",
    "not dt < '2024-1-15'",
    "dt = '2024-1-1'",
    "dt = '20240101'",
    "dt like '2024-0_-%'",
    "dt like '2024.*'",
    "dt not like '%-01'",
    # nesting
    "ds = 'abc' or hr = 1 and dt = 2024-01-01",
    "(ds = 'abc' or hr = 1) and dt = 2024-01-01",
    "not (ds like 'a.*' or hr > 5)",
    "not (not ds = 'abc' and hr >= 0)",
    "NOT ds NOT LIKE '.*c' AnD Hr < 100",
    "`DS` = 'b' or `hr` = 1",
    "((ds = 'abc' or ds = 'b') and (hr < 10 or not hr < 100)) or (dt = 2024-10-01 and not ds like '.*a.*')",
    "not (hr < 5 or hr > 20) and not (ds in ('abc', 'b'))",
    "(STRUCT(ds, hr)) IN (CONST STRUCT('abc', 0), CONST STRUCT('b', 5))",
    "(STRUCT(ds, hr)) NOT IN (CONST STRUCT('abc', 0), CONST STRUCT('b', 5))",
]


def _run(engine, tbl_id: int, filt: str) -> set[int]:
    """The filter's answer; the driven forms (what the server sends on SQLite and PostgreSQL, with
    the table condition the planner cannot use) must give the same one."""
    answers = []
    for driven in (False, True, "or"):
        clause = compile_filter(filt, tbl_id, KEYS, engine.dialect.name, driven=driven)
        in_table = S.partitions.c.tbl_id == tbl_id if not driven else (S.partitions.c.tbl_id + 0) == tbl_id
        q = select(S.partitions.c.part_id).where(in_table, clause)
        with engine.connect() as conn:
            answers.append(set(conn.execute(q).scalars()))
    assert answers[1] == answers[0] and answers[2] == answers[0], (filt, answers)
    return answers[0]


def _quoted(v: str) -> str:
    return "'" + v.replace("\\", "\\\\").replace("'", "\\'") + "'"


def _long_lists() -> list[str]:
    """Filters whose value lists are longer than LONG_LIST (one expanding parameter each)."""
    n = LONG_LIST + 5
    fill = [f"zz{i}" for i in range(n)]
    ds_in = ", ".join(_quoted(v) for v in [*fill, "abc", "ABC ", "é", "ü😀", "it's", "back\\slash", "a%c"])
    ds_or = " or ".join(f"ds = {_quoted(v)}" for v in [*fill, "abc", "b", "É", "x y"])
    hr = ", ".join(str(i) for i in [*range(1000, 1000 + n), 5, 10, -3])
    dt = ", ".join(f"'2020-01-{1 + i % 28:02d}'" for i in range(n)) + ", '2024-01-15', '2024-02-29'"
    return [f"ds in ({ds_in})", f"ds not in ({ds_in})", ds_or, f"not ({ds_or})", f"hr in ({hr})",
            f"hr not in ({hr})", f"dt in ({dt})", f"dt not in ({dt})",
            f"(ds in ({ds_in}) and hr not in ({hr})) or dt in ({dt})"]


def test_long_value_lists_match_oracle(backend):
    # also on the driver's cursor, as the server reads lists on PostgreSQL (store/db/driver_cursor.py)
    kind, engine, tbl_id, parts = backend
    for filt in _long_lists():
        want = oracle(filt, parts)
        assert _run(engine, tbl_id, filt) == want, (kind, filt[:80])
        q = select(S.partitions.c.part_id).where(S.partitions.c.tbl_id == tbl_id,
                                                 compile_filter(filt, tbl_id, KEYS, engine.dialect.name, driven=True))
        with engine.connect() as conn:
            assert {p for (p,) in driver_rows(conn, q)} == want, (kind, filt[:80])
    assert any(0 < len(oracle(f, parts)) < len(parts) for f in _long_lists())


@pytest.mark.parametrize("dialect", ["sqlite", "postgresql", "mysql", "mariadb"])
@pytest.mark.parametrize("driven", [False, True])
def test_filters_of_one_shape_are_compiled_once(dialect, driven):
    """A filter is written for its backend, so the statement has a cache key: filters that differ
    only in their values share it (SQLAlchemy compiles the SQL once), other shapes do not."""
    def key(filt):
        q = select(S.partitions.c.part_id).where(S.partitions.c.tbl_id == 7,
                                                 compile_filter(filt, 7, KEYS, dialect, driven=driven))
        k = q._generate_cache_key()
        assert k is not None, filt  # None: not cacheable, compiled on every call
        return k

    same = [("ds = 'a'", "ds = 'zz'"), ("ds like 'a.*'", "ds like 'b_.'"), ("hr in (1, 2)", "hr in (3, 4)"),
            ("ds > 'x' or dt = 2024-01-01", "ds > 'y' or dt = 2023-05-06"),
            ("not (ds between 'a' and 'b') and hr != 3", "not (ds between 'c' and 'd') and hr != 9")]
    for a, b in same:
        assert key(a) == key(b), (a, b)
    assert key("ds = 'a'") != key("ds > 'a'") != key("hr = 1")
    assert key("hr in (1, 2)") != key("hr in (1, 2, 3)")


def test_matrix_is_broad():
    assert len(MATRIX) >= 40
    parts = dict(enumerate(ROWS))
    sizes = [len(oracle(f, parts)) for f in MATRIX]
    assert sum(1 for s in sizes if 0 < s < len(ROWS)) >= 40  # most filters select a proper subset


@pytest.mark.parametrize("filt", MATRIX)
def test_filter_matches_oracle(backend, filt):
    kind, engine, tbl_id, parts = backend
    got = _run(engine, tbl_id, filt)
    want = oracle(filt, parts)
    assert got == want, (
        f"{kind}: {filt}\n missing: {sorted(parts[p] for p in want - got)}\n"
        f" extra: {sorted(parts[p] for p in got - want)}"
    )


def _values(engine, tbl_id, parts, filt, idx):
    return {parts[p][idx] for p in _run(engine, tbl_id, filt)}


def test_known_answers(backend):
    """A few hand-checked results, so the oracle itself is pinned down."""
    kind, engine, tbl_id, parts = backend
    assert _values(engine, tbl_id, parts, "ds = 'abc'", 0) == {"abc"}
    assert _values(engine, tbl_id, parts, "ds like 'a.c'", 0) == {"abc", "a_c", "a%c", "axc", "a!c"}
    assert _values(engine, tbl_id, parts, "ds like 'back\\slash'", 0) == {"back\\slash"}  # `\s`: literal
    assert _values(engine, tbl_id, parts, "ds like 'back\\\\.*'", 0) == set()  # `\\`: two backslashes
    assert _values(engine, tbl_id, parts, "ds like '..'", 0) == {"10", "ü😀"}
    assert _values(engine, tbl_id, parts, "ds > 'z'", 0) == {"é", "É", "ü😀"}
    present = {v for v in HR_VALUES if any(r[1] == v for r in ROWS)}
    assert _values(engine, tbl_id, parts, "hr < 10", 1) == present & {"0", "1", "2", "5", "9", "007", "-3"}
    assert _values(engine, tbl_id, parts, "not hr = 5", 1) == present - {"5", DEFAULT}
    assert DEFAULT in _values(engine, tbl_id, parts, "ds != 'abc'", 1)  # other keys unaffected
    assert _values(engine, tbl_id, parts, "dt < date '2024-01-15'", 2) == {"2023-12-31", "2024-01-01"}


def test_other_table_not_matched(backend):
    kind, engine, tbl_id, parts = backend
    assert _run(engine, tbl_id, "ds like '.*'") == set(parts)


@pytest.mark.backends("sqlite")  # a plan check
def test_sqlite_uses_key_indexes(backend):
    kind, engine, tbl_id, parts = backend
    for filt, index in (("ds = 'abc'", "ix_pkv_val"), ("hr < 10", "ix_pkv_num"), ("hr in (1, 2)", "ix_pkv_num")):
        q = select(S.partitions.c.part_id).where(S.partitions.c.tbl_id == tbl_id,
                                                 compile_filter(filt, tbl_id, KEYS, "sqlite"))
        with engine.connect() as conn:
            compiled = q.compile(conn)
            plan = conn.exec_driver_sql(
                "EXPLAIN QUERY PLAN " + str(compiled), tuple(compiled.params[k] for k in compiled.positiontup)
            ).all()
        assert any(index in str(row) for row in plan), (filt, plan)


@pytest.mark.backends("sqlite")  # a plan check
def test_sqlite_starts_from_the_driver(backend):
    """Under a driven filter SQLite looks partitions up by id from the key index (the cost follows
    the answer), instead of walking every partition of the table."""
    kind, engine, tbl_id, parts = backend
    for filt in ("ds = 'abc'", "ds = 'abc' or hr = 5", "ds = 'abc' and hr > 1", "(ds = 'a' or ds = 'b') and hr < 3"):
        q = select(S.partitions.c.part_id).where((S.partitions.c.tbl_id + 0) == tbl_id,
                                                 compile_filter(filt, tbl_id, KEYS, "sqlite", driven=True))
        with engine.connect() as conn:
            compiled = q.compile(conn)
            plan = conn.exec_driver_sql(
                "EXPLAIN QUERY PLAN " + str(compiled), tuple(compiled.params[k] for k in compiled.positiontup)
            ).all()
        text = " | ".join(str(r) for r in plan)
        assert "SEARCH partitions USING INTEGER PRIMARY KEY" in text, (filt, text)
        assert "SCAN partitions" not in text and "(tbl_id=?)" not in text.split("partition_key_val")[0], (filt, text)


def test_short_filters_are_compiled_once_per_table_and_keys():
    from store.hms.partition_filter import KEPT_FILTER_CHARS

    a = compile_filter("ds = 'kept'", 7, KEYS, "sqlite", driven=True)
    assert compile_filter("ds = 'kept'", 7, list(KEYS), "sqlite", driven=True) is a
    assert compile_filter("ds = 'kept'", 8, KEYS, "sqlite", driven=True) is not a
    assert compile_filter("ds = 'kept'", 7, KEYS, "postgresql", driven=True) is not a
    assert compile_filter("ds = 'kept'", 7, [(k, "varchar(9)" if k == "hr" else t) for k, t in KEYS], "sqlite",
                          driven=True) is not a
    long = " or ".join(f"ds = 'v{i}'" for i in range(KEPT_FILTER_CHARS // 10))
    assert len(long) > KEPT_FILTER_CHARS
    assert compile_filter(long, 7, KEYS, "sqlite") is not compile_filter(long, 7, KEYS, "sqlite")
    for _ in range(2):  # an error is not kept: raised each time
        with pytest.raises(FilterError):
            compile_filter("nokey = 'x'", 7, KEYS, "sqlite")
