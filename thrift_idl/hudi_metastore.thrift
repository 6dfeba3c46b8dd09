// Hudi extension of the metastore wire contract (RFC-36 timeline and snapshot services).
//
// HudiMetastore extends ThriftHiveMetastore, so one port serves both: Hive Metastore clients
// call the HMS methods and never see these; Hudi writers and readers use the extension calls.
// Conventions:
//   * exception ids are fixed per type on every method: 1 MetaException, 2 NoSuchObjectException,
//     3 InvalidOperationException, 4 InvalidObjectException, 5 AlreadyExistsException,
//     6 CommitConflictException; a method declares the ones it can raise (gaps are deliberate);
//   * instant times are Hudi's yyyyMMddHHmmssSSS strings; an empty string argument means "none"
//     where the comment says so;
//   * binary payloads (plans, workload profiles, commit metadata) are the bytes Hudi writes to the
//     timeline files (JSON commit metadata in table version 6, Avro in 8 and 9).
// Regenerate the Python bindings with thrift_idl/generate.sh.

include "hive_metastore.thrift"

namespace py thrift_idl.hudi_metastore

enum HudiTableType {
  COPY_ON_WRITE = 1,
  MERGE_ON_READ = 2,
}

enum InstantState {
  REQUESTED = 1,
  INFLIGHT = 2,
  COMPLETED = 3,
}

// hoodie.properties of a table, plus where it lives.
struct HudiTableConfig {
  1: string dbName,
  2: string tableName,
  3: HudiTableType tableType,
  4: list<string> recordKeyFields,
  5: list<string> partitionFields,
  6: optional string precombineField,
  7: optional string keyGenerator,
  8: bool hiveStylePartitioning = false,
  9: bool urlEncodePartitioning = false,
  10: i32 tableVersion = 6,
  11: optional string basePath,
  12: optional string avroSchema,        // Avro JSON of the table schema
  13: map<string, string> properties,    // other hoodie.* properties
}

struct Instant {
  1: string timestamp,
  2: string action,                      // commit, deltacommit, replacecommit, clean, rollback, ...
  3: InstantState state,
  4: optional string completionTime,     // set once COMPLETED
  5: i64 requestedAtMs,
  6: i64 heartbeatAtMs,
  7: i32 heartbeatTimeoutSec,
}

// Every set field narrows the result; an unset (or empty list) field does not.
struct InstantFilter {
  1: optional list<InstantState> states,
  2: optional list<string> actions,
  3: optional string minTimestamp,       // inclusive
  4: optional string maxTimestamp,       // inclusive
}

struct HudiFile {
  1: string partitionPath,               // relative to the table's base path; "" if unpartitioned
  2: string fileId,
  3: string name,
  4: i64 size,
  5: string baseInstant,
  6: bool isLog,
  7: optional i32 logVersion,            // log files only
  8: string commitTime,                  // the instant that wrote it
  9: optional string path,               // full path (URL) where the table's storage strategy (RFC-60)
                                         // puts it; answers set it, unset for custom strategies
}

// One file group's latest base file and the log files on top of it.
struct FileSlice {
  1: string partitionPath,
  2: string fileId,
  3: string baseInstant,
  4: optional HudiFile baseFile,
  5: list<HudiFile> logFiles,
}

struct CommitResult {
  1: Instant instant,
  2: i64 tableVersion,                   // the table's snapshot version after this commit
}

struct RollbackResult {
  1: Instant rollbackInstant,
  2: list<string> deletedPaths,
}

// One instant of a table's timeline as found on storage (import_hudi_instants).
struct ImportedInstant {
  1: string timestamp,
  2: string action,                      // as requested: compaction, clustering, ... stay so
  3: InstantState state,
  4: optional string completionTime,     // COMPLETED only; default: the instant time
  5: optional binary requestedMetadata,  // each state's timeline file, bytes as on storage
  6: optional binary inflightMetadata,
  7: optional binary completedMetadata,
}

