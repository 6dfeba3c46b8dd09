"""Where new records go (Hudi's UpsertPartitioner): first into small file groups of their partition
(base file below `hoodie.parquet.small.file.limit`) up to `hoodie.parquet.max.file.size`, then into
new file groups of at most that size. Records pick a bucket by the hash of their key, weighted by
the bucket's share of the partition's inserts, so the assignment needs no further pass."""

from __future__ import annotations

import math
from dataclasses import dataclass

from pyspark.sql import functions as F

from .base_file import new_file_id

_HASH_RANGE = 1 << 30


@dataclass
class Bucket:
    partition_path: str
    file_id: str
    records: int
    base_rel: str | None = None  # an existing small file group's current base file
    base_instant: str | None = None


def plan(insert_counts: dict[str, int], slices_by_partition: dict[str, list], *, max_file_size: int,
         small_file_limit: int, avg_record_size: int, use_small_files: bool) -> list[Bucket]:
    per_file = max(1, max_file_size // max(1, avg_record_size))
    out: list[Bucket] = []
    for ppath in sorted(insert_counts):
        remaining = int(insert_counts[ppath])
        if remaining <= 0:
            continue
        if use_small_files:
            small = sorted((s for s in slices_by_partition.get(ppath, []) if s.base_file is not None
                            and s.base_file.size < small_file_limit), key=lambda s: (s.base_file.size, s.file_id))
            for s in small:
                cap = (max_file_size - s.base_file.size) // max(1, avg_record_size)
                if cap <= 0 or remaining <= 0:
                    continue
                take = min(cap, remaining)
                rel = f"{ppath}/{s.base_file.name}" if ppath else s.base_file.name
                out.append(Bucket(ppath, s.file_id, take, rel, s.base_instant))
                remaining -= take
        if remaining > 0:
            k = math.ceil(remaining / per_file)
            for i in range(k):
                share = remaining // k + (1 if i < remaining % k else 0)
                out.append(Bucket(ppath, new_file_id(), share))
    return out


def assign(spark, records, buckets: list[Bucket]):
    """`records` (no `_fg` yet) with `_fg` chosen among their partition's buckets."""
    rows: list[tuple[str, float, float, str]] = []
    totals: dict[str, int] = {}
    for b in buckets:
        totals[b.partition_path] = totals.get(b.partition_path, 0) + b.records
    acc: dict[str, float] = {}
    last = {b.partition_path: i for i, b in enumerate(buckets)}
    for i, b in enumerate(buckets):
        lo = acc.get(b.partition_path, 0.0)
        hi = 2.0 if last[b.partition_path] == i else lo + b.records / totals[b.partition_path]
        acc[b.partition_path] = hi
        rows.append((b.partition_path, float(lo), float(hi), b.file_id))
    table = spark.createDataFrame(rows, "_bp string, _lo double, _hi double, _fg string")
    h = (F.pmod(F.xxhash64("_hoodie_record_key"), F.lit(_HASH_RANGE)) / F.lit(float(_HASH_RANGE)))
    keyed = records.withColumn("_h", h)
    joined = keyed.join(F.broadcast(table), (keyed["_hoodie_partition_path"] == table["_bp"]) &
                        (keyed["_h"] >= table["_lo"]) & (keyed["_h"] < table["_hi"]), "inner")
    return joined.drop("_bp", "_lo", "_hi", "_h")
