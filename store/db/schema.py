"""Relational storage schema (RFC-36 "Storage Schema": table and partition parts).

Naming follows RFC-36 (`db`, `db_params`, `tbl`, `tbl_params`, versioned `schema`, `partitions`,
`partition_params`, `partition_key_val`); the rest is what Hive Metastore objects need on top:
storage descriptors (`sds`), column statistics, functions and locks.

Times are epoch seconds (ints), as Hive's Thrift objects carry them.
"""

from __future__ import annotations

from sqlalchemy import (
    DDL,
    BigInteger,
    Boolean,
    Column,
    ForeignKey,
    Index,
    Integer,
    LargeBinary,
    MetaData,
    PrimaryKeyConstraint,
    SmallInteger,
    String,
    Table,
    Text,
    UniqueConstraint,
    event,
)
from sqlalchemy.dialects import mysql, postgresql

from store.db import parts_version, table_version

metadata = MetaData(
    naming_convention={
        "ix": "ix_%(table_name)s_%(column_0_N_name)s",
        "uq": "uq_%(table_name)s_%(column_0_N_name)s",
        "fk": "fk_%(table_name)s_%(column_0_name)s_%(referred_table_name)s",
        "pk": "pk_%(table_name)s",
    }
)

# SQLite only auto-increments an INTEGER PRIMARY KEY.
Id = BigInteger().with_variant(Integer(), "sqlite")
# Parameter values and view texts can be long (Spark splits schemas in 4000-char parts).
LongText = Text().with_variant(mysql.MEDIUMTEXT(), "mysql", "mariadb")
Blob = LargeBinary().with_variant(mysql.LONGBLOB(), "mysql", "mariadb")


def CaseSensitive(length: int):
    """A string compared exactly: MySQL/MariaDB's default collations ignore case (and trailing
    spaces), which would make partitions `s=UPPER` and `s=upper`, or parameters `k` and `K`, collide."""
    return String(length).with_variant(mysql.VARCHAR(length, collation="utf8mb4_bin"), "mysql", "mariadb")


NAME = 128  # database names, owners, users
TABLE_NAME = 256  # Hive's TBL_NAME width
COLUMN_NAME = 767  # Hive's COLUMN_NAME width
PART_NAME = 767  # Hive's PART_NAME width; fits a utf8mb4 unique index on InnoDB
PART_VAL = 256
URI = 4000
CONSTRAINT_NAME = 400  # Hive's KEY_CONSTRAINTS.CONSTRAINT_NAME width


def _params(name: str, owner: str, owner_table: str) -> Table:
    """A key/value table hanging off `owner_table` (db_params, tbl_params, partition_params)."""
    return Table(
        name,
        metadata,
        Column(owner, Id, ForeignKey(f"{owner_table}.{owner}", ondelete="CASCADE"), primary_key=True),
        Column("param_key", CaseSensitive(256), primary_key=True),
        Column("param_value", LongText, nullable=True),
    )


metastore_info = Table(
    "metastore_info",
    metadata,
    Column("info_key", String(64), primary_key=True),
    Column("info_value", String(256), nullable=False),
)

# Named counters for ids that clients see (lock ids, txn ids), advanced under a row lock.
sequences = Table(
    "sequences",
    metadata,
    Column("name", String(64), primary_key=True),
    Column("next_val", BigInteger, nullable=False),
)

# Catalogs (Hive 3+): every database belongs to one. `hive`, the default catalog, always exists; its
# location is NULL here and means the server's warehouse.
DEFAULT_CATALOG = "hive"
DEFAULT_CATALOG_DESCRIPTION = "Default catalog for Hive"
catalogs = Table(
    "catalogs",
    metadata,
    Column("name", String(NAME), primary_key=True),
    Column("description", String(URI)),
    Column("location_uri", String(URI)),
    Column("create_time", Integer),
)


@event.listens_for(catalogs, "after_create")
def _default_catalog(target, connection, **kw) -> None:
    """A schema made by `metadata.create_all` (tests) gets `hive` as a migrated one does."""
    connection.execute(target.insert().values(name=DEFAULT_CATALOG, description=DEFAULT_CATALOG_DESCRIPTION))


db = Table(
    "db",
    metadata,
    Column("db_id", Id, primary_key=True, autoincrement=True),
    Column("cat_name", String(NAME), ForeignKey("catalogs.name"), nullable=False,
           server_default=DEFAULT_CATALOG),
    Column("name", String(NAME), nullable=False),
    Column("description", String(URI)),
    Column("location_uri", String(URI)),
    Column("managed_location_uri", String(URI)),
    Column("owner_name", String(NAME)),
    Column("owner_type", Integer),
    Column("create_time", Integer),
    UniqueConstraint("cat_name", "name"),
)
db_params = _params("db_params", "db_id", "db")

# Storage descriptor minus location and columns: location lives on the table or partition row,
# columns in the versioned `schema`. Partitions whose descriptor equals their table's point at none.
sds = Table(
    "sds",
    metadata,
    Column("sd_id", Id, primary_key=True, autoincrement=True),
    Column("input_format", String(URI)),
    Column("output_format", String(URI)),
    Column("compressed", Boolean, nullable=False, default=False),
    Column("num_buckets", Integer, nullable=False, default=-1),
    Column("serde_name", String(NAME)),
    Column("serde_lib", String(URI)),
    Column("serde_params", LongText),  # JSON object
    Column("serde_extra", Text),  # JSON: description, serializer/deserializer class, serde type
    Column("bucket_cols", Text),  # JSON list
    Column("sort_cols", Text),  # JSON list of [col, order]
    Column("sd_params", LongText),  # JSON object
    Column("skewed", LongText),  # JSON: names, values, location maps
    Column("stored_as_subdirs", Boolean),
)

