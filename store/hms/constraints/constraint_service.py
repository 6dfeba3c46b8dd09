"""Table constraints (Hive's KEY_CONSTRAINTS): primary keys, foreign keys, unique, not-null, default
and check constraints. Added with their table (one transaction with the table's rows) or later,
read per kind or all of a table's at once, dropped by name, dropped with their tables (rows cascade
with the table holding the key and with a foreign key's referencing table).

Answers follow Hive 4: names lower-cased, catName "hive", a table or database that does not exist
has no constraints. A constraint whose column the table no longer has (renamed or dropped by
alter_table) is not answered, as Hive 4 deletes those; a foreign key whose referenced key was
dropped neither. The rules for new rows are in constraint_rows.py.
"""

from __future__ import annotations

import functools
from typing import Any

from sqlalchemy import Connection, Row, and_, delete, or_, select

from store.db import schema as S
from store.db.database import Store
from store.errors import NoSuchObject
from store.hms.catalog import TableService, database_is
from store.hms.common import DEFAULT_CATALOG
from store.hms.constraints.constraint_rows import CHECK, DEFAULT, FK, NOT_NULL, PK, UNIQUE, RowBuilder, normalize
from store.hms.partitions import TableContexts
from thrift_idl.hive_metastore.ttypes import (
    SQLAllTableConstraints,
    SQLCheckConstraint,
    SQLDefaultConstraint,
    SQLForeignKey,
    SQLNotNullConstraint,
    SQLPrimaryKey,
    SQLUniqueConstraint,
    Table,
)

_C = S.table_constraints


def _lists(constraints: SQLAllTableConstraints | None) -> SQLAllTableConstraints:
    c = constraints or SQLAllTableConstraints()
    return SQLAllTableConstraints(
        primaryKeys=list(c.primaryKeys or []), foreignKeys=list(c.foreignKeys or []),
        uniqueConstraints=list(c.uniqueConstraints or []), notNullConstraints=list(c.notNullConstraints or []),
        defaultConstraints=list(c.defaultConstraints or []), checkConstraints=list(c.checkConstraints or []))


