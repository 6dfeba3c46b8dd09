"""Data skipping (RFC-27): the latest file slices of a Hudi table that may hold rows matching a
predicate, evaluated in SQL with a cost that follows the answer and the partitions touched.

The partition filter (the predicate's partition-key leaves) picks partitions through the HMS
partition index. The statistics leaves then give, where they can, key ranges of one column (=, <,
<=, >, >=, BETWEEN, IN, LIKE prefix; several leaves of a column under AND intersect): the base
files whose [min, max] may overlap them are found through the prefix-tree index of column_stats
(fork_len, fork_key: one index range per prefix length), then checked against the whole
predicate. Partitions where some latest slice has no statistics for such a column (files written
without statistics) or has log files, and predicates giving no ranges (IS NULL, NOT IN, ...), are
evaluated file by file over those partitions. A slice with log files is skipped, as Hudi's reader
skips it, only when its base file and every log file are (a file without statistics is never).
"""

from __future__ import annotations

from collections import namedtuple
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from sqlalchemy import BigInteger, Connection, LargeBinary, Select, bindparam, func, select, text

from hudi_format.file_slice import FileInfo, FileSlice
from store import metrics
from store.db import schema as S
from store.db import statement_cache
from store.db.database import Store
from store.db.dialect import as_text, json_rows, rows_of
from store.db.driver_cursor import DriverStatement
from store.errors import MetaError
from store.hms.partition_filter import And, FilterError, Leaf, Node, Or
from store.hudi.column_stats import FORK_BYTES, encode_key, is_indexable, prefix_successor
from store.hudi.data_skipping.predicate import (
    check_literals,
    keep_condition,
    like_prefix,
    parse_predicate,
    without_columns,
)
from store.hudi.snapshot import FILE_COLUMNS, SnapshotService, file_info_of, locate_slices, locator
from store.hudi.tables import HudiTableRef, HudiTables, no_such_table, ref_of, table_names
from store.hudi.timeline import TimelineService

_CHUNK = 500
_REMEMBERED = 10_000  # tables whose partition keys are remembered (then forgotten all at once)
_MAX_RANGES = 64  # more ranges of one predicate (a long IN list) are merged into their span

Range = tuple[str, bytes | None, bytes | None]  # column, lowest key, highest key (None: open)


@dataclass(frozen=True)
class BaseFiles:
    """Kept slices that are a base file only, as columns (one entry per slice, the same order)."""
    partition_paths: list[str]
    file_ids: list[str]
    base_instants: list[str]
    names: list[str]
    sizes: list[int]
    commit_times: list[str]  # the instant that wrote each file
    paths: list[str]  # full paths; "" where the server does not place files (custom strategy)


@dataclass(frozen=True)
class PrunedSlices:
    slices: list[FileSlice]  # ordered by (partition, file id); with `compact`, those not in base_files
    files_skipped: int  # latest base files skipped in the partitions that kept some slice
    partitions_skipped: int  # partitions none of whose slices is kept
    files_considered: int  # latest base files of the partitions that kept some slice
    base_files: BaseFiles | None = None  # with `compact`: the kept slices of a base file only