tbl = Table(
    "tbl",
    metadata,
    Column("tbl_id", Id, primary_key=True, autoincrement=True),
    Column("db_id", Id, ForeignKey("db.db_id", ondelete="CASCADE"), nullable=False),
    Column("name", String(TABLE_NAME), nullable=False),
    Column("owner", String(NAME)),
    Column("owner_type", Integer),
    Column("create_time", Integer, nullable=False),
    Column("last_access_time", Integer, nullable=False, default=0),
    Column("retention", Integer, nullable=False, default=0),
    Column("tbl_type", String(128)),
    Column("location", String(URI)),
    Column("sd_id", Id, ForeignKey("sds.sd_id")),
    Column("schema_version", Integer, nullable=False, default=0),
    # changed by triggers on `partitions` whenever the table's partition rows change (parts_version.py)
    Column("parts_version", BigInteger, nullable=False, default=0, server_default="0"),
    # changed by triggers whenever what a Table answer is built from changes (table_version.py)
    Column("meta_version", BigInteger, nullable=False, default=0, server_default="0"),
    Column("view_original_text", LongText),
    Column("view_expanded_text", LongText),
    Column("rewrite_enabled", Boolean),
    Column("temporary", Boolean),
    UniqueConstraint("db_id", "name"),
)
tbl_params = _params("tbl_params", "tbl_id", "tbl")

# Versioned columns of a table: a version is an immutable column list. The table points at its
# current version; a partition at the version its columns were created with.
schema = Table(
    "schema",
    metadata,
    Column("col_id", Id, primary_key=True, autoincrement=True),
    Column("tbl_id", Id, ForeignKey("tbl.tbl_id", ondelete="CASCADE"), nullable=False),
    Column("version", Integer, nullable=False),
    Column("is_partition_col", Boolean, nullable=False),
    Column("position", Integer, nullable=False),
    Column("name", String(COLUMN_NAME), nullable=False),
    Column("type", Text, nullable=False),
    Column("comment", String(URI)),
    UniqueConstraint("tbl_id", "version", "is_partition_col", "position"),
)

partitions = Table(
    "partitions",
    metadata,
    Column("part_id", Id, primary_key=True, autoincrement=True),
    Column("tbl_id", Id, ForeignKey("tbl.tbl_id", ondelete="CASCADE"), nullable=False),
    Column("part_name", CaseSensitive(PART_NAME), nullable=False),
    Column("create_time", Integer, nullable=False),
    Column("last_access_time", Integer, nullable=False, default=0),
    Column("update_time", Integer),
    Column("location", String(URI)),
    Column("sd_id", Id, ForeignKey("sds.sd_id")),  # NULL: the table's descriptor
    Column("schema_version", Integer, nullable=False),
    # The partition's own parts of its Thrift encoding, kept by every write (store/hms/partitions/
    # partition_wire.py), so that a list's answer is concatenated by the database: the values field,
    # the times, the location field, the parameters field. NULL: answered by building it.
    Column("w_values", Blob),
    Column("w_times", Blob),
    Column("w_location", Blob),
    Column("w_params", Blob),
    UniqueConstraint("tbl_id", "part_name"),
)
partition_params = _params("partition_params", "part_id", "partitions")


@event.listens_for(partitions, "after_create")
def _parts_version_triggers(target, connection, **kw) -> None:
    parts_version.install(connection)


@event.listens_for(metadata, "after_create")
def _table_version_triggers(target, connection, **kw) -> None:
    if {"db", "tbl", "tbl_params", "schema"} <= {t.name for t in kw.get("tables") or target.sorted_tables}:
        table_version.install(connection)


# One row per partition key: what partition pruning filters on (RFC-36 `partition_key_val`).
# `part_key_num` holds the value as an integer when it is one, for typed comparison.
partition_key_val = Table(
    "partition_key_val",
    metadata,
    Column("part_id", Id, ForeignKey("partitions.part_id", ondelete="CASCADE"), primary_key=True),
    Column("key_idx", Integer, primary_key=True),
    Column("tbl_id", Id, nullable=False),
    Column("part_key_name", String(COLUMN_NAME), nullable=False),
    Column("part_key_val", CaseSensitive(PART_VAL), nullable=False),
    Column("part_key_num", BigInteger),
    Index("ix_pkv_val", "tbl_id", "key_idx", "part_key_val"),
    Index("ix_pkv_num", "tbl_id", "key_idx", "part_key_num"),
)

