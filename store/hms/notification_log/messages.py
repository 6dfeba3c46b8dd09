"""Event messages in the form Hive's JSONMessageEncoder writes them (message format "json-0.2").

A message is a JSON object whose field names, order and contents are those of Hive's
`org.apache.hadoop.hive.metastore.messaging.json.JSON*Message` classes, so that Hive's
JSONMessageDeserializer (used by Impala, Hive replication and other event consumers) reads them.
Thrift objects inside a message (`tableObjJson`, `partitionListJson`, ...) are the object
serialized with Thrift's TJSONProtocol, as Java's `TSerializer(new TJSONProtocol.Factory())` writes
it. Hive's mapper writes every field, null ones as null.

`server`, `servicePrincipal` and `timestamp` are left as None here: the log fills them in when it
records the event (see `NotificationLog.record`).
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from typing import Any, TypeVar

import orjson
from thrift.protocol.TJSONProtocol import TJSONProtocol, TJSONProtocolFactory
from thrift.TSerialization import deserialize, serialize

from store.hms.notification_log.tjson import tjson as fast_tjson
from thrift_idl.hive_metastore.ttypes import Partition, Table

FORMAT = "json-0.2"  # JSONMessageEncoder.FORMAT

# Java's TJSONProtocol escapes control characters other than \b \t \n \f \r as \u00XX (lower-case
# hex); Python's writes them raw. Serde parameters carry such characters ('field.delim' \x01).
_JAVA_ESCAPES = {chr(c): f"\\u{c:04x}" for c in range(0x20)}
_JAVA_ESCAPES.update({"\b": "\\b", "\t": "\\t", "\n": "\\n", "\f": "\\f", "\r": "\\r",
                      '"': '\\"', "\\": "\\\\"})


class _JavaTJSONProtocol(TJSONProtocol):
    def writeJSONString(self, string):
        self.context.write()
        escaped = "".join(_JAVA_ESCAPES.get(ch, ch) for ch in string)
        self.trans.write(b'"' + escaped.encode("utf-8") + b'"')


class _JavaTJSONProtocolFactory(TJSONProtocolFactory):
    def getProtocol(self, trans):
        return _JavaTJSONProtocol(trans, string_length_limit=self.string_length_limit)


_WRITE = _JavaTJSONProtocolFactory()
_READ = TJSONProtocolFactory()
T = TypeVar("T")


def tjson(obj: Any, memo: dict[Any, tuple[Any, str]] | None = None) -> str:
    """`obj` (a Thrift struct) as TJSONProtocol text, as Hive's `create*ObjJson` writes it (`memo`:
    see notification_log/tjson.py)."""
    return fast_tjson(obj, memo)


def tjson_by_protocol(obj: Any) -> str:
    """The same text through the Thrift library's protocol (slower; the reference for `tjson`)."""
    return serialize(obj, _WRITE).decode("utf-8")


def from_tjson(text: str, cls: type[T]) -> T:
    """The Thrift struct of class `cls` that `tjson` wrote (what Hive's `getTObj` does)."""
    return deserialize(cls(), text.encode("utf-8"), _READ)


def encode(body: dict[str, Any]) -> str:
    """The message text: compact JSON, non-ASCII characters as they are (as Jackson writes)."""
    plain = {}
    for k, v in body.items():
        if type(v) is SharedText and v.json is not None:
            v = v.json
        elif not (type(k) is str and (type(v) in _ORJSON_SAME or type(v) is list and all(type(x) is str for x in v)
                                      or type(v) is dict and all(type(x) is str and type(y) is str
                                                                 for x, y in v.items()))):
            break
        plain[k] = v
    else:
        try:  # (several times faster)
            return orjson.dumps(plain).decode("utf-8")
        except orjson.JSONEncodeError:  # e.g. an integer beyond 64 bits, a lone surrogate
            pass
    return json.dumps(body, ensure_ascii=False, separators=(",", ":"))


class SharedText(str):
    """A text many messages of a batch hold (the table's JSON in each ALTER_PARTITION message):
    encoded as a JSON string once."""
    json: orjson.Fragment | None

    def __new__(cls, text: str) -> SharedText:
        self = super().__new__(cls, text)
        try:
            self.json = orjson.Fragment(orjson.dumps(text))
        except orjson.JSONEncodeError:  # (a lone surrogate: json.dumps writes the message)
            self.json = None
        return self


# value types orjson writes as json.dumps(ensure_ascii=False, compact) does (strings with the same escapes)
_ORJSON_SAME = frozenset((str, int, bool, type(None)))


def _head(**fields: Any) -> dict[str, Any]:
    return {"server": None, "servicePrincipal": None, **fields}


def key_values(table: Table, values: Sequence[str]) -> dict[str, str]:
    """Partition key name -> value, in key order (Hive's `getPartitionKeyValues`)."""
    return {k.name: v for k, v in zip(table.partitionKeys or [], values)}


# --- databases, catalogs, functions --------------------------------------------------------------

def create_database(db, cat: str) -> dict[str, Any]:
    return _head(cat=cat, db=db.name, dbJson=tjson(db), timestamp=None)


def alter_database(before, after) -> dict[str, Any]:
    return _head(db=before.name, dbObjBeforeJson=tjson(before), dbObjAfterJson=tjson(after), timestamp=None)


