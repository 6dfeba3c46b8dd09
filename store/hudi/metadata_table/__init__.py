"""Hudi's metadata table on storage (RFC-15 `files` partition) for the tables the storage mirror
writes: bootstrapped from the server's file rows, then one deltacommit per completed instant,
written before the instant's completed file (`writer`)."""

from store.hudi.metadata_table.writer import MetadataTableWriter, metadata_table_enabled

__all__ = ["MetadataTableWriter", "metadata_table_enabled"]
