"""Write options (Hudi's `hoodie.*` names) with their defaults."""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from hudi_format.config_keys import (
    ARCHIVE_MAX_COMMITS,
    ARCHIVE_MIN_COMMITS,
    CLEAN_AUTOMATIC,
    CLEANER_COMMITS_RETAINED,
    CLEANER_FILE_VERSIONS_RETAINED,
    CLEANER_HOURS_RETAINED,
    CLEANER_POLICY,
    CLIENT_HEARTBEAT_INTERVAL_MS,
    CLIENT_HEARTBEAT_TOLERABLE_MISSES,
    CLUSTERING_INLINE,
    CLUSTERING_MAX_COMMITS,
    CLUSTERING_SMALL_FILE_LIMIT,
    CLUSTERING_SORT_COLUMNS,
    CLUSTERING_TARGET_FILE_MAX_BYTES,
    COMBINE_BEFORE_DELETE,
    COMBINE_BEFORE_INSERT,
    COMBINE_BEFORE_UPSERT,
    COMPACT_INLINE,
    COMPACT_LOGFILE_SIZE_THRESHOLD,
    COMPACT_MAX_DELTA_COMMITS,
    COMPACT_MAX_DELTA_SECONDS,
    COMPACT_TRIGGER_STRATEGY,
    COMPACTION_TRIGGERS,
    COMPLEX_KEYGEN_NEW_ENCODING,
    COPYONWRITE_RECORD_SIZE_ESTIMATE,
    DRIVER_WRITE_MAX_BYTES,
    DRIVER_WRITE_MAX_RECORDS,
    HIVE_STYLE_PARTITIONING,
    HIVE_SYNC_AS_DATASOURCE,
    INDEX_TYPE,
    LOG_COMPACT_BLOCKS_THRESHOLD,
    LOG_COMPACT_ENABLE,
    LOG_COMPACT_INLINE,
    METADATA_ENABLE,
    PARQUET_MAX_FILE_SIZE,
    PARQUET_SMALL_FILE_LIMIT,
    PARTITIONS_TO_DELETE,
    RECORD_INDEX_UPDATE_PARTITION_PATH,
    STORAGE_PATH,
    STORAGE_STRATEGY_CLASS,
    TABLE_PREFIX,
    URL_ENCODE_PARTITIONING,
    WRITE_TABLE_TYPE,
    default_of,
    shuffle_parallelism,
)

# write options the pipeline stores in the config of a table it creates: the server runs the table's
# services by them (docs/pipeline.md, Table services)
TABLE_SERVICE_KEYS = (METADATA_ENABLE, COMPACT_INLINE, COMPACT_MAX_DELTA_COMMITS, CLEAN_AUTOMATIC, CLEANER_POLICY,
                      CLEANER_COMMITS_RETAINED, CLEANER_FILE_VERSIONS_RETAINED, CLEANER_HOURS_RETAINED,
                      ARCHIVE_MIN_COMMITS, ARCHIVE_MAX_COMMITS, CLUSTERING_INLINE, CLUSTERING_MAX_COMMITS,
                      CLUSTERING_SMALL_FILE_LIMIT, CLUSTERING_TARGET_FILE_MAX_BYTES, CLUSTERING_SORT_COLUMNS,
                      LOG_COMPACT_INLINE, LOG_COMPACT_ENABLE, LOG_COMPACT_BLOCKS_THRESHOLD,
                      # how long a claimed compaction or clustering lives without its executor's heartbeat
                      CLIENT_HEARTBEAT_INTERVAL_MS, CLIENT_HEARTBEAT_TOLERABLE_MISSES)

COMPACTION_KEYS = (COMPACT_TRIGGER_STRATEGY, COMPACT_MAX_DELTA_SECONDS, COMPACT_LOGFILE_SIZE_THRESHOLD)

OPERATIONS = ("insert", "upsert", "delete", "bulk_insert", "insert_overwrite", "insert_overwrite_table",
              "delete_partition")
INDEX_TYPES = ("RECORD_INDEX", "SIMPLE")
TABLE_TYPES = ("COPY_ON_WRITE", "MERGE_ON_READ")
CLEANER_POLICIES = ("KEEP_LATEST_COMMITS", "KEEP_LATEST_FILE_VERSIONS", "KEEP_LATEST_BY_HOURS")
REPLACE_OPERATIONS = ("insert_overwrite", "insert_overwrite_table", "delete_partition")


def _flag(options: dict, key: str) -> bool:
    v = options.get(key)
    return default_of(key) == "true" if v is None else str(v).strip().lower() == "true"


