"""Partition calls: add, read (by values, names, partial spec, filter, specs), alter, rename, drop,
with their request forms (`*_req`, Hive 4's get_partitions_with_specs) answered as Hive 4 answers them.

Serialized Hive expressions (Kryo-serialized ExprNodeDesc, which only Hive's own classes can read)
are not evaluated: get_partitions_by_expr is not served at all and get_partition_names_req answers
a real expression with TApplicationException UNKNOWN_METHOD, the answer on which Hive's client
gives up server-side pruning and prunes partition names itself (docs/conformance.md).
"""

from __future__ import annotations

import functools

from thrift.Thrift import TApplicationException

from adapter.naming import check_catalog, db_name, env_props
from store.errors import MetaError, NoSuchObject
from store.hms.catalog import TableService
from store.hms.common import ENCODER_AVAILABLE
from store.hms.partition_filter import is_integral
from store.hms.partitions import (
    PartitionService,
    listed_specs,
    make_name,
    partition_specs,
    partitions_of_spec,
    spec_from_name,
    split_name,
    trimmed_partitions,
)
from store.hudi.snapshot import HudiPartitionRules
from store.hudi.timeline import TimelineCatchUp
from thrift_idl.hive_metastore.ttypes import (
    AddPartitionsResult,
    AlterPartitionsResponse,
    DropPartitionsResult,
    GetPartitionNamesPsResponse,
    GetPartitionResponse,
    GetPartitionsByNamesResult,
    GetPartitionsPsWithAuthResponse,
    GetPartitionsResponse,
    InvalidObjectException,
    MetaException,
    NoSuchObjectException,
    Partition,
    PartitionFilterMode,
    PartitionsResponse,
    PartitionValuesResponse,
    PartitionValuesRow,
    RenamePartitionResponse,
)

NO_EXPRESSION = b"\xff"  # what Hive's client sends for "no filter"


def _max(max_parts) -> int:
    return -1 if max_parts is None else int(max_parts)


def partition_list(partitions: PartitionService, db: str, tbl: str, max_parts: int = -1, part_vals=None,
                   filter_text=None):
    """A partition list for an answer: encoded by the store when the reply protocol can write it
    (store/hms/common/wire.py), else objects."""
    read = partitions.encoded_partitions if ENCODER_AVAILABLE else partitions.get_partitions
    return read(db, tbl, max_parts, part_vals=part_vals, filter_text=filter_text)


