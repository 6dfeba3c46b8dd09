"""Hive Metastore services (RFC-36 table and partition services): databases, tables, partitions,
the partition filter grammar, statistics, functions, locks."""
