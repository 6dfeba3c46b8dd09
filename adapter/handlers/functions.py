"""Function calls."""

from __future__ import annotations

from adapter.naming import db_name
from store.errors import NoSuchObject
from store.hms.functions import FunctionService
from thrift_idl.hive_metastore.ttypes import (
    GetAllFunctionsResponse,
    InvalidObjectException,
    NoSuchObjectException,
)


class FunctionHandler:
    def __init__(self, functions: FunctionService):
        self.functions = functions

    def create_function(self, func):
        if func is None:
            raise InvalidObjectException("Function object is required")
        func.dbName = db_name(func.dbName, func.catName)
        self.functions.create(func)

    def get_function(self, dbName, funcName):
        try:
            return self.functions.get(db_name(dbName), funcName or "")
        except NoSuchObject as exc:  # Hive's text names the database as the call did (`@hive#db` from Hive 4)
            raise NoSuchObjectException(f"Function {dbName}.{funcName} does not exist") from exc

    def get_functions(self, dbName, pattern):
        return self.functions.list(db_name(dbName), pattern)

    def get_all_functions(self):
        return GetAllFunctionsResponse(functions=self.functions.all())

    def drop_function(self, dbName, funcName):
        self.functions.drop(db_name(dbName), funcName or "")

    def alter_function(self, dbName, funcName, newFunc):
        self.functions.alter(db_name(dbName), funcName or "", newFunc)
