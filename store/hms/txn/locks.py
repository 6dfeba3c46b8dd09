"""Hive-style lock manager and minimal transactions over the store (the `locks` and `txns` tables).

Behaves like Hive's DbTxnManager / TxnHandler as far as Trino, PyIceberg and Spark rely on it:

* A `LockRequest` is a list of components (DB, TABLE or PARTITION level); it is ACQUIRED only when
  every component can be, otherwise all its rows stay WAITING and `check_lock` re-evaluates it.
* Two components overlap when they are in the same database and their table (and partition) names
  are equal or one of them is absent, so a DB lock meets every lock in that database, a TABLE lock
  its partitions' locks and its database's locks.
* Overlapping components of different requests conflict unless their types are compatible:
  SHARED_READ with SHARED_READ, SHARED_WRITE and EXCL_WRITE; SHARED_WRITE with SHARED_READ and
  SHARED_WRITE; EXCL_WRITE with SHARED_READ; EXCLUSIVE with nothing. Components of the same open
  transaction never conflict with each other.
* A request waits on every conflicting lock that is acquired or was requested earlier (lower lock
  id), even a waiting one, so a waiting request is never overtaken by a later conflicting one.
* Locks without a transaction, and open transactions, whose last heartbeat is older than
  `timeout_ms` are dropped (the transactions aborted, their locks released) before any decision.

Every decision runs in one write transaction that first takes a row lock on the sentinel row
'lock_manager' of `sequences` (`SELECT ... FOR UPDATE`; on SQLite the IMMEDIATE write transaction
already serializes writers; on a Galera cluster it also writes, `Store.cluster_lock`), so
decisions are serialized across threads and across server processes sharing one database.
Database and table names are stored lower-case; in partition names (`k1=v1/k2=v2`) the keys are
lower-cased and the values kept as given.
"""

from __future__ import annotations

import socket
import time
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass

from sqlalchemy import Connection, delete, func, insert, select, update
from sqlalchemy.exc import IntegrityError

from store.db import schema
from store.db.database import Store, now_ms
from store.errors import MetaError, NoSuchLock, NoSuchTxn, TableLocked, TxnAborted, TxnOpen
from store.hms.txn.write_id_rows import clean_write_ids
from thrift_idl.hive_metastore.ttypes import (
    CheckLockRequest,
    DataOperationType,
    HeartbeatRequest,
    LockComponent,
    LockLevel,
    LockRequest,
    LockResponse,
    LockState,
    LockType,
    ShowLocksRequest,
    ShowLocksResponse,
    ShowLocksResponseElement,
    TxnType,
    UnlockRequest,
)

SENTINEL = "lock_manager"
LOCK_ID_SEQ = "lock_id"
TXN_ID_SEQ = "txn_id"

TXN_OPEN, TXN_ABORTED, TXN_COMMITTED = "o", "a", "c"

# Hive's hive.txn.max.open.batch: open_txns opens at most this many per call (more are cut to it,
# as Hive does); heartbeat_txn_range refuses wider ranges (they come from such batches).
MAX_OPEN_BATCH = 1000

# lock operations get_latest_txnid_in_conflict compares (Hive's WRITE_SET keeps updates and deletes)
CONFLICT_OPERATIONS = (DataOperationType.UPDATE, DataOperationType.DELETE)
# lock operations that make a transaction's components (Hive's TXN_COMPONENTS)
_WRITE_OPERATIONS = (DataOperationType.INSERT, DataOperationType.UPDATE, DataOperationType.DELETE)
# Hive's OperationType letters, as its write-conflict message names them
_OPERATION_LETTERS = {DataOperationType.UPDATE: "u", DataOperationType.DELETE: "d"}
# transactions whose commit records no write set and checks no conflict (Hive's CommitTxnFunction)
NO_WRITE_SET_TYPES = frozenset({TxnType.READ_ONLY, TxnType.COMPACTION, TxnType.SOFT_DELETE})

# lock type -> the lock types it can share an overlapping resource with
_COMPATIBLE: dict[int, frozenset[int]] = {
    LockType.SHARED_READ: frozenset({LockType.SHARED_READ, LockType.SHARED_WRITE, LockType.EXCL_WRITE}),
    LockType.SHARED_WRITE: frozenset({LockType.SHARED_READ, LockType.SHARED_WRITE}),
    LockType.EXCL_WRITE: frozenset({LockType.SHARED_READ}),
    LockType.EXCLUSIVE: frozenset(),
}

