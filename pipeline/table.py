"""The table a job writes or reads: its Hudi config from the metastore, created on first write."""

from __future__ import annotations

import json
from dataclasses import dataclass, field

from client import AlreadyExists, Column, Database, HudiCatalog, NotFound
from hudi_format.config_keys import (
    BASE_FILE_FORMAT,
    CLEAN_AUTOMATIC,
    CLUSTERING_SORT_COLUMNS,
    COMPACT_INLINE,
    COMPLEX_KEYGEN_NEW_ENCODING,
    HIVE_SYNC_AS_DATASOURCE,
    INDEX_TYPE,
    ORDERING_FIELDS,
    PAYLOAD_CLASS,
    POPULATE_META_FIELDS,
    RECORD_INDEX_UPDATE_PARTITION_PATH,
    STORAGE_PATH,
    STORAGE_STRATEGY_CLASS,
    TABLE_VERSION,
    default_of,
)
from hudi_format.key_generator import complex_generator, field_prefixed
from hudi_format.storage_strategy import HIVE, load_strategy, strategy_name
from hudi_format.table_config import COW, MOR, HudiTableConfig

from . import keygen
from .errors import HudiWriteError
from .schema import from_avro_schema, hive_columns, to_avro_schema
from .storage import FileLayout

# merge-on-read: the record with the greater precombine value wins also between a base file and its logs
DEFAULT_PAYLOAD = "org.apache.hudi.common.model.DefaultHoodieRecordPayload"


def split_name(table: str) -> tuple[str, str]:
    parts = table.split(".")
    if len(parts) != 2 or not all(parts):
        raise ValueError(f"table must be 'database.table', not {table!r}")
    return parts[0].lower(), parts[1].lower()


def as_list(value) -> list[str]:
    if value is None:
        return []
    if isinstance(value, str):
        return [v.strip() for v in value.split(",") if v.strip()]
    return [str(v) for v in value]


@dataclass
class TableInfo:
    db: str
    name: str
    base_path: str
    record_key_fields: list[str]
    partition_fields: list[str]
    precombine_field: str | None
    hive_style: bool
    url_encode: bool
    avro_schema: str | None
    record_index: bool = False  # hoodie.index.type=RECORD_INDEX: the metastore keeps its keys
    update_partition_path: bool = True  # hoodie.record.index.update.partition.path
    properties: dict[str, str] = field(default_factory=dict)  # hoodie.* as the table config has them
    storage_strategy: str = HIVE  # hoodie.storage.strategy.class (RFC-60)
    storage_path: str | None = None  # hoodie.storage.path
    table_type: str = COW  # COPY_ON_WRITE or MERGE_ON_READ
    key_generator: str | None = None  # hoodie.table.keygenerator.class

    @property
    def field_prefixed_keys(self) -> bool:
        """Record keys are `field:value` (`id:5`), not the value alone (hudi_format/key_generator.py)."""
        return field_prefixed(self.record_key_fields, self.key_generator, self.properties)

    @property
    def merge_on_read(self) -> bool:
        return self.table_type == MOR

    def layout(self) -> FileLayout:
        """Where the data files are (loads a custom strategy's class)."""
        return FileLayout(load_strategy(self.storage_strategy, self.base_path, self.storage_path, self.name))

    @classmethod
    def of(cls, cfg: HudiTableConfig) -> TableInfo:
        props = cfg.properties or {}
        return cls(cfg.db_name, cfg.table_name, cfg.base_path or "", list(cfg.record_key_fields),
                   list(cfg.partition_fields), _ordering_field(cfg), bool(cfg.hive_style_partitioning),
                   bool(cfg.url_encode_partitioning), cfg.avro_schema or None,
                   record_index=(props.get(INDEX_TYPE) or "").upper() == "RECORD_INDEX",
                   update_partition_path=(props.get(RECORD_INDEX_UPDATE_PARTITION_PATH)
                                          or default_of(RECORD_INDEX_UPDATE_PARTITION_PATH)).lower() == "true",
                   properties=dict(props),
                   storage_strategy=strategy_name(props.get(STORAGE_STRATEGY_CLASS)),
                   storage_path=props.get(STORAGE_PATH) or None, table_type=cfg.table_type,
                   key_generator=cfg.key_generator)


def load(client: HudiCatalog, db: str, name: str) -> TableInfo:
    return TableInfo.of(client.get_hudi_table(db, name))


