"""The file listing of a Hudi table (RFC-36 `files`, `replaced_file_groups`) and its versions
(`tbl_version`): how completed instants change them. Callers run these inside the transaction
that completes (or imports) the instant.
"""

from __future__ import annotations

from collections.abc import Callable

from sqlalchemy import ColumnElement, Connection, delete, false, func, select, text, update

from hudi_format.commit_metadata import CommitMetadata
from hudi_format.file_slice import parse_file_name
from store.db import schema as S
from store.db.bulk import Inserting, insert_rows, insert_rows_started
from store.db.dialect import in_list, pair_chunks
from store.errors import InvalidObject
from store.hms.common import check_rows
from store.hudi.tables import HudiTableRef

NEVER = "0" * 17  # deleted_ts of files that were never part of the table (rolled back)

# (partition, name) -> (file id, base instant, is log, log version, size)
WrittenFiles = dict[tuple[str, str], tuple[str, str, bool, int | None, int]]


def latest_version(conn: Connection, tbl_id: int) -> int:
    """The table's latest version, 0 before its first."""
    v = S.tbl_version
    return conn.execute(select(func.max(v.c.version)).where(v.c.tbl_id == tbl_id)).scalar() or 0


def add_version(conn: Connection, tbl_id: int, instant_id: int, now: int, mirrored: bool = False) -> int:
    """A new table version for a completed instant (instant_id 0: a listing's changes); `mirrored`
    when it is on storage already (imported), else the storage mirror's work."""
    top = latest_version(conn, tbl_id)
    row = {"tbl_id": tbl_id, "version": top + 1, "instant_id": instant_id, "create_time": now}
    row.update({"snapshot_status": 1, "update_time": now} if mirrored else {"snapshot_status": 0})
    conn.execute(S.tbl_version.insert().values(**row))
    return top + 1


def names_in(backend: str, pairs, live: bool = False) -> ColumnElement[bool]:
    """`(files.partition_path, files.name) IN pairs`, widened as store.db.dialect.pairs_in (the
    caller keeps the rows whose pair it asked for), through uq_files_live: the names' file ids are
    added (a name that is no Hudi file name is in no row), and is_deleted is false (`live`) or
    either."""
    f = S.files
    fids = set()
    for _, name in pairs:
        try:
            fids.add(parse_file_name(name)[0])
        except ValueError:
            continue
    if not fids:
        return false()
    return (in_list(backend, f.c.partition_path, sorted({p for p, _ in pairs}))
            & (f.c.is_deleted.is_(False) if live else f.c.is_deleted.in_((False, True)))
            & in_list(backend, f.c.file_id, sorted(fids))
            & in_list(backend, f.c.name, sorted({n for _, n in pairs})))


def written_files(meta: CommitMetadata) -> WrittenFiles:
    """The files a commit's write stats name; InvalidObject for a name that is no Hudi data file."""
    out: WrittenFiles = {}
    for stat_partition, path, _fid, size, _prev in meta.write_stats:
        partition, _, name = path.strip("/").rpartition("/")  # split_path
        try:
            file_id, base_instant, is_log, log_version = parse_file_name(name)
        except ValueError as exc:
            raise InvalidObject(str(exc)) from exc
        out[(stat_partition if stat_partition is not None else partition, name)] = (
            file_id, base_instant, is_log, log_version, size)
    return out


_FILE_COLUMNS = ("tbl_id", "partition_path", "name", "file_id", "base_instant", "is_log", "log_version", "size",
                 "version", "created_ts", "is_deleted", "create_time", "update_time")
_FILE_PG_TYPES = ("int8", "text", "text", "text", "text", "bool", "int4", "int8", "int8", "text", "bool", "int8",
                  "int8")  # a binary COPY there


_ID_SEQUENCE = text("SELECT pg_get_serial_sequence('files', 'id')")
# (the sequence as a parameter: named in the statement through a function, it was looked up per row)
_DRAW_IDS = text("SELECT nextval(CAST(:seq AS regclass)) FROM generate_series(1, :n)")


