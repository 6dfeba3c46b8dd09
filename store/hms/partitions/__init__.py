"""Partitions (RFC-36 partition service) as the Hive Metastore serves them.

`PartitionService` (partition_service.py) is the entry point, over reads and pruning
(partition_reads.py, the SQL in partition_queries.py), add/drop/truncate (partition_writes.py),
alter/rename (partition_alteration.py), key value rows (partition_key_values.py) and what a call
knows about its table (`TableContexts`, `TableCtx`: partition_context.py). Partition names as Hive
writes them (`make_name`, `split_name`, ...: partition_names.py), get_partitions_with_specs'
answers (`partition_specs`), partitions marked for events (`PartitionEvents`), and each
partition row's own parts of its encoding, which every write of partition rows or parameters
refreshes (`refresh_partition_wire`: partition_wire.py), and whole lists of unchanged tables
kept in memory (`PartitionListCache`: partition_list_cache.py). The filter
grammar is store/hms/partition_filter's.

The door of store/hms/partitions: other packages import these names from here, never its modules.
Imports store/hms's `common`, `catalog`, `notification_log` and `partition_filter`.
"""

from store.hms.partitions.partition_context import TableContexts, TableCtx
from store.hms.partitions.partition_events import PartitionEvents
from store.hms.partitions.partition_list_cache import PartitionListCache
from store.hms.partitions.partition_names import make_name, spec_from_name, split_name, values_from_name
from store.hms.partitions.partition_service import PartitionService
from store.hms.partitions.partition_specs import (
    listed_specs,
    partition_specs,
    partitions_of_spec,
    project,
    trimmed_partitions,
)
from store.hms.partitions.partition_wire import refresh as refresh_partition_wire
from store.hms.partitions.partition_writes import PartitionWrites  # tests patch its race window

__all__ = ["PartitionEvents", "PartitionListCache", "PartitionService", "PartitionWrites", "TableContexts",
           "TableCtx", "make_name",
           "listed_specs", "partition_specs", "partitions_of_spec", "project",
           "refresh_partition_wire", "spec_from_name", "split_name",
           "trimmed_partitions", "values_from_name"]
