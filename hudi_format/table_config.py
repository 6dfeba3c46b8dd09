"""A Hudi table's config (`.hoodie/hoodie.properties`) and the HMS view hive-sync would give it."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol
from urllib.parse import quote, unquote

from hudi_format.config_keys import (
    ARCHIVELOG_FOLDER,
    CREATE_SCHEMA,
    DATABASE_NAME,
    DROP_PARTITION_COLUMNS,
    HIVE_STYLE_PARTITIONING,
    KEYGENERATOR_CLASS,
    LOG_COMPACT_ENABLE,
    LOG_COMPACT_INLINE,
    ORDERING_FIELDS,
    PARTITION_FIELDS,
    PAYLOAD_CLASS,
    PRECOMBINE_FIELD,
    RECORD_MERGE_MODE,
    RECORD_MERGE_STRATEGY_ID,
    RECORDKEY_FIELDS,
    TABLE_NAME,
    TABLE_TYPE,
    TABLE_VERSION,
    TIMELINE_LAYOUT_VERSION,
    URL_ENCODE_PARTITIONING,
    default_of,
)
from hudi_format.errors import InvalidMetadata

COW, MOR = "COPY_ON_WRITE", "MERGE_ON_READ"
META_COLUMNS = ["_hoodie_commit_time", "_hoodie_commit_seqno", "_hoodie_record_key",
                "_hoodie_partition_path", "_hoodie_file_name"]
INPUT_FORMAT = {COW: "org.apache.hudi.hadoop.HoodieParquetInputFormat",
                MOR: "org.apache.hudi.hadoop.realtime.HoodieParquetRealtimeInputFormat"}
OUTPUT_FORMAT = "org.apache.hadoop.hive.ql.io.parquet.MapredParquetOutputFormat"
SERDE = "org.apache.hadoop.hive.ql.io.parquet.serde.ParquetHiveSerDe"


def log_compaction_enabled(properties: Mapping[str, str] | None) -> bool:
    """Whether a (merge-on-read) table's config turns log compaction on: `hoodie.log.compaction.inline`
    or `hoodie.log.compaction.enable` true. Hudi's data table writers schedule and run log
    compactions by the first alone, its metadata table's writer by the second alone; either turns it
    on here, and neither one's false (both default false) turns the other off."""
    props = properties or {}
    return any((props.get(k) or "").strip().lower() == "true" for k in (LOG_COMPACT_INLINE, LOG_COMPACT_ENABLE))


# Record merge modes of tables of version 8 and 9, and what Hudi 1.2's writer puts beside each in a
# version-8 table: its merger's id and payload class (in version 9 the mode alone)
EVENT_TIME_ORDERING, COMMIT_TIME_ORDERING, CUSTOM = "EVENT_TIME_ORDERING", "COMMIT_TIME_ORDERING", "CUSTOM"
MERGE_STRATEGY_IDS = {EVENT_TIME_ORDERING: "eeb8d96f-b1e4-49fd-bbf8-28ac514178e5",
                      COMMIT_TIME_ORDERING: "ce9acb64-bde0-424c-9b91-f6ebba25356d",
                      CUSTOM: "00000000-0000-0000-0000-000000000000"}  # CUSTOM: the payload's merging
MERGE_PAYLOADS = {EVENT_TIME_ORDERING: "org.apache.hudi.common.model.DefaultHoodieRecordPayload",
                  COMMIT_TIME_ORDERING: "org.apache.hudi.common.model.OverwriteWithLatestAvroPayload"}


def record_merge_properties(table_version: int, ordering_field: str | None,
                            payload_class: str | None = None) -> dict[str, str]:
    """What Hudi 1.2's writer puts in a new table's `hoodie.properties` about merging records:
    the mode of the payload class it is given (DefaultHoodieRecordPayload: EVENT_TIME_ORDERING,
    OverwriteWithLatestAvroPayload: COMMIT_TIME_ORDERING, another: CUSTOM in version 8, in 9
    nothing here), else EVENT_TIME_ORDERING with an ordering (precombine) field and
    COMMIT_TIME_ORDERING without; the ordering field as `hoodie.table.ordering.fields`; in version
    8 also the mode's merger id and payload class. Nothing for version 6."""
    if table_version < 8:
        return {}
    if payload_class:
        by_payload = {v: k for k, v in MERGE_PAYLOADS.items()}
        mode = by_payload.get(payload_class, CUSTOM)
        if mode == CUSTOM and table_version != 8:
            return {}
    else:
        mode = EVENT_TIME_ORDERING if ordering_field else COMMIT_TIME_ORDERING
    props = {RECORD_MERGE_MODE: mode}
    if ordering_field:
        props[ORDERING_FIELDS] = ordering_field
    if table_version == 8:
        props[RECORD_MERGE_STRATEGY_ID] = MERGE_STRATEGY_IDS[mode]
        props[PAYLOAD_CLASS] = payload_class or MERGE_PAYLOADS[mode]
    return props


