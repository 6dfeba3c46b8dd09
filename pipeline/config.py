"""Write options (Hudi's `hoodie.*` names) with their defaults."""

from __future__ import annotations

import math
from dataclasses import dataclass, field

OPERATIONS = ("insert", "upsert", "delete", "bulk_insert", "insert_overwrite", "insert_overwrite_table",
              "delete_partition")
INDEX_TYPES = ("RECORD_INDEX", "SIMPLE")
UPDATE_PARTITION_PATH = "hoodie.record.index.update.partition.path"
REPLACE_OPERATIONS = ("insert_overwrite", "insert_overwrite_table", "delete_partition")


def _flag(options: dict, key: str, default: bool) -> bool:
    v = options.get(key)
    return default if v is None else str(v).strip().lower() == "true"


def _int(options: dict, key: str, default: int) -> int:
    v = options.get(key)
    try:
        return default if v is None else int(v)
    except ValueError:
        raise ValueError(f"option {key} must be an integer, not {v!r}") from None


@dataclass
class WriteConfig:
    operation: str
    hive_style: bool = False
    url_encode: bool = False
    max_file_size: int = 120 * 1024 * 1024
    small_file_limit: int = 100 * 1024 * 1024
    record_size_estimate: int = 1024
    combine: bool = True
    heartbeat_interval_ms: int = 60_000
    heartbeat_tolerable_misses: int = 2
    partitions_to_delete: list[str] | None = None
    sync_as_datasource: bool = True  # as hive-sync: Spark needs the Hudi bundle to read the table
    shuffle_partitions: int | None = None
    index_type: str = "RECORD_INDEX"  # of a table this write creates: RECORD_INDEX or SIMPLE
    update_partition_path: bool | None = None  # None: the table's setting
    table_properties: dict[str, str] = field(default_factory=dict)
    storage_strategy: str | None = None  # hoodie.storage.strategy.class (RFC-60); None: unset
    storage_path: str | None = None  # hoodie.storage.path

    @property
    def action(self) -> str:
        return "replacecommit" if self.operation in REPLACE_OPERATIONS else "commit"

    @property
    def heartbeat_timeout_s(self) -> int:
        return max(1, math.ceil(self.heartbeat_interval_ms * (self.heartbeat_tolerable_misses + 1) / 1000))

    @classmethod
    def from_options(cls, operation: str, options: dict | None) -> WriteConfig:
        op = (operation or "").strip().lower()
        if op not in OPERATIONS:
            raise ValueError(f"unknown write operation {operation!r}; one of {', '.join(OPERATIONS)}")
        o = {str(k): v for k, v in (options or {}).items()}
        combine_key = {"upsert": "hoodie.combine.before.upsert", "delete": "hoodie.combine.before.delete"}.get(
            op, "hoodie.combine.before.insert")
        parts = o.get("hoodie.datasource.write.partitions.to.delete")
        shuffle = o.get("hoodie.upsert.shuffle.parallelism") if op == "upsert" else \
            o.get(f"hoodie.{op}.shuffle.parallelism")
        cfg = cls(
            operation=op,
            hive_style=_flag(o, "hoodie.datasource.write.hive_style_partitioning", False),
            url_encode=_flag(o, "hoodie.datasource.write.partitionpath.urlencode", False),
            max_file_size=_int(o, "hoodie.parquet.max.file.size", 120 * 1024 * 1024),
            small_file_limit=_int(o, "hoodie.parquet.small.file.limit", 100 * 1024 * 1024),
            record_size_estimate=_int(o, "hoodie.copyonwrite.record.size.estimate", 1024),
            combine=_flag(o, combine_key, op in ("upsert", "delete")),
            heartbeat_interval_ms=_int(o, "hoodie.client.heartbeat.interval_in_ms", 60_000),
            heartbeat_tolerable_misses=_int(o, "hoodie.client.heartbeat.tolerable.misses", 2),
            partitions_to_delete=[p.strip() for p in str(parts).split(",") if p.strip()] if parts else None,
            sync_as_datasource=_flag(o, "hoodie.datasource.hive_sync.sync_as_datasource", True),
            shuffle_partitions=int(shuffle) if shuffle else None,
            index_type=str(o.get("hoodie.index.type") or "RECORD_INDEX").strip().upper(),
            update_partition_path=(None if o.get(UPDATE_PARTITION_PATH) is None
                                   else _flag(o, UPDATE_PARTITION_PATH, True)),
            table_properties={k: str(v) for k, v in o.items() if k.startswith("hoodie.table.")},
            storage_strategy=o.get("hoodie.storage.strategy.class"),
            storage_path=o.get("hoodie.storage.path"),
        )
        if cfg.index_type not in INDEX_TYPES:
            raise ValueError(f"hoodie.index.type must be one of {', '.join(INDEX_TYPES)}, not {cfg.index_type!r}")
        if cfg.max_file_size <= 0 or cfg.record_size_estimate <= 0:
            raise ValueError("hoodie.parquet.max.file.size and hoodie.copyonwrite.record.size.estimate must be > 0")
        return cfg
