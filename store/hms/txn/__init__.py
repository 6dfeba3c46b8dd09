"""Hive's lock manager and transactions: locks on databases, tables and partitions, the
transactions that hold them, heartbeats and timeouts (`LockManager`, locks.py), and the open
transaction list Hive 3+ clients read (`OpenTxnList`, open_txns.py), write ids of transactional
tables and compaction requests (`WriteIds`, `Compactions`, write_ids.py), and what follows those rows
when transactions end and tables are dropped or renamed (write_id_rows.py, called by store/hms/catalog).

The door of store/hms/txn: other packages import these names from here, never its modules.
Imports nothing else of store/hms.
"""

from store.hms.txn.locks import MAX_OPEN_BATCH, LockManager, compatible
from store.hms.txn.open_txns import OpenTxnList
from store.hms.txn.write_id_rows import (
    drop_database_rows,
    drop_partition_rows,
    drop_table_rows,
    is_transactional,
    rename_partition_rows,
    rename_table_rows,
)
from store.hms.txn.write_ids import Compactions, WriteIds, parse_valid_txn_list

__all__ = ["MAX_OPEN_BATCH", "Compactions", "LockManager", "OpenTxnList", "WriteIds", "compatible",
           "drop_database_rows", "drop_partition_rows", "drop_table_rows", "is_transactional", "parse_valid_txn_list",
           "rename_partition_rows", "rename_table_rows"]
