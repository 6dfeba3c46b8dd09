"""Hive's filter grammar (`get_partitions_by_filter`): the filter text parsed (lexer, parser,
nodes) and compiled to one SQL WHERE clause over `partitions` (compiler, leaf_sql), per backend.
The same parser and nodes, and LIKE as a wildcard pattern (like_pattern), serve table filters
(store/hms/catalog's table_filter) and Hudi's column predicates (store/hudi's data skipping).

`parse_filter(text)` gives the tree; `compile_filter(text, tbl_id, keys, dialect)` the clause. Errors are
`FilterError` (a ValueError); `str(err)` is the text for a MetaException, e.g.
``Error parsing partition filter "a = " at position 4: expected a literal``.

The door of store/hms/partition_filter: other packages import these names from here, never its
modules. Imports store/hms's `common` only, so every package above may use it.
"""

from store.hms.partition_filter.compiler import KEPT_FILTER_CHARS, compile_filter
from store.hms.partition_filter.errors import FilterError
from store.hms.partition_filter.leaf_sql import LONG_LIST, is_integral
from store.hms.partition_filter.lexer import tokenize
from store.hms.partition_filter.like_pattern import like_elements, like_test
from store.hms.partition_filter.nodes import And, Leaf, Literal, Node, Not, Or, push_not
from store.hms.partition_filter.parser import parse_filter

__all__ = ["KEPT_FILTER_CHARS", "LONG_LIST", "And", "FilterError", "Leaf", "Literal", "Node", "Not", "Or",
           "compile_filter", "is_integral", "like_elements", "like_test", "parse_filter", "push_not", "tokenize"]
