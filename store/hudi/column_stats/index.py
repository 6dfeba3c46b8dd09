"""Column statistics of base files and log files (RFC-27 column stats index) as commits change them:
stored in the transaction that completes the instant, removed when clean, rollback or replace remove
their files, and summed per partition (RFC-27 partition entries) for the partitions a change touches.
A slice with log files counts as having statistics when its base file and every log file have them
(bounds: their union; counts: their sums, which bound the merged rows' from above).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from operator import itemgetter
from typing import Any, NamedTuple

from sqlalchemy import Connection, Row, delete, func, select, text

from hudi_format.file_slice import parse_file_name, split_path
from store.db import schema as S
from store.db.bulk import insert_rows
from store.db.dialect import in_list, pair_chunks, pg_joined_list
from store.errors import InvalidObject
from store.hms.common import check_rows, wire_checking
from store.hudi.column_stats.codec import fork, lower_bound, upper_bound
from store.hudi.column_stats.latest_files import LatestFiles
from store.hudi.file_listing import WrittenFiles, latest_version, names_in
from store.hudi.tables import HudiTableRef

_CHUNK = 500
_ARRAY_CHUNK = 20_000


def _in(conn: Connection, col, values):
    """`col IN values`, as one array parameter on PostgreSQL (store/db/dialect.py in_list)."""
    return in_list(conn.dialect.name, col, values)
_FILE_STATS = ("file_row_id", "tbl_id", "total_size", "uncompressed_size", "num_rows")
_FILE_STATS_PG = ("int8", "int8", "int8", "int8", "int8")
_COLUMN_STATS = ("file_row_id", "tbl_id", "column_name", "min_key", "max_key", "null_count", "value_count",
                 "fork_len", "fork_key", "total_size", "uncompressed_size")
_COLUMN_STATS_PG = ("int8", "int8", "text", "bytea", "bytea", "int8", "int8", "int2", "bytea", "int8", "int8")


class _Sizes(NamedTuple):
    """A base file's file_stats row, as the statistics upkeep uses it."""
    file_row_id: int
    uncompressed_size: int
    num_rows: int | None


class _Bounds(NamedTuple):
    """A base file's column_stats row, as the statistics upkeep uses it."""
    file_row_id: int
    column_name: str
    min_key: bytes | None
    max_key: bytes | None
    null_count: int | None
    value_count: int | None


@dataclass
class Seen:
    """What slices_before found for a write commit: the table's version and each group's latest
    files (latest_files.FileRow tuples; none for a group without live files)."""
    version: int = 0
    rows: dict[tuple[str, str], tuple] = field(default_factory=dict)


class _Written(NamedTuple):
    """A file a write instant wrote, as its slice holds it."""
    name: str
    file_id: str
    base_instant: str
    is_log: bool
    size: int


# (partition, file name) -> (file row id, sizes, bounds by column) of statistics a commit stored
Recorded = dict[tuple[str, str], tuple[int, _Sizes, dict[str, _Bounds]]]


@dataclass(frozen=True)
class ColumnBounds:
    column: str
    min_key: bytes | None  # order-preserving keys (codec.py)
    max_key: bytes | None
    null_count: int | None
    value_count: int | None
    total_size: int | None = None  # the column chunks' bytes (compressed), over the row groups
    uncompressed_size: int | None = None


@dataclass(frozen=True)
class FileColumnStats:
    partition_path: str
    file_name: str
    total_size: int
    uncompressed_size: int
    columns: list[ColumnBounds] = field(default_factory=list)