def _int(options: dict, key: str) -> int:
    v = options.get(key)
    try:
        return int(default_of(key)) if v is None else int(v)
    except ValueError:
        raise ValueError(f"option {key} must be an integer, not {v!r}") from None


@dataclass
class WriteConfig:
    operation: str
    hive_style: bool = False
    url_encode: bool = False
    max_file_size: int = int(default_of(PARQUET_MAX_FILE_SIZE))
    small_file_limit: int = int(default_of(PARQUET_SMALL_FILE_LIMIT))
    record_size_estimate: int = int(default_of(COPYONWRITE_RECORD_SIZE_ESTIMATE))
    combine: bool = True
    heartbeat_interval_ms: int = int(default_of(CLIENT_HEARTBEAT_INTERVAL_MS))
    heartbeat_tolerable_misses: int = int(default_of(CLIENT_HEARTBEAT_TOLERABLE_MISSES))
    partitions_to_delete: list[str] | None = None
    sync_as_datasource: bool = True  # as hive-sync: Spark needs the Hudi bundle to read the table
    shuffle_partitions: int | None = None
    index_type: str = "RECORD_INDEX"  # of a table this write creates: RECORD_INDEX or SIMPLE
    update_partition_path: bool | None = None  # None: the table's setting
    table_properties: dict[str, str] = field(default_factory=dict)
    storage_strategy: str | None = None  # hoodie.storage.strategy.class (RFC-60); None: unset
    storage_path: str | None = None  # hoodie.storage.path
    table_type: str | None = None  # hoodie.datasource.write.table.type; None: the table's (new: COW)
    driver_max_records: int = int(default_of(DRIVER_WRITE_MAX_RECORDS))  # writer.py `_on_driver`
    driver_max_bytes: int = int(default_of(DRIVER_WRITE_MAX_BYTES))

    def action(self, merge_on_read: bool = False) -> str:
        """The instant's action: replacecommit for the overwrites, else commit (deltacommit on a
        merge-on-read table)."""
        if self.operation in REPLACE_OPERATIONS:
            return "replacecommit"
        return "deltacommit" if merge_on_read else "commit"

    @property
    def heartbeat_timeout_s(self) -> int:
        return max(1, math.ceil(self.heartbeat_interval_ms * (self.heartbeat_tolerable_misses + 1) / 1000))

    @classmethod
    def from_options(cls, operation: str, options: dict | None) -> WriteConfig:
        op = (operation or "").strip().lower()
        if op not in OPERATIONS:
            raise ValueError(f"unknown write operation {operation!r}; one of {', '.join(OPERATIONS)}")
        o = {str(k): v for k, v in (options or {}).items()}
        # combine by default: upsert and delete, not insert
        combine_key = {"upsert": COMBINE_BEFORE_UPSERT, "delete": COMBINE_BEFORE_DELETE}.get(op, COMBINE_BEFORE_INSERT)
        parts = o.get(PARTITIONS_TO_DELETE)
        shuffle = o.get(shuffle_parallelism(op))
        cfg = cls(
            operation=op,
            hive_style=_flag(o, HIVE_STYLE_PARTITIONING),
            url_encode=_flag(o, URL_ENCODE_PARTITIONING),
            max_file_size=_int(o, PARQUET_MAX_FILE_SIZE),
            small_file_limit=_int(o, PARQUET_SMALL_FILE_LIMIT),
            record_size_estimate=_int(o, COPYONWRITE_RECORD_SIZE_ESTIMATE),
            combine=_flag(o, combine_key),
            heartbeat_interval_ms=_int(o, CLIENT_HEARTBEAT_INTERVAL_MS),
            heartbeat_tolerable_misses=_int(o, CLIENT_HEARTBEAT_TOLERABLE_MISSES),
            partitions_to_delete=[p.strip() for p in str(parts).split(",") if p.strip()] if parts else None,
            sync_as_datasource=_flag(o, HIVE_SYNC_AS_DATASOURCE),
            shuffle_partitions=int(shuffle) if shuffle else None,
            index_type=str(o.get(INDEX_TYPE) or "RECORD_INDEX").strip().upper(),
            update_partition_path=(None if o.get(RECORD_INDEX_UPDATE_PARTITION_PATH) is None
                                   else _flag(o, RECORD_INDEX_UPDATE_PARTITION_PATH)),
            # the table config's keys, whether the server writes its metadata table (docs/hudi.md),
            # when it schedules compactions (merge-on-read), how it cleans and archives (table services)
            # and a new table's record key format (hudi_format/key_generator.py)
            table_properties={k: str(v) for k, v in o.items()
                              if k.startswith(TABLE_PREFIX) or k in TABLE_SERVICE_KEYS or k in COMPACTION_KEYS
                              or k == COMPLEX_KEYGEN_NEW_ENCODING},
            storage_strategy=o.get(STORAGE_STRATEGY_CLASS),
            storage_path=o.get(STORAGE_PATH),
            table_type=str(o[WRITE_TABLE_TYPE]).strip().upper() if o.get(WRITE_TABLE_TYPE) else None,
            driver_max_records=_int(o, DRIVER_WRITE_MAX_RECORDS),
            driver_max_bytes=_int(o, DRIVER_WRITE_MAX_BYTES),
        )
        if cfg.table_type is not None and cfg.table_type not in TABLE_TYPES:
            raise ValueError(f"{WRITE_TABLE_TYPE} must be one of {', '.join(TABLE_TYPES)}, not {cfg.table_type!r}")
        if cfg.index_type not in INDEX_TYPES:
            raise ValueError(f"{INDEX_TYPE} must be one of {', '.join(INDEX_TYPES)}, not {cfg.index_type!r}")
        policy = str(o.get(CLEANER_POLICY) or default_of(CLEANER_POLICY)).strip().upper()
        if policy not in CLEANER_POLICIES:
            raise ValueError(f"{CLEANER_POLICY} must be one of {', '.join(CLEANER_POLICIES)}, not {policy!r}")
        trigger = str(o.get(COMPACT_TRIGGER_STRATEGY) or default_of(COMPACT_TRIGGER_STRATEGY)).strip().upper()
        if trigger not in COMPACTION_TRIGGERS:
            raise ValueError(f"{COMPACT_TRIGGER_STRATEGY} must be one of {', '.join(COMPACTION_TRIGGERS)}, "
                             f"not {o.get(COMPACT_TRIGGER_STRATEGY)!r}")
        for key in (COMPACT_MAX_DELTA_SECONDS, COMPACT_LOGFILE_SIZE_THRESHOLD):
            if not str(o.get(key) or default_of(key)).strip().isdigit():
                raise ValueError(f"{key} must be a whole number, not {o.get(key)!r}")

        for key in (CLEANER_COMMITS_RETAINED, CLEANER_FILE_VERSIONS_RETAINED, CLEANER_HOURS_RETAINED,
                    ARCHIVE_MIN_COMMITS, ARCHIVE_MAX_COMMITS):
            if not str(o.get(key) or default_of(key)).strip().isdigit() or _int(o, key) < 1:
                raise ValueError(f"{key} must be a whole number of at least 1, not {o.get(key)!r}")
        for key, least in ((CLUSTERING_MAX_COMMITS, 1), (CLUSTERING_SMALL_FILE_LIMIT, 0),
                           (CLUSTERING_TARGET_FILE_MAX_BYTES, 1)):
            if not str(o.get(key) or default_of(key)).strip().isdigit() or _int(o, key) < least:
                raise ValueError(f"{key} must be a whole number of at least {least}, not {o.get(key)!r}")
        for key in (CLUSTERING_INLINE, LOG_COMPACT_INLINE, LOG_COMPACT_ENABLE):
            if str(o.get(key) or "false").strip().lower() not in ("true", "false"):
                raise ValueError(f"{key} must be true or false, not {o.get(key)!r}")
        if not str(o.get(LOG_COMPACT_BLOCKS_THRESHOLD) or default_of(LOG_COMPACT_BLOCKS_THRESHOLD)).strip().isdigit() \
                or _int(o, LOG_COMPACT_BLOCKS_THRESHOLD) < 1:
            raise ValueError(f"{LOG_COMPACT_BLOCKS_THRESHOLD} must be a whole number of at least 1, "
                             f"not {o.get(LOG_COMPACT_BLOCKS_THRESHOLD)!r}")
        for key, value in ((DRIVER_WRITE_MAX_RECORDS, cfg.driver_max_records),
                           (DRIVER_WRITE_MAX_BYTES, cfg.driver_max_bytes)):
            if value < 0:
                raise ValueError(f"{key} must be a whole number, not {o.get(key)!r}")
        if cfg.max_file_size <= 0 or cfg.record_size_estimate <= 0:
            raise ValueError(f"{PARQUET_MAX_FILE_SIZE} and {COPYONWRITE_RECORD_SIZE_ESTIMATE} must be > 0")
        return cfg
