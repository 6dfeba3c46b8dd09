"""Hive 4's request forms of older calls (drop_database_req, get_partition_req, get_partitions_req,
get_partition_names_ps_req, get_partitions_ps_with_auth_req, fetch_partition_names_req,
get_partition_names_req) and get_partitions_with_specs: the existing services, answered as Hive 4 answers these forms.

Serialized Hive expressions (Kryo-serialized ExprNodeDesc, which only Hive's own classes can read)
are not evaluated: get_partitions_by_expr is not served at all and get_partition_names_req answers
a real expression with TApplicationException UNKNOWN_METHOD, the answer on which Hive's client
gives up server-side pruning and prunes partition names itself (docs/conformance.md).
"""

from __future__ import annotations

import functools

from thrift.Thrift import TApplicationException

from adapter.handlers.partitions import partition_list
from adapter.naming import check_catalog, db_name
from store.errors import MetaError, NoSuchObject
from store.hms.catalog import TableService
from store.hms.partition_filter import is_integral
from store.hms.partitions import PartitionService, partition_specs, split_name
from thrift_idl.hive_metastore.ttypes import (
    GetPartitionNamesPsResponse,
    GetPartitionResponse,
    GetPartitionsPsWithAuthResponse,
    GetPartitionsResponse,
    NoSuchObjectException,
    PartitionFilterMode,
    PartitionsResponse,
)

NO_EXPRESSION = b"\xff"  # what Hive's client sends for "no filter"


def _max(max_parts) -> int:
    return -1 if max_parts is None else int(max_parts)


class RequestFormHandler:
    def __init__(self, tables: TableService, partitions: PartitionService):
        self.tables = tables
        self.partitions = partitions

    def drop_database_req(self, req):
        # ignoreUnknownDb is for the client (Hive's server raises NoSuchObjectException anyway)
        check_catalog(req.catalogName)
        self.tables.drop_database(db_name(req.name), bool(req.deleteData), bool(req.cascade))

    def get_partition_req(self, req):
        check_catalog(req.catName)
        return GetPartitionResponse(partition=self.partitions.get_partition(
            db_name(req.dbName), req.tblName or "", req.partVals))

    def get_partitions_req(self, req):
        check_catalog(req.catName)
        try:
            parts = partition_list(self.partitions, db_name(req.dbName), req.tblName or "", _max(req.maxParts))
        except NoSuchObject:
            parts = []  # Hive 4: no partitions for a table that does not exist
        return PartitionsResponse(partitions=parts)

    def get_partition_names_ps_req(self, req):
        check_catalog(req.catName)
        if req.partValues is None:
            raise MetaError("Partition values are required")  # Hive 4: a NullPointerException
        return GetPartitionNamesPsResponse(names=self.partitions.get_partition_names(
            db_name(req.dbName), req.tblName or "", _max(req.maxParts), part_vals=req.partValues))

    def get_partitions_ps_with_auth_req(self, req):
        check_catalog(req.catName)
        # Hive 4: no values (or an empty list) is every partition; maxParts always applies
        return GetPartitionsPsWithAuthResponse(partitions=partition_list(
            self.partitions, db_name(req.dbName), req.tblName or "", _max(req.maxParts), req.partVals or None))

    def fetch_partition_names_req(self, partitionReq):
        """Hive 4's client lists partition names this way (also when it prunes partitions itself)."""
        r = partitionReq
        try:
            check_catalog(r.catName)
            return self.partitions.get_partition_names(db_name(r.dbName), r.tblName or "", _max(r.maxParts))
        except (NoSuchObject, NoSuchObjectException):
            return []  # Hive 4: no names for a table (or catalog) that does not exist

    def get_partition_names_req(self, req):
        """Partition names without a filter, in name order or as `order` says ("<key index>,...:<+|->...")."""
        check_catalog(req.catName)
        if req.expr is not None and bytes(req.expr) != NO_EXPRESSION:
            raise TApplicationException(TApplicationException.UNKNOWN_METHOD,
                                        "Invalid method name: 'get_partition_names_req'")
        db, tbl = db_name(req.dbName), req.tblName or ""
        if not req.order:
            return self.partitions.get_partition_names(db, tbl, _max(req.maxParts))
        names = self.partitions.get_partition_names(db, tbl, -1)
        keys = self.tables.get_table(db, tbl).partitionKeys or []
        for position, descending in reversed(_order_specs(req.order, len(keys))):
            names.sort(key=functools.partial(_sort_value, position=position, integral=is_integral(keys[position].type)),
                       reverse=descending)
        return names if _max(req.maxParts) < 0 else names[:_max(req.maxParts)]

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
