"""The PySpark side: Spark jobs write copy-on-write Hudi tables through the metastore and read them
planned from its file slices (docs/pipeline.md).

    from pipeline import write, read
    ts = write(df, table="db.trips", operation="upsert", record_key="id", precombine_field="ts",
               partition_by=["dt"], metastore="thrift://127.0.0.1:9083")
    read(spark, "db.trips", metastore="thrift://127.0.0.1:9083", filters=[("dt", "=", "2024-01-01")])
    register(spark)   # Spark 4 SQL over the tables: spark.table, SELECT, DESCRIBE, SHOW PARTITIONS
"""

from .datasource import register
from .errors import HudiWriteError, SchemaEvolutionError, WriteConflictError
from .hudi_table import HudiTable
from .reader import read
from .writer import write

__all__ = ["write", "read", "register", "HudiTable", "HudiWriteError", "SchemaEvolutionError", "WriteConflictError"]
