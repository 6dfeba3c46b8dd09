"""Lock and transaction calls (Hive's DbTxnManager protocol: lock, poll check_lock, heartbeat, unlock)."""

from __future__ import annotations

from store.errors import MetaError
from store.hms.txn import LockManager, OpenTxnList
from thrift_idl.hive_metastore.ttypes import (
    HeartbeatTxnRangeResponse,
    OpenTxnsResponse,
)


class LockHandler:
    def __init__(self, locks: LockManager, open_txn_list: OpenTxnList | None = None):
        self.locks = locks
        self.open_txn_list = open_txn_list

    def lock(self, rqst):
        return self.locks.lock(rqst)

    def check_lock(self, rqst):
        return self.locks.check_lock(rqst)

    def unlock(self, rqst):
        self.locks.unlock(rqst)

    def show_locks(self, rqst):
        return self.locks.show_locks(rqst)

    def heartbeat(self, ids):
        self.locks.heartbeat(ids)

    def heartbeat_txn_range(self, txns):
        if txns is None:
            raise MetaError("heartbeat_txn_range needs a HeartbeatTxnRangeRequest")
        aborted, nosuch = self.locks.heartbeat_txn_range(txns.min, txns.max)
        return HeartbeatTxnRangeResponse(aborted=aborted, nosuch=nosuch)

    def open_txns(self, rqst):
        if rqst is None:
            raise MetaError("open_txns needs an OpenTxnRequest")
        return OpenTxnsResponse(txn_ids=self.locks.open_txns(rqst.user, rqst.hostname, rqst.num_txns))

    def commit_txn(self, rqst):
        self.locks.commit_txn(rqst.txnid if rqst is not None else None)

    def abort_txn(self, rqst):
        self.locks.abort_txn(rqst.txnid if rqst is not None else None)

    def abort_txns(self, rqst):
        if rqst is None or rqst.txn_ids is None:
            raise MetaError("abort_txns needs an AbortTxnsRequest with txn_ids")
        self.locks.abort_txns(rqst.txn_ids)

    # open transactions (store/hms/txn/open_txns.py)
    def get_open_txns(self):
        assert self.open_txn_list is not None, "LockHandler needs the open transaction list"
        return self.open_txn_list.open_txns()

    def get_open_txns_req(self, getOpenTxnsRequest):
        return self.get_open_txns()

    def get_open_txns_info(self):
        assert self.open_txn_list is not None, "LockHandler needs the open transaction list"
        return self.open_txn_list.open_txns_info()
