"""LockManager (store/hms/txn/locks.py): Hive lock semantics on SQLite, PostgreSQL and MariaDB.

PostgreSQL / MariaDB run when HMS_TEST_POSTGRES_URL / HMS_TEST_MYSQL_URL name a server (e.g.
postgresql+psycopg://postgres@127.0.0.1:5432/test, mysql+pymysql://root@127.0.0.1:3306/test): each
session creates a fresh database there and drops it afterwards. Unset, they are skipped, unless
CI=true, where a missing server is a failure.
"""

from __future__ import annotations

import os
import threading
import time
import uuid

import pytest
from sqlalchemy import create_engine, delete, text
from sqlalchemy.engine import make_url

from store.db import schema
from store.db.database import Store
from store.db.engine import normalize_url
from store.errors import MetaError, NoSuchLock, NoSuchTxn, TxnAborted, TxnOpen
from store.hms.txn import LockManager, compatible
from thrift_idl.hive_metastore.ttypes import (
    CheckLockRequest,
    HeartbeatRequest,
    LockComponent,
    LockLevel,
    LockRequest,
    LockResponse,
    LockState,
    LockType,
    ShowLocksRequest,
    UnlockRequest,
)

SR, SW, EX, EW = LockType.SHARED_READ, LockType.SHARED_WRITE, LockType.EXCLUSIVE, LockType.EXCL_WRITE
ACQ, WAIT = LockState.ACQUIRED, LockState.WAITING
TIMEOUT = 1_000


# ---- backends -----------------------------------------------------------------------------


def _server_database(env: str):
    url = os.environ.get(env)
    if not url:
        if os.environ.get("CI") == "true":
            pytest.fail(f"{env} is not set; CI must test this backend")
        pytest.skip(f"{env} is not set")
    url = normalize_url(url)
    name = f"hms_locks_{uuid.uuid4().hex[:12]}"
    admin = create_engine(url, isolation_level="AUTOCOMMIT")
    with admin.connect() as conn:
        conn.execute(text(f"CREATE DATABASE {name}"))
    test_url = make_url(url).set(database=name).render_as_string(hide_password=False)
    engine = create_engine(test_url)
    schema.metadata.create_all(engine)
    engine.dispose()
    try:
        yield test_url
    finally:
        with admin.connect() as conn:
            force = " WITH (FORCE)" if admin.dialect.name == "postgresql" else ""
            conn.execute(text(f"DROP DATABASE IF EXISTS {name}{force}"))
        admin.dispose()


@pytest.fixture(scope="session")
def postgres_url():
    yield from _server_database("HMS_TEST_POSTGRES_URL")


@pytest.fixture(scope="session")
def mysql_url():
    yield from _server_database("HMS_TEST_MYSQL_URL")


@pytest.fixture(params=["sqlite", "postgres", "mysql"])
def db_url(request, tmp_path):
    if request.param == "sqlite":
        url = f"sqlite:///{tmp_path / 'locks.db'}"
        store = Store(url)
        schema.metadata.create_all(store.engine)
        store.dispose()
        return url
    return request.getfixturevalue(f"{request.param}_url")


@pytest.fixture
def stores(db_url):
    """Stores opened on db_url, each with its own engine (one per 'server process'); all lock
    tables start empty."""
    opened: list[Store] = []

    def open_store() -> Store:
        s = Store(db_url)
        opened.append(s)
        return s

    first = open_store()
    with first.write() as conn:
        for t in (schema.locks, schema.txns, schema.sequences, schema.txn_components):
            conn.execute(delete(t))
    yield open_store
    for s in opened:
        s.dispose()


class FakeClock:
    def __init__(self, start: int = 1_000_000):
        self.t = start

    def __call__(self) -> int:
        return self.t

    def advance(self, ms: int) -> None:
        self.t += ms


@pytest.fixture
def clock():
    return FakeClock()


@pytest.fixture
def lm(stores, clock):
    return LockManager(stores(), timeout_ms=TIMEOUT, clock_ms=clock)


# ---- helpers ------------------------------------------------------------------------------


def comp(type_, db, tbl=None, part=None):
    level = LockLevel.PARTITION if part else LockLevel.TABLE if tbl else LockLevel.DB
    return LockComponent(type=type_, level=level, dbname=db, tablename=tbl, partitionname=part)


