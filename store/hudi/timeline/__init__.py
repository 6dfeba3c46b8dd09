"""The RFC-36 timeline service of Hudi tables: instant times (`instant_times`), instants and their
state machine (`instants`), commits with their conflict checks and what completes with them
(`commit`: file versions, column statistics, record index, Hive statistics, HMS partitions through
`partition_sync`), rollbacks (`rollback`), savepoints and restores (`savepoints`), the service
(`timeline_service`), the import of an existing table's timeline (`timeline_import`), and the tables
Hudi's own writers write, tracked from their first hive sync and caught up from storage before each
sync call and by the watcher (`catch_up`)."""

from store.hudi.timeline.catch_up import (
    CatchUpError,
    SyncWatcher,
    Target,
    TimelineCatchUp,
    base_file_by_footer,
    base_file_by_pyarrow,
    hudi_base_path,
    is_tracked,
)
from store.hudi.timeline.commit import Completed, PostCommitHook, after_commit_step, commits_running
from store.hudi.timeline.instants import DEFAULT_HEARTBEAT_TIMEOUT_S, instant_from_row
from store.hudi.timeline.savepoints import RestoreOutcome, clean_retains_from, held_files
from store.hudi.timeline.timeline_import import StoredInstant, TimelineImport
from store.hudi.timeline.timeline_service import TimelineService

__all__ = ["DEFAULT_HEARTBEAT_TIMEOUT_S", "CatchUpError", "Completed", "PostCommitHook", "RestoreOutcome",
           "StoredInstant", "SyncWatcher", "Target", "TimelineCatchUp", "TimelineImport", "TimelineService",
           "after_commit_step", "base_file_by_footer", "base_file_by_pyarrow", "clean_retains_from",
           "commits_running", "held_files", "hudi_base_path",
           "instant_from_row", "is_tracked"]