class ColumnPruning:
    def __init__(self, store: Store, timeline: TimelineService, snapshot: SnapshotService):
        self.store = store
        self.timeline = timeline
        self.snapshot = snapshot
        # the statements every call runs, compiled once per shape and run on the driver's cursor
        self._table_sql: dict[int | None, DriverStatement] = {}  # by number of columns with facts
        self._table_rows: dict[int | None, Any] = {}  # the named tuples of their rows
        self._facts_sql: dict[int, DriverStatement] = {}  # by number of columns
        self._partition_keys: dict[tuple[str, str], frozenset[str]] = {}  # (db, table) -> at its last call

    def prune(self, db: str, tbl: str, predicate: str, compact: bool = False) -> PrunedSlices:
        """Latest slices that may hold rows matching `predicate` (MetaError for a bad predicate).
        `compact`: slices of a base file only come as columns (`base_files`), never built as
        slices (a large answer is mostly those)."""
        try:
            return self._prune(db, tbl, predicate, compact)
        except FilterError as exc:
            raise MetaError(str(exc).replace("partition filter", "predicate", 1)) from exc

    def _prune(self, db: str, tbl: str, predicate: str, compact: bool) -> PrunedSlices:
        metrics.incr("hudi_file_lookups")
        tree = parse_predicate(predicate) if predicate.strip() else None
        leaves = sorted(_leaf_keys(tree)) if tree is not None else []
        name = (db.lower(), tbl.lower())
        seen = self._partition_keys.get(name)
        # the partition facts come with the table's row when no leaf is a partition key: known
        # from the table's previous call, and checked against the row
        with_facts = not leaves or (seen is not None and seen.isdisjoint(leaves))
        with self.store.read() as conn:
            ref, types, part_keys, total, facts = self._table(conn, db, tbl, leaves if with_facts else None)
            self._remember(name, part_keys)
            if tree is not None:
                _check_columns(tree, predicate, types)
            part_tree = without_columns(tree, set(types) - part_keys) if tree is not None else None
            data_tree = without_columns(tree, part_keys) if tree is not None else None
            if data_tree is not None:
                check_literals(data_tree, predicate, types)  # bad literals are refused whatever the plan
            ranges = None if data_tree is None else _ranges(data_tree, types)
            columns = sorted({c for c, _, _ in ranges}) if ranges else []
            if part_tree is None:
                return self._plan(conn, ref, types, total, data_tree, predicate, ranges,
                                  _facts(facts, [leaves.index(c) for c in columns]) if facts is not None
                                  else self._partition_facts(conn, ref.tbl_id, columns), compact)
        # the partitions the partition filter keeps, from the partition index
        scope = self.snapshot.partitions(db, tbl, _filter_text(part_tree))
        with self.store.read() as conn:
            return self._plan(conn, ref, types, total, data_tree, predicate, ranges,
                              _partition_facts_in(conn, ref.tbl_id, columns, scope), compact)

    def _remember(self, name: tuple[str, str], part_keys: set[str]) -> None:
        if self._partition_keys.get(name) != part_keys:
            if len(self._partition_keys) >= _REMEMBERED:
                self._partition_keys.clear()
            self._partition_keys[name] = frozenset(part_keys)

    def _plan(self, conn: Connection, ref: HudiTableRef, types: dict[str, str], total: int, data_tree: Node | None,
              predicate: str, ranges: list[Range] | None, facts: tuple[dict[str, int], list[str]],
              compact: bool) -> PrunedSlices:
        """The answer, given the partitions in scope with their numbers of latest base files and
        those where the index cannot answer (`facts`)."""
        base_files, unclean = facts
        if data_tree is None:
            parts = sorted(base_files)
            return _answer(ref, self.snapshot.latest_in(conn, ref.tbl_id, parts) if parts else [], [], total,
                           base_files, compact)
        indexed: list[Sequence[Any]] = []
        if ranges is None:  # file by file over the whole scope
            unclean = sorted(base_files)
        else:
            indexed = _indexed_rows(conn, ref.tbl_id, ranges, data_tree, predicate, types,
                                    set(base_files).difference(unclean))
        scanned = _scanned_slices(conn, ref.tbl_id, self.snapshot.latest_in(conn, ref.tbl_id, unclean)
                                  if unclean else [], unclean, data_tree, predicate, types)
        return _answer(ref, scanned, indexed, total, base_files, compact)

    def _table(self, conn: Connection, db: str, tbl: str, leaves: list[str] | None) -> tuple[
            HudiTableRef, dict[str, str], set[str], int, list | None]:
        """The Hudi table, its columns' types, its partition keys, its number of partitions (1 when
        unpartitioned) and, unless `leaves` is None, the facts of all its partitions with a flag
        per column of `leaves` (rows of _facts_statement), in one statement."""
        shape = None if leaves is None else len(leaves)
        sql = self._table_sql.get(shape)
        if sql is None:
            extra = _table_facts(self.store.backend)
            if leaves is not None:
                ss = S.snapshot_stats
                flags = _clean_flags(ss.c.tbl_id, [bindparam(f"c{i}") for i in range(len(leaves))])
                backend = self.store.backend
                extra.append(select(as_text(backend, json_rows(backend, ss.c.partition_path, ss.c.base_files, *flags)))
                             .where(ss.c.tbl_id == S.tbl.c.tbl_id).scalar_subquery())
            q = HudiTables.table_statement(extra)
            sql = self._table_sql[shape] = DriverStatement(q, conn)
            self._table_rows[shape] = namedtuple("HudiTableFacts", q.selected_columns.keys(), rename=True)
        values = sql.first(conn, {**table_names(db, tbl), **{f"c{i}": c for i, c in enumerate(leaves or [])}})
        if values is None:
            raise no_such_table(db, tbl)
        row = self._table_rows[shape](*values)
        types, part_keys = _column_types(row.extra_0)
        return (ref_of(row), types, part_keys, int(row.extra_1 or 0) if part_keys else 1,
                None if leaves is None else [(r[0], r[1], *map(_json_true, r[2:])) for r in rows_of(row.extra_2)])

    def _partition_facts(self, conn: Connection, tbl_id: int, columns: list[str]) -> tuple[dict[str, int], list[str]]:
        """_partition_facts_in over every partition, its statement compiled once per number of columns."""
        sql = self._facts_sql.get(len(columns))
        if sql is None:
            sql = self._facts_sql[len(columns)] = DriverStatement(_facts_statement(
                bindparam("tbl_id"), [bindparam(f"c{i}") for i in range(len(columns))]), conn)
        return _facts(sql.all(conn, {"tbl_id": tbl_id, **{f"c{i}": c for i, c in enumerate(columns)}}),
                      range(len(columns)))