class ColumnStats:
    def __init__(self) -> None:
        self.latest = LatestFiles()  # each group's latest files, between this server's commits

    def record(self, conn: Connection, ref: HudiTableRef, ts: str, stats: list[FileColumnStats]) -> Recorded:
        """Statistics of the files instant `ts` created (base files, new log files; inside its
        completing transaction); what was stored, by (partition, file name)."""
        if not stats:
            return {}
        ids = self._written_ids(conn, ref, ts, stats)
        pairs = []
        for st in stats:
            row_id = ids.get((st.partition_path, st.file_name))
            if row_id is None:
                raise InvalidObject(f"Column statistics for {st.partition_path}/{st.file_name}, "
                                    f"a file the commit {ts} does not create (statistics of a log file "
                                    f"appended to again would cover only the new blocks)")
            pairs.append((row_id, st))
        stored = self._insert(conn, ref, pairs)
        return {(st.partition_path, st.file_name): (row_id, *stored[row_id]) for row_id, st in pairs}

    def record_existing(self, conn: Connection, ref: HudiTableRef, stats: list[FileColumnStats],
                        stored: list[int] | None = None) -> int:
        """Statistics of live files already in the snapshot (adoption: import-hudi and the catch-up
        read them from base files' footers and log files' blocks); files that have statistics keep
        theirs. A log file's are stored only when the size they were read at (`total_size`) is the
        size the table records for it (a log file appended to since holds blocks they do not
        cover: it keeps none). The number stored (their `files` row ids appended to `stored`); the
        touched partitions' aggregates are recomputed."""
        f, fs = S.files, S.file_stats
        ids: dict[tuple[str, str], int] = {}
        have: set[int] = set()
        stale: set[int] = set()
        sizes = {(st.partition_path, st.file_name): st.total_size for st in stats}
        for chunk in pair_chunks((st.partition_path, st.file_name) for st in stats):
            wanted = set(chunk)
            q = select(f.c.id, f.c.partition_path, f.c.name, f.c.is_log, f.c.size, fs.c.file_row_id).select_from(
                f.outerjoin(fs, fs.c.file_row_id == f.c.id)).where(
                f.c.tbl_id == ref.tbl_id, names_in(conn.dialect.name, chunk, live=True))
            for r in conn.execute(q):
                if (r.partition_path, r.name) not in wanted:
                    continue
                ids[(r.partition_path, r.name)] = r.id
                if r.file_row_id is not None:
                    have.add(r.id)
                if r.is_log and (not r.size or r.size != sizes[(r.partition_path, r.name)]):
                    stale.add(r.id)
        pairs, seen = [], set()
        for st in stats:
            row_id = ids.get((st.partition_path, st.file_name))
            if row_id is None:
                raise InvalidObject(f"Column statistics for {st.partition_path}/{st.file_name}, "
                                    f"not a live file of {ref.db_name}.{ref.name}")
            if row_id not in have and row_id not in seen and row_id not in stale:
                seen.add(row_id)
                pairs.append((row_id, st))
        groups = self._groups_of_ids(conn, [row_id for row_id, _ in pairs])
        before = self.slices_of(conn, ref, groups)
        self._insert(conn, ref, pairs)
        self.update_groups(conn, ref, before, self.slices_of(conn, ref, groups))
        if stored is not None:
            stored.extend(row_id for row_id, _ in pairs)
        return len(pairs)

    def forget_appended(self, conn: Connection, ref: HudiTableRef, written: WrittenFiles,
                        before: Slices | None = None) -> None:
        """Drop the statistics of the log files among `written` that the table holds already (an
        instant appends to them again): they no longer cover the file's records, so their slices
        are kept by every predicate. `before`: the groups' slices before the instant, whose
        deferred partitions are read first (while the statistics are still there)."""
        f, fs = S.files, S.file_stats
        logs = [k for k, entry in written.items() if entry[2]]
        ids: dict[int, str] = {}
        for chunk in pair_chunks(logs):
            wanted = set(chunk)
            q = select(f.c.id, f.c.partition_path, f.c.name).select_from(
                f.join(fs, fs.c.file_row_id == f.c.id)).where(
                f.c.tbl_id == ref.tbl_id, names_in(conn.dialect.name, chunk))
            ids.update((r.id, r.partition_path) for r in conn.execute(q) if (r.partition_path, r.name) in wanted)
        if not ids:
            return
        if before is not None and before.unread:
            self._read_unread(conn, before, sorted(set(ids.values())))
        rows = sorted(ids)
        for i in range(0, len(rows), _CHUNK):
            conn.execute(delete(S.column_stats).where(_in(conn, S.column_stats.c.file_row_id, rows[i:i + _CHUNK])))
            conn.execute(delete(fs).where(_in(conn, fs.c.file_row_id, rows[i:i + _CHUNK])))

    @staticmethod
    def _groups_of_ids(conn: Connection, ids: list[int]) -> set[tuple[str, str]]:
        f = S.files
        out: set[tuple[str, str]] = set()
        for i in range(0, len(ids), _CHUNK):
            out.update((r.partition_path, r.file_id) for r in conn.execute(
                select(f.c.partition_path, f.c.file_id).where(_in(conn, f.c.id, ids[i:i + _CHUNK]))))
        return out

    @staticmethod
    def _insert(conn: Connection, ref: HudiTableRef, pairs: list[tuple[int, FileColumnStats]]
                ) -> dict[int, tuple[_Sizes, dict[str, _Bounds]]]:
        """Store the statistics; what was stored per file row (as `_read_slices` reads it back)."""
        file_rows: list[tuple] = []
        col_rows: list[tuple] = []
        stored: dict[int, tuple[_Sizes, dict[str, _Bounds]]] = {}
        for row_id, st in pairs:
            num_rows = max((c.value_count for c in st.columns if c.value_count is not None), default=None)
            file_rows.append((row_id, ref.tbl_id, st.total_size, st.uncompressed_size, num_rows))
            bounds: dict[str, _Bounds] = {}
            stored[row_id] = (_Sizes(row_id, st.uncompressed_size, num_rows), bounds)
            for c in st.columns:
                lo, hi = lower_bound(c.min_key), upper_bound(c.max_key)
                fork_len, fork_key = fork(lo, hi)
                name = c.column.lower()
                col_rows.append((row_id, ref.tbl_id, name, lo, hi, c.null_count, c.value_count,
                                 fork_len, fork_key, c.total_size, c.uncompressed_size))
                bounds[name] = _Bounds(row_id, name, lo, hi, c.null_count, c.value_count)
        # the driver's bulk path (store/db/bulk.py); column names were checked against the schema's
        # width by adapter/handlers/column_stats_thrift.py
        insert_rows(conn, S.file_stats, _FILE_STATS, file_rows, None, pg_types=_FILE_STATS_PG)
        insert_rows(conn, S.column_stats, _COLUMN_STATS, col_rows, None, pg_types=_COLUMN_STATS_PG)
        return stored

    @staticmethod
    def files_without_stats(conn: Connection, ref: HudiTableRef, limit: int = 0, logs: bool = False) -> list[str]:
        """Base files of the latest slices that have no statistics (paths relative to the base path);
        with `logs` also their log files that have none."""
        f, fs, rg = S.files, S.file_stats, S.replaced_file_groups
        replaced = {(r.partition_path, r.file_id) for r in conn.execute(
            select(rg.c.partition_path, rg.c.file_id).where(rg.c.tbl_id == ref.tbl_id))}
        live = conn.execute(select(f.c.id, f.c.partition_path, f.c.file_id, f.c.base_instant, f.c.is_log, f.c.size,
                                   f.c.name, fs.c.file_row_id.label("has_stats")).select_from(
            f.outerjoin(fs, fs.c.file_row_id == f.c.id)).where(
            f.c.tbl_id == ref.tbl_id, f.c.is_deleted.is_(False))).all()
        rows = {r.id: r for r in live}
        out = []
        for sl in _latest_slices([r for r in live if (r.partition_path, r.file_id) not in replaced]):
            wanted = ((sl.base_id,) if sl.base_id is not None else ()) + (sl.log_ids if logs else ())
            for file_row in wanted:
                r = rows[file_row]
                if r.has_stats is None:
                    out.append(f"{r.partition_path}/{r.name}" if r.partition_path else r.name)
        out.sort()
        return out[:limit] if limit > 0 else out

    @staticmethod
    def _written_ids(conn: Connection, ref: HudiTableRef, ts: str,
                     stats: list[FileColumnStats]) -> dict[tuple[str, str], int]:
        f = S.files
        wanted = {(st.partition_path, st.file_name) for st in stats}
        # one statement: the files the instant created (ix_files_created), those asked for kept
        return {(r.partition_path, r.name): r.id for r in conn.execute(
            select(f.c.id, f.c.partition_path, f.c.name).where(f.c.tbl_id == ref.tbl_id, f.c.created_ts == ts))
            if (r.partition_path, r.name) in wanted}

    def forget_removed(self, conn: Connection, ref: HudiTableRef, partitions: Iterable[str],
                       groups: set[tuple[str, str]] | None = None,
                       before: Slices | None = None) -> None:
        """Drop the statistics of the deleted files of these partitions (a clean or rollback removed
        them), then bring the partitions' aggregates up to date: from the change of `groups`
        (`before`: their slices before it) when given, else recomputed whole. Replaced file groups
        keep theirs until cleaned (the aggregates cover the latest view only)."""
        f = S.files
        parts = sorted(set(partitions))
        for i in range(0, len(parts), _CHUNK):
            gone = select(f.c.id).join(S.file_stats, S.file_stats.c.file_row_id == f.c.id).where(
                f.c.tbl_id == ref.tbl_id, _in(conn, f.c.partition_path, parts[i:i + _CHUNK]), f.c.is_deleted.is_(True))
            ids = [r.id for r in conn.execute(gone)]
            for j in range(0, len(ids), _CHUNK):
                conn.execute(delete(S.column_stats).where(_in(conn, S.column_stats.c.file_row_id, ids[j:j + _CHUNK])))
                conn.execute(delete(S.file_stats).where(_in(conn, S.file_stats.c.file_row_id, ids[j:j + _CHUNK])))
        if groups is None or before is None:
            self.refresh_partitions(conn, ref, parts)
        else:
            self.update_groups(conn, ref, before, self.slices_of(conn, ref, groups))

    @staticmethod
    def partitions_of_instants(conn: Connection, ref: HudiTableRef, instants: list[str]) -> list[str]:
        """Partitions holding files written by these instants (before a rollback forgets them)."""
        if not instants:
            return []
        f = S.files
        return [r[0] for r in conn.execute(select(f.c.partition_path).distinct().where(
            f.c.tbl_id == ref.tbl_id, _in(conn, f.c.created_ts, instants)))]

    def refresh_partitions(self, conn: Connection, ref: HudiTableRef, partitions: list[str]) -> None:
        """Per partition: the Hive basic statistics of its latest file slices (snapshot_stats), and
        per column the bounds over the latest slices' statistics and how many latest slices give no
        usable bounds for it (files without statistics: the partition is then never skipped by that
        column)."""
        f, pcs, ss = S.files, S.partition_column_stats, S.snapshot_stats
        rg = S.replaced_file_groups
        for i in range(0, len(partitions), _CHUNK):
            chunk = partitions[i:i + _CHUNK]
            conn.execute(delete(pcs).where(pcs.c.tbl_id == ref.tbl_id, _in(conn, pcs.c.partition_path, chunk)))
            conn.execute(delete(ss).where(ss.c.tbl_id == ref.tbl_id, _in(conn, ss.c.partition_path, chunk)))
            replaced = {(r.partition_path, r.file_id) for r in conn.execute(
                select(rg.c.partition_path, rg.c.file_id).where(
                    rg.c.tbl_id == ref.tbl_id, _in(conn, rg.c.partition_path, chunk)))}
            live = conn.execute(select(f.c.id, f.c.partition_path, f.c.file_id, f.c.base_instant, f.c.is_log,
                                       f.c.size).where(
                f.c.tbl_id == ref.tbl_id, _in(conn, f.c.partition_path, chunk), f.c.is_deleted.is_(False))).all()
            read = self._read_slices(conn, _latest_slices([r for r in live
                                                           if (r.partition_path, r.file_id) not in replaced]))
            rows = [{"tbl_id": ref.tbl_id, "partition_path": p, "column_name": c, **agg.row(side.basic.slices)}
                    for p, side in read.sides.items() for c, agg in side.columns.items()]
            _insert_aggregates(conn, pcs, rows)
            _insert_aggregates(conn, ss, [{"tbl_id": ref.tbl_id, "partition_path": p, **side.basic.row()}
                                          for p, side in read.sides.items()])

    # --- incremental upkeep: only the file groups a change touches --------------------------------

    def groups_of(self, conn: Connection, ref: HudiTableRef, files: dict[str, list[str]]) -> set[tuple[str, str]]:
        """(partition, file id) of files named by partition (their names carry the file id)."""
        out = set()
        for partition, names in files.items():
            for name in names:
                try:
                    out.add((partition or "", parse_file_name(name.rsplit("/", 1)[-1])[0]))
                except ValueError:
                    continue
        return out

    @staticmethod
    def groups_of_stats(stats) -> set[tuple[str, str]]:
        """(partition, file id) of a commit's write stats, as the file listing records them (the id
        from the file name, the partition from the stat or else the path)."""
        out = set()
        for st in stats:
            partition, name = split_path(st.path)
            try:
                fid = parse_file_name(name)[0]
            except ValueError:
                continue
            out.add((st.partition_path if st.partition_path is not None else partition, fid))
        return out

    @staticmethod
    def groups_of_instants(conn: Connection, ref: HudiTableRef, instants: list[str]) -> set[tuple[str, str]]:
        if not instants:
            return set()
        f = S.files
        return {(r.partition_path, r.file_id) for r in conn.execute(select(f.c.partition_path, f.c.file_id).where(
            f.c.tbl_id == ref.tbl_id, _in(conn, f.c.created_ts, instants)))}

    def slices_of(self, conn: Connection, ref: HudiTableRef, groups: set[tuple[str, str]]) -> Slices:
        """The latest slices of these file groups (none for a replaced or empty group): what they add
        to their partitions' statistics."""
        return self.slices_before(conn, ref, groups)[0]

    def slices_before(self, conn: Connection, ref: HudiTableRef, groups: set[tuple[str, str]],
                      defer: bool = False, seen: Seen | None = None) -> tuple[Slices, set[tuple[str, str]]]:
        """`slices_of`, and which of the groups are replaced. With `defer` the statistics of the
        slices' base files are read only when update_groups needs them: not for a partition every
        latest slice of which the change replaces (its statistics are then the coming slices').
        `seen` (a write commit, PostgreSQL): gets the table's version and each group's latest
        files (latest_files.py)."""
        live, replaced = self.rows_before(conn, ref, groups, seen)
        return (self.unread_slices_of(live) if defer else self._read_slices(conn, _latest_slices(live))), replaced

    @staticmethod
    def unread_slices_of(live: list) -> Slices:
        """`slices_before(defer=True)` of the rows `rows_before` read: no statement."""
        return _unread_slices(_latest_slices(live))

    def rows_before(self, conn: Connection, ref: HudiTableRef, groups: set[tuple[str, str]],
                    seen: Seen | None = None) -> tuple[list[Row], set[tuple[str, str]]]:
        """The statements of `slices_before`: the groups' latest files (replaced groups left out),
        and which groups are replaced. `unread_slices_of` makes the deferred slices of them."""
        f, rg = S.files, S.replaced_file_groups
        by_partition: dict[str, list[str]] = {}
        for p, fid in groups:
            by_partition.setdefault(p, []).append(fid)
        parts = sorted(by_partition)
        live: list[Row] = []
        replaced: set[tuple[str, str]] = set()
        for i in range(0, len(parts), _CHUNK):
            replaced.update(k for k in map(tuple, conn.execute(select(rg.c.partition_path, rg.c.file_id).where(
                rg.c.tbl_id == ref.tbl_id, _in(conn, rg.c.partition_path, parts[i:i + _CHUNK]))))
                if k in groups)
        if conn.dialect.name == "postgresql":
            live = self._latest_pg(conn, ref, groups, seen)
            parts = []
        for p in parts:
            fids = sorted(by_partition[p])
            for i in range(0, len(fids), _CHUNK):
                # only each group's latest versions leave the database (files keep every version)
                inner = select(f.c.id, f.c.partition_path, f.c.file_id, f.c.base_instant, f.c.is_log, f.c.size,
                               func.max(f.c.base_instant).over(partition_by=f.c.file_id).label("latest")).where(
                    f.c.tbl_id == ref.tbl_id, f.c.partition_path == p, _in(conn, f.c.file_id, fids[i:i + _CHUNK]),
                    f.c.is_deleted.is_(False)).subquery()
                live.extend(conn.execute(select(inner).where(inner.c.base_instant == inner.c.latest)).all())
        if replaced:
            live = [r for r in live if (r[_PART], r[_FID]) not in replaced]
        return live, replaced

    def _latest_pg(self, conn: Connection, ref: HudiTableRef, groups: set[tuple[str, str]],
                   seen: Seen | None) -> list:
        """_latest_rows_pg of the groups, those the table's kept latest files know taken from them
        (only when `seen` asks: a write commit, which keeps them current)."""
        if seen is None:
            return _latest_rows_pg(conn, ref.tbl_id, sorted(groups))
        seen.version = latest_version(conn, ref.tbl_id)
        kept, missing = self.latest.rows(ref.tbl_id, seen.version, groups)
        probed = _latest_rows_pg(conn, ref.tbl_id, sorted(missing)) if missing else []
        if kept and wire_checking():  # the test suite: the kept rows are the table's
            fresh: dict[tuple[str, str], set] = {}
            for r in _latest_rows_pg(conn, ref.tbl_id, sorted(kept)):
                fresh.setdefault((r[_PART], r[_FID]), set()).add(tuple(r))
            for g, rows in kept.items():
                if set(rows) != fresh.get(g, set()):
                    raise AssertionError(f"kept latest files of {ref.db_name}.{ref.name} {g}: {rows}, "
                                         f"the table has {sorted(fresh.get(g, ()))}")
        found = seen.rows
        found.update(kept)
        for r in probed:
            g = (r[_PART], r[_FID])
            found[g] = (*found.get(g, ()), tuple(r))
        return [r for group in kept.values() for r in group] + probed

    def slices_after_write(self, conn: Connection, ref: HudiTableRef, ts: str, groups: set[tuple[str, str]],
                           before: Slices, replaced: set[tuple[str, str]],
                           written: WrittenFiles, recorded: Recorded) -> Slices:
        """`slices_of` after write instant `ts` recorded its files (`before`: the groups' slices
        before it; `replaced`: groups replaced before or by it; `written`: the files it wrote;
        `recorded`: the column statistics it stored). A group the instant wrote a new base file to,
        whose slice before it was older, now holds exactly the files the instant wrote on that base:
        those slices are built from what the instant itself wrote, without reading anything, so the
        cost follows the commit and not the table. A partition whose every written group only gained
        new log files, each with statistics, keeps them as an addition (`Slices.appended`), read
        again only if update_groups cannot add them. The other groups (log files appended to again,
        a pending compaction's log files, replaced groups) are read again."""
        mine: dict[tuple[str, str], tuple[str, bool, int]] = {}  # (name, is log, size) of a file on base `ts`
        several: set[tuple[str, str]] = set()  # groups the instant wrote more than one file on `ts` to
        logs: dict[tuple[str, str], list[_Written]] = {}
        prior = before.instants
        for (partition, name), (fid, base_instant, is_log, _ver, size) in written.items():
            if base_instant == ts:
                g = (partition, fid)
                if g in mine:
                    several.add(g)
                else:
                    mine[g] = (name, is_log, size)
            elif is_log and base_instant == prior.get((partition, fid)):
                logs.setdefault((partition, fid), []).append(_Written(name, fid, base_instant, is_log, size))
        out = Slices()
        appends = _appends(groups, replaced, mine, logs, recorded)
        for p, app in appends.items():
            out.appended[p] = app
            groups = groups - app.groups
        rest = groups - mine.keys()  # no file on a base of its own: read again
        instants = out.instants
        unsized: dict[str, list[int]] = {}  # partition -> [slices, bytes] of lone new base files without statistics
        for g, (name, is_log, size) in mine.items():
            if g not in groups:
                continue
            if is_log or g in several or g in replaced or prior.get(g, "") >= ts:
                rest.add(g)  # (a new base file with log files on it: read again, as rare as it is)
                continue
            rec = recorded.get((g[0], name)) if recorded else None
            if rec is None:  # a base file the instant stored no statistics for counts as one without
                instants[g] = ts
                acc = unsized.get(g[0])
                if acc is None:
                    unsized[g[0]] = [1, size]
                else:
                    acc[0] += 1
                    acc[1] += size
            else:
                out.add(g, ts, 1, size, True, False, rec[1], rec[2])
        for p, (n, size) in unsized.items():  # as n calls of out.add(g, ts, 1, size, True, False, None, None)
            side = out.sides.get(p)
            if side is None:
                side = out.sides[p] = _Side()
            side.basic.add_unsized(n, n, n, size)
        if rest:
            out.merge(self.slices_of(conn, ref, rest))
        return out

    @staticmethod
    def _read_slices(conn: Connection, slices: list[_Slice] | tuple[_Slice, ...]) -> Slices:
        """What each slice adds to its partition's statistics; the statistics of the files of slices
        with a base file are read (a slice with log files is usable when every file has some)."""
        fs, cs = S.file_stats, S.column_stats
        base_ids = [i for sl in slices if sl.base_id is not None for i in (sl.base_id, *sl.log_ids)]
        sizes: dict[int, Any] = {}
        cols: dict[int, dict[str, Any]] = {}
        step = _ARRAY_CHUNK if conn.dialect.name == "postgresql" else _CHUNK  # one array parameter there
        for i in range(0, len(base_ids), step):
            ids = base_ids[i:i + step]
            sizes.update((r[0], _Sizes(*r)) for r in conn.execute(
                select(fs.c.file_row_id, fs.c.uncompressed_size, fs.c.num_rows).where(
                    _in(conn, fs.c.file_row_id, ids))))
            for r in conn.execute(select(cs.c.file_row_id, cs.c.column_name, cs.c.min_key, cs.c.max_key,
                                         cs.c.null_count, cs.c.value_count).where(_in(conn, cs.c.file_row_id, ids))):
                cols.setdefault(r[0], {})[r[1]] = _Bounds(*r)
        out = Slices()
        for partition, fid, base_id, instant, files, size, logs, log_ids in slices:
            if base_id is None:
                out.add((partition, fid), instant, files, size, False, logs, None, None)
            elif not logs:
                out.add((partition, fid), instant, files, size, True, False, sizes.get(base_id), cols.get(base_id))
            else:
                usable = base_id in sizes and all(i in sizes for i in log_ids)
                out.add((partition, fid), instant, files, size, True, True, sizes.get(base_id),
                        _slice_columns([cols.get(i) for i in (base_id, *log_ids)]) if usable else None)
        return out

    def _read_unread(self, conn: Connection, slices: Slices, partitions: list[str]) -> None:
        """Read the statistics of the base files of `slices`' deferred partitions among `partitions`."""
        todo = [sl for p in partitions for sl in slices.unread.pop(p, ())]
        if todo:
            read = self._read_slices(conn, todo)
            for p, side in read.sides.items():
                slices.sides[p] = side

    def update_groups(self, conn: Connection, ref: HudiTableRef, before: Slices, after: Slices) -> list[str]:
        """Apply to the partitions' statistics the change of these file groups' latest slices (what
        they added before, what they add now); a partition whose bounds a leaving slice may have
        set, or whose counts are unknown, is recomputed whole; a partition `after` holds as an
        addition (`Slices.appended`) gets it added to its stored rows, or else its slices read. The
        partitions touched."""
        ss, pcs = S.snapshot_stats, S.partition_column_stats
        parts = sorted(set(before.sides) | set(after.sides) | set(after.appended))
        full: list[str] = []
        for i in range(0, len(parts), _CHUNK):
            chunk = parts[i:i + _CHUNK]
            basic = {r.partition_path: r for r in conn.execute(select(ss).where(
                ss.c.tbl_id == ref.tbl_id, _in(conn, ss.c.partition_path, chunk)))}
            columns: dict[str, dict[str, Row]] = {}
            for r in conn.execute(select(pcs).where(pcs.c.tbl_id == ref.tbl_id,
                                                    _in(conn, pcs.c.partition_path, chunk))):
                columns.setdefault(r.partition_path, {})[r.column_name] = r
            added = {p: after.appended[p].apply(ref.tbl_id, p, basic.get(p), columns.get(p, {}))
                     for p in chunk if p in after.appended}
            unadded = [p for p, change in added.items() if change is None]
            if unadded:  # their slices after the change, read as for any other change
                after.merge(self.slices_of(conn, ref, {g for p in unadded for g in after.appended.pop(p).groups}))
            if before.unread:  # what _update_partition reads of the leaving slices beyond their count
                self._read_unread(conn, before, [p for p in chunk if p in before.unread and basic.get(p) is not None
                                                 and added.get(p) is None
                                                 and before.sides[p].basic.slices != basic[p].num_slices])
            done: list[str] = []
            basic_rows: list[dict] = []
            column_rows: list[dict] = []
            for p in chunk:
                change = added.get(p) or _update_partition(ref.tbl_id, p, basic.get(p), columns.get(p, {}),
                                                           before.sides.get(p), after.sides.get(p))
                if change is None:
                    full.append(p)
                    continue
                done.append(p)
                if change[0] is not None:
                    basic_rows.append(change[0])
                    column_rows.extend(change[1])
            if done:  # one statement each for the whole chunk
                conn.execute(delete(pcs).where(pcs.c.tbl_id == ref.tbl_id, _in(conn, pcs.c.partition_path, done)))
                conn.execute(delete(ss).where(ss.c.tbl_id == ref.tbl_id, _in(conn, ss.c.partition_path, done)))
            _insert_aggregates(conn, ss, basic_rows)
            _insert_aggregates(conn, pcs, column_rows)
        if full:
            self.refresh_partitions(conn, ref, full)
        return parts


