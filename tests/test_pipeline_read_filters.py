"""Property test (hypothesis): `pipeline.read(table, filters=predicate)` holds exactly the rows
Spark's own filter keeps of the unpruned table, for random Spark SQL predicates (LIKE with `%`,
`_`, escapes and regular-expression characters; IN, ranges, BETWEEN, IS NULL, NULL literals,
decimals, dates, timestamps; AND / OR / NOT) over a table partitioned by string, int, date,
decimal and timestamp columns, with data columns of those types (files pruned by their column
statistics). The server prunes with the reader's translation (pipeline.predicate), which must
never skip a partition or file holding a matching row. One table per backend, many predicates.
"""

from __future__ import annotations

import datetime as dt
import uuid
from decimal import Decimal

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from client import HudiCatalog
from pipeline import read, write
from pipeline.reader import plan
from tests.harness.properties import examples
from tests.pipeline_helpers import uri

pytestmark = [pytest.mark.spark, pytest.mark.slow]

SCHEMA = ("id long, city string, p int, d date, amt decimal(10,2), ts timestamp, "
          "name string, n int, amount decimal(12,3), day date, at timestamp, x double")
PARTITIONS = ["city", "p", "d", "amt", "ts"]
CITIES = ["sf", "sea", "s.a", "s%x", "s_y", "a(b", "[x]", "*s", "SF", "", None, "s.*"]
NAMES = ["ab", "a.b", "a%b", "a_b", "a\\b", "it's", "(x)", "x+", "", None, "abc", "b"]
DATES = [dt.date(2024, 1, 1), dt.date(2024, 2, 29), dt.date(2023, 12, 31), None]
TIMES = [dt.datetime(2024, 1, 1, 10, 0, 0), dt.datetime(2024, 1, 1, 10, 0, 0, 500000), dt.datetime(2023, 6, 1), None]
AMOUNTS = [Decimal("1.50"), Decimal("-2.25"), Decimal("10.00"), Decimal("0.05"), None]