_L = schema.locks
_TC = schema.txn_components
_T = schema.txns


def compatible(a: int, b: int) -> bool:
    return b in _COMPATIBLE[a]


def lock_id_str(lockid: int) -> str:
    return f"lockid:{lockid}"


def txn_id_str(txnid: int) -> str:
    return f"txnid:{txnid}"


def normalize_part_name(name: str) -> str:
    """Lower-case the keys of a `k1=v1/k2=v2` partition name; values are case-sensitive (and escaped
    by Hive, so '/' and '=' inside a value never split it)."""
    parts = []
    for seg in name.split("/"):
        key, eq, val = seg.partition("=")
        parts.append(key.lower() + eq + val)
    return "/".join(parts)


@dataclass(frozen=True)
class _Comp:
    lock_id: int
    component: int
    txn_id: int
    db: str
    tbl: str | None
    part: str | None
    type: int
    state: int

    def overlaps(self, other: _Comp) -> bool:
        if self.db != other.db:
            return False
        if self.tbl is None or other.tbl is None:
            return True
        if self.tbl != other.tbl:
            return False
        return self.part is None or other.part is None or self.part == other.part


def _comp(row) -> _Comp:
    return _Comp(row.lock_id, row.component, row.txn_id, row.db_name, row.tbl_name, row.part_name,
                 row.lock_type, row.state)


@dataclass(frozen=True)
class _Failed:
    exc: Exception


_CLIENT_ERRORS = (NoSuchLock, NoSuchTxn, TxnAborted, TxnOpen)


def _clip(value: str | None, width: int) -> str | None:
    return value[:width] if value is not None else None


