"""Catalogs, databases and tables (RFC-36 table service) as the Hive Metastore serves them.

`TableService` is the entry point: databases (`DatabaseService`, database_service.py) and catalogs
(`CatalogService`, catalog_service.py) behind it, alter_table (table_alteration.py), the statement
that reads whole tables and get_table's answer as Thrift bytes (table_rows.py);
`TableNamesByFilter` answers get_table_names_by_filter (table_filter.py). `database_is(name)` is
the condition "this row's database is <name>" other packages' statements use.

The door of store/hms/catalog: other packages import these names from here, never its modules.
Imports store/hms's `common`, `notification_log` and `partition_filter`.
"""

from store.hms.catalog.catalog_service import CatalogService
from store.hms.catalog.database_service import DatabaseService, database_is
from store.hms.catalog.table_filter import TableNamesByFilter, compile_table_filter
from store.hms.catalog.table_service import TableService

__all__ = ["CatalogService", "DatabaseService", "TableNamesByFilter", "TableService", "compile_table_filter",
           "database_is"]
