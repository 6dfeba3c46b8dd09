"""Object-style access on top of `write` / `read` (which stay the stable entry points).

    t = HudiTable(spark, "db.trips", metastore="thrift://127.0.0.1:9083")   # security=Security(...): log-in
    t.write(df, "upsert", record_key="id", precombine_field="ts", partition_by="dt")
    t.read(filters=[("dt", "=", "2024-01-01")]); t.instants(); t.partitions("dt > '2024'")
"""

from __future__ import annotations

from client import HudiCatalog, Security

from .reader import read
from .table import split_name
from .writer import DEFAULT_METASTORE, write


class HudiTable:
    def __init__(self, spark, table: str, metastore: str = DEFAULT_METASTORE, security: Security | None = None):
        self.spark, self.table, self.metastore, self.security = spark, table, metastore, security
        self.db, self.name = split_name(table)

    def write(self, df, operation: str = "upsert", **kwargs) -> str:
        return write(df, self.table, operation, metastore=self.metastore, security=self.security, **kwargs)

    def read(self, **kwargs):
        return read(self.spark, self.table, metastore=self.metastore, security=self.security, **kwargs)

    def instants(self, completed_only: bool = True) -> list[str]:
        """Instant times of the timeline, oldest first."""
        with HudiCatalog(self.metastore, security=self.security) as c:
            return [i.ts for i in c.list_instants(self.db, self.name,
                                                         states=["COMPLETED"] if completed_only else None)]

    def partitions(self, filter: str | None = None) -> list[str]:  # Hive's word
        with HudiCatalog(self.metastore, security=self.security) as c:
            return c.get_hudi_partitions(self.db, self.name, filter)