def _table_facts(backend: str) -> list:
    """Read with the table's row: its current schema's columns (is partition key, name, type) as a
    JSON aggregate, and its number of HMS partitions."""
    sc, t = S.schema, S.tbl
    columns = select(as_text(backend, json_rows(backend, sc.c.is_partition_col, sc.c.name, sc.c.type))).where(
        sc.c.tbl_id == t.c.tbl_id, sc.c.version == t.c.schema_version).scalar_subquery()
    partitions = select(func.count()).where(S.partitions.c.tbl_id == t.c.tbl_id).scalar_subquery()
    return [columns, partitions]


def _column_types(columns_json) -> tuple[dict[str, str], set[str]]:
    """({column: Hive type} of the table's current schema, partition keys), names lower-cased."""
    types: dict[str, str] = {}
    keys: set[str] = set()
    for is_key, name, type_ in rows_of(columns_json):
        types[name.lower()] = type_
        if is_key:
            keys.add(name.lower())
    return types, keys


def _answer(ref: HudiTableRef, kept: list[FileSlice], rows: list[Sequence[Any]], total_partitions: int,
            base_files: dict[str, int], compact: bool) -> PrunedSlices:
    """The kept slices, and kept base files without log files as `files` rows (FILE_COLUMNS);
    `base_files`: the latest base files of each partition that may be kept."""
    if compact:
        rest = [s for s in kept if s.log_files or s.base_file is None]
        if len(rest) < len(kept):
            rows = rows + [_row_of(s.base_file) for s in kept if not s.log_files and s.base_file is not None]
        kept = rest
    elif rows:
        kept = kept + [FileSlice(r[0], r[1], r[4], file_info_of(r), []) for r in rows]
        rows = []
    kept.sort(key=lambda s: (s.partition_path, s.file_id))
    locate_slices(ref, kept)
    parts = {s.partition_path for s in kept}.union(r[0] for r in rows)
    bases = sum(s.base_file is not None for s in kept) + len(rows)
    considered = max(sum(base_files.get(p, 0) for p in parts), bases)
    return PrunedSlices(kept, considered - bases, max(total_partitions - len(parts), 0), considered,
                        _columns(ref, rows) if compact else None)


