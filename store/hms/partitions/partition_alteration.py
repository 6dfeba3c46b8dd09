"""Partition alteration: alter_partition(s) (descriptor, parameters, columns) and rename_partition
(new values and name, and for managed tables a new directory)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from sqlalchemy import Connection, Row, bindparam, delete, select, update

from store.db import schema as S
from store.db.bulk import insert_rows, writes_started
from store.db.database import Store, now_s
from store.db.dialect import in_list, list_batch, params_of_many
from store.errors import InvalidOperation, NoSuchObject
from store.hms.catalog import TableService
from store.hms.common import (
    DDL_TIME,
    MANAGED,
    check_rows,
    col_tuples,
    insert_sd,
    read_params,
    same_sd,
    sd_row,
    stats_params,
    version_for_columns,
)
from store.hms.notification_log import events as EV
from store.hms.partitions import partition_wire
from store.hms.partitions.partition_context import SharesTableSd, TableContexts, TableCtx, check_values
from store.hms.partitions.partition_key_values import rename_key_values
from store.hms.partitions.partition_names import make_name
from store.hms.partitions.partition_queries import PartitionQueries
from store.hms.txn import is_transactional, rename_partition_rows
from store.storage import warehouse
from store.storage.owner_index import table_obj
from thrift_idl.hive_metastore.ttypes import Partition, StorageDescriptor

# the columns an alter of many partitions updates; the parameters' columns (store/db/bulk.py)
_UPDATED = ("update_time", "last_access_time", "location", "sd_id", "schema_version")
_PARAM_COLUMNS = ("part_id", "param_key", "param_value")
_PARAM_PG_TYPES = ("int8", "text", "text")  # for PostgreSQL's binary COPY
Afters = dict[tuple[str, ...], Partition]  # partitions as altered, by their values


def _changes(up: dict[str, Any], row: Row[Any]) -> tuple[tuple[str, Any], ...]:
    """What an update changes in its row (its update time always)."""
    return tuple((k, up[k]) for k in _UPDATED if k == "update_time" or up[k] != getattr(row, k))


def _pairs(befores: list[Partition], afters: Afters) -> list[tuple[Partition, Partition]]:
    return [(b, afters[tuple(b.values)]) for b in befores if tuple(b.values) in afters]


def _altered(before: Partition, location: str | None, last_access: int | None, params: dict[str, str]) -> Partition:
    """`before` (built from its row, its descriptor the table's) as an alter that kept the descriptor
    shared at the same schema version leaves it: what building its new row gives."""
    sd = before.sd
    if sd.location != location:
        sd = StorageDescriptor.__new__(StorageDescriptor)
        sd.__dict__ = {**before.sd.__dict__, "location": location}
    after = Partition.__new__(Partition)
    after.__dict__ = {**before.__dict__, "sd": sd, "lastAccessTime": last_access, "parameters": params}
    return after


class PartitionAlteration:
    def __init__(self, store: Store, contexts: TableContexts, queries: PartitionQueries, tables: TableService):
        self.tables = tables
        self.store = store
        self.contexts = contexts
        self.queries = queries

    def alter_partitions(self, db: str, tbl: str, parts: list[Partition], env: dict[str, str] | None = None) -> None:
        if not parts:
            return
        self.store.run_write(self._alter, db, tbl, parts, env)

    def _alter(self, conn: Connection, db: str, tbl: str, parts: list[Partition], env: dict[str, str] | None) -> None:
        try:
            ctx = self.contexts.read(conn, db, tbl)
        except NoSuchObject as exc:
            raise InvalidOperation(f"alter is not possible: {exc.message}") from exc
        now = now_s()
        names = []
        for part in parts:
            values = list(part.values or [])
            if len(values) != len(ctx.keys):
                raise InvalidOperation(f"alter is not possible: partition values {values} "
                                       f"do not match keys {ctx.key_names}")
            names.append(make_name(ctx.key_names, values))
        wanted = list(dict.fromkeys(names))
        if len(wanted) == len(names) > 1:
            rows = self._rows(conn, ctx, wanted)  # read once: the events' befores and the writes'
            befores = self.queries.build(conn, ctx, list(rows.values()))
            afters, writes = self._alter_many(conn, ctx, names, parts, now, env, rows, dict(zip(rows, befores)))
            self._finish_many(conn, ctx, befores, afters, writes)
        else:
            befores = self.queries.named(conn, ctx, wanted)
            for name, part in zip(names, parts):  # one, or one named twice (each alter sees the last)
                self._alter_one(conn, ctx, name, part, now, env=env)
            self._record(conn, ctx, befores)

    def _rows(self, conn: Connection, ctx: TableCtx, names: list[str]) -> dict[str, Row[Any]]:
        """The `select_rows` rows of the partitions of `names` that exist, by name."""
        p = S.partitions
        b = self.store.backend
        rows: dict[str, Row[Any]] = {}
        size = list_batch(b)
        for i in range(0, len(names), size):
            q = self.queries.select_rows(ctx, in_list(b, p.c.part_name, names[i:i + size]))
            rows.update((r.part_name, r) for r in conn.execute(q))
        return rows

    def _record(self, conn: Connection, ctx: TableCtx, befores: list[Partition],
                renamed_to: str | None = None) -> None:
        """ALTER_PARTITION events: each partition as it was and as it is now (read back)."""
        if renamed_to:
            pairs = list(zip(befores, self.queries.named(conn, ctx, [renamed_to])))
        else:
            pairs = _pairs(befores, self._read_back(conn, ctx, befores))
        table = self.tables.get_table_in(conn, ctx.db_name, ctx.name)
        self.tables.notifications.record(conn, *EV.alter_partitions(table, pairs))

    def _read_back(self, conn: Connection, ctx: TableCtx, befores: list[Partition]) -> Afters:
        return {tuple(p.values): p for p in self.queries.named(
            conn, ctx, [make_name(ctx.key_names, p.values) for p in befores])}

    def _finish_many(self, conn: Connection, ctx: TableCtx, befores: list[Partition], afters: Afters | None,
                     writes: Callable[[], None]) -> None:
        """_alter_many's last `writes` (partition rows, parameters) and the events. With the
        partitions as altered known (`afters`), the writes go on (on PostgreSQL, on a thread of their
        own) while this thread writes the events' text (HMS_WIRE_CHECK: `afters` compared with the
        partitions read back); else the partitions are read back after them."""
        if afters is None:
            writes()
            self._record(conn, ctx, befores)
            return
        table = self.tables.get_table_in(conn, ctx.db_name, ctx.name)  # (the writes hold the connection)
        with writes_started(conn, "alter of partitions", writes).alongside():
            events = self.tables.notifications.encode(*EV.alter_partitions(table, _pairs(befores, afters)))
        if partition_wire.checking() and afters != self._read_back(conn, ctx, befores):
            raise AssertionError(f"alter_partitions: the partitions of {ctx.db_name}.{ctx.name} as altered "
                                 "differ from their rows read back")
        self.tables.notifications.record_encoded(conn, events)

    def _alter_many(self, conn: Connection, ctx: TableCtx, names: list[str], parts: list[Partition],
                    now: int, env: dict[str, str] | None, rows: dict[str, Row[Any]],
                    befores: dict[str, Partition]) -> tuple[Afters | None, Callable[[], None]]:
        """_alter_one for many partitions (of distinct `names`, whose `rows` the caller read and
        built: `befores`) with a few statements in all: partition rows updated and parameters
        written (_write_many): those of a partition that kept all its old ones unchanged are added
        to them, the others replaced. Returns the partitions as reading them back would build them
        (by values) when each kept sharing the table's descriptor at its schema version (else None),
        and the writes left to make (the caller makes them: they need nothing of this thread's)."""
        afters: Afters | None = {}
        for name in names:
            if name not in rows:
                raise InvalidOperation(f"alter is not possible: partition {name} of "
                                       f"{ctx.db_name}.{ctx.name} does not exist")
        old_params = dict(zip(names, params_of_many(rows[n].params_json for n in names)))
        rows_by_id = {r.part_id: r for r in rows.values()}
        names_by_id = {r.part_id: n for n, r in rows.items()}
        versions: dict[tuple[Any, ...], int] = {}
        updates: list[dict[str, Any]] = []
        new_params: list[tuple[Any, ...]] = []
        touched, dropped_sds = [], []
        wire: list[tuple[Any, ...]] = []
        counter = self.tables.boundary.folder_counter()
        shares = SharesTableSd(ctx)
        for name, part in zip(names, parts):
            row = rows[name]
            sd = part.sd
            up = {"pid": row.part_id, "update_time": now,
                  "last_access_time": part.lastAccessTime or row.last_access_time,
                  "location": row.location, "sd_id": row.sd_id, "schema_version": row.schema_version}
            if sd is not None:
                up["location"] = sd.location or row.location
                if shares(sd):
                    up["sd_id"] = None
                    if row.sd_id is not None:
                        dropped_sds.append(row.sd_id)
                elif row.sd_id is not None:
                    conn.execute(update(S.sds).where(S.sds.c.sd_id == row.sd_id).values(**sd_row(sd)))
                else:
                    up["sd_id"] = insert_sd(conn, sd)
                if sd.cols is not None:
                    key = tuple(col_tuples(sd.cols))
                    if key not in versions:
                        versions[key] = version_for_columns(conn, ctx.tbl_id, ctx.schema_version, sd.cols, ctx.keys)
                    up["schema_version"] = versions[key]
            updates.append(up)
            params = dict(part.parameters or {})
            stats_params.on_alter_partition(dict(old_params[name]), params, ctx.tbl_type, up["location"], env,
                                             counter)
            if not params.get(DDL_TIME) or params.get(DDL_TIME) == "0":
                params[DDL_TIME] = str(now)
            old = old_params[name]
            if all(v != "" and params.get(k) == v for k, v in old.items()):
                # none removed or changed (commonly: one added, or none): only the new ones go in
                new_params.extend((row.part_id, k, v) for k, v in params.items() if k not in old)
            else:  # replaced (a stored NULL reads as "": written again)
                touched.append(row.part_id)
                new_params.extend((row.part_id, k, v) for k, v in params.items())
            # the row's encoded parts (partition_wire.py): its values are the ones it was found by
            wire.append((row.part_id, *((None,) * 4 if up["sd_id"] is not None else partition_wire.wire_parts(
                list(part.values), row.create_time, up["last_access_time"], up["location"], params))))
            if afters is not None:
                if row.sd_id is None and up["sd_id"] is None and up["schema_version"] == row.schema_version:
                    before = befores[name]
                    afters[tuple(before.values)] = _altered(before, up["location"], up["last_access_time"], params)
                else:
                    afters = None
        moved = {u["pid"]: u["location"] for u in updates if u["location"] != rows_by_id[u["pid"]].location}
        self._claim(conn, ctx, [(pid, names_by_id[pid], loc) for pid, loc in moved.items()])  # (the caller's)

        def writes() -> None:
            self._write_many(conn, rows_by_id, updates, dropped_sds, touched, wire, new_params)
        return afters, writes

    def _write_many(self, conn: Connection, rows: dict[int, Row[Any]], updates: list[dict[str, Any]],
                    dropped_sds: list[int], touched: list[int], wire: list[tuple[Any, ...]],
                    new_params: list[tuple[Any, ...]]) -> None:
        """_alter_many's writes with few statements whatever the number of partitions: the
        partition rows updated by what changed (the partitions that change alike in one UPDATE of
        an id list: commonly all of them, and then by the statement that writes their encoded parts,
        `wire`), descriptors no longer their own deleted, the parameters of the `touched` partitions
        deleted, then `new_params` inserted (one bulk insert: store/db/bulk.py)."""
        p, pp = S.partitions, S.partition_params
        b = self.store.backend
        alike: dict[tuple[tuple[str, Any], ...], list[dict[str, Any]]] = {}
        for u in updates:
            alike.setdefault(_changes(u, rows[u["pid"]]), []).append(u)
        singles = []
        size = list_batch(b)
        if len(alike) == 1 and len(updates) > 1 and len(wire) == len(updates):  # all alike: one statement
            partition_wire.write(conn, wire, dict(next(iter(alike))))
            alike, wire = {}, []
        for changes, ups in alike.items():
            if len(ups) == 1:
                singles.extend(ups)
                continue
            pids = [u["pid"] for u in ups]
            for i in range(0, len(pids), size):
                conn.execute(update(p).where(in_list(b, p.c.part_id, pids[i:i + size])).values(**dict(changes)))
        if singles:  # each changing its own way (e.g. its own new location): one executemany
            conn.execute(update(p).where(p.c.part_id == bindparam("pid")).values(
                **{k: bindparam("b_" + k) for k in _UPDATED}),
                [{"pid": u["pid"], **{"b_" + k: u[k] for k in _UPDATED}} for u in singles])
        for i in range(0, len(dropped_sds), size):
            conn.execute(delete(S.sds).where(in_list(b, S.sds.c.sd_id, dropped_sds[i:i + size])))
        for i in range(0, len(touched), size):
            conn.execute(delete(pp).where(in_list(b, pp.c.part_id, touched[i:i + size])))
        if wire:
            partition_wire.write(conn, wire)
        insert_rows(conn, pp, _PARAM_COLUMNS, new_params, check_rows, _PARAM_PG_TYPES)

    def _alter_one(self, conn: Connection, ctx: TableCtx, old_name: str, part: Partition, now: int,
                   new_name: str | None = None, location: str | None = None,
                   env: dict[str, str] | None = None) -> None:
        p = S.partitions
        row = conn.execute(select(p).where(p.c.tbl_id == ctx.tbl_id, p.c.part_name == old_name)).first()
        if row is None:
            raise InvalidOperation(f"alter is not possible: partition {old_name} of "
                                   f"{ctx.db_name}.{ctx.name} does not exist")
        sd = part.sd
        values: dict[str, Any] = {"update_time": now, "last_access_time": part.lastAccessTime or row.last_access_time}
        if sd is not None:
            values["location"] = location or sd.location or row.location
            if same_sd(ctx.sd, sd):
                values["sd_id"] = None
            elif row.sd_id is not None:
                conn.execute(update(S.sds).where(S.sds.c.sd_id == row.sd_id).values(**sd_row(sd)))
            else:
                values["sd_id"] = insert_sd(conn, sd)
            if sd.cols is not None:
                values["schema_version"] = version_for_columns(conn, ctx.tbl_id, ctx.schema_version, sd.cols, ctx.keys)
        elif location:
            values["location"] = location
        if new_name:
            values["part_name"] = new_name
        conn.execute(update(p).where(p.c.part_id == row.part_id).values(**values))
        if values.get("location", row.location) != row.location:
            self._claim(conn, ctx, [(row.part_id, new_name or old_name, values["location"])])
        if sd is not None and "sd_id" in values and values["sd_id"] is None and row.sd_id is not None:
            conn.execute(delete(S.sds).where(S.sds.c.sd_id == row.sd_id))
        params = dict(part.parameters or {})
        old_params = read_params(conn, S.partition_params, "part_id", [row.part_id])[row.part_id]
        stats_params.on_alter_partition(old_params, params, ctx.tbl_type, values.get("location", row.location), env,
                                         self.tables.boundary.folder_counter())
        if not params.get(DDL_TIME) or params.get(DDL_TIME) == "0":
            params[DDL_TIME] = str(now)
        conn.execute(delete(S.partition_params).where(S.partition_params.c.part_id == row.part_id))
        conn.execute(S.partition_params.insert(), [
            {"part_id": row.part_id, "param_key": k, "param_value": v} for k, v in params.items()])
        if new_name:
            rename_key_values(conn, row.part_id, part.values)
        partition_wire.refresh(conn, [row.part_id])

    def _claim(self, conn: Connection, ctx: TableCtx, parts: list[tuple[int, str, str | None]]) -> None:
        """Partitions with new locations take them (store/storage/owner_index.py)."""
        owners = self.tables.boundary.owners
        if parts and (owners.needs_partition_rows(ctx.location, parts) or owners.indexed(conn, [p[0] for p in parts])):
            db_id = conn.execute(select(S.tbl.c.db_id).where(S.tbl.c.tbl_id == ctx.tbl_id)).scalar_one()
            owners.claim_partitions(conn, table_obj(db_id, ctx.cat_name, ctx.db_name, ctx.name, ctx.tbl_id),
                                    ctx.location, parts, replace=True)

    def rename_partition(self, db: str, tbl: str, old_values: Sequence[str] | None, new_part: Partition) -> None:
        self.store.run_write(self._rename, db, tbl, old_values, new_part)

    def _rename(self, conn: Connection, db: str, tbl: str, old_values: Sequence[str] | None,
                new_part: Partition) -> None:
        try:
            ctx = self.contexts.read(conn, db, tbl)
        except NoSuchObject as exc:
            raise InvalidOperation(f"Unable to rename partition: {exc.message}") from exc
        if not old_values:  # Hive: empty old values means a plain alter
            name = make_name(ctx.key_names, new_part.values)
            befores = self.queries.named(conn, ctx, [name])
            self._alter_one(conn, ctx, name, new_part, now_s())
            self._record(conn, ctx, befores)
            return
        old_name = make_name(ctx.key_names, check_values(ctx, old_values))
        new_name = make_name(ctx.key_names, check_values(ctx, new_part.values))
        p = S.partitions
        old = conn.execute(select(p).where(p.c.tbl_id == ctx.tbl_id, p.c.part_name == old_name)).first()
        if old is None:
            raise InvalidOperation(f"Unable to rename partition: {old_name} does not exist")
        if conn.execute(select(p.c.part_id).where(p.c.tbl_id == ctx.tbl_id, p.c.part_name == new_name)).first():
            raise InvalidOperation(
                f"Partition already exists:{ctx.db_name}.{ctx.name}.[{', '.join(new_part.values)}]")
        location = None
        moves = []
        if ctx.tbl_type == MANAGED and ctx.location and (not old.location or self.tables.boundary.may(old.location)):
            location = warehouse.join(ctx.location, new_name)  # (a directory outside stays where it is)
            if old.location and old.location != location:
                self.tables.boundary.check_move(conn, old.location, ctx.tbl_id,
                                                f"partition {old_name} of {ctx.db_name}.{ctx.name}")
                moves.append((old.location, location))
        befores = self.queries.named(conn, ctx, [old_name])
        self._alter_one(conn, ctx, old_name, new_part, now_s(), new_name=new_name, location=location)
        self._record(conn, ctx, befores, renamed_to=new_name)
        if is_transactional(read_params(conn, S.tbl_params, "tbl_id", [ctx.tbl_id])[ctx.tbl_id]):
            rename_partition_rows(conn, ctx.cat_name, ctx.db_name, ctx.name, old_name, new_name)  # Hive's onRename
        # the directory moves inside the transaction: a failed move rolls the rename back
        for src, dst in moves:
            warehouse.move_dir(src, dst)
