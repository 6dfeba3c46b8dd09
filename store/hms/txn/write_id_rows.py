"""What happens to the write-id rows (`txn_write_ids`, `next_write_ids`) and the other per-table
transaction rows (`txn_components`, `txn_write_set`, `compactions`, `locks`) besides allocation: their cleanup once
no snapshot can need them, and what a dropped or renamed table does to them, as Hive 4's
TxnHandler (cleanTxnToWriteIdTable, cleanupRecords, onRename).

* clean_write_ids (run by the lock manager when transactions commit or abort): the write ids of
  transactions below the low water mark go, as Hive's housekeeper does. The mark is the lowest of:
  the lowest open transaction each open transaction saw when it opened (`txns.min_open_txn`, Hive's
  MIN_HISTORY_LEVEL: its snapshot may list those as open), the lowest aborted transaction that
  holds write ids (its writes stay invalid: no compactor runs here to clean them, so such a
  transaction holds the cleanup at it), and the next transaction id. Below it every transaction is
  committed and seen committed by every snapshot, so its write ids are valid for everyone and
  get_valid_write_ids makes the same write ids valid without them (its answer is Hive's after its
  cleaner: with no valid row left, the lowest invalid write id becomes the high water mark).
* Transactional tables (parameter `transactional=true`) of the default catalog only, as Hive's
  AcidEventListener: drop_table removes the table's write ids (kept when the data is kept:
  deleteData false), its transactions' components and its compaction requests; drop_database
  those of its transactional tables, and the write ids and components of all its tables; a
  rename (alter_table to another name or database) moves the write ids, the components, the write
  set, the compaction requests and the locks to the new name. Rows left under the new name by a
  table dropped with its write ids kept are replaced. A dropped partition's components and
  compaction requests go; a renamed one's components, write set, compaction requests and locks
  follow it. Compared with Hive 4 in tests/test_hive4_methods.py (test_write_ids_follow_their_table).

Database and table names are lower-case in these tables (compaction requests keep the names as
requested, so they are matched case-insensitively).
"""

from __future__ import annotations

from sqlalchemy import Connection, and_, delete, func, select, update

from store.db import schema

_W = schema.txn_write_ids
_N = schema.next_write_ids
_WS = schema.txn_write_set
_TC = schema.txn_components
_C = schema.compactions
_L = schema.locks
_T = schema.txns

DEFAULT_CATALOG = "hive"
TXN_OPEN, TXN_ABORTED = "o", "a"


def is_transactional(params: dict[str, str] | None) -> bool:
    """Hive's TxnUtils.isTransactionalTable: the table parameter `transactional` is `true`."""
    return (params or {}).get("transactional", "").lower() == "true"


def low_water_mark(conn: Connection, next_txn_id: int) -> int:
    """The lowest transaction whose write ids a snapshot may still need (see the module doc)."""
    oldest_seen = conn.execute(select(func.min(func.coalesce(_T.c.min_open_txn, _T.c.txn_id)))
                               .where(_T.c.state == TXN_OPEN)).scalar()
    oldest_aborted = conn.execute(select(func.min(_W.c.txn_id)).select_from(
        _W.join(_T, _T.c.txn_id == _W.c.txn_id)).where(_T.c.state == TXN_ABORTED)).scalar()
    return min(v for v in (oldest_seen, oldest_aborted, next_txn_id) if v is not None)


def clean_write_ids(conn: Connection, next_txn_id: int) -> int:
    """Deletes the write ids below the low water mark; returns the mark."""
    mark = low_water_mark(conn, next_txn_id)
    conn.execute(delete(_W).where(_W.c.txn_id < mark))
    return mark


