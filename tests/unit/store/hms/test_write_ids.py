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
    TxnType,
)

TIMEOUT = 1_000


@pytest.fixture
def parts(db_url):  # noqa: F811
    from store.db.database import Store

    store = Store(db_url)
    with store.write() as conn:
        for t in (schema.locks, schema.txns, schema.sequences, schema.txn_write_ids, schema.next_write_ids,
                  schema.txn_write_set, schema.txn_components, schema.compactions):
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


def _view(lm: LockManager, open_txns: OpenTxnList, mine, **kw) -> list:
    r = open_txns.open_txns(**kw)
    bits = int.from_bytes(r.abortedBits, "little")
    listed = list(r.open_txns)
    return [("aborted" if bits >> listed.index(t) & 1 else "open") if t in listed else "-" for t in mine]


def test_commit_aborts_on_write_conflict(parts):
    """Hive 4's commitTxn with exclWriteEnabled false: a transaction that updates or deletes what
    another one updated or deleted and committed after it began is aborted instead."""
    lm, w, _c, _clock = parts
    t1, t2, t3, t4 = lm.open_txns("u", "h", 4)
    _write_lock(lm, t1, DataOperationType.UPDATE, "p=1")
    _write_lock(lm, t2, DataOperationType.DELETE, "p=1")
    _write_lock(lm, t3, DataOperationType.UPDATE, "p=2")
    _write_lock(lm, t4, DataOperationType.UPDATE)  # the table as a whole: not the partition (Hive)
    lm.commit_txn(t1, excl_write_enabled=False)  # nothing committed before it
    with pytest.raises(TxnAborted) as exc:
        lm.commit_txn(t2, excl_write_enabled=False)
    assert exc.value.message == (f"Aborting [txnid:{t2},{t4}] due to a write conflict on db/t/p=1 committed by "
                                 f"[txnid:{t1},{t4}] d/u")
    with pytest.raises(TxnAborted, match="already aborted"):
        lm.commit_txn(t2)
    lm.commit_txn(t3, excl_write_enabled=False)  # another partition
    lm.commit_txn(t4, excl_write_enabled=False)
    assert _view(lm, w.open_txns, [t1, t2, t3, t4]) == ["-", "aborted", "-", "-"]
    with lm.store.read() as conn:  # the aborted one recorded no write set; locks released
        assert sorted(r.txn_id for r in conn.execute(select(schema.txn_write_set))) == [t1, t3, t4]
        assert conn.execute(select(schema.locks)).first() is None
    # exclusive writes (Hive's default, exclWriteEnabled true): no check, as Hive's
    t5, t6 = lm.open_txns("u", "h", 2)
    _write_lock(lm, t5, DataOperationType.UPDATE, "p=1")
    _write_lock(lm, t6, DataOperationType.UPDATE, "p=1")
    lm.commit_txn(t5)
    assert w.latest_txnid_in_conflict(t6) == t5  # what Hive's driver asks instead
    lm.commit_txn(t6)


def test_transaction_types(parts):
    lm, w, _c, _clock = parts
    (ro,) = lm.open_txns("u", "h", 1, TxnType.READ_ONLY)
    d1, d2 = lm.open_txns("u", "h", 2, TxnType.DEFAULT)
    (comp,) = lm.open_txns("u", "h", 1, TxnType.COMPACTION)
    ot = w.open_txns
    # get_open_txns leaves read-only ones out; min_open_txn still counts them (Hive's toOpenTxnsResponse)
    r = ot.open_txns()
    assert list(r.open_txns) == [d1, d2, comp] and r.min_open_txn == ro
    assert list(ot.open_txns([TxnType.COMPACTION]).open_txns) == [ro, d1, d2]
    assert list(ot.open_txns(()).open_txns) == [ro, d1, d2, comp]
    assert [t.id for t in ot.open_txns_info().open_txns] == [ro, d1, d2, comp]
    with pytest.raises(MetaError, match=rf"{{{ro},read-only}}"):
        _alloc(w, "db.t", [ro])
    with pytest.raises(NoSuchTxn):
        _alloc(w, "db.t", [ro, 9999])
    # a read-only or compaction commit records no write set
    for t in (ro, comp, d1):
        _write_lock(lm, t, DataOperationType.UPDATE, "p=1")
        lm.commit_txn(t)
    with lm.store.read() as conn:
        assert [r.txn_id for r in conn.execute(select(schema.txn_write_set))] == [d1]
    # the snapshot get_valid_write_ids takes leaves read-only transactions out too
    (ro2,) = lm.open_txns("u", "h", 1, TxnType.READ_ONLY)
    assert _alloc(w, "db.t", [d2]) == [(d2, 1)]
    assert _valid(w, "db.t") == [("db.t", 1, [1], 1, 0)]
    lm.abort_txn(ro2)
    for bad in (99, TxnType.REPL_CREATED):
        with pytest.raises(MetaError):
            lm.open_txns("u", "h", 1, bad)


