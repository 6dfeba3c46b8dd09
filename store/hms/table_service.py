"""RFC-36 table service: databases and tables (create, read, list, alter, drop)."""

from __future__ import annotations

import os
import re

from sqlalchemy import (
    Connection,
    bindparam,
    delete,
    func,
    literal,
    select,
    update,
)
from sqlalchemy.exc import DBAPIError

from store.db import schema as S
from store.db.database import Store, now_s
from store.db.dialect import json_rows, params_of
from store.errors import (
    AlreadyExists,
    InvalidObject,
    InvalidOperation,
    MetaError,
    NoSuchObject,
)
from store.hms import stats_params
from store.hms.descriptors import (
    build_sd,
    col_tuples,
    columns_of,
    insert_columns,
    insert_sd,
    load_columns,
    sd_row,
    version_for_columns,
)
from store.storage import warehouse
from thrift_idl.hive_metastore.ttypes import (
    Database,
    PrincipalType,
    Table,
    TableMeta,
)

CATALOG = "hive"
DDL_TIME = "transient_lastDdlTime"
MANAGED, EXTERNAL, VIEW = "MANAGED_TABLE", "EXTERNAL_TABLE", "VIRTUAL_VIEW"

_VALID_NAME = re.compile(r"^[A-Za-z0-9_]+$")


def valid_name(name: str | None) -> bool:
    return bool(name) and bool(_VALID_NAME.match(name))


def pattern_regex(pattern: str | None) -> re.Pattern | None:
    """Hive's name patterns (as its JDO store evaluates them): the pattern is trimmed and split on
    `|`; in each alternative `*` matches any run of characters and `.` any one character, every
    other character is literal; case-insensitive. An empty pattern matches nothing."""
    if pattern is None or pattern.strip() in ("*", ".*"):
        return None
    alts = []
    for alt in pattern.strip().split("|"):
        if alt:
            alts.append("".join(".*" if ch == "*" else "." if ch == "." else re.escape(ch) for ch in alt))
    if not alts:
        return re.compile(r"(?!)")
    return re.compile("^(?:" + "|".join(alts) + ")$", re.IGNORECASE | re.DOTALL)


def match_names(names, pattern: str | None) -> list[str]:
    rx = pattern_regex(pattern)
    return sorted(n for n in names if rx is None or rx.match(n))


# Hive's column type check: the first token of the type (a run of letters/digits/_ or of other
# characters) must be one of its type names, lower-case ("<derived from deserializer>" passes).
_TYPE_NAMES = frozenset({
    "void", "boolean", "tinyint", "smallint", "int", "bigint", "float", "double", "string", "varchar",
    "char", "date", "datetime", "timestamp", "interval_year_month", "interval_day_time", "decimal",
    "binary", "array", "map", "struct", "uniontype",
})


def _type_ok(type_: str) -> bool:
    if type_ == "<derived from deserializer>":
        return True
    word = type_[0].isalnum() or type_[0] == "_"
    end = 1
    while end < len(type_) and (type_[end].isalnum() or type_[end] == "_") == word:
        end += 1
    return type_[:end] in _TYPE_NAMES


def column_problem(cols, what: str = "column ") -> str | None:
    """Hive's validateTblColumns: the error text for the first bad column, or None."""
    for c in cols or []:
        if c.name is None or not c.type:  # Hive fails on these with a NullPointer/StringIndex exception
            raise MetaError(f"Invalid column {c.name!r} of type {c.type!r}")
        if not _type_ok(c.type):
            return f"Invalid {what}type: {c.type}"
    return None


# Hive's implicit conversions (TypeInfoUtils.implicitConvertible), which decide whether alter_table
# may change a column's type in place (hive.metastore.disallow.incompatible.col.type.changes).
_NUMERIC_RANK = {"tinyint": 1, "smallint": 2, "int": 3, "bigint": 4, "decimal": 5, "float": 6, "double": 7,
                 "string": 8}
_TYPE_GROUP = {**{t: "numeric" for t in ("tinyint", "smallint", "int", "bigint", "float", "double", "decimal")},
               "string": "string", "char": "string", "varchar": "string", "date": "date", "timestamp": "date"}


def _primitive(type_: str) -> str | None:
    t = "".join(type_.split()).lower()
    return None if "<" in t else t.split("(", 1)[0]