def _row_of(f: FileInfo) -> tuple:
    """A FileInfo back as its FILE_COLUMNS row."""
    return f.partition_path, f.file_id, f.name, f.size, f.base_instant, f.is_log, f.log_version, f.commit_ts


def _columns(ref: HudiTableRef, rows: list[Sequence[Any]]) -> BaseFiles:
    """Base files as columns, ordered by (partition, file id), with their full paths."""
    if not rows:
        return BaseFiles([], [], [], [], [], [], [])
    rows = sorted(rows, key=lambda r: (r[0], r[1]))
    parts, fids, names, sizes, instants, _, _, commits = map(list, zip(*rows))
    where = locator(ref)
    paths = [""] * len(rows) if where is None else list(map(where, parts, names))
    return BaseFiles(parts, fids, instants, names, sizes, commits, paths)


def _facts_statement(tbl_id: Any, columns: list[Any]) -> Select[Any]:
    """Each partition with latest slices (its snapshot_stats row), its number of latest base files,
    and for each column whether every latest slice there has statistics of it."""
    ss = S.snapshot_stats
    return select(ss.c.partition_path, ss.c.base_files, *_clean_flags(tbl_id, columns)).where(ss.c.tbl_id == tbl_id)


def _clean_flags(tbl_id: Any, columns: list[Any]) -> list:
    """Per column: EXISTS, for the snapshot_stats row in the enclosing query, a partition
    statistics row of that column with no file lacking statistics, in a partition whose latest
    slices are base files only (the index path answers base files; slices with log files are
    evaluated file by file)."""
    pcs, ss = S.partition_column_stats, S.snapshot_stats
    return [select(pcs.c.partition_path).where(
        pcs.c.tbl_id == tbl_id, pcs.c.partition_path == ss.c.partition_path, pcs.c.column_name == col,
        pcs.c.files_without_stats == 0, ss.c.num_files == ss.c.base_files).exists() for col in columns]


def _facts(rows: Sequence[Sequence[Any]], flags: Iterable[int]) -> tuple[dict[str, int], list[str]]:
    """({partition: latest base files}, partitions where a column of `flags` (positions among a
    row's flags) lacks statistics) of rows (partition, base files, flag, flag, ...)."""
    at = [2 + i for i in flags]
    return {r[0]: int(r[1]) for r in rows}, sorted(r[0] for r in rows if not all(r[i] for i in at))


def _partition_facts_in(conn: Connection, tbl_id: int, columns: list[str],
                        scope: list[str]) -> tuple[dict[str, int], list[str]]:
    """The partitions of `scope` with latest slices, each with its number of latest base files,
    and those of them where some latest slice gives no statistics for one of `columns` (the index
    cannot answer for them). One statement per chunk of the scope."""
    q = _facts_statement(tbl_id, columns)
    ss = S.snapshot_stats
    return _facts([r for i in range(0, len(scope), _CHUNK)
                   for r in conn.execute(q.where(ss.c.partition_path.in_(scope[i:i + _CHUNK])))], range(len(columns)))