# Column statistics: the Thrift ColumnStatisticsData union, serialized as Thrift binary.
tab_col_stats = Table(
    "tab_col_stats",
    metadata,
    Column("tbl_id", Id, ForeignKey("tbl.tbl_id", ondelete="CASCADE"), primary_key=True),
    Column("column_name", String(NAME), primary_key=True),
    Column("engine", String(NAME), primary_key=True),
    Column("column_type", String(URI), nullable=False),
    Column("stats", Blob, nullable=False),
    Column("last_analyzed", BigInteger),
)
part_col_stats = Table(
    "part_col_stats",
    metadata,
    Column("part_id", Id, ForeignKey("partitions.part_id", ondelete="CASCADE"), primary_key=True),
    Column("column_name", String(NAME), primary_key=True),
    Column("engine", String(NAME), primary_key=True),
    Column("tbl_id", Id, nullable=False, index=True),
    Column("column_type", String(URI), nullable=False),
    Column("stats", Blob, nullable=False),
    Column("last_analyzed", BigInteger),
)

functions = Table(
    "functions",
    metadata,
    Column("func_id", Id, primary_key=True, autoincrement=True),
    Column("db_id", Id, ForeignKey("db.db_id", ondelete="CASCADE"), nullable=False),
    Column("name", String(NAME), nullable=False),
    Column("class_name", String(URI)),
    Column("owner_name", String(NAME)),
    Column("owner_type", Integer),
    Column("func_type", Integer),
    Column("create_time", Integer),
    Column("resource_uris", Text),  # JSON list of [type, uri]
    UniqueConstraint("db_id", "name"),
)

# Hive-style lock manager state: one row per lock component.
locks = Table(
    "locks",
    metadata,
    Column("lock_id", BigInteger, primary_key=True),
    Column("component", Integer, primary_key=True),
    Column("txn_id", BigInteger, nullable=False, default=0),
    Column("db_name", String(NAME), nullable=False),
    Column("tbl_name", String(TABLE_NAME)),
    Column("part_name", String(PART_NAME)),
    Column("lock_type", Integer, nullable=False),
    Column("lock_level", Integer, nullable=False),
    Column("state", Integer, nullable=False),
    Column("operation", Integer),
    Column("is_transactional", Boolean),
    Column("user_name", String(NAME)),
    Column("host_name", String(NAME)),
    Column("agent_info", String(URI)),
    Column("created_ms", BigInteger, nullable=False),
    Column("acquired_ms", BigInteger),
    Column("heartbeat_ms", BigInteger, nullable=False),
    Index("ix_locks_db_tbl", "db_name", "tbl_name"),
)

# Transactions, enough for clients that wrap locks in open_txns/commit_txn.
txns = Table(
    "txns",
    metadata,
    Column("txn_id", BigInteger, primary_key=True),
    Column("state", String(1), nullable=False),  # o open, a aborted, c committed
    Column("user_name", String(NAME)),
    Column("host_name", String(NAME)),
    Column("started_ms", BigInteger, nullable=False),
    Column("heartbeat_ms", BigInteger, nullable=False),
    Column("txn_type", Integer, nullable=False, server_default="0"),  # Hive's TxnType (0 DEFAULT)
    # the lowest open transaction when this one opened (Hive's MIN_HISTORY_LEVEL): write ids of
    # transactions from it up may be in this one's snapshot, so they are kept while it is open
    Column("min_open_txn", BigInteger),
)

# Hive's write ids (TXN_TO_WRITE_ID, NEXT_WRITE_ID): per table, one write id per transaction, from 1 up.
txn_write_ids = Table(
    "txn_write_ids",
    metadata,
    Column("db_name", String(NAME), primary_key=True),
    Column("tbl_name", String(TABLE_NAME), primary_key=True),
    Column("txn_id", BigInteger, primary_key=True),
    Column("write_id", BigInteger, nullable=False),
    UniqueConstraint("db_name", "tbl_name", "write_id", name="uq_txn_write_ids_write_id"),
    Index("ix_txn_write_ids_txn_id", "txn_id"),
)

next_write_ids = Table(
    "next_write_ids",
    metadata,
    Column("db_name", String(NAME), primary_key=True),
    Column("tbl_name", String(TABLE_NAME), primary_key=True),
    Column("next_id", BigInteger, nullable=False),
)

# Hive's TXN_COMPONENTS: what an open or aborted transaction writes (its write locks' components and
# the partitions add_dynamic_partitions names); a commit turns its updates and deletes into the write
# set and drops its rows, an aborted transaction keeps them (its writes stay invalid).
txn_components = Table(
    "txn_components",
    metadata,
    Column("row_id", Id, primary_key=True, autoincrement=True),
    Column("txn_id", BigInteger, nullable=False),
    Column("db_name", String(NAME), nullable=False),
    Column("tbl_name", String(TABLE_NAME)),
    Column("part_name", String(PART_NAME)),
    Column("operation", Integer, nullable=False),
    Column("write_id", BigInteger),
    Index("ix_txn_components_txn_id", "txn_id"),
    Index("ix_txn_components_db_tbl", "db_name", "tbl_name"),
)

# Hive's WRITE_SET: what committed transactions updated or deleted (get_latest_txnid_in_conflict).
txn_write_set = Table(
    "txn_write_set",
    metadata,
    Column("row_id", Id, primary_key=True, autoincrement=True),
    Column("db_name", String(NAME), nullable=False),
    Column("tbl_name", String(TABLE_NAME), nullable=False),
    Column("part_name", String(PART_NAME)),
    Column("txn_id", BigInteger, nullable=False),
    Column("commit_id", BigInteger, nullable=False),
    Column("operation", Integer, nullable=False),
    Index("ix_txn_write_set_db_tbl", "db_name", "tbl_name"),
    Index("ix_txn_write_set_commit_id", "commit_id"),
)

