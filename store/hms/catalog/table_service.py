"""RFC-36 table service: catalogs, databases and tables (create, read, list, alter, drop).

`TableService` is the entry point the handlers and the Hudi services use. Databases are
DatabaseService's (database_service.py), catalogs CatalogService's (catalog_service.py),
alter_table is TableAlteration's (table_alteration.py); the statement that reads whole tables is
in table_rows.py, Hive's naming and type rules in store/hms/common (hive_rules.py).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import replace
from typing import Any

from sqlalchemy import Connection, select

from store.db import schema as S
from store.db.database import Store, inserted_id, now_s
from store.db.dialect import BATCH
from store.db.shared_reads import SharedReads
from store.errors import AlreadyExists, InvalidObject, MetaError, NoSuchObject
from store.hms.catalog.catalog_service import CatalogService
from store.hms.catalog.database_service import DatabaseService, database_is
from store.hms.catalog.table_alteration import TableAlteration
from store.hms.catalog.table_rows import TableRows, delete_table_rows, partition_dirs_outside
from store.hms.common import (
    DDL_TIME,
    DEFAULT_CATALOG,
    MANAGED,
    VIEW,
    EncodedStruct,
    check_location,
    column_problem,
    effective_table_type,
    insert_columns,
    insert_sd,
    match_names,
    name_pattern,
    purges,
    split_db_name,
    stats_params,
    table_dir_name,
    valid_object_name,
    wire_checking,
    write_params,
)
from store.hms.notification_log import NotificationLog
from store.hms.notification_log import events as EV
from store.hms.txn import drop_table_rows, is_transactional
from store.storage import warehouse
from store.storage.boundary import StorageBoundary
from store.storage.owner_index import HUDI, TBL, table_obj
from store.storage.ownership import location_key
from thrift_idl.hive_metastore.ttypes import (
    Catalog,
    Database,
    HiveObjectType,
    PrincipalPrivilegeSet,
    PrincipalType,
    Table,
    TableMeta,
)


class TableService:
    def __init__(self, store: Store, notifications: NotificationLog, boundary: StorageBoundary | None = None):
        self.store = store
        self.notifications = notifications
        self.boundary = boundary or StorageBoundary(store)
        self.rows = TableRows(store.backend)
        self.databases = DatabaseService(store, notifications, self.rows, self.boundary)
        self.catalogs = CatalogService(store, self.databases)
        self.alteration = TableAlteration(store, self.databases, self.rows, notifications, self.boundary)
        self._keys: SharedReads[tuple[str, str, str], tuple[int, int]] | None = (
            None if store.backend == "sqlite" else SharedReads(self._read_keys))

    # --- catalogs -------------------------------------------------------------------------------

    def create_catalog(self, catalog: Catalog, owner: str | None = None) -> None:
        self.catalogs.create_catalog(catalog, owner)

    def get_catalog(self, name: str | None) -> Catalog:
        return self.catalogs.get_catalog(name)

    def list_catalogs(self) -> list[str]:
        return self.catalogs.list_catalogs()

    def alter_catalog(self, name: str | None, new: Catalog) -> None:
        self.catalogs.alter_catalog(name, new)

    def drop_catalog(self, name: str | None) -> None:
        self.catalogs.drop_catalog(name)

    # --- databases ------------------------------------------------------------------------------

    @property
    def warehouse_uri(self) -> str:
        return self.databases.warehouse_uri

    def create_database(self, database: Database) -> None:
        self.databases.create_database(database)

    def ensure_default_database(self) -> None:
        self.databases.ensure_default_database()

    def db_id(self, conn: Connection, name: str) -> int:
        return self.databases.db_id(conn, name)

    def get_database(self, name: str) -> Database:
        return self.databases.get_database(name)

    def list_databases(self, pattern: str | None = None) -> list[str]:
        return self.databases.list_databases(pattern)

    def alter_database(self, name: str, database: Database) -> None:
        self.databases.alter_database(name, database)

    def drop_database(self, name: str, delete_data: bool, cascade: bool) -> None:
        self.databases.drop_database(name, delete_data, cascade)

    # --- tables ---------------------------------------------------------------------------------

    def create_table(self, table: Table, env: dict[str, str] | None = None,
                     also: Callable[[Connection], None] | None = None) -> None:
        """`also(conn)` runs in the same transaction once the table's rows are in (its constraints)."""
        db_name, name = _check_new_table(table)
        params = dict(table.parameters or {})
        if params.get("transactional", "").lower() == "false":  # as Hive's TransactionalValidationListener
            del params["transactional"]
        tbl_type = effective_table_type(table.tableType or MANAGED, params)
        now = now_s()
        params.setdefault(DDL_TIME, str(now))
        check_location(table.sd.location if table.sd else None, "Table location", "tbl", "location")
        made = self.store.run_write(self._create, table, db_name, name, tbl_type, params, now, env, also)
        # after the commit; never fails the call. A partitioned table's: its partitions are separate hierarchies
        self.boundary.make_dirs(made, top=bool(table.partitionKeys))

    def _create(self, conn: Connection, table: Table, db_name: str, name: str, tbl_type: str,
                params: dict[str, str], now: int, env: dict[str, str] | None,
                also: Callable[[Connection], None] | None = None) -> list[str]:
        """Insert the table's rows; returns the directories to make."""
        try:
            db = self.databases.db_row(conn, db_name)
        except NoSuchObject as exc:
            raise InvalidObject(f"Database {split_db_name(db_name)[1]} doesn't exist.") from exc
        if conn.execute(select(S.tbl.c.tbl_id).where(
                S.tbl.c.db_id == db.db_id, S.tbl.c.name == name)).first():
            raise AlreadyExists(f"Table {db.cat_name}.{db.name}.{name} already exists")
        sd = table.sd
        location = sd.location
        if tbl_type != VIEW and not location:
            location = warehouse.join(db.location_uri or self.databases.default_db_location(conn, db_name),
                                      table_dir_name(name))
        obj = table_obj(db.db_id, db.cat_name, db.name, name, 0)
        if tbl_type != VIEW:  # before anything looks at the location (store/storage/owner_index.py)
            self.boundary.owners.check(conn, obj, [location] if location else [], TBL)
        tparams = dict(params)
        stats_params.on_create_table(tparams, tbl_type, bool(table.partitionKeys), location, env,
                                     self.boundary.folder_counter())
        sd_id = insert_sd(conn, sd)
        tbl_id = inserted_id(conn.execute(S.tbl.insert().values(
            db_id=db.db_id, name=name, owner=table.owner, owner_type=table.ownerType,
            create_time=now, last_access_time=table.lastAccessTime or 0,
            retention=table.retention or 0, tbl_type=tbl_type, location=location, sd_id=sd_id,
            schema_version=0, view_original_text=table.viewOriginalText,
            view_expanded_text=table.viewExpandedText, rewrite_enabled=table.rewriteEnabled,
            temporary=table.temporary,
        )))
        insert_columns(conn, tbl_id, 0, sd.cols, table.partitionKeys)
        write_params(conn, S.tbl_params, "tbl_id", tbl_id, tparams, replace=False)
        _insert_table_privileges(conn, db.db_id, tbl_id, table.privileges, now)
        if tbl_type != VIEW:  # the table takes its location
            self.boundary.owners.claim(conn, replace(obj, tbl_id=tbl_id), [location], checked=True)
        if also is not None:
            also(conn)
        self.notifications.record(conn, EV.create_table(self.get_table_in(conn, db_name, name)))
        return [location] if location and tbl_type != VIEW else []

    def get_table(self, db_name: str, name: str) -> Table:
        # run_read: calls read the table back after writing it, where the router cannot retry
        return self.store.run_read(self.get_table_in, db_name, name)

    def get_table_encoded(self, db_name: str, name: str) -> EncodedStruct:
        """get_table as Thrift bytes, for an answer (TableRows.encoded)."""
        return self.get_table_encoded_flagged(db_name, name)[0]

    def get_table_encoded_flagged(self, db_name: str, name: str) -> tuple[EncodedStruct, bool]:
        """get_table as Thrift bytes, and whether the table is insert-only (hive_rules.is_insert_only)."""
        kept = self._kept_answer(db_name, name)
        if kept is None:
            kept = self.store.run_read(self.rows.encoded, db_name, name)
        return EncodedStruct(kept[0]), kept[1]

    def _kept_answer(self, db_name: str, name: str) -> tuple[bytes, bool] | None:
        """The answer kept for the table's current key, the key read in a statement shared with
        the process's concurrent calls (store/db/shared_reads.py); None when there is none (a
        table changed or absent: the whole read finds it or says so). Not inside a write
        transaction (its reads see what it wrote), nor on SQLite (no round trip to save)."""
        if self._keys is None or self.rows.versioned is not True or self.store.joined() is not None:
            return None
        cat, db = split_db_name(db_name)
        key = self._keys.get((cat, db, name.lower()))
        kept = self.rows.kept(key) if key is not None else None
        if kept is not None and wire_checking():
            self.store.run_read(self.rows.check_kept, db_name, name, key, kept)
        return kept

    def _read_keys(self, wanted: Sequence[tuple[str, str, str]]) -> dict[tuple, tuple[int, int]]:
        return self.store.run_read(self.rows.keys, wanted)

    def get_table_in(self, conn: Connection, db_name: str, name: str) -> Table:
        """get_table inside the caller's transaction."""
        return self.rows.build([self.rows.row(conn, db_name, name)])[0]

    def get_tables_by_names(self, db_name: str, names: Sequence[str] | None) -> list[Table]:
        wanted = list(dict.fromkeys(n.lower() for n in names or []))
        with self.store.read() as conn:
            self.databases.db_id(conn, db_name)
            out: list[Table] = []
            for i in range(0, len(wanted), BATCH):
                rows = conn.execute(self.rows.statement().where(
                    database_is(db_name), S.tbl.c.name.in_(wanted[i:i + BATCH]))).all()
                out.extend(self.rows.build(rows))
        order = {n: i for i, n in enumerate(wanted)}
        return sorted(out, key=lambda t: order[t.tableName])

    def list_tables(self, db_name: str, pattern: str | None = None, table_type: str | None = None) -> list[str]:
        with self.store.read() as conn:
            q = select(S.tbl.c.name).select_from(S.tbl.join(S.db, S.tbl.c.db_id == S.db.c.db_id)).where(
                database_is(db_name))
            if table_type:
                q = q.where(S.tbl.c.tbl_type == table_type)
            names = conn.execute(q).scalars().all()
        return match_names(names, pattern)

    def table_meta(self, db_patterns: str | None, tbl_patterns: str | None,
                   types: list[str] | None) -> list[TableMeta]:
        cat, db_patterns = split_db_name(db_patterns) if db_patterns else (DEFAULT_CATALOG, db_patterns)
        db_match, tbl_match = name_pattern(db_patterns), name_pattern(tbl_patterns)
        with self.store.read() as conn:
            q = select(S.db.c.name.label("db"), S.tbl.c.name, S.tbl.c.tbl_type, S.tbl.c.tbl_id).select_from(
                S.tbl.join(S.db, S.tbl.c.db_id == S.db.c.db_id)).where(S.db.c.cat_name == cat)
            if types:
                q = q.where(S.tbl.c.tbl_type.in_(types))
            rows = [r for r in conn.execute(q)
                    if (db_match is None or db_match.matches(r.db))
                    and (tbl_match is None or tbl_match.matches(r.name))]
            comments: dict[int, str] = {}
            ids = [r.tbl_id for r in rows]
            for i in range(0, len(ids), BATCH):
                comments.update((r.tbl_id, r.param_value) for r in conn.execute(
                    select(S.tbl_params.c.tbl_id, S.tbl_params.c.param_value).where(
                        S.tbl_params.c.tbl_id.in_(ids[i:i + BATCH]), S.tbl_params.c.param_key == "comment")))
        return [TableMeta(dbName=r.db, tableName=r.name, tableType=r.tbl_type, comments=comments.get(r.tbl_id),
                          catName=cat) for r in sorted(rows, key=lambda r: (r.db, r.name))]

    def alter_table(self, db_name: str, name: str, new: Table, env: dict[str, str] | None = None,
                    cascade: bool = False) -> None:
        self.alteration.alter_table(db_name, name, new, env, cascade)

    def claim_hudi_base_path(self, conn: Connection, row: Any, table_name: str, base_path: str | None) -> None:
        """Record a Hudi table's base path as the table's (store/storage/owner_index.py), in the
        registering transaction: a row of its own where it is not the table's location; refused
        when it is another object's. `row` has the table's tbl_id, db_id, cat_name, db_name, location."""
        obj = table_obj(row.db_id, row.cat_name, row.db_name, table_name, row.tbl_id)
        own = [k for k in (location_key(row.location), location_key(row.location, resolve=False)) if k]
        self.boundary.owners.claim(conn, replace(obj, kind=HUDI, label=f"the Hudi base path of {obj.label}"),
                                   [base_path], own_keys=own)

    def drop_table(self, db_name: str, name: str, delete_data: bool, env: dict[str, str] | None = None) -> None:
        self.boundary.delete_dirs(self.store.run_write(self._drop, db_name, name, delete_data))

    def _drop(self, conn: Connection, db_name: str, name: str, delete_data: bool) -> list[str]:
        """Delete the table's rows; returns the directories to delete."""
        row = self.rows.row(conn, db_name, name)
        dropped = self.rows.build([row])[0]
        doomed = []
        if delete_data and (row.tbl_type == MANAGED or purges(dropped.parameters)):
            doomed.extend(partition_dirs_outside(conn, row.tbl_id, row.location))
            if row.location:
                doomed.append(row.location)
        delete_table_rows(conn, row.tbl_id)
        if is_transactional(dropped.parameters):  # its write ids and compaction requests (Hive's cleanupRecords)
            drop_table_rows(conn, dropped.catName or DEFAULT_CATALOG, dropped.dbName, dropped.tableName,
                            keep_write_ids=not delete_data)
        self.notifications.record(conn, EV.drop_table(dropped))
        return doomed


