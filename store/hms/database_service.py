"""RFC-36 databases: create, read, list, alter, drop (with their tables when cascading)."""

from __future__ import annotations

from sqlalchemy import Connection, Row, delete, func, select, update
from sqlalchemy.exc import DBAPIError

from store.db import schema as S
from store.db.database import Store, inserted_id, now_s
from store.errors import AlreadyExists, InvalidObject, InvalidOperation, MetaError, NoSuchObject
from store.hms.hive_rules import CATALOG, MANAGED, match_names, valid_name
from store.hms.notification_log import events as EV
from store.hms.notification_log.log import NotificationLog
from store.hms.parameters import read_params, write_params
from store.hms.table_rows import TableRows, delete_table_rows, partition_dirs_outside
from store.storage import warehouse
from thrift_idl.hive_metastore.ttypes import Database, PrincipalType


class DatabaseService:
    def __init__(self, store: Store, notifications: NotificationLog, rows: TableRows):
        self.store = store
        self.notifications = notifications
        self.rows = rows
        self.warehouse_uri = warehouse.to_uri(store.warehouse)

    def default_db_location(self, name: str) -> str:
        if name == "default":
            return self.warehouse_uri
        return warehouse.join(self.warehouse_uri, f"{name}.db")

    def create_database(self, database: Database) -> None:
        name = (database.name or "").lower()
        if not valid_name(name):
            raise InvalidObject(f"{database.name} is not a valid database name")
        if len(name) > S.NAME:  # Hive's DBS.NAME is 128 wide; its store rejects longer names
            raise MetaError(f'Attempt to store value "{name}" in column "NAME" that has maximum '
                            f'length of {S.NAME}. Please correct your data!')
        location = database.locationUri or self.default_db_location(name)
        self.store.run_write(self._create, name, database, location)
        warehouse.make_dirs(location)

    def _create(self, conn: Connection, name: str, database: Database, location: str) -> None:
        if conn.execute(select(S.db.c.db_id).where(S.db.c.name == name)).first():
            raise AlreadyExists(f"Database {name} already exists")
        db_id = inserted_id(conn.execute(S.db.insert().values(
            name=name, description=database.description, location_uri=location,
            managed_location_uri=database.managedLocationUri,
            owner_name=database.ownerName, owner_type=database.ownerType,
            create_time=database.createTime or now_s(),
        )))
        write_params(conn, S.db_params, "db_id", db_id, database.parameters, replace=False)
        self.notifications.record(conn, EV.create_database(self.database_in(conn, name)))

    def ensure_default_database(self) -> None:
        """Create `default` as Hive does when its metastore starts (owner: role `public`)."""
        with self.store.read() as conn:
            if conn.execute(select(S.db.c.db_id).where(S.db.c.name == "default")).first():
                return
        try:
            self.create_database(Database(name="default", description="Default Hive database",
                                          locationUri=self.warehouse_uri, parameters={},
                                          ownerName="public", ownerType=PrincipalType.ROLE))
        except AlreadyExists:
            pass  # another server process got there first
        except DBAPIError:
            with self.store.read() as conn:  # lost a race on the unique name
                if not conn.execute(select(S.db.c.db_id).where(S.db.c.name == "default")).first():
                    raise

    def db_row(self, conn: Connection, name: str) -> Row:
        row = conn.execute(select(S.db).where(S.db.c.name == name.lower())).first()
        if row is None:
            raise NoSuchObject(f"database {CATALOG}.{name.lower()}")
        return row

    def db_id(self, conn: Connection, name: str) -> int:
        row = conn.execute(select(S.db.c.db_id).where(S.db.c.name == name.lower())).first()
        if row is None:
            raise NoSuchObject(f"database {CATALOG}.{name.lower()}")
        return row[0]

    def get_database(self, name: str) -> Database:
        with self.store.read() as conn:
            return self.database_in(conn, name)

    def database_in(self, conn: Connection, name: str) -> Database:
        """get_database inside the caller's transaction."""
        row = self.db_row(conn, name)
        params = read_params(conn, S.db_params, "db_id", [row.db_id])[row.db_id]
        return Database(
            name=row.name, description=row.description, locationUri=row.location_uri,
            parameters=params, ownerName=row.owner_name,
            ownerType=row.owner_type if row.owner_type is not None else PrincipalType.USER,
            catalogName=CATALOG, createTime=row.create_time,
            managedLocationUri=row.managed_location_uri,
        )

    def list_databases(self, pattern: str | None = None) -> list[str]:
        with self.store.read() as conn:
            names = conn.execute(select(S.db.c.name)).scalars().all()
        return match_names(names, pattern)

    def alter_database(self, name: str, database: Database) -> None:
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
        self.notifications.record(conn, EV.alter_database(before, self.database_in(conn, name)))

    def drop_database(self, name: str, delete_data: bool, cascade: bool) -> None:
        name = name.lower()
        if name == "default":
            raise MetaError("Can not drop default database")
        for d in self.store.run_write(self._drop, name, delete_data, cascade):
            warehouse.delete_dir(d)

    def _drop(self, conn: Connection, name: str, delete_data: bool, cascade: bool) -> list[str]:
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
                f"Database {name} is not empty. One or more {what} exist.")
        events = [EV.drop_table(t) for t in self.rows.build(conn.execute(
            self.rows.statement().where(S.tbl.c.db_id == row.db_id)).all())]
        events.append(EV.drop_database(self.database_in(conn, name)))
        doomed_dirs = []
        for t in tables:
            if delete_data and t.tbl_type == MANAGED:
                doomed_dirs.extend(partition_dirs_outside(conn, t.tbl_id, t.location))
                doomed_dirs.append(t.location)
            delete_table_rows(conn, t.tbl_id)
        conn.execute(delete(S.functions).where(S.functions.c.db_id == row.db_id))
        conn.execute(delete(S.db_params).where(S.db_params.c.db_id == row.db_id))
        conn.execute(delete(S.db).where(S.db.c.db_id == row.db_id))
        self.notifications.record(conn, *events)
        if delete_data:
            doomed_dirs.append(row.location_uri)
        return doomed_dirs