struct ImportResult {
  1: list<Instant> imported,             // instants created or moved to a later state
  2: i32 unchanged,                      // instants the server had in that state (or later) already
  3: i32 filesAdded,                     // listed files recorded
  4: i32 filesRemoved,                   // live files marked deleted (no longer on storage)
  5: i64 tableVersion,                   // the table's snapshot version afterwards
  6: i32 filesResized,                   // live files whose size was taken from the listing
}

// RFC-15's "stats" view of a table, counted by the server.
struct HudiTableStats {
  1: i64 partitionCount,
  2: i64 fileCount,                      // live files, every version, base and log
  3: i64 totalSizeBytes,                 // of those files
  4: optional Instant lastInstant,       // the latest completed instant
  5: bool mirrored,                      // the storage mirror writes this table (table version 6)
  6: i64 mirrorLagVersions,              // table versions not yet written to storage
  7: i64 tableVersion,                   // the table's snapshot version
  8: optional i64 recordIndexKeys,       // keys in the record index (set when the table keeps one)
}

// Record-level index (RFC-08). A key block is zlib-compressed (unsigned LEB128 byte length,
// UTF-8 key) pairs (hudi_format/record_key_codec.py): millions of keys without a struct each.
// In a commit: the keys one file group's write changed. In load_record_index: keys the file group
// holds that `instant` wrote (`inserted` only).
struct FileGroupKeys {
  1: string partitionPath,
  2: string fileId,
  3: optional binary inserted,           // keys new to the table
  4: optional binary updated,            // keys the file group held and the commit rewrote
  5: optional binary deleted,            // keys that left the file group (deleted, or moved away)
  6: optional string instant,            // load_record_index only
}

// Where keys live (lookup_record_keys): per key asked, in order, an index into fileGroups
// (-1: the table has no such key) and the instant that put it in that file group ("" if unknown;
// an update in place keeps it, as in Hudi's record index).
struct RecordKeyLocations {
  1: list<string> partitionPaths,        // file group i is (partitionPaths[i], fileIds[i])
  2: list<string> fileIds,
  3: list<i32> fileGroupOfKey,
  4: list<string> instantOfKey,
}

// Column statistics of base files (RFC-27 column stats index). A value is typed by the column:
// integers, booleans (0/1), dates (days since 1970-01-01) and timestamps (microseconds since the
// epoch, UTC) in intValue; float and double in doubleValue; decimals as text in decimalValue;
// strings in stringValue; binary in binaryValue.
struct ColumnValue {
  1: optional i64 intValue,
  2: optional double doubleValue,
  3: optional string decimalValue,
  4: optional string stringValue,
  5: optional binary binaryValue,
}

// One column of one file: bounds unset when unknown (e.g. every value null); valueCount counts
// rows, nulls included.
struct ColumnRange {
  1: string columnName,
  2: optional ColumnValue minValue,
  3: optional ColumnValue maxValue,
  4: optional i64 nullCount,
  5: optional i64 valueCount,
  6: optional i64 totalSize,             // the column chunks' bytes over the row groups (compressed)
  7: optional i64 totalUncompressedSize,
}

struct FileColumnStats {
  1: string partitionPath,
  2: string fileName,
  3: i64 totalSize,                      // bytes on storage
  4: i64 totalUncompressedSize,
  5: list<ColumnRange> columns,
}

// File slices that hold a base file and no log files, as columns: element i of every list is
// slice i (its base file's partition, file id and instant are the slice's). A large answer
// encodes and decodes without a struct per slice.
struct BaseFileColumns {
  1: list<string> partitionPaths,
  2: list<string> fileIds,
  3: list<string> baseInstants,
  4: list<string> names,                 // base file names
  5: list<i64> sizes,
  6: list<string> commitTimes,           // the instant that wrote each file
  7: list<string> paths,                 // full paths; "" where the server does not place files (custom strategy)
}

