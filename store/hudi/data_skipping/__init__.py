"""RFC-27 data skipping: the file slices a predicate may match, chosen in SQL through the column
statistics' fork index (`pruning`, the predicate's conditions in `predicate`); docs/column_stats.md."""

from store.hudi.data_skipping import pruning  # a namespace: tests count its statement paths
from store.hudi.data_skipping.pruning import ColumnPruning

__all__ = ["ColumnPruning", "pruning"]