def req(*comps, txnid=None):
    return LockRequest(component=list(comps), txnid=txnid, user="tester", hostname="localhost")


def lock(lm, *comps, txnid=None) -> LockResponse:
    return lm.lock(req(*comps, txnid=txnid))


def check(lm, lockid) -> int:
    return lm.check_lock(CheckLockRequest(lockid=lockid)).state


def unlock(lm, lockid) -> None:
    lm.unlock(UnlockRequest(lockid=lockid))


def states(lm, **filters):
    return [(e.lockid, e.lockIdInternal, e.state) for e in lm.show_locks(ShowLocksRequest(**filters)).locks]


# ---- basic compatibility ------------------------------------------------------------------


def test_shared_locks_share(lm):
    a = lock(lm, comp(SR, "db", "t"))
    b = lock(lm, comp(SR, "db", "t"))
    c = lock(lm, comp(SW, "db", "t"))
    d = lock(lm, comp(SW, "db", "t"))
    assert [r.state for r in (a, b, c, d)] == [ACQ] * 4
    assert len({a.lockid, b.lockid, c.lockid, d.lockid}) == 4


@pytest.mark.parametrize("held", [SR, SW, EW, EX])
@pytest.mark.parametrize("wanted", [SR, SW, EW, EX])
def test_compatibility_matrix(lm, held, wanted):
    expected = {
        (SR, SR): True, (SR, SW): True, (SR, EW): True, (SR, EX): False,
        (SW, SR): True, (SW, SW): True, (SW, EW): False, (SW, EX): False,
        (EW, SR): True, (EW, SW): False, (EW, EW): False, (EW, EX): False,
        (EX, SR): False, (EX, SW): False, (EX, EW): False, (EX, EX): False,
    }[(held, wanted)]
    assert compatible(held, wanted) == expected
    assert lock(lm, comp(held, "db", "t")).state == ACQ
    assert lock(lm, comp(wanted, "db", "t")).state == (ACQ if expected else WAIT)


def test_exclusive_waits_for_shared_then_acquires(lm):
    shared = lock(lm, comp(SR, "db", "t"))
    excl = lock(lm, comp(EX, "db", "t"))
    assert (shared.state, excl.state) == (ACQ, WAIT)
    assert check(lm, excl.lockid) == WAIT
    unlock(lm, shared.lockid)
    assert check(lm, excl.lockid) == ACQ
    assert check(lm, excl.lockid) == ACQ  # stays acquired
    assert lock(lm, comp(SR, "db", "t")).state == WAIT


def test_names_are_case_insensitive(lm):
    assert lock(lm, comp(EX, "DB", "Tbl", "DS=1")).state == ACQ
    assert lock(lm, comp(SR, "db", "tbl", "ds=1")).state == WAIT
    assert lock(lm, comp(SR, "db", "tbl", "ds=2")).state == ACQ
    [first] = lm.show_locks(ShowLocksRequest(dbname="Db", tablename="TBL", partname="Ds=1")).locks[:1]
    assert (first.dbname, first.tablename, first.partname) == ("db", "tbl", "ds=1")


# ---- hierarchy ----------------------------------------------------------------------------


def test_db_exclusive_blocks_table_and_partition_locks(lm):
    assert lock(lm, comp(EX, "db")).state == ACQ
    assert lock(lm, comp(SR, "db", "t")).state == WAIT
    assert lock(lm, comp(SR, "db", "t", "p=1")).state == WAIT
    assert lock(lm, comp(SR, "other", "t")).state == ACQ


def test_table_exclusive_blocks_partitions_and_db(lm):
    assert lock(lm, comp(EX, "db", "t")).state == ACQ
    assert lock(lm, comp(SR, "db", "t", "p=1")).state == WAIT
    assert lock(lm, comp(EX, "db", "t2")).state == ACQ
    assert lock(lm, comp(SR, "db")).state == WAIT
    # a later exclusive lock on another table queues behind the waiting db-level reader
    assert lock(lm, comp(EX, "db", "t3")).state == WAIT