def _ensure_database(client: HudiCatalog, db: str) -> Database:
    try:
        return client.get_database(db)
    except NotFound:
        try:
            client.create_database(db, description="created by the Hudi pipeline")
        except AlreadyExists:
            pass
        return client.get_database(db)


def _ordering_field(cfg: HudiTableConfig) -> str | None:
    """The precombine field, or the one ordering field of a table Hudi 1.1+ wrote (it writes
    `hoodie.table.ordering.fields` alone); several ordering fields are refused, not half-used."""
    if cfg.precombine_field:
        return cfg.precombine_field
    fields = [f for f in (cfg.properties or {}).get(ORDERING_FIELDS, "").split(",") if f.strip()]
    if len(fields) > 1:
        raise HudiWriteError(f"{cfg.db_name}.{cfg.table_name} orders records by several fields "
                             f"({ORDERING_FIELDS}={','.join(fields)}): the pipeline merges by one")
    return fields[0].strip() if fields else None


def open_for_write(client: HudiCatalog, db: str, name: str, schema, *, record_key, precombine_field,
                   partition_by, path, cfg) -> tuple[TableInfo, bool]:
    """(table, created): the existing Hudi table (checked against the job's keys), or a new one."""
    keys, parts = as_list(record_key), as_list(partition_by)
    try:
        info = load(client, db, name)
    except NotFound:
        info = None
    if info is None:
        if not keys:
            raise ValueError(f"{db}.{name} does not exist: record_key is needed to create it")
        database = _ensure_database(client, db)
        base = path or ((database.location or "").rstrip("/") + "/" + name)
        props = {HIVE_SYNC_AS_DATASOURCE: str(cfg.sync_as_datasource).lower(),
                 POPULATE_META_FIELDS: "true", BASE_FILE_FORMAT: "PARQUET"}
        props.update(cfg.table_properties)
        props.update(_storage_props(cfg, base, name))
        props[INDEX_TYPE] = cfg.index_type
        props.setdefault(CLEAN_AUTOMATIC, default_of(CLEAN_AUTOMATIC))  # the server cleans the table (Hudi's default)
        version = props.pop(TABLE_VERSION, default_of(TABLE_VERSION))  # hoodie.table.version: 6, 8 or 9
        if not str(version).isdigit():
            raise ValueError(f"{TABLE_VERSION} must be 6, 8 or 9, not {version!r}")
        if cfg.index_type == "RECORD_INDEX":
            props[RECORD_INDEX_UPDATE_PARTITION_PATH] = str(cfg.update_partition_path is not False).lower()
        table_type = cfg.table_type or COW
        if table_type == MOR:  # the server schedules compactions, the pipeline runs them
            if int(version) == 6:  # versions 8 and 9: the server writes Hudi 1.2's record merge keys
                props.setdefault(PAYLOAD_CLASS, DEFAULT_PAYLOAD)
            props.setdefault(COMPACT_INLINE, "true")
        unknown = [c for c in as_list(props.get(CLUSTERING_SORT_COLUMNS)) if c not in schema.fieldNames()]
        if unknown:
            raise ValueError(f"{CLUSTERING_SORT_COLUMNS}: {', '.join(unknown)} not among the columns written "
                             f"({', '.join(schema.fieldNames())})")
        generator = keygen.key_generator_class(keys, parts)
        if len(keys) == 1 and complex_generator(generator, props):
            # the table's key format, in its config: `id:5` as Hudi 1.x writes (version 9 always)
            plain = props.setdefault(COMPLEX_KEYGEN_NEW_ENCODING, default_of(COMPLEX_KEYGEN_NEW_ENCODING))
            if plain.strip().lower() == "true" and int(version) >= 9:
                raise ValueError(f"{COMPLEX_KEYGEN_NEW_ENCODING}=true: Hudi keys the records of version 9 "
                                 f"tables by `{keys[0]}:<value>` (set it only on versions 6 and 8)")
        config = HudiTableConfig(
            db_name=db, table_name=name, table_type=table_type, record_key_fields=keys,
            partition_fields=parts, precombine_field=precombine_field,
            key_generator=generator, hive_style_partitioning=cfg.hive_style,
            url_encode_partitioning=cfg.url_encode, table_version=int(version), base_path=base,
            avro_schema=to_avro_schema(schema, name), properties=props)
        try:
            client.register_hudi_table(config, hive_columns(schema))
            created = True
        except AlreadyExists:  # a concurrent first writer won
            created = False
        return load(client, db, name), created
    problems = []
    if keys and [k.lower() for k in keys] != [k.lower() for k in info.record_key_fields]:
        problems.append(f"record key {keys} != table's {info.record_key_fields}")
    if partition_by is not None and [p.lower() for p in parts] != [p.lower() for p in info.partition_fields]:
        problems.append(f"partition fields {parts} != table's {info.partition_fields}")
    if precombine_field and info.precombine_field and precombine_field != info.precombine_field:
        problems.append(f"precombine field {precombine_field!r} != table's {info.precombine_field!r}")
    if path and path.rstrip("/") != info.base_path.rstrip("/"):
        problems.append(f"path {path!r} != table's base path {info.base_path!r}")
    if cfg.table_type and cfg.table_type != info.table_type:
        problems.append(f"table type {cfg.table_type} != table's {info.table_type}")
    problems += _storage_conflicts(cfg, info)
    if problems:
        raise ValueError(f"{db}.{name}: config conflict: " + "; ".join(problems))
    return info, False