# the partitions' aggregates, as bulk rows (store/db/bulk.py)
_AGGREGATE_COLUMNS = {
    "partition_column_stats": (("tbl_id", "partition_path", "column_name", "min_key", "max_key", "null_count",
                                "value_count", "files_without_stats"),
                               ("int8", "text", "text", "bytea", "bytea", "int8", "int8", "int8")),
    "snapshot_stats": (("tbl_id", "partition_path", "num_slices", "num_files", "base_files", "total_size",
                        "num_rows", "raw_data_size"), ("int8", "text", "int8", "int8", "int8", "int8", "int8", "int8")),
}


def _insert_aggregates(conn: Connection, table: Any, rows: list[dict]) -> None:
    columns, pg_types = _AGGREGATE_COLUMNS[table.name]
    insert_rows(conn, table, columns, [tuple(r[c] for c in columns) for r in rows], check_rows, pg_types=pg_types)


_LATEST_PG = text("""
SELECT f.id, f.partition_path, f.file_id, f.base_instant, f.is_log, f.size
FROM unnest((string_to_array(:parts, chr(31)))[2:], (string_to_array(:fids, chr(31)))[2:]) AS g(p, fid)
CROSS JOIN LATERAL (
  SELECT v.id, v.partition_path, v.file_id, v.base_instant, v.is_log, v.size FROM files v
  WHERE v.tbl_id = :tbl AND v.partition_path = g.p AND NOT v.is_deleted AND v.file_id = g.fid
  ORDER BY v.base_instant DESC FETCH FIRST 1 ROWS WITH TIES) f""")