def drop_table_rows(conn: Connection, cat: str, db: str, tbl: str, keep_write_ids: bool) -> None:
    """Hive's cleanupRecords(TABLE): call it for a dropped transactional table."""
    if cat != DEFAULT_CATALOG:
        return
    db, tbl = db.lower(), tbl.lower()
    if not keep_write_ids:
        conn.execute(delete(_W).where(_W.c.db_name == db, _W.c.tbl_name == tbl))
        conn.execute(delete(_N).where(_N.c.db_name == db, _N.c.tbl_name == tbl))
    conn.execute(delete(_TC).where(_TC.c.db_name == db, _TC.c.tbl_name == tbl))
    conn.execute(delete(_C).where(func.lower(_C.c.db_name) == db, func.lower(_C.c.tbl_name) == tbl))


def drop_database_rows(conn: Connection, cat: str, db: str, transactional: list[str]) -> None:
    """Hive 4's drop of a database: each transactional table's rows as drop_table_rows, then
    cleanupRecords(DATABASE): the write ids and components of every table of the database,
    transactional or not. A non-transactional table's compaction requests stay (as Hive 4.0.1's,
    compared in tests/test_hive4_methods.py)."""
    if cat != DEFAULT_CATALOG:
        return
    for tbl in transactional:
        drop_table_rows(conn, cat, db, tbl, keep_write_ids=False)
    db = db.lower()
    conn.execute(delete(_W).where(_W.c.db_name == db))
    conn.execute(delete(_N).where(_N.c.db_name == db))
    conn.execute(delete(_TC).where(_TC.c.db_name == db))


def rename_table_rows(conn: Connection, cat: str, old: tuple[str, str], new: tuple[str, str]) -> None:
    """Hive's onRename for a transactional table renamed or moved to another database (same catalog)."""
    if cat != DEFAULT_CATALOG:
        return
    (odb, otbl), (ndb, ntbl) = (old[0].lower(), old[1].lower()), (new[0].lower(), new[1].lower())
    if (odb, otbl) == (ndb, ntbl):
        return
    for t in (_W, _N):  # stale rows of a table once dropped under the new name (write ids kept)
        conn.execute(delete(t).where(t.c.db_name == ndb, t.c.tbl_name == ntbl))
    for t in (_W, _N, _TC, _WS, _L):
        conn.execute(update(t).where(and_(t.c.db_name == odb, t.c.tbl_name == otbl))
                     .values(db_name=ndb, tbl_name=ntbl))
    conn.execute(update(_C).where(func.lower(_C.c.db_name) == odb, func.lower(_C.c.tbl_name) == otbl)
                 .values(db_name=ndb, tbl_name=ntbl))


def drop_partition_rows(conn: Connection, cat: str, db: str, tbl: str, part_names: list[str]) -> None:
    """Hive's cleanupRecords(PARTITION) for dropped partitions of a transactional table."""
    if cat != DEFAULT_CATALOG:
        return
    db, tbl = db.lower(), tbl.lower()
    for i in range(0, len(part_names), 500):
        conn.execute(delete(_TC).where(_TC.c.db_name == db, _TC.c.tbl_name == tbl,
                                       _TC.c.part_name.in_(part_names[i:i + 500])))
        conn.execute(delete(_C).where(func.lower(_C.c.db_name) == db, func.lower(_C.c.tbl_name) == tbl,
                                      _C.c.part_name.in_(part_names[i:i + 500])))


def rename_partition_rows(conn: Connection, cat: str, db: str, tbl: str, old_part: str, new_part: str) -> None:
    """Hive's onRename for a renamed partition of a transactional table."""
    if cat != DEFAULT_CATALOG or old_part == new_part:
        return
    db, tbl = db.lower(), tbl.lower()
    for t in (_TC, _WS, _L):
        conn.execute(update(t).where(t.c.db_name == db, t.c.tbl_name == tbl, t.c.part_name == old_part)
                     .values(part_name=new_part))
    conn.execute(update(_C).where(func.lower(_C.c.db_name) == db, func.lower(_C.c.tbl_name) == tbl,
                                  _C.c.part_name == old_part).values(part_name=new_part))


__all__ = ["clean_write_ids", "drop_database_rows", "drop_partition_rows", "drop_table_rows", "is_transactional",
           "low_water_mark", "rename_partition_rows", "rename_table_rows"]
