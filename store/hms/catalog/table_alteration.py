"""alter_table: new columns (type changes Hive allows), parameters, type, and a rename, which for a
managed table moves its directory and the partition locations under it."""

from __future__ import annotations

import os
from typing import Any

from sqlalchemy import Connection, Row, delete, func, literal, select, update

from store.db import schema as S
from store.db.bulk import update_rows
from store.db.database import Store, now_s
from store.errors import InvalidOperation, MetaError, NoSuchObject
from store.hms.catalog.database_service import DatabaseService
from store.hms.catalog.table_rows import TableRows
from store.hms.common import (
    DDL_TIME,
    MANAGED,
    VIEW,
    check_location,
    col_tuples,
    column_problem,
    effective_table_type,
    incompatible_columns,
    load_columns,
    location_field,
    qualified_db_name,
    sd_row,
    split_db_name,
    stats_params,
    valid_object_name,
    version_for_columns,
    write_params,
)
from store.hms.notification_log import NotificationLog
from store.hms.notification_log import events as EV
from store.hms.txn import is_transactional, rename_table_rows
from store.storage import warehouse
from store.storage.boundary import StorageBoundary
from store.storage.owner_index import table_obj
from thrift_idl.hive_metastore.ttypes import FieldSchema, Table

# A directory move: (from, to)
Move = tuple[str, str]