_LATEST_PG_ARRAYS = text(_LATEST_PG.text.replace(
    "(string_to_array(:parts, chr(31)))[2:], (string_to_array(:fids, chr(31)))[2:]",
    "CAST(:parts AS text[]), CAST(:fids AS text[])"))


def _latest_rows_pg(conn: Connection, tbl_id: int, groups: list[tuple[str, str]]) -> list[Row]:
    """The files of each group's latest version, in one statement per 10,000 groups (PostgreSQL:
    the groups as two array parameters). Each group is probed through ix_files_live from its newest
    live version down, so the cost does not grow with the versions a group keeps."""
    out: list[Row] = []
    for i in range(0, len(groups), 10_000):
        chunk = groups[i:i + 10_000]
        params: dict[str, Any]
        parts, fids = pg_joined_list([p for p, _ in chunk]), pg_joined_list([f for _, f in chunk])
        if parts is None or fids is None:  # a name holding the separator: array parameters
            stmt, params = _LATEST_PG_ARRAYS, {"parts": [p for p, _ in chunk], "fids": [f for _, f in chunk]}
        else:
            stmt, params = _LATEST_PG, {"parts": parts, "fids": fids}
        out.extend(conn.execute(stmt, {"tbl": tbl_id, **params}).all())
    return out


