"""Database calls."""

from __future__ import annotations

from adapter.naming import check_catalog, db_name, db_pattern
from store.hms.table_service import TableService
from thrift_idl.hive_metastore.ttypes import Database, InvalidObjectException


class DatabaseHandler:
    def __init__(self, tables: TableService):
        self.tables = tables

    def create_database(self, database: Database):
        if database is None:
            raise InvalidObjectException("Database object is required")
        check_catalog(database.catalogName)
        database.name = db_name(database.name)
        self.tables.create_database(database)

    def get_database(self, name):
        return self.tables.get_database(db_name(name))

    def get_database_req(self, request):
        check_catalog(request.catalogName)
        return self.tables.get_database(db_name(request.name))

    def get_databases(self, pattern):
        return self.tables.list_databases(db_pattern(pattern))

    def get_all_databases(self):
        return self.tables.list_databases(None)

    def alter_database(self, dbname, db):
        self.tables.alter_database(db_name(dbname), db)

    def drop_database(self, name, deleteData, cascade):
        self.tables.drop_database(db_name(name), bool(deleteData), bool(cascade))
