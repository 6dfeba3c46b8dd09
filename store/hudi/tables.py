"""Hudi tables of the metastore (RFC-36 `hudi_table`): registering a table, adopting an HMS table
that carries Hudi properties, and the table lookup every Hudi service starts from.

A registered table has an HMS table too, shaped as Hudi's hive-sync creates it (`hive_sync_table`).
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from sqlalchemy import ColumnElement, Connection, Select, bindparam, select

from hudi_format.config_keys import (
    HIVE_SYNC_AS_DATASOURCE,
    PARTITION_FIELDS,
    PRECOMBINE_FIELD,
    PREFIX,
    QUERY_AS_RO_TABLE,
    RECORDKEY_FIELDS,
    STORAGE_PATH,
    STORAGE_STRATEGY_CLASS,
    TABLE_TYPE,
    TIMELINE_SOURCE,
    WRITE_RECORDKEY_FIELD,
    default_of,
)
from hudi_format.storage_strategy import HIVE, OBJECT_STORE, strategy_name
from hudi_format.table_config import (
    COW,
    INPUT_FORMAT,
    META_COLUMNS,
    OUTPUT_FORMAT,
    SERDE,
    HudiTableConfig,
    avro_to_hive_type,
    spark_schema_properties,
)
from store.db import schema as S
from store.db.database import Store
from store.errors import AlreadyExists, InvalidObject, NoSuchObject
from store.hms.catalog import TableService, database_is
from store.hms.common import check_location, split_db_name
from thrift_idl.hive_metastore.ttypes import FieldSchema, SerDeInfo, StorageDescriptor, Table


@dataclass
class HudiTableRef:
    tbl_id: int
    db_name: str
    name: str
    config: HudiTableConfig
    base_path: str  # the config's, never empty for a registered table


def table_names(db: str, tbl: str) -> dict[str, str]:
    """The bind parameters of HudiTables.table_statement for db.tbl."""
    cat, name = split_db_name(db)
    return {"cat_name": cat, "db_name": name, "tbl_name": (tbl or "").lower()}


def ref_of(row: Any) -> HudiTableRef:
    """The HudiTableRef of a row of HudiTables.table_statement (a Row, or a named tuple of it)."""
    cfg = HudiTableConfig.from_properties(row.db_name, row.name, json.loads(row.properties), row.base_path)
    return HudiTableRef(row.tbl_id, row.db_name, row.name, cfg, row.base_path)


def no_such_table(db: str, tbl: str) -> NoSuchObject:
    return NoSuchObject(f"Hudi table {(db or '').lower()}.{(tbl or '').lower()} not found")


class HudiTables:
    def __init__(self, store: Store, tables: TableService):
        self.store = store
        self.tables = tables

    def table_ref(self, conn: Connection, db: str, tbl: str, lock: bool = False) -> HudiTableRef:
        """The Hudi table db.tbl; `lock` serializes writers of the table (FOR UPDATE of its row)."""
        q = self.table_statement()
        if lock and self.store.backend != "sqlite":
            q = q.with_for_update(of=S.hudi_table)
        row = conn.execute(q, table_names(db, tbl)).first()
        if row is None:
            raise no_such_table(db, tbl)
        ref = ref_of(row)
        if lock:
            self.store.cluster_lock(conn, f"hudi_table:{ref.tbl_id}")
        return ref

    @staticmethod
    def table_statement(extra: Sequence[ColumnElement[Any]] = ()) -> Select[Any]:
        """The statement of table_ref, with `extra` (columns or scalar subqueries on `tbl`)
        labelled `extra_0`, `extra_1`, ...; its bind parameters are `table_names`."""
        return select(S.tbl.c.tbl_id, S.tbl.c.name, S.db.c.name.label("db_name"), S.hudi_table,
                      *[c.label(f"extra_{i}") for i, c in enumerate(extra)]).select_from(
            S.tbl.join(S.db, S.tbl.c.db_id == S.db.c.db_id).join(S.hudi_table, S.hudi_table.c.tbl_id == S.tbl.c.tbl_id)
        ).where(S.db.c.cat_name == bindparam("cat_name"), S.db.c.name == bindparam("db_name"),
                S.tbl.c.name == bindparam("tbl_name"))

    def get_table_config(self, db: str, tbl: str) -> HudiTableConfig:
        with self.store.read() as conn:
            return self.table_ref(conn, db, tbl).config

    def register_table(self, cfg: HudiTableConfig, columns: list[FieldSchema] | None = None,
                       owner: str | None = None) -> None:
        """Make db.tbl a Hudi table: creates its HMS table (as hive-sync would, owned by `owner`,
        else `hudi`) when absent."""
        cfg.db_name, cfg.table_name = (cfg.db_name or "").lower(), (cfg.table_name or "").lower()
        cfg.validate()
        check_location(cfg.base_path or None, "Hudi table base path", "hudi_table", "base_path")
        _check_storage_strategy(cfg)
        try:
            existing = self.tables.get_table(cfg.db_name, cfg.table_name)
        except NoSuchObject:
            existing = None
        created = False
        if existing is None:
            self.tables.create_table(hive_sync_table(cfg, columns, owner))
            created = True
            existing = self.tables.get_table(cfg.db_name, cfg.table_name)
        if not cfg.base_path:
            cfg.base_path = existing.sd.location
        try:
            self.store.run_write(self._insert, cfg)
        except Exception:
            if created:  # registration is all or nothing
                self.tables.drop_table(cfg.db_name, cfg.table_name, False)
            raise

    def insert_in(self, conn: Connection, cfg: HudiTableConfig) -> None:
        """Make db.tbl, whose HMS table exists, a Hudi table inside the caller's transaction."""
        cfg.db_name, cfg.table_name = (cfg.db_name or "").lower(), (cfg.table_name or "").lower()
        cfg.validate()
        check_location(cfg.base_path or None, "Hudi table base path", "hudi_table", "base_path")
        _check_storage_strategy(cfg)
        self._insert(conn, cfg)

    def _insert(self, conn: Connection, cfg: HudiTableConfig) -> None:
        row = conn.execute(select(S.tbl.c.tbl_id, S.tbl.c.db_id, S.tbl.c.location, S.db.c.cat_name,
                                  S.db.c.name.label("db_name"))
                           .select_from(S.tbl.join(S.db, S.db.c.db_id == S.tbl.c.db_id))
                           .where(database_is(cfg.db_name), S.tbl.c.name == cfg.table_name)).one()
        tbl_id = row.tbl_id
        if conn.execute(select(S.hudi_table.c.tbl_id).where(S.hudi_table.c.tbl_id == tbl_id)).first() is not None:
            raise AlreadyExists(f"Hudi table {cfg.db_name}.{cfg.table_name} already exists")
        self.tables.claim_hudi_base_path(conn, row, cfg.table_name, cfg.base_path)
        if not cfg.properties.get(TIMELINE_SOURCE):  # the mirror writes its hoodie.properties: Hudi 1.2 reads them
            cfg.fill_record_merge()
        conn.execute(S.hudi_table.insert().values(
            tbl_id=tbl_id, table_type=cfg.table_type, table_version=cfg.table_version,
            base_path=cfg.base_path, properties=cfg.to_json()))

    def adopt_hms_table(self, table: Table) -> bool:
        """A table created over plain HMS with `spark.sql.sources.provider=hudi` and `hoodie.*`
        properties (Hudi's Spark catalog, hive-sync) becomes Hudi-managed; True when it did."""
        hoodie = _hoodie_properties(table)
        if hoodie is None:
            return False
        cfg = HudiTableConfig.from_properties(table.dbName, table.tableName, hoodie,
                                              table.sd.location if table.sd else None)
        cfg.validate()
        self.register_table(cfg)
        return True