class ConstraintService:
    def __init__(self, store: Store, tables: TableService):
        self.store = store
        self.tables = tables
        self.contexts = TableContexts(store.backend)

    # --- add ------------------------------------------------------------------------------------

    def create_table(self, table: Table, env: dict[str, str] | None,
                     constraints: SQLAllTableConstraints | None) -> None:
        """create_table_with_constraints / create_table_req: the table and its constraints in one
        transaction (a bad constraint leaves no table behind)."""
        lists = _lists(constraints)
        new_table = (normalize(table.dbName), normalize(table.tableName))
        self.tables.create_table(table, env, also=functools.partial(self._add, lists=lists, new_table=new_table))

    def add(self, constraints: SQLAllTableConstraints) -> None:
        """add_primary_key, add_foreign_key, add_unique_constraint, ...: to existing tables."""
        self.store.run_write(self._add, _lists(constraints), None)

    def _add(self, conn: Connection, lists: SQLAllTableConstraints, new_table: tuple[str, str] | None) -> None:
        rows = RowBuilder(conn, self.contexts, new_table)
        rows.keys(PK, lists.primaryKeys, lambda k: (k.table_db, k.table_name, k.column_name, k.pk_name))
        rows.foreign_keys(lists.foreignKeys)
        rows.keys(UNIQUE, lists.uniqueConstraints, lambda k: (k.table_db, k.table_name, k.column_name, k.uk_name))
        rows.single(NOT_NULL, lists.notNullConstraints, lambda k: k.nn_name)
        rows.single(DEFAULT, lists.defaultConstraints, lambda k: k.dc_name, lambda k: k.default_value)
        rows.single(CHECK, lists.checkConstraints, lambda k: k.dc_name, lambda k: k.check_expression)
        if rows.rows:
            conn.execute(_C.insert(), rows.rows)

    # --- drop -----------------------------------------------------------------------------------

    def drop(self, db: str, table: str, name: str) -> None:
        self.store.run_write(self._drop, db, table, name)

    def _drop(self, conn: Connection, db: str, table: str, name: str) -> None:
        tbl_id = self._tbl_id(conn, db, table)
        wanted = normalize(name)
        n = 0
        if tbl_id is not None:
            n = conn.execute(delete(_C).where(
                _C.c.name == wanted, or_(_C.c.tbl_id == tbl_id, _C.c.child_tbl_id == tbl_id))).rowcount
        if not n:
            raise NoSuchObject(f"The constraint: {wanted} does not exist for the associated table: "
                               f"{normalize(db)}.{normalize(table)}")

    # --- read -----------------------------------------------------------------------------------

    def primary_keys(self, db: str, table: str) -> list[SQLPrimaryKey]:
        return [_primary_key(r) for r in self._read(db, table, PK)]

    def unique_constraints(self, db: str, table: str) -> list[SQLUniqueConstraint]:
        return [_unique(r) for r in self._read(db, table, UNIQUE)]

    def not_null_constraints(self, db: str, table: str) -> list[SQLNotNullConstraint]:
        return [_not_null(r) for r in self._read(db, table, NOT_NULL)]

    def default_constraints(self, db: str, table: str) -> list[SQLDefaultConstraint]:
        return [_default(r) for r in self._read(db, table, DEFAULT)]

    def check_constraints(self, db: str, table: str) -> list[SQLCheckConstraint]:
        return [_check(r) for r in self._read(db, table, CHECK)]

    def foreign_keys(self, parent_db: str | None, parent_table: str | None, child_db: str | None,
                     child_table: str | None) -> list[SQLForeignKey]:
        """Foreign keys referencing the parent table and/or defined on the child table (either may
        be left out)."""
        with self.store.read() as conn:
            conds = [_C.c.kind == FK]
            for tbl_db, tbl_name, col in ((parent_db, parent_table, _C.c.tbl_id),
                                          (child_db, child_table, _C.c.child_tbl_id)):
                if tbl_name:
                    tbl_id = self._tbl_id(conn, tbl_db or "", tbl_name)
                    if tbl_id is None:
                        return []
                    conds.append(col == tbl_id)
            return [_foreign_key(r) for r in self._rows(conn, and_(*conds))]

    def all_constraints(self, db: str, table: str) -> SQLAllTableConstraints:
        with self.store.read() as conn:
            tbl_id = self._tbl_id(conn, db, table)
            rows = [] if tbl_id is None else self._rows(conn, or_(
                and_(_C.c.tbl_id == tbl_id, _C.c.kind != FK), and_(_C.c.child_tbl_id == tbl_id, _C.c.kind == FK)))
        by_kind: dict[int, list[Row[Any]]] = {k: [] for k in range(6)}
        for r in rows:
            by_kind[r.kind].append(r)
        return SQLAllTableConstraints(
            primaryKeys=[_primary_key(r) for r in by_kind[PK]],
            foreignKeys=[_foreign_key(r) for r in by_kind[FK]],
            uniqueConstraints=[_unique(r) for r in by_kind[UNIQUE]],
            notNullConstraints=[_not_null(r) for r in by_kind[NOT_NULL]],
            defaultConstraints=[_default(r) for r in by_kind[DEFAULT]],
            checkConstraints=[_check(r) for r in by_kind[CHECK]])

    def _read(self, db: str, table: str, kind: int) -> list[Row[Any]]:
        with self.store.read() as conn:
            tbl_id = self._tbl_id(conn, db, table)
            return [] if tbl_id is None else self._rows(conn, and_(_C.c.tbl_id == tbl_id, _C.c.kind == kind))

    @staticmethod
    def _tbl_id(conn: Connection, db: str, table: str) -> int | None:
        return conn.execute(select(S.tbl.c.tbl_id).select_from(S.tbl.join(S.db, S.tbl.c.db_id == S.db.c.db_id))
                            .where(database_is(normalize(db)), S.tbl.c.name == normalize(table))).scalar()

    def _rows(self, conn: Connection, where: Any) -> list[Row[Any]]:
        """Constraint rows with their tables' names, in name and position order, minus those whose
        columns (or a foreign key's referenced key) are gone."""
        parent, parent_db = S.tbl.alias(), S.db.alias()  # anonymous aliases (what orm.aliased gives)
        child, child_db = S.tbl.alias(), S.db.alias()
        q = (select(_C, parent.c.name.label("tbl_name"), parent_db.c.name.label("db_name"),
                    child.c.name.label("child_tbl_name"), child_db.c.name.label("child_db_name"))
             .select_from(_C.join(parent, parent.c.tbl_id == _C.c.tbl_id)
                          .join(parent_db, parent_db.c.db_id == parent.c.db_id)
                          .outerjoin(child, child.c.tbl_id == _C.c.child_tbl_id)
                          .outerjoin(child_db, child_db.c.db_id == child.c.db_id))
             .where(where).order_by(_C.c.name, _C.c.position, _C.c.constraint_id))
        rows = conn.execute(q).all()
        tbl_ids = {r.tbl_id for r in rows} | {r.child_tbl_id for r in rows if r.child_tbl_id is not None}
        columns = _current_columns(conn, tbl_ids)
        keys = _key_names(conn, {r.tbl_id for r in rows if r.kind == FK})
        return [r for r in rows if r.column_name in columns.get(r.tbl_id, ())
                and (r.kind != FK or (r.child_column in columns.get(r.child_tbl_id, ())
                                      and (r.tbl_id, r.ref_name) in keys))]


