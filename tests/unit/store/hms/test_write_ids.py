"""Write ids, the write set and compaction requests (store/hms/txn/write_ids.py) on SQLite, PostgreSQL
and MariaDB (the backends of test_locks.py): sequences of Hive 4 client calls and their errors."""

from __future__ import annotations

import pytest
from sqlalchemy import delete, select

from store.db import schema
from store.errors import MetaError, NoSuchTxn, TxnAborted
from store.hms.txn import MAX_OPEN_BATCH, Compactions, LockManager, OpenTxnList, WriteIds, parse_valid_txn_list
from tests.unit.store.hms.test_locks import FakeClock, db_url, mysql_url, postgres_url  # noqa: F401 (fixtures)
from thrift_idl.hive_metastore.ttypes import (
    AllocateTableWriteIdsRequest,
    CompactionRequest,
    CompactionType,
    DataOperationType,
    GetValidWriteIdsRequest,
    LockComponent,
    LockLevel,
    LockRequest,
    LockType,
    ShowCompactRequest,
)

TIMEOUT = 1_000


@pytest.fixture
def parts(db_url):  # noqa: F811
    from store.db.database import Store

    store = Store(db_url)
    with store.write() as conn:
        for t in (schema.locks, schema.txns, schema.sequences, schema.txn_write_ids, schema.next_write_ids,
                  schema.txn_write_set, schema.compactions):
            conn.execute(delete(t))
    clock = FakeClock()
    lm = LockManager(store, timeout_ms=TIMEOUT, clock_ms=clock)
    open_txns = OpenTxnList(store, TIMEOUT, clock_ms=clock)
    yield lm, WriteIds(lm, open_txns), Compactions(lm), clock
    store.dispose()


def _alloc(w: WriteIds, table: str, txns, **kw) -> list[tuple[int, int]]:
    db, tbl = table.split(".")
    r = w.allocate(AllocateTableWriteIdsRequest(dbName=db, tableName=tbl, txnIds=list(txns), **kw))
    return [(p.txnId, p.writeId) for p in r.txnToWriteIds]


def _valid(w: WriteIds, *tables: str, txn_list: str | None = None, write_id: int | None = None):
    r = w.valid_write_ids(GetValidWriteIdsRequest(fullTableNames=list(tables), validTxnList=txn_list,
                                                  writeId=write_id))
    return [(t.fullTableName, t.writeIdHighWaterMark, list(t.invalidWriteIds), t.minOpenWriteId,
             int.from_bytes(t.abortedBits, "little")) for t in r.tblValidWriteIds]


def test_write_ids_per_table_and_their_validity(parts):
    lm, w, _c, _clock = parts
    t1, t2, t3, t4 = lm.open_txns("u", "h", 4)
    assert _alloc(w, "db.t", [t1]) == [(t1, 1)]
    assert _alloc(w, "DB.T", [t1]) == [(t1, 1)]  # asked again: the same write id
    assert _alloc(w, "db.t", [t3, t2]) == [(t2, 2), (t3, 3)]
    assert _alloc(w, "db.other", [t2]) == [(t2, 1)]  # per table, from 1
    assert _alloc(w, "db.t", [t1, t2]) == [(t1, 1), (t2, 2)]
    # no valid write yet: as Hive, the lowest invalid write id is the high water mark
    assert _valid(w, "db.t", "db.nosuch") == [("db.t", 1, [1], 1, 0), ("db.nosuch", 0, [], None, 0)]
    lm.commit_txn(t1)
    lm.abort_txn(t2)
    # t1 valid, t2 aborted, t3 open
    assert _valid(w, "db.t") == [("db.t", 3, [2, 3], 3, 0b01)]
    lm.commit_txn(t3)
    assert _valid(w, "db.t") == [("db.t", 3, [2], None, 0b1)]
    # a valid transaction list given by the client decides: t4 is the high water mark, t3 still open
    assert _valid(w, "db.t", txn_list=f"{t4}:{t3}:{t3}:{t2}") == [("db.t", 3, [2, 3], 3, 0b01)]
    # a snapshot below t3: write id 3 is above it and not counted in the high water mark
    assert _valid(w, "db.t", txn_list=f"{t2}:{t2}::{t2}") == [("db.t", 2, [2], None, 0b1)]
    assert w.max_allocated("db", "t").maxWriteId == 3 and w.max_allocated("db", "nosuch").maxWriteId == 0
    # writeId: relative to the transaction that allocated it (its own write valid, later ones not)
    assert _alloc(w, "db.t", [t4]) == [(t4, 4)]
    assert _valid(w, "db.t", write_id=3) == [("db.t", 3, [2], None, 0b1)]
    with pytest.raises(MetaError, match="invalid write id 99 for table db.t"):
        _valid(w, "db.t", write_id=99)


def test_only_lowest_invalid_without_valid_writes(parts):
    """Hive: no valid write at all below the high water mark: the lowest invalid one becomes it."""
    lm, w, _c, _clock = parts
    t1, t2 = lm.open_txns("u", "h", 2)
    _alloc(w, "db.t", [t1, t2])
    lm.abort_txn(t1)
    assert _valid(w, "db.t") == [("db.t", 1, [1], 2, 0b1)]
    lm.abort_txn(t2)
    assert _valid(w, "db.t") == [("db.t", 1, [1], None, 0b1)]