class FileListing:
    def __init__(self, clock_ms: Callable[[], int]):
        self.clock_ms = clock_ms

    def add_files(self, conn: Connection, ref: HudiTableRef, ts: str, meta: CommitMetadata,
                  written: WrittenFiles | None = None, ids: dict[tuple[str, str], int] | None = None
                  ) -> WrittenFiles:
        """The files instant `ts` wrote (new ones, log files appended to again) and the file groups
        it replaced (`written`: `written_files(meta)` when the caller has it). Returns the files
        written; `ids` (PostgreSQL) gets the row id of each file inserted, by (partition, name)."""
        if written is None:
            written = written_files(meta)
        self.start_adding_files(conn, ref, ts, meta, written, ids).finish()
        return written

    def start_adding_files(self, conn: Connection, ref: HudiTableRef, ts: str, meta: CommitMetadata,
                           written: WrittenFiles, ids: dict[tuple[str, str], int] | None = None) -> Inserting:
        """`add_files`, its new rows still going in when `ids` is given on PostgreSQL
        (bulk.insert_rows_started: the caller's next statements wait for them)."""
        now = self.clock_ms()
        version = latest_version(conn, ref.tbl_id) + 1
        if meta.replaced:
            self._replace_groups(conn, ref, ts, meta.replaced)
        return self._record(conn, ref, ts, written, version, now, ids) if written else Inserting(conn, "")

    def _record(self, conn: Connection, ref: HudiTableRef, ts: str, written: WrittenFiles, version: int,
                now: int, ids: dict[tuple[str, str], int] | None = None) -> Inserting:
        f = S.files
        existing = self._recorded_logs(conn, ref, written)
        inserts = []
        for (partition, name), (file_id, base, is_log, ver, size) in written.items():
            if (partition, name) in existing:  # a log file appended to again
                conn.execute(update(f).where(f.c.id == existing[(partition, name)]).values(
                    size=size, version=version, update_time=now, is_deleted=False, deleted_ts=None))
            else:
                inserts.append((ref.tbl_id, partition, name, file_id, base, is_log, ver, size, version, ts,
                                False, now, now))
        if ids is not None and inserts and conn.dialect.name == "postgresql":  # ids drawn first, for the caller
            seq = conn.execute(_ID_SEQUENCE).scalar_one()
            drawn = conn.execute(_DRAW_IDS, {"seq": seq, "n": len(inserts)}).scalars().all()
            numbered = [(i, *row) for i, row in zip(drawn, inserts)]
            ids.update(((row[2], row[3]), row[0]) for row in numbered)
            return insert_rows_started(conn, f, ("id", *_FILE_COLUMNS), numbered, check_rows,
                                       pg_types=("int8", *_FILE_PG_TYPES))
        insert_rows(conn, f, _FILE_COLUMNS, inserts, check_rows, pg_types=_FILE_PG_TYPES)
        return Inserting(conn, "")

    @staticmethod
    def _recorded_logs(conn: Connection, ref: HudiTableRef, written: WrittenFiles) -> dict[tuple[str, str], int]:
        """(partition, name) -> id of the written log files the table has already. Only log files
        can be recorded already (appended to by a later deltacommit): a base file's name carries the
        instant that wrote it, which commits once."""
        f = S.files
        logs = [key for key, entry in written.items() if entry[2]]
        existing = {}
        for chunk in pair_chunks(logs):  # deleted ones too: a log file has one row
            for r in conn.execute(select(f.c.id, f.c.partition_path, f.c.name).where(
                    f.c.tbl_id == ref.tbl_id, names_in(conn.dialect.name, chunk))):
                if (r.partition_path, r.name) in written:
                    existing[(r.partition_path, r.name)] = r.id
        return existing

    @staticmethod
    def _replace_groups(conn: Connection, ref: HudiTableRef, ts: str, replaced: dict[str, list[str]]) -> None:
        rg = S.replaced_file_groups
        rows = [{"tbl_id": ref.tbl_id, "partition_path": p, "file_id": fid, "replace_ts": ts}
                for p, ids in replaced.items() for fid in dict.fromkeys(ids)]
        for p, ids in replaced.items():
            unique = list(dict.fromkeys(ids))
            for i in range(0, len(unique), 500):
                conn.execute(delete(rg).where(rg.c.tbl_id == ref.tbl_id, rg.c.partition_path == p,
                                              rg.c.file_id.in_(unique[i:i + 500])))
        conn.execute(rg.insert(), rows)

    def mark_deleted(self, conn: Connection, ref: HudiTableRef, ts: str, deleted: dict[str, list[str]]) -> None:
        """Files a clean or rollback at `ts` deleted (partition -> names)."""
        f = S.files
        now = self.clock_ms()
        for partition, names in deleted.items():
            for i in range(0, len(names), 500):
                chunk = [(partition, n) for n in names[i:i + 500]]
                conn.execute(update(f).where(f.c.tbl_id == ref.tbl_id, names_in(conn.dialect.name, chunk, live=True))
                             .values(is_deleted=True, deleted_ts=ts, update_time=now))

    def forget_instants(self, conn: Connection, ref: HudiTableRef, instants: list[str]) -> None:
        """A rolled-back instant leaves the timeline (Hudi deletes its instant files)."""
        if not instants:
            return
        i, m = S.instant, S.instant_meta
        # a savepoint shares its commit's time: it is not the instant rolled back
        conn.execute(delete(m).where(m.c.tbl_id == ref.tbl_id, m.c.ts.in_(instants), m.c.action != "savepoint"))
        conn.execute(delete(S.instant_markers).where(
            S.instant_markers.c.tbl_id == ref.tbl_id, S.instant_markers.c.ts.in_(instants)))
        conn.execute(delete(S.replaced_file_groups).where(
            S.replaced_file_groups.c.tbl_id == ref.tbl_id, S.replaced_file_groups.c.replace_ts.in_(instants)))
        # never visible at any time: deleted as of the instant that wrote them
        conn.execute(update(S.files).where(
            S.files.c.tbl_id == ref.tbl_id, S.files.c.created_ts.in_(instants)
        ).values(is_deleted=True, deleted_ts=NEVER, update_time=self.clock_ms()))
        conn.execute(delete(i).where(i.c.tbl_id == ref.tbl_id, i.c.ts.in_(instants),
                                     i.c.action.notin_(("rollback", "savepoint"))))