# Hive's COMPACTION_QUEUE: compaction requests, recorded and listed (no compactor runs them).
compactions = Table(
    "compactions",
    metadata,
    Column("id", BigInteger, primary_key=True),
    Column("db_name", String(NAME), nullable=False),
    Column("tbl_name", String(TABLE_NAME), nullable=False),
    Column("part_name", String(PART_NAME)),
    Column("state", String(1), nullable=False),  # i initiated (Hive's CQ_STATE)
    Column("type", Integer, nullable=False),  # CompactionType
    Column("run_as", String(NAME)),
    Column("properties", Text),  # JSON object
    Column("initiator_id", String(NAME)),
    Column("initiator_version", String(NAME)),
    Column("pool_name", String(NAME)),
    Column("number_of_buckets", Integer),
    Column("order_by", Text),
    Column("enqueue_ms", BigInteger, nullable=False),
    Index("ix_compactions_db_tbl", "db_name", "tbl_name"),
)


# --- Hudi timeline and snapshot (RFC-36 "Timeline" and "Snapshot") -----------------------------

# A table is Hudi-managed when it has a row here: its Hudi table config (hoodie.properties).
hudi_table = Table(
    "hudi_table",
    metadata,
    Column("tbl_id", Id, ForeignKey("tbl.tbl_id", ondelete="CASCADE"), primary_key=True),
    Column("table_type", String(16), nullable=False),  # COPY_ON_WRITE | MERGE_ON_READ
    Column("table_version", Integer, nullable=False),
    Column("base_path", String(URI), nullable=False),
    Column("properties", LongText, nullable=False),  # JSON object: every hoodie.* property
)

# Last instant time handed out per table; advanced by compare-and-set (RFC-36 `tbl_timestamp`).
tbl_timestamp = Table(
    "tbl_timestamp",
    metadata,
    Column("tbl_id", Id, ForeignKey("tbl.tbl_id", ondelete="CASCADE"), primary_key=True),
    Column("ts", String(17), nullable=False),
)

# Instants of the timeline. state: 1 requested, 2 inflight, 3 completed. `duration` (heartbeat
# timeout, seconds) and `start_ts` (last heartbeat, epoch ms) are RFC-36's heartbeat columns.
instant = Table(
    "instant",
    metadata,
    Column("instant_id", Id, primary_key=True, autoincrement=True),
    Column("tbl_id", Id, ForeignKey("tbl.tbl_id", ondelete="CASCADE"), nullable=False),
    Column("ts", String(17), nullable=False),
    Column("action", String(32), nullable=False),
    Column("state", Integer, nullable=False),
    Column("requested_ms", BigInteger, nullable=False),
    # the table's instant-time counter when the instant was requested: what conflict checks compare
    # other instants' completion times with (client-chosen times can be older)
    Column("requested_ts", String(17), nullable=False),
    Column("completion_ts", String(17)),
    Column("duration", Integer, nullable=False),
    Column("start_ts", BigInteger, nullable=False),
    UniqueConstraint("tbl_id", "ts", "action"),
    Index("ix_instant_state", "tbl_id", "state", "ts"),
)

# Metadata of each state of an instant: plan, workload profile, commit metadata (as given).
instant_meta = Table(
    "instant_meta",
    metadata,
    Column("tbl_id", Id, ForeignKey("tbl.tbl_id", ondelete="CASCADE"), primary_key=True),
    Column("ts", String(17), primary_key=True),
    Column("action", String(32), primary_key=True),
    Column("state", Integer, primary_key=True),
    Column("data", Blob),
)


def lz4_compression(connection, table: str, column: str) -> None:
    """PostgreSQL 14+ built with lz4: compress the column's large values with lz4 (faster to write
    and read than pglz); values already stored keep theirs. Elsewhere nothing."""
    if connection.dialect.name != "postgresql" or (connection.dialect.server_version_info or (0,)) < (14,):
        return
    methods = connection.exec_driver_sql(
        "SELECT enumvals FROM pg_settings WHERE name = 'default_toast_compression'").scalar()
    if methods and "lz4" in methods:
        connection.exec_driver_sql(f"ALTER TABLE {table} ALTER COLUMN {column} SET COMPRESSION lz4")


@event.listens_for(instant_meta, "after_create")
def _instant_meta_lz4(target, connection, **kw) -> None:
    lz4_compression(connection, "instant_meta", "data")


# Files a writer announced before writing them (Hudi's markers): what a rollback deletes.
instant_markers = Table(
    "instant_markers",
    metadata,
    Column("marker_id", Id, primary_key=True, autoincrement=True),
    Column("tbl_id", Id, ForeignKey("tbl.tbl_id", ondelete="CASCADE"), nullable=False),
    Column("ts", String(17), nullable=False),
    Column("path", String(1024), nullable=False),  # relative to the table's base path
    Index("ix_instant_markers", "tbl_id", "ts"),
)