class LockManager:
    """Hive's lock and transaction calls (`lock`, `check_lock`, `unlock`, `show_locks`, `heartbeat`,
    `open_txns`, `commit_txn`, `abort_txn`, `heartbeat_txn`) over a `Store`."""

    def __init__(self, store: Store, timeout_ms: int = 300_000, clock_ms: Callable[[], int] = now_ms):
        self.store = store
        self.timeout_ms = timeout_ms
        self.clock_ms = clock_ms

    # ---- plumbing -------------------------------------------------------------------------

    def run(self, fn, *args):
        """Run fn(conn, now, ...) serialized with every other lock-manager transaction, after the
        expiry of silent transactions and locks (store/hms/txn/write_ids.py uses it too)."""
        return self._run(fn, *args)

    def _run(self, fn, *args):
        """Run fn(conn, now, ...) serialized with every other lock-manager transaction."""

        def body(conn: Connection):
            self._serialize(conn)
            now = self.clock_ms()
            self._expire(conn, now)
            try:
                return fn(conn, now, *args)
            except _CLIENT_ERRORS as exc:
                return _Failed(exc)  # keep expiries and heartbeats done so far: commit, then raise

        result = self.store.run_write(body)
        if isinstance(result, _Failed):
            raise result.exc
        return result

    def _serialize(self, conn: Connection) -> None:
        if self.store.backend == "sqlite":
            return  # BEGIN IMMEDIATE already made this the only writer
        seq = schema.sequences
        stmt = select(seq.c.next_val).where(seq.c.name == SENTINEL).with_for_update()
        if conn.execute(stmt).first() is None:
            try:
                with conn.begin_nested():
                    conn.execute(insert(seq).values(name=SENTINEL, next_val=0))
            except IntegrityError:
                pass  # another process created it first
            conn.execute(stmt).one()
        self.store.cluster_lock(conn, SENTINEL)

    def _expire(self, conn: Connection, now: int) -> None:
        cutoff = now - self.timeout_ms
        dead = conn.execute(
            select(_T.c.txn_id).where(_T.c.state == TXN_OPEN, _T.c.heartbeat_ms < cutoff)
        ).scalars().all()
        for i in range(0, len(dead), 500):
            chunk = dead[i : i + 500]
            conn.execute(update(_T).where(_T.c.txn_id.in_(chunk), _T.c.state == TXN_OPEN)
                         .values(state=TXN_ABORTED))
            conn.execute(delete(_L).where(_L.c.txn_id.in_(chunk)))
        # Locks of open transactions are heartbeated together with the transaction.
        conn.execute(delete(_L).where(_L.c.heartbeat_ms < cutoff))

    def _lock_rows(self, conn: Connection, lockid: int):
        rows = conn.execute(select(_L).where(_L.c.lock_id == lockid).order_by(_L.c.component)).all()
        if not rows:
            raise NoSuchLock(f"No such lock {lock_id_str(lockid)}")
        return rows

    def _ensure_open_txn(self, conn: Connection, txnid: int) -> None:
        state = conn.execute(select(_T.c.state).where(_T.c.txn_id == txnid)).scalar_one_or_none()
        if state is None:
            raise NoSuchTxn(f"No such transaction {txn_id_str(txnid)}")
        if state == TXN_ABORTED:
            raise TxnAborted(f"Transaction {txn_id_str(txnid)} already aborted")
        if state == TXN_COMMITTED:
            raise NoSuchTxn(f"Transaction {txn_id_str(txnid)} is already committed.")

    def _touch_txn(self, conn: Connection, now: int, txnid: int) -> None:
        self._ensure_open_txn(conn, txnid)
        conn.execute(update(_T).where(_T.c.txn_id == txnid).values(heartbeat_ms=now))
        conn.execute(update(_L).where(_L.c.txn_id == txnid).values(heartbeat_ms=now))

    @staticmethod
    def _blocker(mine: Iterable[_Comp], others: Iterable[_Comp]) -> tuple[_Comp, _Comp] | None:
        """The first (own component, other component) pair that keeps `mine` from being acquired."""
        others = list(others)
        for c in mine:
            found = None
            for o in others:
                if o.lock_id == c.lock_id or (c.txn_id and o.txn_id == c.txn_id):
                    continue
                if o.state != LockState.ACQUIRED and o.lock_id > c.lock_id:
                    continue  # later waiting requests queue behind us
                if not c.overlaps(o) or compatible(c.type, o.type):
                    continue
                if o.state == LockState.ACQUIRED:
                    return c, o
                if found is None or o.lock_id < found.lock_id:
                    found = o
            if found is not None:
                return c, found
        return None

    def _relevant(self, conn: Connection, dbs: Iterable[str]) -> list[_Comp]:
        rows = conn.execute(select(_L).where(_L.c.db_name.in_(sorted(set(dbs))))).all()
        return [_comp(r) for r in rows]

    def _try_acquire(self, conn: Connection, now: int, lockid: int, rows) -> int:
        mine = [_comp(r) for r in rows]
        if all(c.state == LockState.ACQUIRED for c in mine):
            return LockState.ACQUIRED
        others = self._relevant(conn, (c.db for c in mine))
        if self._blocker(mine, others) is not None:
            return LockState.WAITING
        conn.execute(update(_L).where(_L.c.lock_id == lockid)
                     .values(state=LockState.ACQUIRED, acquired_ms=now))
        return LockState.ACQUIRED

    # ---- locks ----------------------------------------------------------------------------

    def lock(self, rqst: LockRequest | None) -> LockResponse:
        if rqst is None:
            raise MetaError("lock needs a LockRequest")
        comps = self._validate(rqst)
        return self._run(self._lock, rqst, comps)

    def _validate(self, rqst) -> list[tuple]:
        if not rqst.component:
            raise MetaError("LockRequest has no components")
        out = []
        for c in rqst.component:
            if not c.dbname:
                raise MetaError("LockComponent needs a dbname")
            if c.type not in _COMPATIBLE:  # None and unknown values alike
                raise MetaError(f"Unknown lock type {c.type}")
            level = c.level
            if level is None:
                level = (LockLevel.PARTITION if c.partitionname else
                         LockLevel.TABLE if c.tablename else LockLevel.DB)
            tbl = part = None
            if level == LockLevel.DB:
                pass
            elif level == LockLevel.TABLE:
                if not c.tablename:
                    raise MetaError("TABLE level LockComponent needs a tablename")
                tbl = c.tablename.lower()
            elif level == LockLevel.PARTITION:
                if not c.tablename or not c.partitionname:
                    raise MetaError(
                        message="PARTITION level LockComponent needs a tablename and a partitionname")
                tbl = c.tablename.lower()
                part = normalize_part_name(c.partitionname)
            else:
                raise MetaError(f"Unknown lock level {level}")
            out.append((c.dbname.lower(), tbl, part, c.type, level, c.operationType, c.isTransactional,
                        bool(c.isDynamicPartitionWrite)))
        return out

    def _lock(self, conn: Connection, now: int, rqst, comps) -> LockResponse:
        txnid = rqst.txnid or 0
        if txnid:
            self._touch_txn(conn, now, txnid)
        lockid = self.store.next_id(conn, LOCK_ID_SEQ)
        user = _clip(rqst.user, schema.NAME)
        host = _clip(rqst.hostname, schema.NAME)
        agent = _clip(getattr(rqst, "agentInfo", None), schema.URI)
        conn.execute(insert(_L), [
            dict(lock_id=lockid, component=i, txn_id=txnid, db_name=db, tbl_name=tbl, part_name=part,
                 lock_type=typ, lock_level=level, state=LockState.WAITING, operation=op,
                 is_transactional=is_txn, user_name=user, host_name=host, agent_info=agent,
                 created_ms=now, acquired_ms=None, heartbeat_ms=now)
            for i, (db, tbl, part, typ, level, op, is_txn, _) in enumerate(comps, start=1)
        ])
        if txnid:
            _record_components(conn, txnid, comps)
        rows = self._lock_rows(conn, lockid)
        return LockResponse(lockid=lockid, state=self._try_acquire(conn, now, lockid, rows))

    def check_lock(self, rqst: CheckLockRequest | None) -> LockResponse:
        return self._run(self._check_lock, _lock_id("check_lock", rqst))

    def _check_lock(self, conn: Connection, now: int, lockid: int) -> LockResponse:
        rows = self._lock_rows(conn, lockid)
        txnid = rows[0].txn_id
        if txnid:
            self._touch_txn(conn, now, txnid)
        else:
            conn.execute(update(_L).where(_L.c.lock_id == lockid).values(heartbeat_ms=now))
        return LockResponse(lockid=lockid, state=self._try_acquire(conn, now, lockid, rows))

    def unlock(self, rqst: UnlockRequest | None) -> None:
        self._run(self._unlock, _lock_id("unlock", rqst))

    def _unlock(self, conn: Connection, now: int, lockid: int) -> None:
        rows = conn.execute(select(_L).where(_L.c.lock_id == lockid).order_by(_L.c.component)).all()
        if not rows:  # as Hive's TxnHandler.unlock: nothing to release, the call is idempotent
            return
        if rows[0].txn_id:
            raise TxnOpen(
                message="Unlocking locks associated with transaction not permitted.  "
                f"{lock_id_str(lockid)} {txn_id_str(rows[0].txn_id)}")
        conn.execute(delete(_L).where(_L.c.lock_id == lockid))

    @contextmanager
    def table_held(self, db: str, tbl: str, wait_s: float, user: str = "hudi-metastore") -> Iterator[None]:
        """An EXCLUSIVE lock on table db.tbl for the block (the lock Hudi's
        HiveMetastoreBasedLockProvider takes for its commits), waited for at most `wait_s` seconds:
        TableLocked when another holder keeps it longer. Released when the block ends."""
        rqst = LockRequest(component=[LockComponent(type=LockType.EXCLUSIVE, level=LockLevel.TABLE, dbname=db,
                                                    tablename=tbl, operationType=DataOperationType.UPDATE)],
                           user=user, hostname=socket.gethostname())
        resp = self.lock(rqst)
        try:
            deadline = time.monotonic() + wait_s
            pause = 0.02
            while resp.state != LockState.ACQUIRED:
                if time.monotonic() >= deadline:
                    raise TableLocked(f"{db}.{tbl} stayed locked by another writer for {wait_s:g} s "
                                      "(an EXCLUSIVE table lock: Hudi's lock provider's); try again")
                time.sleep(min(pause, max(0.0, deadline - time.monotonic())))
                pause = min(pause * 2, 0.5)
                resp = self.check_lock(CheckLockRequest(lockid=resp.lockid))
            yield
        finally:
            self.unlock(UnlockRequest(lockid=resp.lockid))

    def show_locks(self, rqst: ShowLocksRequest | None = None) -> ShowLocksResponse:
        return self._run(self._show_locks, rqst)

    def _show_locks(self, conn: Connection, now: int, rqst) -> ShowLocksResponse:
        stmt = select(_L).order_by(_L.c.lock_id, _L.c.component)
        if rqst is not None:
            if rqst.dbname:
                stmt = stmt.where(_L.c.db_name == rqst.dbname.lower())
            if rqst.tablename:
                stmt = stmt.where(_L.c.tbl_name == rqst.tablename.lower())
            if rqst.partname:
                stmt = stmt.where(_L.c.part_name == normalize_part_name(rqst.partname))
            if getattr(rqst, "txnid", None):
                stmt = stmt.where(_L.c.txn_id == rqst.txnid)
        rows = conn.execute(stmt).all()
        waiting_dbs = {r.db_name for r in rows if r.state != LockState.ACQUIRED}
        pool = self._relevant(conn, waiting_dbs) if waiting_dbs else []
        out = []
        for r in rows:
            e = ShowLocksResponseElement(
                lockid=r.lock_id, dbname=r.db_name, tablename=r.tbl_name, partname=r.part_name,
                state=r.state, type=r.lock_type, txnid=r.txn_id,
                lastheartbeat=r.heartbeat_ms, acquiredat=r.acquired_ms,
                user=r.user_name or "", hostname=r.host_name or "", agentInfo=r.agent_info,
                lockIdInternal=r.component)
            if r.state != LockState.ACQUIRED:
                hit = self._blocker([_comp(r)], pool)
                if hit is not None:
                    e.blockedByExtId, e.blockedByIntId = hit[1].lock_id, hit[1].component
            out.append(e)
        return ShowLocksResponse(locks=out)

    def heartbeat(self, rqst: HeartbeatRequest | None) -> None:
        if rqst is None:
            raise NoSuchLock("heartbeat needs a HeartbeatRequest naming a lock or a transaction")
        self._run(self._heartbeat, rqst.lockid or 0, rqst.txnid or 0)

    def _heartbeat(self, conn: Connection, now: int, lockid: int, txnid: int) -> None:
        if lockid:
            rows = self._lock_rows(conn, lockid)
            conn.execute(update(_L).where(_L.c.lock_id == lockid).values(heartbeat_ms=now))
            if rows[0].txn_id and rows[0].txn_id != txnid:
                self._touch_txn(conn, now, rows[0].txn_id)
        if txnid:
            self._touch_txn(conn, now, txnid)

    # ---- transactions ---------------------------------------------------------------------

    def open_txns(self, user: str | None, host: str | None, count: int | None = 1,
                  txn_type: int | None = None) -> list[int]:
        """Open `count` transactions of `txn_type` (Hive's TxnType, DEFAULT when None), at most
        MAX_OPEN_BATCH (Hive cuts larger requests to it)."""
        if count is None or count < 1:
            raise MetaError(f"Invalid number of transactions to open: {count}")
        kind = TxnType.DEFAULT if txn_type is None else txn_type
        if kind not in TxnType._VALUES_TO_NAMES:
            raise MetaError(f"Unknown transaction type {txn_type}")
        if kind == TxnType.REPL_CREATED:
            raise MetaError("open_txns: REPL_CREATED transactions (replication) are not supported by this metastore")
        return self._run(self._open_txns, user, host, min(count, MAX_OPEN_BATCH), kind)

    def _open_txns(self, conn: Connection, now: int, user, host, count: int, kind: int) -> list[int]:
        first = self.store.next_id(conn, TXN_ID_SEQ, count)
        ids = list(range(first, first + count))
        # Hive's MIN_HISTORY_LEVEL: the lowest transaction open now (this one's snapshot may list it)
        oldest = conn.execute(select(func.min(_T.c.txn_id)).where(_T.c.state == TXN_OPEN)).scalar()
        conn.execute(insert(_T), [
            dict(txn_id=t, state=TXN_OPEN, user_name=_clip(user, schema.NAME),
                 host_name=_clip(host, schema.NAME), started_ms=now, heartbeat_ms=now, txn_type=kind,
                 min_open_txn=min(oldest or first, first))
            for t in ids
        ])
        return ids

    def commit_txn(self, txnid: int | None, excl_write_enabled: bool | None = True) -> None:
        """Commit; with `excl_write_enabled` false (CommitTxnRequest.exclWriteEnabled: a client whose
        updates and deletes take SHARED_WRITE locks), a write-write conflict aborts the transaction
        instead (TxnAbortedException), as Hive 4's commitTxn."""
        check = excl_write_enabled is False
        self._run(self._end_txn, _txn_id("commit_txn", txnid), TXN_COMMITTED, check)

    def abort_txn(self, txnid: int | None) -> None:
        self._run(self._end_txn, _txn_id("abort_txn", txnid), TXN_ABORTED)

    def abort_txns(self, txnids: list[int] | None) -> None:
        """abort_txns: the open ones among `txnids` aborted in one transaction; committed, aborted and
        unknown ids are skipped, as Hive's TxnHandler does (it only logs how many it aborted)."""
        ids = sorted({int(t) for t in txnids or []})
        if len(ids) > MAX_OPEN_BATCH:
            raise MetaError(f"abort_txns names {len(ids)} transactions; at most {MAX_OPEN_BATCH} per call")
        if ids:
            self._run(self._abort_many, ids)

    def _abort_many(self, conn: Connection, now: int, ids: list[int]) -> None:
        for i in range(0, len(ids), 500):
            chunk = ids[i:i + 500]
            conn.execute(update(_T).where(_T.c.txn_id.in_(chunk), _T.c.state == TXN_OPEN).values(
                state=TXN_ABORTED, heartbeat_ms=now))
            conn.execute(delete(_L).where(_L.c.txn_id.in_(chunk)))
        self._housekeep(conn, now)

    def _end_txn(self, conn: Connection, now: int, txnid: int, to: str, check_conflict: bool = False) -> None:
        row = conn.execute(select(_T.c.state, _T.c.txn_type).where(_T.c.txn_id == txnid)).first()
        if row is not None and row.state == to:
            return  # Hive: committing a committed / aborting an aborted transaction is a no-op
        if row is None or row.state != TXN_OPEN:
            self._ensure_open_txn(conn, txnid)  # raises the Hive exception for that state
        assert row is not None
        conflict = None
        if to == TXN_COMMITTED and row.txn_type not in NO_WRITE_SET_TYPES:
            conflict = record_write_set(conn, txnid, check_conflict)
        self._finish(conn, now, txnid, TXN_ABORTED if conflict else to)
        if conflict:
            raise TxnAborted(conflict)  # the abort is committed first (_run)

    def _finish(self, conn: Connection, now: int, txnid: int, to: str) -> None:
        conn.execute(update(_T).where(_T.c.txn_id == txnid).values(state=to, heartbeat_ms=now))
        conn.execute(delete(_L).where(_L.c.txn_id == txnid))
        if to == TXN_COMMITTED:  # its updates and deletes are in the write set now
            conn.execute(delete(_TC).where(_TC.c.txn_id == txnid))
        self._housekeep(conn, now)

    def _housekeep(self, conn: Connection, now: int) -> None:
        """Hive's housekeeper (cleanTxnToWriteIdTable, cleanEmptyAbortedAndCommittedTxns), run as
        transactions end: write ids below the low water mark go, and transactions that ended more
        than the timeout ago leave `txns` when they have no components: committed ones (a commit
        turned its components into the write set; no answer but a late commit's or heartbeat's,
        then "no such transaction" as Hive's, needs them) and aborted ones that wrote nothing
        (their write ids then count as valid, as Hive's). An aborted transaction that wrote keeps
        its row and its components (its writes stay invalid; no compactor runs here to clean them)."""
        clean_write_ids(conn, _next_txn_id(conn))
        wrote = select(_TC.c.txn_id).where(_TC.c.txn_id == _T.c.txn_id).exists()
        conn.execute(delete(_T).where(_T.c.state.in_([TXN_COMMITTED, TXN_ABORTED]),
                                      _T.c.heartbeat_ms < now - self.timeout_ms, ~wrote))

    def add_dynamic_partitions(self, txnid: int | None, write_id: int | None, db: str | None, tbl: str | None,
                               part_names: list[str] | None, operation: int | None) -> None:
        """add_dynamic_partitions: the partitions an open transaction's dynamic-partition write
        wrote (its lock named the table alone) become its components, with `write_id`; an update
        (the most restrictive) when the request names no operation, as Hive's."""
        if write_id is None or not db or not tbl or part_names is None:
            raise MetaError("add_dynamic_partitions needs txnid, writeid, dbname, tablename and partitionnames")
        if operation not in (None, DataOperationType.UNSET, *_WRITE_OPERATIONS):
            raise MetaError(f"add_dynamic_partitions: operation type {operation} is not a write")
        op = DataOperationType.UPDATE if operation in (None, DataOperationType.UNSET) else operation
        parts = [str(p) for p in part_names]
        if len(db) > schema.NAME or len(tbl) > schema.TABLE_NAME:
            raise MetaError(f"add_dynamic_partitions: database or table name too long: {db[:80]}.{tbl[:80]}")
        too_long = next((p for p in parts if len(p) > schema.PART_NAME), None)
        if too_long is not None:
            raise MetaError(f"add_dynamic_partitions: partition name longer than {schema.PART_NAME} characters: "
                            f"{too_long[:80]}...")
        self._run(self._add_dynamic, _txn_id("add_dynamic_partitions", txnid), int(write_id), db.lower(),
                  tbl.lower(), parts, op)

    def _add_dynamic(self, conn: Connection, now: int, txnid: int, write_id: int, db: str, tbl: str,
                     parts: list[str], op: int) -> None:
        state = conn.execute(select(_T.c.state).where(_T.c.txn_id == txnid)).scalar_one_or_none()
        if state == TXN_COMMITTED:  # Hive 4 answers an internal error here (its "should never happen")
            raise MetaError(f"add_dynamic_partitions: transaction {txn_id_str(txnid)} is already committed")
        self._ensure_open_txn(conn, txnid)
        for i in range(0, len(parts), 500):
            conn.execute(insert(_TC), [dict(txn_id=txnid, db_name=db, tbl_name=tbl, part_name=p, operation=op,
                                            write_id=write_id) for p in parts[i:i + 500]])

    def heartbeat_txn(self, txnid: int) -> None:
        self._run(self._touch_txn, txnid)

    def heartbeat_txn_range(self, low: int | None, high: int | None) -> tuple[set[int], set[int]]:
        """Heartbeat the open transactions with ids in [low, high] in one transaction of three
        statements; returns (aborted, nosuch) among the others. At most MAX_OPEN_BATCH ids."""
        if low is None or high is None:
            raise MetaError("heartbeat_txn_range needs a HeartbeatTxnRangeRequest with min and max")
        if high < low:
            return set(), set()
        if high - low + 1 > MAX_OPEN_BATCH:
            raise MetaError(f"heartbeat_txn_range covers {high - low + 1} transactions; at most "
                            f"{MAX_OPEN_BATCH} per call (hive.txn.max.open.batch)")
        return self._run(self._heartbeat_range, low, high)

    def _heartbeat_range(self, conn: Connection, now: int, low: int, high: int) -> tuple[set[int], set[int]]:
        in_range = _T.c.txn_id.between(low, high)
        open_ids = select(_T.c.txn_id).where(in_range, _T.c.state == TXN_OPEN)
        conn.execute(update(_L).where(_L.c.txn_id.in_(open_ids.scalar_subquery())).values(heartbeat_ms=now))
        conn.execute(update(_T).where(in_range, _T.c.state == TXN_OPEN).values(heartbeat_ms=now))
        states = {r[0]: r[1] for r in conn.execute(select(_T.c.txn_id, _T.c.state).where(in_range))}
        aborted = {t for t, state in states.items() if state == TXN_ABORTED}
        nosuch = {t for t in range(low, high + 1) if states.get(t) not in (TXN_OPEN, TXN_ABORTED)}
        return aborted, nosuch


