"""pipeline.predicate: `pipeline.read`'s Spark SQL filters translated into the Hive filters the
server prunes with, exactly where the server's meaning is the same, else conservatively (no
Spark: the end-to-end check is tests/test_pipeline_read_filters.py)."""

from __future__ import annotations

import datetime as dt
import re
from decimal import Decimal

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pipeline.predicate import (
    ANY_ONE,
    ANY_RUN,
    hive_like_pattern,
    hive_string,
    like_elements,
    parse,
    server_filter,
    unescape,
)
from pipeline.reader import partition_filter
from store.hms.common import ANY_ONE as HIVE_ONE
from store.hms.common import ANY_RUN as HIVE_RUN
from store.hms.partition_filter import like_elements as hive_like_elements
from store.hms.partition_filter import parse_filter, tokenize
from tests.harness.properties import examples

COLUMNS = {"city": "string", "p": "int", "amount": "decimal(10,2)", "d": "date", "ts": "timestamp",
           "n": "bigint", "s": "string", "x": "double", "big": "decimal(30,2)", "flag": "boolean", "f": "float"}
PARTITION_KEYS = {"city", "p", "d"}


def t(text, tz="UTC"):
    out = server_filter(text, COLUMNS, PARTITION_KEYS, tz)
    if out is not None:
        parse_filter(out)  # the server reads every translation
    return out


@pytest.mark.parametrize("sql, hive", [
    # LIKE: SQL's wildcards become Hive's; Hive's are literal characters in SQL
    ("city LIKE 's%'", "city like 's.*'"),
    ("city LIKE 's.*'", "city like 's\\.*'"),
    ("s LIKE 'a_c'", "s like 'a.c'"),
    ("s LIKE 'a\\\\%b'", "s like 'a%b'"),  # SQL text a\\%b: the string a\%b, an escaped %
    ("s LIKE 'a!_%' ESCAPE '!'", "s like 'a_.*'"),
    ("s LIKE '(a)[b]+?|^$%'", "s like '(a)[b]+?|^$.*'"),
    ("s NOT LIKE 'x%'", "s not like 'x.*'"),
    ("NOT s LIKE 'x%'", "s not like 'x.*'"),
    ("city LIKE '%'", "city like '.*'"),
    ("city NOT LIKE '\\\\_%'", "(city not like '_.*' or city = '__HIVE_DEFAULT_PARTITION__')"),  # '' matches
    ("s LIKE 'a\\\\b'", None),  # Spark refuses the escape before b
    ("s LIKE '_*'", None),  # `.*` would be a run in Hive's pattern
    ("p LIKE '1%'", None),
    # strings: Spark's escapes, quotes
    ("city = 'it\\'s'", "city = \"it's\""),
    ("city = \"a\" 'b'", "city = 'ab'"),
    ("city = 'a\\tb'", "city = 'a\tb'"),
    ("'x' < city", "city > 'x'"),
    ("city < 'B'", "(city < 'B' or city = '__HIVE_DEFAULT_PARTITION__')"),  # '' < 'B'
    ("city > 'B'", "city > 'B'"),
    ("city = 5", None),  # Spark casts the string column to a number
    # numbers
    ("p > 1.5", "p >= 2"),
    ("p <= -1.5", "p <= -2"),
    ("p = 1.5", None),
    ("p = 2.0", "p = 2"),
    ("p < '7'", "p < 7"),
    ("p > 1.5D", "p >= 2"),
    ("n >= 10L", "n >= 10"),
    ("amount > 1.5", "amount > '1.5'"),
    ("amount >= '9.5'", "amount >= '9.5'"),
    ("big >= '9.5'", None),  # compared as doubles by Spark: not exact beyond 15 digits
    ("x >= '9.5' AND x < 1e3", "x >= '9.5' and x < '1000.0'"),
    ("f > 1.5", None),
    ("flag = true", "flag = 'true'"),
    # dates and timestamps
    ("d BETWEEN '2024-01-01' AND DATE '2024-02-01'", "d >= DATE '2024-01-01' and d <= DATE '2024-02-01'"),
    ("d = '2024-1-1'", None),
    ("ts >= TIMESTAMP '2024-01-01 10:00:00'", "ts >= '2024-01-01 10:00:00.000000'"),
    ("ts < '2024-01-01 10:00:00.5'", "ts < '2024-01-01 10:00:00.500000'"),
    ("ts >= d", None),
    # NULLs, IN, logic
    ("n IS NULL OR city IS NULL", None),
    ("n IS NOT NULL AND city IS NOT NULL", "n is not null"),
    ("p IN (1, NULL, 3)", "(p = 1 or p = 3)"),
    ("p NOT IN (1, NULL)", None),
    ("p NOT IN (1, 2)", "p != 1 and p != 2"),
    ("p IN (1, '2')", None),  # Spark compares a mixed list as strings
    ("NOT (city < 'A' OR n IS NULL)", "city >= 'A' and n is not null"),
    ("NOT (p = 1 AND s = 'a')", "(p != 1 or s != 's')".replace("'s'", "'a'")),
    ("p = 1 OR upper(s) = 'A'", None),
    ("p = 1 AND (s = 'a' OR n = 2) AND flag", "p = 1 and (s = 'a' or n = 2)"),
    ("p <=> 1", None),
    ("amount = NULL", None),
    ("p + 1 > 2", None),
    ("p > -1.5F", None),
    ("p > - 2", "p > -2"),
    ("other = 1 AND p = 1", "p = 1"),
])
def test_translation(sql, hive):
    assert t(sql) == hive


