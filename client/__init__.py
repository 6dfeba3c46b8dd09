"""The Python client of hudi-metastore (see client/hudi_client.py)."""

from .hudi_client import (
    HudiMetastoreClient,
    column_stats_struct,
    file_group_keys,
    is_idempotent,
    metastore_endpoints,
    slices_of,
    state_name,
)

__all__ = ["HudiMetastoreClient", "column_stats_struct", "file_group_keys", "is_idempotent", "metastore_endpoints",
           "slices_of", "state_name"]