class PartitionHandler:
    def __init__(self, partitions: PartitionService, tables: TableService,
                 hudi_rules: HudiPartitionRules | None = None, hudi_sync: TimelineCatchUp | None = None):
        self.partitions = partitions
        self.tables = tables  # the partition keys and table a request form's answer needs
        self.hudi = hudi_rules  # Hudi tables' partitions follow commits
        self.sync = hudi_sync  # tables Hudi's writers sync: caught up from storage before the call

    def _synced(self, db, tbl, call, on_tracked):
        """`call` on db.tbl, after the catch-up of the tracked Hudi table it belongs to, in one
        transaction; on the tracked table itself `on_tracked` instead (its partitions are what its
        commits say: the call changes nothing more and succeeds)."""
        target = self.sync.target(db_name(db), tbl or "") if self.sync is not None else None
        if target is None:
            return call()
        return self.sync.around(target, call if not target.own else on_tracked)  # type: ignore[union-attr]

    def _as_committed(self, db, tbl, parts, if_not_exists):
        """An add on a tracked table: the partitions as the commits made them (a requested one the
        commits do not have is answered as sent)."""
        if if_not_exists:
            return []
        keys = [k.name for k in self.tables.get_table(db, tbl).partitionKeys or []]
        have = {tuple(p.values): p for p in self.partitions.get_partitions_by_names(
            db, tbl, [make_name(keys, list(p.values or [])) for p in parts])}
        return [have.get(tuple(p.values or []), p) for p in parts]

    def _guard(self, db, tbl, what):
        if self.hudi is not None:
            self.hudi.guard(db_name(db), tbl or "", what)

    # add
    def _add(self, parts, if_not_exists=False, env=None):
        parts = list(parts or [])
        if not parts:
            return []
        for p in parts:
            if p is None:
                raise InvalidObjectException("Partition object is required")
            if p.sd is None:  # Hive fails on it with a NullPointerException
                raise MetaException("Partition has no storage descriptor")
        db, tbl = db_name(parts[0].dbName, parts[0].catName), parts[0].tableName or ""

        def add():
            if self.hudi is not None:
                existing = self.hudi.add(db, tbl, parts, if_not_exists)
                if existing is not None:
                    return existing
            return self.partitions.add_partitions(db, tbl, parts, if_not_exists, env)

        return self._synced(db, tbl, add, lambda: self._as_committed(db, tbl, parts, if_not_exists))

    def add_partition(self, new_part):
        return self._add([new_part])[0]

    def add_partition_with_environment_context(self, new_part, environment_context):
        return self._add([new_part], env=env_props(environment_context))[0]

    def add_partitions(self, new_parts):
        return len(self._add(new_parts))

    def add_partitions_req(self, request):
        for p in request.parts or []:
            p.dbName = p.dbName or request.dbName
            p.catName = p.catName or request.catName
            p.tableName = p.tableName or request.tblName
            if db_name(p.dbName, p.catName) != db_name(request.dbName, request.catName) or \
                    (p.tableName or "").lower() != (request.tblName or "").lower():
                raise MetaException("Partition does not belong to target table "
                                    f"{request.dbName}.{request.tblName}")
        added = self._add(request.parts, bool(request.ifNotExists))
        return AddPartitionsResult(partitions=added if request.needResult is not False else None)

    def append_partition(self, db_name_, tbl_name, part_vals):
        self._guard(db_name_, tbl_name, "Appending a partition")
        return self.partitions.append_partition(db_name(db_name_), tbl_name or "", part_vals)

    def append_partition_with_environment_context(self, db_name_, tbl_name, part_vals, environment_context):
        return self.append_partition(db_name_, tbl_name, part_vals)

    def append_partition_by_name(self, db_name_, tbl_name, part_name):
        self._guard(db_name_, tbl_name, "Appending a partition")
        return self.partitions.append_partition_by_name(db_name(db_name_), tbl_name or "", part_name or "")

    def append_partition_by_name_with_environment_context(self, db_name_, tbl_name, part_name, environment_context):
        return self.append_partition_by_name(db_name_, tbl_name, part_name)

    def append_partition_req(self, appendPartitionsReq):
        """Hive 4.0.1's HiveMetaStoreClient.appendPartition: by name, else by values."""
        req = appendPartitionsReq
        db = db_name(req.dbName, req.catalogName)
        if req.partVals is None and req.name is not None:
            return self.append_partition_by_name(db, req.tableName, req.name)
        if not req.partVals:
            raise MetaException("The partition values must not be null or empty.")
        return self.append_partition(db, req.tableName, req.partVals)

    def add_partitions_pspec(self, new_parts):
        """Partitions given as PartitionSpecs (a shared descriptor with relative paths, or a list),
        added as add_partitions adds them; the count added."""
        parts = []
        for spec in new_parts or []:
            parts.extend(partitions_of_spec(spec))
        return len(self._add(parts)) if parts else 0

    # read
    def get_partition(self, db_name_, tbl_name, part_vals):
        return self.partitions.get_partition(db_name(db_name_), tbl_name or "", part_vals)

    def get_partition_req(self, req):
        check_catalog(req.catName)
        return GetPartitionResponse(partition=self.partitions.get_partition(
            db_name(req.dbName), req.tblName or "", req.partVals))

    def get_partition_with_auth(self, db_name_, tbl_name, part_vals, user_name, group_names):
        return self.get_partition(db_name_, tbl_name, part_vals)

    def get_partition_by_name(self, db_name_, tbl_name, part_name):
        return self.partitions.get_partition_by_name(db_name(db_name_), tbl_name or "", part_name or "")

    def _listed(self, db, tbl, max_parts, part_vals=None, filter_text=None):
        return partition_list(self.partitions, db_name(db), tbl or "", _max(max_parts), part_vals, filter_text)

    def _named(self, db, tbl, names):
        read = self.partitions.encoded_partitions_by_names if ENCODER_AVAILABLE \
            else self.partitions.get_partitions_by_names
        return read(db_name(db), tbl or "", names)

    def get_partitions(self, db_name_, tbl_name, max_parts):
        try:
            return self._listed(db_name_, tbl_name, max_parts)
        except NoSuchObject:
            return []  # Hive 4: a table that does not exist has no partitions

    def get_partitions_req(self, req):
        check_catalog(req.catName)
        try:
            parts = partition_list(self.partitions, db_name(req.dbName), req.tblName or "", _max(req.maxParts))
        except NoSuchObject:
            parts = []  # Hive 4: no partitions for a table that does not exist
        return PartitionsResponse(partitions=parts)

    def get_partitions_with_auth(self, db_name_, tbl_name, max_parts, user_name, group_names):
        return self._listed(db_name_, tbl_name, max_parts)

    def get_partitions_ps(self, db_name_, tbl_name, part_vals, max_parts):
        # Hive 4: an empty specification lists every partition
        return self._listed(db_name_, tbl_name, max_parts, part_vals=part_vals or None)

    def get_partitions_ps_with_auth(self, db_name_, tbl_name, part_vals, max_parts, user_name, group_names):
        return self.get_partitions_ps(db_name_, tbl_name, part_vals, max_parts)

    def get_partitions_ps_with_auth_req(self, req):
        check_catalog(req.catName)
        # Hive 4: no values (or an empty list) is every partition; maxParts always applies
        return GetPartitionsPsWithAuthResponse(partitions=partition_list(
            self.partitions, db_name(req.dbName), req.tblName or "", _max(req.maxParts), req.partVals or None))

    def _names(self, db, tbl, max_parts, part_vals=None):
        return self.partitions.get_partition_names(db, tbl, max_parts, part_vals=part_vals)

    def get_partition_names(self, db_name_, tbl_name, max_parts):
        try:
            if ENCODER_AVAILABLE:
                return self.partitions.encoded_partition_names(db_name(db_name_), tbl_name or "", _max(max_parts))
            return self._names(db_name(db_name_), tbl_name or "", _max(max_parts))
        except NoSuchObject:
            return []  # Hive 4: a table that does not exist has no partitions

    def get_partition_names_req(self, req):
        """Partition names without a filter, in name order or as `order` says ("<key index>,...:<+|->...")."""
        check_catalog(req.catName)
        if req.expr is not None and bytes(req.expr) != NO_EXPRESSION:
            raise TApplicationException(TApplicationException.UNKNOWN_METHOD,
                                        "Invalid method name: 'get_partition_names_req'")
        db, tbl = db_name(req.dbName), req.tblName or ""
        if not req.order:
            return self._names(db, tbl, _max(req.maxParts))
        names = self.partitions.get_partition_names(db, tbl, -1)
        keys = self.tables.get_table(db, tbl).partitionKeys or []
        for position, descending in reversed(_order_specs(req.order, len(keys))):
            names.sort(key=functools.partial(_sort_value, position=position, integral=is_integral(keys[position].type)),
                       reverse=descending)
        return names if _max(req.maxParts) < 0 else names[:_max(req.maxParts)]

    def fetch_partition_names_req(self, partitionReq):
        """Hive 4's client lists partition names this way (also when it prunes partitions itself)."""
        r = partitionReq
        try:
            check_catalog(r.catName)
            return self._names(db_name(r.dbName), r.tblName or "", _max(r.maxParts))
        except (NoSuchObject, NoSuchObjectException):
            return []  # Hive 4: no names for a table (or catalog) that does not exist

    def get_partition_names_ps(self, db_name_, tbl_name, part_vals, max_parts):
        return self._names_ps(db_name(db_name_), tbl_name or "", _max(max_parts), part_vals)

    def _names_ps(self, db, tbl, max_parts, part_vals):
        if ENCODER_AVAILABLE and part_vals is not None:
            return self.partitions.encoded_partition_names_ps(db, tbl, max_parts, part_vals)
        return self._names(db, tbl, max_parts, part_vals=part_vals)

    def get_partition_names_ps_req(self, req):
        check_catalog(req.catName)
        if req.partValues is None:
            raise MetaError("Partition values are required")  # Hive 4: a NullPointerException
        return GetPartitionNamesPsResponse(names=self._names_ps(
            db_name(req.dbName), req.tblName or "", _max(req.maxParts), req.partValues))

    def get_partitions_by_filter(self, db_name_, tbl_name, filter, max_parts):
        return self._listed(db_name_, tbl_name, max_parts, filter_text=filter or "")

    def get_partitions_by_filter_req(self, req):
        """Hive 4.0.1's HiveMetaStoreClient.listPartitionsByFilter: the filter, maxParts, without the
        columns (skipColumnSchemaForPartition) and parameters by key pattern, as Hive 4 answers."""
        db, tbl = db_name(req.dbName, req.catName), req.tblName or ""
        skip = bool(req.skipColumnSchemaForPartition)

        def built():
            parts = self.partitions.get_partitions(db, tbl, _max(req.maxParts), filter_text=req.filter or "")
            return trimmed_partitions(parts, skip, req.includeParamKeyPattern, req.excludeParamKeyPattern)

        if ENCODER_AVAILABLE and not req.includeParamKeyPattern and not req.excludeParamKeyPattern:
            if not skip:  # the plain list
                return partition_list(self.partitions, db, tbl, _max(req.maxParts), filter_text=req.filter or "")
            encoded = self.partitions.encoded_without_columns(db, tbl, _max(req.maxParts), req.filter or "", built)
            if encoded is not None:
                return encoded
        return built()

    def get_part_specs_by_filter(self, db_name_, tbl_name, filter, max_parts):
        db, tbl = db_name(db_name_), tbl_name or ""
        table = self.tables.get_table(db, tbl)
        return listed_specs(table, self.partitions.get_partitions(db, tbl, _max(max_parts), filter_text=filter or ""))

    def get_partitions_pspec(self, db_name_, tbl_name, max_parts):
        db, tbl = db_name(db_name_), tbl_name or ""
        table = self.tables.get_table(db, tbl)
        return listed_specs(table, self.partitions.get_partitions(db, tbl, _max(max_parts)))

    def get_num_partitions_by_filter(self, db_name_, tbl_name, filter):
        return self.partitions.count_partitions(db_name(db_name_), tbl_name or "", filter)

    def get_partitions_by_names(self, db_name_, tbl_name, names):
        return self._named(db_name_, tbl_name, names)

    def get_partitions_by_names_req(self, req):
        return GetPartitionsByNamesResult(
            partitions=self.get_partitions_by_names(req.db_name, req.tbl_name, req.names))

    def get_partitions_with_specs(self, request):
        check_catalog(request.catName)
        db, tbl = db_name(request.dbName), request.tblName or ""
        table = self.tables.get_table(db, tbl)
        filters = request.filterSpec
        mode = filters.filterMode if filters is not None else None
        values = list(filters.filters or []) if filters is not None else []
        if mode == PartitionFilterMode.BY_NAMES:
            parts = self.partitions.get_partitions_by_names(db, tbl, values)
        elif mode == PartitionFilterMode.BY_VALUES:
            parts = self.partitions.get_partitions(db, tbl, part_vals=values or None)
        elif mode == PartitionFilterMode.BY_EXPR and values:
            parts = self.partitions.get_partitions(db, tbl, filter_text=" and ".join(f"({f})" for f in values))
        else:
            parts = self.partitions.get_partitions(db, tbl)
        return GetPartitionsResponse(partitionSpec=partition_specs(table, parts, request.projectionSpec))

    def get_partition_values(self, request):
        keys = [k.name for k in request.partitionKeys or []]
        rows = self.partitions.get_partition_values(
            db_name(request.dbName, request.catName), request.tblName or "", keys, request.filter,
            request.ascending is not False, _max(request.maxParts))
        return PartitionValuesResponse(partitionValues=[PartitionValuesRow(row=r) for r in rows])

    # alter and rename
    def _alter(self, db_name_, tbl_name, parts, env=None):
        def alter():
            self._guard(db_name_, tbl_name, "Altering partitions")
            self.partitions.alter_partitions(db_name(db_name_), tbl_name or "", parts, env)

        self._synced(db_name_, tbl_name, alter, lambda: None)

    def alter_partition(self, db_name_, tbl_name, new_part):
        self._alter(db_name_, tbl_name, [new_part])

    def alter_partition_with_environment_context(self, db_name_, tbl_name, new_part, environment_context):
        self._alter(db_name_, tbl_name, [new_part], env_props(environment_context))

    def alter_partitions(self, db_name_, tbl_name, new_parts):
        self._alter(db_name_, tbl_name, list(new_parts or []))

    def alter_partitions_with_environment_context(self, db_name_, tbl_name, new_parts, environment_context):
        self._alter(db_name_, tbl_name, list(new_parts or []), env_props(environment_context))

    def alter_partitions_req(self, req):
        self.alter_partitions_with_environment_context(db_name(req.dbName, req.catName), req.tableName, req.partitions,
                                                       req.environmentContext)
        return AlterPartitionsResponse()

    def rename_partition(self, db_name_, tbl_name, part_vals, new_part):
        self._guard(db_name_, tbl_name, "Renaming a partition")
        self.partitions.rename_partition(db_name(db_name_), tbl_name or "", part_vals, new_part)

    # exchange (store/hms/partitions/partition_exchange.py)
    def exchange_partitions(self, partitionSpecs, source_db, source_table_name, dest_db, dest_table_name):
        return self.partitions.exchange_partitions(
            partitionSpecs, db_name(source_db) if source_db else None, source_table_name,
            db_name(dest_db) if dest_db else None, dest_table_name)

    def exchange_partition(self, partitionSpecs, source_db, source_table_name, dest_db, dest_table_name):
        self.exchange_partitions(partitionSpecs, source_db, source_table_name, dest_db, dest_table_name)
        return Partition()  # as Hive's: an empty partition

    def rename_partition_req(self, req):
        self.rename_partition(db_name(req.dbName, req.catName), req.tableName, req.partVals, req.newPart)
        return RenamePartitionResponse()

    # drop
    def drop_partition(self, db_name_, tbl_name, part_vals, deleteData):
        def drop():
            if self.hudi is not None and self.hudi.drop(db_name(db_name_), tbl_name or "", values_list=[part_vals]):
                return True
            self.partitions.drop_partitions(db_name(db_name_), tbl_name or "", values_list=[part_vals],
                                            delete_data=bool(deleteData))
            return True

        return self._synced(db_name_, tbl_name, drop, lambda: True)

    def drop_partition_with_environment_context(self, db_name_, tbl_name, part_vals, deleteData, environment_context):
        return self.drop_partition(db_name_, tbl_name, part_vals, deleteData)

    def drop_partition_by_name(self, db_name_, tbl_name, part_name, deleteData):
        def drop():
            if self.hudi is not None and self.hudi.drop(db_name(db_name_), tbl_name or "", names=[part_name or ""]):
                return True
            self.partitions.drop_partitions(db_name(db_name_), tbl_name or "", names=[part_name or ""],
                                            delete_data=bool(deleteData))
            return True

        return self._synced(db_name_, tbl_name, drop, lambda: True)

    def drop_partition_by_name_with_environment_context(self, db_name_, tbl_name, part_name, deleteData,
                                                        environment_context):
        return self.drop_partition_by_name(db_name_, tbl_name, part_name, deleteData)

    def drop_partition_req(self, dropPartitionReq):
        """Hive 4.0.1's HiveMetaStoreClient.dropPartition: by name, else by values."""
        req = dropPartitionReq
        db = db_name(req.dbName, req.catName)
        if req.partName is not None:
            return self.drop_partition_by_name(db, req.tblName, req.partName, req.deleteData)
        return self.drop_partition(db, req.tblName, req.partVals or [], req.deleteData)

    def drop_partitions_req(self, req):
        db = db_name(req.dbName, req.catName)
        spec = req.parts
        if spec is None or (spec.names is None and spec.exprs is None):
            raise MetaException("Partition spec is required")
        if spec.exprs is not None:
            raise MetaException("Dropping partitions by serialized expressions is not supported; "
                                "name the partitions instead")
        def drop():
            if self.hudi is not None and self.hudi.drop(db, req.tblName or "", names=list(spec.names),
                                                        if_exists=req.ifExists is not False):
                return DropPartitionsResult(partitions=[] if req.needResult is not False else None)
            dropped = self.partitions.drop_partitions(
                db, req.tblName or "", names=list(spec.names),
                delete_data=req.deleteData is not False, if_exists=req.ifExists is not False,
                need_result=req.needResult is not False, exact_names=True)
            return DropPartitionsResult(partitions=dropped)

        return self._synced(db, req.tblName, drop,
                            lambda: DropPartitionsResult(partitions=[] if req.needResult is not False else None))

    # names
    def partition_name_to_vals(self, part_name):
        if not part_name:
            return []
        return list(spec_from_name(part_name).values())

    def partition_name_to_spec(self, part_name):
        if not part_name:
            return {}
        return spec_from_name(part_name)

    def partition_name_has_valid_characters(self, part_vals, throw_exception):
        return True


def _order_specs(order: str, n_keys: int) -> list[tuple[int, bool]]:
    """Hive's MetaStoreUtils.makeOrderSpecs: "0,1:+-" -> [(0, ascending), (1, descending)]."""
    positions, _, signs = order.strip().partition(":")
    out = []
    for pos, sign in zip(positions.split(","), signs):
        if not pos.strip().isdigit() or int(pos) >= n_keys:
            raise MetaError(f"Invalid partition order: {order}")
        out.append((int(pos), sign == "-"))
    return out


def _sort_value(name: str, position: int, integral: bool) -> tuple:
    """A partition name's sort key by one key's value (integral keys by number, non-numbers last)."""
    value = split_name(name)[position][1]
    if integral:
        try:
            return (0, int(value), "")
        except ValueError:
            return (1, 0, value)
    return (0, 0, value)