def test_timestamps_are_read_in_the_session_time_zone():
    assert t("ts >= TIMESTAMP '2024-07-01 10:00:00'", "Europe/Paris") == "ts >= '2024-07-01 08:00:00.000000'"
    assert t("ts >= TIMESTAMP '2024-03-31 02:30:00'", "Europe/Paris") is None  # no such local time
    assert t("ts >= TIMESTAMP '2024-10-27 02:30:00'", "Europe/Paris") is None  # twice


def test_url_encoded_partition_paths_do_not_prune_string_keys():
    # Spark's url_encode writes ' ' as '+', which the server's decoding keeps
    assert server_filter("city = 'a b' AND p = 1 AND city LIKE 'a%'", COLUMNS, PARTITION_KEYS,
                         url_encoded=True) == "p = 1"


def test_tuples():
    assert t([("city", "=", "x"), ("p", ">", 1.5), ("amount", "<", Decimal("2.25"))]) == \
        "city = 'x' and p >= 2 and amount < '2.25'"
    assert t([("d", "in", [dt.date(2024, 1, 1)]), ("ts", ">=", dt.datetime(2024, 1, 1, tzinfo=dt.timezone.utc))]) == \
        "d = DATE '2024-01-01' and ts >= '2024-01-01 00:00:00.000000'"
    assert t([("p", "in", [])]) is None
    with pytest.raises(ValueError, match="operator"):
        server_filter([("p", "~", 1)], COLUMNS)


def test_partition_filter_keeps_partition_keys_only():
    keys = {"dt": "string", "day": "int"}
    assert partition_filter("dt = 'a' AND score > 1.5", keys) == "dt = 'a'"
    assert partition_filter("dt = 'a' OR score > 1.5", keys) is None
    assert partition_filter("dt LIKE 'a%'", keys) == "dt like 'a.*'"


def test_spark_sql_beyond_the_parser_is_not_pruned():
    for text in ("city = 'a' AND t.x = 1", "EXISTS (SELECT 1)", "city = 'a' AND", "city RLIKE 'a'",
                 "city = '\\u0041'", "s IS TRUE", "CASE WHEN p = 1 THEN true END"):
        assert t(text) is None, text


