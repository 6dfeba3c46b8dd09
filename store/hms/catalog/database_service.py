"""RFC-36 databases: create, read, list, alter, drop (with their tables when cascading).

A database belongs to a catalog; the store names it `<db>` in the default catalog `hive` and
`@<catalog>#<db>` in another one (store/hms/common's split_db_name).
"""

from __future__ import annotations

from typing import Any

from sqlalchemy import Connection, Row, Select, and_, bindparam, delete, func, select, update
from sqlalchemy.exc import DBAPIError
from sqlalchemy.sql.expression import ColumnElement

from store.db import schema as S
from store.db.database import Store, inserted_id, now_s
from store.db.dialect import json_rows, params_of
from store.errors import AlreadyExists, InvalidObject, InvalidOperation, MetaError, NoSuchObject
from store.hms.catalog.table_rows import TableRows, delete_table_rows, partition_dirs_outside
from store.hms.common import (
    DEFAULT_CATALOG,
    MANAGED,
    check_location,
    match_names,
    purges,
    qualified_db_name,
    split_db_name,
    valid_object_name,
    write_params,
)
from store.hms.notification_log import NotificationLog
from store.hms.notification_log import events as EV
from store.hms.txn import drop_database_rows, is_transactional
from store.storage import ownership, warehouse
from store.storage.boundary import StorageBoundary
from store.storage.owner_index import DB, Obj
from thrift_idl.hive_metastore.ttypes import Database, DatabaseType, PrincipalType


def database_is(name: str) -> ColumnElement[bool]:
    """The condition on `db` rows selecting the database the store calls `name`."""
    cat, db = split_db_name(name)
    return and_(S.db.c.cat_name == cat, S.db.c.name == db)


def _no_such_database(name: str) -> NoSuchObject:
    return NoSuchObject("database {}.{}".format(*split_db_name(name)))