def test_allocation_errors_and_limits(parts):
    lm, w, _c, clock = parts
    t1, t2, t3 = lm.open_txns("u", "h", 3)
    lm.abort_txn(t1)
    lm.commit_txn(t2)
    with pytest.raises(TxnAborted, match="Write ID allocation failed on db.t"):
        _alloc(w, "db.t", [t1, t3])
    with pytest.raises(NoSuchTxn, match="Write ID allocation failed on db.t"):
        _alloc(w, "db.t", [t2])
    with pytest.raises(NoSuchTxn):
        _alloc(w, "db.t", [t3 + 100])
    assert _valid(w, "db.t") == [("db.t", 0, [], None, 0)]  # nothing half-written
    with pytest.raises(MetaError, match="at most"):
        _alloc(w, "db.t", range(1, MAX_OPEN_BATCH + 2))
    with pytest.raises(MetaError):
        w.allocate(AllocateTableWriteIdsRequest(dbName="db", tableName=None, txnIds=[t3]))
    with pytest.raises(MetaError, match="replication"):
        _alloc(w, "db.t", [t3], replPolicy="p")
    with pytest.raises(MetaError, match="at least one transaction"):
        _alloc(w, "db.t", [])
    with pytest.raises(MetaError, match="Invalid table name"):
        _valid(w, "nodot")
    with pytest.raises(MetaError, match="Invalid validTxnList"):
        _valid(w, "db.t", txn_list="x:y")
    clock.advance(TIMEOUT + 1)  # t3 timed out: aborted
    with pytest.raises(TxnAborted):
        _alloc(w, "db.t", [t3])


def test_reallocate_and_ranges(parts):
    lm, w, _c, _clock = parts
    t1, t2 = lm.open_txns("u", "h", 2)
    assert _alloc(w, "db.t", [t1]) == [(t1, 1)]
    assert _alloc(w, "db.t", [t1], reallocate=True) == [(t1, 2)]
    assert parse_valid_txn_list("10:3:3-5,7:8").exceptions == (3, 4, 5, 7, 8)
    assert parse_valid_txn_list("10:3:3-5,7:8").aborted == frozenset({8})


def _write_lock(lm: LockManager, txn: int, op: int, part: str | None = None) -> None:
    level = LockLevel.PARTITION if part else LockLevel.TABLE
    lm.lock(LockRequest(component=[LockComponent(type=LockType.SHARED_WRITE, level=level, dbname="db", tablename="t",
                                                 partitionname=part, operationType=op, isTransactional=True)],
                        txnid=txn, user="u", hostname="h"))


def test_latest_txnid_in_conflict(parts):
    lm, w, _c, _clock = parts
    t1, t2, t3 = lm.open_txns("u", "h", 3)
    _write_lock(lm, t1, DataOperationType.UPDATE, "p=1")
    _write_lock(lm, t2, DataOperationType.DELETE, "p=1")
    _write_lock(lm, t3, DataOperationType.INSERT, "p=1")
    assert w.latest_txnid_in_conflict(t2) == 0
    lm.commit_txn(t1)
    assert w.latest_txnid_in_conflict(t2) == t1  # t1 committed after t2 began, on the same partition
    assert w.latest_txnid_in_conflict(t3) == 0  # inserts do not conflict
    (t4,) = lm.open_txns("u", "h", 1)
    _write_lock(lm, t4, DataOperationType.UPDATE, "p=1")
    assert w.latest_txnid_in_conflict(t4) == 0  # began after t1 committed
    _write_lock(lm, t4, DataOperationType.UPDATE)  # the whole table
    lm.commit_txn(t2)
    assert w.latest_txnid_in_conflict(t4) == t2
    assert w.latest_txnid_in_conflict(12345) == 0
    lm.abort_txns([t3, t4])
    (t5,) = lm.open_txns("u", "h", 1)
    _write_lock(lm, t5, DataOperationType.UPDATE, "p=2")
    lm.commit_txn(t5)  # no transaction is open older than the rows of t1 and t2: they go
    with lm.store.read() as conn:
        assert [r.txn_id for r in conn.execute(select(schema.txn_write_set))] == [t5]


def test_compaction_requests(parts):
    _lm, _w, c, _clock = parts
    r1 = c.compact(CompactionRequest(dbname="db", tablename="t", type=CompactionType.MAJOR, runas="u",
                                     properties={"k": "v"}))
    assert (r1.state, r1.accepted, r1.errormessage) == ("initiated", True, None) and r1.id >= 1
    r2 = c.compact(CompactionRequest(dbname="db", tablename="t", partitionname="p=1", type=CompactionType.MINOR))
    assert r2.accepted and r2.id == r1.id + 1
    again = c.compact(CompactionRequest(dbname="db", tablename="t", type=CompactionType.MINOR))
    assert (again.id, again.state, again.accepted) == (-1, "refused", False)
    assert again.errormessage == f"Compaction is already scheduled with state='initiated' and id={r1.id}"
    shown = c.show(ShowCompactRequest()).compacts
    assert [(e.dbname, e.tablename, e.partitionname, e.type, e.state, e.id, e.runAs, e.poolName) for e in shown] == [
        ("db", "t", None, CompactionType.MAJOR, "initiated", r1.id, "u", "default"),
        ("db", "t", "p=1", CompactionType.MINOR, "initiated", r2.id, None, "default")]
    assert [e.id for e in c.show(ShowCompactRequest(partName="p=1")).compacts] == [r2.id]
    assert [e.id for e in c.show(ShowCompactRequest(id=r1.id)).compacts] == [r1.id]
    assert len(c.show(ShowCompactRequest(limit=1)).compacts) == 1
    assert c.show(ShowCompactRequest(dbName="other")).compacts == []
    with pytest.raises(MetaError):
        c.compact(CompactionRequest(dbname="db", tablename="t"))  # no type
    with pytest.raises(MetaError):
        c.compact(CompactionRequest(dbname="db", type=CompactionType.MAJOR))
