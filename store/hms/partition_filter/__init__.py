"""Hive partition filters (`get_partitions_by_filter`): the filter text parsed (lexer, parser,
nodes) and compiled to one SQL WHERE clause over `partitions` (compiler, leaf_sql), per backend.

`parse_filter(text)` gives the tree; `compile_filter(text, tbl_id, keys, dialect)` the clause. Errors are
`FilterError` (a ValueError); `str(err)` is the text for a MetaException, e.g.
``Error parsing partition filter "a = " at position 4: expected a literal``.
"""

from store.hms.partition_filter.compiler import compile_filter
from store.hms.partition_filter.errors import FilterError
from store.hms.partition_filter.parser import parse_filter

__all__ = ["FilterError", "compile_filter", "parse_filter"]