class _Slice(NamedTuple):
    """A file group's latest slice, as the statistics count it."""
    partition_path: str
    file_id: str
    base_id: int | None  # the files row of its base file
    instant: str  # its base instant
    files: int
    size: int
    logs: bool  # whether it has log files
    log_ids: tuple[int, ...] = ()  # the files rows of its log files


def _slice_columns(files: list[dict[str, _Bounds] | None]) -> dict[str, _Bounds] | None:
    """The column statistics of a slice from its files' (base file first, then its log files):
    per column the union of their bounds and the sums of their counts (the merged rows are among
    the files' records, so these bound them); a column some file has no usable statistics for (no
    row, unknown counts, no bounds while not all null) is left out."""
    if any(c is None for c in files):
        return None
    first = files[0]
    assert first is not None
    out: dict[str, _Bounds] = {}
    for name, b in first.items():
        lo: bytes | None = None
        hi: bytes | None = None
        nulls = values = 0
        for c in files:
            r = c.get(name)  # type: ignore[union-attr]
            if r is None or r.null_count is None or r.value_count is None:
                break
            if r.min_key is not None and r.max_key is not None:
                a, z = bytes(r.min_key), bytes(r.max_key)
                lo = a if lo is None else min(lo, a)
                hi = z if hi is None else max(hi, z)
            elif r.null_count != r.value_count:
                break
            nulls += r.null_count
            values += r.value_count
        else:
            out[name] = _Bounds(b.file_row_id, name, lo, hi, nulls, values)
    return out