def types_compatible(old: str, new: str) -> bool:
    if "".join(old.split()).lower() == "".join(new.split()).lower():
        return True
    o, n = _primitive(old), _primitive(new)
    if o is None or n is None:
        return False  # complex types must stay the same
    og, ng = _TYPE_GROUP.get(o), _TYPE_GROUP.get(n)
    if o == n or o == "void" or (og == "string" and n == "double") \
            or (og in ("date", "numeric", "string") and ng == "string"):
        return True
    f, t = _NUMERIC_RANK.get(o), _NUMERIC_RANK.get(n)
    return f is not None and t is not None and f <= t


def incompatible_columns(old_cols, new_cols) -> list[str]:
    """Names of new columns whose type cannot replace the old type at the same position."""
    return [n.name for o, n in zip(old_cols or [], new_cols or []) if not types_compatible(o.type, n.type)]


def is_external(params: dict | None) -> bool:
    """Hive 2.3's rule (`"TRUE".equals(EXTERNAL)`): only the upper-case value counts."""
    return (params or {}).get("EXTERNAL") == "TRUE"


def _params(conn: Connection, table: S.Table, key_col: str, ids: list[int]) -> dict[int, dict]:
    out: dict[int, dict] = {i: {} for i in ids}
    if ids:
        col = table.c[key_col]
        for r in conn.execute(select(col, table.c.param_key, table.c.param_value).where(col.in_(ids))):
            out[r[0]][r[1]] = r[2] if r[2] is not None else ""
    return out


def _put_params(conn: Connection, table: S.Table, key_col: str, owner_id: int, params: dict | None,
                replace: bool = True) -> None:
    if replace:
        conn.execute(delete(table).where(table.c[key_col] == owner_id))
    if params:
        conn.execute(table.insert(), [
            {key_col: owner_id, "param_key": k, "param_value": v} for k, v in params.items()
        ])


