"""Hive 4 methods of features this metastore does not have: each answers a clear error naming the
feature, never an unknown method (docs/conformance.md lists them). Hive's clients read the error of
a method from its result struct, at the field id Hive 4.0.1's IDL gives the method's MetaException;
a method that declares none is answered as Hive's server answers an undeclared exception,
TApplicationException(INTERNAL_ERROR) with the text.

`get_partitions_by_expr` and `get_partitions_spec_by_expr` are not here: they stay unknown methods,
on which Hive's client prunes partitions itself (docs/conformance.md, "Serialized expressions").
"""

from __future__ import annotations

from thrift.Thrift import TMessageType, TType

from thrift_idl.hive_metastore.ttypes import MetaException

NOT_SUPPORTED = "is not supported by this metastore"

# feature -> methods (Hive 4.0.1 names)
FEATURES: dict[str, tuple[str, ...]] = {
    "workload management (resource plans)": (
        "alter_resource_plan", "alter_wm_pool", "alter_wm_trigger", "create_or_drop_wm_trigger_to_pool_mapping",
        "create_or_update_wm_mapping", "create_resource_plan", "create_wm_pool", "create_wm_trigger",
        "drop_resource_plan", "drop_wm_mapping", "drop_wm_pool", "drop_wm_trigger", "get_active_resource_plan",
        "get_all_resource_plans", "get_resource_plan", "get_triggers_for_resourceplan", "validate_resource_plan"),
    "stored procedures and packages": (
        "add_package", "create_stored_procedure", "drop_package", "drop_stored_procedure", "find_package",
        "get_all_packages", "get_all_stored_procedures", "get_stored_procedure"),
    "data connectors": (
        "alter_dataconnector_req", "create_dataconnector_req", "drop_dataconnector_req", "get_dataconnector_req",
        "get_dataconnectors"),
    "scheduled queries": (
        "get_scheduled_query", "scheduled_query_maintenance", "scheduled_query_poll", "scheduled_query_progress"),
    "replication": (
        "add_replication_metrics", "add_write_notification_log", "add_write_notification_log_in_batch",
        "cm_recycle", "get_all_write_event_info", "get_replication_metrics", "repl_tbl_writeid_state",
        "seed_txn_id", "seed_write_id"),
    "the schema registry": (
        "add_schema_version", "add_serde", "alter_ischema", "create_ischema", "drop_ischema", "drop_schema_version",
        "get_ischema", "get_schema_all_versions", "get_schema_latest_version", "get_schema_version",
        "get_schemas_by_cols", "get_serde", "map_schema_version_to_serde", "set_schema_version_state"),
    "the file metadata cache": (
        "cache_file_metadata", "clear_file_metadata", "get_file_metadata", "get_file_metadata_by_expr",
        "put_file_metadata"),
    "HiveServer2's delegation token store": (
        "add_master_key", "add_token", "get_all_token_identifiers", "get_master_keys", "get_token",
        "remove_master_key", "remove_token", "update_master_key"),
    "runtime statistics": ("add_runtime_stats", "get_runtime_stats"),
    "materialized view rewriting": (
        "get_all_materialized_view_objects_for_rewriting", "get_lock_materialization_rebuild",
        "get_materialization_invalidation_info", "get_materialized_views_for_rewriting",
        "heartbeat_lock_materialization_rebuild", "update_creation_metadata"),
    "the type registry": ("create_type", "drop_type", "get_type", "get_type_all"),
    "the property store": ("get_properties", "set_properties"),
    "the metadata transformer": ("translate_table_dryrun",),
    # write ids and compaction requests are served (store/hms/txn/write_ids.py); running compactions is not
    "transactional (ACID) tables: the compactor and its bookkeeping": (
        "abort_Compactions", "add_write_ids_to_min_history",
        "find_columns_with_stats", "find_next_compact", "find_next_compact2", "get_latest_committed_compaction_info",
        "mark_cleaned", "mark_compacted", "mark_failed", "mark_refused", "remove_compaction_metrics_data",
        "set_hadoop_jobid", "submit_for_cleanup", "update_compaction_metrics_data", "update_compactor_state",
        "update_transaction_statistics"),
}

