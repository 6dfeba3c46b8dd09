"""Catalog and database calls, with their request forms (create_database_req, get_database_req,
drop_database_req)."""

from __future__ import annotations

from adapter.handlers.service import session_user
from adapter.naming import db_name, db_pattern
from store.hms.catalog import TableService
from thrift_idl.hive_metastore.ttypes import (
    Database,
    DatabaseType,
    GetCatalogResponse,
    GetCatalogsResponse,
    InvalidObjectException,
    PrincipalType,
)


class DatabaseHandler:
    def __init__(self, tables: TableService):
        self.tables = tables

    # catalogs
    def create_catalog(self, catalog):
        if catalog is None or catalog.catalog is None:
            raise InvalidObjectException("Catalog object is required")
        self.tables.create_catalog(catalog.catalog, owner=session_user())

    def get_catalog(self, catName):
        return GetCatalogResponse(catalog=self.tables.get_catalog(catName.name if catName else None))

    def get_catalogs(self):
        return GetCatalogsResponse(names=self.tables.list_catalogs())

    def alter_catalog(self, rqst):
        self.tables.alter_catalog(rqst.name, rqst.newCat)

    def drop_catalog(self, catName):
        self.tables.drop_catalog(catName.name if catName else None)

    # databases
    def create_database(self, database: Database):
        if database is None:
            raise InvalidObjectException("Database object is required")
        database.name = db_name(database.name, database.catalogName)
        if database.ownerName is None:  # Hive 4: the calling user owns it
            database.ownerName, database.ownerType = session_user(), PrincipalType.USER
        self.tables.create_database(database)

    def create_database_req(self, request):
        """Hive 4.0's HiveMetaStoreClient.createDatabase sends this form."""
        if request is None or not request.databaseName:
            raise InvalidObjectException("CreateDatabaseRequest needs a databaseName")
        self.create_database(Database(
            name=request.databaseName, description=request.description, locationUri=request.locationUri,
            parameters=request.parameters if request.parameters is not None else {},
            privileges=request.privileges, ownerName=request.ownerName, ownerType=request.ownerType,
            catalogName=request.catalogName, createTime=request.createTime,
            managedLocationUri=request.managedLocationUri, type=_database_type(request.type),
            connector_name=request.dataConnectorName, remote_dbname=request.remote_dbname))

    def get_database(self, name):
        return self.tables.get_database(db_name(name))

    def get_database_req(self, request):
        return self.tables.get_database(db_name(request.name, request.catalogName))

    def get_databases(self, pattern):
        return self.tables.list_databases(db_pattern(pattern))

    def get_all_databases(self):
        return self.tables.list_databases(None)

    def alter_database(self, dbname, db):
        self.tables.alter_database(db_name(dbname), db)

    def alter_database_req(self, alterDbReq):
        """Hive 4.0.1's HiveMetaStoreClient.alterDatabase (the catalog: the name's @cat# prefix)."""
        req = alterDbReq
        self.alter_database(req.oldDbName if req is not None else None, req.newDb if req is not None else None)

    def drop_database(self, name, deleteData, cascade):
        self.tables.drop_database(db_name(name), bool(deleteData), bool(cascade))

    def drop_database_req(self, req):
        # ignoreUnknownDb is for the client (Hive's server raises NoSuchObjectException anyway)
        self.tables.drop_database(db_name(req.name, req.catalogName), bool(req.deleteData), bool(req.cascade))


def _database_type(name):
    """CreateDatabaseRequest.type is a string in Hive 4.0.1 ("NATIVE", "REMOTE"); Database.type an enum."""
    if name is None:
        return None
    value = DatabaseType._NAMES_TO_VALUES.get(name.upper())
    if value is None:
        raise InvalidObjectException(f"CreateDatabaseRequest.type {name!r} is not NATIVE or REMOTE")
    return value
