"""Table constraint calls: get_primary_keys, get_foreign_keys, get_*_constraints,
get_all_table_constraints, add_*, drop_constraint (creating a table with constraints is a table
call, see tables.py)."""

from __future__ import annotations

from adapter.naming import check_catalog, db_name
from store.hms.constraints import ConstraintService
from thrift_idl.hive_metastore.ttypes import (
    AllTableConstraintsResponse,
    CheckConstraintsResponse,
    DefaultConstraintsResponse,
    ForeignKeysResponse,
    NotNullConstraintsResponse,
    PrimaryKeysResponse,
    SQLAllTableConstraints,
    UniqueConstraintsResponse,
)


class ConstraintHandler:
    def __init__(self, constraints: ConstraintService):
        self.constraints = constraints

    # read
    def get_primary_keys(self, request):
        check_catalog(request.catName)
        return PrimaryKeysResponse(primaryKeys=self.constraints.primary_keys(
            db_name(request.db_name), request.tbl_name or ""))

    def get_foreign_keys(self, request):
        check_catalog(request.catName)
        return ForeignKeysResponse(foreignKeys=self.constraints.foreign_keys(
            db_name(request.parent_db_name), request.parent_tbl_name, db_name(request.foreign_db_name),
            request.foreign_tbl_name))

    def get_unique_constraints(self, request):
        check_catalog(request.catName)
        return UniqueConstraintsResponse(uniqueConstraints=self.constraints.unique_constraints(
            db_name(request.db_name), request.tbl_name or ""))

    def get_not_null_constraints(self, request):
        check_catalog(request.catName)
        return NotNullConstraintsResponse(notNullConstraints=self.constraints.not_null_constraints(
            db_name(request.db_name), request.tbl_name or ""))

    def get_default_constraints(self, request):
        check_catalog(request.catName)
        return DefaultConstraintsResponse(defaultConstraints=self.constraints.default_constraints(
            db_name(request.db_name), request.tbl_name or ""))

    def get_check_constraints(self, request):
        check_catalog(request.catName)
        return CheckConstraintsResponse(checkConstraints=self.constraints.check_constraints(
            db_name(request.db_name), request.tbl_name or ""))

    def get_all_table_constraints(self, request):
        check_catalog(request.catName)
        return AllTableConstraintsResponse(allTableConstraints=self.constraints.all_constraints(
            db_name(request.dbName), request.tblName or ""))

    # add and drop
    def add_primary_key(self, req):
        self.constraints.add(SQLAllTableConstraints(primaryKeys=req.primaryKeyCols))

    def add_foreign_key(self, req):
        self.constraints.add(SQLAllTableConstraints(foreignKeys=req.foreignKeyCols))

    def add_unique_constraint(self, req):
        self.constraints.add(SQLAllTableConstraints(uniqueConstraints=req.uniqueConstraintCols))

    def add_not_null_constraint(self, req):
        self.constraints.add(SQLAllTableConstraints(notNullConstraints=req.notNullConstraintCols))

    def add_default_constraint(self, req):
        self.constraints.add(SQLAllTableConstraints(defaultConstraints=req.defaultConstraintCols))

    def add_check_constraint(self, req):
        self.constraints.add(SQLAllTableConstraints(checkConstraints=req.checkConstraintCols))

    def drop_constraint(self, req):
        check_catalog(req.catName)
        self.constraints.drop(db_name(req.dbname), req.tablename or "", req.constraintname or "")