_new_slice = tuple.__new__  # _Slice(*fields), all eight given, without its Python-level __new__

# positions in the `files` rows _latest_slices reads (Row attribute access costs ten times more)
_ID, _PART, _FID, _BASE, _LOG, _SIZE = range(6)


def _latest_slices(rows: list[Row]) -> list[_Slice]:
    """The latest slice of each file group among `files` rows (as hudi_format.build_slices); the
    rows start with id, partition_path, file_id, base_instant, is_log, size."""
    first: dict[tuple[str, str], Row] = {}  # each group's first row, in the order the groups come
    several: dict[tuple[str, str], list[Row]] = {}  # all rows of the groups with more than one
    for r in rows:
        k = (r[_PART], r[_FID])
        if k in first:
            members = several.get(k)
            if members is None:
                several[k] = [first[k], r]
            else:
                members.append(r)
        else:
            first[k] = r
    out: list[_Slice] = []
    append = out.append
    for (partition, fid), m in first.items():
        members = several.get((partition, fid)) if several else None
        if members is None:  # the common case: one base file
            if m[_LOG]:
                append(_new_slice(_Slice, (partition, fid, None, m[_BASE], 1, m[_SIZE], True, (m[_ID],))))
            else:
                append(_new_slice(_Slice, (partition, fid, m[_ID], m[_BASE], 1, m[_SIZE], False, ())))
            continue
        latest = max(m[_BASE] for m in members)
        files = [m for m in members if m[_BASE] == latest]
        base = next((m[_ID] for m in files if not m[_LOG]), None)
        log_ids = tuple(m[_ID] for m in files if m[_LOG])
        out.append(_Slice(partition, fid, base, latest, len(files), sum(m[_SIZE] for m in files),
                          bool(log_ids), log_ids))
    return out


class _Basic:
    """Hive basic statistics of one partition's latest slices; rows and raw size are known only when
    every slice is a base file with statistics."""
    __slots__ = ("slices", "bases", "files", "size", "rows", "raw")

    def __init__(self) -> None:
        self.slices = 0
        self.bases = 0
        self.files = 0
        self.size = 0
        self.rows: int | None = 0
        self.raw: int | None = 0

    def add(self, sl: _Slice, stats: Row | None) -> None:
        self.add_slice(sl.files, sl.size, sl.base_id is not None, sl.logs, stats)

    def add_slice(self, files: int, size: int, base: bool, logs: bool, stats: Any) -> None:
        """One slice of `files` files of `size` bytes; `stats`: its base file's sizes (file_stats)."""
        self.slices += 1
        self.bases += base
        self.files += files
        self.size += size
        if stats is None or logs or stats.num_rows is None:
            self.rows = self.raw = None
        else:
            if self.rows is not None:
                self.rows += stats.num_rows
            if self.raw is not None:
                self.raw += stats.uncompressed_size

    def add_unsized(self, slices: int, files: int, bases: int, size: int) -> None:
        """`slices` slices of `files` files (`bases` of them base files) of `size` bytes, none with
        statistics: as add_slice for each with `stats` None."""
        self.slices += slices
        self.bases += bases
        self.files += files
        self.size += size
        if slices:
            self.rows = self.raw = None

    def merge(self, o: _Basic) -> None:
        self.slices += o.slices
        self.bases += o.bases
        self.files += o.files
        self.size += o.size
        self.rows = None if self.rows is None or o.rows is None else self.rows + o.rows
        self.raw = None if self.raw is None or o.raw is None else self.raw + o.raw

    def row(self) -> dict:
        return {"num_slices": self.slices, "num_files": self.files, "base_files": self.bases, "total_size": self.size,
                "num_rows": self.rows,
                "raw_data_size": self.raw}


class _Sum:
    """One partition's column: bounds over its files, counts, and files with usable statistics."""
    __slots__ = ("lo", "hi", "nulls", "values", "good")

    def __init__(self) -> None:
        self.lo: bytes | None = None
        self.hi: bytes | None = None
        self.nulls: int | None = 0
        self.values: int | None = 0
        self.good = 0

    def add(self, r: Any) -> None:
        nulls, values = r.null_count, r.value_count
        counted = nulls is not None and values is not None
        self.nulls = self.nulls + nulls if counted and self.nulls is not None else None
        self.values = self.values + values if counted and self.values is not None else None
        if r.min_key is not None and r.max_key is not None:
            lo, hi = bytes(r.min_key), bytes(r.max_key)
            self.lo = lo if self.lo is None else min(self.lo, lo)
            self.hi = hi if self.hi is None else max(self.hi, hi)
            self.good += counted
        elif counted and nulls == values:  # every value null: no bounds needed
            self.good += 1

    def merge(self, o: _Sum) -> None:
        """As if every file `o` summed were added here."""
        self.nulls = None if self.nulls is None or o.nulls is None else self.nulls + o.nulls
        self.values = None if self.values is None or o.values is None else self.values + o.values
        if o.lo is not None and o.hi is not None:
            self.lo = o.lo if self.lo is None else min(self.lo, o.lo)
            self.hi = o.hi if self.hi is None else max(self.hi, o.hi)
        self.good += o.good

    def row(self, slices: int) -> dict:
        return {"min_key": self.lo, "max_key": self.hi, "null_count": self.nulls, "value_count": self.values,
                "files_without_stats": slices - self.good}


