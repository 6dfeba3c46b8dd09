"""User-defined functions registered in databases (Hive's Function objects)."""

from __future__ import annotations

import builtins
import json

from sqlalchemy import Connection, delete, select, update

from store.db import schema as S
from store.db.database import Store, now_s
from store.errors import AlreadyExists, InvalidObject, NoSuchObject
from store.hms.catalog import TableService, database_is
from store.hms.common import DEFAULT_CATALOG, match_names, split_db_name, valid_name
from store.hms.notification_log import events as EV
from thrift_idl.hive_metastore.ttypes import Function, ResourceUri


class FunctionService:
    def __init__(self, store: Store, tables: TableService):
        self.store = store
        self.tables = tables

    @staticmethod
    def _build(row, db_name: str, cat_name: str) -> Function:
        return Function(
            functionName=row.name, dbName=db_name, className=row.class_name, ownerName=row.owner_name,
            ownerType=row.owner_type, createTime=row.create_time, functionType=row.func_type,
            resourceUris=[ResourceUri(resourceType=t, uri=u) for t, u in json.loads(row.resource_uris or "[]")],
            catName=cat_name)

    def create(self, fn: Function) -> None:
        name = (fn.functionName or "").lower()
        if not valid_name(name):
            raise InvalidObject(f"{fn.functionName} is not a valid object name")
        if not fn.className:
            raise InvalidObject("Function class name cannot be empty")

        def tx(conn: Connection):
            try:
                db_id = self.tables.db_id(conn, fn.dbName or "")
            except NoSuchObject as exc:
                raise NoSuchObject(f"The database {fn.dbName} does not exist") from exc
            if conn.execute(select(S.functions.c.func_id).where(
                    S.functions.c.db_id == db_id, S.functions.c.name == name)).first():
                raise AlreadyExists(f"Function {name} already exists")
            conn.execute(S.functions.insert().values(
                db_id=db_id, name=name, class_name=fn.className, owner_name=fn.ownerName,
                owner_type=fn.ownerType, func_type=fn.functionType or 1, create_time=fn.createTime or now_s(),
                resource_uris=json.dumps([[r.resourceType, r.uri] for r in fn.resourceUris or []])))
            created = self._row(conn, fn.dbName or "", name)
            made = self._build(created, created.db_name, created.cat_name)
            self.tables.notifications.record(conn, EV.create_function(made))

        self.store.run_write(tx)

    def _row(self, conn: Connection, db: str, name: str):
        row = conn.execute(select(S.functions, S.db.c.name.label("db_name"), S.db.c.cat_name).select_from(
            S.functions.join(S.db, S.db.c.db_id == S.functions.c.db_id)).where(
            database_is(db), S.functions.c.name == (name or "").lower())).first()
        if row is None:
            raise NoSuchObject("Function {}.{}.{} does not exist".format(*split_db_name(db), (name or "").lower()))
        return row

    def get(self, db: str, name: str) -> Function:
        with self.store.read() as conn:
            row = self._row(conn, db, name)
        return self._build(row, row.db_name, row.cat_name)

    def list(self, db: str, pattern: str | None) -> list[str]:
        with self.store.read() as conn:
            names = conn.execute(select(S.functions.c.name).select_from(
                S.functions.join(S.db, S.db.c.db_id == S.functions.c.db_id)).where(
                database_is(db))).scalars().all()
        return match_names(names, pattern)

    def all(self) -> builtins.list[Function]:  # `list` is a method here
        """The functions of the default catalog's databases (as Hive 4 lists them)."""
        with self.store.read() as conn:
            rows = conn.execute(select(S.functions, S.db.c.name.label("db_name")).select_from(
                S.functions.join(S.db, S.db.c.db_id == S.functions.c.db_id)).where(
                S.db.c.cat_name == DEFAULT_CATALOG)).all()
        return [self._build(r, r.db_name, DEFAULT_CATALOG) for r in rows]

    def drop(self, db: str, name: str) -> None:
        def tx(conn: Connection):
            row = self._row(conn, db, name)
            conn.execute(delete(S.functions).where(S.functions.c.func_id == row.func_id))
            self.tables.notifications.record(conn, EV.drop_function(self._build(row, row.db_name, row.cat_name)))

        self.store.run_write(tx)

    def alter(self, db: str, name: str, fn: Function) -> None:
        def tx(conn: Connection):
            row = self._row(conn, db, name)
            conn.execute(update(S.functions).where(S.functions.c.func_id == row.func_id).values(
                name=(fn.functionName or name).lower(), class_name=fn.className or row.class_name,
                owner_name=fn.ownerName, owner_type=fn.ownerType, func_type=fn.functionType or row.func_type,
                resource_uris=json.dumps([[r.resourceType, r.uri] for r in fn.resourceUris or []])))

        self.store.run_write(tx)