def _indexed_rows(conn: Connection, tbl_id: int, ranges: list[Range], tree: Node, text: str,
                  types: dict[str, str], clean: set[str]) -> list[Sequence[Any]]:
    """Latest slices of the `clean` partitions whose base file may match, as the base files'
    `files` rows (FILE_COLUMNS): candidates by the fork index that are their group's latest file
    (in a clean partition no latest slice has log files: _clean_flags), checked against the whole
    predicate in SQL."""
    f, rg = S.files, S.replaced_file_groups
    if not ranges:
        return []
    # candidates of one column are that column's statistics rows: its leaves are checked on them
    held = ranges[0][0] if len({c for c, _, _ in ranges}) == 1 else None
    params: dict[str, Any] = {}
    rows: Sequence[Sequence[Any]]
    cond = None if held is None else _held_keep(tree, types, held, params)
    if cond is not None:  # the common case, as SQL text on the driver's cursor
        probes = _candidate_sql(tbl_id, ranges, params)
        sql = _INDEXED_MYSQL if conn.dialect.name in ("mysql", "mariadb") else _INDEXED
        rows = _run_text(conn, sql.format(candidates=probes, keep=cond), {**params, "no": False})
    else:
        candidates = _candidates(tbl_id, ranges)
        stats, newer = _STATS, _NEWER

        def stats_rows(column: str):
            return select(stats.c.column_name).where(stats.c.file_row_id == f.c.id, stats.c.column_name == column)

        keep = keep_condition(tree, text, types, stats, stats_rows,
                              lambda column: candidates if column == held else None)
        q = select(*FILE_COLUMNS).select_from(candidates.join(f, f.c.id == candidates.c.file_row_id)).where(
            f.c.is_deleted.is_(False), f.c.is_log.is_(False), keep,  # files by primary key, never a table scan
            ~select(newer.c.id).where(newer.c.tbl_id == tbl_id, newer.c.partition_path == f.c.partition_path,
                                      newer.c.file_id == f.c.file_id, newer.c.base_instant > f.c.base_instant,
                                      newer.c.is_deleted.is_(False)).exists(),
            ~select(rg.c.id).where(rg.c.tbl_id == tbl_id, rg.c.partition_path == f.c.partition_path,
                                   rg.c.file_id == f.c.file_id).exists())
        rows = conn.execute(q).all()
    out: dict[tuple[str, str], Sequence[Any]] = {}  # a file in several ranges comes once per range
    for r in rows:  # FILE_COLUMNS: partition path, file id, name, size, base instant, ...
        if r[0] in clean:
            out[(r[0], r[1])] = r
    return list(out.values())


_STATS = S.column_stats.alias("k")  # built once: an alias makes its columns on first use
_NEWER = S.files.alias("g")
_HELD = "file_row_id, min_key, max_key, null_count, value_count"


def _candidates(tbl_id: int, ranges: list[Range]):
    """_candidate_sql as a subquery."""
    params: dict[str, Any] = {}
    sql = _candidate_sql(tbl_id, ranges, params)
    binds = [bindparam(k, v, type_=LargeBinary() if isinstance(v, bytes) else None) for k, v in params.items()]
    return text(sql).bindparams(*binds).columns(
        file_row_id=BigInteger, min_key=LargeBinary, max_key=LargeBinary, null_count=BigInteger,
        value_count=BigInteger).subquery()


def _candidate_sql(tbl_id: int, ranges: list[Range], params: dict[str, Any]) -> str:
    """The statistics rows (file_row_id, bounds, counts) the fork index gives for `ranges`, as SQL
    text (its parameters added to `params`): one index range per column and prefix length; the
    prefix lengths at which a range's bounds no longer change (past the bounds' own lengths) share
    one probe, `fork_len IN (...)`, which the index still seeks once per length. Text: the probes
    built as expressions cost more than the database takes to run them."""
    probes: list[str] = []
    params["t"] = tbl_id
    for i, (col, lo, hi) in enumerate(ranges):
        params[f"c{i}"] = col
        lengths: dict[tuple[bytes | None, bytes | None], list[int]] = {}  # the bounds at a length -> lengths
        for n in range(FORK_BYTES + 1):
            lengths.setdefault((None if lo is None else lo[:n], None if hi is None else hi[:n]), []).append(n)
        for j, ((low, high), ns) in enumerate(lengths.items()):
            cond = f"tbl_id = :t AND column_name = :c{i} AND " + (
                f"fork_len = {ns[0]}" if len(ns) == 1 else f"fork_len IN ({', '.join(map(str, ns))})")
            if low is not None:
                cond += f" AND fork_key >= :l{i}_{j}"
                params[f"l{i}_{j}"] = low
            if high is not None:
                cond += f" AND fork_key <= :h{i}_{j}"
                params[f"h{i}_{j}"] = high
            probes.append(f"SELECT {_HELD} FROM column_stats WHERE {cond}")
    return " UNION ALL ".join(probes)