def _components(lm: LockManager) -> list[tuple]:
    with lm.store.read() as conn:
        return sorted((r.txn_id, r.tbl_name, r.part_name or "", r.operation, r.write_id or 0)
                      for r in conn.execute(select(schema.txn_components)))


def _dynamic_lock(lm: LockManager, txn: int, op: int) -> None:
    lm.lock(LockRequest(component=[LockComponent(type=LockType.SHARED_WRITE, level=LockLevel.TABLE, dbname="db",
                                                 tablename="t", operationType=op, isTransactional=True,
                                                 isDynamicPartitionWrite=True)], txnid=txn, user="u", hostname="h"))


def test_dynamic_partitions_are_the_write_set(parts):
    """add_dynamic_partitions: a dynamic-partition write's lock names the table alone (no component),
    the partitions it wrote come after; updates and deletes of them conflict as partitions do."""
    lm, w, _c, _clock = parts
    t1, t2, t3 = lm.open_txns("u", "h", 3)
    _alloc(w, "db.t", [t1, t2, t3])
    U, D, INS = DataOperationType.UPDATE, DataOperationType.DELETE, DataOperationType.INSERT
    for t, op in ((t1, U), (t2, D), (t3, U)):
        _dynamic_lock(lm, t, op)
    assert _components(lm) == []  # the partitions are not known yet
    lm.add_dynamic_partitions(t1, 1, "DB", "T", ["p=1", "p=2"], U)
    lm.add_dynamic_partitions(t2, 2, "db", "t", ["p=2"], D)
    lm.add_dynamic_partitions(t3, 3, "db", "t", ["p=3"], None)  # none named: an update (Hive's)
    assert _components(lm) == [(t1, "t", "p=1", U, 1), (t1, "t", "p=2", U, 1), (t2, "t", "p=2", D, 2),
                               (t3, "t", "p=3", U, 3)]
    assert w.latest_txnid_in_conflict(t2) == 0
    lm.commit_txn(t1, excl_write_enabled=False)
    assert w.latest_txnid_in_conflict(t2) == t1 and w.latest_txnid_in_conflict(t3) == 0
    with pytest.raises(TxnAborted, match=rf"write conflict on db/t/p=2 committed by \[txnid:{t1},"):
        lm.commit_txn(t2, excl_write_enabled=False)
    lm.commit_txn(t3, excl_write_enabled=False)
    # a commit's components became its write set; the aborted one keeps its own
    assert _components(lm) == [(t2, "t", "p=2", D, 2)]
    with lm.store.read() as conn:
        assert sorted((r.txn_id, r.part_name) for r in conn.execute(select(schema.txn_write_set))) == [
            (t1, "p=1"), (t1, "p=2"), (t3, "p=3")]
    # the transaction must be open: Hive's exceptions and texts
    with pytest.raises(TxnAborted, match="already aborted"):
        lm.add_dynamic_partitions(t2, 2, "db", "t", ["p=9"], INS)
    with pytest.raises(MetaError, match="already committed"):  # not declared: an internal error, as Hive's
        lm.add_dynamic_partitions(t1, 1, "db", "t", ["p=9"], INS)
    with pytest.raises(NoSuchTxn, match="No such transaction"):
        lm.add_dynamic_partitions(t3 + 100, 1, "db", "t", ["p=9"], INS)
    for bad in ((t3, None, "db", "t", ["p=1"], INS), (t3, 1, "", "t", ["p=1"], INS),
                (t3, 1, "db", None, ["p=1"], INS), (t3, 1, "db", "t", None, INS),
                (t3, 1, "db", "t", ["p=1"], DataOperationType.SELECT), (None, 1, "db", "t", ["p=1"], INS),
                (t3, 1, "db", "t", ["p=" + "x" * 800], INS), (t3, 1, "d" * 200, "t", ["p=1"], INS)):
        with pytest.raises((MetaError, NoSuchTxn)):
            lm.add_dynamic_partitions(*bad)
    assert _components(lm) == [(t2, "t", "p=2", D, 2)]