// Latest file slices a predicate may match (prune_file_slices).
struct PrunedFileSlices {
  1: list<FileSlice> slices,             // every kept slice; with `compact`, only those not in baseFiles
  2: i32 filesSkipped,                   // latest base files skipped in the partitions that kept a slice
  3: i32 partitionsSkipped,              // partitions none of whose slices is kept
  4: i32 filesConsidered,                // latest base files of the partitions that kept a slice
  5: optional BaseFileColumns baseFiles, // with `compact`: the kept slices of a base file only
}

// A concurrent writer committed to file groups this commit also wrote; nothing was changed.
exception CommitConflictException {
  1: string message,
  2: list<string> conflictingInstants,
}

service HudiMetastore extends hive_metastore.ThriftHiveMetastore {

  // --- tables ---
  // Makes db.table a Hudi table; creates its HMS table (as hive-sync would) when absent.
  void register_hudi_table(1: HudiTableConfig config, 2: list<hive_metastore.FieldSchema> columns)
      throws (1: hive_metastore.MetaException o1, 2: hive_metastore.NoSuchObjectException o2,
              4: hive_metastore.InvalidObjectException o4, 5: hive_metastore.AlreadyExistsException o5)
  HudiTableConfig get_hudi_table(1: string dbName, 2: string tableName)
      throws (1: hive_metastore.MetaException o1, 2: hive_metastore.NoSuchObjectException o2)

  // --- timeline ---
  // A new instant time, later than every instant of the table.
  string new_instant_time(1: string dbName, 2: string tableName)
      throws (1: hive_metastore.MetaException o1, 2: hive_metastore.NoSuchObjectException o2,
              3: hive_metastore.InvalidOperationException o3)
  // REQUESTED instant; an empty timestamp lets the server pick one.
  Instant create_instant(1: string dbName, 2: string tableName, 3: string timestamp, 4: string action,
                         5: binary plan, 6: i32 heartbeatTimeoutSec)
      throws (1: hive_metastore.MetaException o1, 2: hive_metastore.NoSuchObjectException o2,
              3: hive_metastore.InvalidOperationException o3, 4: hive_metastore.InvalidObjectException o4,
              5: hive_metastore.AlreadyExistsException o5)
  Instant transition_to_inflight(1: string dbName, 2: string tableName, 3: string timestamp,
                                 4: string action, 5: binary workloadProfile)
      throws (1: hive_metastore.MetaException o1, 2: hive_metastore.NoSuchObjectException o2,
              3: hive_metastore.InvalidOperationException o3, 4: hive_metastore.InvalidObjectException o4)
  // COMPLETED, and the snapshot takes the commit's files, in one transaction.
  // columnStats: per base file written, its column statistics (RFC-27), stored in the same transaction.
  // recordKeys: for a table keeping a record index, the keys of every file group the commit writes
  // (applied in the same transaction; inserting a key the table holds is a CommitConflictException).
  CommitResult complete_instant(1: string dbName, 2: string tableName, 3: string timestamp,
                                4: string action, 5: binary commitMetadata,
                                6: list<FileGroupKeys> recordKeys, 7: list<FileColumnStats> columnStats)
      throws (1: hive_metastore.MetaException o1, 2: hive_metastore.NoSuchObjectException o2,
              3: hive_metastore.InvalidOperationException o3, 4: hive_metastore.InvalidObjectException o4,
              6: CommitConflictException o6)
  void heartbeat_instant(1: string dbName, 2: string tableName, 3: string timestamp)
      throws (1: hive_metastore.MetaException o1, 2: hive_metastore.NoSuchObjectException o2,
              3: hive_metastore.InvalidOperationException o3)
  // Paths (relative to the base path) an inflight instant is writing; rollback deletes them.
  void add_markers(1: string dbName, 2: string tableName, 3: string timestamp, 4: list<string> paths)
      throws (1: hive_metastore.MetaException o1, 2: hive_metastore.NoSuchObjectException o2,
              3: hive_metastore.InvalidOperationException o3, 4: hive_metastore.InvalidObjectException o4)
  list<Instant> list_instants(1: string dbName, 2: string tableName, 3: InstantFilter filter)
      throws (1: hive_metastore.MetaException o1, 2: hive_metastore.NoSuchObjectException o2,
              4: hive_metastore.InvalidObjectException o4)
  binary get_instant_metadata(1: string dbName, 2: string tableName, 3: string timestamp,
                              4: string action, 5: InstantState state)
      throws (1: hive_metastore.MetaException o1, 2: hive_metastore.NoSuchObjectException o2,
              4: hive_metastore.InvalidObjectException o4)
  // Pending instants whose writer stopped heartbeating.
  list<Instant> get_failed_instants(1: string dbName, 2: string tableName)
      throws (1: hive_metastore.MetaException o1, 2: hive_metastore.NoSuchObjectException o2)
  RollbackResult rollback_instant(1: string dbName, 2: string tableName, 3: string timestamp)
      throws (1: hive_metastore.MetaException o1, 2: hive_metastore.NoSuchObjectException o2,
              3: hive_metastore.InvalidOperationException o3)
  // Removes savepoint `timestamp` from the timeline, as Hudi's deleteSavepoint deletes its instant
  // files: the file slices it held may be cleaned again. Returns the removed savepoint.
  // (Savepoints: create_instant at the commit's time, action "savepoint"; restores: action
  // "restore" with a plan naming savepointToRestoreTimestamp; docs/hudi.md "Savepoints and restore".)
  Instant delete_savepoint(1: string dbName, 2: string tableName, 3: string timestamp)
      throws (1: hive_metastore.MetaException o1, 2: hive_metastore.NoSuchObjectException o2,
              3: hive_metastore.InvalidOperationException o3)

  // --- snapshot ---
  // Partition paths; filter is a Hive partition filter ("" for all).
  list<string> get_hudi_partitions(1: string dbName, 2: string tableName, 3: string filter)
      throws (1: hive_metastore.MetaException o1, 2: hive_metastore.NoSuchObjectException o2)
  // partitions empty: all; asOfInstant empty: latest completed.
  list<FileSlice> get_latest_file_slices(1: string dbName, 2: string tableName, 3: list<string> partitions,
                                         4: string asOfInstant)
      throws (1: hive_metastore.MetaException o1, 2: hive_metastore.NoSuchObjectException o2,
              4: hive_metastore.InvalidObjectException o4)
  // Latest file slices of the partitions the Hive partition filter keeps whose base files' column
  // statistics allow a row matching `predicate` (same grammar, over any indexed column; "" keeps
  // all). Slices with log files and files without statistics are kept.
  // `compact` (absent: false): slices of a base file only come as columns (baseFiles).
  PrunedFileSlices prune_file_slices(1: string dbName, 2: string tableName, 3: string predicate,
                                     4: bool compact)
      throws (1: hive_metastore.MetaException o1, 2: hive_metastore.NoSuchObjectException o2,
              4: hive_metastore.InvalidObjectException o4)
  // Files written by instants completed in (since, until]; empty bounds are open.
  list<HudiFile> get_files_changed(1: string dbName, 2: string tableName, 3: string since, 4: string until)
      throws (1: hive_metastore.MetaException o1, 2: hive_metastore.NoSuchObjectException o2,
              4: hive_metastore.InvalidObjectException o4)
  // Every live file of one partition, every version (what a listing would show; for cleaning).
  list<HudiFile> get_all_files(1: string dbName, 2: string tableName, 3: string partition)
      throws (1: hive_metastore.MetaException o1, 2: hive_metastore.NoSuchObjectException o2)
  // Adopt instants that already happened on storage (import-hudi, repair), in one transaction:
  // instants keep their times, states and metadata (no new-instant-time rule, no conflict checks),
  // in timestamp order; completed ones change the snapshot as their commit, clean, rollback or
  // restore did. Instants the server has in that state already are left alone (idempotent).
  // listedFiles: files a listing of storage found that no instant accounts for (archived instants
  // of a first import, files added behind the server's back), recorded unless the table already
  // has a row for them (a live file's size is taken from the listing when it differs);
  // missingFiles: live files storage no longer has, marked deleted.
  // config (optional): the table's hoodie.properties as on storage now, taken over in the same
  // transaction (e.g. a table adopted from HMS parameters; the base path stays).
  // Imported versions count as mirrored: the timeline is on storage already.
  ImportResult import_hudi_instants(1: string dbName, 2: string tableName, 3: list<ImportedInstant> instants,
                                    4: list<HudiFile> listedFiles, 5: list<HudiFile> missingFiles,
                                    6: HudiTableConfig config)
      throws (1: hive_metastore.MetaException o1, 2: hive_metastore.NoSuchObjectException o2,
              3: hive_metastore.InvalidOperationException o3, 4: hive_metastore.InvalidObjectException o4)
  HudiTableStats get_hudi_table_stats(1: string dbName, 2: string tableName)
      throws (1: hive_metastore.MetaException o1, 2: hive_metastore.NoSuchObjectException o2)
  // Record-level index lookup: where each key of the block lives now (any number of keys per call;
  // writers send up to a few hundred thousand). InvalidOperation if the table keeps no index.
  RecordKeyLocations lookup_record_keys(1: string dbName, 2: string tableName, 3: binary keys)
      throws (1: hive_metastore.MetaException o1, 2: hive_metastore.NoSuchObjectException o2,
              3: hive_metastore.InvalidOperationException o3, 4: hive_metastore.InvalidObjectException o4)
  // Adoption and repair of the record index, in one transaction per call: reset clears the table's
  // index first; the file groups' keys are added; enableIndex true turns the table's index on
  // (hoodie.index.type=RECORD_INDEX) once the last call's keys are in, false turns it off (storage
  // holds keys it cannot represent); unset leaves it. Returns the keys it holds.
  i64 load_record_index(1: string dbName, 2: string tableName, 3: list<FileGroupKeys> fileGroups,
                        4: bool reset, 5: optional bool enableIndex)
      throws (1: hive_metastore.MetaException o1, 2: hive_metastore.NoSuchObjectException o2,
              3: hive_metastore.InvalidOperationException o3, 4: hive_metastore.InvalidObjectException o4)
  // Base files of the latest slices that have no column statistics (paths relative to the base
  // path, at most `limit`; 0: all): what import-hudi still has to read footers for; with logFiles
  // also the latest slices' log files that have none (their blocks to read).
  list<string> list_files_without_column_stats(1: string dbName, 2: string tableName, 3: i32 limit,
                                               4: optional bool logFiles)
      throws (1: hive_metastore.MetaException o1, 2: hive_metastore.NoSuchObjectException o2)
  // Adoption of column statistics (import-hudi, from the base files' footers and the log files'
  // blocks), in one transaction per call: statistics of live files of the snapshot; files that have
  // statistics keep them (a resumed import sends them again); a log file's are kept only when
  // their totalSize is the size the server records for the file (else it was appended to since).
  // The partitions' aggregates and Hive statistics follow.
  // Returns the number of files whose statistics were stored.
  i64 load_column_stats(1: string dbName, 2: string tableName, 3: list<FileColumnStats> stats)
      throws (1: hive_metastore.MetaException o1, 2: hive_metastore.NoSuchObjectException o2,
              4: hive_metastore.InvalidObjectException o4)
  // Mirror the table's timeline and snapshot to its storage (.hoodie/); returns versions mirrored.
  i64 sync_storage(1: string dbName, 2: string tableName)
      throws (1: hive_metastore.MetaException o1, 2: hive_metastore.NoSuchObjectException o2,
              3: hive_metastore.InvalidOperationException o3)
}