@dataclass
class HudiTableConfig:
    db_name: str
    table_name: str
    table_type: str  # COPY_ON_WRITE | MERGE_ON_READ
    record_key_fields: list[str]
    partition_fields: list[str]
    precombine_field: str | None = None
    key_generator: str | None = None
    hive_style_partitioning: bool = False
    url_encode_partitioning: bool = False
    table_version: int = 6
    base_path: str | None = None
    avro_schema: str | None = None
    properties: dict[str, str] = field(default_factory=dict)

    def validate(self) -> None:
        if self.table_type not in (COW, MOR):
            raise InvalidMetadata(f"Hudi table type must be {COW} or {MOR}, not {self.table_type!r}")
        if self.table_version not in (6, 8, 9):
            raise InvalidMetadata(f"Unsupported Hudi table version {self.table_version} (6, 8 or 9)")
        if not self.record_key_fields:
            raise InvalidMetadata("A Hudi table needs record key fields")

    # hoodie.properties ---------------------------------------------------------------------------

    def hoodie_properties(self) -> dict[str, str]:
        props = dict(self.properties)
        props.update({
            TABLE_NAME: self.table_name,
            DATABASE_NAME: self.db_name,
            TABLE_TYPE: self.table_type,
            TABLE_VERSION: str(self.table_version),
            RECORDKEY_FIELDS: ",".join(self.record_key_fields),
            PARTITION_FIELDS: ",".join(self.partition_fields),
            HIVE_STYLE_PARTITIONING: str(self.hive_style_partitioning).lower(),
            URL_ENCODE_PARTITIONING: str(self.url_encode_partitioning).lower(),
        })
        props.setdefault(TIMELINE_LAYOUT_VERSION, "1" if self.table_version == 6 else "2")
        props.setdefault(ARCHIVELOG_FOLDER, default_of(ARCHIVELOG_FOLDER))
        props.setdefault(DROP_PARTITION_COLUMNS, default_of(DROP_PARTITION_COLUMNS))
        if self.precombine_field:
            props[PRECOMBINE_FIELD] = self.precombine_field
        if self.key_generator:
            props[KEYGENERATOR_CLASS] = self.key_generator
        if self.avro_schema:
            props[CREATE_SCHEMA] = self.avro_schema
        return props

    def fill_record_merge(self) -> dict[str, str]:
        """A table of version 8 or 9 without a record merge mode gets the keys Hudi 1.2 would have
        written (record_merge_properties, by its payload class, else its precombine or ordering
        field: Hudi 1.2's reader rejects a payload class and merger id that disagree), each only
        where the table has no value; a table with a mode keeps its config. The keys added."""
        if self.table_version < 8 or self.properties.get(RECORD_MERGE_MODE):
            return {}
        ordering = self.precombine_field or self.properties.get(ORDERING_FIELDS)
        wanted = record_merge_properties(self.table_version, ordering, self.properties.get(PAYLOAD_CLASS))
        added = {k: v for k, v in wanted.items() if not self.properties.get(k)}
        self.properties.update(added)
        return added

    def to_json(self) -> str:
        return json.dumps(self.hoodie_properties(), sort_keys=True)

    @classmethod
    def from_properties(cls, db: str, table: str, props: dict[str, str], base_path: str | None) -> HudiTableConfig:
        def flag(key: str) -> bool:
            return props.get(key, default_of(key)).lower() == "true"

        def fields(key: str) -> list[str]:
            return [f for f in props.get(key, "").split(",") if f]

        known = {TABLE_NAME, DATABASE_NAME, TABLE_TYPE, TABLE_VERSION, RECORDKEY_FIELDS, PARTITION_FIELDS,
                 HIVE_STYLE_PARTITIONING, URL_ENCODE_PARTITIONING, PRECOMBINE_FIELD, KEYGENERATOR_CLASS,
                 CREATE_SCHEMA}
        return cls(
            db_name=db, table_name=table, table_type=props.get(TABLE_TYPE, default_of(TABLE_TYPE)),
            record_key_fields=fields(RECORDKEY_FIELDS),
            partition_fields=fields(PARTITION_FIELDS),
            precombine_field=props.get(PRECOMBINE_FIELD),
            key_generator=props.get(KEYGENERATOR_CLASS),
            hive_style_partitioning=flag(HIVE_STYLE_PARTITIONING),
            url_encode_partitioning=flag(URL_ENCODE_PARTITIONING),
            table_version=int(props.get(TABLE_VERSION, default_of(TABLE_VERSION))),
            base_path=base_path, avro_schema=props.get(CREATE_SCHEMA),
            properties={k: v for k, v in props.items() if k not in known},
        )

    # partition paths <-> HMS partition values ------------------------------------------------

    def values_of(self, partition_path: str) -> list[str]:
        """HMS partition values of a Hudi partition path."""
        n = len(self.partition_fields)
        if n == 0:
            return []
        parts = partition_path.split("/") if partition_path else [""]
        if len(parts) != n:
            if n == 1:  # e.g. a date path 2024/01/01 for one field
                parts = [partition_path]
            else:
                raise ValueError(f"partition path {partition_path!r} does not have {n} levels "
                                 f"for fields {self.partition_fields}")
        values = []
        for part in parts:  # one per partition field
            if self.hive_style_partitioning and "=" in part:
                key, _, part = part.partition("=")
            values.append(unquote(part) if self.url_encode_partitioning else part)
        return values

    def path_of(self, values: list[str]) -> str:
        """The Hudi partition path of HMS partition values (inverse of values_of)."""
        parts = []
        for name, value in zip(self.partition_fields, values):
            v = quote(value, safe="") if self.url_encode_partitioning else value
            parts.append(f"{name}={v}" if self.hive_style_partitioning else v)
        return "/".join(parts)