def test_partition_locks(lm):
    assert lock(lm, comp(EX, "db", "t", "p=1")).state == ACQ
    assert lock(lm, comp(EX, "db", "t", "p=2")).state == ACQ
    assert lock(lm, comp(SR, "db", "t", "p=1")).state == WAIT
    assert lock(lm, comp(SR, "db", "t")).state == WAIT
    assert lock(lm, comp(EX, "db", "u", "p=1")).state == ACQ


# ---- all-or-nothing, fairness -------------------------------------------------------------


def test_multi_component_request_is_all_or_nothing(lm):
    holder = lock(lm, comp(EX, "db", "t2"))
    multi = lock(lm, comp(SR, "db", "t1"), comp(SR, "db", "t2"), comp(SW, "db", "t3", "p=1"))
    assert multi.state == WAIT
    assert states(lm, dbname="db", tablename="t1") == [(multi.lockid, 1, WAIT)]
    # none of its components was taken: an exclusive lock on t3 from someone else... queues behind
    # the (waiting) request since it asked first, but a compatible reader of t1 is not blocked.
    assert lock(lm, comp(SR, "db", "t1")).state == ACQ
    unlock(lm, holder.lockid)
    assert check(lm, multi.lockid) == ACQ
    assert [s for (lid, _, s) in states(lm) if lid == multi.lockid] == [ACQ, ACQ, ACQ]


def test_multi_component_request_acquires_all_at_once(lm):
    a = lock(lm, comp(EX, "db", "a"), comp(EX, "db", "b"))
    assert a.state == ACQ
    assert lock(lm, comp(SR, "db", "a")).state == WAIT
    assert lock(lm, comp(SR, "db", "b")).state == WAIT
    assert states(lm, dbname="db", tablename="b")[0] == (a.lockid, 2, ACQ)


def test_waiting_exclusive_is_not_overtaken(lm):
    reader = lock(lm, comp(SR, "db", "t"))
    writer = lock(lm, comp(EX, "db", "t"))
    late_reader = lock(lm, comp(SR, "db", "t"))
    assert (reader.state, writer.state, late_reader.state) == (ACQ, WAIT, WAIT)
    # a request that does not conflict with the queue is not held up
    assert lock(lm, comp(SR, "db", "other")).state == ACQ
    unlock(lm, reader.lockid)
    assert check(lm, late_reader.lockid) == WAIT  # the writer is ahead of it
    assert check(lm, writer.lockid) == ACQ
    assert check(lm, late_reader.lockid) == WAIT
    unlock(lm, writer.lockid)
    assert check(lm, late_reader.lockid) == ACQ


def test_waiting_request_does_not_block_earlier_ones(lm):
    first = lock(lm, comp(EX, "db", "t"))
    second = lock(lm, comp(EX, "db", "t"))
    third = lock(lm, comp(EX, "db", "t"))
    assert (first.state, second.state, third.state) == (ACQ, WAIT, WAIT)
    unlock(lm, first.lockid)
    assert check(lm, third.lockid) == WAIT
    assert check(lm, second.lockid) == ACQ
    unlock(lm, second.lockid)
    assert check(lm, third.lockid) == ACQ


# ---- expiry and heartbeats ----------------------------------------------------------------


def test_expired_holder_lets_waiter_in(lm, clock):
    holder = lock(lm, comp(EX, "db", "t"))
    waiter = lock(lm, comp(EX, "db", "t"))
    assert waiter.state == WAIT
    clock.advance(600)
    lm.heartbeat(HeartbeatRequest(lockid=holder.lockid))
    assert check(lm, waiter.lockid) == WAIT
    clock.advance(600)  # holder last heartbeat 600 ms ago: alive
    assert check(lm, waiter.lockid) == WAIT
    clock.advance(600)  # now 1200 ms: expired; the waiter's checks kept it alive
    assert check(lm, waiter.lockid) == ACQ
    for op in (
        lambda: lm.heartbeat(HeartbeatRequest(lockid=holder.lockid)),
        lambda: check(lm, holder.lockid),
    ):
        with pytest.raises(NoSuchLock, match=f"No such lock lockid:{holder.lockid}"):
            op()
    unlock(lm, holder.lockid)  # nothing to release: as Hive's, unlock is idempotent
    assert [lid for (lid, _, _) in states(lm)] == [waiter.lockid]