class DatabaseService:
    def __init__(self, store: Store, notifications: NotificationLog, rows: TableRows, boundary: StorageBoundary):
        self.store = store
        self.boundary = boundary
        self.notifications = notifications
        self.rows = rows
        self.warehouse_uri = warehouse.to_uri(store.warehouse)
        # one statement for a whole database: its row and (aggregated as JSON) its parameters
        d, dp = S.db, S.db_params
        params = select(json_rows(store.backend, dp.c.param_key, dp.c.param_value)).where(
            dp.c.db_id == d.c.db_id).scalar_subquery()
        self._one_db: Select[Any] = select(d, params.label("params_json")).where(
            d.c.cat_name == bindparam("cat_name"), d.c.name == bindparam("db_name"))

    def default_db_location(self, conn: Connection, name: str) -> str:
        """Where database `name` lives unless told otherwise: in its catalog's location."""
        cat, db = split_db_name(name)
        root = self._catalog_location(conn, cat)
        return root if (cat, db) == (DEFAULT_CATALOG, "default") else warehouse.join(root, f"{db}.db")

    def _catalog_location(self, conn: Connection, cat: str) -> str:
        row = conn.execute(select(S.catalogs.c.location_uri).where(S.catalogs.c.name == cat)).first()
        if row is None:
            raise InvalidObject(f"No such catalog {cat}")
        return warehouse.to_uri(row.location_uri) if row.location_uri else self.warehouse_uri  # `hive`

    def create_database(self, database: Database) -> None:
        """Create `database` (its `name` as the store takes it, see split_db_name)."""
        cat, name = split_db_name(database.name)
        if not valid_object_name(name) or ownership.leaves_its_parent(f"{name}.db"):
            raise InvalidObject(f"{name} is not a valid database name")
        if len(name) > S.NAME:  # Hive's DBS.NAME is 128 wide; its store rejects longer names
            raise MetaError(f'Attempt to store value "{name}" in column "NAME" that has maximum '
                            f'length of {S.NAME}. Please correct your data!')
        _check_locations(database)
        location = self.store.run_write(self.insert, cat, name, database)
        self.boundary.make_dirs([location], top=True)  # after the commit; never fails the call

    def insert(self, conn: Connection, cat: str, name: str, database: Database) -> str:
        """Insert the database's rows; returns its location."""
        root = self._catalog_location(conn, cat)
        location = database.locationUri or warehouse.join(root, f"{name}.db")
        if conn.execute(select(S.db.c.db_id).where(S.db.c.cat_name == cat, S.db.c.name == name)).first():
            raise AlreadyExists(f"Database {name} already exists")
        db_id = inserted_id(conn.execute(S.db.insert().values(
            cat_name=cat, name=name, description=database.description, location_uri=location,
            managed_location_uri=database.managedLocationUri,
            owner_name=database.ownerName, owner_type=database.ownerType,
            create_time=database.createTime or now_s(),
        )))
        write_params(conn, S.db_params, "db_id", db_id, database.parameters, replace=False)
        self._claim(conn, db_id, cat, name, [location, database.managedLocationUri])
        self.notifications.record(conn, EV.create_database(self.database_in(conn, qualified_db_name(cat, name))))
        return location

    def ensure_default_database(self) -> None:
        """Create `default` as Hive does when its metastore starts (owner: role `public`)."""
        with self.store.read() as conn:
            if conn.execute(select(S.db.c.db_id).where(database_is("default"))).first():
                return
        try:
            self.create_database(Database(name="default", description="Default Hive database",
                                          locationUri=self.warehouse_uri, parameters={},
                                          ownerName="public", ownerType=PrincipalType.ROLE))
        except AlreadyExists:
            pass  # another server process got there first
        except DBAPIError:
            with self.store.read() as conn:  # lost a race on the unique name
                if not conn.execute(select(S.db.c.db_id).where(database_is("default"))).first():
                    raise

    def db_row(self, conn: Connection, name: str) -> Row[Any]:
        row = conn.execute(select(S.db).where(database_is(name))).first()
        if row is None:
            raise _no_such_database(name)
        return row

    def db_id(self, conn: Connection, name: str) -> int:
        row = conn.execute(select(S.db.c.db_id).where(database_is(name))).first()
        if row is None:
            raise _no_such_database(name)
        return row[0]

    def get_database(self, name: str) -> Database:
        return self.store.run_read(self.database_in, name)

    def database_in(self, conn: Connection, name: str) -> Database:
        """get_database inside the caller's transaction (one statement)."""
        cat, db = split_db_name(name)
        row = conn.execute(self._one_db, {"cat_name": cat, "db_name": db}).first()
        if row is None:
            raise _no_such_database(name)
        return Database(
            name=row.name, description=row.description, locationUri=row.location_uri,
            parameters=params_of(row.params_json), ownerName=row.owner_name,
            ownerType=row.owner_type if row.owner_type is not None else PrincipalType.USER,
            catalogName=row.cat_name, createTime=row.create_time,
            managedLocationUri=row.managed_location_uri, type=DatabaseType.NATIVE,
        )

    def list_databases(self, pattern: str | None = None) -> list[str]:
        """Names of the databases of one catalog matching a pattern (`@<catalog>#<pattern>` for
        another catalog than `hive`)."""
        cat, pattern = split_db_name(pattern) if pattern is not None else (DEFAULT_CATALOG, None)
        with self.store.read() as conn:
            names = conn.execute(select(S.db.c.name).where(S.db.c.cat_name == cat)).scalars().all()
        return match_names(names, pattern)

    def alter_database(self, name: str, database: Database) -> None:
        _check_locations(database)
        self.store.run_write(self._alter, name, database)

    def _alter(self, conn: Connection, name: str, database: Database) -> None:
        before = self.database_in(conn, name)
        row = self.db_row(conn, name)
        conn.execute(update(S.db).where(S.db.c.db_id == row.db_id).values(
            description=database.description if database.description is not None else row.description,
            location_uri=database.locationUri or row.location_uri,
            managed_location_uri=database.managedLocationUri or row.managed_location_uri,
            owner_name=database.ownerName if database.ownerName is not None else row.owner_name,
            owner_type=database.ownerType if database.ownerType is not None else row.owner_type,
        ))
        if database.parameters is not None:
            write_params(conn, S.db_params, "db_id", row.db_id, database.parameters)
        after = self.database_in(conn, name)
        if (after.locationUri, after.managedLocationUri) != (before.locationUri, before.managedLocationUri):
            self._claim(conn, row.db_id, row.cat_name, row.name, [after.locationUri, after.managedLocationUri])
        self.notifications.record(conn, EV.alter_database(before, after))

    def _claim(self, conn: Connection, db_id: int, cat: str, name: str, locations: list[str | None]) -> None:
        """The database takes its locations (store/storage/owner_index.py: checked when authorization
        names a caller)."""
        label = f"database {name}" if cat == DEFAULT_CATALOG else f"database {cat}.{name}"
        self.boundary.owners.claim(conn, Obj(DB, db_id, label, cat, name), locations)

    def drop_database(self, name: str, delete_data: bool, cascade: bool) -> None:
        cat, db = split_db_name(name)
        if (cat, db) == (DEFAULT_CATALOG, "default"):
            raise MetaError(f"Can not drop default database in catalog {cat}")
        self.boundary.delete_dirs(self.store.run_write(self.drop_rows, name, delete_data, cascade))

    def drop_rows(self, conn: Connection, name: str, delete_data: bool, cascade: bool) -> list[str]:
        """Delete the database's rows; returns the directories to delete."""
        row = self.db_row(conn, name)
        tables = conn.execute(
            select(S.tbl.c.tbl_id, S.tbl.c.name, S.tbl.c.tbl_type, S.tbl.c.location)
            .where(S.tbl.c.db_id == row.db_id)).all()
        n_funcs = conn.execute(
            select(func.count()).select_from(S.functions).where(S.functions.c.db_id == row.db_id)
        ).scalar_one()
        if (tables or n_funcs) and not cascade:
            what = "tables" if tables else "functions"
            raise InvalidOperation(
                f"Database {row.name} is not empty. One or more {what} exist.")
        dropped = self.rows.build(conn.execute(self.rows.statement().where(S.tbl.c.db_id == row.db_id)).all())
        purged = {t.tableName for t in dropped if purges(t.parameters)}
        events = [EV.drop_table(t) for t in dropped]
        events.append(EV.drop_database(self.database_in(conn, name)))
        doomed_dirs = []
        for t in tables:
            if delete_data and (t.tbl_type == MANAGED or t.name in purged):
                doomed_dirs.extend(partition_dirs_outside(conn, t.tbl_id, t.location))
                doomed_dirs.append(t.location)
            delete_table_rows(conn, t.tbl_id)
        conn.execute(delete(S.functions).where(S.functions.c.db_id == row.db_id))
        conn.execute(delete(S.db_params).where(S.db_params.c.db_id == row.db_id))
        conn.execute(delete(S.db).where(S.db.c.db_id == row.db_id))
        drop_database_rows(conn, *split_db_name(name),  # write ids, compaction requests (Hive's cleanupRecords)
                           [t.tableName for t in dropped if is_transactional(t.parameters)])
        self.notifications.record(conn, *events)
        if delete_data:
            doomed_dirs.append(row.location_uri)
        return doomed_dirs


def _check_locations(database: Database) -> None:
    check_location(database.locationUri, "Database location", "db", "location_uri")
    check_location(database.managedLocationUri, "Database managed location", "db", "managed_location_uri")
