"""Tagging with the record-level index (RFC-08): incoming records find their file groups by key in
the metastore's index (`lookup_record_keys`), so the cost follows the batch, not the table, and no
base file is read to find keys. Each partition of the records looks its keys up in blocks of up to
LOOKUP_BATCH keys and carries the answer on (one narrow stage: no collect to the driver, no join,
no shuffle).

Keys are unique across the table (Hudi's global record index). A record whose partition path
changed moves (hoodie.record.index.update.partition.path=true, the default): it is deleted from
its old file group and inserted into the new partition; with false it is updated where it lives.
"""

from __future__ import annotations

import pyarrow as pa
import pyarrow.compute as pc
from pyspark.sql import DataFrame
from pyspark.sql import functions as F
from pyspark.sql.types import StringType, StructField, StructType

from hudi_format.record_key_codec import encode_keys

from .file_group_writer import executor_client

LOOKUP_BATCH = 100_000  # keys per lookup call (and records a task holds while it waits for one)


class _Tagger:
    """Picklable function for `mapInArrow`: each batch of records with `_old_ppath` and `_fg`."""

    def __init__(self, metastore: str, db: str, table: str, key_pos: int, lookup_batch: int, security=None):
        self.metastore, self.db, self.table = metastore, db, table
        self.security = security
        self.key_pos, self.lookup_batch = key_pos, lookup_batch

    def __call__(self, batches):
        client = executor_client(self.metastore, self.security)
        pending: list[pa.RecordBatch] = []
        held = 0
        for batch in batches:
            while batch.num_rows:  # a block never exceeds lookup_batch keys
                part = batch.slice(0, self.lookup_batch - held)
                batch = batch.slice(part.num_rows)
                pending.append(part)
                held += part.num_rows
                if held == self.lookup_batch:
                    yield from self._located(client, pending)
                    pending, held = [], 0
        if held:
            yield from self._located(client, pending)

    def _located(self, client, batches: list[pa.RecordBatch]):
        yield from locate(client, self.db, self.table, pa.Table.from_batches(batches), self.key_pos).to_batches()


def locate(client, db: str, table: str, t: pa.Table, key_pos: int) -> pa.Table:
    """`t` with `_old_ppath` and `_fg` of each record's key (column `key_pos`), in one lookup."""
    r = client.locate_record_keys(db, table, encode_keys(t.column(key_pos).to_pylist()))
    group = pa.array(r.file_group_of_key, pa.int32())
    group = pc.if_else(pc.less(group, 0), pa.scalar(None, pa.int32()), group)  # unknown key: null
    return (t.append_column("_old_ppath", pa.array(r.partition_paths, pa.string()).take(group))
            .append_column("_fg", pa.array(r.file_ids, pa.string()).take(group)))


def tag(records: DataFrame, metastore: str, db: str, table: str, lookup_batch: int = LOOKUP_BATCH,
        security=None) -> DataFrame:
    """`records` (one per key) with `_old_ppath` and `_fg`: where the key lives now (null: new)."""
    schema = tagged_schema(records.schema)
    tagger = _Tagger(metastore, db, table, records.columns.index("_hoodie_record_key"), max(1, lookup_batch),
                     security)
    return records.mapInArrow(tagger, schema)


def tagged_schema(schema: StructType) -> StructType:
    """The records' schema with `tag`'s two columns."""
    return StructType(schema.fields + [StructField("_old_ppath", StringType()), StructField("_fg", StringType())])


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
