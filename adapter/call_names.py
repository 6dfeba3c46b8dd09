"""What a Thrift call names: the database and table (`names_of`, from its parameters or its request
struct) and the object as the call and audit logs show it (`object_of`: db, db.table or role:<name>).
The call log (adapter/call_log.py) and authorization (adapter/authorization.py) both read it."""

from __future__ import annotations

import inspect
import threading
from functools import lru_cache
from typing import Any

_DB_PARAMS = ("db_name", "dbName", "dbname", "db")
_TABLE_PARAMS = ("tbl_name", "tableName", "table_name", "tblName", "tb")  # tb: the metaserver protocol
_STRUCT_DB = ("dbName", "db_name", "dbname", "table_db", "fktable_db", "databaseName", "oldDbName", "database")
_STRUCT_TABLE = ("tableName", "tblName", "tbl_name", "table_name", "tablename", "fktable_name", "objectName")
# (GetTablesExtRequest names its database `database`; AlterDatabaseRequest `oldDbName`)
_NESTED = ("table", "statsDesc", "colStats", "primaryKeyCols", "foreignKeyCols", "uniqueConstraintCols",
           "notNullConstraintCols", "defaultConstraintCols", "checkConstraintCols", "config", "privileges",
           "hiveObject")
_NAME_MAX = 200


@lru_cache(maxsize=1024)
def _parameters(method: str) -> tuple[str, ...]:
    from thrift_idl.hudi_metaserver import ThriftHoodieMetaserver
    from thrift_idl.hudi_metastore import HudiMetastore

    fn = getattr(HudiMetastore.Iface, method, None) or getattr(ThriftHoodieMetaserver.Iface, method, None)
    if fn is None:
        return ()
    return tuple(list(inspect.signature(fn).parameters)[1:])


def _from_struct(value: Any, depth: int = 3) -> tuple[str | None, str | None]:
    """(db, table) a request struct names: its own fields, else those of the struct it wraps
    (CreateTableRequest.table, ColumnStatistics.statsDesc, a constraint list's first element...)."""
    if isinstance(value, list):
        value = value[0] if value else None
    if value is None or depth <= 0 or isinstance(value, (str, bytes, int, float, dict)):
        return None, None
    db = next((getattr(value, a) for a in _STRUCT_DB if isinstance(getattr(value, a, None), str)), None)
    table = next((getattr(value, a) for a in _STRUCT_TABLE if isinstance(getattr(value, a, None), str)), None)
    if db is None and type(value).__name__ in ("Database", "DropDatabaseRequest"):
        db = getattr(value, "name", None)
    if db is None:
        for attr in _NESTED:
            db, table = _from_struct(getattr(value, attr, None), depth - 1)
            if db is not None:
                break
    return db, table


def names_of(method: str, args: tuple | None) -> tuple[str | None, str | None]:
    """(db, table) the call names, from its parameters or its request struct; (None, None) when none."""
    if not args:
        return None, None
    db = table = None
    for param, value in zip(_parameters(method), args):
        if isinstance(value, str):
            if param in _DB_PARAMS or (param == "name" and "database" in method):
                db = db or value
            elif param in _TABLE_PARAMS or (param == "name" and "table" in method):
                table = table or value
        elif db is None:
            db, table = _from_struct(value)
    return (db, table) if db is not None else (None, None)


def object_of(method: str, args: tuple | None) -> str | None:
    """'db.table', 'db' or None: what the call names, from its parameters or its request struct."""
    db, table = names_of(method, args)
    if db is None:
        return _role_of(args) if "role" in method else None
    return (f"{db}.{table}" if table else db)[:_NAME_MAX]


def _role_of(args: tuple | None) -> str | None:
    """'role:<name>' for the role calls (create_role, grant_role, grant_revoke_role, ...)."""
    first = args[0] if args else None
    name = getattr(first, "roleName", None) if not isinstance(first, str) else first
    return f"role:{name}"[:_NAME_MAX] if isinstance(name, str) and name else None


_call = threading.local()  # one thread per connection: the arguments of this thread's current call


def record_arguments(method: str, args: tuple) -> None:
    """Called by the router as it dispatches a call (adapter/router.py)."""
    _call.args = (method, args)


def current_arguments() -> tuple[str, tuple] | None:
    """(method, arguments) of this thread's call, while it runs: the same tuple throughout a call."""
    return getattr(_call, "args", None)


def take_arguments(method: str) -> tuple | None:
    """The arguments of this thread's call of `method`, once (the call log takes them at its end)."""
    got = getattr(_call, "args", None)
    _call.args = None
    return got[1] if got is not None and got[0] == method else None