class _Side:
    """What some file groups' latest slices add to one partition's statistics: their basic
    statistics and, per column, the sums over the usable ones (base files without log files)."""
    __slots__ = ("basic", "columns")

    def __init__(self) -> None:
        self.basic = _Basic()
        self.columns: dict[str, _Sum] = {}

    def add_columns(self, cols: dict[str, Any]) -> None:
        for name, r in cols.items():
            agg = self.columns.get(name)
            if agg is None:
                agg = self.columns[name] = _Sum()
            agg.add(r)

    def merge(self, o: _Side) -> None:
        self.basic.merge(o.basic)
        for name, other in o.columns.items():
            agg = self.columns.get(name)
            if agg is None:
                agg = self.columns[name] = _Sum()
            agg.merge(other)


class Slices:
    """The latest slices of some file groups, summed per partition (`sides`), with each group's
    base instant (`instants`): what a change takes from and gives to the partitions' statistics.
    `unread`: partitions whose sides count their slices but lack their base files' statistics
    (slices_before with `defer`; update_groups reads them when it needs them). `appended`:
    partitions whose groups only gained new log files (slices_after_write), as an addition."""
    __slots__ = ("sides", "instants", "unread", "appended")

    def __init__(self) -> None:
        self.sides: dict[str, _Side] = {}
        self.instants: dict[tuple[str, str], str] = {}
        self.unread: dict[str, list[_Slice]] = {}
        self.appended: dict[str, _Append] = {}

    def add(self, group: tuple[str, str], instant: str, files: int, size: int, base: bool, logs: bool,
            stats: Any, cols: dict[str, Any] | None) -> None:
        """One group's slice; `stats`/`cols`: its base file's sizes and column statistics (`cols`
        only for a usable slice)."""
        self.instants[group] = instant
        side = self.sides.get(group[0])
        if side is None:
            side = self.sides[group[0]] = _Side()
        side.basic.add_slice(files, size, base, logs, stats)
        if cols:
            side.add_columns(cols)

    def merge(self, o: Slices) -> None:
        """Add the slices of other groups."""
        if self.unread or o.unread or o.appended:
            raise ValueError("slices whose statistics are unread cannot be merged")
        self.instants.update(o.instants)
        for p, other in o.sides.items():
            side = self.sides.get(p)
            if side is None:
                side = self.sides[p] = _Side()
            side.merge(other)


class _Append:
    """New log files on the latest slices of some of a partition's file groups: the files, their
    bytes and, per column, their summed statistics (None: some file has none usable)."""
    __slots__ = ("groups", "files", "size", "columns")

    def __init__(self) -> None:
        self.groups: set[tuple[str, str]] = set()
        self.files = 0
        self.size = 0
        self.columns: dict[str, _Sum | None] = {}

    def add(self, group: tuple[str, str], size: int, cols: dict[str, _Bounds]) -> None:
        """One new log file of `size` bytes on the group's slice, with its stored statistics."""
        first = not self.files
        self.groups.add(group)
        self.files += 1
        self.size += size
        for name in (list(cols) if first else list(self.columns)):
            agg = _Sum() if first else self.columns[name]
            r = cols.get(name)
            if agg is None or r is None or r.null_count is None or r.value_count is None or (
                    (r.min_key is None or r.max_key is None) and r.null_count != r.value_count):
                self.columns[name] = None  # as _slice_columns: a file without usable statistics for it
                continue
            agg.add(r)
            self.columns[name] = agg

    def apply(self, tbl_id: int, p: str, cur: Row | None, columns: dict[str, Row]) -> tuple[dict, list[dict]] | None:
        """The partition's new statistics rows (as _update_partition): the stored ones plus these
        files, the slices unchanged; None when that cannot be told without reading the slices (no
        stored row, or a column some slice or some new file has no usable statistics for)."""
        if cur is None or cur.num_slices < len(self.groups):
            return None
        n = {k: getattr(cur, k) for k in _BASIC_COUNTS}
        n["num_files"] += self.files
        n["total_size"] += self.size
        n["num_rows"] = n["raw_data_size"] = None  # slices with log files
        rows: list[dict] = []
        for col in sorted(columns):
            agg = _stored_sum(columns[col], cur.num_slices)
            new = self.columns.get(col)
            if agg is None or agg.good != cur.num_slices or new is None:
                return None
            agg.merge(new)
            agg.good = cur.num_slices  # the slices stay usable: `new` counts files, not slices
            rows.append({"tbl_id": tbl_id, "partition_path": p, "column_name": col, **agg.row(cur.num_slices)})
        return {"tbl_id": tbl_id, "partition_path": p, **n}, rows


def _appends(groups: set[tuple[str, str]], replaced: set[tuple[str, str]], mine: dict, logs: dict,
             recorded: Recorded) -> dict[str, _Append]:
    """The partitions every written group of which only gained new log files with stored
    statistics on its latest slice, as additions."""
    out: dict[str, _Append] = {}
    if not logs:  # no group gained log files on its latest slice
        return out
    mixed: set[str] = set()
    for g in groups:
        files = logs.get(g)
        recs = [recorded.get((g[0], w.name)) for w in files] if files and g not in replaced and g not in mine else []
        if not recs or None in recs:
            mixed.add(g[0])
            continue
        app = out.get(g[0])
        if app is None:
            app = out[g[0]] = _Append()
        for w, rec in zip(files, recs):  # type: ignore[arg-type]
            app.add(g, w.size, rec[2])  # type: ignore[index]
    for p in mixed:
        out.pop(p, None)
    return out


def _unread_slices(slices: list[_Slice]) -> Slices:
    """Slices counted per partition, their base files' statistics left unread (Slices.unread)."""
    out = Slices()
    instants, unread = out.instants, out.unread
    for sl in slices:
        instants[(sl[0], sl[1])] = sl.instant
        members = unread.get(sl[0])
        if members is None:
            unread[sl[0]] = [sl]
        else:
            members.append(sl)
    for p, members in unread.items():  # as out.add(..., None, None) for each slice
        side = out.sides[p] = _Side()
        side.basic.add_unsized(len(members), sum(map(_files_of, members)),
                               len(members) - list(map(_base_of, members)).count(None), sum(map(_size_of, members)))
    return out


_files_of, _base_of, _size_of = itemgetter(4), itemgetter(2), itemgetter(5)  # of a _Slice


_BASIC_COUNTS = ("num_slices", "num_files", "base_files", "total_size", "num_rows", "raw_data_size")


