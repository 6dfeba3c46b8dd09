"""Partition writes: add (and append), drop, truncate. Locations are checked before the
transaction; directories are deleted after it commits, an add's made while it runs (neither ever
fails the call); the transaction itself returns what there is to do."""

from __future__ import annotations

from collections.abc import Collection, Sequence
from typing import Any

from sqlalchemy import Connection, Row, delete, select

from store.db import schema as S
from store.db.bulk import insert_rows
from store.db.database import Store, now_s
from store.db.dialect import BATCH, in_list, list_batch
from store.errors import AlreadyExists, InvalidObject, MetaError, NoSuchObject, StoreError
from store.hms.catalog import TableService
from store.hms.common import (
    DDL_TIME,
    MANAGED,
    EncodedStructs,
    build_sd,
    check_location,
    check_rows,
    insert_sd,
    purges,
    qualified_db_name,
    read_params,
    split_db_name,
    stats_params,
    version_for_columns,
    write_params,
)
from store.hms.notification_log import events as EV
from store.hms.partitions import partition_wire
from store.hms.partitions.partition_context import SharesTableSd, TableContexts, TableCtx, check_values, name_values
from store.hms.partitions.partition_key_values import KEY_VALUE_COLUMNS, KEY_VALUE_PG_TYPES, key_value_rows
from store.hms.partitions.partition_names import make_name, split_name
from store.hms.partitions.partition_queries import PartitionQueries
from store.hms.partitions.partition_reads import PartitionReads
from store.hms.txn import drop_partition_rows, is_transactional
from store.storage import warehouse
from store.storage.boundary import DirsInProgress
from store.storage.owner_index import table_obj
from thrift_idl.hive_metastore.ttypes import Partition, StorageDescriptor

# A partition being added: (name, the Partition asked for, its parameters, its location)
_NewPartition = tuple[str, Partition, dict[str, str], str | None]
_PARTITION_COLUMNS = ("tbl_id", "part_name", "create_time", "last_access_time", "update_time", "location",
                      "sd_id", "schema_version", *partition_wire.WIRE_COLUMNS)
_PARAM_COLUMNS = ("part_id", "param_key", "param_value")
# the columns' types for PostgreSQL's binary COPY (text COPY escapes, and the server parses, every value)
_PARTITION_PG_TYPES = ("int8", "text", "int4", "int4", "int4", "text", "int8", "int4", "bytea", "bytea", "bytea",
                       "bytea")
_PARAM_PG_TYPES = ("int8", "text", "text")
_EARLY_DIRS = 32  # partitions an add needs to make their directories while its transaction runs


class _EarlyDirs:
    """The directories of an add, made while its transaction runs (Hive makes them before its
    commit too); deleted again, when still empty, if the add fails."""

    def __init__(self, writes: PartitionWrites):
        self.writes = writes
        self.names: dict[str, str] = {}  # location -> partition name, of every started directory
        self.pending: list[DirsInProgress] = []
        self.ctx: TableCtx | None = None

    def start(self, ctx: TableCtx, names: dict[str, str]) -> set[str]:
        """`names`: location -> name (an attempt the transaction retries starts only what is new);
        returns the locations whose directories did not exist (being made: nothing to count)."""
        self.ctx = ctx
        new = {loc: n for loc, n in names.items() if loc not in self.names}
        self.names.update(new)
        if not new:
            return set()
        started = self.writes.tables.boundary.start_dirs(list(new))
        self.pending.append(started)
        return set(started.missing())

    def _made(self) -> list[str]:
        return [u for p in self.pending for u in p.wait()]

    def made(self) -> set[str]:
        """The directories made so far (made before the add: none were counted, as Hive counts
        only what it did not make)."""
        return set(self._made()) if self.pending else set()

    def finish(self, dirs: list[str]) -> None:
        """After the commit: `dirs` those of the partitions added."""
        boundary, wanted, made = self.writes.tables.boundary, set(dirs), self._made()
        boundary.note_made([u for u in made if u in wanted])
        self._unmake([u for u in made if u not in wanted])  # started by an attempt that was retried
        boundary.make_dirs([u for u in dirs if u not in self.names])

    def undo(self) -> None:
        """After the add failed: what it made, but a partition another writer added meanwhile's."""
        made = self._made()
        if not made or self.ctx is None:
            return
        try:
            with self.writes.store.read() as conn:
                taken = self.writes._existing(conn, self.ctx, [self.names[u] for u in made])
        except Exception:  # noqa: BLE001 - the add's own error is the answer; nothing is deleted then
            return
        self._unmake([u for u in made if self.names[u] not in taken])

    def _unmake(self, made: list[str]) -> None:
        if made and self.ctx is not None:
            self.writes.tables.boundary.unmake_dirs(made, len(self.ctx.keys) - 1, self.ctx.location)