# _indexed_rows as text: the candidates (k) by primary key into files (never a table scan), each
# kept when its group has no newer base file and is not replaced
_FILE_ROW = "f.partition_path, f.file_id, f.name, f.size, f.base_instant, f.is_log, f.log_version, f.created_ts"
_INDEXED = "SELECT " + _FILE_ROW + """
FROM ({candidates}) k JOIN files f ON f.id = k.file_row_id
WHERE f.is_deleted = :no AND f.is_log = :no AND {keep}
AND NOT EXISTS (SELECT g.id FROM files g WHERE g.tbl_id = :t AND g.partition_path = f.partition_path
  AND g.file_id = f.file_id AND g.base_instant > f.base_instant AND g.is_deleted = :no)
AND NOT EXISTS (SELECT r.id FROM replaced_file_groups r WHERE r.tbl_id = :t
  AND r.partition_path = f.partition_path AND r.file_id = f.file_id)"""
# the same as anti-joins, which MariaDB runs in about 60% of the time of its correlated subqueries
# (its "Not exists": the probe stops at the first match)
_INDEXED_MYSQL = "SELECT " + _FILE_ROW + """
FROM ({candidates}) k JOIN files f ON f.id = k.file_row_id
LEFT JOIN files g ON g.tbl_id = :t AND g.partition_path = f.partition_path AND g.file_id = f.file_id
  AND g.base_instant > f.base_instant AND g.is_deleted = :no
LEFT JOIN replaced_file_groups r ON r.tbl_id = :t AND r.partition_path = f.partition_path AND r.file_id = f.file_id
WHERE f.is_deleted = :no AND f.is_log = :no AND {keep} AND g.id IS NULL AND r.id IS NULL"""

# a leaf's prune test on the held statistics row k ({0}: the key parameter), as leaf_prune builds it
_HELD_TESTS = {"=": "(k.min_key > {0} OR k.max_key < {0})", "<": "k.min_key >= {0}", "<=": "k.min_key > {0}",
               ">": "k.max_key <= {0}", ">=": "k.max_key < {0}"}
_ALL_NULL = "k.null_count = k.value_count"
_STATEMENTS: dict[tuple[str, str], DriverStatement] = {}  # (dialect, SQL) -> compiled for the driver
_STATEMENTS_KEPT = 256


def _held_keep(node: Node, types: dict[str, str], column: str, params: dict[str, Any]) -> str | None:
    """keep_condition as SQL text over the held statistics row k of `column` (its key parameters
    added to `params`), for a predicate of =, <, <=, >, >=, IN and BETWEEN leaves on that column
    under AND and OR; None for any other predicate."""
    if isinstance(node, (And, Or)):
        items = [_held_keep(i, types, column, params) for i in node.items]
        if any(i is None for i in items):
            return None
        return "(" + (" AND " if isinstance(node, And) else " OR ").join(items) + ")"  # type: ignore[arg-type]
    assert isinstance(node, Leaf)
    if node.key != column or node.op not in ("=", "<", "<=", ">", ">=", "IN", "BETWEEN"):
        return None
    try:
        keys = [encode_key(types[column], v.value) for v in node.values]
    except ValueError:
        return None  # refused by keep_condition, with its message
    if any(k is None for k in keys):
        return "1 = 1"  # statistics cannot tell
    names = []
    for k in keys:
        name = f"k{len(params)}"
        params[name] = k
        names.append(f":{name}")
    if node.op in _HELD_TESTS:
        test = _HELD_TESTS[node.op].format(names[0])
    elif node.op == "IN":
        test = "(" + " AND ".join(_HELD_TESTS["="].format(n) for n in names) + ")"
    else:  # BETWEEN; an empty range (low above high) prunes every file
        test = f"k.min_key > {names[1]} OR k.max_key < {names[0]}" + (" OR 1 = 1" if keys[0] > keys[1] else "")  # type: ignore[operator]
    return f"NOT COALESCE(({_ALL_NULL} OR {test}), 1 = 0)"