def _record_components(conn: Connection, txnid: int, comps: list[tuple]) -> None:
    """Hive's TXN_COMPONENTS of a transaction's lock: its transactional write components (inserts,
    updates, deletes), with the table's write id in the transaction; a dynamic-partition write's
    table-level component is left for add_dynamic_partitions to name its partitions."""
    rows = [(db, tbl, part, op) for db, tbl, part, _, _, op, is_txn, dynamic in comps
            if op in _WRITE_OPERATIONS and is_txn is not False and not dynamic]
    if not rows:
        return
    w = schema.txn_write_ids
    tables = {tbl for _, tbl, _, _ in rows if tbl is not None}
    ids = {(r.db_name, r.tbl_name): r.write_id for r in conn.execute(
        select(w.c.db_name, w.c.tbl_name, w.c.write_id).where(w.c.txn_id == txnid, w.c.tbl_name.in_(tables)))} \
        if tables else {}
    conn.execute(insert(_TC), [dict(txn_id=txnid, db_name=db, tbl_name=tbl, part_name=part, operation=op,
                                    write_id=ids.get((db, tbl))) for db, tbl, part, op in rows])


def _next_txn_id(conn: Connection) -> int:
    seq = schema.sequences
    return conn.execute(select(seq.c.next_val).where(seq.c.name == TXN_ID_SEQ)).scalar() or 1


