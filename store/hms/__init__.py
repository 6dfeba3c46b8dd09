"""Hive Metastore services (RFC-36 table and partition services), one sub-package per concept, each
entered through its `__init__` (its door; nothing outside a sub-package imports its modules):

* `common`: Hive's name and type rules, column widths, locations, parameter and descriptor rows,
  the basic statistics Hive keeps in parameters, answers as Thrift bytes, the metastore's facts
* `partition_filter`: Hive's filter grammar, compiled to SQL over partition key values
* `notification_log`: metastore events in Hive's NOTIFICATION_LOG form
* `catalog`: catalogs, databases, tables, table filters
* `partitions`: partitions, their names, key values, pruning, alteration, partition events
* `stats`: Hive's column statistics and their aggregation
* `access`: privileges, roles, what authorization needs to know, delegation tokens
* `constraints`: table constraints
* `functions`: user-defined functions
* `txn`: Hive's lock manager and transactions

Each imports only those listed before it (docs/architecture.md has what each may import).
"""