class PartitionWrites:
    def __init__(self, store: Store, contexts: TableContexts, queries: PartitionQueries, reads: PartitionReads,
                 tables: TableService):
        self.store = store
        self.contexts = contexts
        self.queries = queries
        self.reads = reads
        self.tables = tables

    # --- add ------------------------------------------------------------------------------------

    def add_partitions(self, db: str, tbl: str, parts: list[Partition], if_not_exists: bool = False,
                       env: dict[str, str] | None = None, missing: type[StoreError] = InvalidObject,
                       conn: Connection | None = None) -> list[Partition]:
        """Add partitions in one transaction (the caller's, when `conn` is given); returns the ones
        added (existing ones are skipped with if_not_exists, else AlreadyExists)."""
        if not parts:
            return []
        for part in parts:
            if part is None:
                raise MetaError("add_partitions: a partition in the list is null")
            check_location(part.sd.location if part.sd else None, "Partition location", "partitions", "location")
        if conn is not None:  # the directories are made after, recorded in the caller's transaction
            out, dirs = self._add(conn, db, tbl, parts, if_not_exists, missing)
            self.store.note_changes(len(out))
            self.tables.boundary.make_dirs(dirs, conn)
            return out
        early = _EarlyDirs(self)
        try:
            out, dirs = self.store.run_write(self._add, db, tbl, parts, if_not_exists, missing, early=early)
        except BaseException:
            early.undo()
            raise
        self.store.note_changes(len(out))
        early.finish(dirs)
        return out

    def add_in(self, conn: Connection, db: str, tbl: str, parts: list[Partition]) -> list[Partition]:
        """Add partitions in the caller's transaction without making their directories (their data
        is moved there: partition_exchange.py)."""
        out, _dirs = self._add(conn, db, tbl, parts, False, InvalidObject, quick_stats=False)
        self.store.note_changes(len(out))
        return out

    def drop_in(self, conn: Connection, db: str, tbl: str, names: list[str]) -> None:
        """Drop partitions by stored name in the caller's transaction, keeping their data."""
        _result, dropped, _doomed, _ctx = self._drop(conn, db, tbl, names, None, False, False, False, True)
        self.store.note_changes(dropped)

    def append_partition(self, db: str, tbl: str, values: Sequence[str] | None) -> Partition:
        return self.add_partitions(db, tbl, [Partition(values=list(values or []), dbName=db, tableName=tbl)])[0]

    def append_partition_by_name(self, db: str, tbl: str, name: str) -> Partition:
        with self.store.read() as conn:
            ctx = self.contexts.read(conn, db, tbl, missing=InvalidObject)
        try:
            values = name_values(ctx, name)
        except NoSuchObject as exc:
            raise InvalidObject(exc.message) from exc
        return self.append_partition(db, tbl, values)

    def _add(self, conn: Connection, db: str, tbl: str, parts: list[Partition], if_not_exists: bool,
             missing: type[StoreError], quick_stats: bool = True,
             early: _EarlyDirs | None = None) -> tuple[list[Partition], list[str]]:
        """(the partitions added, their directories). `quick_stats`: count the files of each
        partition's directory (numFiles, totalSize); without, the parameters are kept as given.
        `early`: their directories are made from when their rows are known, while the rest of the
        transaction runs."""
        try:
            ctx = self.contexts.read(conn, db, tbl)
        except NoSuchObject as exc:
            raise missing(f"Unable to add partitions because table or database do not exist: {db}.{tbl}") from exc
        now = now_s()
        by_name = _by_name(ctx, parts)
        existing = self._existing(conn, ctx, list(by_name))
        if existing and not if_not_exists:
            first = sorted(existing)[0]
            raise AlreadyExists(
                f"Partition already exists: {ctx.db_name}.{ctx.name} {first}")
        added = [(n, p) for n, p in by_name.items() if n not in existing]
        if not added:
            return [], []
        # their locations are checked (store/storage/owner_index.py) before anything looks at them
        self.claim(conn, ctx, [(0, n, _location(ctx, n, p)) for n, p in added], index=False)
        # an attempt the transaction retries: the directories the first made hold nothing to count
        fresh = early.made() if early is not None else set()
        if early is not None and len(added) >= _EARLY_DIRS:
            # what did not exist is made from now on, and has no files to count
            locations = {_location(ctx, name, part): name for name, part in added}
            fresh |= early.start(ctx, {location: name for location, name in locations.items() if location})
        rows, news = self._partition_rows(conn, ctx, added, now, quick_stats, fresh)
        insert_rows(conn, S.partitions, _PARTITION_COLUMNS, rows, check_rows, pg_types=_PARTITION_PG_TYPES)
        ids = self._ids(conn, ctx, [n for n, _ in added])
        self.claim(conn, ctx, [(ids[n], n, loc) for n, _, _, loc in news], check=False)
        kv_rows: list[tuple[Any, ...]] = []
        param_rows: list[tuple[Any, ...]] = []
        out = []
        for name, part, params, location in news:
            pid = ids[name]
            kv_rows.extend(key_value_rows(pid, ctx.tbl_id, ctx.key_names, part.values))
            param_rows.extend((pid, k, v) for k, v in params.items())
            out.append(Partition(
                values=list(part.values), dbName=ctx.db_name, tableName=ctx.name, createTime=now,
                lastAccessTime=part.lastAccessTime or 0,
                sd=_with_location(part.sd, location, ctx), parameters=params, catName=ctx.cat_name))
        insert_rows(conn, S.partition_key_val, KEY_VALUE_COLUMNS, kv_rows, check_rows, pg_types=KEY_VALUE_PG_TYPES)
        insert_rows(conn, S.partition_params, _PARAM_COLUMNS, param_rows, check_rows, pg_types=_PARAM_PG_TYPES)
        table = self.tables.get_table_in(conn, ctx.db_name, ctx.name)
        self.tables.notifications.record(conn, *EV.add_partitions(table, out))
        return out, [location for _, _, _, location in news if location]

    def claim(self, conn: Connection, ctx: TableCtx, parts: list[tuple[int, str, str | None]],
              check: bool = True, index: bool = True) -> None:
        """Partitions (id, name, location) take their locations (store/storage/owner_index.py)."""
        owners = self.tables.boundary.owners
        if owners.needs_partition_rows(ctx.location, parts, check, index):
            db_id = conn.execute(select(S.tbl.c.db_id).where(S.tbl.c.tbl_id == ctx.tbl_id)).scalar_one()
            owners.claim_partitions(conn, table_obj(db_id, ctx.cat_name, ctx.db_name, ctx.name, ctx.tbl_id),
                                    ctx.location, parts, check=check, index=index)

    def _existing(self, conn: Connection, ctx: TableCtx, names: list[str]) -> set[str]:
        existing: set[str] = set()
        size = list_batch(self.store.backend)
        for i in range(0, len(names), size):
            existing.update(conn.execute(select(S.partitions.c.part_name).where(
                S.partitions.c.tbl_id == ctx.tbl_id,
                in_list(self.store.backend, S.partitions.c.part_name, names[i:i + size]))).scalars())
        return existing

    def _ids(self, conn: Connection, ctx: TableCtx, names: list[str]) -> dict[str, int]:
        ids: dict[str, int] = {}
        size = list_batch(self.store.backend)
        for i in range(0, len(names), size):
            ids.update((name, pid) for name, pid in conn.execute(
                select(S.partitions.c.part_name, S.partitions.c.part_id).where(
                    S.partitions.c.tbl_id == ctx.tbl_id,
                    in_list(self.store.backend, S.partitions.c.part_name, names[i:i + size]))))
        return ids

    def _partition_rows(self, conn: Connection, ctx: TableCtx, added: list[tuple[str, Partition]], now: int,
                        quick_stats: bool = True, fresh: Collection[str] = ()
                        ) -> tuple[list[tuple[Any, ...]], list[_NewPartition]]:
        """The `partitions` rows of new partitions (in `_PARTITION_COLUMNS` order; their own
        descriptors and schema versions are stored on the way), and each partition's parameters
        and location. `fresh`: locations whose files are not counted (directories the add made)."""
        versions: dict[tuple[Any, ...] | None, int] = {}
        rows, news = [], []
        shares = SharesTableSd(ctx)
        counter = self.tables.boundary.folder_counter()
        for name, part in added:
            sd = part.sd
            location = _location(ctx, name, part)
            own_sd = None
            if sd is not None and not shares(sd):
                own_sd = insert_sd(conn, sd)
            cols = sd.cols if sd is not None and sd.cols is not None else None
            key = tuple((c.name, c.type, c.comment) for c in cols) if cols is not None else None
            if key not in versions:
                versions[key] = ctx.schema_version if cols is None else version_for_columns(
                    conn, ctx.tbl_id, ctx.schema_version, cols, ctx.keys)
            params = dict(part.parameters or {})
            if quick_stats and location not in fresh:
                stats_params.on_add_partition(params, location, counter)  # numFiles/totalSize of existing data
            if not params.get(DDL_TIME):
                params[DDL_TIME] = str(now)
            # the row's own parts of its encoding (partition_wire.py): its values are the stored ones
            parts = (None,) * 4 if own_sd is not None else partition_wire.wire_parts(
                list(part.values), now, part.lastAccessTime or 0, location, params)
            rows.append((ctx.tbl_id, name, now, part.lastAccessTime or 0, now, location, own_sd,
                         versions[key], *parts))
            news.append((name, part, params, location))
        return rows, news

    # --- drop -----------------------------------------------------------------------------------

    def drop_partitions(self, db: str, tbl: str, names: Sequence[str] | None = None,
                        values_list: Sequence[Sequence[str]] | None = None, delete_data: bool = True,
                        if_exists: bool = False, need_result: bool = False,
                        exact_names: bool = False) -> EncodedStructs | None:
        """Drop partitions named by `names` or by value lists; missing ones are an error unless if_exists.
        `exact_names`: names match stored names as written (drop_partitions_req), else they are read
        as key=value specs (drop_partition_by_name). Returns the dropped partitions with need_result,
        encoded as a list answer."""
        result, dropped, doomed, ctx = self.store.run_write(
            self._drop, db, tbl, names=names, values_list=values_list, delete_data=delete_data,
            if_exists=if_exists, need_result=need_result, exact_names=exact_names)
        self.store.note_changes(dropped)
        # as Hive: the `k1=v` directories the dropped `k1=v/k2=w` ones leave empty go too
        self.tables.boundary.delete_partition_dirs(doomed, ctx.tbl_id, len(ctx.keys) - 1, ctx.location)
        return result

    def _drop(self, conn: Connection, db: str, tbl: str, names: Sequence[str] | None,
              values_list: Sequence[Sequence[str]] | None, delete_data: bool, if_exists: bool,
              need_result: bool, exact_names: bool) -> tuple[EncodedStructs | None, int, list[str], TableCtx]:
        """(the dropped partitions if needed, how many were dropped, the directories to delete, the
        table)."""
        ctx = self.contexts.read(conn, db, tbl)
        wanted = []
        for n in names or []:
            wanted.append(n if exact_names else make_name(ctx.key_names, name_values(ctx, n)))
        for vals in values_list or []:
            wanted.append(make_name(ctx.key_names, check_values(ctx, vals)))
        wanted = list(dict.fromkeys(wanted))
        p = S.partitions
        rows: list[Row[Any]] = []
        for i in range(0, len(wanted), BATCH):
            q = self.queries.select_rows(ctx, in_list(self.store.backend, p.c.part_name, wanted[i:i + BATCH]))
            rows.extend(conn.execute(q).all())
        if len(rows) != len(wanted) and not if_exists:
            found = {r.part_name for r in rows}
            missing = [n for n in wanted if n not in found]
            raise NoSuchObject(f"partition {missing[0]} of {ctx.db_name}.{ctx.name} does not exist")
        result = self.queries.encode(conn, ctx, rows) if need_result else None
        if result is not None and partition_wire.checking():
            partition_wire.check(result, self.queries.build(conn, ctx, rows))
        self.delete_rows(conn, [r.part_id for r in rows], [r.sd_id for r in rows if r.sd_id])
        if rows:
            table = self.tables.get_table_in(conn, ctx.db_name, ctx.name)
            dropped = [[v for _, v in split_name(r.part_name)] for r in rows]
            self.tables.notifications.record(conn, *EV.drop_partitions(table, dropped))
            if is_transactional(table.parameters):  # their compaction requests (Hive's cleanupRecords)
                drop_partition_rows(conn, ctx.cat_name, ctx.db_name, ctx.name, [r.part_name for r in rows])
        purge = delete_data and ctx.tbl_type != MANAGED and bool(rows) and purges(read_params(
            conn, S.tbl_params, "tbl_id", [ctx.tbl_id])[ctx.tbl_id])
        doomed = [r.location for r in rows if r.location] if delete_data and (ctx.tbl_type == MANAGED or purge) else []
        return result, len(rows), doomed, ctx

    def delete_rows(self, conn: Connection, part_ids: list[int], sd_ids: list[int]) -> None:
        """Delete partitions with their key values, parameters, statistics and own descriptors."""
        b = self.store.backend
        for i in range(0, len(part_ids), BATCH):
            chunk = part_ids[i:i + BATCH]
            conn.execute(delete(S.part_col_stats).where(in_list(b, S.part_col_stats.c.part_id, chunk)))
            conn.execute(delete(S.partition_key_val).where(in_list(b, S.partition_key_val.c.part_id, chunk)))
            conn.execute(delete(S.partition_params).where(in_list(b, S.partition_params.c.part_id, chunk)))
            conn.execute(delete(S.partitions).where(in_list(b, S.partitions.c.part_id, chunk)))
        for i in range(0, len(sd_ids), BATCH):
            conn.execute(delete(S.sds).where(in_list(b, S.sds.c.sd_id, sd_ids[i:i + BATCH])))

    # --- truncate -------------------------------------------------------------------------------

    def truncate(self, db: str, tbl: str, part_names: Sequence[str] | None) -> None:
        """Empty the directories of the named partitions, of every partition, or of the table (an
        external table's only with `external.table.purge`), around the locations of other objects
        inside them; refused when another object's location covers one (docs/security.md)."""
        with self.store.read() as conn:
            ctx = self.contexts.read(conn, db, tbl)
            params = read_params(conn, S.tbl_params, "tbl_id", [ctx.tbl_id])[ctx.tbl_id]
            if ctx.tbl_type != MANAGED and not purges(params):
                raise MetaError(f"Cannot truncate non-managed table {ctx.db_name}.{ctx.name}: an external table "
                                "keeps its files unless external.table.purge is true")
            locs: list[str | None]
            if part_names:
                locs = [p.sd.location for p in self.reads.get_partitions_by_names(db, tbl, part_names)]
            elif ctx.keys:
                locs = [r[0] for r in conn.execute(select(S.partitions.c.location).where(
                    S.partitions.c.tbl_id == ctx.tbl_id))]
            else:
                locs = [ctx.location]
        self.tables.boundary.empty_dirs([loc for loc in locs if loc], ctx.tbl_id, f"{db}.{tbl}")
        self.store.run_write(self._stats_after_truncate, db, tbl, part_names)

    def _stats_after_truncate(self, conn: Connection, db: str, tbl: str, part_names: Sequence[str] | None) -> None:
        """Hive's statistics of what was truncated (stats_params.reset_for_truncate, then counted as
        an alter counts them), with ALTER_TABLE / ALTER_PARTITION events marked as truncations."""
        ctx = self.contexts.read(conn, db, tbl)
        counter = self.tables.boundary.folder_counter()
        table = self.tables.get_table_in(conn, qualified_db_name(ctx.cat_name, ctx.db_name), ctx.name)
        if not ctx.keys and not part_names:
            params = stats_params.reset_for_truncate(table.parameters or {})
            stats_params.on_alter_table(params, ctx.tbl_type, False, ctx.location, stats_params.TRUNCATE_ENV,
                                        counter)
            write_params(conn, S.tbl_params, "tbl_id", ctx.tbl_id, params)
            after = self.tables.get_table_in(conn, qualified_db_name(ctx.cat_name, ctx.db_name), ctx.name)
            self.tables.notifications.record(conn, EV.alter_table(table, after, truncate=True))
            return
        rows: list[Row[Any]] = []
        if part_names:
            wanted = list(dict.fromkeys(part_names))
            for i in range(0, len(wanted), BATCH):
                rows.extend(conn.execute(self.queries.select_rows(ctx, in_list(
                    self.store.backend, S.partitions.c.part_name, wanted[i:i + BATCH]))).all())
        else:
            rows = list(conn.execute(self.queries.select_rows(ctx)).all())
        if not rows:
            return
        ids = {r.part_name: r.part_id for r in rows}
        befores = self.queries.build(conn, ctx, rows)
        names = [make_name(ctx.key_names, p.values) for p in befores]
        now = str(now_s())
        new_params: list[tuple[Any, ...]] = []
        for name, before in zip(names, befores):
            params = stats_params.reset_for_truncate(before.parameters or {})
            params[DDL_TIME] = now
            stats_params.on_alter_partition(dict(before.parameters or {}), params, ctx.tbl_type, before.sd.location,
                                             stats_params.TRUNCATE_ENV, counter)
            new_params.extend((ids[name], k, v) for k, v in params.items())
        touched = [ids[n] for n in names]
        b = self.store.backend
        for i in range(0, len(touched), BATCH):
            conn.execute(delete(S.partition_params).where(in_list(b, S.partition_params.c.part_id,
                                                                  touched[i:i + BATCH])))
        insert_rows(conn, S.partition_params, _PARAM_COLUMNS, new_params, check_rows, pg_types=_PARAM_PG_TYPES)
        partition_wire.refresh(conn, touched)
        afters = {tuple(p.values): p for p in self.queries.named(conn, ctx, names)}
        self.tables.notifications.record(conn, *EV.alter_partitions(
            table, [(p, afters[tuple(p.values)]) for p in befores], truncate=True))


