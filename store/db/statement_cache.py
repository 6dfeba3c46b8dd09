"""SQLAlchemy's cache of compiled statements, without the statements too large to keep (issue 41).

SQLAlchemy keeps the last 500 statements it compiled, each with its whole expression tree. A
statement with a bound parameter per value (a partition filter of 50,000 terms compiles to 100,000
of them) took about 70 MB, kept until 500 other statements came: one such request left a worker at
twice its memory for good, and 500 different ones could take gigabytes. Statements with more than
`MAX_CACHED_PARAMETERS` bound values (a list bound as one parameter counted value by value) or
`MAX_CACHED_SQL` characters (of SQL or of one bound text) are compiled for each execution and not
kept (compiling one of 100 parameters takes about a millisecond); the others are cached as before.
Compiling such a statement leaves garbage in reference cycles: `uncached_parameters()` lets the
server know when a full collection is worth it (adapter/server/memory_release.py). Partition
filters bind long value lists as one parameter since (store/hms/partition_filter's leaf_sql).
"""

from __future__ import annotations

from typing import Any

from sqlalchemy import Engine
from sqlalchemy.util import LRUCache

CACHE_SIZE = 500  # SQLAlchemy's default query_cache_size
MAX_CACHED_PARAMETERS = 100
MAX_CACHED_SQL = 20_000

_uncached = [0]  # bound parameters of the statements compiled and not kept, in this process


def uncached_parameters() -> int:
    return _uncached[0]


def _parameters(compiled: Any) -> tuple[int, int]:
    """(bound values, the longest bound text): a list bound as one parameter (an expanding `IN`, a
    PostgreSQL array) counted value by value. A kept statement keeps the values of its first
    execution: a 50,000-value list, or the JSON text SQLite reads such a list from."""
    n = longest = 0
    for bind in getattr(compiled, "binds", {}).values():
        value = bind.value
        n += len(value) if isinstance(value, (list, tuple)) else 1
        if isinstance(value, (str, bytes)):
            longest = max(longest, len(value))
    return n, longest


def small(parameters: int, characters: int) -> bool:
    """Whether a statement of this many bound values and characters (of SQL, or of its longest bound
    text) may be kept: the one rule of every cache of statements."""
    return parameters <= MAX_CACHED_PARAMETERS and characters <= MAX_CACHED_SQL


def keeps(compiled: Any) -> bool:
    """Whether a compiled statement is small enough to keep; one that is not counts as uncached."""
    parameters, longest = _parameters(compiled)
    if not small(parameters, max(longest, len(getattr(compiled, "string", "")))):
        _uncached[0] += parameters
        return False
    return True


class BoundedStatementCache(LRUCache):
    def __setitem__(self, key: Any, value: Any) -> None:
        if keeps(value):
            super().__setitem__(key, value)


def bound_statement_cache(engine: Engine) -> None:
    """Give `engine` the bounded cache (every connection of it uses the engine's)."""
    engine._compiled_cache = BoundedStatementCache(CACHE_SIZE, size_alert=engine._lru_size_alert)