# One version per completed instant; snapshot_status 1 once the storage mirror has written it.
tbl_version = Table(
    "tbl_version",
    metadata,
    Column("tbl_id", Id, ForeignKey("tbl.tbl_id", ondelete="CASCADE"), primary_key=True),
    Column("version", BigInteger, primary_key=True),
    Column("instant_id", Id, nullable=False),
    Column("snapshot_status", Integer, nullable=False, default=0),
    Column("create_time", BigInteger, nullable=False),  # completion, epoch ms
    Column("update_time", BigInteger),  # mirrored, epoch ms
    Index("ix_tbl_version_status", "tbl_id", "snapshot_status"),
)

# Data files of Hudi tables (RFC-36 `files`). A file belongs to file group `file_id` and to the
# file slice starting at `base_instant`; `created_ts`/`deleted_ts` are the instants that added and
# removed it, which is what time travel and incremental reads select on. No foreign key on tbl_id:
# its check cost a commit of 10,000 files about 40 ms on PostgreSQL; the table's drop deletes the
# rows (store/hms/catalog/table_rows.delete_table_rows). Every index costs a commit 15 ms or more.
files = Table(
    "files",
    metadata,
    Column("id", Id, primary_key=True, autoincrement=True),
    Column("tbl_id", Id, nullable=False),
    Column("partition_path", String(PART_NAME), nullable=False),
    Column("name", String(512), nullable=False),
    Column("file_id", String(128), nullable=False),
    Column("base_instant", String(17), nullable=False),
    Column("is_log", Boolean, nullable=False),
    Column("log_version", Integer),
    Column("size", BigInteger, nullable=False),
    Column("version", BigInteger, nullable=False),  # table version that added or last resized it
    Column("created_ts", String(17), nullable=False),
    Column("deleted_ts", String(17)),
    Column("is_deleted", Boolean, nullable=False, default=False),
    Column("create_time", BigInteger, nullable=False),
    Column("update_time", BigInteger, nullable=False),
    # The one index over names (a name carries its file id: store/hudi/file_listing.py names_in):
    # a partition's live files; a group's live files, its latest version backwards from its newest
    # base instant (ColumnStats.slices_before). Partition first: a commit's rows go to few places
    # of it. One index: each took about a third of a commit's insert time, names being random.
    # MySQL/MariaDB index keys are limited to 3072 bytes: long text columns get prefixes there.
    Index("uq_files_live", "tbl_id", "partition_path", "is_deleted", "file_id", "base_instant", "name",
          unique=True, mysql_length={"partition_path": 255, "name": 255}),
    Index("ix_files_created", "tbl_id", "created_ts"),
)

# File groups replaced by completed replacecommits (insert overwrite, clustering, dropped partitions).
replaced_file_groups = Table(
    "replaced_file_groups",
    metadata,
    Column("id", Id, primary_key=True, autoincrement=True),
    Column("tbl_id", Id, ForeignKey("tbl.tbl_id", ondelete="CASCADE"), nullable=False),
    Column("partition_path", String(PART_NAME), nullable=False),
    Column("file_id", String(128), nullable=False),
    Column("replace_ts", String(17), nullable=False),
    Index("uq_replaced_fg", "tbl_id", "partition_path", "file_id", unique=True,
          mysql_length={"partition_path": 255}),
)


# --- Record-level index (RFC-08): record key -> file group, per Hudi table -----------------------

# The file groups the index points at, so that an index row holds an 8-byte id instead of the
# partition path and file id.
record_index_file_group = Table(
    "record_index_file_group",
    metadata,
    Column("fg_id", Id, primary_key=True, autoincrement=True),
    Column("tbl_id", Id, ForeignKey("tbl.tbl_id", ondelete="CASCADE"), nullable=False),
    Column("partition_path", String(PART_NAME), nullable=False),
    Column("file_id", String(128), nullable=False),
    Index("uq_record_index_fg", "tbl_id", "partition_path", "file_id", unique=True,
          mysql_length={"partition_path": 255}),
)

# File groups of a tracked Hudi table whose base files' column statistics and record index keys a
# catch-up left to be read after its call (store/hudi/timeline/catch_up.py); a group may be listed
# more than once. Emptied by the table's next indexing pass, and before a read that needs them.
index_backlog = Table(
    "index_backlog",
    metadata,
    Column("entry_id", Id, primary_key=True, autoincrement=True),
    Column("tbl_id", Id, ForeignKey("tbl.tbl_id", ondelete="CASCADE"), nullable=False),
    Column("partition_path", String(PART_NAME), nullable=False),
    Column("file_id", String(128), nullable=False),
    Index("ix_index_backlog_tbl", "tbl_id"),
)

RECORD_KEY = 512  # characters; with tbl_id and shard within MySQL's 3072-byte index keys (utf8mb4)
RECORD_INDEX_PARTITIONS = 16  # PostgreSQL hash partitions over `shard`