def _by_name(ctx: TableCtx, parts: list[Partition]) -> dict[str, Partition]:
    """The partitions to add by name, checked: of this table, one value per key, none twice."""
    by_name: dict[str, Partition] = {}
    for part in parts:
        if (part.dbName and split_db_name(part.dbName)[1] != ctx.db_name) or \
                (part.tableName and part.tableName.lower() != ctx.name) or \
                (part.catName and part.catName.lower() != ctx.cat_name):
            raise MetaError("Partition does not belong to target table "
                            f"{ctx.db_name}.{ctx.name}: {part}")
        values = list(part.values or [])
        if len(values) != len(ctx.keys):
            raise MetaError(f"Incorrect number of partition values: {values} for keys {ctx.key_names}")
        if any(v is None for v in values):
            raise MetaError(f"Partition values must not be null: {values}")
        name = make_name(ctx.key_names, values)
        if name in by_name:
            raise MetaError(f"Duplicate partitions in the list: {name}")
        by_name[name] = part
    return by_name


def _location(ctx: TableCtx, name: str, part: Partition) -> str | None:
    """Where a new partition goes: where it says, else under its table's location."""
    return (part.sd.location if part.sd is not None else None) or (
        warehouse.join(ctx.location, name) if ctx.location else None)


def _with_location(sd: StorageDescriptor | None, location: str | None, ctx: TableCtx) -> StorageDescriptor:
    if sd is None:
        return build_sd(ctx.sd, location, list(ctx.cols))
    sd.location = location
    return sd