def _run_text(conn: Connection, sql: str, params: dict[str, Any]) -> list[tuple]:
    """SQL text with named parameters, compiled once per dialect and text, run on the driver's cursor."""
    key = (conn.dialect.name, sql)
    stmt = _STATEMENTS.get(key)
    if stmt is None:
        stmt = DriverStatement(text(sql), conn)
        if statement_cache.small(len(params), len(sql)):
            if len(_STATEMENTS) >= _STATEMENTS_KEPT:
                _STATEMENTS.clear()
            _STATEMENTS[key] = stmt  # a predicate of thousands of values is not kept (issue 41)
    return stmt.all(conn, params)


def _scanned_slices(conn: Connection, tbl_id: int, slices: list[FileSlice], parts: list[str], tree: Node,
                    text: str, types: dict[str, str]) -> list[FileSlice]:
    """The slices of `parts` a file-by-file evaluation keeps: a slice is skipped when its base file
    and every log file are (a slice without a base file is kept)."""
    if not slices:
        return []
    skipped = _skipped_files(conn, tbl_id, parts, tree, text, types)
    return [s for s in slices if s.base_file is None or (s.partition_path, s.base_file.name) not in skipped
            or any((s.partition_path, lf.name) not in skipped for lf in s.log_files)]


def _skipped_files(conn: Connection, tbl_id: int, parts: list[str], tree: Node, text: str,
                   types: dict[str, str]) -> set[tuple[str, str]]:
    f, cs = S.files, S.column_stats

    def rows(column: str):
        return select(cs.c.column_name).where(cs.c.file_row_id == f.c.id, cs.c.column_name == column)

    keep = keep_condition(tree, text, types, cs, rows)
    out: set[tuple[str, str]] = set()
    for i in range(0, len(parts), _CHUNK):
        q = select(f.c.partition_path, f.c.name).where(
            f.c.tbl_id == tbl_id, f.c.partition_path.in_(parts[i:i + _CHUNK]), f.c.is_deleted.is_(False), ~keep)
        out.update((r.partition_path, r.name) for r in conn.execute(q))
    return out


def _ranges(node: Node, types: dict[str, str]) -> list[Range] | None:
    """Key ranges covering every file a predicate may keep through its statistics (a file outside
    them is pruned by some leaf), or None when the predicate gives none."""
    if isinstance(node, Leaf):
        return _leaf_ranges(node, types)
    if isinstance(node, Or):
        out: list[Range] = []
        for item in node.items:
            r = _ranges(item, types)
            if r is None:
                return None
            out += r
        return _capped(out)
    assert isinstance(node, And)
    by_column: dict[str, list[Range]] = {}
    mixed: list[list[Range]] = []
    for item in node.items:
        r = _ranges(item, types)
        if r is None:
            continue
        cols = {c for c, _, _ in r}
        if len(cols) == 1:
            col = cols.pop()
            by_column[col] = r if col not in by_column else _intersect(by_column[col], r)
        else:
            mixed.append(r)
    options = list(by_column.values()) + mixed
    if not options:
        return None
    closed = [o for o in options if all(lo is not None and hi is not None for _, lo, hi in o)]
    return min(closed or options, key=len)


