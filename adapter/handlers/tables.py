"""Table calls: create, read, list, alter, drop, truncate, fields and schema."""

from __future__ import annotations

import logging

from adapter.handlers.service import session_setting
from adapter.naming import db_name, db_pattern, env_props
from hudi_format.errors import HudiFormatError
from store.errors import NoSuchObject, StoreError
from store.hms.catalog import TableNamesByFilter, TableService
from store.hms.common import ENCODER_AVAILABLE, is_insert_only
from store.hms.constraints import ConstraintService
from store.hms.partitions import PartitionService, project
from store.hudi.timeline import TimelineCatchUp, TimelineService
from thrift_idl.hive_metastore.ttypes import (
    AlterTableResponse,
    ClientCapability,
    ExtendedTableInfo,
    GetFieldsResponse,
    GetSchemaResponse,
    GetTableResult,
    GetTablesResult,
    InvalidObjectException,
    InvalidOperationException,
    MetaException,
    SQLAllTableConstraints,
    Table,
    TruncateTableResponse,
    UnknownDBException,
    UnknownTableException,
)

TABLE_TYPES = ("MANAGED_TABLE", "EXTERNAL_TABLE", "VIRTUAL_VIEW", "INDEX_TABLE", "MATERIALIZED_VIEW")


log = logging.getLogger(__name__)


ACCESS_READ_WRITE = 8  # Hive's Table.accessType: 1 none, 2 read-only, 4 write-only, 8 read-write

# Hive's HMSHandler.assertClientHasCapability for insert-only tables (Hive 3.1 and 4), word for word
INSERT_ONLY_REFUSED = (
    "Your client does not appear to support insert-only tables. To skip capability checks, please set "
    "metastore.client.capability.check to false. This setting can be set globally, or on the client for the "
    "current metastore session. Note that this may lead to incorrect results, data loss, undefined behavior, "
    "etc. if your client is actually incompatible. You can also specify custom client capabilities via "
    "get_table_req API.")


def _check_capability(capabilities, insert_only: bool) -> None:
    """Hive refuses an insert-only transactional table to a client that does not say it reads them
    (ClientCapability.INSERT_ONLY_TABLES; the old forms send no capabilities): MetaException, unless
    the session turned the check off (setMetaConf metastore.client.capability.check=false)."""
    if not insert_only or (capabilities is not None and ClientCapability.INSERT_ONLY_TABLES in (
            capabilities.values or ())):
        return
    setting = session_setting("metastore.client.capability.check", "hive.metastore.client.capability.check")
    if setting is not None and setting.strip().lower() == "false":
        return
    raise MetaException(INSERT_ONLY_REFUSED)


def _projected(table: Table, fields: list[str]) -> Table:
    """The table with only `fields` read, as Hive 4's ObjectStore answers it: the fields it always
    converts come as a table row without them reads (id and writeId 0, not rewrite-enabled, the type
    MANAGED_TABLE unless a view's text was read)."""
    out = project(table, fields)
    out.id = table.id if "id" in fields else 0
    out.writeId = table.writeId if "writeId" in fields else 0
    out.rewriteEnabled = table.rewriteEnabled if "rewriteEnabled" in fields else False
    if "tableType" not in fields:
        out.tableType = "VIRTUAL_VIEW" if out.viewOriginalText is not None else "MANAGED_TABLE"
    return out


