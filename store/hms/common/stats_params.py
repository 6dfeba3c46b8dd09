"""Statistics Hive keeps in table and partition parameters, maintained as Hive Metastore does.

* Fast stats ``numFiles`` / ``totalSize``: counted from the data directory (hidden ``.``/``_`` entries
  skipped) when an unpartitioned table is created on an existing directory, when one is altered,
  when a partition is added on an existing directory, and when a partition is altered with fast
  stats missing or different from the stored ones. A new table is counted unless it comes with
  ``numFilesErasureCoded`` too, as Hive 4 does (Hive 2.3 kept given numFiles and totalSize); Hive 4
  also writes ``numFilesErasureCoded`` (0) with them, which ours does not (Spark would show it among
  a table's properties: see docs/conformance.md). ``DO_NOT_UPDATE_STATS=true`` in the environment
  context turns this off for alters; the same key as a *table* parameter is removed (and, if true,
  skips the update) for unpartitioned tables.
* ``COLUMN_STATS_ACCURATE``: recomputing the fast stats drops it, unless the environment context says
  ``STATS_GENERATED=TASK`` (then ``{"BASIC_STATS":"true"}``); updating column statistics records the
  columns (``{"COLUMN_STATS":{"a":"true"}}``); altering the columns away forgets them.
* ``truncate_table``: the basic statistics present (numFiles, numRows, totalSize, rawDataSize,
  numFilesErasureCoded) become 0 and accurate, the columns' no longer (``{"BASIC_STATS":"true"}``; the
  column statistics themselves stay), then the fast stats are counted as an alter with
  ``STATS_GENERATED=TASK`` counts them (Hive 4's updateStatsForTruncate and alter).
* Counting is bounded (store/storage/folder_stats.py, one counter per request): only folders under
  the warehouse and the configured roots are counted; a count cut short (too many files, too long,
  an unreadable folder) records no fast stats and no ``COLUMN_STATS_ACCURATE``, as if never gathered.
"""

from __future__ import annotations

import json

from store.storage import warehouse
from store.storage.folder_stats import FolderCounter

NUM_FILES, TOTAL_SIZE, NUM_ERASURE_CODED = "numFiles", "totalSize", "numFilesErasureCoded"
FAST_STATS = (NUM_FILES, TOTAL_SIZE)
CSA = "COLUMN_STATS_ACCURATE"
DO_NOT_UPDATE_STATS = "DO_NOT_UPDATE_STATS"
STATS_GENERATED = "STATS_GENERATED"
VIEW = "VIRTUAL_VIEW"
# Hive's StatsSetupConst.SUPPORTED_STATS: what truncate_table sets to 0 where present
BASIC_STATS = (NUM_FILES, "numRows", TOTAL_SIZE, "rawDataSize", NUM_ERASURE_CODED)
TRUNCATE_ENV = {STATS_GENERATED: "TASK"}  # the environment Hive's truncate alters with


def env_skips(env: dict | None) -> bool:
    return (env or {}).get(DO_NOT_UPDATE_STATS) == "true"


def has_fast_stats(params: dict) -> bool:
    return all(k in params for k in FAST_STATS)


def given_at_create(params: dict) -> bool:
    """Does a new table come with its fast stats? (Hive 4 counts unless all three of its are given.)"""
    return has_fast_stats(params) and NUM_ERASURE_CODED in params


# --- COLUMN_STATS_ACCURATE ------------------------------------------------------------------------

def parse_csa(text: str | None) -> tuple[bool, dict[str, bool]]:
    if text is None:
        return False, {}
    try:
        data = json.loads(text)
        if not isinstance(data, dict):
            raise ValueError(text)
        basic = str(data.get("BASIC_STATS", "false")).lower() == "true"
        cols = {str(k): str(v).lower() == "true" for k, v in (data.get("COLUMN_STATS") or {}).items()}
        return basic, cols
    except (ValueError, AttributeError):
        return text.strip().lower() == "true", {}