def _leaf_ranges(leaf: Leaf, types: dict[str, str]) -> list[Range] | None:
    hive_type = types.get(leaf.key)
    if hive_type is None or not is_indexable(hive_type):
        return None
    op, col = leaf.op, leaf.key
    if op == "LIKE":
        found = like_prefix(leaf, hive_type)
        if found is None:
            return None
        prefix, exact = found
        return [(col, prefix, prefix if exact else prefix_successor(prefix))]
    if op not in ("=", "<", "<=", ">", ">=", "IN", "BETWEEN"):
        return None
    try:
        keys = [encode_key(hive_type, v.value) for v in leaf.values]
    except ValueError:
        return None
    if any(k is None for k in keys):
        return None
    if op in ("=", "IN"):
        return _capped([(col, k, k) for k in keys])
    if op in ("<", "<="):
        return [(col, None, keys[0])]
    if op in (">", ">="):
        return [(col, keys[0], None)]
    lo, hi = keys[0], keys[1]
    return [] if lo > hi else [(col, lo, hi)]  # type: ignore[operator]


def _intersect(a: list[Range], b: list[Range]) -> list[Range]:
    out = []
    for col, lo1, hi1 in a:
        for _, lo2, hi2 in b:
            lo = lo1 if lo2 is None else lo2 if lo1 is None else max(lo1, lo2)
            hi = hi1 if hi2 is None else hi2 if hi1 is None else min(hi1, hi2)
            if lo is None or hi is None or lo <= hi:
                out.append((col, lo, hi))
    return _capped(out)


def _capped(ranges: list[Range]) -> list[Range]:
    """At most _MAX_RANGES per column: more are replaced by their span."""
    by_col: dict[str, list[Range]] = {}
    for r in ranges:
        by_col.setdefault(r[0], []).append(r)
    out: list[Range] = []
    for col, rs in by_col.items():
        if len(rs) <= _MAX_RANGES:
            out += rs
            continue
        los, his = [r[1] for r in rs], [r[2] for r in rs]
        out.append((col, None if None in los else min(los), None if None in his else max(his)))  # type: ignore[type-var]
    return out


def _json_true(value: Any) -> bool:
    """A boolean as a backend's JSON holds it: true (PostgreSQL), 1 (SQLite), "1" (MariaDB)."""
    return value is True or value == 1 or value == "1"


def _leaf_keys(node: Node) -> set[str]:
    if isinstance(node, (And, Or)):
        return set().union(*(_leaf_keys(i) for i in node.items))
    assert isinstance(node, Leaf)
    return {node.key}


def _check_columns(node: Node, text: str, types: dict[str, str]) -> None:
    if isinstance(node, (And, Or)):
        for i in node.items:
            _check_columns(i, text, types)
    elif isinstance(node, Leaf) and node.key not in types:
        raise FilterError(f"{node.key} is not a column of the table (columns: {', '.join(types)})", text, node.pos)


def _filter_text(node: Node) -> str:
    """A tree of partition-key leaves back as Hive filter text (for the partition index)."""
    if isinstance(node, (And, Or)):
        sep = " AND " if isinstance(node, And) else " OR "
        return "(" + sep.join(_filter_text(i) for i in node.items) + ")"
    assert isinstance(node, Leaf)
    lits = [_literal(v.kind, v.text) for v in node.values]
    key = f"`{node.key}`"
    if node.op in ("IN", "NOT IN"):
        return f"{key} {node.op} ({', '.join(lits)})"
    if node.op in ("BETWEEN", "NOT BETWEEN"):
        return f"{key} {node.op} {lits[0]} AND {lits[1]}"
    return f"{key} {node.op} {lits[0]}"


def _literal(kind: str, text: str) -> str:
    if kind == "int":
        return text
    prefix = {"date": "DATE ", "timestamp": "TIMESTAMP "}.get(kind, "")
    quote = "'" if "'" not in text else '"'
    return f"{prefix}{quote}{text}{quote}"
