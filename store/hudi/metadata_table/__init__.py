"""Hudi's metadata table on storage (RFC-15 `files` partition; RFC-27 `column_stats` partition from
the server's column statistics, `column_stats`; RFC-08 `record_index` partition from the server's
record index, `record_index`) for the tables the storage mirror writes:
bootstrapped from the server's rows, then one deltacommit per completed instant, written before
the instant's completed file, compacted every `COMPACT_AFTER` instants (`writer`).
`FILES_DIR`, `MDT_HOODIE`: its `files` partition and its `.hoodie` under the table's base path."""

from store.hudi.metadata_table.writer import (
    COMPACT_AFTER,
    FILES_DIR,
    MDT_HOODIE,
    MetadataTableWriter,
    mark_column_stats_rebuild,
    mark_metadata_table_rewrite,
    metadata_table_enabled,
    taken_over,
)

__all__ = ["COMPACT_AFTER", "FILES_DIR", "MDT_HOODIE", "MetadataTableWriter", "mark_column_stats_rebuild",
           "mark_metadata_table_rewrite", "metadata_table_enabled", "taken_over"]