def _check_storage_strategy(cfg: HudiTableConfig) -> None:
    """The RFC-60 options a table config may carry: a built-in strategy or an import path (never
    imported here), `object-store` with its storage path."""
    props = cfg.properties or {}
    name = strategy_name(props.get(STORAGE_STRATEGY_CLASS))
    if name.lower() == OBJECT_STORE and not (props.get(STORAGE_PATH) or "").strip():
        raise InvalidObject(f"{STORAGE_STRATEGY_CLASS}={OBJECT_STORE} needs {STORAGE_PATH}")
    if name.lower() not in (HIVE, OBJECT_STORE) and not _IMPORT_PATH.fullmatch(name):
        raise InvalidObject(f"{STORAGE_STRATEGY_CLASS}={name!r}: not {HIVE!r}, {OBJECT_STORE!r} or an import path")


_IMPORT_PATH = re.compile(r"[A-Za-z_][\w]*(\.[A-Za-z_][\w]*)+")


def _hoodie_properties(table: Table) -> dict[str, str] | None:
    """The hoodie.* properties of an HMS table Hudi's Spark catalog created, completed from the
    Spark table properties (`type`, `primaryKey`, `preCombineField`); None for other tables."""
    params = {k: v for k, v in (table.parameters or {}).items() if v is not None}
    if params.get("spark.sql.sources.provider", "").lower() != "hudi" or \
            not any(k.startswith(PREFIX) for k in params):
        return None
    hoodie = {k: v for k, v in params.items() if k.startswith(PREFIX)}
    kind = (hoodie.get(TABLE_TYPE) or params.get("type") or "cow").upper()
    hoodie[TABLE_TYPE] = {"COW": COW, "MOR": "MERGE_ON_READ"}.get(kind, kind)
    keys = hoodie.get(RECORDKEY_FIELDS) or hoodie.get(WRITE_RECORDKEY_FIELD) or params.get("primaryKey") or ""
    hoodie[RECORDKEY_FIELDS] = keys
    hoodie.setdefault(PARTITION_FIELDS, ",".join(k.name for k in table.partitionKeys or []))
    if PRECOMBINE_FIELD not in hoodie and params.get("preCombineField"):
        hoodie[PRECOMBINE_FIELD] = params["preCombineField"]
    return hoodie