class TableAlteration:
    def __init__(self, store: Store, databases: DatabaseService, rows: TableRows, notifications: NotificationLog,
                 boundary: StorageBoundary):
        self.boundary = boundary
        self.store = store
        self.databases = databases
        self.rows = rows
        self.notifications = notifications

    def alter_table(self, db_name: str, name: str, new: Table, env: dict[str, str] | None = None,
                    cascade: bool = False) -> None:
        if new is None or new.sd is None:
            raise InvalidOperation("New table is invalid: storage descriptor is required")
        new_db = _target_database(db_name, new)
        new_name = (new.tableName or name).lower()
        if not valid_object_name(new_name):
            raise InvalidOperation(f"{new.tableName} is not a valid object name")
        problem = column_problem(new.sd.cols)
        if problem:
            raise InvalidOperation(problem)
        check_location(new.sd.location, "Table location", "tbl", "location")
        # Directories moved so far. Kept across retries of the transaction: those directories are
        # already at their target; when the write finally fails they are put back.
        moved: list[Move] = []
        try:
            self.store.run_write(self._alter, db_name, name, new, new_db, new_name, env, cascade, moved)
        except Exception:
            for src, dst in reversed(moved):  # the commit failed after the move: put the data back
                warehouse.move_dir(dst, src)
            raise

    def _alter(self, conn: Connection, db_name: str, name: str, new: Table, new_db: str, new_name: str,
               env: dict[str, str] | None, cascade: bool, moved: list[Move]) -> None:
        try:
            old = self.rows.row(conn, db_name, name)
        except NoSuchObject as exc:
            raise InvalidOperation(f"table {split_db_name(db_name)[1]}.{name.lower()} doesn't exist") \
                from exc
        old_cols = _check_columns(conn, old, new)
        before = self.rows.build([old])[0]
        db_id, location = old.db_id, new.sd.location or old.location
        moves: list[Move] = []
        if (split_db_name(new_db)[1], new_name) != (old.db_name, old.name):
            db_id, location, moves = self._rename_target(conn, old, new, new_db, new_name)
        params = dict(new.parameters or {})
        if not params.get(DDL_TIME) or params.get(DDL_TIME) == "0":
            params[DDL_TIME] = str(now_s())
        tbl_type = effective_table_type(new.tableType or old.tbl_type, params)
        if db_id != old.db_id:
            self.boundary.owners.retag(conn, old.tbl_id, db_id)
        # a new location is taken (store/storage/owner_index.py) before anything looks at it
        if location != old.location and tbl_type != VIEW:
            self._claim(conn, old, db_id, new_db, new_name, location)
        # Hive recounts numFiles/totalSize of an unpartitioned table (from where its data is now)
        stats_params.on_alter_table(params, tbl_type, bool(new.partitionKeys),
                                    moves[0][0] if moves else location, env, self.boundary.folder_counter())
        _drop_stale_column_stats(conn, old.tbl_id, old_cols, new.sd.cols, params)
        version = version_for_columns(conn, old.tbl_id, old.schema_version, new.sd.cols, new.partitionKeys)
        conn.execute(update(S.sds).where(S.sds.c.sd_id == old.sd_id).values(**sd_row(new.sd)))
        conn.execute(update(S.tbl).where(S.tbl.c.tbl_id == old.tbl_id).values(
            db_id=db_id, name=new_name, owner=new.owner, owner_type=new.ownerType,
            last_access_time=new.lastAccessTime or old.last_access_time,
            retention=new.retention or 0, tbl_type=tbl_type, location=location,
            schema_version=version, view_original_text=new.viewOriginalText,
            view_expanded_text=new.viewExpandedText,
            rewrite_enabled=new.rewriteEnabled if new.rewriteEnabled is not None else old.rewrite_enabled,
        ))
        write_params(conn, S.tbl_params, "tbl_id", old.tbl_id, params)
        new_cat, new_db_name = split_db_name(new_db)
        if (new_db_name, new_name) != (old.db_name, old.name) and new_cat == old.cat_name and is_transactional(params):
            rename_table_rows(conn, new_cat, (old.db_name, old.name), (new_db_name, new_name))  # Hive's onRename
        if cascade and version != old.schema_version:
            conn.execute(update(S.partitions).where(S.partitions.c.tbl_id == old.tbl_id).values(
                schema_version=version))
        after = self.rows.build([self.rows.row(conn, new_db, new_name)])[0]
        self.notifications.record(conn, EV.alter_table(before, after))
        # Data moves last, still inside the transaction: a failed move rolls the metadata back.
        _move_dirs(moves, f"{split_db_name(new_db)[1]}.{new_name}", moved)

    def _rename_target(self, conn: Connection, old: Row[Any], new: Table, new_db: str,
                       new_name: str) -> tuple[int, str | None, list[Move]]:
        """(the database id, the location, the directory moves) of a table renamed or moved to
        another database; a managed table in its default place moves with its name."""
        try:
            target_db = self.databases.db_row(conn, new_db)
        except NoSuchObject as exc:
            raise InvalidOperation("Unable to change partition or table. "
                                   f"Database {split_db_name(new_db)[1]} does not exist") from exc
        if conn.execute(select(S.tbl.c.tbl_id).where(
                S.tbl.c.db_id == target_db.db_id, S.tbl.c.name == new_name)).first():
            raise InvalidOperation(f"new table {target_db.name}.{new_name} already exists")
        location = new.sd.location or old.location
        moves: list[Move] = []
        if old.tbl_type == MANAGED and (not new.sd.location or new.sd.location == old.location) \
                and old.location and self.boundary.may(old.location):  # else it stays where it is
            # Hive 4 moves it to its plain name (at create it writes special characters as codes)
            location = warehouse.join(
                target_db.location_uri or self.databases.default_db_location(conn, new_db), new_name)
            self.boundary.check_move(conn, old.location, old.tbl_id, f"table {old.db_name}.{old.name}")
            moves.append((old.location, location))
            _relocate_partitions(conn, old.tbl_id, old.location, location)
        return target_db.db_id, location, moves

    def _claim(self, conn: Connection, old: Row[Any], db_id: int, new_db: str, new_name: str,
               location: str | None) -> None:
        cat, db = split_db_name(new_db)
        obj = table_obj(db_id, cat, db, new_name, old.tbl_id)
        self.boundary.owners.claim(conn, obj, [location])
        self.boundary.owners.reindex_partitions(conn, obj, location)