def _update_partition(tbl_id: int, p: str, cur: Row | None, columns: dict[str, Row],
                      before: _Side | None, after: _Side | None) -> tuple[dict | None, list[dict]] | None:
    """Incremental upkeep of one partition's statistics: its new snapshot_stats row (None: no
    slices left) and partition_column_stats rows, or None when it must be recomputed whole."""
    if cur is None and before is not None and before.basic.slices:
        return None
    if cur is not None and before is not None and before.basic.slices == cur.num_slices:
        return _all_changed(tbl_id, p, after)
    n = _basic_after(cur, before, after)
    if n is None:
        return None
    leaving = before.columns if before is not None else {}
    coming = after.columns if after is not None else {}
    slices = cur.num_slices if cur is not None else 0
    rows: list[dict] = []
    for col in sorted(set(columns) | set(leaving) | set(coming)):
        agg = _column_after(columns.get(col), slices, leaving.get(col), coming.get(col))
        if agg is None:
            return None
        rows.append({"tbl_id": tbl_id, "partition_path": p, "column_name": col, **agg.row(n["num_slices"])})
    if n["num_slices"] <= 0:
        return None, []
    return {"tbl_id": tbl_id, "partition_path": p, **n}, rows


def _all_changed(tbl_id: int, p: str, after: _Side | None) -> tuple[dict | None, list[dict]]:
    """A partition every latest slice of which the change replaced: its statistics are what the
    coming slices add, as a recount would find them."""
    if after is None or after.basic.slices <= 0:
        return None, []
    n = after.basic.row()
    return ({"tbl_id": tbl_id, "partition_path": p, **n},
            [{"tbl_id": tbl_id, "partition_path": p, "column_name": c, **agg.row(n["num_slices"])}
             for c, agg in sorted(after.columns.items())])


def _basic_after(cur: Row | None, before: _Side | None, after: _Side | None) -> dict | None:
    """A partition's snapshot_stats counts after the change: the stored ones (`cur`) less what the
    leaving slices added (`before`) plus what the coming ones add (`after`); None when its rows and
    raw size must be recomputed."""
    n = {k: (getattr(cur, k) if cur is not None else 0) for k in _BASIC_COUNTS}
    # rows and raw size are unknown while any slice's are: a slice coming in without them settles
    # it; otherwise they are known only if they were and every leaving slice's were
    unknown = after is not None and not _sized(after.basic)
    if not unknown and (n["num_rows"] is None or n["raw_data_size"] is None or (
            before is not None and not _sized(before.basic))):
        return None
    for sign, side in ((-1, before), (1, after)):
        if side is not None:
            _shift(n, sign, side.basic, unknown)
    if unknown:
        n["num_rows"] = n["raw_data_size"] = None
    return n


def _sized(basic: _Basic) -> bool:
    """Are the rows and raw size of these slices known?"""
    return basic.rows is not None and basic.raw is not None


def _shift(n: dict, sign: int, basic: _Basic, unknown: bool) -> None:
    """Add (`sign` 1) or take out (-1) slices' basic statistics; rows and raw size unless `unknown`."""
    n["num_slices"] += sign * basic.slices
    n["num_files"] += sign * basic.files
    n["base_files"] += sign * basic.bases
    n["total_size"] += sign * basic.size
    if not unknown:
        n["num_rows"] += sign * basic.rows  # type: ignore[operator]
        n["raw_data_size"] += sign * basic.raw  # type: ignore[operator]


def _column_after(row: Row | None, slices: int, gone: _Sum | None, new: _Sum | None) -> _Sum | None:
    """One column of a partition after the change: its stored row (over `slices` slices) less what
    the leaving slices summed (`gone`) plus what the coming ones sum (`new`), `good` counting the
    files with usable statistics; None when it must be recomputed."""
    agg = _stored_sum(row, slices)
    if agg is None:
        return None
    if gone is not None and (row is None or not _take_out(agg, gone)):
        return None
    if new is not None:
        agg.merge(new)
    if agg.good <= 0:
        return None  # no bounds left to trust: recompute
    return agg


def _stored_sum(row: Row | None, slices: int) -> _Sum | None:
    """A stored partition_column_stats row (over `slices` slices) as a sum; an empty one for no
    row; None when its counts are unknown."""
    agg = _Sum()
    if row is None:
        return agg
    if row.null_count is None or row.value_count is None:
        return None
    agg.lo = None if row.min_key is None else bytes(row.min_key)
    agg.hi = None if row.max_key is None else bytes(row.max_key)
    agg.nulls, agg.values = row.null_count, row.value_count
    agg.good = slices - row.files_without_stats
    return agg


def _take_out(agg: _Sum, gone: _Sum) -> bool:
    """Take what leaving slices summed out of `agg`; False when that cannot be done: their counts are
    unknown, or a leaving file may have set a bound."""
    if gone.nulls is None or gone.values is None:
        return False
    if gone.lo is not None and gone.hi is not None and (
            agg.lo is None or agg.hi is None or gone.lo <= agg.lo or gone.hi >= agg.hi):
        return False
    agg.good -= gone.good
    agg.nulls -= gone.nulls  # type: ignore[operator]
    agg.values -= gone.values  # type: ignore[operator]
    return True


def latest_column_sizes(conn: Connection, tbl_id: int, partitions: list[str]) -> dict[tuple[str, str], tuple[int, int]]:
    """(partition, column) -> the summed (compressed, uncompressed) bytes of the column in the
    partition's latest base files, those of slices with log files too (as Hudi 1.2 sums them for
    `partition_stats`: a log file adds none); a column some of those files have no sizes for is
    left out."""
    f, cs, rg = S.files, S.column_stats, S.replaced_file_groups
    out: dict[tuple[str, str], tuple[int, int]] = {}
    unknown: set[tuple[str, str]] = set()
    for i in range(0, len(partitions), _CHUNK):
        chunk = partitions[i:i + _CHUNK]
        replaced = {(r.partition_path, r.file_id) for r in conn.execute(
            select(rg.c.partition_path, rg.c.file_id).where(rg.c.tbl_id == tbl_id,
                                                            _in(conn, rg.c.partition_path, chunk)))}
        live = conn.execute(select(f.c.id, f.c.partition_path, f.c.file_id, f.c.base_instant, f.c.is_log, f.c.size)
                            .where(f.c.tbl_id == tbl_id, _in(conn, f.c.partition_path, chunk),
                                   f.c.is_deleted.is_(False))).all()
        slices = _latest_slices([r for r in live if (r.partition_path, r.file_id) not in replaced])
        ids = [s.base_id for s in slices if s.base_id is not None]
        for j in range(0, len(ids), _CHUNK):
            q = select(f.c.partition_path, cs.c.column_name, cs.c.total_size, cs.c.uncompressed_size).select_from(
                cs.join(f, f.c.id == cs.c.file_row_id)).where(_in(conn, cs.c.file_row_id, ids[j:j + _CHUNK]))
            for r in conn.execute(q):
                key = (r.partition_path or "", r.column_name.lower())
                if r.total_size is None or r.uncompressed_size is None:
                    unknown.add(key)
                    continue
                total, raw = out.get(key, (0, 0))
                out[key] = (total + int(r.total_size), raw + int(r.uncompressed_size))
    return {k: v for k, v in out.items() if k not in unknown}
