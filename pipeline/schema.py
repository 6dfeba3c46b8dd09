"""Writer and table schemas: Spark types <-> the Avro schema Hudi records (`extraMetadata.schema`,
`hoodie.table.create.schema`) <-> Hive column types, and schema evolution by addition.

Hudi's Avro writer schema is a record `<table>_record` in namespace `hoodie.<table>` whose fields are
nullable unions (`["null", T]`, default null). Evolution: columns may be added (they read as null in
older files); a column's type may widen (int -> long, float -> double, int/long/float -> double);
anything else fails before a file is written.
"""

from __future__ import annotations

import json

from pyspark.sql import types as T

from hudi_format.config_keys import AVRO_NAMESPACE_PREFIX

from .errors import SchemaEvolutionError

META_COLUMNS = ["_hoodie_commit_time", "_hoodie_commit_seqno", "_hoodie_record_key",
                "_hoodie_partition_path", "_hoodie_file_name"]

# from -> the types it may widen to
_WIDENINGS: dict[type[T.DataType], tuple[type[T.DataType], ...]] = {
    T.IntegerType: (T.LongType, T.FloatType, T.DoubleType),
    T.ShortType: (T.IntegerType, T.LongType, T.FloatType, T.DoubleType),
    T.ByteType: (T.ShortType, T.IntegerType, T.LongType, T.FloatType, T.DoubleType),
    T.LongType: (T.FloatType, T.DoubleType),
    T.FloatType: (T.DoubleType,),
}


# --- Spark -> Avro -----------------------------------------------------------------------------

def _avro_type(dt: T.DataType, name: str, namespace: str):
    if isinstance(dt, T.StringType):
        return "string"
    if isinstance(dt, T.LongType):
        return "long"
    if isinstance(dt, (T.IntegerType, T.ShortType, T.ByteType)):
        return "int"
    if isinstance(dt, T.DoubleType):
        return "double"
    if isinstance(dt, T.FloatType):
        return "float"
    if isinstance(dt, T.BooleanType):
        return "boolean"
    if isinstance(dt, T.BinaryType):
        return "bytes"
    if isinstance(dt, T.DateType):
        return {"type": "int", "logicalType": "date"}
    if isinstance(dt, T.TimestampNTZType):
        return {"type": "long", "logicalType": "local-timestamp-micros"}
    if isinstance(dt, T.TimestampType):
        return {"type": "long", "logicalType": "timestamp-micros"}
    if isinstance(dt, T.DecimalType):
        size = _decimal_bytes(dt.precision)
        return {"type": "fixed", "name": "fixed", "namespace": f"{namespace}.{name}", "size": size,
                "logicalType": "decimal", "precision": dt.precision, "scale": dt.scale}
    if isinstance(dt, T.ArrayType):
        return {"type": "array", "items": _nullable(_avro_type(dt.elementType, "array", f"{namespace}.{name}"))}
    if isinstance(dt, T.MapType):
        if not isinstance(dt.keyType, T.StringType):
            raise SchemaEvolutionError(f"column {name}: Avro maps need string keys, not {dt.keyType.simpleString()}")
        return {"type": "map", "values": _nullable(_avro_type(dt.valueType, "value", f"{namespace}.{name}"))}
    if isinstance(dt, T.StructType):
        return _record(dt, name, f"{namespace}")
    raise SchemaEvolutionError(f"column {name}: type {dt.simpleString()} is not supported")


def _decimal_bytes(precision: int) -> int:
    n = 1
    while 2 ** (8 * n - 1) < 10 ** precision:
        n += 1
    return n


def _nullable(t):
    return ["null", t]


def _record(st: T.StructType, name: str, namespace: str) -> dict:
    inner = f"{namespace}.{name}"
    return {"type": "record", "name": name, "namespace": namespace,
            "fields": [{"name": f.name, "type": _nullable(_avro_type(f.dataType, f.name, inner)), "default": None}
                       for f in st.fields]}


def to_avro_schema(schema: T.StructType, table: str) -> str:
    """Hudi's writer schema (no meta columns) of a Spark schema, as Avro JSON."""
    data = T.StructType([f for f in schema.fields if f.name not in META_COLUMNS])
    return json.dumps(_record(data, f"{table}_record", f"{AVRO_NAMESPACE_PREFIX}{table}"))


# --- Avro -> Spark -----------------------------------------------------------------------------