def test_heartbeat_keeps_locks_alive(lm, clock):
    holder = lock(lm, comp(EX, "db", "t"))
    for _ in range(5):
        clock.advance(TIMEOUT - 100)
        lm.heartbeat(HeartbeatRequest(lockid=holder.lockid))
    assert check(lm, holder.lockid) == ACQ
    assert lock(lm, comp(SR, "db", "t")).state == WAIT
    [e] = lm.show_locks(ShowLocksRequest(dbname="db", tablename="t")).locks[:1]
    assert e.lastheartbeat == clock()
    assert e.acquiredat == clock() - 5 * (TIMEOUT - 100)


def test_expired_txn_is_aborted_and_its_locks_released(lm, clock):
    [txn] = lm.open_txns("tester", "localhost", 1)
    held = lock(lm, comp(EX, "db", "t"), txnid=txn)
    assert held.state == ACQ
    clock.advance(TIMEOUT - 1)
    lm.heartbeat(HeartbeatRequest(txnid=txn))
    clock.advance(TIMEOUT - 1)
    lm.heartbeat_txn(txn)
    other = lock(lm, comp(EX, "db", "t"))
    assert other.state == WAIT
    clock.advance(TIMEOUT - 1)
    assert check(lm, other.lockid) == WAIT
    clock.advance(2)  # the txn's last heartbeat is now TIMEOUT + 1 ms old
    assert check(lm, other.lockid) == ACQ
    with pytest.raises(TxnAborted):
        lm.heartbeat_txn(txn)
    with pytest.raises(TxnAborted):
        lm.commit_txn(txn)


# ---- errors -------------------------------------------------------------------------------


def test_unknown_lock_and_txn(lm):
    with pytest.raises(NoSuchLock, match="No such lock lockid:4242"):
        check(lm, 4242)
    unlock(lm, 4242)  # as Hive 4's TxnHandler.unlock: nothing to release, no error
    with pytest.raises(NoSuchLock, match="No such lock lockid:4242"):
        lm.heartbeat(HeartbeatRequest(lockid=4242))
    with pytest.raises(NoSuchTxn, match="txnid:77"):
        lm.heartbeat(HeartbeatRequest(txnid=77))
    with pytest.raises(NoSuchTxn):
        lm.heartbeat_txn(77)
    with pytest.raises(NoSuchTxn):
        lm.commit_txn(77)
    with pytest.raises(NoSuchTxn):
        lm.abort_txn(77)
    with pytest.raises(NoSuchTxn):
        lock(lm, comp(SR, "db", "t"), txnid=77)
    assert states(lm) == []


def test_unlocked_lock_is_gone(lm):
    a = lock(lm, comp(SR, "db", "t"))
    unlock(lm, a.lockid)
    unlock(lm, a.lockid)  # again: idempotent, as Hive's
    with pytest.raises(NoSuchLock):
        check(lm, a.lockid)


@pytest.mark.parametrize(
    "bad",
    [
        req(),
        req(LockComponent(type=SR, level=LockLevel.TABLE, dbname="db")),
        req(LockComponent(type=SR, level=LockLevel.PARTITION, dbname="db", tablename="t")),
        req(LockComponent(type=99, level=LockLevel.DB, dbname="db")),
    ],
)
def test_invalid_requests(lm, bad):
    with pytest.raises(MetaError):
        lm.lock(bad)


# ---- transactions -------------------------------------------------------------------------


def test_txn_abort_releases_locks(lm):
    txns = lm.open_txns("tester", "localhost", 3)
    assert len(set(txns)) == 3 and txns == sorted(txns)
    txn = txns[0]
    held = lock(lm, comp(EX, "db", "t"), comp(SW, "db", "u"), txnid=txn)
    assert held.state == ACQ
    with pytest.raises(TxnOpen, match="Unlocking locks associated with transaction not permitted"):
        unlock(lm, held.lockid)
    waiter = lock(lm, comp(EX, "db", "t"))
    assert check(lm, waiter.lockid) == WAIT
    shown = lm.show_locks(ShowLocksRequest(txnid=txn)).locks
    assert {(e.tablename, e.txnid) for e in shown} == {("t", txn), ("u", txn)}
    lm.abort_txn(txn)
    lm.abort_txn(txn)  # idempotent, as in Hive
    assert check(lm, waiter.lockid) == ACQ
    with pytest.raises(NoSuchLock):
        check(lm, held.lockid)
    with pytest.raises(TxnAborted, match="already aborted"):
        lm.heartbeat_txn(txn)
    with pytest.raises(TxnAborted):
        lock(lm, comp(SR, "db", "x"), txnid=txn)
    with pytest.raises(TxnAborted):
        lm.commit_txn(txn)


