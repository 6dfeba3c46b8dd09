"""SIMPLE index lookup (tables created with hoodie.index.type=SIMPLE, or before the record index):
tags incoming records with the file group that holds their key now.

The keys are read from the latest base files of the affected partitions, on executors (only
`_hoodie_record_key` is read), and joined with the batch on (partition path, record key): keys are
unique per partition, as Hudi's non-global indexes keep them. Tables keeping the record-level index
are tagged by `pipeline/index_tagging.py` instead.
"""

from __future__ import annotations

import pyarrow as pa

from .base_file import read_base_file
from .storage import FileLayout

KEYS_DDL = "_hoodie_record_key string, _hoodie_partition_path string, _fg string"


class _KeyReader:
    def __init__(self, layout: FileLayout):
        self.layout = layout

    def __call__(self, batches):
        for batch in batches:
            for ppath, fid, rel in zip(*(batch.column(i).to_pylist() for i in range(3))):
                keys = read_base_file(self.layout.location(rel), columns=["_hoodie_record_key"]).column(0)
                n = len(keys)
                yield pa.RecordBatch.from_arrays(
                    [keys.combine_chunks().cast(pa.string()), pa.array([ppath] * n, pa.string()),
                     pa.array([fid] * n, pa.string())], names=["_hoodie_record_key", "_hoodie_partition_path", "_fg"])


def existing_keys(spark, layout: FileLayout, slices):
    """DataFrame of (record key, partition path, file id) of the slices' base files."""
    rows = [(s.partition_path, s.file_id,
             f"{s.partition_path}/{s.base_file.name}" if s.partition_path else s.base_file.name)
            for s in slices if s.base_file is not None]
    files = spark.createDataFrame(rows, "ppath string, fid string, rel string")
    n = max(1, min(len(rows), spark.sparkContext.defaultParallelism * 2))
    return files.repartition(n).mapInArrow(_KeyReader(layout), KEYS_DDL)


def tag(records, keys):
    """`records` with `_fg`: the file group of the key, or null for new records."""
    return records.join(keys, on=["_hoodie_partition_path", "_hoodie_record_key"], how="left")