def _row(i: int):
    k = i % 12  # the partition: 12 of them
    return (i, CITIES[k], [1, 2, -3, None][k % 4], DATES[k % 4], AMOUNTS[k % 5], TIMES[k % 4],
            NAMES[i % len(NAMES)], [5, -1, 100, None, 0][i % 5], [Decimal("1.5"), Decimal("2.125"), None,
                                                                   Decimal("-7")][i % 4],
            DATES[(i // 3) % 4], TIMES[(i // 2) % 4], [0.5, -1.0, 9.5, None][i % 4])


@pytest.fixture(scope="module")
def table(spark, our_server):
    t = f"rf_{uuid.uuid4().hex[:8]}.t"
    write(spark.createDataFrame([_row(i) for i in range(36)], SCHEMA), t, "insert", record_key="id",
          partition_by=PARTITIONS, metastore=uri(our_server))
    # a second file in the partitions: column statistics decide between them
    write(spark.createDataFrame([_row(i) for i in range(36, 60)], SCHEMA), t, "bulk_insert",
          metastore=uri(our_server))
    everything = read(spark, t, metastore=uri(our_server)).cache()
    assert everything.count() == 60
    return t, everything


# --- predicates, as Spark SQL text ---------------------------------------------------------------


def sql_string(value: str) -> str:
    return "'" + value.replace("\\", "\\\\").replace("'", "\\'") + "'"


_PIECES = ["s", "a", "b", ".", "*", "(", "[", "%", "_", "\\%", "\\_", "\\\\", ".*", "x", "'", "+", "SF", "sf"]
like_patterns = st.lists(st.sampled_from(_PIECES), max_size=5).map("".join)
strings = st.one_of(st.just(""), st.sampled_from([c for c in CITIES + NAMES if c is not None] + ["s", "sz", "A", "t",
                                                                                                   "a", "_", "~"]))


def _date_lit(draw) -> str:
    d = draw(st.sampled_from([x for x in DATES if x] + [dt.date(2024, 1, 2), dt.date(2024, 3, 1)]))
    return draw(st.sampled_from([f"DATE '{d}'", f"'{d}'"]))


def _ts_lit(draw) -> str:
    t = draw(st.sampled_from([x for x in TIMES if x] + [dt.datetime(2024, 1, 1, 10, 0, 0, 250000)]))
    text = t.isoformat(sep=" ")
    return draw(st.sampled_from([f"TIMESTAMP '{text}'", f"'{text}'"]))


def _number_lit(draw, decimal: bool) -> str:
    if decimal:
        return draw(st.sampled_from(["1.5", "1.50", "-2.25", "0", "10", "2.125", "0.05", "'1.5'", "-7", "1.25BD"]))
    return draw(st.sampled_from(["1", "2", "-3", "0", "5", "100", "1.5", "-2.5", "2.0", "'2'", "1.5D", "-1"]))


OPS = ["=", "!=", "<>", "<", "<=", ">", ">=", "=="]


@st.composite
def leaves(draw) -> str:
    col = draw(st.sampled_from(["city", "city", "name", "p", "n", "d", "day", "amt", "amount", "ts", "at", "x"]))
    kind = {"city": "s", "name": "s", "p": "i", "n": "i", "d": "d", "day": "d", "amt": "m", "amount": "m",
            "ts": "t", "at": "t", "x": "m"}[col]

    def lit():
        if kind == "s":
            return sql_string(draw(strings))
        if kind in ("i", "m"):
            return _number_lit(draw, kind == "m")
        return _date_lit(draw) if kind == "d" else _ts_lit(draw)

    form = draw(st.sampled_from(["cmp", "cmp", "cmp", "in", "between", "null", "like", "like", "flipped",
                                 "null_lit"]))
    if form == "like" and kind == "s":
        neg = draw(st.sampled_from(["", "NOT "]))
        return f"{col} {neg}LIKE {sql_string(draw(like_patterns))}"
    if form == "in":
        neg = draw(st.sampled_from(["", "NOT "]))
        values = [lit() for _ in range(draw(st.integers(1, 3)))]
        if draw(st.booleans()) and draw(st.booleans()):
            values.append("NULL")
        return f"{col} {neg}IN ({', '.join(values)})"
    if form == "between":
        neg = draw(st.sampled_from(["", "NOT "]))
        return f"{col} {neg}BETWEEN {lit()} AND {lit()}"
    if form == "null":
        return f"{col} IS {draw(st.sampled_from(['', 'NOT ']))}NULL"
    if form == "null_lit":
        return f"{col} {draw(st.sampled_from(OPS))} NULL"
    if form == "flipped":
        return f"{lit()} {draw(st.sampled_from(OPS))} {col}"
    return f"{col} {draw(st.sampled_from(OPS))} {lit()}"


predicates = st.recursive(
    leaves(),
    lambda inner: st.one_of(
        st.tuples(inner, st.sampled_from(["AND", "OR"]), inner).map(lambda t: f"({t[0]} {t[1]} {t[2]})"),
        inner.map(lambda p: f"NOT ({p})")),
    max_leaves=4)


def _ids(df) -> list[int]:
    return sorted(r[0] for r in df.select("id").collect())


@settings(max_examples=examples(10, 100), suppress_health_check=list(HealthCheck))
@given(predicate=predicates)
def test_read_equals_sparks_filter_of_every_row(spark, our_server, table, predicate):
    t, everything = table
    from pyspark.sql import functions as F

    try:
        expected = _ids(everything.where(F.expr(predicate)))
    except Exception:  # Spark refuses the predicate itself
        assume(False)
    got = _ids(read(spark, t, metastore=uri(our_server), filters=predicate))
    assert got == expected, predicate


@settings(max_examples=examples(12, 120), suppress_health_check=list(HealthCheck))
@given(batch=st.lists(predicates, min_size=25, max_size=25))
def test_pruning_never_skips_a_file_with_a_matching_row(spark, our_server, table, batch):
    """The same property, many predicates at a time: `read` is Spark's filter over the files the
    server's plan keeps, so it equals Spark's filter of every row exactly when the plan keeps every
    file holding a matching row (one Spark job evaluates the batch; one plan per predicate)."""
    t, everything = table
    from pyspark.sql import functions as F

    rows = everything.select("_hoodie_file_name", *[F.expr(p).alias(f"p{i}") for i, p in enumerate(batch)]).collect()
    with HudiCatalog(uri(our_server)) as c:
        for i, predicate in enumerate(batch):
            needed = {r[0] for r in rows if r[i + 1] is True}
            kept = {f.rsplit("/", 1)[-1] for f in plan(c, t, filters=predicate).files}
            assert needed <= kept, (predicate, sorted(needed - kept))


def test_the_issues_examples_and_pruning(spark, our_server, table):
    t, everything = table
    from pyspark.sql import functions as F

    for predicate in ("city LIKE 's%'", "city LIKE 's.*'", "city LIKE 's\\\\%%'", "name LIKE 'a\\\\_%'",
                      "amt > 1.5", "amount >= 1.5 AND x >= '9.5'", "city = '' OR p IS NULL"):
        assert _ids(read(spark, t, metastore=uri(our_server), filters=predicate)) == \
            _ids(everything.where(F.expr(predicate))), predicate
    assert len(_ids(read(spark, t, metastore=uri(our_server), filters="city LIKE 's%'"))) > 1
    with HudiCatalog(uri(our_server)) as c:
        everything_files = len(plan(c, t).files)
        # exact translations still prune: partitions by string / int / date keys, files by statistics
        assert len(plan(c, t, filters="city LIKE 's%'").files) < everything_files
        assert len(plan(c, t, filters="p > 1.5").files) < everything_files
        assert len(plan(c, t, filters="d = DATE '2024-02-29'").files) < everything_files
        assert plan(c, t, filters="amount > 100.5").files == []
    with HudiCatalog(uri(our_server)) as c:
        latest = c.list_instants(*t.split("."), states=["COMPLETED"])[-1].ts
    for predicate in ("city LIKE 's%' AND amount > 1.5", "p > 1.5 OR city < 'A'", "city = '' AND d < '2024-02-01'"):
        # time travel prunes by the partition keys only, with the same translation
        assert _ids(read(spark, t, metastore=uri(our_server), as_of=latest, filters=predicate)) == \
            _ids(everything.where(F.expr(predicate))), predicate
    tuples = [("p", ">", 1.5), ("amount", ">=", Decimal("1.5")), ("d", "!=", dt.date(2024, 1, 1))]
    expected = _ids(everything.where("p > 1.5 AND amount >= 1.5 AND d != DATE '2024-01-01'"))
    assert _ids(read(spark, t, metastore=uri(our_server), filters=tuples)) == expected
