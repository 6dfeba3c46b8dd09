"""Hive's column statistics (Hive's TAB_COL_STATS and PART_COL_STATS: `ColumnStatisticsData` per
column and engine), as opposed to store/hudi's RFC-27 column statistics of files: set, read and
delete them (`StatisticsService`, hive_column_stats.py) and aggregate them over partitions for
get_aggr_stats_for (`AggregateStats`, hive_aggregate_stats.py). Columns without statistics may get
derived ones from a `DerivedStatistics` (store/hudi's table_statistics for Hudi tables). The basic
statistics Hive keeps in parameters are store/hms/common's `stats_params`.

The door of store/hms/stats: other packages import these names from here, never its modules.
Imports store/hms's `common` and `partitions`.
"""

from store.hms.stats.hive_aggregate_stats import AggregateStats
from store.hms.stats.hive_column_stats import DerivedStatistics, StatisticsService

__all__ = ["AggregateStats", "DerivedStatistics", "StatisticsService"]
