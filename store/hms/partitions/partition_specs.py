"""get_partitions_with_specs: partitions in PartitionSpec form, with Hive's field projection
(GetProjectionsSpec) and grouping (MetaStoreServerUtils.getPartitionspecsGroupedByStorageDescriptor).

Projection: `fieldList` names Partition fields, dotted into the descriptor (`values`,
`sd.location`, `sd.serdeInfo.serializationLib`, ...); only those are answered (all when the list
is empty). `includeParamKeyPattern` / `excludeParamKeyPattern` (SQL LIKE patterns) select the
parameters answered.

Grouping: partitions whose descriptor is not answered, or whose location is not answered or lies
under the table's location, share one descriptor per distinct descriptor (location aside): a
PartitionSpec with a PartitionSpecWithSharedSD whose partitions carry their path relative to the
table's location. The others (outside the table's directory) go, whole, into one more PartitionSpec
with a PartitionListComposingSpec.
"""

from __future__ import annotations

import copy
from collections.abc import Sequence
from typing import Any

from store.errors import MetaError
from store.hms.common import DEFAULT_CATALOG, sql_like
from thrift_idl.hive_metastore.ttypes import (
    GetProjectionsSpec,
    Partition,
    PartitionListComposingSpec,
    PartitionSpec,
    PartitionSpecWithSharedSD,
    PartitionWithoutSD,
    StorageDescriptor,
    Table,
)


def _struct_fields(cls: Any) -> dict[str, type | None]:
    """Field name -> struct class of the field (None for other types) of a generated struct."""
    out: dict[str, type | None] = {}
    for spec in cls.thrift_spec or ():
        if spec:
            args = spec[3]
            out[spec[2]] = args[0] if isinstance(args, (list, tuple)) and args and isinstance(args[0], type) else None
    return out


def check_fields(fields: Sequence[str]) -> None:
    """MetaError naming the fields that are no (dotted) Partition fields."""
    bad = []
    for path in fields:
        cls: type | None = Partition
        for part in path.split("."):
            known = _struct_fields(cls) if cls is not None else {}
            if part not in known:
                bad.append(path)
                break
            cls = known[part]
    if bad:
        raise MetaError(f"Invalid partition fields in the projection spec{bad!r}".replace("'", ""))


def project(obj: Any, paths: Sequence[str]) -> Any:
    """A copy of a struct with only the named (dotted) fields set."""
    cls: Any = type(obj)
    out = cls.__new__(cls)
    out.__dict__ = {name: None for name in _struct_fields(cls)}
    nested: dict[str, list[str]] = {}
    for path in paths:
        head, _, rest = path.partition(".")
        if rest:
            nested.setdefault(head, []).append(rest)
        else:
            out.__dict__[head] = obj.__dict__.get(head)
    for head, rests in nested.items():
        value = obj.__dict__.get(head)
        if value is not None and out.__dict__[head] is None:
            out.__dict__[head] = project(value, rests)
    return out


def _filter_parameters(params: dict[str, str] | None, spec: GetProjectionsSpec) -> dict[str, str] | None:
    include = sql_like(spec.includeParamKeyPattern) if spec.includeParamKeyPattern else None
    exclude = sql_like(spec.excludeParamKeyPattern) if spec.excludeParamKeyPattern else None
    if params is None or (include is None and exclude is None):
        return params
    kept = {k: v for k, v in params.items()
            if (include is None or include.matches(k)) and (exclude is None or not exclude.matches(k))}
    return kept or None


def partition_specs(table: Table, parts: Sequence[Partition], spec: GetProjectionsSpec | None) -> list[PartitionSpec]:
    spec = spec or GetProjectionsSpec()
    fields = list(spec.fieldList or [])
    check_fields(fields)
    projected = [project(p, fields) if fields else copy.copy(p) for p in parts]
    for p in projected:
        p.parameters = _filter_parameters(p.parameters, spec)
    return _grouped(table, projected)


def _sd_key(sd: StorageDescriptor) -> str:
    without = copy.copy(sd)
    without.location = None
    return repr(without)


def _grouped(table: Table, parts: Sequence[Partition]) -> list[PartitionSpec]:
    root = table.sd.location if table.sd is not None else None
    shared: dict[str, tuple[StorageDescriptor | None, list[PartitionWithoutSD]]] = {}
    outside: list[Partition] = []
    for p in parts:
        sd = p.sd
        location = sd.location if sd is not None else None
        if sd is not None and location is not None and not (root and location.startswith(root)):
            outside.append(p)
            continue
        relative = location[len(root or ""):] if location is not None else None
        key = _sd_key(sd) if sd is not None else ""
        group = shared.setdefault(key, (sd, []))
        group[1].append(PartitionWithoutSD(values=p.values, createTime=p.createTime, lastAccessTime=p.lastAccessTime,
                                           relativePath=relative, parameters=p.parameters, privileges=p.privileges))
    out = []
    for sd, members in shared.values():
        if sd is None:
            shared_sd = StorageDescriptor()
        else:
            shared_sd = copy.copy(sd)
            shared_sd.location = root if sd.location is not None else None
        out.append(PartitionSpec(dbName=table.dbName, tableName=table.tableName, rootPath=shared_sd.location,
                                 sharedSDPartitionSpec=PartitionSpecWithSharedSD(partitions=members, sd=shared_sd),
                                 catName=DEFAULT_CATALOG))
    if outside:
        out.append(PartitionSpec(dbName=table.dbName, tableName=table.tableName,
                                 partitionList=PartitionListComposingSpec(partitions=outside), catName=DEFAULT_CATALOG))
    return out