def record_write_set(conn: Connection, txn_id: int, check_conflict: bool = False) -> str | None:
    """At commit: what the transaction updated or deleted (its lock components), with the commit id
    (the transaction high water mark), for get_latest_txnid_in_conflict and later commits' checks.
    With `check_conflict`, first Hive's write-write check: another transaction that committed after
    this one began (commit id >= its id) updated or deleted the same partition, or the same table
    where both name none; then nothing is recorded and the answer is Hive's abort message."""
    rows = conn.execute(select(_TC.c.db_name, _TC.c.tbl_name, _TC.c.part_name, _TC.c.operation).distinct().where(
        _TC.c.txn_id == txn_id, _TC.c.operation.in_(CONFLICT_OPERATIONS), _TC.c.tbl_name.is_not(None))).all()
    if not rows:
        return None
    next_val = _next_txn_id(conn)
    ws = schema.txn_write_set
    if check_conflict:
        for db, tbl, part, op in rows:
            hit = conn.execute(select(ws.c.txn_id, ws.c.commit_id, ws.c.operation).where(
                ws.c.db_name == db, ws.c.tbl_name == tbl,
                ws.c.part_name.is_(None) if part is None else ws.c.part_name == part,
                ws.c.commit_id >= txn_id, ws.c.txn_id != txn_id, ws.c.operation.in_(CONFLICT_OPERATIONS),
            ).order_by(ws.c.commit_id, ws.c.txn_id).limit(1)).first()
            if hit is not None:
                where = f"{db}/{tbl}" + (f"/{part}" if part is not None else "")
                return (f"Aborting [{txn_id_str(txn_id)},{next_val - 1}] due to a write conflict on {where} "
                        f"committed by [{txn_id_str(hit.txn_id)},{hit.commit_id}] "
                        f"{_OPERATION_LETTERS[op]}/{_OPERATION_LETTERS[hit.operation]}")
    # Bounded: a row matters only to transactions that began before its commit, so rows older than
    # every open transaction go (Hive's housekeeper does the same to its WRITE_SET).
    oldest = conn.execute(select(func.min(_T.c.txn_id)).where(_T.c.state == TXN_OPEN)).scalar()
    conn.execute(delete(ws).where(ws.c.commit_id < min(oldest or next_val, next_val)))
    conn.execute(insert(ws), [
        dict(db_name=db, tbl_name=tbl, part_name=part, txn_id=txn_id, commit_id=next_val - 1, operation=op)
        for db, tbl, part, op in rows])
    return None


def _lock_id(method: str, rqst) -> int:
    if rqst is None or rqst.lockid is None:
        raise NoSuchLock(f"{method} needs a request naming a lock (lockid)")
    return rqst.lockid


def _txn_id(method: str, txnid: int | None) -> int:
    if txnid is None:
        raise NoSuchTxn(f"{method} needs a request naming a transaction (txnid)")
    return txnid


__all__ = ["LockManager", "compatible", "normalize_part_name", "record_write_set"]
