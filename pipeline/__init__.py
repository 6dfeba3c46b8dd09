"""The PySpark side: Spark jobs write copy-on-write Hudi tables through the metastore and read them
planned from its file slices (docs/pipeline.md).

    from pipeline import write, read
    ts = write(df, table="db.trips", operation="upsert", record_key="id", precombine_field="ts",
               partition_by=["dt"], metastore="thrift://127.0.0.1:9083")
    read(spark, "db.trips", metastore="thrift://127.0.0.1:9083", filters=[("dt", "=", "2024-01-01")])
    register(spark)   # Spark 4 SQL over the tables: spark.table, SELECT, DESCRIBE, SHOW PARTITIONS
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .compaction import compact
    from .datasource import register
    from .errors import HudiWriteError, SchemaEvolutionError, WriteConflictError
    from .hudi_table import HudiTable
    from .log_compaction import log_compact
    from .reader import read
    from .writer import write

__all__ = ["write", "read", "compact", "log_compact", "register", "HudiTable", "HudiWriteError", "SchemaEvolutionError",
           "WriteConflictError"]
# imported on first use: the Python workers of a read import only the modules they run
_HOME = {"write": "writer", "read": "reader", "compact": "compaction", "log_compact": "log_compaction",
         "register": "datasource",
         "HudiTable": "hudi_table",
         "HudiWriteError": "errors", "SchemaEvolutionError": "errors", "WriteConflictError": "errors"}


def __getattr__(name: str):
    if name in _HOME:
        return getattr(importlib.import_module(f".{_HOME[name]}", __name__), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