def test_txn_commit_releases_locks(lm):
    [txn] = lm.open_txns("tester", "localhost", 1)
    held = lock(lm, comp(EX, "db", "t"), txnid=txn)
    waiter = lock(lm, comp(SR, "db", "t"))
    assert (held.state, waiter.state) == (ACQ, WAIT)
    lm.commit_txn(txn)
    lm.commit_txn(txn)  # idempotent, as in Hive
    assert check(lm, waiter.lockid) == ACQ
    with pytest.raises(NoSuchTxn, match="already committed"):
        lm.abort_txn(txn)
    with pytest.raises(NoSuchTxn, match="already committed"):
        lm.heartbeat_txn(txn)


def test_locks_of_one_txn_do_not_conflict(lm):
    [txn] = lm.open_txns("tester", "localhost", 1)
    assert lock(lm, comp(SR, "db", "t"), txnid=txn).state == ACQ
    assert lock(lm, comp(EX, "db", "t"), txnid=txn).state == ACQ
    assert lock(lm, comp(SR, "db", "t")).state == WAIT


# ---- show_locks ---------------------------------------------------------------------------


def test_show_locks(lm, clock):
    a = lock(lm, comp(EX, "db", "t", "p=1"), comp(SR, "db", "u"))
    clock.advance(5)
    b = lock(lm, comp(SR, "db", "t"))
    c = lock(lm, comp(SR, "other", "x"))
    everything = lm.show_locks(ShowLocksRequest()).locks
    assert [(e.lockid, e.lockIdInternal) for e in everything] == [
        (a.lockid, 1), (a.lockid, 2), (b.lockid, 1), (c.lockid, 1)]
    first, _, waiting, _ = everything
    assert (first.dbname, first.tablename, first.partname, first.type, first.state) == (
        "db", "t", "p=1", EX, ACQ)
    assert (first.user, first.hostname, first.acquiredat, first.lastheartbeat) == (
        "tester", "localhost", clock() - 5, clock() - 5)
    assert (waiting.state, waiting.acquiredat) == (WAIT, None)
    assert (waiting.blockedByExtId, waiting.blockedByIntId) == (a.lockid, 1)
    assert [e.lockid for e in lm.show_locks(ShowLocksRequest(dbname="other")).locks] == [c.lockid]
    assert [e.lockid for e in lm.show_locks(ShowLocksRequest(dbname="db", tablename="t")).locks] == [
        a.lockid, b.lockid]
    in_partition = lm.show_locks(ShowLocksRequest(dbname="db", tablename="t", partname="p=1")).locks
    assert [e.lockid for e in in_partition] == [a.lockid]
    assert lm.show_locks(ShowLocksRequest(dbname="none")).locks == []


# ---- concurrency --------------------------------------------------------------------------