class TableHandler:
    def __init__(self, tables: TableService, partitions: PartitionService, timeline: TimelineService | None = None,
                 constraints: ConstraintService | None = None, table_filter: TableNamesByFilter | None = None,
                 hudi_sync: TimelineCatchUp | None = None):
        self.tables = tables
        self.partitions = partitions
        self.timeline = timeline  # adopts tables created with spark.sql.sources.provider=hudi
        self.constraints = constraints
        self.table_filter = table_filter
        self.sync = hudi_sync  # tables Hudi's writers sync: tracked from storage, caught up before each call

    # create
    def create_table(self, tbl):
        self.create_table_with_environment_context(tbl, None)

    def create_table_with_environment_context(self, tbl, environment_context):
        self._create_table(tbl, environment_context)

    def _create_table(self, tbl, environment_context, constraints: SQLAllTableConstraints | None = None):
        if tbl is None:
            raise InvalidObjectException("Table object is required")
        if tbl.dbName is not None:
            tbl.dbName = db_name(tbl.dbName, tbl.catName)

        def create() -> None:
            if constraints is not None and self.constraints is not None:
                self.constraints.create_table(tbl, env_props(environment_context), constraints)
            else:
                self.tables.create_table(tbl, env_props(environment_context))

        pending = self.sync.plan_create(tbl) if self.sync is not None else None
        if pending is not None:  # Hudi's sync over a Hudi base path: tracked (or its view) from this call on
            self.sync.create(pending, create)  # type: ignore[union-attr]
            return
        create()
        if self.timeline is not None:
            try:
                self.timeline.adopt_hms_table(self.tables.get_table(tbl.dbName or "", tbl.tableName or ""))
            except (StoreError, HudiFormatError) as exc:  # not a usable Hudi config: stays a plain HMS table
                log.warning("table %s.%s has Hudi properties but is not adopted: %s", tbl.dbName, tbl.tableName,
                            getattr(exc, "message", exc))

    def create_table_with_constraints(self, tbl, primaryKeys, foreignKeys, uniqueConstraints,
                                      notNullConstraints, defaultConstraints=None, checkConstraints=None):
        self._create_table(tbl, None, SQLAllTableConstraints(
            primaryKeys=primaryKeys, foreignKeys=foreignKeys, uniqueConstraints=uniqueConstraints,
            notNullConstraints=notNullConstraints, defaultConstraints=defaultConstraints,
            checkConstraints=checkConstraints))

    def create_table_req(self, request):
        r = request
        self._create_table(r.table, r.envContext, SQLAllTableConstraints(
            primaryKeys=r.primaryKeys, foreignKeys=r.foreignKeys, uniqueConstraints=r.uniqueConstraints,
            notNullConstraints=r.notNullConstraints, defaultConstraints=r.defaultConstraints,
            checkConstraints=r.checkConstraints))

    # read
    def _table(self, db, name, capabilities=None):
        """A table for an answer: encoded by the store when the reply protocol can write it
        (store/hms/catalog/table_rows.py TableRows.encoded), else the object; an insert-only table
        only to a client with the capability (_check_capability)."""
        if ENCODER_AVAILABLE:
            answer, insert_only = self.tables.get_table_encoded_flagged(db, name)
        else:
            answer = self.tables.get_table(db, name)
            insert_only = is_insert_only(answer.parameters)
        _check_capability(capabilities, insert_only)
        return answer

    def get_table(self, dbname, tbl_name):
        return self._table(db_name(dbname), tbl_name or "")

    def get_table_req(self, req):
        return GetTableResult(table=self._table(db_name(req.dbName, req.catName), req.tblName or "",
                                                req.capabilities))

    def get_table_objects_by_name(self, dbname, tbl_names):
        try:
            tables = self.tables.get_tables_by_names(db_name(dbname), tbl_names or [])
        except NoSuchObject:
            # The IDL declares no exception here: Hive answers a missing database with no result,
            # which clients see as TApplicationException(MISSING_RESULT).
            return None
        for t in tables:  # declares no exception: an internal error with the text, as Hive 3.1's
            _check_capability(None, is_insert_only(t.parameters))
        return tables

    def get_table_objects_by_name_req(self, req):
        """The named tables, else those `tablesPattern` matches (a name pattern, all when none:
        Hive 4's client's getTables), with only the fields of `projectionSpec.fieldList` when given."""
        db = db_name(req.dbName, req.catName)
        spec = req.projectionSpec
        fields = list(spec.fieldList or []) if spec is not None else []
        if spec is not None and not fields and (spec.includeParamKeyPattern or spec.excludeParamKeyPattern):
            raise InvalidOperationException("Include and Exclude Param key are not supported.")
        known = {s[2] for s in Table.thrift_spec if s}
        bad = [f for f in fields if f.split(".")[0] not in known]
        if bad:
            raise MetaException(f"Invalid table fields in the projection spec: {', '.join(bad)}")
        try:
            names = req.tblNames if req.tblNames is not None else self.tables.list_tables(db, req.tablesPattern)
            tables = self.tables.get_tables_by_names(db, names)
        except NoSuchObject as exc:  # as Hive 4 answers
            raise UnknownDBException(f"Could not find {exc.message}") from exc
        for t in tables:
            _check_capability(req.capabilities, is_insert_only(t.parameters))
        return GetTablesResult(tables=[_projected(t, fields) for t in tables] if fields else tables)

    def get_tables(self, db_name_, pattern):
        return self.tables.list_tables(db_name(db_name_), pattern)

    def get_all_tables(self, db_name_):
        return self.tables.list_tables(db_name(db_name_))

    def get_tables_by_type(self, db_name_, pattern, tableType):
        if tableType and tableType not in TABLE_TYPES:  # Hive: TableType.valueOf(tableType)
            raise MetaException("java.lang.IllegalArgumentException: No enum constant "
                                f"org.apache.hadoop.hive.metastore.TableType.{tableType}")
        return self.tables.list_tables(db_name(db_name_), pattern, tableType or None)

    def get_table_meta(self, db_patterns, tbl_patterns, tbl_types):
        return self.tables.table_meta(db_pattern(db_patterns), tbl_patterns, list(tbl_types or []))

    def get_table_names_by_filter(self, dbname, filter, max_tables):
        """Hive's table filters (store/hms/catalog/table_filter.py); Trino lists its views this way."""
        if not db_name(dbname):
            raise UnknownDBException("DB name is null or empty")
        if filter is None:
            raise InvalidOperationException("null cannot apply null filter")
        assert self.table_filter is not None, "TableHandler needs the table filter service"
        return self.table_filter.table_names(db_name(dbname), filter, -1 if max_tables is None else max_tables)

    # fields and schema
    def _table_for_fields(self, db, table_name):
        try:
            return self.tables.get_table(db_name(db), (table_name or "").split(".")[0])
        except NoSuchObject as exc:
            if "database" in (exc.message or ""):
                raise UnknownDBException(exc.message) from None
            raise UnknownTableException(exc.message) from None

    def get_fields(self, db_name_, table_name):
        return list(self._table_for_fields(db_name_, table_name).sd.cols)

    def get_fields_with_environment_context(self, db_name_, table_name, environment_context):
        return self.get_fields(db_name_, table_name)

    def get_fields_req(self, req):
        return GetFieldsResponse(fields=self.get_fields(req.dbName, req.tblName))

    def get_schema(self, db_name_, table_name):
        t = self._table_for_fields(db_name_, table_name)
        return list(t.sd.cols) + list(t.partitionKeys or [])

    def get_schema_with_environment_context(self, db_name_, table_name, environment_context):
        return self.get_schema(db_name_, table_name)

    def get_schema_req(self, req):
        return GetSchemaResponse(fields=self.get_schema(req.dbName, req.tblName))

    # alter
    def alter_table(self, dbname, tbl_name, new_tbl):
        self.alter_table_with_environment_context(dbname, tbl_name, new_tbl, None)

    def alter_table_with_environment_context(self, dbname, tbl_name, new_tbl, environment_context):
        props = env_props(environment_context)
        cascade = props.get("CASCADE", "").lower() == "true"
        if new_tbl is not None and new_tbl.dbName:
            new_tbl.dbName = db_name(new_tbl.dbName)
        self._synced(db_name(dbname), tbl_name or "",
                     lambda: self.tables.alter_table(db_name(dbname), tbl_name or "", new_tbl, props, cascade))

    def alter_table_with_cascade(self, dbname, tbl_name, new_tbl, cascade):
        if new_tbl is not None and new_tbl.dbName:
            new_tbl.dbName = db_name(new_tbl.dbName)
        self._synced(db_name(dbname), tbl_name or "",
                     lambda: self.tables.alter_table(db_name(dbname), tbl_name or "", new_tbl, {}, bool(cascade)))

    def _synced(self, db: str, tbl: str, call):
        """`call` on db.tbl; after the catch-up of its tracked Hudi table, in one transaction."""
        target = self.sync.target(db, tbl) if self.sync is not None else None
        if target is None:
            return call()
        return self.sync.around(target, call)  # type: ignore[union-attr]

    def alter_table_req(self, req):
        self.alter_table_with_environment_context(db_name(req.dbName, req.catName), req.tableName, req.table,
                                                  req.environmentContext)
        return AlterTableResponse()

    # drop and truncate
    def drop_table(self, dbname, name, deleteData):
        self.tables.drop_table(db_name(dbname), name or "", bool(deleteData))

    def drop_table_with_environment_context(self, dbname, name, deleteData, environment_context):
        self.tables.drop_table(db_name(dbname), name or "", bool(deleteData), env_props(environment_context))

    def drop_table_req(self, dropTableReq):
        """Hive 4.0.1's HiveMetaStoreClient.dropTable (deleteData unset: false, as Hive's server reads it)."""
        req = dropTableReq
        self.tables.drop_table(db_name(req.dbName, req.catalogName), req.tableName or "", bool(req.deleteData),
                               env_props(req.envContext))

    def get_tables_ext(self, req):
        """Names matching the pattern (at most `limit`), for a client that names its processor
        capabilities; asked for the access type (`requestedFields` bit 1): read-write (8), what every
        client may do with every table here (Hive 4 derives it in its metadata transformer, which
        ours does not have). No required capabilities (bit 2). Without capabilities, or with
        MANAGERAWMETADATA among them, Hive 4 translates nothing and answers no tables: so does ours."""
        if req is None:
            raise MetaException("GetTablesExtRequest is required")
        caps = req.processorCapabilities or []
        if not caps or "MANAGERAWMETADATA" in caps:
            return []
        names = self.tables.list_tables(db_name(req.database, req.catalog or "hive"), req.tableNamePattern)
        if req.limit is not None and req.limit >= 0:
            names = names[:req.limit]
        fields = req.requestedFields or 0
        return [ExtendedTableInfo(tblName=n, accessType=ACCESS_READ_WRITE if fields & 1 else None) for n in names]

    def truncate_table(self, dbName, tableName, partNames):
        self.partitions.truncate(db_name(dbName), tableName or "", partNames)

    def truncate_table_req(self, req):
        self.truncate_table(req.dbName, req.tableName, req.partNames)
        return TruncateTableResponse()
