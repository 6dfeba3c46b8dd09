"""Lock and transaction calls (Hive's DbTxnManager protocol: lock, poll check_lock, heartbeat, unlock)."""

from __future__ import annotations

from store.errors import MetaError
from store.hms.txn import Compactions, LockManager, OpenTxnList, WriteIds
from thrift_idl.hive_metastore.ttypes import (
    HeartbeatTxnRangeResponse,
    OpenTxnsResponse,
    TxnType,
)


class LockHandler:
    def __init__(self, locks: LockManager, open_txn_list: OpenTxnList | None = None,
                 write_ids: WriteIds | None = None, compactions: Compactions | None = None):
        self.locks = locks
        self.open_txn_list = open_txn_list
        self.write_ids = write_ids or WriteIds(locks, open_txn_list or OpenTxnList(locks.store, locks.timeout_ms))
        self.compactions = compactions or Compactions(locks)

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
        return OpenTxnsResponse(txn_ids=self.locks.open_txns(rqst.user, rqst.hostname, rqst.num_txns,
                                                             rqst.txn_type))

    def commit_txn(self, rqst):
        if rqst is not None and rqst.txn_type == TxnType.REPL_CREATED:
            raise MetaError("commit_txn: REPL_CREATED transactions (replication) are not supported by this metastore")
        # exclWriteEnabled: Hive's IDL default is true (no write-conflict check), also when not sent
        self.locks.commit_txn(rqst.txnid if rqst is not None else None,
                              rqst.exclWriteEnabled if rqst is not None else True)

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
        """The types excludeTxnTypes names left out (none named: none left out)."""
        assert self.open_txn_list is not None, "LockHandler needs the open transaction list"
        exclude = getOpenTxnsRequest.excludeTxnTypes if getOpenTxnsRequest is not None else None
        return self.open_txn_list.open_txns(exclude or ())

    def get_open_txns_info(self):
        assert self.open_txn_list is not None, "LockHandler needs the open transaction list"
        return self.open_txn_list.open_txns_info()

    # write ids and compaction requests (store/hms/txn/write_ids.py)
    def allocate_table_write_ids(self, rqst):
        return self.write_ids.allocate(rqst)

    def get_max_allocated_table_write_id(self, rqst):
        if rqst is None:
            raise MetaError("get_max_allocated_table_write_id needs a MaxAllocatedTableWriteIdRequest")
        return self.write_ids.max_allocated(rqst.dbName, rqst.tableName)

    def get_valid_write_ids(self, rqst):
        return self.write_ids.valid_write_ids(rqst)

    def get_latest_txnid_in_conflict(self, txnId):
        return self.write_ids.latest_txnid_in_conflict(txnId)

    def add_dynamic_partitions(self, rqst):
        if rqst is None:
            raise MetaError("add_dynamic_partitions needs an AddDynamicPartitions request")
        self.locks.add_dynamic_partitions(rqst.txnid, rqst.writeid, rqst.dbname, rqst.tablename,
                                          rqst.partitionnames, rqst.operationType)

    def compact(self, rqst):
        self.compactions.compact(rqst)

    def compact2(self, rqst):
        return self.compactions.compact(rqst)

    def show_compact(self, rqst):
        return self.compactions.show(rqst)