def _spark_type(avro) -> T.DataType:
    if isinstance(avro, list):
        branches = [b for b in avro if b != "null"]
        if len(branches) != 1:
            raise SchemaEvolutionError(f"union {avro} is not a nullable type")
        return _spark_type(branches[0])
    if isinstance(avro, dict):
        logical, t = avro.get("logicalType"), avro.get("type")
        if logical == "decimal":
            return T.DecimalType(int(avro.get("precision", 10)), int(avro.get("scale", 0)))
        if logical == "date":
            return T.DateType()
        if logical in ("timestamp-micros", "timestamp-millis"):
            return T.TimestampType()
        if logical in ("local-timestamp-micros", "local-timestamp-millis"):
            return T.TimestampNTZType()
        if t == "record":
            return T.StructType([T.StructField(f["name"], _spark_type(f["type"]), True) for f in avro["fields"]])
        if t == "array":
            return T.ArrayType(_spark_type(avro["items"]), True)
        if t == "map":
            return T.MapType(T.StringType(), _spark_type(avro["values"]), True)
        if t in ("enum",):
            return T.StringType()
        if t == "fixed":
            return T.BinaryType()
        return _spark_type(t)
    simple = {"string": T.StringType(), "long": T.LongType(), "int": T.IntegerType(), "double": T.DoubleType(),
              "float": T.FloatType(), "boolean": T.BooleanType(), "bytes": T.BinaryType()}
    if avro not in simple:
        raise SchemaEvolutionError(f"Avro type {avro!r} is not supported")
    return simple[avro]


def from_avro_schema(avro_json: str) -> T.StructType:
    """Spark schema (all nullable) of Hudi's Avro writer schema; meta columns are left out."""
    doc = json.loads(avro_json)
    return T.StructType([T.StructField(f["name"], _spark_type(f["type"]), True)
                         for f in doc["fields"] if f["name"] not in META_COLUMNS])


def with_meta_columns(schema: T.StructType) -> T.StructType:
    return T.StructType([T.StructField(m, T.StringType(), True) for m in META_COLUMNS] +
                        [f for f in schema.fields if f.name not in META_COLUMNS])


# --- Hive --------------------------------------------------------------------------------------

def hive_type(dt: T.DataType) -> str:
    if isinstance(dt, T.TimestampNTZType):
        return "timestamp"
    if isinstance(dt, T.ArrayType):
        return f"array<{hive_type(dt.elementType)}>"
    if isinstance(dt, T.MapType):
        return f"map<{hive_type(dt.keyType)},{hive_type(dt.valueType)}>"
    if isinstance(dt, T.StructType):
        return "struct<" + ",".join(f"{f.name}:{hive_type(f.dataType)}" for f in dt.fields) + ">"
    return dt.simpleString()


def hive_columns(schema: T.StructType) -> list[tuple[str, str]]:
    return [(f.name, hive_type(f.dataType)) for f in schema.fields if f.name not in META_COLUMNS]


# --- evolution ---------------------------------------------------------------------------------

def _widens(src: T.DataType, dst: T.DataType) -> bool:
    return any(isinstance(dst, w) for w in _WIDENINGS.get(type(src), ()))


def _same(a: T.DataType, b: T.DataType) -> bool:
    """Equal up to nullability (table fields are always nullable)."""
    if isinstance(a, T.StructType) and isinstance(b, T.StructType):
        return [f.name for f in a.fields] == [f.name for f in b.fields] and all(
            _same(x.dataType, y.dataType) for x, y in zip(a.fields, b.fields))
    if isinstance(a, T.ArrayType) and isinstance(b, T.ArrayType):
        return _same(a.elementType, b.elementType)
    if isinstance(a, T.MapType) and isinstance(b, T.MapType):
        return _same(a.keyType, b.keyType) and _same(a.valueType, b.valueType)
    if isinstance(a, T.TimestampNTZType) != isinstance(b, T.TimestampNTZType):
        return False
    return type(a) is type(b) and a.simpleString() == b.simpleString()


def evolve(table: T.StructType | None, incoming: T.StructType) -> T.StructType:
    """The table schema after writing `incoming` (all fields nullable). Columns the batch lacks stay
    (written as null); new columns are appended; types may widen. SchemaEvolutionError otherwise."""
    incoming = T.StructType([f for f in incoming.fields if f.name not in META_COLUMNS])
    if table is None:
        return T.StructType([T.StructField(f.name, f.dataType, True) for f in incoming.fields])
    by_name = {f.name.lower(): f for f in incoming.fields}
    out, problems = [], []
    for f in table.fields:
        new = by_name.pop(f.name.lower(), None)
        if new is None or _same(f.dataType, new.dataType) or _widens(new.dataType, f.dataType):
            out.append(T.StructField(f.name, f.dataType, True))
        elif _widens(f.dataType, new.dataType):
            out.append(T.StructField(f.name, new.dataType, True))
        else:
            problems.append(f"column {f.name}: {f.dataType.simpleString()} -> {new.dataType.simpleString()}")
    if problems:
        raise SchemaEvolutionError("incompatible schema change (only added columns and widened types are "
                                   "allowed): " + "; ".join(problems))
    names = {f.name.lower() for f in incoming.fields}
    out.extend(T.StructField(f.name, f.dataType, True) for f in incoming.fields if f.name.lower() in by_name
               and f.name.lower() in names)
    return T.StructType(out)
