"""The open transactions, as Hive's get_open_txns / get_open_txns_info answer them, from the lock
manager's `txns` table (store/hms/txn/locks.py).

Hive lists every transaction up to the high water mark (the highest id handed out) that is open or
aborted (committed ones leave its TXNS table); `abortedBits` marks the aborted ones by their index
in that list (java.util.BitSet.toByteArray: little-endian, no trailing zero bytes), `min_open_txn`
is the lowest open one. A transaction whose heartbeat is older than the lock manager's timeout is
answered as aborted: the next lock-manager call aborts it.

Each transaction has its type (Hive's TxnType, from open_txns): get_open_txns leaves READ_ONLY
ones out of the list, get_open_txns_req the types its request excludes; `min_open_txn` still counts
every open transaction, and get_open_txns_info lists them all (TxnInfo has no type), as Hive 4's.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

from sqlalchemy import Connection, select

from store.db import schema as S
from store.db.database import Store, now_ms
from store.hms.txn.locks import TXN_ABORTED, TXN_ID_SEQ, TXN_OPEN
from thrift_idl.hive_metastore.ttypes import (
    GetOpenTxnsInfoResponse,
    GetOpenTxnsResponse,
    TxnInfo,
    TxnState,
    TxnType,
)

_T = S.txns


class OpenTxnList:
    def __init__(self, store: Store, timeout_ms: int, clock_ms: Callable[[], int] = now_ms):
        self.store = store
        self.timeout_ms = timeout_ms
        self.clock_ms = clock_ms

    def _rows(self) -> tuple[int, list[tuple[Any, bool]]]:
        with self.store.read() as conn:
            return self.rows(conn)

    def rows(self, conn: Connection) -> tuple[int, list[tuple[Any, bool]]]:
        """(high water mark, [(row, aborted)]) of the open and aborted transactions, by id."""
        seq = S.sequences
        next_val = conn.execute(select(seq.c.next_val).where(seq.c.name == TXN_ID_SEQ)).scalar()
        rows = conn.execute(select(_T).where(_T.c.state.in_([TXN_OPEN, TXN_ABORTED]))
                            .order_by(_T.c.txn_id)).all()
        cutoff = self.clock_ms() - self.timeout_ms
        hwm = (next_val - 1) if next_val else 0
        return hwm, [(r, r.state == TXN_ABORTED or r.heartbeat_ms < cutoff) for r in rows if r.txn_id <= hwm]

    def open_txns(self, exclude: Iterable[int] = (TxnType.READ_ONLY,)) -> GetOpenTxnsResponse:
        """get_open_txns (READ_ONLY transactions left out) or get_open_txns_req (`exclude`: its
        excludeTxnTypes)."""
        hwm, rows = self._rows()
        open_ids = [r.txn_id for r, aborted in rows if not aborted]
        skip = set(exclude)
        rows = [(r, aborted) for r, aborted in rows if r.txn_type not in skip]
        bits = 0
        for i, (_, aborted) in enumerate(rows):
            if aborted:
                bits |= 1 << i
        return GetOpenTxnsResponse(txn_high_water_mark=hwm, open_txns=[r.txn_id for r, _ in rows],
                                   min_open_txn=min(open_ids) if open_ids else None,
                                   abortedBits=bits.to_bytes((bits.bit_length() + 7) // 8, "little"))

    def open_txns_info(self) -> GetOpenTxnsInfoResponse:
        hwm, rows = self._rows()
        return GetOpenTxnsInfoResponse(txn_high_water_mark=hwm, open_txns=[
            TxnInfo(id=r.txn_id, state=TxnState.ABORTED if aborted else TxnState.OPEN, user=r.user_name or "",
                    hostname=r.host_name or "", agentInfo="Unknown", heartbeatCount=0,
                    startedTime=r.started_ms, lastHeartbeatTime=r.heartbeat_ms)
            for r, aborted in rows])