# One row per live record key of a table: the file group holding it and the instant that last
# wrote it (as a number: yyyyMMddHHmmssSSS). `shard` is a stable hash of the key
# (store/hudi/record_index/index.py), as RFC-08 buckets keys; the primary key (tbl_id, shard, record_key)
# is what makes a key live in one file group only. PostgreSQL hash-partitions the table by shard
# and carries fg_id and instant in the primary key's index (lookups are index-only scans); SQLite
# keeps the table clustered on the primary key (WITHOUT ROWID), as InnoDB does.
# No foreign key to `tbl`: a per-row check costs a commit of 1,000,000 keys about 4 s on
# PostgreSQL; the table's drop deletes its rows instead (store/hms/catalog/table_rows.delete_table_rows).
record_index = Table(
    "record_index",
    metadata,
    Column("tbl_id", Id, nullable=False),
    Column("fg_id", Id, nullable=False),
    Column("instant", BigInteger, nullable=False),
    Column("shard", SmallInteger, nullable=False),
    Column("record_key", CaseSensitive(RECORD_KEY), nullable=False),
    PrimaryKeyConstraint("tbl_id", "shard", "record_key", postgresql_include=["fg_id", "instant"]),
    Index("ix_record_index_fg", "tbl_id", "fg_id"),
    postgresql_partition_by="HASH (shard)",
    sqlite_with_rowid=False,
)


# Keys a commit took out of the record index (deleted, or in file groups it replaced), per instant,
# for the storage mirror's `record_index` partition of the metadata table (its delete blocks); kept
# only for tables whose metadata table has that partition, removed once the instant is mirrored.
# A row at instant 0 with an empty key: the partition is to be written again from `record_index`
# (the index changed outside a commit: a load, a restore); with the key `column_stats`: the
# `column_stats` partition is, from `column_stats` (statistics adopted outside an instant); with
# the key `files`: the whole metadata table is (files changed outside an instant: an import's listing).
record_index_deletes = Table(
    "record_index_deletes",
    metadata,
    Column("tbl_id", Id, nullable=False),
    Column("instant", BigInteger, nullable=False),
    Column("record_key", CaseSensitive(RECORD_KEY), nullable=False),
    PrimaryKeyConstraint("tbl_id", "instant", "record_key"),
    sqlite_with_rowid=False,
)

# Autovacuum visits a partition after inserts of 2% of its rows (PostgreSQL's default: 20%), so
# that the pages of new keys are soon all-visible and lookups of them stay index-only.
RECORD_INDEX_AUTOVACUUM = "autovacuum_vacuum_insert_scale_factor = 0.02"


def record_index_partitions_ddl() -> list[str]:
    """PostgreSQL: the hash partitions of `record_index`."""
    n = RECORD_INDEX_PARTITIONS
    return [f"CREATE TABLE record_index_p{i:02d} PARTITION OF record_index "
            f"FOR VALUES WITH (MODULUS {n}, REMAINDER {i}) WITH ({RECORD_INDEX_AUTOVACUUM})" for i in range(n)]


for _ddl in record_index_partitions_ddl():
    event.listen(record_index, "after_create", DDL(_ddl).execute_if(dialect="postgresql"))


# --- Notification log (Hive's NOTIFICATION_LOG: what event-driven caches and replication poll) --

# Messages hold whole Thrift objects as JSON (a table with its partitions): LONGTEXT on MySQL.
EventText = Text().with_variant(mysql.LONGTEXT(), "mysql", "mariadb")

# One row per metastore event. `event_id` comes from the 'notification_event' row of `sequences`,
# taken under that row's lock in the writing transaction, so ids increase in commit order.
notification_log = Table(
    "notification_log",
    metadata,
    Column("event_id", BigInteger, primary_key=True, autoincrement=False),
    Column("event_time", Integer, nullable=False),  # epoch seconds
    Column("event_type", String(64), nullable=False),
    Column("cat_name", String(NAME)),
    Column("db_name", String(NAME)),
    Column("tbl_name", String(TABLE_NAME)),
    Column("message", EventText, nullable=False),
    Column("message_format", String(32)),
)


@event.listens_for(notification_log, "after_create")
def _notification_log_lz4(target, connection, **kw) -> None:
    lz4_compression(connection, "notification_log", "message")


# --- constraints, privileges, partition events (Hive's KEY_CONSTRAINTS, *_PRIVS, PARTITION_EVENTS) ---

# Table constraints, one row per column of a constraint, as Hive keeps them: `tbl_id` is the table
# holding the key (for a foreign key: the referenced table), `child_tbl_id` the referencing table
# of a foreign key. Columns are kept by name; a constraint whose column the table no longer has
# (renamed or dropped) is not answered, as Hive drops those. kind: 0 primary key, 1 foreign key,
# 2 unique, 3 not null, 4 default, 5 check (Hive's CONSTRAINT_TYPE).
table_constraints = Table(
    "table_constraints",
    metadata,
    Column("constraint_id", Id, primary_key=True, autoincrement=True),
    Column("tbl_id", Id, ForeignKey("tbl.tbl_id", ondelete="CASCADE"), nullable=False),
    Column("name", String(CONSTRAINT_NAME), nullable=False),
    Column("position", Integer, nullable=False),
    Column("kind", Integer, nullable=False),
    Column("column_name", String(COLUMN_NAME), nullable=False),
    Column("child_tbl_id", Id, ForeignKey("tbl.tbl_id", ondelete="CASCADE"), index=True),
    Column("child_column", String(COLUMN_NAME)),
    Column("ref_name", String(CONSTRAINT_NAME)),  # foreign key: the referenced key's name
    Column("update_rule", Integer),
    Column("delete_rule", Integer),
    Column("enable_cstr", Boolean, nullable=False),
    Column("validate_cstr", Boolean, nullable=False),
    Column("rely_cstr", Boolean, nullable=False),
    Column("value", Text),  # default value / check expression
    UniqueConstraint("tbl_id", "name", "position"),
)

