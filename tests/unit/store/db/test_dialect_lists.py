"""`in_list` and the joined-string lists of PostgreSQL (store/db/dialect.py): every form matches
exactly the values given, on every backend, including empty strings, a lone empty string and
values holding the separator (which fall back to an array parameter)."""

from __future__ import annotations

import pytest
from sqlalchemy import BigInteger, Column, MetaData, String, Table, create_engine, select, text

from store.db.dialect import JOINED_OVER, SEP, in_list, pg_joined_list
from store.hudi.record_index import delete_keys


def test_joined_list_round_trip_form():
    assert pg_joined_list([""]) == SEP
    assert pg_joined_list(["a", "", "b"]) == f"{SEP}a{SEP}{SEP}b"
    assert pg_joined_list(["a", f"x{SEP}y"]) is None


@pytest.fixture
def conn(backend_url):
    engine = create_engine(backend_url)
    with engine.connect() as c:
        md = MetaData()
        t = Table("tmp_in_list", md, Column("name", String(64)), Column("n", BigInteger),
                  prefixes=["TEMPORARY"])
        md.create_all(c)
        names = [f"v{i}" for i in range(2 * JOINED_OVER)] + ["", "with,comma", "ünïcode", f"has{SEP}sep"]
        c.execute(t.insert(), [{"name": v, "n": i} for i, v in enumerate(names)])
        yield c, t, names
        c.rollback()
    engine.dispose()


@pytest.mark.parametrize("size", [1, JOINED_OVER + 1])
def test_in_list_matches_exactly_the_values(conn, size):
    c, t, names = conn
    b = c.dialect.name
    wanted = names[:size - 1] + [""] + ["absent"]  # a long list holds the empty string too
    got = {r[0] for r in c.execute(select(t.c.name).where(in_list(b, t.c.name, wanted)))}
    assert got == set(wanted) - {"absent"}
    ints = list(range(0, 4 * JOINED_OVER, 3))[:size] + [10**12]
    got_n = {r[0] for r in c.execute(select(t.c.n).where(in_list(b, t.c.n, ints)))}
    assert got_n == {n for n in ints if n < len(names)}


def test_a_long_list_with_the_separator_falls_back_to_an_array(conn):
    c, t, names = conn
    wanted = names[:JOINED_OVER] + [f"has{SEP}sep", ""]
    got = {r[0] for r in c.execute(select(t.c.name).where(in_list(c.dialect.name, t.c.name, wanted)))}
    assert got == set(wanted)


def test_joined_keys_delete_only_the_keys_given(conn):
    """store/hudi/record_index/rows.py's joined forms on PostgreSQL (batched statements elsewhere)."""
    c, _, _ = conn
    c.execute(text("CREATE TEMPORARY TABLE record_index (tbl_id BIGINT, shard SMALLINT, record_key VARCHAR(64), "
                   "fg_id BIGINT, instant BIGINT)"))
    keys = [(i % 7, f"k{i}") for i in range(50)] + [(3, f"odd{SEP}key")]
    c.execute(text("INSERT INTO record_index VALUES (1, :s, :k, 9, 0)"), [{"s": s, "k": k} for s, k in keys])
    assert delete_keys(c, 1, 9, keys[:10] + [(0, "absent")]) == 10
    assert delete_keys(c, 1, 9, keys[-1:]) == 1  # holds the separator: the array form
    left = {r[0] for r in c.execute(text("SELECT record_key FROM record_index"))}
    assert left == {k for _, k in keys[10:-1]}