def test_exclusive_lock_is_never_held_twice(stores):
    """8 threads over two managers with separate engines (two server processes sharing the
    database) take an EXCLUSIVE lock on one table in turns; at most one ever holds it."""
    managers = [LockManager(stores()), LockManager(stores())]
    rounds = 4
    guard = threading.Lock()
    inside = [0]
    peak = [0]
    acquired = [0]
    errors: list[BaseException] = []

    def worker(i: int) -> None:
        lm = managers[i % 2]
        try:
            for _ in range(rounds):
                resp = lock(lm, comp(EX, "hot", "tbl"))
                deadline = time.monotonic() + 120
                while resp.state != ACQ:
                    assert resp.state == WAIT
                    assert time.monotonic() < deadline, "lock never acquired"
                    time.sleep(0.005)
                    resp = lm.check_lock(CheckLockRequest(lockid=resp.lockid))
                with guard:
                    inside[0] += 1
                    peak[0] = max(peak[0], inside[0])
                    acquired[0] += 1
                time.sleep(0.01)
                with guard:
                    inside[0] -= 1
                unlock(lm, resp.lockid)
        except BaseException as exc:  # noqa: BLE001 - reported below
            errors.append(exc)

    threads = [threading.Thread(target=worker, args=(i,)) for i in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(300)
    assert not errors, errors
    assert acquired[0] == 8 * rounds
    assert peak[0] == 1
    assert states(managers[0]) == []


@pytest.mark.parametrize("sentinel_exists", [False, True])
def test_decisions_wait_for_a_running_decision(stores, sentinel_exists):
    """A decision of one manager waits while another manager's decision transaction is open (the
    sentinel row lock on PostgreSQL/MariaDB, the IMMEDIATE write lock on SQLite), also when the
    two race to create the sentinel row."""
    a, b = LockManager(stores()), LockManager(stores())
    if sentinel_exists:
        unlock(a, lock(a, comp(SR, "db", "t")).lockid)
    result: list = []

    def other() -> None:
        try:
            result.append(lock(b, comp(EX, "db", "t")))
        except BaseException as exc:  # noqa: BLE001 - reported below
            result.append(exc)

    worker = threading.Thread(target=other)
    with a.store.write() as conn:
        a._serialize(conn)
        worker.start()
        time.sleep(0.5)
        assert result == []
    worker.join(60)
    [resp] = result
    assert isinstance(resp, LockResponse) and resp.state == ACQ


def test_hudis_lock_provider_sequence(lm, clock):
    """Hudi's HiveMetastoreBasedLockProvider (tests/test_hudi_locks.py runs it for real): an EXCLUSIVE
    TABLE lock without a transaction; a WAITING answer is released at once (`unlock`) and asked for
    again later, never polled with check_lock; the holder heartbeats its lock id (txnid 0) and unlocks."""
    hudi = LockRequest(component=[LockComponent(type=EX, level=LockLevel.TABLE, dbname="db", tablename="trips")],
                       user="writer", hostname="h1")  # Hive's LockRequestBuilder: no txnid
    a = lm.lock(hudi)
    b = lm.lock(hudi)
    assert (a.state, b.state) == (ACQ, WAIT)
    unlock(lm, b.lockid)  # Hudi drops the waiting request
    clock.advance(TIMEOUT - 100)
    lm.heartbeat(HeartbeatRequest(lockid=a.lockid, txnid=0))
    clock.advance(TIMEOUT - 100)  # alive past the timeout thanks to the heartbeat
    c = lm.lock(hudi)
    assert c.state == WAIT and states(lm, dbname="db", tablename="trips")[0] == (a.lockid, 1, ACQ)
    unlock(lm, c.lockid)
    unlock(lm, a.lockid)
    assert states(lm, dbname="db", tablename="trips") == []
    d = lm.lock(hudi)  # the other writer's retry: a new request, acquired
    assert d.state == ACQ
    unlock(lm, d.lockid)
    assert states(lm) == []


# ---- a table held for a commit (a tracked Hudi table's, adapter/handlers/hudi.py) -----------------


def test_table_held_waits_for_hudis_table_lock_and_gives_up(lm):
    from store.errors import TableLocked

    hudi = lock(lm, comp(EX, "db", "t"))  # as Hudi's HiveMetastoreBasedLockProvider locks
    assert hudi.state == ACQ
    with pytest.raises(TableLocked, match="db.t stayed locked by another writer"), \
            lm.table_held("db", "t", wait_s=0.2):
        pytest.fail("acquired while Hudi's lock was held")
    assert states(lm) == [(hudi.lockid, 1, ACQ)]  # the waiting request is gone
    done = []

    def release_soon():
        time.sleep(0.3)
        unlock(lm, hudi.lockid)

    t = threading.Thread(target=release_soon)
    t.start()
    with lm.table_held("db", "t", wait_s=10):
        done.append(True)
        mine = states(lm)
        assert len(mine) == 1 and mine[0][2] == ACQ
        later = lock(lm, comp(EX, "db", "t"))  # Hudi's next commit waits for this one
        assert later.state == WAIT
    t.join()
    assert done and check(lm, later.lockid) == ACQ
    with lm.table_held("db", "other", wait_s=0):  # another table: not blocked
        pass