def test_unescape_as_spark():
    assert unescape("a\\'b\\\"c\\\\d\\%e\\_f\\ng\\q") == "a'b\"c\\d\\%e\\_f\ng" + "q"
    assert parse("c = 'x'") is not None


# --- the pattern and string translations, against the server's own reading -----------------------

_ALPHABET = "ab.*%_\\[(?$'\"x"


def _spark_like(pattern: str, escape: str = "\\") -> re.Pattern | None:
    """Spark's LIKE as a regular expression (StringUtils.escapeLikeRegex), None where Spark refuses."""
    out, i = [], 0
    while i < len(pattern):
        c = pattern[i]
        if c == escape:
            if i + 1 >= len(pattern) or pattern[i + 1] not in ("_", "%", escape):
                return None
            out.append(re.escape(pattern[i + 1]))
            i += 2
            continue
        out.append(".*" if c == "%" else "." if c == "_" else re.escape(c))
        i += 1
    return re.compile("".join(out), re.S)


def _hive_match(elements: list, value: str) -> bool:
    regex = "".join(".*" if e is HIVE_RUN else "." if e is HIVE_ONE else re.escape(str(e)) for e in elements)
    return re.fullmatch(regex, value, re.S) is not None


@settings(max_examples=examples(300, 2000))
@given(pattern=st.text(_ALPHABET, max_size=8), values=st.lists(st.text(_ALPHABET, max_size=6), max_size=20))
def test_like_patterns_mean_the_same_on_the_server(pattern, values):
    spark = _spark_like(pattern)
    elements = like_elements(pattern)
    assert (spark is None) == (elements is None)
    if elements is None:
        return
    hive = hive_like_pattern(elements)
    text = hive_string(hive) if hive is not None else None
    if text is None:
        assert hive is None or ("'" in hive and '"' in hive) or hive.endswith("\\")
        return
    (token, _eof) = tokenize(text)
    assert token.kind == "string" and token.value == hive  # the server's lexer reads the literal back
    server = hive_like_elements(token.value)
    for v in values + [pattern, pattern.replace("%", "")]:
        assert _hive_match(server, v) == (spark.fullmatch(v) is not None), (pattern, hive, v)


@settings(max_examples=examples(100, 1000))
@given(st.text(max_size=12))
def test_string_literals_read_back_exactly(value):
    text = hive_string(value)
    if text is None:
        assert ("'" in value and '"' in value) or re.search(r"(?<!\\)(\\\\)*\\$", value)
        return
    token = tokenize(text)[0]
    assert token.kind == "string" and token.value == value


_WORDS = ["city", "p", "amount", "d", "ts", "n", "s", "x", "flag", "AND", "OR", "NOT", "IN", "LIKE", "BETWEEN",
          "IS", "NULL", "TRUE", "DATE", "TIMESTAMP", "ESCAPE", "(", ")", ",", "=", "<", ">=", "!=", "<=>", "!", "-",
          "1", "1.5", "-2", "1e3", "7L", "2.5D", "1BD", "'a'", "'2024-01-01'", "'2024-01-01 10:00:00'", "'s%'",
          "'a\\_'", "'.*'", '"x"', "'it\\'s'", "`city`", "upper", "+", "*"]


@settings(max_examples=examples(300, 3000))
@given(text=st.lists(st.sampled_from(_WORDS), max_size=14).map(" ".join))
def test_any_text_translates_or_prunes_nothing(text, caplog):
    """Whatever the text: no exception (not even one the translation catches and logs), and the
    server reads every translation."""
    caplog.clear()
    for tz in ("UTC", "America/New_York"):
        out = server_filter(text, COLUMNS, PARTITION_KEYS, tz)
        if out is not None:
            parse_filter(out)
    assert not [r for r in caplog.records if "not translated" in r.getMessage()]


def test_like_elements():
    assert like_elements("a%b_") == ["a", ANY_RUN, "b", ANY_ONE]
    assert like_elements("a\\") is None