def _columns(cfg: HudiTableConfig, columns: list[FieldSchema] | None) -> list[FieldSchema]:
    """The given columns, else those of the table's Avro schema."""
    if columns is None and cfg.avro_schema:
        try:
            fields = json.loads(cfg.avro_schema)["fields"]
        except (ValueError, KeyError, TypeError) as exc:
            raise InvalidObject(f"avroSchema is not an Avro record schema: {exc}") from exc
        columns = [FieldSchema(f["name"], avro_to_hive_type(f["type"]), f.get("doc")) for f in fields]
    return list(columns or [])


def hive_sync_table(cfg: HudiTableConfig, columns: list[FieldSchema] | None, owner: str | None = None) -> Table:
    """The HMS table hive-sync would create for a Hudi table."""
    columns = _columns(cfg, columns)
    by_name = {c.name.lower(): c for c in columns}
    part_keys = [FieldSchema(f.lower(), by_name[f.lower()].type if f.lower() in by_name else "string", None)
                 for f in cfg.partition_fields]
    part_names = {k.name for k in part_keys}
    data_cols = [FieldSchema(m, "string", None) for m in META_COLUMNS] + [
        c for c in columns if c.name.lower() not in part_names and c.name not in META_COLUMNS]
    params = {"EXTERNAL": "TRUE", TABLE_TYPE: cfg.table_type,
              "type": "cow" if cfg.table_type == COW else "mor", "primaryKey": ",".join(cfg.record_key_fields)}
    # hive-sync's sync_as_datasource (default true): Spark then needs the Hudi bundle for the table;
    # false registers a Hive table with Hudi's input formats, which any Spark can list and describe
    if cfg.properties.get(HIVE_SYNC_AS_DATASOURCE, default_of(HIVE_SYNC_AS_DATASOURCE)).lower() != "false":
        try:
            params.update(spark_schema_properties(data_cols, part_keys, table=f"{cfg.db_name}.{cfg.table_name}",
                                                  base_path=cfg.base_path))
        except (ValueError, IndexError):
            params["spark.sql.sources.provider"] = "hudi"
    if cfg.precombine_field:
        params["preCombineField"] = cfg.precombine_field
    # hive-sync's serde properties: the base path, and whether Spark's Hudi reader serves the read-
    # optimized view (false: this one table is the snapshot view, hive-sync's `_rt` for MOR)
    serde_params = {"serialization.format": "1", QUERY_AS_RO_TABLE: "false"}
    if cfg.base_path:
        serde_params["path"] = cfg.base_path
    sd = StorageDescriptor(
        cols=data_cols, location=cfg.base_path, inputFormat=INPUT_FORMAT[cfg.table_type],
        outputFormat=OUTPUT_FORMAT, compressed=False, numBuckets=-1,
        serdeInfo=SerDeInfo(serializationLib=SERDE, parameters=serde_params),
        bucketCols=[], sortCols=[], parameters={})
    return Table(tableName=cfg.table_name, dbName=cfg.db_name, sd=sd, partitionKeys=part_keys,
                 parameters=params, tableType="EXTERNAL_TABLE", owner=owner or "hudi")
