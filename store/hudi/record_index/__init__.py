"""RFC-08 record-level index of Hudi tables kept by the metastore: key -> file group and instant
(`index`), its bulk statements per backend (`rows`)."""

from store.hudi.record_index.index import (
    REBUILD_KEY,
    FileGroupKeys,
    RecordIndex,
    count_keys,
    has_record_index,
    mirrors_record_index,
)
from store.hudi.record_index.rows import delete_keys

__all__ = ["REBUILD_KEY", "FileGroupKeys", "RecordIndex", "count_keys", "delete_keys", "has_record_index",
           "mirrors_record_index"]