FEATURE_OF: dict[str, str] = {m: feature for feature, methods in FEATURES.items() for m in methods}

# The field id of the MetaException in each method's result struct (Hive 4.0.1's IDL); methods
# missing here declare none.
_META_FIELD: dict[str, int] = {
    "add_master_key": 1, "add_package": 1, "add_replication_metrics": 1, "add_runtime_stats": 1,
    "add_schema_version": 3, "add_serde": 2, "add_write_ids_to_min_history": 1,
    "alter_dataconnector_req": 1, "alter_ischema": 2, "alter_resource_plan": 3, "alter_wm_pool": 4,
    "alter_wm_trigger": 3, "cm_recycle": 1, "create_dataconnector_req": 3, "create_ischema": 3,
    "create_or_drop_wm_trigger_to_pool_mapping": 4, "create_or_update_wm_mapping": 4, "create_resource_plan": 3,
    "create_stored_procedure": 2, "create_type": 3, "create_wm_pool": 4, "create_wm_trigger": 4,
    "drop_dataconnector_req": 3, "drop_ischema": 3, "drop_package": 1, "drop_resource_plan": 3,
    "drop_schema_version": 2, "drop_stored_procedure": 1, "drop_type": 1, "drop_wm_mapping": 3, "drop_wm_pool": 3,
    "drop_wm_trigger": 3,
    "find_next_compact": 1, "find_next_compact2": 1, "find_package": 1,
    "get_active_resource_plan": 1, "get_all_materialized_view_objects_for_rewriting": 1, "get_all_packages": 1,
    "get_all_resource_plans": 1, "get_all_stored_procedures": 1, "get_all_write_event_info": 1,
    "get_dataconnector_req": 2, "get_dataconnectors": 1, "get_ischema": 2,
    "get_materialization_invalidation_info": 1, "get_materialized_views_for_rewriting": 1,
    "get_properties": 1, "get_replication_metrics": 1,
    "get_resource_plan": 2, "get_runtime_stats": 1, "get_scheduled_query": 1, "get_schema_all_versions": 2,
    "get_schema_latest_version": 2, "get_schema_version": 2, "get_schemas_by_cols": 1, "get_serde": 2,
    "get_stored_procedure": 1, "get_triggers_for_resourceplan": 2, "get_type": 1, "get_type_all": 1,
    "map_schema_version_to_serde": 2, "mark_cleaned": 1, "mark_compacted": 1,
    "mark_failed": 1, "mark_refused": 1, "remove_compaction_metrics_data": 1, "scheduled_query_maintenance": 1,
    "scheduled_query_poll": 1, "scheduled_query_progress": 1, "seed_txn_id": 1, "seed_write_id": 1,
    "set_properties": 1, "set_schema_version_state": 3, "submit_for_cleanup": 1, "translate_table_dryrun": 3,
    "update_compaction_metrics_data": 1, "update_creation_metadata": 1, "update_master_key": 2,
    "update_transaction_statistics": 1, "validate_resource_plan": 2,
}


def message(method: str) -> str:
    return f"{method}: {FEATURE_OF[method]} {NOT_SUPPORTED} (docs/conformance.md)"


def meta_field(method: str) -> int | None:
    """Where `method`'s result carries its MetaException; None: it declares none."""
    return _META_FIELD.get(method)


def write_refusal(oprot, name: bytes, seqid: int, method: str) -> None:
    """The answer to `method`: its result struct holding a MetaException (the caller writes a
    TApplicationException when meta_field is None)."""
    fid = _META_FIELD[method]
    oprot.writeMessageBegin(name.decode("utf-8"), TMessageType.REPLY, seqid)
    oprot.writeStructBegin(f"{method}_result")
    oprot.writeFieldBegin("o", TType.STRUCT, fid)
    MetaException(message=message(method)).write(oprot)
    oprot.writeFieldEnd()
    oprot.writeFieldStop()
    oprot.writeStructEnd()
    oprot.writeMessageEnd()
    oprot.trans.flush()