def dump_csa(basic: bool, cols: dict[str, bool]) -> str:
    out: dict[str, str | dict[str, str]] = {}
    if basic:
        out["BASIC_STATS"] = "true"
    if cols:
        out["COLUMN_STATS"] = {k: "true" if v else "false" for k, v in sorted(cols.items())}
    return json.dumps(out, separators=(",", ":"))


def set_basic_state(params: dict, env: dict | None) -> None:
    if (env or {}).get(STATS_GENERATED) == "TASK":
        _basic, cols = parse_csa(params.get(CSA))
        params[CSA] = dump_csa(True, cols)
    else:
        params.pop(CSA, None)


def set_column_stats_state(params: dict, columns) -> None:
    basic, cols = parse_csa(params.get(CSA))
    for c in columns:
        cols.setdefault(c, True)
    params[CSA] = dump_csa(basic, cols)


def remove_column_stats_state(params: dict, columns) -> None:
    """Forget the columns' statistics (written even when there was no flag: Hive writes `{}`)."""
    if not columns:
        return
    basic, cols = parse_csa(params.get(CSA))
    for c in columns:
        cols.pop(c, None)
    params[CSA] = dump_csa(basic, cols)


def reset_for_truncate(params: dict) -> dict:
    """The parameters after truncate_table, before its recount: the basic statistics present are 0
    and accurate, no column's statistics are."""
    out = dict(params)
    for key in BASIC_STATS:
        if key in out:
            out[key] = "0"
    out[CSA] = dump_csa(True, {})
    return out


# --- fast stats -----------------------------------------------------------------------------------

def _populate(params: dict, location: str | None, env: dict | None, counter: FolderCounter) -> None:
    """`counter`: the request's (StorageBoundary.folder_counter)."""
    stats = counter.stats(location)
    if stats is None:
        return  # object stores (nothing cheap to count), or outside the roots
    if not stats.complete:
        for key in (*FAST_STATS, CSA):
            params.pop(key, None)
        return
    params[NUM_FILES], params[TOTAL_SIZE] = str(stats.files), str(stats.size)
    set_basic_state(params, env)


def _table_fast_stats(params: dict, location: str | None, existed: bool, force: bool, env: dict | None,
                      counter: FolderCounter) -> None:
    if DO_NOT_UPDATE_STATS in params:
        skip = params.pop(DO_NOT_UPDATE_STATS).strip().lower() == "true"
        if skip:
            return
    if (force or not given_at_create(params)) and existed:
        _populate(params, location, env, counter)


def on_create_table(params: dict, table_type: str | None, partitioned: bool, location: str | None,
                    env: dict | None, counter: FolderCounter) -> None:
    """Before the table is stored; `location`'s directory does not exist yet if Hive would make it."""
    if table_type == VIEW or partitioned:
        return
    existed = warehouse.local_path(location) is not None and warehouse.is_dir(location)
    _table_fast_stats(params, location, existed, False, env, counter)


def on_alter_table(params: dict, table_type: str | None, partitioned: bool, location: str | None,
                   env: dict | None, counter: FolderCounter) -> None:
    if env_skips(env) or table_type == VIEW or partitioned:
        return
    _table_fast_stats(params, location, True, True, env, counter)


def on_add_partition(params: dict, location: str | None, counter: FolderCounter) -> None:
    if has_fast_stats(params):  # given (Spark's partition repair counts them): kept, as Hive 2.3 does
        return
    if warehouse.local_path(location) is not None and warehouse.is_dir(location):
        _populate(params, location, None, counter)


def on_alter_partition(old_params: dict, params: dict, table_type: str | None, location: str | None,
                       env: dict | None, counter: FolderCounter) -> None:
    if env_skips(env) or table_type == VIEW:
        return
    same = all(k in old_params and k in params and _num(old_params[k]) == _num(params[k]) for k in FAST_STATS)
    required = (not has_fast_stats(params) or (env or {}).get(STATS_GENERATED) in ("TASK", "USER")
                or not same)
    if not required:
        return
    if same:
        set_basic_state(params, env)
    else:
        _populate(params, location, env, counter)


def _num(v):
    try:
        return int(v)
    except (TypeError, ValueError):
        return v
