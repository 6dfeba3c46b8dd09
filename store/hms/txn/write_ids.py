"""Write ids of transactional tables and compaction requests, as Hive 4.0.1's TxnHandler keeps them
(its TXN_TO_WRITE_ID, NEXT_WRITE_ID, WRITE_SET and COMPACTION_QUEUE tables; here `txn_write_ids`,
`next_write_ids`, `txn_write_set`, `compactions`).

* allocate_table_write_ids: per table (database and table name, lower-cased; no catalog, as in
  Hive 4.0.1) write ids start at 1 and grow; a transaction gets one write id per table, asking again
  answers the same one. Every named transaction must be open; at most MAX_OPEN_BATCH per call.
* get_valid_write_ids: the table's write ids as seen by a valid transaction list (the one given in
  Hive's ValidReadTxnList text form, else the current open transactions): write ids of open and
  aborted transactions, and of transactions above the list's high water mark, are invalid (aborted
  ones flagged in abortedBits, the lowest open one is minOpenWriteId); the high water mark is the
  highest write id of a transaction up to the list's high water mark.
* get_latest_txnid_in_conflict: the latest committed transaction that updated or deleted in a
  table or partition the given open transaction updates or deletes (its lock components), and that
  committed after it started; 0 when none. commit_txn records the write set (LockManager).
* compact / compact2 record a request ("initiated"), refused while one for the same table or
  partition is initiated; show_compact lists them. No compactor runs here: requests stay initiated.

Every change runs through the lock manager's serialized transaction (LockManager.run).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass

from sqlalchemy import Connection, and_, delete, func, insert, or_, select, update

from store.db import schema
from store.errors import MetaError, NoSuchTxn, TxnAborted
from store.hms.txn.locks import CONFLICT_OPERATIONS, MAX_OPEN_BATCH, TXN_ABORTED, TXN_OPEN, LockManager
from store.hms.txn.open_txns import OpenTxnList
from thrift_idl.hive_metastore.ttypes import (
    AllocateTableWriteIdsRequest,
    AllocateTableWriteIdsResponse,
    CompactionRequest,
    CompactionResponse,
    CompactionType,
    GetValidWriteIdsRequest,
    GetValidWriteIdsResponse,
    MaxAllocatedTableWriteIdResponse,
    ShowCompactRequest,
    ShowCompactResponse,
    ShowCompactResponseElement,
    TableValidWriteIds,
    TxnToWriteId,
    TxnType,
)

_W = schema.txn_write_ids
_N = schema.next_write_ids
_WS = schema.txn_write_set
_TC = schema.txn_components
_C = schema.compactions
_T = schema.txns

COMPACTION_ID_SEQ = "compaction_id"
# get_valid_write_ids: tables per call; invalid transactions a valid transaction list may name
MAX_TABLES = MAX_OPEN_BATCH
MAX_LISTED_TXNS = 1_000_000
# show_compact answers at most this many requests (its `limit` may ask for fewer)
MAX_SHOWN_COMPACTIONS = 10_000
INITIATED = "i"
_STATE_NAMES = {INITIATED: "initiated"}


@dataclass(frozen=True)
class ValidTxnList:
    """Hive's ValidReadTxnList: transactions up to `hwm` are valid unless listed in `exceptions`."""

    hwm: int
    exceptions: tuple[int, ...]  # sorted
    aborted: frozenset[int]


def parse_valid_txn_list(text: str) -> ValidTxnList:
    """Hive's ValidReadTxnList text: `hwm:minOpen:open,...:aborted,...`, items `n` or ranges `a-b`."""
    if not text:
        return ValidTxnList(2**63 - 1, (), frozenset())
    parts = text.split(":")
    try:
        hwm = int(parts[0])
        int(parts[1])
        open_ids = _ids(parts[2]) if len(parts) > 2 else []
        aborted = _ids(parts[3]) if len(parts) > 3 else []
    except (ValueError, IndexError):
        raise MetaError(f"Invalid validTxnList: {text[:200]}") from None
    return ValidTxnList(hwm, tuple(sorted(set(open_ids) | set(aborted))), frozenset(aborted))


def _ids(text: str) -> list[int]:
    out: list[int] = []
    for item in filter(None, text.split(",")):
        low, _, high = item.partition("-")
        first, last = int(low), int(high or low)
        if last - first + len(out) >= MAX_LISTED_TXNS:
            raise MetaError(f"validTxnList lists more than {MAX_LISTED_TXNS} transactions")
        out.extend(range(first, last + 1))
    return out


def _split_name(full: str | None) -> tuple[str, str]:
    db, dot, tbl = (full or "").partition(".")
    if not dot or not db or not tbl or "." in tbl:
        raise MetaError(f"Invalid table name {full!r}: expected <database>.<table>")
    return db.lower(), tbl.lower()


