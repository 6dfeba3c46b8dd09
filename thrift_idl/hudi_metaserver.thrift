// Apache Hudi's metaserver protocol (RFC-36 `hudi-metaserver`): the service Hudi's own client
// (org.apache.hudi.metaserver.client, `hoodie.metaserver.enabled=true`) calls. Method names, field
// ids and enum values are the wire contract of Hudi's public IDL; this file is ours. The server
// answers these methods on its one port next to HudiMetastore (method names do not overlap),
// backed by the same timeline service (adapter/handlers/metaserver.py).
// Regenerate the Python bindings with thrift_idl/generate.sh.

namespace py thrift_idl.hudi_metaserver

struct MetaserverFieldSchema {
  1: string name,
  2: string type,
  3: string comments,
}

// a table as the metaserver client registers it; `parameters` carries hoodie.properties
struct MetaserverTable {
  1: string tableName,
  2: string databaseName,
  3: string owner,
  4: i64 createTime,
  5: string location,
  6: string tableType,
  7: list<MetaserverFieldSchema> partitionKeys,
  8: map<string, string> parameters,
}

// Hudi's actions and states (HoodieTimeline, HoodieInstant.State)
enum TAction {
  COMMIT = 1,
  DELTACOMMIT = 2,
  CLEAN = 3,
  ROLLBACK = 4,
  SAVEPOINT = 5,
  REPLACECOMMIT = 6,
  COMPACTION = 7,
  RESTORE = 8,
}

enum TState {
  REQUESTED = 1,
  INFLIGHT = 2,
  COMPLETED = 3,
  NIL = 4,
}

struct THoodieInstant {
  1: string timestamp,
  2: TAction action,
  3: TState state,
}

struct HoodieInstantChangeResult {
  1: bool success,
  2: optional THoodieInstant instant,
  4: optional string msg,
}

exception MetaserverStorageException { 1: string message }
exception MetaserverException { 1: string message }
exception MetaserverNoSuchObjectException { 1: string message }
exception AlreadyExistException { 1: string message }

service ThriftHoodieMetaserver {
  void createDatabase(1: string db)
    throws (1: MetaserverStorageException o1, 2: MetaserverNoSuchObjectException o2, 3: AlreadyExistException o3)
  void createTable(1: MetaserverTable table)
    throws (1: MetaserverStorageException o1, 2: MetaserverNoSuchObjectException o2, 3: AlreadyExistException o3,
            4: MetaserverException o4)
  MetaserverTable getTable(1: string db, 2: string tb)
    throws (1: MetaserverStorageException o1, 2: MetaserverNoSuchObjectException o2)

  // the newest `num` instants (all when num <= 0), oldest first
  list<THoodieInstant> listInstants(1: string db, 2: string tb, 3: i32 num)
    throws (1: MetaserverStorageException o1, 2: MetaserverNoSuchObjectException o2)
  binary getInstantMetadata(1: string db, 2: string tb, 3: THoodieInstant instant)
    throws (1: MetaserverStorageException o1, 2: MetaserverNoSuchObjectException o2)
  string createNewInstantTime(1: string db, 2: string tb)
    throws (1: MetaserverStorageException o1, 2: MetaserverNoSuchObjectException o2)
  HoodieInstantChangeResult createNewInstantWithTime(1: string db, 2: string tb, 3: THoodieInstant instant,
                                                     4: binary content)
    throws (1: MetaserverStorageException o1, 2: MetaserverNoSuchObjectException o2)
  HoodieInstantChangeResult transitionInstantState(1: string db, 2: string tb, 3: THoodieInstant fromInstant,
                                                   4: THoodieInstant toInstant, 5: binary metadata)
    throws (1: MetaserverStorageException o1, 2: MetaserverNoSuchObjectException o2, 3: MetaserverException o3)
  HoodieInstantChangeResult deleteInstant(1: string db, 2: string tb, 3: THoodieInstant instant)
    throws (1: MetaserverStorageException o1, 2: MetaserverNoSuchObjectException o2)
}