def _check_new_table(table: Table) -> tuple[str, str]:
    """(database name, table name) of a table to create, once its names and columns pass Hive's checks."""
    if table.tableName is None or table.dbName is None:
        raise MetaError("Table and database names are required")  # Hive: a NullPointerException
    db_name = table.dbName.lower()
    name = table.tableName.lower()
    if not valid_object_name(name):
        raise InvalidObject(f"{table.tableName} is not a valid object name")
    if len(name) > S.TABLE_NAME:  # Hive's TBLS.TBL_NAME is 256 wide; its store rejects longer names
        raise MetaError(f'Attempt to store value "{name}" in column "TBL_NAME" that has maximum '
                        f'length of {S.TABLE_NAME}. Please correct your data!')
    sd = table.sd
    if sd is None or sd.cols is None:
        raise MetaError("Storage descriptor with columns is required")  # Hive: NullPointerException
    problem = column_problem(sd.cols) or column_problem(table.partitionKeys, "partition column ")
    if problem:
        raise InvalidObject(problem)
    for group in (sd.cols or [], table.partitionKeys or []):
        names = [c.name.lower() for c in group]
        if len(set(names)) != len(names):  # Hive: its store's unique key fails, a MetaError
            raise MetaError("Duplicate column name in table definition")
    return db_name, name


def _insert_table_privileges(conn: Connection, db_id: int, tbl_id: int, privileges: PrincipalPrivilegeSet | None,
                             now: int) -> None:
    """The grants a new table comes with (Table.privileges: what SQL-standard authorization gives its
    owner), stored as grant_privileges would, as Hive's create_table does: created now, authorizer SQL."""
    if privileges is None:
        return
    rows = []
    for kind, by_principal in ((PrincipalType.USER, privileges.userPrivileges),
                               (PrincipalType.GROUP, privileges.groupPrivileges),
                               (PrincipalType.ROLE, privileges.rolePrivileges)):
        for principal, infos in (by_principal or {}).items():
            for info in infos or []:
                if info is None or not info.privilege or not principal:
                    raise InvalidObject("A table's privileges need a principal and a privilege")
                rows.append(dict(object_type=HiveObjectType.TABLE, db_id=db_id, tbl_id=tbl_id, part_id=None,
                                 column_name=None, principal_name=principal, principal_type=kind,
                                 privilege=info.privilege, grantor=info.grantor, grantor_type=info.grantorType,
                                 grant_option=bool(info.grantOption), authorizer="SQL", create_time=now))
    if rows:
        conn.execute(S.privileges.insert(), rows)