def latest_schema(client: HudiCatalog, info: TableInfo, as_of: str | None = None):
    """Spark schema of the latest write commit (at or before `as_of`), else the table's create schema."""
    instants = client.list_instants(info.db, info.name, states=["COMPLETED"],
                                    actions=["commit", "replacecommit", "deltacommit"], max_ts=as_of)
    for inst in reversed(instants):
        # the inflight metadata is small (no write stats) and carries the schema; else the commit's
        for state in ("INFLIGHT", "COMPLETED"):
            try:
                data = client.get_instant_metadata(info.db, info.name, inst.ts, inst.action, state)
                meta = json.loads(data or b"{}")
            except (NotFound, ValueError):
                continue
            avro = (meta.get("extraMetadata") or {}).get("schema") if isinstance(meta, dict) else None
            if avro:
                return from_avro_schema(avro)
    return from_avro_schema(info.avro_schema) if info.avro_schema else None


def sync_hms_schema(client: HudiCatalog, info: TableInfo, schema) -> bool:
    """As hive-sync after a commit: the HMS table's columns follow the table schema (added columns,
    widened types). True when the table was altered."""
    from hudi_format.table_config import spark_schema_properties

    table = client.get_table(info.db, info.name)
    part_names = {k.name.lower() for k in table.partition_keys}
    cols = list(table.columns)
    by_name = {c.name.lower(): c for c in cols}
    changed = False
    for name, hive_t in hive_columns(schema):
        if name.lower() in part_names:
            continue
        have = by_name.get(name.lower())
        if have is None:
            cols.append(Column(name.lower(), hive_t, None))
            changed = True
        elif have.type.lower() != hive_t.lower():
            have.type = hive_t
            changed = True
    if not changed:
        return False
    params = None  # unchanged
    if table.parameters.get("spark.sql.sources.provider"):
        params = {k: v for k, v in table.parameters.items() if not k.startswith("spark.sql.sources.schema")}
        params.update(spark_schema_properties(cols, table.partition_keys, table=f"{info.db}.{info.name}",
                                              base_path=info.base_path))
    client.alter_table_columns(info.db, info.name, cols, params)
    return True


def _storage_props(cfg, base_path: str, name: str) -> dict[str, str]:
    """The storage strategy options of a new table (checked by loading the strategy)."""
    strategy = strategy_name(cfg.storage_strategy)
    load_strategy(strategy, base_path, cfg.storage_path, name)
    out = {STORAGE_STRATEGY_CLASS: strategy}
    if cfg.storage_path:
        out[STORAGE_PATH] = cfg.storage_path.rstrip("/")
    return out


def _storage_conflicts(cfg, info: TableInfo) -> list[str]:
    """An existing table keeps its storage strategy and path (RFC-60: no switching)."""
    out = []
    if cfg.storage_strategy is not None and strategy_name(cfg.storage_strategy) != info.storage_strategy:
        out.append(f"{STORAGE_STRATEGY_CLASS} {cfg.storage_strategy!r} != table's {info.storage_strategy!r} "
                   "(an existing table cannot switch storage strategy)")
    if cfg.storage_path and cfg.storage_path.rstrip("/") != (info.storage_path or "").rstrip("/"):
        out.append(f"{STORAGE_PATH} {cfg.storage_path!r} != table's {info.storage_path!r}")
    return out