class WriteIds:
    """allocate_table_write_ids, get_valid_write_ids, get_max_allocated_table_write_id and
    get_latest_txnid_in_conflict over the lock manager's store."""

    def __init__(self, locks: LockManager, open_txns: OpenTxnList):
        self.locks = locks
        self.store = locks.store
        self.open_txns = open_txns

    # ---- allocation ------------------------------------------------------------------------

    def allocate(self, rqst: AllocateTableWriteIdsRequest | None) -> AllocateTableWriteIdsResponse:
        if rqst is None or not rqst.dbName or not rqst.tableName:
            raise MetaError("allocate_table_write_ids needs an AllocateTableWriteIdsRequest with dbName and tableName")
        if rqst.replPolicy or rqst.srcTxnToWriteIdList:
            raise MetaError("allocate_table_write_ids: replication (replPolicy) is not supported by this metastore")
        ids = sorted({int(t) for t in rqst.txnIds})
        if len(ids) > MAX_OPEN_BATCH:
            raise MetaError(f"allocate_table_write_ids names {len(ids)} transactions; at most {MAX_OPEN_BATCH} "
                            "per call (hive.txn.max.open.batch)")
        if not ids:  # Hive 4 fails too (an empty IN list)
            raise MetaError("allocate_table_write_ids needs at least one transaction in txnIds")
        db, tbl = rqst.dbName.lower(), rqst.tableName.lower()
        pairs = self.locks.run(self._allocate, db, tbl, ids, bool(rqst.reallocate))
        return AllocateTableWriteIdsResponse(txnToWriteIds=[TxnToWriteId(txnId=t, writeId=w) for t, w in pairs])

    def _allocate(self, conn: Connection, now: int, db: str, tbl: str, ids: list[int],
                  reallocate: bool) -> list[tuple[int, int]]:
        found = conn.execute(select(_T.c.txn_id, _T.c.state, _T.c.txn_type).where(_T.c.txn_id.in_(ids))).all()
        states = {r.txn_id: r.state for r in found}
        read_only = {r.txn_id for r in found if r.state == TXN_OPEN and r.txn_type == TxnType.READ_ONLY}
        if read_only or any(states.get(t) != TXN_OPEN for t in ids):
            bad = ",".join(f"{{{t},{'read-only' if t in read_only else _state_name(states.get(t))}}}"
                           for t in ids if states.get(t) != TXN_OPEN or t in read_only)
            text = (f"Write ID allocation failed on {db}.{tbl} as not all input txns in open state or read-only: "
                    f"{bad}")
            if any(states.get(t) == TXN_ABORTED for t in ids):
                raise TxnAborted(text)
            if all(states.get(t) == TXN_OPEN for t in ids):  # only read-only ones: they exist and are open
                raise MetaError(text)
            raise NoSuchTxn(text)
        mine = and_(_W.c.db_name == db, _W.c.tbl_name == tbl, _W.c.txn_id.in_(ids))
        if reallocate:
            conn.execute(delete(_W).where(mine))
            have: dict[int, int] = {}
        else:
            have = {r.txn_id: r.write_id for r in conn.execute(select(_W.c.txn_id, _W.c.write_id).where(mine))}
        todo = [t for t in ids if t not in have]
        if todo:
            key = and_(_N.c.db_name == db, _N.c.tbl_name == tbl)
            nxt = conn.execute(select(_N.c.next_id).where(key)).scalar_one_or_none()
            first = nxt if nxt is not None else 1
            if nxt is None:
                conn.execute(insert(_N).values(db_name=db, tbl_name=tbl, next_id=first + len(todo)))
            else:
                conn.execute(update(_N).where(key).values(next_id=first + len(todo)))
            conn.execute(insert(_W), [dict(db_name=db, tbl_name=tbl, txn_id=t, write_id=first + i)
                                      for i, t in enumerate(todo)])
            have.update({t: first + i for i, t in enumerate(todo)})
        return [(t, have[t]) for t in ids]

    def max_allocated(self, db_name: str | None, tbl_name: str | None) -> MaxAllocatedTableWriteIdResponse:
        if not db_name or not tbl_name:
            raise MetaError("get_max_allocated_table_write_id needs dbName and tableName")
        with self.store.read() as conn:
            nxt = conn.execute(select(_N.c.next_id).where(
                _N.c.db_name == db_name.lower(), _N.c.tbl_name == tbl_name.lower())).scalar_one_or_none()
        return MaxAllocatedTableWriteIdResponse(maxWriteId=(nxt - 1) if nxt else 0)

    # ---- valid write ids -------------------------------------------------------------------

    def valid_write_ids(self, rqst: GetValidWriteIdsRequest | None) -> GetValidWriteIdsResponse:
        if rqst is None or rqst.fullTableNames is None:
            raise MetaError("get_valid_write_ids needs a GetValidWriteIdsRequest with fullTableNames")
        if len(rqst.fullTableNames) > MAX_TABLES:
            raise MetaError(f"get_valid_write_ids names {len(rqst.fullTableNames)} tables; "
                            f"at most {MAX_TABLES} per call")
        names = [(full, *_split_name(full)) for full in rqst.fullTableNames]
        given = parse_valid_txn_list(rqst.validTxnList) if rqst.validTxnList is not None else None
        with self.store.read() as conn:
            if given is not None:
                txns = given
            else:
                current = 0
                if rqst.writeId is not None:
                    if not names:
                        raise MetaError("get_valid_write_ids with a writeId needs a table")
                    full, db, tbl = names[0]
                    found = conn.execute(select(_W.c.txn_id).where(
                        _W.c.db_name == db, _W.c.tbl_name == tbl, _W.c.write_id == rqst.writeId)).scalar_one_or_none()
                    if found is None:
                        raise MetaError(f"invalid write id {rqst.writeId} for table {full}")
                    current = int(found)
                txns = self._current_txns(conn, current)
            out = [self._table(conn, txns, full, db, tbl) for full, db, tbl in names]
        return GetValidWriteIdsResponse(tblValidWriteIds=out)

    def _current_txns(self, conn: Connection, current: int) -> ValidTxnList:
        """Hive's createValidReadTxnList(get_open_txns, current): relative to transaction `current`
        (0: none), whose own writes count as valid and later transactions as invalid."""
        hwm, rows = self.open_txns.rows(conn)
        rows = [(r, aborted) for r, aborted in rows if r.txn_type != TxnType.READ_ONLY]  # Hive's getOpenTxns
        if current > 0:
            hwm = min(hwm, current)
            rows = [(r, aborted) for r, aborted in rows if r.txn_id < current]
        return ValidTxnList(hwm, tuple(r.txn_id for r, _ in rows),
                            frozenset(r.txn_id for r, aborted in rows if aborted))

    def _table(self, conn: Connection, txns: ValidTxnList, full: str, db: str, tbl: str) -> TableValidWriteIds:
        mine = and_(_W.c.db_name == db, _W.c.tbl_name == tbl)
        hwm = conn.execute(select(func.max(_W.c.write_id)).where(mine, _W.c.txn_id <= txns.hwm)).scalar()
        if not hwm or hwm <= 0:
            nxt = conn.execute(select(_N.c.next_id).where(_N.c.db_name == db, _N.c.tbl_name == tbl)).scalar()
            hwm = (nxt - 1) if nxt else 0
        # Only transactions from the lowest excepted one (or above the high water mark) can be invalid.
        low = txns.exceptions[0] if txns.exceptions else txns.hwm + 1
        rows = conn.execute(select(_W.c.txn_id, _W.c.write_id).where(mine, _W.c.write_id <= hwm, _W.c.txn_id >= low)
                            .order_by(_W.c.write_id)).all()
        excepted = set(txns.exceptions)
        invalid: list[int] = []
        bits = 0
        min_open: int | None = None
        found_valid = False
        for txn, wid in rows:
            if txn <= txns.hwm and txn not in excepted:
                found_valid = True
                continue
            invalid.append(wid)
            if txn in txns.aborted:
                bits |= 1 << (len(invalid) - 1)
            elif min_open is None or wid < min_open:
                min_open = wid
        if not found_valid:
            found_valid = conn.execute(select(_W.c.write_id).where(mine, _W.c.write_id <= hwm, _W.c.txn_id < low)
                                       .limit(1)).first() is not None
        if not found_valid:  # Hive: the lowest invalid write id becomes the high water mark
            first = invalid[0] if invalid else None
            invalid, bits = [], 0
            if first is not None:
                invalid, hwm = [first], first
                if first != min_open:
                    bits = 1
        return TableValidWriteIds(fullTableName=full, writeIdHighWaterMark=hwm, invalidWriteIds=invalid,
                                  minOpenWriteId=min_open,
                                  abortedBits=bits.to_bytes((bits.bit_length() + 7) // 8, "little"))

    # ---- conflicts -------------------------------------------------------------------------

    def latest_txnid_in_conflict(self, txn_id: int | None) -> int:
        if txn_id is None:
            raise MetaError("get_latest_txnid_in_conflict needs a txnId")
        with self.store.read() as conn:
            mine = conn.execute(select(_TC.c.db_name, _TC.c.tbl_name, _TC.c.part_name).distinct().where(
                _TC.c.txn_id == txn_id, _TC.c.operation.in_(CONFLICT_OPERATIONS), _TC.c.tbl_name.is_not(None))).all()
            if not mine:
                return 0
            latest = 0
            for i in range(0, len(mine), 200):
                conds = [and_(_WS.c.db_name == db, _WS.c.tbl_name == tbl,
                              *([] if part is None else [_WS.c.part_name == part]))
                         for db, tbl, part in mine[i:i + 200]]
                found = conn.execute(select(func.max(_WS.c.txn_id)).where(_WS.c.commit_id >= txn_id,
                                                                          or_(*conds))).scalar()
                latest = max(latest, int(found or 0))
        return latest


def _state_name(state: str | None) -> str:
    return {TXN_ABORTED: "ABORTED", "c": "COMMITTED", TXN_OPEN: "OPEN"}.get(state or "", "UNKNOWN")


class Compactions:
    """compact / compact2 / show_compact: requests recorded and listed."""

    def __init__(self, locks: LockManager):
        self.locks = locks
        self.store = locks.store

    def compact(self, rqst: CompactionRequest | None) -> CompactionResponse:
        if rqst is None or not rqst.dbname or not rqst.tablename:
            raise MetaError("compact needs a CompactionRequest with dbname and tablename")
        if rqst.type not in CompactionType._VALUES_TO_NAMES:
            raise MetaError(f"Unexpected compaction type {rqst.type}")
        for value, width, what in ((rqst.dbname, schema.NAME, "dbname"),
                                   (rqst.tablename, schema.TABLE_NAME, "tablename"),
                                   (rqst.partitionname, schema.PART_NAME, "partitionname"),
                                   (rqst.runas, schema.NAME, "runas"), (rqst.initiatorId, schema.NAME, "initiatorId"),
                                   (rqst.initiatorVersion, schema.NAME, "initiatorVersion"),
                                   (rqst.poolName, schema.NAME, "poolName")):
            if value is not None and len(value) > width:
                raise MetaError(f"compact: {what} is longer than {width} characters")
        return self.locks.run(self._compact, rqst)

    def _compact(self, conn: Connection, now: int, rqst: CompactionRequest) -> CompactionResponse:
        part = rqst.partitionname
        same = conn.execute(select(_C.c.id, _C.c.state).where(
            _C.c.db_name == rqst.dbname, _C.c.tbl_name == rqst.tablename, _C.c.state == INITIATED,
            _C.c.part_name.is_(None) if part is None else _C.c.part_name == part).limit(1)).first()
        if same is not None:
            return CompactionResponse(id=-1, state="refused", accepted=False, errormessage=(
                f"Compaction is already scheduled with state='{_STATE_NAMES[same.state]}' and id={same.id}"))
        cid = self.store.next_id(conn, COMPACTION_ID_SEQ)
        conn.execute(insert(_C).values(
            id=cid, db_name=rqst.dbname, tbl_name=rqst.tablename, part_name=part, state=INITIATED, type=rqst.type,
            run_as=rqst.runas, properties=json.dumps(rqst.properties) if rqst.properties else None,
            initiator_id=rqst.initiatorId, initiator_version=rqst.initiatorVersion, pool_name=rqst.poolName,
            number_of_buckets=rqst.numberOfBuckets, order_by=rqst.orderByClause, enqueue_ms=now))
        return CompactionResponse(id=cid, state="initiated", accepted=True)

    def show(self, rqst: ShowCompactRequest | None) -> ShowCompactResponse:
        r = rqst or ShowCompactRequest()
        stmt = select(_C).order_by(_C.c.enqueue_ms, _C.c.id)
        conds: Sequence = [c for c in (
            _C.c.id == r.id if r.id and r.id > 0 else None,
            _C.c.db_name == r.dbName if r.dbName else None,
            _C.c.tbl_name == r.tbName if r.tbName else None,
            _C.c.part_name == r.partName if r.partName else None,
            _C.c.state == r.state if r.state else None,
            _C.c.type == r.type if r.type is not None else None,
            _C.c.pool_name == r.poolName if r.poolName else None) if c is not None]
        limit = min(r.limit, MAX_SHOWN_COMPACTIONS) if r.limit and r.limit > 0 else MAX_SHOWN_COMPACTIONS
        with self.store.read() as conn:
            rows = conn.execute(stmt.where(*conds).limit(limit)).all()
        return ShowCompactResponse(compacts=[ShowCompactResponseElement(
            dbname=row.db_name, tablename=row.tbl_name, partitionname=row.part_name, type=row.type,
            state=_STATE_NAMES.get(row.state, row.state), runAs=row.run_as, hadoopJobId=None, id=row.id,
            enqueueTime=row.enqueue_ms, initiatorId=row.initiator_id, initiatorVersion=row.initiator_version,
            poolName=row.pool_name or "default", txnId=0, nextTxnId=0, commitTime=0, hightestTxnId=0)
            for row in rows])


__all__ = ["Compactions", "ValidTxnList", "WriteIds", "parse_valid_txn_list"]