# Granted privileges (Hive's GLOBAL_PRIVS, DB_PRIVS, TBL_PRIVS, PART_PRIVS, TBL_COL_PRIVS,
# PART_COL_PRIVS in one table): the object is global (no ids), a database, a table, a partition,
# or a column of a table or partition; grants go with their object when it is dropped.
privileges = Table(
    "privileges",
    metadata,
    Column("grant_id", Id, primary_key=True, autoincrement=True),
    Column("object_type", Integer, nullable=False),  # HiveObjectType
    Column("db_id", Id, ForeignKey("db.db_id", ondelete="CASCADE")),
    Column("tbl_id", Id, ForeignKey("tbl.tbl_id", ondelete="CASCADE")),
    Column("part_id", Id, ForeignKey("partitions.part_id", ondelete="CASCADE")),
    Column("column_name", String(COLUMN_NAME)),
    Column("principal_name", CaseSensitive(NAME), nullable=False),
    Column("principal_type", Integer, nullable=False),
    Column("privilege", String(NAME), nullable=False),
    Column("grantor", String(NAME)),
    Column("grantor_type", Integer),
    Column("grant_option", Boolean, nullable=False),
    Column("authorizer", String(NAME)),
    Column("create_time", Integer, nullable=False),
    Index("ix_privileges_object", "object_type", "db_id", "tbl_id"),
    Index("ix_privileges_tbl", "tbl_id"),
    Index("ix_privileges_part", "part_id"),
)

# Roles (Hive's ROLES and ROLE_MAP): `admin` and `public` are built in and have no row; a member
# is a user, a group or another role, with or without the right to grant the role on (grant_option).
roles = Table(
    "roles",
    metadata,
    Column("role_name", CaseSensitive(NAME), primary_key=True),
    Column("owner_name", String(NAME)),
    Column("create_time", Integer, nullable=False),
)

role_members = Table(
    "role_members",
    metadata,
    Column("role_name", CaseSensitive(NAME), primary_key=True),
    Column("principal_name", CaseSensitive(NAME), primary_key=True),
    Column("principal_type", Integer, primary_key=True),
    Column("grant_option", Boolean, nullable=False),
    Column("grantor", String(NAME)),
    Column("grantor_type", Integer),
    Column("add_time", Integer, nullable=False),
    Index("ix_role_members_principal", "principal_name", "principal_type"),
)

# Partitions marked for an event (markPartitionForEvent), by name as Hive's PARTITION_EVENTS: the
# marks outlive the table.
partition_events = Table(
    "partition_events",
    metadata,
    Column("event_id", Id, primary_key=True, autoincrement=True),
    Column("db_name", String(NAME), nullable=False),
    Column("tbl_name", String(TABLE_NAME), nullable=False),
    Column("part_name", CaseSensitive(PART_NAME), nullable=False),
    Column("event_type", Integer, nullable=False),
    Column("event_time", BigInteger, nullable=False),  # epoch ms
    Index("ix_partition_events", "db_name", "tbl_name", "part_name", "event_type",
          mysql_length={"part_name": 255}),
)

# Directories the server made itself (it did not exist before): the server may delete, move and
# empty these and what is under them, besides the warehouse and the roots an admin configured
# (store/storage/boundary.py). Keyed by the SHA-256 of the location (locations are too wide for a key).
created_locations = Table(
    "created_locations",
    metadata,
    Column("loc_hash", String(64), primary_key=True),
    Column("location", Text, nullable=False),
    Column("create_time", BigInteger, nullable=False),
)

# Who owns which storage (store/storage/owner_index.py): one row per location of a database (its
# location and managed location), a table (not a view), a partition outside its table's location, and
# a Hudi table's base path where it differs from its table's location. `loc_key` is the location
# normalized (store/storage/ownership.location_key: scheme aliases, `..`, %-escapes and symbolic
# links resolved, a trailing slash); `loc_prefix`, its first LOC_PREFIX characters, compared byte by
# byte on every backend, answers "which locations lie inside X" as a range and "which cover X" as
# equality, both on its index. Rows go with their object (the foreign keys cascade).
LOC_PREFIX = 255
LocPrefix = String(LOC_PREFIX).with_variant(postgresql.VARCHAR(LOC_PREFIX, collation="C"), "postgresql") \
    .with_variant(mysql.VARCHAR(LOC_PREFIX, collation="utf8mb4_bin"), "mysql", "mariadb")
location_owners = Table(
    "location_owners",
    metadata,
    Column("owner_row", Id, primary_key=True, autoincrement=True),
    Column("loc_prefix", LocPrefix, nullable=False),
    Column("loc_key", Text, nullable=False),
    Column("kind", String(8), nullable=False),  # db | tbl | part | hudi
    Column("db_id", Id, ForeignKey("db.db_id", ondelete="CASCADE"), nullable=False),
    Column("tbl_id", Id, ForeignKey("tbl.tbl_id", ondelete="CASCADE")),
    Column("part_id", Id, ForeignKey("partitions.part_id", ondelete="CASCADE")),
    Index("ix_location_owners_loc_prefix", "loc_prefix"),
    Index("ix_location_owners_db_id", "db_id"),
    Index("ix_location_owners_tbl_id", "tbl_id"),
    Index("ix_location_owners_part_id", "part_id"),
)