def avro_to_hive_type(schema: Any) -> str:
    """Hive type of an Avro schema node (a JSON string, list or object; as hive-sync maps them)."""
    if isinstance(schema, list):  # union: the non-null branch
        branches = [s for s in schema if s != "null"]
        return avro_to_hive_type(branches[0]) if len(branches) == 1 else "string"
    if isinstance(schema, dict):
        t = schema.get("type")
        logical = schema.get("logicalType")
        if logical == "decimal":
            return f"decimal({schema.get('precision', 10)},{schema.get('scale', 0)})"
        if logical == "date":
            return "date"
        if logical in ("timestamp-millis", "timestamp-micros"):
            return "timestamp"
        if t == "record":
            inner = ",".join(f"{f['name']}:{avro_to_hive_type(f['type'])}" for f in schema["fields"])
            return f"struct<{inner}>"
        if t == "array":
            return f"array<{avro_to_hive_type(schema['items'])}>"
        if t == "map":
            return f"map<string,{avro_to_hive_type(schema['values'])}>"
        if t == "enum":
            return "string"
        if t == "fixed":
            return "binary"
        return avro_to_hive_type(t)
    return {"string": "string", "int": "int", "long": "bigint", "float": "float", "double": "double",
            "boolean": "boolean", "bytes": "binary", "null": "string"}.get(schema, "string")


def read_properties(text: str) -> dict[str, str]:
    """A Java properties file (as hoodie.properties is written): `key=value`, `#` comments, `\\` escapes."""
    out = {}
    for raw in text.splitlines():
        line = raw.strip()
        if not line or line[0] in "#!":
            continue
        key: list[str] = []
        value: list[str] = []
        i, esc = 0, False
        target = key
        while i < len(line):
            ch = line[i]
            if esc:
                target.append({"t": "\t", "n": "\n", "r": "\r"}.get(ch, ch))
                esc = False
            elif ch == "\\":
                esc = True
            elif target is key and ch in "=:":
                target = value
                while i + 1 < len(line) and line[i + 1] == " ":
                    i += 1
            else:
                target.append(ch)
            i += 1
        out["".join(key).strip()] = "".join(value)
    return out


