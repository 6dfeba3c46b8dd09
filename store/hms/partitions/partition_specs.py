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


def trimmed_partitions(parts: Sequence[Partition], skip_columns: bool, include: str | None,
                       exclude: str | None) -> list[Partition]:
    """get_partitions_by_filter_req's answer: without the descriptors' columns when asked, parameters
    kept by key pattern (SQL LIKE), as Hive 4 answers."""
    spec = GetProjectionsSpec(includeParamKeyPattern=include, excludeParamKeyPattern=exclude)
    out = []
    for p in parts:
        p = copy.copy(p)
        p.parameters = _filter_parameters(p.parameters, spec)
        if skip_columns and p.sd is not None:
            p.sd = copy.copy(p.sd)
            p.sd.cols = []
        out.append(p)
    return out


def partitions_of_spec(spec: PartitionSpec | None) -> list[Partition]:
    """The partitions a PartitionSpec holds (add_partitions_pspec): those of a list as they are, those
    sharing a descriptor each with a copy of it located at the root path plus its relative path."""
    if spec is None:
        return []
    if spec.partitionList is not None:
        return list(spec.partitionList.partitions or [])
    shared = spec.sharedSDPartitionSpec
    if shared is None:
        raise MetaError("A PartitionSpec holds a partition list or partitions sharing a descriptor")
    out = []
    for member in shared.partitions or []:
        sd = copy.deepcopy(shared.sd) if shared.sd is not None else None
        if sd is not None:
            base = sd.location if sd.location is not None else spec.rootPath
            sd.location = (base or "") + (member.relativePath or "") if base or member.relativePath else None
        out.append(Partition(values=member.values, dbName=spec.dbName, tableName=spec.tableName,
                             createTime=member.createTime, lastAccessTime=member.lastAccessTime, sd=sd,
                             parameters=member.parameters, privileges=member.privileges, catName=spec.catName))
    return out


GROUPING_KEY = "hive.hcatalog.partition.spec.grouping.enabled"  # a table parameter of Hive's


def listed_specs(table: Table, parts: Sequence[Partition]) -> list[PartitionSpec]:
    """get_partitions_pspec / get_part_specs_by_filter as Hive 4 answers them: one PartitionSpec
    listing the partitions under the table's location, unless the table's parameter
    `hive.hcatalog.partition.spec.grouping.enabled` is `true` (then they share descriptors)."""
    if (table.parameters or {}).get(GROUPING_KEY) == "true":
        return _grouped(table, parts)
    root = table.sd.location if table.sd is not None else None
    return [PartitionSpec(dbName=table.dbName, tableName=table.tableName, rootPath=root, catName=DEFAULT_CATALOG,
                          partitionList=PartitionListComposingSpec(partitions=list(parts)))]
