"""Tagging with the record-level index (RFC-08): incoming records find their file groups by key in
the metastore's index (`lookup_record_keys`, in blocks of up to 200,000 keys), so the cost follows
the batch, not the table, and no base file is read to find keys. A batch of up to DRIVER_KEYS keys
is looked up by the driver (one Spark job collects its keys; the answer is broadcast to the join);
a larger one by the executors, each for its part of the keys.

Keys are unique across the table (Hudi's global record index). A record whose partition path
changed moves (hoodie.record.index.update.partition.path=true, the default): it is deleted from
its old file group and inserted into the new partition; with false it is updated where it lives.
"""

from __future__ import annotations

import pyarrow as pa
from pyspark.sql import DataFrame
from pyspark.sql import functions as F

from hudi_format.record_key_codec import encode_keys

from .file_group_writer import executor_client

LOOKUP_BATCH = 200_000
DRIVER_KEYS = 500_000
LOCATIONS_DDL = "_hoodie_record_key string, _old_ppath string, _fg string"
_LOCATIONS = pa.schema([("_hoodie_record_key", pa.string()), ("_old_ppath", pa.string()), ("_fg", pa.string())])


def _locate(client, db: str, table: str, keys: list[str]):
    """Record batches of the keys the index holds: key, its partition path, its file id."""
    for start in range(0, len(keys), LOOKUP_BATCH):
        chunk = keys[start:start + LOOKUP_BATCH]
        r = client.call("lookup_record_keys", db, table, encode_keys(chunk))
        hits = [(k, g) for k, g in zip(chunk, r.fileGroupOfKey) if g >= 0]
        yield pa.RecordBatch.from_arrays(
            [pa.array([k for k, _ in hits], pa.string()),
             pa.array([r.partitionPaths[g] for _, g in hits], pa.string()),
             pa.array([r.fileIds[g] for _, g in hits], pa.string())], schema=_LOCATIONS)


class _IndexLookup:
    """Picklable function for `mapInArrow`: the located keys of each batch of record keys."""

    def __init__(self, metastore: str, db: str, table: str):
        self.metastore, self.db, self.table = metastore, db, table

    def __call__(self, batches):
        client = executor_client(self.metastore)
        for batch in batches:
            yield from _locate(client, self.db, self.table, batch.column(0).to_pylist())


def tag(records: DataFrame, metastore: str, db: str, table: str, driver_keys: int = DRIVER_KEYS) -> DataFrame:
    """`records` (one per key) with `_old_ppath` and `_fg`: where the key lives now (null: new).
    Up to `driver_keys` keys are looked up by the driver, more by the executors."""
    keys = records.select("_hoodie_record_key")
    if driver_keys > 0:
        few = keys.limit(driver_keys + 1).toArrow().column(0).to_pylist()
        if len(few) <= driver_keys:
            from adapter.client import HudiMetastoreClient

            with HudiMetastoreClient(metastore) as client:
                found = pa.Table.from_batches(list(_locate(client, db, table, few)), schema=_LOCATIONS)
            located = records.sparkSession.createDataFrame(found, LOCATIONS_DDL)
            return records.join(F.broadcast(located), on="_hoodie_record_key", how="left")
    located = keys.mapInArrow(_IndexLookup(metastore, db, table), LOCATIONS_DDL)
    return records.join(located, on="_hoodie_record_key", how="left")


def route(tagged: DataFrame, operation: str, overwritten: list[str],
          update_partition_path: bool) -> tuple[DataFrame | None, DataFrame | None]:
    """(records to place: `_fg` set for updates in place, null for inserts; deletes: records with
    `_hoodie_partition_path`/`_fg` of the file group they leave), without `_old_ppath`."""
    found = F.col("_fg").isNotNull()
    old = F.col("_old_ppath")
    no_fg = F.lit(None).cast("string")
    if operation == "delete":
        placed, leaving = None, tagged.where(found)
    elif operation == "insert_overwrite":  # the overwritten partitions' file groups are replaced
        placed = tagged.withColumn("_fg", no_fg)
        leaving = tagged.where(found & ~old.isin(overwritten))
    elif update_partition_path:
        same = old == F.col("_hoodie_partition_path")
        placed = tagged.withColumn("_fg", F.when(found & same, F.col("_fg")).otherwise(no_fg))
        leaving = tagged.where(found & ~same)
    else:
        placed = tagged.withColumn("_hoodie_partition_path", F.coalesce(old, F.col("_hoodie_partition_path")))
        leaving = None
    if leaving is not None:
        leaving = leaving.withColumn("_hoodie_partition_path", old).drop("_old_ppath")
    return (placed.drop("_old_ppath") if placed is not None else None), leaving


def touched_partitions(tagged: DataFrame) -> list[str]:
    """Partitions of the file groups the batch's existing keys live in."""
    return sorted(r[0] for r in tagged.where(F.col("_fg").isNotNull()).select("_old_ppath").distinct().collect())
