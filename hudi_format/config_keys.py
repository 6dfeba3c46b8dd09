"""Every `hoodie.*` key the project reads or writes, each named once with its default (where it has
one) and its meaning, as hudi-rs's `config/table.rs` names Hudi's table configs.

Code outside this module spells a key only through these constants (tests may spell them). A
default is the value as `hoodie.properties` or a write option spells it; `default_of(key)` gives it.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class ConfigKey:
    key: str
    default: str | None  # None: no default
    meaning: str


KEYS: dict[str, ConfigKey] = {}


def _key(key: str, meaning: str, default: str | None = None) -> str:
    if key in KEYS:
        raise ValueError(f"{key} is registered twice")
    KEYS[key] = ConfigKey(key, default, meaning)
    return key


def default_of(key: str) -> str:
    """The registered default of `key` (KeyError for a key that has none)."""
    value = KEYS[key].default
    if value is None:
        raise KeyError(f"{key} has no default")
    return value


PREFIX = "hoodie."  # every key's prefix
TABLE_PREFIX = "hoodie.table."  # the table config's own keys (a write passes them to the table it creates)
PROPERTIES_FILE = "hoodie.properties"  # not a key: the table config's file under `.hoodie/`
AVRO_NAMESPACE_PREFIX = "hoodie."  # not a key: Hudi's Avro writer schema is in namespace hoodie.<table>

# --- the table config (hoodie.properties) --------------------------------------------------------
TABLE_NAME = _key("hoodie.table.name", "the table's name")
DATABASE_NAME = _key("hoodie.database.name", "the table's database (its checksum takes \"\" when unset)", "")
TABLE_TYPE = _key("hoodie.table.type", "COPY_ON_WRITE or MERGE_ON_READ", "COPY_ON_WRITE")
TABLE_VERSION = _key("hoodie.table.version", "the table format version: 6 (Hudi 0.14/0.15), 8 or 9 (Hudi 1.x)",
                     "6")
RECORDKEY_FIELDS = _key("hoodie.table.recordkey.fields", "the record key fields, comma-separated")
PARTITION_FIELDS = _key("hoodie.table.partition.fields",
                        "the partition fields, comma-separated (Hudi writes none for a non-partitioned table)")
PRECOMBINE_FIELD = _key("hoodie.table.precombine.field", "the field whose larger value wins between two records "
                        "of one key")
KEYGENERATOR_CLASS = _key("hoodie.table.keygenerator.class", "the key generator's Java class")
CREATE_SCHEMA = _key("hoodie.table.create.schema", "the Avro writer schema (JSON) the table was created with")
BASE_FILE_FORMAT = _key("hoodie.table.base.file.format", "the base files' format", "PARQUET")
CHECKSUM = _key("hoodie.table.checksum", "CRC32 of `<database>.<table>` (HoodieTableConfig.generateChecksum)")
METADATA_PARTITIONS = _key("hoodie.table.metadata.partitions", "the metadata table's built partitions")
METADATA_PARTITIONS_INFLIGHT = _key("hoodie.table.metadata.partitions.inflight",
                                    "the metadata table's partitions being built")
METADATA_ENABLE = _key("hoodie.metadata.enable",
                       "the storage mirror writes the table's metadata table (its `files` partition); the "
                       "server's default is off (Hudi's writers default to on)")
PAYLOAD_CLASS = _key("hoodie.compaction.payload.class", "the record payload class (the metadata table's: "
                     "HoodieMetadataPayload; Hudi 1.2 writes it in version 8 tables, not in 9)")
TIMELINE_LAYOUT_VERSION = _key("hoodie.timeline.layout.version",
                               "the timeline's file layout: 1 for table version 6, 2 from table version 8")
TIMELINE_PATH = _key("hoodie.timeline.path", "table version 8+: the active timeline's folder under .hoodie",
                     "timeline")
TIMELINE_HISTORY_PATH = _key("hoodie.timeline.history.path",
                             "table version 8+: the archived timeline's folder under the timeline's", "history")
ARCHIVELOG_FOLDER = _key("hoodie.archivelog.folder", "table version 6: the archived timeline's folder under .hoodie",
                         "archived")
HIVE_STYLE_PARTITIONING = _key("hoodie.datasource.write.hive_style_partitioning",
                               "partition paths are `field=value` folders", "false")
URL_ENCODE_PARTITIONING = _key("hoodie.datasource.write.partitionpath.urlencode",
                               "partition values are URL-encoded in partition paths", "false")
DROP_PARTITION_COLUMNS = _key("hoodie.datasource.write.drop.partition.columns",
                              "data files leave out the partition columns", "false")
COMPLEX_KEYGEN_NEW_ENCODING = _key("hoodie.write.complex.keygen.new.encoding",
                                   "a complex key generator with one record key field keys records by the value "
                                   "alone (`5`), not `<field>:<value>` (`id:5`, Hudi's default); in a table's "
                                   "config: the format of its stored keys (hudi_format/key_generator.py)", "false")
POPULATE_META_FIELDS = _key("hoodie.populate.meta.fields",
                            "data files carry the `_hoodie_*` meta columns (false: keys come from the key "
                            "generator)", "true")
STORAGE_STRATEGY_CLASS = _key("hoodie.storage.strategy.class",
                              "RFC-60 storage strategy: `hive`, `object-store` or a Python import path", "hive")
STORAGE_PATH = _key("hoodie.storage.path", "RFC-60: where the `object-store` strategy puts data files")
INDEX_TYPE = _key("hoodie.index.type", "RECORD_INDEX: the metastore keeps the table's record keys; SIMPLE: it "
                  "keeps none")
RECORD_INDEX_UPDATE_PARTITION_PATH = _key("hoodie.record.index.update.partition.path",
                                          "an upsert that changes a key's partition moves the record there",
                                          "true")
TIMELINE_SOURCE = _key("hoodie.metastore.timeline.source",
                       "the metastore's own: `storage` when Hudi's writers own the table's timeline on storage "
                       "and the server follows it (hive sync, the watcher); unset: commits go through the server")
DRIVER_WRITE_MAX_RECORDS = _key("hoodie.metastore.write.driver.max.records",
                                "the pipeline: a merge-on-read batch of at most this many records whose keys "
                                "the table has is tagged and appended to its log files by the driver, without "
                                "Spark stages (the driver holds the batch; 0: never)", "200000")
DRIVER_WRITE_MAX_BYTES = _key("hoodie.metastore.write.driver.max.bytes",
                              "the pipeline: the driver takes such a batch only when its records times the "
                              "table's average record size (its recent write statistics) is at most this",
                              "67108864")
INDEX_DEFS_PATH = _key("hoodie.table.index.defs.path",
                       "where the table's index definitions are (`.hoodie/.index_defs/index.json`): Hudi 1.x "
                       "readers skip files by the metadata table's `column_stats` only for the columns it lists")
COLUMN_STATS_ENABLE = _key("hoodie.metadata.index.column.stats.enable",
                           "the storage mirror writes the metadata table's `column_stats` partition from the "
                           "server's column statistics (when it writes the metadata table)", "true")
PARTITION_STATS_ENABLE = _key("hoodie.metadata.index.partition.stats.enable",
                              "the storage mirror writes the metadata table's `partition_stats` partition from the "
                              "server's per-partition column aggregates (partitioned copy-on-write tables of "
                              "version 8 and 9 whose `column_stats` it writes; Hudi 1.2's default there)", "true")
COLUMN_STATS_COLUMN_LIST = _key("hoodie.metadata.index.column.stats.column.list",
                                "RFC-27: the columns column stats index, comma-separated (unset: every column "
                                "of an indexable type)")
DATA_SKIPPING = _key("hoodie.enable.data.skipping",
                     "a Hudi Spark reader option: skip files by the metadata table's column_stats (the project "
                     "sets it only on Hudi's reader, bench/metadata_table_read.py)")
RECORD_INDEX_ENABLE = _key("hoodie.metadata.record.index.enable",
                           "the storage mirror writes the metadata table's `record_index` partition from the "
                           "server's record index (a table with hoodie.index.type=RECORD_INDEX whose metadata "
                           "table it writes)", "true")
RECORD_INDEX_MIN_FILE_GROUPS = _key("hoodie.metadata.record.index.min.filegroup.count",
                                    "the fewest file groups of the metadata table's `record_index` partition", "10")
RECORD_INDEX_MAX_FILE_GROUPS = _key("hoodie.metadata.record.index.max.filegroup.count",
                                    "the most file groups of the metadata table's `record_index` partition", "10000")
RECORD_INDEX_MAX_FILE_GROUP_SIZE = _key("hoodie.metadata.record.index.max.filegroup.size",
                                        "bytes of 48-byte records a `record_index` file group is sized for",
                                        "1073741824")
RECORD_INDEX_GROWTH_FACTOR = _key("hoodie.metadata.record.index.growth.factor",
                                  "the growth the `record_index` partition's file groups are sized for", "2.0")
HIVE_SYNC_AS_DATASOURCE = _key("hoodie.datasource.hive_sync.sync_as_datasource",
                               "the HMS table is a Spark data source table (Spark needs the Hudi bundle to read "
                               "it)", "true")

TABLE_INITIAL_VERSION = _key("hoodie.table.initial.version", "table version 8+: the version the table was "
                              "created with")
ORDERING_FIELDS = _key("hoodie.table.ordering.fields", "table version 8+: the precombine field's successor (Hudi "
                       "1.1+ writes it instead, reads either; the server's new tables of version 8 and 9 hold both)")
KEYGENERATOR_TYPE = _key("hoodie.table.keygenerator.type", "table version 8+: the key generator by name (SIMPLE, "
                         "COMPLEX, ...)")
RECORD_MERGE_MODE = _key("hoodie.record.merge.mode", "table version 8+: how two records of one key merge "
                         "(EVENT_TIME_ORDERING: the larger ordering value wins, COMMIT_TIME_ORDERING: the later "
                         "write, CUSTOM); Hudi 1.2's merge-on-read reader fails without it")
ARCHIVE_MIN_COMMITS = _key("hoodie.keep.min.commits", "the storage mirror's archival: the write commits the active "
                           "timeline keeps when it archives", "20")
ARCHIVE_MAX_COMMITS = _key("hoodie.keep.max.commits", "the storage mirror's archival: the write commits the active "
                           "timeline holds before older instants are archived", "30")
CLEAN_AUTOMATIC = _key("hoodie.clean.automatic",
                        "the server cleans the table after each commit (stored in the config of the tables the "
                        "pipeline creates; a table without it is cleaned by its own writers)", "true")
CLEANER_POLICY = _key("hoodie.cleaner.policy",
                      "what a clean keeps: KEEP_LATEST_COMMITS, KEEP_LATEST_FILE_VERSIONS or KEEP_LATEST_BY_HOURS",
                      "KEEP_LATEST_COMMITS")
CLEANER_COMMITS_RETAINED = _key("hoodie.cleaner.commits.retained",
                                "KEEP_LATEST_COMMITS: the file versions the last N commits read stay", "10")
CLEANER_FILE_VERSIONS_RETAINED = _key("hoodie.cleaner.fileversions.retained",
                                      "KEEP_LATEST_FILE_VERSIONS: the versions kept per file group", "3")
CLEANER_HOURS_RETAINED = _key("hoodie.cleaner.hours.retained",
                              "KEEP_LATEST_BY_HOURS: the file versions commits of the last N hours read stay", "24")
RECORD_MERGE_STRATEGY_ID = _key("hoodie.record.merge.strategy.id", "table version 8 (Hudi 1.2 writes none in 9): "
                                "the record merger's id, one per merge mode (the metadata table's: all zeros)")

# --- HMS table and serde parameters ----------------------------------------------------------------
QUERY_AS_RO_TABLE = _key("hoodie.query.as.ro.table",
                         "serde parameter: Spark's Hudi reader serves the read-optimized view")

# --- read options (Hudi's Spark datasource; the pipeline's `hudi` data source takes the same) ---------
QUERY_TYPE = _key("hoodie.datasource.query.type", "snapshot or incremental", "snapshot")
READ_BEGIN_INSTANT = _key("hoodie.datasource.read.begin.instanttime",
                          "incremental reads: commits after this instant time")
READ_END_INSTANT = _key("hoodie.datasource.read.end.instanttime",
                        "incremental reads: commits up to this instant time (unset: the latest)")

# --- Hive sync options ---------------------------------------------------------------------------------
HIVE_SYNC_BATCH_NUM = _key("hoodie.datasource.hive_sync.batch_num",
                           "partitions per add_partitions call of Hudi's hive sync", "1000")

# --- write options -----------------------------------------------------------------------------------
WRITE_RECORDKEY_FIELD = _key("hoodie.datasource.write.recordkey.field", "a writer's record key fields")
PARTITIONS_TO_DELETE = _key("hoodie.datasource.write.partitions.to.delete",
                            "delete_partition: the partition paths to delete, comma-separated")
COMBINE_BEFORE_INSERT = _key("hoodie.combine.before.insert",
                             "an insert keeps one record per key of its input", "false")
COMBINE_BEFORE_UPSERT = _key("hoodie.combine.before.upsert",
                             "an upsert keeps one record per key of its input", "true")
COMBINE_BEFORE_DELETE = _key("hoodie.combine.before.delete",
                             "a delete keeps one record per key of its input", "true")
PARQUET_MAX_FILE_SIZE = _key("hoodie.parquet.max.file.size", "a base file's target size in bytes",
                             str(120 * 1024 * 1024))
PARQUET_SMALL_FILE_LIMIT = _key("hoodie.parquet.small.file.limit",
                                "a base file below this many bytes takes new inserts", str(100 * 1024 * 1024))
COPYONWRITE_RECORD_SIZE_ESTIMATE = _key("hoodie.copyonwrite.record.size.estimate",
                                        "bytes per record when the table has no commit to measure", "1024")
COMPACT_TRIGGER_STRATEGY = _key("hoodie.compact.inline.trigger.strategy",
                                "merge-on-read: when a compaction is due: NUM_COMMITS, NUM_COMMITS_AFTER_LAST_REQUEST, "
                                "TIME_ELAPSED, NUM_AND_TIME or NUM_OR_TIME", "NUM_COMMITS")
COMPACTION_TRIGGERS = ("NUM_COMMITS", "NUM_COMMITS_AFTER_LAST_REQUEST", "TIME_ELAPSED", "NUM_AND_TIME", "NUM_OR_TIME")
COMPACT_MAX_DELTA_SECONDS = _key("hoodie.compact.inline.max.delta.seconds",
                                 "merge-on-read, the time triggers: seconds since the last compaction (or the first "
                                 "deltacommit)", "3600")
COMPACT_LOGFILE_SIZE_THRESHOLD = _key("hoodie.compaction.logfile.size.threshold",
                                      "merge-on-read: a compaction plan takes the file slices whose log files "
                                      "hold at least this many bytes", "0")
COMPACT_INLINE = _key("hoodie.compact.inline",
                      "merge-on-read: compactions run with the writes; in a table's config (the pipeline's "
                      "merge-on-read tables have it): the server schedules them and the pipeline runs them "
                      "before its next write", "false")
LOG_COMPACT_INLINE = _key("hoodie.log.compaction.inline",
                          "merge-on-read: log compactions run with the writes; in a table's config: the server "
                          "schedules them (a slice's log blocks merged into one new log block) and the pipeline "
                          "runs them before its next write", "false")
LOG_COMPACT_ENABLE = _key("hoodie.log.compaction.enable",
                          "merge-on-read: log compaction on (Hudi 0.14+; Hudi's writers read it for the metadata "
                          "table, whose log compactions then run after each deltacommit); in a table's config: "
                          "as hoodie.log.compaction.inline=true (either turns it on; false does not turn off "
                          "the other, as Hudi's data table writers read only the inline key)", "false")
LOG_COMPACT_BLOCKS_THRESHOLD = _key("hoodie.log.compaction.blocks.threshold",
                                    "merge-on-read: a log compaction plan takes the file slices with at least this "
                                    "many log blocks (as a reader merges them)", "5")
COMPACT_MAX_DELTA_COMMITS = _key("hoodie.compact.inline.max.delta.commits",
                                 "merge-on-read: the server schedules a compaction once this many deltacommits "
                                 "completed since the last compaction", "5")
CLUSTERING_INLINE = _key("hoodie.clustering.inline",
                         "clustering runs with the writes; in a table's config: the server schedules it and the "
                         "pipeline runs it before its next write (or `table-services run`)", "false")
CLUSTERING_MAX_COMMITS = _key("hoodie.clustering.inline.max.commits",
                              "the server schedules a clustering once this many write commits completed since "
                              "the last one", "4")
CLUSTERING_SMALL_FILE_LIMIT = _key("hoodie.clustering.plan.strategy.small.file.limit",
                                   "clustering plans take file slices whose base file is smaller than this (bytes)",
                                   "314572800")
CLUSTERING_TARGET_FILE_MAX_BYTES = _key("hoodie.clustering.plan.strategy.target.file.max.bytes",
                                        "the size of the file groups a clustering writes (bytes)", "1073741824")
CLUSTERING_SORT_COLUMNS = _key("hoodie.clustering.plan.strategy.sort.columns",
                               "columns (comma-separated) a clustering sorts the records of its new file groups by")
WRITE_TABLE_TYPE = _key("hoodie.datasource.write.table.type",
                        "the table type a first write creates: COPY_ON_WRITE or MERGE_ON_READ", "COPY_ON_WRITE")
CLIENT_HEARTBEAT_INTERVAL_MS = _key("hoodie.client.heartbeat.interval_in_ms",
                                    "a writer's heartbeat interval in milliseconds", "60000")
CLIENT_HEARTBEAT_TOLERABLE_MISSES = _key("hoodie.client.heartbeat.tolerable.misses",
                                         "heartbeats a writer may miss before it counts as failed", "2")


def shuffle_parallelism(operation: str) -> str:
    """`hoodie.<operation>.shuffle.parallelism`: a write's shuffle partitions (unset: by its size)."""
    return f"{PREFIX}{operation}.shuffle.parallelism"
