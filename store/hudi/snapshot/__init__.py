"""The RFC-36 snapshot service of Hudi tables: the latest file slices (`snapshot_service`) with each
file's physical path from the table's RFC-60 storage strategy (store/hudi/file_locations), cleaning and
partition drops (`clean_service`), and the rules HMS partition calls follow on Hudi tables
(`partition_rules`)."""

from store.hudi.file_locations import locate_slices, locator
from store.hudi.snapshot.clean_service import (
    KEEP_LATEST_BY_HOURS,
    KEEP_LATEST_COMMITS,
    KEEP_LATEST_FILE_VERSIONS,
    CleanPolicy,
    CleanService,
    cleaned_by_server,
    policy_of,
)
from store.hudi.snapshot.partition_rules import HudiPartitionRules
from store.hudi.snapshot.snapshot_service import FILE_COLUMNS, SnapshotService, file_info_of

__all__ = ["FILE_COLUMNS", "KEEP_LATEST_BY_HOURS", "KEEP_LATEST_COMMITS", "KEEP_LATEST_FILE_VERSIONS", "CleanPolicy",
           "CleanService", "cleaned_by_server", "policy_of", "HudiPartitionRules",
           "SnapshotService", "file_info_of", "locate_slices", "locator"]