def _current_columns(conn: Connection, tbl_ids: set[int]) -> dict[int, set[str]]:
    """The column and partition key names of the tables' current schema versions."""
    if not tbl_ids:
        return {}
    sc = S.schema
    rows = conn.execute(select(sc.c.tbl_id, sc.c.name).select_from(
        sc.join(S.tbl, and_(S.tbl.c.tbl_id == sc.c.tbl_id, S.tbl.c.schema_version == sc.c.version)))
        .where(sc.c.tbl_id.in_(sorted(tbl_ids))))
    out: dict[int, set[str]] = {}
    for tbl_id, name in rows:
        out.setdefault(tbl_id, set()).add(name.lower())
    return out


def _key_names(conn: Connection, tbl_ids: set[int]) -> set[tuple[int, str]]:
    """(table, name) of the primary and unique keys of the tables."""
    if not tbl_ids:
        return set()
    return {(r.tbl_id, r.name) for r in conn.execute(select(_C.c.tbl_id, _C.c.name).where(
        _C.c.tbl_id.in_(sorted(tbl_ids)), _C.c.kind.in_([PK, UNIQUE])))}


def _flags(r: Row[Any]) -> dict[str, bool]:
    return {"enable_cstr": bool(r.enable_cstr), "validate_cstr": bool(r.validate_cstr), "rely_cstr": bool(r.rely_cstr)}


def _primary_key(r: Row[Any]) -> SQLPrimaryKey:
    return SQLPrimaryKey(table_db=r.db_name, table_name=r.tbl_name, column_name=r.column_name, key_seq=r.position,
                         pk_name=r.name, catName=DEFAULT_CATALOG, **_flags(r))


def _foreign_key(r: Row[Any]) -> SQLForeignKey:
    return SQLForeignKey(pktable_db=r.db_name, pktable_name=r.tbl_name, pkcolumn_name=r.column_name,
                         fktable_db=r.child_db_name, fktable_name=r.child_tbl_name, fkcolumn_name=r.child_column,
                         key_seq=r.position, update_rule=r.update_rule, delete_rule=r.delete_rule, fk_name=r.name,
                         pk_name=r.ref_name, catName=DEFAULT_CATALOG, **_flags(r))


def _unique(r: Row[Any]) -> SQLUniqueConstraint:
    return SQLUniqueConstraint(catName=DEFAULT_CATALOG, table_db=r.db_name, table_name=r.tbl_name,
                               column_name=r.column_name,
                               key_seq=r.position, uk_name=r.name, **_flags(r))


def _not_null(r: Row[Any]) -> SQLNotNullConstraint:
    return SQLNotNullConstraint(catName=DEFAULT_CATALOG, table_db=r.db_name, table_name=r.tbl_name,
                                column_name=r.column_name, nn_name=r.name, **_flags(r))


def _default(r: Row[Any]) -> SQLDefaultConstraint:
    return SQLDefaultConstraint(catName=DEFAULT_CATALOG, table_db=r.db_name, table_name=r.tbl_name,
                                column_name=r.column_name, default_value=r.value, dc_name=r.name, **_flags(r))


def _check(r: Row[Any]) -> SQLCheckConstraint:
    return SQLCheckConstraint(catName=DEFAULT_CATALOG, table_db=r.db_name, table_name=r.tbl_name,
                               column_name=r.column_name,
                              check_expression=r.value, dc_name=r.name, **_flags(r))