# --- Column statistics (RFC-27): per base file and indexed column --------------------------------

STATS_KEY = 256  # bytes of an order-preserving bound (store/hudi/column_stats/codec.py)

# The sizes of a base file that has column statistics; a row per file, deleted with its stats.
file_stats = Table(
    "file_stats",
    metadata,
    Column("file_row_id", Id, ForeignKey("files.id", ondelete="CASCADE"), primary_key=True),
    Column("tbl_id", Id, ForeignKey("tbl.tbl_id", ondelete="CASCADE"), nullable=False),
    Column("total_size", BigInteger, nullable=False),
    Column("uncompressed_size", BigInteger, nullable=False),
    Column("num_rows", BigInteger),
    Index("ix_file_stats_tbl", "tbl_id"),
)

# min_key/max_key: the bounds in an encoding whose byte order is the column type's order, so one
# comparison of bytes serves every type on every backend; NULL when unknown.
# fork_len/fork_key: the common prefix of min_key and max_key (at most FORK_KEY bytes), the node
# of a virtual prefix tree that holds the file's range; ranges overlapping a predicate's range are
# found by one index range per prefix length (store/hudi/data_skipping/pruning.py).
FORK_KEY = 16
column_stats = Table(
    "column_stats",
    metadata,
    Column("file_row_id", Id, ForeignKey("files.id", ondelete="CASCADE"), nullable=False),
    Column("column_name", CaseSensitive(NAME * 2), nullable=False),
    Column("min_key", LargeBinary(STATS_KEY)),
    Column("max_key", LargeBinary(STATS_KEY)),
    Column("null_count", BigInteger),
    Column("value_count", BigInteger),
    Column("tbl_id", Id),
    Column("fork_len", SmallInteger),
    Column("fork_key", LargeBinary(FORK_KEY)),
    # the column chunks' bytes over the row groups, compressed and not (Hudi's totalSize and
    # totalUncompressedSize); NULL when the writer did not send them
    Column("total_size", BigInteger),
    Column("uncompressed_size", BigInteger),
    PrimaryKeyConstraint("file_row_id", "column_name"),
    Index("ix_column_stats_fork", "tbl_id", "column_name", "fork_len", "fork_key",
          mysql_length={"fork_key": FORK_KEY}),
)

# Per partition and column: the bounds over the statistics of its latest file slices' base files
# (RFC-27 partition entries) and how many latest slices give none (log files, files without
# statistics), recomputed by each commit, clean and rollback for the partitions it touches.
partition_column_stats = Table(
    "partition_column_stats",
    metadata,
    Column("tbl_id", Id, ForeignKey("tbl.tbl_id", ondelete="CASCADE"), nullable=False),
    Column("partition_path", String(PART_NAME), nullable=False),
    Column("column_name", CaseSensitive(NAME * 2), nullable=False),
    Column("min_key", LargeBinary(STATS_KEY)),
    Column("max_key", LargeBinary(STATS_KEY)),
    Column("null_count", BigInteger),
    Column("value_count", BigInteger),
    Column("files_without_stats", BigInteger, nullable=False),
    Index("uq_partition_column_stats", "tbl_id", "partition_path", "column_name", unique=True,
          mysql_length={"partition_path": 255}),
)

# Hive basic statistics of each partition's latest file slices ("" for an unpartitioned table),
# recomputed with the column aggregates; NULL rows or sizes when a slice's are unknown (log files,
# files without statistics).
snapshot_stats = Table(
    "snapshot_stats",
    metadata,
    Column("tbl_id", Id, ForeignKey("tbl.tbl_id", ondelete="CASCADE"), nullable=False),
    Column("partition_path", String(PART_NAME), nullable=False),
    Column("num_slices", BigInteger, nullable=False),
    Column("num_files", BigInteger, nullable=False),
    Column("base_files", BigInteger, nullable=False),  # latest slices with a base file
    Column("total_size", BigInteger, nullable=False),
    Column("num_rows", BigInteger),
    Column("raw_data_size", BigInteger),
    Index("uq_snapshot_stats", "tbl_id", "partition_path", unique=True, mysql_length={"partition_path": 255}),
)

# --- Delegation tokens (Hive's DELEGATION_TOKENS and MASTER_KEYS): issued to Kerberos users -------

delegation_keys = Table(
    "delegation_keys",
    metadata,
    Column("key_id", Integer, primary_key=True, autoincrement=False),
    Column("secret", LargeBinary(64), nullable=False),  # the HMAC-SHA1 key tokens' passwords derive from
    Column("create_time", BigInteger, nullable=False),
)

delegation_tokens = Table(
    "delegation_tokens",
    metadata,
    Column("seq", Id, primary_key=True, autoincrement=True),  # the identifier's sequence number
    Column("key_id", Integer, nullable=False),
    Column("owner", String(256), nullable=False),
    Column("renewer", String(256), nullable=False),
    Column("real_user", String(256), nullable=False),
    Column("issue_date", BigInteger, nullable=False),  # ms since the epoch, as the identifier holds them
    Column("max_date", BigInteger, nullable=False),
    Column("expiry_date", BigInteger, nullable=False),  # renewals push it, never past max_date
)