def test_ended_transactions_leave_the_txns_table(parts):
    """Bounded as Hive's housekeeper keeps TXNS: once they ended more than the timeout ago, committed
    transactions and aborted ones that wrote nothing go; an aborted one that wrote stays (listed
    aborted, its write ids invalid)."""
    lm, w, _c, clock = parts
    t1, t2, t3, t4 = lm.open_txns("u", "h", 4)
    _alloc(w, "db.t", [t1, t2, t3])
    _write_lock(lm, t2, DataOperationType.INSERT, "p=1")  # t2 writes, t3 only got a write id
    lm.commit_txn(t1)
    lm.abort_txns([t2, t3])
    lm.commit_txn(t4)

    def rows():
        with lm.store.read() as conn:
            return sorted((r.txn_id, r.state) for r in conn.execute(select(schema.txns)))

    assert rows() == [(t1, "c"), (t2, "a"), (t3, "a"), (t4, "c")]  # within the timeout: all kept
    clock.advance(TIMEOUT + 1)
    (t5,) = lm.open_txns("u", "h", 1)
    lm.commit_txn(t5)
    assert rows() == [(t2, "a"), (t5, "c")]  # t5 ended just now; t3 wrote nothing
    assert _view(lm, w.open_txns, [t1, t2, t3, t4]) == ["-", "aborted", "-", "-"]
    assert _valid(w, "db.t") == [("db.t", 3, [2], None, 0b1)]  # t3's write id is valid: it wrote nothing
    with pytest.raises(NoSuchTxn, match="No such transaction"):
        lm.commit_txn(t1)
    # many transactions: the table keeps only what the rules keep
    for _ in range(20):
        ids = lm.open_txns("u", "h", 5)
        for t in ids[:3]:
            lm.commit_txn(t)
        lm.abort_txns(ids[3:])
        clock.advance(TIMEOUT + 1)
    assert rows()[:1] == [(t2, "a")] and len(rows()) == 1 + 5  # t2, and those of the last round
    with lm.store.read() as conn:  # write ids from t2 (which holds the mark) up are kept
        assert {r.txn_id for r in conn.execute(select(schema.txn_write_ids))} == {t2, t3}


def _write_id_txns(lm: LockManager) -> list[int]:
    with lm.store.read() as conn:
        return sorted({r.txn_id for r in conn.execute(select(schema.txn_write_ids))})


def test_write_ids_cleaned_below_the_low_water_mark(parts):
    lm, w, _c, _clock = parts
    t1, t2 = lm.open_txns("u", "h", 2)
    _alloc(w, "db.t", [t1, t2])
    lm.commit_txn(t1)
    (t3,) = lm.open_txns("u", "h", 1)  # saw t2 open
    assert _write_id_txns(lm) == [t1, t2]  # t2's snapshot may list t1 as open
    _alloc(w, "db.t", [t3])
    lm.commit_txn(t2)
    assert _write_id_txns(lm) == [t2, t3]  # t3 saw t2 open
    assert _valid(w, "db.t") == [("db.t", 3, [3], 3, 0)]
    lm.commit_txn(t3)
    assert _write_id_txns(lm) == []  # every snapshot sees them committed
    assert _valid(w, "db.t") == [("db.t", 3, [], None, 0)]  # the same answer without them
    # an aborted transaction's write ids stay invalid: it holds the cleanup at it
    t4, t5 = lm.open_txns("u", "h", 2)
    _alloc(w, "db.t", [t4, t5])
    lm.abort_txn(t4)
    lm.commit_txn(t5)
    assert _write_id_txns(lm) == [t4, t5]
    assert _valid(w, "db.t") == [("db.t", 5, [4], None, 0b1)]
    # one without write ids does not
    (t6,) = lm.open_txns("u", "h", 1)
    lm.abort_txns([t6])
    assert _write_id_txns(lm) == [t4, t5]


def _acid_table(name: str, db: str = "d", transactional: bool = True, keys: tuple[str, ...] = ()):
    from thrift_idl.hive_metastore.ttypes import FieldSchema, SerDeInfo, StorageDescriptor, Table

    sd = StorageDescriptor(cols=[FieldSchema("x", "int", None)], inputFormat="in", outputFormat="out",
                           serdeInfo=SerDeInfo(serializationLib="lib", parameters={}), parameters={})
    params = {"transactional": "true", "transactional_properties": "insert_only"} if transactional else {}
    return Table(tableName=name, dbName=db, sd=sd, tableType="MANAGED_TABLE", parameters=params,
                 partitionKeys=[FieldSchema(k, "string", None) for k in keys])