class Column(Protocol):
    """A table column (an HMS FieldSchema)."""

    name: str
    type: str


SparkType = str | dict[str, Any]  # Spark's JSON data type: a name, or an array, map or struct object

_SPARK_PRIMITIVES = {"string": "string", "varchar": "string", "char": "string", "int": "integer",
                     "integer": "integer", "bigint": "long", "smallint": "short", "tinyint": "byte",
                     "float": "float", "double": "double", "boolean": "boolean", "binary": "binary",
                     "date": "date", "timestamp": "timestamp"}


def hive_to_spark_type(hive_type: str) -> SparkType:
    """Spark's JSON data type for a Hive type string (what `spark.sql.sources.schema` holds)."""
    t, rest = _parse_hive_type(hive_type.replace(" ", ""), 0)
    if rest != len(hive_type.replace(" ", "")):
        raise ValueError(f"cannot parse Hive type {hive_type!r}")
    return t


def _parse_hive_type(s: str, i: int) -> tuple[SparkType, int]:
    j = i
    while j < len(s) and (s[j].isalnum() or s[j] == "_"):
        j += 1
    name = s[i:j].lower()
    if name == "array":
        elem, j = _parse_hive_type(s, j + 1)
        return {"type": "array", "elementType": elem, "containsNull": True}, j + 1
    if name == "map":
        key, j = _parse_hive_type(s, j + 1)
        value, j = _parse_hive_type(s, j + 1)
        return {"type": "map", "keyType": key, "valueType": value, "valueContainsNull": True}, j + 1
    if name == "struct":
        fields: list[dict[str, Any]] = []
        j += 1
        while s[j] != ">":
            colon = s.index(":", j)
            fname = s[j:colon]
            ftype, j = _parse_hive_type(s, colon + 1)
            fields.append({"name": fname, "type": ftype, "nullable": True, "metadata": {}})
            if s[j] == ",":
                j += 1
        return {"type": "struct", "fields": fields}, j + 1
    if j < len(s) and s[j] == "(":
        close = s.index(")", j)
        args = s[j + 1:close]
        if name == "decimal":
            return f"decimal({args})", close + 1
        return _SPARK_PRIMITIVES.get(name, "string"), close + 1
    if name == "decimal":
        return "decimal(10,0)", j
    return _SPARK_PRIMITIVES.get(name, "string"), j


#: Field metadata key on a Hudi data source table's first column: the table's "db.name". Spark
#: hands a Python data source the catalog schema but not the table's name or properties; the
#: pipeline's `hudi` data source (pipeline/datasource.py) finds its table by it.
SPARK_TABLE_METADATA = "hudi.metastore.table"
#: ... and its base path next to it: a table renamed since is told from a new one of the old name
SPARK_TABLE_PATH_METADATA = "hudi.metastore.base_path"


def spark_schema_properties(data_cols: Sequence[Column], partition_keys: Sequence[Column],
                            provider: str = "hudi", table: str | None = None,
                            base_path: str | None = None) -> dict[str, str]:
    """Table properties Spark reads a data source table's schema from (4000-character parts);
    `table` ("db.name") and `base_path` are kept in the first field's metadata."""
    fields = [{"name": c.name, "type": hive_to_spark_type(c.type), "nullable": True, "metadata": {}}
              for c in list(data_cols) + list(partition_keys)]
    if table and fields:
        fields[0]["metadata"] = {SPARK_TABLE_METADATA: table, **({SPARK_TABLE_PATH_METADATA: base_path}
                                                                 if base_path else {})}
    text = json.dumps({"type": "struct", "fields": fields}, separators=(",", ":"))
    parts = [text[i:i + 4000] for i in range(0, len(text), 4000)] or [""]
    props = {"spark.sql.sources.provider": provider, "spark.sql.sources.schema.numParts": str(len(parts)),
             "spark.sql.partitionProvider": "catalog"}
    props.update({f"spark.sql.sources.schema.part.{i}": p for i, p in enumerate(parts)})
    if partition_keys:
        props["spark.sql.sources.schema.numPartCols"] = str(len(partition_keys))
        props.update({f"spark.sql.sources.schema.partCol.{i}": k.name for i, k in enumerate(partition_keys)})
    return props
