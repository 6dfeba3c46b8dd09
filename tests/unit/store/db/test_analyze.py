"""store/db/database.py: the statistics upkeep on PostgreSQL. Rows committed in bulk are counted
per group of tables; once a group's count passes its threshold its tables are analyzed in the
background (the record index apart: a bulk load of a table's keys left lookups planned as for a
table without keys)."""

from __future__ import annotations

import time

import pytest
from sqlalchemy import text

from store.db.database import Store


def _analyzed(store: Store, like: str) -> int:
    """How many ANALYZEs the matching tables had so far (the database is the run's, shared by the
    tests before this one, whose own bulk changes may have analyzed them already)."""
    with store.read() as c:
        return c.execute(text("SELECT coalesce(sum(analyze_count), 0) FROM pg_stat_user_tables "
                              "WHERE relname LIKE :p"), {"p": like}).scalar()


def _wait(store: Store, like: str, above: int, expected: int) -> int:
    """The matching tables' ANALYZEs since `above`, once there are `expected` (or after 60 s)."""
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and _analyzed(store, like) - above < expected:
        time.sleep(0.1)
    time.sleep(0.2)  # (no more come)
    return _analyzed(store, like) - above


@pytest.mark.backends("postgresql")
def test_bulk_changes_analyze_their_own_tables(backend_url, tmp_path):
    store = Store(backend_url, str(tmp_path / "wh"))
    try:
        index0, parts0 = _analyzed(store, "record_index_p%"), _analyzed(store, "partitions")
        store.note_changes(900, "record_index")  # under 1,000 + 10%: nothing yet
        store.note_changes(900)
        time.sleep(0.5)
        assert _analyzed(store, "record_index_p%") == index0 and _analyzed(store, "partitions") == parts0
        store.note_changes(200, "record_index")  # the record index's count only
        assert _wait(store, "record_index_p%", index0, 16) == 16  # every hash partition of the index
        assert _analyzed(store, "partitions") == parts0
        store.note_changes(200)
        assert _wait(store, "partitions", parts0, 1) == 1
    finally:
        store.dispose()