@pytest.mark.backends("sqlite")
def test_write_ids_follow_their_table(own_backend_url, tmp_path):
    """Hive's AcidEventListener: a dropped transactional table's write ids and compaction requests go
    (kept with deleteData false), a renamed one's move with it, a dropped database's all go."""
    from adapter.serve import prepare_store
    from store.services import open_services
    from thrift_idl.hive_metastore.ttypes import Database, Partition

    prepare_store(own_backend_url)
    s = open_services(own_backend_url, str(tmp_path / "wh"))
    try:
        for db in ("d", "e"):
            s.tables.create_database(Database(name=db, locationUri=str(tmp_path / "wh" / f"{db}.db"), parameters={}))
        for name in ("a", "b", "keep", "plain"):
            s.tables.create_table(_acid_table(name, transactional=name != "plain"))
        s.tables.create_table(_acid_table("c", db="e"))
        (t1,) = s.locks.open_txns("u", "h", 1)
        for table in ("d.a", "d.b", "d.keep", "d.plain", "e.c"):
            _alloc(s.write_ids, table, [t1])
            db, tbl = table.split(".")
            s.compactions.compact(CompactionRequest(dbname=db, tablename=tbl, type=CompactionType.MAJOR))
        _write_lock_on(s.locks, t1, "d", "b")
        s.tables.drop_table("d", "a", delete_data=True)
        s.tables.drop_table("d", "keep", delete_data=False)
        s.tables.drop_table("d", "plain", delete_data=True)  # not transactional: nothing follows (Hive)
        renamed = s.tables.get_table("d", "b")
        renamed.tableName, renamed.dbName = "b2", "e"
        s.tables.alter_table("d", "b", renamed)
        assert s.write_ids.max_allocated("d", "a").maxWriteId == 0
        assert s.write_ids.max_allocated("d", "keep").maxWriteId == 1
        assert s.write_ids.max_allocated("d", "b").maxWriteId == 0
        assert _valid(s.write_ids, "e.b2") == [("e.b2", 1, [1], 1, 0)]
        assert sorted((r.dbname, r.tablename) for r in s.compactions.show(ShowCompactRequest()).compacts) == [
            ("d", "plain"), ("e", "b2"), ("e", "c")]
        assert [(lk.dbname, lk.tablename) for lk in s.locks.show_locks().locks] == [("e", "b2")]
        s.locks.commit_txn(t1)
        with s.store.read() as conn:
            assert [(r.db_name, r.tbl_name) for r in conn.execute(select(schema.txn_write_set))] == [("e", "b2")]
        s.tables.drop_database("e", delete_data=True, cascade=True)
        assert [s.write_ids.max_allocated("e", t).maxWriteId for t in ("b2", "c")] == [0, 0]
        assert [(r.dbname, r.tablename) for r in s.compactions.show(ShowCompactRequest()).compacts] == [("d", "plain")]
        # partitions: a renamed one's locks and compaction requests follow it, a dropped one's requests go
        s.tables.create_table(_acid_table("pt", keys=("p",)))
        s.partitions.add_partitions("d", "pt", [Partition(values=[v], dbName="d", tableName="pt", parameters={})
                                                for v in ("1", "2")])
        for part in ("p=1", "p=2"):
            s.compactions.compact(CompactionRequest(dbname="d", tablename="pt", partitionname=part,
                                                    type=CompactionType.MINOR))
        (t2,) = s.locks.open_txns("u", "h", 1)
        s.locks.lock(LockRequest(component=[LockComponent(
            type=LockType.SHARED_WRITE, level=LockLevel.PARTITION, dbname="d", tablename="pt", partitionname="p=1",
            operationType=DataOperationType.UPDATE, isTransactional=True)], txnid=t2, user="u", hostname="h"))
        s.partitions.rename_partition("d", "pt", ["1"], Partition(values=["9"], dbName="d", tableName="pt",
                                                                   parameters={}))
        s.partitions.drop_partitions("d", "pt", values_list=[["2"]])
        assert [lk.partname for lk in s.locks.show_locks().locks] == ["p=9"]
        assert [r.partitionname for r in s.compactions.show(ShowCompactRequest(tbName="pt")).compacts] == ["p=9"]
        s.locks.abort_txn(t2)
    finally:
        s.close()


def _write_lock_on(lm: LockManager, txn: int, db: str, tbl: str) -> None:
    lm.lock(LockRequest(component=[LockComponent(type=LockType.SHARED_WRITE, level=LockLevel.TABLE, dbname=db,
                                                 tablename=tbl, operationType=DataOperationType.UPDATE,
                                                 isTransactional=True)], txnid=txn, user="u", hostname="h"))