class TableService:
    def __init__(self, store: Store):
        self.store = store
        self.warehouse_uri = warehouse.to_uri(store.warehouse)
        self._one_table = None  # the one-table statement, built once

    # --- databases ------------------------------------------------------------------------------

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

        def tx(conn: Connection):
            if conn.execute(select(S.db.c.db_id).where(S.db.c.name == name)).first():
                raise AlreadyExists(f"Database {name} already exists")
            db_id = conn.execute(S.db.insert().values(
                name=name, description=database.description, location_uri=location,
                managed_location_uri=database.managedLocationUri,
                owner_name=database.ownerName, owner_type=database.ownerType,
                create_time=database.createTime or now_s(),
            )).inserted_primary_key[0]
            _put_params(conn, S.db_params, "db_id", db_id, database.parameters, replace=False)

        self.store.run_write(tx)
        warehouse.make_dirs(location)

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

    def _db_row(self, conn: Connection, name: str):
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
            row = self._db_row(conn, name)
            params = _params(conn, S.db_params, "db_id", [row.db_id])[row.db_id]
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
        def tx(conn: Connection):
            row = self._db_row(conn, name)
            conn.execute(update(S.db).where(S.db.c.db_id == row.db_id).values(
                description=database.description if database.description is not None else row.description,
                location_uri=database.locationUri or row.location_uri,
                managed_location_uri=database.managedLocationUri or row.managed_location_uri,
                owner_name=database.ownerName if database.ownerName is not None else row.owner_name,
                owner_type=database.ownerType if database.ownerType is not None else row.owner_type,
            ))
            if database.parameters is not None:
                _put_params(conn, S.db_params, "db_id", row.db_id, database.parameters)

        self.store.run_write(tx)

    def drop_database(self, name: str, delete_data: bool, cascade: bool) -> None:
        name = name.lower()
        if name == "default":
            raise MetaError("Can not drop default database")
        doomed_dirs: list[str] = []

        def tx(conn: Connection):
            row = self._db_row(conn, name)
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
            for t in tables:
                if delete_data and t.tbl_type == MANAGED:
                    doomed_dirs.extend(self._partition_dirs_outside(conn, t.tbl_id, t.location))
                    doomed_dirs.append(t.location)
                self._delete_table_rows(conn, t.tbl_id)
            conn.execute(delete(S.functions).where(S.functions.c.db_id == row.db_id))
            conn.execute(delete(S.db_params).where(S.db_params.c.db_id == row.db_id))
            conn.execute(delete(S.db).where(S.db.c.db_id == row.db_id))
            if delete_data:
                doomed_dirs.append(row.location_uri)

        self.store.run_write(tx)
        for d in doomed_dirs:
            warehouse.delete_dir(d)

    # --- tables ---------------------------------------------------------------------------------

    def create_table(self, table: Table, env: dict | None = None) -> None:
        if table.tableName is None or table.dbName is None:
            raise MetaError("Table and database names are required")  # Hive: a NullPointerException
        db_name = table.dbName.lower()
        name = table.tableName.lower()
        if not valid_name(name):
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
        params = dict(table.parameters or {})
        tbl_type = table.tableType or MANAGED
        if tbl_type == MANAGED and is_external(params):
            tbl_type = EXTERNAL
        elif tbl_type == EXTERNAL and not is_external(params):
            tbl_type = MANAGED
        now = now_s()
        params.setdefault(DDL_TIME, str(now))
        made: list[str] = []

        def tx(conn: Connection):
            try:
                db = self._db_row(conn, db_name)
            except NoSuchObject:
                raise InvalidObject(f"Database {db_name} doesn't exist.")
            if conn.execute(select(S.tbl.c.tbl_id).where(
                    S.tbl.c.db_id == db.db_id, S.tbl.c.name == name)).first():
                raise AlreadyExists(f"Table {CATALOG}.{db_name}.{name} already exists")
            location = sd.location
            if tbl_type != VIEW and not location:
                location = warehouse.join(db.location_uri or self.default_db_location(db_name), name)
            tparams = dict(params)
            stats_params.on_create_table(tparams, tbl_type, bool(table.partitionKeys), location, env)
            sd_id = insert_sd(conn, sd)
            tbl_id = conn.execute(S.tbl.insert().values(
                db_id=db.db_id, name=name, owner=table.owner, owner_type=table.ownerType,
                create_time=now, last_access_time=table.lastAccessTime or 0,
                retention=table.retention or 0, tbl_type=tbl_type, location=location, sd_id=sd_id,
                schema_version=0, view_original_text=table.viewOriginalText,
                view_expanded_text=table.viewExpandedText, rewrite_enabled=table.rewriteEnabled,
                temporary=table.temporary,
            )).inserted_primary_key[0]
            insert_columns(conn, tbl_id, 0, sd.cols, table.partitionKeys)
            _put_params(conn, S.tbl_params, "tbl_id", tbl_id, tparams, replace=False)
            if location and tbl_type != VIEW:
                made.append(location)

        self.store.run_write(tx)
        for loc in made:
            warehouse.make_dirs(loc)

    def _table_query(self):
        """One statement for whole tables: the row, its descriptor, and (aggregated as JSON) its
        parameters and the columns of its current schema version."""
        t, d, sd, tp, sc = S.tbl, S.db, S.sds, S.tbl_params, S.schema
        backend = self.store.backend
        params = select(json_rows(backend, tp.c.param_key, tp.c.param_value)).where(
            tp.c.tbl_id == t.c.tbl_id).scalar_subquery()
        cols = select(json_rows(backend, sc.c.is_partition_col, sc.c.position, sc.c.name, sc.c.type,
                                sc.c.comment)).where(
            sc.c.tbl_id == t.c.tbl_id, sc.c.version == t.c.schema_version).scalar_subquery()
        return select(t, d.c.name.label("db_name"), *[c.label("sd_" + c.name) for c in sd.c],
                      params.label("params_json"), cols.label("cols_json")).select_from(
            t.join(d, t.c.db_id == d.c.db_id).outerjoin(sd, t.c.sd_id == sd.c.sd_id))

    def _build_tables(self, conn: Connection, rows) -> list[Table]:
        out = []
        for r in rows:
            data_cols, part_keys = columns_of(r.cols_json)
            sd_view = _SdView(r)
            out.append(Table(
                tableName=r.name, dbName=r.db_name, owner=r.owner, createTime=r.create_time,
                lastAccessTime=r.last_access_time, retention=r.retention,
                sd=build_sd(sd_view, r.location, data_cols), partitionKeys=part_keys,
                parameters=params_of(r.params_json), viewOriginalText=r.view_original_text,
                viewExpandedText=r.view_expanded_text, tableType=r.tbl_type,
                temporary=bool(r.temporary), rewriteEnabled=bool(r.rewrite_enabled),
                catName=CATALOG,
                ownerType=r.owner_type if r.owner_type is not None else PrincipalType.USER,
            ))
        return out

    def _table_row(self, conn: Connection, db_name: str, name: str):
        if self._one_table is None:
            self._one_table = self._table_query().where(
                S.db.c.name == bindparam("db_name"), S.tbl.c.name == bindparam("tbl_name"))
        row = conn.execute(self._one_table, {"db_name": db_name.lower(), "tbl_name": name.lower()}).first()
        if row is None:
            raise NoSuchObject(f"{db_name.lower()}.{name.lower()} table not found")
        return row

    def get_table(self, db_name: str, name: str) -> Table:
        with self.store.read() as conn:
            return self._build_tables(conn, [self._table_row(conn, db_name, name)])[0]

    def get_table_in(self, conn: Connection, db_name: str, name: str) -> Table:
        return self._build_tables(conn, [self._table_row(conn, db_name, name)])[0]

    def get_tables_by_names(self, db_name: str, names: list[str]) -> list[Table]:
        wanted = list(dict.fromkeys(n.lower() for n in names or []))
        with self.store.read() as conn:
            self.db_id(conn, db_name)
            out: list[Table] = []
            for i in range(0, len(wanted), 500):
                rows = conn.execute(self._table_query().where(
                    S.db.c.name == db_name.lower(), S.tbl.c.name.in_(wanted[i:i + 500]))).all()
                out.extend(self._build_tables(conn, rows))
        order = {n: i for i, n in enumerate(wanted)}
        return sorted(out, key=lambda t: order[t.tableName])

    def list_tables(self, db_name: str, pattern: str | None = None, table_type: str | None = None) -> list[str]:
        with self.store.read() as conn:
            q = select(S.tbl.c.name).select_from(S.tbl.join(S.db, S.tbl.c.db_id == S.db.c.db_id)).where(
                S.db.c.name == db_name.lower())
            if table_type:
                q = q.where(S.tbl.c.tbl_type == table_type)
            names = conn.execute(q).scalars().all()
        return match_names(names, pattern)

    def table_meta(self, db_patterns: str | None, tbl_patterns: str | None, types: list[str] | None) -> list[TableMeta]:
        db_rx, tbl_rx = pattern_regex(db_patterns), pattern_regex(tbl_patterns)
        with self.store.read() as conn:
            q = select(S.db.c.name.label("db"), S.tbl.c.name, S.tbl.c.tbl_type, S.tbl.c.tbl_id).select_from(
                S.tbl.join(S.db, S.tbl.c.db_id == S.db.c.db_id))
            if types:
                q = q.where(S.tbl.c.tbl_type.in_(types))
            rows = [r for r in conn.execute(q)
                    if (db_rx is None or db_rx.match(r.db)) and (tbl_rx is None or tbl_rx.match(r.name))]
            comments = {}
            ids = [r.tbl_id for r in rows]
            for i in range(0, len(ids), 500):
                comments.update((r.tbl_id, r.param_value) for r in conn.execute(
                    select(S.tbl_params.c.tbl_id, S.tbl_params.c.param_value).where(
                        S.tbl_params.c.tbl_id.in_(ids[i:i + 500]), S.tbl_params.c.param_key == "comment")))
        return [TableMeta(dbName=r.db, tableName=r.name, tableType=r.tbl_type, comments=comments.get(r.tbl_id),
                          catName=CATALOG) for r in sorted(rows, key=lambda r: (r.db, r.name))]

    def alter_table(self, db_name: str, name: str, new: Table, env: dict | None = None,
                    cascade: bool = False) -> None:
        if new is None or new.sd is None:
            raise InvalidOperation("New table is invalid: storage descriptor is required")
        new_db = (new.dbName or db_name).lower()
        new_name = (new.tableName or name).lower()
        if not valid_name(new_name):
            raise InvalidOperation(f"{new.tableName} is not a valid object name")
        problem = column_problem(new.sd.cols)
        if problem:
            raise InvalidOperation(problem)
        moves: list[tuple[str, str]] = []

        def tx(conn: Connection):
            moves.clear()  # `moved` survives a retry: those directories are already at their target
            try:
                old = self._table_row(conn, db_name, name)
            except NoSuchObject:
                raise InvalidOperation(f"table {db_name.lower()}.{name.lower()} doesn't exist")
            old_cols, old_keys = load_columns(conn, old.tbl_id, [old.schema_version])[old.schema_version]
            bad = incompatible_columns(old_cols, new.sd.cols) if old.tbl_type != VIEW else []
            if bad:
                raise InvalidOperation(
                    "The following columns have types incompatible with the existing columns in their "
                    "respective positions :\n" + ",".join(bad))
            if [(n, t) for n, t, _ in col_tuples(old_keys)] != \
                    [(n, t) for n, t, _ in col_tuples(new.partitionKeys)]:
                raise InvalidOperation("partition keys can not be changed.")
            renamed = (new_db, new_name) != (old.db_name, old.name)
            db_id = old.db_id
            location = new.sd.location or old.location
            if renamed:
                try:
                    target_db = self._db_row(conn, new_db)
                except NoSuchObject:
                    raise InvalidOperation(f"Unable to change partition or table. Database {new_db} does not exist")
                db_id = target_db.db_id
                if conn.execute(select(S.tbl.c.tbl_id).where(
                        S.tbl.c.db_id == db_id, S.tbl.c.name == new_name)).first():
                    raise InvalidOperation(f"new table {new_db}.{new_name} already exists")
                if old.tbl_type == MANAGED and (not new.sd.location or new.sd.location == old.location) \
                        and old.location:
                    location = warehouse.join(
                        target_db.location_uri or self.default_db_location(new_db), new_name)
                    moves.append((old.location, location))
                    self._relocate_partitions(conn, old.tbl_id, old.location, location)
            params = dict(new.parameters or {})
            if not params.get(DDL_TIME) or params.get(DDL_TIME) == "0":
                params[DDL_TIME] = str(now_s())
            tbl_type = new.tableType or old.tbl_type
            if tbl_type == MANAGED and is_external(params):
                tbl_type = EXTERNAL
            elif tbl_type == EXTERNAL and not is_external(params):
                tbl_type = MANAGED
            # Hive recounts numFiles/totalSize of an unpartitioned table (from where its data is now)
            stats_params.on_alter_table(params, tbl_type, bool(new.partitionKeys),
                                        moves[0][0] if moves else location, env)
            # column statistics of columns that are gone or changed type are dropped with them
            new_types = {n: t.lower() for n, t, _ in col_tuples(new.sd.cols)}
            if [(n, t.lower()) for n, t, _ in col_tuples(old_cols)] != list(new_types.items()):
                tcs = S.tab_col_stats
                stale = sorted({r.column_name for r in conn.execute(
                    select(tcs.c.column_name, tcs.c.column_type).where(tcs.c.tbl_id == old.tbl_id))
                    if new_types.get(r.column_name) != (r.column_type or "").lower()})
                if stale:
                    conn.execute(delete(tcs).where(tcs.c.tbl_id == old.tbl_id, tcs.c.column_name.in_(stale)))
                    stats_params.remove_column_stats_state(params, stale)
            version = version_for_columns(conn, old.tbl_id, old.schema_version, new.sd.cols, new.partitionKeys)
            conn.execute(update(S.sds).where(S.sds.c.sd_id == old.sd_id).values(**sd_row(new.sd)))
            conn.execute(update(S.tbl).where(S.tbl.c.tbl_id == old.tbl_id).values(
                db_id=db_id, name=new_name, owner=new.owner, owner_type=new.ownerType,
                last_access_time=new.lastAccessTime or old.last_access_time,
                retention=new.retention or 0, tbl_type=tbl_type, location=location,
                schema_version=version, view_original_text=new.viewOriginalText,
                view_expanded_text=new.viewExpandedText,
                rewrite_enabled=new.rewriteEnabled if new.rewriteEnabled is not None else old.rewrite_enabled,
            ))
            _put_params(conn, S.tbl_params, "tbl_id", old.tbl_id, params)
            if cascade and version != old.schema_version:
                conn.execute(update(S.partitions).where(S.partitions.c.tbl_id == old.tbl_id).values(
                    schema_version=version))

            # Data moves last, still inside the transaction: a failed move rolls the metadata back.
            for src, dst in moves:
                try:
                    done = warehouse.move_dir(src, dst)
                except OSError as exc:
                    dst_path = warehouse.local_path(dst)
                    if dst_path is not None and os.path.exists(dst_path):
                        raise InvalidOperation(
                            f"New location for this table {new_db}.{new_name} already exists : {dst}")
                    raise MetaError(f"Unable to move {src} to {dst}: {exc}")
                if done:
                    moved.append((src, dst))
                elif warehouse.local_path(src) is None:
                    raise MetaError(f"Unable to move {src} to {dst}")

        moved: list[tuple[str, str]] = []
        try:
            self.store.run_write(tx)
        except Exception:
            for src, dst in reversed(moved):  # the commit failed after the move: put the data back
                warehouse.move_dir(dst, src)
            raise

    def _relocate_partitions(self, conn: Connection, tbl_id: int, old_loc: str, new_loc: str) -> None:
        p = S.partitions
        prefix = old_loc.rstrip("/") + "/"
        conn.execute(update(p).where(
            p.c.tbl_id == tbl_id, p.c.location.startswith(prefix, autoescape=True)).values(
            location=literal(new_loc.rstrip("/") + "/") + func.substr(p.c.location, len(prefix) + 1)))

    def _partition_dirs_outside(self, conn: Connection, tbl_id: int, table_location: str | None) -> list[str]:
        prefix = (table_location or "").rstrip("/") + "/"
        p = S.partitions
        q = select(p.c.location).where(p.c.tbl_id == tbl_id, p.c.location.is_not(None))
        if table_location:
            q = q.where(~p.c.location.startswith(prefix, autoescape=True))
        return [r[0] for r in conn.execute(q)]

    def _delete_table_rows(self, conn: Connection, tbl_id: int) -> None:
        p = S.partitions
        part_ids = select(p.c.part_id).where(p.c.tbl_id == tbl_id).scalar_subquery()
        part_sds = select(p.c.sd_id).where(p.c.tbl_id == tbl_id, p.c.sd_id.is_not(None))
        sd_ids = [r[0] for r in conn.execute(part_sds)]
        conn.execute(delete(S.part_col_stats).where(S.part_col_stats.c.tbl_id == tbl_id))
        conn.execute(delete(S.partition_key_val).where(S.partition_key_val.c.tbl_id == tbl_id))
        conn.execute(delete(S.partition_params).where(S.partition_params.c.part_id.in_(part_ids)))
        conn.execute(delete(p).where(p.c.tbl_id == tbl_id))
        tsd = conn.execute(select(S.tbl.c.sd_id).where(S.tbl.c.tbl_id == tbl_id)).scalar()
        conn.execute(delete(S.tab_col_stats).where(S.tab_col_stats.c.tbl_id == tbl_id))
        conn.execute(delete(S.tbl_params).where(S.tbl_params.c.tbl_id == tbl_id))
        conn.execute(delete(S.schema).where(S.schema.c.tbl_id == tbl_id))
        conn.execute(delete(S.tbl).where(S.tbl.c.tbl_id == tbl_id))
        sd_ids.append(tsd)
        for i in range(0, len(sd_ids), 500):
            conn.execute(delete(S.sds).where(S.sds.c.sd_id.in_([s for s in sd_ids[i:i + 500] if s])))

    def drop_table(self, db_name: str, name: str, delete_data: bool, env: dict | None = None) -> None:
        doomed: list[str] = []

        def tx(conn: Connection):
            row = self._table_row(conn, db_name, name)
            if delete_data and row.tbl_type == MANAGED:
                doomed.extend(self._partition_dirs_outside(conn, row.tbl_id, row.location))
                if row.location:
                    doomed.append(row.location)
            self._delete_table_rows(conn, row.tbl_id)

        self.store.run_write(tx)
        for d in doomed:
            warehouse.delete_dir(d)


class _SdView:
    """Row attributes `sd_*` seen without the prefix, for build_sd."""

    __slots__ = ("_row",)

    def __init__(self, row):
        self._row = row

    def __getattr__(self, item):
        return getattr(self._row, "sd_" + item)