def drop_database(db, cat: str) -> dict[str, Any]:
    return _head(cat=cat, db=db.name, dbJson=tjson(db), timestamp=None)


def create_catalog(name: str) -> dict[str, Any]:
    return _head(catalog=name, timestamp=None)


def alter_catalog(before, after) -> dict[str, Any]:
    return _head(catObjBeforeJson=tjson(before), catObjAfterJson=tjson(after), timestamp=None)


def drop_catalog(name: str) -> dict[str, Any]:
    return _head(catalog=name, timestamp=None)


def create_function(fn) -> dict[str, Any]:
    return _head(db=fn.dbName, functionObjJson=tjson(fn), timestamp=None)


def drop_function(fn) -> dict[str, Any]:
    return _head(db=fn.dbName, functionName=fn.functionName, timestamp=None)


# --- tables and partitions -----------------------------------------------------------------------

def create_table(table: Table, files: Iterable[str]) -> dict[str, Any]:
    return _head(db=table.dbName, table=table.tableName, tableType=table.tableType,
                 tableObjJson=tjson(table), timestamp=None, files=list(files))


def alter_table(before: Table, after: Table, truncate: bool) -> dict[str, Any]:
    return _head(db=before.dbName, table=before.tableName, tableType=before.tableType,
                 tableObjBeforeJson=tjson(before), tableObjAfterJson=tjson(after), locOwner=None,
                 isTruncateOp=_bool(truncate), timestamp=None, writeId=after.writeId)


def drop_table(table: Table) -> dict[str, Any]:
    return _head(db=table.dbName, table=table.tableName, tableType=table.tableType,
                 tableObjJson=tjson(table), timestamp=None)


def add_partition(table: Table, partitions: Sequence[Partition]) -> dict[str, Any]:
    # partitionFiles: the files already in each new partition's directory; the store does not
    # list storage inside a metadata transaction, so none are named (as Hive for external tables)
    return _head(db=table.dbName, table=table.tableName, tableType=table.tableType,
                 tableObjJson=tjson(table), locOwner=None, timestamp=None,
                 partitions=[key_values(table, p.values or []) for p in partitions],
                 partitionListJson=_each_tjson(partitions), partitionFiles=[])


def _each_tjson(objects: Sequence[Any]) -> list[str]:
    memo: dict[Any, tuple[Any, str]] = {}
    return [tjson(o, memo) for o in objects]


def alter_partition(table: Table, before: Partition, after: Partition, truncate: bool,
                    table_json: str | None = None, memo: dict[Any, tuple[Any, str]] | None = None) -> dict[str, Any]:
    """`table_json`: tjson(table) when the caller has it, `memo` shared by the messages of one call
    altering many partitions."""
    return _head(cat=table.catName, db=table.dbName, table=table.tableName, tableType=table.tableType,
                 tableObjJson=table_json if table_json is not None else tjson(table),
                 isTruncateOp=_bool(truncate), timestamp=None,
                 writeId=after.writeId, keyValues=key_values(table, before.values or []),
                 partitionObjBeforeJson=tjson(before, memo), partitionObjAfterJson=tjson(after, memo))


def drop_partition(table: Table, values: Sequence[Sequence[str]]) -> dict[str, Any]:
    return _head(cat=table.catName, db=table.dbName, table=table.tableName, tableType=table.tableType,
                 tableObjJson=tjson(table), timestamp=None, partitions=[key_values(table, v) for v in values])


def insert(table: Table, partition: Partition | None, replace: bool, files: Iterable[str],
           table_json: str | None = None, memo: dict[Any, tuple[Any, str]] | None = None) -> dict[str, Any]:
    """`table_json`: `tjson(table)` when the caller has it, `memo` shared by one commit's events."""
    return _head(cat=table.catName, db=table.dbName, table=table.tableName, tableType=table.tableType,
                 tableObjJson=tjson(table) if table_json is None else table_json,
                 ptnObjJson=tjson(partition, memo) if partition is not None else None,
                 timestamp=None, replace=_bool(replace), files=list(files))


# --- constraints ---------------------------------------------------------------------------------

# event type -> the message's list field (JSONAdd*Message)
CONSTRAINT_LISTS = {
    "ADD_PRIMARYKEY": "primaryKeyListJson",
    "ADD_FOREIGNKEY": "foreignKeyListJson",
    "ADD_UNIQUECONSTRAINT": "uniqueConstraintListJson",
    "ADD_NOTNULLCONSTRAINT": "notNullConstraintListJson",
    "ADD_DEFAULTCONSTRAINT": "defaultConstraintListJson",
    "ADD_CHECKCONSTRAINT": "checkConstraintListJson",
}


def add_constraints(event_type: str, constraints: Sequence[Any]) -> dict[str, Any]:
    return _head(timestamp=None, **{CONSTRAINT_LISTS[event_type]: [tjson(c) for c in constraints]})


def drop_constraint(cat: str, db: str, table: str, name: str) -> dict[str, Any]:
    return _head(catName=cat, dbName=db, tableName=table, constraintName=name, timestamp=None)


def _bool(value: bool) -> str:
    return "true" if value else "false"  # Java's Boolean.toString