def _target_database(db_name: str, new: Table) -> str:
    """The database (as the store names it) a table of `db_name` goes to: the one `new` names, in
    the table's catalog; a table cannot move to another catalog."""
    cat, _ = split_db_name(db_name)
    target = (new.dbName or db_name).lower()
    new_cat, new_db = split_db_name(target)
    if not target.startswith("@"):  # the name states no catalog: the table's, unless new.catName says
        new_cat = (new.catName or cat).lower()
    if new_cat != cat:
        raise InvalidOperation(f"Tables cannot be moved between catalogs, old catalog{cat}, new catalog {new_cat}")
    return qualified_db_name(cat, new_db)


def _check_columns(conn: Connection, old: Row[Any], new: Table) -> list[FieldSchema]:
    """The table's current columns, once the new ones may replace them (types Hive can convert,
    the same partition keys)."""
    old_cols, old_keys = load_columns(conn, old.tbl_id, [old.schema_version])[old.schema_version]
    bad = incompatible_columns(old_cols, new.sd.cols) if old.tbl_type != VIEW else []
    if bad:
        raise InvalidOperation(
            "The following columns have types incompatible with the existing columns in their "
            "respective positions :\n" + ",".join(bad))
    if [(n, t) for n, t, _ in col_tuples(old_keys)] != \
            [(n, t) for n, t, _ in col_tuples(new.partitionKeys)]:
        raise InvalidOperation("partition keys can not be changed.")
    return old_cols


def _drop_stale_column_stats(conn: Connection, tbl_id: int, old_cols: list[FieldSchema],
                             new_cols: list[FieldSchema], params: dict[str, str]) -> None:
    """Column statistics of columns that are gone or changed type are dropped with them; Hive 4 then
    writes the statistics of the other columns again, which marks them accurate."""
    new_types = {n: t.lower() for n, t, _ in col_tuples(new_cols)}
    if [(n, t.lower()) for n, t, _ in col_tuples(old_cols)] != list(new_types.items()):
        tcs = S.tab_col_stats
        rows = conn.execute(select(tcs.c.column_name, tcs.c.column_type).where(tcs.c.tbl_id == tbl_id)).all()
        stale = sorted({r.column_name for r in rows if new_types.get(r.column_name) != (r.column_type or "").lower()})
        if stale:
            conn.execute(delete(tcs).where(tcs.c.tbl_id == tbl_id, tcs.c.column_name.in_(stale)))
            stats_params.remove_column_stats_state(params, stale)
            stats_params.set_column_stats_state(params, sorted({r.column_name for r in rows} - set(stale)))


def _relocate_partitions(conn: Connection, tbl_id: int, old_loc: str, new_loc: str) -> None:
    """Partition locations under the table's old directory move to the same place under the new one."""
    p = S.partitions
    prefix = old_loc.rstrip("/") + "/"
    conn.execute(update(p).where(
        p.c.tbl_id == tbl_id, p.c.location.startswith(prefix, autoescape=True)).values(
        location=literal(new_loc.rstrip("/") + "/") + func.substr(p.c.location, len(prefix) + 1)))
    # each moved partition's encoded location (store/hms/partitions/partition_wire.py)
    moved = conn.execute(select(p.c.part_id, p.c.location).where(
        p.c.tbl_id == tbl_id, p.c.location.startswith(new_loc.rstrip("/") + "/", autoescape=True))).all()
    update_rows(conn, p, "part_id", ("w_location",), [(r.part_id, location_field(r.location)) for r in moved],
                ("int8", "bytea"))


def _move_dirs(moves: list[Move], table: str, moved: list[Move]) -> None:
    """Move the directories; each one moved is recorded in `moved`."""
    for src, dst in moves:
        try:
            done = warehouse.move_dir(src, dst)
        except OSError as exc:
            dst_path = warehouse.local_path(dst)
            if dst_path is not None and os.path.exists(dst_path):
                raise InvalidOperation(
                    f"New location for this table {table} already exists : {dst}") from exc
            raise MetaError(f"Unable to move {src} to {dst}: {exc}") from exc
        if done:
            moved.append((src, dst))
        elif warehouse.local_path(src) is None:
            raise MetaError(f"Unable to move {src} to {dst}")
