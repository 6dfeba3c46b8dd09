"""Catalogs (Hive 3+): create, read, list, alter, drop, as Hive 4 answers them.

Every database belongs to a catalog; `hive`, the default one, always exists (created by the
schema) and lives in the server's warehouse. A new catalog gets a `default` database in its
location, as in Hive; dropping a catalog drops that database when it is empty.
"""

from __future__ import annotations

from typing import Any

from sqlalchemy import Connection, Row, delete, select, update

from store.db import schema as S
from store.db.database import Store, now_s
from store.errors import AlreadyExists, InvalidObject, InvalidOperation, MetaError, NoSuchObject
from store.hms.catalog.database_service import DatabaseService
from store.hms.common import DEFAULT_CATALOG, qualified_db_name, valid_name
from store.storage import warehouse
from thrift_idl.hive_metastore.ttypes import Catalog, Database, PrincipalType


class CatalogService:
    def __init__(self, store: Store, databases: DatabaseService):
        self.store = store
        self.databases = databases

    def create_catalog(self, catalog: Catalog, owner: str | None = None) -> None:
        """Create the catalog and its `default` database (owned by `owner`)."""
        name = (catalog.name or "").lower()
        if not valid_name(name):
            raise InvalidObject(f"{catalog.name} is not a valid catalog name")
        if not catalog.locationUri:
            raise InvalidObject("You must specify a path for the catalog")
        default_db = Database(description=f"Default database for catalog {catalog.name}",
                              locationUri=warehouse.to_uri(catalog.locationUri), parameters={},
                              ownerName=owner, ownerType=PrincipalType.USER)
        self.store.run_write(self._insert, name, catalog, default_db)
        self.databases.boundary.make_dirs([default_db.locationUri], top=True)

    def _insert(self, conn: Connection, name: str, catalog: Catalog, default_db: Database) -> None:
        if conn.execute(select(S.catalogs.c.name).where(S.catalogs.c.name == name)).first():
            raise AlreadyExists(f"Catalog {name} already exists")
        conn.execute(S.catalogs.insert().values(name=name, description=catalog.description,
                                                location_uri=catalog.locationUri, create_time=now_s()))
        self.databases.insert(conn, name, "default", default_db)

    def _row(self, conn: Connection, name: str | None) -> Row[Any]:
        row = conn.execute(select(S.catalogs).where(S.catalogs.c.name == (name or "").lower())).first()
        if row is None:
            raise NoSuchObject(f"No catalog {(name or '').lower()}")
        return row

    def get_catalog(self, name: str | None) -> Catalog:
        with self.store.read() as conn:
            row = self._row(conn, name)
        return Catalog(name=row.name, description=row.description,
                       locationUri=row.location_uri or self.databases.warehouse_uri,
                       createTime=row.create_time or 0)  # `hive` has none (0, as Hive answers)

    def list_catalogs(self) -> list[str]:
        with self.store.read() as conn:
            return list(conn.execute(select(S.catalogs.c.name).order_by(S.catalogs.c.name)).scalars())

    def alter_catalog(self, name: str | None, new: Catalog) -> None:
        """A new description or location; the name cannot change."""
        if new is None:
            raise InvalidObject("A catalog is required")
        if new.name is not None and new.name.lower() != (name or "").lower():
            raise InvalidOperation("You cannot change a catalog's name")
        self.store.run_write(self._alter, name, new)

    def _alter(self, conn: Connection, name: str | None, new: Catalog) -> None:
        row = self._row(conn, name)
        conn.execute(update(S.catalogs).where(S.catalogs.c.name == row.name).values(
            description=new.description if new.description is not None else row.description,
            location_uri=new.locationUri or row.location_uri))

    def drop_catalog(self, name: str | None) -> None:
        """Drop an empty catalog (holding at most an empty `default` database, dropped with its
        directory); `hive` stays."""
        if (name or "").lower() == DEFAULT_CATALOG:
            raise MetaError(f"Can not drop {DEFAULT_CATALOG} catalog")
        self.databases.boundary.delete_dirs(self.store.run_write(self._drop, name))

    def _drop(self, conn: Connection, name: str | None) -> list[str]:
        """Delete the catalog's rows; returns the directories to delete."""
        cat = self._row(conn, name).name
        dbs = conn.execute(select(S.db.c.name).where(S.db.c.cat_name == cat)).scalars().all()
        if any(db != "default" for db in dbs):
            raise InvalidOperation(f"There are non-default databases in the catalog {cat} so it cannot be dropped.")
        doomed: list[str] = []
        if dbs:
            try:
                doomed = self.databases.drop_rows(conn, qualified_db_name(cat, "default"), True, False)
            except InvalidOperation as exc:
                raise InvalidOperation(f"There are still objects in the default database for catalog {cat}") from exc
        conn.execute(delete(S.catalogs).where(S.catalogs.c.name == cat))
        return doomed
