"""store/db: on SQLite a read is one transaction (its BEGIN issued on the driver's connection,
store/db/engine.py): every statement in it sees the same snapshot, it takes no lock that holds back
a writer, and the next read sees what was committed meanwhile."""

from __future__ import annotations

from sqlalchemy import insert, select

from store.db import schema as S
from store.db.database import Store
from store.db.migrations import upgrade


def _names(conn) -> list[str]:
    return sorted(conn.execute(select(S.db.c.name)).scalars())


def _add(store: Store, name: str) -> None:
    with store.write() as conn:
        conn.execute(insert(S.db).values(name=name, location_uri=f"file:/w/{name}.db"))


def test_a_read_is_one_snapshot_and_holds_no_writer_back(tmp_path):
    store = Store(f"sqlite:///{tmp_path / 'm.db'}", str(tmp_path / "wh"))
    upgrade(store.engine)
    before = None
    with store.read() as conn:
        assert conn.in_transaction()
        before = _names(conn)
        _add(store, "written_meanwhile")  # another connection commits while the read is open
        assert _names(conn) == before  # the read's snapshot
        assert conn.exec_driver_sql("SELECT 1").scalar() == 1
    with store.read() as conn:
        assert _names(conn) == sorted([*before, "written_meanwhile"])
    with store.write() as conn:  # a write still takes the write lock at BEGIN, on a fresh connection
        assert conn.in_transaction()
